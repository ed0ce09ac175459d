/*
 * ops_quant.c — the quantized ops: QuantizeLinear, DequantizeLinear
 * (per tensor or per axis), DynamicQuantizeLinear, ConvInteger,
 * MatMulInteger, QLinearConv, QLinearMatMul.
 *
 * Scales are float32; zero points have the quantized operand's type and
 * one value per scale.  A per-axis (per-channel, per-row, per-column)
 * parameter must have exactly as many values as that axis.
 */
#include <string.h>

#include "ops.h"

static int is_8bit(int dt)
{
	return dt == ART_DT_INT8 || dt == ART_DT_UINT8;
}

/*
 * Scales (input js) and zero points (input jz, optional) of x: one value
 * (axis unused), or one per index of the axis attribute (default 1).
 */
static int qparam(Ctx *c, int js, int jz, const rt_arr *x, rt_qparam *q)
{
	rt_arr s, z;
	int axis;
	if (ctx_arg(c, js, 1, &s) || ctx_arg(c, jz, 0, &z))
		return -1;
	if (s.dt != ART_DT_FLOAT)
		return ctx_fail(c, ART_E_SCALES_FLOAT32);
	if (ctx_attr_int(c, "block_size", 0))
		return ctx_fail(c, ART_E_BLOCKED_QUANTIZATION_SUPPORTED);
	q->scale = s.p;
	q->n = rt_numel(&s.s);
	q->zp = z.p;
	q->zdt = z.dt;
	q->inner = 1;
	if (z.p && rt_numel(&z.s) != q->n)
		return ctx_fail(c, ART_E_ZERO_POINTS_SCALES_DIFFER);
	if (q->n == 1)
		return 0;
	if (ctx_axis(c, ctx_attr_int(c, "axis", 1), x->s.rank, &axis))
		return -1;
	for (int i = axis + 1; i < x->s.rank; i++)
		q->inner *= x->s.d[i];
	if (s.s.rank != 1 || q->n != x->s.d[axis])
		return ctx_fail(c, ART_E_SCALES_NEITHER_ONE_NOR,
		    ART_I((long long)q->n), ART_I(axis));
	return 0;
}

int op_quantize(Ctx *c)
{
	rt_arr x, y;
	rt_qparam q;
	if (ctx_arg(c, 0, 1, &x) || ctx_res(c, 0, &y) ||
	    qparam(c, 1, 2, &x, &q))
		return -1;
	if ((x.dt != ART_DT_FLOAT && x.dt != ART_DT_INT32) ||
	    (!is_8bit(y.dt) && y.dt != ART_DT_INT16 && y.dt != ART_DT_UINT16))
		return ctx_fail(c, ART_E_QUANTIZES_FLOAT32_INT32_8);
	rt_quantize(&x, &q, &y);
	return 0;
}

int op_dequantize(Ctx *c)
{
	rt_arr x;
	float *y;
	rt_shape ys;
	rt_qparam q;
	if (ctx_arg(c, 0, 1, &x) || ctx_fout(c, 0, &y, &ys) ||
	    qparam(c, 1, 2, &x, &q))
		return -1;
	if (!is_8bit(x.dt) && x.dt != ART_DT_INT32 && x.dt != ART_DT_INT16 &&
	    x.dt != ART_DT_UINT16)
		return ctx_fail(c, ART_E_DEQUANTIZES_8_16_32);
	rt_dequantize(&x, &q, y);
	return 0;
}

int op_dynamic_quantize(Ctx *c)
{
	const float *x;
	rt_shape xs;
	rt_arr y, s, z;
	if (ctx_fin(c, 0, 1, &x, &xs) || ctx_res(c, 0, &y) ||
	    ctx_res(c, 1, &s) || ctx_res(c, 2, &z))
		return -1;
	if (y.dt != ART_DT_UINT8 || z.dt != ART_DT_UINT8 ||
	    s.dt != ART_DT_FLOAT || rt_numel(&s.s) != 1 || rt_numel(&z.s) != 1)
		return ctx_fail(c, ART_E_WANTS_UINT8_Y_FLOAT);
	rt_dynamic_quantize(x, rt_numel(&xs), y.p, s.p, z.p);
	return 0;
}

/* An 8-bit operand (input j) with its zero point (input jz, optional):
 * one, or count of them. */
static int qin(Ctx *c, int j, int jz, int64_t count, rt_qin *q, rt_shape *s)
{
	rt_arr a, z;
	if (ctx_arg(c, j, 1, &a) || ctx_arg(c, jz, 0, &z))
		return -1;
	if (!is_8bit(a.dt) || (z.p && z.dt != a.dt))
		return ctx_fail(c, ART_E_INPUT_ZERO_POINT_INT8, ART_I(j));
	q->p = a.p, q->dt = a.dt;
	q->zp = z.p, q->zdt = z.dt;
	q->nzp = z.p ? rt_numel(&z.s) : 1;
	if (q->nzp != 1 && q->nzp != count)
		return ctx_fail(c, ART_E_INPUT_ZERO_POINTS_1,
				ART_I(jz), ART_I((long long)q->nzp),
				    ART_I((long long)count));
	*s = a.s;
	return 0;
}

/* The float32 scale(s) of input j: one, or count of them. */
static int scales(Ctx *c, int j, int64_t count, const float **p, int64_t *n)
{
	rt_shape s;
	if (ctx_fin(c, j, 1, p, &s))
		return -1;
	*n = rt_numel(&s);
	if (*n != 1 && *n != count)
		return ctx_fail(c, ART_E_INPUT_SCALES_1, ART_I(j),
				ART_I((long long)*n), ART_I((long long)count));
	return 0;
}

/* QLinear*'s output scale and zero point (inputs j, j + 1): one each;
 * its sums of terms products each. */
static int out_quant(Ctx *c, int j, const rt_arr *y, int64_t terms,
		     rt_requant *rq)
{
	const float *sy;
	int64_t n;
	rt_arr z;
	if (scales(c, j, 1, &sy, &n) || ctx_arg(c, j + 1, 0, &z))
		return -1;
	if (terms > RT_REQUANT_TERMS)
		return ctx_fail(c, ART_E_REQUANT_SUMS_TOO_LONG,
				ART_I((long long)terms),
				ART_I((long long)RT_REQUANT_TERMS));
	if (!is_8bit(y->dt) || (z.p && (z.dt != y->dt || rt_numel(&z.s) != 1)))
		return ctx_fail(c, ART_E_WANTS_INT8_UINT8_OUTPUT);
	rq->sy = sy[0];
	rq->zy = z.p ? rt_get_int(z.dt, z.p, 0) : 0;
	return 0;
}

/*
 * ConvInteger (x, w, x_zero_point, w_zero_point) and QLinearConv (x,
 * x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point,
 * B): the weights' zero points and scales may be per output channel.
 */
typedef void ConvIntFn(const rt_conv *p, const rt_qin *x, const rt_shape *xs,
		       const rt_qin *w, const int32_t *bias,
		       const rt_requant *rq, rt_arr *y);

/* In either layout (cl 1: x and y channels-last, --layout nhwc), the
 * kernel the caller's; inlined into each op with cl constant, so that a
 * firmware running channels-first convolutions links nothing of the
 * other. */
static inline __attribute__((always_inline)) int
conv_int(Ctx *c, ConvIntFn *kernel, int cl)
{
	int ql = !strcmp(c->s->op, "QLinearConv");
	rt_qin x, w;
	rt_shape xs, ws;
	rt_arr y, b;
	rt_requant rq;
	rt_conv p;
	int64_t k[2], cg;

	if (ctx_res(c, 0, &y))
		return -1;
	if (y.s.rank < 3)
		return ctx_fail(c, ART_E_WANTS_N_C_SPATIAL);
	if (cl)
		ctx_channels_first(&y.s);
	if (qin(c, 0, 2, 1, &x, &xs) ||
	    qin(c, ql ? 3 : 1, ql ? 5 : 3, y.s.d[1], &w, &ws))
		return -1;
	if (xs.rank != ws.rank || ws.rank != y.s.rank)
		return ctx_fail(c, ART_E_WEIGHT_RANK_DIFFERS_FROM);
	if (cl)
		ctx_channels_first(&xs);
	/* Channels-last, W is in TFLite's layout (kernels.h rt_filter_at). */
	k[0] = cl ? ws.d[1] : xs.rank == 4 ? ws.d[2] : 1;
	k[1] = cl ? ws.d[2] : ws.d[ws.rank - 1];
	if (ctx_conv_geometry(c, &xs, &y.s, k, 0, &p, NULL))
		return -1;
	ctx_as_2d(&xs), ctx_as_2d(&y.s);
	if (cl ? ctx_nhwc_filter(c, &p, &ws, xs.d[1], y.s.d[1]) :
	    ctx_group_channels(c, &p, ws.d[1], xs.d[1], y.s.d[1]))
		return -1;
	cg = cl ? rt_div(xs.d[1], p.group) : ws.d[1];
	if (!ql) {
		if (y.dt != ART_DT_INT32)
			return ctx_fail(c, ART_E_CONVINTEGER_GIVES_INT32);
		kernel(&p, &x, &xs, &w, NULL, NULL, &y);
		return 0;
	}
	if (scales(c, 1, 1, &rq.sa, &rq.na) ||
	    scales(c, 4, y.s.d[1], &rq.sb, &rq.nb) ||
	    out_quant(c, 6, &y, cg * k[0] * k[1], &rq) ||
	    ctx_arg(c, 8, 0, &b))
		return -1;
	if (b.p && (b.dt != ART_DT_INT32 || rt_numel(&b.s) != y.s.d[1]))
		return ctx_fail(c, ART_E_BIAS_WANTS_ONE_INT32);
	kernel(&p, &x, &xs, &w, b.p, &rq, &y);
	return 0;
}

int op_conv_int(Ctx *c)
{
	return conv_int(c, rt_conv2d_int, 0);
}

int op_nhwc_conv_int(Ctx *c)
{
	return conv_int(c, rt_conv2d_int_nhwc, 1);
}

/*
 * MatMulInteger (a, b, a_zero_point, b_zero_point) and QLinearMatMul (a,
 * a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
 * a's parameters one or one per row, b's one or one per column.
 */
int op_matmul_int(Ctx *c)
{
	int ql = !strcmp(c->s->op, "QLinearMatMul");
	rt_arr y, a0, b0;
	rt_qin a, b;
	rt_shape as, bs;
	rt_requant rq;
	int64_t m, n;

	if (ctx_res(c, 0, &y) || ctx_arg(c, 0, 1, &a0) ||
	    ctx_arg(c, ql ? 3 : 1, 1, &b0))
		return -1;
	if (a0.s.rank < 1 || b0.s.rank < 1)
		return ctx_fail(c, ART_E_MATMUL_SCALAR);
	m = a0.s.rank >= 2 ? a0.s.d[a0.s.rank - 2] : 1;
	n = b0.s.rank >= 2 ? b0.s.d[b0.s.rank - 1] : 1;
	if (qin(c, 0, 2, m, &a, &as) ||
	    qin(c, ql ? 3 : 1, ql ? 5 : 3, n, &b, &bs))
		return -1;
	if (!ql) {
		if (y.dt != ART_DT_INT32)
			return ctx_fail(c, ART_E_MATMULINTEGER_GIVES_INT32);
		rt_matmul_int(&a, &as, &b, &bs, NULL, &y);
		return 0;
	}
	if (scales(c, 1, m, &rq.sa, &rq.na) || scales(c, 4, n, &rq.sb, &rq.nb) ||
	    out_quant(c, 6, &y, as.d[as.rank - 1], &rq))
		return -1;
	rt_matmul_int(&a, &as, &b, &bs, &rq, &y);
	return 0;
}
