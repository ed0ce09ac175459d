/*
 * dsa_blocks.c — block reduction: buffers that tile a rectangle of time
 * by bytes are solved as that one rectangle, a smaller instance the exact
 * search can finish.
 *
 * Two buffers with the same lifetime can sit one on the other, and a
 * buffer that ends at time c can hand its bytes to one of the same size
 * that starts at c; either pair, so joined, is a rectangle of time by
 * bytes: a block, itself a buffer ([lo, hi), size) to join again.  A
 * strip packed without waste and cut guillotine-wise (a perfect packing,
 * what the "holes" instances are before their holes) is rebuilt by
 * these two joins from its pieces up, cut by cut: only the pieces beside
 * a hole stay apart.  So are MiniMalloc's challenging instances, largely
 * (A: 154 buffers, 11 blocks; J: 409, 165): there the branch and bound
 * (exact.c), which stalls on the pieces, finishes the blocks, on D at its
 * peak-live bound (986,112, where the search of the pieces stopped 5%
 * higher).  What a block fixes (its members' order, the partner of each
 * join) may rule the best packing out, so the blocks' solution is only a
 * candidate: dsa.c tries it after an exact search of the buffers that
 * ends unproven (minimising) or before that search (with a capacity),
 * keeps it when it is lower than what it had, and goes on from it.
 *
 * Joins are made in passes, each one first every stack (all the blocks of
 * one lifetime, by id) and then every hand-over (at each time, the ending
 * and starting blocks of each size paired in id order), until a pass
 * joins nothing.  Each join makes one block of two or more, so there are
 * fewer than n, and each pass costs a sort of those alive: the work is
 * charged as such.  Member offsets are relative to their block, so a
 * placement of the blocks gives every buffer's offset by summing down the
 * joins: buffers of one stack are disjoint in bytes, those of a hand-over
 * in time, so the expansion is as valid as the blocks' placement.
 * The layer split (dsa_layers.c) labels these blocks, and then the same
 * loosened: each outermost stack's members apart, since a stack joins
 * every piece of one lifetime, and two strips may hold such pieces by
 * chance.
 */
#include "dsa_impl.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "sortkey.h"

typedef struct {
	int64_t *lo, *hi, *size;
	int64_t *rel;           /* offset within its parent block */
	int *parent;            /* -1 while alive (not joined) */
	int nb;                 /* blocks made, the buffers first */
	int *alive, na;         /* ids of the blocks not joined */
	ArSortKey *k;
	int *used;              /* pass stamp: joined during that pass */
} Blocks;

static int join(Blocks *s, int64_t lo, int64_t hi, int64_t size)
{
	int z = s->nb++;
	s->lo[z] = lo, s->hi[z] = hi, s->size[z] = size;
	s->parent[z] = -1;
	s->used[z] = 0;
	return z;
}

static void adopt(Blocks *s, int child, int z, int64_t rel, int pass)
{
	s->parent[child] = z;
	s->rel[child] = rel;
	s->used[child] = pass;
}

/* Rebuilds the list of blocks alive; returns how many. */
static int gather(Blocks *s)
{
	s->na = 0;
	for (int i = 0; i < s->nb; i++)
		if (s->parent[i] < 0)
			s->alive[s->na++] = i;
	return s->na;
}

/* Every run of blocks with one lifetime, stacked in id order. */
static bool stacks(Blocks *s, int pass)
{
	bool joined = false;
	for (int a = 0; a < s->na; a++) {
		int i = s->alive[a];
		s->k[a] = (ArSortKey){ s->lo[i], s->hi[i], 0, i };
	}
	ar_sort_keys(s->k, s->na);
	for (int a = 0, e; a < s->na; a = e) {
		int64_t y = 0;
		int z;
		for (e = a + 1; e < s->na && s->k[e].k1 == s->k[a].k1 &&
		     s->k[e].k2 == s->k[a].k2; e++)
			;
		if (e - a < 2)
			continue;
		z = join(s, s->k[a].k1, s->k[a].k2, 0);
		for (int q = a; q < e; q++) {
			adopt(s, s->k[q].id, z, y, pass);
			y += s->size[s->k[q].id];
		}
		s->size[z] = y;
		joined = true;
	}
	return joined;
}

/* At each time, the blocks ending there paired with those of their size
 * starting there, in id order; a block joins once per pass. */
static bool handovers(Blocks *s, int pass, ArSortKey *starts)
{
	bool joined = false;
	int na = s->na, p = 0;
	for (int a = 0; a < na; a++) {
		int i = s->alive[a];
		s->k[a] = (ArSortKey){ s->hi[i], s->size[i], 0, i };
		starts[a] = (ArSortKey){ s->lo[i], s->size[i], 0, i };
	}
	ar_sort_keys(s->k, na);
	ar_sort_keys(starts, na);
	for (int a = 0; a < na; a++) {
		const ArSortKey *e = &s->k[a];
		int x = e->id, y, z;
		if (s->used[x] == pass)
			continue;
		while (p < na && (starts[p].k1 < e->k1 ||
				  (starts[p].k1 == e->k1 &&
				   starts[p].k2 < e->k2) ||
				  (starts[p].k1 == e->k1 &&
				   starts[p].k2 == e->k2 &&
				   s->used[starts[p].id] == pass)))
			p++;
		if (p == na || starts[p].k1 != e->k1 || starts[p].k2 != e->k2)
			continue;
		y = starts[p++].id;
		assert(x != y && s->hi[x] == s->lo[y] &&
		       s->size[x] == s->size[y]);
		z = join(s, s->lo[x], s->hi[y], s->size[x]);
		adopt(s, x, z, 0, pass);
		adopt(s, y, z, 0, pass);
		joined = true;
	}
	return joined;
}

/* Joins blocks until a pass joins nothing or work runs out; returns how
 * many are alive. */
static int reduce(Blocks *s, ArBudget *work)
{
	ArSortKey *starts = ar_xmalloc((size_t)s->nb * sizeof *starts + 1);
	bool more = true;
	for (int pass = 1; more; pass++) {
		gather(s);
		if (!ar_budget_spend(work, 4 * (int64_t)s->na))
			break;
		more = stacks(s, pass);
		gather(s);
		more = handovers(s, pass, starts) || more;
	}
	free(starts);
	return gather(s);
}

/* Sets s up with b's n buffers as blocks and joins them; returns how
 * many blocks are alive. */
static int build(Blocks *s, const ArBuf *b, int n, ArBudget *work)
{
	s->lo = ar_xmalloc(2 * (size_t)n * sizeof *s->lo);
	s->hi = ar_xmalloc(2 * (size_t)n * sizeof *s->hi);
	s->size = ar_xmalloc(2 * (size_t)n * sizeof *s->size);
	s->rel = ar_xmalloc(2 * (size_t)n * sizeof *s->rel);
	s->parent = ar_xmalloc(2 * (size_t)n * sizeof *s->parent);
	s->used = ar_xmalloc(2 * (size_t)n * sizeof *s->used);
	s->alive = ar_xmalloc(2 * (size_t)n * sizeof *s->alive);
	s->k = ar_xmalloc(2 * (size_t)n * sizeof *s->k);
	for (int i = 0; i < n; i++)
		join(s, b[i].lo, b[i].hi, b[i].size);
	return reduce(s, work);
}

static void release(Blocks *s)
{
	free(s->lo), free(s->hi), free(s->size), free(s->rel);
	free(s->parent), free(s->used), free(s->alive), free(s->k);
}

int ar_dsa_block_of(const ArBuf *b, int n, bool loose, ArBudget *work,
		    ArBuf *block, int *of)
{
	Blocks s = { 0 };
	int m = build(&s, b, n, work), nu = 0;
	int *at = ar_xmalloc(2 * (size_t)n * sizeof *at);

	for (int i = 0; i < s.nb; i++)
		at[i] = -1;
	for (int a = 0; a < m; a++) {
		int i = s.alive[a];
		at[i] = nu;
		block[nu++] = (ArBuf){ s.lo[i], s.hi[i], s.size[i], 0 };
	}
	/* Loose: an outermost stack's members instead (a child of a block
	 * of its own lifetime is a stack's member, one of a hand-over
	 * is not).  Parents come after their children, so the stack's
	 * own unit, taken over by its first member, is never reached. */
	for (int c = 0; loose && c < s.nb; c++) {
		int p = s.parent[c];
		if (p >= 0 && s.parent[p] < 0 && s.lo[c] == s.lo[p] &&
		    s.hi[c] == s.hi[p]) {
			if (at[p] >= 0) {
				at[c] = at[p], at[p] = -2;
			} else {
				at[c] = nu++;
			}
			block[at[c]] = (ArBuf){ s.lo[c], s.hi[c], s.size[c],
						0 };
		}
	}
	/* Down the joins, as ar_dsa_blocks places them. */
	for (int i = s.nb - 1; i >= 0; i--)
		if (at[i] == -1 && s.parent[i] >= 0)
			at[i] = at[s.parent[i]];
	memcpy(of, at, (size_t)n * sizeof *of);
	free(at);
	release(&s);
	return nu;
}

int64_t ar_dsa_blocks(ArBuf *b, int n, int64_t capacity, ArBudget *work,
		      int64_t *nodes)
{
	Blocks s = { 0 };
	int64_t h = ar_dsa_height(b, n), *at;
	ArBuf *sub;
	ArDsaResult r;
	int m;

	if (n < 2)
		return h;
	m = build(&s, b, n, work);
	/* A few joins leave the same search to do: not worth a second one
	 * (and none would call this again on the same buffers). */
	if (4 * (int64_t)m > 3 * (int64_t)n || !ar_budget_left(work))
		goto out;
	sub = ar_xmalloc((size_t)m * sizeof *sub);
	for (int a = 0; a < m; a++) {
		int i = s.alive[a];
		sub[a] = (ArBuf){ s.lo[i], s.hi[i], s.size[i], 0 };
	}
	/* With a capacity, the exact search alone: auto's repair after it
	 * would spend half as much again on what is only a first try. */
	ar_dsa_solve(sub, m, capacity ? "exact" : "auto", capacity, work, &r);
	*nodes += r.nodes;
	if (r.height < h) {
		/* Offsets down the joins: a parent's id is above its
		 * children's, so it is known before theirs. */
		at = ar_xmalloc((size_t)s.nb * sizeof *at);
		for (int a = 0; a < m; a++)
			at[s.alive[a]] = sub[a].offset;
		for (int i = s.nb - 1; i >= 0; i--)
			if (s.parent[i] >= 0)
				at[i] = at[s.parent[i]] + s.rel[i];
		for (int i = 0; i < n; i++)
			b[i].offset = at[i];
		free(at);
		h = ar_dsa_height(b, n);
		assert(h == r.height);
	}
	free(sub);
out:
	release(&s);
	return h;
}
