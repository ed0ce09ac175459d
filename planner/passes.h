/*
 * passes.h — the planner's passes, as plan.c strings them together.
 * Internal to planner/: codegen and the CLI see only plan.h.
 */
#ifndef ARENAC_PASSES_H
#define ARENAC_PASSES_H

#include "plan.h"

/*
 * The step order for opt->order; returns the number of steps.  p carries
 * the alias links decided so far, which the memory-aware order accounts for.
 */
int ar_schedule(const ArGraph *g, const ArPlanOptions *opt, const ArPlan *p,
		int *steps);
/* Steps in the file's order; returns the number of steps. */
int ar_schedule_file(const ArGraph *g, int *steps);

/*
 * Sets planned/first/last of every slot for the order in p->steps: from the
 * producer's step (0 for graph inputs) to the last reader's step (the last
 * step for graph outputs).  Leaves offsets and alias links alone.
 */
void ar_lifetimes(const ArGraph *g, ArPlan *p);

/* Alias groups (alias.c): tensors sharing one buffer through their links. */
typedef struct ArGroups {
	int n;
	int *of;                /* group of each tensor, -1 outside the arena */
	int64_t *off;           /* each member's byte offset in its buffer */
	int *root;              /* the member owning each group's buffer */
	int64_t *size;          /* padded bytes of each group's buffer */
	int *first, *last;      /* steps from the first member's birth to the
				   last member's death */
	bool *has_input;        /* a member is a graph input */
	bool *has_output;       /* a member is a graph output */
} ArGroups;

/*
 * The end of t's alias_of/inplace_of chain, and t's byte offset in it.  A
 * pass asking about many tensors passes a memo (else NULL), which keeps
 * each answer as a jump so that long chains are walked once, not once per
 * member.  Links may be added at roots while a memo is in use (the walk
 * goes on from the old root), never removed.
 */
typedef struct ArAliasMemo {
	int *to;                /* t itself, or a tensor up t's chain */
	int64_t *off;           /* t's byte offset in to[t] */
} ArAliasMemo;
void ar_alias_memo_init(ArAliasMemo *m, const ArPlan *p);
void ar_alias_memo_free(ArAliasMemo *m);
int ar_alias_root(const ArPlan *p, ArAliasMemo *m, int t, int64_t *off);
/* Per tensor: is it a graph output?  The caller frees the array. */
bool *ar_graph_output_flags(const ArGraph *g);
void ar_groups_build(const ArGraph *g, const ArPlan *p, ArGroups *gr);
void ar_groups_free(ArGroups *gr);
/* Outputs of the weight kind a step writes over its input (the op
 * table's in-place class) alias that input (persist.c). */
void ar_persist_inplace(const ArGraph *g, ArPlan *p);
/* plan.c: what ar_plan does before the offsets (order, alias links,
 * lifetimes), for searches that need only those; offsets stay -1. */
int ar_plan_links(const ArGraph *g, const ArPlanOptions *opt, ArPlan **out,
		  ArError *err);
/* plan.c: peak of padded live bytes for p's order and links, as planned;
 * needs lifetimes; *peak_step (if not NULL) gets a step where it peaks. */
int64_t ar_live_peak(const ArGraph *g, ArPlan *p, int *peak_step);

/*
 * plan.c: the whole pipeline for one graph, subgraphs first, without the
 * proof or the budget (ar_plan adds them at the top).  outer (owned by
 * the plan from here on) and carried are a subgraph's (plan.h).
 */
int ar_plan_graph(const ArGraph *g, const ArPlanOptions *opt, int *outer,
		  bool carried, ArPlan **out, ArError *err);
/* subplan.c: plans the subgraphs of g's steps into p->subs. */
int ar_plan_subgraphs(const ArGraph *g, const ArPlanOptions *opt, ArPlan *p,
		      ArError *err);
/* workspace.c: each step's workspace size into p->scratch (NULL if none);
 * once the offsets are final, each subgraph's base and region. */
int ar_plan_workspaces(const ArGraph *g, const ArPlanOptions *opt,
		       ArPlan *p, ArError *err);
void ar_plan_place_subs(ArPlan *p);
/*
 * verify.c: ar_verify for a plan whose offsets are relative to base (a
 * subgraph's; 0 at the top) and whose tensors are all in region (-1: each
 * in its slot's); verify_sub.c: its workspaces and subgraphs.
 */
int ar_verify_at(const ArGraph *g, const ArPlan *p, int64_t base, int region,
		 ArError *err);
int ar_verify_subs(const ArGraph *g, const ArPlan *p, int64_t base,
		   int region, ArError *err);

/*
 * The alias passes.  Views and concat elision do not depend on the order
 * and run before scheduling; in-place needs the final lifetimes.
 */
void ar_views(const ArGraph *g, ArPlan *p);          /* views.c */
void ar_concat_elide(const ArGraph *g, ArPlan *p);   /* concat.c */
void ar_inplace(const ArGraph *g, ArPlan *p);        /* inplace.c */
/* kvcache.c: attention caches written over their past input; after the
 * in-place pass, whose runs reset inplace links. */
void ar_kv_alias(const ArGraph *g, ArPlan *p);
/* concat.c: once the order is final, undoes elisions that raise the peak
 * (and leaves the in-place links redone for the result). */
void ar_concat_refine(const ArGraph *g, const ArPlanOptions *opt, ArPlan *p);

/*
 * memsched.c: a topological order of the steps with the least peak of live
 * group bytes it can find (exact for small state spaces, heuristic beyond),
 * never worse than the file order.  Returns the number of steps.
 */
int ar_schedule_memory(const ArGraph *g, const ArPlanOptions *opt,
		       const ArPlan *p, int *steps);

#endif
