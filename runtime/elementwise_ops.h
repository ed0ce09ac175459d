/*
 * elementwise_ops.h — the float value of every unary and binary op,
 * written once for a type RT_T, names RT_FN(name) and math functions
 * RT_M(fn) (expf or exp): included by kernels_elementwise.c for float
 * (the float32 kernels, name##32) and for double (the other float
 * types).  Every constant is an RT_T, so the float functions hold no
 * double arithmetic but the one named below (Sigmoid).  (<tgmath.h>
 * would pick the functions, but newlib's does not compile.)
 */

#define K(c) ((RT_T)(c))

static RT_T RT_FN(softplus)(RT_T v)
{
	return v > 0 ? v + RT_M(log1p)(RT_M(exp)(-v)) : RT_M(log1p)(RT_M(exp)(v));
}

RT_T RT_FN(rt_unary_value)(rt_unary op, RT_T a, RT_T b, RT_T v)
{
	switch (op) {
	case RT_RELU: return v > 0 ? v : 0;
	case RT_SIGMOID:
		/* In double, rounded once: the value the spec evaluation of
		 * tests/e2e_dynquant.py computes.  1 / (1 + expf(-v)) is an
		 * ulp off at times, and the dynamically quantised YOLOv8n
		 * turns an ulp of a SiLU into whole quantisation steps
		 * (11.6 of 637 at its output). */
		return (RT_T)(1 / (1 + exp(-(double)v)));
	case RT_HARDSIGMOID: return RT_M(fmax)(K(0), RT_M(fmin)(K(1), a * v + b));
	case RT_HARDSWISH:
		return v * RT_M(fmax)(K(0), RT_M(fmin)(K(1), v / 6 + K(0.5)));
	case RT_CLIP: return v < a ? a : v > b ? b : v;
	case RT_LEAKYRELU: return v >= 0 ? v : a * v;
	case RT_TANH: return RT_M(tanh)(v);
	case RT_EXP: return RT_M(exp)(v);
	case RT_LOG: return RT_M(log)(v);
	case RT_NEG: return -v;
	case RT_ABS: return RT_M(fabs)(v);
	case RT_SQRT: return RT_M(sqrt)(v);
	case RT_RECIPROCAL: return 1 / v;
	case RT_ERF: return RT_M(erf)(v);
	case RT_GELU:
		/* a: 0 the exact form, 1 the tanh approximation */
		if (a != 0)
			return K(0.5) * v * (1 + RT_M(tanh)(K(0.79788456080286535588) *
					(v + K(0.044715) * v * v * v)));
		return K(0.5) * v * (1 + RT_M(erf)(v * K(0.70710678118654752440)));
	case RT_SIN: return RT_M(sin)(v);
	case RT_COS: return RT_M(cos)(v);
	case RT_TAN: return RT_M(tan)(v);
	case RT_ASIN: return RT_M(asin)(v);
	case RT_ACOS: return RT_M(acos)(v);
	case RT_ATAN: return RT_M(atan)(v);
	case RT_SINH: return RT_M(sinh)(v);
	case RT_COSH: return RT_M(cosh)(v);
	case RT_ASINH: return RT_M(asinh)(v);
	case RT_ACOSH: return RT_M(acosh)(v);
	case RT_ATANH: return RT_M(atanh)(v);
	case RT_FLOOR: return RT_M(floor)(v);
	case RT_CEIL: return RT_M(ceil)(v);
	case RT_ROUND: return RT_M(nearbyint)(v);     /* halves to even */
	case RT_SIGN: return v > 0 ? 1 : v < 0 ? -1 : v;
	case RT_SOFTPLUS: return RT_FN(softplus)(v);
	case RT_SOFTSIGN: return v / (1 + RT_M(fabs)(v));
	case RT_ELU: return v >= 0 ? v : a * (RT_M(exp)(v) - 1);
	case RT_SELU: return b * (v > 0 ? v : a * (RT_M(exp)(v) - 1));
	case RT_CELU:
		return RT_M(fmax)(K(0), v) +
		       RT_M(fmin)(K(0), a * (RT_M(exp)(v / a) - 1));
	case RT_THRESHOLDEDRELU: return v > a ? v : 0;
	case RT_SHRINK: return v < -b ? v + a : v > b ? v - a : 0;
	case RT_MISH: return v * RT_M(tanh)(RT_FN(softplus)(v));
	case RT_ISNAN: return v != v;
	case RT_ISINF:
		return isinf(v) && ((v > 0 && b != 0) || (v < 0 && a != 0));
	case RT_NOT: return v == 0;
	case RT_AFFINE: return a * v + b;
	case RT_SCALEDTANH: return a * RT_M(tanh)(b * v);
	case RT_COPY: return v;
	}
	return v;
}

/* Python's modulo: the result takes the divisor's sign. */
static RT_T RT_FN(fmod_py)(RT_T a, RT_T b)
{
	RT_T r = RT_M(fmod)(a, b);
	return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

RT_T RT_FN(rt_binary_fvalue)(rt_binary op, RT_T a, RT_T b)
{
	switch (op) {
	case RT_ADD: return a + b;
	case RT_SUB: return a - b;
	case RT_MUL: return a * b;
	case RT_DIV: return a / b;
	case RT_MAX: return a > b || a != a ? a : b;    /* NaN wins */
	case RT_MIN: return a < b || a != a ? a : b;
	case RT_POW: return RT_M(pow)(a, b);
	case RT_MOD: return RT_FN(fmod_py)(a, b);
	case RT_FMOD: return RT_M(fmod)(a, b);
	case RT_PRELU: return a < 0 ? a * b : a;
	case RT_SHIFT_LEFT: case RT_SHIFT_RIGHT: break;  /* integers only */
	default:
		return (RT_T)logic(op, a < b, a == b, a > b, a != 0, b != 0);
	}
	return a;
}

#undef K
#undef RT_T
#undef RT_FN
#undef RT_M
