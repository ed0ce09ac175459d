/*
 * ops_nn.c — the float32 network ops: convolutions, pools, LRN, the
 * normalisations, the softmax family, Gemm and MatMul.
 *
 * Output shapes are the plan's, so nothing here recomputes them; the
 * attributes only say how values map (pads, strides, axes).
 */
#include <string.h>

#include "ops.h"

/* An INTS attribute of exactly n values; *got 0 when absent. */
static int exact_ints(Ctx *c, const char *name, int64_t *v, int n, int *got)
{
	int k;
	if (ctx_attr_ints(c, name, v, n, &k))
		return -1;
	if (k >= 0 && k != n)
		return ctx_fail(c, ART_E_ATTRIBUTE_WANTS_INTS, ART_S(name),
		    ART_I(n));
	*got = k >= 0;
	return 0;
}

int ctx_nhwc_filter(Ctx *c, const rt_conv *p, const rt_shape *ws, int64_t C,
		    int64_t M)
{
	int dw;
	if (ctx_group_channels(c, p, p->group > 1 && ws->d[0] == 1 ? 1 :
			       ws->d[3], C, M))
		return -1;
	dw = p->group > 1 && rt_div(C, p->group) == 1;
	if (dw ? ws->d[0] != 1 || ws->d[3] != M : ws->d[0] != M)
		return ctx_fail(c, ART_E_FILTER_NOT_TFLITE_LAYOUT);
	return 0;
}

int ctx_conv_geometry(Ctx *c, const rt_shape *xs, const rt_shape *ys,
		      const int64_t *kernel, int transposed, rt_conv *p,
		      int64_t *pads_end)
{
	int64_t strides[2] = {1, 1}, dil[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
	int64_t outpad[2] = {0, 0}, oshape[2];
	int nsp = xs->rank - 2, got, got_oshape;
	const char *ap = ctx_attr_str(c, "auto_pad", "NOTSET");

	if (nsp < 1 || nsp > 2)
		return ctx_fail(c, ART_E_ONLY_1_D_2, ART_I(xs->rank));
	if (exact_ints(c, "strides", strides, nsp, &got) ||
	    exact_ints(c, "dilations", dil, nsp, &got) ||
	    exact_ints(c, "pads", pads, 2 * nsp, &got) ||
	    exact_ints(c, "output_padding", outpad, nsp, &got) ||
	    exact_ints(c, "output_shape", oshape, nsp, &got_oshape))
		return -1;
	if (nsp == 1) {
		/* [N,C,W] runs as [N,C,1,W]. */
		strides[1] = strides[0], dil[1] = dil[0];
		outpad[1] = outpad[0];
		pads[3] = pads[1], pads[1] = pads[0], pads[0] = pads[2] = 0;
		strides[0] = dil[0] = 1, outpad[0] = 0;
	}
	/*
	 * SAME_* pads make the plan's output size, split as the spec says;
	 * so do a ConvTranspose's output_shape, the larger half first.
	 */
	if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER") ||
	    (transposed && got_oshape && !strcmp(ap, "NOTSET"))) {
		int upper = !strcmp(ap, "SAME_UPPER");
		for (int i = 0; i < 2; i++) {
			int64_t in = xs->d[xs->rank - 2 + i - (nsp == 1)];
			int64_t o = ys->d[ys->rank - 2 + i - (nsp == 1)];
			int64_t ext = (kernel[i] - 1) * dil[i] + 1, total;
			if (nsp == 1 && i == 0)
				in = o = 1;
			total = transposed ?
				strides[i] * (in - 1) + outpad[i] + ext - o :
				(o - 1) * strides[i] + ext - in;
			if (total < 0)
				total = 0;
			pads[i] = upper ? total / 2 : total - total / 2;
			pads[i + 2] = total - pads[i];
		}
	} else if (!strcmp(ap, "VALID")) {
		memset(pads, 0, sizeof pads);
	}
	p->group = ctx_attr_int(c, "group", 1);
	p->kh = kernel[0], p->kw = kernel[1];
	p->sh = strides[0], p->sw = strides[1];
	p->dh = dil[0], p->dw = dil[1];
	p->ph = pads[0], p->pw = pads[1];
	p->pre = NULL;
	if (pads_end)
		pads_end[0] = pads[2], pads_end[1] = pads[3];
	if (p->group < 1 || p->kh < 1 || p->kw < 1 || p->sh < 1 ||
	    p->sw < 1 || p->dh < 1 || p->dw < 1)
		return ctx_fail(c, ART_E_BAD_KERNEL_STRIDE_DILATION);
	return 0;
}

/* Ranks 3 and 4 one by one: GCC makes a loop of it memmove, which an
 * int8 firmware would link for this alone. */
void ctx_channels_first(rt_shape *s)
{
	int64_t ch = s->d[s->rank - 1];
	if (s->rank == 4)
		s->d[3] = s->d[2];
	s->d[2] = s->d[1];
	s->d[1] = ch;
}

void ctx_as_2d(rt_shape *s)
{
	if (s->rank == 3)
		s->d[3] = s->d[2], s->d[2] = 1, s->rank = 4;
}

/*
 * arenac.PreactConv's prologue: the "prologue" op codes, their parameters
 * from input 3 on, one epsilon per BatchNormalization.
 */
static int preact(Ctx *c, int channels, rt_preact *pre)
{
	art_attr ob, eb;
	const art_attr *ops = ctx_attr(c, "prologue", &ob);
	const art_attr *eps = ctx_attr(c, "prologue_epsilon", &eb);
	static const int nparams[] = {0, 4, 1, 1, 0};
	int next = 3, neps = 0;

	if (!ops || ops->type != ART_ATTR_INTS || ops->count < 1 ||
	    ops->count > RT_PREACT_MAX)
		return ctx_fail(c, ART_E_NEEDS_PROLOGUE_1_OPS,
				ART_I(RT_PREACT_MAX));
	pre->n = ops->count;
	for (int k = 0; k < pre->n; k++) {
		int code = (int)ops->ints[k];
		if (code < RT_PRE_BATCHNORM || code > RT_PRE_RELU)
			return ctx_fail(c, ART_E_UNKNOWN_PROLOGUE_OP,
			    ART_I(code));
		pre->code[k] = code;
		pre->scalar[k] = 1;
		for (int j = 0; j < nparams[code]; j++) {
			rt_shape s;
			int64_t n;
			if (ctx_fin(c, next++, 1, &pre->p[k][j], &s))
				return -1;
			n = rt_numel(&s);
			if (n != 1 && n != channels)
				return ctx_fail(c,
				    ART_E_PROLOGUE_PARAMETER_VALUES_CHANNELS,
						ART_I(next - 1),
						    ART_I((long long)n),
						ART_I(channels));
			pre->scalar[k] &= n == 1;
		}
		if (code == RT_PRE_BATCHNORM) {
			if (!eps || eps->type != ART_ATTR_FLOATS ||
			    neps >= eps->count)
				return ctx_fail(c,
				    ART_E_NEEDS_ONE_PROLOGUE_EPSILON);
			pre->eps[k] = eps->floats[neps++];
		}
	}
	return 0;
}

int op_conv(Ctx *c)
{
	const float *x, *w, *b;
	float *y;
	rt_shape xs, ws, ys;
	rt_conv p;
	rt_preact pre;
	int64_t k[2];
	int transposed = !strcmp(c->s->op, "ConvTranspose");

	if (ctx_fin(c, 0, 1, &x, &xs) || ctx_fin(c, 1, 1, &w, &ws) ||
	    ctx_fin(c, 2, 0, &b, NULL) || ctx_fout(c, 0, &y, &ys))
		return -1;
	if (xs.rank != ws.rank)
		return ctx_fail(c, ART_E_WEIGHT_RANK_DIFFERS_FROM);
	k[0] = xs.rank == 4 ? ws.d[2] : 1;
	k[1] = ws.d[ws.rank - 1];
	if (ctx_conv_geometry(c, &xs, &ys, k, transposed, &p, NULL))
		return -1;
	ctx_as_2d(&xs), ctx_as_2d(&ys);
	if (xs.d[1] % p.group || ys.d[1] % p.group)
		return ctx_fail(c, ART_E_CHANNELS_MULTIPLE_GROUP);
	/*
	 * A column (width 1, kernel width 1: Magika's sequence conv) has
	 * the bytes of a row, and the kernel's tiles run along rows.
	 */
	if (!transposed && xs.d[3] == 1 && ys.d[3] == 1 && p.kw == 1 &&
	    p.pw == 0) {
		xs.d[3] = xs.d[2], xs.d[2] = 1;
		ys.d[3] = ys.d[2], ys.d[2] = 1;
		p.kw = p.kh, p.sw = p.sh, p.dw = p.dh, p.pw = p.ph;
		p.kh = p.sh = p.dh = 1, p.ph = 0;
	}
	if (!strcmp(c->s->op, "PreactConv")) {
		if (preact(c, (int)xs.d[1], &pre))
			return -1;
		p.pre = &pre;
	}
	if (transposed)
		rt_convtranspose2d(&p, x, &xs, w, b, y, &ys);
	else
		rt_conv2d(&p, x, &xs, w, b, y, &ys);
	return 0;
}

/* x [N,H,W,C], y [N,OH,OW,M]; W in TFLite's layout (kernels.h
 * rt_filter_at). */
int op_nhwc_conv(Ctx *c)
{
	const float *x, *w, *b;
	float *y;
	rt_shape xs, ws, ys;
	rt_conv p;
	int64_t k[2];

	if (ctx_fin(c, 0, 1, &x, &xs) || ctx_fin(c, 1, 1, &w, &ws) ||
	    ctx_fin(c, 2, 0, &b, NULL) || ctx_fout(c, 0, &y, &ys))
		return -1;
	if (xs.rank != ws.rank || ys.rank != ws.rank || xs.rank != 4)
		return ctx_fail(c, ART_E_WEIGHT_RANK_DIFFERS_FROM);
	ctx_channels_first(&xs), ctx_channels_first(&ys);
	k[0] = ws.d[1];
	k[1] = ws.d[2];
	if (ctx_conv_geometry(c, &xs, &ys, k, 0, &p, NULL))
		return -1;
	if (ctx_nhwc_filter(c, &p, &ws, xs.d[1], ys.d[1]))
		return -1;
	rt_conv2d_nhwc(&p, x, &xs, w, b, y, &ys);
	return 0;
}

typedef void PoolFn(rt_pool_kind k, const rt_conv *p, const int64_t *pads_end,
		    int dt, const void *x, const rt_shape *xs, void *y,
		    const rt_shape *ys, int64_t *indices, int col_major);

/* MaxPool and AveragePool in either layout (cl 1: channels-last), the
 * kernel the caller's; inlined into each op with cl constant, so that a
 * firmware running channels-first pools links nothing of the other. */
static inline __attribute__((always_inline)) int
pool(Ctx *c, PoolFn *kernel, int cl)
{
	rt_arr x, y;
	rt_shape xs, ys;
	rt_conv p;
	int64_t k[2] = {1, 1}, pads_end[2];
	int got, max = !strcmp(c->s->op, "MaxPool");
	rt_pool_kind kind = max ? RT_POOL_MAX :
			    ctx_attr_int(c, "count_include_pad", 0) ?
			    RT_POOL_AVG_PAD : RT_POOL_AVG;

	rt_arr idx;
	int order = (int)ctx_attr_int(c, "storage_order", 0);

	idx.p = NULL;
	if (ctx_arg(c, 0, 1, &x) || ctx_res(c, 0, &y) ||
	    (max && ctx_out(c, 1) >= 0 &&
	     ctx_tensor(c, ctx_out(c, 1)).rank >= 0 && ctx_res(c, 1, &idx)))
		return -1;
	if (x.dt != ART_DT_FLOAT && !(max && (x.dt == ART_DT_UINT8 ||
					      x.dt == ART_DT_INT8)))
		return ctx_fail(c, ART_E_INPUT_TYPE_POOLS_COMPUTE, ART_I(x.dt),
		    ART_S(max ? ", uint8 and int8" : ""));
	if (y.dt != x.dt)
		return ctx_fail(c, ART_E_OUTPUT_S_TYPE_DIFFERS);
	xs = x.s, ys = y.s;
	/* A channels-last MaxPool has no indices (its op table entry). */
	if (cl && xs.rank >= 3 && ys.rank == xs.rank)
		ctx_channels_first(&xs), ctx_channels_first(&ys);
	if (idx.p && (idx.dt != ART_DT_INT64 ||
		      rt_numel(&idx.s) != rt_numel(&ys)))
		return ctx_fail(c, ART_E_INDICES_INT64_OUTPUT_S);
	if (xs.rank < 3 || xs.rank > 4)
		return ctx_fail(c, ART_E_ONLY_1_D_2_2);
	if (exact_ints(c, "kernel_shape", k + (xs.rank == 3), xs.rank - 2,
		       &got))
		return -1;
	if (!got)
		return ctx_fail(c, ART_E_NEEDS_KERNEL_SHAPE);
	if (ctx_conv_geometry(c, &xs, &ys, k, 0, &p, pads_end))
		return -1;
	ctx_as_2d(&xs), ctx_as_2d(&ys);
	if (!max && (p.dh != 1 || p.dw != 1))
		return ctx_fail(c, ART_E_DILATED_AVERAGE_POOLING_SUPPORTED);
	p.group = 1;
	kernel(kind, &p, pads_end, x.dt, x.p, &xs, y.p, &ys, idx.p,
	       order == 1);
	return 0;
}

int op_pool(Ctx *c)
{
	return pool(c, rt_pool2d, 0);
}

int op_nhwc_pool(Ctx *c)
{
	return pool(c, rt_pool2d_nhwc, 1);
}

typedef void GlobalPoolFn(int is_max, const float *x, const rt_shape *xs,
			  float *y);

/* GlobalAveragePool and GlobalMaxPool: a reduction over the spatial axes,
 * 2 on (NCHW), or 1 to the one before the channels (NHWC, from rank 3). */
static int global_pool(Ctx *c, GlobalPoolFn *kernel, int min_rank)
{
	const float *x;
	float *y;
	rt_shape xs, ys;
	if (ctx_fin(c, 0, 1, &x, &xs) || ctx_fout(c, 0, &y, &ys))
		return -1;
	if (xs.rank < min_rank)
		return ctx_fail(c, ART_E_WANTS_RANK_2_MORE);
	kernel(!strcmp(c->s->op, "GlobalMaxPool"), x, &xs, y);
	return 0;
}

int op_global_pool(Ctx *c)
{
	return global_pool(c, rt_global_pool, 2);
}

int op_nhwc_global_pool(Ctx *c)
{
	return global_pool(c, rt_global_pool_nhwc, 3);
}

int op_lrn(Ctx *c)
{
	const float *x;
	float *y;
	rt_shape xs, ys;
	int64_t size = ctx_attr_int(c, "size", 0);
	if (ctx_fin(c, 0, 1, &x, &xs) || ctx_fout(c, 0, &y, &ys))
		return -1;
	if (size < 1 || xs.rank < 2)
		return ctx_fail(c, ART_E_LRN_NEEDS_SIZE_1);
	rt_lrn(size, (float)ctx_attr_num(c, "alpha", 1e-4),
	       (float)ctx_attr_num(c, "beta", 0.75),
	       (float)ctx_attr_num(c, "bias", 1.0), x, &xs, y);
	return 0;
}

static int optional_out(Ctx *c, int j, float **p);

/* Input j holds one value per channel of x. */
static int per_channel(Ctx *c, int j, const rt_shape *xs, const float **p)
{
	rt_shape s;
	if (ctx_fin(c, j, 1, p, &s))
		return -1;
	if (xs->rank < 2 || rt_numel(&s) != xs->d[1])
		return ctx_fail(c, ART_E_INPUT_WANTS_ONE_VALUE, ART_I(j));
	return 0;
}

int op_batchnorm(Ctx *c)
{
	const float *x, *sc, *bi, *mean, *var;
	float *y, *rm, *rv, *saved_mean, *saved_var;
	rt_shape xs, ys;
	float eps = (float)ctx_attr_num(c, "epsilon", 1e-5);
	if (ctx_fin(c, 0, 1, &x, &xs) || per_channel(c, 1, &xs, &sc) ||
	    per_channel(c, 2, &xs, &bi) || per_channel(c, 3, &xs, &mean) ||
	    per_channel(c, 4, &xs, &var) || ctx_fout(c, 0, &y, &ys) ||
	    optional_out(c, 1, &rm) || optional_out(c, 2, &rv) ||
	    optional_out(c, 3, &saved_mean) || optional_out(c, 4, &saved_var))
		return -1;
	if (saved_mean || saved_var)
		return ctx_fail(c, ART_E_SAVED_MEAN_VARIANCE_OUTPUTS);
	/* Training: training_mode from opset 14, the running statistics
	 * as outputs before. */
	if (ctx_attr_int(c, "training_mode", 0) || rm || rv)
		rt_batchnorm_train(x, &xs, sc, bi, mean, var, eps,
				   (float)ctx_attr_num(c, "momentum", 0.9), y,
				   rm, rv);
	else
		rt_batchnorm(x, &xs, sc, bi, mean, var, eps, y);
	return 0;
}

/* Inference only: --layout nhwc plans no training step. */
int op_nhwc_batchnorm(Ctx *c)
{
	const float *x, *sc, *bi, *mean, *var;
	float *y;
	rt_shape xs, cs, ys;
	if (ctx_fin(c, 0, 1, &x, &xs) || ctx_fout(c, 0, &y, &ys))
		return -1;
	if (xs.rank < 3)
		return ctx_fail(c, ART_E_WANTS_RANK_2_MORE);
	cs = xs;        /* per_channel counts axis 1 */
	ctx_channels_first(&cs);
	if (per_channel(c, 1, &cs, &sc) || per_channel(c, 2, &cs, &bi) ||
	    per_channel(c, 3, &cs, &mean) || per_channel(c, 4, &cs, &var))
		return -1;
	rt_batchnorm_nhwc(x, &xs, sc, bi, mean, var,
			  (float)ctx_attr_num(c, "epsilon", 1e-5), y);
	return 0;
}

int op_instancenorm(Ctx *c)
{
	const float *x, *sc, *bi;
	float *y;
	rt_shape xs, ys;
	if (ctx_fin(c, 0, 1, &x, &xs) || per_channel(c, 1, &xs, &sc) ||
	    per_channel(c, 2, &xs, &bi) || ctx_fout(c, 0, &y, &ys))
		return -1;
	rt_instancenorm(x, &xs, sc, bi, (float)ctx_attr_num(c, "epsilon", 1e-5),
			y);
	return 0;
}

/*
 * A parameter that broadcasts to the trailing dims [from, rank) of xs
 * with leading 1s only, so its values repeat with period *n along the
 * flattened trailing block.
 */
static int trailing(Ctx *c, int j, const rt_shape *xs, int from,
		    const float **p, int64_t *n)
{
	rt_shape s;
	int lead = 0;
	if (ctx_fin(c, j, 0, p, &s))
		return -1;
	*n = 1;
	if (!*p)
		return 0;
	while (lead < s.rank && s.d[lead] == 1)
		lead++;
	if (s.rank - lead > xs->rank - from)
		return ctx_fail(c, ART_E_INPUT_DOES_BROADCAST_NORMALISED,
		    ART_I(j));
	for (int i = lead; i < s.rank; i++) {
		if (s.d[i] != xs->d[xs->rank - s.rank + i])
			return ctx_fail(c,
			    ART_E_INPUT_DOES_BROADCAST_NORMALISED, ART_I(j));
		*n *= s.d[i];
	}
	return 0;
}

/* An optional float32 output, NULL when the plan does not compute it. */
static int optional_out(Ctx *c, int j, float **p)
{
	rt_shape s;
	*p = NULL;
	if (ctx_out(c, j) < 0 || ctx_tensor(c, ctx_out(c, j)).rank < 0)
		return 0;
	return ctx_fout(c, j, p, &s);
}

int op_layernorm(Ctx *c)
{
	const float *x, *sc, *bi;
	float *y, *mean, *inv;
	rt_shape xs, ys;
	int64_t rows = 1, n = 1, nsc, nbi;
	int axis;

	if (ctx_fin(c, 0, 1, &x, &xs) || ctx_fout(c, 0, &y, &ys) ||
	    ctx_axis(c, ctx_attr_int(c, "axis", -1), xs.rank, &axis) ||
	    trailing(c, 1, &xs, axis, &sc, &nsc) ||
	    trailing(c, 2, &xs, axis, &bi, &nbi) ||
	    optional_out(c, 1, &mean) || optional_out(c, 2, &inv))
		return -1;
	if (!sc)
		return ctx_fail(c, ART_E_SCALE_MISSING);
	for (int i = 0; i < xs.rank; i++)
		*(i < axis ? &rows : &n) *= xs.d[i];
	rt_layernorm(x, rows, n, sc, nsc, bi, nbi,
		     (float)ctx_attr_num(c, "epsilon", 1e-5), y, mean, inv);
	return 0;
}

int op_mvn(Ctx *c)
{
	const float *x;
	float *y;
	rt_shape xs, ys;
	int64_t axes[ART_MAX_RANK] = {0, 2, 3};
	int n;
	unsigned mask = 0;

	if (ctx_fin(c, 0, 1, &x, &xs) || ctx_fout(c, 0, &y, &ys) ||
	    ctx_attr_ints(c, "axes", axes, ART_MAX_RANK, &n))
		return -1;
	for (int i = 0; i < (n < 0 ? 3 : n); i++) {
		int a;
		if (ctx_axis(c, axes[i], xs.rank, &a))
			return -1;
		mask |= 1u << a;
	}
	rt_mvn(x, &xs, mask, y);
	return 0;
}

/*
 * Before opset 13 the softmax family flattens the input to 2-D at axis
 * (default 1) and works on each row; from 13 on it works along axis
 * (default -1).  Both are [outer, n, inner] views.
 */
int op_softmax(Ctx *c)
{
	const float *x;
	float *y;
	rt_shape xs, ys;
	int old = c->s->opset < 13, axis;
	int64_t outer = 1, n = 1, inner = 1;
	rt_softmax_kind k = !strcmp(c->s->op, "Softmax") ? RT_SOFTMAX :
			    !strcmp(c->s->op, "LogSoftmax") ? RT_LOGSOFTMAX :
			    RT_HARDMAX;

	if (ctx_fin(c, 0, 1, &x, &xs) || ctx_fout(c, 0, &y, &ys) ||
	    ctx_axis(c, ctx_attr_int(c, "axis", old ? 1 : -1), xs.rank, &axis))
		return -1;
	for (int i = 0; i < xs.rank; i++)
		*(i < axis ? &outer : i == axis || old ? &n : &inner) *= xs.d[i];
	rt_softmax(k, x, outer, n, inner, y);
	return 0;
}

int op_gemm(Ctx *c)
{
	const float *a, *b, *cc;
	float *y;
	rt_shape as, bs, cs, ys;
	int ta = (int)ctx_attr_int(c, "transA", 0);
	int tb = (int)ctx_attr_int(c, "transB", 0);

	if (ctx_fin(c, 0, 1, &a, &as) || ctx_fin(c, 1, 1, &b, &bs) ||
	    ctx_fin(c, 2, 0, &cc, &cs) || ctx_fout(c, 0, &y, &ys))
		return -1;
	if (as.rank != 2 || bs.rank != 2 || ys.rank != 2 || (cc && cs.rank > 2))
		return ctx_fail(c, ART_E_GEMM_WANTS_2_D);
	rt_gemm(a, b, cc, &cs, y, ys.d[0], ys.d[1], ta ? as.d[0] : as.d[1],
		ta, tb, (float)ctx_attr_num(c, "alpha", 1.0),
		(float)ctx_attr_num(c, "beta", 1.0));
	return 0;
}

int op_matmul(Ctx *c)
{
	const float *a, *b;
	float *y;
	rt_shape as, bs, ys;
	if (ctx_fin(c, 0, 1, &a, &as) || ctx_fin(c, 1, 1, &b, &bs) ||
	    ctx_fout(c, 0, &y, &ys))
		return -1;
	if (as.rank < 1 || bs.rank < 1)
		return ctx_fail(c, ART_E_MATMUL_SCALAR);
	rt_matmul(a, &as, b, &bs, y, &ys);
	return 0;
}
