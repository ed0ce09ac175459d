/*
 * sortkey.c — ordering ArSortKey records (sortkey.h).
 *
 * A merge sort of its own rather than qsort: glibc's qsort calls the
 * comparison through a pointer for each of the n log n steps, which was
 * 8% of planning a residual stack of 100k nodes (the verifier sorts three
 * lists of every tensor).  Keys end on the id, so any correct sort gives
 * the same order; input already in order (births, mostly) costs one pass.
 *
 * Planner keys are mostly narrow (offsets below a few KiB, step numbers,
 * a region or two), so a stable least-significant-digit radix sort, which
 * skips the byte digits every key shares, takes a pass or two where the
 * merges take log n: the verifier's positions of a 100k-node residual
 * stack went from 46 M to ~3 M instructions.  Wide keys, where it would
 * need more passes than the merges, keep the merge sort.
 */
#include "sortkey.h"

#include <stdbool.h>
#include <stdint.h>
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

/* The sorted keys ended in src (k or tmp): back to k, tmp freed. */
static void settle(ArSortKey *k, const ArSortKey *src, ArSortKey *tmp, int n)
{
	if (src != k)
		memcpy(k, src, (size_t)n * sizeof *k);
	free(tmp);
}

/* Radix sorting needs this many keys to pay for its 256 counters a pass. */
#define RADIX_MIN 256
/* More byte passes than this, and the merges are cheaper. */
#define RADIX_MAX_PASSES 8

/* Field f of k (0: id, 1: k3, 2: k2, 3: k1, the radix order) as an
 * unsigned number that orders like the signed one. */
static inline uint64_t field(const ArSortKey *k, int f)
{
	int64_t v = f == 0 ? k->id : f == 1 ? k->k3 : f == 2 ? k->k2 : k->k1;
	return (uint64_t)v ^ UINT64_C(0x8000000000000000);
}

/* Stable pass over byte d of field f, from src to dst. */
static void radix_pass(const ArSortKey *src, ArSortKey *dst, int n, int f,
		       int d)
{
	int start[256] = {0};
	int shift = 8 * d;
	for (int i = 0; i < n; i++)
		start[field(&src[i], f) >> shift & 0xff]++;
	for (int b = 0, sum = 0; b < 256; b++) {
		int c = start[b];
		start[b] = sum;
		sum += c;
	}
	for (int i = 0; i < n; i++)
		dst[start[field(&src[i], f) >> shift & 0xff]++] = src[i];
}

/* Sorts by radix when the keys vary in few enough bytes; false if not
 * (k untouched).  Ids in ascending order already need no pass of their
 * own: a stable sort keeps them so within equal keys. */
static bool radix_sort(ArSortKey *k, int n)
{
	uint64_t vary[4] = {0};
	bool ids_up = true;
	int passes = 0;
	ArSortKey *tmp, *src = k, *dst;

	for (int i = 1; i < n; i++) {
		for (int f = 0; f < 4; f++)
			vary[f] |= field(&k[i], f) ^ field(&k[0], f);
		ids_up = ids_up && k[i].id > k[i - 1].id;
	}
	if (ids_up)
		vary[0] = 0;
	for (int f = 0; f < 4; f++)
		for (int d = 0; d < 8; d++)
			passes += (vary[f] >> 8 * d & 0xff) != 0;
	if (passes > RADIX_MAX_PASSES)
		return false;
	dst = tmp = ar_xmalloc((size_t)n * sizeof *k + 1);
	for (int f = 0; f < 4; f++)
		for (int d = 0; d < 8; d++) {
			if (!(vary[f] >> 8 * d & 0xff))
				continue;
			radix_pass(src, dst, n, f, d);
			ArSortKey *s = src;
			src = dst;
			dst = s;
		}
	settle(k, src, tmp, n);
	return true;
}

void ar_sort_keys(ArSortKey *k, int n)
{
	ArSortKey *tmp, *src, *dst;
	int i = 1;

	while (i < n && !key_less(&k[i], &k[i - 1]))
		i++;
	if (i >= n || (n >= RADIX_MIN && radix_sort(k, n)))
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
	settle(k, src, tmp, n);
}
