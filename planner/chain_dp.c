/*
 * chain_dp.c — the memory / recompute trade-off curve of a chain
 * (chain.h) by dynamic programming over its segments, in the spirit of
 * Beaumont et al.'s optimal checkpointing for heterogeneous chains
 * ("rotor", NeurIPS 2019 and 2021): a segment is a stage, its entries
 * (chain_options.c, chain_probe.c) are the ways to run it, measured on the
 * real step graphs once per block type.  The schedule is the one train/
 * emits: every freed activation is recomputed once, from the nearest
 * resident one, right before its first backward use, and stays until its
 * last.
 *
 * The memory model.  While segment (a, b) runs (its forward steps, its
 * recompute and backward steps) the live buffers are K, what the segments
 * left of it keep (the sum of their kept), and those owned at a or later
 * or by none, at most its measured peak.  A selection's model peak is the
 * largest K + peak over its segments; it is ar_plan's lower bound where
 * buffers stay with their owners, and the search plans every answer for
 * real.  Recompute FLOPs add up over the segments.
 *
 * The program runs from the end: the front of position a is the set of
 * (Q, cost) pairs, Q the peak of the rest of the chain over what is kept
 * before a, that no other pair beats in both, each with the segment that
 * starts it:
 *   front(L+1) = {(0, 0)},
 *   front(a)   = Pareto of (max(peak, kept + Q), cost + cost') over the
 *                segments (a, b), their entries, and (Q, cost') in
 *                front(b),
 * so front(0) is the whole curve, each point with a selection reaching
 * it, computed once for every budget: the search walks it.  Pairs above
 * `top`, the model peak of keeping everything (cost 0), are useless and
 * dropped.  On a complete chain the fronts are exact, and the cheapest
 * point under a budget is the optimum over every selection (checked
 * against brute force by the tests); pairs equal in both keep the first
 * in (b, entry, index) order.  Elsewhere each front keeps the cheapest
 * pair per QSLOTS-th of top (its true Q kept): a curve of at most QSLOTS
 * points per position, whatever the depth, and segments longer than
 * about 2 sqrt(L) units are not taken (a uniform chain's smallest peak
 * wants segments of about sqrt(L)).
 *
 * The smallest model peak has a program of its own (min over segments of
 * max(peak, kept + Q), exact), and its selection is planned too.
 */
#include "chain.h"

#include <stdlib.h>
#include <string.h>

#define QSLOTS 256

typedef struct State {
	int64_t q, cost;
	int b, e, j;            /* segment (a, b), its entry (-1: a long
				 * segment), the state of front(b) it joins */
} State;

struct ArFront {
	State *s;
	int n;
};

static int state_cmp(const void *x, const void *y)
{
	const State *a = x, *b = y;
	if (a->q != b->q)
		return a->q < b->q ? -1 : 1;
	if (a->cost != b->cost)
		return a->cost < b->cost ? -1 : 1;
	if (a->b != b->b)
		return a->b - b->b;
	if (a->e != b->e)
		return a->e - b->e;
	return a->j - b->j;
}

/* The longest segment the program takes. */
static int longest(const ArChain *c)
{
	int w = 2;
	if (c->complete)
		return c->wmax;
	while (w * w < 4 * (c->L + 2))
		w++;
	w += 2;
	if (w < c->D)
		w = c->D;
	return w < c->wmax ? w : c->wmax;
}

/* Entry e of segment (a, b) into *s; false past the longest known. */
static bool entry(const ArChain *c, int a, int b, int e, ArSeg *s)
{
	int n;
	const ArSeg *x;
	if (b - a > c->D)
		return e == 0 && ar_chain_long_seg(c, a, b, s);
	x = ar_chain_segs(c, a, b, &n);
	if (e >= n)
		return false;
	*s = x[e];
	return true;
}

typedef struct Buf {
	State *s;
	int n, cap;
} Buf;

static void push(Buf *b, State x)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->s = ar_xrealloc(b->s, (size_t)b->cap * sizeof *b->s);
	}
	b->s[b->n++] = x;
}

/* The model peak of keeping everything: option 0 on every unit. */
static int64_t keep_all(const ArChain *c)
{
	int64_t q = 0;
	for (int a = c->L; a >= 0; a--) {
		ArSeg s;
		entry(c, a, a + 1, 0, &s);
		q = ar_train_add(s.kept, q);
		if (s.peak > q)
			q = s.peak;
	}
	return q;
}

/* The cheapest state per slot of width r (0: exact, every state), then
 * the Pareto front of those by Q, into f. */
static void reduce(Buf *buf, int64_t r, int *slot, State *tmp,
		   struct ArFront *f)
{
	int64_t least = INT64_MAX;
	int kept = 0;
	if (r > 0) {
		int n = 0;
		for (int k = 0; k <= QSLOTS; k++)
			slot[k] = -1;
		for (int i = 0; i < buf->n; i++) {
			const State *x = &buf->s[i];
			int *k = &slot[x->q / r];
			if (*k < 0 || x->cost < buf->s[*k].cost ||
			    (x->cost == buf->s[*k].cost && x->q < buf->s[*k].q))
				*k = i;
		}
		for (int k = 0; k <= QSLOTS; k++)
			if (slot[k] >= 0)
				tmp[n++] = buf->s[slot[k]];
		memcpy(buf->s, tmp, (size_t)n * sizeof *tmp);
		buf->n = n;
	} else if (buf->n) {
		qsort(buf->s, (size_t)buf->n, sizeof *buf->s, state_cmp);
	}
	for (int j = 0; j < buf->n; j++)
		if (buf->s[j].cost < least) {
			least = buf->s[j].cost;
			buf->s[kept++] = buf->s[j];
		}
	f->s = ar_xmalloc(((size_t)kept + 1) * sizeof(State));
	memcpy(f->s, buf->s, (size_t)kept * sizeof(State));
	f->n = kept;
}

bool ar_chain_curve(ArChain *c, ArBudget *work)
{
	int np = c->L + 2, w = longest(c);
	int slot[QSLOTS + 1];
	State *tmp = ar_xmalloc((QSLOTS + 1) * sizeof *tmp);
	int64_t r;
	struct ArFront *f = ar_xcalloc((size_t)np, sizeof *f);
	Buf buf = {0};

	c->front = f;
	c->top = keep_all(c);
	r = c->complete ? 0 : c->top / QSLOTS + 1;
	f[np - 1].s = ar_xcalloc(1, sizeof(State));
	f[np - 1].n = 1;
	for (int a = np - 2; a >= 0; a--) {
		buf.n = 0;
		for (int b = a + 1; b < np && b - a <= w; b++) {
			ArSeg s;
			for (int e = 0; entry(c, a, b, e, &s); e++) {
				if (s.peak > c->top)
					continue;
				for (int j = 0; j < f[b].n; j++) {
					int64_t q = s.kept + f[b].s[j].q;
					if (q > c->top)
						break;
					push(&buf, (State){q > s.peak ? q : s.peak,
						ar_train_add(s.cost,
							     f[b].s[j].cost),
						b, b - a > c->D ? -1 : e, j});
				}
			}
		}
		if (!ar_budget_spend(work, buf.n / 16 + 1))
			break;
		reduce(&buf, r, slot, tmp, &f[a]);
	}
	free(buf.s);
	free(tmp);
	return f[0].s != NULL;
}

void ar_chain_curve_free(ArChain *c)
{
	for (int a = 0; c->front && a < c->L + 2; a++)
		free(c->front[a].s);
	free(c->front);
	c->front = NULL;
}

int ar_chain_npoints(const ArChain *c)
{
	return c->front[0].n;
}

int64_t ar_chain_point_peak(const ArChain *c, int k)
{
	return c->front[0].s[k].q;
}

/* Writes segment (a, b) run with entry e (-1: long) and its end point. */
static void take(const ArChain *c, int a, int b, int e, bool *res)
{
	ArSeg seg;
	entry(c, a, b, e < 0 ? 0 : e, &seg);
	ar_chain_apply(c, a, b, seg.combo, res);
	if (b <= c->L)
		res[c->point[b]] = true;
}

int64_t ar_chain_point(const ArChain *c, int k, bool *res, int64_t *peak)
{
	const State *s = &c->front[0].s[k];
	int64_t cost = s->cost;
	int a = 0, j = k;
	*peak = s->q;
	while (a < c->L + 1) {
		s = &c->front[a].s[j];
		take(c, a, s->b, s->e, res);
		a = s->b;
		j = s->j;
	}
	return cost;
}

int64_t ar_chain_smallest(const ArChain *c, bool *res, int64_t *peak)
{
	int np = c->L + 2, w = longest(c);
	int64_t *q = ar_xmalloc((size_t)np * sizeof *q), cost = 0;
	int *to = ar_xmalloc((size_t)np * sizeof(int));
	int *by = ar_xmalloc((size_t)np * sizeof(int));
	q[np - 1] = 0;
	for (int a = np - 2; a >= 0; a--) {
		q[a] = INT64_MAX;
		for (int b = a + 1; b < np && b - a <= w; b++) {
			ArSeg s;
			for (int e = 0; entry(c, a, b, e, &s); e++) {
				int64_t x = ar_train_add(s.kept, q[b]);
				if (s.peak > x)
					x = s.peak;
				if (x < q[a]) {
					q[a] = x;
					to[a] = b;
					by[a] = b - a > c->D ? -1 : e;
				}
			}
		}
	}
	*peak = q[0];
	for (int a = 0; a < np - 1; a = to[a]) {
		ArSeg s;
		entry(c, a, to[a], by[a] < 0 ? 0 : by[a], &s);
		cost = ar_train_add(cost, s.cost);
		take(c, a, to[a], by[a], res);
	}
	free(q);
	free(to);
	free(by);
	return cost;
}
