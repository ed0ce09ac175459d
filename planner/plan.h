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
 *     input that dies at that very step);
 *   - a step's workspace (scratch) is disjoint from every tensor live at
 *     that step; the subgraphs its node runs are plans of their own that
 *     fit in it (subplan.c).
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
	/* Graph inputs and outputs in buffers of the caller's, not the arena. */
	bool io_separate;
	/* No memories: one arena, as always.  Otherwise tiers.c decides a
	 * region per activation. */
	const ArMemory *memories;
	int nmemories;
	const char *weights_in; /* memory also holding the weights, or NULL */
	/* Bytes of the first memory held by what this plan does not place
	 * (a training step's persistent state and --reserve): its
	 * activations get the rest. */
	int64_t held;
	/* --scratch kernels: steps whose kernel needs workspace (the op
	 * table's .scratch) get it in the arena; false: none (a runtime with
	 * workspace of its own).  Subgraph regions are planned either way. */
	bool kernel_scratch;
	/* --kernel-scratch FILE: a kernel library's workspace per op, which
	 * replaces the op table's for the ops it names (ops.h). */
	const struct ArKernelScratch *kernel_table;
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
	/* Facts the writers read (facts.c), derived once the plan is final: */
	int root;               /* tensor owning the buffer, through alias_of
				   and inplace_of links (itself when
				   unlinked); -1 when not planned */
	int64_t root_offset;    /* byte offset inside root's buffer */
	int io;                 /* io_separate: the caller's buffer, inputs
				   first (graph input k is k, output j is
				   ninputs + j); -1 for every other tensor */
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
	int64_t held_bytes;     /* ArPlanOptions.held, the first memory's */
	int64_t used_bytes;     /* weights plus the offset assignment's height */
	int64_t lower_bound;    /* peak live activation bytes placed here */
	int peak_step;          /* a step where that peak is reached */
	double bandwidth;       /* bytes per second, 0 when not given */
	int64_t traffic_bytes;  /* estimated bytes read and written here */
	bool optimal;           /* its height is proven minimal */
} ArRegion;

/*
 * The workspace of one step besides its operands: its kernel's scratch
 * (--scratch kernels) or the region the subgraphs of its node run in.  It
 * is placed like a tensor that lives for that step alone.
 */
typedef struct ArScratch {
	int64_t bytes;          /* 0: the step needs none */
	int64_t offset;         /* absolute arena offset (in region), -1 if none */
	int region;             /* 0 without tiers */
} ArScratch;

struct ArSubPlan;

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
	int64_t weights_bytes;  /* weights and constants a step reads, each
				   storage once, unpadded (ar_weights_read);
				   at the top, of every subgraph that runs
				   too (ar_weights_total) */
	int peak_step;          /* a step where live bytes reach lower_bound */
	const char *algorithm;
	bool optimal;           /* arena_bytes proven minimal for this order */
	double plan_seconds;
	bool stopped_by_time_limit; /* a search was cut by --time-limit */
	int64_t offset_work;    /* units the offset search spent (budget.h) */
	int nregions;           /* 0: one arena of arena_bytes, no tiers */
	ArRegion *regions;
	bool placement_optimal; /* tiers: the region choice is proven best */
	bool io_separate;       /* graph inputs and outputs outside the arena */
	/* Per step (facts.c): its outputs are already where the plan put them
	 * (views of an input, an elided concat), so a runtime skips it. */
	bool *noop;
	/* Per node id, NULL when no step needs any: its step's workspace. */
	ArScratch *scratch;
	bool kernel_scratch;    /* planned with --scratch kernels */
	/* The subgraphs of the steps' nodes, each planned as a graph of its
	 * own (subplan.c), in node then attribute order; those nested in a
	 * subgraph are in its plan's subs. */
	int nsubs;
	struct ArSubPlan *subs;
	/*
	 * A subgraph's plan only (NULL at the top): per tensor, the enclosing
	 * graph's tensor it stands for and shares bytes with (a capture; an
	 * If branch's output, written straight into the node's output), left
	 * out of this plan's arena; -1 for the others.
	 */
	int *outer;
	/* A Loop body's plan: its inputs live to its last step, so that
	 * copying the carried values after an iteration never overwrites a
	 * value still to be copied. */
	bool carried;
} ArPlan;

/*
 * A subgraph of a step's node and its plan.  Offsets in plan are relative
 * to the start of the node's workspace, at base; the tensors of the plan's
 * outer list live where the enclosing graph's do (ar_sub_where).
 */
typedef struct ArSubPlan {
	struct ArGraph *g;      /* the node's attribute, as the IR holds it */
	const char *attr;       /* then_branch, else_branch, body */
	int node;               /* node of the enclosing graph that runs it */
	bool loop;              /* a Loop body (else an If branch) */
	/* NULL when planned; otherwise why not, in a phrase (never silent). */
	const char *why;
	bool never_runs;        /* not planned because it can never run */
	ArPlan *plan;           /* NULL when not planned */
	int64_t base;           /* absolute offset of the workspace */
	int region;             /* the workspace's region */
	const ArGraph *up_g;    /* the enclosing graph and its plan */
	const ArPlan *up_p;
	const struct ArSubPlan *up; /* the enclosing subgraph, NULL at top */
} ArSubPlan;

/*
 * (workspace.c) Where tensor t of sub lives: the tensor owning its bytes (t itself, or
 * the enclosing graphs' tensor it stands for, followed outwards) as its
 * graph, plan and subgraph (NULL at the top), and its absolute offset
 * (-1 when not in the arena: a weight, a caller's buffer) and region.
 */
typedef struct ArWhere {
	const ArGraph *g;
	const ArPlan *p;
	const ArSubPlan *sub;
	int t;
	int64_t offset;
	int region;
} ArWhere;
void ar_sub_where(const ArSubPlan *sub, int t, ArWhere *w);

/* The rest of workspace.c's answers.  Counts over the subgraphs of p and
 * of every plan nested in it. */
typedef struct ArSubCounts {
	int total;
	int planned;
	int never_run;          /* an If branch its constant condition skips */
	int unplanned;          /* left out for another reason (warned) */
	int tensors;            /* tensors in the planned ones' arenas */
} ArSubCounts;
void ar_plan_sub_counts(const ArPlan *p, ArSubCounts *c);
/*
 * Calls fn for each subgraph of p and of the plans nested in it, depth
 * first, each before those nested in it, with its id (its place in that
 * order, the id the JSON report and the header give it) and its parent's
 * id (-1 for p's own).
 */
typedef void (*ArSubVisit)(const ArSubPlan *sp, int id, int parent,
			   void *ctx);
void ar_plan_walk_subs(const ArPlan *p, ArSubVisit fn, void *ctx);
/* In that order, the id of p->subs[k] when p's first subgraph's is first. */
int ar_plan_sub_id(const ArPlan *p, int first, int k);

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

/*
 * Fills the facts above (root, root_offset, io, noop) from the order, the
 * links and the offsets; ar_plan calls it, a plan made by hand must too.
 */
void ar_plan_facts(const ArGraph *g, ArPlan *p);

/* The workspace of node n's step, NULL when it has none. */
const ArScratch *ar_plan_scratch(const ArPlan *p, int node);

/*
 * The weights and constants some step reads (persist.c), one per storage:
 * in[t] for each, t being the storage (a tensor a step rewrote in place,
 * like a training step's W.next, is alias_of the one it rewrote).
 * Returns the sum of their unpadded bytes.
 */
int64_t ar_weights_read(const ArGraph *g, const ArPlan *p, bool *in);
/*
 * The same over the whole model once its subgraphs are placed: the steps
 * of g and of every planned subgraph, a captured tensor counted as the
 * enclosing graph's it stands for (ar_sub_where), so a weight that a
 * branch reads from outside counts, and counts once however many read it.
 */
int64_t ar_weights_total(const ArGraph *g, const ArPlan *p);
/*
 * Per storage (a root tensor, facts.c): its owner's first step and the
 * last step of any tensor sharing its bytes (views, in-place outputs);
 * -1 for tensors owning none.  The arrays hold g->ntensors entries.
 */
void ar_plan_storage_spans(const ArGraph *g, const ArPlan *p, int *first,
			   int *last);

/*
 * --allocator caching (caching.c): the plan's tensors through PyTorch's
 * CUDA caching allocator in step order, persistent ones first; capacity
 * (0: none) is when it releases its cached segments.
 */
typedef struct ArCacheStats {
	int64_t allocated_peak;     /* max_memory_allocated: rounded blocks */
	int64_t reserved_peak;      /* max_memory_reserved: segments */
	int segments;               /* cudaMalloc calls */
} ArCacheStats;
int ar_caching_simulate(const ArGraph *g, const ArPlan *p, int64_t capacity,
			ArCacheStats *st);

/* The end of t's alias_of chain among persistent tensors: the storage
 * whose bytes t is (persist.c). */
int ar_weight_storage(const ArPlan *p, int t);

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
