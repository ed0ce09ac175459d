/*
 * table.c — the op registry's entries and their lookup.
 *
 * One entry per (domain, op, first opset), sorted for bsearch: what
 * ops.h's ArOpDef fields mean is documented there.  Input and output
 * counts are the union over every version of the op in ONNX's changelog
 * (tests/e2e_optable.py compares them); a shape function still checks
 * what its version requires.  Gradient rules are shared by the ops whose
 * backward step reads the same things.
 *
 * Adding an op: one entry here in sorted place, the functions it names
 * (a shape function in shape_*.c; a folder, FLOP count or gradient rule
 * only where the op has one), and a test.  tests/test_ops.c checks every
 * entry against the invariants of ops.h.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "infer_ops.h"

#define ONNX(op, v) .domain = NULL, .name = (op), .since = (v)
#define TRAINING(op) .domain = AR_TRAIN_DOMAIN, .name = (op), .since = 1
#define PARALLEL(op) .domain = AR_PARALLEL_DOMAIN, .name = (op), .since = 1
#define PREVIEW(op) .domain = "ai.onnx.preview.training", .name = (op), \
	.since = 1
#define MS(op) .domain = "com.microsoft", .name = (op), .since = 1
#define NHWC(op) .domain = AR_NHWC_DOMAIN, .name = (op), .since = 1
/* KV caches: {output, input, sequence axis} each (ops.h ArKvCache). */
#define KV(...) .kv = {__VA_ARGS__}, \
	.nkv = (int)(sizeof((ArKvCache[]){__VA_ARGS__}) / sizeof(ArKvCache))
#define FUSED(op) .domain = AR_FUSED_DOMAIN, .name = (op), .since = 1
#define IO(imin, imax, omin, omax) \
	.in_min = (imin), .in_max = (imax), .out_min = (omin), .out_max = (omax)
#define VAR AR_VARIADIC
#define B(j) AR_BIT(j)
#define ALL AR_ALL_INPUTS

/* Sequence ops of the top graph never get here: frontend/unroll.c makes
 * them tensor ops first. */
static const char SEQUENCES[] =
	"sequence and optional values are not supported: arenac plans "
	"tensors only (a top graph's sequence ops, lists of tensors known at "
	"compile time, become tensor ops; not in a subgraph)";

/*
 * Gradient rules.  The derivations are the standard ones; reads[j] is what
 * the gradient of input j needs (ops.h):
 *   - a product's gradient of one operand multiplies by the other (so a
 *     product by a constant keeps nothing); a quotient a / b needs b for
 *     a's gradient and b and the quotient for b's (-dY y / b);
 *   - Relu, Sigmoid, Tanh, Exp, Sqrt, Reciprocal are cheapest from their
 *     output (dX = dY f(Y)); Erf, Gelu, LeakyRelu, Clip, ... from their
 *     input; Softmax and LogSoftmax from their output with a row sum;
 *   - a pooling maximum needs input and output to find the argmax;
 *   - sums, data movement (Reshape, Transpose, Split, Slice, Concat,
 *     Expand, Cast, ReduceSum, ReduceMean, average pools, the
 *     interpolation of Resize) and Neg need no values, only shapes; Where needs only its condition, Gather only
 *     its indices (its table's gradient is a scatter-add);
 *   - the normalisations read their input and scale and the statistics
 *     the training step materialises (train_outputs): LayerNormalization
 *     its per-row mean and inverse standard deviation, BatchNormalization
 *     (always in training mode) its batch mean and inverse standard
 *     deviation, never the running statistics;
 *   - Dropout reads its mask (a bool, never dY's size);
 *   - the losses: SoftmaxCrossEntropyLoss reads its log-probabilities
 *     (output 1, which training materialises: what PyTorch's
 *     cross_entropy saves, log_softmax's result) and labels (softmax
 *     minus one-hot), NegativeLogLikelihoodLoss only the labels
 *     and weights (it scatters -1 into the log-probabilities' gradient).
 * A gradient computed element by element may overwrite its inputs
 * (inplace); a softmax-like gradient needs a row reduction before it
 * writes, and a product's gradient may reduce over broadcast dims: neither
 * may.
 */
#define IN(m) {.in = (m)}
#define OUT(m) {.out = (m)}
#define INOUT(i, o) {.in = (i), .out = (o)}
static const ArGradRule
	/* Conv, ConvTranspose, Gemm: the bias gets the summed dY. */
	G_BILINEAR_BIAS = {.diff = B(0) | B(1) | B(2),
			   .reads = {IN(B(1)), IN(B(0))}, .cost = 2},
	G_BILINEAR = {.diff = B(0) | B(1), .reads = {IN(B(1)), IN(B(0))},
		      .cost = 2},
	G_DIV = {.diff = B(0) | B(1), .reads = {IN(B(1)), INOUT(B(1), B(0))}},
	/* x ^ e: e x^(e-1) for x, ln(x) y for e. */
	G_POW = {.diff = B(0) | B(1),
		 .reads = {IN(B(0) | B(1)), INOUT(B(0), B(0))}},
	G_PRELU = {.diff = B(0) | B(1),
		   .reads = {IN(B(0) | B(1)), IN(B(0))}},
	/* Add, Sub, Neg: dY, negated for Sub's second operand. */
	G_ADD = {.diff = B(0) | B(1), .inplace = ALL},
	G_NEG = {.diff = B(0), .inplace = ALL},
	G_SUM = {.diff = ALL, .inplace = ALL},
	G_CONCAT = {.diff = ALL},
	/* Split: the pieces' gradients side by side. */
	G_SPLIT = {.diff = B(0), .dout = ALL},
	G_BY_OUTPUT = {.diff = B(0), .reads = {OUT(B(0))}, .inplace = ALL},
	G_BY_INPUT = {.diff = B(0), .reads = {IN(B(0))}, .inplace = ALL},
	G_ROW_OUTPUT = {.diff = B(0), .reads = {OUT(B(0))}},
	G_IN_OUT = {.diff = B(0), .reads = {INOUT(B(0), B(0))}},
	/* Linear in the input, no values needed. */
	G_PASS = {.diff = B(0)},
	G_WHERE = {.diff = B(1) | B(2), .reads = {{0}, IN(B(0)), IN(B(0))}},
	G_GATHER = {.diff = B(0), .reads = {IN(B(1))}},
	/* dX from X, scale and the batch statistics (outputs 3 and 4); the
	 * scale's gradient from X and the statistics. */
	G_BATCHNORM = {.diff = B(0) | B(1) | B(2),
		       .reads = {INOUT(B(0) | B(1), B(3) | B(4)),
				 INOUT(B(0), B(3) | B(4))},
		       .inplace = ALL},
	/* The same with the per-row mean and 1/std (outputs 1 and 2). */
	G_LAYERNORM = {.diff = B(0) | B(1) | B(2),
		       .reads = {INOUT(B(0) | B(1), B(1) | B(2)),
				 INOUT(B(0), B(1) | B(2))}},
	/* dY scaled by the mask. */
	G_DROPOUT = {.diff = B(0), .reads = {OUT(B(1))}, .inplace = ALL},
	/* exp(log_prob) minus one-hot: the log-probabilities the training
	 * step materialises (output 1), the labels and the weights. */
	G_SOFTMAX_CE = {.diff = B(0), .reads = {INOUT(B(1) | B(2), B(1))}},
	G_NLL = {.diff = B(0), .reads = {IN(B(1) | B(2))}},
	/* A linear by a quantised frozen weight (quant_matmul.c): dX from
	 * the stored weight, dequantised again; nothing kept. */
	G_QMATMUL = {.diff = B(0), .reads = {IN(B(1) | B(3) | B(4) | B(5))},
		     .cost = 2},
	/* Einsum: each operand's gradient contracts dY with the others (torch's
	 * EinsumBackward saves every operand); one operand: moved values. */
	G_EINSUM = {.diff = ALL, .reads = {IN(ALL & ~B(0)), IN(ALL & ~B(1)),
					   IN(ALL & ~B(2)), IN(ALL & ~B(3)),
					   IN(ALL & ~B(4))}, .cost = 2},
	/* FlashAttention (flash.c): q, kT and v from themselves, Y and the
	 * log-sum-exp; no score matrix, no dropout mask. */
	G_FLASH = {.diff = B(0) | B(1) | B(2),
		   .reads = {INOUT(B(0) | B(1) | B(2), B(0) | B(1)),
			     INOUT(B(0) | B(1) | B(2), B(0) | B(1)),
			     INOUT(B(0) | B(1) | B(2), B(0) | B(1))},
		   .cost = 2, .recompute = true, .attrs = true},
	/* The head and the cross-entropy as one op (--loss-chunk): each
	 * chunk's logits again from x and W. */
	G_LINEAR_CE = {.diff = B(0) | B(1),
		       .reads = {IN(B(0) | B(1) | B(2)), IN(B(0) | B(1) | B(2))},
		       .cost = 2};
#undef IN
#undef OUT
#undef INOUT

/*
 * Attribute defaults (ops.h ArAttrDefault), as ONNX's Operators.md and
 * Changelog.md state them per version of the op (/work/shared/docs; the
 * "default is" of each attribute, and for lists the sentence under it:
 * "If not present, the stride defaults is 1 along each spatial axis").
 * Attributes with no default (Concat's axis, LRN's size) are the model's
 * to give.
 */
#define DI(n, val, from) {(n), AR_ATTR_INT, (val), NULL, 0, 0, NULL, (from)}
#define DF(n, val, from) {(n), AR_ATTR_FLOAT, (val), NULL, 0, 0, NULL, (from)}
#define DS(n, str, from) {(n), AR_ATTR_STRING, 0, (str), 0, 0, NULL, (from)}
#define AXES(n, val, per) {(n), AR_ATTR_INTS, (val), NULL, (per), 0, NULL, 1}
/* Conv, QLinearConv, ConvInteger: W is input `w`. */
#define CONV_DEFAULTS(w) \
	DS("auto_pad", "NOTSET", 1), AXES("dilations", 1, 1), \
	DI("group", 1, 1), \
	{"kernel_shape", AR_ATTR_INTS, 0, NULL, 0, (w), NULL, 1}, \
	{"pads", AR_ATTR_INTS, 0, NULL, 2, 0, "auto_pad", 1}, \
	AXES("strides", 1, 1), {0}
static const ArAttrDefault
	D_CONV[] = {CONV_DEFAULTS(1)},
	D_QLINEARCONV[] = {CONV_DEFAULTS(3)},
	/* Pads left out: an output_shape given computes them too. */
	D_CONVTRANSPOSE[] = {DS("auto_pad", "NOTSET", 1),
			     AXES("dilations", 1, 1), DI("group", 1, 1),
			     {"kernel_shape", AR_ATTR_INTS, 0, NULL, 0, 1, NULL,
			      1},
			     AXES("output_padding", 0, 1), AXES("strides", 1, 1),
			     {0}},
	D_RESHAPE[] = {DI("allowzero", 0, 14), {0}},
	D_SHAPE[] = {DI("start", 0, 15), {0}},
	D_AVGPOOL[] = {DS("auto_pad", "NOTSET", 1), DI("ceil_mode", 0, 10),
		       DI("count_include_pad", 0, 7),
		       {"dilations", AR_ATTR_INTS, 1, NULL, 1, 0, NULL, 19},
		       {"pads", AR_ATTR_INTS, 0, NULL, 2, 0, "auto_pad", 1},
		       AXES("strides", 1, 1), {0}},
	D_MAXPOOL[] = {DS("auto_pad", "NOTSET", 1), DI("ceil_mode", 0, 10),
		       {"dilations", AR_ATTR_INTS, 1, NULL, 1, 0, NULL, 10},
		       {"pads", AR_ATTR_INTS, 0, NULL, 2, 0, "auto_pad", 1},
		       DI("storage_order", 0, 8), AXES("strides", 1, 1), {0}},
	/* Not training_mode: a --train plan runs it in training mode
	 * whatever the model says (train/), so 0 would mislead. */
	D_BATCHNORM[] = {DF("epsilon", 1e-5, 1), DF("momentum", 0.9, 1), {0}},
	D_GEMM[] = {DF("alpha", 1.0, 1), DF("beta", 1.0, 1), DI("transA", 0, 1),
		    DI("transB", 0, 1), {0}},
	D_SOFTMAX[] = {DI("axis", 1, 1), DI("axis", -1, 13), {0}},
	D_AXIS0[] = {DI("axis", 0, 1), {0}},
	D_AXIS1[] = {DI("axis", 1, 1), {0}},
	D_ARGREDUCE[] = {DI("axis", 0, 1), DI("keepdims", 1, 1),
			 DI("select_last_index", 0, 12), {0}},
	D_REDUCE[] = {DI("keepdims", 1, 1), DI("noop_with_empty_axes", 0, 18),
		      {0}},
	D_EPSILON[] = {DF("epsilon", 1e-5, 1), {0}},
	D_LAYERNORM[] = {DI("axis", -1, 1), DF("epsilon", 1e-5, 1),
			 DI("stash_type", 1, 1), {0}},
	D_LRN[] = {DF("alpha", 0.0001, 1), DF("beta", 0.75, 1),
		   DF("bias", 1.0, 1), {0}},
	D_LEAKYRELU[] = {DF("alpha", 0.01, 1), {0}},
	D_ELU[] = {DF("alpha", 1.0, 1), {0}},
	D_HARDSIGMOID[] = {DF("alpha", 0.2, 1), DF("beta", 0.5, 1), {0}},
	D_GELU[] = {DS("approximate", "none", 20), {0}},
	D_PAD[] = {DS("mode", "constant", 1), {0}},
	D_CUMSUM[] = {DI("exclusive", 0, 11), DI("reverse", 0, 11), {0}},
	D_DEPTHTOSPACE[] = {DS("mode", "DCR", 11), {0}},
	D_DEQUANTIZE[] = {DI("axis", 1, 13), DI("block_size", 0, 21), {0}},
	D_QUANTIZE[] = {DI("axis", 1, 13), DI("saturate", 1, 19),
			DI("block_size", 0, 21), {0}},
	D_RESIZE[] = {DS("mode", "nearest", 10),
		      DS("coordinate_transformation_mode", "half_pixel", 11),
		      DF("cubic_coeff_a", -0.75, 11),
		      DI("exclude_outside", 0, 11),
		      DF("extrapolation_value", 0.0, 11),
		      DS("nearest_mode", "round_prefer_floor", 11),
		      DI("antialias", 0, 18),
		      DS("keep_aspect_ratio_policy", "stretch", 18), {0}},
	D_LSTM[] = {DS("direction", "forward", 1), DI("input_forget", 0, 1),
		    DI("layout", 0, 14), {0}},
	D_GRU[] = {DS("direction", "forward", 1),
		   DI("linear_before_reset", 0, 3), DI("layout", 0, 14), {0}},
	D_REDUCESUM[] = {DI("keepdims", 1, 1),
			 DI("noop_with_empty_axes", 0, 13), {0}},
	D_UPSAMPLE[] = {DS("mode", "nearest", 1), {0}},
	D_RNN[] = {DS("direction", "forward", 1), DI("layout", 0, 14), {0}};
#undef DI
#undef DF
#undef DS
#undef AXES
#undef CONV_DEFAULTS

static const ArOpDef table[] = {
	{ONNX("Abs", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .fold = ar_fold_arith, .fold_arg = AR_E_ABS,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true},
	{ONNX("Acos", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("Acosh", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("Add", 1), IO(2, 2, 1, 1), .shape = ar_shape_broadcast,
	 .fold = ar_fold_arith, .fold_arg = AR_E_ADD,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_ADD,
	 .prologue = AR_PRE_ADD, .runtime = true,
	 .layout = AR_LAYOUT_BROADCAST},
	{ONNX("And", 1), IO(2, 2, 1, 1), .shape = ar_shape_compare,
	 .fold = ar_fold_arith, .fold_arg = AR_E_AND,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("ArgMax", 1), IO(1, 1, 1, 1),
	 .defaults = D_ARGREDUCE, .shape = ar_shape_argreduce,
	 .runtime = true},
	{ONNX("ArgMin", 1), IO(1, 1, 1, 1),
	 .defaults = D_ARGREDUCE, .shape = ar_shape_argreduce,
	 .runtime = true},
	{ONNX("Asin", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("Asinh", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("Atan", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("Atanh", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	/* Opset 24 adds nonpad_kv_seqlen (onnx_attention.c). */
	{ONNX("Attention", 23), IO(3, 7, 1, 4), .shape = ar_shape_onnx_attention,
	 .flops = ar_flops_onnx_attention},
	{ONNX("AveragePool", 1), IO(1, 1, 1, 1),
	 .defaults = D_AVGPOOL, .shape = ar_shape_pool,
	 .grad = &G_PASS, .flops = ar_flops_pool, .runtime = true},
	{ONNX("BatchNormalization", 1), IO(5, 5, 1, 5), .defaults = D_BATCHNORM,
	 .shape = ar_shape_batchnorm, .alias = AR_ALIAS_INPLACE,
	 .inplace = B(0), .grad = &G_BATCHNORM,
	 .train_outputs = ar_train_out_batchnorm, .flops = ar_flops_batchnorm,
	 .prologue = AR_PRE_BATCHNORM, .runtime = true},
	{ONNX("Bernoulli", 15), IO(1, 1, 1, 1), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_like},
	{ONNX("BitShift", 1), IO(2, 2, 1, 1), .shape = ar_shape_broadcast,
	 .runtime = true},
	{ONNX("BitwiseAnd", 1), IO(2, 2, 1, 1), .shape = ar_shape_broadcast},
	{ONNX("BitwiseNot", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary},
	{ONNX("BitwiseOr", 1), IO(2, 2, 1, 1), .shape = ar_shape_broadcast},
	{ONNX("BitwiseXor", 1), IO(2, 2, 1, 1), .shape = ar_shape_broadcast},
	{ONNX("BlackmanWindow", 17), IO(1, 1, 1, 1), .shape = ar_shape_window},
	{ONNX("Cast", 1), IO(1, 1, 1, 1), .shape = ar_shape_cast,
	 .fold = ar_fold_copy, .grad = &G_PASS, .flops = ar_flops_none,
	 .runtime = true},
	{ONNX("CastLike", 1), IO(2, 2, 1, 1), .shape = ar_shape_castlike,
	 .fold = ar_fold_copy, .runtime = true},
	{ONNX("Ceil", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .fold = ar_fold_arith, .fold_arg = AR_E_CEIL,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("Celu", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true},
	{ONNX("CenterCropPad", 18), IO(2, 2, 1, 1),
	 .shape = ar_shape_centercroppad, .flops = ar_flops_none},
	{ONNX("Clip", 1), IO(1, 3, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0), .grad = &G_BY_INPUT,
	 .runtime = true,
	 .layout = AR_LAYOUT_ELEMENTWISE},
	{ONNX("Col2Im", 18), IO(3, 3, 1, 1), .shape = ar_shape_col2im,
	 .flops = ar_flops_globalpool},
	{ONNX("Compress", 9), IO(2, 2, 1, 1), .shape = ar_shape_compress,
	 .flops = ar_flops_none},
	{ONNX("Concat", 1), IO(1, VAR, 1, 1), .shape = ar_shape_concat,
	 .fold = ar_fold_concat, .alias = AR_ALIAS_CONCAT, .grad = &G_CONCAT,
	 .flops = ar_flops_none, .runtime = true,
	 .layout = AR_LAYOUT_AXIS},
	{ONNX("ConcatFromSequence", 1), IO(1, 1, 1, 1), .refuse = SEQUENCES},
	{ONNX("Constant", 1), IO(0, 0, 1, 1), .flags = AR_OP_VALUE,
	 .shape = ar_shape_constant, .fold = ar_fold_constant, .runtime = true},
	{ONNX("ConstantOfShape", 1), IO(1, 1, 1, 1), .flags = AR_OP_VALUE,
	 .shape = ar_shape_constantofshape, .fold = ar_fold_constantofshape},
	{ONNX("Conv", 1), IO(2, 3, 1, 1),
	 .defaults = D_CONV, .shape = ar_shape_conv,
	 .grad = &G_BILINEAR_BIAS, .flops = ar_flops_conv, .fuse_target = true,
	 .runtime = true},
	{ONNX("ConvInteger", 10), IO(2, 4, 1, 1), .defaults = D_CONV,
	 .shape = ar_shape_convinteger, .flops = ar_flops_convinteger,
	 .runtime = true},
	{ONNX("ConvTranspose", 1), IO(2, 3, 1, 1), .defaults = D_CONVTRANSPOSE,
	 .shape = ar_shape_convtranspose, .grad = &G_BILINEAR_BIAS,
	 .flops = ar_flops_convtranspose, .runtime = true},
	{ONNX("Cos", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true},
	{ONNX("Cosh", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("CumSum", 1), IO(2, 2, 1, 1),
	 .defaults = D_CUMSUM, .shape = ar_shape_unary,
	 .runtime = true},
	{ONNX("DFT", 17), IO(1, 3, 1, 1), .shape = ar_shape_dft,
	 .flops = ar_flops_dft},
	{ONNX("DepthToSpace", 1), IO(1, 1, 1, 1), .defaults = D_DEPTHTOSPACE,
	 .shape = ar_shape_depth_to_space, .runtime = true},
	{ONNX("DequantizeLinear", 10), IO(2, 3, 1, 1),
	 .defaults = D_DEQUANTIZE, .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_dequantize, .alias = AR_ALIAS_INPLACE,
	 .inplace = B(0), .runtime = true,
	 .layout = AR_LAYOUT_ELEMENTWISE},
	{ONNX("Det", 11), IO(1, 1, 1, 1), .shape = ar_shape_det,
	 .flops = ar_flops_det},
	{ONNX("Div", 1), IO(2, 2, 1, 1), .shape = ar_shape_broadcast,
	 .fold = ar_fold_arith, .fold_arg = AR_E_DIV,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_DIV,
	 .runtime = true,
	 .layout = AR_LAYOUT_BROADCAST},
	{ONNX("Dropout", 1), IO(1, 3, 1, 2), .shape = ar_shape_dropout,
	 .fold = ar_fold_copy, .alias = AR_ALIAS_VIEW,
	 .view_when = ar_dropout_is_view, .grad = &G_DROPOUT,
	 .train_outputs = ar_train_out_mask, .runtime = true,
	 .layout = AR_LAYOUT_ELEMENTWISE},
	{ONNX("DynamicQuantizeLinear", 11), IO(1, 1, 3, 3),
	 .shape = ar_shape_dynamic_quantize, .runtime = true},
	{ONNX("Einsum", 12), IO(1, VAR, 1, 1), .shape = ar_shape_einsum,
	 .grad = &G_EINSUM, .flops = ar_flops_einsum},
	{ONNX("Elu", 1), IO(1, 1, 1, 1),
	 .defaults = D_ELU, .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true},
	{ONNX("Equal", 1), IO(2, 2, 1, 1), .shape = ar_shape_compare,
	 .fold = ar_fold_arith, .fold_arg = AR_E_EQ, .runtime = true},
	{ONNX("Erf", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true},
	{ONNX("Exp", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .fold = ar_fold_arith, .fold_arg = AR_E_EXP,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_OUTPUT,
	 .runtime = true},
	{ONNX("Expand", 1), IO(2, 2, 1, 1), .shape = ar_shape_expand,
	 .fold = ar_fold_expand, .grad = &G_PASS, .flops = ar_flops_none,
	 .runtime = true},
	{ONNX("EyeLike", 9), IO(1, 1, 1, 1), .shape = ar_shape_eyelike,
	 .runtime = true},
	{ONNX("Flatten", 1), IO(1, 1, 1, 1),
	 .defaults = D_AXIS1, .shape = ar_shape_flatten,
	 .fold = ar_fold_copy, .alias = AR_ALIAS_VIEW, .grad = &G_PASS,
	 .flops = ar_flops_none, .runtime = true},
	{ONNX("Floor", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .fold = ar_fold_arith, .fold_arg = AR_E_FLOOR,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("GRU", 1), IO(3, 6, 0, 2),
	 .defaults = D_GRU, .shape = ar_shape_rnn,
	 .scratch = ar_scratch_gru, .runtime = true},
	{ONNX("Gather", 1), IO(2, 2, 1, 1),
	 .defaults = D_AXIS0, .shape = ar_shape_gather,
	 .fold = ar_fold_gather, .grad = &G_GATHER, .flops = ar_flops_none,
	 .runtime = true},
	{ONNX("GatherElements", 1), IO(2, 2, 1, 1), .defaults = D_AXIS0,
	 .shape = ar_shape_gather_elements, .runtime = true},
	{ONNX("GatherND", 11), IO(2, 2, 1, 1), .shape = ar_shape_gathernd,
	 .flops = ar_flops_none, .runtime = true},
	{ONNX("Gelu", 1), IO(1, 1, 1, 1),
	 .defaults = D_GELU, .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true},
	{ONNX("Gemm", 1), IO(2, 3, 1, 1),
	 .defaults = D_GEMM, .shape = ar_shape_gemm,
	 .grad = &G_BILINEAR_BIAS, .flops = ar_flops_gemm, .runtime = true},
	{ONNX("GlobalAveragePool", 1), IO(1, 1, 1, 1),
	 .shape = ar_shape_globalpool, .grad = &G_PASS,
	 .flops = ar_flops_globalpool, .runtime = true},
	{ONNX("GlobalLpPool", 1), IO(1, 1, 1, 1), .shape = ar_shape_globalpool},
	{ONNX("GlobalMaxPool", 1), IO(1, 1, 1, 1),
	 .shape = ar_shape_globalpool, .grad = &G_IN_OUT,
	 .flops = ar_flops_globalpool, .runtime = true},
	{ONNX("Greater", 1), IO(2, 2, 1, 1), .shape = ar_shape_compare,
	 .fold = ar_fold_arith, .fold_arg = AR_E_GT, .runtime = true},
	{ONNX("GreaterOrEqual", 1), IO(2, 2, 1, 1), .shape = ar_shape_compare,
	 .fold = ar_fold_arith, .fold_arg = AR_E_GE, .runtime = true},
	{ONNX("GridSample", 16), IO(2, 2, 1, 1), .shape = ar_shape_gridsample,
	 .flops = ar_flops_gridsample},
	{ONNX("HammingWindow", 17), IO(1, 1, 1, 1), .shape = ar_shape_window},
	{ONNX("HannWindow", 17), IO(1, 1, 1, 1), .shape = ar_shape_window},
	{ONNX("HardSigmoid", 1), IO(1, 1, 1, 1),
	 .defaults = D_HARDSIGMOID, .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true,
	 .layout = AR_LAYOUT_ELEMENTWISE},
	{ONNX("HardSwish", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true,
	 .layout = AR_LAYOUT_ELEMENTWISE},
	{ONNX("Hardmax", 1), IO(1, 1, 1, 1),
	 .defaults = D_SOFTMAX, .shape = ar_shape_unary,
	 .runtime = true},
	{ONNX("Identity", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .fold = ar_fold_copy, .alias = AR_ALIAS_VIEW, .grad = &G_PASS,
	 .flops = ar_flops_none, .runtime = true,
	 .layout = AR_LAYOUT_ELEMENTWISE},
	{ONNX("If", 1), IO(1, 1, 1, VAR), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_if, .control = AR_CONTROL_BRANCHES,
	 .runtime = true},
	{ONNX("InstanceNormalization", 1), IO(3, 3, 1, 1),
	 .defaults = D_EPSILON,
	 .shape = ar_shape_unary, .runtime = true},
	{ONNX("IsInf", 1), IO(1, 1, 1, 1), .shape = ar_shape_tobool,
	 .runtime = true},
	{ONNX("IsNaN", 1), IO(1, 1, 1, 1), .shape = ar_shape_tobool,
	 .runtime = true},
	{ONNX("LRN", 1), IO(1, 1, 1, 1),
	 .defaults = D_LRN, .shape = ar_shape_unary,
	 .grad = &G_IN_OUT, .flops = ar_flops_lrn, .runtime = true},
	{ONNX("LSTM", 1), IO(3, 8, 0, 3),
	 .defaults = D_LSTM, .shape = ar_shape_rnn,
	 .scratch = ar_scratch_lstm, .runtime = true},
	{ONNX("LayerNormalization", 1), IO(2, 3, 1, 3), .defaults = D_LAYERNORM,
	 .shape = ar_shape_layernorm, .grad = &G_LAYERNORM,
	 .train_outputs = ar_train_out_layernorm, .runtime = true},
	{ONNX("LeakyRelu", 1), IO(1, 1, 1, 1),
	 .defaults = D_LEAKYRELU, .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true,
	 .layout = AR_LAYOUT_ELEMENTWISE},
	{ONNX("Less", 1), IO(2, 2, 1, 1), .shape = ar_shape_compare,
	 .fold = ar_fold_arith, .fold_arg = AR_E_LT, .runtime = true},
	{ONNX("LessOrEqual", 1), IO(2, 2, 1, 1), .shape = ar_shape_compare,
	 .fold = ar_fold_arith, .fold_arg = AR_E_LE, .runtime = true},
	{ONNX("Log", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .fold = ar_fold_arith, .fold_arg = AR_E_LOG,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true},
	{ONNX("LogSoftmax", 1), IO(1, 1, 1, 1),
	 .defaults = D_SOFTMAX, .shape = ar_shape_unary,
	 .grad = &G_ROW_OUTPUT, .flops = ar_flops_softmax, .runtime = true},
	{ONNX("Loop", 1), IO(2, VAR, 1, VAR), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_loop, .control = AR_CONTROL_LOOP},
	{ONNX("LpNormalization", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary},
	{ONNX("LpPool", 1), IO(1, 1, 1, 1), .shape = ar_shape_pool},
	{ONNX("MatMul", 1), IO(2, 2, 1, 1), .shape = ar_shape_matmul,
	 .grad = &G_BILINEAR, .flops = ar_flops_matmul, .runtime = true},
	{ONNX("MatMulInteger", 10), IO(2, 4, 1, 1),
	 .shape = ar_shape_matmulinteger, .flops = ar_flops_matmul,
	 .runtime = true},
	{ONNX("Max", 1), IO(1, VAR, 1, 1), .shape = ar_shape_broadcast,
	 .fold = ar_fold_arith, .fold_arg = AR_E_MAX,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true,
	 .layout = AR_LAYOUT_BROADCAST},
	{ONNX("MaxPool", 1), IO(1, 1, 1, 2),
	 .defaults = D_MAXPOOL, .shape = ar_shape_pool,
	 .grad = &G_IN_OUT, .flops = ar_flops_pool, .runtime = true},
	{ONNX("MaxUnpool", 9), IO(2, 3, 1, 1), .shape = ar_shape_maxunpool,
	 .flops = ar_flops_none},
	{ONNX("Mean", 1), IO(1, VAR, 1, 1), .shape = ar_shape_broadcast,
	 .fold = ar_fold_arith, .fold_arg = AR_E_MEAN,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true,
	 .layout = AR_LAYOUT_BROADCAST},
	{ONNX("MeanVarianceNormalization", 1), IO(1, 1, 1, 1),
	 .shape = ar_shape_unary, .runtime = true},
	{ONNX("MelWeightMatrix", 17), IO(5, 5, 1, 1),
	 .shape = ar_shape_melweight},
	{ONNX("Min", 1), IO(1, VAR, 1, 1), .shape = ar_shape_broadcast,
	 .fold = ar_fold_arith, .fold_arg = AR_E_MIN,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true,
	 .layout = AR_LAYOUT_BROADCAST},
	{ONNX("Mish", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true},
	{ONNX("Mod", 1), IO(2, 2, 1, 1), .shape = ar_shape_broadcast,
	 .fold = ar_fold_arith, .fold_arg = AR_E_MOD, .runtime = true},
	{ONNX("Mul", 1), IO(2, 2, 1, 1), .shape = ar_shape_broadcast,
	 .fold = ar_fold_arith, .fold_arg = AR_E_MUL,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BILINEAR,
	 .prologue = AR_PRE_MUL, .runtime = true,
	 .layout = AR_LAYOUT_BROADCAST},
	{ONNX("Multinomial", 7), IO(1, 1, 1, 1), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_multinomial},
	{ONNX("Neg", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .fold = ar_fold_arith, .fold_arg = AR_E_NEG,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_NEG,
	 .runtime = true},
	{ONNX("NegativeLogLikelihoodLoss", 12), IO(2, 3, 1, 1),
	 .flags = AR_OP_LOSS, .shape = ar_shape_loss, .grad = &G_NLL,
	 .flops = ar_flops_nll_loss, .runtime = true},
	{ONNX("NonMaxSuppression", 10), IO(2, 5, 1, 1), .shape = ar_shape_nms,
	 .flops = ar_flops_nms},
	{ONNX("NonZero", 9), IO(1, 1, 1, 1), .shape = ar_shape_nonzero,
	 .flops = ar_flops_globalpool},
	{ONNX("Not", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .fold = ar_fold_arith, .fold_arg = AR_E_NOT,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("OneHot", 9), IO(3, 3, 1, 1), .shape = ar_shape_onehot,
	 .flops = ar_flops_none},
	{ONNX("Optional", 1), IO(0, 1, 1, 1), .refuse = SEQUENCES},
	{ONNX("OptionalGetElement", 1), IO(1, 1, 1, 1), .refuse = SEQUENCES},
	{ONNX("OptionalHasElement", 1), IO(0, 1, 1, 1), .refuse = SEQUENCES},
	{ONNX("Or", 1), IO(2, 2, 1, 1), .shape = ar_shape_compare,
	 .fold = ar_fold_arith, .fold_arg = AR_E_OR, .alias = AR_ALIAS_INPLACE,
	 .inplace = ALL, .runtime = true},
	{ONNX("PRelu", 1), IO(2, 2, 1, 1), .shape = ar_shape_broadcast,
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0), .grad = &G_PRELU,
	 .runtime = true,
	 .layout = AR_LAYOUT_BROADCAST},
	{ONNX("Pad", 1), IO(1, 4, 1, 1),
	 .defaults = D_PAD, .shape = ar_shape_pad,
	 .grad = &G_PASS, .flops = ar_flops_none, .runtime = true},
	{ONNX("Pow", 1), IO(2, 2, 1, 1), .shape = ar_shape_broadcast,
	 .fold = ar_fold_arith, .fold_arg = AR_E_POW,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_POW,
	 .runtime = true},
	{ONNX("QLinearConv", 10), IO(8, 9, 1, 1),
	 .defaults = D_QLINEARCONV, .requant = {1, 4, 6},
	 .shape = ar_shape_qlinearconv, .flops = ar_flops_qlinearconv,
	 .runtime = true},
	{ONNX("QLinearMatMul", 10), IO(8, 8, 1, 1), .requant = {1, 4, 6},
	 .shape = ar_shape_qlinearmatmul, .flops = ar_flops_matmul,
	 .runtime = true},
	{ONNX("QuantizeLinear", 10), IO(2, 3, 1, 1),
	 .defaults = D_QUANTIZE, .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_quantize, .alias = AR_ALIAS_INPLACE,
	 .inplace = B(0), .runtime = true,
	 .layout = AR_LAYOUT_ELEMENTWISE},
	{ONNX("RNN", 1), IO(3, 6, 0, 2),
	 .defaults = D_RNN, .shape = ar_shape_rnn,
	 .scratch = ar_scratch_rnn, .runtime = true},
	{ONNX("RandomNormal", 1), IO(0, 0, 1, 1), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_random},
	{ONNX("RandomNormalLike", 1), IO(1, 1, 1, 1), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_like},
	{ONNX("RandomUniform", 1), IO(0, 0, 1, 1), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_random},
	{ONNX("RandomUniformLike", 1), IO(1, 1, 1, 1), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_like},
	{ONNX("Range", 1), IO(3, 3, 1, 1), .shape = ar_shape_range,
	 .fold = ar_fold_range, .runtime = true},
	{ONNX("Reciprocal", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .fold = ar_fold_arith, .fold_arg = AR_E_RECIP,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_OUTPUT,
	 .runtime = true},
	{ONNX("ReduceL1", 1), IO(1, 2, 1, 1),
	 .defaults = D_REDUCE, .shape = ar_shape_reduce,
	 .runtime = true},
	{ONNX("ReduceL2", 1), IO(1, 2, 1, 1),
	 .defaults = D_REDUCE, .shape = ar_shape_reduce,
	 .runtime = true},
	{ONNX("ReduceLogSum", 1), IO(1, 2, 1, 1),
	 .defaults = D_REDUCE, .shape = ar_shape_reduce,
	 .runtime = true},
	{ONNX("ReduceLogSumExp", 1), IO(1, 2, 1, 1),
	 .defaults = D_REDUCE, .shape = ar_shape_reduce,
	 .runtime = true},
	{ONNX("ReduceMax", 1), IO(1, 2, 1, 1),
	 .defaults = D_REDUCE, .shape = ar_shape_reduce,
	 .fold = ar_fold_reduce, .fold_arg = AR_E_MAX, .grad = &G_IN_OUT,
	 .runtime = true},
	{ONNX("ReduceMean", 1), IO(1, 2, 1, 1),
	 .defaults = D_REDUCE, .shape = ar_shape_reduce,
	 .grad = &G_PASS, .runtime = true},
	{ONNX("ReduceMin", 1), IO(1, 2, 1, 1),
	 .defaults = D_REDUCE, .shape = ar_shape_reduce,
	 .fold = ar_fold_reduce, .fold_arg = AR_E_MIN, .grad = &G_IN_OUT,
	 .runtime = true},
	{ONNX("ReduceProd", 1), IO(1, 2, 1, 1),
	 .defaults = D_REDUCE, .shape = ar_shape_reduce,
	 .fold = ar_fold_reduce, .fold_arg = AR_E_MUL, .runtime = true},
	{ONNX("ReduceSum", 1), IO(1, 2, 1, 1),
	 .defaults = D_REDUCESUM, .shape = ar_shape_reduce,
	 .fold = ar_fold_reduce, .fold_arg = AR_E_ADD, .grad = &G_PASS,
	 .runtime = true},
	{ONNX("ReduceSumSquare", 1), IO(1, 2, 1, 1),
	 .defaults = D_REDUCE, .shape = ar_shape_reduce,
	 .runtime = true},
	{ONNX("Relu", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .fold = ar_fold_arith, .fold_arg = AR_E_RELU,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_OUTPUT,
	 .prologue = AR_PRE_RELU, .runtime = true,
	 .layout = AR_LAYOUT_ELEMENTWISE},
	{ONNX("Reshape", 1), IO(1, 2, 1, 1),
	 .defaults = D_RESHAPE, .shape = ar_shape_reshape,
	 .fold = ar_fold_copy, .alias = AR_ALIAS_VIEW, .grad = &G_PASS,
	 .flops = ar_flops_none, .runtime = true},
	{ONNX("Resize", 1), IO(1, 4, 1, 1),
	 .defaults = D_RESIZE, .shape = ar_shape_resize,
	 .grad = &G_PASS, .runtime = true, .layout = AR_LAYOUT_PER_AXIS},
	{ONNX("ReverseSequence", 10), IO(2, 2, 1, 1), .shape = ar_shape_unary,
	 .flops = ar_flops_none, .runtime = true},
	{ONNX("RoiAlign", 10), IO(3, 3, 1, 1), .shape = ar_shape_roialign,
	 .flops = ar_flops_roialign},
	{ONNX("Round", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("STFT", 17), IO(2, 4, 1, 1), .shape = ar_shape_stft,
	 .flops = ar_flops_stft},
	{ONNX("Scan", 8), IO(1, VAR, 1, VAR), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_scan, .control = AR_CONTROL_SCAN},
	/* The Scatter family writes updates into a copy of data, which may
	 * be data itself when it dies here. */
	{ONNX("Scatter", 9), IO(3, 3, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0), .flops = ar_flops_none,
	 .runtime = true},
	{ONNX("ScatterElements", 11), IO(3, 3, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0), .flops = ar_flops_none,
	 .runtime = true},
	{ONNX("ScatterND", 11), IO(3, 3, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0), .flops = ar_flops_none,
	 .runtime = true},
	{ONNX("Selu", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true},
	{ONNX("SequenceAt", 1), IO(2, 2, 1, 1), .refuse = SEQUENCES},
	{ONNX("SequenceConstruct", 1), IO(1, VAR, 1, 1), .refuse = SEQUENCES},
	{ONNX("SequenceEmpty", 1), IO(0, 0, 1, 1), .refuse = SEQUENCES},
	{ONNX("SequenceErase", 1), IO(1, 2, 1, 1), .refuse = SEQUENCES},
	{ONNX("SequenceInsert", 1), IO(2, 3, 1, 1), .refuse = SEQUENCES},
	{ONNX("SequenceLength", 1), IO(1, 1, 1, 1), .refuse = SEQUENCES},
	{ONNX("SequenceMap", 1), IO(1, VAR, 1, VAR), .refuse = SEQUENCES},
	{ONNX("Shape", 1), IO(1, 1, 1, 1),
	 .defaults = D_SHAPE, .flags = AR_OP_SHAPEONLY,
	 .shape = ar_shape_shape, .fold = ar_fold_shape,
	 .flops = ar_flops_none, .runtime = true},
	{ONNX("Shrink", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .runtime = true},
	{ONNX("Sigmoid", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_OUTPUT,
	 .runtime = true,
	 .layout = AR_LAYOUT_ELEMENTWISE},
	{ONNX("Sign", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .fold = ar_fold_arith, .fold_arg = AR_E_SIGN,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	/* ORT registers this in the ONNX domain (and in com.microsoft). */
	{ONNX("SimplifiedLayerNormalization", 1), IO(2, 2, 1, 2),
	 .shape = ar_shape_layernorm},
	{ONNX("Sin", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true},
	{ONNX("Sinh", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("Size", 1), IO(1, 1, 1, 1), .flags = AR_OP_SHAPEONLY,
	 .shape = ar_shape_size, .fold = ar_fold_size, .runtime = true},
	{ONNX("Slice", 1), IO(1, 5, 1, 1), .shape = ar_shape_slice,
	 .fold = ar_fold_slice, .grad = &G_PASS, .flops = ar_flops_none,
	 .runtime = true},
	{ONNX("Softmax", 1), IO(1, 1, 1, 1),
	 .defaults = D_SOFTMAX, .shape = ar_shape_unary,
	 .grad = &G_ROW_OUTPUT, .flops = ar_flops_softmax, .runtime = true},
	{ONNX("SoftmaxCrossEntropyLoss", 1), IO(2, 3, 1, 2),
	 .flags = AR_OP_LOSS, .shape = ar_shape_loss, .grad = &G_SOFTMAX_CE,
	 .train_outputs = ar_train_out_log_prob,
	 .flops = ar_flops_sce_loss, .runtime = true},
	{ONNX("Softplus", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true},
	{ONNX("Softsign", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT,
	 .runtime = true},
	{ONNX("SpaceToDepth", 1), IO(1, 1, 1, 1),
	 .shape = ar_shape_space_to_depth, .runtime = true},
	{ONNX("Split", 1), IO(1, 2, 1, VAR),
	 .defaults = D_AXIS0, .shape = ar_shape_split,
	 .fold = ar_fold_split, .grad = &G_SPLIT, .flops = ar_flops_none,
	 .runtime = true},
	{ONNX("SplitToSequence", 1), IO(1, 2, 1, 1), .refuse = SEQUENCES},
	{ONNX("Sqrt", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .fold = ar_fold_arith, .fold_arg = AR_E_SQRT,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_OUTPUT,
	 .runtime = true},
	{ONNX("Squeeze", 1), IO(1, 2, 1, 1), .shape = ar_shape_squeeze,
	 .fold = ar_fold_copy, .alias = AR_ALIAS_VIEW, .grad = &G_PASS,
	 .flops = ar_flops_none, .runtime = true},
	{ONNX("Sub", 1), IO(2, 2, 1, 1), .shape = ar_shape_broadcast,
	 .fold = ar_fold_arith, .fold_arg = AR_E_SUB,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_ADD,
	 .runtime = true,
	 .layout = AR_LAYOUT_BROADCAST},
	{ONNX("Sum", 1), IO(1, VAR, 1, 1), .shape = ar_shape_broadcast,
	 .fold = ar_fold_arith, .fold_arg = AR_E_SUM,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_SUM,
	 .flops = ar_flops_sum, .runtime = true,
	 .layout = AR_LAYOUT_BROADCAST},
	/* x sigmoid(alpha x), alpha 1: SiLU, whose gradient reads x alone
	 * (derivatives.yaml silu); also the fused op of the Mul(x,
	 * Sigmoid(x)) that torch exports for it (grad_patterns.c). */
	{ONNX("Swish", 24), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_INPUT},
	{ONNX("Tan", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("Tanh", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_OUTPUT,
	 .runtime = true,
	 .layout = AR_LAYOUT_ELEMENTWISE},
	{ONNX("TfIdfVectorizer", 9), IO(1, 1, 1, 1), .shape = ar_shape_tfidf},
	{ONNX("ThresholdedRelu", 1), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{ONNX("Tile", 1), IO(2, 3, 1, 1), .shape = ar_shape_tile,
	 .grad = &G_PASS, .flops = ar_flops_none, .runtime = true},
	{ONNX("TopK", 1), IO(1, 2, 2, 2), .shape = ar_shape_topk},
	{ONNX("Transpose", 1), IO(1, 1, 1, 1), .shape = ar_shape_transpose,
	 .fold = ar_fold_transpose, .grad = &G_PASS, .flops = ar_flops_none,
	 .runtime = true},
	{ONNX("Trilu", 1), IO(1, 2, 1, 1), .shape = ar_shape_unary,
	 .runtime = true},
	{ONNX("Unique", 11), IO(1, 1, 1, 4), .shape = ar_shape_unique,
	 .flops = ar_flops_globalpool},
	{ONNX("Unsqueeze", 1), IO(1, 2, 1, 1), .shape = ar_shape_unsqueeze,
	 .fold = ar_fold_copy, .alias = AR_ALIAS_VIEW, .grad = &G_PASS,
	 .flops = ar_flops_none, .runtime = true},
	{ONNX("Upsample", 1), IO(1, 2, 1, 1),
	 .defaults = D_UPSAMPLE, .shape = ar_shape_resize,
	 .grad = &G_PASS, .runtime = true},
	{ONNX("Where", 1), IO(3, 3, 1, 1), .shape = ar_shape_where,
	 .fold = ar_fold_where, .grad = &G_WHERE, .runtime = true},
	{ONNX("Xor", 1), IO(2, 2, 1, 1), .shape = ar_shape_compare,
	 .fold = ar_fold_arith, .fold_arg = AR_E_XOR,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	/* ONNX's optimizers: each X, and its state, updated in place. */
	{PREVIEW("Adagrad"), IO(3, VAR, 1, VAR), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_optimizer, .alias = AR_ALIAS_INPLACE,
	 .inplace = B(2)},
	{PREVIEW("Adam"), IO(3, VAR, 1, VAR), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_optimizer, .alias = AR_ALIAS_INPLACE,
	 .inplace = B(2)},
	{PREVIEW("Momentum"), IO(3, VAR, 1, VAR), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_optimizer, .alias = AR_ALIAS_INPLACE,
	 .inplace = B(2)},
	/* An attention core as one kernel (--attention flash|efficient,
	 * train/attention.c; flash.c). */
	{FUSED(AR_FLASH_ATTENTION), IO(3, VAR, 1, 2), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_flash, .grad = &G_FLASH,
	 .train_outputs = ar_train_out_flash, .flops = ar_flops_flash},
	/* What --fuse preact makes (frontend/fuse.c): after inference. */
	{FUSED(AR_PREACT_CONV), IO(2, VAR, 1, 1), .flops = ar_flops_conv,
	 .runtime = true},
	/* A frozen linear stored quantised (--base-quant, train/base_quant.c;
	 * a model's own, train/prequant.c; quant_matmul.c): x, the stored
	 * weight, the bias, then scale, zero point and g_idx where the
	 * format keeps them apart; its step holds the dequantised weight. */
	{FUSED(AR_QUANT_MATMUL), IO(2, 6, 1, 1), .flags = AR_OP_NOFOLD,
	 .grad = &G_QMATMUL, .flops = ar_flops_qmatmul,
	 .scratch = ar_scratch_qmatmul},
	/* 1 / sqrt(x), torch.rsqrt, which ONNX lacks: the fused op of the
	 * Div(1, Sqrt(x)) torch exports for it (grad_patterns.c), whose
	 * gradient reads its output (derivatives.yaml rsqrt: -0.5 dY y^3). */
	{FUSED("Rsqrt"), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .grad = &G_BY_OUTPUT},
	/* The collectives of a per-device graph (train/parallel.c): no
	 * FLOPs; each one's gradient step is the collective that undoes it
	 * (an all-gather's a reduce-scatter, ...), reading no values. */
	{PARALLEL("AllGather"), IO(1, 1, 1, 1),
	 .flags = AR_OP_NOFOLD | AR_OP_RECOMPUTED,
	 .shape = ar_shape_allgather, .grad = &G_PASS,
	 .flops = ar_flops_none},
	{PARALLEL("AllReduce"), IO(1, 1, 1, 1), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_unary, .alias = AR_ALIAS_INPLACE, .inplace = B(0),
	 .grad = &G_PASS, .flops = ar_flops_none},
	/* An offloaded activation fetched back for the backward pass. */
	{PARALLEL("Fetch"), IO(0, 0, 1, 1), .flags = AR_OP_NOFOLD,
	 .flops = ar_flops_none},
	{PARALLEL("PipelineSend"), IO(1, 1, 1, 1),
	 .flags = AR_OP_NOFOLD | AR_OP_LOSS, .shape = ar_shape_send,
	 .grad = &G_PASS, .flops = ar_flops_none},
	{PARALLEL("ReduceScatter"), IO(1, 1, 1, 1), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_scatter, .grad = &G_PASS, .flops = ar_flops_none},
	{PARALLEL("Shard"), IO(1, 1, 1, 1), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_scatter, .grad = &G_PASS, .flops = ar_flops_none},
	/* The training step's own ops (train/train.c), besides each forward
	 * op's gradient (op + "Grad", described by its rule). */
	/* The optimizers' updates (train/optimizers.c): the parameter, its
	 * gradient, its master copy and the optimizer's state tensors. */
	{TRAINING("AdafactorUpdate"), IO(2, VAR, 1, 1),
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0)},
	{TRAINING("Adam4bitUpdate"), IO(2, VAR, 1, 1),
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0)},
	{TRAINING("Adam8bitUpdate"), IO(2, VAR, 1, 1),
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0)},
	{TRAINING("AdamUpdate"), IO(4, 5, 1, 1), .alias = AR_ALIAS_INPLACE,
	 .inplace = B(0)},
	{TRAINING("AdamW4bitUpdate"), IO(2, VAR, 1, 1),
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0)},
	{TRAINING("AdamW8bitUpdate"), IO(2, VAR, 1, 1),
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0)},
	{TRAINING("AdamWUpdate"), IO(2, VAR, 1, 1),
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0)},
	/* A chunk's loss and its log-probabilities, which its gradient
	 * reads (step.c). */
	{TRAINING("CrossEntropyChunk"), IO(2, 2, 1, 2)},
	{TRAINING("CrossEntropyChunkGrad"), IO(2, 2, 1, 1),
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0)},
	/* dq_accum and softmax_d of FlashAttention's backward (flash.c). */
	{TRAINING("FlashAttentionGrad"), IO(4, VAR, 1, 3),
	 .scratch = ar_scratch_flash_grad},
	{TRAINING("GradAccumulate"), IO(2, VAR, 1, 1),
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL},
	{TRAINING("LinearCrossEntropy"), IO(3, 3, 1, 2), .flags = AR_OP_LOSS,
	 .grad = &G_LINEAR_CE},
	{TRAINING("Lion8bitUpdate"), IO(2, VAR, 1, 1),
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0)},
	{TRAINING("LionUpdate"), IO(2, VAR, 1, 1),
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0)},
	{TRAINING("LogitsChunk"), IO(2, 2, 1, 1)},
	{TRAINING("LogitsChunkGradInput"), IO(2, 3, 1, 1),
	 .alias = AR_ALIAS_INPLACE, .inplace = B(2)},
	{TRAINING("LogitsChunkGradWeight"), IO(2, 3, 1, 1),
	 .alias = AR_ALIAS_INPLACE, .inplace = B(2)},
	{TRAINING("MomentumUpdate"), IO(3, 4, 1, 1), .alias = AR_ALIAS_INPLACE,
	 .inplace = B(0)},
	/* The dequantised weight again (quant_matmul.c). */
	{TRAINING("QuantizedMatMulGrad"), IO(2, 5, 1, 1),
	 .scratch = ar_scratch_qmatmul_grad},
	{TRAINING("SgdUpdate"), IO(2, 3, 1, 1), .alias = AR_ALIAS_INPLACE,
	 .inplace = B(0)},
	/* ONNX Runtime's contrib ops (its ContribOperators.md and schemas):
	 * what its quantization and transformer optimizer tools emit. */
	{MS("Attention"), IO(2, 7, 1, 2), .shape = ar_shape_attention,
	 KV({1, 4, 3}), .flops = ar_flops_attention},
	{MS("BiasAdd"), IO(3, 3, 1, 1), .shape = ar_shape_broadcast,
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0) | B(2)},
	{MS("BiasGelu"), IO(2, 2, 1, 1), .shape = ar_shape_broadcast,
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0)},
	{MS("BiasSplitGelu"), IO(2, 2, 1, 1),
	 .shape = ar_shape_bias_split_gelu},
	{MS("DequantizeLinear"), IO(2, 3, 1, 1), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_dequantize, .alias = AR_ALIAS_INPLACE,
	 .inplace = B(0)},
	{MS("DynamicQuantizeMatMul"), IO(3, 5, 1, 1),
	 .shape = ar_shape_dynamic_quantize_matmul, .flops = ar_flops_matmul},
	{MS("EmbedLayerNormalization"), IO(7, 9, 1, 3),
	 .shape = ar_shape_embedlayernorm},
	{MS("FastGelu"), IO(1, 2, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0)},
	{MS("FusedConv"), IO(2, 4, 1, 1), .shape = ar_shape_conv,
	 .flops = ar_flops_conv},
	{MS("FusedMatMul"), IO(2, 2, 1, 1), .shape = ar_shape_fusedmatmul,
	 .flops = ar_flops_fusedmatmul},
	{MS("Gelu"), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL, .runtime = true},
	{MS("GroupQueryAttention"), IO(7, 16, 1, 4), .shape = ar_shape_gqa,
	 KV({1, 3, 2}, {2, 4, 2}), .flops = ar_flops_mha},
	{MS("LayerNormalization"), IO(2, 3, 1, 3), .shape = ar_shape_layernorm},
	{MS("MatMulIntegerToFloat"), IO(4, 7, 1, 1),
	 .shape = ar_shape_matmul_integer_to_float, .flops = ar_flops_matmul},
	{MS("MatMulNBits"), IO(3, 6, 1, 1), .shape = ar_shape_matmulnbits,
	 .flops = ar_flops_matmulnbits},
	{MS("MultiHeadAttention"), IO(1, 10, 1, 4), .shape = ar_shape_mha,
	 KV({1, 6, 2}, {2, 7, 2}), .flops = ar_flops_mha},
	{MS("QGemm"), IO(6, 9, 1, 1), .requant = {1, 4, 7},
	 .shape = ar_shape_qgemm, .flops = ar_flops_qgemm},
	{MS("QLinearAdd"), IO(7, 8, 1, 1), .requant = {1, 4, 6, true},
	 .shape = ar_shape_qlinear_binary,
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0) | B(3)},
	{MS("QLinearAveragePool"), IO(4, 5, 1, 1),
	 .shape = ar_shape_qlinear_pool, .flops = ar_flops_pool},
	{MS("QLinearConcat"), IO(5, VAR, 1, 1),
	 .shape = ar_shape_qlinearconcat},
	{MS("QLinearGlobalAveragePool"), IO(4, 5, 1, 1),
	 .shape = ar_shape_qlinear_globalpool, .flops = ar_flops_globalpool},
	{MS("QLinearLeakyRelu"), IO(4, 5, 1, 1),
	 .shape = ar_shape_qlinear_unary, .alias = AR_ALIAS_INPLACE,
	 .inplace = B(0)},
	{MS("QLinearMul"), IO(7, 8, 1, 1), .requant = {1, 4, 6},
	 .shape = ar_shape_qlinear_binary,
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0) | B(3)},
	{MS("QLinearSigmoid"), IO(4, 5, 1, 1), .shape = ar_shape_qlinear_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = B(0)},
	{MS("QuantizeLinear"), IO(2, 3, 1, 1), .flags = AR_OP_NOFOLD,
	 .shape = ar_shape_quantize, .alias = AR_ALIAS_INPLACE,
	 .inplace = B(0)},
	{MS("QuickGelu"), IO(1, 1, 1, 1), .shape = ar_shape_unary,
	 .alias = AR_ALIAS_INPLACE, .inplace = ALL},
	{MS("RotaryEmbedding"), IO(4, 4, 1, 1), .shape = ar_shape_unary},
	{MS("SimplifiedLayerNormalization"), IO(2, 2, 1, 2),
	 .shape = ar_shape_layernorm},
	{MS("SkipLayerNormalization"), IO(3, 5, 1, 4),
	 .shape = ar_shape_skiplayernorm},
	{MS("SkipSimplifiedLayerNormalization"), IO(3, 4, 1, 4),
	 .shape = ar_shape_skiplayernorm},
	/* The channels-last variants --layout nhwc makes (shape_nhwc.c):
	 * the ONNX op's entry but for the shape function. */
	{NHWC("AveragePool"), IO(1, 1, 1, 1), .defaults = D_AVGPOOL,
	 .shape = ar_shape_nhwc, .flops = ar_flops_pool, .runtime = true},
	{NHWC("BatchNormalization"), IO(5, 5, 1, 1), .defaults = D_BATCHNORM,
	 .shape = ar_shape_nhwc, .alias = AR_ALIAS_INPLACE, .inplace = B(0),
	 .flops = ar_flops_batchnorm, .runtime = true},
	{NHWC("Conv"), IO(2, 3, 1, 1), .defaults = D_CONV, .filter = 1,
	 .shape = ar_shape_nhwc, .flops = ar_flops_conv, .runtime = true},
	{NHWC("GlobalAveragePool"), IO(1, 1, 1, 1), .shape = ar_shape_nhwc,
	 .flops = ar_flops_globalpool, .runtime = true},
	{NHWC("GlobalMaxPool"), IO(1, 1, 1, 1), .shape = ar_shape_nhwc,
	 .flops = ar_flops_globalpool, .runtime = true},
	{NHWC("MaxPool"), IO(1, 1, 1, 1), .defaults = D_MAXPOOL,
	 .shape = ar_shape_nhwc, .flops = ar_flops_pool, .runtime = true},
	{NHWC("QLinearConv"), IO(8, 9, 1, 1), .defaults = D_QLINEARCONV,
	 .filter = 3,
	 .requant = {1, 4, 6}, .shape = ar_shape_nhwc,
	 .flops = ar_flops_qlinearconv, .runtime = true},
};

#define NTABLE (int)(sizeof table / sizeof table[0])

static const char *domain_key(const char *domain)
{
	return !domain || ar_default_domain(domain) ? "" : domain;
}

/* Order of (domain, op, since); since 0 in a key stands below every entry. */
static int cmp_def(const ArOpDef *a, const ArOpDef *b)
{
	int c = strcmp(domain_key(a->domain), domain_key(b->domain));
	if (!c)
		c = strcmp(a->name, b->name);
	return c ? c : (a->since > b->since) - (a->since < b->since);
}

static bool sorted(void)
{
	for (int i = 1; i < NTABLE; i++)
		if (cmp_def(&table[i - 1], &table[i]) >= 0)
			return false;
	return true;
}

const ArOpDef *ar_op_table(int *count)
{
	*count = NTABLE;
	return table;
}

/*
 * Lookups go through a hash of (domain, op) to the op's first entry: every
 * pass asks the table about every node, and a binary search of string
 * compares showed in profiles.  The index is built on the first lookup
 * (the table is constant, so building it twice gives the same index).
 */
#define NSLOTS 1024             /* a power of two, over twice the entries */
_Static_assert(2 * NTABLE < NSLOTS, "the op index needs more slots");
static int16_t slot[NSLOTS];    /* entry index + 1; 0 for none */
/* At an op's first entry: how many entries the op has (they follow each
 * other), so its versions are walked without comparing names again. */
static int16_t nversions[NTABLE];
static bool indexed;

static uint32_t hash_key(const char *domain, const char *op)
{
	uint32_t h = 2166136261u;
	for (const char *c = domain_key(domain); *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	h = (h ^ 0xffu) * 16777619u;
	for (const char *c = op; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	return h;
}

static bool same_op(const ArOpDef *d, const char *domain, const char *op)
{
	return !strcmp(d->name, op) &&
	       !strcmp(domain_key(d->domain), domain_key(domain));
}

static void build_index(void)
{
	assert(sorted());
	for (int i = 0; i < NTABLE; i++) {
		uint32_t h;
		int k = i;
		if (i > 0 && same_op(&table[i - 1], table[i].domain,
				     table[i].name))
			continue;       /* the op's first entry is indexed */
		while (k < NTABLE && same_op(&table[k], table[i].domain,
					     table[i].name))
			k++;
		nversions[i] = (int16_t)(k - i);
		h = hash_key(table[i].domain, table[i].name);
		while (slot[h & (NSLOTS - 1)])
			h++;
		slot[h & (NSLOTS - 1)] = (int16_t)(i + 1);
	}
	indexed = true;
}

const ArOpDef *ar_op_find(const char *domain, const char *op, int64_t opset)
{
	const ArOpDef *best = NULL;
	int i = -1;

	if (!indexed)
		build_index();
	for (uint32_t h = hash_key(domain, op); slot[h & (NSLOTS - 1)]; h++)
		if (same_op(&table[slot[h & (NSLOTS - 1)] - 1], domain, op)) {
			i = slot[h & (NSLOTS - 1)] - 1;
			break;
		}
	/* Entries of one op follow each other in increasing since. */
	for (int end = i >= 0 ? i + nversions[i] : i;
	     i < end && (table[i].since <= opset || opset <= 0); i++)
		best = &table[i];
	return best;
}

const ArOpDef *ar_op_of(const ArNode *n)
{
	/* The cache is a memo, not part of the node's value: no node is
	 * defined const, so writing it through the cast is sound. */
	ArNode *m = (ArNode *)n;
	if (!n->def_known || n->def_opset != n->opset) {
		m->def = ar_op_find(n->domain, n->op, n->opset);
		m->def_opset = n->opset;
		m->def_known = true;
	}
	return n->def;
}

const ArGradRule *ar_op_grad(const ArNode *n)
{
	const ArOpDef *d = ar_op_of(n);
	return d ? d->grad : NULL;
}

ArGradReads ar_grad_reads(const ArGradRule *r, uint32_t need)
{
	ArGradReads u = {0, 0};
	for (int j = 0; j < AR_GRAD_NAMED; j++)
		if (need & r->diff & AR_BIT(j)) {
			u.in |= r->reads[j].in;
			u.out |= r->reads[j].out;
		}
	return u;
}

bool ar_op_torch_view(const ArGraph *g, const ArNode *n)
{
	const ArTensor *idx;
	if (!strcmp(n->op, "Slice") && !n->domain[0])
		return true;
	if (strcmp(n->op, "Gather") || n->domain[0] || n->nexplicit < 2 ||
	    n->inputs[1] < 0)
		return false;
	/* index_select (a 1-D index) and embeddings copy; select does not. */
	idx = &g->tensors[n->inputs[1]];
	return idx->rank == 0 && (idx->kind == AR_TK_CONSTANT ||
				  idx->kind == AR_TK_WEIGHT);
}

bool ar_grad_moves(const ArGradRule *r, int j)
{
	if (!r || j >= 32 || !(r->diff & AR_BIT(j)))
		return false;
	return j >= AR_GRAD_NAMED ||
	       (!(r->reads[j].in & r->diff) && !r->reads[j].out);
}

uint32_t ar_op_inplace_inputs(const ArNode *n)
{
	const ArOpDef *d = ar_op_of(n);
	size_t len = strlen(n->op), sl = strlen(AR_GRAD_SUFFIX);
	char fwd[128];

	if (d)
		return d->alias == AR_ALIAS_INPLACE ? d->inplace : 0;
	if (strcmp(domain_key(n->domain), domain_key(AR_TRAIN_DOMAIN)) ||
	    len <= sl || len - sl >= sizeof fwd ||
	    strcmp(n->op + len - sl, AR_GRAD_SUFFIX))
		return 0;
	memcpy(fwd, n->op, len - sl);
	fwd[len - sl] = 0;
	d = ar_op_find(NULL, fwd, INT64_MAX);
	return d && d->grad ? d->grad->inplace : 0;
}
