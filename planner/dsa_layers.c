/*
 * dsa_layers.c — layer split: a component that the searches leave above
 * its target is cut by bytes into a bottom and a top layer, each solved
 * alone, the top one placed on the bottom one.
 *
 * Why: a perfect packing cut guillotine-wise (the "holes"
 * instances) is, wherever no time splits it, a stack of strips, each of
 * which some time does split.  Given which buffers form the bottom strip,
 * both layers fall apart by time into parts the exact search packs in
 * hundreds of nodes (holes 2,000 seed 1, the two strips of its larger
 * component: 131 and 519 nodes, where the whole component fails beyond
 * millions), since the offset-ordered search (exact.c) couples parts of
 * the time line that only the strips separate.
 *
 * Where to cut: at the time c where a strip's two parts meet, the bytes
 * of the buffers ending there and of those starting there are both the
 * strip's height, less the holes at its edge, so times are ranked by
 * min(E(c), S(c)) and the CUTS best tried.  The bottom layer's height h
 * is tried at max(E, S), at the target less the bytes live across c (all
 * of them are the top layer's), and at the target less each other cut's
 * max(E, S) (that strip being the top one): at the bound the two heights
 * must add up exactly.
 * Which buffers go below: what is labelled are the units, the blocks the
 * component's buffers join into (dsa_blocks.c), then, when that finds no
 * stack at the target, those blocks with each outermost stack loosened
 * into its members (a stack joins every piece of one lifetime, and two
 * strips may hold such pieces by chance), and then the buffers
 * themselves.  A depth-first search labels the units in order of start,
 * bottom or top, each label checked over the unit's lifetime (at most h
 * bytes below and target - h above at every time; no bottom unit with
 * a buffer across c), with backjumping (see label()) and failed states
 * remembered: the next unit and the bottom ones live where it starts say
 * all the rest of the search depends on, so they are hashed (Zobrist)
 * and a state met again fails at once.
 * A labelling found is done again, on its units and then on the buffers,
 * its own labels tried first, with the top layer kept off other cuts as
 * well (relabel()): then both layers fall apart by time.
 * The layers are made of the buffers of their units and go to
 * ar_dsa_solve, minimising, each part a time splits them into alone
 * (solve_parts()), so a layer that is a stack of strips itself is split
 * again (each call gets a share of the work and fewer buffers, so this
 * ends); the top layer is placed on the bottom one's height.  The stack
 * is a valid placement whatever the labels; it is kept only when lower.
 * All of it is counted in work units: a label tried costs one per span
 * of the unit's lifetime.
 *
 * Measured (bench_dsa.sh, see the README): holes 2,000 seeds 1 / 2 / 3
 * from +11.0 / +11.2 / +8.7% (no split) to +0.16 / +3.19 / +8.87% (both
 * layers cut, parts solved alone, loosened stacks); holes 1,000 at
 * effort 3, seeds 1-6, from +9.5 / +8.4 / +8.4 / +10.7 / +11.2 / +7.7%
 * to 0 / 0 / 0 / +1.1 / +4.1 / +7.4%; MiniMalloc's J from 1,020,928 to
 * 1,002,496.  Labelling is the weak part: on the 1,383 buffers of holes
 * 2,000 seed 1's larger component the search from scratch finds none
 * even at the generator's own cut and height within its work (one is
 * found with 250 M units); on the blocks, a sixth as many, it does, but
 * coincidental joins (pieces of one lifetime or of one size handing
 * over, from different strips) may tie the layers together: seed 2's
 * larger component has four blocks with pieces of both (all stacks of
 * one lifetime: five pieces over steps 0-192, three below and two
 * above), and no labelling of its 259 blocks exists; of its 419 loosened
 * ones one is found in 24-51 M units (none of its 1,454 buffers in 300 M;
 * none either with a table of failed states of 64 slots a unit).
 * Seed 3's larger component (1,259 buffers, 383 loosened units) gets
 * none: 45 of its buffers start at its first step, with the holes'
 * slack, and the loads first pin the layers 300 steps later, where the
 * search stalls.  A strip's height is the handover only where no hole
 * lies at its edge (seed 1's 276,928-byte strip hands over 244,224).
 */
#include "dsa_impl.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "sortkey.h"

#define CUTS 4
/* The cuts a relabelled top layer may be kept off (the first CUTS of
 * them, then the next ones added). */
#define RECUTS 8
#define MIN_BUFFERS 8
/* The labelling's blame sets cost n^2 / 8 bytes: 8 MiB here. */
#define MAX_BUFFERS 8192
/* The labellings' share of the work (the rest: the stacks). */
#define LABEL_DEN 4
/* A try's first label (bottom first, then top): the share of the try's
 * work each gets. */
#define FIRST_DEN 4
/* A labelling of units (not buffers): the share of a try's work its
 * relabelling on the units gets (the rest: on the buffers). */
#define UNITS_DEN 4
/* A layer's part below a higher one: the share of its work it gets to
 * fit under it before it is minimised (solve_parts()). */
#define FIT_DEN 8
/* Failed states remembered: a table of as many slots as the search has
 * units of work (each state costs at least one), at most this many (a
 * power of two: 8 MiB of keys). */
#define MEMO_MAX ((size_t)1 << 20)

typedef struct {
	int n, m;               /* units (blocks or buffers), spans */
	const ArBuf *b;
	int *slo, *shi;         /* spans of each unit */
	int *order;             /* by start, larger first */
	int64_t *load;          /* bytes live over each span */
	int64_t *lb, *lt;       /* of them, labelled bottom / top */
	uint64_t *zob;          /* a random key per unit */
	int *live, *lstart;     /* units live over the span where order[q]
				   starts and started before it: live[lstart[q]
				   .. lstart[q + 1]) */
	int *pos;               /* pos[order[q]] = q */
	int *spanned, *sstart;  /* units live over span k:
				   spanned[sstart[k] .. sstart[k + 1]) */
	char *lab;              /* 0 none, 1 bottom, 2 top */
	uint64_t *memo;         /* open addressing, 0: empty */
	size_t nmemo, slots;    /* used, and a power of two */
	int64_t *es, *ee;       /* bytes starting, ending at each boundary */
	int64_t *t;             /* the time of each boundary */
	int64_t cap[3];         /* the heights of [1] bottom, [2] top */
	const ArBuf *mb;        /* the buffers the units are made of */
	const int *mof;         /* mb[j] is part of unit mof[j] (NULL: j) */
	int nmb;
	char *bar;              /* per unit: 1 no bottom, 2 no top label */
	const char *phase;      /* each unit's label to try first (or NULL) */
	ArBudget *work;
} Label;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static bool memo_has(const Label *s, uint64_t k)
{
	for (size_t i = k & (s->slots - 1); s->memo[i];
	     i = (i + 1) & (s->slots - 1))
		if (s->memo[i] == k)
			return true;
	return false;
}

static void memo_add(Label *s, uint64_t k)
{
	size_t i = k & (s->slots - 1);
	if (4 * s->nmemo >= 3 * s->slots)
		return;
	while (s->memo[i] && s->memo[i] != k)
		i = (i + 1) & (s->slots - 1);
	if (!s->memo[i])
		s->memo[i] = k, s->nmemo++;
}

/* Adds to set the depths of the buffers in ids[0..n) labelled l (any
 * label: l = 0) before depth q. */
static void blame(const Label *s, uint64_t *set, const int *ids, int n,
		  int l, int q)
{
	for (int e = 0; e < n; e++) {
		int j = ids[e], p = s->pos[j];
		if (p < q && s->lab[j] && (!l || s->lab[j] == l))
			set[p / 64] |= (uint64_t)1 << (p % 64);
	}
}

/*
 * Whether unit i may be labelled l at depth q: 0 when it may, 1 when
 * it may not go there at all (barred: see bar_units()), 2 when
 * that layer would pass its height over some span, blamed (added to set)
 * on the buffers of that label over the first such span.
 */
static int clash(const Label *s, int i, int l, int q, uint64_t *set)
{
	const int64_t *sum = l == 1 ? s->lb : s->lt;
	if (s->bar[i] & l)
		return 1;
	for (int k = s->slo[i]; k < s->shi[i]; k++)
		if (sum[k] + s->b[i].size > s->cap[l]) {
			blame(s, set, s->spanned + s->sstart[k],
			      s->sstart[k + 1] - s->sstart[k], l, q);
			return 2;
		}
	return 0;
}

static void give(Label *s, int i, int l, int sign)
{
	int64_t *sum = l == 1 ? s->lb : s->lt;
	for (int k = s->slo[i]; k < s->shi[i]; k++)
		sum[k] += sign * s->b[i].size;
	s->lab[i] = sign > 0 ? (char)l : 0;
}

/*
 * The depth-first search, iterative (a component may hold thousands of
 * buffers), with conflict-directed backjumping: depth q labels buffer
 * order[q], its first label (first, or its phase) then the other.  A
 * label that passes a capacity over some span is blamed on the buffers
 * of that label live there; when both fail, the search jumps back to
 * the deepest buffer blamed (those between had nothing to do with it)
 * and tries its other label, the blame carried along.  Without that, a
 * wrong label far back (a layer a few bytes off its height, which the
 * holes' slack hides for a while) is found only after every combination
 * of the labels since.
 * Failed states are remembered (see the file's comment); one met again
 * is blamed on every buffer live where it starts.  True when every
 * buffer has a label; false when none can, or the work ran out.
 */
static bool label(Label *s, int first)
{
	int n = s->n, words = (n + 63) / 64;
	int *tried = ar_xcalloc((size_t)n + 1, sizeof *tried);
	uint64_t *key = ar_xcalloc((size_t)n + 1, sizeof *key);
	uint64_t *conf = ar_xmalloc(((size_t)n + 1) * (size_t)words *
				    sizeof *conf);
	int q = 0;
	bool found = false;

	memset(s->lab, 0, (size_t)n);
	for (s->slots = 64; (int64_t)s->slots < s->work->left &&
	     s->slots < MEMO_MAX; )
		s->slots *= 2;
	s->memo = ar_xcalloc(s->slots, sizeof *s->memo);
	s->nmemo = 0;
	memset(s->lb, 0, (size_t)s->m * sizeof *s->lb);
	memset(s->lt, 0, (size_t)s->m * sizeof *s->lt);
	while (ar_budget_spend(s->work, 1)) {
		uint64_t *cq = conf + (size_t)q * (size_t)words;
		int d = -1;
		if (q == n) {
			found = true;
			break;
		}
		if (tried[q] == 0) {
			/* Entering: the first buffer of a start keys the
			 * state by the bottom ones live there. */
			int i = s->order[q];
			int nl = s->lstart[q + 1] - s->lstart[q];
			memset(cq, 0, (size_t)words * sizeof *cq);
			key[q] = 0;
			if (!q || s->slo[s->order[q - 1]] != s->slo[i]) {
				uint64_t h = mix((uint64_t)q + 1);
				ar_budget_spend(s->work, nl);
				for (int e = s->lstart[q]; e < s->lstart[q + 1]; e++)
					if (s->lab[s->live[e]] == 1)
						h ^= s->zob[s->live[e]];
				key[q] = h | 1;
				if (memo_has(s, key[q])) {
					blame(s, cq, s->live + s->lstart[q], nl,
					      0, q);
					key[q] = 0;
					tried[q] = 2;
				}
			}
		}
		while (tried[q] < 2) {
			int i = s->order[q];
			int f = s->phase ? s->phase[i] : first;
			int l = tried[q]++ == 0 ? f : 3 - f;
			ar_budget_spend(s->work, s->shi[i] - s->slo[i]);
			if (clash(s, i, l, q, cq) == 0) {
				give(s, i, l, 1);
				tried[++q] = 0;
				break;
			}
		}
		if (tried[q] == 0)
			continue;
		/* Depth q failed: back to the deepest buffer blamed. */
		if (key[q])
			memo_add(s, key[q]);
		for (int w = words - 1; w >= 0 && d < 0; w--)
			if (cq[w])
				d = 64 * w + 63 - __builtin_clzll(cq[w]);
		if (d < 0)
			break;          /* blamed on nothing: no labelling */
		for (int p = q - 1; p >= d; p--) {
			give(s, s->order[p], s->lab[s->order[p]], -1);
			if (p > d && key[p])
				memo_add(s, key[p]);
		}
		cq[d / 64] &= ~((uint64_t)1 << (d % 64));
		for (int w = 0; w < words; w++)
			conf[(size_t)d * (size_t)words + (size_t)w] |= cq[w];
		q = d;
	}
	free(tried), free(key), free(conf), free(s->memo);
	s->memo = NULL;
	return found;
}

/*
 * Minimises the placement of the layer b[0..n) component by component:
 * by lower bound descending (the larger first), each one below a higher
 * one first asked only to fit under the height to beat (capacity mode,
 * 1 / FIT_DEN of its share), then minimised alone; the work shared by
 * buffers.  Returns the layer's height.
 *
 * Why: a layer that is a stack of strips falls apart by time (that is
 * what the split is for), and on the whole layer every phase after the
 * greedy ones measures only the highest part, so one that lowers a part
 * while another stays as high is not kept, and the next phase starts
 * from it as it was: the top layer of holes 2,000 seed 1's larger
 * component, two parts, packed at 752,064 whole and at 712,320 and
 * 714,752 alone (706,432 is the bound).  Only here: on a whole instance
 * the blocks may join across its parts (pieces of one size handing over
 * where a time splits it), which holes 500 seed 3 packs by.
 */
static int64_t solve_parts(ArBuf *b, int n, ArBudget *work, int64_t *nodes)
{
	ArComponents cc;
	ArSortKey *k;
	ArBuf *sub;
	int64_t *keep, top = 0;
	int left = n;

	ar_dsa_components(b, n, &cc);
	k = ar_xmalloc((size_t)cc.nc * sizeof *k);
	sub = ar_xmalloc((size_t)n * sizeof *sub);
	keep = ar_xmalloc((size_t)n * sizeof *keep);
	for (int c = 0; c < cc.nc; c++) {
		int m = cc.start[c + 1] - cc.start[c];
		for (int j = 0; j < m; j++)
			sub[j] = b[cc.ids[cc.start[c] + j]];
		k[c] = (ArSortKey){ -ar_dsa_lower_bound(sub, m, NULL), -m, 0,
				    c };
	}
	ar_sort_keys(k, cc.nc);
	for (int e = 0; e < cc.nc; e++) {
		const int *ids = cc.ids + cc.start[k[e].id];
		int m = cc.start[k[e].id + 1] - cc.start[k[e].id];
		int64_t h = INT64_MAX;
		ArBudget share;
		for (int j = 0; j < m; j++)
			sub[j] = b[ids[j]];
		ar_budget_share(work, m, left, &share);
		left -= m;
		for (int pass = top ? 0 : 1; pass < 2 && h > top; pass++) {
			ArDsaResult r;
			ArBudget w;
			ar_budget_share(&share, 1, pass ? 1 : FIT_DEN, &w);
			ar_dsa_solve(sub, m, "auto", pass ? 0 : top, &w, &r);
			ar_budget_settle(&share, &w);
			*nodes += r.nodes;
			if (r.height < h) {
				h = r.height;
				for (int j = 0; j < m; j++)
					keep[j] = sub[j].offset;
			}
		}
		ar_budget_settle(work, &share);
		for (int j = 0; j < m; j++)
			b[ids[j]].offset = keep[j];
		if (h > top)
			top = h;
	}
	free(k), free(sub), free(keep), free(cc.ids), free(cc.start);
	return top;
}

/*
 * Solves both layers (the bottom one with at most half the work) and
 * places the top one on the bottom one; returns the stack's height, or
 * best when the bottom one's height and the top one's lower bound leave
 * nothing to gain (its search is skipped then: MiniMalloc's J minimised
 * in 36 s instead of 44, measured before the blocks were labelled).
 */
static int64_t stack(ArBuf *bot, int nb, ArBuf *top, int nt, int64_t best,
		     ArBudget *work, int64_t *nodes)
{
	int64_t hb, ht;
	ArBudget share;

	ar_budget_share(work, 1, 2, &share);
	hb = solve_parts(bot, nb, &share, nodes);
	ar_budget_settle(work, &share);
	if (hb + ar_dsa_lower_bound(top, nt, NULL) >= best)
		return best;
	ht = solve_parts(top, nt, work, nodes);
	for (int i = 0; i < nt; i++)
		top[i].offset += hb;
	return hb + ht;
}

/*
 * The labelling's tables for the units u[0..nu) made of the buffers
 * mb[0..nmb), mb[j] part of unit mof[j] (mof NULL: the units are the
 * buffers; see Label).  Costs a unit of work per unit and span it is
 * live over, twice.
 */
static void tables(Label *s, const ArBuf *u, int nu, const ArBuf *mb,
		   const int *mof, int nmb, ArBudget *work)
{
	ArSortKey *k = ar_xmalloc((size_t)nu * sizeof *k);
	uint64_t z = 0x9e3779b97f4a7c15ULL;
	int64_t cost = nu;
	int *act = ar_xmalloc((size_t)nu * sizeof *act), na = 0;
	size_t cap = 256, len = 0;

	memset(s, 0, sizeof *s);
	s->m = ar_dsa_spans(u, nu, &s->slo, &s->shi);
	s->n = nu;
	s->b = u;
	s->es = ar_xcalloc((size_t)s->m + 1, sizeof *s->es);
	s->ee = ar_xcalloc((size_t)s->m + 1, sizeof *s->ee);
	s->t = ar_xmalloc(((size_t)s->m + 1) * sizeof *s->t);
	s->order = ar_xmalloc((size_t)nu * sizeof *s->order);
	s->load = ar_xcalloc((size_t)s->m + 1, sizeof *s->load);
	s->lb = ar_xmalloc(((size_t)s->m + 1) * sizeof *s->lb);
	s->lt = ar_xmalloc(((size_t)s->m + 1) * sizeof *s->lt);
	s->zob = ar_xmalloc((size_t)nu * sizeof *s->zob);
	s->lab = ar_xmalloc((size_t)nu);
	s->bar = ar_xcalloc((size_t)nu + 1, 1);
	s->mb = mb, s->mof = mof, s->nmb = nmb;
	s->pos = ar_xmalloc((size_t)nu * sizeof *s->pos);
	s->lstart = ar_xmalloc(((size_t)nu + 1) * sizeof *s->lstart);
	for (int i = 0; i < nu; i++) {
		k[i] = (ArSortKey){ s->slo[i], -u[i].size, 0, i };
		s->zob[i] = mix(z += 0x9e3779b97f4a7c15ULL);
		s->t[s->slo[i]] = u[i].lo, s->t[s->shi[i]] = u[i].hi;
		s->es[s->slo[i]] += u[i].size;
		s->ee[s->shi[i]] += u[i].size;
		for (int x = s->slo[i]; x < s->shi[i]; x++)
			s->load[x] += u[i].size;
		cost += s->shi[i] - s->slo[i];
	}
	ar_budget_spend(work, 2 * cost);
	ar_sort_keys(k, nu);
	for (int q = 0; q < nu; q++)
		s->order[q] = k[q].id, s->pos[k[q].id] = q;
	free(k);
	/* The units over each span, by counting. */
	s->sstart = ar_xcalloc((size_t)s->m + 2, sizeof *s->sstart);
	for (int i = 0; i < nu; i++)
		for (int x = s->slo[i]; x < s->shi[i]; x++)
			s->sstart[x + 2]++;
	for (int x = 2; x <= s->m + 1; x++)
		s->sstart[x] += s->sstart[x - 1];
	s->spanned = ar_xmalloc((size_t)s->sstart[s->m + 1] *
				sizeof *s->spanned + 1);
	for (int i = 0; i < nu; i++)
		for (int x = s->slo[i]; x < s->shi[i]; x++)
			s->spanned[s->sstart[x + 1]++] = i;
	/* The live lists, by one sweep over the starts. */
	s->live = ar_xmalloc(cap * sizeof *s->live);
	for (int q = 0; q < nu; q++) {
		int a = s->slo[s->order[q]], keep = 0;
		s->lstart[q] = (int)len;
		if (!q || s->slo[s->order[q - 1]] != a) {
			for (int e = 0; e < na; e++)
				if (s->shi[act[e]] > a)
					act[keep++] = act[e];
			na = keep;
			if (len + (size_t)na > cap) {
				cap = 2 * (len + (size_t)na);
				s->live = ar_xrealloc(s->live, cap *
						      sizeof *s->live);
			}
			memcpy(s->live + len, act, (size_t)na * sizeof *act);
			len += (size_t)na;
		}
		act[na++] = s->order[q];
	}
	s->lstart[nu] = (int)len;
	free(act);
}

static void drop(Label *s)
{
	free(s->slo), free(s->shi), free(s->order), free(s->load);
	free(s->lb), free(s->lt), free(s->zob), free(s->lab), free(s->live);
	free(s->lstart), free(s->pos), free(s->spanned), free(s->sstart);
	free(s->es), free(s->ee), free(s->t), free(s->bar);
}

/*
 * Bars the units of s from the bottom layer where one of their buffers
 * lives across time cut, from the top one where one lives across one of
 * top[0..ntop).  Their buffers, not their lifetimes: a block whose pieces
 * hand over at the cut (one of a strip's parts ending there, one of the
 * next starting, of one size) crosses it, but its layer still falls
 * apart there (holes 2,000 seed 3's larger component: a block of 32,960
 * bytes over steps 5,321-5,946, the top strip's pieces handing over at
 * its cut, step 5,792).  A unit of work per buffer.
 */
static void bar_units(Label *s, int64_t cut, const int64_t *top, int ntop,
		      ArBudget *work)
{
	memset(s->bar, 0, (size_t)s->n);
	ar_budget_spend(work, s->nmb * (1 + (int64_t)ntop));
	for (int j = 0; j < s->nmb; j++) {
		const ArBuf *x = &s->mb[j];
		int u = s->mof ? s->mof[j] : j;
		if (x->lo < cut && x->hi > cut)
			s->bar[u] |= 1;
		for (int c = 0; c < ntop; c++)
			if (x->lo < top[c] && x->hi > top[c])
				s->bar[u] |= 2;
	}
}

/* A cut to try: the span boundary no buffer of the bottom layer crosses,
 * and that layer's height. */
typedef struct {
	int cut;
	int64_t h;
} Try;

/* The bytes handed over at boundary x: the larger of those ending and
 * those starting there. */
static int64_t hand(const Label *s, int x)
{
	return s->es[x] > s->ee[x] ? s->es[x] : s->ee[x];
}

/*
 * The tries for s's units (see the file's comment), cut by cut, the best
 * CUTS first; heights are multiples of g.  The times of the best RECUTS
 * go to cuts.  Returns how many tries, *ncut how many cuts in cuts.
 */
static int tries(const Label *s, int64_t g, int64_t target, Try *t,
		 int64_t *cuts, int *ncut_out)
{
	ArSortKey *k = ar_xmalloc((size_t)s->m * sizeof *k + 1);
	int cut[RECUTS], ncut = 0, nt = 0;

	/* Boundaries inside the component (0 < x < m), by min(E, S)
	 * descending, the earlier first. */
	for (int x = 1; x < s->m; x++) {
		int64_t lo = s->es[x] < s->ee[x] ? s->es[x] : s->ee[x];
		if (lo > 0)
			k[ncut++] = (ArSortKey){ -lo, x, 0, x };
	}
	ar_sort_keys(k, ncut);
	if (ncut > RECUTS)
		ncut = RECUTS;
	for (int ci = 0; ci < ncut; ci++)
		cut[ci] = k[ci].id, cuts[ci] = s->t[k[ci].id];
	*ncut_out = ncut;
	if (ncut > CUTS)
		ncut = CUTS;
	free(k);
	/* Heights: the cut's own handover, the target less what lies across
	 * it, and the target less another cut's handover (that strip on
	 * this one: at the bound the heights must be exact). */
	for (int ci = 0; ci < ncut; ci++) {
		int x = cut[ci], first = nt;
		int64_t across = s->load[x] - s->es[x];
		for (int cj = -1; cj <= ncut; cj++) {
			int64_t v = cj < 0 ? hand(s, x)
				  : cj == ncut ? target - across
				  : target - hand(s, cut[cj]);
			bool dup = false;
			if (cj == ci)
				continue;
			v = (v + g - 1) / g * g;
			for (int e = first; e < nt; e++)
				dup |= t[e].h == v;
			if (!dup && v > 0 && v < target && target - v >= across)
				t[nt++] = (Try){ x, v };
		}
	}
	return nt;
}

/* The component being split: c[0..n) of b, its buffers copied to sub
 * (room for n more in bot and top), its target and sizes' gcd g, and
 * the labelling of its buffers (bl). */
typedef struct {
	ArBuf *b, *sub, *bot, *top;
	const int *c;
	int *bid, *tid;
	int n;
	int64_t target, g;
	Label bl;
} Comp;

/*
 * Labels s's units again, lab[u] (unit u's label) tried first, the
 * bottom layer kept off the time cut and at height h as before, and the
 * top one now kept off another of the first CUTS cuts too, then off each
 * other of the ncut cuts as well while a labelling is found so (lab
 * each time overwritten, and tried first).  True when the top is kept
 * off at least one.  See tries_on() for why.
 */
static bool relabel(Label *s, char *lab, int64_t target, int64_t cut,
		    int64_t h, const int64_t *cuts, int ncut, ArBudget *work)
{
	int64_t top[RECUTS];
	int ntop = 0, first = ncut < CUTS ? ncut : CUTS;

	assert(ncut <= RECUTS);
	s->phase = lab;
	s->cap[1] = h, s->cap[2] = target - h;
	for (int c = 0; c < ncut && ar_budget_left(work); c++) {
		ArBudget lw;
		if (cuts[c] == cut || (!ntop && c >= first))
			continue;
		top[ntop] = cuts[c];
		bar_units(s, cut, top, ntop + 1, work);
		ar_budget_share(work, 1, (ntop ? ncut : first) - c, &lw);
		s->work = &lw;
		if (label(s, 1)) {
			memcpy(lab, s->lab, (size_t)s->n);
			ntop++;
		}
		ar_budget_settle(work, &lw);
	}
	s->phase = NULL;
	return ntop > 0;
}

/*
 * Stacks the layers labelled lab (buffer i's label); moves k's buffers
 * in b there when lower than best.  Returns the lower height.
 */
static int64_t stack_labels(Comp *k, const char *lab, int64_t best,
			    ArBudget *work, int64_t *nodes)
{
	int nb = 0, ntop = 0;
	int64_t tall;

	for (int i = 0; i < k->n; i++) {
		if (lab[i] == 1)
			k->bot[nb] = k->sub[i], k->bid[nb++] = i;
		else
			k->top[ntop] = k->sub[i], k->tid[ntop++] = i;
	}
	if (!nb || !ntop)
		return best;
	tall = stack(k->bot, nb, k->top, ntop, best, work, nodes);
	if (tall >= best)
		return best;
	for (int i = 0; i < nb; i++)
		k->b[k->c[k->bid[i]]].offset = k->bot[i].offset;
	for (int i = 0; i < ntop; i++)
		k->b[k->c[k->tid[i]]].offset = k->top[i].offset;
	return tall;
}

/*
 * Tries each cut with s's units labelled (unit of[i] holding buffer i),
 * then stacks the layers of the labellings found; moves k's buffers in
 * b to the lowest stack found when lower than best.  Returns the lowest
 * height.
 *
 * A labelling found is labelled again with its own labels tried first
 * and the top layer kept off another cut too (relabel()): the first
 * keeps only the bottom layer off its cut, and the top one may take
 * buffers of the bottom strip across its own cut that the loads allow,
 * so it falls apart at no time (holes 2,000 seed 1's larger component:
 * 91,008 bytes across step 5,989).  Tried first from the labels it
 * already has, the search labels again in 60 k units where none it
 * starts afresh finds one in 17 M (at the generator's cut and height;
 * the second cut, the bottom strip's, is one of the CUTS).  A labelling
 * of units is relabelled on them first (1 / UNITS_DEN of the work), then
 * on the buffers: seed 2's larger component, labelled on its loosened
 * blocks, is relabelled on them but not on its buffers within the work
 * (the stack: +4.4% so, +7.0% with one cut).  The top kept off one cut,
 * each other of the RECUTS is added while the labels allow it: the loads
 * leave the labelling ambiguous (with the holes' slack, chains of pieces
 * trade layers), and each cut of the top strip ties it closer to the
 * generator's (that component: kept off 3,406, then 5,158 and 1,841, all
 * three of its top strip's cuts, the sixth best of them; the stack +3.2%,
 * +4.4% with the first).  Such
 * labellings, both layers split, are stacked first, sharing all the
 * stacks' work, the others only with what is left: a stack of one split
 * layer needs all it can get (that component: 1,067,328 so with 2.7 G
 * units, 1,094,208 with half; the labelling with one cut, 1,101,504).
 * The labellings get 1 / LABEL_DEN of the work, the stacks the rest.
 */
static int64_t tries_on(Comp *k, Label *s, const int *of, int64_t best,
			ArBudget *work, int64_t *nodes)
{
	Try t[CUTS * (CUTS + 2)];
	int64_t cuts[RECUTS];
	int ncut, nt = tries(s, k->g, k->target, t, cuts, &ncut);
	int nk = 0, no = 0, ntwo;
	char *kept = ar_xmalloc((size_t)nt * (size_t)k->n + 1);
	int *order = ar_xmalloc((size_t)nt * sizeof *order + 1);
	bool *two = ar_xmalloc((size_t)nt * sizeof *two + 1);
	char *ulab = ar_xmalloc((size_t)s->n + 1);
	ArBudget pass;

	ar_budget_share(work, 1, LABEL_DEN, &pass);
	for (int e = 0; e < nt && ar_budget_left(&pass); e++) {
		ArBudget share;
		char *lab = kept + (size_t)nk * (size_t)k->n;
		bool ok = false, dup = false;
		/* What is left, shared evenly by the tries to come. */
		ar_budget_share(&pass, 1, nt - e, &share);
		bar_units(s, s->t[t[e].cut], NULL, 0, &share);
		s->cap[1] = t[e].h, s->cap[2] = k->target - t[e].h;
		for (int first = 1; first <= 2 && !ok; first++) {
			ArBudget lw;
			ar_budget_share(&share, 1, FIRST_DEN, &lw);
			s->work = &lw;
			ok = label(s, first);
			ar_budget_settle(&share, &lw);
		}
		if (ok) {
			ArBudget uw;
			memcpy(ulab, s->lab, (size_t)s->n);
			ar_budget_share(&share, 1, UNITS_DEN, &uw);
			two[nk] = s != &k->bl &&
				  relabel(s, ulab, k->target, s->t[t[e].cut],
					  t[e].h, cuts, ncut, &uw);
			ar_budget_settle(&share, &uw);
			for (int i = 0; i < k->n; i++)
				lab[i] = ulab[of[i]];
			if (!two[nk])
				two[nk] = relabel(&k->bl, lab, k->target,
						  s->t[t[e].cut], t[e].h, cuts,
						  ncut, &share);
			for (int j = 0; j < nk && !dup; j++)
				dup = !memcmp(kept + (size_t)j * (size_t)k->n,
					      lab, (size_t)k->n);
			if (!dup)
				nk++;
		}
		ar_budget_settle(&pass, &share);
	}
	ar_budget_settle(work, &pass);
	/* Both layers split first, each in the order found. */
	for (int j = 0; j < nk; j++)
		if (two[j])
			order[no++] = j;
	ntwo = no;
	for (int j = 0; j < nk; j++)
		if (!two[j])
			order[no++] = j;
	for (int j = 0; j < nk && best > k->target &&
			ar_budget_left(work); j++) {
		ArBudget share;
		ar_budget_share(work, 1, j < ntwo ? ntwo - j : nk - j, &share);
		best = stack_labels(k, kept + (size_t)order[j] * (size_t)k->n,
				    best, &share, nodes);
		ar_budget_settle(work, &share);
	}
	free(kept), free(order), free(two), free(ulab);
	return best;
}

/*
 * The component c[0..n) of b (buffers by index), height above target.
 * First the blocks its buffers join into (dsa_blocks.c) are labelled,
 * the layers solved from their buffers: labelling blocks is a sixth of
 * the search, and solving each layer from its buffers lets its own joins
 * stay within it, so the time cuts that joins across the two layers had
 * hidden split the layer again (holes 2,000 seed 1's smaller component
 * solved alone: +4.5% with layers of blocks, +0.8% so).  Then, still
 * above target, the buffers themselves with the work left: a stack of
 * one lifetime may join pieces of both strips, which no labelling of
 * blocks separates.  Returns the component's height.
 */
static int64_t split(ArBuf *b, const int *c, int n, int64_t target,
		     ArBudget *work, int64_t *nodes)
{
	Comp k = { .b = b, .c = c, .n = n, .target = target };
	ArBuf *unit = ar_xmalloc((size_t)n * sizeof *unit);
	int *of = ar_xmalloc((size_t)n * sizeof *of);
	int64_t best;
	int nu;

	k.sub = ar_xmalloc((size_t)n * sizeof *k.sub);
	k.bot = ar_xmalloc((size_t)n * sizeof *k.bot);
	k.top = ar_xmalloc((size_t)n * sizeof *k.top);
	k.bid = ar_xmalloc((size_t)n * sizeof *k.bid);
	k.tid = ar_xmalloc((size_t)n * sizeof *k.tid);
	for (int i = 0; i < n; i++) {
		k.sub[i] = b[c[i]];
		k.g = ar_dsa_gcd(k.sub[i].size, k.g);
	}
	best = ar_dsa_height(k.sub, n);
	tables(&k.bl, k.sub, n, k.sub, NULL, n, work);
	for (int loose = 0, last = n; loose < 2 && best > target &&
			ar_budget_left(work); loose++) {
		nu = ar_dsa_block_of(k.sub, n, loose, work, unit, of);
		if (nu != last && 4 * (int64_t)nu <= 3 * (int64_t)n) {
			Label s;
			tables(&s, unit, nu, k.sub, of, n, work);
			best = tries_on(&k, &s, of, best, work, nodes);
			drop(&s);
		}
		last = nu;
	}
	for (int i = 0; i < n; i++)
		of[i] = i;
	if (best > target && ar_budget_left(work))
		best = tries_on(&k, &k.bl, of, best, work, nodes);
	drop(&k.bl);
	free(k.sub), free(k.bot), free(k.top), free(k.bid), free(k.tid);
	free(unit), free(of);
	return best;
}

int64_t ar_dsa_layers(ArBuf *b, int n, int64_t target, ArBudget *work,
		      int64_t *nodes)
{
	ArSortKey *k = ar_xmalloc((size_t)n * sizeof *k + 1);
	int *c = ar_xmalloc((size_t)n * sizeof *c + 1);
	bool *to = ar_xcalloc((size_t)n + 1, sizeof *to);
	ArComponents cc;
	int left = 0;

	ar_dsa_components(b, n, &cc);
	/* Those to split share the work by buffers. */
	for (int ci = 0; ci < cc.nc; ci++) {
		const int *ids = cc.ids + cc.start[ci];
		int m = cc.start[ci + 1] - cc.start[ci];
		int64_t h = 0;
		for (int j = 0; j < m; j++)
			if (b[ids[j]].offset + b[ids[j]].size > h)
				h = b[ids[j]].offset + b[ids[j]].size;
		to[ci] = m >= MIN_BUFFERS && m <= MAX_BUFFERS && h > target;
		left += to[ci] ? m : 0;
	}
	for (int ci = 0; ci < cc.nc && ar_budget_left(work); ci++) {
		const int *ids = cc.ids + cc.start[ci];
		int m = cc.start[ci + 1] - cc.start[ci];
		ArBudget share;
		if (!to[ci])
			continue;
		/* By start, end and index: the order split() was measured
		 * with, its labelling's ties falling that way. */
		for (int j = 0; j < m; j++) {
			const ArBuf *x = &b[ids[j]];
			k[j] = (ArSortKey){ x->lo, x->hi, 0, ids[j] };
		}
		ar_sort_keys(k, m);
		for (int j = 0; j < m; j++)
			c[j] = k[j].id;
		ar_budget_share(work, m, left, &share);
		left -= m;
		split(b, c, m, target, &share, nodes);
		ar_budget_settle(work, &share);
	}
	free(k), free(c), free(to), free(cc.ids), free(cc.start);
	return ar_dsa_height(b, n);
}
