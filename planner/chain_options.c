/*
 * chain_options.c — the search inside a block: which interior candidates
 * of a unit stay, as a short list of options the dynamic program over the
 * chain (chain_dp.c) chooses from, one search per block type.
 *
 * With its points resident, a unit's recompute is its own: whatever it
 * frees comes back from its input point and what it keeps, so the cost of
 * an option is a closure over the unit's nodes alone.  The options:
 *   - every subset, when the unit has at most ALL_MAX interior
 *     candidates: the dynamic program then ranges over every selection;
 *   - else two greedy walks, one freeing the candidate that costs the
 *     fewest recompute FLOPs per byte it frees, one by one from all kept
 *     down to none, one keeping the candidate that saves the most FLOPs
 *     per byte it keeps, up from none: the attention core (big scores and
 *     probabilities, cheap to recompute) goes first, the products last.
 *     Above GREEDY_MAX candidates (a graph with no point at all) the walks
 *     would be quadratic in the graph; each candidate's own producer's
 *     FLOPs per byte order a single walk instead, and uniform spacings
 *     (Chen et al.'s every k-th) join it;
 * then the options another option beats in both bytes kept and FLOPs are
 * dropped, and at most OPT_MAX stay, evenly spread over the bytes kept.
 * Row 0 keeps everything, and the empty option (everything recomputed) is
 * always there.  Bytes count what is tied to a candidate (train.h).
 */
#include "chain.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define ALL_MAX 4
#define GREEDY_MAX 128
#define OPT_MAX 24

typedef struct Unit {
	const ArChain *c;
	int u, n;
	const int *cand;        /* the unit's interior candidates */
	int64_t *bytes;         /* per candidate, with what is tied to it */
	int first, last;        /* the unit's forward nodes */
	bool *redo;             /* per node of the unit */
	int *stack;
	bool *res;              /* per base tensor: everything resident */
	ArBudget *work;
} Unit;

/* Recompute FLOPs of the unit when only the candidates keep[] says stay. */
static int64_t unit_cost(Unit *x, const bool *keep)
{
	const ArTrainModel *m = x->c->m;
	const ArGraph *g = m->base;
	int64_t f = 0;
	for (int j = 0; j < x->n; j++)
		x->res[x->cand[j]] = keep[j];
	memset(x->redo, 0, (size_t)(x->last - x->first + 1) * sizeof *x->redo);
	for (int k = x->first; k <= x->last; k++)
		for (int o = 0; o < g->nodes[k].noutputs; o++) {
			int t = g->nodes[k].outputs[o], sp = 0;
			if (t < 0 || !m->saved[t])
				continue;
			x->stack[sp++] = t;
			while (sp > 0) {
				int y = x->stack[--sp], p = g->tensors[y].producer;
				const ArNode *n;
				if (g->tensors[y].kind != AR_TK_ACTIVATION ||
				    ar_train_resident(m, x->res, y) || p < 0 ||
				    x->redo[p - x->first])
					continue;
				x->redo[p - x->first] = true;
				n = &g->nodes[p];
				for (int i = 0; i < n->ninputs; i++)
					if (n->inputs[i] >= 0)
						x->stack[sp++] = n->inputs[i];
			}
		}
	for (int k = x->first; k <= x->last; k++)
		if (x->redo[k - x->first])
			f = ar_train_add(f, m->flops[k]);
	for (int j = 0; j < x->n; j++)
		x->res[x->cand[j]] = true;
	ar_budget_spend(x->work, x->last - x->first + 1);
	return f;
}

/* a/b < c/d for non-negative a, c and positive b, d. */
static bool ratio_less(int64_t a, int64_t b, int64_t c, int64_t d)
{
	return (__int128)a * d < (__int128)c * b;
}

typedef struct Rows {
	bool *v;                /* n flags a row */
	int64_t *kept, *cost;
	int count, cap, n;
} Rows;

static void add_row(Rows *r, const bool *keep, const Unit *x, int64_t cost)
{
	int64_t kept = 0;
	for (int i = 0; i < r->count; i++)
		if (!memcmp(r->v + (size_t)i * r->n, keep, (size_t)r->n))
			return;
	if (r->count == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16;
		r->v = ar_xrealloc(r->v, (size_t)r->cap * (size_t)r->n + 1);
		r->kept = ar_xrealloc(r->kept, (size_t)r->cap * sizeof(int64_t));
		r->cost = ar_xrealloc(r->cost, (size_t)r->cap * sizeof(int64_t));
	}
	for (int j = 0; j < r->n; j++)
		kept += keep[j] ? x->bytes[j] : 0;
	memcpy(r->v + (size_t)r->count * r->n, keep, (size_t)r->n);
	r->kept[r->count] = kept;
	r->cost[r->count++] = cost;
}

/* From everything kept down to nothing (free) or back up (!free), one
 * candidate at a time, the best FLOPs per byte first. */
static void greedy_walk(Unit *x, Rows *r, bool free_first)
{
	bool *keep = ar_xmalloc((size_t)x->n + 1);
	int64_t cur;
	memset(keep, free_first, (size_t)x->n);
	cur = unit_cost(x, keep);
	add_row(r, keep, x, cur);
	for (int step = 0; step < x->n; step++) {
		int best = -1;
		int64_t bd = 0, bc = 0;
		for (int j = 0; j < x->n; j++) {
			int64_t d, cj;
			if (keep[j] != free_first)
				continue;
			keep[j] = !free_first;
			cj = unit_cost(x, keep);
			keep[j] = free_first;
			d = free_first ? cj - cur : cur - cj;
			/* Freeing: fewest FLOPs per byte; keeping: most. */
			if (best < 0 ||
			    (free_first ? ratio_less(d, x->bytes[j] + 1, bd,
						     x->bytes[best] + 1) :
			     ratio_less(bd, x->bytes[best] + 1, d,
					x->bytes[j] + 1)))
				best = j, bd = d, bc = cj;
		}
		keep[best] = !free_first;
		cur = bc;
		add_row(r, keep, x, cur);
	}
	free(keep);
}

/* Above GREEDY_MAX: freed in the order of their producers' FLOPs per
 * byte, and every k-th kept. */
static void cheap_walks(Unit *x, Rows *r)
{
	const ArTrainModel *m = x->c->m;
	int *ord = ar_xmalloc((size_t)x->n * sizeof(int));
	bool *keep = ar_xmalloc((size_t)x->n + 1);
	for (int j = 0; j < x->n; j++)
		ord[j] = j;
	/* Insertion sort: stable, so ties keep production order. */
	for (int j = 1; j < x->n; j++) {
		int v = ord[j], i = j;
		int64_t fv = m->flops[m->base->tensors[x->cand[v]].producer];
		while (i > 0) {
			int w = ord[i - 1];
			int64_t fw = m->flops[m->base->tensors[x->cand[w]]
					      .producer];
			if (!ratio_less(fv, x->bytes[v] + 1, fw, x->bytes[w] + 1))
				break;
			ord[i] = w;
			i--;
		}
		ord[i] = v;
	}
	memset(keep, 1, (size_t)x->n);
	add_row(r, keep, x, unit_cost(x, keep));
	for (int j = 0; j < x->n; j++) {
		keep[ord[j]] = false;
		add_row(r, keep, x, unit_cost(x, keep));
	}
	for (int k = 2; k <= x->n; k++) {
		for (int j = 0; j < x->n; j++)
			keep[j] = (j + 1) % k == 0;
		add_row(r, keep, x, unit_cost(x, keep));
	}
	free(ord);
	free(keep);
}

/* Drops rows another beats in both kept bytes and FLOPs, keeps at most
 * OPT_MAX spread over the kept bytes; row 0 first (everything kept), the
 * empty row kept.  Writes the survivors' indices into out. */
static int prune(const Rows *r, int *out)
{
	int n = 0, *live = ar_xmalloc((size_t)r->count * sizeof(int));
	for (int i = 0; i < r->count; i++) {
		bool beaten = false, empty = r->kept[i] == 0 && r->n > 0;
		for (int j = 0; j < r->count && !beaten && !empty && i; j++)
			beaten = j != i && r->kept[j] <= r->kept[i] &&
				 r->cost[j] <= r->cost[i] &&
				 (r->kept[j] < r->kept[i] ||
				  r->cost[j] < r->cost[i] || j < i);
		if (!beaten)
			live[n++] = i;
	}
	/* Live rows by bytes kept, most first (row 0 has the most). */
	for (int j = 1; j < n; j++) {
		int v = live[j], i = j;
		while (i > 1 && r->kept[live[i - 1]] < r->kept[v]) {
			live[i] = live[i - 1];
			i--;
		}
		live[i] = v;
	}
	if (n <= OPT_MAX) {
		memcpy(out, live, (size_t)n * sizeof(int));
	} else {
		for (int k = 0; k < OPT_MAX; k++)
			out[k] = live[(int64_t)k * (n - 1) / (OPT_MAX - 1)];
		n = OPT_MAX;
	}
	free(live);
	return n;
}

bool ar_chain_all_subsets(int n)
{
	return n <= ALL_MAX;
}

/* Every subset, everything kept first. */
static void all_subsets(Unit *x, Rows *r, bool costs)
{
	bool row[ALL_MAX + 1];
	for (int mask = (1 << x->n) - 1; mask >= 0; mask--) {
		for (int j = 0; j < x->n; j++)
			row[j] = mask >> j & 1;
		add_row(r, row, x, costs ? unit_cost(x, row) : 0);
	}
}

/* The options of type representative u, into c->opt[u]. */
static void search_unit(ArChain *c, Unit *x)
{
	int u = x->u, n = x->n;
	Rows r = {.n = n};
	int *keep_rows;
	if (c->complete) {
		all_subsets(x, &r, false);
		c->nopt[u] = r.count;
		c->none_opt[u] = r.count - 1;
		c->opt[u] = r.v;
		free(r.kept);
		free(r.cost);
		return;
	}
	if (ar_chain_all_subsets(n)) {
		all_subsets(x, &r, true);
	} else if (n <= GREEDY_MAX) {
		greedy_walk(x, &r, true);
		greedy_walk(x, &r, false);
	} else {
		cheap_walks(x, &r);
	}
	keep_rows = ar_xmalloc((size_t)r.count * sizeof(int));
	c->nopt[u] = prune(&r, keep_rows);
	c->opt[u] = ar_xmalloc((size_t)c->nopt[u] * (size_t)n + 1);
	c->none_opt[u] = -1;
	for (int i = 0; i < c->nopt[u]; i++) {
		memcpy(c->opt[u] + (size_t)i * n, r.v + (size_t)keep_rows[i] * n,
		       (size_t)n);
		if (r.kept[keep_rows[i]] == 0)
			c->none_opt[u] = i;
	}
	assert(c->none_opt[u] >= 0);
	free(keep_rows);
	free(r.v);
	free(r.kept);
	free(r.cost);
}

void ar_chain_options(ArChain *c, ArBudget *work)
{
	const ArTrainModel *m = c->m;
	const ArGraph *g = m->base;
	int nu = c->L + 2;
	Unit x = {.c = c, .work = work};
	int64_t *tied = ar_xcalloc((size_t)g->ntensors + 1, sizeof(int64_t));

	for (int t = 0; t < g->ntensors; t++)
		if (m->lead[t] >= 0)
			tied[m->lead[t]] += g->tensors[t].bytes;
	x.res = ar_xmalloc((size_t)g->ntensors + 1);
	memset(x.res, 1, (size_t)g->ntensors + 1);
	x.stack = ar_xmalloc(((size_t)g->ntensors + 1) * 2 * sizeof(int) +
			     (size_t)g->nnodes * 8 * sizeof(int));
	x.redo = ar_xmalloc((size_t)g->nnodes + 1);
	x.bytes = ar_xmalloc(((size_t)m->ncand + 1) * sizeof(int64_t));
	c->opt = ar_xcalloc((size_t)nu, sizeof *c->opt);
	c->nopt = ar_xcalloc((size_t)nu, sizeof(int));
	c->none_opt = ar_xcalloc((size_t)nu, sizeof(int));
	x.first = 0;
	for (int u = 1; u < nu; u++) {
		int r = c->type_rep[u];
		x.u = u;
		x.n = ar_chain_ninner(c, u);
		x.cand = &c->inner[c->inner_at[u]];
		while (x.first < m->nfwd && c->unit[x.first] < u)
			x.first++;
		for (x.last = x.first; x.last < m->nfwd &&
		     c->unit[x.last + 1] == u; x.last++)
			;
		if (r != u) {
			size_t sz = (size_t)c->nopt[r] * (size_t)x.n;
			c->nopt[u] = c->nopt[r];
			c->none_opt[u] = c->none_opt[r];
			c->opt[u] = ar_xmalloc(sz + 1);
			memcpy(c->opt[u], c->opt[r], sz);
			continue;
		}
		for (int j = 0; j < x.n; j++)
			x.bytes[j] = tied[x.cand[j]];
		search_unit(c, &x);
	}
	free(tied);
	free(x.res);
	free(x.stack);
	free(x.redo);
	free(x.bytes);
}
