/*
 * kvcache.c — present over past: an attention op's KV cache updated in
 * place.
 *
 * With a static cache (--max-seq N), an attention op writes this step's
 * keys and values into its past input at the current position and hands
 * that same buffer out as present (ORT's past_present_share_buffer), so
 * the cache never moves between tokens.  The op table says which outputs
 * are caches of which inputs (ArOpDef.kv); shape inference gave present
 * past's shape.  Here present becomes inplace_of past when the two have
 * one size and type and past's whole alias group dies at that step (and
 * holds no graph output, which the caller reads after the run), so
 * present takes past's offset and the caller feeds it back as the next
 * step's past without a copy.
 *
 * Unlike the elementwise in-place pass, a graph input may be overwritten
 * and a graph output may take its bytes: the cache is the caller's by
 * design, and the op's contract is to update it.  The link follows from
 * the shapes (a static cache: --max-seq, or the op's own share-buffer
 * form), not from --inplace.  Runs last among the alias passes: the
 * in-place pass resets inplace links each time it runs.
 */
#include "ops.h"
#include "passes.h"

/* Whether another input of n reads x's group (it would see the write). */
static bool group_read_twice(const ArNode *n, const ArGroups *gr, int x)
{
	for (int j = 0; j < n->ninputs; j++) {
		int z = n->inputs[j];
		if (z >= 0 && z != x && gr->of[z] == gr->of[x])
			return true;
	}
	return false;
}

void ar_kv_alias(const ArGraph *g, ArPlan *p)
{
	ArGroups gr;

	ar_groups_build(g, p, &gr);
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		const ArOpDef *d = ar_op_of(n);
		for (int k = 0; d && k < d->nkv; k++) {
			const ArKvCache *kv = &d->kv[k];
			int x = kv->in < n->nexplicit ? n->inputs[kv->in] : -1,
			    y = kv->out < n->noutputs ?
				n->outputs[kv->out] : -1;
			if (x < 0 || y < 0 || gr.of[x] < 0 || gr.of[y] < 0 ||
			    gr.of[x] == gr.of[y] || gr.last[gr.of[x]] != s ||
			    gr.has_output[gr.of[x]] ||
			    g->tensors[x].bytes != g->tensors[y].bytes ||
			    g->tensors[x].dtype != g->tensors[y].dtype ||
			    p->slots[y].alias_of >= 0 ||
			    p->slots[y].inplace_of >= 0 ||
			    group_read_twice(n, &gr, x))
				continue;
			p->slots[y].inplace_of = x;
			/* Taken: no second cache output may take it too. */
			gr.last[gr.of[x]] = -1;
		}
	}
	ar_groups_free(&gr);
}
