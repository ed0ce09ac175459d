/*
 * shape_quant.c — shapes of the quantized ops, and the record of what each
 * quantized tensor's integers mean.
 *
 * ONNX's QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 * QLinearConv, QLinearMatMul, ConvInteger and MatMulInteger, and
 * com.microsoft's QLinear* ops, QGemm, DynamicQuantizeMatMul,
 * MatMulIntegerToFloat and MatMulNBits (ORT's contrib schemas).  Besides
 * the output shape, each records on the integer tensors it produces or
 * reads which tensors hold their scale and zero point (ArTensor.quant), so
 * an int8 runtime finds them in the report without knowing the op.
 *
 * A scale is per tensor (one value), per axis (a 1-D tensor as long as
 * that axis) or, from opset 21, blocked (the tensor's rank, the blocked
 * axis ceil(dim / block_size) long).  A zero point has its scale's shape;
 * when present it sets the quantized type.  A layout that fits none of
 * these is refused: the plan would be fine, but the report would say
 * something false about the bytes.
 */
#include <string.h>

#include "infer_ops.h"

/* Records t's scale and zero point, unless an earlier node did. */
static void record(ArTensor *t, int scale, int zp, int axis, int64_t block)
{
	if (!t || t->quant.scale >= 0 || t->quant.zero_point >= 0)
		return;
	t->quant.scale = scale;
	t->quant.zero_point = zp;
	t->quant.axis = axis;
	t->quant.block = block;
}

/*
 * How parameter s (a scale, or a zero point where there is no scale) lies
 * over x: one value (*axis -1), one per index of axis dflt, or blocks of
 * `block` elements along dflt.  dflt may be out of x's range when only a
 * per-tensor value makes sense.
 */
static int layout(InferCtx *c, const ArNode *n, const ArTensor *x,
		  const ArTensor *s, int64_t dflt, int64_t block, int *axis)
{
	bool inside = dflt >= 0 && dflt < x->rank;

	*axis = -1;
	if (block > 0) {
		if (!inside || s->rank != x->rank)
			return ar_node_fail(c, n, "blocked scale '%s' has rank "
					    "%d, '%s' rank %d (axis %lld)",
					    s->name, s->rank, x->name, x->rank,
					    (long long)dflt);
		for (int i = 0; i < x->rank; i++) {
			int64_t want = i != dflt ? x->dims[i] :
				x->dims[i] / block + (x->dims[i] % block != 0);
			if (s->dims[i] != want)
				return ar_node_fail(c, n, "blocked scale '%s' "
						    "has %lld at axis %d; "
						    "block_size %lld over '%s' "
						    "needs %lld", s->name,
						    (long long)s->dims[i], i,
						    (long long)block, x->name,
						    (long long)want);
		}
		*axis = (int)dflt;
		return AR_OK;
	}
	if (ar_numel(s) == 1)
		return AR_OK;
	if (s->rank == 1 && inside && s->dims[0] == x->dims[dflt]) {
		*axis = (int)dflt;
		return AR_OK;
	}
	return ar_node_fail(c, n, "'%s' holds %lld values: neither one for "
			    "all of '%s' nor one per index of its axis %lld",
			    s->name, (long long)ar_numel(s), x->name,
			    (long long)dflt);
}

static bool same_shape(const ArTensor *a, const ArTensor *b)
{
	if (a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

/*
 * The quantization of x by scale input si and zero point input zi (either
 * may be -1 or omitted), recorded on rec (x itself, or the output a
 * quantizing op makes from it).
 */
static int quantized(InferCtx *c, const ArNode *n, const ArTensor *x,
		     ArTensor *rec, int si, int zi, int64_t dflt, int64_t block)
{
	const ArTensor *s = ar_in(c, n, si), *z = ar_in(c, n, zi);
	int axis, rc;

	if ((!s && !z) || !x)
		return AR_OK;
	if (s && z && !same_shape(s, z))
		return ar_node_fail(c, n, "zero point '%s' and scale '%s' "
				    "differ in shape", z->name, s->name);
	if ((rc = layout(c, n, x, s ? s : z, dflt, block, &axis)))
		return rc;
	record(rec, s ? n->inputs[si] : -1, z ? n->inputs[zi] : -1, axis,
	       block);
	return AR_OK;
}

/* An input operand of a QLinear op: the input itself gets the record. */
static int operand(InferCtx *c, const ArNode *n, int xi, int si, int zi,
		   int64_t dflt)
{
	ArTensor *x = ar_in(c, n, xi);
	return x ? quantized(c, n, x, x, si, zi, dflt, 0) : AR_OK;
}

/* The axis attribute (default 1) against x's rank, negatives counted
 * from the end; left out of range for layout() to judge. */
static int64_t axis_attr(const ArNode *n, const ArTensor *x)
{
	int64_t a = ar_attr_int(n, "axis", 1);
	return a < 0 ? a + x->rank : a;
}

/* A quantized output's type: its zero point's, else dflt. */
static ArDType zp_type(InferCtx *c, const ArNode *n, int zi, ArDType dflt)
{
	const ArTensor *z = ar_in(c, n, zi);
	return z ? z->dtype : dflt;
}

static int check_type(InferCtx *c, const ArNode *n, int64_t dt)
{
	if (dt <= AR_DT_UNDEFINED || dt >= AR_DT_COUNT || dt == AR_DT_STRING)
		return ar_node_fail(c, n, "names an unknown element type "
				    "(%lld)", (long long)dt);
	return AR_OK;
}

int ar_shape_quantize(InferCtx *c, ArNode *n)
{
	ArTensor *x, *s;
	/* output_dtype 0 (or absent) leaves the type to the zero point,
	 * uint8 without one. */
	int64_t dt = ar_attr_int(n, "output_dtype", 0);
	int rc;

	dt = zp_type(c, n, 2, dt ? (ArDType)dt : AR_DT_UINT8);

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &s)) ||
	    (rc = check_type(c, n, dt)))
		return rc;
	ar_set_shape(ar_out(c, n, 0), (ArDType)dt, x->rank, x->dims);
	return quantized(c, n, x, ar_out(c, n, 0), 1, 2, axis_attr(n, x),
			 ar_attr_int(n, "block_size", 0));
}

int ar_shape_dequantize(InferCtx *c, ArNode *n)
{
	ArTensor *x, *s, *z = ar_in(c, n, 2);
	int64_t dt;
	int rc;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &s)))
		return rc;
	dt = ar_attr_int(n, "output_dtype", 0);
	dt = dt ? dt : s->dtype;
	if ((rc = check_type(c, n, dt)))
		return rc;
	if (z && z->dtype != x->dtype)
		return ar_node_fail(c, n, "zero point '%s' is %s, input '%s' "
				    "%s", z->name, ar_dtype_name(z->dtype),
				    x->name, ar_dtype_name(x->dtype));
	ar_set_shape(ar_out(c, n, 0), (ArDType)dt, x->rank, x->dims);
	return quantized(c, n, x, x, 1, 2, axis_attr(n, x),
			 ar_attr_int(n, "block_size", 0));
}

/* y, y_scale, y_zero_point: uint8 y with scalars computed at run time. */
int ar_shape_dynamic_quantize(InferCtx *c, ArNode *n)
{
	ArTensor *x, *y;
	int rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	y = ar_out(c, n, 0);
	ar_set_shape(y, AR_DT_UINT8, x->rank, x->dims);
	ar_set_shape(ar_out(c, n, 1), x->dtype, 0, NULL);
	ar_set_shape(ar_out(c, n, 2), AR_DT_UINT8, 0, NULL);
	record(y, n->noutputs > 1 ? n->outputs[1] : -1,
	       n->noutputs > 2 ? n->outputs[2] : -1, -1, 0);
	return AR_OK;
}

/* QLinearConv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B. */
int ar_shape_qlinearconv(InferCtx *c, ArNode *n)
{
	int rc = ar_conv_out(c, n, 0, 3, zp_type(c, n, 7, AR_DT_UNDEFINED));

	if (rc || (rc = operand(c, n, 0, 1, 2, 1)) ||
	    (rc = operand(c, n, 3, 4, 5, 0)))
		return rc;
	return quantized(c, n, ar_out(c, n, 0), ar_out(c, n, 0), 6, 7, -1, 0);
}

/* Per-row scales of A run along its rows, per-column ones of B along its
 * columns. */
static int64_t rows(const ArTensor *a)
{
	return a->rank - 2;
}

static int64_t cols(const ArTensor *b)
{
	return b->rank - 1;
}

/* A matrix product of inputs ai and bi into output 0 of type dt. */
static int matmul_of(InferCtx *c, ArNode *n, int ai, int bi, ArDType dt,
		     ArTensor **a, ArTensor **b)
{
	*a = ar_in(c, n, ai);
	*b = ar_in(c, n, bi);
	return ar_matmul_out(c, n, ai, bi, dt);
}

/* QLinearMatMul: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp. */
int ar_shape_qlinearmatmul(InferCtx *c, ArNode *n)
{
	ArTensor *a, *b;
	int rc = matmul_of(c, n, 0, 3, zp_type(c, n, 7, AR_DT_UNDEFINED), &a,
			   &b);
	if (rc || (rc = operand(c, n, 0, 1, 2, rows(a))) ||
	    (rc = operand(c, n, 3, 4, 5, cols(b))))
		return rc;
	return quantized(c, n, ar_out(c, n, 0), ar_out(c, n, 0), 6, 7, -1, 0);
}

/* MatMulInteger: A, B, a_zero_point, b_zero_point -> int32. */
int ar_shape_matmulinteger(InferCtx *c, ArNode *n)
{
	ArTensor *a, *b;
	int rc = matmul_of(c, n, 0, 1, AR_DT_INT32, &a, &b);
	if (rc || (rc = operand(c, n, 0, -1, 2, rows(a))))
		return rc;
	return operand(c, n, 1, -1, 3, cols(b));
}

/* ConvInteger: x, w, x_zero_point, w_zero_point -> int32. */
int ar_shape_convinteger(InferCtx *c, ArNode *n)
{
	int rc = ar_conv_out(c, n, 0, 1, AR_DT_INT32);
	if (rc || (rc = operand(c, n, 0, -1, 2, 1)))
		return rc;
	return operand(c, n, 1, -1, 3, 0);
}

/* QLinearAdd, QLinearMul: A, A_scale, A_zp, B, B_scale, B_zp, C_scale,
 * C_zp; numpy broadcasting of A and B. */
int ar_shape_qlinear_binary(InferCtx *c, ArNode *n)
{
	ArTensor *a, *b, *y;
	int64_t dims[AR_MAX_RANK];
	int rank, rc;

	if ((rc = ar_need(c, n, 0, &a)) || (rc = ar_need(c, n, 3, &b)) ||
	    (rc = ar_broadcast2(c, n, a->rank, a->dims, b->rank, b->dims,
				&rank, dims)))
		return rc;
	y = ar_out(c, n, 0);
	ar_set_shape(y, a->dtype, rank, dims);
	if ((rc = operand(c, n, 0, 1, 2, -1)) ||
	    (rc = operand(c, n, 3, 4, 5, -1)))
		return rc;
	return y ? quantized(c, n, y, y, 6, 7, -1, 0) : AR_OK;
}

/* QLinearSigmoid, QLinearLeakyRelu: X, X_scale, X_zp, Y_scale, Y_zp. */
int ar_shape_qlinear_unary(InferCtx *c, ArNode *n)
{
	ArTensor *x, *y;
	int rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	y = ar_out(c, n, 0);
	ar_same_as(c, n, 0, x);
	if ((rc = operand(c, n, 0, 1, 2, -1)))
		return rc;
	return y ? quantized(c, n, y, y, 3, 4, -1, 0) : AR_OK;
}

/*
 * QLinearAveragePool, QLinearGlobalAveragePool: X, x_scale, x_zp,
 * y_scale, y_zp, in NCHW or, with channels_last, NHWC: the window runs
 * over the NCHW view of the dims.
 */
static int qlinear_pool(InferCtx *c, ArNode *n, bool global)
{
	ArTensor *x, v, *y;
	bool last = ar_attr_int(n, "channels_last", 0) != 0;
	int64_t dims[AR_MAX_RANK], out[AR_MAX_RANK];
	int rc = ar_need(c, n, 0, &x), r;

	if (rc)
		return rc;
	if ((r = x->rank) < 3)
		return ar_node_fail(c, n, "input 0 ('%s') has rank %d; "
				    "expected [N, C, spatial...]", x->name, r);
	/* v: x as NCHW. */
	v = *x;
	if (last) {
		v.dims[1] = x->dims[r - 1];
		memcpy(v.dims + 2, x->dims + 1, (size_t)(r - 2) * sizeof *dims);
	}
	if (global) {
		for (int i = 0; i < r; i++)
			dims[i] = i < 2 ? v.dims[i] : 1;
	} else if ((rc = ar_pool_dims(c, n, &v, dims))) {
		return rc;
	}
	memcpy(out, dims, sizeof out);
	if (last) {
		memcpy(out + 1, dims + 2, (size_t)(r - 2) * sizeof *dims);
		out[r - 1] = dims[1];
	}
	y = ar_out(c, n, 0);
	ar_set_shape(y, x->dtype, r, out);
	if ((rc = operand(c, n, 0, 1, 2, -1)))
		return rc;
	return y ? quantized(c, n, y, y, 3, 4, -1, 0) : AR_OK;
}

int ar_shape_qlinear_pool(InferCtx *c, ArNode *n)
{
	return qlinear_pool(c, n, false);
}

int ar_shape_qlinear_globalpool(InferCtx *c, ArNode *n)
{
	return qlinear_pool(c, n, true);
}

/* QLinearConcat: Y_scale, Y_zp, then (X, X_scale, X_zp) per input. */
int ar_shape_qlinearconcat(InferCtx *c, ArNode *n)
{
	ArTensor *first, *y;
	int64_t dims[AR_MAX_RANK];
	int axis, rc;

	if ((n->nexplicit - 2) % 3)
		return ar_node_fail(c, n, "has %d inputs; it takes Y_scale, "
				    "Y_zero_point and triples of (X, X_scale, "
				    "X_zero_point)", n->nexplicit);
	if ((rc = ar_need(c, n, 2, &first)) ||
	    (rc = ar_axis(c, n, ar_attr_int(n, "axis", 0), first->rank,
			  &axis)))
		return rc;
	memcpy(dims, first->dims, sizeof dims);
	dims[axis] = 0;
	for (int j = 2; j < n->nexplicit; j += 3) {
		ArTensor *x;
		bool fits;
		if ((rc = ar_need(c, n, j, &x)))
			return rc;
		fits = x->rank == first->rank;
		for (int i = 0; fits && i < first->rank; i++)
			fits = i == axis || x->dims[i] == first->dims[i];
		if (!fits)
			return ar_node_fail(c, n, "input %d ('%s') does not "
					    "match '%s' off axis %d", j,
					    x->name, first->name, axis);
		if (!ar_add64(dims[axis], x->dims[axis], &dims[axis]))
			return ar_node_fail(c, n, "concatenated dim overflows");
		if ((rc = operand(c, n, j, j + 1, j + 2, -1)))
			return rc;
	}
	y = ar_out(c, n, 0);
	ar_set_shape(y, zp_type(c, n, 1, first->dtype), first->rank, dims);
	return y ? quantized(c, n, y, y, 0, 1, -1, 0) : AR_OK;
}

/* QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp: quantized
 * when y_zero_point is given, float otherwise (ORT's rule). */
int ar_shape_qgemm(InferCtx *c, ArNode *n)
{
	ArTensor *a, *b, *y;
	int64_t dims[2];
	bool tb = ar_attr_int(n, "transB", 0) != 0;
	int rc;

	if ((rc = ar_need(c, n, 0, &a)) || (rc = ar_need(c, n, 3, &b)) ||
	    (rc = ar_gemm_dims(c, n, a, b, dims)))
		return rc;
	y = ar_out(c, n, 0);
	ar_set_shape(y, zp_type(c, n, 8, AR_DT_FLOAT), 2, dims);
	if ((rc = operand(c, n, 0, 1, 2, -1)) ||
	    (rc = operand(c, n, 3, 4, 5, tb ? 0 : 1)))
		return rc;
	return y && ar_in(c, n, 8) ? quantized(c, n, y, y, 7, 8, -1, 0) :
				     AR_OK;
}

/* DynamicQuantizeMatMul: float A, quantized B, b_scale, b_zp, bias. */
int ar_shape_dynamic_quantize_matmul(InferCtx *c, ArNode *n)
{
	ArTensor *a, *b;
	int rc = matmul_of(c, n, 0, 1, AR_DT_UNDEFINED, &a, &b);
	return rc ? rc : operand(c, n, 1, 2, 3, cols(b));
}

/* MatMulIntegerToFloat: A, B, a_scale, b_scale, a_zp, b_zp, bias; the
 * result has a_scale's type. */
int ar_shape_matmul_integer_to_float(InferCtx *c, ArNode *n)
{
	ArTensor *a, *b, *as;
	int rc = ar_need(c, n, 2, &as);

	if (rc || (rc = matmul_of(c, n, 0, 1, as->dtype, &a, &b)) ||
	    (rc = operand(c, n, 0, 2, 4, cols(a))))
		return rc;
	return operand(c, n, 1, 3, 5, cols(b));
}

/*
 * MatMulNBits: A [..., K] times the N x K matrix packed in B
 * [N, ceil(K / block_size), block_size * bits / 8] (uint8, bits per
 * value, low bits first), with scales and zero points per block along K.
 * The record describes that logical N x K matrix: axis 1, block_size.
 */
int ar_shape_matmulnbits(InferCtx *c, ArNode *n)
{
	ArTensor *a, *b, *s;
	int64_t k = ar_attr_int(n, "K", -1), nn = ar_attr_int(n, "N", -1),
		bits = ar_attr_int(n, "bits", 4),
		bs = ar_attr_int(n, "block_size", -1), blocks, blob, want,
		dims[AR_MAX_RANK];
	int rc;

	if ((rc = ar_need(c, n, 0, &a)) || (rc = ar_need(c, n, 1, &b)) ||
	    (rc = ar_need(c, n, 2, &s)))
		return rc;
	if (k < 1 || nn < 1 || bs < 1 || bits < 1 || bits > 8 ||
	    (bs * bits) % 8)
		return ar_node_fail(c, n, "needs K, N and block_size of at "
				    "least 1 and whole bytes per block "
				    "(K %lld, N %lld, bits %lld, block_size "
				    "%lld)", (long long)k, (long long)nn,
				    (long long)bits, (long long)bs);
	if (a->rank < 1 || a->dims[a->rank - 1] != k)
		return ar_node_fail(c, n, "input A ('%s') must end in K = %lld",
				    a->name, (long long)k);
	blocks = k / bs + (k % bs != 0);
	blob = bs * bits / 8;
	/* [N, blocks, blob], or the last two flattened. */
	if (b->dtype != AR_DT_UINT8 || b->rank < 2 || b->rank > 3 ||
	    b->dims[0] != nn || b->dims[b->rank - 1] !=
	    (b->rank == 3 ? blob : blocks * blob) ||
	    (b->rank == 3 && b->dims[1] != blocks))
		return ar_node_fail(c, n, "packed weights '%s' must be uint8 "
				    "[N, ceil(K / block_size), block_size * "
				    "bits / 8] = [%lld, %lld, %lld]", b->name,
				    (long long)nn, (long long)blocks,
				    (long long)blob);
	if (!ar_mul64(nn, blocks, &want) || ar_numel(s) != want)
		return ar_node_fail(c, n, "scales '%s' must hold N x "
				    "ceil(K / block_size) = %lld values",
				    s->name, (long long)want);
	memcpy(dims, a->dims, sizeof dims);
	dims[a->rank - 1] = nn;
	ar_set_shape(ar_out(c, n, 0), a->dtype, a->rank, dims);
	record(b, n->inputs[2], ar_in(c, n, 3) ? n->inputs[3] : -1, 1, bs);
	return AR_OK;
}
