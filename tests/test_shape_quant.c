/*
 * test_shape_quant.c — shapes and sizes of the quantized ops, the sub-byte
 * and FLOAT8 element types, ONNX Runtime's com.microsoft transformer ops
 * and Einsum, on graphs built in code: output shapes and types, exact
 * byte sizes, the scale and zero point each quantized tensor records, KV
 * cache shapes with and without --max-seq, FLOP counts, and the errors a
 * user sees for layouts that do not fit.
 */
#include "shape_build.h"

#include "infer_ops.h"

#define F32(g, name, ...) weight(g, name, AR_DT_FLOAT, NDIMS(__VA_ARGS__), \
				 DIMS(__VA_ARGS__), NULL)

static int scalar_f(ArGraph *g, const char *name, float v)
{
	return weight(g, name, AR_DT_FLOAT, 0, NULL, &v);
}

static int scalar_u8(ArGraph *g, const char *name, uint8_t v)
{
	return weight(g, name, AR_DT_UINT8, 0, NULL, &v);
}

static int id(ArGraph *g, const char *name)
{
	return ar_graph_find(g, name);
}

static void quant_is(ArGraph *g, const char *t, const char *scale,
		     const char *zp, int axis, int64_t block)
{
	const ArQuant *q = &T(g, t)->quant;
	assert_int_equal(q->scale, scale ? id(g, scale) : -1);
	assert_int_equal(q->zero_point, zp ? id(g, zp) : -1);
	assert_int_equal(q->axis, axis);
	assert_int_equal(q->block, block);
}

static int64_t flops_of(ArGraph *g, const char *out)
{
	return ar_node_flops(g, &g->nodes[T(g, out)->producer]);
}

static void test_dtype_sizes(void **state)
{
	ArGraph *g = ar_graph_new("dt");
	const uint8_t packed[] = {0x9f};
	ArTensor *t;
	(void)state;
	input(g, "i4", AR_DT_INT4, 2, DIMS(3, 5));
	input(g, "u4", AR_DT_UINT4, 1, DIMS(1));
	input(g, "i2", AR_DT_INT2, 1, DIMS(7));
	input(g, "f8", AR_DT_FLOAT8E4M3FN, 2, DIMS(3, 3));
	input(g, "f4", AR_DT_FLOAT4E2M1, 1, DIMS(5));
	/* Never rounded per element: 2^40 nibbles are 2^39 bytes. */
	input(g, "big", AR_DT_UINT4, 2, DIMS((int64_t)1 << 20, 1 << 20));
	assert_int_equal(T(g, "i4")->bytes, 8);
	assert_int_equal(T(g, "u4")->bytes, 1);
	assert_int_equal(T(g, "i2")->bytes, 2);
	assert_int_equal(T(g, "f8")->bytes, 9);
	assert_int_equal(T(g, "f4")->bytes, 3);
	assert_int_equal(T(g, "big")->bytes, (int64_t)1 << 39);
	assert_int_equal(ar_dtype_bits(AR_DT_INT4), 4);
	assert_int_equal(ar_dtype_size(AR_DT_INT4), 0);
	assert_int_equal(ar_dtype_size(AR_DT_FLOAT8E5M2FNUZ), 1);
	assert_string_equal(ar_dtype_name(AR_DT_FLOAT8E4M3FNUZ),
			    "float8e4m3fnuz");
	assert_string_equal(ar_dtype_name(AR_DT_UINT4), "uint4");
	assert_string_equal(ar_dtype_name(AR_DT_INT2), "int2");
	/* Packed values: the first element in the low bits. */
	weight(g, "w4", AR_DT_INT4, 1, DIMS(2), packed);
	t = (ArTensor *)T(g, "w4");
	assert_int_equal(ar_get_int(t, 0), -1);
	assert_int_equal(ar_get_int(t, 1), -7);
	t->dtype = AR_DT_UINT4;
	assert_int_equal(ar_get_int(t, 0), 15);
	assert_int_equal(ar_get_int(t, 1), 9);
	ar_graph_free(g);
}

static void test_qdq_per_tensor(void **state)
{
	ArGraph *g = ar_graph_new("qdq");
	(void)state;
	INPUT(g, "x", 1, 3, 4, 4);
	scalar_f(g, "s", 0.5f);
	scalar_u8(g, "z", 3);
	node(g, "QuantizeLinear", 13, "x,s,z", "q");
	node(g, "DequantizeLinear", 13, "q,s,z", "y");
	node(g, "QuantizeLinear", 13, "y,s,", "q2");
	ok(g);
	SHAPE(g, "q", 1, 3, 4, 4);
	assert_int_equal(T(g, "q")->dtype, AR_DT_UINT8);
	assert_int_equal(T(g, "q")->bytes, 48);
	assert_int_equal(T(g, "y")->dtype, AR_DT_FLOAT);
	quant_is(g, "q", "s", "z", -1, 0);
	/* No zero point: uint8, zero. */
	assert_int_equal(T(g, "q2")->dtype, AR_DT_UINT8);
	quant_is(g, "q2", "s", NULL, -1, 0);
	quant_is(g, "x", NULL, NULL, -1, 0);
	ar_graph_free(g);
}

static void test_per_axis(void **state)
{
	ArGraph *g = ar_graph_new("axis");
	int n;
	(void)state;
	input(g, "w", AR_DT_INT8, 4, DIMS(8, 3, 3, 3));
	F32(g, "s8", 8);
	weight(g, "z8", AR_DT_INT8, 1, DIMS(8), NULL);
	F32(g, "s3", 3);
	n = node(g, "DequantizeLinear", 13, "w,s8,z8", "a");
	attr_i(g, n, "axis", 0);
	node(g, "DequantizeLinear", 13, "w,s3", "b");
	ok(g);
	quant_is(g, "w", "s8", "z8", 0, 0);
	SHAPE(g, "b", 8, 3, 3, 3);
	ar_graph_free(g);

	g = ar_graph_new("bad");
	input(g, "w", AR_DT_INT8, 2, DIMS(8, 4));
	F32(g, "s5", 5);
	node(g, "DequantizeLinear", 13, "w,s5", "y");
	fails(g, "'s5' holds 5 values: neither one for all of 'w' nor one "
	      "per index of its axis 1");
	ar_graph_free(g);

	g = ar_graph_new("zp");
	input(g, "w", AR_DT_INT8, 2, DIMS(8, 4));
	F32(g, "s", 4);
	weight(g, "z", AR_DT_INT8, 1, DIMS(2), NULL);
	node(g, "DequantizeLinear", 13, "w,s,z", "y");
	fails(g, "zero point 'z' and scale 's' differ in shape");
	ar_graph_free(g);

	g = ar_graph_new("type");
	input(g, "w", AR_DT_INT8, 1, DIMS(4));
	scalar_f(g, "s", 1.f);
	scalar_u8(g, "z", 0);
	node(g, "DequantizeLinear", 13, "w,s,z", "y");
	fails(g, "zero point 'z' is uint8, input 'w' int8");
	ar_graph_free(g);
}

/* Opset 21: int4 weights with a scale per block of 16 along axis 1. */
static void test_blocked(void **state)
{
	ArGraph *g = ar_graph_new("blk");
	int n;
	(void)state;
	weight(g, "w", AR_DT_INT4, 2, DIMS(64, 33), NULL);
	F32(g, "s", 64, 3);
	INPUT(g, "x", 5, 7);
	scalar_f(g, "xs", 0.1f);
	n = node(g, "DequantizeLinear", 21, "w,s", "wf");
	attr_i(g, n, "axis", 1);
	attr_i(g, n, "block_size", 16);
	n = node(g, "QuantizeLinear", 21, "x,xs", "x4");
	attr_i(g, n, "output_dtype", AR_DT_INT4);
	ok(g);
	assert_int_equal(T(g, "w")->bytes, 64 * 33 / 2);
	quant_is(g, "w", "s", NULL, 1, 16);
	SHAPE(g, "wf", 64, 33);
	assert_int_equal(T(g, "x4")->dtype, AR_DT_INT4);
	assert_int_equal(T(g, "x4")->bytes, 18);     /* ceil(35 / 2) */
	ar_graph_free(g);

	g = ar_graph_new("bad");
	weight(g, "w", AR_DT_INT4, 2, DIMS(64, 33), NULL);
	F32(g, "s", 64, 2);
	n = node(g, "DequantizeLinear", 21, "w,s", "wf");
	attr_i(g, n, "block_size", 16);
	fails(g, "blocked scale 's' has 2 at axis 1; block_size 16 over 'w' "
	      "needs 3");
	ar_graph_free(g);
}

static void test_dynamic_quantize(void **state)
{
	ArGraph *g = ar_graph_new("dq");
	(void)state;
	INPUT(g, "x", 2, 5);
	input(g, "b", AR_DT_INT8, 2, DIMS(5, 3));
	node(g, "DynamicQuantizeLinear", 11, "x", "y,ys,yz");
	node(g, "MatMulInteger", 10, "y,b,yz", "acc");
	ok(g);
	assert_int_equal(T(g, "y")->dtype, AR_DT_UINT8);
	assert_int_equal(T(g, "ys")->rank, 0);
	assert_int_equal(T(g, "ys")->dtype, AR_DT_FLOAT);
	assert_int_equal(T(g, "yz")->dtype, AR_DT_UINT8);
	quant_is(g, "y", "ys", "yz", -1, 0);
	SHAPE(g, "acc", 2, 3);
	assert_int_equal(T(g, "acc")->dtype, AR_DT_INT32);
	assert_int_equal(flops_of(g, "acc"), 2 * 6 * 5);
	ar_graph_free(g);
}

static void test_qlinearconv(void **state)
{
	ArGraph *g = ar_graph_new("qconv");
	int n;
	(void)state;
	input(g, "x", AR_DT_UINT8, 4, DIMS(1, 3, 8, 8));
	scalar_f(g, "xs", 0.02f);
	scalar_u8(g, "xz", 128);
	weight(g, "w", AR_DT_INT8, 4, DIMS(4, 3, 3, 3), NULL);
	F32(g, "ws", 4);
	weight(g, "wz", AR_DT_INT8, 1, DIMS(4), NULL);
	scalar_f(g, "ys", 0.05f);
	scalar_u8(g, "yz", 120);
	weight(g, "bias", AR_DT_INT32, 1, DIMS(4), NULL);
	n = node(g, "QLinearConv", 10, "x,xs,xz,w,ws,wz,ys,yz,bias", "y");
	ATTR_INTS(g, n, "pads", 1, 1, 1, 1);
	n = node(g, "ConvInteger", 10, "x,w,xz,wz", "acc");
	ATTR_INTS(g, n, "pads", 1, 1, 1, 1);
	ok(g);
	SHAPE(g, "y", 1, 4, 8, 8);
	assert_int_equal(T(g, "y")->dtype, AR_DT_UINT8);
	quant_is(g, "x", "xs", "xz", -1, 0);
	quant_is(g, "w", "ws", "wz", 0, 0);
	quant_is(g, "y", "ys", "yz", -1, 0);
	/* 256 outputs x 27 multiply-adds, plus the bias. */
	assert_int_equal(flops_of(g, "y"), 256 * 27 * 2 + 256);
	assert_int_equal(T(g, "acc")->dtype, AR_DT_INT32);
	assert_int_equal(flops_of(g, "acc"), 256 * 27 * 2);
	ar_graph_free(g);
}

/* --layout nhwc's channels-last QLinearConv reads its filter in
 * TFLite's layout (ops.h ar_filter_perm): OHWI, or [1, kH, kW, M] when
 * depthwise, its per-channel scales on the M axis. */
static void test_qlinearconv_nhwc(void **state)
{
	ArGraph *g = ar_graph_new("qconv_nhwc");
	int n;
	(void)state;
	g->opset = 13;      /* the ONNX op the variant's shape is */
	input(g, "x", AR_DT_UINT8, 4, DIMS(1, 8, 8, 4));
	scalar_f(g, "xs", 0.02f);
	scalar_u8(g, "xz", 128);
	weight(g, "w", AR_DT_INT8, 4, DIMS(6, 3, 3, 4), NULL);
	F32(g, "ws", 6);
	weight(g, "dw", AR_DT_INT8, 4, DIMS(1, 3, 3, 8), NULL);
	F32(g, "dws", 8);
	scalar_f(g, "ys", 0.05f);
	scalar_u8(g, "yz", 120);
	n = node_in(g, AR_NHWC_DOMAIN, "QLinearConv", 1,
		    "x,xs,xz,w,ws,,ys,yz", "y");
	ATTR_INTS(g, n, "pads", 1, 1, 1, 1);
	n = node_in(g, AR_NHWC_DOMAIN, "QLinearConv", 1,
		    "x,xs,xz,dw,dws,,ys,yz", "d");
	ATTR_INTS(g, n, "pads", 1, 1, 1, 1);
	attr_i(g, n, "group", 4);
	ok(g);
	SHAPE(g, "y", 1, 8, 8, 6);
	SHAPE(g, "d", 1, 8, 8, 8);
	quant_is(g, "w", "ws", NULL, 0, 0);
	quant_is(g, "dw", "dws", NULL, 3, 0);
	/* 384 outputs x 36 multiply-adds; 512 x 9, depthwise. */
	assert_int_equal(flops_of(g, "y"), 384 * 36 * 2);
	assert_int_equal(flops_of(g, "d"), 512 * 9 * 2);
	ar_graph_free(g);
}

static void test_qlinearmatmul(void **state)
{
	ArGraph *g = ar_graph_new("qmm");
	(void)state;
	input(g, "a", AR_DT_UINT8, 3, DIMS(2, 4, 8));
	scalar_f(g, "as", 0.1f);
	scalar_u8(g, "az", 1);
	weight(g, "b", AR_DT_INT8, 2, DIMS(8, 6), NULL);
	F32(g, "bs", 6);
	weight(g, "bz", AR_DT_INT8, 1, DIMS(6), NULL);
	scalar_f(g, "ys", 0.2f);
	scalar_u8(g, "yz", 2);
	node(g, "QLinearMatMul", 10, "a,as,az,b,bs,bz,ys,yz", "y");
	ok(g);
	SHAPE(g, "y", 2, 4, 6);
	quant_is(g, "b", "bs", "bz", 1, 0);
	quant_is(g, "y", "ys", "yz", -1, 0);
	assert_int_equal(flops_of(g, "y"), 2 * 48 * 8);
	ar_graph_free(g);
}

static void test_ms_qlinear(void **state)
{
	ArGraph *g = ar_graph_new("ms");
	const char *ms = "com.microsoft";
	int n;
	(void)state;
	input(g, "a", AR_DT_INT8, 3, DIMS(1, 4, 1));
	input(g, "b", AR_DT_INT8, 3, DIMS(3, 1, 5));
	input(g, "nhwc", AR_DT_UINT8, 4, DIMS(1, 8, 8, 4));
	input(g, "c1", AR_DT_UINT8, 3, DIMS(1, 2, 4));
	input(g, "c2", AR_DT_UINT8, 3, DIMS(1, 3, 4));
	scalar_f(g, "s", 0.1f);
	scalar_u8(g, "z", 7);
	weight(g, "zi", AR_DT_INT8, 0, NULL, NULL);
	node_in(g, ms, "QLinearAdd", 1, "a,s,zi,b,s,zi,s,zi", "add");
	node_in(g, ms, "QLinearMul", 1, "a,s,,b,s,,s", "mul");
	node_in(g, ms, "QLinearSigmoid", 1, "add,s,zi,s,zi", "sig");
	n = node_in(g, ms, "QLinearLeakyRelu", 1, "sig,s,zi,s,zi", "lr");
	n = node_in(g, ms, "QLinearGlobalAveragePool", 1, "nhwc,s,z,s,z",
		    "gap");
	attr_i(g, n, "channels_last", 1);
	n = node_in(g, ms, "QLinearAveragePool", 1, "nhwc,s,z,s,z", "ap");
	attr_i(g, n, "channels_last", 1);
	ATTR_INTS(g, n, "kernel_shape", 3, 3);
	ATTR_INTS(g, n, "strides", 2, 2);
	n = node_in(g, ms, "QLinearConcat", 1, "s,z,c1,s,z,c2,s,z", "cat");
	attr_i(g, n, "axis", 1);
	ok(g);
	SHAPE(g, "add", 3, 4, 5);
	assert_int_equal(T(g, "add")->dtype, AR_DT_INT8);
	quant_is(g, "add", "s", "zi", -1, 0);
	quant_is(g, "a", "s", "zi", -1, 0);
	SHAPE(g, "mul", 3, 4, 5);
	quant_is(g, "mul", "s", NULL, -1, 0);
	SHAPE(g, "lr", 3, 4, 5);
	SHAPE(g, "gap", 1, 1, 1, 4);
	SHAPE(g, "ap", 1, 3, 3, 4);
	assert_int_equal(flops_of(g, "ap"), 36 * 9);
	SHAPE(g, "cat", 1, 5, 4);
	quant_is(g, "cat", "s", "z", -1, 0);
	quant_is(g, "c2", "s", "z", -1, 0);
	ar_graph_free(g);
}

static void test_ms_matmuls(void **state)
{
	ArGraph *g = ar_graph_new("mm");
	const char *ms = "com.microsoft";
	int n;
	(void)state;
	input(g, "a", AR_DT_UINT8, 2, DIMS(4, 8));
	INPUT(g, "af", 3, 5, 64);
	scalar_f(g, "s", 0.1f);
	scalar_u8(g, "z", 7);
	weight(g, "b", AR_DT_INT8, 2, DIMS(6, 8), NULL);
	weight(g, "bi", AR_DT_INT8, 2, DIMS(64, 6), NULL);
	weight(g, "b2", AR_DT_INT8, 2, DIMS(8, 6), NULL);
	F32(g, "bs", 6);
	weight(g, "nb", AR_DT_UINT8, 3, DIMS(32, 2, 16), NULL);
	F32(g, "nbs", 64);
	n = node_in(g, ms, "QGemm", 1, "a,s,z,b,bs,,,s,z", "yq");
	attr_i(g, n, "transB", 1);
	n = node_in(g, ms, "QGemm", 1, "a,s,z,b,s,", "yf");
	attr_i(g, n, "transB", 1);
	node_in(g, ms, "DynamicQuantizeMatMul", 1, "af,bi,bs", "dq");
	node_in(g, ms, "MatMulIntegerToFloat", 1, "a,b2,s,s", "itf");
	n = node_in(g, ms, "MatMulNBits", 1, "af,nb,nbs", "nbits");
	attr_i(g, n, "K", 64);
	attr_i(g, n, "N", 32);
	attr_i(g, n, "block_size", 32);
	ok(g);
	SHAPE(g, "yq", 4, 6);
	assert_int_equal(T(g, "yq")->dtype, AR_DT_UINT8);
	quant_is(g, "b", "bs", NULL, 0, 0);     /* per row of B^T */
	assert_int_equal(flops_of(g, "yq"), 2 * 24 * 8);
	assert_int_equal(T(g, "yf")->dtype, AR_DT_FLOAT);
	SHAPE(g, "dq", 3, 5, 6);
	assert_int_equal(T(g, "dq")->dtype, AR_DT_FLOAT);
	quant_is(g, "bi", "bs", NULL, 1, 0);
	SHAPE(g, "nbits", 3, 5, 32);
	assert_int_equal(T(g, "nbits")->dtype, AR_DT_FLOAT);
	SHAPE(g, "itf", 4, 6);
	quant_is(g, "b2", "s", NULL, -1, 0);
	quant_is(g, "nb", "nbs", NULL, 1, 32);
	assert_int_equal(T(g, "nb")->bytes, 32 * 32);  /* 4 bits x 64 x 32 */
	assert_int_equal(flops_of(g, "nbits"), 2 * 15 * 32 * 64);
	ar_graph_free(g);

	g = ar_graph_new("nbits");
	INPUT(g, "af", 5, 64);
	weight(g, "nb", AR_DT_UINT8, 3, DIMS(32, 4, 8), NULL);
	F32(g, "nbs", 64);
	n = node_in(g, ms, "MatMulNBits", 1, "af,nb,nbs", "y");
	attr_i(g, n, "K", 64);
	attr_i(g, n, "N", 32);
	attr_i(g, n, "block_size", 32);
	fails(g, "packed weights 'nb' must be uint8 [N, ceil(K / block_size), "
	      "block_size * bits / 8] = [32, 2, 16]");
	ar_graph_free(g);
}

/* A GQA decode step: 8 query heads, 2 KV heads of 16, past of P. */
static ArGraph *gqa(int64_t past, int64_t max_seq, bool const_total)
{
	ArGraph *g = ar_graph_new("gqa");
	int n;
	int32_t total = 40;
	g->max_seq = max_seq;
	INPUT(g, "q", 1, 1, 128);
	INPUT(g, "k", 1, 1, 32);
	INPUT(g, "v", 1, 1, 32);
	INPUT(g, "pk", 1, 2, past, 16);
	INPUT(g, "pv", 1, 2, past, 16);
	input(g, "seqlens", AR_DT_INT32, 1, DIMS(1));
	if (const_total)
		weight(g, "total", AR_DT_INT32, 0, NULL, &total);
	else
		input(g, "total", AR_DT_INT32, 0, NULL);
	n = node_in(g, "com.microsoft", "GroupQueryAttention", 1,
		    "q,k,v,pk,pv,seqlens,total", "y,prk,prv");
	attr_i(g, n, "num_heads", 8);
	attr_i(g, n, "kv_num_heads", 2);
	return g;
}

static void test_gqa(void **state)
{
	ArGraph *g = gqa(32, 0, false);
	int n;
	(void)state;
	ok(g);
	SHAPE(g, "y", 1, 1, 128);
	SHAPE(g, "prk", 1, 2, 33, 16);          /* a growing cache */
	SHAPE(g, "prv", 1, 2, 33, 16);
	/* 4 x 1 query x 33 keys x 128, softmax 3 x 8 heads x 33. */
	assert_int_equal(flops_of(g, "y"), 4 * 33 * 128 + 3 * 8 * 33);
	ar_graph_free(g);

	g = gqa(64, 64, false);                 /* static: --max-seq 64 */
	ok(g);
	SHAPE(g, "prk", 1, 2, 64, 16);
	ar_graph_free(g);

	g = gqa(32, 0, true);                   /* ORT: max(total, P) */
	ok(g);
	SHAPE(g, "prk", 1, 2, 40, 16);
	ar_graph_free(g);

	g = gqa(32, 64, false);
	fails(g, "KV cache 'pk' holds 32 positions, not the 64 of --max-seq");
	ar_graph_free(g);

	g = gqa(16, 16, true);
	fails(g, "total_sequence_length 40 exceeds --max-seq 16");
	ar_graph_free(g);

	/* Packed QKV, prefill without a past. */
	g = ar_graph_new("packed");
	INPUT(g, "qkv", 1, 3, 192);
	input(g, "seqlens", AR_DT_INT32, 1, DIMS(1));
	input(g, "total", AR_DT_INT32, 0, NULL);
	n = node_in(g, "com.microsoft", "GroupQueryAttention", 1,
		    "qkv,,,,,seqlens,total", "y,prk,prv");
	attr_i(g, n, "num_heads", 8);
	attr_i(g, n, "kv_num_heads", 2);
	ok(g);
	SHAPE(g, "y", 1, 3, 128);
	SHAPE(g, "prk", 1, 2, 3, 16);
	ar_graph_free(g);
}

static void test_mha(void **state)
{
	ArGraph *g;
	int n;
	(void)state;
	for (int share = 0; share < 2; share++) {
		g = ar_graph_new("mha");
		INPUT(g, "q", 2, 5, 64);
		INPUT(g, "k", 2, 7, 64);
		INPUT(g, "v", 2, 7, 32);
		INPUT(g, "pk", 2, 4, 3, 16);
		INPUT(g, "pv", 2, 4, 3, 8);
		input(g, "plen", AR_DT_INT32, 1, DIMS(1));
		n = node_in(g, "com.microsoft", "MultiHeadAttention", 1,
			    share ? "q,k,v,,,,pk,pv,plen" : "q,k,v,,,,pk,pv",
			    "y,prk,prv,qk");
		attr_i(g, n, "num_heads", 4);
		ok(g);
		SHAPE(g, "y", 2, 5, 32);
		if (share) {                    /* past_sequence_length given */
			SHAPE(g, "prk", 2, 4, 3, 16);
			SHAPE(g, "prv", 2, 4, 3, 8);
		} else {
			SHAPE(g, "prk", 2, 4, 10, 16);
			SHAPE(g, "prv", 2, 4, 10, 8);
			SHAPE(g, "qk", 2, 4, 5, 10);
		}
		ar_graph_free(g);
	}
}

static void test_attention(void **state)
{
	ArGraph *g;
	int n;
	(void)state;
	for (int share = 0; share < 2; share++) {
		g = ar_graph_new("attn");
		INPUT(g, "x", 1, 4, 32);
		F32(g, "w", 32, 96);
		F32(g, "b", 96);
		INPUT(g, "past", 2, 1, 4, 6, 8);
		n = node_in(g, "com.microsoft", "Attention", 1, "x,w,b,,past",
			    "y,present");
		attr_i(g, n, "num_heads", 4);
		attr_i(g, n, "past_present_share_buffer", share);
		ok(g);
		SHAPE(g, "y", 1, 4, 32);
		if (share) {
			SHAPE(g, "present", 2, 1, 4, 6, 8);
		} else {
			SHAPE(g, "present", 2, 1, 4, 10, 8);
			/* Projection 2 x 128 x 96, core 4 x 4 x 10 x 32,
			 * softmax 3 x 4 x 4 heads x 10. */
			assert_int_equal(flops_of(g, "y"),
					 2 * 128 * 96 + 4 * 4 * 10 * 32 +
					 3 * 4 * 4 * 10);
		}
		ar_graph_free(g);
	}

	g = ar_graph_new("bad");
	INPUT(g, "x", 1, 4, 32);
	F32(g, "w", 30, 96);
	n = node_in(g, "com.microsoft", "Attention", 1, "x,w", "y");
	attr_i(g, n, "num_heads", 4);
	fails(g, "weights 'w' [30, 96] do not project the input's 32 "
	      "features");
	ar_graph_free(g);
}

static void test_norms(void **state)
{
	ArGraph *g = ar_graph_new("norms");
	const char *ms = "com.microsoft";
	(void)state;
	INPUT(g, "x", 2, 3, 8);
	INPUT(g, "skip", 3, 8);
	F32(g, "gamma", 8);
	input(g, "ids", AR_DT_INT32, 2, DIMS(2, 6));
	F32(g, "word", 100, 16);
	F32(g, "pos", 32, 16);
	F32(g, "g16", 16);
	node_in(g, ms, "SkipLayerNormalization", 1, "x,skip,gamma,gamma",
		"sl,mean,inv,sum");
	node_in(g, ms, "SkipSimplifiedLayerNormalization", 1, "x,x,gamma",
		"ssl");
	node(g, "SimplifiedLayerNormalization", 1, "x,gamma", "rms,rinv");
	node_in(g, ms, "EmbedLayerNormalization", 1,
		"ids,,word,pos,,g16,g16", "emb,mask,esum");
	ok(g);
	SHAPE(g, "sl", 2, 3, 8);
	SHAPE(g, "mean", 2, 3, 1);
	assert_int_equal(T(g, "inv")->dtype, AR_DT_FLOAT);
	SHAPE(g, "sum", 2, 3, 8);
	SHAPE(g, "ssl", 2, 3, 8);
	SHAPE(g, "rinv", 2, 3, 1);
	SHAPE(g, "emb", 2, 6, 16);
	SHAPE(g, "mask", 2);
	assert_int_equal(T(g, "mask")->dtype, AR_DT_INT32);
	assert_int_equal(T(g, "esum")->dtype, AR_DT_FLOAT);
	ar_graph_free(g);

	g = ar_graph_new("bad");
	INPUT(g, "x", 2, 3, 8);
	F32(g, "gamma", 7);
	node_in(g, ms, "SkipLayerNormalization", 1, "x,x,gamma", "y");
	fails(g, "skip 'x' and gamma 'gamma' must fit input 'x'");
	ar_graph_free(g);
}

static void test_fused(void **state)
{
	ArGraph *g = ar_graph_new("fused");
	const char *ms = "com.microsoft";
	int n;
	(void)state;
	INPUT(g, "x", 2, 4, 10);
	F32(g, "bias", 10);
	INPUT(g, "a", 2, 3, 4, 5);
	INPUT(g, "b", 3, 4, 2, 6);
	INPUT(g, "img", 1, 3, 8, 8);
	F32(g, "w", 6, 3, 3, 3);
	input(g, "pids", AR_DT_INT64, 2, DIMS(2, 4));
	F32(g, "cos", 16, 5);
	node_in(g, ms, "FastGelu", 1, "x,bias", "fg");
	node_in(g, ms, "BiasGelu", 1, "x,bias", "bg");
	node_in(g, ms, "Gelu", 1, "x", "ge");
	node_in(g, ms, "QuickGelu", 1, "x", "qg");
	node_in(g, ms, "BiasAdd", 1, "x,bias,x", "ba");
	node_in(g, ms, "BiasSplitGelu", 1, "x,bias", "bsg");
	node_in(g, ms, "RotaryEmbedding", 1, "x,pids,cos,cos", "rot");
	node_in(g, ms, "FusedConv", 1, "img,w", "fc");
	n = node_in(g, ms, "FusedMatMul", 1, "a,b", "fm");
	/* transBatchA: [2,3,4,5] -> [3,4,2,5]; transA: -> [3,4,5,2]. */
	attr_i(g, n, "transBatchA", 1);
	attr_i(g, n, "transA", 1);
	ok(g);
	SHAPE(g, "fg", 2, 4, 10);
	SHAPE(g, "bg", 2, 4, 10);
	SHAPE(g, "ba", 2, 4, 10);
	SHAPE(g, "bsg", 2, 4, 5);
	SHAPE(g, "rot", 2, 4, 10);
	SHAPE(g, "fc", 1, 6, 6, 6);
	SHAPE(g, "fm", 3, 4, 5, 6);
	/* K is A's first dim, moved into place. */
	assert_int_equal(flops_of(g, "fm"), 2 * 360 * 2);
	ar_graph_free(g);
}

/* Einsum eq over inputs of the given shapes: output shape out, or the
 * refusal err when err is not NULL. */
static void einsum_case(const char *eq, int nin, const int64_t *const *dims,
			const int *ranks, int rank, const int64_t *out,
			const char *err)
{
	ArGraph *g = ar_graph_new("einsum");
	char name[16], ins[64] = "";
	int n;
	for (int j = 0; j < nin; j++) {
		snprintf(name, sizeof name, "x%d", j);
		input(g, name, AR_DT_FLOAT, ranks[j], dims[j]);
		snprintf(ins + strlen(ins), sizeof ins - strlen(ins), "%s%s",
			 j ? "," : "", name);
	}
	n = node(g, "Einsum", 12, ins, "y");
	attr_s(g, n, "equation", eq);
	if (err) {
		fails(g, err);
	} else {
		ok(g);
		shape_is(g, "y", rank, out);
		/* Every label combination once, a product of the inputs. */
		if (!strcmp(eq, "ij,jk->ik"))
			assert_int_equal(flops_of(g, "y"), 2 * 2 * 3 * 4);
	}
	ar_graph_free(g);
}

#define EIN2(eq, a, b, ...) einsum_case(eq, 2, \
	(const int64_t *const[]){DIMS a, DIMS b}, \
	(const int[]){NDIMS a, NDIMS b}, NDIMS(__VA_ARGS__), \
	DIMS(__VA_ARGS__), NULL)
#define EIN1(eq, a, ...) einsum_case(eq, 1, (const int64_t *const[]){DIMS a}, \
	(const int[]){NDIMS a}, NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__), NULL)
#define EIN1_BAD(eq, err, a) einsum_case(eq, 1, \
	(const int64_t *const[]){DIMS a}, (const int[]){NDIMS a}, 0, NULL, err)
#define EIN2_BAD(eq, err, a, b) einsum_case(eq, 2, \
	(const int64_t *const[]){DIMS a, DIMS b}, \
	(const int[]){NDIMS a, NDIMS b}, 0, NULL, err)

static void test_einsum(void **state)
{
	(void)state;
	/* Each against numpy.einsum. */
	EIN2("ij,jk->ik", (2, 3), (3, 4), 2, 4);
	EIN2("bA,ab", (2, 5), (3, 2), 5, 3);    /* implicit: A before a */
	EIN2("...ij,...jk", (7, 2, 3), (3, 4), 7, 2, 4);
	EIN2("ij...,jk->...ik", (2, 3, 7), (3, 4), 7, 2, 4);
	EIN2("...i,...i", (2, 1, 3), (4, 3), 2, 4);
	EIN2("i,i->i", (3), (1), 3);            /* size 1 broadcasts */
	EIN2("b i j , b j k -> b i k", (5, 2, 3), (5, 3, 4), 5, 2, 4);
	EIN1("ii->i", (3, 3), 3);
	EIN1("ij->ji", (3, 5), 5, 3);
	einsum_case("ii", 1, (const int64_t *const[]){DIMS(3, 3)},
		    (const int[]){2}, 0, NULL, NULL);   /* trace: a scalar */
	EIN2_BAD("ij,jk->ik", "label 'j' is 4 in 'x1' but 3 before", (2, 3),
		 (4, 5));
	EIN1_BAD("ij,jk->ik", "equation has 2 operands, the node 1 inputs",
		 (2, 3));
	EIN1_BAD("...ij->ij", "the output needs '...' for the 1 broadcast "
		 "axes", (2, 3, 4));
	EIN1_BAD("ij->ik", "output label 'k' is in no input", (2, 3));
	EIN1_BAD("i.j->ij", "a '.' that is not the one '...' of a term",
		 (2, 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dtype_sizes),
		cmocka_unit_test(test_qdq_per_tensor),
		cmocka_unit_test(test_per_axis),
		cmocka_unit_test(test_blocked),
		cmocka_unit_test(test_dynamic_quantize),
		cmocka_unit_test(test_qlinearconv),
		cmocka_unit_test(test_qlinearconv_nhwc),
		cmocka_unit_test(test_qlinearmatmul),
		cmocka_unit_test(test_ms_qlinear),
		cmocka_unit_test(test_ms_matmuls),
		cmocka_unit_test(test_gqa),
		cmocka_unit_test(test_mha),
		cmocka_unit_test(test_attention),
		cmocka_unit_test(test_norms),
		cmocka_unit_test(test_fused),
		cmocka_unit_test(test_einsum),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
