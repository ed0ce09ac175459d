/*
 * pbarena.c — the bump arena of pbarena.h.
 *
 * Small allocations are cut from the head chunk; a new head of CHUNK bytes
 * starts when one does not fit, and protobuf-c's frees of them are no-ops.
 * An allocation larger than a quarter of a chunk (raw tensor data,
 * protobuf-c's scratch lists of a message's fields) is a malloc of its
 * own, kept in a set of pointers, so that a free of it does give the
 * memory back: protobuf-c frees the scratch lists of each message it has
 * unpacked, tens of MB for the graph of a graph with a million nodes.
 */
#include "pbarena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "graph.h"

_Static_assert(AR_PB_ALIGN >= _Alignof(void *) &&
	       AR_PB_ALIGN >= _Alignof(uint64_t) &&
	       AR_PB_ALIGN >= _Alignof(double),
	       "AR_PB_ALIGN must suit every protobuf-c field");

#define CHUNK ((size_t)1 << 16)
#define BIG (CHUNK / 4)
/* A slot of the big set that held a pointer since freed. */
#define GONE ((void *)&tombstone)

static const char tombstone;

struct ArPbChunk {
	ArPbChunk *next;
	size_t used;
	max_align_t data[];
};

static size_t slot_of(const ArPbArena *a, const void *p)
{
	return (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull) &
	       (a->cap - 1);
}

static void set_put(ArPbArena *a, void *p);

/* Doubles the set (or starts it) when half its slots are taken. */
static void set_grow(ArPbArena *a)
{
	void **old = a->big;
	size_t oldcap = a->cap;

	a->cap = oldcap ? 2 * oldcap : 64;
	a->big = ar_xcalloc(a->cap, sizeof *a->big);
	a->used = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i] && old[i] != GONE)
			set_put(a, old[i]);
	free(old);
}

static void set_put(ArPbArena *a, void *p)
{
	size_t i;
	if (2 * (a->used + 1) > a->cap)
		set_grow(a);
	for (i = slot_of(a, p); a->big[i]; i = (i + 1) & (a->cap - 1))
		;
	a->big[i] = p;
	a->used++;
}

/* Whether p is in the set; taken out of it if so. */
static bool set_take(ArPbArena *a, const void *p)
{
	if (!a->cap)
		return false;
	for (size_t i = slot_of(a, p); a->big[i]; i = (i + 1) & (a->cap - 1))
		if (a->big[i] == p) {
			a->big[i] = GONE;   /* still counted in used */
			return true;
		}
	return false;
}

static void *arena_alloc(void *data, size_t n)
{
	ArPbArena *a = data;
	ArPbChunk *c = a->head;
	const size_t align = AR_PB_ALIGN;
	void *p;

	if (n > BIG) {
		p = ar_xmalloc(n);
		set_put(a, p);
		return p;
	}
	n = n ? (n + align - 1) / align * align : align;
	if (!c || CHUNK - c->used < n) {
		c = ar_xmalloc(offsetof(ArPbChunk, data) + CHUNK);
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

static void arena_free(void *data, void *p)
{
	if (set_take(data, p))
		free(p);
}

void ar_pb_arena_init(ArPbArena *a)
{
	a->alloc.alloc = arena_alloc;
	a->alloc.free = arena_free;
	a->alloc.allocator_data = a;
	a->head = NULL;
	a->big = NULL;
	a->cap = a->used = 0;
}

void ar_pb_arena_free(ArPbArena *a)
{
	while (a->head) {
		ArPbChunk *next = a->head->next;
		free(a->head);
		a->head = next;
	}
	for (size_t i = 0; i < a->cap; i++)
		if (a->big[i] != GONE)
			free(a->big[i]);
	free(a->big);
	ar_pb_arena_init(a);
}
