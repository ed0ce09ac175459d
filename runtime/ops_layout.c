/*
 * ops_layout.c — ops that move elements: the views (Reshape and
 * friends), Concat, Split, Transpose, DepthToSpace / SpaceToDepth, Slice,
 * Pad, Expand, Tile, Trilu, Gather, GatherElements.
 *
 * Where an attribute or input determines an output shape (Split sizes,
 * Slice bounds), it is checked against the plan's shape, so a planner
 * that got the shape wrong is caught here rather than read past.
 */
#include <string.h>

#include "ops.h"

/* An output and an input of the same element type. */
static int same_type_io(Ctx *c, rt_arr *x, rt_arr *y)
{
	if (ctx_arg(c, 0, 1, x) || ctx_res(c, 0, y))
		return -1;
	if (x->dt != y->dt)
		return ctx_fail(c, ART_E_INPUT_OUTPUT_DIFFER_TYPE);
	return 0;
}

/*
 * Reshape and friends: the values do not change, only the shape.  With
 * views the plan makes the output the input's bytes and the step a noop;
 * without, the bytes are copied.
 */
int op_copy(Ctx *c)
{
	int x = ctx_in(c, 0), y = ctx_out(c, 0);
	void *xp, *yp;

	if (x < 0 || y < 0)
		return ctx_fail(c, ART_E_INPUT_OUTPUT_MISSING);
	if (ctx_tensor(c, x).bytes != ctx_tensor(c, y).bytes)
		return ctx_fail(c, ART_E_OUTPUT_SIZE_DIFFERS_FROM);
	xp = ctx_ptr(c, x), yp = ctx_ptr(c, y);
	if (xp != yp) {
		if (c->s->noop || ctx_root(c, x) == ctx_root(c, y))
			return ctx_fail(c, ART_E_PLANNED_VIEW_BUT_DOES,
					ART_S(ctx_tensor(c, y).name),
					ART_S(ctx_tensor(c, x).name));
		memcpy(yp, xp, ctx_tensor(c, y).bytes);
	}
	return 0;
}

/* Dropout in inference mode: a copy, and a mask of trues.  In training
 * mode it drops values at random: not here.  Its own adapter, so that
 * the views' (a firmware's Flatten) reads no double. */
int op_dropout(Ctx *c)
{
	int mask = ctx_out(c, 1);
	double ratio = 0, training = 0;

	if (ctx_scalar(c, 1, ctx_attr_num(c, "ratio", 0.5), &ratio) ||
	    ctx_scalar(c, 2, 0, &training))
		return -1;
	if (training != 0 && ratio != 0)
		return ctx_fail(c, ART_E_DROPOUT_TRAINING_MODE_RANDOM);
	if (op_copy(c))
		return -1;
	if (mask >= 0 && ctx_tensor(c, mask).rank >= 0)
		memset(ctx_ptr(c, mask), 1, ctx_tensor(c, mask).bytes);
	return 0;
}

/* outer and inner of s around axis. */
static void around(const rt_shape *s, int axis, int64_t *outer,
		   int64_t *inner)
{
	*outer = *inner = 1;
	for (int i = 0; i < axis; i++)
		*outer *= s->d[i];
	for (int i = axis + 1; i < s->rank; i++)
		*inner *= s->d[i];
}

int op_concat(Ctx *c)
{
	rt_arr y;
	int64_t outer, inner, at = 0;
	int axis;
	size_t es;

	if (ctx_res(c, 0, &y) ||
	    ctx_axis(c, ctx_attr_int(c, "axis", 0), y.s.rank, &axis))
		return -1;
	around(&y.s, axis, &outer, &inner);
	es = art_dtype_size(y.dt);
	for (int j = 0; j < c->s->ninputs; j++) {
		rt_arr x;
		if (ctx_arg(c, j, 1, &x))
			return -1;
		if (x.dt != y.dt || x.s.rank != y.s.rank ||
		    at + x.s.d[axis] > y.s.d[axis])
			return ctx_fail(c, ART_E_INPUT_DOES_FIT_OUTPUT,
					ART_I(j));
		/* An elided concat: the producer already wrote the slice. */
		if (ctx_tensor(c, ctx_in(c, j)).alias_of == ctx_out(c, 0)) {
			if (outer != 1 || (char *)x.p != (char *)y.p +
			    (size_t)(at * inner) * es)
				return ctx_fail(c,
				    ART_E_INPUT_PLANNED_INTO_OUTPUT,
						ART_S(ctx_tensor(c, ctx_in(c,
						    j)).name));
		} else if (c->s->noop) {
			return ctx_fail(c, ART_E_NOOP_STEP_YET_INPUT,
			    ART_S(ctx_tensor(c, ctx_in(c, j)).name));
		} else {
			rt_copy_slab(x.p, x.s.d[axis], 0, y.p, y.s.d[axis], at,
				     x.s.d[axis], outer, inner, es);
		}
		at += x.s.d[axis];
	}
	return 0;
}

/*
 * Split sizes from the split attribute (before opset 13) or input (from
 * 13), else equal parts (from 18 with num_outputs, the last one smaller);
 * each must be the plan's output size along axis.
 */
int op_split(Ctx *c)
{
	rt_arr x;
	int64_t sizes[64], outer, inner, at = 0;
	int n = c->s->noutputs, got, axis;

	if (ctx_arg(c, 0, 1, &x) ||
	    ctx_axis(c, ctx_attr_int(c, "axis", 0), x.s.rank, &axis) ||
	    ctx_attr_ints(c, "split", sizes, 64, &got))
		return -1;
	if (n > 64)
		return ctx_fail(c, ART_E_MORE_64_OUTPUTS);
	if (got < 0 && ctx_ints(c, 1, sizes, 64, &got))
		return -1;
	if (got >= 0 && got != n)
		return ctx_fail(c, ART_E_SPLIT_SIZES_OUTPUTS, ART_I(got),
		    ART_I(n));
	for (int k = 0; got < 0 && k < n; k++) {
		int64_t chunk = (x.s.d[axis] + n - 1) / n;
		sizes[k] = x.s.d[axis] - k * chunk < chunk ?
			   x.s.d[axis] - k * chunk : chunk;
	}
	for (int k = 0; k < n; k++) {
		if (sizes[k] < 0 || sizes[k] > x.s.d[axis] - at)
			return ctx_fail(c, ART_E_SPLIT_SIZES_DO_ADD,
					ART_I((long long)x.s.d[axis]));
		at += sizes[k];
	}
	if (at != x.s.d[axis])
		return ctx_fail(c, ART_E_SPLIT_SIZES_DO_ADD,
				ART_I((long long)x.s.d[axis]));
	at = 0;
	around(&x.s, axis, &outer, &inner);
	for (int k = 0; k < n; at += sizes[k++]) {
		rt_arr y;
		/* an output nobody reads keeps its place in the split */
		if (ctx_out(c, k) < 0 || ctx_tensor(c, ctx_out(c, k)).rank < 0)
			continue;
		if (ctx_res(c, k, &y))
			return -1;
		if (y.dt != x.dt || y.s.rank != x.s.rank ||
		    y.s.d[axis] != sizes[k])
			return ctx_fail(c, ART_E_OUTPUT_LONG_PART,
					ART_I(k), ART_I((long long)sizes[k]));
		rt_copy_slab(x.p, x.s.d[axis], at, y.p, sizes[k], 0, sizes[k],
			     outer, inner, art_dtype_size(x.dt));
	}
	return 0;
}

int op_transpose(Ctx *c)
{
	rt_arr x, y;
	int64_t perm[ART_MAX_RANK];
	unsigned seen = 0;
	int n;

	if (same_type_io(c, &x, &y) ||
	    ctx_attr_ints(c, "perm", perm, ART_MAX_RANK, &n))
		return -1;
	if (n >= 0 && n != x.s.rank)
		return ctx_fail(c, ART_E_PERM_VALUES_RANK, ART_I(n),
				ART_I(x.s.rank));
	for (int i = 0; n < 0 && i < x.s.rank; i++)
		perm[i] = x.s.rank - 1 - i;
	for (int i = 0; i < x.s.rank; i++) {
		if (perm[i] < 0 || perm[i] >= x.s.rank || seen >> perm[i] & 1)
			return ctx_fail(c, ART_E_BAD_PERM);
		seen |= 1u << perm[i];
	}
	rt_transpose(&x, perm, &y);
	return 0;
}

/*
 * DepthToSpace and SpaceToDepth are a transpose of a 6-D view, as the
 * spec defines them.
 */
int op_depth_space(Ctx *c)
{
	static const int64_t dcr[6] = {0, 3, 4, 1, 5, 2};
	static const int64_t crd[6] = {0, 1, 4, 2, 5, 3};
	static const int64_t s2d[6] = {0, 3, 5, 1, 2, 4};
	rt_arr x, y, x6, y6;
	int64_t bs = ctx_attr_int(c, "blocksize", 0), b, ch, h, w;
	const int64_t *perm;
	int to_space = !strcmp(c->s->op, "DepthToSpace");

	if (same_type_io(c, &x, &y))
		return -1;
	if (x.s.rank != 4 || bs < 1)
		return ctx_fail(c, ART_E_WANTS_4_D_INPUT);
	b = x.s.d[0], ch = x.s.d[1], h = x.s.d[2], w = x.s.d[3];
	x6 = x;
	x6.s.rank = 6;
	if (to_space) {
		int is_crd = !strcmp(ctx_attr_str(c, "mode", "DCR"), "CRD");
		int64_t d[6] = {b, bs, bs, ch / (bs * bs), h, w};
		if (is_crd)
			d[1] = ch / (bs * bs), d[2] = d[3] = bs;
		memcpy(x6.s.d, d, sizeof d);
		perm = is_crd ? crd : dcr;
	} else {
		int64_t d[6] = {b, ch, h / bs, bs, w / bs, bs};
		memcpy(x6.s.d, d, sizeof d);
		perm = s2d;
	}
	y6 = y;
	y6.s.rank = 6;
	for (int i = 0; i < 6; i++)
		y6.s.d[i] = x6.s.d[perm[i]];
	if (rt_numel(&x6.s) != rt_numel(&x.s) ||
	    rt_numel(&y6.s) != rt_numel(&y.s))
		return ctx_fail(c, ART_E_BLOCKSIZE_DOES_DIVIDE_SHAPE);
	rt_transpose(&x6, perm, &y6);
	return 0;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/*
 * Slice bounds from attributes (before opset 10) or inputs, clamped as
 * the spec says; each axis's element count must be the plan's.
 */
int op_slice(Ctx *c)
{
	rt_arr x, y;
	int64_t st[ART_MAX_RANK], en[ART_MAX_RANK], ax[ART_MAX_RANK];
	int64_t sp[ART_MAX_RANK], start[ART_MAX_RANK], step[ART_MAX_RANK];
	int ns, ne, na, nsp;

	if (same_type_io(c, &x, &y))
		return -1;
	if (c->s->opset < 10) {
		if (ctx_attr_ints(c, "starts", st, ART_MAX_RANK, &ns) ||
		    ctx_attr_ints(c, "ends", en, ART_MAX_RANK, &ne) ||
		    ctx_attr_ints(c, "axes", ax, ART_MAX_RANK, &na))
			return -1;
		nsp = -1;
	} else if (ctx_ints(c, 1, st, ART_MAX_RANK, &ns) ||
		   ctx_ints(c, 2, en, ART_MAX_RANK, &ne) ||
		   ctx_ints(c, 3, ax, ART_MAX_RANK, &na) ||
		   ctx_ints(c, 4, sp, ART_MAX_RANK, &nsp)) {
		return -1;
	}
	if (ns < 0 || ne != ns || (na >= 0 && na != ns) ||
	    (nsp >= 0 && nsp != ns))
		return ctx_fail(c, ART_E_STARTS_ENDS_AXES_STEPS);
	for (int i = 0; i < x.s.rank; i++)
		start[i] = 0, step[i] = 1;
	for (int k = 0; k < ns; k++) {
		int a;
		int64_t d, s = nsp >= 0 ? sp[k] : 1, b = st[k], e = en[k], cnt;
		if (ctx_axis(c, na >= 0 ? ax[k] : k, x.s.rank, &a))
			return -1;
		if (s == 0)
			return ctx_fail(c, ART_E_STEP_0);
		d = x.s.d[a];
		b += b < 0 ? d : 0;
		e += e < 0 ? d : 0;
		b = s > 0 ? clamp(b, 0, d) : clamp(b, 0, d - 1);
		e = s > 0 ? clamp(e, 0, d) : clamp(e, -1, d - 1);
		cnt = s > 0 ? (e - b + s - 1) / s : (b - e - s - 1) / -s;
		if ((cnt < 0 ? 0 : cnt) != y.s.d[a])
			return ctx_fail(c, ART_E_AXIS_KEEPS_VALUES_PLAN,
			    ART_I(a), ART_I((long long)cnt),
					ART_I((long long)y.s.d[a]));
		start[a] = b, step[a] = s;
	}
	rt_slice(&x, start, step, &y);
	return 0;
}

int op_pad(Ctx *c)
{
	static const char *const modes[] = {"constant", "reflect", "edge",
					    "wrap"};
	rt_arr x, y;
	int64_t pads[2 * ART_MAX_RANK], given[2 * ART_MAX_RANK];
	int64_t axes[ART_MAX_RANK];
	double value = ctx_attr_num(c, "value", 0);
	uint64_t vbuf;
	int n, na, mode = -1;
	const char *m = ctx_attr_str(c, "mode", "constant");

	for (int i = 0; i < 4; i++)
		if (!strcmp(m, modes[i]))
			mode = i;
	if (mode < 0)
		return ctx_fail(c, ART_E_PAD_MODE_SUPPORTED, ART_S(m));
	if (same_type_io(c, &x, &y))
		return -1;
	/* Opset 11 moved pads and value from attributes to inputs, 18
	 * added axes. */
	if (ctx_attr_ints(c, "pads", given, 2 * ART_MAX_RANK, &n))
		return -1;
	na = -1;
	if (n < 0 && (ctx_ints(c, 1, given, 2 * ART_MAX_RANK, &n) ||
		      ctx_scalar(c, 2, value, &value) ||
		      ctx_ints(c, 3, axes, ART_MAX_RANK, &na)))
		return -1;
	if (n != 2 * (na >= 0 ? na : x.s.rank))
		return ctx_fail(c, ART_E_PADS_AXES, ART_I(n),
				ART_I(na >= 0 ? na : x.s.rank));
	memset(pads, 0, sizeof pads);
	for (int k = 0; k < n / 2; k++) {
		int a = k;
		if (na >= 0 && ctx_axis(c, axes[k], x.s.rank, &a))
			return -1;
		pads[a] = given[k];
		pads[x.s.rank + a] = given[n / 2 + k];
	}
	for (int i = 0; i < x.s.rank; i++)
		if (x.s.d[i] + pads[i] + pads[x.s.rank + i] != y.s.d[i] ||
		    (mode != RT_PAD_CONSTANT && x.s.d[i] == 0 && y.s.d[i]))
			return ctx_fail(c, ART_E_PADS_DO_GIVE_PLAN);
	rt_set_f(y.dt, &vbuf, 0, value);
	rt_pad((rt_pad_mode)mode, pads, &vbuf, &x, &y);
	return 0;
}

/* x must broadcast to the plan's output shape (numpy rules). */
static int broadcasts(Ctx *c, const rt_shape *xs, const rt_shape *ys)
{
	if (xs->rank > ys->rank)
		return ctx_fail(c, ART_E_INPUT_RANK_ABOVE_OUTPUT);
	for (int i = 0; i < xs->rank; i++) {
		int64_t d = xs->d[i], o = ys->d[ys->rank - xs->rank + i];
		if (d != 1 && d != o)
			return ctx_fail(c, ART_E_INPUT_DIM_DOES_BROADCAST,
			    ART_I(i), ART_I((long long)d),
					ART_I((long long)o));
	}
	return 0;
}

int op_expand(Ctx *c)
{
	rt_arr x, y;
	if (same_type_io(c, &x, &y) || broadcasts(c, &x.s, &y.s))
		return -1;
	rt_expand(&x, &y);
	return 0;
}

int op_tile(Ctx *c)
{
	rt_arr x, y;
	int64_t rep[ART_MAX_RANK];
	int n;
	if (same_type_io(c, &x, &y) || ctx_ints(c, 1, rep, ART_MAX_RANK, &n))
		return -1;
	if (n != x.s.rank || y.s.rank != x.s.rank)
		return ctx_fail(c, ART_E_WANTS_ONE_REPEAT_PER);
	for (int i = 0; i < n; i++)
		if (x.s.d[i] * rep[i] != y.s.d[i])
			return ctx_fail(c, ART_E_REPEATS_DO_GIVE_PLAN);
	rt_tile(&x, &y);
	return 0;
}

int op_trilu(Ctx *c)
{
	rt_arr x, y;
	double k;
	if (same_type_io(c, &x, &y) || ctx_scalar(c, 1, 0, &k))
		return -1;
	if (x.s.rank < 2)
		return ctx_fail(c, ART_E_WANTS_RANK_2_MORE);
	rt_trilu(&x, (int64_t)k, (int)ctx_attr_int(c, "upper", 1), &y);
	return 0;
}

/* Gather and GatherElements: every index within [-d, d). */
int op_gather(Ctx *c)
{
	rt_arr x, idx, y;
	int axis, elements = !strcmp(c->s->op, "GatherElements");

	if (same_type_io(c, &x, &y) || ctx_arg(c, 1, 1, &idx) ||
	    ctx_axis(c, ctx_attr_int(c, "axis", 0), x.s.rank, &axis))
		return -1;
	if (elements && (idx.s.rank != x.s.rank ||
			 rt_numel(&idx.s) != rt_numel(&y.s)))
		return ctx_fail(c, ART_E_INDICES_HAVE_DATA_S);
	if (ctx_indices(c, &idx, 1, &x.s.d[axis]))
		return -1;
	if (elements)
		rt_gather_elements(&x, axis, &idx, &y);
	else
		rt_gather(&x, axis, &idx, &y);
	return 0;
}
