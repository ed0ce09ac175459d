/*
 * kernels_conv.c — direct 2-D convolution and transposed convolution.
 *
 * No im2col: its scratch buffer would be memory the plan never gave us.
 * Instead each (output channel, input channel, kernel tap) adds one scaled
 * input row to one output row, an inner loop over contiguous floats that
 * the compiler vectorises when the stride is 1.  The valid column range of
 * each tap is computed once, so the inner loop has no bounds tests.
 */
#include "kernels.h"

static int64_t ceil_div(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Adds wv * x[ow * sw + shift] into y[ow] for ow in [lo, hi). */
static void axpy_strided(float *y, const float *x, float wv, int64_t sw,
			 int64_t shift, int64_t lo, int64_t hi)
{
	if (sw == 1) {
		for (int64_t ow = lo; ow < hi; ow++)
			y[ow] += wv * x[ow + shift];
	} else {
		for (int64_t ow = lo; ow < hi; ow++)
			y[ow] += wv * x[ow * sw + shift];
	}
}

static void fill_bias(float *y, const float *b, int64_t m, int64_t n)
{
	float v = b ? b[m] : 0.0f;
	for (int64_t i = 0; i < n; i++)
		y[i] = v;
}

void rt_conv2d(const rt_conv *p, const float *x, const rt_shape *xs,
	       const float *w, const float *b, float *y, const rt_shape *ys)
{
	int64_t N = xs->d[0], C = xs->d[1], H = xs->d[2], W = xs->d[3];
	int64_t M = ys->d[1], OH = ys->d[2], OW = ys->d[3];
	int64_t cg = C / p->group, mg = M / p->group;

	for (int64_t n = 0; n < N; n++)
	for (int64_t m = 0; m < M; m++) {
		float *yo = y + (n * M + m) * OH * OW;
		int64_t g = m / mg;
		fill_bias(yo, b, m, OH * OW);
		for (int64_t c = 0; c < cg; c++) {
			const float *xc = x + (n * C + g * cg + c) * H * W;
			const float *wk = w + (m * cg + c) * p->kh * p->kw;
			for (int64_t i = 0; i < p->kh; i++)
			for (int64_t j = 0; j < p->kw; j++) {
				float wv = wk[i * p->kw + j];
				int64_t shift = j * p->dw - p->pw;
				/* 0 <= ow * sw + shift < W */
				int64_t lo = clamp(ceil_div(-shift, p->sw), 0, OW);
				int64_t hi = clamp(ceil_div(W - shift, p->sw), lo, OW);
				for (int64_t oh = 0; oh < OH; oh++) {
					int64_t ih = oh * p->sh - p->ph + i * p->dh;
					if (ih < 0 || ih >= H)
						continue;
					axpy_strided(yo + oh * OW, xc + ih * W,
						     wv, p->sw, shift, lo, hi);
				}
			}
		}
	}
}

void rt_convtranspose2d(const rt_conv *p, const float *x, const rt_shape *xs,
			const float *w, const float *b, float *y,
			const rt_shape *ys)
{
	int64_t N = xs->d[0], C = xs->d[1], H = xs->d[2], W = xs->d[3];
	int64_t M = ys->d[1], OH = ys->d[2], OW = ys->d[3];
	int64_t cg = C / p->group, mg = M / p->group;

	for (int64_t n = 0; n < N; n++)
		for (int64_t m = 0; m < M; m++)
			fill_bias(y + (n * M + m) * OH * OW, b, m, OH * OW);
	/* Each input pixel scatters into the output: oh = ih*sh - ph + i*dh. */
	for (int64_t n = 0; n < N; n++)
	for (int64_t c = 0; c < C; c++) {
		const float *xc = x + (n * C + c) * H * W;
		int64_t g = c / cg;
		for (int64_t ml = 0; ml < mg; ml++) {
			int64_t m = g * mg + ml;
			float *yo = y + (n * M + m) * OH * OW;
			const float *wk = w + (c * mg + ml) * p->kh * p->kw;
			for (int64_t i = 0; i < p->kh; i++)
			for (int64_t j = 0; j < p->kw; j++) {
				float wv = wk[i * p->kw + j];
				int64_t shift = j * p->dw - p->pw;
				/* 0 <= iw * sw + shift < OW */
				int64_t lo = clamp(ceil_div(-shift, p->sw), 0, W);
				int64_t hi = clamp(ceil_div(OW - shift, p->sw), lo, W);
				for (int64_t ih = 0; ih < H; ih++) {
					int64_t oh = ih * p->sh - p->ph + i * p->dh;
					if (oh < 0 || oh >= OH)
						continue;
					for (int64_t iw = lo; iw < hi; iw++)
						yo[oh * OW + iw * p->sw + shift] +=
							wv * xc[ih * W + iw];
				}
			}
		}
	}
}
