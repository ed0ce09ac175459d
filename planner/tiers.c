/*
 * tiers.c — memory tiers: which memory holds each activation.
 *
 * Each memory given with --memory (fastest first) becomes an arena of its
 * own, a region of the plan.  The objective is the estimated time spent
 * moving bytes: each buffer's traffic (bytes its steps read and write)
 * times its tier's cost per byte (1 / bandwidth; without bandwidths each
 * tier counts as twice as slow as the one before it).  Capacity binds the
 * real offset assignment of each tier, not only its live bytes: a
 * placement stands only once ar_dsa_solve has packed every tier within its
 * capacity.
 *
 *   - greedy: buffers by accesses per byte (traffic / size), most first,
 *     each into the cheapest tier whose live bytes still fit at every step
 *     of its life;
 *   - repair: tier by tier from the cheapest, run the offset assignment
 *     with the tier's capacity; while it does not fit, evict the buffer
 *     with the fewest accesses per byte among those placed across the
 *     capacity line to the cheapest slower tier with room;
 *   - exact, up to TIERS_EXACT_MAX buffers: branch and bound over tier
 *     choices, a knapsack over lifetimes.  Per-tier live-byte profiles cut
 *     branches that overflow; the bound gives each unplaced buffer the
 *     cheapest tier it still fits alone; a leaf better than the best known
 *     is taken only if every tier's offset assignment fits.  Seeded with
 *     the greedy result, it may spend half the work budget (budget.h), a
 *     node costing one unit per buffer its bound visits.
 * The rest of the budget goes to the offset assignments, each solve a
 * share of what is left.
 */
#include "tiers.h"

#include <stdlib.h>
#include <string.h>

#include "dsa_impl.h"
#include "numfmt.h"
#include "passes.h"

#define TIERS_EXACT_MAX 40

typedef struct {
	ArBuf *b;
	const int64_t *traffic;
	int n, nt;
	const ArTier *tiers;
	int by_cost[AR_MAX_TIERS];  /* tiers, cheapest first */
	int64_t T;                  /* times run over [0, T) */
	int64_t *prof;              /* per tier, live bytes at each time */
	int *order;                 /* buffers, most accesses per byte first */
	int *rank;                  /* position of each buffer in order */
	const char *algo;
	ArBudget work;              /* everything but the branch and bound */
	ArBudget bb;                /* the branch and bound and its solves */
	ArBuf *tmp;                 /* one tier's buffers for ar_dsa_solve */
	int *tmpidx;
	/* The branch and bound. */
	int *cur;
	int *best_tier;
	int64_t *best_off;
	double best;
	bool found, incomplete;
	ArTierResult *res;
} Place;

static bool fits(const Place *s, int k, int i)
{
	const int64_t *r = s->prof + (size_t)k * s->T;
	for (int64_t t = s->b[i].lo; t < s->b[i].hi; t++)
		if (r[t] + s->b[i].size > s->tiers[k].capacity)
			return false;
	return true;
}

static void occupy(Place *s, int k, int i, int64_t sign)
{
	int64_t *r = s->prof + (size_t)k * s->T;
	for (int64_t t = s->b[i].lo; t < s->b[i].hi; t++)
		r[t] += sign * s->b[i].size;
}

/* The cheapest tier from cost rank r0 on where buffer i fits, or -1. */
static int cheapest_fit(const Place *s, int i, int r0)
{
	for (int r = r0; r < s->nt; r++)
		if (fits(s, s->by_cost[r], i))
			return s->by_cost[r];
	return -1;
}

/*
 * Runs the offset assignment of tier k under assignment tier_of (capacity
 * cap, 0 to minimise) on the share num/den of what work has left, and
 * writes the offsets back to s->b.  Returns the number of buffers in the
 * tier; *r gets the solver's result.
 */
static int solve_tier(Place *s, const int *tier_of, int k, int64_t cap,
		      ArBudget *work, int num, int den, ArDsaResult *r)
{
	ArBudget share;
	int m = 0;
	for (int i = 0; i < s->n; i++)
		if (tier_of[i] == k) {
			s->tmp[m] = s->b[i];
			s->tmpidx[m++] = i;
		}
	memset(r, 0, sizeof *r);
	r->optimal = true;
	if (m == 0)
		return 0;
	ar_budget_share(work, num, den, &share);
	ar_dsa_solve(s->tmp, m, s->algo, cap, &share, r);
	ar_budget_settle(work, &share);
	for (int j = 0; j < m; j++)
		s->b[s->tmpidx[j]].offset = s->tmp[j].offset;
	return m;
}

/* Records a failure of tier k over buffer i's life (all times if i < 0). */
static void fail_at(Place *s, int k, int i, int64_t extra)
{
	const int64_t *r = s->prof + (size_t)k * s->T;
	int64_t lo = i >= 0 ? s->b[i].lo : 0, hi = i >= 0 ? s->b[i].hi : s->T;
	int64_t at = lo;
	for (int64_t t = lo; t < hi; t++)
		if (r[t] > r[at])
			at = t;
	s->res->fail_tier = k;
	s->res->fail_time = at;
	s->res->fail_need = r[at] + extra;
}

static bool greedy(Place *s, int *tier_of)
{
	for (int d = 0; d < s->n; d++) {
		int i = s->order[d], k = cheapest_fit(s, i, 0);
		if (k < 0) {
			fail_at(s, s->by_cost[s->nt - 1], i, s->b[i].size);
			return false;
		}
		tier_of[i] = k;
		occupy(s, k, i, 1);
	}
	return true;
}

static bool time_overlap(const ArBuf *a, const ArBuf *b)
{
	return a->lo < b->hi && b->lo < a->hi;
}

/*
 * The buffer of tier k (cost rank r) to evict after its offset assignment
 * overflowed cap: the one with the fewest accesses per byte among those
 * crossing the capacity line that a slower tier can take, else among those
 * sharing time with a crossing one.  -1 when none can move.
 */
static int pick_victim(const Place *s, const int *tier_of, int k, int r,
		       int64_t cap)
{
	int victim = -1;
	for (int pass = 0; pass < 2 && victim < 0; pass++)
		for (int i = 0; i < s->n; i++) {
			bool cand = false;
			if (tier_of[i] != k)
				continue;
			if (s->b[i].offset + s->b[i].size > cap)
				cand = true;
			for (int j = 0; pass && !cand && j < s->n; j++)
				cand = tier_of[j] == k &&
				       s->b[j].offset + s->b[j].size > cap &&
				       time_overlap(&s->b[i], &s->b[j]);
			if (cand && (victim < 0 || s->rank[i] > s->rank[victim]) &&
			    cheapest_fit(s, i, r + 1) >= 0)
				victim = i;
		}
	return victim;
}

static bool repair(Place *s, int *tier_of)
{
	for (int r = 0; r < s->nt; r++) {
		int k = s->by_cost[r];
		int64_t cap = s->tiers[k].capacity;
		for (;;) {
			ArDsaResult dr;
			int v, to;
			solve_tier(s, tier_of, k, cap, &s->work, 1, 4, &dr);
			if (dr.height <= cap)
				break;
			v = pick_victim(s, tier_of, k, r, cap);
			if (v < 0) {
				fail_at(s, k, -1, 0);
				s->res->fail_need = dr.height;
				return false;
			}
			occupy(s, k, v, -1);
			to = cheapest_fit(s, v, r + 1);
			tier_of[v] = to;
			occupy(s, to, v, 1);
		}
	}
	return true;
}

static double cost_of(const Place *s, const int *tier_of)
{
	double c = 0;
	for (int i = 0; i < s->n; i++)
		c += (double)s->traffic[i] * s->tiers[tier_of[i]].cost;
	return c;
}

static void keep_best(Place *s, const int *tier_of, double cost)
{
	s->best = cost;
	s->found = true;
	for (int i = 0; i < s->n; i++) {
		s->best_tier[i] = tier_of[i];
		s->best_off[i] = s->b[i].offset;
	}
}

/* A full assignment: the best so far if every tier's offsets fit. */
static void leaf(Place *s, double cost)
{
	for (int k = 0; k < s->nt; k++) {
		ArDsaResult dr;
		solve_tier(s, s->cur, k, s->tiers[k].capacity, &s->bb, 1, 4,
			   &dr);
		if (dr.height > s->tiers[k].capacity) {
			if (!dr.infeasible)
				s->incomplete = true;
			return;
		}
	}
	keep_best(s, s->cur, cost);
}

static bool better(const Place *s, double c)
{
	return !s->found || c < s->best * (1 - 1e-12);
}

static void branch(Place *s, int d, double cost)
{
	double bound = cost;
	int i;

	if (!ar_budget_spend(&s->bb, s->n - d + 1)) {
		s->incomplete = true;
		return;
	}
	if (d == s->n) {
		if (better(s, cost))
			leaf(s, cost);
		return;
	}
	for (int e = d; e < s->n; e++) {
		int j = s->order[e], k = cheapest_fit(s, j, 0);
		if (k < 0)
			return;
		bound += (double)s->traffic[j] * s->tiers[k].cost;
	}
	if (!better(s, bound))
		return;
	i = s->order[d];
	for (int r = 0; r < s->nt; r++) {
		int k = s->by_cost[r];
		if (!fits(s, k, i))
			continue;
		occupy(s, k, i, 1);
		s->cur[i] = k;
		branch(s, d + 1, cost + (double)s->traffic[i] * s->tiers[k].cost);
		occupy(s, k, i, -1);
	}
}

typedef struct {
	double density;
	int64_t life;
	int i;
} Key;

static int key_cmp(const void *pa, const void *pb)
{
	const Key *a = pa, *b = pb;
	if (a->density != b->density)
		return a->density > b->density ? -1 : 1;
	if (a->life != b->life)
		return a->life < b->life ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

static void sort_buffers(Place *s)
{
	Key *key = ar_xmalloc((size_t)s->n * sizeof *key + 1);
	for (int i = 0; i < s->n; i++)
		key[i] = (Key){(double)s->traffic[i] / (double)s->b[i].size,
			       s->b[i].hi - s->b[i].lo, i};
	qsort(key, (size_t)s->n, sizeof *key, key_cmp);
	for (int d = 0; d < s->n; d++) {
		s->order[d] = key[d].i;
		s->rank[key[d].i] = d;
	}
	free(key);
	for (int k = 0; k < s->nt; k++)
		s->by_cost[k] = k;
	for (int a = 1; a < s->nt; a++)
		for (int c = a; c > 0 && s->tiers[s->by_cost[c]].cost <
					 s->tiers[s->by_cost[c - 1]].cost; c--) {
			int x = s->by_cost[c];
			s->by_cost[c] = s->by_cost[c - 1];
			s->by_cost[c - 1] = x;
		}
}

/* Fails when some time's live bytes exceed every tier's capacity summed. */
static bool total_fits(Place *s)
{
	int64_t *all = ar_xcalloc((size_t)s->T + 1, sizeof *all), total = 0;
	int64_t at = 0;
	bool ok;
	for (int k = 0; k < s->nt; k++)
		total += s->tiers[k].capacity;
	for (int i = 0; i < s->n; i++)
		for (int64_t t = s->b[i].lo; t < s->b[i].hi; t++)
			all[t] += s->b[i].size;
	for (int64_t t = 0; t < s->T; t++)
		if (all[t] > all[at])
			at = t;
	ok = all[at] <= total;
	if (!ok) {
		s->res->fail_tier = s->by_cost[s->nt - 1];
		s->res->fail_time = at;
		s->res->fail_need = all[at];
	}
	free(all);
	return ok;
}

/* Minimises each tier's height, keeping the fitting offsets if no better. */
static void finish(Place *s, int *tier_of)
{
	ArTierResult *res = s->res;
	for (int k = 0; k < s->nt; k++) {
		ArDsaResult dr;
		int m = 0;
		for (int i = 0; i < s->n; i++)
			if (tier_of[i] == k)
				s->tmp[m++] = s->b[i];
		res->height[k] = ar_dsa_height(s->tmp, m);
		res->lower_bound[k] = m ? ar_dsa_lower_bound(s->tmp, m,
							     &res->peak_at[k]) : 0;
		if (res->height[k] == res->lower_bound[k]) {
			res->height_optimal[k] = true;
			continue;
		}
		solve_tier(s, tier_of, k, 0, &s->work, 1, s->nt - k, &dr);
		if (dr.height < res->height[k]) {
			res->height[k] = dr.height;
			res->height_optimal[k] = dr.optimal;
		} else {
			for (int i = 0; i < s->n; i++)
				if (tier_of[i] == k)
					s->b[i].offset = s->best_off[i];
		}
	}
	res->cost = cost_of(s, tier_of);
}

int ar_tiers_place(ArBuf *b, const int64_t *traffic, int n,
		   const ArTier *tiers, int ntiers, const char *algo,
		   ArBudget *work, int *tier_of, ArTierResult *res)
{
	Place s = {0};
	int rc = AR_OK;
	ArBuf probe = {0, 1, 1, 0};
	ArDsaResult pr;

	memset(res, 0, sizeof *res);
	if (ar_dsa_solve(&probe, 1, algo, 0, work, &pr) < 0)
		return AR_EXIT_USAGE;
	s.b = b, s.traffic = traffic, s.n = n, s.nt = ntiers;
	s.tiers = tiers, s.algo = algo, s.res = res;
	ar_budget_share(work, 1, 2, &s.bb);
	ar_budget_init(&s.work, work->left - s.bb.left, work->watch);
	for (int i = 0; i < n; i++)
		if (b[i].hi > s.T)
			s.T = b[i].hi;
	s.prof = ar_xcalloc((size_t)ntiers * (size_t)s.T + 1, sizeof *s.prof);
	s.order = ar_xmalloc((size_t)n * sizeof(int) + 1);
	s.rank = ar_xmalloc((size_t)n * sizeof(int) + 1);
	s.tmp = ar_xmalloc((size_t)n * sizeof *s.tmp + 1);
	s.tmpidx = ar_xmalloc((size_t)n * sizeof(int) + 1);
	s.cur = ar_xmalloc((size_t)n * sizeof(int) + 1);
	s.best_tier = ar_xmalloc((size_t)n * sizeof(int) + 1);
	s.best_off = ar_xmalloc((size_t)n * sizeof(int64_t) + 1);
	sort_buffers(&s);

	if (!total_fits(&s)) {
		rc = AR_EXIT_BUDGET;
		goto out;
	}
	if (greedy(&s, tier_of) && repair(&s, tier_of))
		keep_best(&s, tier_of, cost_of(&s, tier_of));
	if (ntiers > 1 && n <= TIERS_EXACT_MAX) {
		memset(s.prof, 0, (size_t)ntiers * (size_t)s.T * sizeof *s.prof);
		res->exact = true;
		branch(&s, 0, 0);
	}
	if (!s.found) {
		rc = AR_EXIT_BUDGET;
		goto out;
	}
	res->optimal = ntiers == 1 || (res->exact && !s.incomplete);
	for (int i = 0; i < n; i++) {
		tier_of[i] = s.best_tier[i];
		b[i].offset = s.best_off[i];
	}
	finish(&s, tier_of);
out:
	ar_budget_settle(work, &s.bb);
	ar_budget_settle(work, &s.work);
	free(s.prof), free(s.order), free(s.rank), free(s.tmp);
	free(s.tmpidx), free(s.cur), free(s.best_tier), free(s.best_off);
	return rc;
}

/* ---- the plan's side: traffic per buffer, regions, messages ---- */

int ar_plan_nregions(const ArPlan *p)
{
	return p->nregions > 0 ? p->nregions : 1;
}

int64_t ar_plan_region_bytes(const ArPlan *p, int r)
{
	return p->nregions > 0 ? p->regions[r].used_bytes : p->arena_bytes;
}

void ar_regions_free(ArPlan *p)
{
	for (int r = 0; r < p->nregions; r++)
		free(p->regions[r].name);
	free(p->regions);
	p->regions = NULL;
	p->nregions = 0;
}

static int check_memories(const ArPlanOptions *opt, int *weights_in,
			  ArError *err)
{
	int with_bw = 0;
	*weights_in = -1;
	if (opt->nmemories > AR_MAX_TIERS)
		return ar_fail(err, AR_EXIT_USAGE, "%d memories given, at most "
			       "%d are supported", opt->nmemories, AR_MAX_TIERS);
	for (int k = 0; k < opt->nmemories; k++) {
		const ArMemory *m = &opt->memories[k];
		if (m->capacity <= 0)
			return ar_fail(err, AR_EXIT_USAGE, "memory '%s' needs "
				       "a size above 0", m->name);
		with_bw += m->bandwidth > 0;
		for (int j = 0; j < k; j++)
			if (!strcmp(opt->memories[j].name, m->name))
				return ar_fail(err, AR_EXIT_USAGE, "memory '%s' "
					       "given twice", m->name);
		if (opt->weights_in && !strcmp(opt->weights_in, m->name))
			*weights_in = k;
	}
	if (with_bw && with_bw != opt->nmemories)
		return ar_fail(err, AR_EXIT_USAGE, "give a bandwidth for every "
			       "--memory or for none");
	if (opt->weights_in && *weights_in < 0)
		return ar_fail(err, AR_EXIT_USAGE, "--weights-in '%s' names no "
			       "--memory", opt->weights_in);
	return AR_OK;
}

static bool is_weight(const ArTensor *x)
{
	return (x->kind == AR_TK_WEIGHT || x->kind == AR_TK_CONSTANT) &&
	       x->bytes > 0;
}

/*
 * Estimated bytes moved per tensor, from the step list: one write by its
 * producer (or by the caller for a graph input), one read per step input,
 * one read by the caller for a graph output.
 */
static int64_t *tensor_traffic(const ArGraph *g, const ArPlan *p)
{
	int64_t *acc = ar_xcalloc((size_t)g->ntensors + 1, sizeof *acc);
	for (int t = 0; t < g->ntensors; t++)
		acc[t] = p->slots[t].planned;
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		for (int j = 0; j < n->ninputs; j++)
			if (n->inputs[j] >= 0)
				acc[n->inputs[j]]++;
	}
	for (int i = 0; i < g->noutputs; i++)
		acc[g->outputs[i]]++;
	for (int t = 0; t < g->ntensors; t++) {
		int64_t bytes = g->tensors[t].bytes > 0 ? g->tensors[t].bytes : 0;
		if (!ar_mul64(acc[t], bytes, &acc[t]))
			acc[t] = INT64_MAX / 4;
	}
	return acc;
}

static const char *step_label(const ArGraph *g, const ArPlan *p, int64_t s)
{
	return s >= 0 && s < p->nsteps ? g->nodes[p->steps[s]].name : "(none)";
}

static void init_regions(const ArGraph *g, const ArPlanOptions *opt,
			 ArPlan *p, int weights_in, const int64_t *traffic)
{
	p->nregions = opt->nmemories;
	p->regions = ar_xcalloc((size_t)p->nregions, sizeof *p->regions);
	for (int k = 0; k < p->nregions; k++) {
		ArRegion *r = &p->regions[k];
		r->name = ar_xstrdup(opt->memories[k].name);
		r->capacity = opt->memories[k].capacity;
		r->bandwidth = opt->memories[k].bandwidth;
	}
	if (p->nregions)
		p->regions[0].held_bytes = opt->held;
	if (weights_in < 0)
		return;
	for (int t = 0; t < g->ntensors; t++) {
		ArRegion *r = &p->regions[weights_in];
		if (!is_weight(&g->tensors[t]))
			continue;
		ar_add64(r->weights_bytes, ar_plan_padded(p, g->tensors[t].bytes),
			 &r->weights_bytes);
		ar_add64(r->traffic_bytes, traffic[t], &r->traffic_bytes);
	}
}

int ar_tiers_assign(const ArGraph *g, const ArPlanOptions *opt, ArPlan *p,
		    ArBuf *bufs, const int *bufof, int nb, int *bufregion,
		    ArBudget *work, ArError *err)
{
	ArTier tiers[AR_MAX_TIERS];
	ArTierResult res;
	int64_t *traffic, *buftraffic;
	int *tier_of, weights_in, rc;
	char n1[AR_NUMFMT_LEN], n2[AR_NUMFMT_LEN], n3[AR_NUMFMT_LEN],
	     n4[AR_NUMFMT_LEN];

	if ((rc = check_memories(opt, &weights_in, err)))
		return rc;
	traffic = tensor_traffic(g, p);
	init_regions(g, opt, p, weights_in, traffic);
	buftraffic = ar_xcalloc((size_t)nb + 1, sizeof *buftraffic);
	tier_of = ar_xcalloc((size_t)nb + 1, sizeof *tier_of);
	for (int t = 0; t < g->ntensors; t++)
		if (bufof[t] >= 0)
			ar_add64(buftraffic[bufof[t]], traffic[t],
				 &buftraffic[bufof[t]]);
	for (int k = 0; k < p->nregions; k++) {
		const ArRegion *r = &p->regions[k];
		tiers[k].capacity = r->capacity - r->weights_bytes -
				    r->held_bytes;
		tiers[k].cost = r->bandwidth > 0 ? 1.0 / r->bandwidth :
						   (double)((int64_t)1 << k);
		if (tiers[k].capacity < 0) {
			rc = ar_fail(err, AR_EXIT_BUDGET, "memory '%s' of %s "
				     "bytes cannot hold the %s bytes of "
				     "weights%s", r->name,
				     ar_fmt_count(n1, r->capacity),
				     ar_fmt_count(n2, r->weights_bytes +
						  r->held_bytes),
				     r->held_bytes ? " and persistent state" :
				     "");
			goto out;
		}
	}
	rc = ar_tiers_place(bufs, buftraffic, nb, tiers, p->nregions,
			    opt->algo, work, tier_of, &res);
	if (rc == AR_EXIT_USAGE) {
		rc = ar_fail(err, rc, "unknown --algo '%s'", opt->algo);
		goto out;
	}
	if (rc) {
		const ArRegion *r = &p->regions[res.fail_tier];
		rc = ar_fail(err, AR_EXIT_BUDGET, "does not fit the memories: "
			     "'%s' (%s bytes, %s for activations%s) would "
			     "need %s bytes, %s over, peak at step %lld '%s'",
			     r->name, ar_fmt_count(n1, r->capacity),
			     ar_fmt_count(n2, tiers[res.fail_tier].capacity),
			     r->held_bytes ? " after the training step's "
			     "persistent state and --reserve" : "",
			     ar_fmt_count(n3, res.fail_need),
			     ar_fmt_count(n4, res.fail_need -
					  tiers[res.fail_tier].capacity),
			     (long long)res.fail_time,
			     step_label(g, p, res.fail_time));
		goto out;
	}
	p->arena_bytes = 0;
	p->optimal = true;
	for (int k = 0; k < p->nregions; k++) {
		ArRegion *r = &p->regions[k];
		r->used_bytes = r->weights_bytes + res.height[k];
		r->lower_bound = res.lower_bound[k];
		r->peak_step = (int)res.peak_at[k];
		r->optimal = res.height_optimal[k];
		p->optimal = p->optimal && r->optimal;
		ar_add64(p->arena_bytes, r->used_bytes, &p->arena_bytes);
	}
	for (int i = 0; i < nb; i++) {
		ArRegion *r = &p->regions[tier_of[i]];
		bufregion[i] = tier_of[i];
		bufs[i].offset += r->weights_bytes;
		ar_add64(r->traffic_bytes, buftraffic[i], &r->traffic_bytes);
	}
	for (int t = 0; t < g->ntensors; t++)
		p->slots[t].region = bufof[t] >= 0 ? tier_of[bufof[t]] : 0;
	p->placement_optimal = res.optimal;
	p->algorithm = res.exact ? "tiers-exact" : "tiers-greedy";
out:
	free(traffic), free(buftraffic), free(tier_of);
	return rc;
}
