/*
 * sortkey.c — ordering ArSortKey records (sortkey.h).
 *
 * A merge sort of its own rather than qsort: glibc's qsort calls the
 * comparison through a pointer for each of the n log n steps, which was
 * 8% of planning a residual stack of 100k nodes (the verifier sorts three
 * lists of every tensor).  Keys end on the id, so any correct sort gives
 * the same order; input already in order (births, mostly) costs one pass.
 */
#include "sortkey.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/* Runs this long are insertion-sorted before the merges. */
#define RUN 16

static inline bool key_less(const ArSortKey *a, const ArSortKey *b)
{
	if (a->k1 != b->k1)
		return a->k1 < b->k1;
	if (a->k2 != b->k2)
		return a->k2 < b->k2;
	if (a->k3 != b->k3)
		return a->k3 < b->k3;
	return a->id < b->id;
}

static void insertion_sort(ArSortKey *k, int n)
{
	for (int i = 1; i < n; i++) {
		ArSortKey x = k[i];
		int j = i;
		for (; j > 0 && key_less(&x, &k[j - 1]); j--)
			k[j] = k[j - 1];
		k[j] = x;
	}
}

/* dst = the merge of a[0, na) and b[0, nb), both in order. */
static void merge(ArSortKey *dst, const ArSortKey *a, int na,
		  const ArSortKey *b, int nb)
{
	int i = 0, j = 0, o = 0;
	while (i < na && j < nb)
		dst[o++] = key_less(&b[j], &a[i]) ? b[j++] : a[i++];
	memcpy(dst + o, a + i, (size_t)(na - i) * sizeof *a);
	memcpy(dst + o + na - i, b + j, (size_t)(nb - j) * sizeof *b);
}

void ar_sort_keys(ArSortKey *k, int n)
{
	ArSortKey *tmp, *src, *dst;
	int i = 1;

	while (i < n && !key_less(&k[i], &k[i - 1]))
		i++;
	if (i >= n)
		return;
	for (i = 0; i < n; i += RUN)
		insertion_sort(k + i, n - i < RUN ? n - i : RUN);
	src = k;
	dst = tmp = ar_xmalloc((size_t)n * sizeof *k);
	for (int w = RUN; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = n - lo < w ? n : lo + w;
			int hi = n - lo < 2 * w ? n : lo + 2 * w;
			merge(dst + lo, src + lo, mid - lo, src + mid, hi - mid);
		}
		ArSortKey *s = src;
		src = dst;
		dst = s;
	}
	if (src != k)
		memcpy(k, src, (size_t)n * sizeof *k);
	free(tmp);
}
