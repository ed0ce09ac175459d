/*
 * kernels_quant.c — QuantizeLinear, DequantizeLinear and
 * DynamicQuantizeLinear.
 *
 * The arithmetic is float32, as the spec's reference and onnxruntime do
 * it (x / scale is a float division, then rounded half to even), so the
 * quantized values match theirs bit for bit, ties included.
 */
#include <math.h>

#include "kernels.h"

/* The scale and zero point of element i. */
static int64_t channel(const rt_qparam *q, int64_t i)
{
	return q->n == 1 ? 0 : rt_mod(rt_div(i, q->inner), q->n);
}

static void range_of(int dt, int32_t *lo, int32_t *hi)
{
	switch (dt) {
	case ART_DT_INT8: *lo = -128, *hi = 127; break;
	case ART_DT_UINT16: *lo = 0, *hi = 65535; break;
	case ART_DT_INT16: *lo = -32768, *hi = 32767; break;
	default: *lo = 0, *hi = 255; break;
	}
}

/* round_half_even(v) + zp, saturated to [lo, hi] (NaN: lo), in float
 * and int32 (no soft-float conversion): lo - zp and hi - zp are exact
 * there (types of 16 bits at most). */
static int32_t saturate(float v, int32_t zp, int32_t lo, int32_t hi)
{
	float r = rintf(v);
	return !(r >= (float)(lo - zp)) ? lo : r > (float)(hi - zp) ? hi :
	       (int32_t)r + zp;
}

void rt_quantize(const rt_arr *x, const rt_qparam *q, rt_arr *y)
{
	int64_t n = rt_numel(&y->s);
	int32_t lo, hi;
	range_of(y->dt, &lo, &hi);
	for (int64_t i = 0; i < n; i++) {
		int64_t c = channel(q, i);
		int32_t zp = q->zp ? (int32_t)rt_get_int(q->zdt, q->zp, c) : 0;
		/* float32 or int32 (op_quantize), as a float. */
		float v = (x->dt == ART_DT_FLOAT ? ((const float *)x->p)[i] :
			   (float)((const int32_t *)x->p)[i]) / q->scale[c];
		rt_set_int(y->dt, y->p, i, saturate(v, zp, lo, hi));
	}
}

void rt_dequantize(const rt_arr *x, const rt_qparam *q, float *y)
{
	int64_t n = rt_numel(&x->s);
	for (int64_t i = 0; i < n; i++) {
		int64_t c = channel(q, i);
		int64_t zp = q->zp ? rt_get_int(q->zdt, q->zp, c) : 0;
		y[i] = rt_i64_to_f32(rt_get_int(x->dt, x->p, i) - zp) *
		       q->scale[c];
	}
}

void rt_dynamic_quantize(const float *x, int64_t n, uint8_t *y, float *scale,
			 uint8_t *zp)
{
	/* The range always includes 0, so 0 quantizes exactly. */
	float lo = 0.0f, hi = 0.0f, s, z;
	for (int64_t i = 0; i < n; i++) {
		lo = fminf(lo, x[i]);
		hi = fmaxf(hi, x[i]);
	}
	s = (hi - lo) / 255.0f;
	/* All zeros: any scale will do; 0 would divide by zero below. */
	if (s == 0.0f)
		s = 1.0f;
	z = (float)saturate(0.0f - lo / s, 0, 0, 255);
	for (int64_t i = 0; i < n; i++)
		y[i] = (uint8_t)saturate(x[i] / s, (int32_t)z, 0, 255);
	*scale = s;
	*zp = (uint8_t)z;
}
