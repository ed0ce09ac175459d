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

static void test_label_complete(void **state)
{
	int found = 0, refuted = 0;
	(void)state;
	rng = 12345;
	for (int inst = 0; inst < 200; inst++) {
		int n = 4 + rnd(MAXN - 3);
		ArBuf b[MAXN];
		ArLabel s;
		ArBudget w;
		int64_t top[1], peak = 0;
		bool any = false;

		for (int i = 0; i < n; i++) {
			int lo = rnd(STEPS - 1);
			b[i] = (ArBuf){ .lo = lo, .hi = lo + 1 + rnd(STEPS - lo),
					.size = 1 + rnd(6) };
		}
		ar_budget_init(&w, INT64_MAX / 4, NULL);
		ar_dsa_label_tables(&s, b, n, b, NULL, n, &w);
		if (s.m < 2) {
			ar_dsa_label_free(&s);
			continue;
		}
		/* Heights adding up to the peak, give or take two; a bar on
		 * the bottom layer, and on the top one half the time. */
		for (int x = 0; x < s.m; x++)
			peak = s.load[x] > peak ? s.load[x] : peak;
		s.cap[1] = 1 + rnd((int)peak);
		s.cap[2] = peak - s.cap[1] + rnd(3);
		top[0] = s.t[1 + rnd(s.m - 1)];
		ar_dsa_label_bar(&s, s.t[1 + rnd(s.m - 1)], top, rnd(2), &w);
		for (unsigned lab = 0; lab < 1u << n && !any; lab++)
			any = valid(&s, lab);
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
		found += any, refuted += !any;
		ar_dsa_label_free(&s);
	}
	print_message("label: %d labelled, %d refuted, every pivot\n", found,
		      refuted);
	assert_true(found >= 30 && refuted >= 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_complete),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
