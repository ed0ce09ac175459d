/*
 * pbarena.c — the bump arena of pbarena.h.
 *
 * Allocations are cut from the head chunk; a new head of CHUNK bytes
 * starts when one does not fit.  An allocation larger than a quarter of a
 * chunk (raw tensor data) gets a chunk of its own, linked behind the head
 * so that the head's free room is not lost.  protobuf-c's free calls are
 * no-ops: nothing is given back before ar_pb_arena_free.
 */
#include "pbarena.h"

#include <stddef.h>
#include <stdlib.h>

#include "graph.h"

#define CHUNK ((size_t)1 << 16)

struct ArPbChunk {
	ArPbChunk *next;
	size_t used, cap;
	max_align_t data[];
};

static ArPbChunk *new_chunk(size_t cap)
{
	ArPbChunk *c = ar_xmalloc(offsetof(ArPbChunk, data) + cap);
	c->next = NULL;
	c->used = 0;
	c->cap = cap;
	return c;
}

static void *arena_alloc(void *data, size_t n)
{
	ArPbArena *a = data;
	ArPbChunk *c = a->head;
	const size_t align = sizeof(max_align_t);
	void *p;

	n = n ? (n + align - 1) / align * align : align;
	if (n > CHUNK / 4) {
		ArPbChunk *big = new_chunk(n);
		big->used = n;
		if (c) {
			big->next = c->next;
			c->next = big;
		} else {
			a->head = big;
		}
		return big->data;
	}
	if (!c || c->cap - c->used < n) {
		c = new_chunk(CHUNK);
		c->next = a->head;
		a->head = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

static void arena_free(void *data, void *p)
{
	(void)data, (void)p;
}

void ar_pb_arena_init(ArPbArena *a)
{
	a->alloc.alloc = arena_alloc;
	a->alloc.free = arena_free;
	a->alloc.allocator_data = a;
	a->head = NULL;
}

void ar_pb_arena_free(ArPbArena *a)
{
	while (a->head) {
		ArPbChunk *next = a->head->next;
		free(a->head);
		a->head = next;
	}
}
