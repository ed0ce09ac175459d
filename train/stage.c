/*
 * stage.c — one pipeline stage of a forward graph: the steps of a range of
 * its layers as a graph of its own, which the training stage plans like
 * any model.
 *
 * Stage [a, b) of the layers (layers.h) runs the steps of layers a to
 * b - 1, the prefix too when a is 0 and the tail when b is the last.  What
 * crosses a stage boundary is one activation, the cut point bound[a]: a
 * stage after the first receives it as a graph input (whose gradient its
 * backward pass computes and sends back: ArTrainSpec.input_grads), and a
 * stage before the last sends bound[b] on with a PipelineSend, its loss:
 * that op's gradient step is the gradient the next stage sends back.  The
 * last stage ends with the model's outputs and gets the model's loss.
 * Folded steps that compute the constants a stage reads come along, so
 * that a constant computed by arithmetic is still known for one (it is
 * never a parameter); tensors the stage never touches are dropped.
 */
#include "graph_copy.h"
#include "stage.h"

#include <stdlib.h>
#include <string.h>

/* Marks node k and the folded steps behind its constant inputs. */
static void keep_node(const ArGraph *g, int k, bool *keep)
{
	const ArNode *n = &g->nodes[k];
	keep[k] = true;
	for (int j = 0; j < n->ninputs; j++) {
		int t = n->inputs[j], p;
		if (t < 0 || (p = g->tensors[t].producer) < 0 || keep[p] ||
		    ar_is_step(g, p))
			continue;
		keep_node(g, p, keep);
	}
}

/* Drops the tensors no kept node, input or output touches; *recv and
 * *send follow their tensors. */
static void drop_unused(ArGraph *g, int *recv, int *send)
{
	bool *used = ar_xcalloc((size_t)g->ntensors + 1, sizeof *used);
	bool *none = ar_xcalloc((size_t)g->nnodes + 1, sizeof *none);
	int *to = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *to);
	for (int k = 0; k < g->nnodes; k++) {
		const ArNode *n = &g->nodes[k];
		for (int j = 0; j < n->ninputs; j++)
			if (n->inputs[j] >= 0)
				used[n->inputs[j]] = true;
		for (int j = 0; j < n->noutputs; j++)
			if (n->outputs[j] >= 0)
				used[n->outputs[j]] = true;
	}
	for (int i = 0; i < g->ninputs; i++)
		used[g->inputs[i]] = true;
	for (int i = 0; i < g->noutputs; i++)
		used[g->outputs[i]] = true;
	for (int t = 0, k = 0; t < g->ntensors; t++) {
		to[t] = used[t] ? k : -1;
		k += used[t];
		used[t] = !used[t];     /* now: dropped */
	}
	if (*recv >= 0)
		*recv = to[*recv];
	if (*send >= 0)
		*send = to[*send];
	ar_graph_drop(g, none, used);
	free(used);
	free(none);
	free(to);
}

/* The model's graph inputs a kept node reads, then the received one. */
static void stage_inputs(const ArGraph *fwd, ArGraph *g, const bool *keep,
			 int recv)
{
	bool *read = ar_xcalloc((size_t)fwd->ntensors + 1, sizeof *read);
	for (int k = 0; k < fwd->nnodes; k++)
		for (int j = 0; keep[k] && j < fwd->nodes[k].ninputs; j++)
			if (fwd->nodes[k].inputs[j] >= 0)
				read[fwd->nodes[k].inputs[j]] = true;
	g->ninputs = 0;
	for (int i = 0; i < fwd->ninputs; i++)
		if (read[fwd->inputs[i]])
			g->inputs[g->ninputs++] = fwd->inputs[i];
	if (recv >= 0) {
		g->tensors[recv].kind = AR_TK_INPUT;
		g->tensors[recv].producer = -1;
		g->inputs[g->ninputs++] = recv;
	}
	free(read);
}

/* PipelineSend(x) as the stage's output. */
static int send_on(ArGraph *g, int x)
{
	int tok = ar_graph_add_tensor(g, "pipeline.send");
	int node = ar_graph_add_node(g, "pipeline.send", "PipelineSend",
				     AR_PARALLEL_DOMAIN);
	ArTensor *s = &g->tensors[tok];
	s->dtype = g->tensors[x].dtype;
	s->rank = 0;
	s->bytes = (int64_t)ar_dtype_size(s->dtype);
	s->kind = AR_TK_OUTPUT;
	s->producer = node;
	ar_node_set_io(&g->nodes[node], &x, 1, &tok, 1);
	g->nodes[node].opset = 1;
	g->tensors[x].kind = AR_TK_ACTIVATION;
	g->outputs[0] = tok;
	g->noutputs = 1;
	return node;
}

/* Only the received activation may cross into the stage. */
static int check_cut(const ArGraph *g, int recv, ArError *err)
{
	for (int k = 0; k < g->nnodes; k++)
		for (int j = 0; j < g->nodes[k].ninputs; j++) {
			int t = g->nodes[k].inputs[j];
			if (t >= 0 && t != recv && ar_in_arena(g, t) &&
			    g->tensors[t].producer < 0 &&
			    g->tensors[t].kind != AR_TK_INPUT)
				return ar_fail(err, AR_EXIT_MODEL, "--pp: "
					       "activation '%s' crosses a stage "
					       "boundary besides '%s'; layer "
					       "boundaries must cut the graph",
					       g->tensors[t].name,
					       g->tensors[recv].name);
		}
	return AR_OK;
}

int ar_stage_graph(const ArGraph *fwd, const ArLayers *l, int a, int b,
		   ArStageGraph *out, ArError *err)
{
	bool *keep = ar_xcalloc((size_t)fwd->nnodes + 1, sizeof *keep);
	int lo = a > 0 ? l->start[a] : -1;
	int hi = b < l->n ? l->start[b] : fwd->nnodes - 1;
	ArGraph *g;
	int rc = AR_OK;

	memset(out, 0, sizeof *out);
	out->recv = a > 0 ? l->bound[a] : -1;
	out->send = b < l->n ? l->bound[b] : -1;
	for (int k = lo + 1; k <= hi; k++)
		if (ar_is_step(fwd, k))
			keep_node(fwd, k, keep);
	g = ar_copy_tensors(fwd);
	out->src = ar_xmalloc(((size_t)fwd->nnodes + 2) * sizeof(int));
	for (int k = 0; k < fwd->nnodes && !rc; k++) {
		const ArNode *n = &fwd->nodes[k];
		if (!keep[k])
			continue;
		out->src[g->nnodes] = k;
		if (ar_copy_node(g, n, n->inputs, n->outputs, err) < 0)
			rc = err->code;
	}
	if (rc) {
		free(keep);
		ar_graph_free(g);
		ar_stage_graph_free(out);
		return rc;
	}
	stage_inputs(fwd, g, keep, out->recv);
	if ((rc = check_cut(g, out->recv, err))) {
		free(keep);
		ar_graph_free(g);
		ar_stage_graph_free(out);
		return rc;
	}
	if (out->send >= 0)
		out->src[send_on(g, out->send)] = -1;
	out->recv_bytes = out->recv >= 0 ? fwd->tensors[out->recv].bytes : 0;
	out->send_bytes = out->send >= 0 ? fwd->tensors[out->send].bytes : 0;
	drop_unused(g, &out->recv, &out->send);
	out->g = g;
	free(keep);
	return AR_OK;
}

void ar_stage_graph_free(ArStageGraph *s)
{
	ar_graph_free(s->g);
	free(s->src);
	memset(s, 0, sizeof *s);
}
