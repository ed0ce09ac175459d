/*
 * greedy.c — one-pass offset heuristics: visit the buffers in some order
 * and put each at an offset that fits against the buffers already placed
 * whose lifetimes overlap its own (TFLite Micro's GreedyMemoryPlanner;
 * Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net
 * Inference", 2020).
 *
 * Invariants:
 *   - a buffer, once placed, never moves, and every placed pair of buffers
 *     with overlapping lifetimes is disjoint in [offset, offset + size);
 *   - the bytes taken are kept per node of a segment tree over time, as
 *     merged interval sets (ivset.h): taken[v] holds the buffers stored at
 *     v (those whose lifetime's cover includes v), below[v] at least every
 *     buffer stored in v's subtree and never one that misses v's span.  A
 *     buffer's lifetime [l, r) then meets exactly the buffers in below[c]
 *     of its cover nodes c and in taken[a] of their ancestors a, which lie
 *     on the paths from leaves l and r-1 to the root: O(log n) sets;
 *   - those sets are merged, so a stack of buffers with no gap between
 *     them is one interval: a placement costs O(log^2 n) plus the gaps it
 *     passes, never a scan of every buffer alive beside it.  Deep training
 *     steps, where thousands of activations are alive at once, stay near
 *     linear.
 * First fit finds the lowest free offset by jumping past the interval of
 * any set in the way; best fit walks the gaps of the union in order.  Both
 * give exactly what a sorted scan of the overlapping buffers would.
 */
#include "dsa_impl.h"

#include <stdint.h>
#include <stdlib.h>

#include "graph.h"
#include "ivset.h"
#include "sortkey.h"

const char *const ar_greedy_names[AR_GREEDY_COUNT] = {
	"greedy-size", "greedy-breadth", "greedy-lifetime"
};

typedef struct {
	const ArBuf *b;
	int n;
	int64_t *t;             /* distinct times, ascending */
	int m;
	int *idx;               /* idx[v - t[0]]: time v's index, or NULL */
	int leaves;             /* power of two >= the m-1 elementary spans */
	ArIvPool pool;
	int *taken, *below;     /* per tree node: interval sets (see above) */
	int *sets;              /* scratch: the sets one query looks at */
} LifeIndex;

static int i64_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return (a > b) - (a < b);
}

/* Index of time v among the distinct times (v is one of them). */
static int time_idx(const LifeIndex *ix, int64_t v)
{
	int lo = 0, hi = ix->m - 1;
	if (ix->idx)
		return ix->idx[v - ix->t[0]];
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (ix->t[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Sorts keys and writes their ids, in order, to out. */
static void sort_ids(ArSortKey *k, int n, int *out)
{
	ar_sort_keys(k, n);
	for (int i = 0; i < n; i++)
		out[i] = k[i].id;
}

/* Runs body with node set to each tree node covering [l0, r0) exactly. */
#define FOR_COVER(ix, l0, r0, node, body)                                   \
	for (int l_ = (l0) + (ix)->leaves, r_ = (r0) + (ix)->leaves;        \
	     l_ < r_; l_ >>= 1, r_ >>= 1) {                                 \
		int node;                                                   \
		if (l_ & 1) {                                               \
			node = l_++;                                        \
			body;                                               \
		}                                                           \
		if (r_ & 1) {                                               \
			node = --r_;                                        \
			body;                                               \
		}                                                           \
	}

/*
 * The distinct times of the buffers' ends, ascending.  Times are steps,
 * so they usually span a range not much wider than their count: then a
 * table over the range both finds them (no sort) and indexes them (no
 * binary search); else a sort does.
 */
static void distinct_times(LifeIndex *ix, const ArBuf *b, int n)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	ix->m = 0;
	ix->idx = NULL;
	for (int i = 0; i < n; i++) {
		lo = b[i].lo < lo ? b[i].lo : lo;
		hi = b[i].hi > hi ? b[i].hi : hi;
	}
	if (n > 0 && (uint64_t)hi - (uint64_t)lo < 8 * (uint64_t)n) {
		size_t span = (size_t)(hi - lo) + 1;
		int m = 0;
		ix->idx = ar_xmalloc(span * sizeof *ix->idx);
		for (size_t v = 0; v < span; v++)
			ix->idx[v] = -1;
		for (int i = 0; i < n; i++)
			ix->idx[b[i].lo - lo] = ix->idx[b[i].hi - lo] = 0;
		for (size_t v = 0; v < span; v++)
			if (ix->idx[v] == 0)
				ix->idx[v] = m++;
		/* Only the distinct ones: a million steps' peak is here. */
		ix->t = ar_xmalloc((size_t)m * sizeof *ix->t + 1);
		for (size_t v = 0; v < span; v++)
			if (ix->idx[v] >= 0)
				ix->t[ix->m++] = lo + (int64_t)v;
		return;
	}
	ix->t = ar_xmalloc(2 * (size_t)n * sizeof *ix->t + 1);
	for (int i = 0; i < n; i++)
		ix->t[2 * i] = b[i].lo, ix->t[2 * i + 1] = b[i].hi;
	qsort(ix->t, 2 * (size_t)n, sizeof *ix->t, i64_cmp);
	for (int i = 0; i < 2 * n; i++)
		if (!ix->m || ix->t[ix->m - 1] != ix->t[i])
			ix->t[ix->m++] = ix->t[i];
}

static void index_build(LifeIndex *ix, const ArBuf *b, int n)
{
	int depth = 0;
	ix->b = b;
	ix->n = n;
	distinct_times(ix, b, n);
	for (ix->leaves = 1; ix->leaves < ix->m; ix->leaves <<= 1)
		depth++;
	ar_iv_pool_init(&ix->pool);
	ix->taken = ar_xmalloc(2 * (size_t)ix->leaves * sizeof(int));
	ix->below = ar_xmalloc(2 * (size_t)ix->leaves * sizeof(int));
	for (int v = 0; v < 2 * ix->leaves; v++)
		ix->taken[v] = ix->below[v] = AR_IV_EMPTY;
	/* A cover has two nodes per level at most, and so have the paths. */
	ix->sets = ar_xmalloc(4 * ((size_t)depth + 2) * sizeof(int));
}

static void index_free(LifeIndex *ix)
{
	free(ix->t), free(ix->idx), free(ix->taken), free(ix->below);
	free(ix->sets);
	ar_iv_pool_free(&ix->pool);
}

/* below[] along the path from node v to the root, stopping where the
 * interval is held already (every ancestor then holds it too). */
static void add_below(LifeIndex *ix, int v, int64_t lo, int64_t hi)
{
	for (; v >= 1; v >>= 1) {
		if (ar_iv_covers(&ix->pool, ix->below[v], lo, hi))
			return;
		ar_iv_insert(&ix->pool, &ix->below[v], lo, hi);
	}
}

/* Records placed buffer i's bytes over its lifetime. */
static void take(LifeIndex *ix, int i)
{
	const ArBuf *x = &ix->b[i];
	int l = time_idx(ix, x->lo), r = time_idx(ix, x->hi);
	int64_t top = x->offset + x->size;
	FOR_COVER(ix, l, r, v, {
		ar_iv_insert(&ix->pool, &ix->taken[v], x->offset, top);
		add_below(ix, v, x->offset, top);
	});
	add_below(ix, l + ix->leaves, x->offset, top);
	add_below(ix, r - 1 + ix->leaves, x->offset, top);
}

/* The non-empty sets holding every placed buffer that overlaps buffer i
 * in time (and no other); returns how many went to ix->sets. */
static int overlap_sets(LifeIndex *ix, int i)
{
	int l = time_idx(ix, ix->b[i].lo), r = time_idx(ix, ix->b[i].hi);
	int k = 0, a = l + ix->leaves, z = r - 1 + ix->leaves;
	FOR_COVER(ix, l, r, v, {
		if (ix->below[v] != AR_IV_EMPTY)
			ix->sets[k++] = ix->below[v];
	});
	/* The two root paths, once each: leaves share a depth, so the
	 * walks meet where the paths join. */
	for (; a >= 1; a >>= 1, z >>= 1) {
		if (ix->taken[a] != AR_IV_EMPTY)
			ix->sets[k++] = ix->taken[a];
		if (z != a && ix->taken[z] != AR_IV_EMPTY)
			ix->sets[k++] = ix->taken[z];
	}
	return k;
}

/* The interval of some set that holds byte y, if any: y moves to its end. */
static bool skip_taken(const LifeIndex *ix, int k, int64_t *y, int64_t size)
{
	bool moved = false;
	for (int j = 0; j < k; j++) {
		int a = ar_iv_before(&ix->pool, ix->sets[j], *y + size);
		if (a != AR_IV_EMPTY && ix->pool.node[a].hi > *y) {
			*y = ix->pool.node[a].hi;
			moved = true;
		}
	}
	return moved;
}

/* Lowest offset where size bytes meet no set: every jump passes only
 * offsets whose bytes would meet the interval jumped over. */
static int64_t first_fit(const LifeIndex *ix, int k, int64_t size)
{
	int64_t y = 0;
	while (skip_taken(ix, k, &y, size))
		;
	return y;
}

/*
 * The smallest gap between the sets' intervals that holds size (ties: the
 * lowest), else the top of them all: the gaps are visited in order, each
 * from the end of the bytes taken at y to the next interval's start.
 */
static int64_t best_fit(const LifeIndex *ix, int k, int64_t size)
{
	int64_t y = 0, best = -1, best_gap = INT64_MAX;
	for (;;) {
		int64_t z = INT64_MAX;
		while (skip_taken(ix, k, &y, 1))
			;
		for (int j = 0; j < k; j++) {
			int a = ar_iv_after(&ix->pool, ix->sets[j], y);
			if (a != AR_IV_EMPTY && ix->pool.node[a].lo < z)
				z = ix->pool.node[a].lo;
		}
		if (z == INT64_MAX)
			break;
		if (z - y >= size && z - y < best_gap) {
			best_gap = z - y;
			best = y;
			if (best_gap == size)
				break;
		}
		y = z;
	}
	return best >= 0 ? best : y;
}

/*
 * Greedy by breadth visits times by decreasing live bytes and places the
 * buffers alive there, largest first; a buffer is placed at the first
 * visited time in its lifetime, so its rank is the minimum visit rank over
 * its elementary spans, a range minimum on a segment tree.
 */
static void breadth_ranks(const LifeIndex *ix, int64_t *rank)
{
	int ne = ix->m > 1 ? ix->m - 1 : 1, L = ix->leaves;
	int64_t *live = ar_xcalloc((size_t)ne + 1, sizeof *live);
	int64_t *rmin = ar_xmalloc(2 * (size_t)L * sizeof *rmin);
	int *visit = ar_xmalloc((size_t)ne * sizeof *visit);
	ArSortKey *k = ar_xmalloc((size_t)ne * sizeof *k);
	const ArBuf *b = ix->b;

	for (int i = 0; i < ix->n; i++) {
		live[time_idx(ix, b[i].lo)] += b[i].size;
		live[time_idx(ix, b[i].hi)] -= b[i].size;
	}
	for (int e = 0; e < ne; e++) {
		if (e)
			live[e] += live[e - 1];
		k[e] = (ArSortKey){ -live[e], 0, 0, e };
	}
	sort_ids(k, ne, visit);
	for (int v = 0; v < 2 * L; v++)
		rmin[v] = INT64_MAX;
	for (int r = 0; r < ne; r++)
		rmin[L + visit[r]] = r;
	for (int v = L - 1; v >= 1; v--)
		rmin[v] = rmin[2 * v] < rmin[2 * v + 1] ? rmin[2 * v]
							: rmin[2 * v + 1];
	for (int i = 0; i < ix->n; i++) {
		rank[i] = INT64_MAX;
		FOR_COVER(ix, time_idx(ix, b[i].lo), time_idx(ix, b[i].hi), v,
			  if (rmin[v] < rank[i]) rank[i] = rmin[v]);
	}
	free(live), free(rmin), free(visit), free(k);
}

int64_t ar_dsa_greedy(ArBuf *b, int n, ArGreedyOrder order)
{
	LifeIndex ix;
	ArSortKey *k = ar_xmalloc((size_t)n * sizeof *k + 1);
	int *seq = ar_xmalloc((size_t)n * sizeof *seq + 1);
	int64_t *rank = NULL, height = 0;

	index_build(&ix, b, n);
	if (order == AR_GREEDY_BREADTH) {
		rank = ar_xmalloc((size_t)n * sizeof *rank + 1);
		breadth_ranks(&ix, rank);
	}
	for (int i = 0; i < n; i++) {
		int64_t len = b[i].hi - b[i].lo;
		switch (order) {
		case AR_GREEDY_BREADTH:
			k[i] = (ArSortKey){ rank[i], -b[i].size, -len, i };
			break;
		case AR_GREEDY_LIFETIME:
			k[i] = (ArSortKey){ -len, -b[i].size, 0, i };
			break;
		default:
			k[i] = (ArSortKey){ -b[i].size, -len, 0, i };
			break;
		}
		b[i].offset = -1;
	}
	sort_ids(k, n, seq);
	for (int s = 0; s < n; s++) {
		int i = seq[s], nk = overlap_sets(&ix, i);
		b[i].offset = order == AR_GREEDY_BREADTH ?
			      best_fit(&ix, nk, b[i].size) :
			      first_fit(&ix, nk, b[i].size);
		take(&ix, i);
		if (b[i].offset + b[i].size > height)
			height = b[i].offset + b[i].size;
	}
	index_free(&ix);
	free(k), free(seq), free(rank);
	return height;
}
