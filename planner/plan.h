/*
 * plan.h — the planner's output: a step order and an arena layout.
 *
 * A Plan sits beside the Graph it was made for and indexes its tensors by
 * the same ids.  Invariants of a plan that ar_verify accepts:
 *   - steps[] is a topological order of the graph's nodes;
 *   - a tensor in the arena lives over steps [first, last] (inclusive): from
 *     its producer (step 0 for graph inputs) to its last reader (the last
 *     step for graph outputs);
 *   - offset is absolute in the arena and a multiple of align; the padded
 *     size fits in arena_bytes;
 *   - two tensors whose lifetimes intersect have disjoint byte ranges
 *     unless one is alias_of the other (a view or a concat slice, sharing
 *     bytes by design) or inplace_of the other (the output overwrites an
 *     input that dies at that very step).
 */
#ifndef ARENAC_PLAN_H
#define ARENAC_PLAN_H

#include "graph.h"

typedef enum { AR_ORDER_FILE, AR_ORDER_MEMORY } ArOrderMode;
typedef enum { AR_INPLACE_NONE, AR_INPLACE_ELEMENTWISE } ArInplaceMode;

typedef struct ArPlanOptions {
	int64_t align;          /* power of two, default 16 */
	const char *algo;       /* see ar_dsa_algorithms; default "auto" */
	double time_limit;      /* seconds for exact searches, default 2 */
	int64_t budget;         /* bytes, 0 for none */
	ArOrderMode order;
	bool views;             /* Reshape & co. alias their input */
	ArInplaceMode inplace;
	bool concat_elide;
	ArDiag diag;
} ArPlanOptions;

void ar_plan_options_default(ArPlanOptions *o);

typedef struct ArSlot {
	bool planned;           /* lives in the arena */
	int first, last;        /* steps, inclusive; -1 when not planned */
	int64_t offset;         /* absolute arena offset, -1 when not planned */
	int alias_of;           /* tensor id this one shares bytes with, or -1 */
	int64_t alias_offset;   /* byte offset inside alias_of's buffer */
	int inplace_of;         /* input this output overwrites, or -1 */
} ArSlot;

typedef struct ArPlan {
	int nsteps;
	int *steps;             /* node ids in execution order */
	int ntensors;
	ArSlot *slots;          /* indexed by tensor id */
	int64_t align;
	int64_t arena_bytes;
	int64_t lower_bound;    /* max over steps of padded live bytes */
	int64_t file_order_peak;/* the same bound for the file's order, no aliasing */
	int64_t weights_bytes;  /* weights and constants, unpadded */
	int peak_step;          /* a step where live bytes reach lower_bound */
	const char *algorithm;
	bool optimal;           /* arena_bytes proven minimal for this order */
	double plan_seconds;
} ArPlan;

/*
 * Schedules, aliases, computes lifetimes, assigns offsets and verifies.
 * AR_EXIT_BUDGET when opt->budget is set and the arena does not fit
 * (err says arena, lower bound and peak step; *out is still filled).
 */
int ar_plan(const ArGraph *g, const ArPlanOptions *opt, ArPlan **out,
	    ArError *err);
void ar_plan_free(ArPlan *p);

/* Padded size of a tensor for this plan's alignment. */
int64_t ar_plan_padded(const ArPlan *p, int64_t bytes);

/* Independent checker of the invariants above; AR_EXIT_INTERNAL naming the
 * offending tensor(s) on failure. */
int ar_verify(const ArGraph *g, const ArPlan *p, ArError *err);

/*
 * Simulates the schedule on a real byte array laid out by the plan: each
 * step checks its inputs still hold the pattern their producer wrote, then
 * writes its outputs' patterns.  Catches any overlap without kernels.
 */
int ar_poison_run(const ArGraph *g, const ArPlan *p, ArError *err);

#endif
