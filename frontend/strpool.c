/*
 * strpool.c — a graph's strings: interned ones in an open-addressing hash
 * set of copies (at most half full, so a probe ends soon), and copies of
 * their own packed into large chunks, freed all at once.  See strpool.h.
 */
#include "strpool.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/* Chunks of copies, newest first; a string longer than a chunk gets
 * one of its own. */
typedef struct Chunk {
	struct Chunk *next;
	char text[];
} Chunk;

#define CHUNK_TEXT ((size_t)64 * 1024 - sizeof(Chunk))

struct ArStrPool {
	char **slot;                /* NULL: empty */
	size_t cap;                 /* a power of two */
	size_t count;
	const char *last;           /* the last interned, asked again next */
	Chunk *chunks;
	char *at;                   /* the free end of chunks->text */
	size_t room;                /* bytes free there */
};

static char **find(char **slot, size_t cap, const char *s)
{
	size_t i = ar_str_hash(s) & (cap - 1);
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

static ArStrPool *pool_of(ArStrPool **pool)
{
	if (!*pool)
		*pool = ar_xcalloc(1, sizeof **pool);
	return *pool;
}

const char *ar_strpool_copy(ArStrPool **pool, const char *s)
{
	ArStrPool *p = pool_of(pool);
	size_t n = strlen(s) + 1;
	char *d;
	if (n > p->room) {
		size_t size = n > CHUNK_TEXT ? n : CHUNK_TEXT;
		Chunk *c = ar_xmalloc(sizeof *c + size);
		c->next = p->chunks;
		p->chunks = c;
		p->at = c->text;
		p->room = size;
	}
	d = p->at;
	p->at += n;
	p->room -= n;
	memcpy(d, s, n);
	return d;
}

const char *ar_strpool_intern(ArStrPool **pool, const char *s)
{
	ArStrPool *p = pool_of(pool);
	char **at;
	/* The default domain, and a run of nodes of one op, as a loader
	 * meets them: no hashing. */
	if (!*s)
		return "";
	if (p->last && !strcmp(p->last, s))
		return p->last;
	if (2 * (p->count + 1) > p->cap)
		grow(p);
	at = find(p->slot, p->cap, s);
	if (!*at) {
		*at = ar_xstrdup(s);
		p->count++;
	}
	assert(!strcmp(*at, s));
	return p->last = *at;
}

void ar_strpool_free(ArStrPool *pool)
{
	if (!pool)
		return;
	for (size_t i = 0; i < pool->cap; i++)
		free(pool->slot[i]);
	while (pool->chunks) {
		Chunk *c = pool->chunks;
		pool->chunks = c->next;
		free(c);
	}
	free(pool->slot);
	free(pool);
}
