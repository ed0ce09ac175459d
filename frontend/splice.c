/*
 * splice.c — tensors and nodes copied or moved into a graph, and nodes
 * put in place of one.
 *
 * A rewrite that replaces a node by others (an If by its branch,
 * inline_if.c; a Loop by its unrolled iterations, unroll.c) appends them
 * and then splices them into the node's place, so the node order stays
 * topological; the derived graphs of train/ (a device's share, a
 * pipeline stage) copy nodes whole.  Copies own their values and
 * attributes; a moved tensor takes its source's.
 */
#include "splice.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "strpool.h"

void ar_copy_tensor(ArTensor *dst, const ArTensor *src)
{
	const char *name = dst->name;
	ArTensor keep = *src;
	keep.name = name;
	keep.data = NULL;
	keep.external = NULL;
	keep.declared = NULL;
	keep.producer = -1;
	keep.quant.scale = keep.quant.zero_point = -1;
	*dst = keep;
	if (src->declared) {
		dst->declared = ar_xmalloc(sizeof *dst->declared);
		*dst->declared = *src->declared;
	}
	if (src->data && src->bytes > 0) {
		dst->data = ar_xmalloc((size_t)src->bytes);
		memcpy(dst->data, src->data, (size_t)src->bytes);
	}
}

/* s as an attribute of a node of graph g. */
static void copy_attr(ArGraph *g, ArAttr *d, const ArAttr *s)
{
	*d = *s;
	d->name = ar_strpool_intern(&g->strs, s->name);
	d->s = s->s ? ar_xstrdup(s->s) : NULL;
	d->ints = NULL;
	d->floats = NULL;
	d->t = NULL;
	d->g = NULL;
	if (s->nints) {
		d->ints = ar_xmalloc((size_t)s->nints * sizeof *d->ints);
		memcpy(d->ints, s->ints, (size_t)s->nints * sizeof *d->ints);
	}
	if (s->nfloats) {
		d->floats = ar_xmalloc((size_t)s->nfloats * sizeof *d->floats);
		memcpy(d->floats, s->floats,
		       (size_t)s->nfloats * sizeof *d->floats);
	}
	if (s->t) {
		d->t = ar_xcalloc(1, sizeof *d->t);
		d->t->name = ar_strpool_copy(&g->strs, s->t->name);
		ar_copy_tensor(d->t, s->t);
	}
}

void ar_copy_attrs(ArGraph *dst, ArNode *c, const ArNode *n)
{
	assert(!c->nattrs);
	if (!n->nattrs)
		return;
	c->attrs = ar_xcalloc((size_t)n->nattrs, sizeof *c->attrs);
	for (int j = 0; j < n->nattrs; j++)
		copy_attr(dst, &c->attrs[j], &n->attrs[j]);
	c->nattrs = n->nattrs;
}

int ar_copy_node(ArGraph *dst, const ArNode *n, const int *in,
		 const int *out, ArError *err)
{
	int id;
	ArNode *c;
	for (int j = 0; j < n->nattrs; j++)
		if (n->attrs[j].g)
			return ar_fail(err, AR_EXIT_MODEL, "node '%s' (%s) runs a "
				       "subgraph: a multi-device plan is for "
				       "graphs without control flow", n->name,
				       n->op);
	id = ar_graph_add_node(dst, n->name, n->op, n->domain);
	c = &dst->nodes[id];
	ar_node_set_io(c, in, n->nexplicit, out, n->noutputs);
	c->opset = n->opset;
	c->phase = n->phase;
	ar_copy_attrs(dst, c, n);
	for (int j = 0; j < n->noutputs; j++)
		if (out[j] >= 0)
			dst->tensors[out[j]].producer = id;
	return id;
}

int ar_move_tensor(ArGraph *g, ArTensor *t)
{
	int id = ar_graph_add_tensor(g, t->name);
	ArTensor *x = &g->tensors[id];
	const char *name = x->name;
	*x = *t;
	x->name = name;
	x->producer = -1;
	if (x->kind == AR_TK_OUTPUT || x->kind == AR_TK_INPUT)
		x->kind = AR_TK_ACTIVATION;
	t->data = NULL;
	t->declared = NULL;
	t->external = NULL;
	return id;
}

void ar_graph_splice(ArGraph *g, int i, int first)
{
	int n = g->nnodes, k = 0;
	ArNode *nodes = ar_xmalloc(((size_t)n + 1) * sizeof *nodes);
	bool *drop_n, *drop_t;

	assert(i < first && first <= n);
	for (int j = 0; j < i; j++)
		nodes[k++] = g->nodes[j];
	for (int j = first; j < n; j++)
		nodes[k++] = g->nodes[j];
	nodes[k++] = g->nodes[i];       /* dropped below */
	for (int j = i + 1; j < first; j++)
		nodes[k++] = g->nodes[j];
	assert(k == n);
	memcpy(g->nodes, nodes, (size_t)n * sizeof *nodes);
	free(nodes);
	drop_n = ar_xcalloc((size_t)n + 1, sizeof *drop_n);
	drop_t = ar_xcalloc((size_t)g->ntensors + 1, sizeof *drop_t);
	drop_n[i + n - first] = true;
	/* The new nodes may write the dropped one's outputs. */
	for (int t = 0; t < g->ntensors; t++)
		g->tensors[t].producer = -1;
	for (int j = 0; j < n; j++)
		for (int o = 0; !drop_n[j] && o < g->nodes[j].noutputs; o++)
			if (g->nodes[j].outputs[o] >= 0)
				g->tensors[g->nodes[j].outputs[o]].producer = j;
	ar_graph_drop(g, drop_n, drop_t);
	free(drop_n), free(drop_t);
}
