/*
 * arenac_rt.h — a reference runtime that executes an arenac plan.
 *
 * The runtime exists to prove a plan by running it: it takes the tables of
 * a header that arenac generated, the weights blob that `arenac --weights`
 * wrote, and one arena the caller provides, and runs the step table with
 * plain C kernels (every numeric element type for elementwise, reduction
 * and data-movement ops; float32 for convolutions, normalisations and
 * matrix products; int8 / uint8 for the quantized ops; the list is
 * art_has_kernel's).  Every tensor lives where the plan put it; views,
 * in-place outputs and elided concats are honoured exactly, so a wrong
 * offset shows up as a wrong number.  The runtime never allocates.
 *
 * The generated header's types carry the model's prefix (lenet_tensor,
 * ...); ARENAC_RT_BIND gives the runtime the header's tables as they are
 * with functions that decode one row into the prefix-free types below, so
 * one runtime library serves every model and the tables are never copied.
 * The file that binds must hold the tables: it defines
 * PREFIX_DEFINE_TABLES before including the header.
 */
#ifndef ARENAC_RT_H
#define ARENAC_RT_H

#include <stddef.h>
#include <stdint.h>

#define ART_NOT_IN_ARENA 0xFFFFFFFFu
#define ART_MAX_RANK 8

/* Element types, numbered as in the generated header (ONNX numbering). */
enum {
	ART_DT_FLOAT = 1, ART_DT_UINT8 = 2, ART_DT_INT8 = 3, ART_DT_UINT16 = 4,
	ART_DT_INT16 = 5, ART_DT_INT32 = 6, ART_DT_INT64 = 7,
	ART_DT_STRING = 8, ART_DT_BOOL = 9, ART_DT_FLOAT16 = 10,
	ART_DT_DOUBLE = 11, ART_DT_UINT32 = 12, ART_DT_UINT64 = 13,
	ART_DT_BFLOAT16 = 16
};
enum {
	ART_KIND_INPUT, ART_KIND_OUTPUT, ART_KIND_ACTIVATION, ART_KIND_WEIGHT,
	ART_KIND_CONSTANT
};
enum { ART_ATTR_FLOAT = 1, ART_ATTR_INT = 2, ART_ATTR_STRING = 3,
       ART_ATTR_TENSOR = 4, ART_ATTR_FLOATS = 6, ART_ATTR_INTS = 7,
       ART_ATTR_STRINGS = 8 };

/* One row of a tensor table, decoded (art_model.tensor). */
typedef struct art_tensor {
	const char *name;
	int dtype, kind, rank;
	const int32_t *dims;
	uint32_t bytes;
	uint32_t offset;            /* in the arena, or ART_NOT_IN_ARENA */
	int32_t first, last;
	int32_t alias_of;
	uint32_t alias_offset;
	int32_t inplace_of;
	uint32_t weights_offset;    /* in the weights blob, or ART_NOT_IN_ARENA */
	int32_t io;                 /* --io separate: the caller's io[io], or -1 */
	int region;                 /* the arena offset is in (--memory), or 0 */
} art_tensor;

typedef struct art_attr {
	const char *name;
	int type, dtype, count;
	const int64_t *ints;
	const float *floats;
	const char *const *strings;
} art_attr;

typedef struct art_step {
	const char *op;
	const char *domain;         /* "" or "ai.onnx" for the default */
	const char *name;
	const int32_t *inputs;
	int ninputs;
	const int32_t *outputs;
	int noutputs;
	const void *attrs;          /* its first row in the model's attribute
				       table (art_model.attr decodes them) */
	int nattrs;
	int noop;
	int opset;                  /* of the op's domain */
	/* The workspace the plan gives it, in the arena: its kernel's (the
	 * recurrent layers'), or the region its subgraphs run in (If);
	 * ART_NOT_IN_ARENA and 0: none. */
	uint32_t scratch_offset, scratch_bytes;
	const int32_t *subgraphs;   /* the ids of the subgraphs it runs */
	int nsubgraphs;
	int scratch_region;         /* the arena scratch_offset is in, or 0 */
} art_step;

/* A graph's tables: the model's, or a planned subgraph's (offsets
 * absolute: its tensors live in its step's workspace, its captures where
 * the enclosing graph has them). */
typedef struct art_graph {
	const void *tensors;        /* rows of the model's tensor type */
	int ntensors;
	const void *steps;          /* rows of its step type */
	int nsteps;
	const int32_t *inputs, *outputs;
	int ninputs, noutputs;
} art_graph;

typedef struct art_subgraph {
	const char *attribute;      /* then_branch, else_branch or body */
	int parent;                 /* the subgraph whose step runs it; -1: the
				       model graph */
	int step;                   /* that step, in the parent's steps */
	int planned;                /* 0: no tables (never runs, or cannot) */
	uint32_t arena_bytes;       /* at its step's scratch_offset */
	art_graph g;
} art_subgraph;

/* A memory of a plan of arenac --memory, as the header's region table
 * gives it: its arena's bytes, the first weights_bytes of which hold the
 * weights blob (--weights-in), 0 elsewhere. */
typedef struct art_region {
	const char *name;
	uint32_t bytes, weights_bytes;
} art_region;

/* One arena the caller provides: its start and its bytes. */
typedef struct art_arena {
	void *base;
	size_t bytes;
} art_arena;
#define ART_ARENA(array) {(array), sizeof (array)}

/*
 * A model: the generated header's own tables, used where they are (const,
 * in flash on a microcontroller), and the functions that decode one row
 * of them, which ARENAC_RT_BIND writes for the header's types.
 */
typedef struct art_model {
	art_graph g;
	uint64_t arena_size;
	uint64_t weights_size;
	int nio;                    /* caller buffers: graph inputs + outputs */
	const void *subgraphs;      /* rows of its subgraph type, or NULL */
	int nsubgraphs;
	void (*tensor)(const void *table, int i, art_tensor *out);
	void (*step)(const void *table, int i, art_step *out);
	void (*attr)(const void *table, int i, art_attr *out);
	void (*subgraph)(const void *table, int i, art_subgraph *out);
	/* A plan of several memories (arenac --memory): one arena each,
	 * region r's described by region(regions, r, ...); 0 and NULL for
	 * a plan of one arena (arena_size). */
	int nregions;
	const void *regions;
	void (*region)(const void *table, int r, art_region *out);
} art_model;

/*
 * An error as the runtime reports it: a code and a small fixed record,
 * never a formatted text, so that the runtime core links no formatter
 * and carries no message strings (issue 29).  The code indexes the
 * runtime's message table (runtime/errors.def, one static template per
 * code); arg holds the template's details in order: numbers, or strings
 * the tables hold (a tensor's or step's name, an attribute's value).
 * where[] is the step that failed and those whose subgraphs it ran in,
 * outermost first.  art_error_message formats it on a host.
 */
#define ART_ERR_ARGS 4
#define ART_ERR_DEPTH 4
typedef union art_err_arg {
	long long i;
	unsigned long long u;
	double g;
	const char *s;
} art_err_arg;

typedef struct art_error {
	int code;                   /* 0: no error */
	int step;                   /* -1 when not about one step */
	int depth;                  /* rows of where[] */
	struct {
		int step;
		const char *op, *name;
	} where[ART_ERR_DEPTH];
	art_err_arg arg[ART_ERR_ARGS];
} art_error;

/*
 * The message of *e into buf ("step K (OP 'NAME'): what", as the tests
 * and tools print it), NUL-terminated and cut at size; the characters
 * written.  A host-side helper (runtime/format.c): a firmware that does
 * not call it links no formatter and no message table.
 */
int art_error_message(const art_error *e, char *buf, size_t size);

/*
 * Checks the tables against the two buffers (every tensor inside its
 * buffer, views and in-place outputs where their target is, every planned
 * subgraph inside its step's workspace) and runs the steps in order.  0 on
 * success; otherwise -1 with err's record naming the step (err->step:
 * the model graph's; where[]: those of the subgraphs it was running too)
 * and what is wrong (its code and details).  The arena must
 * be aligned to the plan's alignment; its previous content does not matter
 * except for the graph inputs, which the caller has written at their
 * offsets.
 */
int art_run(const art_model *m, void *arena, size_t arena_bytes,
	    const void *weights, size_t weights_bytes, art_error *err);
/* The same for a plan of arenac --io separate: io[k] is the caller's
 * buffer of the tensor whose io is k (graph inputs, then outputs). */
int art_run_io(const art_model *m, void *arena, size_t arena_bytes,
	       const void *weights, size_t weights_bytes, void *const *io,
	       art_error *err);

/*
 * The same for a plan of several memories (arenac --memory NAME:SIZE
 * ...): arenas[r] is the caller's arena of region r (the header's
 * PREFIX_REGION_NAME; its arrays PREFIX_arena_name), n of them, one per
 * region, each at least the region's bytes; a tensor's address is its
 * region's base plus its offset.  With --weights-in the weights blob may
 * be the first PREFIX_WEIGHTS_RESERVED bytes of its region's arena
 * (weights = that arena's base); a blob that overlaps an arena anywhere
 * else is an error.  Arenas that do not match the plan (their number,
 * one too small, two overlapping) fail before any step runs.  art_run
 * and art_run_io are this with one arena, and refuse a plan of several.
 */
int art_run_arenas(const art_model *m, const art_arena *arenas, int n,
		   const void *weights, size_t weights_bytes, void *const *io,
		   art_error *err);

/* The model graph's tensor i and step i, decoded. */
art_tensor art_model_tensor(const art_model *m, int i);
art_step art_model_step(const art_model *m, int i);

/*
 * The kernel table: 1 when art_run has a kernel for op in domain ("" and
 * "ai.onnx" both name the default domain), else 0.  art_kernel_op walks
 * the table: entry i's op and domain, NULL past the last.
 */
int art_has_kernel(const char *domain, const char *op);
const char *art_kernel_op(int i, const char **domain);

/* Bytes of one element of an ONNX dtype the kernels handle, else 0. */
size_t art_dtype_size(int dtype);

/*
 * Tables written in the runtime's own types (art_tensor rows, art_step
 * rows whose attrs point at art_attr rows; no subgraphs), as a test
 * builds them by hand: art_plain_model fills m's decoders and tables.
 */
void art_plain_model(art_model *m, const art_tensor *tensors, int ntensors,
		     const art_step *steps, int nsteps);

/*
 * ART_IS_SET(M): 1 when the macro M is defined as 1, else 0, usable in an
 * expression and pasted into a name: the preprocessor trick of Linux's
 * IS_ENABLED (include/linux/kconfig.h).
 */
#define ART_CAT_(a, b) a##b
#define ART_CAT(a, b) ART_CAT_(a, b)
#define ART_SET_1 0,
#define ART_IS_SET(m) ART_IS_SET_(m)
#define ART_IS_SET_(v) ART_IS_SET__(ART_CAT(ART_SET_, v))
#define ART_IS_SET__(junk_or_0) ART_IS_SET___(junk_or_0 1, 0, ~)
#define ART_IS_SET___(ignored, v, ...) v

/*
 * ARENAC_RT_BIND(lo, UP): one generated header's tables (prefix lo, macro
 * prefix UP) as an art_model, `static const art_model *lo_rt_model(void)`.
 * Nothing is copied: the model points at the header's const tables and
 * carries the functions that decode their rows, so the tables stay in
 * flash and the binding costs no RAM.  Use once per model, in the file
 * that defines the tables (PREFIX_DEFINE_TABLES before the include).  A
 * header of several memories (arenac --memory, PREFIX_HAS_REGIONS) binds
 * the same, with its region table; art_run_arenas runs it.
 */
#define ART_COPY_TENSOR(d, s) do { \
	(d)->name = (s)->name; (d)->dtype = (s)->dtype; \
	(d)->kind = (s)->kind; (d)->rank = (s)->rank; (d)->dims = (s)->dims; \
	(d)->bytes = (s)->bytes; (d)->offset = (s)->offset; \
	(d)->first = (s)->first; (d)->last = (s)->last; \
	(d)->alias_of = (s)->alias_of; \
	(d)->alias_offset = (s)->alias_offset; \
	(d)->inplace_of = (s)->inplace_of; \
	(d)->weights_offset = (s)->weights_offset; (d)->io = (s)->io; \
} while (0)

#define ART_COPY_ATTR(d, s) do { \
	(d)->name = (s)->name; (d)->type = (s)->type; \
	(d)->dtype = (s)->dtype; (d)->count = (s)->count; \
	(d)->ints = (s)->ints; (d)->floats = (s)->floats; \
	(d)->strings = (s)->strings; \
} while (0)

/* A step's subgraph ids: in the step type of a header with workspaces. */
#define ART_STEP_SUBS_0(d, s) ((d)->subgraphs = 0, (d)->nsubgraphs = 0)
#define ART_STEP_SUBS_1(d, s) \
	((d)->subgraphs = (s)->subgraphs, (d)->nsubgraphs = (s)->nsubgraphs)

/* The subgraph table's decoder, when the header has one. */
#define ART_BIND_SUBS_0(lo, UP)
#define ART_BIND_SUBS_1(lo, UP) \
static void lo##_rt_subgraph(const void *table, int i, art_subgraph *d) \
{ \
	const lo##_subgraph *s = (const lo##_subgraph *)table + i; \
	d->attribute = s->attribute; d->parent = s->parent; \
	d->step = s->step; d->planned = s->planned; \
	d->arena_bytes = s->arena_bytes; \
	d->g.tensors = s->tensors; d->g.ntensors = s->ntensors; \
	d->g.steps = s->steps; d->g.nsteps = s->nsteps; \
	d->g.inputs = s->inputs; d->g.ninputs = s->ninputs; \
	d->g.outputs = s->outputs; d->g.noutputs = s->noutputs; \
}
#define ART_SUBS_0(lo, UP) 0, 0
#define ART_SUBS_1(lo, UP) lo##_subgraphs, UP##_NUM_SUBGRAPHS
#define ART_SUB_FN_0(lo) 0
#define ART_SUB_FN_1(lo) lo##_rt_subgraph

/* A header of several memories (PREFIX_HAS_REGIONS): a region column in
 * its tensors and steps, the region table and its decoder; no one
 * PREFIX_ARENA_SIZE when there is more than one. */
#define ART_TENSOR_REGION_0(d, s) ((d)->region = 0)
#define ART_TENSOR_REGION_1(d, s) ((d)->region = (s)->region)
#define ART_STEP_REGION_0(UP, d, s) ((d)->scratch_region = 0)
#define ART_STEP_REGION_1(UP, d, s) \
	((d)->scratch_region = UP##_STEP_SCRATCH_REGION(s))
#define ART_BIND_REGS_0(lo, UP)
#define ART_BIND_REGS_1(lo, UP) \
static void lo##_rt_region(const void *table, int r, art_region *d) \
{ \
	const lo##_region *s = (const lo##_region *)table + r; \
	d->name = s->name; d->bytes = s->size; \
	d->weights_bytes = s->weights_bytes; \
}
#define ART_ARENA_SIZE_0(UP) UP##_ARENA_SIZE
#define ART_ARENA_SIZE_1(UP) 0
#define ART_REGS_0(lo, UP) 0, 0, 0
#define ART_REGS_1(lo, UP) UP##_NUM_REGIONS, lo##_regions, lo##_rt_region

#define ART_HAS(UP, what) ART_IS_SET(UP##_HAS_##what)

#define ARENAC_RT_BIND(lo, UP) ART_BIND_(lo, UP)
#define ART_BIND_(lo, UP) \
static void lo##_rt_tensor(const void *table, int i, art_tensor *d) \
{ \
	const lo##_tensor *s = (const lo##_tensor *)table + i; \
	ART_COPY_TENSOR(d, s); \
	ART_CAT(ART_TENSOR_REGION_, ART_HAS(UP, REGIONS))(d, s); \
} \
static void lo##_rt_attr(const void *table, int i, art_attr *d) \
{ \
	const lo##_attr *s = (const lo##_attr *)table + i; \
	ART_COPY_ATTR(d, s); \
} \
static void lo##_rt_step(const void *table, int i, art_step *d) \
{ \
	const lo##_step *s = (const lo##_step *)table + i; \
	d->op = s->op; d->domain = s->domain; d->name = s->name; \
	d->inputs = s->inputs; d->ninputs = s->ninputs; \
	d->outputs = s->outputs; d->noutputs = s->noutputs; \
	d->attrs = s->attrs; d->nattrs = s->nattrs; d->noop = s->noop; \
	d->opset = s->opset; \
	d->scratch_offset = UP##_STEP_SCRATCH_OFFSET(s); \
	d->scratch_bytes = UP##_STEP_SCRATCH_BYTES(s); \
	ART_CAT(ART_STEP_SUBS_, ART_HAS(UP, SCRATCH))(d, s); \
	ART_CAT(ART_STEP_REGION_, ART_HAS(UP, REGIONS))(UP, d, s); \
} \
ART_CAT(ART_BIND_SUBS_, ART_HAS(UP, SUBGRAPHS))(lo, UP) \
ART_CAT(ART_BIND_REGS_, ART_HAS(UP, REGIONS))(lo, UP) \
static const art_model lo##_rt_model_ = { \
	{lo##_tensors, UP##_NUM_TENSORS, lo##_steps, UP##_NUM_STEPS, \
	 lo##_inputs, lo##_outputs, UP##_NUM_INPUTS, UP##_NUM_OUTPUTS}, \
	ART_CAT(ART_ARENA_SIZE_, ART_HAS(UP, REGIONS))(UP), \
	UP##_WEIGHTS_SIZE, UP##_NUM_INPUTS + UP##_NUM_OUTPUTS, \
	ART_CAT(ART_SUBS_, ART_HAS(UP, SUBGRAPHS))(lo, UP), \
	lo##_rt_tensor, lo##_rt_step, lo##_rt_attr, \
	ART_CAT(ART_SUB_FN_, ART_HAS(UP, SUBGRAPHS))(lo), \
	ART_CAT(ART_REGS_, ART_HAS(UP, REGIONS))(lo, UP)}; \
static const art_model *lo##_rt_model(void) \
{ \
	return &lo##_rt_model_; \
}

#endif
