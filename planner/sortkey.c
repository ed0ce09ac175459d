/*
 * sortkey.c — ordering ArSortKey records (sortkey.h).
 */
#include "sortkey.h"

#include <stdlib.h>

static int key_cmp(const void *pa, const void *pb)
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

void ar_sort_keys(ArSortKey *k, int n)
{
	if (n > 1)
		qsort(k, (size_t)n, sizeof *k, key_cmp);
}
