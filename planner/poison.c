/*
 * poison.c — the poison executor: runs a plan on real bytes without kernels.
 *
 * Every value gets a fill pattern derived from its identity and position.
 * Each step first checks that all its inputs still hold exactly the pattern
 * their producer wrote, then writes its outputs' patterns over the arena as
 * laid out by the plan.  Any two values that the plan lets overlap while
 * both are needed show up as a corrupted input, with no real kernel.
 *
 * A view or concat slice (alias_of) is the same value as the buffer it
 * lives in, so its pattern is that buffer's pattern at its offset; an
 * in-place output is a new value, with its own pattern.  A tiered plan
 * gets one byte array per region, each tensor living in its region's.
 */
#include "passes.h"

#include <stdlib.h>

#define POISON_MAX_ARENA ((int64_t)4 << 30)

static uint8_t pattern(uint32_t value, uint64_t pos)
{
	uint32_t x = value * 0x9E3779B1u ^ (uint32_t)pos ^
		     (uint32_t)(pos >> 32) * 0x85EBCA6Bu;
	x ^= x >> 15;
	x *= 0x2C1B3C6Du;
	x ^= x >> 12;
	x *= 0x297A2D39u;
	return (uint8_t)(x >> 24);
}

/* The value a tensor's bytes belong to, and where inside it they start. */
static int value_of(const ArPlan *p, int t, int64_t *pos)
{
	int64_t o = 0;
	for (int hops = 0; p->slots[t].alias_of >= 0 && hops <= p->ntensors;
	     hops++) {
		o += p->slots[t].alias_offset;
		t = p->slots[t].alias_of;
	}
	*pos = o;
	return t;
}

static void fill(uint8_t **arena, const ArGraph *g, const ArPlan *p, int t)
{
	int64_t pos;
	uint32_t v = (uint32_t)value_of(p, t, &pos);
	uint8_t *b = arena[p->slots[t].region] + p->slots[t].offset;
	for (int64_t i = 0; i < g->tensors[t].bytes; i++)
		b[i] = pattern(v, (uint64_t)(pos + i));
}

static int check(uint8_t *const *arena, const ArGraph *g, const ArPlan *p,
		 int t, int step, ArError *err)
{
	int64_t pos;
	uint32_t v = (uint32_t)value_of(p, t, &pos);
	const uint8_t *b = arena[p->slots[t].region] + p->slots[t].offset;
	for (int64_t i = 0; i < g->tensors[t].bytes; i++)
		if (b[i] != pattern(v, (uint64_t)(pos + i)))
			return ar_fail(err, AR_EXIT_INTERNAL, "poison: step %d "
				       "'%s' reads '%s', whose byte %lld "
				       "(arena offset %lld) was overwritten",
				       step, step < p->nsteps ?
				       g->nodes[p->steps[step]].name : "(end)",
				       g->tensors[t].name, (long long)i,
				       (long long)(p->slots[t].offset + i));
	return AR_OK;
}

int ar_poison_run(const ArGraph *g, const ArPlan *p, ArError *err)
{
	int nr = ar_plan_nregions(p);
	uint8_t **arena;
	int rc = AR_OK;

	if (p->arena_bytes > POISON_MAX_ARENA)
		return ar_fail(err, AR_EXIT_INTERNAL, "poison: arena of %lld "
			       "bytes is too large to simulate",
			       (long long)p->arena_bytes);
	arena = ar_xmalloc((size_t)nr * sizeof *arena);
	for (int r = 0; r < nr; r++)
		arena[r] = ar_xcalloc((size_t)ar_plan_region_bytes(p, r) + 1, 1);
	for (int i = 0; i < g->ninputs; i++)
		if (p->slots[g->inputs[i]].planned)
			fill(arena, g, p, g->inputs[i]);
	for (int s = 0; s < p->nsteps && !rc; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		for (int j = 0; j < n->ninputs && !rc; j++)
			if (n->inputs[j] >= 0 && p->slots[n->inputs[j]].planned)
				rc = check(arena, g, p, n->inputs[j], s, err);
		for (int j = 0; j < n->noutputs && !rc; j++)
			if (n->outputs[j] >= 0 && p->slots[n->outputs[j]].planned)
				fill(arena, g, p, n->outputs[j]);
	}
	for (int i = 0; i < g->noutputs && !rc; i++)
		if (p->slots[g->outputs[i]].planned)
			rc = check(arena, g, p, g->outputs[i], p->nsteps, err);
	for (int r = 0; r < nr; r++)
		free(arena[r]);
	free(arena);
	return rc;
}
