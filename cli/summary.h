/*
 * summary.h — human-readable reports on stdout/stderr.
 */
#ifndef ARENAC_SUMMARY_H
#define ARENAC_SUMMARY_H

#include <stdio.h>

#include "graph.h"
#include "plan.h"

/* The short report a user sees when asking for no output file. */
void ar_print_summary(FILE *f, const char *model, const ArGraph *g,
		      const ArPlan *p);
/* --stats: the planner's numbers, one per line. */
void ar_print_stats(FILE *f, const ArGraph *g, const ArPlan *p);

#endif
