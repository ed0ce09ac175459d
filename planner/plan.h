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

#include "budget.h"
#include "graph.h"

typedef enum { AR_ORDER_FILE, AR_ORDER_MEMORY } ArOrderMode;

/*
 * A memory tier for --memory NAME:SIZE[:BANDWIDTH] (tiers.c).  Tiers are
 * listed fastest first; each gets its own arena (a region of the plan).
 */
#define AR_MAX_TIERS 8

typedef struct ArMemory {
	const char *name;
	int64_t capacity;       /* bytes, > 0 */
	double bandwidth;       /* bytes per second, 0 when not given */
} ArMemory;
typedef enum { AR_INPLACE_NONE, AR_INPLACE_ELEMENTWISE } ArInplaceMode;

typedef struct ArPlanOptions {
	int64_t align;          /* power of two, default 16 */
	const char *algo;       /* see ar_dsa_algorithms; default "auto" */
	int effort;             /* scales every search's work budget
				   (budget.h), default AR_EFFORT_DEFAULT */
	double time_limit;      /* the safety net: seconds after which the
				   run's searches stop, 0 (default): none */
	ArWatch *watch;         /* the run's deadline when several plans
				   share one; NULL: ar_plan starts its own */
	int64_t budget;         /* bytes, 0 for none */
	ArOrderMode order;
	bool views;             /* Reshape & co. alias their input */
	ArInplaceMode inplace;
	bool concat_elide;
	/* No memories: one arena, as always.  Otherwise tiers.c decides a
	 * region per activation. */
	const ArMemory *memories;
	int nmemories;
	const char *weights_in; /* memory also holding the weights, or NULL */
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
	int region;             /* index into regions[]; 0 without tiers */
} ArSlot;

/*
 * One arena of a tiered plan.  Weights placed here (--weights-in) take
 * [0, weights_bytes); activations lie above them.  Offsets of the slots in
 * a region are relative to the region's start.
 */
typedef struct ArRegion {
	char *name;
	int64_t capacity;       /* bytes the memory has */
	int64_t weights_bytes;  /* padded weights reserved at its start */
	int64_t used_bytes;     /* weights plus the offset assignment's height */
	int64_t lower_bound;    /* peak live activation bytes placed here */
	int peak_step;          /* a step where that peak is reached */
	double bandwidth;       /* bytes per second, 0 when not given */
	int64_t traffic_bytes;  /* estimated bytes read and written here */
	bool optimal;           /* its height is proven minimal */
} ArRegion;

typedef struct ArPlan {
	int nsteps;
	int *steps;             /* node ids in execution order */
	int ntensors;
	ArSlot *slots;          /* indexed by tensor id */
	int64_t align;
	/* The one arena's size; with tiers, the sum of the regions' used bytes. */
	int64_t arena_bytes;
	int64_t lower_bound;    /* max over steps of padded live bytes */
	int64_t file_order_peak;/* the same bound for the file's order, no aliasing */
	int64_t weights_bytes;  /* weights and constants, unpadded */
	int peak_step;          /* a step where live bytes reach lower_bound */
	const char *algorithm;
	bool optimal;           /* arena_bytes proven minimal for this order */
	double plan_seconds;
	bool stopped_by_time_limit; /* a search was cut by --time-limit */
	int64_t offset_work;    /* units the offset search spent (budget.h) */
	int nregions;           /* 0: one arena of arena_bytes, no tiers */
	ArRegion *regions;
	bool placement_optimal; /* tiers: the region choice is proven best */
} ArPlan;

/* Regions a plan's slots index: 1 for an untiered plan. */
int ar_plan_nregions(const ArPlan *p);
/* Bytes of region r (arena_bytes for an untiered plan). */
int64_t ar_plan_region_bytes(const ArPlan *p, int r);

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
