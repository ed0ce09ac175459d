/*
 * schedule.c — the order in which steps run.
 *
 * The file's order is always valid (the loader made it topological); the
 * memory-aware order, when asked for, must never be worse than it.
 */
#include "passes.h"

int ar_schedule_file(const ArGraph *g, int *steps)
{
	int n = 0;
	for (int i = 0; i < g->nnodes; i++)
		if (ar_is_step(g, i))
			steps[n++] = i;
	return n;
}

int ar_schedule(const ArGraph *g, const ArPlanOptions *opt, const ArPlan *p,
		int *steps)
{
	if (opt->order == AR_ORDER_MEMORY)
		return ar_schedule_memory(g, opt, p, steps);
	return ar_schedule_file(g, steps);
}
