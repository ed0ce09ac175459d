/*
 * test_dsa_blocks.c — block reduction (planner/dsa_blocks.c) on perfect
 * packings with holes, made here as scripts/gen_dsa.py makes them: a
 * strip cut guillotine-wise, a few pieces removed away from its middle
 * step, so the optimum is the strip's height, which is also the peak-live
 * lower bound.  auto must pack them at that optimum (the searches of the
 * pieces alone stopped above it); the reduction itself must stay valid,
 * never higher, the same twice, and leave alone what joins too little;
 * the grouping the layer split labels by (ar_dsa_block_of) must give
 * each buffer a block that covers it and that its members fill.
 * Every placement is checked by an all-pairs overlap test.
 */
#include "testutil.h"

#include "dsa_impl.h"

#define STRIP 65536
#define B(lo, hi, size) { lo, hi, size, -1 }

static void check_valid(const ArBuf *b, int n, int64_t height)
{
	int64_t h = 0;
	for (int i = 0; i < n; i++) {
		assert_true(b[i].offset >= 0);
		if (b[i].offset + b[i].size > h)
			h = b[i].offset + b[i].size;
		for (int j = 0; j < i; j++)
			if (b[i].lo < b[j].hi && b[j].lo < b[i].hi &&
			    b[i].offset < b[j].offset + b[j].size &&
			    b[j].offset < b[i].offset + b[i].size)
				fail_msg("buffers %d and %d overlap", i, j);
	}
	assert_int_equal(h, height);
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

typedef struct {
	int64_t t0, t1, y0, y1;
} Rect;

/*
 * A strip of steps by STRIP bytes cut into `pieces` rectangles (the
 * largest first, across its longer side against the strip's shape, at
 * 25-75%, bytes on multiples of 64), then `holes` of them removed, never
 * one live at the middle step; the rest go to b.  Returns how many.
 */
static int holes_instance(ArBuf *b, int pieces, int holes, int64_t steps,
			  uint64_t seed)
{
	Rect r[512];
	int m = 1, n = 0;
	bool gone[512] = { false };

	assert_true(pieces <= 512);
	r[0] = (Rect){ 0, steps, 0, STRIP };
	while (m < pieces) {
		int big = 0;
		for (int i = 1; i < m; i++)
			if ((r[i].t1 - r[i].t0) * (r[i].y1 - r[i].y0) >
			    (r[big].t1 - r[big].t0) * (r[big].y1 - r[big].y0))
				big = i;
		Rect p = r[big];
		int64_t w = p.t1 - p.t0, h = (p.y1 - p.y0) / 64;
		bool by_time = w > 1 && (w * STRIP / steps >= h * 64 || h < 2);
		int64_t len = by_time ? w : h;
		int64_t c = len / 4 + (int64_t)(next(&seed) % (uint64_t)(len / 2 + 1));
		c = c < 1 ? 1 : c > len - 1 ? len - 1 : c;
		r[m] = p;
		if (by_time)
			r[big].t1 = r[m].t0 = p.t0 + c;
		else
			r[big].y1 = r[m].y0 = p.y0 + 64 * c;
		m++;
	}
	for (int k = 0; k < holes;) {
		int i = (int)(next(&seed) % (uint64_t)m);
		if (!gone[i] && !(r[i].t0 <= steps / 2 && steps / 2 < r[i].t1))
			gone[i] = true, k++;
	}
	for (int i = 0; i < m; i++)
		if (!gone[i])
			b[n++] = (ArBuf){ r[i].t0, r[i].t1, r[i].y1 - r[i].y0,
					  -1 };
	return n;
}

/* A 64th of solve's work: enough for the blocks, far from enough for the
 * searches of the pieces, which keeps the test quick. */
static ArBudget *work(void)
{
	static ArBudget w;
	ar_budget_init(&w, AR_SOLVE_WORK / 64, NULL);
	return &w;
}

/* auto packs them at the strip's height, minimising and at capacity. */
static void test_holes_at_optimum(void **state)
{
	ArBuf b[512];
	(void)state;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		int n = holes_instance(b, 240, 12, 960, seed * 0x9E3779B97F4A7C15u);
		ArDsaResult r;
		assert_int_equal(n, 228);
		assert_int_equal(ar_dsa_lower_bound(b, n, NULL), STRIP);
		assert_int_equal(ar_dsa_solve(b, n, "auto", 0, work(), &r), 0);
		check_valid(b, n, r.height);
		assert_int_equal(r.height, STRIP);
		assert_true(r.optimal);
		assert_int_equal(ar_dsa_solve(b, n, "auto", STRIP, work(), &r),
				 0);
		check_valid(b, n, r.height);
		assert_int_equal(r.height, STRIP);
	}
}

/* From the greedy's placement: valid, never higher, the same twice. */
static void test_blocks_direct(void **state)
{
	ArBuf b[512], c[512];
	int n = holes_instance(b, 120, 6, 480, 7);
	int64_t g, h, nodes = 0;
	ArBudget w;
	(void)state;
	g = ar_dsa_greedy(b, n, AR_GREEDY_SIZE);
	memcpy(c, b, sizeof b);
	ar_budget_init(&w, AR_SOLVE_WORK / 4, NULL);
	h = ar_dsa_blocks(b, n, 0, &w, &nodes);
	assert_true(h <= g);
	check_valid(b, n, h);
	ar_budget_init(&w, AR_SOLVE_WORK / 4, NULL);
	assert_int_equal(ar_dsa_blocks(c, n, 0, &w, &nodes), h);
	for (int i = 0; i < n; i++)
		assert_int_equal(b[i].offset, c[i].offset);
}

/* Two stacked, handed over to one of their sum, then to a fourth: one
 * block, height 10; and nothing that joins is left as it was. */
static void test_blocks_small(void **state)
{
	ArBuf b[] = { B(0, 2, 4), B(0, 2, 6), B(2, 4, 10), B(4, 5, 10),
		      B(1, 5, 3) };
	ArBuf apart[] = { B(0, 3, 5), B(1, 4, 6), B(2, 6, 7) };
	ArBudget w;
	int64_t nodes = 0;
	(void)state;
	for (int i = 0; i < 5; i++)
		b[i].offset = 0;
	b[1].offset = 4, b[2].offset = 3, b[3].offset = 3, b[4].offset = 13;
	check_valid(b, 5, 16);
	ar_budget_init(&w, AR_SOLVE_WORK, NULL);
	assert_int_equal(ar_dsa_blocks(b, 5, 0, &w, &nodes), 13);
	check_valid(b, 5, 13);
	assert_int_equal(b[2].offset, b[3].offset);
	apart[0].offset = 0, apart[1].offset = 5, apart[2].offset = 11;
	ar_budget_init(&w, AR_SOLVE_WORK, NULL);
	nodes = 0;
	assert_int_equal(ar_dsa_blocks(apart, 3, 0, &w, &nodes), 18);
	assert_int_equal(nodes, 0);
	assert_int_equal(apart[1].offset, 5);
	assert_int_equal(apart[2].offset, 11);
}

/*
 * ar_dsa_block_of, which the layer split labels by: the small case's
 * first four buffers are one block [0, 5) of 10 bytes, the fifth one
 * stays apart.  Loosened, an outermost stack gives its members: a
 * hand-over [0, 3) of 4 bytes and a buffer of 6 on it are one block,
 * loosened two (that block and the buffer), while the small case's
 * block, a hand-over, stays whole.  On a perfect packing with holes,
 * either way, every block covers its members' lifetimes and they fill it
 * without waste (their byte-steps sum to its own), and there are fewer
 * blocks than buffers, more when loosened.
 */
static void test_block_of(void **state)
{
	ArBuf b[] = { B(0, 2, 4), B(0, 2, 6), B(2, 4, 10), B(4, 5, 10),
		      B(1, 5, 3) };
	ArBuf st[] = { B(0, 1, 4), B(1, 3, 4), B(0, 3, 6), B(5, 6, 1) };
	ArBuf h[512], blk[512];
	int of[512], n, m[2];
	ArBudget w;
	(void)state;
	ar_budget_init(&w, AR_SOLVE_WORK, NULL);
	for (int loose = 0; loose < 2; loose++) {
		assert_int_equal(ar_dsa_block_of(b, 5, loose, &w, blk, of), 2);
		for (int i = 1; i < 4; i++)
			assert_int_equal(of[i], of[0]);
		assert_int_equal(of[4], 1 - of[0]);
		assert_true(blk[of[0]].lo == 0 && blk[of[0]].hi == 5 &&
			    blk[of[0]].size == 10);
		assert_true(blk[of[4]].lo == 1 && blk[of[4]].size == 3);
	}
	assert_int_equal(ar_dsa_block_of(st, 4, false, &w, blk, of), 2);
	assert_true(of[0] == of[1] && of[1] == of[2] && of[3] != of[0]);
	assert_int_equal(blk[of[0]].size, 10);
	assert_int_equal(ar_dsa_block_of(st, 4, true, &w, blk, of), 3);
	assert_true(of[0] == of[1] && of[2] != of[0] && of[3] != of[0] &&
		    of[3] != of[2]);
	assert_true(blk[of[0]].lo == 0 && blk[of[0]].hi == 3 &&
		    blk[of[0]].size == 4 && blk[of[2]].size == 6);
	n = holes_instance(h, 240, 12, 960, 5);
	for (int loose = 0; loose < 2; loose++) {
		int64_t area[512] = { 0 };
		m[loose] = ar_dsa_block_of(h, n, loose, &w, blk, of);
		assert_true(m[loose] > 0 && m[loose] < n);
		for (int i = 0; i < n; i++) {
			const ArBuf *k = &blk[of[i]];
			assert_true(of[i] >= 0 && of[i] < m[loose]);
			assert_true(k->lo <= h[i].lo && h[i].hi <= k->hi);
			area[of[i]] += (h[i].hi - h[i].lo) * h[i].size;
		}
		for (int a = 0; a < m[loose]; a++)
			assert_int_equal(area[a], (blk[a].hi - blk[a].lo) *
					 blk[a].size);
	}
	assert_true(m[1] > m[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holes_at_optimum),
		cmocka_unit_test(test_blocks_direct),
		cmocka_unit_test(test_blocks_small),
		cmocka_unit_test(test_block_of),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
