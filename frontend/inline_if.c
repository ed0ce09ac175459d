/*
 * inline_if.c — an If whose condition is a compile-time constant replaced
 * by the branch it takes, after inference.
 *
 * Such an If always runs the same branch, so the branch's nodes may as
 * well be the graph's: the plan then shares one arena between them and
 * the rest of the model (no workspace region sized for the branch), and a
 * runtime with no If kernel (the reference runtime, a firmware) runs the
 * model.  Silero VAD with --input-value sr=16000 is the case: its top If
 * and every If nested in the 16 kHz branch test the sample rate or a
 * shape, all constant.  Inference has already typed the branch, so its
 * tensors move over as they are:
 *   - a tensor the branch captures from outside is the outer one (by
 *     name, as captures are bound);
 *   - a branch output a branch node writes is the If's output (that node
 *     writes it); any other branch output (a capture passed through, a
 *     constant) is copied into the If's output by an Identity;
 *   - every other tensor of the branch, its values and quantization
 *     included, becomes a tensor of the graph; a name the graph already
 *     has would change what a nested subgraph's captures find, so such an
 *     If is left as it is.
 * Nested subgraphs move with their nodes (re-parented, one level up);
 * the branch's Ifs that are now in the graph are inlined in turn.  Only
 * the top graph is rewritten: an If inside a Loop body stays.
 */
#include "infer.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "splice.h"
#include "strpool.h"

static bool constant_if(const ArGraph *g, int i, const ArGraph **taken)
{
	const ArNode *n = &g->nodes[i];
	const ArTensor *c;
	if (strcmp(n->op, "If") || !ar_default_domain(n->domain) ||
	    !ar_is_step(g, i) || n->nexplicit < 1 || n->inputs[0] < 0)
		return false;
	c = &g->tensors[n->inputs[0]];
	if (!c->data || ar_numel(c) != 1 || c->dtype != AR_DT_BOOL)
		return false;
	*taken = NULL;
	for (int j = 0; j < n->nattrs; j++)
		if (n->attrs[j].g &&
		    !strcmp(n->attrs[j].name, ((const uint8_t *)c->data)[0] ?
			    "then_branch" : "else_branch"))
			*taken = n->attrs[j].g;
	return *taken != NULL;
}

static void reparent(ArGraph *s, ArGraph *parent)
{
	s->parent = parent;
	s->depth = parent->depth + 1;
	for (int i = 0; i < s->nnodes; i++)
		for (int j = 0; j < s->nodes[i].nattrs; j++)
			if (s->nodes[i].attrs[j].g)
				reparent(s->nodes[i].attrs[j].g, s);
}

/* Whether every local tensor of b has a name g lacks. */
static bool names_free(const ArGraph *g, const ArGraph *b, const bool *cap)
{
	for (int t = 0; t < b->ntensors; t++)
		if (!cap[t] && ar_graph_find(g, b->tensors[t].name) >= 0)
			return false;
	return true;
}

/* Moves node n of the branch into g, its tensors mapped by map[]. */
static void move_node(ArGraph *g, ArNode *n, const int *map)
{
	int id = ar_graph_add_node(g, n->name, n->op, n->domain);
	ArNode *d = &g->nodes[id];
	int *in = ar_xmalloc(((size_t)n->ninputs + 1) * sizeof *in);
	int *out = ar_xmalloc(((size_t)n->noutputs + 1) * sizeof *out);

	for (int j = 0; j < n->ninputs; j++)
		in[j] = n->inputs[j] < 0 ? -1 : map[n->inputs[j]];
	for (int j = 0; j < n->noutputs; j++)
		out[j] = n->outputs[j] < 0 ? -1 : map[n->outputs[j]];
	ar_node_set_io(d, in, n->ninputs, out, n->noutputs);
	free(in);
	free(out);
	d->nexplicit = n->nexplicit;
	d->phase = n->phase;
	d->opset = n->opset;
	/* Attributes move whole; their names live in the branch's pool. */
	d->attrs = n->attrs;
	d->nattrs = n->nattrs;
	n->attrs = NULL;
	n->nattrs = 0;
	for (int j = 0; j < d->nattrs; j++) {
		ArAttr *a = &d->attrs[j];
		a->name = ar_strpool_intern(&g->strs, a->name);
		if (a->t)
			a->t->name = ar_strpool_copy(&g->strs, a->t->name);
		if (a->g)
			reparent(a->g, g);
	}
}

/* Inlines If i, taking branch b; false when its names collide. */
static bool inline_one(ArGraph *g, int i, ArGraph *b)
{
	bool *cap = ar_xcalloc((size_t)b->ntensors + 1, sizeof *cap);
	bool *moved = ar_xcalloc((size_t)b->ntensors + 1, sizeof *moved);
	int *map = ar_xmalloc(((size_t)b->ntensors + 1) * sizeof *map);
	int first = g->nnodes;

	for (int k = 0; k < b->ncaptures; k++)
		cap[b->captures[k]] = true;
	if (!names_free(g, b, cap) || b->noutputs != g->nodes[i].noutputs) {
		free(cap), free(moved), free(map);
		return false;
	}
	for (int t = 0; t < b->ntensors; t++)
		map[t] = -1;
	for (int k = 0; k < b->ncaptures; k++)
		map[b->captures[k]] = ar_graph_find(g, b->tensors[
						    b->captures[k]].name);
	/* Outputs a branch node writes become the If's own outputs. */
	for (int k = 0; k < b->noutputs; k++) {
		int t = b->outputs[k];
		if (!cap[t] && b->tensors[t].producer >= 0 && map[t] < 0)
			map[t] = g->nodes[i].outputs[k];
	}
	for (int t = 0; t < b->ntensors; t++)
		if (map[t] < 0) {
			moved[t] = true;
			map[t] = ar_move_tensor(g, &b->tensors[t]);
		}
	/* Quantization links name branch tensors: map them too. */
	for (int t = 0; t < b->ntensors; t++) {
		ArQuant *q = &g->tensors[map[t]].quant;
		if (!moved[t])
			continue;
		q->scale = q->scale < 0 ? -1 : map[q->scale];
		q->zero_point = q->zero_point < 0 ? -1 : map[q->zero_point];
	}
	for (int j = 0; j < b->nnodes; j++)
		move_node(g, &b->nodes[j], map);
	/* The other outputs: an Identity into the If's output. */
	for (int k = 0; k < b->noutputs; k++) {
		int t = b->outputs[k], y = g->nodes[i].outputs[k];
		if (map[t] == y || y < 0)
			continue;
		int id = ar_graph_add_node(g, g->tensors[y].name, "Identity", "");
		ar_node_set_io(&g->nodes[id], &map[t], 1, &y, 1);
	}
	free(cap), free(moved), free(map);
	ar_graph_splice(g, i, first);
	return true;
}

int ar_inline_constant_ifs(ArGraph *g)
{
	int done = 0;
	for (int i = 0; i < g->nnodes; i++) {
		const ArGraph *taken;
		if (constant_if(g, i, &taken) &&
		    inline_one(g, i, (ArGraph *)taken)) {
			done++;
			i--;    /* the branch's nodes start here now */
		}
	}
	return done;
}
