/*
 * ckpt_search.c — the checkpoint search behind --checkpoint optimal: the
 * least recompute whose real arena fits a budget, judged by ar_plan.
 *
 * A selection is judged by the real planner, never by an estimate: each
 * one the search looks at is built into its step graph and planned by
 * ar_plan (aliases, offsets, verifier) with the user's options, the
 * offsets AR_CKPT_EVAL_DROP levels lower, and the plan returned is the
 * very plan that was judged to fit.  Every plan is kept in a cache (its
 * arena, lower bound and recompute FLOPs), so a sweep over many budgets
 * plans each selection once.
 *
 * The answer for budget B is the cheapest of these, each the first that
 * fits B in an order fixed before B is known:
 *   - the fixed policies (checkpoint.c's list: none, all, sqrt, ...),
 *     cheapest first;
 *   - the points of the chain's trade-off curve (chain_dp.c), cheapest
 *     first, those whose model peak is above B skipped;
 *   - on a graph with at most EXACT_MAX candidates whose chain does not
 *     cover every selection: every selection, cheapest first;
 *   - without a chain (its measurements out of work): uniform segments,
 *     every k-th candidate resident, cheapest first;
 *   - the selection with the smallest arena (ar_ckpt_smallest).
 * "Fits" is always "the real arena is at most B" (and for a curve point
 * "its model peak is at most B" too): true at B, true at every larger
 * budget.  So the first fit of each list never gets costlier as B grows,
 * nor does the cheapest of them: the recompute is monotone in the budget
 * by construction.  Selections that cannot beat the incumbent are not
 * planned, which changes nothing.
 *
 * Work: every walk has a budget of its own (budget.h), counted in nodes of
 * the step graphs it plans (PLAN_UNITS per node of a selection planned
 * whole, one per OFFSET_UNITS units its offset search spent, a cached plan
 * charged as if planned again), at least WORK_PLANS whole plans at the
 * default effort.  A walk that runs out keeps the cheapest fit found so
 * far; that is the one way two budgets can disagree with monotonicity,
 * and the answer is then never called exact.
 */
#include "ckpt_search.h"
#include "chain.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_MAX 14
/* Nodes of step graphs a walk may plan at the default effort: at least
 * about two seconds of a 2020s core, at least WORK_PLANS whole plans. */
#define CKPT_WORK ((int64_t)3 << 19)
#define WORK_PLANS 48
#define PLAN_UNITS 4
#define OFFSET_UNITS 1024
/* Uniform segments tried without a chain: every k-th, k up to this. */
#define SPACINGS_MAX 256

/* Nodes of the step graph with every activation resident: forward, loss,
 * its gradient, a backward step per rule, a sum per gradient with several
 * parts, an update per parameter. */
static int64_t step_nodes(const ArTrainModel *m)
{
	int64_t n = m->base->nnodes + 1;
	for (int i = 0; i < m->nfwd; i++)
		n += m->rule[i] != NULL;
	for (int t = 0; t < m->base->ntensors; t++)
		n += (m->ncontrib[t] > 1) + m->param[t];
	return n;
}

static void fresh_work(ArCkptSearch *s, ArBudget *b)
{
	int64_t plans = ar_train_mul(WORK_PLANS * PLAN_UNITS,
				     step_nodes(s->m));
	ar_budget_init(b, ar_effort_units(s->popt.effort + AR_CKPT_EVAL_DROP,
					  plans > CKPT_WORK ? plans : CKPT_WORK),
		       s->work.watch);
}

/* Fixed policy pol's selection into s->res. */
static int select_fixed(ArCkptSearch *s, ArCkptPolicy pol, ArError *err)
{
	if (pol == AR_CKPT_LAYER || pol == AR_CKPT_SELECTIVE)
		return ar_ckpt_layers(s->m, pol, s->layer_boundary, s->res,
				      err);
	ar_ckpt_select(s->m, pol, s->res);
	return AR_OK;
}

/*
 * Fixed policy i's selection into s->res; false where the model lacks
 * what it needs (layer and selective: layers, an attention core), which
 * leaves that policy out of what optimal is held against (asked for by
 * name, it is an error: ar_ckpt_plan_fixed).  Each is found once, on
 * first use: a plan under one fixed policy never looks for layers.
 */
static bool fixed_res(ArCkptSearch *s, int i)
{
	const ArTrainModel *m = s->m;
	if (!s->fixed_tried[i]) {
		ArError e;
		int rc = select_fixed(s, ar_ckpt_fixed[i], &e);
		s->fixed_tried[i] = true;
		/* A boundary expression that does not compile is the user's
		 * error whatever the policy. */
		if (rc == AR_EXIT_USAGE && !s->rc) {
			s->rc = rc;
			*s->err = e;
		}
		if (rc)
			return false;
		s->fixed[i] = ar_xmalloc((size_t)m->ncand + 1);
		for (int k = 0; k < m->ncand; k++)
			s->fixed[i][k] = s->res[m->cand[k]];
		return true;
	}
	if (!s->fixed[i])
		return false;
	for (int k = 0; k < m->ncand; k++)
		s->res[m->cand[k]] = s->fixed[i][k];
	return true;
}

void ar_ckpt_search_init(ArCkptSearch *s, const ArTrainModel *m,
			 const ArTrainOptions *o, ArWatch *watch, ArError *err)
{
	memset(s, 0, sizeof *s);
	s->m = m;
	s->popt = o->plan;
	s->popt.budget = 0;
	s->popt.watch = watch;
	/* The node order is the schedule: recomputes sit where they pay. */
	s->popt.order = AR_ORDER_FILE;
	s->popt.effort -= AR_CKPT_EVAL_DROP;
	s->err = err;
	s->kept = s->smallest = s->cheapest = -1;
	s->work.watch = watch;
	fresh_work(s, &s->work);
	s->res = ar_xcalloc((size_t)m->base->ntensors + 1, sizeof *s->res);
	s->layer_boundary = o->layer_boundary;
	assert(ar_ckpt_nfixed <= AR_CKPT_NFIXED_MAX);
	/* A boundary given is checked at once, whatever the policy. */
	for (int i = 0; i < ar_ckpt_nfixed && o->layer_boundary; i++)
		if (ar_ckpt_fixed[i] == AR_CKPT_LAYER)
			fixed_res(s, i);
}

void ar_ckpt_search_free(ArCkptSearch *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->e[i].sel);
		ar_plan_free(s->e[i].plan);
		ar_graph_free(s->e[i].graph);
	}
	free(s->e);
	free(s->res);
	for (int i = 0; i < ar_ckpt_nfixed; i++)
		free(s->fixed[i]);
	ar_chain_free(s->chain);
	memset(s, 0, sizeof *s);
}

void ar_ckpt_resident(const ArCkptSearch *s, int i, bool *res)
{
	for (int k = 0; k < s->m->ncand; k++)
		res[s->m->cand[k]] = s->e[i].sel[k];
}

/* Keeps entry i's graph and plan when it is the cheapest fit so far to
 * keep_budget; frees them otherwise. */
static void keep_or_free(ArCkptSearch *s, int i, ArGraph *g, ArPlan *p)
{
	ArCkptEntry *x = &s->e[i];
	if (s->keep_budget && x->arena <= s->keep_budget &&
	    (s->kept < 0 || x->cost < s->e[s->kept].cost)) {
		if (s->kept >= 0) {
			ar_plan_free(s->e[s->kept].plan);
			ar_graph_free(s->e[s->kept].graph);
			s->e[s->kept].plan = NULL;
			s->e[s->kept].graph = NULL;
		}
		x->graph = g;
		x->plan = p;
		s->kept = i;
		return;
	}
	ar_plan_free(p);
	ar_graph_free(g);
}

/* The entry of selection res (per base tensor), planned unless cached;
 * -1 after a planner failure (s->rc).  Charged to s->work either way. */
static int plan_sel(ArCkptSearch *s, const bool *res, int64_t cost)
{
	const ArTrainModel *m = s->m;
	ArCkptEntry *x;
	ArGraph *g;
	ArPlan *p = NULL;
	bool *sel = ar_xmalloc((size_t)m->ncand + 1);
	int64_t units;

	for (int k = 0; k < m->ncand; k++)
		sel[k] = res[m->cand[k]];
	for (int i = 0; i < s->n; i++)
		if (!memcmp(s->e[i].sel, sel, (size_t)m->ncand)) {
			free(sel);
			ar_budget_spend(&s->work, s->e[i].units);
			return i;
		}
	g = ar_train_graph(m, res);
	s->rc = ar_plan(g, &s->popt, &p, s->err);
	units = PLAN_UNITS * (int64_t)g->nnodes +
		(p ? p->offset_work : 0) / OFFSET_UNITS;
	/* Charged even when it overdraws: a fixed policy is planned anyway. */
	ar_budget_spend(&s->work, units);
	if (s->rc) {
		ar_plan_free(p);
		ar_graph_free(g);
		free(sel);
		return -1;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->e = ar_xrealloc(s->e, (size_t)s->cap * sizeof *s->e);
	}
	x = &s->e[s->n];
	memset(x, 0, sizeof *x);
	x->sel = sel;
	x->cost = cost;
	x->arena = p->arena_bytes;
	x->lower_bound = p->lower_bound;
	x->units = units;
	s->n++;
	keep_or_free(s, s->n - 1, g, p);
	return s->n - 1;
}

/* Plans fixed policy i where the model has it; -1 where not. */
static int plan_fixed_at(ArCkptSearch *s, int i)
{
	if (!fixed_res(s, i))
		return -1;
	return plan_sel(s, s->res, ar_train_recompute_flops(s->m, s->res));
}

int ar_ckpt_plan_fixed(ArCkptSearch *s, ArCkptPolicy pol)
{
	if (s->rc)
		return -1;
	for (int i = 0; i < ar_ckpt_nfixed; i++)
		if (ar_ckpt_fixed[i] == pol && fixed_res(s, i))
			return plan_fixed_at(s, i);
	/* Not there: say why. */
	s->rc = select_fixed(s, pol, s->err);
	assert(s->rc);
	return -1;
}

int ar_ckpt_take(ArCkptSearch *s, int i, ArGraph **g, ArPlan **p)
{
	ArCkptEntry *x = &s->e[i];
	if (x->plan) {
		*g = x->graph;
		*p = x->plan;
		x->graph = NULL;
		x->plan = NULL;
		if (s->kept == i)
			s->kept = -1;
		return AR_OK;
	}
	ar_ckpt_resident(s, i, s->res);
	*g = ar_train_graph(s->m, s->res);
	return ar_plan(*g, &s->popt, p, s->err);
}

/* The chain, built once, within a work budget of its own. */
static void need_chain(ArCkptSearch *s)
{
	ArBudget w;
	if (s->chain_tried)
		return;
	s->chain_tried = true;
	fresh_work(s, &w);
	s->rc = ar_chain_build(s->m, &s->popt, &w, &s->chain, s->err);
}

/* Better: fits budget and cheaper than entry best (-1: none). */
static bool beats(const ArCkptSearch *s, int i, int best, int64_t budget)
{
	return i >= 0 && s->e[i].arena <= budget &&
	       (best < 0 || s->e[i].cost < s->e[best].cost);
}

/* A family of selections fixed before the budget: sorted by cost. */
typedef struct Family {
	int n;
	int64_t *cost;
	int *idx;               /* member order, cheapest first */
	void (*make)(const ArTrainModel *m, int member, bool *res);
} Family;

static void set_mask(const ArTrainModel *m, int mask, bool *res)
{
	for (int i = 0; i < m->ncand; i++)
		res[m->cand[i]] = mask >> i & 1;
}

/* Every (member + 1)-th candidate resident (member 0: all of them). */
static void set_spacing(const ArTrainModel *m, int member, bool *res)
{
	for (int i = 0; i < m->ncand; i++)
		res[m->cand[i]] = (i + 1) % (member + 1) == 0;
}

static const int64_t *cost_key;

static int by_cost(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	if (cost_key[a] != cost_key[b])
		return cost_key[a] < cost_key[b] ? -1 : 1;
	return (a < b) - (a > b);       /* then the later member first */
}

static void family_init(ArCkptSearch *s, Family *f, int n,
			void (*make)(const ArTrainModel *, int, bool *))
{
	f->n = n;
	f->make = make;
	f->cost = ar_xmalloc((size_t)n * sizeof *f->cost);
	f->idx = ar_xmalloc((size_t)n * sizeof *f->idx);
	for (int i = 0; i < n; i++) {
		make(s->m, i, s->res);
		f->cost[i] = ar_train_recompute_flops(s->m, s->res);
		f->idx[i] = i;
	}
	cost_key = f->cost;
	qsort(f->idx, (size_t)n, sizeof *f->idx, by_cost);
	cost_key = NULL;
}

/* The family's first member, cheapest first, that fits and beats best;
 * false when the walk ran out of work first. */
static bool family_walk(ArCkptSearch *s, const Family *f, int64_t budget,
			int *best)
{
	for (int k = 0; k < f->n && !s->rc; k++) {
		int i = f->idx[k], e;
		if (*best >= 0 && f->cost[i] >= s->e[*best].cost)
			return true;
		if (!ar_budget_left(&s->work))
			return false;
		f->make(s->m, i, s->res);
		e = plan_sel(s, s->res, f->cost[i]);
		if (beats(s, e, *best, budget)) {
			*best = e;
			return true;
		}
	}
	return true;
}

static void family_free(Family *f)
{
	free(f->cost);
	free(f->idx);
}

/* The chain's curve walked from its cheapest point whose model peak fits
 * the budget: the first whose real arena fits.  *exact: on a complete
 * chain, it was the first tried and the model's peak is its real lower
 * bound. */
static void chain_walk(ArCkptSearch *s, int64_t budget, int *best,
		       bool *exact)
{
	int lo = 0, hi = ar_chain_npoints(s->chain);
	int64_t peak;
	/* The first point above the budget: the curve is by model peak. */
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (ar_chain_point_peak(s->chain, mid) <= budget)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int k = lo - 1; k >= 0 && !s->rc; k--) {
		int64_t cost = ar_chain_point(s->chain, k, s->res, &peak);
		int e;
		if (*best >= 0 && cost >= s->e[*best].cost)
			return;
		if (!ar_budget_left(&s->work)) {
			s->ran_out = true;
			return;
		}
		e = plan_sel(s, s->res, cost);
		if (beats(s, e, *best, budget)) {
			*best = e;
			*exact = k == lo - 1 && ar_chain_complete(s->chain) &&
				 s->e[e].lower_bound == peak;
			return;
		}
	}
}

/* The fixed policies other than none, cheapest first. */
static void fixed_walk(ArCkptSearch *s, int64_t budget, int *best)
{
	int order[16], n = 0;
	int64_t cost[16];
	assert(ar_ckpt_nfixed <= 16);
	for (int i = 0; i < ar_ckpt_nfixed; i++) {
		if (ar_ckpt_fixed[i] == AR_CKPT_NONE || !fixed_res(s, i))
			continue;
		cost[n] = ar_train_recompute_flops(s->m, s->res);
		order[n++] = i;
		for (int k = n - 1; k > 0 && cost[k] < cost[k - 1]; k--) {
			int64_t c = cost[k];
			int o = order[k];
			cost[k] = cost[k - 1], order[k] = order[k - 1];
			cost[k - 1] = c, order[k - 1] = o;
		}
	}
	for (int k = 0; k < n && !s->rc; k++) {
		int e;
		if (*best >= 0 && cost[k] >= s->e[*best].cost)
			return;
		e = plan_fixed_at(s, order[k]);
		if (beats(s, e, *best, budget)) {
			*best = e;
			return;
		}
	}
}

static int least_arena(ArCkptSearch *s);

static int nspacings(const ArTrainModel *m)
{
	return m->ncand < SPACINGS_MAX ? m->ncand : SPACINGS_MAX;
}

int ar_ckpt_optimal(ArCkptSearch *s, int64_t budget, bool *exact)
{
	const ArTrainModel *m = s->m;
	int best, sm;
	bool chain_exact = false, complete;

	*exact = false;
	s->ran_out = false;
	fresh_work(s, &s->work);
	best = ar_ckpt_plan_fixed(s, AR_CKPT_NONE);
	if (best < 0 || s->e[best].arena <= budget) {
		*exact = best >= 0;
		return best;
	}
	best = -1;
	need_chain(s);
	if (!s->rc && s->chain)
		chain_walk(s, budget, &best, &chain_exact);
	complete = s->chain && ar_chain_complete(s->chain);
	if (!s->rc)
		fixed_walk(s, budget, &best);
	if (!s->rc && !complete && m->ncand <= EXACT_MAX) {
		Family f;
		family_init(s, &f, 1 << m->ncand, set_mask);
		chain_exact = family_walk(s, &f, budget, &best);
		s->ran_out |= !chain_exact;
		family_free(&f);
	} else if (!s->rc && !s->chain) {
		Family f;
		family_init(s, &f, nspacings(m), set_spacing);
		s->ran_out |= !family_walk(s, &f, budget, &best);
		family_free(&f);
		chain_exact = false;
	}
	if (s->rc)
		return -1;
	/* The smallest-arena selection is a member of every walk. */
	if ((sm = least_arena(s)) < 0)
		return -1;
	if (beats(s, sm, best, budget)) {
		best = sm;
		chain_exact = false;
	}
	/* Exact when the chain's first answer (or brute force) stood. */
	*exact = best >= 0 && chain_exact && !s->ran_out;
	return best;
}

/* The cheapest entry of the smallest arena among entries[0..n). */
static int least_of(const ArCkptSearch *s, const int *entries, int n)
{
	int best = -1;
	for (int k = 0; k < n; k++) {
		int i = entries[k];
		if (i >= 0 && (best < 0 || s->e[i].arena < s->e[best].arena ||
			       (s->e[i].arena == s->e[best].arena &&
				s->e[i].cost < s->e[best].cost)))
			best = i;
	}
	return best;
}

/* The smallest arena of a fixed set of selections: the fixed policies,
 * the chain's smallest model peak, every selection of a small graph
 * whose chain is not complete, uniform segments without a chain. */
static int least_arena(ArCkptSearch *s)
{
	const ArTrainModel *m = s->m;
	ArBudget outer = s->work;
	int *cand, n = 0, cap = ar_ckpt_nfixed + 1 + SPACINGS_MAX +
			      (m->ncand <= EXACT_MAX ? 1 << m->ncand : 0);
	if (s->smallest >= 0)
		return s->smallest;
	/* A fixed set of selections, within a budget of its own. */
	fresh_work(s, &s->work);
	cand = ar_xmalloc((size_t)cap * sizeof *cand);
	for (int i = 0; i < ar_ckpt_nfixed && !s->rc; i++) {
		int e = plan_fixed_at(s, i);
		if (e >= 0)
			cand[n++] = e;
	}
	need_chain(s);
	if (!s->rc && s->chain) {
		int64_t peak, cost = ar_chain_smallest(s->chain, s->res, &peak);
		cand[n++] = plan_sel(s, s->res, cost);
	}
	if (!s->rc && m->ncand <= EXACT_MAX && !(s->chain &&
						  ar_chain_complete(s->chain)))
		for (int i = 0; i < 1 << m->ncand && !s->rc &&
		     ar_budget_left(&s->work); i++) {
			set_mask(m, i, s->res);
			cand[n++] = plan_sel(s, s->res,
				ar_train_recompute_flops(m, s->res));
		}
	else if (!s->rc && !s->chain)
		for (int i = 0; i < nspacings(m) && !s->rc &&
		     ar_budget_left(&s->work); i++) {
			set_spacing(m, i, s->res);
			cand[n++] = plan_sel(s, s->res,
				ar_train_recompute_flops(m, s->res));
		}
	if (!s->rc)
		s->smallest = least_of(s, cand, n);
	free(cand);
	s->work = outer;
	return s->rc ? -1 : s->smallest;
}

int ar_ckpt_smallest(ArCkptSearch *s)
{
	int sm = least_arena(s);
	bool exact;
	if (sm < 0)
		return -1;
	/* Its least recompute: what optimal plans at that arena. */
	if (s->cheapest < 0)
		s->cheapest = ar_ckpt_optimal(s, s->e[sm].arena, &exact);
	return s->cheapest;
}
