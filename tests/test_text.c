/*
 * test_text.c — ArText (codegen/text.h), the writer of the header's and
 * the report's tables: its printf subset against libc's printf at the
 * integer edges, the C and JSON escapes byte for byte, and order kept
 * across the flushes of a text far past the buffer's flush size.
 */
#include "testutil.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* What t wrote to its memory stream, NUL-terminated; free the result. */
typedef struct Mem {
	FILE *f;
	char *buf;
	size_t len;
} Mem;

static ArText mem_open(Mem *m)
{
	m->f = open_memstream(&m->buf, &m->len);
	assert_non_null(m->f);
	return ar_text_on(m->f);
}

static char *mem_close(Mem *m, ArText *t)
{
	ar_text_close(t);
	fclose(m->f);
	return m->buf;
}

static void test_printf_like_libc(void **state)
{
	static const long long v[] = {0, 1, -1, 9, -9, 10, -10, 99, 100,
				      -100, 4294967295LL, 4294967296LL,
				      INT_MAX, INT_MIN, INT64_MAX, INT64_MIN,
				      1234567890123LL};
	char want[4096], *got;
	size_t at = 0;
	Mem m;
	ArText t = mem_open(&m);
	(void)state;

	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		int d = (int)v[i];
		ar_text_printf(&t, "[%d|%lld|%llu|%x|%u|%ld|%zu]", d, v[i],
			       (unsigned long long)v[i], (unsigned)v[i],
			       (unsigned)d, (long)v[i], (size_t)v[i]);
		at += (size_t)snprintf(want + at, sizeof want - at,
				       "[%d|%lld|%llu|%x|%u|%ld|%zu]", d, v[i],
				       (unsigned long long)v[i],
				       (unsigned)v[i], (unsigned)d, (long)v[i],
				       (size_t)v[i]);
		/* The rows' own number writer, as %lld. */
		ar_text_dec(&t, v[i]);
		at += (size_t)snprintf(want + at, sizeof want - at, "%lld",
				       v[i]);
	}
	ar_text_printf(&t, "%s_%c%%%s", "PREFIX", 'x', "");
	snprintf(want + at, sizeof want - at, "%s_%c%%%s", "PREFIX", 'x', "");
	got = mem_close(&m, &t);
	assert_string_equal(got, want);
	free(got);
}

static void test_escapes(void **state)
{
	char *got;
	Mem m;
	ArText t = mem_open(&m);
	(void)state;

	/* Trigraph, quote, backslash; a control byte before a digit keeps
	 * three octal digits; high bytes in octal; cut after max bytes. */
	ar_text_c_str(&t, "a?" "?/\"\\\n\t\0011\xff", 64);
	ar_text_c_str(&t, "abcdef", 3);
	ar_text_upper(&t, "float32_x");
	ar_text_json_str(&t, "q\"b\\n\n\t\x1f\x7f\xc3\xa9");
	got = mem_close(&m, &t);
	assert_string_equal(got, "\"a\\?\\?/\\\"\\\\\\n\\t\\0011\\377\""
			    "\"abc\"FLOAT32_X"
			    "\"q\\\"b\\\\n\\n\\t\\u001f\\u007f\xc3\xa9\"");
	free(got);
}

/* Far past the buffer's size, and one piece longer than the buffer, every
 * byte in order; a FILE write after the close lands after all of it. */
static void test_long_text_in_order(void **state)
{
	enum { N = 100000, LONG = 200000 };
	char *got, *p, *big = malloc(LONG + 1);
	Mem m;
	ArText t = mem_open(&m);
	(void)state;

	assert_non_null(big);
	memset(big, 'a', LONG);
	big[LONG] = '\0';
	for (int i = 0; i < N; i++) {
		ar_text_printf(&t, "%d,", i);
		if (i == N / 2)
			ar_text_upper(&t, big);
	}
	ar_text_close(&t);
	fputs("end", m.f);
	got = mem_close(&m, &t);
	p = got;
	for (int i = 0; i < N; i++) {
		char *e;
		assert_int_equal(strtol(p, &e, 10), i);
		assert_int_equal(*e, ',');
		p = e + 1;
		if (i == N / 2) {
			assert_int_equal(strspn(p, "A"), LONG);
			p += LONG;
		}
	}
	assert_string_equal(p, "end");
	free(got), free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_printf_like_libc),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_long_text_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
