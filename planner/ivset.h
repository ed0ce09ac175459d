/*
 * ivset.h — sets of disjoint half-open intervals [lo, hi) of int64, kept
 * merged (overlapping or touching intervals become one), as treaps in one
 * shared node pool.  The greedy offset placement keeps one per segment
 * tree node for the bytes taken there (greedy.c).  Private to planner/.
 *
 * A set is the index of its root node in the pool, AR_IV_EMPTY when
 * empty.  Every operation is O(log n) expected, an insertion that merges
 * k intervals O(k + log n); a node's priority is a hash of its index in
 * the pool, so the shape of every tree, and every answer, is the same on
 * every run, and a node is 24 bytes (the pool is the greedy placement's
 * share of a million-node plan's peak memory).
 */
#ifndef ARENAC_IVSET_H
#define ARENAC_IVSET_H

#include <stdbool.h>
#include <stdint.h>

#define AR_IV_EMPTY (-1)

typedef struct ArIvNode {
	int64_t lo, hi;
	int left, right;
} ArIvNode;

typedef struct ArIvPool {
	ArIvNode *node;
	int n, cap;
	int free;               /* list through .left, AR_IV_EMPTY at its end */
} ArIvPool;

void ar_iv_pool_init(ArIvPool *p);
void ar_iv_pool_free(ArIvPool *p);

/* Adds [lo, hi) (lo < hi) to set *root. */
void ar_iv_insert(ArIvPool *p, int *root, int64_t lo, int64_t hi);

/* The interval with the largest lo below x, or AR_IV_EMPTY. */
int ar_iv_before(const ArIvPool *p, int root, int64_t x);
/* The interval with the smallest lo above x, or AR_IV_EMPTY. */
int ar_iv_after(const ArIvPool *p, int root, int64_t x);
/* Whether one interval of the set holds all of [lo, hi). */
bool ar_iv_covers(const ArIvPool *p, int root, int64_t lo, int64_t hi);

#endif
