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
 *   - only placed buffers that overlap in time are looked at, found through
 *     a static lifetime index (those alive at lo by a stabbing query on a
 *     segment tree, plus those starting inside (lo, hi) by a binary search
 *     over start times), so a placement costs O(log n + k log k) for k
 *     time-overlapping buffers rather than a scan of everything placed.
 */
#include "dsa_impl.h"

#include <stdlib.h>

#include "graph.h"

const char *const ar_greedy_names[AR_GREEDY_COUNT] = {
	"greedy-size", "greedy-breadth", "greedy-lifetime"
};

typedef struct {
	const ArBuf *b;
	int n;
	int64_t *t;             /* distinct times, ascending */
	int m;
	int leaves;             /* power of two >= the m-1 elementary spans */
	int *nstart, *items;    /* buffers covering each tree node */
	int *bylo;              /* buffers by lo */
} LifeIndex;

typedef struct {
	int64_t off, top;
} Span;

static int i64_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return (a > b) - (a < b);
}

static int span_cmp(const void *pa, const void *pb)
{
	const Span *a = pa, *b = pb;
	return (a->off > b->off) - (a->off < b->off);
}

/* Index of time v among the distinct times (v is one of them). */
static int time_idx(const LifeIndex *ix, int64_t v)
{
	int lo = 0, hi = ix->m - 1;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (ix->t[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A sort record: ascending by k1, k2, k3, then id for determinism. */
typedef struct {
	int64_t k1, k2, k3;
	int id;
} Key;

static int key_cmp(const void *pa, const void *pb)
{
	const Key *a = pa, *b = pb;
	if (a->k1 != b->k1)
		return a->k1 < b->k1 ? -1 : 1;
	if (a->k2 != b->k2)
		return a->k2 < b->k2 ? -1 : 1;
	if (a->k3 != b->k3)
		return a->k3 < b->k3 ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Sorts keys and writes their ids, in order, to out. */
static void sort_ids(Key *k, int n, int *out)
{
	qsort(k, (size_t)n, sizeof *k, key_cmp);
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

static void index_build(LifeIndex *ix, const ArBuf *b, int n)
{
	int *fill;
	Key *k;
	ix->b = b;
	ix->n = n;
	ix->t = ar_xmalloc(2 * (size_t)n * sizeof *ix->t);
	for (int i = 0; i < n; i++)
		ix->t[2 * i] = b[i].lo, ix->t[2 * i + 1] = b[i].hi;
	qsort(ix->t, 2 * (size_t)n, sizeof *ix->t, i64_cmp);
	ix->m = 0;
	for (int i = 0; i < 2 * n; i++)
		if (!ix->m || ix->t[ix->m - 1] != ix->t[i])
			ix->t[ix->m++] = ix->t[i];
	for (ix->leaves = 1; ix->leaves < ix->m; ix->leaves <<= 1)
		;
	ix->nstart = ar_xcalloc(2 * (size_t)ix->leaves + 1, sizeof(int));
	for (int i = 0; i < n; i++)
		FOR_COVER(ix, time_idx(ix, b[i].lo), time_idx(ix, b[i].hi), v,
			  ix->nstart[v + 1]++);
	for (int v = 0; v < 2 * ix->leaves; v++)
		ix->nstart[v + 1] += ix->nstart[v];
	ix->items = ar_xmalloc((size_t)ix->nstart[2 * ix->leaves] * sizeof(int));
	fill = ar_xmalloc(2 * (size_t)ix->leaves * sizeof(int));
	for (int v = 0; v < 2 * ix->leaves; v++)
		fill[v] = ix->nstart[v];
	for (int i = 0; i < n; i++)
		FOR_COVER(ix, time_idx(ix, b[i].lo), time_idx(ix, b[i].hi), v,
			  ix->items[fill[v]++] = i);
	free(fill);
	ix->bylo = ar_xmalloc((size_t)n * sizeof(int));
	k = ar_xmalloc((size_t)n * sizeof *k);
	for (int i = 0; i < n; i++)
		k[i] = (Key){ b[i].lo, 0, 0, i };
	sort_ids(k, n, ix->bylo);
	free(k);
}

static void index_free(LifeIndex *ix)
{
	free(ix->t), free(ix->nstart), free(ix->items), free(ix->bylo);
}

/*
 * Appends to *sp the spans of the placed buffers (offset >= 0) overlapping
 * buffer i in time: those alive at its lo, then those starting in (lo, hi).
 */
static int placed_overlaps(const LifeIndex *ix, int i, Span **sp, int *cap)
{
	const ArBuf *b = ix->b;
	int k = 0, lo, hi;
#define ADD(j)                                                              \
	do {                                                                \
		if ((j) != i && b[j].offset >= 0) {                         \
			if (k == *cap)                                      \
				*sp = ar_xrealloc(*sp, (size_t)(*cap *= 2) * \
						  sizeof **sp);             \
			(*sp)[k++] = (Span){ b[j].offset,                   \
					     b[j].offset + b[j].size };     \
		}                                                           \
	} while (0)
	for (int v = time_idx(ix, b[i].lo) + ix->leaves; v >= 1; v >>= 1)
		for (int e = ix->nstart[v]; e < ix->nstart[v + 1]; e++)
			ADD(ix->items[e]);
	lo = 0, hi = ix->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (b[ix->bylo[mid]].lo <= b[i].lo)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < ix->n && b[ix->bylo[lo]].lo < b[i].hi; lo++)
		ADD(ix->bylo[lo]);
#undef ADD
	return k;
}

/*
 * Lowest offset where size fits between the spans; with best_fit, the
 * smallest gap that holds it (ties: lowest), falling back to the top.
 */
static int64_t fit(Span *sp, int k, int64_t size, bool best_fit)
{
	int64_t cand = 0, best = -1, best_gap = INT64_MAX;
	qsort(sp, (size_t)k, sizeof *sp, span_cmp);
	for (int j = 0; j < k; j++) {
		int64_t gap = sp[j].off - cand;
		if (gap >= size) {
			if (!best_fit)
				return cand;
			if (gap < best_gap)
				best_gap = gap, best = cand;
		}
		if (sp[j].top > cand)
			cand = sp[j].top;
	}
	return best >= 0 ? best : cand;
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
	Key *k = ar_xmalloc((size_t)ne * sizeof *k);
	const ArBuf *b = ix->b;

	for (int i = 0; i < ix->n; i++) {
		live[time_idx(ix, b[i].lo)] += b[i].size;
		live[time_idx(ix, b[i].hi)] -= b[i].size;
	}
	for (int e = 0; e < ne; e++) {
		if (e)
			live[e] += live[e - 1];
		k[e] = (Key){ -live[e], 0, 0, e };
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
	Key *k = ar_xmalloc((size_t)n * sizeof *k);
	int *seq = ar_xmalloc((size_t)n * sizeof *seq);
	int64_t *rank = NULL, height = 0;
	int cap = 64;
	Span *sp = ar_xmalloc((size_t)cap * sizeof *sp);

	index_build(&ix, b, n);
	if (order == AR_GREEDY_BREADTH) {
		rank = ar_xmalloc((size_t)n * sizeof *rank);
		breadth_ranks(&ix, rank);
	}
	for (int i = 0; i < n; i++) {
		int64_t len = b[i].hi - b[i].lo;
		switch (order) {
		case AR_GREEDY_BREADTH:
			k[i] = (Key){ rank[i], -b[i].size, -len, i };
			break;
		case AR_GREEDY_LIFETIME:
			k[i] = (Key){ -len, -b[i].size, 0, i };
			break;
		default:
			k[i] = (Key){ -b[i].size, -len, 0, i };
			break;
		}
		b[i].offset = -1;
	}
	sort_ids(k, n, seq);
	for (int s = 0; s < n; s++) {
		int i = seq[s];
		int nk = placed_overlaps(&ix, i, &sp, &cap);
		b[i].offset = fit(sp, nk, b[i].size, order == AR_GREEDY_BREADTH);
		if (b[i].offset + b[i].size > height)
			height = b[i].offset + b[i].size;
	}
	index_free(&ix);
	free(k), free(seq), free(rank), free(sp);
	return height;
}
