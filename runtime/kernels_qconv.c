/*
 * kernels_qconv.c — convolution on int8 / uint8 operands (ConvInteger,
 * QLinearConv).
 *
 * A direct loop: every output value is one integer sum over its window,
 * with the zero points subtracted from every input and weight value (the
 * padding is the input's zero point, so a padded tap adds 0 and is
 * skipped), written as int32 or requantized (rt_requant_store).  Nothing
 * is accumulated in the output, whose type may be too narrow for the
 * sums.  The window's rows and columns inside the input are found once
 * per output value and the operands read as bytes, so the inner loop is
 * a multiply-add (the dynamically quantised YOLOv8n's 8.7 G of them took
 * twice the time through the generic element reader and a bounds test
 * per tap: 18.8 s of CPU against 9.5 s, the same bytes out).
 */
#include "kernels.h"

/* Element i of an int8 (u 0) or uint8 (u 1) operand. */
static inline int32_t q8(const void *p, int u, int64_t i)
{
	return u ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

/* The taps [*lo, *hi) of k whose coordinate at + t * d is in [0, n). */
static inline __attribute__((always_inline)) void
inside(int64_t at, int64_t d, int64_t k, int64_t n, int64_t *lo,
		   int64_t *hi)
{
	*lo = 0, *hi = k;
	while (*lo < k && at + *lo * d < 0)
		++*lo;
	while (*hi > *lo && at + (*hi - 1) * d >= n)
		--*hi;
}

/* Both layouts' loop, inlined into each with cl constant (1: [N,H,W,C]
 * in memory), so that the channels-first kernel compiles as before and
 * a firmware that runs no channels-last convolution links none. */
static inline __attribute__((always_inline)) void
conv2d_int(const rt_conv *p, const rt_qin *x, const rt_shape *xs,
	   const rt_qin *w, const int32_t *bias, const rt_requant *rq,
	   rt_arr *y, int cl)
{
	int64_t N = xs->d[0], C = xs->d[1], H = xs->d[2], W = xs->d[3];
	int64_t M = y->s.d[1], OH = y->s.d[2], OW = y->s.d[3];
	int64_t cg = rt_div(C, p->group), mg = rt_div(M, p->group), i = 0;
	int32_t zx = x->zp ? (int32_t)rt_get_int(x->zdt, x->zp, 0) : 0;
	int xu = x->dt == ART_DT_UINT8, wu = w->dt == ART_DT_UINT8;
	/* Channels-last, neighbouring columns are C elements apart, and
	 * the filter's taps in TFLite's layout (rt_filter_at) cg apart, or
	 * M (depthwise). */
	int64_t dw = cl ? p->dw * C : p->dw;
	int64_t wstep = !cl ? 1 : p->group > 1 && cg == 1 ? M : cg;

	for (int64_t n = 0; n < N; n++)
	for (int64_t m = 0; m < M; m++) {
		int32_t zw = w->zp ? (int32_t)rt_get_int(w->zdt, w->zp,
						w->nzp == 1 ? 0 : m) : 0;
		int64_t c0 = rt_div(m, mg) * cg;
		for (int64_t oh = 0; oh < OH; oh++) {
			int64_t ih0 = oh * p->sh - p->ph, khlo, khhi;
			inside(ih0, p->dh, p->kh, H, &khlo, &khhi);
			for (int64_t ow = 0; ow < OW; ow++, i++) {
				int64_t iw0 = ow * p->sw - p->pw, kwlo, kwhi;
				int64_t s = bias ? bias[m] : 0;
				inside(iw0, p->dw, p->kw, W, &kwlo, &kwhi);
				for (int64_t c = 0; c < cg; c++)
				for (int64_t kh = khlo; kh < khhi; kh++) {
					int64_t ih = ih0 + kh * p->dh;
					int64_t xr = cl ?
						((n * H + ih) * W + iw0) * C +
						c0 + c :
						((n * C + c0 + c) * H + ih) * W +
						iw0;
					int64_t wr = cl ? rt_filter_at(p, M, cg,
						m, kh, 0) + c :
						((m * cg + c) * p->kh + kh) *
						p->kw;
					for (int64_t kw = kwlo; kw < kwhi; kw++)
						s += (q8(x->p, xu, xr + kw * dw) -
						      zx) *
						     (q8(w->p, wu, wr + kw *
							 wstep) - zw);
				}
				rt_requant_store(rq, s, 0, m, y, cl ?
					((n * OH + oh) * OW + ow) * M + m : i);
			}
		}
	}
}

void rt_conv2d_int(const rt_conv *p, const rt_qin *x, const rt_shape *xs,
		   const rt_qin *w, const int32_t *bias, const rt_requant *rq,
		   rt_arr *y)
{
	conv2d_int(p, x, xs, w, bias, rq, y, 0);
}

void rt_conv2d_int_nhwc(const rt_conv *p, const rt_qin *x,
			const rt_shape *xs, const rt_qin *w,
			const int32_t *bias, const rt_requant *rq, rt_arr *y)
{
	conv2d_int(p, x, xs, w, bias, rq, y, 1);
}
