/*
 * ckpt_layers.c — Megatron-LM's two fixed checkpoint policies (Korthikanti
 * et al. 2022, "Reducing Activation Recomputation in Large Transformer
 * Models"), as resident sets of a training model:
 *
 *   layer      full recomputation: each layer's input stays, everything a
 *              layer computes is freed after the forward pass and
 *              recomputed from that input before the layer's backward
 *              steps; the prefix (embeddings) and the tail (final norm,
 *              head, loss) keep theirs.  Layers as train/layers.c finds
 *              them, or as --layer-boundary names them.
 *   selective  the attention core alone is recomputed: QK^T, its scaling
 *              and mask, the softmax, its dropout (mask included), up to
 *              the product with V; everything else stays.  The core is
 *              found from the graph: a product of two activations (no
 *              weight) whose output reaches another such product through
 *              steps that each read one activation and no parameter.
 *
 * Policies only say what stays; step.c recomputes the rest from what
 * stays, and the planner plans the step as for any selection.
 */
#include "ckpt_search.h"
#include "layers.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The steps between two attention products are this many at most. */
#define CORE_MAX_PATH 16

static bool is_param(const ArTrainModel *m, int t)
{
	return m->param[t] || m->frozen[t];
}

/* A product of two activations: a bilinear op reading no weight. */
static bool act_product(const ArTrainModel *m, int node)
{
	const ArGraph *g = m->base;
	const ArNode *n = &g->nodes[node];
	const ArGradRule *r = ar_op_grad(n);
	if (!r || r->cost != 2 || n->nexplicit != 2 || !ar_is_step(g, node))
		return false;
	for (int j = 0; j < 2; j++)
		if (n->inputs[j] < 0 || !ar_in_arena(g, n->inputs[j]))
			return false;
	return true;
}

/* The one activation node n reads (and no parameter), or -1. */
static int single_input(const ArTrainModel *m, const ArNode *n)
{
	int x = -1;
	for (int j = 0; j < n->nexplicit; j++) {
		int t = n->inputs[j];
		if (t < 0)
			continue;
		if (is_param(m, t))
			return -1;
		if (ar_in_arena(m->base, t)) {
			if (x >= 0)
				return -1;
			x = t;
		}
	}
	return x;
}

/*
 * Marks in core[] the nodes from an activation product back along x's
 * producers to another activation product, both products included
 * (the second, reading x, is the caller's).  False when none is found.
 */
static bool walk_core(const ArTrainModel *m, int x, bool *core)
{
	const ArGraph *g = m->base;
	int path[CORE_MAX_PATH], n = 0;
	for (int t = x; t >= 0 && n < CORE_MAX_PATH;) {
		int p = g->tensors[t].producer;
		if (p < 0 || p >= m->nfwd)
			return false;
		path[n++] = p;
		if (act_product(m, p)) {
			for (int i = 0; i < n; i++)
				core[path[i]] = true;
			return true;
		}
		t = single_input(m, &g->nodes[p]);
	}
	return false;
}

static int selective(const ArTrainModel *m, bool *res, ArError *err)
{
	const ArGraph *g = m->base;
	bool *core = ar_xcalloc((size_t)g->nnodes + 1, sizeof *core);
	int found = 0;

	for (int i = 0; i < m->nfwd; i++)
		for (int j = 0; act_product(m, i) && j < 2; j++)
			if (walk_core(m, g->nodes[i].inputs[j], core)) {
				core[i] = true;
				found++;
			}
	/* The core's outputs are recomputed; the last product's output is
	 * the core's result, which its readers keep as they need. */
	for (int i = 0; i < m->nfwd; i++)
		for (int j = 0; core[i] && j < g->nodes[i].noutputs; j++)
			if (g->nodes[i].outputs[j] >= 0)
				res[g->nodes[i].outputs[j]] = false;
	free(core);
	if (!found)
		return ar_fail(err, AR_EXIT_MODEL, "--checkpoint selective: "
			       "found no attention core (a product of two "
			       "activations whose output reaches another such "
			       "product through the softmax and the steps "
			       "around it)");
	return AR_OK;
}

static int by_layer(const ArTrainModel *m, const char *boundary, bool *res,
		    ArError *err)
{
	ArLayers l;
	char why[sizeof err->msg];
	int rc = ar_layers_find(m->base, m->nfwd, boundary, &l, err);
	if (rc) {
		snprintf(why, sizeof why, "%s", err->msg);
		return ar_fail(err, rc, "--checkpoint layer: %s", why);
	}
	for (int i = 0; i < m->ncand; i++) {
		int t = m->cand[i];
		if (ar_layer_of(&l, m->base->tensors[t].producer) >= 0)
			res[t] = false;
	}
	for (int k = 0; k <= l.n; k++)
		res[l.bound[k]] = true;
	ar_layers_free(&l);
	return AR_OK;
}

int ar_ckpt_layers(const ArTrainModel *m, ArCkptPolicy pol,
		   const char *boundary, bool *res, ArError *err)
{
	for (int i = 0; i < m->ncand; i++)
		res[m->cand[i]] = true;
	assert(pol == AR_CKPT_LAYER || pol == AR_CKPT_SELECTIVE);
	return pol == AR_CKPT_LAYER ? by_layer(m, boundary, res, err)
				    : selective(m, res, err);
}
