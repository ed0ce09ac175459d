/*
 * ops_scatter.c — ScatterElements (and its older name Scatter), ScatterND
 * (with their reductions), GatherND and ReverseSequence.
 */
#include <string.h>

#include "ops.h"

/* The reduction attribute: -1 for none, else the binary op. */
static int reduction(Ctx *c, int *red)
{
	static const struct {
		const char *name;
		int op;
	} reds[] = {{"none", -1}, {"add", RT_ADD}, {"mul", RT_MUL},
		    {"max", RT_MAX}, {"min", RT_MIN}};
	const char *r = ctx_attr_str(c, "reduction", "none");
	for (size_t i = 0; i < sizeof reds / sizeof reds[0]; i++)
		if (!strcmp(r, reds[i].name)) {
			*red = reds[i].op;
			return 0;
		}
	return ctx_fail(c, ART_E_UNKNOWN_REDUCTION, ART_S(r));
}

/* Updates of ScatterND: indices [..., k], updates [..., data dims k on]. */
static int nd_shapes(Ctx *c, const rt_arr *x, const rt_arr *idx,
		     const rt_arr *upd, int64_t *k)
{
	int64_t want = 1;
	*k = idx->s.rank ? idx->s.d[idx->s.rank - 1] : 0;
	for (int i = 0; i < idx->s.rank - 1; i++)
		want *= idx->s.d[i];
	for (int i = (int)*k; i < x->s.rank; i++)
		want *= x->s.d[i];
	if (*k < 1 || *k > x->s.rank || rt_numel(&upd->s) != want)
		return ctx_fail(c, ART_E_INDICES_UPDATES_MISSHAPEN);
	return 0;
}

/* y = data, then the updates land (y is never data: IP_NO). */
int op_scatter(Ctx *c)
{
	rt_arr x, idx, upd, y;
	int red = -1, axis = 0, nd = !strcmp(c->s->op, "ScatterND");
	int64_t k = 1;

	if (ctx_arg(c, 0, 1, &x) || ctx_arg(c, 1, 1, &idx) ||
	    ctx_arg(c, 2, 1, &upd) || ctx_res(c, 0, &y) || reduction(c, &red))
		return -1;
	if (x.dt != y.dt || upd.dt != y.dt || rt_numel(&x.s) != rt_numel(&y.s))
		return ctx_fail(c, ART_E_DATA_UPDATES_OUTPUT_DIFFER);
	if (nd ? nd_shapes(c, &x, &idx, &upd, &k) :
	    ctx_axis(c, ctx_attr_int(c, "axis", 0), x.s.rank, &axis))
		return -1;
	if (!nd && (idx.s.rank != x.s.rank ||
		    rt_numel(&idx.s) != rt_numel(&upd.s)))
		return ctx_fail(c, ART_E_INDICES_UPDATES_MISSHAPEN);
	if (ctx_indices(c, &idx, k, nd ? x.s.d : &x.s.d[axis]))
		return -1;
	memcpy(y.p, x.p, ctx_tensor(c, ctx_out(c, 0)).bytes);
	if (nd)
		rt_scatter_nd(&y, &idx, &upd, red);
	else
		rt_scatter_elements(&y, axis, &idx, &upd, red);
	return 0;
}

int op_gather_nd(Ctx *c)
{
	rt_arr x, idx, y;
	int64_t b = ctx_attr_int(c, "batch_dims", 0), k, want = 1;

	if (ctx_arg(c, 0, 1, &x) || ctx_arg(c, 1, 1, &idx) || ctx_res(c, 0, &y))
		return -1;
	k = idx.s.rank ? idx.s.d[idx.s.rank - 1] : 0;
	if (b < 0 || b >= idx.s.rank || b >= x.s.rank || k < 1 ||
	    k > x.s.rank - b || x.dt != y.dt)
		return ctx_fail(c, ART_E_BATCH_DIMS_INDICES_DATA);
	for (int i = 0; i < idx.s.rank - 1; i++)
		want *= idx.s.d[i];
	for (int i = (int)(b + k); i < x.s.rank; i++)
		want *= x.s.d[i];
	for (int i = 0; i < b; i++)
		if (idx.s.d[i] != x.s.d[i])
			return ctx_fail(c, ART_E_BATCH_DIMS_DIFFER);
	if (want != rt_numel(&y.s))
		return ctx_fail(c, ART_E_OUTPUT_VALUES_2,
				ART_I((long long)rt_numel(&y.s)),
				    ART_I((long long)want));
	if (ctx_indices(c, &idx, k, x.s.d + b))
		return -1;
	rt_gather_nd(&x, &idx, (int)b, &y);
	return 0;
}

int op_reverse_sequence(Ctx *c)
{
	rt_arr x, lens, y;
	int t = (int)ctx_attr_int(c, "time_axis", 0);
	int b = (int)ctx_attr_int(c, "batch_axis", 1);

	if (ctx_arg(c, 0, 1, &x) || ctx_arg(c, 1, 1, &lens) ||
	    ctx_res(c, 0, &y))
		return -1;
	if (x.s.rank < 2 || t + b != 1 || (t != 0 && t != 1) ||
	    x.dt != y.dt || rt_is_float(lens.dt) ||
	    rt_numel(&lens.s) != x.s.d[b])
		return ctx_fail(c, ART_E_WANTS_TIME_BATCH_AXES);
	for (int64_t i = 0; i < x.s.d[b]; i++) {
		int64_t n = rt_get_i(lens.dt, lens.p, i);
		if (n < 0 || n > x.s.d[t])
			return ctx_fail(c, ART_E_SEQUENCE_LENGTH_0,
			    ART_I((long long)n),
					ART_I((long long)x.s.d[t]));
	}
	rt_reverse_sequence(&x, t, &lens, &y);
	return 0;
}
