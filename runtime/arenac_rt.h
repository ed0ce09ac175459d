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
 * ...); ARENAC_RT_BIND copies its tables into the prefix-free types below
 * once, so one runtime library serves every model.  The file that binds
 * must hold the tables: it defines PREFIX_DEFINE_TABLES before including
 * the header.
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
	const art_attr *attrs;
	int nattrs;
	int noop;
	int opset;                  /* of the op's domain */
	/* The workspace the plan gives its kernel (--scratch kernels: the
	 * recurrent layers'), in the arena; ART_NOT_IN_ARENA and 0: none. */
	uint32_t scratch_offset, scratch_bytes;
} art_step;

typedef struct art_model {
	const art_tensor *tensors;
	int ntensors;
	const art_step *steps;
	int nsteps;
	uint64_t arena_size;
	uint64_t weights_size;
	int nio;                    /* caller buffers: graph inputs + outputs */
} art_model;

typedef struct art_error {
	int step;                   /* -1 when not about one step */
	char msg[256];
} art_error;

/*
 * Checks the tables against the two buffers (every tensor inside its
 * buffer, views and in-place outputs where their target is) and runs the
 * steps in order.  0 on success; otherwise -1 with err naming the step.
 * The arena must be aligned to the plan's alignment; its previous content
 * does not matter except for the graph inputs, which the caller has
 * written at their offsets.
 */
int art_run(const art_model *m, void *arena, size_t arena_bytes,
	    const void *weights, size_t weights_bytes, art_error *err);
/* The same for a plan of arenac --io separate: io[k] is the caller's
 * buffer of the tensor whose io is k (graph inputs, then outputs). */
int art_run_io(const art_model *m, void *arena, size_t arena_bytes,
	       const void *weights, size_t weights_bytes, void *const *io,
	       art_error *err);

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
 * Copies one generated header's tables (prefix lo, macro prefix UP) into
 * runtime tables and defines `static const art_model *lo_rt_model(void)`.
 * Use once per model, after including its header.
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

#define ARENAC_RT_BIND(lo, UP) ART_BIND_(lo, UP)
#define ART_BIND_(lo, UP) \
static art_tensor lo##_rt_tensors[UP##_NUM_TENSORS + 1]; \
static art_attr lo##_rt_attrs[sizeof lo##_attrs / sizeof lo##_attrs[0]]; \
static art_step lo##_rt_steps[UP##_NUM_STEPS + 1]; \
static const art_model *lo##_rt_model(void) \
{ \
	static art_model m; \
	for (int i = 0; i < UP##_NUM_TENSORS; i++) \
		ART_COPY_TENSOR(&lo##_rt_tensors[i], &lo##_tensors[i]); \
	for (size_t i = 0; i < sizeof lo##_attrs / sizeof lo##_attrs[0]; i++) \
		ART_COPY_ATTR(&lo##_rt_attrs[i], &lo##_attrs[i]); \
	for (int i = 0; i < UP##_NUM_STEPS; i++) { \
		const lo##_step *s = &lo##_steps[i]; \
		art_step *d = &lo##_rt_steps[i]; \
		d->op = s->op; d->domain = s->domain; d->name = s->name; \
		d->inputs = s->inputs; d->ninputs = s->ninputs; \
		d->outputs = s->outputs; d->noutputs = s->noutputs; \
		d->attrs = lo##_rt_attrs + (s->attrs - lo##_attrs); \
		d->nattrs = s->nattrs; d->noop = s->noop; d->opset = s->opset; \
		d->scratch_offset = UP##_STEP_SCRATCH_OFFSET(s); \
		d->scratch_bytes = UP##_STEP_SCRATCH_BYTES(s); \
	} \
	m.tensors = lo##_rt_tensors; m.ntensors = UP##_NUM_TENSORS; \
	m.steps = lo##_rt_steps; m.nsteps = UP##_NUM_STEPS; \
	m.arena_size = UP##_ARENA_SIZE; m.weights_size = UP##_WEIGHTS_SIZE; \
	m.nio = UP##_NUM_INPUTS + UP##_NUM_OUTPUTS; \
	return &m; \
}

#endif
