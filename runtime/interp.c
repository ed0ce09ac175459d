/*
 * interp.c — runs a plan's step table on one arena and one weights blob
 * (and, for --io separate, the caller's input and output buffers).
 *
 * Before any step runs the tables are checked against the two buffers, so
 * a kernel never reads or writes outside them.  Each step then finds its
 * tensors where the plan put them and calls a kernel.  The plan's sharing
 * decisions are taken literally: a noop step must find its outputs already
 * in place, an in-place output must be its input's bytes and its kernel
 * must be one that can overwrite its input, and an output that overlaps a
 * live input for any other reason is a broken plan.  None of these ever
 * turns into a quiet copy, since a copy would hide the very mistake the
 * runtime is there to expose.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernels.h"

typedef struct Ctx {
	const art_model *m;
	uint8_t *arena;
	const uint8_t *weights;
	void *const *io;            /* the caller's buffers, or NULL */
	art_error *err;
	int si;                     /* the step running */
	const art_step *s;
} Ctx;

typedef int (*OpFn)(Ctx *c);

static int root(const Ctx *c, int t);

static int fail(Ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(Ctx *c, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	c->err->step = c->s ? c->si : -1;
	if (c->s)
		n = snprintf(c->err->msg, sizeof c->err->msg,
			     "step %d (%s '%s'): ", c->si, c->s->op,
			     c->s->name);
	if (n < 0 || n >= (int)sizeof c->err->msg)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(c->err->msg + n, sizeof c->err->msg - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static const art_tensor *T(const Ctx *c, int id)
{
	return &c->m->tensors[id];
}

static int in_arena(const art_tensor *t)
{
	return t->offset != ART_NOT_IN_ARENA;
}

/* Where a tensor's bytes are; the table check made this safe. */
static void *ptr(const Ctx *c, int id)
{
	const art_tensor *t = T(c, id);
	if (in_arena(t))
		return c->arena + t->offset;
	if (t->io >= 0)
		return c->io[t->io];
	return (void *)(c->weights + t->weights_offset);
}

static void shape(const Ctx *c, int id, rt_shape *s)
{
	const art_tensor *t = T(c, id);
	s->rank = t->rank;
	for (int i = 0; i < t->rank; i++)
		s->d[i] = t->dims[i];
}

/* Input j's tensor id, -1 when omitted. */
static int in(const Ctx *c, int j)
{
	return j < c->s->ninputs ? c->s->inputs[j] : -1;
}

static int out(const Ctx *c, int j)
{
	return j < c->s->noutputs ? c->s->outputs[j] : -1;
}

/* ---- attributes ---- */

static const art_attr *attr(const Ctx *c, const char *name)
{
	for (int i = 0; i < c->s->nattrs; i++)
		if (!strcmp(c->s->attrs[i].name, name))
			return &c->s->attrs[i];
	return NULL;
}

static int64_t attr_int(const Ctx *c, const char *name, int64_t dflt)
{
	const art_attr *a = attr(c, name);
	return a && a->type == ART_ATTR_INT ? a->ints[0] : dflt;
}

static float attr_float(const Ctx *c, const char *name, float dflt)
{
	const art_attr *a = attr(c, name);
	return a && a->type == ART_ATTR_FLOAT ? a->floats[0] : dflt;
}

static const char *attr_str(const Ctx *c, const char *name, const char *dflt)
{
	const art_attr *a = attr(c, name);
	return a && a->type == ART_ATTR_STRING ? a->strings[0] : dflt;
}

/* Copies an INTS attribute of exactly n values into v; 0 when absent. */
static int attr_ints(Ctx *c, const char *name, int64_t *v, int n, int *got)
{
	const art_attr *a = attr(c, name);
	*got = 0;
	if (!a)
		return 0;
	if (a->type != ART_ATTR_INTS || a->count != n)
		return fail(c, "attribute %s wants %d ints", name, n);
	memcpy(v, a->ints, (size_t)n * sizeof *v);
	*got = 1;
	return 0;
}

/* ---- operands ---- */

/* Float32 input j; NULL for an omitted optional one (required: fails). */
static int fin(Ctx *c, int j, int required, const float **p, rt_shape *s)
{
	int id = in(c, j);
	*p = NULL;
	if (id < 0) {
		if (required)
			return fail(c, "input %d is missing", j);
		return 0;
	}
	if (T(c, id)->dtype != ART_DT_FLOAT)
		return fail(c, "input '%s' is not float32, the only type the "
			    "reference kernels compute", T(c, id)->name);
	*p = ptr(c, id);
	if (s)
		shape(c, id, s);
	return 0;
}

static int fout(Ctx *c, int j, float **p, rt_shape *s)
{
	int id = out(c, j);
	if (id < 0)
		return fail(c, "output %d is missing", j);
	if (T(c, id)->dtype != ART_DT_FLOAT)
		return fail(c, "output '%s' is not float32", T(c, id)->name);
	*p = ptr(c, id);
	shape(c, id, s);
	return 0;
}

/* Integer values of input j (int64 or int32), at most max of them. */
static int iin(Ctx *c, int j, int64_t *v, int max, int *n)
{
	int id = in(c, j);
	const art_tensor *t;
	int64_t cnt = 1;

	*n = -1;
	if (id < 0)
		return 0;
	t = T(c, id);
	for (int i = 0; i < t->rank; i++)
		cnt *= t->dims[i];
	if (cnt > max)
		return fail(c, "input '%s' has %lld values, more than %d",
			    t->name, (long long)cnt, max);
	for (int64_t i = 0; i < cnt; i++) {
		if (t->dtype == ART_DT_INT64)
			v[i] = ((const int64_t *)ptr(c, id))[i];
		else if (t->dtype == ART_DT_INT32)
			v[i] = ((const int32_t *)ptr(c, id))[i];
		else
			return fail(c, "input '%s' is not an integer tensor",
				    t->name);
	}
	*n = (int)cnt;
	return 0;
}

/* A float scalar from input j, or dflt when omitted. */
static int fscalar(Ctx *c, int j, float dflt, float *v)
{
	const float *p;
	rt_shape s;
	if (fin(c, j, 0, &p, &s))
		return -1;
	*v = p && rt_numel(&s) >= 1 ? p[0] : dflt;
	return 0;
}

/* ---- convolution and pooling geometry ---- */

/*
 * Leading pads from pads / auto_pad.  For SAME_* the total pad is what
 * makes the plan's output size, split as the spec says.
 */
static int geometry(Ctx *c, const rt_shape *xs, const rt_shape *ys,
		    const int64_t *kernel, int transposed, rt_conv *p,
		    int64_t *pads_end)
{
	int64_t strides[2] = {1, 1}, dil[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
	int nsp = xs->rank - 2, got;
	const char *ap = attr_str(c, "auto_pad", "NOTSET");

	if (attr_ints(c, "strides", strides, nsp, &got) ||
	    attr_ints(c, "dilations", dil, nsp, &got) ||
	    attr_ints(c, "pads", pads, 2 * nsp, &got))
		return -1;
	if (nsp == 1) {
		/* [N,C,W] runs as [N,C,1,W]. */
		strides[1] = strides[0], dil[1] = dil[0];
		pads[3] = pads[1], pads[1] = pads[0], pads[0] = pads[2] = 0;
		strides[0] = dil[0] = 1;
	}
	if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) {
		int upper = !strcmp(ap, "SAME_UPPER");
		for (int i = 0; i < 2; i++) {
			int64_t in = xs->d[xs->rank - 2 + i - (nsp == 1)];
			int64_t o = ys->d[ys->rank - 2 + i - (nsp == 1)];
			int64_t ext = (kernel[i] - 1) * dil[i] + 1, total;
			if (nsp == 1 && i == 0)
				in = o = 1;
			total = transposed ?
				strides[i] * (in - 1) + ext - o :
				(o - 1) * strides[i] + ext - in;
			if (total < 0)
				total = 0;
			pads[i] = upper ? total / 2 : total - total / 2;
			pads[i + 2] = total - pads[i];
		}
	} else if (!strcmp(ap, "VALID")) {
		memset(pads, 0, sizeof pads);
	}
	p->group = attr_int(c, "group", 1);
	p->kh = kernel[0], p->kw = kernel[1];
	p->sh = strides[0], p->sw = strides[1];
	p->dh = dil[0], p->dw = dil[1];
	p->ph = pads[0], p->pw = pads[1];
	p->pre = NULL;
	if (pads_end)
		pads_end[0] = pads[2], pads_end[1] = pads[3];
	if (p->group < 1 || p->kh < 1 || p->kw < 1 || p->sh < 1 ||
	    p->sw < 1 || p->dh < 1 || p->dw < 1)
		return fail(c, "bad kernel, stride, dilation or group");
	return 0;
}

/* 1-D tensors run through the 2-D kernels with a height of 1. */
static int as_2d(Ctx *c, rt_shape *s)
{
	if (s->rank == 3) {
		s->d[3] = s->d[2], s->d[2] = 1, s->rank = 4;
		return 0;
	}
	if (s->rank != 4)
		return fail(c, "only 1-D and 2-D spatial shapes are supported, "
			    "not rank %d", s->rank);
	return 0;
}

/*
 * arenac.PreactConv's prologue: the "prologue" op codes, their parameters
 * from input 3 on, one epsilon per BatchNormalization.
 */
static int preact(Ctx *c, int channels, rt_preact *pre)
{
	const art_attr *ops = attr(c, "prologue");
	const art_attr *eps = attr(c, "prologue_epsilon");
	static const int nparams[] = {0, 4, 1, 1, 0};
	int next = 3, neps = 0;

	if (!ops || ops->type != ART_ATTR_INTS || ops->count < 1 ||
	    ops->count > RT_PREACT_MAX)
		return fail(c, "needs a prologue of 1 to %d ops", RT_PREACT_MAX);
	pre->n = ops->count;
	for (int k = 0; k < pre->n; k++) {
		int code = (int)ops->ints[k];
		if (code < RT_PRE_BATCHNORM || code > RT_PRE_RELU)
			return fail(c, "unknown prologue op %d", code);
		pre->code[k] = code;
		pre->scalar[k] = 1;
		for (int j = 0; j < nparams[code]; j++) {
			rt_shape s;
			int64_t n;
			if (fin(c, next++, 1, &pre->p[k][j], &s))
				return -1;
			n = rt_numel(&s);
			if (n != 1 && n != channels)
				return fail(c, "prologue parameter %d has %lld "
					    "values for %d channels", next - 1,
					    (long long)n, channels);
			pre->scalar[k] &= n == 1;
		}
		if (code == RT_PRE_BATCHNORM) {
			if (!eps || eps->type != ART_ATTR_FLOATS ||
			    neps >= eps->count)
				return fail(c, "needs one prologue_epsilon per "
					    "BatchNormalization%s", "");
			pre->eps[k] = eps->floats[neps++];
		}
	}
	return 0;
}

static int op_conv(Ctx *c)
{
	const float *x, *w, *b;
	float *y;
	rt_shape xs, ws, ys;
	rt_conv p;
	rt_preact pre;
	int64_t k[2];
	int transposed = !strcmp(c->s->op, "ConvTranspose");

	if (fin(c, 0, 1, &x, &xs) || fin(c, 1, 1, &w, &ws) ||
	    fin(c, 2, 0, &b, NULL) || fout(c, 0, &y, &ys))
		return -1;
	if (xs.rank != ws.rank)
		return fail(c, "weight rank differs from input rank");
	k[0] = xs.rank == 4 ? ws.d[2] : 1;
	k[1] = ws.d[ws.rank - 1];
	if (geometry(c, &xs, &ys, k, transposed, &p, NULL) ||
	    as_2d(c, &xs) || as_2d(c, &ys))
		return -1;
	if (xs.d[1] % p.group || ys.d[1] % p.group)
		return fail(c, "channels are not a multiple of group");
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

static int op_pool(Ctx *c)
{
	const float *x;
	float *y;
	rt_shape xs, ys;
	rt_conv p;
	int64_t k[2] = {1, 1}, pads_end[2];
	int got, max = !strcmp(c->s->op, "MaxPool");
	rt_pool_kind kind = max ? RT_POOL_MAX :
			    attr_int(c, "count_include_pad", 0) ?
			    RT_POOL_AVG_PAD : RT_POOL_AVG;

	if (fin(c, 0, 1, &x, &xs) || fout(c, 0, &y, &ys))
		return -1;
	if (out(c, 1) >= 0)
		return fail(c, "MaxPool's Indices output is not supported");
	if (attr_ints(c, "kernel_shape", k + (xs.rank == 3), xs.rank - 2,
		      &got))
		return -1;
	if (!got || attr_int(c, "storage_order", 0))
		return fail(c, "needs kernel_shape and row-major storage");
	if (geometry(c, &xs, &ys, k, 0, &p, pads_end) || as_2d(c, &xs) ||
	    as_2d(c, &ys))
		return -1;
	if (!max && (p.dh != 1 || p.dw != 1))
		return fail(c, "dilated average pooling is not supported");
	p.group = 1;
	rt_pool2d(kind, &p, pads_end, x, &xs, y, &ys);
	return 0;
}

static int op_global_avgpool(Ctx *c)
{
	const float *x;
	float *y;
	rt_shape xs, ys;
	if (fin(c, 0, 1, &x, &xs) || fout(c, 0, &y, &ys))
		return -1;
	rt_global_avgpool(x, &xs, y);
	return 0;
}

static int op_lrn(Ctx *c)
{
	const float *x;
	float *y;
	rt_shape xs, ys;
	int64_t size = attr_int(c, "size", 0);
	if (fin(c, 0, 1, &x, &xs) || fout(c, 0, &y, &ys))
		return -1;
	if (size < 1)
		return fail(c, "LRN needs size >= 1");
	rt_lrn(size, attr_float(c, "alpha", 1e-4f), attr_float(c, "beta", 0.75f),
	       attr_float(c, "bias", 1.0f), x, &xs, y);
	return 0;
}

/* ---- elementwise ---- */

static const struct {
	const char *op;
	rt_unary fn;
	float a, b;                 /* attribute defaults */
	const char *an, *bn;        /* attribute names */
} unary_ops[] = {
	{"Relu", RT_RELU, 0, 0, NULL, NULL},
	{"Sigmoid", RT_SIGMOID, 0, 0, NULL, NULL},
	{"HardSigmoid", RT_HARDSIGMOID, 0.2f, 0.5f, "alpha", "beta"},
	{"HardSwish", RT_HARDSWISH, 0, 0, NULL, NULL},
	{"LeakyRelu", RT_LEAKYRELU, 0.01f, 0, "alpha", NULL},
	{"Tanh", RT_TANH, 0, 0, NULL, NULL},
	{"Exp", RT_EXP, 0, 0, NULL, NULL},
	{"Neg", RT_NEG, 0, 0, NULL, NULL},
	{"Abs", RT_ABS, 0, 0, NULL, NULL},
	{"Sqrt", RT_SQRT, 0, 0, NULL, NULL},
	{"Clip", RT_CLIP, -INFINITY, INFINITY, "min", "max"},
};

static int op_unary(Ctx *c)
{
	const float *x;
	float *y;
	rt_shape xs, ys;
	size_t i = 0;
	float a, b;

	while (strcmp(unary_ops[i].op, c->s->op))
		i++;
	a = unary_ops[i].an ? attr_float(c, unary_ops[i].an, unary_ops[i].a) :
	    unary_ops[i].a;
	b = unary_ops[i].bn ? attr_float(c, unary_ops[i].bn, unary_ops[i].b) :
	    unary_ops[i].b;
	/* Clip from opset 11 takes min and max as inputs. */
	if (unary_ops[i].fn == RT_CLIP &&
	    (fscalar(c, 1, a, &a) || fscalar(c, 2, b, &b)))
		return -1;
	if (fin(c, 0, 1, &x, &xs) || fout(c, 0, &y, &ys))
		return -1;
	rt_unary_apply(unary_ops[i].fn, a, b, x, y, rt_numel(&ys));
	return 0;
}

static const struct {
	const char *op;
	rt_binary fn;
} binary_ops[] = {
	{"Add", RT_ADD}, {"Sum", RT_ADD}, {"Sub", RT_SUB}, {"Mul", RT_MUL},
	{"Div", RT_DIV}, {"Max", RT_MAX}, {"Min", RT_MIN},
};

/* Binary ops and their n-ary forms (Sum, Max, Min), folded left in y. */
static int op_binary(Ctx *c)
{
	const float *a, *b;
	float *y;
	rt_shape as, bs, ys;
	size_t i = 0;

	while (strcmp(binary_ops[i].op, c->s->op))
		i++;
	if (attr(c, "broadcast"))
		return fail(c, "the opset < 7 broadcast attribute is not "
			    "supported");
	if (fin(c, 0, 1, &a, &as) || fout(c, 0, &y, &ys))
		return -1;
	if (c->s->ninputs == 1) {
		rt_unary_apply(RT_COPY, 0, 0, a, y, rt_numel(&ys));
		return 0;
	}
	/* Writing y must not destroy an operand that is still to be read. */
	for (int j = 2; j < c->s->ninputs; j++)
		if (T(c, out(c, 0))->inplace_of == in(c, j))
			return fail(c, "in place over operand %d, which a "
				    "left fold reads after writing", j);
	for (int j = 1; j < c->s->ninputs; j++) {
		if (fin(c, j, 1, &b, &bs))
			return -1;
		rt_binary_apply(binary_ops[i].fn, a, &as, b, &bs, y, &ys);
		a = y, as = ys;
	}
	return 0;
}

static int op_batchnorm(Ctx *c)
{
	const float *x, *sc, *bi, *mean, *var;
	float *y;
	rt_shape xs, ys;
	if (fin(c, 0, 1, &x, &xs) || fin(c, 1, 1, &sc, NULL) ||
	    fin(c, 2, 1, &bi, NULL) || fin(c, 3, 1, &mean, NULL) ||
	    fin(c, 4, 1, &var, NULL) || fout(c, 0, &y, &ys))
		return -1;
	for (int j = 1; j < c->s->noutputs; j++)
		if (out(c, j) >= 0)
			return fail(c, "training-mode outputs are not "
				    "supported");
	rt_batchnorm(x, &xs, sc, bi, mean, var,
		     attr_float(c, "epsilon", 1e-5f), y);
	return 0;
}

/*
 * Before opset 13 Softmax flattens the input to 2-D at axis (default 1)
 * and normalises each row; from 13 on it normalises along axis (default
 * -1).  Both come down to rows of n values when every dim after the
 * normalised range is folded in, which is how the old form is run.
 */
static int op_softmax(Ctx *c)
{
	const float *x;
	float *y;
	rt_shape xs, ys;
	int old = c->s->opset < 13;
	int64_t axis = attr_int(c, "axis", old ? 1 : -1), n = 1;

	if (fin(c, 0, 1, &x, &xs) || fout(c, 0, &y, &ys))
		return -1;
	if (axis < 0)
		axis += xs.rank;
	if (axis < 0 || axis >= xs.rank)
		return fail(c, "axis out of range");
	for (int i = (int)axis; i < (old ? xs.rank : axis + 1); i++)
		n *= xs.d[i];
	if (!old && axis != xs.rank - 1)
		return fail(c, "softmax along an inner axis is not supported");
	rt_softmax(x, n ? rt_numel(&xs) / n : 0, n, y);
	return 0;
}

static int op_gemm(Ctx *c)
{
	const float *a, *b, *cc;
	float *y;
	rt_shape as, bs, cs, ys;
	int ta = (int)attr_int(c, "transA", 0), tb = (int)attr_int(c, "transB", 0);

	if (fin(c, 0, 1, &a, &as) || fin(c, 1, 1, &b, &bs) ||
	    fin(c, 2, 0, &cc, &cs) || fout(c, 0, &y, &ys))
		return -1;
	if (as.rank != 2 || bs.rank != 2 || ys.rank != 2)
		return fail(c, "Gemm wants 2-D operands");
	rt_gemm(a, b, cc, &cs, y, ys.d[0], ys.d[1], ta ? as.d[0] : as.d[1],
		ta, tb, attr_float(c, "alpha", 1.0f),
		attr_float(c, "beta", 1.0f));
	return 0;
}

static int op_matmul(Ctx *c)
{
	const float *a, *b;
	float *y;
	rt_shape as, bs, ys;
	if (fin(c, 0, 1, &a, &as) || fin(c, 1, 1, &b, &bs) ||
	    fout(c, 0, &y, &ys))
		return -1;
	if (as.rank < 1 || bs.rank < 1)
		return fail(c, "MatMul of a scalar");
	rt_matmul(a, &as, b, &bs, y, &ys);
	return 0;
}

/* ---- data movement ---- */

/*
 * Reshape and friends: the values do not change, only the shape.  With
 * views the plan makes the output the input's bytes and the step a noop;
 * without, the bytes are copied.
 */
static int op_copy(Ctx *c)
{
	int x = in(c, 0), y = out(c, 0), mask = out(c, 1);
	if (x < 0 || y < 0)
		return fail(c, "input or output missing");
	if (T(c, x)->bytes != T(c, y)->bytes)
		return fail(c, "output size differs from the input's");
	if (ptr(c, x) != ptr(c, y)) {
		if (c->s->noop || root(c, x) == root(c, y))
			return fail(c, "'%s' is planned as a view of '%s' but "
				    "does not start at its bytes",
				    T(c, y)->name, T(c, x)->name);
		memcpy(ptr(c, y), ptr(c, x), T(c, y)->bytes);
	}
	/* Inference-mode Dropout keeps everything. */
	if (mask >= 0 && T(c, mask)->rank >= 0)
		memset(ptr(c, mask), 1, T(c, mask)->bytes);
	return 0;
}

static int op_concat(Ctx *c)
{
	float *y;
	rt_shape ys;
	int64_t axis = attr_int(c, "axis", 0), outer = 1, inner = 1, at = 0;

	if (fout(c, 0, &y, &ys))
		return -1;
	if (axis < 0)
		axis += ys.rank;
	if (axis < 0 || axis >= ys.rank)
		return fail(c, "axis out of range");
	for (int i = 0; i < axis; i++)
		outer *= ys.d[i];
	for (int i = (int)axis + 1; i < ys.rank; i++)
		inner *= ys.d[i];
	for (int j = 0; j < c->s->ninputs; j++) {
		const float *x;
		rt_shape xs;
		if (fin(c, j, 1, &x, &xs))
			return -1;
		/* An elided concat: the producer already wrote the slice. */
		if (T(c, in(c, j))->alias_of == out(c, 0)) {
			if (outer != 1 || x != y + at * inner)
				return fail(c, "input '%s' is planned into the "
					    "output but not at its slice",
					    T(c, in(c, j))->name);
		} else if (c->s->noop) {
			return fail(c, "noop step, yet input '%s' is not in "
				    "place", T(c, in(c, j))->name);
		} else {
			rt_concat_part(x, xs.d[axis], y, ys.d[axis], at, outer,
				       inner);
		}
		at += xs.d[axis];
	}
	return 0;
}

static int op_transpose(Ctx *c)
{
	const float *x;
	float *y;
	rt_shape xs, ys;
	int64_t perm[ART_MAX_RANK];
	int got;

	if (fin(c, 0, 1, &x, &xs) || fout(c, 0, &y, &ys) ||
	    attr_ints(c, "perm", perm, xs.rank, &got))
		return -1;
	for (int i = 0; !got && i < xs.rank; i++)
		perm[i] = xs.rank - 1 - i;
	for (int i = 0; i < xs.rank; i++)
		if (perm[i] < 0 || perm[i] >= xs.rank)
			return fail(c, "bad perm");
	rt_transpose(x, &xs, perm, y);
	return 0;
}

static int op_resize(Ctx *c)
{
	static const char *const coords[] = {"half_pixel", "asymmetric",
		"align_corners", "pytorch_half_pixel"};
	static const char *const modes[] = {"round_prefer_floor",
		"round_prefer_ceil", "floor", "ceil"};
	const float *x, *sc;
	float *y, scales[ART_MAX_RANK];
	rt_shape xs, ys, ss;
	/* Upsample and Resize-10 are (X, scales), asymmetric and floor. */
	int old = c->s->ninputs <= 2;
	const char *cm = attr_str(c, "coordinate_transformation_mode",
				  old ? "asymmetric" : "half_pixel");
	const char *nm = attr_str(c, "nearest_mode",
				  old ? "floor" : "round_prefer_floor");
	int coord = -1, mode = -1;

	for (int i = 0; i < 4; i++) {
		if (!strcmp(cm, coords[i]))
			coord = i;
		if (!strcmp(nm, modes[i]))
			mode = i;
	}
	if (strcmp(attr_str(c, "mode", "nearest"), "nearest") || coord < 0 ||
	    mode < 0)
		return fail(c, "only nearest resizing with a known coordinate "
			    "mode is supported");
	if (fin(c, 0, 1, &x, &xs) || fout(c, 0, &y, &ys) ||
	    fin(c, old ? 1 : 2, 0, &sc, &ss))
		return -1;
	/* Scales as given, else (sizes given) the ratio of the shapes. */
	for (int i = 0; i < xs.rank; i++)
		scales[i] = sc && rt_numel(&ss) == xs.rank ? sc[i] :
			    xs.d[i] ? (float)ys.d[i] / (float)xs.d[i] : 1.0f;
	rt_resize_nearest(x, &xs, scales, (rt_coord)coord, (rt_nearest)mode, y,
			  &ys);
	return 0;
}

static int op_pad(Ctx *c)
{
	static const char *const modes[] = {"constant", "reflect", "edge"};
	const float *x;
	float *y, value = attr_float(c, "value", 0.0f);
	rt_shape xs, ys;
	int64_t pads[2 * ART_MAX_RANK];
	int n, got, mode = -1;
	const char *m = attr_str(c, "mode", "constant");

	for (int i = 0; i < 3; i++)
		if (!strcmp(m, modes[i]))
			mode = i;
	if (mode < 0)
		return fail(c, "pad mode '%s' is not supported", m);
	if (fin(c, 0, 1, &x, &xs) || fout(c, 0, &y, &ys))
		return -1;
	/* Opset 11 moved pads and value from attributes to inputs. */
	if (attr_ints(c, "pads", pads, 2 * xs.rank, &got))
		return -1;
	if (!got) {
		if (iin(c, 1, pads, 2 * ART_MAX_RANK, &n) ||
		    fscalar(c, 2, value, &value))
			return -1;
		if (n != 2 * xs.rank)
			return fail(c, "pads want %d values", 2 * xs.rank);
	}
	rt_pad((rt_pad_mode)mode, pads, value, x, &xs, y, &ys);
	return 0;
}

/* ---- dispatch ---- */

/* Which input an output may overwrite: none, input 0, or any operand of
 * the output's size (binary elementwise ops). */
typedef enum { IP_NO, IP_YES, IP_ANY } InPlace;

static const struct {
	const char *op;
	OpFn fn;
	InPlace inplace;            /* output 0 may be input 0's bytes */
} ops[] = {
	{"Conv", op_conv, IP_NO},
	{"ConvTranspose", op_conv, IP_NO},
	{"PreactConv", op_conv, IP_NO},         /* arenac --fuse preact */
	{"MaxPool", op_pool, IP_NO},
	{"AveragePool", op_pool, IP_NO},
	{"GlobalAveragePool", op_global_avgpool, IP_NO},
	{"LRN", op_lrn, IP_NO},
	{"Relu", op_unary, IP_YES},
	{"Sigmoid", op_unary, IP_YES},
	{"HardSigmoid", op_unary, IP_YES},
	{"HardSwish", op_unary, IP_YES},
	{"LeakyRelu", op_unary, IP_YES},
	{"Tanh", op_unary, IP_YES},
	{"Exp", op_unary, IP_YES},
	{"Neg", op_unary, IP_YES},
	{"Abs", op_unary, IP_YES},
	{"Sqrt", op_unary, IP_YES},
	{"Clip", op_unary, IP_YES},
	{"Add", op_binary, IP_ANY},
	{"Sum", op_binary, IP_ANY},
	{"Sub", op_binary, IP_ANY},
	{"Mul", op_binary, IP_ANY},
	{"Div", op_binary, IP_ANY},
	{"Max", op_binary, IP_ANY},
	{"Min", op_binary, IP_ANY},
	{"BatchNormalization", op_batchnorm, IP_YES},
	{"Softmax", op_softmax, IP_YES},
	{"Gemm", op_gemm, IP_NO},
	{"MatMul", op_matmul, IP_NO},
	{"Reshape", op_copy, IP_YES},
	{"Flatten", op_copy, IP_YES},
	{"Squeeze", op_copy, IP_YES},
	{"Unsqueeze", op_copy, IP_YES},
	{"Identity", op_copy, IP_YES},
	{"Dropout", op_copy, IP_YES},
	{"Concat", op_concat, IP_NO},
	{"Transpose", op_transpose, IP_NO},
	{"Resize", op_resize, IP_NO},
	{"Upsample", op_resize, IP_NO},
	{"Pad", op_pad, IP_NO},
};

#define NOPS (int)(sizeof ops / sizeof ops[0])

const char *art_op_name(int i)
{
	return i >= 0 && i < NOPS ? ops[i].op : NULL;
}

/* The tensor whose buffer t's bytes belong to, following views and
 * in-place outputs. */
static int root(const Ctx *c, int t)
{
	for (int hops = 0; hops < c->m->ntensors; hops++) {
		const art_tensor *x = T(c, t);
		if (x->alias_of >= 0)
			t = x->alias_of;
		else if (x->inplace_of >= 0)
			t = x->inplace_of;
		else
			break;
	}
	return t;
}

static int overlap(const art_tensor *a, const art_tensor *b)
{
	return in_arena(a) && in_arena(b) && a->bytes && b->bytes &&
	       a->offset < b->offset + b->bytes &&
	       b->offset < a->offset + a->bytes;
}

/*
 * The plan's sharing rules for one step: an output overlaps an input only
 * when it is that input in place or both belong to one buffer by design.
 */
static int check_step(Ctx *c, InPlace ip)
{
	for (int j = 0; j < c->s->noutputs; j++) {
		int o = out(c, j);
		const art_tensor *to;
		if (o < 0)
			continue;
		to = T(c, o);
		if (to->inplace_of >= 0) {
			int k = 0;
			while (k < c->s->ninputs && in(c, k) != to->inplace_of)
				k++;
			if (j != 0 || k == c->s->ninputs || ip == IP_NO ||
			    (ip == IP_YES && k != 0) ||
			    T(c, to->inplace_of)->bytes != to->bytes)
				return fail(c, "'%s' is planned in place over "
					    "'%s', which this kernel cannot "
					    "do", to->name,
					    T(c, to->inplace_of)->name);
		}
		for (int i = 0; i < c->s->ninputs; i++) {
			int x = in(c, i);
			if (x < 0 || x == to->inplace_of ||
			    !overlap(to, T(c, x)) || root(c, x) == root(c, o))
				continue;
			return fail(c, "output '%s' overlaps input '%s' in the "
				    "arena", to->name, T(c, x)->name);
		}
	}
	return 0;
}

/* A noop step must find its outputs where the plan says they already are. */
static int check_noop(Ctx *c)
{
	for (int j = 0; j < c->s->noutputs; j++) {
		int o = out(c, j);
		if (o >= 0 && T(c, o)->alias_of < 0) {
			for (int i = 0; i < c->s->ninputs; i++)
				if (in(c, i) >= 0 &&
				    T(c, in(c, i))->alias_of != o)
					return fail(c, "noop step whose "
						    "output '%s' is not in "
						    "place", T(c, o)->name);
		}
	}
	return 0;
}

/* Every tensor inside its buffer, every alias where its target is. */
static int check_tables(Ctx *c, size_t arena_bytes, size_t weights_bytes)
{
	const art_model *m = c->m;
	for (int i = 0; i < m->ntensors; i++) {
		const art_tensor *t = T(c, i);
		if (t->rank > ART_MAX_RANK)
			return fail(c, "tensor '%s' has rank %d, above %d",
				    t->name, t->rank, ART_MAX_RANK);
		if (in_arena(t) &&
		    (uint64_t)t->offset + t->bytes > arena_bytes)
			return fail(c, "tensor '%s' [%u, +%u) is past the "
				    "arena of %zu bytes", t->name, t->offset,
				    t->bytes, arena_bytes);
		if (!in_arena(t) && t->weights_offset != ART_NOT_IN_ARENA &&
		    (uint64_t)t->weights_offset + t->bytes > weights_bytes)
			return fail(c, "tensor '%s' is past the weights blob "
				    "of %zu bytes", t->name, weights_bytes);
		if (t->alias_of >= 0 && (t->alias_of >= m->ntensors ||
		    T(c, t->alias_of)->offset + t->alias_offset != t->offset))
			return fail(c, "view '%s' is not at its offset inside "
				    "the tensor it aliases", t->name);
		if (t->io >= 0 && (in_arena(t) || t->io >= m->nio || !c->io ||
				   !c->io[t->io]))
			return fail(c, "'%s' lives in a buffer of the caller's "
				    "(io %d of %d), which art_run_io did not "
				    "get", t->name, (int)t->io, m->nio);
		if (t->inplace_of >= 0 && (t->inplace_of >= m->ntensors ||
		    T(c, t->inplace_of)->offset != t->offset))
			return fail(c, "in-place '%s' is not at the offset of "
				    "the tensor it overwrites", t->name);
	}
	for (c->si = 0; c->si < m->nsteps; c->si++) {
		c->s = &m->steps[c->si];
		for (int j = 0; j < c->s->ninputs + c->s->noutputs; j++) {
			int id = j < c->s->ninputs ? in(c, j) :
				 out(c, j - c->s->ninputs);
			const art_tensor *t;
			if (id < -1 || id >= m->ntensors)
				return fail(c, "tensor index %d out of range",
					    id);
			if (id < 0)
				continue;
			t = T(c, id);
			if (!in_arena(t) && t->io < 0 &&
			    t->weights_offset == ART_NOT_IN_ARENA &&
			    t->bytes > 0 && t->rank >= 0)
				return fail(c, "'%s' is neither in the arena "
					    "nor in the weights blob (compile "
					    "with --weights)", t->name);
			if (!in_arena(t) && t->io < 0 && j >= c->s->ninputs &&
			    t->rank >= 0)
				return fail(c, "output '%s' is not in the "
					    "arena", t->name);
		}
	}
	c->s = NULL;
	return 0;
}

int art_run(const art_model *m, void *arena, size_t arena_bytes,
	    const void *weights, size_t weights_bytes, art_error *err)
{
	return art_run_io(m, arena, arena_bytes, weights, weights_bytes, NULL,
			  err);
}

int art_run_io(const art_model *m, void *arena, size_t arena_bytes,
	       const void *weights, size_t weights_bytes, void *const *io,
	       art_error *err)
{
	Ctx c = {m, arena, weights, io, err, -1, NULL};

	err->step = -1;
	err->msg[0] = 0;
	if (arena_bytes < m->arena_size)
		return fail(&c, "arena of %zu bytes, the plan needs %llu",
			    arena_bytes, (unsigned long long)m->arena_size);
	if (weights_bytes < m->weights_size)
		return fail(&c, "weights blob of %zu bytes, the plan needs %llu",
			    weights_bytes, (unsigned long long)m->weights_size);
	if (check_tables(&c, arena_bytes, weights_bytes))
		return -1;
	for (c.si = 0; c.si < m->nsteps; c.si++) {
		int k = 0;
		c.s = &m->steps[c.si];
		while (k < NOPS && strcmp(ops[k].op, c.s->op))
			k++;
		/* Views and concats check their own placement, and copy
		 * nothing when it is right; other noops are checked here. */
		if (c.s->noop && (k == NOPS || (ops[k].fn != op_copy &&
						ops[k].fn != op_concat))) {
			if (check_noop(&c))
				return -1;
			continue;
		}
		if (k == NOPS)
			return fail(&c, "op %s is not supported by the "
				    "reference runtime", c.s->op);
		if (check_step(&c, ops[k].inplace) || ops[k].fn(&c))
			return -1;
	}
	return 0;
}
