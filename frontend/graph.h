/*
 * graph.h — the IR: the one contract between frontend, planner and codegen.
 *
 * A Graph is a flat table of tensors and a list of nodes that name tensors
 * by index.  The frontend fills it (load, fold, infer); the planner only
 * reads it (and builds its own Plan beside it); codegen reads both.
 * Nothing downstream ever looks at the protobuf model.
 *
 * Invariants once ar_infer() has succeeded:
 *   - every tensor has dtype != AR_DT_UNDEFINED, rank >= 0 and bytes >= 0,
 *     except tensors nobody reads (an unused optional output) which keep
 *     rank -1 and are left out of the plan;
 *   - nodes[] is in a valid topological order (the file's, after checks);
 *   - each tensor has at most one producer.
 */
#ifndef ARENAC_GRAPH_H
#define ARENAC_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AR_MAX_RANK 16

/* ONNX TensorProto.DataType codes, kept numerically identical. */
typedef enum {
	AR_DT_UNDEFINED = 0,
	AR_DT_FLOAT = 1,
	AR_DT_UINT8 = 2,
	AR_DT_INT8 = 3,
	AR_DT_UINT16 = 4,
	AR_DT_INT16 = 5,
	AR_DT_INT32 = 6,
	AR_DT_INT64 = 7,
	AR_DT_STRING = 8,
	AR_DT_BOOL = 9,
	AR_DT_FLOAT16 = 10,
	AR_DT_DOUBLE = 11,
	AR_DT_UINT32 = 12,
	AR_DT_UINT64 = 13,
	AR_DT_COMPLEX64 = 14,
	AR_DT_COMPLEX128 = 15,
	AR_DT_BFLOAT16 = 16,
	/* Newer than Debian's onnx.proto (1.12): the loader reads the codes
	 * as ints.  Sub-byte types pack their elements into bytes, the first
	 * in the low bits (two INT4 per byte, four INT2). */
	AR_DT_FLOAT8E4M3FN = 17,
	AR_DT_FLOAT8E4M3FNUZ = 18,
	AR_DT_FLOAT8E5M2 = 19,
	AR_DT_FLOAT8E5M2FNUZ = 20,
	AR_DT_UINT4 = 21,
	AR_DT_INT4 = 22,
	AR_DT_FLOAT4E2M1 = 23,
	AR_DT_FLOAT8E8M0 = 24,
	AR_DT_UINT2 = 25,
	AR_DT_INT2 = 26,
	AR_DT_COUNT
} ArDType;

typedef enum {
	AR_TK_INPUT,      /* graph input (not an initializer) */
	AR_TK_OUTPUT,     /* graph output */
	AR_TK_ACTIVATION, /* produced and consumed inside the graph */
	AR_TK_WEIGHT,     /* initializer */
	AR_TK_CONSTANT    /* Constant node output or folded at compile time */
} ArTensorKind;

/* Training-step phase of a node (inference graphs are all FORWARD). */
typedef enum {
	AR_PHASE_FORWARD,
	AR_PHASE_RECOMPUTE,
	AR_PHASE_BACKWARD,
	AR_PHASE_UPDATE
} ArPhase;

/*
 * Where an external initializer's bytes are, as the model says: a file
 * relative to the model's folder (unchecked: whoever opens it checks it),
 * an offset and a length that the loader checked against the shape.
 */
typedef struct ArExternal {
	char *location;
	int64_t offset;
	int64_t length;             /* -1 when the model gives none */
} ArExternal;

/*
 * What makes a quantized tensor's integers numbers: the tensors holding
 * its scale and zero point, as the Q/DQ/QLinear node that produces or
 * reads it names them (ops/shape_quant.c records them during inference).
 * real = (q - zero_point) * scale, one scale per tensor (axis -1), per
 * index of one axis, or per block of `block` consecutive elements along
 * that axis (blocked quantization, opset 21).
 */
typedef struct ArQuant {
	int scale;                  /* tensor id; -1: not quantized */
	int zero_point;             /* tensor id; -1: omitted (zero) */
	int axis;                   /* -1: per tensor */
	int64_t block;              /* elements per scale along axis; 0: none */
} ArQuant;

/* A shape a value_info or graph output declares, dims bound to numbers
 * (-1 unknown): inference warns where its own differs (frontend/infer.c). */
typedef struct ArDeclared {
	int rank;
	int64_t dims[AR_MAX_RANK];
} ArDeclared;

typedef struct ArTensor {
	const char *name;           /* in the graph's strs pool */
	ArDType dtype;
	int rank;                   /* -1 while unknown */
	int64_t dims[AR_MAX_RANK];
	int64_t bytes;              /* unpadded size, -1 while unknown */
	ArTensorKind kind;
	int producer;               /* node index, -1 if none */
	/*
	 * Compile-time value in host order (numel elements of dtype), or NULL.
	 * Present for initializers and Constant values stored in the file and
	 * for small folded results; large folded constants (ConstantOfShape
	 * weights) are known constant by kind alone.
	 */
	void *data;
	/*
	 * A bounded dynamic shape (XLA's bounded dims): bit i is set when
	 * axis i's extent is known only at run time (NonZero, a Slice with
	 * run-time starts, ...).  dims[i] is then its upper bound, which every
	 * pass plans for, and bytes the bound's size; the run-time tensor is
	 * dense (row-major in its real dims) from the same offset.  0 for a
	 * static shape.
	 */
	uint32_t bounded;
	/* Held in host memory, not on the device: a paged optimizer's state
	 * (train/optimizers.c), which the driver pages in for the update; a
	 * device allocator never holds it (planner/caching.c).  Beside
	 * bounded, in what was padding. */
	bool off_device;
	ArExternal *external;       /* bytes outside the model file, or NULL */
	/* The declared shape, or NULL; the tensor owns it.  Out of line, as
	 * few tensors have one: a graph of a million nodes kept 136 MB of
	 * empty declarations in line. */
	ArDeclared *declared;
	/* Scale and zero point when quantized (the first node in topological
	 * order that names them wins); scale and zero_point -1 otherwise.
	 * MatMulInteger/ConvInteger name only a zero point. */
	ArQuant quant;
} ArTensor;

/* ONNX AttributeProto.AttributeType codes. */
typedef enum {
	AR_ATTR_UNDEFINED = 0,
	AR_ATTR_FLOAT = 1,
	AR_ATTR_INT = 2,
	AR_ATTR_STRING = 3,
	AR_ATTR_TENSOR = 4,
	AR_ATTR_GRAPH = 5,
	AR_ATTR_FLOATS = 6,
	AR_ATTR_INTS = 7,
	AR_ATTR_STRINGS = 8
} ArAttrType;

struct ArGraph;

typedef struct ArAttr {
	const char *name;           /* interned in the graph's strs pool */
	ArAttrType type;
	int64_t i;
	float f;
	char *s;                    /* NUL-terminated copy */
	int64_t *ints;
	int nints;
	float *floats;
	int nfloats;
	ArTensor *t;                /* TENSOR: detached tensor with data */
	struct ArGraph *g;          /* GRAPH: subgraph (If/Loop/Scan body) */
} ArAttr;

typedef struct ArNode {
	const char *name;           /* in the graph's strs pool */
	/* Shared by the graph's nodes (its strs pool): set them only with
	 * ar_graph_add_node and ar_node_set_op. */
	const char *op;
	const char *domain;         /* "" for the default ONNX domain */
	int *inputs;                /* tensor ids; -1 for an omitted optional */
	int ninputs;
	/*
	 * Inputs past nexplicit are outer-scope tensors that a subgraph of this
	 * node reads: they must stay live while the node runs.
	 */
	int nexplicit;
	int *outputs;
	int noutputs;
	int nattrs;                 /* (beside noutputs: no padding) */
	ArAttr *attrs;
	ArPhase phase;
	/*
	 * The op table's entry for (domain, op, opset), found once: the
	 * passes ask for it about ten times a node (ar_op_of).  Valid while
	 * def_known and def_opset == opset; ar_node_set_op clears it, so op
	 * and domain change only through it.  (def_known beside phase keeps
	 * the node at 96 bytes.)
	 */
	bool def_known;
	int64_t opset;              /* opset version of the node's domain */
	const struct ArOpDef *def;
	int64_t def_opset;
} ArNode;

typedef struct ArGraph {
	char *name;
	ArTensor *tensors;
	int ntensors, captensors;
	ArNode *nodes;
	int nnodes, capnodes;
	int *inputs;                /* graph inputs that are not initializers */
	int ninputs;
	int *outputs;
	int noutputs;
	int64_t opset;              /* default-domain opset */
	int64_t ir_version;
	struct ArGraph *parent;     /* enclosing graph of a subgraph */
	int depth;                  /* subgraph nesting depth, 0 at top */
	/*
	 * Local tensors of a subgraph that stand for an enclosing graph's
	 * tensor of the same name (outer-scope reads).
	 */
	int *captures;
	int ncaptures;
	/*
	 * --max-seq: attention KV caches are static buffers of this many
	 * positions (ORT's past_present_share_buffer), so a present output
	 * has its past input's shape and may take its bytes; 0 otherwise.
	 */
	int64_t max_seq;
	/* --layout nhwc (frontend/layout.c): the 4-D activations the graph
	 * computes are channels-last; its inputs and outputs keep the
	 * model's layout. */
	bool nhwc;
	/* The names of its tensors (attributes' too), nodes and attributes,
	 * and its nodes' op and domain strings (frontend/strpool.h). */
	struct ArStrPool *strs;
	/*
	 * What the exporter says is trained (scripts/torch_export.py writes
	 * these ModelProto metadata_props): comma-separated initializer
	 * names of the keys arenac.trainable, arenac.frozen, arenac.buffers;
	 * NULL when the model has no such entry.  In strs.
	 */
	const char *meta_trainable, *meta_frozen, *meta_buffers, *meta_ties;
	/*
	 * An If branch that cannot run with the planned shapes while its
	 * condition is known only at run time (inference failed in it, the
	 * other branch inferred): why, in strs; NULL otherwise.  It is left
	 * unplanned and a run that takes it fails (ops/shape_misc.c).
	 */
	const char *cannot_run;
} ArGraph;

/* Errors: a one-line message and an exit code (see cli/arenac.c). */
enum {
	AR_OK = 0,
	AR_EXIT_USAGE = 1,
	AR_EXIT_MODEL = 2,
	AR_EXIT_BUDGET = 3,
	AR_EXIT_INTERNAL = 4
};

typedef struct ArError {
	int code;
	char msg[2048];         /* room for a list, one line per item */
} ArError;

int ar_fail(ArError *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Warnings go through a callback so that library code never prints. */
typedef struct ArDiag {
	void (*warn)(void *ctx, const char *msg);
	void *ctx;
} ArDiag;

void ar_warn(const ArDiag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Element size in bytes; 0 for types without a fixed size (STRING) and for
 * sub-byte types, whose sizes come from ar_dtype_bits and must never be
 * rounded per element (ar_tensor_set_bytes).
 */
size_t ar_dtype_size(ArDType dt);
/* Element size in bits (4 for INT4, 2 for INT2); 0 for STRING. */
int ar_dtype_bits(ArDType dt);
const char *ar_dtype_name(ArDType dt);
const char *ar_kind_name(ArTensorKind k);
const char *ar_phase_name(ArPhase p);

/* Element count of a shaped tensor, -1 on overflow or unknown rank. */
int64_t ar_numel(const ArTensor *t);

/*
 * Sets t->bytes from rank, dims and dtype with overflow checks: packed
 * sub-byte elements take ceil(numel * bits / 8) bytes.  Fails
 * (AR_EXIT_MODEL) for a negative dim, a string tensor or a size past 2^62.
 */
int ar_tensor_set_bytes(ArTensor *t, ArError *err);

/* Graph building (used by the loader and by graph transforms). */
ArGraph *ar_graph_new(const char *name);
void ar_graph_free(ArGraph *g);
/*
 * Removes the nodes and tensors flagged, renumbering the rest in order.
 * Nothing kept may refer to a tensor or node removed.
 */
void ar_graph_drop(ArGraph *g, const bool *drop_node, const bool *drop_tensor);
int ar_graph_find(const ArGraph *g, const char *name);     /* -1 if none */
int ar_graph_add_tensor(ArGraph *g, const char *name);      /* new id */
int ar_graph_add_node(ArGraph *g, const char *name, const char *op,
		      const char *domain);
void ar_node_set_io(ArNode *n, const int *in, int nin, const int *out,
		    int nout);
/* Replaces node n of g's op and domain (and forgets its table entry). */
void ar_node_set_op(ArGraph *g, ArNode *n, const char *op,
		    const char *domain);
/* A new attribute of node n of g, zeroed but for its name and type (the
 * caller sets its value); n->attrs grows by one, whatever allocated it. */
ArAttr *ar_node_add_attr(ArGraph *g, ArNode *n, const char *name,
			 ArAttrType type);
/* A copy of src's graph input and output lists (same tensor ids) into g,
 * with room for one more input (a training step's label). */
void ar_graph_copy_io(ArGraph *g, const ArGraph *src);
/* Copies src's arenac.* metadata strings into g's pool. */
void ar_graph_copy_meta(ArGraph *g, const ArGraph *src);

/* True when a node runs at run time (it is not folded away). */
bool ar_is_step(const ArGraph *g, int node);
/*
 * True when a tensor is computed or fed at run time (not a weight or
 * constant) and has a known size: what a plan puts in the arena.
 */
bool ar_in_arena(const ArGraph *g, int t);

const ArAttr *ar_attr(const ArNode *n, const char *name);
/* "" and "ai.onnx" both name the default ONNX domain. */
bool ar_default_domain(const char *domain);
int64_t ar_attr_int(const ArNode *n, const char *name, int64_t dflt);
float ar_attr_float(const ArNode *n, const char *name, float dflt);
const char *ar_attr_str(const ArNode *n, const char *name, const char *dflt);

/* Checked arithmetic: false on overflow. */
bool ar_mul64(int64_t a, int64_t b, int64_t *out);
bool ar_add64(int64_t a, int64_t b, int64_t *out);

/*
 * Allocation that cannot fail: out of memory, the library calls the
 * handler the program installed (which must not return: the CLI's prints
 * one line and exits 4) and, without one, aborts.  Library code never
 * prints or exits on its own.
 */
typedef void (*ArOomHandler)(size_t bytes);
void ar_set_oom_handler(ArOomHandler h);
void *ar_xmalloc(size_t n);
void *ar_xcalloc(size_t n, size_t sz);
void *ar_xrealloc(void *p, size_t n);
char *ar_xstrdup(const char *s);

#endif
