/*
 * tiers.h — placement of activations across memory tiers (tiers.c).
 *
 * Two layers: ar_tiers_place decides a tier and an offset for plain
 * buffers (what the unit tests drive with hand-made instances), and
 * ar_tiers_assign maps a plan's buffers to it and fills the plan's
 * regions.  Private to planner/ and its tests.
 */
#ifndef ARENAC_TIERS_H
#define ARENAC_TIERS_H

#include "dsa.h"
#include "plan.h"

typedef struct ArTier {
	int64_t capacity;       /* bytes open to activations */
	double cost;            /* seconds (or relative units) per byte moved */
} ArTier;

typedef struct ArTierResult {
	int64_t height[AR_MAX_TIERS];       /* offset assignment per tier */
	int64_t lower_bound[AR_MAX_TIERS];  /* peak live bytes per tier */
	int64_t peak_at[AR_MAX_TIERS];      /* a time of that peak */
	bool height_optimal[AR_MAX_TIERS];
	double cost;            /* sum of traffic times the tier's cost */
	bool optimal;           /* no placement of lower cost fits */
	bool exact;             /* the branch and bound ran */
	/* When nothing fits: the tier that overflowed, when, and by how much. */
	int fail_tier;
	int64_t fail_time;
	int64_t fail_need;
} ArTierResult;

/* Work units of a tier placement at the default effort: half for the
 * branch and bound (a unit per buffer a node's bound visits), half for
 * the offset assignments (dsa.h's units). */
#define AR_TIERS_WORK AR_DSA_WORK

/*
 * Gives each buffer a tier (tier_of) and an offset relative to its tier
 * (b[].offset) with every tier's height within its capacity, at the least
 * total traffic cost found within the work budget.  algo names the offset
 * solver (dsa.h).  Returns AR_OK, AR_EXIT_BUDGET when no placement was
 * found (res->fail_* say where) or AR_EXIT_USAGE for an unknown algo.
 */
int ar_tiers_place(ArBuf *b, const int64_t *traffic, int n,
		   const ArTier *tiers, int ntiers, const char *algo,
		   ArBudget *work, int *tier_of, ArTierResult *res);

/*
 * The plan-level step of offset assignment with opt->memories: bufs are
 * the plan's buffers (one per alias root, then the steps' workspaces) and
 * bufof maps tensors to them.  Sets every buffer's offset inside its
 * region and its region (bufregion), every slot's region, and
 * p->regions, arena_bytes, algorithm and optimal; spends work.
 */
int ar_tiers_assign(const ArGraph *g, const ArPlanOptions *opt, ArPlan *p,
		    ArBuf *bufs, const int *bufof, int nb, int *bufregion,
		    ArBudget *work, ArError *err);

/* Frees p->regions (ar_plan_free calls it). */
void ar_regions_free(ArPlan *p);

#endif
