/*
 * strpool.h — one shared copy of each distinct string a graph's nodes
 * name as op or domain.
 *
 * A graph of a million nodes holds a handful of distinct ops: a copy per
 * node was two allocations a node (64 MB at a million) to make and free.
 * The graph owns its pool; nodes only point into it.
 */
#ifndef ARENAC_STRPOOL_H
#define ARENAC_STRPOOL_H

#include <stddef.h>

typedef struct ArStrPool ArStrPool;

/* The pool's copy of s, added on first use; *pool is created when NULL.
 * Copies stay put until ar_strpool_free. */
const char *ar_strpool_intern(ArStrPool **pool, const char *s);
void ar_strpool_free(ArStrPool *pool);

#endif
