/*
 * planjson.h — a plan read back from arenac's JSON report (--json), for
 * pictures that set another plan beside this run's (--timeline-compare).
 *
 * The report becomes a Graph and a Plan like the planner's own, with what
 * the report holds: steps (name, op, phase, inputs, outputs) and tensors
 * (dtype, shape, bytes, kind, offset, lifetime, aliasing, memory region).
 * Weights' data, attributes and opsets are not in a report and stay empty.
 */
#ifndef ARENAC_PLANJSON_H
#define ARENAC_PLANJSON_H

#include "graph.h"
#include "plan.h"

typedef struct ArPlanReport {
	ArGraph *g;
	ArPlan *p;
	char *model;            /* the report's "model", "" if none */
	char *options;          /* its "options", "" if none */
	char *algorithm;        /* p->algorithm points here */
} ArPlanReport;

/*
 * Reads and checks the report at path: every step and tensor reference
 * resolves, lifetimes lie within the steps, offsets within the arena.
 * AR_EXIT_USAGE with "PATH: what, where" when it cannot be read or is not
 * a plan report.
 */
int ar_read_plan_report(const char *path, ArPlanReport *r, ArError *err);
void ar_plan_report_free(ArPlanReport *r);

#endif
