/*
 * passes.h — the planner's passes, as plan.c strings them together.
 * Internal to planner/: codegen and the CLI see only plan.h.
 */
#ifndef ARENAC_PASSES_H
#define ARENAC_PASSES_H

#include "plan.h"

/* True when a tensor belongs in the arena (not a weight or constant). */
bool ar_in_arena(const ArGraph *g, int t);
/* True when a node runs at run time (it is not folded away). */
bool ar_is_step(const ArGraph *g, int node);

/* The step order for opt->order; returns the number of steps. */
int ar_schedule(const ArGraph *g, const ArPlanOptions *opt, int *steps);
/* Steps in the file's order; returns the number of steps. */
int ar_schedule_file(const ArGraph *g, int *steps);

/*
 * Sets planned/first/last of every slot for the order in p->steps: from the
 * producer's step (0 for graph inputs) to the last reader's step (the last
 * step for graph outputs).  Leaves offsets and alias links alone.
 */
void ar_lifetimes(const ArGraph *g, ArPlan *p);

#endif
