/*
 * optable.h — every op the runtime runs: ART_OPS(X) calls
 * X(ID, DOMAIN, OP, FUNCTION, INPLACE) once per op, "" being ONNX's own
 * domain and ID the name the header's PREFIX_USES_ID macros use (the
 * op's, after its domain when that is not ONNX's, '.' made '_').
 * INPLACE says which input an output may overwrite: none (IP_NO), input
 * 0 (IP_YES), or any operand of the output's size (IP_ANY: binary
 * elementwise ops).  runtime/optable.c makes the table of it, whole or
 * cut to one model's ops; it is the one list of what the runtime has.
 */
#ifndef ARENAC_RT_OPTABLE_H
#define ARENAC_RT_OPTABLE_H

#include "ops.h"

typedef enum { IP_NO, IP_YES, IP_ANY } InPlace;

typedef struct art_op {
	const char *domain, *op;
	OpFn fn;            /* NULL: the table's end mark (optable.c) */
	InPlace inplace;
	int places_itself;  /* ART_PLACES_ITSELF_<fn> */
} art_op;

/* The kernels that check a noop step's placement themselves (views and
 * elided concats: they copy nothing when it is right), which the
 * interpreter runs for noop steps too; a flag of the table rather than
 * a comparison with their addresses, which would link them into every
 * firmware. */
#define ART_PLACES_ITSELF_op_copy 1
#define ART_PLACES_ITSELF_op_dropout 1
#define ART_PLACES_ITSELF_op_concat 1

extern const art_op art_ops[];
extern const int art_nops;

#define ART_OPS(X) \
	/* convolution, pooling, normalisation (ops_nn.c) */ \
	X(Conv, "", "Conv", op_conv, IP_NO) \
	X(ConvTranspose, "", "ConvTranspose", op_conv, IP_NO) \
	X(arenac_PreactConv, "arenac", "PreactConv", op_conv, IP_NO) /* --fuse preact */ \
	X(MaxPool, "", "MaxPool", op_pool, IP_NO) \
	X(AveragePool, "", "AveragePool", op_pool, IP_NO) \
	X(GlobalAveragePool, "", "GlobalAveragePool", op_global_pool, IP_NO) \
	X(GlobalMaxPool, "", "GlobalMaxPool", op_global_pool, IP_NO) \
	X(LRN, "", "LRN", op_lrn, IP_NO) \
	X(BatchNormalization, "", "BatchNormalization", op_batchnorm, IP_YES) \
	X(InstanceNormalization, "", "InstanceNormalization", op_instancenorm, IP_YES) \
	X(LayerNormalization, "", "LayerNormalization", op_layernorm, IP_YES) \
	X(MeanVarianceNormalization, "", "MeanVarianceNormalization", op_mvn, IP_YES) \
	X(Softmax, "", "Softmax", op_softmax, IP_YES) \
	X(LogSoftmax, "", "LogSoftmax", op_softmax, IP_YES) \
	X(Hardmax, "", "Hardmax", op_softmax, IP_YES) \
	X(Gemm, "", "Gemm", op_gemm, IP_NO) \
	X(MatMul, "", "MatMul", op_matmul, IP_NO) \
	X(RNN, "", "RNN", op_rnn, IP_NO) \
	X(GRU, "", "GRU", op_rnn, IP_NO) \
	X(LSTM, "", "LSTM", op_rnn, IP_NO) \
	X(NegativeLogLikelihoodLoss, "", "NegativeLogLikelihoodLoss", op_loss, IP_NO) \
	X(SoftmaxCrossEntropyLoss, "", "SoftmaxCrossEntropyLoss", op_loss, IP_NO) \
	/* control flow (ops_control.c) */ \
	X(If, "", "If", op_if, IP_NO) \
	/* elementwise (ops_elementwise.c) */ \
	X(Relu, "", "Relu", op_unary, IP_YES) \
	X(Sigmoid, "", "Sigmoid", op_unary, IP_YES) \
	X(HardSigmoid, "", "HardSigmoid", op_unary, IP_YES) \
	X(HardSwish, "", "HardSwish", op_unary, IP_YES) \
	X(LeakyRelu, "", "LeakyRelu", op_unary, IP_YES) \
	X(Tanh, "", "Tanh", op_unary, IP_YES) \
	X(Exp, "", "Exp", op_unary, IP_YES) \
	X(Log, "", "Log", op_unary, IP_YES) \
	X(Neg, "", "Neg", op_unary, IP_YES) \
	X(Abs, "", "Abs", op_unary, IP_YES) \
	X(Sqrt, "", "Sqrt", op_unary, IP_YES) \
	X(Reciprocal, "", "Reciprocal", op_unary, IP_YES) \
	X(Erf, "", "Erf", op_unary, IP_YES) \
	X(Gelu, "", "Gelu", op_unary, IP_YES) \
	X(com_microsoft_Gelu, "com.microsoft", "Gelu", op_unary, IP_YES) /* the exact form */ \
	X(Sin, "", "Sin", op_unary, IP_YES) \
	X(Cos, "", "Cos", op_unary, IP_YES) \
	X(Tan, "", "Tan", op_unary, IP_YES) \
	X(Asin, "", "Asin", op_unary, IP_YES) \
	X(Acos, "", "Acos", op_unary, IP_YES) \
	X(Atan, "", "Atan", op_unary, IP_YES) \
	X(Sinh, "", "Sinh", op_unary, IP_YES) \
	X(Cosh, "", "Cosh", op_unary, IP_YES) \
	X(Asinh, "", "Asinh", op_unary, IP_YES) \
	X(Acosh, "", "Acosh", op_unary, IP_YES) \
	X(Atanh, "", "Atanh", op_unary, IP_YES) \
	X(Floor, "", "Floor", op_unary, IP_YES) \
	X(Ceil, "", "Ceil", op_unary, IP_YES) \
	X(Round, "", "Round", op_unary, IP_YES) \
	X(Sign, "", "Sign", op_unary, IP_YES) \
	X(Softplus, "", "Softplus", op_unary, IP_YES) \
	X(Softsign, "", "Softsign", op_unary, IP_YES) \
	X(Elu, "", "Elu", op_unary, IP_YES) \
	X(Selu, "", "Selu", op_unary, IP_YES) \
	X(Celu, "", "Celu", op_unary, IP_YES) \
	X(ThresholdedRelu, "", "ThresholdedRelu", op_unary, IP_YES) \
	X(Shrink, "", "Shrink", op_unary, IP_YES) \
	X(Mish, "", "Mish", op_unary, IP_YES) \
	X(IsNaN, "", "IsNaN", op_unary, IP_YES) \
	X(IsInf, "", "IsInf", op_unary, IP_YES) \
	X(Not, "", "Not", op_unary, IP_YES) \
	X(Clip, "", "Clip", op_unary, IP_YES) \
	X(Add, "", "Add", op_binary, IP_ANY) \
	X(Sum, "", "Sum", op_binary, IP_ANY) \
	X(Mean, "", "Mean", op_binary, IP_ANY) \
	X(Sub, "", "Sub", op_binary, IP_ANY) \
	X(Mul, "", "Mul", op_binary, IP_ANY) \
	X(Div, "", "Div", op_binary, IP_ANY) \
	X(Max, "", "Max", op_binary, IP_ANY) \
	X(Min, "", "Min", op_binary, IP_ANY) \
	X(Pow, "", "Pow", op_binary, IP_ANY) \
	X(Mod, "", "Mod", op_binary, IP_ANY) \
	X(And, "", "And", op_binary, IP_ANY) \
	X(Or, "", "Or", op_binary, IP_ANY) \
	X(Xor, "", "Xor", op_binary, IP_ANY) \
	X(Equal, "", "Equal", op_binary, IP_ANY) \
	X(Less, "", "Less", op_binary, IP_ANY) \
	X(LessOrEqual, "", "LessOrEqual", op_binary, IP_ANY) \
	X(Greater, "", "Greater", op_binary, IP_ANY) \
	X(GreaterOrEqual, "", "GreaterOrEqual", op_binary, IP_ANY) \
	X(BitShift, "", "BitShift", op_binary, IP_ANY) \
	X(PRelu, "", "PRelu", op_binary, IP_YES) \
	X(Where, "", "Where", op_where, IP_ANY) \
	X(Cast, "", "Cast", op_cast, IP_YES) \
	X(CastLike, "", "CastLike", op_cast, IP_YES) \
	/* reductions (ops_reduce.c) */ \
	X(ReduceSum, "", "ReduceSum", op_reduce, IP_NO) \
	X(ReduceMean, "", "ReduceMean", op_reduce, IP_NO) \
	X(ReduceMax, "", "ReduceMax", op_reduce, IP_NO) \
	X(ReduceMin, "", "ReduceMin", op_reduce, IP_NO) \
	X(ReduceProd, "", "ReduceProd", op_reduce, IP_NO) \
	X(ReduceL1, "", "ReduceL1", op_reduce, IP_NO) \
	X(ReduceL2, "", "ReduceL2", op_reduce, IP_NO) \
	X(ReduceLogSum, "", "ReduceLogSum", op_reduce, IP_NO) \
	X(ReduceLogSumExp, "", "ReduceLogSumExp", op_reduce, IP_NO) \
	X(ReduceSumSquare, "", "ReduceSumSquare", op_reduce, IP_NO) \
	X(ArgMax, "", "ArgMax", op_argreduce, IP_NO) \
	X(ArgMin, "", "ArgMin", op_argreduce, IP_NO) \
	X(CumSum, "", "CumSum", op_cumsum, IP_YES) \
	/* data movement (ops_layout.c, ops_resize.c) */ \
	X(Reshape, "", "Reshape", op_copy, IP_YES) \
	X(Flatten, "", "Flatten", op_copy, IP_YES) \
	X(Squeeze, "", "Squeeze", op_copy, IP_YES) \
	X(Unsqueeze, "", "Unsqueeze", op_copy, IP_YES) \
	X(Identity, "", "Identity", op_copy, IP_YES) \
	X(Dropout, "", "Dropout", op_dropout, IP_YES) \
	X(Concat, "", "Concat", op_concat, IP_NO) \
	X(Split, "", "Split", op_split, IP_NO) \
	X(Transpose, "", "Transpose", op_transpose, IP_NO) \
	X(DepthToSpace, "", "DepthToSpace", op_depth_space, IP_NO) \
	X(SpaceToDepth, "", "SpaceToDepth", op_depth_space, IP_NO) \
	X(Slice, "", "Slice", op_slice, IP_NO) \
	X(Pad, "", "Pad", op_pad, IP_NO) \
	X(Expand, "", "Expand", op_expand, IP_NO) \
	X(Tile, "", "Tile", op_tile, IP_NO) \
	X(Trilu, "", "Trilu", op_trilu, IP_YES) \
	X(Gather, "", "Gather", op_gather, IP_NO) \
	X(GatherElements, "", "GatherElements", op_gather, IP_NO) \
	X(GatherND, "", "GatherND", op_gather_nd, IP_NO) \
	X(ScatterElements, "", "ScatterElements", op_scatter, IP_NO) \
	X(Scatter, "", "Scatter", op_scatter, IP_NO) \
	X(ScatterND, "", "ScatterND", op_scatter, IP_NO) \
	X(ReverseSequence, "", "ReverseSequence", op_reverse_sequence, IP_NO) \
	X(Resize, "", "Resize", op_resize, IP_NO) \
	X(Upsample, "", "Upsample", op_resize, IP_NO) \
	/* values (ops_values.c) */ \
	X(Constant, "", "Constant", op_constant, IP_NO) \
	X(Shape, "", "Shape", op_shape, IP_NO) \
	X(Size, "", "Size", op_shape, IP_NO) \
	X(Range, "", "Range", op_range, IP_NO) \
	X(EyeLike, "", "EyeLike", op_eyelike, IP_NO) \
	/* quantized (ops_quant.c) */ \
	X(QuantizeLinear, "", "QuantizeLinear", op_quantize, IP_YES) \
	X(DequantizeLinear, "", "DequantizeLinear", op_dequantize, IP_YES) \
	X(DynamicQuantizeLinear, "", "DynamicQuantizeLinear", op_dynamic_quantize, IP_NO) \
	X(ConvInteger, "", "ConvInteger", op_conv_int, IP_NO) \
	X(QLinearConv, "", "QLinearConv", op_conv_int, IP_NO) \
	X(MatMulInteger, "", "MatMulInteger", op_matmul_int, IP_NO) \
	X(QLinearMatMul, "", "QLinearMatMul", op_matmul_int, IP_NO) \
	/* channels-last variants, --layout nhwc (ops_nn.c, ops_quant.c) */ \
	X(com_ms_internal_nhwc_Conv, ART_NHWC_DOMAIN, "Conv", op_nhwc_conv, IP_NO) \
	X(com_ms_internal_nhwc_MaxPool, ART_NHWC_DOMAIN, "MaxPool", op_nhwc_pool, IP_NO) \
	X(com_ms_internal_nhwc_AveragePool, ART_NHWC_DOMAIN, "AveragePool", op_nhwc_pool, IP_NO) \
	X(com_ms_internal_nhwc_GlobalAveragePool, ART_NHWC_DOMAIN, "GlobalAveragePool", op_nhwc_global_pool, IP_NO) \
	X(com_ms_internal_nhwc_GlobalMaxPool, ART_NHWC_DOMAIN, "GlobalMaxPool", op_nhwc_global_pool, IP_NO) \
	X(com_ms_internal_nhwc_BatchNormalization, ART_NHWC_DOMAIN, "BatchNormalization", op_nhwc_batchnorm, IP_YES) \
	X(com_ms_internal_nhwc_QLinearConv, ART_NHWC_DOMAIN, "QLinearConv", op_nhwc_conv_int, IP_NO)

#endif
