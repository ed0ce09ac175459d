/*
 * ops_values.c — ops whose outputs do not depend on their inputs'
 * values: Constant, Shape, Size, EyeLike, and Range (from its scalar
 * inputs).
 *
 * arenac folds all of these when it can; they reach the runtime when
 * their output is a graph output, or (Range) when an input is computed.
 */
#include <math.h>
#include <string.h>

#include "ops.h"

/* Constant: value (a small TENSOR attribute the header holds), or
 * value_float(s) / value_int(s). */
int op_constant(Ctx *c)
{
	static const char *const names[] = {"value", "value_float",
		"value_floats", "value_int", "value_ints"};
	art_attr ab;
	const art_attr *a = NULL;
	rt_arr y;
	int64_t n;

	for (int i = 0; i < 5 && !a; i++)
		a = ctx_attr(c, names[i], &ab);
	if (ctx_res(c, 0, &y))
		return -1;
	n = rt_numel(&y.s);
	if (!a || a->count != n || a->type == ART_ATTR_STRING ||
	    a->type == ART_ATTR_STRINGS)
		return ctx_fail(c, ART_E_HEADER_HOLDS_NO_VALUE,
		    ART_I((long long)n));
	/* Integer attributes and integer TENSOR values come in ints. */
	for (int64_t i = 0; i < n; i++) {
		if (a->type == ART_ATTR_INT || a->type == ART_ATTR_INTS ||
		    (a->type == ART_ATTR_TENSOR && !rt_is_float(a->dtype)))
			rt_set_i(y.dt, y.p, i, a->ints[i]);
		else
			rt_set_f(y.dt, y.p, i, a->floats[i]);
	}
	return 0;
}

/* Shape (with start and end from opset 15) and Size. */
int op_shape(Ctx *c)
{
	rt_arr x, y;
	int64_t start = 0, end, r;

	if (ctx_arg(c, 0, 1, &x) || ctx_res(c, 0, &y))
		return -1;
	if (!strcmp(c->s->op, "Size")) {
		if (rt_numel(&y.s) != 1)
			return ctx_fail(c, ART_E_SIZE_GIVES_ONE_VALUE);
		rt_set_i(y.dt, y.p, 0, rt_numel(&x.s));
		return 0;
	}
	r = x.s.rank;
	start = ctx_attr_int(c, "start", 0);
	end = ctx_attr_int(c, "end", r);
	start += start < 0 ? r : 0;
	end += end < 0 ? r : 0;
	start = start < 0 ? 0 : start > r ? r : start;
	end = end < start ? start : end > r ? r : end;
	if (rt_numel(&y.s) != end - start)
		return ctx_fail(c, ART_E_PLAN_S_OUTPUT_VALUES,
		    ART_I((long long)rt_numel(&y.s)),
				ART_I((long long)(end - start)));
	for (int64_t i = start; i < end; i++)
		rt_set_i(y.dt, y.p, i - start, x.s.d[i]);
	return 0;
}

/* Range: max(ceil((limit - start) / delta), 0) values, the plan's. */
int op_range(Ctx *c)
{
	rt_arr start, limit, delta, y;
	double s, l, d, n;
	if (ctx_arg(c, 0, 1, &start) || ctx_arg(c, 1, 1, &limit) ||
	    ctx_arg(c, 2, 1, &delta) || ctx_res(c, 0, &y))
		return -1;
	if (rt_numel(&start.s) != 1 || rt_numel(&limit.s) != 1 ||
	    rt_numel(&delta.s) != 1)
		return ctx_fail(c, ART_E_START_LIMIT_DELTA_SCALARS);
	s = rt_get_f(start.dt, start.p, 0);
	l = rt_get_f(limit.dt, limit.p, 0);
	d = rt_get_f(delta.dt, delta.p, 0);
	n = d != 0 ? ceil((l - s) / d) : -1;
	if (d == 0 || (n > 0 ? n : 0) != (double)rt_numel(&y.s))
		return ctx_fail(c, ART_E_RANGE_VALUES_PLAN_S,
		    ART_G(n > 0 ? n : 0), ART_I((long long)rt_numel(&y.s)));
	rt_range(&start, &delta, &y);
	return 0;
}

/* EyeLike: the plan's output type is the dtype attribute's or x's. */
int op_eyelike(Ctx *c)
{
	rt_arr y;
	if (ctx_res(c, 0, &y))
		return -1;
	if (y.s.rank != 2)
		return ctx_fail(c, ART_E_EYELIKE_MAKES_2_D);
	rt_eye(ctx_attr_int(c, "k", 0), &y);
	return 0;
}
