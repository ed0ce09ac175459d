/*
 * kernels_elementwise.c — unary, binary and Where kernels over every
 * numeric type.
 *
 * Each op is written once per domain (kernels_dtype.c): for the float
 * types (elementwise_ops.h, made a float function for float32 tensors and
 * a double one for the others), in int64 for the integer types and bool,
 * where the integer semantics differ (division truncates, Mod takes the
 * divisor's sign, Pow multiplies).  The float32-only case, which is what
 * CNNs and transformers spend their time in, gets loops of its own that
 * compute in float, as onnxruntime's float kernels do: no double, which
 * a Cortex-M4F computes in software.  Outputs may be an
 * operand of the output's shape: element i is read before it is written.
 */
#include <math.h>
#include <string.h>

#include "kernels.h"

/*
 * The bool-valued ops (logic and comparisons), the same in both domains,
 * from how the operands compare (none of lt, eq, gt for a NaN) and
 * whether each is true (nonzero).
 */
static int logic(rt_binary op, int lt, int eq, int gt, int at, int bt)
{
	switch (op) {
	case RT_AND: return at && bt;
	case RT_OR: return at || bt;
	case RT_XOR: return at != bt;
	case RT_EQUAL: return eq;
	case RT_LESS: return lt;
	case RT_LESS_EQUAL: return lt || eq;
	case RT_GREATER: return gt;
	default: return gt || eq;           /* RT_GREATER_EQUAL */
	}
}

/* The ops' values, once, for float (RT_T float: float32 tensors, single
 * precision, the FPU of a Cortex-M4F) and for double (the other float
 * types, whose values float32 cannot hold). */
#define RT_T float
#define RT_FN(name) name##32
#define RT_M(fn) fn##f
#include "elementwise_ops.h"
#define RT_T double
#define RT_FN(name) name
#define RT_M(fn) fn
#include "elementwise_ops.h"

int rt_unary_int(rt_unary op)
{
	return op == RT_RELU || op == RT_NEG || op == RT_ABS ||
	       op == RT_SIGN || op == RT_NOT || op == RT_CLIP ||
	       op == RT_COPY;
}

/* The integer forms; only ops rt_unary_int accepts come here. */
static int64_t iunary(rt_unary op, double a, double b, int64_t v)
{
	switch (op) {
	case RT_RELU: return v > 0 ? v : 0;
	case RT_NEG: return (int64_t)(0 - (uint64_t)v);
	case RT_ABS: return v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
	case RT_SIGN: return v > 0 ? 1 : v < 0 ? -1 : 0;
	case RT_NOT: return v == 0;
	case RT_CLIP:
		return (double)v < a ? (int64_t)a : (double)v > b ? (int64_t)b : v;
	default: return v;
	}
}

void rt_unary_apply(rt_unary op, double a, double b, const rt_arr *x,
		    rt_arr *y)
{
	int64_t n = rt_numel(&y->s);
	if (x->dt == ART_DT_FLOAT && y->dt == ART_DT_FLOAT) {
		const float *xp = x->p;
		float *yp = y->p;
		for (int64_t i = 0; i < n; i++)
			yp[i] = rt_unary_value32(op, (float)a, (float)b, xp[i]);
	} else if (rt_is_float(x->dt)) {
		for (int64_t i = 0; i < n; i++)
			rt_set_f(y->dt, y->p, i,
				 rt_unary_value(op, a, b, rt_get_f(x->dt, x->p, i)));
	} else {
		for (int64_t i = 0; i < n; i++)
			rt_set_i(y->dt, y->p, i,
				 iunary(op, a, b, rt_get_i(x->dt, x->p, i)));
	}
}

static int64_t ipow(int64_t a, int64_t e)
{
	uint64_t r = 1, base = (uint64_t)a;
	if (e < 0)
		return a == 1 ? 1 : a == -1 ? (e % 2 ? -1 : 1) : 0;
	for (; e; e >>= 1, base *= base)
		if (e & 1)
			r *= base;
	return (int64_t)r;
}

/* Wrapping arithmetic (through uint64, never signed overflow); division
 * by zero gives 0, which the spec leaves undefined. */
int64_t rt_binary_ivalue(rt_binary op, int64_t a, int64_t b)
{
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
	switch (op) {
	case RT_ADD: return (int64_t)(ua + ub);
	case RT_SUB: return (int64_t)(ua - ub);
	case RT_MUL: return (int64_t)(ua * ub);
	case RT_DIV:
		if (b == 0)
			return 0;
		return b == -1 ? (int64_t)(0 - ua) : a / b;   /* truncates */
	case RT_MOD: case RT_FMOD: {
		int64_t r = b == 0 || b == -1 ? 0 : a % b;
		return op == RT_MOD && r != 0 && (r < 0) != (b < 0) ? r + b : r;
	}
	case RT_MAX: return a > b ? a : b;
	case RT_MIN: return a < b ? a : b;
	case RT_POW: return ipow(a, b);
	case RT_PRELU: return a < 0 ? (int64_t)(ua * ub) : a;
	case RT_SHIFT_LEFT: return ub >= 64 ? 0 : (int64_t)(ua << ub);
	case RT_SHIFT_RIGHT: return ub >= 64 ? 0 : (int64_t)(ua >> ub);
	default:
		return logic(op, a < b, a == b, a > b, a != 0, b != 0);
	}
}

typedef struct Binary {
	rt_binary op;
	int adt, bdt, ydt;
	int in_float;               /* compute in double */
} Binary;

/* y[i] = a[i * sa] op b[i * sb], all float32. */
static void binary_row_f32(const Binary *c, const float *a, int64_t sa,
			   const float *b, int64_t sb, float *y, int64_t n)
{
	if (sa && sb) {
		for (int64_t i = 0; i < n; i++)
			y[i] = rt_binary_fvalue32(c->op, a[i], b[i]);
	} else if (sa) {
		for (int64_t i = 0; i < n; i++)
			y[i] = rt_binary_fvalue32(c->op, a[i], b[0]);
	} else {
		for (int64_t i = 0; i < n; i++)
			y[i] = rt_binary_fvalue32(c->op, a[0], b[i * sb]);
	}
}

static void binary_row(void *ctx, char *const *p, const int64_t *st,
		       int64_t n)
{
	const Binary *c = ctx;
	if (c->adt == ART_DT_FLOAT && c->bdt == ART_DT_FLOAT &&
	    c->ydt == ART_DT_FLOAT) {
		binary_row_f32(c, (const float *)p[1], st[1],
			       (const float *)p[2], st[2], (float *)p[0], n);
	} else if (c->in_float) {
		for (int64_t i = 0; i < n; i++)
			rt_set_f(c->ydt, p[0], i, rt_binary_fvalue(c->op,
				 rt_get_f(c->adt, p[1], i * st[1]),
				 rt_get_f(c->bdt, p[2], i * st[2])));
	} else {
		for (int64_t i = 0; i < n; i++)
			rt_set_i(c->ydt, p[0], i, rt_binary_ivalue(c->op,
				 rt_get_i(c->adt, p[1], i * st[1]),
				 rt_get_i(c->bdt, p[2], i * st[2])));
	}
}

void rt_binary_apply(rt_binary op, const rt_arr *a, const rt_arr *b,
		     rt_arr *y)
{
	/* Pow may mix an integer base with a float exponent or the reverse:
	 * any float operand puts the computation in double. */
	Binary c = {op, a->dt, b->dt, y->dt,
		    rt_is_float(a->dt) || rt_is_float(b->dt)};
	const rt_arr *ops[3] = {y, a, b};
	rt_broadcast(3, ops, binary_row, &c);
}

/* Operands: output, condition, x, y; every element one of es bytes. */
static void where_row(void *ctx, char *const *p, const int64_t *st,
		      int64_t n)
{
	size_t es = *(const size_t *)ctx;
	for (int64_t i = 0; i < n; i++) {
		int pick = p[1][i * st[1]] != 0;
		/* out may be x or y itself: memmove */
		memmove(p[0] + i * (int64_t)es,
		       (pick ? p[2] + i * st[2] * (int64_t)es :
			p[3] + i * st[3] * (int64_t)es), es);
	}
}

void rt_where(const rt_arr *cond, const rt_arr *x, const rt_arr *y,
	      rt_arr *out)
{
	size_t es = art_dtype_size(out->dt);
	const rt_arr *ops[4] = {out, cond, x, y};
	rt_broadcast(4, ops, where_row, &es);
}

/* Operands: output, input. */
static void expand_row(void *ctx, char *const *p, const int64_t *st,
		       int64_t n)
{
	size_t es = *(const size_t *)ctx;
	if (st[1]) {
		memmove(p[0], p[1], (size_t)n * es);
		return;
	}
	for (int64_t i = 0; i < n; i++)
		memcpy(p[0] + i * (int64_t)es, p[1], es);
}

void rt_expand(const rt_arr *x, rt_arr *y)
{
	size_t es = art_dtype_size(y->dt);
	const rt_arr *ops[2] = {y, x};
	rt_broadcast(2, ops, expand_row, &es);
}
