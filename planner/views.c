/*
 * views.c — zero-copy views: ops whose output is their input's bytes.
 *
 * Reshape, Flatten, Squeeze, Unsqueeze, Identity and inference Dropout
 * (output 0) change at most the shape, so the output can be alias_of the
 * input at offset 0 and the step becomes a no-op.  The shared buffer then
 * lives until the last reader of either (plan.c unites group lifetimes).
 *
 * One case is refused on purpose: a graph output that would share bytes
 * with a graph input.  The caller owns both; one that refills its inputs
 * for the next run while still reading the last outputs, or that expects
 * them to be distinct regions, would see them clobber each other.  Such an
 * output keeps its own buffer and the step stays a copy.
 */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/*
 * Dropout copies its input unless it runs in training mode.  A training
 * step (train.c: a graph with backward steps) runs every Dropout in
 * training mode, masks and all, whatever the model's opset leaves to the
 * runtime: its output is then a new value, not a view, and writing it over
 * the input would destroy a tensor a backward step reads (a Relu output).
 */
static bool dropout_is_copy(const ArGraph *g, const ArNode *n, bool training)
{
	if (training)
		return false;
	if (n->opset < 7)
		return ar_attr_int(n, "is_test", 0) != 0;
	if (n->nexplicit >= 3 && n->inputs[2] >= 0) {
		const ArTensor *m = &g->tensors[n->inputs[2]];
		return m->data && m->dtype == AR_DT_BOOL &&
		       !*(const uint8_t *)m->data;
	}
	return true;
}

static bool is_view_op(const ArGraph *g, const ArNode *n, bool training)
{
	static const char *const ops[] = {
		"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
	};
	if (!ar_default_domain(n->domain) || n->nexplicit < 1 ||
	    n->noutputs < 1)
		return false;
	if (!strcmp(n->op, "Dropout"))
		return dropout_is_copy(g, n, training);
	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
		if (!strcmp(n->op, ops[i]))
			return true;
	return false;
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
		if (!ar_is_step(g, i) || !is_view_op(g, n, training))
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
