/*
 * requant.c — an int8 step's requantisation as integer kernels take it:
 * per output channel a Q31 multiplier and a shift for
 * effective_scale = input_scale * weight_scale / output_scale, and the
 * scale and zero point of a per-tensor quantised tensor.
 *
 * The multiplier and shift are TFLite Micro's QuantizeMultiplier
 * (tensorflow/lite/kernels/internal/quantization_util.cc) over the
 * effective scale its PopulateConvolutionQuantizationParams computes in
 * double from the float scales (tensorflow/lite/kernels/kernel_util.cc),
 * one per channel when the weight's scale is per channel; CMSIS-NN's
 * kernels (arm_convolve_s8, arm_fully_connected_s8: cmsis_nn_per_channel_
 * quant_params) take the same pair, shift > 0 meaning a left shift.
 * QLinearMul's is the same product (TFLM mul_common.cc,
 * CalculateOpDataMul).  QLinearAdd's are three, as TFLM's add_common.cc
 * CalculateOpDataAdd computes them for arm_elementwise_add_s8: each
 * input's scale over twice the larger one, and that over 2^20 (its
 * left_shift, AR_REQUANT_ADD_SHIFT) times the output's scale.  The
 * scales are read from the op table's .requant inputs (table.c), which
 * must be constants: a scale computed at run time (DynamicQuantizeLinear's)
 * has no multiplier to precompute.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "infer_ops.h"

/* A constant's values, or NULL. */
static const ArTensor *constant(const ArGraph *g, const ArNode *n, int j)
{
	const ArTensor *t;
	if (j <= 0 || j >= n->nexplicit || n->inputs[j] < 0)
		return NULL;
	t = &g->tensors[n->inputs[j]];
	return t->data && ar_dtype_is_float(t->dtype) && ar_numel(t) > 0 ?
	       t : NULL;
}

void ar_quantize_multiplier(double m, int32_t *mult, int *shift)
{
	double q;
	int64_t fixed;

	assert(isfinite(m) && m >= 0.);
	if (m == 0.) {
		*mult = 0;
		*shift = 0;
		return;
	}
	q = frexp(m, shift);
	/* TfLiteRound is std::round: halves away from zero. */
	fixed = (int64_t)round(q * (double)(1LL << 31));
	assert(fixed <= (1LL << 31));
	if (fixed == (1LL << 31)) {
		fixed /= 2;
		++*shift;
	}
	/* Below 2^-31 every bit would be shifted out: TFLM flushes to 0. */
	if (*shift < -31) {
		*shift = 0;
		fixed = 0;
	}
	*mult = (int32_t)fixed;
}

/*
 * The n pairs of real[], or none (0) when a scale is not a finite
 * non-negative number (a NaN, infinite or negative scale in the model:
 * no kernel could use its multiplier; the runtime refuses such a step).
 */
static int pairs(const double *real, int64_t n, int32_t **mult,
		 int32_t **shift)
{
	for (int64_t k = 0; k < n; k++)
		if (!isfinite(real[k]) || real[k] < 0.)
			return 0;
	*mult = ar_xmalloc((size_t)n * sizeof **mult);
	*shift = ar_xmalloc((size_t)n * sizeof **shift);
	for (int64_t k = 0; k < n; k++) {
		int sh;
		ar_quantize_multiplier(real[k], &(*mult)[k], &sh);
		(*shift)[k] = sh;
	}
	return (int)n;
}

/* An addition's three pairs: input a's, input b's, the output's. */
static int add_requant(double sa, const ArTensor *ws, double sy,
		       int32_t **mult, int32_t **shift)
{
	double sb, twice, real[3];

	if (ar_numel(ws) != 1)
		return 0;
	/* Each scale a float widened to double, as TFLM does. */
	sa = (double)(float)sa, sy = (double)(float)sy;
	sb = (double)(float)ar_get_float(ws, 0);
	twice = 2 * (sa > sb ? sa : sb);
	real[0] = sa / twice;
	real[1] = sb / twice;
	real[2] = twice / ((double)(1 << AR_REQUANT_ADD_SHIFT) * sy);
	return pairs(real, 3, mult, shift);
}

int ar_requant(const ArGraph *g, const ArNode *n, int32_t **mult,
	       int32_t **shift)
{
	const ArOpDef *d = ar_op_of(n);
	const ArTensor *xs, *ws, *ys;
	int64_t nc;
	double *real;
	int k;

	*mult = *shift = NULL;
	if (!d || !d->requant.y)
		return 0;
	xs = constant(g, n, d->requant.x);
	ws = constant(g, n, d->requant.w);
	ys = constant(g, n, d->requant.y);
	if (!xs || !ws || !ys || ar_numel(xs) != 1 || ar_numel(ys) != 1)
		return 0;
	if (d->requant.add)
		return add_requant(ar_get_float(xs, 0), ws, ar_get_float(ys, 0),
				   mult, shift);
	nc = ar_numel(ws);
	if (nc > INT32_MAX)
		return 0;
	real = ar_xmalloc((size_t)nc * sizeof *real);
	/* Each scale a float widened to double, as TFLM does. */
	for (int64_t c = 0; c < nc; c++)
		real[c] = (double)(float)ar_get_float(xs, 0) *
			  (double)(float)ar_get_float(ws, c) /
			  (double)(float)ar_get_float(ys, 0);
	k = pairs(real, nc, mult, shift);
	free(real);
	return k;
}

bool ar_quant_scalar(const ArGraph *g, const ArTensor *t, double *scale,
		     int64_t *zero_point)
{
	const ArTensor *s, *z;

	if (t->quant.scale < 0 || t->quant.axis >= 0)
		return false;
	s = &g->tensors[t->quant.scale];
	if (!s->data || ar_numel(s) != 1 || !ar_dtype_is_float(s->dtype))
		return false;
	*scale = ar_get_float(s, 0);
	*zero_point = 0;
	if (t->quant.zero_point < 0)
		return true;
	z = &g->tensors[t->quant.zero_point];
	if (!z->data || ar_numel(z) != 1 || !ar_dtype_is_int(z->dtype))
		return false;
	*zero_point = ar_get_int(z, 0);
	return true;
}
