/*
 * exact.c — complete branch and bound for offset assignment, after
 * MiniMalloc (M. Moffitt, "MiniMalloc: A Lightweight Memory Allocator for
 * Hardware-Accelerated Machine Learning", ASPLOS 2023).
 *
 * The question asked of the search is always "is there a solution of
 * height <= cap?"; minimising is a sequence of such probes between the
 * lower bound and the best height known.
 *
 * Invariants of the search:
 *   - canonical: each buffer goes at its minimum offset (0 or the top of a
 *     placed buffer it overlaps in time), and placements are in
 *     non-decreasing (offset, preorder) order, so each solution shape is
 *     reached once;
 *   - sections are the maximal sets of buffers alive at one time, so every
 *     time-overlapping pair shares one, and a section's floor is a lower
 *     bound on the offset of any of its unplaced buffers; a node is pruned
 *     when some section's floor (or the current offset, placement being
 *     monotonic) plus its unplaced bytes exceeds cap;
 *   - dominance: no buffer is placed at or above the lowest top any
 *     unplaced buffer could reach, since that one would fill the gap;
 *   - once no unplaced buffer spans two adjacent sections, the two sides
 *     are independent and are solved one after the other;
 *   - pinned buffers (the window repair's neighbours, dsa_repair.c) keep
 *     their offset: one goes at it when the sequence reaches it, and the
 *     node dies once one no longer can (its minimum offset passed it, or
 *     the sequence did).  Still complete: in a solution whose free buffers
 *     cannot move down, each rests on a buffer placed before it, pinned or
 *     not, so it is at its minimum offset as above; only the free count
 *     for dominance, a pinned buffer filling no gap but its own;
 *   - everything changed at a node is trailed and restored exactly on the
 *     way back, so a failed branch leaves no trace; only sol[] keeps the
 *     offsets of the branch that succeeded.
 * Static preorders (by lifetime width, area and section total, as
 * MiniMalloc's WAT/TAW/TWA) are tried round-robin under a node budget that
 * doubles each round, since one order often finds in hundreds of nodes
 * what another misses in millions; an exhausted search under any order is
 * a proof that none fits.  All of it draws on one work budget (budget.h)
 * in units of buffers and sections visited: a node costs one per buffer
 * it orders, a placement one per section and overlap it looks at.
 */
#include "dsa_impl.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/* ABORTED: a round's node budget ran out; SPENT: the work budget did. */
enum { FOUND, NOTFOUND, ABORTED, SPENT, TOOBIG };

/*
 * Each node keeps its children (the unplaced buffers that may go next)
 * while they run: few on a deep path, but up to every unplaced buffer
 * where many sit at the same offset; past this the search gives up on the
 * component (left to the heuristics) rather than exhaust memory.
 */
#define PATH_BYTES_MAX ((size_t)256 << 20)

typedef struct {
	int idx;
	int64_t old;
} Change;

typedef struct {
	Change *c;
	int n, cap;
} Trail;

typedef struct {
	int *buf;               /* buffers of the partition, placed or not */
	int nb;
	int s0, s1;             /* its sections [s0, s1) */
} Part;

typedef struct {
	int n;
	const int64_t *lo, *hi, *size;
	int *ostart, *ovl;      /* buffers overlapping each one in time */
	int ns;
	int *sstart, *smem;     /* buffers of each section */
	int *slo, *shi;         /* sections of each buffer: [slo, shi) */

	int64_t cap;
	const int64_t *pin;     /* a pinned buffer's fixed offset, or -1;
				   NULL: none pinned */
	int64_t *off;           /* -1 while unplaced */
	int64_t *minoff;        /* lowest offset clear of placed overlaps;
				   INT64_MAX once placed, so that minima
				   over a section skip placed buffers */
	int64_t *sol;
	int64_t *floor, *total; /* per section */
	int64_t *smin;          /* lowest minoff of its unplaced buffers */
	int *cuts;              /* unplaced buffers spanning sections s, s+1 */
	int *stamp, stampv, *aff;
	Trail mt, ft, st;       /* minoff, floor and smin changes */
	const char *heur;
	int64_t nodes, budget;
	ArBudget *work;
	int64_t visits;         /* placements' work not yet charged */
	size_t path_bytes;
	int stop;               /* ABORTED, SPENT or TOOBIG once hit */
} Search;

static void trail(Trail *t, int idx, int64_t old)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->c = ar_xrealloc(t->c, (size_t)t->cap * sizeof *t->c);
	}
	t->c[t->n++] = (Change){ idx, old };
}

static void untrail(Trail *t, int mark, int64_t *arr)
{
	while (t->n > mark) {
		t->n--;
		arr[t->c[t->n].idx] = t->c[t->n].old;
	}
}

/* Section c lost or raised its lowest unplaced buffer: recompute. */
static void mark(Search *s, int c, int *naff)
{
	if (s->stamp[c] != s->stampv) {
		s->stamp[c] = s->stampv;
		s->aff[(*naff)++] = c;
	}
}

static void place(Search *s, int id, int64_t o)
{
	int64_t top = o + s->size[id];
	int naff = 0;

	s->off[id] = o;
	trail(&s->mt, id, s->minoff[id]);
	s->minoff[id] = INT64_MAX;
	s->stampv++;
	/* Its section-mates must all go above it, placement being monotonic. */
	for (int c = s->slo[id]; c < s->shi[id]; c++) {
		trail(&s->ft, c, s->floor[c]);
		s->floor[c] = top;
		s->total[c] -= s->size[id];
		if (o == s->smin[c])
			mark(s, c, &naff);
	}
	for (int e = s->ostart[id]; e < s->ostart[id + 1]; e++) {
		int j = s->ovl[e];
		if (s->minoff[j] >= top)
			continue;
		s->visits += s->shi[j] - s->slo[j];
		for (int c = s->slo[j]; c < s->shi[j]; c++)
			if (s->minoff[j] == s->smin[c])
				mark(s, c, &naff);
		trail(&s->mt, j, s->minoff[j]);
		s->minoff[j] = top;
	}
	s->visits += (s->shi[id] - s->slo[id]) +
		     (s->ostart[id + 1] - s->ostart[id]);
	/* No unplaced buffer of a section can go below the lowest of them. */
	for (int a = 0; a < naff; a++) {
		int c = s->aff[a];
		s->visits += s->sstart[c + 1] - s->sstart[c];
		int64_t lowest = INT64_MAX;
		for (int e = s->sstart[c]; e < s->sstart[c + 1]; e++)
			if (s->minoff[s->smem[e]] < lowest)
				lowest = s->minoff[s->smem[e]];
		trail(&s->st, c, s->smin[c]);
		s->smin[c] = lowest;
		if (lowest != INT64_MAX && s->floor[c] < lowest) {
			trail(&s->ft, c, s->floor[c]);
			s->floor[c] = lowest;
		}
	}
}

static void unplace(Search *s, int id, const int mark[3])
{
	untrail(&s->st, mark[2], s->smin);
	untrail(&s->ft, mark[1], s->floor);
	for (int c = s->slo[id]; c < s->shi[id]; c++)
		s->total[c] += s->size[id];
	untrail(&s->mt, mark[0], s->minoff);
	s->off[id] = -1;
}

static bool fits(Search *s, const Part *pt, int64_t o)
{
	s->visits += pt->s1 - pt->s0;
	for (int c = pt->s0; c < pt->s1; c++) {
		int64_t f = s->floor[c] > o ? s->floor[c] : o;
		if (f + s->total[c] > s->cap)
			return false;
	}
	return true;
}

/*
 * The unplaced buffers of one subsolve, by preorder position, in no
 * particular order: a placement swaps its buffer out to the end, its undo
 * swaps it back, so the set costs no copy per node.
 */
typedef struct {
	int *p;                 /* positions, the unplaced first */
	int *where;             /* where[q]: index of position q in p */
	int n;                  /* how many are unplaced */
} Unplaced;

static void take_out(Unplaced *u, int q)
{
	int i = u->where[q], last = u->p[--u->n];
	u->p[i] = last, u->where[last] = i;
	u->p[u->n] = q, u->where[q] = u->n;
}

/* Undoes take_out(u, q) from where q was, i. */
static void put_back(Unplaced *u, int q, int i)
{
	int other = u->p[i];
	assert(u->p[u->n] == q);
	u->p[i] = q, u->where[q] = i;
	u->p[u->n] = other, u->where[other] = u->n;
	u->n++;
}

typedef struct {
	int64_t o;
	int p;
} Cand;

/* Ascending by (minimum offset, preorder position). */
static int cand_cmp(const void *pa, const void *pb)
{
	const Cand *a = pa, *b = pb;
	if (a->o != b->o)
		return a->o < b->o ? -1 : 1;
	return a->p - b->p;
}

/* Where buffer id goes if it is placed next: its minimum offset, or, when
 * pinned, its own offset. */
static int64_t cand_off(const Search *s, int id)
{
	return s->pin && s->pin[id] >= 0 ? s->pin[id] : s->minoff[id];
}

static int subsolve(Search *s, const Part *pt);

static int search(Search *s, const Part *pt, const int *pre, Unplaced *u,
		  int nord, int64_t last_o, int last_p);

/*
 * After buffer id went at o: if that left sections with no unplaced buffer
 * spanning their boundary, solve the pieces independently.
 */
static int decompose(Search *s, const Part *pt, const int *pre,
		     Unplaced *u, int nord, int64_t o, int p, int id)
{
	int *cut = ar_xmalloc((size_t)(s->shi[id] - s->slo[id]) * sizeof *cut);
	int ncut = 0, st = FOUND;

	s->sol[id] = o;
	for (int c = s->slo[id]; c + 1 < s->shi[id]; c++)
		if (--s->cuts[c] == 0)
			cut[ncut++] = c + 1;
	if (!ncut) {
		st = search(s, pt, pre, u, nord, o, p);
	} else {
		int *sub = ar_xmalloc((size_t)pt->nb * sizeof *sub);
		for (int k = 0, lo = pt->s0; k <= ncut && st == FOUND; k++) {
			Part sp = { sub, 0, lo, k < ncut ? cut[k] : pt->s1 };
			for (int i = 0; i < pt->nb; i++) {
				int j = pt->buf[i];
				if (s->off[j] < 0 && s->slo[j] < sp.s1 &&
				    s->shi[j] > sp.s0)
					sub[sp.nb++] = j;
			}
			if (sp.nb)
				st = subsolve(s, &sp);
			lo = sp.s1;
		}
		free(sub);
	}
	for (int c = s->slo[id]; c + 1 < s->shi[id]; c++)
		s->cuts[c]++;
	free(cut);
	return st;
}

/*
 * A node: the children are the unplaced buffers whose minimum offset is
 * below the lowest top any of them could reach (dominance), ascending by
 * (offset, preorder position), from (last_o, last_p) on (canonical).  Only
 * those are kept on the path, not every unplaced buffer, so a deep path
 * over tens of thousands of buffers stays small.  nord: the unplaced
 * buffers at the parent, what the node is charged for ordering.
 */
static int search(Search *s, const Part *pt, const int *pre, Unplaced *u,
		  int nord, int64_t last_o, int last_p)
{
	Cand *cur;
	int nc = 0, st = NOTFOUND;
	int64_t min_top = INT64_MAX;

	if (s->stop)
		return s->stop;
	if (--s->budget < 0)
		return s->stop = ABORTED;
	s->nodes++;
	if (!ar_budget_spend(s->work, 1 + nord + s->visits))
		return s->stop = SPENT;
	s->visits = 0;
	if (s->path_bytes > PATH_BYTES_MAX)
		return s->stop = TOOBIG;
	if (!u->n)
		return FOUND;
	for (int k = 0; k < u->n; k++) {
		int id = pre[u->p[k]];
		if (s->pin && s->pin[id] >= 0) {
			/* Pinned: no later node can place it any more. */
			if (s->minoff[id] > s->pin[id] ||
			    s->pin[id] < last_o ||
			    (s->pin[id] == last_o && u->p[k] < last_p))
				return NOTFOUND;
		} else if (s->minoff[id] + s->size[id] < min_top) {
			min_top = s->minoff[id] + s->size[id];
		}
	}
	for (int k = 0; k < u->n; k++)
		nc += cand_off(s, pre[u->p[k]]) < min_top;
	s->path_bytes += (size_t)nc * sizeof *cur;
	cur = ar_xmalloc((size_t)nc * sizeof *cur);
	nc = 0;
	for (int k = 0; k < u->n; k++) {
		int q = u->p[k];
		if (cand_off(s, pre[q]) < min_top)
			cur[nc++] = (Cand){ cand_off(s, pre[q]), q };
	}
	qsort(cur, (size_t)nc, sizeof *cur, cand_cmp);
	for (int k = 0, nu = u->n; k < nc && st == NOTFOUND; k++) {
		int p = cur[k].p, id = pre[p], i = u->where[p];
		int64_t o = cur[k].o;
		int mark[3] = { s->mt.n, s->ft.n, s->st.n };
		if (o < last_o || (o == last_o && p < last_p))
			continue;
		place(s, id, o);
		take_out(u, p);
		if (fits(s, pt, o))
			st = decompose(s, pt, pre, u, nu, o, p, id);
		put_back(u, p, i);
		unplace(s, id, mark);
	}
	s->path_bytes -= (size_t)nc * sizeof *cur;
	free(cur);
	return st;
}

typedef struct {
	int64_t k[3];
	int id;
} Pre;

static int pre_cmp(const void *pa, const void *pb)
{
	const Pre *a = pa, *b = pb;
	for (int i = 0; i < 3; i++)
		if (a->k[i] != b->k[i])
			return a->k[i] < b->k[i] ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Orders the unplaced buffers of pt by the heuristic, then searches. */
static int subsolve(Search *s, const Part *pt)
{
	Pre *pd = ar_xmalloc((size_t)pt->nb * sizeof *pd);
	int *pre = ar_xmalloc((size_t)pt->nb * sizeof *pre);
	Unplaced u = { ar_xmalloc((size_t)pt->nb * sizeof(int)),
		       ar_xmalloc((size_t)pt->nb * sizeof(int)), 0 };
	int m = 0, st;

	for (int i = 0; i < pt->nb; i++) {
		int j = pt->buf[i];
		int64_t width = s->hi[j] - s->lo[j], total = 0, area;
		if (s->off[j] >= 0)
			continue;
		for (int c = s->slo[j]; c < s->shi[j]; c++)
			if (s->total[c] > total)
				total = s->total[c];
		/* Width times size passes 2^63 for tensors near 2^62 bytes
		 * (a fuzzed model): such an area sorts first, as the
		 * largest it is. */
		if (!ar_mul64(width, s->size[j], &area))
			area = INT64_MAX;
		pd[m].id = j;
		for (int h = 0; h < 3; h++)
			pd[m].k[h] = s->heur[h] == 'W' ? -width
				   : s->heur[h] == 'A' ? -area : -total;
		m++;
	}
	qsort(pd, (size_t)m, sizeof *pd, pre_cmp);
	u.n = m;
	for (int i = 0; i < m; i++)
		pre[i] = pd[i].id, u.p[i] = u.where[i] = i;
	st = search(s, pt, pre, &u, m, 0, 0);
	free(pd), free(pre), free(u.p), free(u.where);
	return st;
}

typedef struct {
	int64_t t;
	int start, id;
} Point;

static int point_cmp(const void *pa, const void *pb)
{
	const Point *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->start != b->start)
		return a->start - b->start;
	return a->id - b->id;
}

typedef struct {
	int *v;
	size_t n, cap;
} IntVec;

static void push(IntVec *v, int x)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		v->v = ar_xrealloc(v->v, v->cap * sizeof *v->v);
	}
	v->v[v->n++] = x;
}

/*
 * What build's tables cost: a unit per overlapping pair and per section
 * member, both quadratic where thousands of buffers live at once (a deep
 * training step), so they are paid for before they are made.
 */
static int64_t table_cost(const Point *pt, int n)
{
	int64_t cost = n, na = 0;
	bool grown = false;
	for (int e = 0; e < 2 * n; e++) {
		if (pt[e].start) {
			cost += na++;
			grown = true;
		} else {
			cost += grown ? na : 0;
			grown = false;
			na--;
		}
	}
	return cost;
}

/*
 * Sections and overlaps by one sweep: a section is emitted at the first
 * end after some start, which is exactly when the live set is maximal.
 * Ends sort before starts at the same time (lifetimes are half-open).
 * False, with nothing built, when work cannot pay for the tables.
 */
static bool build(Search *s, int n, const int64_t *lo, const int64_t *hi,
		  const int64_t *size, ArBudget *work)
{
	Point *pt = ar_xmalloc(2 * (size_t)n * sizeof *pt);
	int *act, *pos, *deg;
	IntVec pairs = { 0 }, sstart = { 0 }, smem = { 0 };
	int na = 0;
	bool grown = false;

	for (int i = 0; i < n; i++) {
		pt[2 * i] = (Point){ lo[i], 1, i };
		pt[2 * i + 1] = (Point){ hi[i], 0, i };
	}
	qsort(pt, 2 * (size_t)n, sizeof *pt, point_cmp);
	if (!ar_budget_spend(work, table_cost(pt, n))) {
		free(pt);
		return false;
	}
	act = ar_xmalloc((size_t)n * sizeof *act);
	pos = ar_xmalloc((size_t)n * sizeof *pos);
	deg = ar_xcalloc((size_t)n + 1, sizeof *deg);
	memset(s, 0, sizeof *s);
	s->n = n, s->lo = lo, s->hi = hi, s->size = size;
	s->slo = ar_xmalloc((size_t)n * sizeof(int));
	s->shi = ar_xmalloc((size_t)n * sizeof(int));
	for (int e = 0; e < 2 * n; e++) {
		int id = pt[e].id;
		if (pt[e].start) {
			s->slo[id] = (int)sstart.n;
			for (int a = 0; a < na; a++) {
				push(&pairs, act[a]), push(&pairs, id);
				deg[act[a]]++, deg[id]++;
			}
			pos[id] = na;
			act[na++] = id;
			grown = true;
			continue;
		}
		if (grown) {
			push(&sstart, (int)smem.n);
			for (int a = 0; a < na; a++)
				push(&smem, act[a]);
			grown = false;
		}
		s->shi[id] = (int)sstart.n;
		act[pos[id]] = act[--na];
		pos[act[pos[id]]] = pos[id];
	}
	push(&sstart, (int)smem.n);
	s->ns = (int)sstart.n - 1;
	s->sstart = sstart.v, s->smem = smem.v;

	s->ostart = ar_xmalloc(((size_t)n + 1) * sizeof(int));
	s->ostart[0] = 0;
	for (int i = 0; i < n; i++)
		s->ostart[i + 1] = s->ostart[i] + deg[i];
	s->ovl = ar_xmalloc(pairs.n * sizeof(int) + 1);
	memcpy(deg, s->ostart, (size_t)n * sizeof(int));
	for (size_t k = 0; k < pairs.n; k += 2) {
		s->ovl[deg[pairs.v[k]]++] = pairs.v[k + 1];
		s->ovl[deg[pairs.v[k + 1]]++] = pairs.v[k];
	}
	free(pairs.v), free(pt), free(act), free(pos), free(deg);

	s->off = ar_xmalloc((size_t)n * sizeof(int64_t));
	s->minoff = ar_xcalloc((size_t)n, sizeof(int64_t));
	s->sol = ar_xmalloc((size_t)n * sizeof(int64_t));
	s->floor = ar_xcalloc((size_t)s->ns, sizeof(int64_t));
	s->total = ar_xcalloc((size_t)s->ns, sizeof(int64_t));
	s->smin = ar_xcalloc((size_t)s->ns, sizeof(int64_t));
	s->cuts = ar_xcalloc((size_t)s->ns + 1, sizeof(int));
	s->stamp = ar_xcalloc((size_t)s->ns, sizeof(int));
	s->aff = ar_xmalloc((size_t)s->ns * sizeof(int));
	for (int i = 0; i < n; i++) {
		s->off[i] = -1;
		for (int c = s->slo[i]; c < s->shi[i]; c++)
			s->total[c] += size[i];
		/* Difference array: boundaries slo .. shi-2 are spanned. */
		if (s->shi[i] - s->slo[i] > 1) {
			s->cuts[s->slo[i]]++;
			s->cuts[s->shi[i] - 1]--;
		}
	}
	for (int c = 1; c < s->ns; c++)
		s->cuts[c] += s->cuts[c - 1];
	return true;
}

static void destroy(Search *s)
{
	free(s->slo), free(s->shi), free(s->sstart), free(s->smem);
	free(s->ostart), free(s->ovl), free(s->off), free(s->minoff);
	free(s->sol), free(s->floor), free(s->total), free(s->cuts);
	free(s->smin), free(s->stamp), free(s->aff);
	free(s->mt.c), free(s->ft.c), free(s->st.c);
}

/*
 * Is there a placement of these buffers within cap?  On FOUND, off[]
 * gets it.  NOTFOUND is a proof; SPENT and TOOBIG are not.
 */
static int probe_component(int n, const int64_t *lo, const int64_t *hi,
			   const int64_t *size, const int64_t *pin,
			   int64_t cap, ArBudget *work, int64_t *off,
			   int64_t *nodes)
{
	static const char *const heur[] = { "WAT", "TAW", "TWA" };
	Search s;
	int *all;
	int st = ABORTED;

	if (!build(&s, n, lo, hi, size, work))
		return SPENT;
	all = ar_xmalloc((size_t)n * sizeof *all);
	s.cap = cap;
	s.pin = pin;
	s.work = work;
	for (int i = 0; i < n; i++)
		all[i] = i;
	for (int64_t budget = n; st == ABORTED; ) {
		budget *= 2;
		for (int h = 0; h < 3 && (st == ABORTED); h++) {
			Part pt = { all, n, 0, s.ns };
			s.heur = heur[h];
			s.budget = budget;
			s.stop = 0;
			st = subsolve(&s, &pt);
		}
	}
	*nodes += s.nodes;
	if (st == FOUND)
		memcpy(off, s.sol, (size_t)n * sizeof *off);
	destroy(&s);
	free(all);
	return st;
}

int ar_dsa_exact_pinned(ArBuf *b, int n, int nfree, int64_t cap,
			ArBudget *work, int64_t *nodes)
{
	int64_t *lo = ar_xmalloc((size_t)n * sizeof *lo);
	int64_t *hi = ar_xmalloc((size_t)n * sizeof *hi);
	int64_t *size = ar_xmalloc((size_t)n * sizeof *size);
	int64_t *pin = ar_xmalloc((size_t)n * sizeof *pin);
	int64_t *off = ar_xmalloc((size_t)n * sizeof *off);
	int st;

	for (int i = 0; i < n; i++) {
		lo[i] = b[i].lo, hi[i] = b[i].hi, size[i] = b[i].size;
		pin[i] = i < nfree ? -1 : b[i].offset;
		assert(i < nfree || b[i].offset + b[i].size <= cap);
	}
	st = probe_component(n, lo, hi, size, pin, cap, work, off, nodes);
	if (st == FOUND)
		for (int i = 0; i < nfree; i++)
			b[i].offset = off[i];
	free(lo), free(hi), free(size), free(pin), free(off);
	return st == FOUND ? 1 : st == NOTFOUND ? 0 : -1;
}

/*
 * One probe over all components: those the current solution already
 * keeps within cap stay as they are, the others are searched.  Solutions
 * found are kept even when a later component fails, since components are
 * independent and each new one is within cap < the height known.
 */
static int probe(ArBuf *b, const ArComponents *cc, int64_t cap,
		 ArBudget *work, int64_t *nodes)
{
	int64_t *lo = NULL, *hi = NULL, *size = NULL, *off = NULL;
	int st = FOUND;

	for (int c = 0; c < cc->nc && st == FOUND; c++) {
		const int *ids = cc->ids + cc->start[c];
		int k = cc->start[c + 1] - cc->start[c];
		int64_t h = 0;
		for (int i = 0; i < k; i++)
			if (b[ids[i]].offset + b[ids[i]].size > h)
				h = b[ids[i]].offset + b[ids[i]].size;
		if (h <= cap)
			continue;
		lo = ar_xrealloc(lo, (size_t)k * sizeof *lo);
		hi = ar_xrealloc(hi, (size_t)k * sizeof *hi);
		size = ar_xrealloc(size, (size_t)k * sizeof *size);
		off = ar_xrealloc(off, (size_t)k * sizeof *off);
		for (int i = 0; i < k; i++) {
			lo[i] = b[ids[i]].lo;
			hi[i] = b[ids[i]].hi;
			size[i] = b[ids[i]].size;
		}
		st = probe_component(k, lo, hi, size, NULL, cap, work, off,
				     nodes);
		if (st == FOUND)
			for (int i = 0; i < k; i++)
				b[ids[i]].offset = off[i];
	}
	free(lo), free(hi), free(size), free(off);
	return st;
}

/*
 * Minimising: probes between the proven floor lo and the best height.
 * Every height of a canonical placement is a sum of sizes, so probes and
 * the floor move on multiples of g, the sizes' gcd (and the load bound
 * rounds up to one).  The lower bound is probed first, as it is met more
 * often than not; a probe that uses up its share (a third of the work
 * left) marks its height as hard, and later probes aim between there and
 * the best, where solutions are easier to find, rather than spend all the
 * work on one proof.  Once every height below the best is hard, all that
 * is left goes to the one just below it.
 */
static int minimise(ArBuf *b, int n, const ArComponents *cc, int64_t g,
		    int64_t *lo, int64_t *best, ArBudget *work, int64_t *nodes)
{
	int64_t hard, c;
	int st = FOUND;
	bool rest = false;

	*lo = (*lo + g - 1) / g * g;
	hard = *lo - g;
	c = *lo;
	while (*lo < *best) {
		ArBudget share;
		ar_budget_share(work, 1, rest ? 1 : 3, &share);
		st = probe(b, cc, c, &share, nodes);
		ar_budget_settle(work, &share);
		if (st == FOUND)
			*best = ar_dsa_height(b, n);
		else if (st == NOTFOUND)
			*lo = c + g;
		else if (st == TOOBIG || rest || !ar_budget_left(work))
			break;
		else
			hard = c;
		c = *lo > hard + g ? *lo : hard + g;
		rest = c >= *best;
		c = rest ? *best - g : c + (*best - g - c) / g / 2 * g;
	}
	return st;
}

void ar_dsa_exact(ArBuf *b, int n, int64_t seed_height, int64_t lower_bound,
		  int64_t capacity, ArBudget *work, ArDsaResult *res)
{
	ArComponents cc;
	int64_t best = seed_height, lo = lower_bound;
	int st;

	ar_dsa_components(b, n, &cc);
	res->nodes = 0;
	if (capacity > 0) {
		st = probe(b, &cc, capacity, work, &res->nodes);
		res->infeasible = st == NOTFOUND;
		if (res->infeasible && capacity >= lo)
			lo = capacity + 1;
	} else {
		int64_t g = 0;
		for (int i = 0; i < n; i++)
			g = ar_dsa_gcd(b[i].size, g);
		st = minimise(b, n, &cc, g, &lo, &best, work, &res->nodes);
	}
	res->stopped = st == SPENT;
	res->timed_out = work->watch && work->watch->fired;
	res->height = ar_dsa_height(b, n);
	res->optimal = res->height == lower_bound ||
		       (capacity == 0 && lo >= best);
	res->bound = res->optimal ? res->height : lo;
	free(cc.ids), free(cc.start);
}
