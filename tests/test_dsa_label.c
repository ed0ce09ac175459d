/*
 * test_dsa_label.c — the layer split's labelling search (planner/
 * dsa_label.c) is complete and sound from any pivot: on 200 small random
 * instances, with work to spare, it finds a labelling exactly when
 * enumerating all of them does, and the one it finds keeps both heights
 * and the bars.
 *
 * Why: the search remembers failed states keyed by the units labelled
 * so far that share a span with the rest (ar_dsa_label_pivot()); a key
 * that leaves one out would fail a state that can succeed, and the
 * search would report no labelling where there is one, silently (the
 * layer split would only stay higher).  Only enumeration shows that.
 * So would a blame that leaves out a unit the failure depends on (the
 * search would jump past the label to change): blaming only the units
 * of the layer over a span filled exactly, not all those over it and
 * not over the failing one, fails it.
 */
#include "testutil.h"
#include "dsa_label.h"

enum { MAXN = 12, STEPS = 10 };

static uint32_t rng;

static int rnd(int n)
{
	return test_rand(&rng, n);
}

/* Whether labels lab (bit i set: unit i on the bottom) keep the heights
 * and the bars of s. */
static bool valid(const ArLabel *s, unsigned lab)
{
	for (int x = 0; x < s->m; x++) {
		int64_t lb = 0, lt = 0;
		for (int i = 0; i < s->n; i++)
			if (s->slo[i] <= x && x < s->shi[i])
				*(lab >> i & 1 ? &lb : &lt) += s->b[i].size;
		if (lb > s->cap[1] || lt > s->cap[2])
			return false;
	}
	for (int i = 0; i < s->n; i++)
		if (s->bar[i] & (lab >> i & 1 ? 1 : 2))
			return false;
	return true;
}

/*
 * Searches b[0..n) with heights c1 and c2 (the top one barred across
 * one random time half the time, the bottom one across another) from
 * every pivot and both first labels, again with the ties found at c1 +
 * c2 when tie: each time a labelling exactly when enumeration finds one,
 * and a valid one.  Adds to *found or *refuted, and to *joined the units
 * tied to another.
 */
static void check(ArBuf *b, int n, int64_t c1, int64_t c2, bool tie,
		  int *found, int *refuted, int *joined)
{
	ArLabel s;
	ArBudget w;
	int64_t top[1];
	bool any = false;

	ar_budget_init(&w, INT64_MAX / 4, NULL);
	ar_dsa_label_tables(&s, b, n, b, NULL, n, &w);
	if (s.m < 2) {
		ar_dsa_label_free(&s);
		return;
	}
	s.cap[1] = c1, s.cap[2] = c2;
	top[0] = s.t[1 + rnd(s.m - 1)];
	ar_dsa_label_bar(&s, s.t[1 + rnd(s.m - 1)], top, rnd(2), &w);
	for (unsigned lab = 0; lab < 1u << n && !any; lab++)
		any = valid(&s, lab);
	for (int tied = 0; tied <= tie; tied++) {
		if (tied) {
			ar_dsa_label_ties(&s, c1 + c2, false, &w);
			for (int i = 0; i < n; i++)
				*joined += s.grp[i] != i;
		}
		for (int x = 1; x < s.m; x++)
			for (int first = 1; first <= 2; first++) {
				ArBudget lw;
				unsigned got = 0;
				bool ok;
				ar_budget_init(&lw, INT64_MAX / 4, NULL);
				s.work = &lw;
				ar_dsa_label_pivot(&s, s.t[x], &w);
				ok = ar_dsa_label(&s, first);
				assert_int_equal(ok, any);
				for (int i = 0; ok && i < n; i++)
					got |= (unsigned)(s.lab[i] == 1) << i;
				if (ok)
					assert_true(valid(&s, got));
			}
	}
	*found += any, *refuted += !any;
	ar_dsa_label_free(&s);
}

/* Random lifetimes and sizes; heights adding up to the peak, give or
 * take two (tied where they add up to it). */
static void test_label_complete(void **state)
{
	int found = 0, refuted = 0, joined = 0;
	(void)state;
	rng = 12345;
	for (int inst = 0; inst < 200; inst++) {
		int n = 4 + rnd(MAXN - 3);
		ArBuf b[MAXN];
		int64_t peak = 0, c1;
		int extra;

		for (int i = 0; i < n; i++) {
			int lo = rnd(STEPS - 1);
			b[i] = (ArBuf){ .lo = lo, .hi = lo + 1 + rnd(STEPS - lo),
					.size = 1 + rnd(6) };
		}
		for (int t = 0; t < STEPS; t++) {
			int64_t live = 0;
			for (int i = 0; i < n; i++)
				live += b[i].lo <= t && t < b[i].hi ? b[i].size : 0;
			peak = live > peak ? live : peak;
		}
		c1 = 1 + rnd((int)peak);
		extra = rnd(3);
		check(b, n, c1, peak - c1 + extra, !extra, &found, &refuted,
		      &joined);
	}
	print_message("label: %d labelled, %d refuted, every pivot; %d units "
		      "tied\n", found, refuted, joined);
	assert_true(found >= 30 && refuted >= 30);
}

/*
 * Cuts a strip STEPS long and height high guillotine-wise into 5 to MAXN
 * pieces r[][4] (steps [0], [1], bytes [2], [3]) and drops one half the
 * time; b: the pieces as buffers.  Returns how many.
 */
static int guillotine(int (*r)[4], ArBuf *b, int height)
{
	int n = 1, want = 5 + rnd(MAXN - 4);

	r[0][0] = 0, r[0][1] = STEPS, r[0][2] = 0, r[0][3] = height;
	while (n < want) {
		int e = rnd(n), *p = r[e];
		bool by_time = p[1] - p[0] > 1 && (p[3] - p[2] < 2 || rnd(2));
		int c;
		if (p[1] - p[0] < 2 && p[3] - p[2] < 2)
			continue;
		memcpy(r[n], p, sizeof r[n]);
		c = by_time ? p[0] + 1 + rnd(p[1] - p[0] - 1)
			    : p[2] + 1 + rnd(p[3] - p[2] - 1);
		r[n][by_time ? 0 : 2] = c;
		p[by_time ? 1 : 3] = c;
		n++;
	}
	if (rnd(2))
		memcpy(r[rnd(n)], r[n - 1], sizeof r[0]), n--;
	for (int i = 0; i < n; i++)
		b[i] = (ArBuf){ .lo = r[i][0], .hi = r[i][1],
				.size = r[i][3] - r[i][2] };
	return n;
}

/*
 * The level ties of pieces r[0..n) (b: as buffers) of a strip height
 * high, one piece at most dropped, never part the pieces below a byte
 * no piece straddles from those above it: such a cut is a labelling of
 * the packing, and with one hole no boundary where the load stays level
 * is one of its edges, so each layer hands over there what it takes.
 * Adds to *cuts the cuts checked.
 */
static void level_keeps_cuts(int (*r)[4], const ArBuf *b, int n,
			     int height, int *cuts)
{
	ArLabel s;
	ArBudget w;

	ar_budget_init(&w, INT64_MAX / 4, NULL);
	ar_dsa_label_tables(&s, b, n, b, NULL, n, &w);
	ar_dsa_label_ties(&s, height, true, &w);
	for (int y = 1; y < height; y++) {
		bool cut = true;
		for (int i = 0; i < n; i++)
			cut &= !(r[i][2] < y && y < r[i][3]);
		for (int i = 0; cut && i < n; i++)
			assert_int_equal(r[i][2] >= y, r[s.grp[i]][2] >= y);
		*cuts += cut;
	}
	ar_dsa_label_free(&s);
}

/*
 * Guillotine cuts of a strip STEPS long and HEIGHT high, a piece dropped
 * half the time (the holes, small), heights adding up to the
 * strip's: the ties (ar_dsa_label_ties()) join many units here, and the
 * search with them must still agree with enumeration.  Why: a class is
 * labelled as its first unit, so a state key that leaves out a labelled
 * class still live further on (its lead long ended) would refute a state
 * that can succeed.
 */
static void test_label_tied(void **state)
{
	enum { HEIGHT = 4 };
	int found = 0, refuted = 0, joined = 0;
	(void)state;
	rng = 777;
	for (int inst = 0; inst < 300; inst++) {
		int r[MAXN + 1][4];
		ArBuf b[MAXN + 1];
		int n = guillotine(r, b, HEIGHT);
		{
			int64_t c1 = 1 + rnd(HEIGHT - 1);
			check(b, n, c1, HEIGHT - c1, true, &found, &refuted,
			      &joined);
		}
	}
	print_message("tied: %d labelled, %d refuted, every pivot; %d units "
		      "tied\n", found, refuted, joined);
	assert_true(found >= 30 && refuted >= 30 && joined >= 300);
}

/* Level ties on guillotine cuts of a strip 64 bytes high: see
 * level_keeps_cuts(). */
static void test_level_ties(void **state)
{
	int cuts = 0;
	(void)state;
	rng = 4242;
	for (int inst = 0; inst < 1000; inst++) {
		int r[MAXN + 1][4];
		ArBuf b[MAXN + 1];
		int n = guillotine(r, b, 64);
		level_keeps_cuts(r, b, n, 64, &cuts);
	}
	print_message("level ties kept %d cuts whole\n", cuts);
	assert_true(cuts >= 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_complete),
		cmocka_unit_test(test_label_tied),
		cmocka_unit_test(test_level_ties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
