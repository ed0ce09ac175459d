/*
 * pbarena.h — one bump arena for the unpacked protobuf model.
 *
 * protobuf-c allocates every message, string, bytes field and repeated
 * array of the model on its own (tens of thousands of mallocs for a
 * DenseNet, millions for a graph of a million nodes), and freeing the
 * tree walks it all again.  The loader reads the tree once and drops it
 * whole, so it is allocated from chunks here and freed chunk by chunk:
 * no per-allocation header, no walk.  Large allocations are mallocs of
 * their own, which protobuf-c's frees give back (pbarena.c).
 */
#ifndef ARENAC_PBARENA_H
#define ARENAC_PBARENA_H

#include <protobuf-c/protobuf-c.h>

/*
 * Small allocations are 8-byte aligned, not malloc's 16: protobuf-c's
 * messages hold nothing wider than pointers, int64 and double, and most
 * allocations are short strings and one-element arrays (a node's name,
 * op, input, output), which 16-byte steps padded by half.
 */
#define AR_PB_ALIGN 8

typedef struct ArPbChunk ArPbChunk;

typedef struct ArPbArena {
	ProtobufCAllocator alloc;   /* hand &alloc to protobuf-c's unpack */
	ArPbChunk *head;            /* the chunk being filled, then older */
	void **big;                 /* the large allocations, a hash set */
	size_t cap, used;           /* its slots, and those ever filled */
} ArPbArena;

void ar_pb_arena_init(ArPbArena *a);
/* Frees everything allocated from a (whatever was unpacked with it). */
void ar_pb_arena_free(ArPbArena *a);

#endif
