/*
 * kernels_dtype.c — element types: sizes, and reading or writing one
 * element of any numeric ONNX type as a double or an int64; Cast, Range
 * and EyeLike, the kernels that are nothing but that.
 *
 * Kernels that serve every type compute in one of two domains: double for
 * the float types (float16, bfloat16, float, double) and int64 for the
 * integer types and bool.  A double holds every float32 exactly and a sum,
 * difference, product or quotient of two float32 rounds back to the same
 * float32 result, so float32 kernels lose nothing by going through double.
 * Writing a value to another type is ONNX Cast: floats to integers
 * truncate toward zero (NaN gives 0; values past int64 saturate, which the
 * spec leaves undefined), integers to narrower integers keep the low bits,
 * anything nonzero (NaN included) is true.  Uint64 values above INT64_MAX
 * are read as negative int64; no operator test reaches them.
 */
#include <math.h>
#include <string.h>

#include "kernels.h"

int64_t rt_numel(const rt_shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++)
		n *= s->d[i];
	return n;
}

size_t art_dtype_size(int dt)
{
	switch (dt) {
	case ART_DT_UINT8: case ART_DT_INT8: case ART_DT_BOOL:
		return 1;
	case ART_DT_UINT16: case ART_DT_INT16: case ART_DT_FLOAT16:
	case ART_DT_BFLOAT16:
		return 2;
	case ART_DT_FLOAT: case ART_DT_INT32: case ART_DT_UINT32:
		return 4;
	case ART_DT_INT64: case ART_DT_DOUBLE: case ART_DT_UINT64:
		return 8;
	default:
		return 0;
	}
}

int rt_is_float(int dt)
{
	return dt == ART_DT_FLOAT || dt == ART_DT_DOUBLE ||
	       dt == ART_DT_FLOAT16 || dt == ART_DT_BFLOAT16;
}

static float bits_to_float(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static uint32_t float_to_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, e = h >> 10 & 31, m = h & 1023;
	if (e == 31)                        /* inf, NaN */
		return bits_to_float(sign | 0x7f800000u | m << 13);
	/* Zero, subnormal: m * 2^-24, a float product and exact (a normal
	 * float), where ldexpf would link libm's scalbnf into every
	 * firmware that reads a float tensor. */
	if (e == 0)
		return (sign ? -1.0f : 1.0f) * ((float)m * 0x1p-24f);
	return bits_to_float(sign | (e + 112) << 23 | m << 13);
}

/* Round to nearest even, as the IEEE conversion does. */
static uint16_t float_to_half(float f)
{
	uint32_t u = float_to_bits(f), sign = u >> 16 & 0x8000u;
	float a = fabsf(f);
	uint32_t m;
	int e;

	if (a != a)
		return (uint16_t)(sign | 0x7e00u);
	if (a >= 65520.0f)                  /* rounds past the largest half */
		return (uint16_t)(sign | 0x7c00u);
	if (a < 6.103515625e-05f) {         /* subnormal: units of 2^-24 */
		m = (uint32_t)rintf(a * 16777216.0f);
		return (uint16_t)(sign | m);
	}
	frexpf(a, &e);                      /* a = f * 2^e, 0.5 <= f < 1 */
	/* 11 significant bits: units of 2^(e - 11). */
	m = (uint32_t)rintf(ldexpf(a, 11 - e));
	if (m == 2048)
		m = 1024, e++;
	return (uint16_t)(sign | (uint32_t)(e + 14) << 10 | (m & 1023));
}

/* bfloat16 is float32's top half; the cut rounds to nearest even. */
static float bf16_to_float(uint16_t h)
{
	return bits_to_float((uint32_t)h << 16);
}

static uint16_t float_to_bf16(float f)
{
	uint32_t u = float_to_bits(f);
	if (f != f)
		return (uint16_t)(u >> 16 | 0x40);
	u += 0x7fffu + (u >> 16 & 1);
	return (uint16_t)(u >> 16);
}

static int64_t f2i(double v)
{
	if (v != v)
		return 0;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)v;
}

/* An integer or bool element; 0 for any other type (the operand checks
 * keep those out). */
int64_t rt_get_int(int dt, const void *p, int64_t i)
{
	switch (dt) {
	case ART_DT_UINT8: return ((const uint8_t *)p)[i];
	case ART_DT_INT8: return ((const int8_t *)p)[i];
	case ART_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
	case ART_DT_UINT16: return ((const uint16_t *)p)[i];
	case ART_DT_INT16: return ((const int16_t *)p)[i];
	case ART_DT_INT32: return ((const int32_t *)p)[i];
	case ART_DT_UINT32: return ((const uint32_t *)p)[i];
	case ART_DT_INT64: return ((const int64_t *)p)[i];
	case ART_DT_UINT64: return (int64_t)((const uint64_t *)p)[i];
	default: return 0;
	}
}

double rt_get_f(int dt, const void *p, int64_t i)
{
	switch (dt) {
	case ART_DT_FLOAT: return ((const float *)p)[i];
	case ART_DT_DOUBLE: return ((const double *)p)[i];
	case ART_DT_FLOAT16: return half_to_float(((const uint16_t *)p)[i]);
	case ART_DT_BFLOAT16: return bf16_to_float(((const uint16_t *)p)[i]);
	default: return (double)rt_get_int(dt, p, i);
	}
}

float rt_i64_to_f32(int64_t v)
{
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	float f, scale = 1.0f;

	if (u < (uint64_t)1 << 31)
		return (float)(int32_t)v;
	/* Halved to 31 bits, every bit shifted out kept in the lowest
	 * (sticky): below float's 24, it only breaks ties, so the one
	 * rounding of the conversion is the exact value's. */
	while (u >> 31) {
		u = u >> 1 | (u & 1);
		scale *= 2.0f;
	}
	f = (float)(int32_t)u * scale;
	return v < 0 ? -f : f;
}

int64_t rt_get_i(int dt, const void *p, int64_t i)
{
	return rt_is_float(dt) ? f2i(rt_get_f(dt, p, i)) : rt_get_int(dt, p, i);
}

/* Narrowing keeps the low bits (two's complement on every target); other
 * types are left alone. */
void rt_set_int(int dt, void *p, int64_t i, int64_t v)
{
	switch (dt) {
	case ART_DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case ART_DT_INT8: ((int8_t *)p)[i] = (int8_t)(uint8_t)v; break;
	case ART_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case ART_DT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case ART_DT_INT16: ((int16_t *)p)[i] = (int16_t)(uint16_t)v; break;
	case ART_DT_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)v; break;
	case ART_DT_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case ART_DT_INT64: ((int64_t *)p)[i] = v; break;
	case ART_DT_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	default: break;
	}
}

void rt_set_f(int dt, void *p, int64_t i, double v)
{
	switch (dt) {
	case ART_DT_FLOAT: ((float *)p)[i] = (float)v; break;
	case ART_DT_DOUBLE: ((double *)p)[i] = v; break;
	case ART_DT_FLOAT16: ((uint16_t *)p)[i] = float_to_half((float)v); break;
	case ART_DT_BFLOAT16: ((uint16_t *)p)[i] = float_to_bf16((float)v); break;
	case ART_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	default: rt_set_int(dt, p, i, f2i(v)); break;
	}
}

void rt_set_i(int dt, void *p, int64_t i, int64_t v)
{
	if (rt_is_float(dt))
		rt_set_f(dt, p, i, (double)v);
	else
		rt_set_int(dt, p, i, v);
}

void rt_cast(const rt_arr *x, rt_arr *y)
{
	int64_t n = rt_numel(&y->s);
	if (rt_is_float(x->dt))
		for (int64_t i = 0; i < n; i++)
			rt_set_f(y->dt, y->p, i, rt_get_f(x->dt, x->p, i));
	else
		for (int64_t i = 0; i < n; i++)
			rt_set_i(y->dt, y->p, i, rt_get_i(x->dt, x->p, i));
}

void rt_range(const rt_arr *start, const rt_arr *delta, rt_arr *y)
{
	int64_t n = rt_numel(&y->s);
	if (rt_is_float(y->dt)) {
		double s = rt_get_f(start->dt, start->p, 0);
		double d = rt_get_f(delta->dt, delta->p, 0);
		for (int64_t i = 0; i < n; i++)
			rt_set_f(y->dt, y->p, i, s + (double)i * d);
	} else {
		uint64_t s = (uint64_t)rt_get_i(start->dt, start->p, 0);
		uint64_t d = (uint64_t)rt_get_i(delta->dt, delta->p, 0);
		for (int64_t i = 0; i < n; i++)
			rt_set_i(y->dt, y->p, i, (int64_t)(s + (uint64_t)i * d));
	}
}

void rt_eye(int64_t k, rt_arr *y)
{
	int64_t rows = y->s.d[0], cols = y->s.d[1];
	for (int64_t i = 0; i < rows; i++)
		for (int64_t j = 0; j < cols; j++)
			rt_set_i(y->dt, y->p, i * cols + j, j - i == k);
}
