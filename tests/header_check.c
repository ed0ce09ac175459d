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
 *
 * An --io separate header (PREFIX_IO_SEPARATE) gets a buffer of its own
 * for each graph input and output, passed to the pointer macros as io[].
 * Whatever the layout, the typed pointer macros must give the bytes of
 * PREFIX_TENSOR_PTR, the element counts the product of the dims, and the
 * input and output arrays the graph's inputs and outputs.
 *
 * What a kernel library reads is checked against the tables too: each
 * step's op_code one value per op in 0 .. NUM_OPS - 1, every value used;
 * the positional macros of input 0 and output 0 (index, dtype, rank,
 * shape, bytes) the tables' entries; PREFIX_STEP_REQUANT_COUNT 0 unless
 * the step has multipliers.
 */
#include <stdio.h>
#include <stdlib.h>
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

/* The pointer macros' arguments before the tensor index; CALL expands
 * them before the macro counts its arguments. */
#if U(_IO_SEPARATE)
static void *io_buf[U(_NUM_INPUTS) + U(_NUM_OUTPUTS) + 1];
#define ARGS BASES, io_buf
#else
#define ARGS BASES
#endif
#define CALL(f, ...) f(__VA_ARGS__)
#define PTR(how, t) CALL(U(how), ARGS, t)

/* Where tensor t's bytes are for this program: in an arena or a buffer. */
static int placed(int t)
{
	return L(_tensors)[t].offset != U(_NOT_IN_ARENA) ||
	       L(_tensors)[t].io >= 0;
}

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
	if (placed(t))
		memset(PTR(_TENSOR_PTR, t), pattern(t),
		       L(_tensors)[t].bytes);
}

static int intact(int t, int step)
{
	const uint8_t *b = (const uint8_t *)PTR(_TENSOR_PTR, t);
	int pat = pattern(t);
	if (!placed(t))
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

/*
 * The macros and columns a runtime reads besides the layout: typed
 * pointers, element counts, caller buffers, weights' places, the graph's
 * inputs and outputs.
 */
static uint8_t weights[U(_WEIGHTS_SIZE) + 1];

static int check_access(void)
{
	const uint8_t *w = weights;
	for (int t = 0; t < U(_NUM_TENSORS); t++) {
		const L(_tensor) *x = &L(_tensors)[t];
		uint32_t n = x->rank < 0 ? 0 : 1;
		for (int d = 0; d < x->rank; d++)
			n *= (uint32_t)x->dims[d];
		if (x->numel != n || U(_TENSOR_NUMEL)(t) != n ||
		    U(_TENSOR_SIZE)(t) != x->bytes) {
			printf("error: tensor %d has %lu elements, its dims "
			       "say %lu\n", t, (unsigned long)x->numel,
			       (unsigned long)n);
			return 1;
		}
		if ((x->quant != U(_NO_QUANT) &&
		     (x->quant < 0 || x->quant >= U(_NUM_QUANTS))) ||
		    (x->io >= 0 && (x->offset != U(_NOT_IN_ARENA) ||
				    !U(_IO_SEPARATE)))) {
			printf("error: tensor %d's io or quant column\n", t);
			return 1;
		}
		if (x->weights_offset != U(_NOT_IN_ARENA) &&
		    (const uint8_t *)U(_WEIGHT_PTR)(w, t) !=
		    w + x->weights_offset) {
			printf("error: weight %d is not at its offset\n", t);
			return 1;
		}
		if (!placed(t))
			continue;
		if ((void *)PTR(_TENSOR_F32, t) != PTR(_TENSOR_PTR, t) ||
		    (void *)PTR(_TENSOR_I64, t) != PTR(_TENSOR_PTR, t) ||
		    (void *)PTR(_TENSOR_BF16, t) != PTR(_TENSOR_PTR, t)) {
			printf("error: a typed pointer of tensor %d differs\n",
			       t);
			return 1;
		}
	}
	/* An output may be an input passed through or a constant, never an
	 * activation. */
	for (int k = 0; k < U(_NUM_INPUTS); k++)
		if (L(_tensors)[L(_inputs)[k]].kind != U(_KIND_INPUT)) {
			printf("error: input %d is not of kind input\n", k);
			return 1;
		}
	for (int k = 0; k < U(_NUM_OUTPUTS); k++)
		if (L(_tensors)[L(_outputs)[k]].kind == U(_KIND_ACTIVATION)) {
			printf("error: output %d is an activation\n", k);
			return 1;
		}
	if (L(_inputs)[U(_NUM_INPUTS)] != -1 ||
	    L(_outputs)[U(_NUM_OUTPUTS)] != -1) {
		printf("error: the io lists do not end with -1\n");
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

/* Input or output P's positional macros against tensor t's entry (a
 * rank-0 shape is {0}, a filler); IO_MACROS expands P first. */
#define IO_MACROS(P, t) IO_MACROS_(P, t)
#define IO_MACROS_(P, t) do { \
	static const int32_t shape[] = P##_SHAPE; \
	const L(_tensor) *x = &L(_tensors)[t]; \
	size_t n = x->rank > 0 ? (size_t)x->rank : 1; \
	if (P##_INDEX != (t) || P##_DTYPE != x->dtype || \
	    P##_RANK != x->rank || P##_BYTES != x->bytes || \
	    sizeof shape / sizeof shape[0] != n || (x->rank > 0 && \
	    memcmp(shape, x->dims, sizeof shape) != 0)) { \
		printf("error: " #P "'s macros disagree with tensor %d\n", \
		       (int)(t)); \
		return 1; \
	} \
} while (0)

static int check_kernel_macros(void)
{
	int seen[U(_NUM_OPS) + 1] = {0};

	for (int s = 0; s < U(_NUM_STEPS); s++) {
		const L(_step) *st = &L(_steps)[s];
		if (st->op_code >= U(_NUM_OPS)) {
			printf("error: step %d: op_code past the enum\n", s);
			return 1;
		}
		seen[st->op_code] = 1;
		for (int t = 0; t < s; t++) {
			const L(_step) *o = &L(_steps)[t];
			int same = !strcmp(o->op, st->op) &&
				   !strcmp(o->domain, st->domain);
			if (same != (o->op_code == st->op_code)) {
				printf("error: steps %d and %d: op_code\n", t, s);
				return 1;
			}
		}
		if (U(_STEP_REQUANT_COUNT)(st) > 0 &&
		    strcmp(st->op, "QLinearConv") &&
		    strcmp(st->op, "QLinearMatMul") && strcmp(st->op, "QGemm")) {
			printf("error: step %d: requantised\n", s);
			return 1;
		}
	}
	for (int i = 0; i < U(_NUM_OPS); i++)
		if (!seen[i]) {
			printf("error: op value %d names no step\n", i);
			return 1;
		}
#if U(_NUM_INPUTS) > 0
	IO_MACROS(U(_INPUT_0), L(_inputs)[0]);
#endif
#if U(_NUM_OUTPUTS) > 0
	IO_MACROS(U(_OUTPUT_0), L(_outputs)[0]);
#endif
	return 0;
}

int main(void)
{
	const L(_step) *s;
	int n = 0;

	unsigned long total = 0;

	for (int r = 0; r < NREG; r++)
		total += region_size(r);
#if U(_IO_SEPARATE)
	/* A buffer per graph input and output: every tensor with an io slot
	 * gets one of its own size (a slot may go unused). */
	for (int t = 0; t < U(_NUM_TENSORS); t++)
		if (L(_tensors)[t].io >= 0)
			io_buf[L(_tensors)[t].io] =
				malloc(L(_tensors)[t].bytes + 1);
#endif
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
		printf(" %ld %ld %ld %lu %ld %lu %ld %lu", (long)t->first,
		       (long)t->last, (long)t->alias_of,
		       (unsigned long)t->alias_offset, (long)t->inplace_of,
		       (unsigned long)t->numel, (long)t->io,
		       (unsigned long)t->bounded);
		if (t->quant == U(_NO_QUANT))
			printf(" -\n");
		else
			printf(" %ld,%ld,%ld,%lu\n",
			       (long)L(_quants)[t->quant].scale,
			       (long)L(_quants)[t->quant].zero_point,
			       (long)L(_quants)[t->quant].axis,
			       (unsigned long)L(_quants)[t->quant].block);
	}
	printf("io %d", (int)U(_IO_SEPARATE));
	ints(L(_inputs), U(_NUM_INPUTS));
	ints(L(_outputs), U(_NUM_OUTPUTS));
	putchar('\n');
	for (s = L(_steps); s->op; s++, n++) {
		printf("step %d", n);
		hex(s->op);
		hex(s->domain);
		hex(s->name);
		ints(s->inputs, s->ninputs);
		ints(s->outputs, s->noutputs);
		printf(" %d %d\n", s->noop, s->phase);
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
	if (check_kernel_macros())
		return 1;
	return check_overlaps() || check_access() || run_steps();
}
