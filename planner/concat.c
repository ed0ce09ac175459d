/*
 * concat.c — concat elision: producers write straight into their slice.
 *
 * When every input of a Concat is a contiguous slice of its output (all
 * output dims before the axis are 1, e.g. channels of a batch-1 NCHW
 * tensor), each input can live inside the output's buffer at its slice's
 * byte offset, alias_of the output; the Concat then copies nothing.  The
 * group is born with its first slice and lives as long as any member.
 *
 * Nesting falls out of the order: in DenseNet each concat's output is the
 * first input of the next, so visiting concats in node order links C1 into
 * C2 into C3 ..., with offsets adding up along the chain, and the whole
 * dense block is written once into the last concat's buffer.
 *
 * An input is placed only when that is plainly safe, else the Concat stays
 * a copy (all or nothing, so a runtime sees either a no-op or a copy):
 *   - it is produced by a step of this graph (not a graph input, constant
 *     or weight) and is not a graph output, whose bytes the caller reads;
 *   - it has no alias_of yet: a view shares its input's bytes, and a
 *     tensor already placed in another concat cannot sit in two places;
 *   - it appears once among the inputs;
 *   - its slice offset is a multiple of the plan's alignment.
 *
 * Elision is not free: the output's buffer is reserved whole from its first
 * slice on, so its later slices sit empty while earlier work peaks (the
 * last concat of DenseNet's first block does exactly this).  Once the order
 * is known, ar_concat_refine turns back into copies the elisions that keep
 * the peak higher than a copy would, and if need be all of them.
 */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/* Every input's slice is contiguous: output dims before axis are all 1. */
static bool slices_contiguous(const ArGraph *g, const ArNode *n, int out)
{
	const ArTensor *y = &g->tensors[out];
	int64_t axis = ar_attr_int(n, "axis", 0);
	if (axis < 0)
		axis += y->rank;
	if (axis < 0 || axis >= y->rank)
		return false;
	for (int d = 0; d < axis; d++)
		if (y->dims[d] != 1)
			return false;
	return true;
}

static bool elidable(const ArGraph *g, const ArPlan *p, const bool *isout,
		     const ArNode *n)
{
	int y = n->outputs[0];
	int64_t off = 0;

	if (n->noutputs != 1 || y < 0 || !p->slots[y].planned ||
	    g->tensors[y].bytes <= 0 || p->slots[y].inplace_of >= 0 ||
	    !slices_contiguous(g, n, y))
		return false;
	for (int j = 0; j < n->nexplicit; j++) {
		int x = n->inputs[j], pr;
		if (x < 0)
			return false;
		pr = g->tensors[x].producer;
		if (!p->slots[x].planned || pr < 0 || !ar_is_step(g, pr) ||
		    isout[x] || p->slots[x].alias_of >= 0 ||
		    p->slots[x].inplace_of >= 0 ||
		    g->tensors[x].dtype != g->tensors[y].dtype ||
		    off % p->align)
			return false;
		for (int k = 0; k < j; k++)
			if (n->inputs[k] == x)
				return false;
		if (!ar_add64(off, g->tensors[x].bytes, &off))
			return false;
	}
	return off == g->tensors[y].bytes;
}

void ar_concat_elide(const ArGraph *g, ArPlan *p)
{
	bool *isout = ar_graph_output_flags(g);

	for (int i = 0; i < g->nnodes; i++) {
		const ArNode *n = &g->nodes[i];
		int64_t off = 0;
		if (!ar_is_step(g, i) || strcmp(n->op, "Concat") ||
		    (n->domain[0] && strcmp(n->domain, "ai.onnx")) ||
		    !elidable(g, p, isout, n))
			continue;
		for (int j = 0; j < n->nexplicit; j++) {
			ArSlot *s = &p->slots[n->inputs[j]];
			s->alias_of = n->outputs[0];
			s->alias_offset = off;
			off += g->tensors[n->inputs[j]].bytes;
		}
	}
	free(isout);
}

static bool is_elided(const ArPlan *p, const ArNode *n)
{
	return n->nexplicit > 0 && n->inputs[0] >= 0 &&
	       p->slots[n->inputs[0]].alias_of == n->outputs[0];
}

/* The planner's peak for p's order with the current links plus in-place. */
static int64_t peak_with_inplace(const ArGraph *g, const ArPlanOptions *opt,
				 ArPlan *p)
{
	if (opt->inplace == AR_INPLACE_ELEMENTWISE)
		ar_inplace(g, p);
	return ar_live_peak(g, p, NULL);
}

/* Turns elided concat n back into a copy. */
static void undo(ArPlan *p, const ArNode *n)
{
	for (int j = 0; j < n->nexplicit; j++) {
		p->slots[n->inputs[j]].alias_of = -1;
		p->slots[n->inputs[j]].alias_offset = 0;
	}
}

/* Copies where one elision alone keeps the peak up, in p's order. */
static int64_t refine_in_order(const ArGraph *g, const ArPlanOptions *opt,
			       ArPlan *p)
{
	int64_t cur = peak_with_inplace(g, opt, p);
	ArSlot *keep = ar_xmalloc(((size_t)p->ntensors + 1) * sizeof *keep);

	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		int64_t pk;
		if (strcmp(n->op, "Concat") || !is_elided(p, n))
			continue;
		memcpy(keep, p->slots, (size_t)p->ntensors * sizeof *keep);
		undo(p, n);
		pk = peak_with_inplace(g, opt, p);
		if (pk < cur)
			cur = pk;
		else
			memcpy(p->slots, keep, (size_t)p->ntensors * sizeof *keep);
	}
	free(keep);
	return cur;
}

/*
 * Several elided concats can hold the peak together (ShuffleNet), where
 * undoing any one alone changes nothing; and the order was chosen for the
 * elided buffers.  So the plan with every concat a copy, scheduled afresh,
 * competes too, and the better one stays (ties keep the elisions).
 */
void ar_concat_refine(const ArGraph *g, const ArPlanOptions *opt, ArPlan *p)
{
	size_t nsl = (size_t)p->ntensors * sizeof(ArSlot);
	size_t nst = (size_t)p->nsteps * sizeof(int);
	ArSlot *slots = ar_xmalloc(nsl + 1);
	int *steps = ar_xmalloc(nst + 1);
	int64_t elided = refine_in_order(g, opt, p);

	memcpy(slots, p->slots, nsl);
	memcpy(steps, p->steps, nst);
	for (int i = 0; i < g->nnodes; i++)
		if (ar_is_step(g, i) && !strcmp(g->nodes[i].op, "Concat") &&
		    is_elided(p, &g->nodes[i]))
			undo(p, &g->nodes[i]);
	ar_schedule(g, opt, p, p->steps);
	ar_lifetimes(g, p);
	if (peak_with_inplace(g, opt, p) >= elided) {
		memcpy(p->slots, slots, nsl);
		memcpy(p->steps, steps, nst);
	}
	free(slots), free(steps);
}
