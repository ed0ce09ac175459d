/*
 * dsa_bound.c — a lower bound on the optimum height above the load, from
 * exhaustive searches of sub-instances (`arenac solve --prove`).
 *
 * The argument: keep only some of the spans between consecutive distinct
 * times, and of each buffer only what is live in them; two buffers then
 * conflict when they share a kept span.  Each lifetime keeps a run of the
 * kept spans, so renumbering them 0, 1, ... gives an instance of the same
 * kind, with fewer conflicts: any placement of the whole is one of it,
 * and its optimum is at most the whole's.  The exact search (exact.c) is
 * complete, so when it exhausts such a sub-instance at height H, no
 * placement of the whole fits H either.  Every placement pushed down
 * until each buffer rests on 0 or on another is no higher, and its height
 * is a sum of sizes, so the optimum is a multiple of the sizes' gcd g: it
 * is at least H + g.  The sub-instance is then probed at H + g, and so on
 * while it stays refuted.
 *
 * Two families of kept spans: time windows (runs of 2, 4, 8, ... spans,
 * slid by half their width, the most loaded first), where every argument
 * local to a stretch of time lives (a cumulative or dual-feasible-function
 * bound over its sections, an LP over them, the contiguity of the buffers
 * crossing them); and the 2, 4, 8, ... most loaded spans wherever they
 * are, which keep the long buffers that tie distant peaks together.  (The
 * naive LP over sections, a fraction of each buffer anywhere in each, is
 * the load itself.)  Each family member gets an equal share of the work
 * left to its size, each window of a size a share of that; most fit the
 * bound at once by a greedy order and cost next to nothing.
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

typedef struct {
	const ArBuf *b;
	int n;
	int *slo, *shi;         /* spans of each buffer */
	int64_t *t;             /* span s is [t[s], t[s + 1]) */
	int *kept;              /* kept[s]: spans kept before span s */
	ArBuf *w;               /* the sub-instance's buffers */
	int64_t *best;          /* their offsets in the lowest greedy order */
} Prover;

/* The buffers live in a kept span, over the kept spans' numbers. */
static int cut(Prover *p)
{
	int m = 0;
	for (int i = 0; i < p->n; i++) {
		int a = p->kept[p->slo[i]], e = p->kept[p->shi[i]];
		if (a < e)
			p->w[m++] = (ArBuf){ a, e, p->b[i].size, 0 };
	}
	return m;
}

/*
 * Whether the exact search proves that no placement of the m buffers of
 * the sub-instance fits cap.  A greedy order that fits settles it first;
 * the exact search starts from the lowest one.
 */
static bool refuted(Prover *p, int m, int64_t cap, ArBudget *work,
		    bool *stopped)
{
	int64_t best = INT64_MAX, cost = (int64_t)m * AR_GREEDY_COUNT;
	ArDsaResult r;

	/* Each greedy order sorts and places by O(log n) tree walks. */
	for (int k = m; k > 1; k /= 2)
		cost += (int64_t)m * AR_GREEDY_COUNT;
	if (!ar_budget_spend(work, cost))
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

/*
 * Probes the kept spans (p->kept) at the bound, raising it by g while
 * refuted; a sub-instance that raises it is recorded as having kept
 * nspan spans, a window's from t0 to t1 (t0 == t1: not a window).
 */
static void probe(Prover *p, int64_t g, int64_t target, ArBudget *work,
		  ArDsaBound *out, int nspan, int64_t t0, int64_t t1)
{
	int m = cut(p);

	out->searched += m > 0;
	while (m && refuted(p, m, out->bound, work, &out->stopped)) {
		out->bound += g;
		out->nspan = nspan, out->t0 = t0, out->t1 = t1, out->nbuf = m;
		if (target > 0 && out->bound >= target)
			break;
	}
}

/* The windows of w spans, slid by w / 2, most loaded first. */
static int windows(Window *win, const int64_t *load, int ns, int64_t w)
{
	int nw = 0;
	for (int a = 0; ; a += (int)(w / 2)) {
		int e = a + w < ns ? (int)(a + w) : ns;
		win[nw] = (Window){ a, e, 0 };
		for (int s = a; s < e; s++)
			if (load[s] > win[nw].peak)
				win[nw].peak = load[s];
		nw++;
		if (e == ns)
			break;
	}
	qsort(win, (size_t)nw, sizeof *win, window_cmp);
	return nw;
}

void ar_dsa_prove(const ArBuf *b, int n, int64_t floor, int64_t target,
		  ArBudget *work, ArDsaBound *out)
{
	Prover p = { b, n, NULL, NULL, NULL, NULL, NULL, NULL };
	int64_t g = 0, *load;
	Window *win, *by_load;
	int ns, levels = 0, lv = 0;

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
	/* Every distinct time starts or ends some buffer. */
	p.t = ar_xmalloc(((size_t)ns + 1) * sizeof *p.t);
	for (int i = 0; i < n; i++)
		p.t[p.slo[i]] = b[i].lo, p.t[p.shi[i]] = b[i].hi;
	p.w = ar_xmalloc((size_t)n * sizeof *p.w);
	p.best = ar_xmalloc((size_t)n * sizeof *p.best);
	p.kept = ar_xmalloc(((size_t)ns + 1) * sizeof *p.kept);
	load = ar_xcalloc((size_t)ns + 1, sizeof *load);
	win = ar_xmalloc(2 * (size_t)ns * sizeof *win + 1);
	by_load = ar_xmalloc((size_t)ns * sizeof *by_load + 1);
	for (int i = 0; i < n; i++) {
		load[p.slo[i]] += b[i].size;
		load[p.shi[i]] -= b[i].size;
	}
	for (int s = 0; s < ns; s++) {
		load[s] += s ? load[s - 1] : 0;
		by_load[s] = (Window){ s, s + 1, load[s] };
	}
	qsort(by_load, (size_t)ns, sizeof *by_load, window_cmp);
	/* One span alone always packs at its load: from 2 spans on, and the
	 * last window is the whole instance. */
	for (int64_t w = 2; w / 2 < ns; w *= 2)
		levels += 1 + (w < ns);
	for (int64_t w = 2; w / 2 < ns && !(target > 0 &&
					    out->bound >= target); w *= 2) {
		ArBudget level, share;
		int nw = windows(win, load, ns, w);
		ar_budget_share(work, 1, levels - lv++, &level);
		for (int k = 0; k < nw && ar_budget_left(&level) &&
				!(target > 0 && out->bound >= target); k++) {
			int a = win[k].a, e = win[k].e;
			ar_budget_share(&level, 1, nw - k, &share);
			/* What marking the spans and cutting cost. */
			if (ar_budget_spend(&share, n + ns)) {
				for (int s = 0; s <= ns; s++)
					p.kept[s] = s < a ? 0 : s < e ? s - a
								       : e - a;
				probe(&p, g, target, &share, out, e - a,
				      p.t[a], p.t[e]);
			}
			ar_budget_settle(&level, &share);
		}
		ar_budget_settle(work, &level);
		if (w < ns && !(target > 0 && out->bound >= target)) {
			ar_budget_share(work, 1, levels - lv++, &level);
			if (ar_budget_spend(&level, n + ns)) {
				memset(p.kept, 0, ((size_t)ns + 1) *
				       sizeof *p.kept);
				for (int k = 0; k < w; k++)
					p.kept[by_load[k].a + 1] = 1;
				for (int s = 0; s < ns; s++)
					p.kept[s + 1] += p.kept[s];
				probe(&p, g, target, &level, out, (int)w, 0,
				      0);
			}
			ar_budget_settle(work, &level);
		}
		if (!ar_budget_left(work)) {
			out->stopped = true;
			break;
		}
	}
	free(p.slo), free(p.shi), free(p.t), free(p.w), free(p.best);
	free(p.kept), free(load), free(win), free(by_load);
}
