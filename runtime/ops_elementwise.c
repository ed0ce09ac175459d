/*
 * ops_elementwise.c — unary and binary elementwise ops, their n-ary forms
 * (Sum, Max, Min, Mean), Where, Cast and CastLike.
 *
 * The tables map each op to its kernel code and its parameters'
 * attribute names and defaults; the element types come from the plan.
 */
#include <math.h>
#include <string.h>

#include "ops.h"

static const struct {
	const char *op;
	rt_unary fn;
	double a, b;                /* parameter defaults */
	const char *an, *bn;        /* their attribute names */
} unary_ops[] = {
	{"Relu", RT_RELU, 0, 0, NULL, NULL},
	{"Sigmoid", RT_SIGMOID, 0, 0, NULL, NULL},
	{"HardSigmoid", RT_HARDSIGMOID, 0.2, 0.5, "alpha", "beta"},
	{"HardSwish", RT_HARDSWISH, 0, 0, NULL, NULL},
	{"LeakyRelu", RT_LEAKYRELU, 0.01, 0, "alpha", NULL},
	{"Tanh", RT_TANH, 0, 0, NULL, NULL},
	{"Exp", RT_EXP, 0, 0, NULL, NULL},
	{"Log", RT_LOG, 0, 0, NULL, NULL},
	{"Neg", RT_NEG, 0, 0, NULL, NULL},
	{"Abs", RT_ABS, 0, 0, NULL, NULL},
	{"Sqrt", RT_SQRT, 0, 0, NULL, NULL},
	{"Reciprocal", RT_RECIPROCAL, 0, 0, NULL, NULL},
	{"Erf", RT_ERF, 0, 0, NULL, NULL},
	{"Gelu", RT_GELU, 0, 0, NULL, NULL},
	{"Sin", RT_SIN, 0, 0, NULL, NULL},
	{"Cos", RT_COS, 0, 0, NULL, NULL},
	{"Tan", RT_TAN, 0, 0, NULL, NULL},
	{"Asin", RT_ASIN, 0, 0, NULL, NULL},
	{"Acos", RT_ACOS, 0, 0, NULL, NULL},
	{"Atan", RT_ATAN, 0, 0, NULL, NULL},
	{"Sinh", RT_SINH, 0, 0, NULL, NULL},
	{"Cosh", RT_COSH, 0, 0, NULL, NULL},
	{"Asinh", RT_ASINH, 0, 0, NULL, NULL},
	{"Acosh", RT_ACOSH, 0, 0, NULL, NULL},
	{"Atanh", RT_ATANH, 0, 0, NULL, NULL},
	{"Floor", RT_FLOOR, 0, 0, NULL, NULL},
	{"Ceil", RT_CEIL, 0, 0, NULL, NULL},
	{"Round", RT_ROUND, 0, 0, NULL, NULL},
	{"Sign", RT_SIGN, 0, 0, NULL, NULL},
	{"Softplus", RT_SOFTPLUS, 0, 0, NULL, NULL},
	{"Softsign", RT_SOFTSIGN, 0, 0, NULL, NULL},
	{"Elu", RT_ELU, 1, 0, "alpha", NULL},
	{"Selu", RT_SELU, 1.67326319217681884765625,
	 1.05070102214813232421875, "alpha", "gamma"},
	{"Celu", RT_CELU, 1, 0, "alpha", NULL},
	{"ThresholdedRelu", RT_THRESHOLDEDRELU, 1, 0, "alpha", NULL},
	{"Shrink", RT_SHRINK, 0, 0.5, "bias", "lambd"},
	{"Mish", RT_MISH, 0, 0, NULL, NULL},
	{"IsNaN", RT_ISNAN, 0, 0, NULL, NULL},
	{"IsInf", RT_ISINF, 1, 1, "detect_negative", "detect_positive"},
	{"Not", RT_NOT, 0, 0, NULL, NULL},
	{"Clip", RT_CLIP, -INFINITY, INFINITY, "min", "max"},
};

int op_unary(Ctx *c)
{
	rt_arr x, y;
	size_t i = 0;
	double a, b;

	while (strcmp(unary_ops[i].op, c->s->op))
		i++;
	a = unary_ops[i].an ? ctx_attr_num(c, unary_ops[i].an, unary_ops[i].a) :
	    unary_ops[i].a;
	b = unary_ops[i].bn ? ctx_attr_num(c, unary_ops[i].bn, unary_ops[i].b) :
	    unary_ops[i].b;
	if (unary_ops[i].fn == RT_GELU) {
		const char *ap = ctx_attr_str(c, "approximate", "none");
		if (strcmp(ap, "none") && strcmp(ap, "tanh"))
			return ctx_fail(c, ART_E_UNKNOWN_APPROXIMATE,
			    ART_S(ap));
		a = !strcmp(ap, "tanh");
	}
	/* Clip from opset 11 takes min and max as inputs. */
	if (unary_ops[i].fn == RT_CLIP &&
	    (ctx_scalar(c, 1, a, &a) || ctx_scalar(c, 2, b, &b)))
		return -1;
	if (ctx_arg(c, 0, 1, &x) || ctx_res(c, 0, &y))
		return -1;
	if (!rt_is_float(x.dt) && !rt_unary_int(unary_ops[i].fn))
		return ctx_fail(c, ART_E_DEFINED_INTEGER_TYPE, ART_I(x.dt));
	rt_unary_apply(unary_ops[i].fn, a, b, &x, &y);
	return 0;
}

static const struct {
	const char *op;
	rt_binary fn;
} binary_ops[] = {
	{"Add", RT_ADD}, {"Sum", RT_ADD}, {"Mean", RT_ADD}, {"Sub", RT_SUB},
	{"Mul", RT_MUL}, {"Div", RT_DIV}, {"Max", RT_MAX}, {"Min", RT_MIN},
	{"Pow", RT_POW}, {"Mod", RT_MOD}, {"And", RT_AND}, {"Or", RT_OR},
	{"Xor", RT_XOR}, {"Equal", RT_EQUAL}, {"Less", RT_LESS},
	{"LessOrEqual", RT_LESS_EQUAL}, {"Greater", RT_GREATER},
	{"GreaterOrEqual", RT_GREATER_EQUAL}, {"BitShift", RT_SHIFT_LEFT},
	{"PRelu", RT_PRELU},
};

/*
 * Binary ops and the n-ary ones (Sum, Max, Min, Mean), folded left in y.
 * With three operands or more the fold starts at the operand y is
 * planned in place over, if any, so that no operand is read after y has
 * overwritten it (the n-ary ops commute; a binary op reads element i of
 * both operands before it writes y[i]).
 */
int op_binary(Ctx *c)
{
	rt_arr a, b, y;
	int order[64], n = c->s->ninputs, first = 0;
	size_t i = 0;
	rt_binary fn;

	while (strcmp(binary_ops[i].op, c->s->op))
		i++;
	fn = binary_ops[i].fn;
	if (fn == RT_MOD && ctx_attr_int(c, "fmod", 0))
		fn = RT_FMOD;
	if (fn == RT_SHIFT_LEFT) {
		const char *d = ctx_attr_str(c, "direction", "");
		if (strcmp(d, "LEFT") && strcmp(d, "RIGHT"))
			return ctx_fail(c, ART_E_DIRECTION_LEFT_RIGHT);
		fn = !strcmp(d, "LEFT") ? RT_SHIFT_LEFT : RT_SHIFT_RIGHT;
	}
	if (ctx_attr(c, "broadcast", &(art_attr){0}))
		return ctx_fail(c, ART_E_OPSET_7_BROADCAST_ATTRIBUTE);
	if (n < 1 || n > 64 || ctx_res(c, 0, &y))
		return ctx_fail(c, ART_E_WANTS_1_64_OPERANDS);
	for (int j = 0; n > 2 && j < n; j++)
		if (ctx_in(c, j) >= 0 &&
		    ctx_in(c, j) == ctx_tensor(c, ctx_out(c, 0)).inplace_of)
			first = j;
	order[0] = first;
	for (int j = 0, k = 1; j < n; j++)
		if (j != first)
			order[k++] = j;
	if (ctx_arg(c, order[0], 1, &a))
		return -1;
	if (n == 1)
		rt_unary_apply(RT_COPY, 0, 0, &a, &y);
	for (int j = 1; j < n; j++) {
		if (ctx_arg(c, order[j], 1, &b))
			return -1;
		rt_binary_apply(fn, &a, &b, &y);
		a = y;
	}
	if (!strcmp(c->s->op, "Mean")) {
		float count = (float)n;
		rt_arr k = {&count, ART_DT_FLOAT, {0, {0}}};
		rt_binary_apply(RT_DIV, &y, &k, &y);
	}
	return 0;
}

int op_where(Ctx *c)
{
	rt_arr cond, x, y, out;
	if (ctx_arg(c, 0, 1, &cond) || ctx_arg(c, 1, 1, &x) ||
	    ctx_arg(c, 2, 1, &y) || ctx_res(c, 0, &out))
		return -1;
	if (x.dt != out.dt || y.dt != out.dt)
		return ctx_fail(c, ART_E_X_Y_OUTPUT_DIFFER);
	rt_where(&cond, &x, &y, &out);
	return 0;
}

/* Cast and CastLike: the plan's output type is the target. */
int op_cast(Ctx *c)
{
	rt_arr x, y;
	if (ctx_arg(c, 0, 1, &x) || ctx_res(c, 0, &y))
		return -1;
	rt_cast(&x, &y);
	return 0;
}
