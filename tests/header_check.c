/*
 * header_check.c — reads a generated header's tables back as text lines, so
 * that tests can compare them with what arenac knows (its JSON report, or
 * the plan in memory), and re-checks the layout from the header alone.
 *
 *   cc -DARENAC_HEADER='"m.h"' -DLO=m -DUP=M -DM_DEFINE_ARENA header_check.c
 *
 * Names are printed in hex so that any bytes survive the trip.  Exits 1
 * when two tensors live at the same step share bytes without being linked
 * by alias_of or inplace_of, or when the arena is misaligned.
 *
 * -DTIERED reads a tiered plan's header: a line per region, a region
 * column, overlaps checked within each region, tensors kept above the
 * bytes reserved for the weights and those bytes never written.  With
 * -DREGIONS='R(SRAM, sram) ...' it also checks each named region's macros
 * against its arena array and the regions table.
 */
#include <stdio.h>
#include <string.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define L(x) CAT(LO, x)
#define U(x) CAT(UP, x)

#include ARENAC_HEADER

/* What the one-arena and the tiered header spell differently; functions,
 * so that the one-arena case's constant 0 draws no type-limit warning. */
#ifdef TIERED
#define BASES L(_arenas)
#define NREG U(_NUM_REGIONS)
#define REGION(t) ((int)L(_tensors)[t].region)
#else
#define BASES L(_arena)
#define NREG 1
#define REGION(t) 0
#endif

static uint8_t *base(int r)
{
#ifdef TIERED
	return L(_arenas)[r];
#else
	(void)r;
	return L(_arena);
#endif
}

static uint32_t region_size(int r)
{
#ifdef TIERED
	return L(_regions)[r].size;
#else
	(void)r;
	return U(_ARENA_SIZE);
#endif
}

/* Bytes at the region's start reserved for the weights. */
static uint32_t region_floor(int r)
{
#ifdef TIERED
	return L(_regions)[r].weights_bytes;
#else
	(void)r;
	return 0;
#endif
}

static void hex(const char *s)
{
	putchar(' ');
	if (!*s)
		putchar('-');
	for (; *s; s++)
		printf("%02x", (unsigned char)*s);
}

static void ints(const int32_t *v, int n)
{
	putchar(' ');
	if (!n)
		putchar('-');
	for (int i = 0; i < n; i++)
		printf("%s%ld", i ? "," : "", (long)v[i]);
}

/* Tensors linked by alias_of or inplace_of, transitively, share a root. */
static int root(int t)
{
	while (L(_tensors)[t].alias_of >= 0 || L(_tensors)[t].inplace_of >= 0)
		t = L(_tensors)[t].alias_of >= 0 ? L(_tensors)[t].alias_of :
		    L(_tensors)[t].inplace_of;
	return t;
}

static int check_overlaps(void)
{
	int bad = 0;
	for (int i = 0; i < U(_NUM_TENSORS); i++) {
		const L(_tensor) *a = &L(_tensors)[i];
		if (a->offset == U(_NOT_IN_ARENA))
			continue;
		if (REGION(i) >= NREG ||
		    (uint64_t)a->offset + a->bytes > region_size(REGION(i)) ||
		    a->offset < region_floor(REGION(i))) {
			printf("error: tensor %d lies outside its arena\n", i);
			bad = 1;
		}
		for (int j = i + 1; j < U(_NUM_TENSORS); j++) {
			const L(_tensor) *b = &L(_tensors)[j];
			if (b->offset == U(_NOT_IN_ARENA) ||
			    REGION(i) != REGION(j) ||
			    a->last < b->first || b->last < a->first ||
			    a->offset + a->bytes <= b->offset ||
			    b->offset + b->bytes <= a->offset ||
			    root(i) == root(j))
				continue;
			printf("error: tensors %d and %d overlap\n", i, j);
			bad = 1;
		}
	}
	return bad;
}

/* A byte pattern per buffer: tensors sharing bytes by design share it. */
static int pattern(int t)
{
	return root(t) % 251 + 1;
}

static void fill(int t)
{
	if (L(_tensors)[t].offset != U(_NOT_IN_ARENA))
		memset(U(_TENSOR_PTR)(BASES, t), pattern(t),
		       L(_tensors)[t].bytes);
}

static int intact(int t, int step)
{
	const uint8_t *b = (const uint8_t *)U(_TENSOR_PTR)(BASES, t);
	int pat = pattern(t);
	if (L(_tensors)[t].offset == U(_NOT_IN_ARENA))
		return 1;
	for (uint32_t i = 0; i < L(_tensors)[t].bytes; i++)
		if (b[i] != pat) {
			printf("error: tensor %d was overwritten before step "
			       "%d read it\n", t, step);
			return 0;
		}
	return 1;
}

/* The bytes reserved for the weights hold a pattern no tensor writes
 * (tensors' patterns are 1 to 251); intact after the run or not. */
static int weights_kept(int fill_them)
{
	for (int r = 0; r < NREG; r++)
		for (uint32_t i = 0; i < region_floor(r); i++) {
			if (fill_them)
				base(r)[i] = 0xFF;
			else if (base(r)[i] != 0xFF)
				return 0;
		}
	return 1;
}

/*
 * Runs the steps the way a runtime would, with kernels that write a
 * pattern: every input must still hold its producer's pattern when read.
 */
static int run_steps(void)
{
	weights_kept(1);
	for (int i = 0; i < U(_NUM_TENSORS); i++)
		if (L(_tensors)[i].kind == U(_KIND_INPUT))
			fill(i);
	for (int s = 0; s < U(_NUM_STEPS); s++) {
		const L(_step) *st = &L(_steps)[s];
		for (int j = 0; j < st->ninputs; j++)
			if (st->inputs[j] >= 0 && !intact(st->inputs[j], s))
				return 1;
		for (int j = 0; j < st->noutputs && !st->noop; j++)
			if (st->outputs[j] >= 0)
				fill(st->outputs[j]);
	}
	if (!weights_kept(0)) {
		printf("error: a step wrote over the weights\n");
		return 1;
	}
	return 0;
}

#ifdef REGIONS
/* Region UPN's index, size macro, arena array and table entry agree. */
#define R(UPN, LON) \
	if (L(_arenas)[CAT(UP, _REGION_##UPN)] != CAT(LO, _arena_##LON) || \
	    sizeof CAT(LO, _arena_##LON) != \
	    (CAT(UP, _ARENA_##UPN##_SIZE) ? CAT(UP, _ARENA_##UPN##_SIZE) : 1) || \
	    L(_regions)[CAT(UP, _REGION_##UPN)].size != \
	    CAT(UP, _ARENA_##UPN##_SIZE)) { \
		printf("error: region " #UPN "'s macros disagree\n"); \
		return 1; \
	}

static int check_region_macros(void)
{
	REGIONS
	return 0;
}
#endif

int main(void)
{
	const L(_step) *s;
	int n = 0;

	unsigned long total = 0;

	for (int r = 0; r < NREG; r++)
		total += region_size(r);
	printf("arena %lu %d %lu %lu %d\n", total, (int)U(_ARENA_ALIGN),
	       (unsigned long)U(_LOWER_BOUND),
	       (unsigned long)U(_WEIGHTS_BYTES), (int)U(_PEAK_STEP));
#ifdef TIERED
	for (int r = 0; r < NREG; r++) {
		printf("region %d", r);
		hex(L(_regions)[r].name);
		printf(" %lu %lu\n", (unsigned long)L(_regions)[r].size,
		       (unsigned long)L(_regions)[r].weights_bytes);
	}
#endif
	for (int i = 0; i < U(_NUM_TENSORS); i++) {
		const L(_tensor) *t = &L(_tensors)[i];
		printf("tensor %d", i);
		hex(t->name);
		printf(" %d %d %d", t->dtype, t->kind, t->rank);
		ints(t->dims, t->rank > 0 ? t->rank : 0);
		printf(" %lu", (unsigned long)t->bytes);
		if (t->offset == U(_NOT_IN_ARENA))
			printf(" -");
		else
			printf(" %lu", (unsigned long)t->offset);
#ifdef TIERED
		if (t->offset == U(_NOT_IN_ARENA))
			printf(" -");
		else
			printf(" %d", t->region);
#endif
		printf(" %ld %ld %ld %lu %ld\n", (long)t->first, (long)t->last,
		       (long)t->alias_of, (unsigned long)t->alias_offset,
		       (long)t->inplace_of);
	}
	for (s = L(_steps); s->op; s++, n++) {
		printf("step %d", n);
		hex(s->op);
		hex(s->domain);
		hex(s->name);
		ints(s->inputs, s->ninputs);
		ints(s->outputs, s->noutputs);
		printf(" %d\n", s->noop);
		for (int a = 0; a < s->nattrs; a++) {
			const L(_attr) *at = &s->attrs[a];
			printf("attr %d", n);
			hex(at->name);
			printf(" %d %d", at->type, at->count);
			for (int v = 0; v < at->count; v++) {
				if (at->type == U(_ATTR_STRING) ||
				    at->type == U(_ATTR_STRINGS))
					hex(at->strings[v]);
				else if (at->type == U(_ATTR_FLOAT) ||
					 at->type == U(_ATTR_FLOATS) ||
					 at->dtype == U(_DT_FLOAT32) ||
					 at->dtype == U(_DT_FLOAT64))
					printf(" %.9g", (double)at->floats[v]);
				else
					printf(" %lld", (long long)at->ints[v]);
			}
			putchar('\n');
		}
	}
	if (n != U(_NUM_STEPS) || L(_tensors)[U(_NUM_TENSORS)].name) {
		printf("error: the tables' lengths disagree with the macros\n");
		return 1;
	}
	for (int r = 0; r < NREG; r++)
		if ((uintptr_t)base(r) % U(_ARENA_ALIGN) != 0) {
			printf("error: arena %d is misaligned\n", r);
			return 1;
		}
#ifdef REGIONS
	if (check_region_macros())
		return 1;
#endif
	return check_overlaps() || run_steps();
}
