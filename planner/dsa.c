/*
 * dsa.c — the offset assignment entry: lower bound, algorithm dispatch and
 * the "auto" strategy.
 *
 * auto runs every greedy order, keeps the lowest, and stops as soon as one
 * meets the lower bound (nothing can beat it) or fits the capacity asked
 * for; only then does it pay for the exact search, seeded with that best
 * height so the search starts from a known solution and never does worse.
 * Minimising, an exact search that ends unproven hands its best to the
 * search of the blocks the buffers join into (dsa_blocks.c), that to the
 * layer split (dsa_layers.c), that to the local search (dsa_improve.c),
 * and that to probes of the heights below it (dsa_descend.c); with a
 * capacity, the blocks are tried first, and the layer split after the
 * exact search.
 */
#include "dsa_impl.h"

#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "sortkey.h"

const char *const ar_dsa_algorithms[] = {
	"auto", "greedy-size", "greedy-breadth", "greedy-lifetime", "exact",
	NULL
};

int64_t ar_dsa_height(const ArBuf *b, int n)
{
	int64_t h = 0;
	for (int i = 0; i < n; i++)
		if (b[i].offset + b[i].size > h)
			h = b[i].offset + b[i].size;
	return h;
}

void ar_dsa_components(const ArBuf *b, int n, ArComponents *cc)
{
	int64_t reach = INT64_MIN;
	ArSortKey *k = ar_xmalloc((size_t)n * sizeof *k + 1);

	cc->ids = ar_xmalloc((size_t)n * sizeof(int) + 1);
	cc->start = ar_xmalloc(((size_t)n + 1) * sizeof(int));
	cc->nc = 0;
	for (int i = 0; i < n; i++)
		k[i] = (ArSortKey){ b[i].lo, 0, 0, i };
	ar_sort_keys(k, n);
	for (int i = 0; i < n; i++) {
		const ArBuf *x = &b[k[i].id];
		cc->ids[i] = k[i].id;
		if (x->lo >= reach)
			cc->start[cc->nc++] = i;
		if (x->hi > reach)
			reach = x->hi;
	}
	cc->start[cc->nc] = n;
	free(k);
}

int64_t ar_dsa_gcd(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

typedef struct {
	int64_t t, delta;
} Event;

static int event_cmp(const void *pa, const void *pb)
{
	const Event *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	/* Lifetimes are half-open: what ends at t is gone before t starts. */
	return (a->delta > b->delta) - (a->delta < b->delta);
}

/*
 * The same sweep over a difference array when the times span at most a
 * few per buffer (a plan's steps): linear instead of a sort.  Within one
 * time ends come before starts, so the live bytes peak at the end of the
 * time's changes, which is where both versions see them.
 */
static int64_t dense_lower_bound(const ArBuf *b, int n, int64_t t0,
				 int64_t span, int64_t *at)
{
	int64_t *d = ar_xcalloc((size_t)span + 1, sizeof *d);
	int64_t live = 0, peak = 0, peak_at = b[0].lo;
	for (int i = 0; i < n; i++) {
		d[b[i].lo - t0] += b[i].size;
		d[b[i].hi - t0] -= b[i].size;
	}
	for (int64_t t = 0; t <= span; t++) {
		live += d[t];
		if (live > peak)
			peak = live, peak_at = t0 + t;
	}
	free(d);
	if (at)
		*at = peak_at;
	return peak;
}

int64_t ar_dsa_lower_bound(const ArBuf *b, int n, int64_t *at)
{
	int64_t t0 = INT64_MAX, t1 = INT64_MIN;
	Event *ev;
	for (int i = 0; i < n; i++) {
		if (b[i].lo < t0)
			t0 = b[i].lo;
		if (b[i].hi > t1)
			t1 = b[i].hi;
	}
	/* Unsigned: the span of any two int64 times is exact there. */
	if (n > 0 && (uint64_t)t1 - (uint64_t)t0 <= 4 * (uint64_t)n)
		return dense_lower_bound(b, n, t0, t1 - t0, at);
	ev = ar_xmalloc(2 * (size_t)n * sizeof *ev + 1);
	int64_t live = 0, peak = 0, peak_at = n ? b[0].lo : 0;
	for (int i = 0; i < n; i++) {
		ev[2 * i] = (Event){ b[i].lo, b[i].size };
		ev[2 * i + 1] = (Event){ b[i].hi, -b[i].size };
	}
	qsort(ev, 2 * (size_t)n, sizeof *ev, event_cmp);
	for (int i = 0; i < 2 * n; i++) {
		live += ev[i].delta;
		if (live > peak)
			peak = live, peak_at = ev[i].t;
	}
	free(ev);
	if (at)
		*at = peak_at;
	return peak;
}

static void save(int64_t *dst, const ArBuf *b, int n)
{
	for (int i = 0; i < n; i++)
		dst[i] = b[i].offset;
}

static void load(ArBuf *b, int n, const int64_t *src)
{
	for (int i = 0; i < n; i++)
		b[i].offset = src[i];
}

/* Height h, found by algo, becomes the result when it is lower; true then. */
static bool lowered(ArDsaResult *res, int64_t h, const char *algo)
{
	if (h >= res->height)
		return false;
	res->height = h;
	res->algorithm = algo;
	return true;
}

/* Good enough to stop: provably minimal, or what a capacity asked for. */
static bool done(int64_t h, int64_t lb, int64_t capacity)
{
	return h == lb || (capacity > 0 && h <= capacity);
}

/*
 * Large instances, and what the exact search leaves above a capacity,
 * go to window repair (dsa_repair.c), aiming at the capacity or the lower
 * bound; true when it lowered the height.  From AR_DSA_REPAIR_MIN buffers
 * on (AR_DSA_REPAIR_CAP_MIN at a capacity) it runs before the exact
 * search, which rarely ends there.
 */
static bool repair(ArBuf *b, int n, int64_t target, ArBudget *work,
		   ArDsaResult *res)
{
	return lowered(res, ar_dsa_repair(b, n, target, work), "repair");
}

/* What the phases below share: each gets (b, n, its capacity or target,
 * its work, the nodes to add to). */
typedef int64_t Phase(ArBuf *b, int n, int64_t to, ArBudget *work,
		      int64_t *nodes);

/* Runs phase f with a budget of its own, units of work; true when it
 * lowered the height (then named algo). */
static bool phase(Phase *f, const char *algo, ArBuf *b, int n, int64_t to,
		  int64_t units, ArWatch *watch, ArDsaResult *res)
{
	ArBudget own;

	ar_budget_init(&own, units, watch);
	return lowered(res, f(b, n, to, &own, &res->nodes), algo);
}

/*
 * The blocks the buffers join into (dsa_blocks.c): far fewer, each a
 * rectangle packed without waste, where the exact search finishes what it
 * cannot on the buffers.  A budget of its own, units of work:
 * minimising, 1 / BLOCKS_DEN of the search's
 * once the exact search ends unproven (for auto's local search and
 * probes on the blocks, twice as much again); with a capacity, a first
 * try of the blocks' exact search alone with 1 / BLOCKS_CAP_DEN before
 * the buffers' own: it meets MiniMalloc's A-K in milliseconds, or fails
 * as soon (H, whose joins rule its packing out).
 */
#define BLOCKS_DEN 4
#define BLOCKS_CAP_DEN 32

/*
 * Components still above target (the lower bound, or the capacity) go to
 * layer split (dsa_layers.c), with a budget of its own, 1 / LAYERS_DEN
 * of the search's: the strips of a perfect packing with holes, which the
 * exact search does not separate, are found there.  As much as the
 * search's own: its stacks' layers are whole instances again, each part
 * a time splits them into minimised alone; holes 2,000 seed 1 needs that
 * much (+1.07% with it, +4.7% with half, which its two components share
 * by buffers).
 */
#define LAYERS_DEN 1

/*
 * auto, minimising: when the exact search, with all the work given, ends
 * without a proof, local search goes on from its best with a budget of
 * its own, 1 / IMPROVE_DEN of that work: the branch and bound's next
 * heights cost it far more than small changes to its best solution do.
 */
#define IMPROVE_DEN 2

/*
 * Then heights below the best are probed one by one (dsa_descend.c), with
 * 1 / DESCEND_DEN of that work again: the exact search's answer is not
 * monotone in the height asked, so one probe finds what another missed.
 */
#define DESCEND_DEN 1

static void exact_then_improve(ArBuf *b, int n, int64_t seed,
			       const char *seed_algo, ArBudget *work,
			       ArDsaResult *res)
{
	ArBudget more, below;

	ar_budget_init(&more, work->granted / IMPROVE_DEN, work->watch);
	ar_budget_init(&below, work->granted / DESCEND_DEN, work->watch);
	ar_dsa_exact(b, n, seed, res->lower_bound, 0, work, res);
	res->algorithm = res->height == seed ? seed_algo : "exact";
	if (res->optimal ||
	    (phase(ar_dsa_blocks, "blocks", b, n, 0,
		   work->granted / BLOCKS_DEN, work->watch, res) &&
	     (res->optimal = res->height == res->bound)))
		return;
	if (phase(ar_dsa_layers, "layers", b, n, res->bound,
		  work->granted / LAYERS_DEN, work->watch, res) &&
	    (res->optimal = res->height == res->bound))
		return;
	lowered(res, ar_dsa_improve(b, n, res->bound, &more), "improve");
	if (res->height > res->bound)
		lowered(res, ar_dsa_descend(b, n, &res->bound, &below,
					    &res->nodes), "descend");
	res->optimal = res->height == res->bound;
}

int ar_dsa_solve(ArBuf *b, int n, const char *algo, int64_t capacity,
		 ArBudget *work, ArDsaResult *res)
{
	bool is_auto = !algo || !strcmp(algo, "auto");
	bool is_exact = algo && !strcmp(algo, "exact");
	int64_t *best, seed;
	ArBudget more;
	const char *seed_algo;
	int only = -1;

	for (int g = 0; g < AR_GREEDY_COUNT; g++)
		if (algo && !strcmp(algo, ar_greedy_names[g]))
			only = g;
	if (!is_auto && !is_exact && only < 0)
		return -1;
	memset(res, 0, sizeof *res);
	res->lower_bound = ar_dsa_lower_bound(b, n, NULL);
	res->height = INT64_MAX;
	best = ar_xmalloc((size_t)n * sizeof *best);
	for (int g = 0; g < AR_GREEDY_COUNT; g++) {
		int64_t h;
		if (only >= 0 && g != only)
			continue;
		h = ar_dsa_greedy(b, n, (ArGreedyOrder)g);
		if (h < res->height) {
			res->height = h;
			res->algorithm = ar_greedy_names[g];
			save(best, b, n);
		}
		if (done(h, res->lower_bound, capacity))
			break;
	}
	load(b, n, best);
	free(best);
	res->optimal = res->height == res->lower_bound;
	res->bound = res->lower_bound;
	/* The lower bound is a proof: no placement is below it. */
	res->infeasible = capacity > 0 && res->lower_bound > capacity;
	if (only >= 0 || res->infeasible ||
	    (is_auto && done(res->height, res->lower_bound, capacity)))
		return 0;
	if (is_auto && capacity > 0 &&
	    phase(ar_dsa_blocks, "blocks", b, n, capacity,
		  work->granted / BLOCKS_CAP_DEN, work->watch, res) &&
	    done(res->height, res->lower_bound, capacity)) {
		res->optimal = res->height == res->lower_bound;
		return 0;
	}
	if (is_auto && n >= (capacity ? AR_DSA_REPAIR_CAP_MIN
				      : AR_DSA_REPAIR_MIN)) {
		ar_budget_init(&more, work->granted / IMPROVE_DEN, work->watch);
		if (repair(b, n, capacity ? capacity : res->lower_bound, &more,
			   res) && done(res->height, res->lower_bound, capacity)) {
			res->optimal = res->height == res->lower_bound;
			return 0;
		}
	}
	seed = res->height;
	seed_algo = res->algorithm;
	if (is_auto && capacity == 0) {
		exact_then_improve(b, n, seed, seed_algo, work, res);
		return 0;
	}
	ar_budget_init(&more, work->granted / IMPROVE_DEN, work->watch);
	ar_dsa_exact(b, n, seed, res->lower_bound, capacity, work, res);
	res->algorithm = is_auto && res->height == seed ? seed_algo : "exact";
	if (!is_auto || res->height <= capacity || res->infeasible)
		return 0;
	if (phase(ar_dsa_layers, "layers", b, n, capacity,
		  work->granted / LAYERS_DEN, work->watch, res) &&
	    res->height <= capacity) {
		res->optimal = res->height == res->lower_bound;
		return 0;
	}
	if (n < AR_DSA_REPAIR_MIN) {
		repair(b, n, capacity, &more, res);
	} else {
		/* A ladder of probes above the capacity, each repaired;
		 * heights move on multiples of the sizes' gcd, so a proof
		 * that raises the floor shows the capacity infeasible. */
		int64_t g = 0, floor, start, h;
		for (int i = 0; i < n; i++)
			g = ar_dsa_gcd(b[i].size, g);
		floor = start = capacity / g * g;
		ar_budget_init(&more, work->granted / DESCEND_DEN, work->watch);
		h = ar_dsa_descend(b, n, &floor, &more, &res->nodes);
		res->infeasible = floor > start;
		lowered(res, h, "descend");
	}
	res->optimal = res->height == res->lower_bound;
	return 0;
}
