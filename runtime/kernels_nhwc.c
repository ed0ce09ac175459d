/*
 * kernels_nhwc.c — the float kernels of channels-last activations
 * (--layout nhwc: [N,H,W,C], as CMSIS-NN and TFLite Micro store them):
 * convolution, global pooling, batch normalisation.  The windowed pools
 * and the integer convolution share their loops with the channels-first
 * kernels (kernels_pool.c, kernels_qconv.c), which only index otherwise.
 *
 * The convolution reads its filter as CMSIS-NN's and TFLite Micro's
 * kernels do (kernels.h rt_filter_at: OHWI, or [1, kh, kw, M] depthwise):
 * for each output pixel and output channel, a dot product over the taps
 * inside the input, the input's channels and the filter's both
 * contiguous (arm_convolve_s8's order).
 */
#include <math.h>

#include "kernels.h"

void rt_conv2d_nhwc(const rt_conv *p, const float *x, const rt_shape *xs,
		    const float *w, const float *b, float *y,
		    const rt_shape *ys)
{
	int64_t N = xs->d[0], C = xs->d[1], H = xs->d[2], W = xs->d[3];
	int64_t M = ys->d[1], OH = ys->d[2], OW = ys->d[3];
	int64_t cg = rt_div(C, p->group), mg = rt_div(M, p->group);

	for (int64_t n = 0; n < N; n++)
	for (int64_t oh = 0; oh < OH; oh++)
	for (int64_t ow = 0; ow < OW; ow++) {
		float *yp = y + ((n * OH + oh) * OW + ow) * M;
		for (int64_t m = 0; m < M; m++)
			yp[m] = b ? b[m] : 0.0f;
		for (int64_t i = 0; i < p->kh; i++) {
			int64_t ih = oh * p->sh - p->ph + i * p->dh;
			if (ih < 0 || ih >= H)
				continue;
			for (int64_t j = 0; j < p->kw; j++) {
				int64_t iw = ow * p->sw - p->pw + j * p->dw;
				const float *xp;
				if (iw < 0 || iw >= W)
					continue;
				xp = x + ((n * H + ih) * W + iw) * C;
				for (int64_t m = 0; m < M; m++) {
					const float *xg = xp + rt_div(m, mg) * cg;
					const float *wp = w + rt_filter_at(
						p, M, cg, m, i, j);
					float acc = 0.0f;
					for (int64_t ci = 0; ci < cg; ci++)
						acc += xg[ci] * wp[ci];
					yp[m] += acc;
				}
			}
		}
	}
}

/* As rt_batchnorm: v a + (bias - mean a), a = scale / sqrt(var + eps). */
void rt_batchnorm_nhwc(const float *x, const rt_shape *xs, const float *scale,
		       const float *bias, const float *mean, const float *var,
		       float eps, float *y)
{
	int64_t C = xs->d[xs->rank - 1], rows = rt_div(rt_numel(xs), C);
	for (int64_t c = 0; c < C; c++) {
		float a = scale[c] / sqrtf(var[c] + eps);
		float b = bias[c] - mean[c] * a;
		for (int64_t r = 0; r < rows; r++)
			y[r * C + c] = x[r * C + c] * a + b;
	}
}
