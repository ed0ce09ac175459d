/*
 * dsa_bound.c — a lower bound on the optimum height above the load, from
 * exhaustive searches of time windows (`arenac solve --prove`).
 *
 * The argument: cut every lifetime to a window [t0, t1) of the times and
 * drop the buffers not live in it.  Two cut lifetimes that meet met
 * before the cut, so any placement of the whole instance, restricted to
 * what is left, is a placement of the window of the same height or less:
 * the window's optimum is at most the whole's.  The exact search
 * (exact.c) is complete, so when it exhausts a window at height H, no
 * placement of the whole fits H either.  Every placement pushed down
 * until each buffer rests on 0 or on another is no higher, and its
 * height is a sum of sizes, so the optimum is a multiple of the sizes'
 * gcd g: it is at least H + g.  The window is then probed at H + g, and
 * so on while it stays refuted.
 *
 * What a window can prove is everything an argument local to it can: a
 * cumulative or dual-feasible-function bound over its sections, an LP
 * over them, the contiguity of the buffers crossing them.  The naive LP
 * over sections (a fraction of each buffer anywhere in each section) is
 * the load itself.  The windows are the spans between distinct times, 2,
 * 4, 8, ... wide, slid by half their width, the whole instance last;
 * within a width, the most loaded first.  Each width gets an equal share
 * of the work left, each window of it a share of that; most windows fit
 * the bound at once by a greedy order and cost next to nothing.
 */
#include "dsa_bound.h"

#include <stdlib.h>
#include <string.h>

#include "dsa_impl.h"
#include "graph.h"

typedef struct {
	int a, e;               /* spans [a, e) */
	int64_t peak;           /* their highest load */
} Window;

static int window_cmp(const void *pa, const void *pb)
{
	const Window *x = pa, *y = pb;
	if (x->peak != y->peak)
		return x->peak > y->peak ? -1 : 1;
	return x->a - y->a;
}

static int time_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return (a > b) - (a < b);
}

typedef struct {
	const ArBuf *b;
	int n;
	int *slo, *shi;         /* spans of each buffer */
	int64_t *t;             /* span s is [t[s], t[s + 1]) */
	ArBuf *w;               /* the window's buffers */
	int64_t *best;          /* their offsets in the lowest greedy order */
} Prover;

/* The buffers live in spans [a, e), their lifetimes cut to them. */
static int cut(Prover *p, int a, int e)
{
	int m = 0;
	for (int i = 0; i < p->n; i++) {
		const ArBuf *x = &p->b[i];
		if (p->slo[i] >= e || p->shi[i] <= a)
			continue;
		p->w[m++] = (ArBuf){ x->lo > p->t[a] ? x->lo : p->t[a],
				     x->hi < p->t[e] ? x->hi : p->t[e],
				     x->size, 0 };
	}
	return m;
}

/*
 * Whether the exact search proves that no placement of the window's m
 * buffers fits cap.  A greedy order that fits settles it first; the
 * exact search starts from the lowest one.
 */
static bool refuted(Prover *p, int m, int64_t cap, ArBudget *work,
		    bool *stopped)
{
	int64_t best = INT64_MAX;
	ArDsaResult r;

	if (!ar_budget_spend(work, (int64_t)m * AR_GREEDY_COUNT))
		return false;
	for (int g = 0; g < AR_GREEDY_COUNT; g++) {
		int64_t h = ar_dsa_greedy(p->w, m, (ArGreedyOrder)g);
		if (h <= cap)
			return false;
		if (h < best) {
			best = h;
			for (int i = 0; i < m; i++)
				p->best[i] = p->w[i].offset;
		}
	}
	for (int i = 0; i < m; i++)
		p->w[i].offset = p->best[i];
	memset(&r, 0, sizeof r);
	ar_dsa_exact(p->w, m, best, ar_dsa_lower_bound(p->w, m, NULL), cap,
		     work, &r);
	*stopped |= r.stopped;
	return r.infeasible;
}

/* The distinct times of b, sorted; returns how many. */
static int times(const ArBuf *b, int n, int64_t *t)
{
	int m = 0;
	for (int i = 0; i < n; i++)
		t[2 * i] = b[i].lo, t[2 * i + 1] = b[i].hi;
	qsort(t, 2 * (size_t)n, sizeof *t, time_cmp);
	for (int i = 0; i < 2 * n; i++)
		if (!m || t[m - 1] != t[i])
			t[m++] = t[i];
	return m;
}

void ar_dsa_prove(const ArBuf *b, int n, int64_t floor, int64_t target,
		  ArBudget *work, ArDsaBound *out)
{
	Prover p = { b, n, NULL, NULL, NULL, NULL, NULL };
	int64_t g = 0, *load;
	Window *win;
	int ns, levels = 0;

	memset(out, 0, sizeof *out);
	for (int i = 0; i < n; i++)
		g = ar_dsa_gcd(b[i].size, g);
	out->bound = ar_dsa_lower_bound(b, n, NULL);
	if (floor > out->bound)
		out->bound = floor;
	if (n == 0)
		return;
	out->bound = (out->bound + g - 1) / g * g;
	ns = ar_dsa_spans(b, n, &p.slo, &p.shi);
	p.t = ar_xmalloc(2 * (size_t)n * sizeof *p.t);
	times(b, n, p.t);
	p.w = ar_xmalloc((size_t)n * sizeof *p.w);
	p.best = ar_xmalloc((size_t)n * sizeof *p.best);
	load = ar_xcalloc((size_t)ns + 1, sizeof *load);
	win = ar_xmalloc(2 * (size_t)ns * sizeof *win + 1);
	for (int i = 0; i < n; i++) {
		load[p.slo[i]] += b[i].size;
		load[p.shi[i]] -= b[i].size;
	}
	for (int s = 1; s < ns; s++)
		load[s] += load[s - 1];
	/* One section alone always packs at its load: widths from 2. */
	for (int w = 2; w / 2 < ns; w *= 2)
		levels++;
	for (int lv = 0, w = 2; lv < levels; lv++, w *= 2) {
		ArBudget level;
		int nw = 0;
		for (int a = 0; ; a += w / 2) {
			int e = a + w < ns ? a + w : ns;
			win[nw] = (Window){ a, e, 0 };
			for (int s = a; s < e; s++)
				if (load[s] > win[nw].peak)
					win[nw].peak = load[s];
			nw++;
			if (e == ns)
				break;
		}
		qsort(win, (size_t)nw, sizeof *win, window_cmp);
		ar_budget_share(work, 1, levels - lv, &level);
		for (int k = 0; k < nw && ar_budget_left(&level); k++) {
			ArBudget share;
			int m;
			if (target > 0 && out->bound >= target)
				break;
			ar_budget_share(&level, 1, nw - k, &share);
			m = ar_budget_spend(&share, n) ? cut(&p, win[k].a,
							    win[k].e) : 0;
			out->windows += m > 0;
			while (m && refuted(&p, m, out->bound, &share,
					    &out->stopped)) {
				out->bound += g;
				out->t0 = p.t[win[k].a];
				out->t1 = p.t[win[k].e];
				out->nbuf = m;
				if (target > 0 && out->bound >= target)
					break;
			}
			ar_budget_settle(&level, &share);
		}
		ar_budget_settle(work, &level);
		if (!ar_budget_left(work)) {
			out->stopped = true;
			break;
		}
	}
	free(p.slo), free(p.shi), free(p.t), free(p.w), free(p.best);
	free(load), free(win);
}
