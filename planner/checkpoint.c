/*
 * checkpoint.c — which forward activations stay resident for the backward
 * pass, and the planned training step that results.
 *
 * A selection is judged by the real planner, never by an estimate: every
 * selection the search looks at is built into its training graph and
 * planned by ar_plan (aliases, offsets, verifier) with the user's options,
 * the offset search on AR_CKPT_EVAL_DROP levels less effort, and the plan
 * returned is the very plan that was judged to fit.
 *
 * optimal, in this order:
 *   - the baselines none, sqrt and all, always planned whatever the
 *     budget (three plans, milliseconds each): the cheapest that fits is
 *     the incumbent, so optimal is never worse than a baseline that fits;
 *   - a forward graph with points that separate it (chain_dp.c) gets the
 *     segment DP, whose model's optimum is planned for real; a pure chain
 *     (every candidate a point: VGG, AlexNet, LeNet) is solved exactly,
 *     claimed exact only when the answer fits at once, is the cheapest
 *     found, and ar_plan's lower bound for it equals the model's peak;
 *     otherwise (ResNet blocks as units) the DP's answer is a heuristic
 *     improved by take_back;
 *   - a small DAG that is no pure chain (EXACT_MAX candidates at most):
 *     every selection in increasing recompute cost (recompute only falls
 *     as more stays) up to the incumbent's; the first that fits is optimal;
 *   - where neither the DP nor brute force gave an answer (no chain, its
 *     setup too slow, its answers overshooting), uniform segments of every
 *     length and take_back, not claimed optimal.
 * Work: the search has a budget (budget.h) counted in nodes of the step
 * graphs it plans: PLAN_UNITS per node of a selection planned whole, one
 * per node of a probe of the DP's setup (order and aliases only), and one
 * per OFFSET_UNITS units the offset searches spend, CKPT_WORK at the
 * default effort; the baselines are charged but planned whatever is
 * left.  The DP's setup (one probe plan per segment, a quadratic number)
 * may take two thirds of what is left; its cost is known before it starts
 * (probes times the step graph's nodes), and it is not started when it
 * would take more (DenseNet-121: 88 points, some 4,000 probes), so the
 * fallback keeps a third or more.
 * Candidates whose recompute cost cannot beat the incumbent are not
 * planned.  When nothing fits, finding the smallest reachable arena gets
 * a budget of its own, and a selection it finds within the budget is the
 * answer after all.
 */
#include "checkpoint.h"
#include "passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_MAX 14
/* Nodes of step graphs planned per search at the default effort: about
 * two seconds of a 2020s core, as the time limit it had before budgets. */
#define CKPT_WORK ((int64_t)3 << 19)
#define PLAN_UNITS 4
#define OFFSET_UNITS 1024

/* The chain view, built at most once per model (a sweep shares it). */
typedef struct ChainCache {
	ArChain *chain;         /* NULL: not a chain, or not built in time */
	bool tried;
} ChainCache;

typedef struct Search {
	const ArTrainModel *m;
	ChainCache *cc;
	ArPlanOptions popt;
	const char *layer_boundary;
	int64_t budget;
	ArBudget work;
	int evals;
	ArError *err;
	int rc;                 /* a planner failure stops the search */
	/* The cheapest fitting selection so far, with its graph and plan. */
	bool *best;
	int64_t best_cost;
	ArGraph *best_graph;
	ArPlan *best_plan;
	/* The smallest arena planned so far. */
	int64_t min_arena, min_cost;
	/* Plan every selection, even those costlier than the best fit: the
	 * smallest arena is wanted, not the fit. */
	bool minimise;
} Search;

const char *ar_ckpt_policy_name(ArCkptPolicy p)
{
	static const char *const names[] = {"none", "all", "sqrt", "optimal",
					    "layer", "selective"};
	return (unsigned)p < 6 ? names[p] : "invalid";
}

/* Plans the selection; keeps it when it is the cheapest fit so far.
 * Returns the arena, or -1 after a planner failure (s->rc). */
static int64_t plan_selection(Search *s, const bool *res, int64_t cost)
{
	ArGraph *g = ar_train_graph(s->m, res);
	ArPlan *p = NULL;
	int64_t arena;
	int nt = s->m->base->ntensors;

	s->evals++;
	s->rc = ar_plan(g, &s->popt, &p, s->err);
	/* Charged even when it overdraws: a baseline is planned anyway. */
	ar_budget_spend(&s->work, PLAN_UNITS * (int64_t)g->nnodes +
			(p ? p->offset_work : 0) / OFFSET_UNITS);
	if (s->rc) {
		ar_plan_free(p);
		ar_graph_free(g);
		return -1;
	}
	arena = p->arena_bytes;
	if (arena < s->min_arena || (arena == s->min_arena &&
				     cost < s->min_cost))
		s->min_arena = arena, s->min_cost = cost;
	if ((!s->budget || arena <= s->budget) &&
	    (!s->best_plan || cost < s->best_cost)) {
		ar_plan_free(s->best_plan);
		ar_graph_free(s->best_graph);
		s->best_plan = p;
		s->best_graph = g;
		s->best_cost = cost;
		memcpy(s->best, res, (size_t)nt * sizeof *res);
		return arena;
	}
	ar_plan_free(p);
	ar_graph_free(g);
	return arena;
}

/* Plans the selection unless its cost cannot beat the incumbent. */
static void try_selection(Search *s, const bool *res)
{
	int64_t cost = ar_train_recompute_flops(s->m, res);
	if (s->minimise || !s->best_plan || cost < s->best_cost)
		plan_selection(s, res, cost);
}

static void set_mask(const ArTrainModel *m, bool *res, uint32_t mask)
{
	for (int i = 0; i < m->ncand; i++)
		res[m->cand[i]] = mask & (1u << i);
}

typedef struct MaskKey {
	int64_t key;
	uint32_t mask;
} MaskKey;

static int key_cmp(const void *a, const void *b)
{
	const MaskKey *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->mask > y->mask ? -1 : x->mask < y->mask;
}

/*
 * Every selection in increasing recompute cost: the first that fits is
 * optimal, and so is the incumbent when none cheaper fits.  False when the
 * budget cut it short.
 */
static bool search_exact(Search *s, bool *res)
{
	const ArTrainModel *m = s->m;
	uint32_t n = 1u << m->ncand;
	MaskKey *k = ar_xmalloc((size_t)n * sizeof *k);
	bool complete = true;

	for (uint32_t i = 0; i < n; i++) {
		set_mask(m, res, i);
		k[i].key = ar_train_recompute_flops(m, res);
		k[i].mask = i;
	}
	qsort(k, n, sizeof *k, key_cmp);
	for (uint32_t i = 0; i < n && !s->rc; i++) {
		if (s->best_plan && k[i].key >= s->best_cost)
			break;
		if (!ar_budget_left(&s->work)) {
			complete = false;
			break;
		}
		set_mask(m, res, k[i].mask);
		plan_selection(s, res, k[i].key);
	}
	free(k);
	return complete;
}

/* Every k-th candidate resident (k = 1: all of them). */
static void set_spacing(const ArTrainModel *m, bool *res, int k)
{
	for (int i = 0; i < m->ncand; i++)
		res[m->cand[i]] = (i + 1) % k == 0;
}

/*
 * Makes each freed candidate resident again, last first, when the arena
 * still fits with it: less recompute, never more.
 */
static void take_back(Search *s, bool *res)
{
	const ArTrainModel *m = s->m;
	for (int i = m->ncand - 1; i >= 0 && s->best_plan && !s->rc &&
	     ar_budget_left(&s->work); i--) {
		if (s->best[m->cand[i]])
			continue;
		memcpy(res, s->best, (size_t)m->base->ntensors * sizeof *res);
		res[m->cand[i]] = true;
		try_selection(s, res);
	}
}

/*
 * Uniform segments of every length k (sqrt's choice among them, so never
 * worse than sqrt where sqrt fits), the cheapest that fits kept; then
 * take_back.  Memory is not monotone in the selection (freeing everything
 * recomputes everything at once), so no bisection.
 */
static void search_segments(Search *s, bool *res)
{
	const ArTrainModel *m = s->m;
	for (int k = 1; k <= m->ncand && !s->rc &&
	     ar_budget_left(&s->work); k++) {
		set_spacing(m, res, k);
		try_selection(s, res);
	}
	take_back(s, res);
}

/*
 * The DP's answer (chain_dp.c), planned for real.  Where its real arena
 * overshoots the budget the model was optimistic there: the DP is asked
 * again with its budget lowered by the overshoot, which yields the
 * neighbouring selections with less memory, a few times over; take_back
 * then tries the neighbours with one more checkpoint.  Exact when the
 * chain is pure (the DP ranged over every selection), its first answer
 * fits and is the cheapest found, and ar_plan's lower bound for it equals
 * the model's peak, that is the model held where it was put to the test.
 * *fit: some answer of the DP fits.
 */
static bool search_chain(Search *s, bool *res, bool *fit)
{
	const ArChain *c = s->cc->chain;
	int64_t b = s->budget, peak = 0, cost, arena;
	bool exact = false;

	*fit = false;
	for (int tries = 0; tries < 8 && !s->rc; tries++) {
		if ((cost = ar_chain_solve(c, b, res, &peak)) < 0)
			break;
		if ((arena = plan_selection(s, res, cost)) < 0)
			break;
		if (arena <= s->budget) {
			*fit = true;
			exact = tries == 0 && ar_chain_pure(c) &&
				s->best_cost == cost &&
				s->best_plan->lower_bound == peak;
			break;
		}
		b -= arena - s->budget;
	}
	if (s->best_plan && !exact)
		take_back(s, res);
	return exact;
}

/* Builds the chain view once, within two thirds of the search's work
 * left: the rest is the fallback's. */
static void need_chain(Search *s)
{
	ArBudget share;
	if (s->cc->tried)
		return;
	s->cc->tried = true;
	ar_budget_share(&s->work, 2, 3, &share);
	s->rc = ar_chain_build(s->m, &s->popt, &share, &s->cc->chain, s->err);
	ar_budget_settle(&s->work, &share);
}

/* The smallest arena any selection reaches: all selections with few
 * candidates, else the best of the segment search. */
static void smallest_arena(Search *s, bool *res)
{
	const ArTrainModel *m = s->m;
	need_chain(s);
	if (s->cc->chain && !s->rc && ar_chain_min_peak(s->cc->chain, res) >= 0)
		plan_selection(s, res, ar_train_recompute_flops(m, res));
	if (s->rc)
		return;
	if (m->ncand > EXACT_MAX) {
		search_segments(s, res);
		return;
	}
	for (uint32_t i = 0; i < (1u << m->ncand) && !s->rc &&
	     ar_budget_left(&s->work); i++) {
		set_mask(m, res, i);
		plan_selection(s, res, ar_train_recompute_flops(m, res));
	}
}

static void select_policy(const ArTrainModel *m, ArCkptPolicy pol, bool *res)
{
	int k = (int)ceil(sqrt((double)m->ncand));
	for (int i = 0; i < m->ncand; i++) {
		int t = m->cand[i];
		switch (pol) {
		case AR_CKPT_ALL:
			res[t] = false;
			break;
		case AR_CKPT_SQRT:
			res[t] = (i + 1) % (k ? k : 1) == 0;
			break;
		default:
			res[t] = true;
		}
	}
	if (pol != AR_CKPT_ALL)
		return;
	/* Layer boundaries: activations a node with parameters reads. */
	for (int i = 0; i < m->nfwd; i++) {
		const ArNode *n = &m->base->nodes[i];
		bool has_param = false;
		for (int j = 0; j < n->ninputs; j++)
			has_param = has_param || (n->inputs[j] >= 0 &&
						  m->param[n->inputs[j]]);
		for (int j = 0; has_param && j < n->ninputs; j++)
			if (n->inputs[j] >= 0 && !m->param[n->inputs[j]] &&
			    m->base->tensors[n->inputs[j]].kind ==
			    AR_TK_ACTIVATION)
				res[n->inputs[j]] = true;
	}
}

static void search_init(Search *s, const ArTrainModel *m, ChainCache *cc,
			const ArTrainOptions *o, int64_t budget, ArWatch *watch,
			ArError *err)
{
	memset(s, 0, sizeof *s);
	s->m = m;
	s->cc = cc;
	s->popt = o->plan;
	s->popt.budget = 0;
	s->popt.watch = watch;
	s->layer_boundary = o->layer_boundary;
	/* The node order is the schedule: recomputes sit where they pay. */
	s->popt.order = AR_ORDER_FILE;
	s->budget = budget;
	ar_budget_init(&s->work, ar_effort_units(o->plan.effort, CKPT_WORK),
		       watch);
	s->err = err;
	s->best = ar_xcalloc((size_t)m->base->ntensors + 1, sizeof *s->best);
	s->min_arena = INT64_MAX;
}

static void search_free(Search *s)
{
	free(s->best);
	ar_plan_free(s->best_plan);
	ar_graph_free(s->best_graph);
}

/* Runs the policy; on return s->best_plan is set unless nothing fit.
 * *exact: the selection is proven the least recompute that fits. */
static int run_policy(Search *s, ArCkptPolicy pol, bool *res, bool *exact)
{
	const ArTrainModel *m = s->m;
	bool fit = false;
	*exact = false;
	if (pol == AR_CKPT_LAYER || pol == AR_CKPT_SELECTIVE) {
		if (!(s->rc = ar_ckpt_fixed(m, pol, s->layer_boundary, res,
					    s->err)))
			plan_selection(s, res, ar_train_recompute_flops(m, res));
		return s->rc;
	}
	if (pol != AR_CKPT_OPTIMAL || !s->budget) {
		select_policy(m, pol, res);
		plan_selection(s, res, ar_train_recompute_flops(m, res));
		*exact = pol == AR_CKPT_NONE || pol == AR_CKPT_OPTIMAL;
		return s->rc;
	}
	s->popt.effort -= AR_CKPT_EVAL_DROP;
	select_policy(m, AR_CKPT_NONE, res);
	if (plan_selection(s, res, 0) >= 0 && s->best_plan) {
		*exact = true;
		return s->rc;
	}
	/* The baselines, whatever the budget: optimal never does worse. */
	for (int i = 0; i < 2 && !s->rc; i++) {
		select_policy(m, i ? AR_CKPT_ALL : AR_CKPT_SQRT, res);
		try_selection(s, res);
	}
	/* A pure chain, or too many candidates for brute force: the DP. */
	if (!s->rc)
		need_chain(s);
	if (s->rc)
		return s->rc;
	if (s->cc->chain && (ar_chain_pure(s->cc->chain) ||
			     m->ncand > EXACT_MAX))
		*exact = search_chain(s, res, &fit);
	else if (m->ncand <= EXACT_MAX)
		*exact = fit = search_exact(s, res);
	if (!fit && !s->rc)
		search_segments(s, res);
	return s->rc;
}

static void fill_bill(ArTrainResult *r, ArCkptPolicy pol, bool exact,
		      int evals)
{
	const ArTrainModel *m = r->model;
	const ArTrainMemory *x = &m->mem;
	ArTrainBill *b = &r->bill;
	int64_t t;
	b->optimizer = ar_optimizer_name(m->spec.optimizer);
	b->precision = ar_precision_name(m->spec.precision);
	b->policy = ar_ckpt_policy_name(pol);
	b->parameter_count = x->parameter_count;
	b->parameter_bytes = x->parameter_bytes;
	b->gradient_bytes = x->gradient_bytes;
	b->master_weight_bytes = x->master_bytes;
	b->optimizer_state_bytes = x->state_bytes;
	b->frozen_bytes = x->frozen_bytes;
	b->constant_bytes = x->constant_bytes;
	b->arena_bytes = r->plan->arena_bytes;
	b->logits_bytes = x->logits_bytes;
	b->logits_grad_bytes = x->logits_grad_bytes;
	b->loss_chunks = m->spec.loss_chunks > 1 ? m->spec.loss_chunks : 1;
	b->total_bytes = INT64_MAX;
	if (ar_add64(b->parameter_bytes, b->gradient_bytes, &t) &&
	    ar_add64(t, b->master_weight_bytes, &t) &&
	    ar_add64(t, b->optimizer_state_bytes, &t) &&
	    ar_add64(t, b->frozen_bytes, &t) &&
	    ar_add64(t, b->constant_bytes, &t) &&
	    ar_add64(t, b->arena_bytes, &t))
		b->total_bytes = t;
	b->forward_flops = m->forward_flops;
	b->backward_flops = m->backward_flops;
	b->recompute_flops = ar_train_recompute_flops(m, r->resident);
	b->checkpoints = ar_xcalloc((size_t)m->ncand + 1, sizeof(char *));
	b->ncandidates = m->ncand;
	for (int i = 0; i < m->ncand; i++)
		if (r->resident[m->cand[i]])
			b->checkpoints[b->ncheckpoints++] =
				m->base->tensors[m->cand[i]].name;
	b->exact = exact;
	b->evaluations = evals;
}

static double pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

int ar_train_plan(const ArGraph *fwd, const ArTrainOptions *o,
		  ArTrainResult *r, ArError *err)
{
	Search s;
	ChainCache cc = {0};
	ArWatch watch;
	bool exact;
	int rc;

	memset(r, 0, sizeof *r);
	if ((rc = ar_train_model(fwd, &o->spec, &r->model, err)))
		return rc;
	ar_watch_start(&watch, o->plan.time_limit);
	r->resident = ar_xcalloc((size_t)r->model->base->ntensors + 1,
				 sizeof *r->resident);
	search_init(&s, r->model, &cc, o, o->budget, &watch, err);
	if ((rc = run_policy(&s, o->policy, r->resident, &exact)))
		goto out;
	if (s.best_plan)
		goto found;
	/* Nothing the policy allows fits: how far down can any selection go?
	 * A complete exact search has already planned every selection.  A
	 * selection found on the way that fits is optimal's answer after all
	 * (the search ran out of work before it), never another policy's. */
	ar_budget_init(&s.work, ar_effort_units(o->plan.effort, CKPT_WORK),
		       &watch);
	s.minimise = o->policy != AR_CKPT_OPTIMAL;
	if (o->policy != AR_CKPT_OPTIMAL || !exact)
		smallest_arena(&s, r->resident);
	if ((rc = s.rc))
		goto out;
	if (s.best_plan && o->policy == AR_CKPT_OPTIMAL) {
		exact = false;
		goto found;
	}
	r->min_arena = s.min_arena;
	r->min_arena_recompute = s.min_cost;
	rc = ar_fail(err, AR_EXIT_BUDGET, "--train: no checkpoint selection "
		     "(--checkpoint %s) fits the budget of %lld bytes; the "
		     "smallest reachable arena is %lld bytes, at %lld recompute "
		     "FLOPs (%.1f%% of the forward pass)%s",
		     ar_ckpt_policy_name(o->policy), (long long)o->budget,
		     (long long)s.min_arena, (long long)s.min_cost,
		     pct(s.min_cost, r->model->forward_flops),
		     watch.fired ? " (--time-limit stopped the search)" : "");
	goto out;
found:
	memcpy(r->resident, s.best, (size_t)r->model->base->ntensors *
	       sizeof *r->resident);
	r->graph = s.best_graph;
	r->plan = s.best_plan;
	r->plan->stopped_by_time_limit = watch.fired;
	s.best_graph = NULL;
	s.best_plan = NULL;
	fill_bill(r, o->policy, exact, s.evals);
out:
	search_free(&s);
	ar_chain_free(cc.chain);
	return rc;
}

void ar_train_result_free(ArTrainResult *r)
{
	free(r->bill.checkpoints);
	free(r->resident);
	ar_plan_free(r->plan);
	ar_graph_free(r->graph);
	ar_train_model_free(r->model);
	memset(r, 0, sizeof *r);
}

int ar_train_sweep(const ArGraph *fwd, const ArTrainOptions *o,
		   ArSweepPoint **pts, int *npts, ArError *err)
{
	ArTrainModel *m;
	ChainCache cc = {0};
	ArWatch watch;
	bool *res;
	int64_t full = 0;
	int rc;

	*pts = NULL;
	*npts = 0;
	if ((rc = ar_train_model(fwd, &o->spec, &m, err)))
		return rc;
	ar_watch_start(&watch, o->plan.time_limit);
	res = ar_xcalloc((size_t)m->base->ntensors + 1, sizeof *res);
	*pts = ar_xcalloc(11, sizeof **pts);
	for (int step = 10; step >= 1 && !rc; step--) {
		Search s;
		bool exact;
		ArSweepPoint *p = &(*pts)[(*npts)++];
		search_init(&s, m, &cc, o, step == 10 ? 0 : full * step / 10,
			    &watch, err);
		rc = run_policy(&s, step == 10 ? AR_CKPT_NONE : AR_CKPT_OPTIMAL,
				res, &exact);
		p->budget = s.budget;
		p->feasible = s.best_plan != NULL;
		p->stopped_by_time_limit = watch.fired;
		if (p->feasible) {
			p->arena_bytes = s.best_plan->arena_bytes;
			p->recompute_flops = s.best_cost;
			p->extra_percent = pct(s.best_cost, m->forward_flops);
			for (int i = 0; i < m->ncand; i++)
				p->ncheckpoints += s.best[m->cand[i]];
		}
		if (step == 10)
			full = p->budget = p->arena_bytes;
		search_free(&s);
		if (!p->feasible)
			break;
	}
	free(res);
	ar_chain_free(cc.chain);
	ar_train_model_free(m);
	return rc;
}
