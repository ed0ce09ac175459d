/*
 * views.c — zero-copy views: ops whose output is their input's bytes.
 *
 * Ops of the view class in the op table (Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity, and Dropout in inference) change at most the
 * shape, so output 0 can be alias_of input 0 at offset 0 and the step
 * becomes a no-op.  The shared buffer then
 * lives until the last reader of either (plan.c unites group lifetimes).
 *
 * One case is refused on purpose: a graph output that would share bytes
 * with a graph input.  The caller owns both; one that refills its inputs
 * for the next run while still reading the last outputs, or that expects
 * them to be distinct regions, would see them clobber each other.  Such an
 * output keeps its own buffer and the step stays a copy.
 */
#include "ops.h"
#include "passes.h"

#include <stdlib.h>

/* Whether node n's output 0 may be its input 0's bytes (ops/table.c). */
static bool is_view(const ArGraph *g, const ArNode *n, bool training)
{
	const ArOpDef *d = ar_op_of(n);
	if (!d || d->alias != AR_ALIAS_VIEW || n->nexplicit < 1 ||
	    n->noutputs < 1)
		return false;
	return !d->view_when || d->view_when(g, n, training);
}

void ar_views(const ArGraph *g, ArPlan *p)
{
	bool *isout = ar_graph_output_flags(g);
	bool training = false;
	ArAliasMemo m;

	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i].phase == AR_PHASE_BACKWARD)
			training = true;
	ar_alias_memo_init(&m, p);

	/*
	 * Nodes are topological, so a view's input has its root already; only
	 * a root can be a graph input, as every other member is produced.
	 */
	for (int i = 0; i < g->nnodes; i++) {
		const ArNode *n = &g->nodes[i];
		int x, y, r;
		if (!ar_is_step(g, i) || !is_view(g, n, training))
			continue;
		x = n->inputs[0];
		y = n->outputs[0];
		if (x < 0 || y < 0 || x == y || !p->slots[x].planned ||
		    !p->slots[y].planned)
			continue;
		if (g->tensors[x].bytes != g->tensors[y].bytes ||
		    g->tensors[x].dtype != g->tensors[y].dtype ||
		    p->slots[y].alias_of >= 0 || p->slots[y].inplace_of >= 0)
			continue;
		r = ar_alias_root(p, &m, x, NULL);
		if (isout[y] && g->tensors[r].producer < 0)
			continue;
		p->slots[y].alias_of = x;
		p->slots[y].alias_offset = 0;
	}
	free(isout);
	ar_alias_memo_free(&m);
}
