/*
 * ops_reduce.c — Reduce* (axes as an attribute or, from ReduceSum-13 and
 * every Reduce*-18, as an input; keepdims; noop_with_empty_axes),
 * ArgMax / ArgMin and CumSum.
 */
#include <string.h>

#include "ops.h"

static const struct {
	const char *op;
	rt_reduce fn;
} reduce_ops[] = {
	{"ReduceSum", RT_R_SUM}, {"ReduceMean", RT_R_MEAN},
	{"ReduceMax", RT_R_MAX}, {"ReduceMin", RT_R_MIN},
	{"ReduceProd", RT_R_PROD}, {"ReduceL1", RT_R_L1},
	{"ReduceL2", RT_R_L2}, {"ReduceLogSum", RT_R_LOGSUM},
	{"ReduceLogSumExp", RT_R_LOGSUMEXP},
	{"ReduceSumSquare", RT_R_SUMSQUARE},
};

int op_reduce(Ctx *c)
{
	rt_arr x, y;
	int64_t axes[ART_MAX_RANK];
	int n;
	unsigned mask = 0;
	int64_t kept = 1;
	size_t i = 0;

	while (strcmp(reduce_ops[i].op, c->s->op))
		i++;
	if (ctx_arg(c, 0, 1, &x) || ctx_res(c, 0, &y) ||
	    ctx_attr_ints(c, "axes", axes, ART_MAX_RANK, &n))
		return -1;
	if (n < 0 && ctx_ints(c, 1, axes, ART_MAX_RANK, &n))
		return -1;
	if (n <= 0 && ctx_attr_int(c, "noop_with_empty_axes", 0)) {
		rt_unary_apply(RT_COPY, 0, 0, &x, &y);
		return 0;
	}
	for (int k = 0; k < n; k++) {
		int a;
		if (ctx_axis(c, axes[k], x.s.rank, &a))
			return -1;
		mask |= 1u << a;
	}
	if (n <= 0)
		mask = (1u << x.s.rank) - 1;
	for (int k = 0; k < x.s.rank; k++)
		kept *= mask >> k & 1 ? 1 : x.s.d[k];
	if (kept != rt_numel(&y.s))
		return ctx_fail(c, ART_E_OUTPUT_VALUES_REDUCTION_GIVES,
		    ART_I((long long)rt_numel(&y.s)),
				ART_I((long long)kept));
	rt_reduce_apply(reduce_ops[i].fn, &x, mask, &y);
	return 0;
}

int op_argreduce(Ctx *c)
{
	rt_arr x, y;
	int axis;
	if (ctx_arg(c, 0, 1, &x) || ctx_res(c, 0, &y) ||
	    ctx_axis(c, ctx_attr_int(c, "axis", 0), x.s.rank, &axis))
		return -1;
	if (y.dt != ART_DT_INT64 || x.s.d[axis] == 0)
		return ctx_fail(c, ART_E_WANTS_INT64_OUTPUT_NON);
	rt_argreduce(!strcmp(c->s->op, "ArgMax"),
		     (int)ctx_attr_int(c, "select_last_index", 0), &x, axis, &y);
	return 0;
}

int op_cumsum(Ctx *c)
{
	rt_arr x, y;
	int64_t a;
	int n, axis;
	if (ctx_arg(c, 0, 1, &x) || ctx_res(c, 0, &y) ||
	    ctx_ints(c, 1, &a, 1, &n))
		return -1;
	if (n != 1)
		return ctx_fail(c, ART_E_WANTS_ONE_AXIS);
	if (ctx_axis(c, a, x.s.rank, &axis))
		return -1;
	rt_cumsum(&x, axis, (int)ctx_attr_int(c, "exclusive", 0),
		  (int)ctx_attr_int(c, "reverse", 0), &y);
	return 0;
}
