/*
 * dsa_improve.c — lowers the height of a valid placement by local search
 * over placement orders, for what the exact search (exact.c) leaves
 * unproven: its branch and bound finds the first heights below a greedy
 * seed fast, then stalls for millions of nodes on each next one, where
 * small changes to a good solution still find lower ones.
 *
 * A solution is an order of the buffers, decoded by first fit: each
 * buffer, in turn, at the lowest offset clear of the buffers before it
 * that overlap it in time.  That loses nothing: every placement is
 * matched or beaten by first fit in the order of its offsets (induction:
 * a buffer placed no higher than its offset there leaves the next one's
 * spot free, as in the seed, whose order is its offsets'), which is also
 * how the search starts from the placement it is given.  Buffers may be
 * pinned: they stay where they are, and first fit goes around them (the
 * window repair, dsa_repair.c, pins the neighbours of what it moves).
 *
 * One step moves one buffer to an earlier or any place in the order,
 * mostly a buffer reaching above the target (one unit of the sizes' gcd
 * below the best height), and decodes again from the first place that
 * changed.  It is kept when its cost is no worse: the squared excess of
 * the skyline (the highest top over each span between two event times)
 * above a level a third of the way from the lower bound to the target.
 * Height alone is flat over almost every step; the skyline below the
 * target says which steps make room there.  Moves come from a fixed
 * xorshift sequence and the cost is summed in one order, so every run
 * takes the same steps.  Work: UNIT_COST units per placed buffer a
 * decode passes and per span the cost looks at, which takes about as long
 * as UNIT_COST of the exact search's units.
 */
#include "dsa_impl.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "sortkey.h"

#define UNIT_COST 2

typedef struct {
	const ArBuf *b;
	int n, nfree;           /* b[nfree..n) are pinned where they are */
	int *ord, *pos;         /* the order of the free buffers tried and
				   each one's place (-1: pinned) */
	int64_t *off;           /* its decode */
	int *lst, *acc;         /* placed buffers by (offset, id): tried, kept */
	int *slo, *shi;         /* spans [slo, shi) each buffer is live over */
	int nspan;
	int64_t *sky;
	int64_t units;          /* work of the step being taken */
	uint64_t rng;
} Improve;

static uint64_t next_rand(Improve *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static bool before(const Improve *s, int a, int b)
{
	return s->off[a] < s->off[b] || (s->off[a] == s->off[b] && a < b);
}

static void insert_sorted(Improve *s, int *lst, int *nl, int x)
{
	int p = *nl;
	while (p > 0 && before(s, x, lst[p - 1])) {
		lst[p] = lst[p - 1];
		p--;
	}
	lst[p] = x;
	(*nl)++;
	s->units += *nl - p;
}

/*
 * First fit of ord[from..] over the kept placement of ord[..from): the
 * placed buffers are walked in offset order, so the lowest gap of the
 * buffer's size between those it meets in time is the first one found.
 */
static void decode(Improve *s, int from)
{
	const ArBuf *b = s->b;
	int nl = 0;

	for (int k = from; k < s->nfree; k++)
		s->pos[s->ord[k]] = k;
	for (int i = 0; i < s->n; i++)
		if (s->pos[s->acc[i]] < from)
			s->lst[nl++] = s->acc[i];
	for (int k = from; k < s->nfree; k++) {
		int x = s->ord[k];
		int64_t o = 0;
		for (int q = 0; q < nl; q++) {
			int j = s->lst[q];
			if (s->off[j] >= o + b[x].size) {
				s->units += q;
				break;
			}
			if (b[j].lo < b[x].hi && b[x].lo < b[j].hi &&
			    s->off[j] + b[j].size > o)
				o = s->off[j] + b[j].size;
			if (q + 1 == nl)
				s->units += nl;
		}
		s->off[x] = o;
		insert_sorted(s, s->lst, &nl, x);
	}
	assert(nl == s->n);
}

static int64_t height_of(const Improve *s)
{
	int64_t h = 0;
	for (int i = 0; i < s->n; i++)
		if (s->off[i] + s->b[i].size > h)
			h = s->off[i] + s->b[i].size;
	return h;
}

/* Squared excess of the skyline over level, in units of g. */
static double cost(Improve *s, int64_t level, int64_t g)
{
	double c = 0;
	memset(s->sky, 0, (size_t)s->nspan * sizeof *s->sky);
	for (int i = 0; i < s->n; i++) {
		int64_t top = s->off[i] + s->b[i].size;
		for (int k = s->slo[i]; k < s->shi[i]; k++)
			if (top > s->sky[k])
				s->sky[k] = top;
		s->units += s->shi[i] - s->slo[i];
	}
	for (int k = 0; k < s->nspan; k++)
		if (s->sky[k] > level) {
			double e = (double)((s->sky[k] - level) / g);
			c += e * e;
		}
	return c;
}

static int i64_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return (a > b) - (a < b);
}

static int time_idx(const int64_t *t, int m, int64_t v)
{
	int lo = 0, hi = m - 1;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (t[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int ar_dsa_spans(const ArBuf *b, int n, int **slo, int **shi)
{
	int m = 0;
	int64_t *t = ar_xmalloc(2 * (size_t)n * sizeof *t + 1);
	for (int i = 0; i < n; i++)
		t[2 * i] = b[i].lo, t[2 * i + 1] = b[i].hi;
	qsort(t, 2 * (size_t)n, sizeof *t, i64_cmp);
	for (int i = 0; i < 2 * n; i++)
		if (!m || t[m - 1] != t[i])
			t[m++] = t[i];
	*slo = ar_xmalloc((size_t)n * sizeof **slo + 1);
	*shi = ar_xmalloc((size_t)n * sizeof **shi + 1);
	for (int i = 0; i < n; i++) {
		(*slo)[i] = time_idx(t, m, b[i].lo);
		(*shi)[i] = time_idx(t, m, b[i].hi);
	}
	free(t);
	return m > 0 ? m - 1 : 0;
}

/* Moves the buffer at place p to place q. */
static void move(int *ord, int p, int q)
{
	int x = ord[p];
	if (q < p)
		memmove(ord + q + 1, ord + q, (size_t)(p - q) * sizeof *ord);
	else
		memmove(ord + p, ord + p + 1, (size_t)(q - p) * sizeof *ord);
	ord[q] = x;
}

/* A free buffer above cap (the height is) three times in four, else
 * any free one. */
static int pick(Improve *s, int64_t cap, int *cand)
{
	int nc = 0;
	for (int i = 0; i < s->nfree; i++)
		if (s->off[i] + s->b[i].size > cap)
			cand[nc++] = i;
	assert(nc > 0);
	if (next_rand(s) % 4)
		return cand[next_rand(s) % (uint64_t)nc];
	return (int)(next_rand(s) % (uint64_t)s->nfree);
}

int64_t ar_dsa_improve(ArBuf *b, int n, int64_t lower_bound, ArBudget *work)
{
	return ar_dsa_improve_pinned(b, n, n, lower_bound, work);
}

int64_t ar_dsa_improve_pinned(ArBuf *b, int n, int nfree,
			      int64_t lower_bound, ArBudget *work)
{
	Improve s = { .b = b, .n = n, .nfree = nfree,
		      .rng = 0x9E3779B97F4A7C15u };
	int64_t g = 0, best = ar_dsa_height(b, n), cap, level;
	int *keep_ord, *cand;
	int64_t *keep_off;
	ArSortKey *k;
	double cur;

	for (int i = 0; i < n; i++)
		g = ar_dsa_gcd(b[i].size, g);
	/* A decode passes about n * n / 2 placed buffers: where the work
	 * cannot pay for 64 of them, the search would get nowhere. */
	for (int i = nfree; i < n; i++)
		assert(b[i].offset + b[i].size <= lower_bound);
	if (nfree < 2 || best - g < lower_bound || !ar_budget_left(work) ||
	    (int64_t)n * n / 2 > work->left / UNIT_COST / 64)
		return best;
	s.ord = ar_xmalloc((size_t)n * sizeof *s.ord);
	s.pos = ar_xmalloc((size_t)n * sizeof *s.pos);
	s.off = ar_xmalloc((size_t)n * sizeof *s.off);
	s.lst = ar_xmalloc((size_t)n * sizeof *s.lst);
	s.acc = ar_xmalloc((size_t)n * sizeof *s.acc);
	keep_ord = ar_xmalloc((size_t)n * sizeof *keep_ord);
	keep_off = ar_xmalloc((size_t)n * sizeof *keep_off);
	cand = ar_xmalloc((size_t)n * sizeof *cand);
	s.nspan = ar_dsa_spans(b, n, &s.slo, &s.shi);
	s.sky = ar_xmalloc((size_t)s.nspan * sizeof *s.sky);
	k = ar_xmalloc((size_t)n * sizeof *k);
	for (int i = 0; i < n; i++) {
		k[i] = (ArSortKey){ b[i].offset, 0, 0, i };
		s.off[i] = b[i].offset;
		s.pos[i] = -1;
	}
	ar_sort_keys(k, n);
	for (int i = 0, f = 0; i < n; i++) {
		s.acc[i] = k[i].id;
		if (k[i].id < nfree)
			s.ord[f++] = k[i].id;
	}
	free(k);
	decode(&s, 0);
	assert(height_of(&s) <= best);
	if (height_of(&s) < best) {
		best = height_of(&s);
		for (int i = 0; i < n; i++)
			b[i].offset = s.off[i];
	}
	memcpy(s.acc, s.lst, (size_t)n * sizeof *s.acc);
	cap = height_of(&s) - g;
	level = cap - (cap - lower_bound) / 3;
	cur = cost(&s, level, g);
	/* No height below the proven lower bound is worth a step. */
	while (cap >= lower_bound &&
	       ar_budget_spend(work, UNIT_COST * s.units)) {
		int x = pick(&s, cap, cand), p, q, *t;
		double c;
		s.units = 1;
		p = s.pos[x];
		/* Earlier or anywhere, drawn in turn (a fixed sequence). */
		q = next_rand(&s) % 2 ? p + 1 : nfree;
		q = (int)(next_rand(&s) % (uint64_t)q);
		if (q == p)
			continue;
		memcpy(keep_ord, s.ord, (size_t)nfree * sizeof *keep_ord);
		memcpy(keep_off, s.off, (size_t)n * sizeof *keep_off);
		move(s.ord, p, q);
		decode(&s, p < q ? p : q);
		c = cost(&s, level, g);
		if (c > cur) {
			memcpy(s.ord, keep_ord, (size_t)nfree * sizeof *s.ord);
			memcpy(s.off, keep_off, (size_t)n * sizeof *s.off);
			for (int i = 0; i < nfree; i++)
				s.pos[s.ord[i]] = i;
			continue;
		}
		t = s.acc, s.acc = s.lst, s.lst = t;
		cur = c;
		if (height_of(&s) <= cap) {
			best = height_of(&s);
			for (int i = 0; i < n; i++)
				b[i].offset = s.off[i];
			cap = best - g;
			level = cap - (cap - lower_bound) / 3;
			cur = cost(&s, level, g);
		}
	}
	free(s.ord), free(s.pos), free(s.off), free(s.lst), free(s.acc);
	free(s.slo), free(s.shi), free(s.sky);
	free(keep_ord), free(keep_off), free(cand);
	return best;
}
