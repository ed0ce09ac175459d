/*
 * ops.h — the op registry: everything arenac knows about one op, in one
 * table entry (ops/table.c).
 *
 * In the spirit of ONNX's OpSchema and TVM's op attributes, an entry per
 * (domain, op, first opset) holds how many inputs and outputs the op
 * takes, its shape function, its constant folder, how its output may share
 * bytes with its inputs, its gradient rule, its FLOP count, its role in
 * --fuse preact and whether the reference runtime has a kernel for it.
 * Every pass asks this table; none keeps an op list of its own.  Adding an
 * op is one entry, the functions it names, and a test.
 *
 * Invariants (tests/test_ops.c walks the table and checks each):
 *   - entries are sorted by (domain, op, since), strictly; lookups bsearch;
 *   - 0 <= in_min <= in_max, 0 <= out_min <= out_max;
 *   - a view (unless one only in some mode) or a concat has no FLOPs, and
 *     no op but an in-place one has in-place inputs; an in-place op names
 *     at least one input, and only inputs it has;
 *   - a gradient rule names only inputs and outputs the op has (or that
 *     a training step materialises: train_outputs), and says what a
 *     gradient reads only for inputs that can get one;
 *   - an op with training outputs, or a loss, has a gradient rule;
 *   - a KV cache names an output past 0 and an input the op has;
 *   - an op refused on purpose (refuse) has no shape function;
 *   - a control-flow op (control) is never folded and shares no bytes;
 *   - an attribute default is an INT, FLOAT, STRING or INTS, a list's
 *     values per spatial axis or from an input the op has; requantisation
 *     scales are inputs the op has.
 */
#ifndef ARENAC_OPS_H
#define ARENAC_OPS_H

#include "graph.h"

struct InferCtx;

/* Any number of inputs or outputs (ONNX's variadic). */
#define AR_VARIADIC 0x7fffffff
/* Bit j of a mask: input (or output) j.  Bits past 31 are not named. */
#define AR_BIT(j) ((j) < 32 ? 1u << (j) : 0u)
#define AR_ALL_INPUTS 0xffffffffu

/*
 * How an op's output may share bytes with its inputs:
 *   NONE     its own buffer;
 *   VIEW     output 0 is input 0's bytes under another shape (Reshape,
 *            Flatten, ...): planner/views.c makes it alias_of input 0;
 *   INPLACE  elementwise: output 0 may overwrite an input of its size that
 *            dies at this step, among those in `inplace` (planner/inplace.c);
 *   CONCAT   each input may be written straight into its slice of the
 *            output (planner/concat.c).
 */
typedef enum {
	AR_ALIAS_NONE,
	AR_ALIAS_VIEW,
	AR_ALIAS_INPLACE,
	AR_ALIAS_CONCAT
} ArAliasClass;

/*
 * A KV cache an attention op keeps (ORT's past and present): output `out`
 * is input `in` with this step's keys or values written in along axis
 * `seq`, the cache's sequence axis.  With a static cache (--max-seq N:
 * the loader makes that axis N, the shape function gives the output the
 * input's shape) the output is written over the input's bytes
 * (planner/kvcache.c), so decoding does not move the cache between
 * tokens.  This is besides the op's alias class, which is about output 0.
 */
typedef struct ArKvCache {
	int out, in, seq;
} ArKvCache;

#define AR_MAX_KV 2

/*
 * What an op's gradient step reads and produces (train/train.c builds the
 * step, named op + AR_GRAD_SUFFIX).  The planner does not compute
 * gradients; it needs only which forward tensors the step reads (they must
 * be resident or recomputed by then) and which inputs get a gradient.
 *
 * What a step reads depends on which inputs need a gradient: reads[j] is
 * what the gradient of input j reads, so a product by a constant (a scale)
 * keeps nothing, since the constant needs no gradient and its partner is
 * read only for it.  The step reads the union over the inputs that get a
 * gradient, in input order, then the outputs, then the gradients flowing
 * in (those of dout, in output order).  Outputs include the ones a
 * training step materialises (Dropout's mask, LayerNormalization's mean
 * and inverse standard deviation, BatchNormalization's batch statistics:
 * ArOpDef.train_outputs).  Inputs past AR_GRAD_NAMED (variadic Sum and
 * Concat) read nothing.
 */
#define AR_GRAD_NAMED 5

typedef struct ArGradReads {
	uint32_t in, out;
} ArGradReads;

typedef struct ArGradRule {
	uint32_t diff;      /* inputs that can receive a gradient */
	/* Outputs whose gradient flows in (Split: every piece); 0 means
	 * output 0. */
	uint32_t dout;
	ArGradReads reads[AR_GRAD_NAMED];
	/* Inputs of the gradient step its first output may overwrite, as
	 * for AR_ALIAS_INPLACE (a gradient computed element by element). */
	uint32_t inplace;
	/* Backward FLOPs in forward passes of the op: 2 for a bilinear op
	 * (one product per operand gradient); 0 counts as 1. */
	int cost;
	/* The backward also recomputes half a forward pass (FlashAttention:
	 * the scores, one of its two products). */
	bool recompute;
	/* The gradient step carries the forward node's attributes (the
	 * kernel its workspace is the workspace of). */
	bool attrs;
} ArGradRule;

/* Whether the gradient of input j of an op with rule r reads nothing but
 * inputs that get no gradient (indices, a condition): dY moved, gathered,
 * summed or negated.  A constant folded by such an op from a parameter
 * (a Transpose of a weight) is that parameter in another layout. */
bool ar_grad_moves(const ArGradRule *r, int j);
/* Whether torch computes node n of g as a view of its input 0: a slice
 * (Slice; torch's basic indexing, narrow, split, chunk) or a select
 * (Gather at a scalar constant index: x[:, 0]).  Autograd saving such a
 * view holds its input's whole storage, not the view's bytes. */
bool ar_op_torch_view(const ArGraph *g, const ArNode *n);
/* What the step of rule r reads when the inputs in mask `need` get a
 * gradient. */
ArGradReads ar_grad_reads(const ArGradRule *r, uint32_t need);

#define AR_GRAD_SUFFIX "Grad"
/* The domain of the ops a training step adds (gradients, sums, updates). */
#define AR_TRAIN_DOMAIN "arenac.training"
/* The domain of the collectives a per-device graph holds (AllGather,
 * ReduceScatter, ...: ops/shape_parallel.c, train/parallel.c). */
#define AR_PARALLEL_DOMAIN "arenac.parallel"

/*
 * How a control-flow op runs the graphs in its attributes (the planner's
 * subplan.c plans each as a graph of its own, in a region of the arena
 * that lives while the op's step runs):
 *   BRANCHES  one of them runs, once (If): they share the region, sized
 *             for the largest, and their outputs are the node's outputs;
 *   LOOP      the body runs once per iteration (Loop): its inputs
 *             (iteration, condition, carried values) and outputs
 *             (condition, carried values, scan slices) are in the region,
 *             and the runtime copies the carried values between
 *             iterations;
 *   SCAN      the same for Scan, whose body reads (states, scan input
 *             slices) and writes (states, scan output slices).
 */
typedef enum {
	AR_CONTROL_NONE,
	AR_CONTROL_BRANCHES,
	AR_CONTROL_LOOP,
	AR_CONTROL_SCAN
} ArControl;

/* Sets dtype, rank and dims of each output of one node (infer_ops.h). */
typedef int (*ArShapeFn)(struct InferCtx *c, ArNode *n);
/* Computes output j of a node whose inputs are constants with values into
 * out->data (allocated and zeroed), arg being the entry's fold_arg; false
 * when it cannot (fold_eval.c). */
typedef bool (*ArFoldFn)(struct InferCtx *c, ArNode *n, int j, ArTensor *out,
			 int arg);
/* FLOPs of one node from its shapes (flops.c). */
typedef int64_t (*ArFlopsFn)(const ArGraph *g, const ArNode *n);
/* Bytes of workspace one node's kernel needs besides its operands
 * (scratch.c); 0 when it needs none for these shapes. */
typedef int64_t (*ArScratchFn)(const ArGraph *g, const ArNode *n);
/* For a view op that is one only sometimes: whether this node is. */
typedef bool (*ArViewWhen)(const ArGraph *g, const ArNode *n, bool training);

enum {
	AR_OP_NOFOLD = 1,       /* outputs never constant (control flow,
				   random values, optimizer updates; Q/DQ,
				   so that quantized weights stay quantized
				   and are dequantized at run time) */
	AR_OP_SHAPEONLY = 2,    /* outputs constant whatever the inputs'
				   values (Shape, Size) */
	AR_OP_LOSS = 4,         /* a loss: a model whose first output it
				   computes brings its own loss to --train */
	AR_OP_VALUE = 8,        /* its output is a value the model states
				   (Constant; ConstantOfShape, a fill of a
				   stated shape): of floats, a weight */
	AR_OP_RECOMPUTED = 16   /* its outputs never stay for the backward
				   pass: a backward step that reads one
				   gets it recomputed (a sequence-parallel
				   all-gather, gathered again rather than
				   stored, as Megatron-LM does) */
};

/*
 * The outputs a training step materialises for the op's backward pass
 * (train_outputs.c): Dropout's mask, LayerNormalization's per-row mean and
 * inverse standard deviation, BatchNormalization's batch mean and inverse
 * standard deviation.  attrs is the model's node, with its attributes;
 * node `node` of g, the training model's copy of it (tensors with the
 * model's ids), gets the outputs (new tensors where the model has none).
 */
typedef int (*ArTrainOutputs)(const ArNode *attrs, ArGraph *g, int node,
			      ArError *err);

/*
 * An attribute's ONNX default, for a node that leaves it out (ONNX's
 * Operators.md and Changelog.md, the op's schema): the header writes it
 * (codegen/header_ops.c), so that a kernel library finds every attribute
 * its kernel reads.  A default from opset `since` on replaces an earlier
 * one of the same name (Softmax's axis: 1, then -1 from 13).  An INTS
 * default depends on the shapes: `per_axis` values of v per spatial axis
 * of input 0 (rank - 2: strides 1, pads 2 x 0), or, with `from` > 0,
 * the dims past axis 1 of input `from` (Conv's kernel_shape, W's).  A
 * default is left out when the node gives `unless` a value other than
 * NOTSET (pads, when auto_pad computes them).
 */
typedef struct ArAttrDefault {
	const char *name;       /* NULL ends a list */
	ArAttrType type;        /* INT, FLOAT, STRING or INTS */
	double v;               /* INT, FLOAT; INTS: each value */
	const char *s;          /* STRING */
	int per_axis, from;     /* INTS: see above */
	const char *unless;
	int since;
} ArAttrDefault;

/* The defaults of node n's op that n leaves out, as attributes, in the
 * list's order (attr_defaults.c): *out malloc'd (NULL when none); returns
 * the count.  Shape-dependent ones are
 * left out while their shapes are unknown.  Each default's s and ints
 * are malloc'd, the names the table's. */
int ar_attr_defaults(const ArGraph *g, const ArNode *n, ArAttr **out);

/*
 * Where an int8 op's requantisation reads its scales (inputs): the
 * input's (x), the weight's (w, one per output channel or per tensor)
 * and the output's (y); codegen/header_quant.c computes from them the
 * multiplier and shift TFLite Micro and CMSIS-NN use.  All 0: none.
 * add: an addition's (x and w the two inputs'), three pairs as TFLite
 * Micro's CalculateOpDataAdd gives them (requant.c).
 */
typedef struct ArRequant {
	int x, w, y;
	bool add;
} ArRequant;

/* TFLite Micro's left shift of an 8-bit addition's inputs
 * (add_common.cc: 20, 15 for int16). */
#define AR_REQUANT_ADD_SHIFT 20
/* requant.c: TFLite Micro's QuantizeMultiplier, a Q31 multiplier and a
 * power-of-two shift (> 0: left) with m ~ mult * 2^(shift - 31). */
void ar_quantize_multiplier(double m, int32_t *mult, int *shift);
/* Node n's multiplier and shift per weight scale (*mult and *shift
 * malloc'd); 0, both NULL, when its op has none, a scale is no
 * constant, or an effective scale is not finite and non-negative. */
int ar_requant(const ArGraph *g, const ArNode *n, int32_t **mult,
	       int32_t **shift);
/* A per-tensor quantised tensor's scale and zero point (0 when it has
 * none) when both are constants; false otherwise. */
bool ar_quant_scalar(const ArGraph *g, const ArTensor *t, double *scale,
		     int64_t *zero_point);

/*
 * How an op of the default domain reads a channels-last 4-D operand
 * (--layout nhwc, frontend/layout.c), as onnxruntime's transpose
 * optimizer sorts ops (onnxruntime/core/optimizer/transpose_optimization/
 * onnx_transpose_optimization.cc, the handler map): FIXED ops read the
 * axes as the model wrote them, so a channels-last operand is transposed
 * back first (an op with a channels-last variant, in AR_NHWC_DOMAIN, is
 * rewritten to it instead); ELEMENTWISE ones whatever the order, when
 * their other operands are scalars (Relu, Clip, Q/DQ per tensor);
 * BROADCAST ones when the other operands are channels-last too or
 * constants that can be permuted (Add, Mul); AXIS ones (Concat) when
 * every operand is channels-last, their `axis` attribute remapped;
 * PER_AXIS ones (Resize) when input 0 is, their other inputs constant
 * lists of one value (or two: a start and an end) per axis, permuted,
 * and they have no `axes` attribute.
 */
typedef enum {
	AR_LAYOUT_FIXED,
	AR_LAYOUT_ELEMENTWISE,
	AR_LAYOUT_BROADCAST,
	AR_LAYOUT_AXIS,
	AR_LAYOUT_PER_AXIS
} ArLayout;

/* The channels-last variants of the layout-sensitive ops keep their ONNX
 * names in onnxruntime's internal domain (kMSInternalNHWCDomain,
 * onnxruntime/core/graph/constants.h): input 0 and output 0 are
 * [N, H, W, C], the other operands as the ONNX op's but the filter
 * (ArOpDef.filter), which is in TFLite's layout (ar_filter_perm). */
#define AR_NHWC_DOMAIN "com.ms.internal.nhwc"
/* dims (rank >= 3) from [N, C, spatial...] to [N, spatial..., C], or back
 * (to_last false), in place. */
void ar_dims_channels_last(int64_t *dims, int rank, bool to_last);
/*
 * The Transpose perm from an ONNX filter [M, C/group, kH, kW] of a
 * convolution with `group` to the layout TFLite Micro's and CMSIS-NN's
 * kernels read: OHWI [M, kH, kW, C/group] (tensorflow/lite/kernels/
 * internal/reference/conv.h, Conv, which tflite-micro's kernels/conv.cc
 * runs: output depth MatchingDim(filter_shape, 0, output_shape, 3), the
 * filter's height, width and input depth its dims 1, 2, 3; CMSIS-NN
 * Include/arm_nnfunctions.h, arm_convolve_s8: filter [C_OUT, H, W, C_IN]),
 * or for a depthwise one (group > 1, one input channel per group, M a
 * multiple of it: TFLite's depth_multiplier) [1, kH, kW, M] (reference/
 * depthwiseconv_float.h, DepthwiseConv, behind depthwise_conv.cc: output
 * depth MatchingDim(filter_shape, 3, output_shape, 3);
 * arm_depthwise_conv_s8: "Filter tensor dimensions. Format: [1, H, W,
 * C_OUT]").
 */
const int *ar_filter_perm(const int64_t *onnx_dims, int64_t group);
/* The ONNX dims of a filter in that layout, in place. */
void ar_filter_dims_onnx(int64_t *dims, int64_t group);
/* Where axis (-1: none) of a 4-D Transpose's input is in its output. */
int ar_perm_axis(const int *perm, int axis);

typedef struct ArOpDef {
	const char *domain;     /* NULL: the default ONNX domain */
	const char *name;
	int since;              /* first opset version the entry covers */
	int in_min, in_max;     /* explicit inputs */
	int out_min, out_max;
	unsigned flags;         /* AR_OP_* */
	/* Why arenac refuses the op on purpose (sequence values, ...), or
	 * NULL.  Such an op has no shape function. */
	const char *refuse;
	ArShapeFn shape;        /* NULL: no shape inference */
	ArFoldFn fold;          /* NULL: never folded */
	int fold_arg;           /* passed on by fold (the arithmetic op) */
	ArAliasClass alias;
	uint32_t inplace;       /* AR_ALIAS_INPLACE: inputs it may overwrite */
	ArViewWhen view_when;   /* AR_ALIAS_VIEW: NULL for always */
	ArKvCache kv[AR_MAX_KV];/* its KV caches, the first nkv of them */
	int nkv;
	const ArGradRule *grad; /* NULL: no gradient rule */
	ArTrainOutputs train_outputs; /* NULL: none */
	ArFlopsFn flops;        /* NULL: one op per output element */
	int prologue;           /* --fuse preact: its AR_PRE_* code, or 0 */
	bool fuse_target;       /* --fuse preact: prologues fold into it */
	bool runtime;           /* the reference runtime has a kernel */
	ArControl control;      /* how its subgraphs run; NONE for most */
	/* The workspace the reference runtime's kernel takes from the plan
	 * (--scratch kernels): the planner places it like a tensor that lives
	 * for the node's step alone.  NULL: the kernel needs none. */
	ArScratchFn scratch;
	const ArAttrDefault *defaults;  /* NULL: none (see ArAttrDefault) */
	ArRequant requant;
	ArLayout layout;        /* --layout nhwc: see ArLayout */
	int filter;             /* a channels-last variant's input holding
				 * its filter, in ar_filter_perm's layout;
				 * 0: none */
} ArOpDef;

/*
 * Gradient patterns (grad_patterns.c): chains of ops that exporters write
 * for one op, whose backward the training stage computes as that op's
 * (train/patterns.c).  Step k reads the previous step's output (PREV: a
 * chain, each step after the first reads it) and besides the chain's
 * input X, an earlier step's output (STEP), a scalar constant of a given
 * value (CONST) or of any value (SCALAR: an epsilon), or a tensor from
 * outside the chain (ARG: a norm's scale and bias), the fused op's input
 * `index`.  The outputs of the steps but the last are read only inside
 * the chain.
 */
typedef enum {
	AR_PAT_X = 1, AR_PAT_PREV, AR_PAT_STEP, AR_PAT_CONST, AR_PAT_SCALAR,
	AR_PAT_ARG
} ArPatKind;

typedef struct ArPatOperand {
	ArPatKind kind;
	double value;           /* AR_PAT_CONST: within 1e-3, relative */
	int index;              /* AR_PAT_STEP: the step; AR_PAT_ARG: the
				 * fused op's input (1, 2, ...; X is 0) */
} ArPatOperand;

typedef struct ArPatStep {
	const char *op;         /* an entry of the default domain */
	int nin;
	ArPatOperand in[2];
	bool commutes;          /* the operands may come in either order */
	/* A mean over the trailing axes, kept (a row statistic: the output
	 * has the input's dims with a trailing run of them 1). */
	bool rows;
} ArPatStep;

#define AR_PAT_MAX_STEPS 10
#define AR_PAT_MAX_IO 3

typedef struct ArGradPattern {
	const char *name;
	const char *fused;      /* the op whose gradient the chain gets */
	int nsteps;
	ArPatStep steps[AR_PAT_MAX_STEPS];
	/* The fused op's outputs: output 0 the last step's, output j > 0
	 * step out[j]'s (nout 0: output 0 alone).  Its inputs are X and the
	 * ARG operands. */
	int nout;
	int out[AR_PAT_MAX_IO];
	const char *domain;     /* the fused op's; NULL: the default one */
	/* The chain may end after nmin steps (0: after all of them), the
	 * later ones optional, as a norm's weight and bias: the longest
	 * that matches and whose outputs but the last feed only the chain. */
	int nmin;
	/* The fused op's outputs past 0 at least this wide (LayerNorm's
	 * statistics: float, its stash_type, as torch's CUDA kernels keep
	 * them for 16-bit input), or UNDEFINED: as the chain computes them. */
	ArDType stash;
} ArGradPattern;

const ArGradPattern *ar_grad_patterns(int *count);

/*
 * The entry for op in domain ("" or "ai.onnx" for the default one) at
 * opset version opset: the last entry of that op whose since is at most
 * opset (any entry's when opset is 0, unknown: graphs built in code); NULL
 * when there is none.
 */
const ArOpDef *ar_op_find(const char *domain, const char *op, int64_t opset);
/* The entry of a node (its domain, op and opset). */
const ArOpDef *ar_op_of(const ArNode *n);

/* The whole table, for tests and listings. */
const ArOpDef *ar_op_table(int *count);

/* The gradient rule of a node, NULL when it has none. */
const ArGradRule *ar_op_grad(const ArNode *n);
/*
 * Inputs of n its output 0 may overwrite in place: its entry's `inplace`
 * for an elementwise op; for a training step's gradient node (op + "Grad"
 * in AR_TRAIN_DOMAIN) its forward op's rule's `inplace`.
 */
uint32_t ar_op_inplace_inputs(const ArNode *n);

/* FLOPs of one node of an inferred graph (flops.c): its entry's count,
 * 0 for data movement, one op per output element otherwise.  Sums
 * saturate instead of overflowing. */
int64_t ar_node_flops(const ArGraph *g, const ArNode *n);

/* FLOP counts entries name (flops.c). */
int64_t ar_flops_none(const ArGraph *g, const ArNode *n);
int64_t ar_flops_conv(const ArGraph *g, const ArNode *n);
int64_t ar_flops_convtranspose(const ArGraph *g, const ArNode *n);
int64_t ar_flops_gemm(const ArGraph *g, const ArNode *n);
int64_t ar_flops_matmul(const ArGraph *g, const ArNode *n);
int64_t ar_flops_pool(const ArGraph *g, const ArNode *n);
int64_t ar_flops_globalpool(const ArGraph *g, const ArNode *n);
int64_t ar_flops_lrn(const ArGraph *g, const ArNode *n);
int64_t ar_flops_batchnorm(const ArGraph *g, const ArNode *n);
int64_t ar_flops_softmax(const ArGraph *g, const ArNode *n);
int64_t ar_flops_sum(const ArGraph *g, const ArNode *n);
int64_t ar_flops_sce_loss(const ArGraph *g, const ArNode *n);
int64_t ar_flops_nll_loss(const ArGraph *g, const ArNode *n);
int64_t ar_flops_gridsample(const ArGraph *g, const ArNode *n);
int64_t ar_flops_roialign(const ArGraph *g, const ArNode *n);
int64_t ar_flops_det(const ArGraph *g, const ArNode *n);
int64_t ar_flops_nms(const ArGraph *g, const ArNode *n);
int64_t ar_flops_dft(const ArGraph *g, const ArNode *n);
int64_t ar_flops_stft(const ArGraph *g, const ArNode *n);
/* The quantized and fused variants, with their own operand positions. */
int64_t ar_flops_qlinearconv(const ArGraph *g, const ArNode *n);
int64_t ar_flops_convinteger(const ArGraph *g, const ArNode *n);
int64_t ar_flops_qgemm(const ArGraph *g, const ArNode *n);
int64_t ar_flops_fusedmatmul(const ArGraph *g, const ArNode *n);
int64_t ar_flops_matmulnbits(const ArGraph *g, const ArNode *n);
/* MultiHeadAttention, GroupQueryAttention: the products Q K^T and A V
 * plus the softmax; Attention adds its input projection. */
int64_t ar_flops_mha(const ArGraph *g, const ArNode *n);
int64_t ar_flops_attention(const ArGraph *g, const ArNode *n);
/* In shape_einsum.c, beside the equation's parser. */
int64_t ar_flops_einsum(const ArGraph *g, const ArNode *n);

/*
 * A loop body's values between iterations (control.c): the body input
 * that body output `out` of node n (of control kind c, LOOP or SCAN) is
 * copied onto after each iteration (its condition, a carried value, a
 * state), or -1 for one copied out of the body (a scan output's slice).
 */
int ar_control_carried(const ArNode *n, ArControl c, int out);

/* arenac.FlashAttention (flash.c): shape, FLOPs, its gradient's
 * workspace.  Its attribute "kernel" names the kernel it stands for. */
typedef enum { AR_FLASH_FA2, AR_FLASH_MEM_EFF } ArFlashKernel;
typedef struct ArFlashKernelDef {
	int64_t lse_align;  /* the log-sum-exp's rows padded to a multiple */
	bool kv_heads;      /* takes grouped-query k and v unexpanded */
} ArFlashKernelDef;
const ArFlashKernelDef *ar_flash_kernel(ArFlashKernel k);
int ar_shape_flash(struct InferCtx *c, ArNode *n);
/* The log-sum-exp's dims for query q [..., s, d]: [..., s rounded up to
 * align]; returns the rank. */
int ar_flash_lse_shape(const ArTensor *q, int64_t align,
		       int64_t dims[AR_MAX_RANK]);
int64_t ar_flops_flash(const ArGraph *g, const ArNode *n);
int64_t ar_scratch_flash_grad(const ArGraph *g, const ArNode *n);

/* ONNX's Attention (onnx_attention.c): batch, query and kv heads, query
 * and key positions, head sizes of Q, K and of V, from its Q, K and V;
 * returns their rank (3 or 4), or -1 when they do not fit the schema. */
typedef struct ArAttnDims {
	int64_t b, hq, hkv, s, t, d, e;
} ArAttnDims;
int ar_onnx_attention_dims(const ArGraph *g, const ArNode *n,
			   ArAttnDims *a);
int ar_shape_onnx_attention(struct InferCtx *c, ArNode *n);
int64_t ar_flops_onnx_attention(const ArGraph *g, const ArNode *n);

/* arenac.QuantizedMatMul (quant_matmul.c): FLOPs, the dequantised
 * weight its step and its gradient's hold. */
int64_t ar_flops_qmatmul(const ArGraph *g, const ArNode *n);
int64_t ar_scratch_qmatmul(const ArGraph *g, const ArNode *n);
int64_t ar_scratch_qmatmul_grad(const ArGraph *g, const ArNode *n);

/*
 * --kernel-scratch FILE (kernel_scratch.c, whose comment gives the
 * syntax): a kernel library's workspace per op as an expression over the
 * node's shapes.  Load reads and checks the file (exit 1 when malformed);
 * bytes sets *bytes to node n's workspace, or -1 when the table does not
 * name its op, and fails (exit 2) when the expression cannot be
 * evaluated for n (a dim it lacks).
 */
typedef struct ArKernelScratch ArKernelScratch;
int ar_kernel_scratch_load(const char *path, ArKernelScratch **out,
			   ArError *err);
void ar_kernel_scratch_free(ArKernelScratch *k);
int ar_kernel_scratch_bytes(const ArKernelScratch *k, const ArGraph *g,
			    const ArNode *n, int64_t *bytes, ArError *err);

/* Workspace of the reference runtime's recurrent kernels (scratch.c). */
int64_t ar_scratch_rnn(const ArGraph *g, const ArNode *n);
int64_t ar_scratch_gru(const ArGraph *g, const ArNode *n);
int64_t ar_scratch_lstm(const ArGraph *g, const ArNode *n);

/* Training outputs entries name (train_outputs.c). */
int ar_train_out_mask(const ArNode *attrs, ArGraph *g, int node,
		      ArError *err);
int ar_train_out_layernorm(const ArNode *attrs, ArGraph *g, int node,
			   ArError *err);
int ar_train_out_flash(const ArNode *attrs, ArGraph *g, int node,
		       ArError *err);
int ar_train_out_batchnorm(const ArNode *attrs, ArGraph *g, int node,
			   ArError *err);
int ar_train_out_log_prob(const ArNode *attrs, ArGraph *g, int node,
			  ArError *err);

/* Dropout is a view only when it does not run in training mode (mode.c). */
bool ar_dropout_is_view(const ArGraph *g, const ArNode *n, bool training);

#endif
