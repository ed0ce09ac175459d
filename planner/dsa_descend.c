/*
 * dsa_descend.c — minimisation's last phase: heights below the best found
 * probed one by one by the exact search in capacity mode (exact.c), each
 * solution handed to the local search (dsa_improve.c; window repair,
 * dsa_repair.c, from AR_DSA_REPAIR_MIN buffers).
 *
 * The exact search's answer is not monotone in the capacity: its pruning
 * (a section's floor plus its unplaced bytes, against the capacity), and
 * with it the whole tree, changes with every height asked, so a probe may
 * find in a few hundred nodes a height the minimiser's bisection (which
 * spends its work on few, deep probes) never asked for.  On MiniMalloc's
 * instance D the bisection stops at 1,036,288 where probes at 1,034,240
 * and 1,031,168 succeed in 339 and 8,142 nodes, and 1,025,024 in 78,000.
 *
 * So heights are probed in rounds from one unit of the sizes' gcd below
 * the best down, one unit apart (or a 64th of the gap to the bound where
 * that is more: sizes of gcd 1), never below the proven bound: round r
 * asks max(32 >> r, 4) heights with 2^r / 256 of the phase's work each
 * (many cheap probes first, then fewer deeper ones; the first four
 * rounds spend an eighth each, the fifth a quarter), and then the height
 * just below the best gets all that is left, again after each success.
 * That last probe is the deep one capacity mode makes, and it must not
 * be starved: a probe repeats exactly the tree of a cheaper one at the
 * same height, so rounds narrowing to one height (2 probes of 2^4 / 256,
 * then 1 of 2^5 / 256) left D's next height 36,016 nodes of the 37,625
 * it needs; and the fifth round's four heights find D's 1,031,168 (8,142
 * nodes), which two would not have reached.  Heights near the best come
 * first: they are the easiest to find.  A probe that succeeds lowers
 * the best (the rest of its round asks only below it); one that proves a
 * height infeasible raises the bound.  All of it counted in work units.
 */
#include "dsa_impl.h"

#include <assert.h>

#define ROUNDS 5
#define MIN_PROBES 4
#define FIRST_PROBES 32

/* Probes height c with units of work; true when b got lower. */
static bool probe_at(ArBuf *b, int n, int64_t c, int64_t g, int64_t units,
		     ArBudget *work, int64_t *lo, int64_t *best,
		     int64_t *nodes)
{
	ArBudget share;
	ArDsaResult r;
	int64_t h;

	ar_budget_init(&share, units < work->left ? units : work->left,
		       work->watch);
	ar_dsa_exact(b, n, *best, *lo, c, &share, &r);
	ar_budget_settle(work, &share);
	*nodes += r.nodes;
	if (r.infeasible && r.bound > *lo)
		*lo = (r.bound + g - 1) / g * g;
	h = ar_dsa_height(b, n);
	assert(h <= *best);
	if (h >= *best)
		return false;
	/* The local search goes on from the probe's solution, with at most
	 * half what is left: the last probes go on after it. */
	ar_budget_init(&share, units < work->left / 2 ? units
						      : work->left / 2,
		       work->watch);
	h = n >= AR_DSA_REPAIR_MIN ? ar_dsa_repair(b, n, *lo, &share)
				   : ar_dsa_improve(b, n, *lo, &share);
	ar_budget_settle(work, &share);
	*best = h;
	return true;
}

int64_t ar_dsa_descend(ArBuf *b, int n, int64_t *lo, ArBudget *work,
		       int64_t *nodes)
{
	int64_t g = 0, best = ar_dsa_height(b, n), granted = work->granted;

	for (int i = 0; i < n; i++)
		g = ar_dsa_gcd(b[i].size, g);
	*lo = (*lo + g - 1) / g * g;
	for (int r = 0; r < ROUNDS && best - g >= *lo; r++) {
		int probes = FIRST_PROBES >> r > MIN_PROBES ? FIRST_PROBES >> r
							    : MIN_PROBES;
		int64_t units = granted / 256 << r;
		int64_t top = best - g, last = INT64_MAX;
		int64_t step = (best - *lo) / (2 * FIRST_PROBES) / g * g;
		step = step > g ? step : g;
		for (int i = 0; i < probes && ar_budget_left(work); i++) {
			int64_t c = top - step * i;
			if (c >= best || c < *lo || c == last)
				continue;
			last = c;
			probe_at(b, n, c, g, units, work, lo, &best, nodes);
		}
	}
	while (best - g >= *lo && ar_budget_left(work) &&
	       probe_at(b, n, best - g, g, work->left, work, lo, &best, nodes))
		;
	return best;
}
