/*
 * lifetime.c — which tensors live in the arena, and over which steps.
 *
 * A tensor lives from the step that produces it to the last step that
 * reads it, inclusive, because a kernel reads its inputs while it writes
 * its outputs.  Graph inputs are live from step 0 (the caller fills them
 * before running), graph outputs to the last step (the caller reads them
 * after).  An output nobody reads still occupies memory at its producer's
 * step: the kernel writes it.  With --io separate graph inputs and outputs
 * are the caller's buffers and take no arena bytes at all, and in a
 * subgraph's plan neither do the enclosing graph's tensors it stands for
 * (plan.h's outer).  A Loop body's inputs live to its last step: the
 * runtime copies the carried values onto them after it.
 */
#include "passes.h"

#include <stdlib.h>

int64_t ar_plan_padded(const ArPlan *p, int64_t bytes)
{
	return (bytes + p->align - 1) & ~(p->align - 1);
}

static bool caller_owned(const ArGraph *g, const ArPlan *p, int t)
{
	ArTensorKind k = g->tensors[t].kind;
	return (p->io_separate && (k == AR_TK_INPUT || k == AR_TK_OUTPUT)) ||
	       (p->outer && p->outer[t] >= 0);
}

void ar_lifetimes(const ArGraph *g, ArPlan *p)
{
	int last = p->nsteps > 0 ? p->nsteps - 1 : 0;

	for (int t = 0; t < g->ntensors; t++) {
		ArSlot *s = &p->slots[t];
		s->planned = ar_in_arena(g, t) && !caller_owned(g, p, t);
		s->first = s->last = -1;
		if (s->planned && g->tensors[t].producer < 0)
			s->first = s->last = 0;
	}
	for (int i = 0; i < p->nsteps; i++) {
		const ArNode *n = &g->nodes[p->steps[i]];
		for (int j = 0; j < n->noutputs; j++) {
			int t = n->outputs[j];
			if (t >= 0 && p->slots[t].planned)
				p->slots[t].first = p->slots[t].last = i;
		}
	}
	for (int i = 0; i < p->nsteps; i++) {
		const ArNode *n = &g->nodes[p->steps[i]];
		for (int j = 0; j < n->ninputs; j++) {
			int t = n->inputs[j];
			if (t >= 0 && p->slots[t].planned && p->slots[t].last < i)
				p->slots[t].last = i;
		}
	}
	for (int i = 0; i < g->noutputs; i++)
		if (p->slots[g->outputs[i]].planned)
			p->slots[g->outputs[i]].last = last;
	for (int i = 0; p->carried && i < g->ninputs; i++)
		if (p->slots[g->inputs[i]].planned)
			p->slots[g->inputs[i]].last = last;
}
