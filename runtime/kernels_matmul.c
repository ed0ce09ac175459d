/*
 * kernels_matmul.c — Gemm, and MatMul on float32 and on int8 / uint8;
 * the integer kernels' requantisation (rt_requant_store), in integers.
 *
 * MatMul follows numpy: a 1-D a is a row, a 1-D b a column (their axis
 * disappears from the output), and the batch dims before the last two
 * broadcast.  One function maps an output batch to its a and b matrices,
 * so the float and the integer product share the broadcasting.
 */
#include <string.h>

#include "kernels.h"

void rt_gemm(const float *a, const float *b, const float *c,
	     const rt_shape *cs, float *y, int64_t m, int64_t n, int64_t k,
	     int trans_a, int trans_b, float alpha, float beta)
{
	for (int64_t i = 0; i < m; i++) {
		float *yr = y + i * n;
		if (trans_b) {
			/* b is [n, k]: a dot product per output. */
			for (int64_t j = 0; j < n; j++) {
				float s = 0.0f;
				for (int64_t l = 0; l < k; l++)
					s += (trans_a ? a[l * m + i] :
					      a[i * k + l]) * b[j * k + l];
				yr[j] = alpha * s;
			}
		} else {
			/* b is [k, n]: rows of b scaled into y's row. */
			memset(yr, 0, (size_t)n * sizeof *yr);
			for (int64_t l = 0; l < k; l++) {
				float av = alpha * (trans_a ? a[l * m + i] :
						    a[i * k + l]);
				for (int64_t j = 0; j < n; j++)
					yr[j] += av * b[l * n + j];
			}
		}
	}
	if (c) {
		/* c is unidirectionally broadcast to [m, n]. */
		int64_t cm = cs->rank == 2 ? cs->d[0] : 1;
		int64_t cn = cs->rank >= 1 ? cs->d[cs->rank - 1] : 1;
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++)
				y[i * n + j] += beta * c[(cm == 1 ? 0 : i) * cn +
							(cn == 1 ? 0 : j)];
	}
}

/* The product's geometry: m x k times k x n, batches of them. */
typedef struct Mm {
	int64_t m, k, n, batches;
	int br;                     /* batch dims of the output */
} Mm;

static Mm geometry(const rt_shape *as, const rt_shape *bs, const rt_shape *ys)
{
	Mm g;
	g.m = as->rank >= 2 ? as->d[as->rank - 2] : 1;
	g.k = as->d[as->rank - 1];
	g.n = bs->rank >= 2 ? bs->d[bs->rank - 1] : 1;
	g.br = ys->rank - (as->rank >= 2) - (bs->rank >= 2);
	if (g.br < 0)
		g.br = 0;
	g.batches = 1;
	for (int i = 0; i < g.br; i++)
		g.batches *= ys->d[i];
	return g;
}

/* Output batch t's matrices in a and b (in matrices), broadcasting. */
static void batch_of(const Mm *g, const rt_shape *as, const rt_shape *bs,
		     const rt_shape *ys, int64_t t, int64_t *oa, int64_t *ob)
{
	int64_t idx[ART_MAX_RANK];
	for (int i = g->br - 1; i >= 0; i--)
		idx[i] = rt_mod(t, ys->d[i]), t = rt_div(t, ys->d[i]);
	*oa = *ob = 0;
	for (int i = 0; i < g->br; i++) {
		int ia = i - (g->br - (as->rank - 2));
		int ib = i - (g->br - (bs->rank - 2));
		if (ia >= 0)
			*oa = *oa * as->d[ia] + (as->d[ia] == 1 ? 0 : idx[i]);
		if (ib >= 0)
			*ob = *ob * bs->d[ib] + (bs->d[ib] == 1 ? 0 : idx[i]);
	}
}

void rt_matmul(const float *a, const rt_shape *as, const float *b,
	       const rt_shape *bs, float *y, const rt_shape *ys)
{
	Mm g = geometry(as, bs, ys);
	for (int64_t t = 0; t < g.batches; t++) {
		int64_t oa, ob;
		batch_of(&g, as, bs, ys, t, &oa, &ob);
		rt_gemm(a + oa * g.m * g.k, b + ob * g.k * g.n, NULL, NULL,
			y + t * g.m * g.n, g.m, g.n, g.k, 0, 0, 1.0f, 0.0f);
	}
}

/* Zero point i of q (one for all when it has one). */
static int64_t zero_point(const rt_qin *q, int64_t i)
{
	return q->zp ? rt_get_int(q->zdt, q->zp, q->nzp == 1 ? 0 : i) : 0;
}

/* Past every 8-bit output's range (zero point included): cut here. */
#define RQ_BIG ((uint64_t)1 << 20)

/* u / 2^k rounded half to even (k > 0). */
static uint64_t shift_even(uint64_t u, int k)
{
	uint64_t q, rem, half;
	if (k >= 64)
		return 0;           /* u < 2^63: below one half */
	q = u >> k;
	rem = u - (q << k);
	half = (uint64_t)1 << (k - 1);
	return q + (rem > half || (rem == half && (q & 1)));
}

/*
 * nearbyint(s * f) as the spec's reference computes it (an integer sum
 * times a float32 scale: numpy's product in double, rounded half to
 * even), in integers, cut to +-RQ_BIG: f is m * 2^e exactly (m below
 * 2^24), so s * m is exact in 64 bits for |s| < 2^39 (the adapters
 * refuse longer sums: ops_quant.c); rounded to 53 significant bits it
 * is the double product, and a rounding shift by -e its nearest integer.
 * The same integer as the double arithmetic for every s and f, without
 * the ~3 KB of soft-float double a Cortex-M4F's FPU leaves to libgcc.
 * TFLite Micro (tensorflow/lite/kernels/internal/common.h,
 * MultiplyByQuantizedMultiplier) and CMSIS-NN (Include/
 * arm_nnsupportfunctions.h, arm_nn_requantize) instead round a Q31
 * multiplier of the double scale, then the product, half away from zero
 * or up, which differs near halves (measured on the firmware's input to
 * testdata/quant_cnn_int8.onnx: 1 of its 4,096 second-convolution
 * outputs; the node suite's QLinear tests agree), so the header carries
 * their pairs for such libraries (codegen/header_requant.c) and this
 * kernel the spec's.
 */
static int64_t mul_round(int64_t s, float f)
{
	uint32_t bits;
	uint64_t m, u;
	int e, d = 0, neg;

	memcpy(&bits, &f, sizeof bits);
	e = (int)(bits >> 23 & 0xff);
	m = bits & 0x7fffff;
	neg = (int)(bits >> 31) != (s < 0);
	if (e == 0xff)              /* NaN or NaN = inf * 0: the low end */
		return m || !s || neg ? -(int64_t)RQ_BIG : (int64_t)RQ_BIG;
	if (e)
		m |= 0x800000;
	else
		e = 1;              /* subnormal */
	e -= 150;                   /* f = +-m * 2^e */
	u = (uint64_t)(s < 0 ? -s : s) * m;
	if (!u)
		return 0;
	while (u >> (53 + d))
		d++;
	if (d)
		u = shift_even(u, d) << d;
	if (e >= 0)
		u = e > 20 || u >> (20 - e) ? RQ_BIG : u << e;
	else
		u = shift_even(u, -e);
	if (u > RQ_BIG)
		u = RQ_BIG;
	return neg ? -(int64_t)u : (int64_t)u;
}

void rt_requant_store(const rt_requant *rq, int64_t s, int64_t r,
		      int64_t ch, rt_arr *y, int64_t i)
{
	int64_t v, lo, hi;

	if (!rq) {
		rt_set_int(y->dt, y->p, i, (int32_t)(uint32_t)s);
		return;
	}
	/* The multiplier in float32, as the spec's reference computes it. */
	v = mul_round(s, rq->sa[rq->na == 1 ? 0 : r] *
		      rq->sb[rq->nb == 1 ? 0 : ch] / rq->sy) + rq->zy;
	lo = y->dt == ART_DT_INT8 ? -128 : 0;
	hi = y->dt == ART_DT_INT8 ? 127 : 255;
	rt_set_int(y->dt, y->p, i, v < lo ? lo : v > hi ? hi : v);
}

void rt_matmul_int(const rt_qin *a, const rt_shape *as, const rt_qin *b,
		   const rt_shape *bs, const rt_requant *rq, rt_arr *y)
{
	Mm g = geometry(as, bs, &y->s);
	for (int64_t t = 0; t < g.batches; t++) {
		int64_t oa, ob;
		batch_of(&g, as, bs, &y->s, t, &oa, &ob);
		oa *= g.m * g.k, ob *= g.k * g.n;
		for (int64_t i = 0; i < g.m; i++)
		for (int64_t j = 0; j < g.n; j++) {
			int64_t za = zero_point(a, i), zb = zero_point(b, j);
			int64_t s = 0;
			for (int64_t l = 0; l < g.k; l++)
				s += (rt_get_int(a->dt, a->p, oa + i * g.k + l) - za) *
				     (rt_get_int(b->dt, b->p, ob + l * g.n + j) - zb);
			rt_requant_store(rq, s, i, j, y, (t * g.m + i) * g.n + j);
		}
	}
}
