/*
 * test_dsa_bound.c — the window bound of `arenac solve --prove`
 * (dsa_bound.c) against an independent brute force: on an instance whose
 * optimum is provably above its load it proves the optimum, on hundreds
 * of small random ones (and of the first, presented otherwise) it is
 * never above the optimum and, with the work
 * to search every window, equal to it; the most loaded spans refuting
 * where no window short of the whole does; the same answer twice, a
 * floor and a target respected, a spent budget said.
 */
#include "testutil.h"

#include "dsa_bound.h"
#include "dsa_impl.h"

#define B(lo, hi, size) { lo, hi, size, 0 }
#define MAXN 14

/*
 * Is there a placement within h?  Buffers go in ascending (offset, index)
 * order, each on top of the highest placed buffer it meets in time: every
 * placement pushed down until each buffer rests on 0 or another is
 * rebuilt so; what is left must fit above the last offset at each start.
 * Shares nothing with exact.c (no sections, no dominance).
 */
static bool fits(const ArBuf *b, int n, int64_t h, int64_t *off, int k,
		 int64_t last_o, int last_i)
{
	if (k == n)
		return true;
	/* What is left goes at last_o or above, stacked wherever it meets. */
	for (int t = 0; t < n; t++) {
		int64_t rest = 0;
		for (int y = 0; y < n; y++)
			if (off[y] < 0 && b[y].lo <= b[t].lo && b[t].lo < b[y].hi)
				rest += b[y].size;
		if (last_o + rest > h)
			return false;
	}
	for (int x = 0; x < n; x++) {
		int64_t o = 0;
		if (off[x] >= 0)
			continue;
		for (int y = 0; y < n; y++)
			if (off[y] >= 0 && b[x].lo < b[y].hi && b[y].lo < b[x].hi &&
			    off[y] + b[y].size > o)
				o = off[y] + b[y].size;
		if (o + b[x].size > h || o < last_o || (o == last_o && x < last_i))
			continue;
		off[x] = o;
		if (fits(b, n, h, off, k + 1, o, x))
			return true;
		off[x] = -1;
	}
	return false;
}

/* The lowest height that fits: a sum of sizes, so a multiple of their gcd. */
static int64_t optimum(const ArBuf *b, int n)
{
	int64_t off[MAXN], g = 0;
	for (int i = 0; i < n; i++)
		g = ar_dsa_gcd(b[i].size, g);
	for (int64_t h = (ar_dsa_lower_bound(b, n, NULL) + g - 1) / g * g; ;
	     h += g) {
		for (int i = 0; i < n; i++)
			off[i] = -1;
		if (fits(b, n, h, off, 0, 0, -1))
			return h;
	}
}

static int64_t prove(const ArBuf *b, int n, int64_t floor, int64_t target,
		     int64_t units, ArDsaBound *pb)
{
	ArBudget w;
	ar_budget_init(&w, units, NULL);
	ar_dsa_prove(b, n, floor, target, &w, pb);
	return pb->bound;
}

/*
 * Load 8 at every time, optimum 9.  By hand, 8 does not fit: every time
 * is then tiled whole.  Flipping all offsets keeps a placement valid, so
 * say the 3 of [0, 4) is at [0, 3).  At time 1 the 2s of [1, 2) and
 * [1, 3) and the 1 of [1, 5) tile [3, 8); at time 3 the 1s of [3, 4) and
 * [3, 7) take the cells of the 2 of [1, 3).  At time 4 the 2s of [4, 5)
 * and [4, 7) must tile [0, 3) and the cell of the 1 of [3, 4): that cell
 * is 3, so the 1 of [3, 7) is at 4.  At time 5 the 3 of [5, 6) gets the
 * two cells of the 2 of [4, 5), inside [0, 4), and the cell of the 1 of
 * [1, 5), at 5 or above: not three in a row.  The brute force confirms.
 */
static const ArBuf gadget[] = {
	B(0, 1, 5), B(1, 2, 2), B(1, 3, 2), B(0, 4, 3), B(3, 4, 1),
	B(1, 5, 1), B(4, 5, 2), B(5, 6, 3), B(2, 7, 2), B(3, 7, 1),
	B(4, 7, 2), B(6, 7, 3),
};
#define NGADGET ((int)(sizeof gadget / sizeof *gadget))

static void test_gadget(void **state)
{
	ArDsaBound pb, again;
	(void)state;
	assert_int_equal(ar_dsa_lower_bound(gadget, NGADGET, NULL), 8);
	assert_int_equal(optimum(gadget, NGADGET), 9);
	assert_int_equal(prove(gadget, NGADGET, 0, 0, AR_SOLVE_WORK, &pb), 9);
	assert_true(pb.nspan >= 2);
	assert_true(pb.nbuf > 0 && pb.nbuf <= NGADGET);
	assert_false(pb.stopped);
	prove(gadget, NGADGET, 0, 0, AR_SOLVE_WORK, &again);
	assert_memory_equal(&pb, &again, sizeof pb);
	/* A floor already at the optimum: nothing to refute below it. */
	assert_int_equal(prove(gadget, NGADGET, 9, 0, AR_SOLVE_WORK, &pb), 9);
	assert_int_equal(pb.nspan, 0);
	/* At the target (a height found) it stops searching. */
	assert_int_equal(prove(gadget, NGADGET, 0, 8, AR_SOLVE_WORK, &pb), 8);
	assert_int_equal(pb.searched, 0);
	/* No work: the load, and said so. */
	assert_int_equal(prove(gadget, NGADGET, 0, 0, 1, &pb), 8);
	assert_true(pb.stopped);
}

/* The gadget scaled by 1024: the bound moves on the sizes' gcd. */
static void test_granule(void **state)
{
	ArBuf b[NGADGET];
	ArDsaBound pb;
	(void)state;
	for (int i = 0; i < NGADGET; i++)
		b[i] = (ArBuf)B(gadget[i].lo * 10, gadget[i].hi * 10,
				gadget[i].size * 1024);
	assert_int_equal(prove(b, NGADGET, 0, 0, AR_SOLVE_WORK, &pb),
			 9 * 1024);
	/* A floor between granules rounds up to the next. */
	assert_int_equal(prove(b, NGADGET, 9 * 1024 - 5, 0, AR_SOLVE_WORK,
			       &pb), 9 * 1024);
}

/*
 * The gadget with time 4 stretched over 200 steps, where only the 1 of
 * [1, 5), the 2 of [2, 7) and the 1 of [3, 7) live, and a 1 for each
 * step (load 5): the same optimum, 9, since 8 is refuted on the gadget's
 * times and at 9 the 1s fit the 5 cells left.  A window must now span
 * 207 steps to refute 8, but the 8 most loaded spans (the gadget's 7 and
 * one of the stretch) do.
 */
static void test_most_loaded(void **state)
{
	enum { K = 200, N = NGADGET + K };
	ArBuf b[N];
	ArDsaBound pb;
	(void)state;
	for (int i = 0; i < NGADGET; i++) {
		b[i] = gadget[i];
		b[i].lo += b[i].lo >= 4 ? K : 0;
		b[i].hi += b[i].hi > 4 ? K : 0;
	}
	for (int k = 0; k < K; k++)
		b[NGADGET + k] = (ArBuf)B(4 + k, 5 + k, 1);
	assert_int_equal(ar_dsa_lower_bound(b, N, NULL), 8);
	assert_int_equal(prove(b, N, 0, 0, AR_SOLVE_WORK, &pb), 9);
	assert_int_equal(pb.nspan, 8);
	assert_true(pb.t0 == pb.t1);
	assert_int_equal(pb.nbuf, NGADGET + 1);
}

static uint32_t rng = 2024;

static int rnd(int n)
{
	return test_rand(&rng, n);
}

/*
 * Lifetimes that keep the load at h at every time: at each time some
 * live buffers end and new ones of random sizes take their bytes, the
 * shape where the optimum is most often above the load.
 */
static int flat(ArBuf *b, int h, int times)
{
	int64_t start[MAXN], size[MAXN];
	int n = 0, live = 0, free = h;
	for (int t = 0; t < times; t++) {
		for (int k = 0; k < live; ) {
			if (t > 0 && rnd(2) && n < MAXN) {
				b[n++] = (ArBuf)B(start[k], t, size[k]);
				free += (int)size[k];
				start[k] = start[live - 1];
				size[k] = size[--live];
			} else {
				k++;
			}
		}
		while (free > 0 && live + n < MAXN) {
			int s = 1 + rnd(free < h / 2 + 1 ? free : h / 2 + 1);
			start[live] = t, size[live++] = s;
			free -= s;
		}
	}
	for (int k = 0; k < live; k++)
		b[n++] = (ArBuf)B(start[k], times, size[k]);
	return n;
}

/*
 * The gadget as another input would give it: maybe reversed in time,
 * sizes times k, times spread and shifted, buffers in another order, and
 * up to two more buffers after it, of at most its load.
 */
static int perturbed(ArBuf *b)
{
	int n = NGADGET, extra = rnd(3), rev = rnd(2);
	int64_t k = 1 + rnd(3), dt = 1 + rnd(2), t0 = rnd(5);
	for (int i = 0; i < NGADGET; i++) {
		const ArBuf *x = &gadget[i];
		int64_t lo = rev ? 7 - x->hi : x->lo, hi = rev ? 7 - x->lo : x->hi;
		b[i] = (ArBuf)B(t0 + lo * dt, t0 + hi * dt, x->size * k);
	}
	for (int i = NGADGET - 1; i > 0; i--) {
		int j = rnd(i + 1);
		ArBuf t = b[i];
		b[i] = b[j], b[j] = t;
	}
	for (int e = 0; e < extra; e++) {
		int64_t lo = t0 + 7 * dt + rnd(3);
		b[n++] = (ArBuf)B(lo, lo + 1 + rnd(3), k * (1 + rnd(8)));
	}
	return n;
}

static void test_random_vs_brute(void **state)
{
	int above = 0;
	(void)state;
	_Static_assert(NGADGET + 2 <= MAXN, "room for the extra buffers");
	for (int iter = 0; iter < 400; iter++) {
		ArBuf b[MAXN];
		ArDsaBound pb;
		int n = iter % 2 ? flat(b, 4 + rnd(7), 3 + rnd(6))
				 : perturbed(b);
		int64_t opt = optimum(b, n), lb = ar_dsa_lower_bound(b, n, NULL);
		int64_t bound = prove(b, n, 0, 0, AR_DSA_WORK, &pb);
		assert_true(bound >= lb);
		assert_true(bound <= opt);
		/* Enough work for every window, the whole one last. */
		assert_false(pb.stopped);
		assert_int_equal(bound, opt);
		above += opt > lb;
		/* The height found as the target: never past it. */
		assert_true(prove(b, n, 0, opt, AR_DSA_WORK, &pb) <= opt);
	}
	/* The cases that matter are among them. */
	assert_true(above >= 150);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gadget),
		cmocka_unit_test(test_granule),
		cmocka_unit_test(test_most_loaded),
		cmocka_unit_test(test_random_vs_brute),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
