/*
 * test_rt_format.c — the runtime's own formatter (runtime/format.c)
 * prints what the C library's snprintf prints for every conversion the
 * runtime's messages use, and cuts at the buffer's end as snprintf does;
 * art_error_message turns an error record (a code, the steps, the
 * details) into the message the runtime printed when it formatted its
 * errors itself.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../runtime/ops.h" /* not ops/ops.h, the compiler's op table */

#define SAME(...)                                                        \
	do {                                                             \
		char want[128], got[128];                                \
		int nw = snprintf(want, sizeof want, __VA_ARGS__);       \
		int ng = rt_format(got, sizeof got, __VA_ARGS__);        \
		assert_string_equal(got, want);                          \
		assert_int_equal(ng, nw);                                \
	} while (0)

static void integers(void **state)
{
	SAME("%d %d %d", 0, -1, INT_MIN);
	SAME("%d", INT_MAX);
	SAME("%u %lu", 4294967295u, (unsigned long)ULONG_MAX);
	SAME("%ld %lld", LONG_MIN, LLONG_MIN);
	SAME("%lld %llu", LLONG_MAX, ULLONG_MAX);
	SAME("%zu bytes", (size_t)SIZE_MAX);
	SAME("tensor '%s' [%lu, +%lu) is past the arena of %zu bytes", "t",
	     (unsigned long)12, (unsigned long)4096, (size_t)65536);
	SAME("100%% of %s", "it");
}

static void doubles(void **state)
{
	static const double v[] = {0, 1, -1, 0.5, 2.25, 3, 10, 123456,
		1234567, 1e6, 1e-4, 1e-5, 0.000123456, 7e20, -4.5e-9,
		1.0 / 3, 100.5, 999999, 65536, 0.1};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		SAME("scale %g on axis %d", v[i], (int)i);
}

static void cut_at_the_end(void **state)
{
	char buf[8];
	int n = rt_format(buf, sizeof buf, "step %d (%s)", 12345, "Conv");
	assert_string_equal(buf, "step 12");
	assert_int_equal(n, 7); /* what was written, not what would be */
	assert_int_equal(rt_format(buf, 1, "%s", "x"), 0);
	assert_string_equal(buf, "");
}

/* The record ctx_fail leaves for a tensor of rank 9 in a subgraph's
 * step: the steps outermost first, a step without a name as ''. */
static void error_record(void **state)
{
	art_error e = {.code = ART_E_TENSOR_RANK_ABOVE, .step = 3, .depth = 2,
		       .where = {{3, "If", "if0"}, {1, "Conv", NULL}},
		       .arg = {ART_S("x"), ART_I(9), ART_I(ART_MAX_RANK)}};
	char buf[256];
	int n = art_error_message(&e, buf, sizeof buf);

	assert_string_equal(buf, "step 3 (If 'if0'): step 1 (Conv ''): "
			    "tensor 'x' has rank 9, above 8");
	assert_int_equal(n, (int)strlen(buf));
	e.depth = 0;
	e.code = ART_E_ARENA_BYTES_PLAN_NEEDS;
	e.arg[0] = ART_I(0);
	e.arg[1] = ART_U((size_t)100);
	e.arg[2] = ART_U(4096ul);
	art_error_message(&e, buf, sizeof buf);
	assert_string_equal(buf, "arena 0 of 100 bytes, the plan needs 4096");
	e.code = ART_E_COUNT;
	art_error_message(&e, buf, 12);
	assert_string_equal(buf, "error code ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(integers),
		cmocka_unit_test(doubles),
		cmocka_unit_test(cut_at_the_end),
		cmocka_unit_test(error_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
