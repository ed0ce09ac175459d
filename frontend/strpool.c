/*
 * strpool.c — interned strings: an open-addressing hash set of copies.
 *
 * Lookups hash the string and compare it with the copy in its slot; the
 * set stays at most half full, so a probe ends soon.  See strpool.h.
 */
#include "strpool.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

struct ArStrPool {
	char **slot;                /* NULL: empty */
	size_t cap;                 /* a power of two */
	size_t count;
};

static size_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return (size_t)(h ^ h >> 32);
}

static char **find(char **slot, size_t cap, const char *s)
{
	size_t i = hash(s) & (cap - 1);
	while (slot[i] && strcmp(slot[i], s))
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

static void grow(ArStrPool *p)
{
	size_t cap = p->cap ? 2 * p->cap : 16;
	char **slot = ar_xcalloc(cap, sizeof *slot);
	for (size_t i = 0; i < p->cap; i++)
		if (p->slot[i])
			*find(slot, cap, p->slot[i]) = p->slot[i];
	free(p->slot);
	p->slot = slot;
	p->cap = cap;
}

const char *ar_strpool_intern(ArStrPool **pool, const char *s)
{
	ArStrPool *p = *pool;
	char **at;
	if (!p)
		p = *pool = ar_xcalloc(1, sizeof *p);
	if (2 * (p->count + 1) > p->cap)
		grow(p);
	at = find(p->slot, p->cap, s);
	if (!*at) {
		*at = ar_xstrdup(s);
		p->count++;
	}
	assert(!strcmp(*at, s));
	return *at;
}

void ar_strpool_free(ArStrPool *pool)
{
	if (!pool)
		return;
	for (size_t i = 0; i < pool->cap; i++)
		free(pool->slot[i]);
	free(pool->slot);
	free(pool);
}
