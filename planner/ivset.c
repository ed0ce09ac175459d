/*
 * ivset.c — merged interval sets as treaps (ivset.h).
 *
 * Invariant of every set: its intervals are disjoint and no two touch
 * (a.hi < b.lo for consecutive a, b), so along the in-order sequence both
 * lo and hi increase; a heap on priorities (treap.h) keeps the expected depth
 * O(log n).
 * An insertion takes out everything it overlaps or touches and puts back
 * one interval spanning all of it.
 */
#include "ivset.h"
#include "treap.h"

#include <stdlib.h>

#include "graph.h"

void ar_iv_pool_init(ArIvPool *p)
{
	p->node = NULL;
	p->n = p->cap = 0;
	p->free = AR_IV_EMPTY;
}

void ar_iv_pool_free(ArIvPool *p)
{
	free(p->node);
	ar_iv_pool_init(p);
}

static int new_node(ArIvPool *p, int64_t lo, int64_t hi)
{
	int k;
	if (p->free != AR_IV_EMPTY) {
		k = p->free;
		p->free = p->node[k].left;
	} else {
		if (p->n == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 1024;
			p->node = ar_xrealloc(p->node,
					      (size_t)p->cap * sizeof *p->node);
		}
		k = p->n++;
	}
	p->node[k] = (ArIvNode){ lo, hi, AR_IV_EMPTY, AR_IV_EMPTY };
	return k;
}

static void free_tree(ArIvPool *p, int t)
{
	while (t != AR_IV_EMPTY) {
		int r = p->node[t].right;
		free_tree(p, p->node[t].left);
		p->node[t].left = p->free;
		p->free = t;
		t = r;
	}
}

/* *a gets the intervals with lo < key, *b the others. */
static void split(ArIvPool *p, int t, int64_t key, int *a, int *b)
{
	if (t == AR_IV_EMPTY) {
		*a = *b = AR_IV_EMPTY;
	} else if (p->node[t].lo < key) {
		split(p, p->node[t].right, key, &p->node[t].right, b);
		*a = t;
	} else {
		split(p, p->node[t].left, key, a, &p->node[t].left);
		*b = t;
	}
}

/* Every interval of a lies before every interval of b. */
static int merge(ArIvPool *p, int a, int b)
{
	if (a == AR_IV_EMPTY)
		return b;
	if (b == AR_IV_EMPTY)
		return a;
	if (ar_treap_priority(a) > ar_treap_priority(b)) {
		p->node[a].right = merge(p, p->node[a].right, b);
		return a;
	}
	p->node[b].left = merge(p, a, p->node[b].left);
	return b;
}

static int last(const ArIvPool *p, int t)
{
	while (t != AR_IV_EMPTY && p->node[t].right != AR_IV_EMPTY)
		t = p->node[t].right;
	return t;
}

void ar_iv_insert(ArIvPool *p, int *root, int64_t lo, int64_t hi)
{
	int left, mid, right, r;

	split(p, *root, lo, &left, &right);
	/* The last interval before lo may reach it. */
	r = last(p, left);
	if (r != AR_IV_EMPTY && p->node[r].hi >= lo) {
		int64_t rlo = p->node[r].lo;
		if (p->node[r].hi > hi)
			hi = p->node[r].hi;
		split(p, left, rlo, &left, &mid);
		free_tree(p, mid);
		lo = rlo;
	}
	/* Those starting in [lo, hi] are swallowed. */
	split(p, right, hi + 1, &mid, &right);
	r = last(p, mid);
	if (r != AR_IV_EMPTY && p->node[r].hi > hi)
		hi = p->node[r].hi;
	free_tree(p, mid);
	*root = merge(p, merge(p, left, new_node(p, lo, hi)), right);
}

int ar_iv_before(const ArIvPool *p, int t, int64_t x)
{
	int best = AR_IV_EMPTY;
	while (t != AR_IV_EMPTY) {
		if (p->node[t].lo < x) {
			best = t;
			t = p->node[t].right;
		} else {
			t = p->node[t].left;
		}
	}
	return best;
}

int ar_iv_after(const ArIvPool *p, int t, int64_t x)
{
	int best = AR_IV_EMPTY;
	while (t != AR_IV_EMPTY) {
		if (p->node[t].lo > x) {
			best = t;
			t = p->node[t].left;
		} else {
			t = p->node[t].right;
		}
	}
	return best;
}

bool ar_iv_covers(const ArIvPool *p, int root, int64_t lo, int64_t hi)
{
	int k = ar_iv_before(p, root, lo + 1);
	return k != AR_IV_EMPTY && p->node[k].hi >= hi;
}
