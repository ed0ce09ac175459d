/*
 * dsa_repair.c — window repair: lowers a large placement towards a target
 * height (the capacity asked for, or the lower bound) where the exact
 * search cannot go, by moving only the buffers where it is too high.
 *
 * On tens of thousands of buffers the best greedy is too high in a few
 * narrow windows of time only (a random instance of 16,384 buffers over
 * 32,768 steps: ten windows, 4% of the steps), while the exact search
 * places buffers by offset over the whole time line at once and the local
 * search's decode (dsa_improve.c) costs the square of all of them.  So
 * each window where the skyline (the highest top over a span of time)
 * passes the target is repaired alone: the buffers live in it, widened by
 * a margin, are the free buffers, and every other buffer live beside them
 * is pinned where it is, so the placement stays valid whatever the
 * window's search does.  The exact search (exact.c, which places pinned
 * buffers at their offsets) goes first, on the window and on wider ones
 * in turn (see exact() below): a window of a few hundred free buffers
 * with the target as capacity is within its reach, and it reaches the
 * bound where the local search stalls a few percent above (random
 * instances of 4k-64k buffers, seeds 1-3: all at the bound).  What it
 * leaves goes to the local search (dsa_improve.c), whose first fit goes
 * around the pinned.
 * Windows closer than their lifetimes' reach are merged first (the
 * neighbours of one would be another's free buffers).  Passes, each with
 * half the work left shared evenly over its windows, go on while the
 * target is not met, widening the margin (0, then 32 spans, doubling)
 * after a pass that gained nothing, until the windows pass WINDOW_MAX
 * free buffers.  Neither search returns higher than it was given, so
 * neither does this.
 */
#include "dsa_impl.h"

#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define FIRST_MARGIN 32
#define WINDOW_MAX 1024

typedef struct {
	ArBuf *b;
	int n, ns;
	int *slo, *shi;         /* spans of each buffer */
	int64_t *sky;           /* per span */
	int *in;                /* per buffer: stamp of the window using it */
	int stamp;
	ArBuf *sub;
	int *ids;
} Repair;

static void skyline(Repair *r)
{
	memset(r->sky, 0, (size_t)r->ns * sizeof *r->sky);
	for (int i = 0; i < r->n; i++) {
		int64_t top = r->b[i].offset + r->b[i].size;
		for (int k = r->slo[i]; k < r->shi[i]; k++)
			if (top > r->sky[k])
				r->sky[k] = top;
	}
}

/*
 * Gathers the buffers live over spans [ka, kb) (free, first in r->ids and
 * r->sub) and every other buffer live within their reach (pinned, after
 * them); returns how many are free, *m how many in all, *floor the highest
 * pinned top or target.  Nothing past WINDOW_MAX free buffers (returns
 * more than that): the searches' steps cost their square.
 */
static int gather(Repair *r, int ka, int kb, int64_t target, int *m,
		  int64_t *floor)
{
	int nf = 0, hlo = kb, hhi = ka, stamp = ++r->stamp;

	for (int i = 0; i < r->n; i++)
		if (r->slo[i] < kb && r->shi[i] > ka) {
			if (nf == WINDOW_MAX)
				return nf + 1;
			r->ids[nf++] = i;
			r->in[i] = stamp;
			hlo = r->slo[i] < hlo ? r->slo[i] : hlo;
			hhi = r->shi[i] > hhi ? r->shi[i] : hhi;
		}
	*m = nf;
	*floor = target;
	for (int i = 0; i < r->n; i++)
		if (r->in[i] != stamp && r->slo[i] < hhi && r->shi[i] > hlo) {
			int64_t top = r->b[i].offset + r->b[i].size;
			r->ids[(*m)++] = i;
			*floor = top > *floor ? top : *floor;
		}
	for (int k = 0; k < *m; k++)
		r->sub[k] = r->b[r->ids[k]];
	return nf;
}

/* Writes the free buffers' new offsets back. */
static void put(Repair *r, int nf)
{
	for (int k = 0; k < nf; k++)
		r->b[r->ids[k]].offset = r->sub[k].offset;
}

/*
 * The exact search on the window's free buffers with the target as
 * capacity, the window widened step by step (0, then FIRST_MARGIN spans,
 * doubling), each width with a quarter of the work left: pinned
 * neighbours a greedy order left in the way make a narrow window
 * infeasible or slow to search where a wider one packs in few nodes (a
 * random instance of 4,096 buffers: 78,000 nodes without a solution at
 * the run itself, 1,735 to one with 32 spans more).  True when it placed
 * them within target.
 */
static bool exact(Repair *r, int ka, int kb, int64_t target, ArBudget *work)
{
	for (int e = 0;; e = e ? 2 * e : FIRST_MARGIN) {
		int a = ka - e > 0 ? ka - e : 0, z = kb + e < r->ns ? kb + e
							    : r->ns;
		int64_t floor, nodes = 0;
		int m, nf = gather(r, a, z, target, &m, &floor), st;
		ArBudget part;

		if (nf > WINDOW_MAX || floor > target || !ar_budget_left(work))
			return false;
		ar_budget_share(work, 1, 4, &part);
		st = ar_dsa_exact_pinned(r->sub, m, nf, target, &part, &nodes);
		ar_budget_settle(work, &part);
		if (st == 1) {
			put(r, nf);
			return true;
		}
		if (a == 0 && z == r->ns)
			return false;
	}
}

/*
 * Re-places the buffers live over spans [ka, kb) (the free ones) around
 * those live beside them (pinned), with the exact search and then the
 * local search, aiming at target.  False, doing nothing, past WINDOW_MAX
 * free buffers.
 */
static bool window(Repair *r, int ka, int kb, int64_t target, ArBudget *work)
{
	int m, nf;
	int64_t floor;

	if (exact(r, ka, kb, target, work))
		return true;
	nf = gather(r, ka, kb, target, &m, &floor);
	if (nf > WINDOW_MAX)
		return false;
	ar_dsa_improve_pinned(r->sub, m, nf, floor, work);
	put(r, nf);
	return true;
}

/* The windows of one pass: runs of spans above target, widened by margin
 * and merged where they come within reach of each other; *nw of them in
 * win[2 * w], win[2 * w + 1]. */
static void windows(Repair *r, int64_t target, int margin, int reach,
		    int *win, int *nw)
{
	*nw = 0;
	for (int k = 0; k < r->ns; k++) {
		int a, z, e;
		if (r->sky[k] <= target)
			continue;
		for (e = k; e < r->ns && r->sky[e] > target; e++)
			;
		a = k - margin > 0 ? k - margin : 0;
		z = e + margin < r->ns ? e + margin : r->ns;
		if (*nw && a <= win[2 * *nw - 1] + reach)
			win[2 * *nw - 1] = z;
		else
			win[2 * *nw] = a, win[2 * *nw + 1] = z, ++*nw;
		k = e;
	}
}

int64_t ar_dsa_repair(ArBuf *b, int n, int64_t target, ArBudget *work)
{
	Repair r = { .b = b, .n = n };
	int64_t h = ar_dsa_height(b, n), reach = 0;
	int *win;

	if (h <= target || n < 2)
		return h;
	r.ns = ar_dsa_spans(b, n, &r.slo, &r.shi);
	r.sky = ar_xmalloc((size_t)r.ns * sizeof *r.sky + 1);
	r.in = ar_xcalloc((size_t)n, sizeof *r.in);
	r.sub = ar_xmalloc((size_t)n * sizeof *r.sub);
	r.ids = ar_xmalloc((size_t)n * sizeof *r.ids);
	win = ar_xmalloc(((size_t)r.ns + 1) * sizeof *win);
	/* How far a window's free buffers reach beyond it: the mean span
	 * count of a lifetime, twice (a window of 16 spans or more). */
	for (int i = 0; i < n; i++)
		reach += r.shi[i] - r.slo[i];
	reach = 2 * reach / n > 16 ? 2 * reach / n : 16;
	for (int margin = 0; h > target && margin <= r.ns &&
	     ar_budget_left(work);) {
		ArBudget pass;
		int nw, tried = 0;
		int64_t was = h;
		skyline(&r);
		windows(&r, target, margin, (int)reach, win, &nw);
		ar_budget_share(work, 1, 2, &pass);
		for (int w = 0; w < nw && ar_budget_left(&pass); w++) {
			ArBudget share;
			ar_budget_share(&pass, 1, nw - w, &share);
			tried += window(&r, win[2 * w], win[2 * w + 1], target,
					&share);
			ar_budget_settle(&pass, &share);
		}
		ar_budget_settle(work, &pass);
		h = ar_dsa_height(b, n);
		if (!tried)
			break;
		/* Wider only once the windows as they are gain nothing. */
		if (h == was)
			margin = margin ? 2 * margin : FIRST_MARGIN;
	}
	free(r.slo), free(r.shi), free(r.sky), free(r.in), free(r.sub);
	free(r.ids), free(win);
	return h;
}
