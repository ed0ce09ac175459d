/*
 * test_rt_requant.c — the runtime's integer arithmetic that replaced
 * double (kernels_matmul.c, kernels_dtype.c, kernels_pool.c) gives what
 * the double arithmetic gave: the QLinear* requantisation, an integer
 * sum times a float32 scale rounded half to even as the spec's
 * reference computes it in double (numpy), for sums up to 2^39 (where
 * the double product is rounded too, which changes some results), every
 * float scale (subnormal,
 * negative, infinite, NaN) and ties; the int64-to-float conversion;
 * and the global average pool's compensated float sum, within an ulp of
 * the double one where a plain float sum is far off.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

/* A signed value of 0 to bits random bits. */
static int64_t value(int bits)
{
	int k = (int)(next() % (uint64_t)(bits + 1));
	int64_t v = k ? (int64_t)(next() >> (64 - k)) : 0;
	return next() & 1 ? -v : v;
}

static float from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* What the double arithmetic stored (the runtime's code before). */
static int64_t by_double(int64_t s, float f, int64_t zy, int64_t lo,
			 int64_t hi)
{
	double v = nearbyint((double)s * (double)f) + (double)zy;
	return !(v >= (double)lo) ? lo : v > (double)hi ? hi : (int64_t)v;
}

/* rt_requant_store's value of sum s with scale f (as sa; sb, sy 1). */
static int64_t stored(int64_t s, float f, int64_t zy, int dt)
{
	static const float one = 1.0f;
	int8_t i8 = 0;
	uint8_t u8 = 0;
	rt_requant rq = {&f, &one, 1, 1, 1.0f, zy};
	rt_arr y = {dt == ART_DT_INT8 ? (void *)&i8 : (void *)&u8, dt,
		    {1, {1}}};
	rt_requant_store(&rq, s, 0, 0, &y, 0);
	return dt == ART_DT_INT8 ? i8 : u8;
}

static void check(int64_t s, float f, int64_t zy, int dt)
{
	int64_t lo = dt == ART_DT_INT8 ? -128 : 0;
	int64_t hi = dt == ART_DT_INT8 ? 127 : 255;
	int64_t want = by_double(s, f, zy, lo, hi);
	int64_t got = stored(s, f, zy, dt);
	if (want != got)
		fail_msg("sum %lld times %a (zero point %lld): %lld, double "
			 "gives %lld", (long long)s, (double)f, (long long)zy,
			 (long long)got, (long long)want);
}

/* Random sums (below 2^39, the double product rounded past 2^53) and
 * scales from 2^-60 to 2^12, either sign, and the zero points. */
static void requant_random(void **state)
{
	for (int i = 0; i < 2000000; i++) {
		int64_t s = value(39);
		uint32_t e = (uint32_t)(67 + next() % 72);   /* 2^-60 .. 2^11 */
		float f = from_bits((uint32_t)(next() & 0x807fffffu) | e << 23);
		int dt = i & 1 ? ART_DT_INT8 : ART_DT_UINT8;
		int64_t zy = dt == ART_DT_INT8 ? (int64_t)(next() % 256) - 128 :
			     (int64_t)(next() % 256);
		check(s, f, zy, dt);
		/* A scale that makes the result a small number, where
		 * every rounding shows. */
		if (s)
			check(s, f / (float)llabs(s) * (float)(next() % 300),
			      zy, dt);
	}
}

/* Halves (ties go to the even neighbour), products that double rounds,
 * and the special scales. */
static void requant_edges(void **state)
{
	static const uint32_t specials[] = {
		0, 0x80000000u, 1, 0x807fffffu, 0x00800000u, 0x7f800000u,
		0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f7fffffu,
		0x3f000000u, 0xbf000000u, 0x3f7fffffu, 0x30800001u};
	for (int64_t s = -600; s <= 600; s++) {
		for (size_t k = 0; k < sizeof specials / sizeof *specials; k++)
			check(s, from_bits(specials[k]), 3, ART_DT_UINT8);
		check(s, 0.5f, 0, ART_DT_INT8);
		check(s, 0.25f, -1, ART_DT_INT8);
		check(s, 1.5f / 64, 128, ART_DT_UINT8);
	}
	/* Around 2^38 with a full mantissa: a product of 62 bits. */
	for (int i = 0; i < 100000; i++) {
		int64_t s = ((int64_t)1 << 38) - 1 - (int64_t)(next() % 4096);
		float f = from_bits(0x2c800000u | (uint32_t)(next() & 0x7fffffu));
		check(next() & 1 ? s : -s, f, 0, ART_DT_INT8);
		check(s, ldexpf(f, 4), 17, ART_DT_UINT8);
	}
}

/*
 * Sums whose exact product with the scale is just below a half, 1.5 or
 * 3.5, by less than double's last place: the spec's double product
 * rounds onto the half, which then goes to the even 2 or 4, where the
 * exact value rounds to 1 or 3.  The runtime gives the double's.
 */
static void double_rounding(void **state)
{
	static const struct { uint64_t target; int k; int64_t exact; } t[] = {
		{(uint64_t)3 << 60, 61, 1}, {(uint64_t)7 << 59, 60, 3}};
	for (size_t j = 0; j < sizeof t / sizeof *t; j++) {
		int found = 0;
		for (uint64_t m = 1u << 23; m < 1u << 24 && found < 20; m++) {
			int64_t s = (int64_t)(t[j].target / m);
			uint64_t below = t[j].target - (uint64_t)s * m;
			float f = ldexpf((float)m, -t[j].k);
			if (below == 0 || below >= 256)
				continue;
			found++;
			assert_int_equal(by_double(s, f, 0, -128, 127),
					 t[j].exact + 1);
			check(s, f, 0, ART_DT_INT8);
			check(-s, f, 0, ART_DT_INT8);
		}
		assert_int_equal(found, 20);
	}
}

/* rt_i64_to_f32 rounds as the C conversion does, ties included. */
static void int64_to_float(void **state)
{
	static const int64_t edges[] = {0, 1, -1, INT32_MAX, INT32_MIN,
		(int64_t)INT32_MAX + 1, (int64_t)INT32_MIN - 1, INT64_MAX,
		INT64_MIN, INT64_MIN + 1, ((int64_t)1 << 40) + ((int64_t)1 << 16),
		((int64_t)1 << 40) + ((int64_t)3 << 16),
		((int64_t)1 << 40) + ((int64_t)1 << 16) + 1,
		-(((int64_t)1 << 33) + ((int64_t)1 << 9))};
	for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
		assert_true(rt_i64_to_f32(edges[i]) == (float)edges[i]);
	for (int i = 0; i < 1000000; i++) {
		int64_t v = value(63);
		assert_true(rt_i64_to_f32(v) == (float)v);
	}
}

/* ulps between two finite floats of one sign. */
static int64_t ulps(float a, float b)
{
	int32_t ia, ib;
	memcpy(&ia, &a, sizeof ia);
	memcpy(&ib, &b, sizeof ib);
	return llabs((int64_t)ia - ib);
}

static float mean_by_double(const float *x, int64_t n)
{
	double acc = 0;
	for (int64_t k = 0; k < n; k++)
		acc += x[k];
	return (float)(acc / (double)n);
}

static void global_average(void **state)
{
	static float x[2][4096];
	float y[2];
	rt_shape xs = {4, {1, 2, 64, 64}};

	/* One large value and many small ones: a float sum loses every
	 * small one (1e8's ulp is 8). */
	for (int k = 0; k < 4096; k++)
		x[0][k] = k ? 1.0f : 1e8f, x[1][k] = (float)(next() % 2000) /
			  1000.0f - 1.0f;
	rt_global_pool(0, &x[0][0], &xs, y);
	assert_true(y[0] == mean_by_double(x[0], 4096));
	assert_true(ulps(y[1], mean_by_double(x[1], 4096)) <= 1);
	for (int t = 0; t < 200; t++) {
		for (int k = 0; k < 4096; k++)
			x[0][k] = (float)(next() % 100000) * 1e-3f,
			x[1][k] = ldexpf((float)(next() % 1000),
					 (int)(next() % 40) - 20);
		rt_global_pool(0, &x[0][0], &xs, y);
		assert_true(ulps(y[0], mean_by_double(x[0], 4096)) <= 1);
		assert_true(ulps(y[1], mean_by_double(x[1], 4096)) <= 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(requant_random),
		cmocka_unit_test(requant_edges),
		cmocka_unit_test(double_rounding),
		cmocka_unit_test(int64_to_float),
		cmocka_unit_test(global_average),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
