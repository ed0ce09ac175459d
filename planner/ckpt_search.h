/*
 * ckpt_search.h — the checkpoint search behind --checkpoint optimal
 * (ckpt_search.c), shared by one training plan and a whole budget sweep,
 * and the fixed policies it is held against (checkpoint.c).
 */
#ifndef ARENAC_CKPT_SEARCH_H
#define ARENAC_CKPT_SEARCH_H

#include "checkpoint.h"

/* The fixed policies, each a selection that depends on the model alone:
 * optimal plans every one the model allows and is never worse than any
 * that fits. */
#define AR_CKPT_NFIXED_MAX 8
extern const ArCkptPolicy ar_ckpt_fixed[];
extern const int ar_ckpt_nfixed;
/* The selection of fixed policy pol (none, all or sqrt), into res (per
 * base tensor). */
void ar_ckpt_select(const ArTrainModel *m, ArCkptPolicy pol, bool *res);
/*
 * The selection of layer or selective (ckpt_layers.c), into res (per base
 * tensor); boundary as ArTrainOptions.layer_boundary.  AR_EXIT_MODEL when
 * the model has no layers or no attention core, AR_EXIT_USAGE for a
 * boundary expression that does not compile.
 */
int ar_ckpt_layers(const ArTrainModel *m, ArCkptPolicy pol,
		   const char *boundary, bool *res, ArError *err);
/* Whether the model's attention cores are all fused kernels (--attention
 * flash|efficient), none op by op: selective then recomputes nothing. */
bool ar_ckpt_selective_empty(const ArTrainModel *m);

/* A selection the search planned for real. */
typedef struct ArCkptEntry {
	bool *sel;              /* per candidate (m->cand order) */
	int64_t cost;           /* recompute FLOPs */
	int64_t arena, lower_bound;
	int64_t units;          /* the work its plan was charged */
	ArGraph *graph;         /* kept only for the best fit to keep_budget */
	ArPlan *plan;
} ArCkptEntry;

typedef struct ArCkptSearch {
	const ArTrainModel *m;
	ArPlanOptions popt;     /* the user's, the offsets AR_CKPT_EVAL_DROP
				 * levels lower */
	ArBudget work;
	ArError *err;
	int rc;                 /* a planner failure stops everything */
	ArChain *chain;         /* NULL: not built, or no chain */
	bool chain_tried;
	ArCkptEntry *e;
	int n, cap;
	int64_t keep_budget;    /* keep the plan of the cheapest entry that
				 * fits this (0: none) */
	int kept;               /* that entry, -1 none */
	int smallest;           /* the smallest arena of a fixed set, -1 not
				 * known yet */
	int cheapest;           /* the least recompute at that arena */
	bool ran_out;           /* some walk stopped at its work budget */
	bool *res;              /* scratch selection, per base tensor */
	/* Per fixed policy (ar_ckpt_fixed's order), its selection per
	 * candidate once tried; NULL where the model lacks what it needs. */
	bool *fixed[AR_CKPT_NFIXED_MAX];
	bool fixed_tried[AR_CKPT_NFIXED_MAX];
	const char *layer_boundary;
} ArCkptSearch;

void ar_ckpt_search_init(ArCkptSearch *s, const ArTrainModel *m,
			 const ArTrainOptions *o, ArWatch *watch, ArError *err);
void ar_ckpt_search_free(ArCkptSearch *s);

/* Plans fixed policy pol; returns its entry, -1 after a failure (s->rc). */
int ar_ckpt_plan_fixed(ArCkptSearch *s, ArCkptPolicy pol);

/*
 * The optimal selection for budget: the least recompute whose real arena
 * fits; returns its entry, or -1 when none fits (or s->rc is set).
 * *exact: proven the least recompute over every selection.  Monotone: a
 * larger budget never gets more recompute (ckpt_search.c says why).
 */
int ar_ckpt_optimal(ArCkptSearch *s, int64_t budget, bool *exact);

/* The smallest arena any selection the search knows reaches, at its
 * least recompute: an entry, the same whatever budgets were asked for;
 * -1 after a failure. */
int ar_ckpt_smallest(ArCkptSearch *s);

/* Entry i's step graph and plan, planned again when not kept; the caller
 * owns them.  AR_OK or the planner's failure. */
int ar_ckpt_take(ArCkptSearch *s, int i, ArGraph **g, ArPlan **p);

/* Entry i's selection, per base tensor. */
void ar_ckpt_resident(const ArCkptSearch *s, int i, bool *res);

#endif
