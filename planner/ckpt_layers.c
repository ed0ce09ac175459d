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
#include "fuse.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_param(const ArTrainModel *m, int t)
{
	return m->param[t] || m->frozen[t];
}

/* Whether the model has fused attention cores (--attention
 * flash|efficient). */
static bool fused_cores(const ArTrainModel *m)
{
	for (int i = 0; i < m->nfwd; i++)
		if (!strcmp(m->base->nodes[i].op, AR_FLASH_ATTENTION))
			return true;
	return false;
}

/* The attention cores still op by op, their nodes marked in core[]. */
static int op_cores(const ArTrainModel *m, bool *core)
{
	const ArGraph *g = m->base;
	bool *param = ar_xcalloc((size_t)g->ntensors + 1, sizeof *param);
	ArAttnCore none;
	int found;
	for (int t = 0; t < g->ntensors; t++)
		param[t] = is_param(m, t);
	found = ar_attention_cores(g, m->nfwd, param, core, &none, 0);
	free(param);
	return found;
}

bool ar_ckpt_selective_empty(const ArTrainModel *m)
{
	bool *core;
	int found;
	if (!fused_cores(m))
		return false;
	core = ar_xcalloc((size_t)m->base->nnodes + 1, sizeof *core);
	found = op_cores(m, core);
	free(core);
	return !found;
}

static int selective(const ArTrainModel *m, bool *res, ArError *err)
{
	const ArGraph *g = m->base;
	bool *core = ar_xcalloc((size_t)g->nnodes + 1, sizeof *core);
	int found = op_cores(m, core);

	/* The core's outputs are recomputed; the last product's output is
	 * the core's result, which its readers keep as they need. */
	for (int i = 0; i < m->nfwd; i++)
		for (int j = 0; core[i] && j < g->nodes[i].noutputs; j++)
			if (g->nodes[i].outputs[j] >= 0)
				res[g->nodes[i].outputs[j]] = false;
	free(core);
	/* Fused cores keep no scores: nothing to recompute (all stay). */
	if (!found && fused_cores(m))
		return AR_OK;
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
