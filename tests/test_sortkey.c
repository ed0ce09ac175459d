/*
 * test_sortkey.c — ar_sort_keys (planner/sortkey.c), the planner's own
 * merge sort: against qsort with the same order on random keys with many
 * ties (sizes around its insertion-sorted runs of 16 and its merges), on
 * input already in order and reversed, and with equal keys apart from
 * the id; and its radix path (256 keys and more that vary in few bytes):
 * ids out of order, which then need passes of their own, and the ends of
 * the int64 range, whose sign the byte digits must respect.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "sortkey.h"

static int ref_cmp(const void *pa, const void *pb)
{
	const ArSortKey *a = pa, *b = pb;
	if (a->k1 != b->k1)
		return a->k1 < b->k1 ? -1 : 1;
	if (a->k2 != b->k2)
		return a->k2 < b->k2 ? -1 : 1;
	if (a->k3 != b->k3)
		return a->k3 < b->k3 ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Sorts k both ways and compares, record by record. */
static void check(ArSortKey *k, int n)
{
	ArSortKey *want = malloc((size_t)n * sizeof *k + 1);
	memcpy(want, k, (size_t)n * sizeof *k);
	qsort(want, (size_t)n, sizeof *want, ref_cmp);
	ar_sort_keys(k, n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(k[i].k1, want[i].k1);
		assert_int_equal(k[i].k2, want[i].k2);
		assert_int_equal(k[i].k3, want[i].k3);
		assert_int_equal(k[i].id, want[i].id);
	}
	free(want);
}

static void test_random_with_ties(void **state)
{
	static const int sizes[] = {0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 100,
				    1000, 4097};
	ArSortKey *k = malloc(4097 * sizeof *k);
	unsigned seed = 7;
	(void)state;

	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		int n = sizes[s];
		for (int i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			/* Few distinct values: ties on k1, k2 and k3. */
			k[i] = (ArSortKey){(int64_t)(seed >> 16) % 5 - 2,
					   (int64_t)(seed >> 8) % 3,
					   (int64_t)(seed >> 20) % 2, i};
		}
		check(k, n);
	}
	free(k);
}

static void test_in_order_and_reversed(void **state)
{
	enum { N = 1000 };
	ArSortKey k[N];
	(void)state;

	for (int i = 0; i < N; i++)
		k[i] = (ArSortKey){i / 3, 0, 0, i};
	check(k, N);
	assert_int_equal(k[0].id, 0);
	assert_int_equal(k[N - 1].id, N - 1);
	for (int i = 0; i < N; i++)
		k[i] = (ArSortKey){N - i, -i, 0, N - 1 - i};
	check(k, N);
	assert_int_equal(k[0].id, 0);
	assert_int_equal(k[0].k1, 1);
	assert_int_equal(k[N - 1].id, N - 1);
}

/* Keys equal but for the id come out by id, whatever their order. */
static void test_ties_end_on_id(void **state)
{
	ArSortKey k[40];
	(void)state;

	for (int i = 0; i < 40; i++)
		k[i] = (ArSortKey){4, 4, 4, (i * 17) % 40};
	ar_sort_keys(k, 40);
	for (int i = 0; i < 40; i++)
		assert_int_equal(k[i].id, i);
}

/* Narrow keys (the radix path) with ids shuffled, and keys at the ends of
 * the int64 range among small ones of either sign. */
static void test_radix_ids_and_signs(void **state)
{
	enum { N = 3000 };
	static const int64_t ends[] = {INT64_MIN, INT64_MAX, -1, 0, 1};
	ArSortKey *k = malloc(N * sizeof *k);
	unsigned seed = 11;
	(void)state;

	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		k[i] = (ArSortKey){(seed >> 16) % 7, 0, 0, (i * 1291) % N};
	}
	check(k, N);
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		k[i] = (ArSortKey){0, ends[(seed >> 16) % 5], 0, i};
	}
	check(k, N);
	assert_true(k[0].k2 == INT64_MIN);
	assert_true(k[N - 1].k2 == INT64_MAX);
	free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_with_ties),
		cmocka_unit_test(test_in_order_and_reversed),
		cmocka_unit_test(test_ties_end_on_id),
		cmocka_unit_test(test_radix_ids_and_signs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
