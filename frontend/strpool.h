/*
 * strpool.h — the strings a graph owns: one shared copy of each distinct
 * op, domain and attribute name its nodes name, and its tensor and node
 * names, packed.
 *
 * A graph of a million nodes holds a handful of distinct ops: a copy per
 * node was two allocations a node (64 MB at a million) to make and free.
 * Its four million names, one allocation each, were a fifth of freeing
 * it.  The graph owns its pool; tensors and nodes only point into it, and
 * nothing is freed before the whole pool.
 */
#ifndef ARENAC_STRPOOL_H
#define ARENAC_STRPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct ArStrPool ArStrPool;

/* The pool's copy of s, added on first use ("" is a constant of its
 * own); *pool is created when NULL.  Copies stay put until
 * ar_strpool_free. */
const char *ar_strpool_intern(ArStrPool **pool, const char *s);
/* A copy of s of its own (a name), packed with the others. */
const char *ar_strpool_copy(ArStrPool **pool, const char *s);
void ar_strpool_free(ArStrPool *pool);

/* FNV-1a of s, folded to 32 bits: the pool's hash set and the loader's
 * name index (inline: the loader hashes every name it reads). */
static inline uint32_t ar_str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return (uint32_t)(h ^ h >> 32);
}

#endif
