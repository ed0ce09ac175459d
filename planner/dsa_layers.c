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
 * themselves, by a depth-first search (dsa_label.c) from c out: at most
 * h bytes below and target - h above at every time, no bottom unit with
 * a buffer across c, units that hand over to each other in one layer
 * (dsa_ties.c): first wherever the load stays level, a presumption that
 * holds for a perfect packing with holes, then only where the layers
 * fill exactly, which holds for any (pass()).  With level ties the
 * heights of a stack of two strips are scanned too (scan()), both layers
 * kept off a cut: holes at both edges of both strips' cuts hide the
 * heights the tries name.
 * A labelling found is done again, on its units and then on the buffers,
 * its own labels tried first, with the top layer kept off other cuts as
 * well (relabel()): then both layers fall apart by time.
 * The layers are made of the buffers of their units and go to
 * ar_dsa_solve, minimising, each part a time splits them into alone
 * (solve_parts()), so a layer that is a stack of strips itself is split
 * again (each call gets a share of the work and fewer buffers, so this
 * ends); the top layer is placed on the bottom one's height.  The stack
 * is a valid placement whatever the labels; it is kept only when lower.
 * All of it is counted in work units.
 *
 * Measured (bench_dsa.sh, see the README): holes 2,000 seeds 1 / 2 / 3
 * from +11.0 / +11.2 / +8.7% (no split) to +0.16 / +3.19 / +8.87% (both
 * layers cut, parts solved alone, loosened stacks) and to 0 / +1.32 /
 * +4.88% (labelled from the cut out) and to 0 / +0.35 / +1.28% (tied;
 * seeds 1-10: all within 1.3%, where five were within 2%); holes 1,000
 * at effort 3, seeds
 * 1-6, from +9.5 / +8.4 / +8.4 / +10.7 / +11.2 / +7.7% to 0 / 0 / 0 /
 * +1.1 / +4.1 / +7.4%, and to 0 / +0.18 / 0 / +0.20 / +1.17 / 0%;
 * MiniMalloc's J from 1,020,928 to 1,002,496 and 996,352.
 * Labelling is the weak part.  By start, on the 1,383 buffers of holes
 * 2,000 seed 1's larger component the search from scratch found none
 * even at the generator's own cut and height within its work (one is
 * found with 250 M units); on the blocks, a sixth as many, it does, but
 * coincidental joins (pieces of one lifetime or of one size handing
 * over, from different strips) may tie the layers together: seed 2's
 * larger component has four blocks with pieces of both (all stacks of
 * one lifetime: five pieces over steps 0-192, three below and two
 * above), and no labelling of its 259 blocks exists; of its 419 loosened
 * ones one is found in 24-51 M units (none of its 1,454 buffers in 300 M;
 * none either with a table of failed states of 64 slots a unit).
 * Seed 3's larger component (1,259 buffers, 383 loosened units) got
 * none: 45 of its buffers start at its first step, with the holes'
 * slack, and the loads first pin the layers 300 steps later, where the
 * search stalled; from the cut out it is labelled at the generator's
 * cut and height, but not as the generator's (+5.7%).  A strip's height
 * is the handover only where no hole lies at its edge (seed 1's
 * 276,928-byte strip hands over 244,224).
 */
#include "dsa_label.h"

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
/* The level pass's share of the work its tries leave its scan of heights
 * (scan()) at least. */
#define SCAN_DEN 8

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

/* A cut to try: the span boundary no buffer of the bottom layer crosses,
 * and that layer's height. */
typedef struct {
	int cut;
	int64_t h;
} Try;

/* The bytes handed over at boundary x: the larger of those ending and
 * those starting there. */
static int64_t hand(const ArLabel *s, int x)
{
	return s->es[x] > s->ee[x] ? s->es[x] : s->ee[x];
}

/* The best RECUTS boundaries of s to cut at, inside the component (0 <
 * x < m), by min(E, S) descending, the earlier first, to cut[]; returns
 * how many. */
static int rank_cuts(const ArLabel *s, int *cut)
{
	ArSortKey *k = ar_xmalloc((size_t)s->m * sizeof *k + 1);
	int ncut = 0;

	for (int x = 1; x < s->m; x++) {
		int64_t lo = s->es[x] < s->ee[x] ? s->es[x] : s->ee[x];
		if (lo > 0)
			k[ncut++] = (ArSortKey){ -lo, x, 0, x };
	}
	ar_sort_keys(k, ncut);
	if (ncut > RECUTS)
		ncut = RECUTS;
	for (int ci = 0; ci < ncut; ci++)
		cut[ci] = k[ci].id;
	free(k);
	return ncut;
}

/*
 * The tries for s's units (see the file's comment), cut by cut, the best
 * CUTS first; heights are multiples of g.  The times of the best RECUTS
 * go to cuts.  Returns how many tries, *ncut how many cuts in cuts.
 */
static int tries(const ArLabel *s, int64_t g, int64_t target, Try *t,
		 int64_t *cuts, int *ncut_out)
{
	int cut[RECUTS], ncut = rank_cuts(s, cut), nt = 0;

	for (int ci = 0; ci < ncut; ci++)
		cuts[ci] = s->t[cut[ci]];
	*ncut_out = ncut;
	if (ncut > CUTS)
		ncut = CUTS;
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
	ArLabel bl;
} Comp;

/*
 * Labels s's units again, lab[u] (unit u's label) tried first, the
 * bottom layer kept off the time cut and at height h as before, and the
 * top one now kept off another of the first CUTS cuts too, then off each
 * other of the ncut cuts as well while a labelling is found so (lab
 * each time overwritten, and tried first).  True when the top is kept
 * off at least one.  See tries_on() for why.
 */
static bool relabel(ArLabel *s, char *lab, int64_t target, int64_t cut,
		    int64_t h, const int64_t *cuts, int ncut, ArBudget *work)
{
	int64_t top[RECUTS];
	int ntop = 0, first = ncut < CUTS ? ncut : CUTS;

	assert(ncut <= RECUTS);
	s->phase = lab;
	ar_dsa_label_pivot(s, cut, work);
	s->cap[1] = h, s->cap[2] = target - h;
	for (int c = 0; c < ncut && ar_budget_left(work); c++) {
		ArBudget lw;
		if (cuts[c] == cut || (!ntop && c >= first))
			continue;
		top[ntop] = cuts[c];
		ar_dsa_label_bar(s, cut, top, ntop + 1, work);
		ar_budget_share(work, 1, (ntop ? ncut : first) - c, &lw);
		s->work = &lw;
		if (ar_dsa_label(s, 1)) {
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
static int64_t tries_on(Comp *k, ArLabel *s, const int *of, int64_t best,
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
		ar_dsa_label_bar(s, s->t[t[e].cut], NULL, 0, &share);
		ar_dsa_label_pivot(s, s->t[t[e].cut], &share);
		s->cap[1] = t[e].h, s->cap[2] = k->target - t[e].h;
		for (int first = 1; first <= 2 && !ok; first++) {
			ArBudget lw;
			ar_budget_share(&share, 1, FIRST_DEN, &lw);
			s->work = &lw;
			ok = ar_dsa_label(s, first);
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
 * Scans the heights of a stack of two strips cut at the two best cuts of
 * k's buffers (k->bl, its level ties found): the bottom layer kept off
 * the first, the top one off the second, at every height h (a multiple
 * of k->g) from what the bottom layer must hold (the most the buffers
 * across the second cut hold at once, or the first cut's handover) to
 * the target less what the top one must, the two ends first, each
 * labelled with an even share of the work left, then those neither
 * labelled nor refuted so with what is left.  True with the labels in
 * lab (k->n) at the first height labelled.
 *
 * Why: where holes lie at both edges of both strips' cuts no height the
 * tries name is a strip's own (holes 2,000 seed 16's larger component:
 * strips of 514,048 and 534,528 bytes cut at steps 5,516 and 5,601,
 * handing over 480,448 / 498,944 and 508,544 / 515,456), and with level
 * ties and both cuts kept a wrong height is refuted in 0.4-0.5 M units
 * (that component: 535 heights), where the right one is labelled in 7.7
 * M, 28 buffers off the generator's strips.
 */
static bool scan(Comp *k, char *lab, ArBudget *work)
{
	ArLabel *s = &k->bl;
	int cut[RECUTS], ncut = rank_cuts(s, cut), nh, left;
	int64_t tc, top, lo = 0, hi = 0, g = k->g;
	int64_t *across[2];
	char *refuted;
	bool found = false;

	if (ncut < 2)
		return false;
	tc = s->t[cut[0]], top = s->t[cut[1]];
	across[0] = ar_xcalloc((size_t)s->m + 1, sizeof *across[0]);
	across[1] = ar_xcalloc((size_t)s->m + 1, sizeof *across[1]);
	for (int i = 0; i < s->n; i++) {
		const ArBuf *x = &s->b[i];
		for (int e = 0; e < 2; e++) {
			int64_t c = e ? tc : top;
			if (!(x->lo < c && c < x->hi))
				continue;
			ar_budget_spend(work, s->shi[i] - s->slo[i]);
			for (int y = s->slo[i]; y < s->shi[i]; y++)
				across[e][y] += x->size;
		}
	}
	for (int y = 0; y < s->m; y++) {
		lo = across[0][y] > lo ? across[0][y] : lo;
		hi = across[1][y] > hi ? across[1][y] : hi;
	}
	free(across[0]), free(across[1]);
	lo = hand(s, cut[0]) > lo ? hand(s, cut[0]) : lo;
	hi = hand(s, cut[1]) > hi ? hand(s, cut[1]) : hi;
	lo = (lo + g - 1) / g * g;
	hi = (k->target - hi) / g * g;
	if (lo <= 0 || hi >= k->target || lo > hi)
		return false;
	nh = (int)((hi - lo) / g + 1);
	refuted = ar_xcalloc((size_t)nh + 1, 1);
	ar_dsa_label_bar(s, tc, &top, 1, work);
	ar_dsa_label_pivot(s, tc, work);
	left = nh;
	for (int round = 0; round < 2 && !found; round++) {
		for (int j = 0; j < nh && !found && ar_budget_left(work); j++) {
			/* lo, hi, then upward. */
			int64_t h = j == 0 ? lo : j == 1 ? hi : lo + (j - 1) * g;
			ArBudget lw;
			if (refuted[j])
				continue;
			ar_budget_share(work, 1, left--, &lw);
			s->cap[1] = h, s->cap[2] = k->target - h;
			s->work = &lw;
			found = ar_dsa_label(s, 1);
			refuted[j] = !found && ar_budget_left(&lw);
			ar_budget_settle(work, &lw);
		}
		left = 0;
		for (int j = 0; j < nh; j++)
			left += !refuted[j];
	}
	if (found)
		memcpy(lab, s->lab, (size_t)k->n);
	free(refuted);
	return found;
}

/*
 * Labels k's units, the blocks its buffers join into (dsa_blocks.c),
 * then those loosened, then its buffers, each with the ties found where
 * the load stays level (level) or only where the layers fill exactly
 * (ar_dsa_label_ties()), and stacks the labellings found (tries_on())
 * while above k's target; with level ties, then, still above it, a scan
 * of the heights of two strips (scan()) with half of what the tries left
 * (they leave 1 / SCAN_DEN of the work at least), its labelling stacked
 * with the rest.  unit and of: room for k->n.  Returns the lowest
 * height.
 */
static int64_t pass(Comp *k, bool level, ArBuf *unit, int *of, int64_t best,
		    ArBudget *work, int64_t *nodes)
{
	int n = k->n;
	ArBudget rw;

	ar_dsa_label_ties(&k->bl, k->target, level, work);
	/* The scan's share kept back: the tries get the rest first. */
	ar_budget_share(work, level ? SCAN_DEN - 1 : 1, level ? SCAN_DEN : 1,
			&rw);
	for (int loose = 0, last = n; loose < 2 && best > k->target &&
			ar_budget_left(&rw); loose++) {
		int nu = ar_dsa_block_of(k->sub, n, loose, &rw, unit, of);
		if (nu != last && 4 * (int64_t)nu <= 3 * (int64_t)n) {
			ArLabel s;
			ar_dsa_label_tables(&s, unit, nu, k->sub, of, n, &rw);
			ar_dsa_label_ties(&s, k->target, level, &rw);
			best = tries_on(k, &s, of, best, &rw, nodes);
			ar_dsa_label_free(&s);
		}
		last = nu;
	}
	for (int i = 0; i < n; i++)
		of[i] = i;
	if (best > k->target && ar_budget_left(&rw))
		best = tries_on(k, &k->bl, of, best, &rw, nodes);
	ar_budget_settle(work, &rw);
	if (level && best > k->target && ar_budget_left(work)) {
		char *lab = ar_xmalloc((size_t)n + 1);
		ArBudget sw;
		bool found;
		ar_budget_share(work, 1, 2, &sw);
		found = scan(k, lab, &sw);
		ar_budget_settle(work, &sw);
		if (found)
			best = stack_labels(k, lab, best, work, nodes);
		free(lab);
	}
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
 * blocks separates.  All of it twice (pass()): with the ties where the
 * load stays level, with half the work, then with those of the spans
 * filled exactly and the rest.  Why both: the level ties hold the search
 * to labellings that keep each layer's free space in place, which a
 * perfect packing with holes has, so they find its strips where the
 * loads alone admit many labellings that pack higher (holes 2,000 seeds
 * 3, 4, 5, 6 and 9 from +3.35 / +4.64 / +3.38 / +3.56 / +3.97% with
 * exact ties only to +0.93 / +0.92 / +1.68 / 0 / +0.29% with level ones
 * alone); but they also refute every height where no cut's own is tried
 * (holes at both edges of both strips: seed 10's first component) and
 * some labellings then found are near the strips but not at them (seed
 * 8's second component, 37 buffers off), where the exact ties' search
 * finds a labelling that stacks lower (seeds 10 and 8: +6.92% and
 * +6.35% with level ties alone, +1.20% and 0 with exact ones alone).
 * Returns the component's height.
 */
static int64_t split(ArBuf *b, const int *c, int n, int64_t target,
		     ArBudget *work, int64_t *nodes)
{
	Comp k = { .b = b, .c = c, .n = n, .target = target };
	ArBuf *unit = ar_xmalloc((size_t)n * sizeof *unit);
	int *of = ar_xmalloc((size_t)n * sizeof *of);
	int64_t best;

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
	ar_dsa_label_tables(&k.bl, k.sub, n, k.sub, NULL, n, work);
	for (int level = 1; level >= 0 && best > target &&
			ar_budget_left(work); level--) {
		ArBudget share;
		ar_budget_share(work, 1, level + 1, &share);
		best = pass(&k, level, unit, of, best, &share, nodes);
		ar_budget_settle(work, &share);
	}
	ar_dsa_label_free(&k.bl);
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


