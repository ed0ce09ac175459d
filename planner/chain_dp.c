/*
 * chain_dp.c — least-recompute checkpoints for chain-shaped forward graphs,
 * by dynamic programming over segments (Chen et al. 2016; Beaumont et al.,
 * "rotor", NeurIPS 2019 and 2021), for the schedule train.c emits: every
 * freed activation is recomputed once, from the nearest resident one,
 * right before its first backward use, and stays until its last.
 *
 * The chain.  A point is a candidate activation that, in the forward
 * order, is the only activation crossing the boundary right after its
 * producer: it separates the graph.  Points p_1..p_L cut the forward pass
 * into units (unit i computes p_i from p_{i-1}; unit L+1 ends with the
 * loss); position 0 (the graph inputs) and L+1 (the end) are always
 * available and own nothing.  VGG, AlexNet and LeNet are chains of
 * one-node units, every candidate a point (a pure chain); ResNet has a
 * point per block boundary and its blocks are units.
 *
 * Selections.  A path 0 = c_0 < c_1 < ... < c_m < L+1 of resident points;
 * each segment (a, b) between neighbours on it is either plain (the points
 * and unit interiors inside are freed and recomputed from p_a) or, when
 * b = a+1, stored (the unit's interior candidates stay resident).  On a
 * pure chain these are all the selections there are; elsewhere they are a
 * subset (a block is kept or recomputed whole), and the DP is a heuristic.
 * A side output of a point's producer that the backward pass reads
 * (Dropout's mask) is tied to the point: resident exactly when it is.  So
 * "all selections" of a pure chain means all with masks tied.
 *
 * The memory model.  Each arena buffer of the step graph (an alias group
 * of ar_plan's views and in-place links, padded) is owned by a position:
 * p_i, its recomputed copy and its gradients by i; a tensor inside unit i
 * (and its kin) by i-1; graph inputs and outputs by none.  The model is
 * the peak of live buffer bytes (ar_plan's lower bound, which no offset
 * assignment beats), split by segment: while segment (a, b) runs (its
 * forward steps, its recompute and backward steps) the live buffers are
 *   K          those owned before a: what the segments left of (a, b) on
 *              the path keep, the sum of their kept();
 *   local(a,b) those owned at a or later, and the unowned ones;
 * and kept(a, b) is what (a, b)'s buffers hold from the end of its forward
 * steps to its backward.  local and kept depend on (a, b) alone: each is
 * measured once on a probe, the step graph with only (a, b) freed, put
 * through ar_plan's order, alias and lifetime passes (ar_plan_links) with
 * the caller's options; offsets play no part.  A segment's
 * recompute FLOPs come from the same probe and add up along a path, since
 * recomputation stops at resident points.  A path fits budget B when
 * K + local <= B for each of its segments.
 *
 * The DP keeps, per position, the Pareto front of (K, recompute) over the
 * partial paths that fit so far; less K and less recompute is never worse
 * later, so the least recompute on the front at L+1 is the model's
 * optimum.  Where a step-graph buffer spans owners in a way the split does
 * not foresee, the model and ar_plan can disagree; checkpoint.c therefore
 * plans the DP's answer for real, compares the model's peak with ar_plan's
 * lower bound, and repairs an answer whose real arena overshoots.
 */
#include "checkpoint.h"
#include "passes.h"

#include <stdlib.h>
#include <string.h>

typedef struct Seg {
	int64_t peak;           /* local peak over its forward and backward */
	int64_t kept;           /* bytes held from its forward to its backward */
	int64_t cost;           /* recompute FLOPs */
} Seg;

struct ArChain {
	const ArTrainModel *m;
	int L;                  /* points, at positions 1..L */
	int *point;             /* per position 1..L: the tensor */
	int *unit;              /* per base node: its unit, 1..L+1 */
	int *owner;             /* per base tensor: its position, -1 none */
	int *tie;               /* per base tensor: the position of the point
				 * it is or is tied to, 0 none */
	bool *interior;         /* per unit: it has non-point candidates */
	bool pure;
	Seg *plain;             /* [a * (L + 2) + b] */
	Seg *stored;            /* [i]: unit i stored, segment (i-1, i) */
	int nprobes;
};

static bool counted(const ArGraph *g, int t, int loss)
{
	return t >= 0 && t != loss && ar_in_arena(g, t) &&
	       g->tensors[t].producer >= 0;
}

/*
 * Points in forward order: the open activations (produced, read later in
 * the forward pass, or a graph output) number one right after the node
 * that produced it.  The sum of the open ids names the one left.
 */
static void find_points(ArChain *c, const bool *is_cand)
{
	const ArTrainModel *m = c->m;
	const ArGraph *g = m->base;
	int nt = g->ntensors, loss = g->nodes[m->nfwd].outputs[0], open = 0;
	int *last = ar_xmalloc(((size_t)nt + 1) * sizeof(int));
	int *seen = ar_xmalloc(((size_t)nt + 1) * sizeof(int));
	int64_t sum = 0;

	for (int t = 0; t < nt; t++)
		last[t] = g->tensors[t].kind == AR_TK_OUTPUT ? m->nfwd + 1 : -1,
		seen[t] = -1;
	for (int k = 0; k <= m->nfwd; k++)
		for (int j = 0; j < g->nodes[k].ninputs; j++) {
			int t = g->nodes[k].inputs[j];
			if (t >= 0 && last[t] < k)
				last[t] = k;
		}
	c->point = ar_xmalloc(((size_t)m->ncand + 2) * sizeof(int));
	for (int k = 0; k < m->nfwd; k++) {
		const ArNode *n = &g->nodes[k];
		if (!ar_is_step(g, k))
			continue;
		for (int j = 0; j < n->ninputs; j++) {
			int t = n->inputs[j];
			if (counted(g, t, loss) && last[t] == k && seen[t] != k)
				seen[t] = k, open--, sum -= t;
		}
		for (int j = 0; j < n->noutputs; j++) {
			int t = n->outputs[j];
			if (counted(g, t, loss) && last[t] > k)
				open++, sum += t;
		}
		if (open == 1 && is_cand[sum] && g->tensors[sum].producer == k)
			c->point[++c->L] = (int)sum;
	}
	free(last);
	free(seen);
}

/*
 * Units, owners and ties.  A side output of a point's producer that the
 * backward pass reads (Dropout's mask) is tied to its point: owned by the
 * point's position and resident exactly when the point is.
 */
static void assign_units(ArChain *c, const bool *is_cand)
{
	const ArTrainModel *m = c->m;
	const ArGraph *g = m->base;
	int u = 1, *at = ar_xcalloc((size_t)g->nnodes + 1, sizeof(int));

	c->unit = ar_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	c->owner = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	c->tie = ar_xcalloc((size_t)g->ntensors + 1, sizeof(int));
	c->interior = ar_xcalloc((size_t)c->L + 2, sizeof(bool));
	for (int i = 1; i <= c->L; i++)
		at[g->tensors[c->point[i]].producer] = i;
	for (int k = 0; k <= m->nfwd; k++) {
		c->unit[k] = u;
		if (u <= c->L && g->tensors[c->point[u]].producer == k)
			u++;
	}
	c->pure = true;
	for (int t = 0; t < g->ntensors; t++) {
		const ArTensor *x = &g->tensors[t];
		c->owner[t] = -1;
		if (x->producer < 0 || x->producer > m->nfwd ||
		    x->kind != AR_TK_ACTIVATION)
			continue;
		if (is_cand[t] && at[x->producer])
			c->tie[t] = at[x->producer];
		c->owner[t] = c->tie[t] ? c->tie[t] : c->unit[x->producer] - 1;
		if (is_cand[t] && !c->tie[t]) {
			c->interior[c->unit[x->producer]] = true;
			c->pure = false;
		}
	}
	free(at);
}

/* Whether candidate t stays resident when the path has segment (a, b)
 * (stored: with its unit's interior resident). */
static bool resident_in(const ArChain *c, int t, int a, int b, bool stored)
{
	int o = c->owner[t];
	if (c->tie[t])
		return !(o > a && o < b);
	return stored || !(o >= a && o < b);
}

/* The probe selection for segment (a, b): everything resident but what
 * the segment frees. */
static void probe_selection(const ArChain *c, int a, int b, bool stored,
			    bool *res)
{
	const ArTrainModel *m = c->m;
	for (int i = 0; i < m->ncand; i++)
		res[m->cand[i]] = resident_in(c, m->cand[i], a, b, stored);
}

/* Measures segment (a, b) on its probe: AR_OK, a planner failure, or -1
 * when the budget is spent. */
static int probe(ArChain *c, const ArPlanOptions *popt, ArBudget *work,
		 int a, int b, bool stored, bool *res, Seg *s, ArError *err)
{
	const ArTrainModel *m = c->m;
	int *nsrc, *tsrc, rc, ns, s0;
	ArGraph *g;
	ArPlan *p = NULL;
	ArGroups gr;
	int *lo, *hi, *own;
	int64_t *delta, live;

	probe_selection(c, a, b, stored, res);
	s->cost = ar_train_recompute_flops(m, res);
	g = ar_train_graph_traced(m, res, &nsrc, &tsrc);
	c->nprobes++;
	if (!ar_budget_spend(work, g->nnodes)) {
		rc = -1;
		goto out;
	}
	if ((rc = ar_plan_links(g, popt, &p, err)))
		goto out;
	ns = p->nsteps;
	ar_groups_build(g, p, &gr);
	lo = gr.first;
	hi = gr.last;
	own = ar_xmalloc(((size_t)gr.n + 1) * sizeof(int));
	for (int k = 0; k < gr.n; k++)
		own[k] = c->owner[tsrc[gr.root[k]]];
	/* Live bytes per step of the buffers local to (a, b). */
	delta = ar_xcalloc((size_t)ns + 1, sizeof *delta);
	for (int k = 0; k < gr.n; k++)
		if (hi[k] >= lo[k] && (own[k] < 0 || own[k] >= a)) {
			delta[lo[k]] += gr.size[k];
			delta[hi[k] + 1] -= gr.size[k];
		}
	s->peak = s->kept = 0;
	s0 = -1;
	live = 0;
	for (int i = 0; i < ns; i++) {
		int src = nsrc[p->steps[i]];
		int u = src >= 0 ? c->unit[src] : 0;
		live += delta[i];
		if (u > a && u <= b && live > s->peak)
			s->peak = live;
		if (s0 < 0 && u > b && g->nodes[p->steps[i]].phase ==
		    AR_PHASE_FORWARD)
			s0 = i;
	}
	for (int k = 0; s0 >= 0 && k < gr.n; k++)
		if (own[k] >= a && own[k] < b && lo[k] <= s0 && hi[k] >= s0)
			s->kept += gr.size[k];
	free(delta);
	free(own);
	ar_groups_free(&gr);
out:
	ar_plan_free(p);
	ar_graph_free(g);
	free(nsrc);
	free(tsrc);
	return rc;
}

/* Nodes of the step graph with every activation resident: forward, loss,
 * its gradient, a backward step per rule, a sum per gradient with several
 * parts, an update per parameter.  A probe has that plus its recomputes. */
static int64_t step_nodes(const ArTrainModel *m)
{
	int64_t n = m->base->nnodes + 1;
	for (int i = 0; i < m->nfwd; i++)
		n += m->rule[i] != NULL;
	for (int t = 0; t < m->base->ntensors; t++)
		n += (m->ncontrib[t] > 1) + m->param[t];
	return n;
}

int ar_chain_build(const ArTrainModel *m, const ArPlanOptions *plan,
		   ArBudget *work, ArChain **out, ArError *err)
{
	const ArGraph *g = m->base;
	ArChain *c = ar_xcalloc(1, sizeof *c);
	ArPlanOptions popt = *plan;
	bool *is_cand = ar_xcalloc((size_t)g->ntensors + 1, sizeof *is_cand);
	bool *res = ar_xcalloc((size_t)g->ntensors + 1, sizeof *res);
	int n, rc = AR_OK;
	int64_t total, cost;

	*out = NULL;
	c->m = m;
	for (int i = 0; i < m->ncand; i++)
		is_cand[m->cand[i]] = true;
	find_points(c, is_cand);
	assign_units(c, is_cand);
	n = c->L + 2;
	c->plain = ar_xcalloc((size_t)n * n, sizeof *c->plain);
	c->stored = ar_xcalloc((size_t)n, sizeof *c->stored);
	popt.order = AR_ORDER_FILE;
	popt.budget = 0;
	/* Quadratic in the points: not started when the probes, at the least
	 * they can cost, would overdraw the budget. */
	total = (int64_t)(n - 1) * n / 2;
	for (int i = 1; i <= c->L; i++)
		total += c->interior[i];
	if (!ar_mul64(total, step_nodes(m), &cost) || cost > work->left)
		rc = -1;
	for (int b = 1; b < n && !rc; b++)
		for (int a = b - 1; a >= 0 && !rc; a--) {
			rc = probe(c, &popt, work, a, b, false, res,
				   &c->plain[a * n + b], err);
			if (!rc && a == b - 1 && c->interior[b])
				rc = probe(c, &popt, work, a, b, true, res,
					   &c->stored[b], err);
		}
	free(is_cand);
	free(res);
	if (rc || c->L == 0) {
		ar_chain_free(c);
		return rc > 0 ? rc : AR_OK;
	}
	*out = c;
	return AR_OK;
}

void ar_chain_free(ArChain *c)
{
	if (!c)
		return;
	free(c->point);
	free(c->unit);
	free(c->owner);
	free(c->tie);
	free(c->interior);
	free(c->plain);
	free(c->stored);
	free(c);
}

bool ar_chain_pure(const ArChain *c)
{
	return c->pure;
}

int ar_chain_points(const ArChain *c)
{
	return c->L;
}

int ar_chain_probes(const ArChain *c)
{
	return c->nprobes;
}

typedef struct State {
	int64_t k, cost, peak;
	int prev;               /* state index at position from */
	int from;               /* position of the previous point */
	bool stored;
} State;

typedef struct Front {
	State *s;
	int n;
} Front;

static int state_cmp(const void *x, const void *y)
{
	const State *a = x, *b = y;
	if (a->k != b->k)
		return a->k < b->k ? -1 : 1;
	return (a->cost > b->cost) - (a->cost < b->cost);
}

static void extend(State **buf, int *n, int *cap, const State *st,
		   const Seg *seg, int64_t budget, int from, int prev,
		   bool stored)
{
	State x;
	int64_t need;
	if (!ar_add64(st->k, seg->peak, &need) || need > budget)
		return;
	x.k = st->k + seg->kept;
	x.cost = st->cost + seg->cost;
	x.peak = need > st->peak ? need : st->peak;
	x.from = from;
	x.prev = prev;
	x.stored = stored;
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*buf = ar_xrealloc(*buf, (size_t)*cap * sizeof **buf);
	}
	(*buf)[(*n)++] = x;
}

int64_t ar_chain_solve(const ArChain *c, int64_t budget, bool *res,
		       int64_t *peak)
{
	int n = c->L + 2, best = -1;
	Front *f = ar_xcalloc((size_t)n, sizeof *f);
	int64_t cost = -1;

	f[0].s = ar_xcalloc(1, sizeof(State));
	f[0].n = 1;
	for (int b = 1; b < n; b++) {
		State *buf = NULL;
		int nb = 0, cap = 0, kept = 0;
		int64_t least = INT64_MAX;
		for (int a = 0; a < b; a++)
			for (int j = 0; j < f[a].n; j++) {
				extend(&buf, &nb, &cap, &f[a].s[j],
				       &c->plain[a * n + b], budget, a, j,
				       false);
				if (a == b - 1 && c->interior[b])
					extend(&buf, &nb, &cap, &f[a].s[j],
					       &c->stored[b], budget, a, j,
					       true);
			}
		/* The Pareto front: by K, each cheaper than all before. */
		if (nb)     /* buf is still NULL then, and qsort wants non-NULL */
			qsort(buf, (size_t)nb, sizeof *buf, state_cmp);
		for (int j = 0; j < nb; j++)
			if (buf[j].cost < least) {
				least = buf[j].cost;
				buf[kept++] = buf[j];
			}
		f[b].s = buf;
		f[b].n = kept;
	}
	for (int j = 0; j < f[n - 1].n; j++)
		if (best < 0 || f[n - 1].s[j].cost < f[n - 1].s[best].cost)
			best = j;
	if (best >= 0) {
		const ArTrainModel *m = c->m;
		int pos = n - 1, j = best;
		cost = f[pos].s[j].cost;
		*peak = f[pos].s[j].peak;
		while (pos > 0) {
			const State *st = &f[pos].s[j];
			for (int i = 0; i < m->ncand; i++) {
				int t = m->cand[i], o = c->owner[t];
				if (o >= st->from && o < pos)
					res[t] = resident_in(c, t, st->from,
							     pos, st->stored);
			}
			pos = st->from;
			j = st->prev;
		}
	}
	for (int i = 0; i < n; i++)
		free(f[i].s);
	free(f);
	return cost;
}

int64_t ar_chain_min_peak(const ArChain *c, bool *res)
{
	int64_t lo = 0, hi = INT64_MAX / 4, peak;
	/* Everything stored fits its own peak: the upper end. */
	if (ar_chain_solve(c, hi, res, &peak) < 0)
		return -1;
	hi = peak;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (ar_chain_solve(c, mid, res, &peak) >= 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	ar_chain_solve(c, hi, res, &peak);
	return hi;
}
