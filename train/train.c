/*
 * train.c — the training model: the forward graph prepared for a training
 * step, and what its backward pass needs.
 *
 * ar_train_model copies the forward graph (tensors, nodes without
 * attributes) with its loss as node nfwd (loss.c: cross-entropy attached
 * to the first output, or the model's own loss op), converts the number
 * formats (precision.c; amp-* first writes torch.autocast's casts into a
 * copy of the forward graph, autocast.c), materialises the outputs the backward pass reads
 * (masks, statistics: the op table's train_outputs), decides the
 * parameters (params.c), recognises fused gradient chains (patterns.c),
 * and then walks back from the loss with the op table's gradient rules:
 * which tensors get a gradient, which node gets a backward step, which
 * forward tensors those steps read (checkpoint candidates).  Every op on
 * the gradient path without a rule is reported at once.  step.c builds
 * the step graph from the result.
 */
#include "train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t bit(int i)
{
	return i < 32 ? 1u << i : 0;
}

ArGraph *ar_train_copy(const ArGraph *src, const int *order)
{
	ArGraph *g = ar_graph_new(src->name);
	int *at = ar_xmalloc(((size_t)src->nnodes + 1) * sizeof(int));
	g->opset = src->opset;
	g->ir_version = src->ir_version;
	ar_graph_copy_meta(g, src);
	for (int k = 0; k < src->nnodes; k++)
		at[order ? order[k] : k] = k;
	for (int i = 0; i < src->ntensors; i++) {
		const ArTensor *s = &src->tensors[i];
		int id = ar_graph_add_tensor(g, s->name);
		ArTensor *t = &g->tensors[id];
		t->dtype = s->dtype;
		t->rank = s->rank;
		memcpy(t->dims, s->dims, sizeof t->dims);
		t->bytes = s->bytes;
		t->kind = s->kind;
		t->producer = s->producer < 0 ? -1 : at[s->producer];
	}
	for (int k = 0; k < src->nnodes; k++) {
		const ArNode *s = &src->nodes[order ? order[k] : k];
		int id = ar_graph_add_node(g, s->name, s->op, s->domain);
		ArNode *n = &g->nodes[id];
		ar_node_set_io(n, s->inputs, s->ninputs, s->outputs,
			       s->noutputs);
		n->nexplicit = s->nexplicit;
		n->phase = s->phase;
		n->opset = s->opset;
	}
	ar_graph_copy_io(g, src);
	free(at);
	return g;
}

/* Materialises what training-mode ops write for their backward pass,
 * the loss's included; a node arenac added (order -1: the attached loss,
 * the loss's upcast) has no attributes of the model's. */
static int train_outputs(ArTrainModel *m, const ArGraph *fwd,
			 const int *order, ArError *err)
{
	int rc = AR_OK;
	for (int k = 0; k <= m->nfwd && !rc; k++) {
		const ArOpDef *d = ar_op_of(&m->base->nodes[k]);
		if (d && d->train_outputs && ar_is_step(m->base, k))
			rc = d->train_outputs(order[k] >= 0 ?
					      &fwd->nodes[order[k]] :
					      &m->base->nodes[k], m->base, k,
					      err);
	}
	return rc;
}

bool ar_train_grad_view(const ArTrainModel *m, int node, ArGradView *v)
{
	const ArNode *n = &m->base->nodes[node];
	const ArFusedGrad *f = &m->fused[node];
	const ArOpDef *d;

	if (f->op) {
		v->op = f->op->name;
		v->rule = f->op->grad;
		v->in = f->in;
		v->out = f->out;
		v->nin = f->nin;
		v->nout = f->nout;
		v->loss = false;
		return true;
	}
	if (m->in_pattern[node])
		return false;
	d = ar_op_of(n);
	v->op = n->op;
	v->rule = d ? d->grad : NULL;
	v->in = n->inputs;
	v->out = n->outputs;
	v->nin = n->ninputs;
	v->nout = n->noutputs;
	v->loss = d && (d->flags & AR_OP_LOSS);
	return true;
}

uint32_t ar_train_grad_outputs(const ArGradView *v)
{
	if (!v->rule)
		return AR_ALL_INPUTS;
	return v->rule->dout ? v->rule->dout : 1u;
}

/* Which tensors depend on a trained parameter (or, with input_grads, on
 * a float graph input). */
static void requires_grad(const ArTrainModel *m, bool *rg)
{
	const ArGraph *g = m->base;
	for (int t = 0; t < g->ntensors; t++)
		rg[t] = m->param[t] || (m->spec.input_grads &&
					g->tensors[t].kind == AR_TK_INPUT &&
					ar_train_is_float(g->tensors[t].dtype));
	for (int i = 0; i < m->nfwd; i++) {
		const ArNode *n = &g->nodes[i];
		const ArGradRule *r = ar_op_grad(n);
		bool any = false;
		if (!ar_is_step(g, i))
			continue;
		for (int j = 0; j < n->ninputs; j++)
			any = any || (n->inputs[j] >= 0 &&
				      (!r || (r->diff & bit(j))) &&
				      rg[n->inputs[j]]);
		for (int j = 0; any && j < n->noutputs; j++)
			if (n->outputs[j] >= 0)
				rg[n->outputs[j]] = true;
	}
}

/* Input j of view v gets a gradient from its backward step. */
static bool gets_grad(const ArTrainModel *m, const bool *rg,
		      const ArGradView *v, int j)
{
	int t = v->in[j];
	if (t < 0 || (v->rule && !(v->rule->diff & bit(j))))
		return false;
	return ar_train_is_float(m->base->tensors[t].dtype) && rg[t];
}

static uint32_t need_mask(const ArTrainModel *m, const bool *rg,
			  const ArGradView *v)
{
	uint32_t need = 0;
	for (int j = 0; j < v->nin && j < 32; j++)
		if (gets_grad(m, rg, v, j))
			need |= bit(j);
	return need;
}

static void mark_saved(ArTrainModel *m, const ArGradView *v, uint32_t need)
{
	ArGradReads r = ar_grad_reads(v->rule, need);
	for (int j = 0; j < v->nin; j++)
		if ((r.in & bit(j)) && v->in[j] >= 0)
			m->saved[v->in[j]] = true;
	for (int j = 0; j < v->nout; j++)
		if ((r.out & bit(j)) && v->out[j] >= 0)
			m->saved[v->out[j]] = true;
}

/* Whether a gradient reaches the outputs of view v. */
static bool flows_in(const ArTrainModel *m, const ArGradView *v)
{
	uint32_t dout = ar_train_grad_outputs(v);
	if (v->loss)
		return true;
	for (int j = 0; j < v->nout; j++)
		if ((dout & bit(j)) && v->out[j] >= 0 && m->grad[v->out[j]])
			return true;
	return false;
}

/* The ops on the gradient path without a rule, each once, with the
 * first node of each: "Erf (node 'a'), Foo (node 'b')". */
typedef struct Missing {
	char text[400];
	const char *ops[64];
	int nops;
} Missing;

static void note_missing(Missing *ms, const char *op, const char *node)
{
	char item[200];
	for (int k = 0; k < ms->nops; k++)
		if (!strcmp(ms->ops[k], op))
			return;
	if (ms->nops < 64)
		ms->ops[ms->nops] = op;
	snprintf(item, sizeof item, "%s%s (node '%s')", ms->nops ? ", " : "",
		 op, node);
	if (strlen(ms->text) + strlen(item) + 6 < sizeof ms->text)
		strcat(ms->text, item);
	else if (!strstr(ms->text, ", ..."))
		strcat(ms->text, ", ...");
	ms->nops++;
}

/* Walks back from the loss: which tensors get gradients, which nodes get
 * a backward step, what those steps read. */
static int backward_flow(ArTrainModel *m, const bool *rg, ArError *err)
{
	const ArGraph *g = m->base;
	Missing ms = {.nops = 0};

	if (!rg[m->logits])
		return ar_fail(err, AR_EXIT_MODEL, "--train: output '%s' does "
			       "not depend on any trained parameter",
			       g->tensors[m->logits].name);
	for (int i = m->nfwd; i >= 0; i--) {
		ArGradView v;
		uint32_t need;
		if ((i < m->nfwd && !ar_is_step(g, i)) ||
		    !ar_train_grad_view(m, i, &v) || !flows_in(m, &v) ||
		    !(need = need_mask(m, rg, &v)))
			continue;
		if (!v.rule)
			note_missing(&ms, v.op, g->nodes[i].name);
		else
			m->rule[i] = v.rule;
		for (int j = 0; j < v.nin; j++)
			if (gets_grad(m, rg, &v, j)) {
				m->grad[v.in[j]] = true;
				m->ncontrib[v.in[j]]++;
			}
		if (v.rule)
			mark_saved(m, &v, need);
	}
	if (ms.nops)
		return ar_fail(err, AR_EXIT_MODEL, "--train: no gradient rule "
			       "for %s %s", ms.nops > 1 ? "these ops:" : "op",
			       ms.text);
	return AR_OK;
}

/* Candidates: saved activations and the activations they are computed
 * from, in production order; a node's later such outputs tied to its
 * first (train.h); not the outputs of an op that are always recomputed
 * (AR_OP_RECOMPUTED), nor views torch takes of an activation
 * (ar_op_torch_view): torch's autograd saving x[:, 0] keeps x's storage,
 * so the plan keeps x (a candidate as what the view is computed from)
 * and makes the view again for the backward step that reads it. */
static void find_candidates(ArTrainModel *m)
{
	const ArGraph *g = m->base;
	bool *need = ar_xcalloc((size_t)g->ntensors, sizeof *need);
	for (int t = 0; t < g->ntensors; t++)
		need[t] = m->saved[t] && g->tensors[t].kind == AR_TK_ACTIVATION;
	for (int i = m->nfwd - 1; i >= 0; i--) {
		const ArNode *n = &g->nodes[i];
		bool any = false;
		for (int j = 0; j < n->noutputs; j++)
			any = any || (n->outputs[j] >= 0 && need[n->outputs[j]]);
		for (int j = 0; any && j < n->ninputs; j++) {
			int t = n->inputs[j];
			if (t >= 0 && g->tensors[t].kind == AR_TK_ACTIVATION &&
			    ar_in_arena(g, t))
				need[t] = true;
		}
	}
	m->cand = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	m->lead = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	for (int t = 0; t < g->ntensors; t++)
		m->lead[t] = -1;
	for (int i = 0; i < m->nfwd; i++) {
		const ArOpDef *d = ar_op_of(&g->nodes[i]);
		int first = -1;
		/* Never resident, so never a choice: always recomputed. */
		if (d && (d->flags & AR_OP_RECOMPUTED))
			continue;
		if (ar_op_torch_view(g, &g->nodes[i]) &&
		    g->tensors[g->nodes[i].inputs[0]].kind == AR_TK_ACTIVATION)
			continue;
		for (int j = 0; j < g->nodes[i].noutputs; j++) {
			int t = g->nodes[i].outputs[j];
			if (t < 0 || !need[t])
				continue;
			if (first < 0)
				m->cand[m->ncand++] = first = t;
			m->lead[t] = first;
		}
	}
	free(need);
}

/* Forward FLOPs per node; the attached loss: softmax, log and pick per
 * logit. */
static void forward_flops(ArTrainModel *m, const ArGraph *fwd,
			  const int *order)
{
	const ArGraph *g = m->base;
	int64_t out = ar_numel(&g->tensors[m->logits]);
	m->flops = ar_xcalloc((size_t)g->nnodes + 1, sizeof *m->flops);
	for (int k = 0; k <= m->nfwd; k++)
		if (order[k] >= 0 && ar_is_step(fwd, order[k]))
			m->flops[k] = ar_node_flops(fwd, &fwd->nodes[order[k]]);
	if (!m->own_loss)
		m->flops[m->nfwd] = out < 0 ? INT64_MAX : ar_train_mul(3, out);
	for (int i = 0; i < g->nnodes; i++)
		m->forward_flops = ar_train_add(m->forward_flops, m->flops[i]);
}

/* Of a bilinear step's two operands (X and W), how many get a gradient:
 * a frozen weight's is never computed, nor that of an input nothing
 * trained lies behind. */
static int operand_grads(const ArTrainModel *m, const ArGradView *v)
{
	int k = 0;
	for (int j = 0; j < 2 && j < v->nin; j++)
		k += v->in[j] >= 0 && m->grad[v->in[j]];
	return k;
}

/*
 * A backward step costs what it computes: a bilinear op one product per
 * operand gradient it computes (rule cost 2: both; a LoRA step's frozen
 * base weight only dX, so 4N FLOPs a token instead of 6N in all), with
 * only the bias's sum (one op per output element) when neither, and half
 * a forward pass more where it recomputes (FlashAttention); other
 * ops one forward pass; a loss's gradient one op per score, a chunked
 * loss's the head's products besides, as many as it computes.
 */
static void backward_flops(ArTrainModel *m)
{
	for (int i = 0; i <= m->nfwd; i++) {
		const ArGradRule *r = m->rule[i];
		int64_t f = m->fused[i].op ? m->fused[i].flops : m->flops[i];
		ArGradView v;
		int k;
		if (!r || !ar_train_grad_view(m, i, &v))
			continue;
		k = r->cost > 1 ? operand_grads(m, &v) : 1;
		if (v.loss)     /* a chunked loss computes the head's too */
			f = ar_train_add(ar_numel(&m->base->tensors[m->logits]),
				    m->head < 0 ? 0 : ar_train_mul(k,
							m->flops[m->head]));
		else if (k)     /* FlashAttention's scores once more: half */
			f = ar_train_add(ar_train_mul(f, k),
					 r->recompute ? f / 2 : 0);
		else if (v.nout && v.out[0] >= 0)
			f = ar_numel(&m->base->tensors[v.out[0]]);
		m->backward_flops = ar_train_add(m->backward_flops, f);
	}
}

/* The per-tensor and per-node arrays, all false / empty. */
static void alloc_model(ArTrainModel *m)
{
	size_t nt = (size_t)m->base->ntensors + 1;
	size_t nn = (size_t)m->base->nnodes + 1;
	m->rule = ar_xcalloc(nn, sizeof *m->rule);
	m->fused = ar_xcalloc(nn, sizeof *m->fused);
	m->in_pattern = ar_xcalloc(nn, sizeof *m->in_pattern);
	m->in_loss = ar_xcalloc(nn, sizeof *m->in_loss);
	m->param = ar_xcalloc(nt, sizeof *m->param);
	m->frozen = ar_xcalloc(nt, sizeof *m->frozen);
	m->tied = ar_xcalloc(nt, sizeof *m->tied);
	m->grad = ar_xcalloc(nt, sizeof *m->grad);
	m->saved = ar_xcalloc(nt, sizeof *m->saved);
	m->ncontrib = ar_xcalloc(nt, sizeof *m->ncontrib);
}

/* Parameters the loss does not depend on get no gradient: frozen. */
static void settle_params(ArTrainModel *m)
{
	for (int t = 0; t < m->base->ntensors; t++)
		if (m->param[t] && !m->grad[t]) {
			m->param[t] = false;
			m->frozen[t] = true;
		}
}

/*
 * The forward graph as the step runs it: the linears it stores quantised
 * (prequant.c), its buffers found (buffers.c), weights in their own
 * shapes (unfold.c), --lora's adapters, --base-quant's stored weights,
 * attention ops written as their steps (attention_ops.c), --attention's
 * fused cores, autocast's casts, each a copy of the one
 * before (made[], freed by the caller).
 */
static int rewrite(ArTrainModel *m, const ArTrainSpec *spec,
		   const ArGraph **fwd, ArGraph **made, ArError *err)
{
	ArDType low = ar_precision_autocast(spec->precision);
	int rc = AR_OK, k = 0;
	int64_t quantised = 0;

	if (!(rc = ar_train_prequant(*fwd, &made[k], &m->quant_params, err)) &&
	    made[k])
		*fwd = made[k++];
	if (rc)
		return rc;
	m->buffer = ar_train_buffers(*fwd, spec);
	m->nbuffer = (*fwd)->ntensors;
	if (!(rc = ar_train_unfold(*fwd, m->buffer, &made[k], err)) && made[k])
		*fwd = made[k++];
	if (!rc && spec->lora.rank > 0 &&
	    !(rc = ar_train_lora(*fwd, &spec->lora, &made[k], &m->lora, err)))
		*fwd = made[k++];
	if (!rc && spec->base_quant.format != AR_BQ_NONE &&
	    !(rc = ar_train_base_quant(*fwd, spec, &made[k],
				       &quantised, err))) {
		*fwd = made[k++];
		m->quant_params = ar_train_add(m->quant_params, quantised);
	}
	if (!rc && !(rc = ar_train_attention_ops(*fwd, &made[k], err)) &&
	    made[k])
		*fwd = made[k++];
	if (!rc && spec->attention != AR_ATTN_MATH &&
	    !(rc = ar_train_flash(*fwd, spec->attention, &made[k], err))) {
		if (made[k])
			*fwd = made[k++];
		else
			ar_warn(&spec->diag, "--attention %s: found no attention "
				"core to fuse (a product of two activations "
				"through the softmax to another, nothing else "
				"reading its scores); planned op by op",
				ar_attention_name(spec->attention));
	}
	/* amp: the step of the graph torch.autocast runs instead. */
	if (!rc && low != AR_DT_UNDEFINED &&
	    !(rc = ar_train_autocast(*fwd, low, &made[k], err)))
		*fwd = made[k++];
	return rc;
}

int ar_train_model(const ArGraph *fwd, const ArTrainSpec *spec,
		   ArTrainModel **out, ArError *err)
{
	ArTrainModel *m = ar_xcalloc(1, sizeof *m);
	ArGraph *made[7] = {NULL};
	int *order = NULL, rc;
	bool *rg = NULL;

	*out = NULL;
	m->spec = *spec;
	m->head = -1;
	if ((rc = rewrite(m, spec, &fwd, made, err)))
		goto fail;
	if ((rc = ar_train_loss(m, fwd, &order, err)) ||
	    (rc = ar_train_convert(m, err)) ||
	    (rc = train_outputs(m, fwd, order, err)))
		goto fail;
	alloc_model(m);
	if ((rc = ar_train_params(m, err)))
		goto fail;
	if (spec->loss_chunks > 1 && (rc = ar_train_chunk_loss(m, err)))
		goto fail;
	forward_flops(m, fwd, order);
	if (spec->grad_patterns)
		ar_train_patterns(m, fwd);
	rg = ar_xcalloc((size_t)m->base->ntensors + 1, sizeof *rg);
	requires_grad(m, rg);
	if ((rc = backward_flow(m, rg, err)))
		goto fail;
	settle_params(m);
	if ((rc = ar_train_memory(m, err)))
		goto fail;
	find_candidates(m);
	backward_flops(m);
	*out = m;
fail:
	free(order);
	free(rg);
	for (int k = 0; k < (int)(sizeof made / sizeof *made); k++)
		ar_graph_free(made[k]);
	if (rc)
		ar_train_model_free(m);
	return rc;
}

void ar_train_model_free(ArTrainModel *m)
{
	if (!m)
		return;
	ar_graph_free(m->base);
	free(m->rule);
	free(m->fused);
	free(m->in_pattern);
	free(m->in_loss);
	free(m->param);
	free(m->frozen);
	free(m->tied);
	free(m->grad);
	free(m->saved);
	free(m->ncontrib);
	free(m->cand);
	free(m->buffer);
	free(m->lead);
	free(m->flops);
	free(m);
}

/* Whether a backward step may read t as it is (no recompute). */
static bool available(const ArTrainModel *m, const bool *resident, int t)
{
	return m->base->tensors[t].kind != AR_TK_ACTIVATION ||
	       ar_train_resident(m, resident, t);
}

/* Marks the forward nodes that must re-run to get t back.  A stack of its
 * own, not recursion: a chain freed whole is as deep as the network.
 * Each node pushes its inputs once, so stack holds as many as all nodes'
 * inputs together, plus one. */
static void closure(const ArTrainModel *m, const bool *resident, int t,
		    bool *redo, int *stack)
{
	int n = 0;
	stack[n++] = t;
	while (n > 0) {
		int x = stack[--n], p = m->base->tensors[x].producer;
		const ArNode *node;
		if (available(m, resident, x) || p < 0 || redo[p])
			continue;
		redo[p] = true;
		node = &m->base->nodes[p];
		for (int j = 0; j < node->ninputs; j++)
			if (node->inputs[j] >= 0)
				stack[n++] = node->inputs[j];
	}
}

int64_t ar_train_recompute_flops(const ArTrainModel *m, const bool *resident)
{
	const ArGraph *g = m->base;
	bool *redo = ar_xcalloc((size_t)g->nnodes, sizeof *redo);
	size_t inputs = 1;
	int *stack;
	int64_t f = 0;
	for (int i = 0; i < g->nnodes; i++)
		inputs += (size_t)g->nodes[i].ninputs;
	stack = ar_xmalloc(inputs * sizeof *stack);
	for (int t = 0; t < g->ntensors; t++)
		if (m->saved[t])
			closure(m, resident, t, redo, stack);
	for (int i = 0; i < g->nnodes; i++)
		if (redo[i])
			f = ar_train_add(f, m->flops[i]);
	free(stack);
	free(redo);
	return f;
}
