/*
 * tlinuse.c — the bytes of the arena in use at each step, for the
 * timeline's chart and hover titles.
 *
 * In use means covered by some live tensor's padded range, so views and
 * in-place pairs, which share bytes, count once.  A sweep over the steps
 * keeps the covered length of the union in a segment tree over the
 * ranges' ends (the classic union-of-intervals measure): each tensor is
 * added once and removed once, so a 50,000-wide fan-out, whose outputs
 * all live to the end, costs n log n and not n squared.
 */
#include <assert.h>
#include <stdlib.h>

#include "timeline.h"

typedef struct Tree {
	int n;                  /* elementary intervals */
	const int64_t *at;      /* their ends: interval i is [at[i], at[i+1]) */
	int *count;             /* per node: ranges covering it whole */
	int64_t *covered;       /* per node: bytes covered below it */
} Tree;

static void tree_add(Tree *t, int node, int lo, int hi, int a, int b, int d)
{
	if (b <= lo || hi <= a)
		return;
	if (a <= lo && hi <= b) {
		t->count[node] += d;
	} else {
		int mid = (lo + hi) / 2;
		tree_add(t, 2 * node, lo, mid, a, b, d);
		tree_add(t, 2 * node + 1, mid, hi, a, b, d);
	}
	assert(t->count[node] >= 0);
	if (t->count[node] > 0)
		t->covered[node] = t->at[hi] - t->at[lo];
	else if (hi - lo == 1)
		t->covered[node] = 0;
	else
		t->covered[node] = t->covered[2 * node] + t->covered[2 * node + 1];
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Index of v among the sorted, unique ends. */
static int end_index(const int64_t *at, int n, int64_t v)
{
	const int64_t *hit = bsearch(&v, at, (size_t)n, sizeof *at, cmp_i64);
	assert(hit);
	return (int)(hit - at);
}

/* Tensors sorted by a step of theirs (first, or last + 1): a counting
 * sort, since steps are few. */
static int *by_step(const ArGraph *g, const ArPlan *p, bool last, int *n)
{
	int *at = ar_xcalloc((size_t)p->nsteps + 3, sizeof *at);
	int *out = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *out);

	*n = 0;
	for (int t = 0; t < g->ntensors; t++)
		if (ar_tl_drawn(g, p, t)) {
			at[(last ? p->slots[t].last + 1 : p->slots[t].first) + 1]++;
			(*n)++;
		}
	for (int s = 0; s <= p->nsteps; s++)
		at[s + 1] += at[s];
	for (int t = 0; t < g->ntensors; t++)
		if (ar_tl_drawn(g, p, t))
			out[at[last ? p->slots[t].last + 1 : p->slots[t].first]++] = t;
	free(at);
	return out;
}

/* Adds (d = 1) or removes (d = -1) tensor x's padded range. */
static void change(Tree *t, const ArGraph *g, const ArPlan *p, int x, int d)
{
	int64_t lo = ar_gv_place(p, x);
	int64_t hi = lo + ar_plan_padded(p, g->tensors[x].bytes);
	tree_add(t, 1, 0, t->n, end_index(t->at, t->n + 1, lo),
		 end_index(t->at, t->n + 1, hi), d);
}

void ar_tl_in_use(const ArGraph *g, const ArPlan *p, int64_t *used)
{
	int64_t *ends = ar_xmalloc((2 * (size_t)g->ntensors + 2) * sizeof *ends);
	int n = 0, k = 0, nborn, ndead, born = 0, dead = 0;
	int *births = by_step(g, p, false, &nborn);
	int *deaths = by_step(g, p, true, &ndead);
	Tree t;

	for (int i = 0; i < g->ntensors; i++)
		if (ar_tl_drawn(g, p, i)) {
			ends[n] = ar_gv_place(p, i);
			ends[n + 1] = ends[n] + ar_plan_padded(p, g->tensors[i].bytes);
			n += 2;
		}
	qsort(ends, (size_t)n, sizeof *ends, cmp_i64);
	for (int i = 0; i < n; i++)
		if (k == 0 || ends[i] != ends[k - 1])
			ends[k++] = ends[i];
	t.n = k > 0 ? k - 1 : 0;
	t.at = ends;
	t.count = ar_xcalloc(4 * (size_t)t.n + 4, sizeof *t.count);
	t.covered = ar_xcalloc(4 * (size_t)t.n + 4, sizeof *t.covered);
	for (int s = 0; s < p->nsteps; s++) {
		for (; dead < ndead && p->slots[deaths[dead]].last < s; dead++)
			change(&t, g, p, deaths[dead], -1);
		for (; born < nborn && p->slots[births[born]].first == s; born++)
			change(&t, g, p, births[born], 1);
		used[s] = t.n > 0 ? t.covered[1] : 0;
	}
	free(ends), free(births), free(deaths), free(t.count), free(t.covered);
}
