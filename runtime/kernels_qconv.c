/*
 * kernels_qconv.c — convolution on int8 / uint8 operands (ConvInteger,
 * QLinearConv).
 *
 * A plain direct loop: every output value is one integer sum over its
 * window, with the zero points subtracted from every input and weight
 * value (the padding is the input's zero point, so a padded tap adds 0),
 * written as int32 or requantized (rt_requant_store).  Nothing is
 * accumulated in the output, whose type may be too narrow for the sums.
 */
#include "kernels.h"

void rt_conv2d_int(const rt_conv *p, const rt_qin *x, const rt_shape *xs,
		   const rt_qin *w, const int32_t *bias, const rt_requant *rq,
		   rt_arr *y)
{
	int64_t N = xs->d[0], C = xs->d[1], H = xs->d[2], W = xs->d[3];
	int64_t M = y->s.d[1], OH = y->s.d[2], OW = y->s.d[3];
	int64_t cg = C / p->group, mg = M / p->group, i = 0;
	int64_t zx = x->zp ? rt_get_i(x->zdt, x->zp, 0) : 0;

	for (int64_t n = 0; n < N; n++)
	for (int64_t m = 0; m < M; m++) {
		int64_t zw = w->zp ? rt_get_i(w->zdt, w->zp,
					      w->nzp == 1 ? 0 : m) : 0;
		int64_t c0 = m / mg * cg;
		for (int64_t oh = 0; oh < OH; oh++)
		for (int64_t ow = 0; ow < OW; ow++, i++) {
			int64_t s = bias ? bias[m] : 0;
			for (int64_t c = 0; c < cg; c++)
			for (int64_t kh = 0; kh < p->kh; kh++) {
				int64_t ih = oh * p->sh - p->ph + kh * p->dh;
				if (ih < 0 || ih >= H)
					continue;
				for (int64_t kw = 0; kw < p->kw; kw++) {
					int64_t iw = ow * p->sw - p->pw +
						     kw * p->dw;
					int64_t xi = ((n * C + c0 + c) * H + ih) *
						     W + iw;
					int64_t wi = ((m * cg + c) * p->kh + kh) *
						     p->kw + kw;
					if (iw < 0 || iw >= W)
						continue;
					s += (rt_get_i(x->dt, x->p, xi) - zx) *
					     (rt_get_i(w->dt, w->p, wi) - zw);
				}
			}
			rt_requant_store(rq, s, 0, m, y, i);
		}
	}
}
