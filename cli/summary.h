/*
 * summary.h — human-readable reports on stdout/stderr.
 */
#ifndef ARENAC_SUMMARY_H
#define ARENAC_SUMMARY_H

#include <stdio.h>

#include "graph.h"
#include "plan.h"
#include "checkpoint.h"

/* The short report a user sees when asking for no output file. */
void ar_print_summary(FILE *f, const char *model, const ArGraph *g,
		      const ArPlan *p);
/* --stats: the planner's numbers, one per line. */
void ar_print_stats(FILE *f, const ArGraph *g, const ArPlan *p);
/* The same for a training step g planned as p, weights from the model's
 * graph (gradients and optimizer state are in the bill). */
void ar_print_train_plan_stats(FILE *f, const ArGraph *model,
			       const ArGraph *g, const ArPlan *p);
/* --train: the memory bill and the recompute it costs, as a table. */
void ar_print_train_stats(FILE *f, const ArTrainBill *b);
/* --budget-sweep: budget against arena and extra FLOPs. */
void ar_print_train_sweep(FILE *f, const char *model, const ArSweepPoint *pts,
			  int n);

#endif
