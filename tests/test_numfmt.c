/*
 * test_numfmt.c — the one formatter of counts and sizes (numfmt.h): exact
 * strings at the edges (0, three digits, unit boundaries, INT64_MIN and
 * INT64_MAX), and the figures the README quotes.
 */
#include "testutil.h"

#include "numfmt.h"

static void test_count(void **state)
{
	char b[AR_NUMFMT_LEN];
	(void)state;
	assert_string_equal(ar_fmt_count(b, 0), "0");
	assert_string_equal(ar_fmt_count(b, 999), "999");
	assert_string_equal(ar_fmt_count(b, 1000), "1,000");
	assert_string_equal(ar_fmt_count(b, 57600), "57,600");
	assert_string_equal(ar_fmt_count(b, 1234567), "1,234,567");
	assert_string_equal(ar_fmt_count(b, -1234), "-1,234");
	assert_string_equal(ar_fmt_count(b, INT64_MAX),
			    "9,223,372,036,854,775,807");
	assert_string_equal(ar_fmt_count(b, INT64_MIN),
			    "-9,223,372,036,854,775,808");
}

static void test_size(void **state)
{
	char b[AR_NUMFMT_LEN];
	(void)state;
	assert_string_equal(ar_fmt_size(b, 0), "0 B");
	assert_string_equal(ar_fmt_size(b, 1023), "1023 B");
	assert_string_equal(ar_fmt_size(b, 1024), "1 KiB");
	assert_string_equal(ar_fmt_size(b, 1536), "1.5 KiB");
	assert_string_equal(ar_fmt_size(b, 57600), "56.2 KiB");
	/* Three significant digits: ResNet-50's arena, VGG-19's weights. */
	assert_string_equal(ar_fmt_size(b, 7225344), "6.89 MiB");
	assert_string_equal(ar_fmt_size(b, 548101248), "523 MiB");
	assert_string_equal(ar_fmt_size(b, (int64_t)3 << 30), "3 GiB");
	assert_string_equal(ar_fmt_size(b, INT64_MAX), "8 EiB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
