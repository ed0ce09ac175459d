/*
 * caching.c — --allocator caching: the planned step run through PyTorch's
 * CUDA caching allocator, as an eager training run allocates it, to tell
 * what the device really holds beside the ideal arena.
 *
 * The rules are c10/cuda/CUDACachingAllocator.cpp's, with its defaults
 * (no PYTORCH_CUDA_ALLOC_CONF, one stream):
 *   - round_size: every request rounded up to a multiple of 512 bytes
 *     (kMinBlockSize);
 *   - two pools: requests up to 1 MiB (kSmallSize) are small, larger ones
 *     large; a request takes the smallest free block of its pool that
 *     holds it (get_free_block's best fit), else a new segment of
 *     get_allocation_size: 2 MiB (kSmallBuffer) for small requests, 20 MiB
 *     (kLargeBuffer) below 10 MiB (kMinLargeAlloc), else the size rounded
 *     up to 2 MiB (kRoundLarge);
 *   - should_split: the rest of the block stays a free block when it is at
 *     least 512 bytes (small pool) or more than 1 MiB (large pool);
 *   - free_block merges a freed block with its free neighbours in the same
 *     segment; segments are kept (reserved) until an allocation would
 *     pass the device, when the free whole segments are released
 *     (release_cached_blocks) and the allocation is tried again.
 * The run: every persistent tensor (parameters, gradients, master weights,
 * optimizer state, constants: one allocation each, as each is its own
 * torch tensor; a paged optimizer's moments are in host memory, never
 * the allocator's) first, then step by step each output that owns bytes
 * allocated when its step runs, with the step's workspace, and each
 * tensor freed after its last step (its last reference goes).  Views and
 * in-place outputs share their tensor's storage, as torch's do.
 *
 * allocated is what torch.cuda.max_memory_allocated would show (rounded
 * blocks in use), reserved what max_memory_reserved shows (segments).
 */
#include "plan.h"
#include "passes.h"

#include <assert.h>
#include <stdlib.h>

#define MIN_BLOCK 512
#define SMALL_SIZE ((int64_t)1 << 20)
#define SMALL_BUFFER ((int64_t)2 << 20)
#define LARGE_BUFFER ((int64_t)20 << 20)
#define MIN_LARGE_ALLOC ((int64_t)10 << 20)
#define ROUND_LARGE ((int64_t)2 << 20)

typedef struct Block {
	int seg;
	int64_t off, size;
	bool used, small;
	int prev, next;         /* neighbours in the segment, -1 at the ends */
} Block;

typedef struct Alloc {
	Block *b;
	int n, cap;
	int64_t *seg_size;
	int nseg, capseg;
	bool *seg_gone;
	int64_t allocated, reserved, capacity;
	ArCacheStats *st;
} Alloc;

static int64_t round_size(int64_t n)
{
	return n < MIN_BLOCK ? MIN_BLOCK : (n + MIN_BLOCK - 1) / MIN_BLOCK *
					   MIN_BLOCK;
}

static int64_t allocation_size(int64_t n)
{
	if (n <= SMALL_SIZE)
		return SMALL_BUFFER;
	if (n < MIN_LARGE_ALLOC)
		return LARGE_BUFFER;
	return (n + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
}

static int new_block(Alloc *a, Block b)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 256;
		a->b = ar_xrealloc(a->b, (size_t)a->cap * sizeof *a->b);
	}
	a->b[a->n] = b;
	return a->n++;
}

/* Frees the free whole segments (release_cached_blocks). */
static void release(Alloc *a)
{
	for (int i = 0; i < a->n; i++) {
		Block *b = &a->b[i];
		if (b->seg < 0 || b->used || b->prev >= 0 || b->next >= 0 ||
		    a->seg_gone[b->seg])
			continue;
		a->reserved -= a->seg_size[b->seg];
		a->seg_gone[b->seg] = true;
		b->seg = -1;
	}
}

static int new_segment(Alloc *a, int64_t size, bool small)
{
	int64_t want = allocation_size(size);
	if (a->capacity > 0 && a->reserved + want > a->capacity)
		release(a);
	if (a->nseg == a->capseg) {
		a->capseg = a->capseg ? 2 * a->capseg : 64;
		a->seg_size = ar_xrealloc(a->seg_size, (size_t)a->capseg *
					  sizeof *a->seg_size);
		a->seg_gone = ar_xrealloc(a->seg_gone, (size_t)a->capseg *
					  sizeof *a->seg_gone);
	}
	a->seg_size[a->nseg] = want;
	a->seg_gone[a->nseg] = false;
	a->reserved += want;
	if (a->reserved > a->st->reserved_peak)
		a->st->reserved_peak = a->reserved;
	a->st->segments++;
	return new_block(a, (Block){a->nseg++, 0, want, false, small, -1, -1});
}

/* Allocates n bytes; returns the block. */
static int alloc(Alloc *a, int64_t n)
{
	int64_t size = round_size(n);
	bool small = size <= SMALL_SIZE;
	int best = -1;

	for (int i = 0; i < a->n; i++) {
		const Block *b = &a->b[i];
		if (b->seg >= 0 && !b->used && b->small == small &&
		    b->size >= size && (best < 0 || b->size < a->b[best].size))
			best = i;
	}
	if (best < 0)
		best = new_segment(a, size, small);
	{
		Block *b = &a->b[best];
		int64_t rest = b->size - size;
		if (small ? rest >= MIN_BLOCK : rest > SMALL_SIZE) {
			Block r = {b->seg, b->off + size, rest, false, small, best,
				   b->next};
			int k = new_block(a, r);
			b = &a->b[best];        /* new_block may move them */
			if (b->next >= 0)
				a->b[b->next].prev = k;
			b->next = k;
			b->size = size;
		}
		b->used = true;
		a->allocated += b->size;
		if (a->allocated > a->st->allocated_peak)
			a->st->allocated_peak = a->allocated;
	}
	return best;
}

/* Takes block j out of its segment's list (merged into a neighbour). */
static void unlink_block(Alloc *a, int j)
{
	Block *o = &a->b[j];
	if (o->prev >= 0)
		a->b[o->prev].next = o->next;
	if (o->next >= 0)
		a->b[o->next].prev = o->prev;
	o->seg = -1;
}

/* Frees block i, merging it with free neighbours (free_block). */
static void release_block(Alloc *a, int i)
{
	Block *b = &a->b[i];
	int j;
	assert(b->used);
	b->used = false;
	a->allocated -= b->size;
	if ((j = b->next) >= 0 && !a->b[j].used) {
		b->size += a->b[j].size;
		unlink_block(a, j);
	}
	if ((j = a->b[i].prev) >= 0 && !a->b[j].used) {
		a->b[j].size += a->b[i].size;
		unlink_block(a, i);
	}
}

int ar_caching_simulate(const ArGraph *g, const ArPlan *p, int64_t capacity,
			ArCacheStats *st)
{
	Alloc a = {.capacity = capacity, .st = st};
	int *block = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *block);
	int *dies = ar_xcalloc((size_t)p->nsteps + 2, sizeof *dies);
	int *next_die = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	int *last = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	int *first = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	bool *read = ar_xmalloc((size_t)g->ntensors + 1);

	*st = (ArCacheStats){0};
	/* Persistent storages the steps read (ar_weights_read): allocated
	 * first, in tensor order, and kept. */
	ar_weights_read(g, p, read);
	for (int t = 0; t < g->ntensors; t++) {
		block[t] = -1;
		next_die[t] = -1;
		if (read[t] && !g->tensors[t].off_device)
			block[t] = alloc(&a, g->tensors[t].bytes);
	}
	/* A storage lives from its owner's first step to the last step of
	 * any tensor sharing it (views, in-place outputs). */
	ar_plan_storage_spans(g, p, first, last);
	/* The storages dying at each step, as linked lists. */
	for (int t = 0; t < g->ntensors; t++) {
		const ArSlot *s = &p->slots[t];
		if (s->planned && s->root == t && s->first >= 0) {
			next_die[t] = dies[last[t] + 1] - 1;
			dies[last[t] + 1] = t + 1;
		}
	}
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		const ArScratch *sc = ar_plan_scratch(p, p->steps[s]);
		int w = -1;
		for (int t = dies[s] - 1; t >= 0; t = next_die[t])
			if (block[t] >= 0)
				release_block(&a, block[t]);
		for (int j = 0; j < n->noutputs; j++) {
			int t = n->outputs[j];
			if (t >= 0 && p->slots[t].planned && p->slots[t].root == t &&
			    p->slots[t].first == s && block[t] < 0 &&
			    g->tensors[t].bytes > 0)
				block[t] = alloc(&a, g->tensors[t].bytes);
		}
		/* Graph inputs are there before step 0. */
		if (s == 0)
			for (int t = 0; t < g->ntensors; t++)
				if (p->slots[t].planned && p->slots[t].root == t &&
				    p->slots[t].first == 0 && block[t] < 0 &&
				    g->tensors[t].bytes > 0)
					block[t] = alloc(&a, g->tensors[t].bytes);
		if (sc && sc->bytes > 0) {
			w = alloc(&a, sc->bytes);
			release_block(&a, w);
		}
	}
	free(block);
	free(dies);
	free(next_die);
	free(last);
	free(first);
	free(read);
	free(a.b);
	free(a.seg_size);
	free(a.seg_gone);
	return AR_OK;
}
