/*
 * sortkey.h — the sort record of the planner passes that order ids by up
 * to three integer keys (greedy placement's buffer orders, the verifier's
 * births, deaths and positions).  Ties end on the id, so equal keys come
 * out in one order on every machine, whatever qsort does with them.
 */
#ifndef ARENAC_SORTKEY_H
#define ARENAC_SORTKEY_H

#include <stdint.h>

typedef struct ArSortKey {
	int64_t k1, k2, k3;
	int id;
} ArSortKey;

/* Sorts k ascending by k1, k2, k3, then id. */
void ar_sort_keys(ArSortKey *k, int n);

#endif
