/*
 * dsa_label.c — the layer split's labelling (dsa_layers.c): which units,
 * blocks or buffers, go below a cut by bytes and which above it, so that
 * neither layer passes its height at any time and no unit of a layer has
 * a buffer across one of that layer's time cuts.
 *
 * A depth-first search labels the units bottom or top, each label checked
 * over the unit's lifetime (at most cap[1] bytes below and cap[2] above
 * over every span; the bars first), with conflict-directed backjumping
 * (see ar_dsa_label()) and failed states remembered: the next unit and
 * the bottom ones labelled that share a span with the rest say all the
 * rest of the search depends on, so they are hashed (Zobrist) and a
 * state met again fails at once.  All of it is counted in work units: a
 * label tried costs one per span of the unit's lifetime.
 *
 * The order starts at the bottom layer's time cut (ar_dsa_label_pivot()):
 * the units live just before it, then those after it by start, then those
 * before it by end, the later first.  Why: where a strip's parts meet,
 * the bottom units live there are those ending at the cut, a dozen or so,
 * and few subsets of them make the layer's height, while at the
 * component's first step thirty or more start and a great many do.  On a
 * stack of strips without holes (gen_dsa.py's holes 2,000 seed 6 without
 * its holes, the two upper strips of its first component, 936 buffers)
 * 806,878 subsets of the 31 units at the first step make the bottom
 * height, and one of the 15 ending at the cut; every later start then
 * admits one label: by start the search finds no labelling in 2 G units,
 * from the cut the generator's in 24-70 k.  Holes 2,000 seeds 1-7 went
 * from +0.16 / +3.19 / +8.87 / +6.46 / +3.81 / +5.74 / +3.22% to 0 /
 * +1.32 / +4.88 / +5.68 / +3.38 / +3.85 / +0.60% so, MiniMalloc's J
 * from 1,002,496 to 996,352.
 *
 * Units tied to each other (dsa_ties.c: they hand over to each other
 * where the load stays level) are labelled at once, as a class, when the
 * first of them in the order is: a wrong label then clashes where the
 * unit it hands over to lives, at once, not when the search reaches it.
 * On holes 2,000 seed 9's second component at the generator's cut and
 * height, from scratch, the search found no labelling in 3 G units
 * before and finds one in 53 M with the ties of the exactly filled spans
 * (3.8 M with those where the load stays level); given the generator's
 * labels as the first to try, one of them flipped (a buffer starting 125
 * steps before a stretch the layers fill exactly) left it without a
 * labelling in 20 M units, and now costs it 0.1 M more.
 */
#include "dsa_label.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "sortkey.h"

/* Failed states remembered: a table of as many slots as the search has
 * units of work (each state costs at least one), at most this many (a
 * power of two: 8 MiB of keys). */
#define MEMO_MAX ((size_t)1 << 20)

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static bool memo_has(const ArLabel *s, uint64_t k)
{
	for (size_t i = k & (s->slots - 1); s->memo[i];
	     i = (i + 1) & (s->slots - 1))
		if (s->memo[i] == k)
			return true;
	return false;
}

static void memo_add(ArLabel *s, uint64_t k)
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
 * label: l = 0) before depth q: the depths of their classes' leads. */
static void blame(const ArLabel *s, uint64_t *set, const int *ids, int n,
		  int l, int q)
{
	for (int e = 0; e < n; e++) {
		int j = ids[e], p = s->pos[s->lead[j]];
		if (p < q && s->lab[j] && (!l || s->lab[j] == l))
			set[p / 64] |= (uint64_t)1 << (p % 64);
	}
}

/* Unit i's side of the pivot span p: 0 live over it, 1 after it, 2
 * before it. */
static int side(const ArLabel *s, int i, int p)
{
	return s->slo[i] > p ? 1 : s->shi[i] <= p ? 2 : 0;
}

/* The deepest depth in set (words of it), -1 when empty. */
static int deepest(const uint64_t *set, int words)
{
	for (int w = words - 1; w >= 0; w--)
		if (set[w])
			return 64 * w + 63 - __builtin_clzll(set[w]);
	return -1;
}

/*
 * Blames layer l passing its height over span k, where unit i labelled
 * l at depth q would live, on the units labelled before q: those of l
 * over k; or, where the span a nearest i on the side already labelled
 * (before its start after the pivot, after its end before it) is one the
 * layers fill exactly, those over a and not over k whatever their label
 * and those of l over k and not over a, when the deepest of them is
 * shallower.
 *
 * Why: over a, layer l holds exactly cap[l] in any labelling that keeps
 * the heights (the loads add up to the heights there), so over k it
 * holds cap[l] less what of l ends between a and k plus what starts
 * there; the units over both count the same and have nothing to do with
 * it.  Where no hole lies a strip's load is its height, and every
 * boundary is a hand-over whose bytes must match, which the units live
 * across it do not decide.  Measured: holes 1,000 seed 5 at effort 3
 * from +1.17% to +0.57%, seeds 1-16 otherwise as they were, holes 2,000
 * seeds 1-10 as they were.  Not enough where it was meant for: holes
 * 2,000 seed 9's second component, given its generator's cut and
 * heights, is filled exactly from step 6,316 to 6,636 (41-49 units
 * live), and the search still goes no deeper than 148 of its 1,028
 * units in 300 M units of work: what is wrong there was chosen in the
 * slack before.
 */
static void blame_over(ArLabel *s, int i, int l, int k, int q,
		       uint64_t *set, int words)
{
	const int *ids = s->spanned + s->sstart[k];
	int n = s->sstart[k + 1] - s->sstart[k], a = -1;
	int g = side(s, i, s->pivot), c;

	if (g == 1 && s->slo[i] > 0 && s->below[s->slo[i] - 1] >= s->pivot)
		a = s->below[s->slo[i] - 1];
	else if (g == 2 && s->above[s->shi[i]] <= s->pivot)
		a = s->above[s->shi[i]];
	if (a < 0) {
		blame(s, set, ids, n, l, q);
		return;
	}
	memset(s->why[0], 0, 2 * (size_t)words * sizeof *set);
	blame(s, s->why[0], ids, n, l, q);
	for (int e = 0; e < n; e++) {
		int u = ids[e];
		if (!(s->slo[u] <= a && a < s->shi[u]))
			blame(s, s->why[1], &u, 1, l, q);
	}
	ids = s->spanned + s->sstart[a];
	n = s->sstart[a + 1] - s->sstart[a];
	for (int e = 0; e < n; e++) {
		int u = ids[e];
		if (!(s->slo[u] <= k && k < s->shi[u]))
			blame(s, s->why[1], &u, 1, 0, q);
	}
	c = deepest(s->why[1], words) < deepest(s->why[0], words);
	for (int w = 0; w < words; w++)
		set[w] |= s->why[c][w];
}

/*
 * Whether unit i may be labelled l at depth q: 0 when it may, 1 when
 * it may not go there at all (barred: see ar_dsa_label_bar()), 2 when
 * that layer would pass its height over some span, blamed (added to set)
 * on the first such span: as blame_over() says for the unit at depth q,
 * on the units of l live there for one of its class (a unit over the
 * span filled exactly may not be labelled yet then).
 */
static int clash(ArLabel *s, int i, int l, int q, uint64_t *set, int words)
{
	const int64_t *sum = l == 1 ? s->lb : s->lt;
	if (s->bar[i] & l)
		return 1;
	for (int k = s->slo[i]; k < s->shi[i]; k++)
		if (sum[k] + s->b[i].size > s->cap[l]) {
			if (s->order[q] == i)
				blame_over(s, i, l, k, q, set, words);
			else
				blame(s, set, s->spanned + s->sstart[k],
				      s->sstart[k + 1] - s->sstart[k], l, q);
			return 2;
		}
	return 0;
}

static void give(ArLabel *s, int i, int l, int sign)
{
	int64_t *sum = l == 1 ? s->lb : s->lt;
	for (int k = s->slo[i]; k < s->shi[i]; k++)
		sum[k] += sign * s->b[i].size;
	s->lab[i] = sign > 0 ? (char)l : 0;
}

/*
 * Labels l the class unit i leads, at depth q, member by member (i
 * first), each checked (clash()) before it is added: 0 when all are,
 * else clash()'s answer for the first that is not, those before it
 * taken back.
 */
static int put(ArLabel *s, int i, int l, int q, uint64_t *set, int words)
{
	const int *mem = s->mem + s->mstart[i];
	int nm = s->mstart[i + 1] - s->mstart[i];

	assert(nm > 0 && mem[0] == i);
	for (int e = 0; e < nm; e++) {
		int u = mem[e], r;
		ar_budget_spend(s->work, s->shi[u] - s->slo[u]);
		r = clash(s, u, l, q, set, words);
		if (r) {
			while (e-- > 0)
				give(s, mem[e], l, -1);
			return r;
		}
		give(s, u, l, 1);
	}
	return 0;
}

/*
 * The depth-first search, iterative (a component may hold thousands of
 * buffers), with conflict-directed backjumping: depth q labels buffer
 * order[q], its first label (first, or its phase) then the other, and
 * with it every unit tied to it (its class: put()); a unit whose class
 * an earlier one leads passes.  A label that passes a capacity over
 * some span is blamed on the buffers of that label live there (at the
 * depths of their leads), or on those that changed since a span the
 * layers fill exactly (blame_over()); when both fail, the search jumps
 * back to the deepest buffer blamed (those between had nothing to do
 * with it) and tries its other label, the blame carried along.  Without
 * that, a wrong label far back (a layer a few bytes off its height,
 * which the holes' slack hides for a while) is found only after every
 * combination of the labels since.
 * Failed states are remembered (see the file's comment); one met again
 * is blamed on every buffer live where it starts.  True when every
 * buffer has a label; false when none can, or the work ran out.
 */
bool ar_dsa_label(ArLabel *s, int first)
{
	int n = s->n, words = (n + 63) / 64;
	int *tried = ar_xcalloc((size_t)n + 1, sizeof *tried);
	uint64_t *key = ar_xcalloc((size_t)n + 1, sizeof *key);
	uint64_t *conf = ar_xmalloc(((size_t)n + 1) * (size_t)words *
				    sizeof *conf);
	int q = 0;
	bool found = false;

	assert(s->live);        /* ordered: ar_dsa_label_pivot() */
	assert(!s->grp || s->cap[1] + s->cap[2] == s->tied);
	memset(s->lab, 0, (size_t)n);
	for (s->slots = 64; (int64_t)s->slots < s->work->left &&
	     s->slots < MEMO_MAX; )
		s->slots *= 2;
	s->memo = ar_xcalloc(s->slots, sizeof *s->memo);
	s->nmemo = 0;
	memset(s->lb, 0, (size_t)s->m * sizeof *s->lb);
	memset(s->lt, 0, (size_t)s->m * sizeof *s->lt);
	/* The spans the layers fill exactly, nearest each span. */
	s->below = ar_xmalloc(((size_t)s->m + 1) * sizeof *s->below);
	s->above = ar_xmalloc(((size_t)s->m + 1) * sizeof *s->above);
	ar_budget_spend(s->work, 2 * (int64_t)s->m);
	for (int k = 0, last = -1; k < s->m; k++) {
		if (s->load[k] == s->cap[1] + s->cap[2])
			last = k;
		s->below[k] = last;
	}
	s->above[s->m] = s->m;
	for (int k = s->m - 1; k >= 0; k--)
		s->above[k] = s->load[k] == s->cap[1] + s->cap[2] ? k
			      : s->above[k + 1];
	s->why[0] = ar_xmalloc(2 * (size_t)words * sizeof *conf + 1);
	s->why[1] = s->why[0] + words;
	while (ar_budget_spend(s->work, 1)) {
		uint64_t *cq = conf + (size_t)q * (size_t)words;
		int d;
		if (q == n) {
			found = true;
			break;
		}
		if (tried[q] == 0) {
			/* Entering: a keyed depth keys the state by the
			 * bottom units of its live list. */
			int nl = s->lstart[q + 1] - s->lstart[q];
			memset(cq, 0, (size_t)words * sizeof *cq);
			key[q] = 0;
			if (s->keyed[q]) {
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
			int f = s->phase ? s->phase[i] : first, l;
			if (s->lead[i] != i) {
				/* Labelled with its class. */
				tried[q] = 2;
				tried[++q] = 0;
				break;
			}
			l = tried[q]++ == 0 ? f : 3 - f;
			if (put(s, i, l, q, cq, words) == 0) {
				tried[++q] = 0;
				break;
			}
		}
		if (tried[q] == 0)
			continue;
		/* Depth q failed: back to the deepest buffer blamed. */
		if (key[q])
			memo_add(s, key[q]);
		d = deepest(cq, words);
		if (d < 0)
			break;          /* blamed on nothing: no labelling */
		for (int p = q - 1; p >= d; p--) {
			int i = s->order[p], l = s->lab[i];
			for (int e = s->mstart[i]; e < s->mstart[i + 1]; e++)
				give(s, s->mem[e], l, -1);
			if (p > d && key[p])
				memo_add(s, key[p]);
		}
		cq[d / 64] &= ~((uint64_t)1 << (d % 64));
		for (int w = 0; w < words; w++)
			conf[(size_t)d * (size_t)words + (size_t)w] |= cq[w];
		q = d;
	}
	free(tried), free(key), free(conf), free(s->memo);
	free(s->below), free(s->above), free(s->why[0]);
	s->memo = NULL;
	return found;
}

/*
 * The labelling's tables for the units u[0..nu) made of the buffers
 * mb[0..nmb), mb[j] part of unit mof[j] (mof NULL: the units are the
 * buffers; see ArLabel).  Costs a unit of work per unit and span it is
 * live over, twice.
 */
void ar_dsa_label_tables(ArLabel *s, const ArBuf *u, int nu,
			 const ArBuf *mb, const int *mof, int nmb,
			 ArBudget *work)
{
	uint64_t z = 0x9e3779b97f4a7c15ULL;
	int64_t cost = nu;

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
	s->keyed = ar_xmalloc((size_t)nu + 1);
	for (int i = 0; i < nu; i++) {
		s->zob[i] = mix(z += 0x9e3779b97f4a7c15ULL);
		s->t[s->slo[i]] = u[i].lo, s->t[s->shi[i]] = u[i].hi;
		s->es[s->slo[i]] += u[i].size;
		s->ee[s->shi[i]] += u[i].size;
		for (int x = s->slo[i]; x < s->shi[i]; x++)
			s->load[x] += u[i].size;
		cost += s->shi[i] - s->slo[i];
	}
	ar_budget_spend(work, 2 * cost);
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
}

void ar_dsa_label_free(ArLabel *s)
{
	free(s->slo), free(s->shi), free(s->order), free(s->load);
	free(s->lb), free(s->lt), free(s->zob), free(s->lab), free(s->live);
	free(s->lstart), free(s->pos), free(s->spanned), free(s->sstart);
	free(s->es), free(s->ee), free(s->t), free(s->bar), free(s->keyed);
	free(s->grp), free(s->glo), free(s->ghi), free(s->lead), free(s->mem);
	free(s->mstart);
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
void ar_dsa_label_bar(ArLabel *s, int64_t cut, const int64_t *top,
		      int ntop, ArBudget *work)
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

static void push(ArLabel *s, size_t *cap, size_t *len, int u)
{
	if (*len == *cap) {
		*cap *= 2;
		s->live = ar_xrealloc(s->live, *cap * sizeof *s->live);
	}
	s->live[(*len)++] = u;
}

/*
 * Each unit's lead, the first of its class (s->grp) in the order, and
 * the members of each lead's class in the order (the lead first).
 */
static void leads(ArLabel *s)
{
	int n = s->n;
	int *first = ar_xmalloc((size_t)n * sizeof *first + 1);

	free(s->lead), free(s->mem), free(s->mstart);
	s->lead = ar_xmalloc((size_t)n * sizeof *s->lead + 1);
	s->mem = ar_xmalloc((size_t)n * sizeof *s->mem + 1);
	s->mstart = ar_xcalloc((size_t)n + 2, sizeof *s->mstart);
	for (int i = 0; i < n; i++)
		first[i] = -1;
	for (int q = 0; q < n; q++) {
		int i = s->order[q], r = s->grp ? s->grp[i] : i;
		if (first[r] < 0)
			first[r] = i;
		s->lead[i] = first[r];
		s->mstart[first[r] + 2]++;
	}
	for (int i = 2; i <= n + 1; i++)
		s->mstart[i] += s->mstart[i - 1];
	for (int q = 0; q < n; q++) {
		int i = s->order[q];
		s->mem[s->mstart[s->lead[i] + 1]++] = i;
	}
	free(first);
}

/*
 * The order, the states keyed and their live lists for the pivot at
 * time cut: the units live over the span that ends there first (larger
 * first), then those after it by start, then those before it by end,
 * the later first (at or before every unit's start: start to end).
 * A state is keyed at the first unit of each start (after) or end
 * (before) by the bottom units labelled so far whose class (the units
 * tied to them: ar_dsa_label_ties(), labelled with their lead) shares a
 * span with a unit still to come: after the pivot, those whose class is
 * live where the unit starts and every one over the pivot span (the
 * units before it come last); before it, those whose class is live where
 * it ends or earlier.  Only leads are listed: a class is labelled as its
 * lead.  No class holds units before the pivot span and after it but
 * none over it (a tie is between units ending or starting at one time),
 * so one led after it never reaches before it.  Costs a unit of work per
 * unit and list entry.
 */
void ar_dsa_label_pivot(ArLabel *s, int64_t cut, ArBudget *work)
{
	int n = s->n, p = -1, q0 = 0, na = 0, before = 0;
	ArSortKey *k = ar_xmalloc((size_t)n * sizeof *k + 1);
	int *act = ar_xmalloc((size_t)n * sizeof *act + 1);
	const int *glo = s->grp ? s->glo : s->slo;
	const int *ghi = s->grp ? s->ghi : s->shi;
	size_t cap = 256, len = 0;

	for (int x = 1; x <= s->m; x++)
		if (s->t[x] == cut)
			p = x - 1;
	assert(p >= 0);
	s->pivot = p;
	for (int i = 0; i < n; i++) {
		int g = side(s, i, p);
		int64_t at = g == 1 ? s->slo[i] : g == 2 ? s->m - s->shi[i] : 0;
		k[i] = (ArSortKey){ ((int64_t)g << 32) + at, -s->b[i].size,
				    0, i };
		before += g == 2;
	}
	ar_sort_keys(k, n);
	for (int q = 0; q < n; q++)
		s->order[q] = k[q].id, s->pos[k[q].id] = q;
	free(k);
	leads(s);
	free(s->live);
	s->live = ar_xmalloc(cap * sizeof *s->live);
	while (q0 < n && side(s, s->order[q0], p) == 0)
		q0++;
	for (int q = 0; q < n; q++) {
		int i = s->order[q], g = side(s, i, p);
		int r = q ? s->order[q - 1] : -1, gr = r < 0 ? -1 : side(s, r, p);
		s->lstart[q] = (int)len;
		s->keyed[q] = q == 0;
		if (g == 0)
			continue;
		if (gr != g)
			na = 0;
		else if (g == 1 ? s->slo[r] == s->slo[i]
				: s->shi[r] == s->shi[i])
			goto next;
		s->keyed[q] = 1;
		{
			int keep = 0;
			for (int e = 0; e < na; e++)
				if (g == 1 ? ghi[act[e]] > s->slo[i]
					   : glo[act[e]] < s->shi[i])
					act[keep++] = act[e];
			na = keep;
		}
		for (int e = 0; e < q0; e++) {
			int u = s->order[e];
			if (s->lead[u] == u &&
			    (g == 1 ? before || ghi[u] > s->slo[i]
				    : glo[u] < s->shi[i]))
				push(s, &cap, &len, u);
		}
		for (int e = 0; e < na; e++)
			push(s, &cap, &len, act[e]);
next:
		assert(g != 1 || s->lead[i] != i || glo[i] > p);
		if (s->lead[i] == i)
			act[na++] = i;
	}
	s->lstart[n] = (int)len;
	ar_budget_spend(work, n + (int64_t)len);
	free(act);
}
