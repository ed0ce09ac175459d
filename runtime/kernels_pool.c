/*
 * kernels_pool.c — pooling (windowed and global) and local response
 * normalisation.
 *
 * Output shapes come from the plan, so ceil_mode needs no code here: a
 * window that runs past the (padded) input is simply clipped.
 */
#include <math.h>
#include <string.h>

#include "kernels.h"

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Element i of a max pool's input: float32, or the 8-bit integers of
 * MaxPool-12 (quantised CNNs pool their uint8 or int8 activations). */
static float elem(int dt, const void *x, int64_t i)
{
	return dt == ART_DT_UINT8 ? (float)((const uint8_t *)x)[i] :
	       dt == ART_DT_INT8 ? (float)((const int8_t *)x)[i] :
				   ((const float *)x)[i];
}

/* Where in the plane (row-major) the maximum of one max-pool window is
 * (dilations honoured), or -1 when the window holds no input; the
 * plane's pixels ps elements apart (the channels, channels-last). */
static inline __attribute__((always_inline)) int64_t
max_window(const rt_conv *p, int dt, const void *xc,
			  int64_t ps, int64_t H, int64_t W, int64_t oh,
			  int64_t ow)
{
	float v = -INFINITY;
	int64_t at = -1;
	for (int64_t i = 0; i < p->kh; i++) {
		int64_t ih = oh * p->sh - p->ph + i * p->dh;
		if (ih < 0 || ih >= H)
			continue;
		for (int64_t j = 0; j < p->kw; j++) {
			int64_t iw = ow * p->sw - p->pw + j * p->dw;
			if (iw >= 0 && iw < W &&
			    (at < 0 || elem(dt, xc, (ih * W + iw) * ps) > v)) {
				v = elem(dt, xc, (ih * W + iw) * ps);
				at = ih * W + iw;
			}
		}
	}
	return at;
}

/* One output value of an average pool, as onnxruntime counts it. */
static inline __attribute__((always_inline)) float
avg_window(rt_pool_kind k, const rt_conv *p,
			const int64_t *pads_end, const float *xc, int64_t ps,
			int64_t H, int64_t W, int64_t oh, int64_t ow)
{
	int64_t h0 = oh * p->sh - p->ph, w0 = ow * p->sw - p->pw;
	int64_t h1 = min64(h0 + p->kh, H + pads_end[0]);
	int64_t w1 = min64(w0 + p->kw, W + pads_end[1]);
	int64_t count = (h1 - h0) * (w1 - w0);
	float sum = 0.0f;

	h0 = max64(h0, 0), w0 = max64(w0, 0);
	h1 = min64(h1, H), w1 = min64(w1, W);
	if (k == RT_POOL_AVG)
		count = (h1 - h0) * (w1 - w0);
	for (int64_t ih = h0; ih < h1; ih++)
		for (int64_t iw = w0; iw < w1; iw++)
			sum += xc[(ih * W + iw) * ps];
	return count > 0 ? sum / rt_i64_to_f32(count) : 0.0f;
}

/*
 * Both layouts' loop, inlined into each with cl constant (1: [N,H,W,C]
 * in memory), so that the channels-first kernel compiles as before and
 * a firmware that runs no channels-last pool links none (--gc-sections).
 */
static inline __attribute__((always_inline)) void
pool2d(rt_pool_kind k, const rt_conv *p, const int64_t *pads_end, int dt,
       const void *x, const rt_shape *xs, void *y, const rt_shape *ys,
       int64_t *indices, int col_major, int cl)
{
	int64_t C = xs->d[1], NC = xs->d[0] * C, H = xs->d[2], W = xs->d[3];
	int64_t OH = ys->d[2], OW = ys->d[3];
	size_t esz = art_dtype_size(dt);
	/* Channels-last: plane c of image n starts at element n H W C + c,
	 * its pixels C apart (no indices: --layout nhwc leaves a MaxPool
	 * whose indices are read channels-first). */
	int64_t ps = cl ? C : 1;

	for (int64_t c = 0; c < NC; c++) {
		int64_t x0 = cl ? rt_div(c, C) * H * W * C + rt_mod(c, C) : c * H * W;
		int64_t y0 = cl ? rt_div(c, C) * OH * OW * C + rt_mod(c, C) :
			     c * OH * OW;
		const uint8_t *xc = (const uint8_t *)x + (size_t)x0 * esz;
		for (int64_t oh = 0; oh < OH; oh++)
		for (int64_t ow = 0; ow < OW; ow++) {
			int64_t o = y0 + (oh * OW + ow) * ps, at;
			if (k != RT_POOL_MAX) {
				((float *)y)[o] = avg_window(k, p, pads_end,
					(const float *)(const void *)xc, ps,
					H, W, oh, ow);
				continue;
			}
			at = max_window(p, dt, xc, ps, H, W, oh, ow);
			if (at < 0) /* only padding: float's -inf */
				((float *)y)[o] = -INFINITY;
			else
				memcpy((uint8_t *)y + (size_t)o * esz,
				       xc + (size_t)(at * ps) * esz, esz);
			/* Indices count in the flattened input, rows or
			 * columns first. */
			if (indices)
				indices[o] = c * H * W + (at < 0 ? 0 :
					col_major ? rt_mod(at, W) * H +
					rt_div(at, W) : at);
		}
	}
}

void rt_pool2d(rt_pool_kind k, const rt_conv *p, const int64_t *pads_end,
	       int dt, const void *x, const rt_shape *xs, void *y,
	       const rt_shape *ys, int64_t *indices, int col_major)
{
	pool2d(k, p, pads_end, dt, x, xs, y, ys, indices, col_major, 0);
}

void rt_pool2d_nhwc(rt_pool_kind k, const rt_conv *p, const int64_t *pads_end,
		    int dt, const void *x, const rt_shape *xs, void *y,
		    const rt_shape *ys, int64_t *indices, int col_major)
{
	pool2d(k, p, pads_end, dt, x, xs, y, ys, NULL, 0, 1);
}

/* Each channel's plane is contiguous: its values in order, as
 * kernels_reduce.c's odometer would visit them over the trailing axes.
 * The mean is a compensated float sum (Neumaier's: the rounding error
 * of every addition carried beside it), within an ulp or two of the
 * exact sum as rt_reduce_apply's RT_R_MEAN in double, without double
 * arithmetic (soft-float code on a Cortex-M4F); onnxruntime and TFLite
 * Micro sum in plain float.  The maximum is exact in float, NaN winning
 * as there. */
/* One plane of hw values, stride apart. */
static float global_plane(int is_max, const float *x, int64_t hw,
			  int64_t stride)
{
	if (is_max) {
		float m = -INFINITY;
		for (int64_t k = 0; k < hw; k++) {
			float v = x[k * stride];
			m = v > m || v != v ? v : m;
		}
		return m;
	}
	float s = 0.0f, err = 0.0f;
	for (int64_t k = 0; k < hw; k++) {
		float v = x[k * stride], t = s + v;
		err += fabsf(s) >= fabsf(v) ? (s - t) + v : (v - t) + s;
		s = t;
	}
	return (s + err) / rt_i64_to_f32(hw);
}

void rt_global_pool(int is_max, const float *x, const rt_shape *xs, float *y)
{
	int64_t nc = xs->d[0] * xs->d[1], hw = 1;
	for (int i = 2; i < xs->rank; i++)
		hw *= xs->d[i];
	for (int64_t o = 0; o < nc; o++, x += hw)
		y[o] = global_plane(is_max, x, hw, 1);
}

/* [N, spatial..., C]: channel c's plane starts at c, its values C apart;
 * the same sum in the same order, so both layouts give the same bits. */
void rt_global_pool_nhwc(int is_max, const float *x, const rt_shape *xs,
			 float *y)
{
	int64_t N = xs->d[0], C = xs->d[xs->rank - 1], hw = 1;
	for (int i = 1; i < xs->rank - 1; i++)
		hw *= xs->d[i];
	for (int64_t n = 0; n < N; n++)
		for (int64_t c = 0; c < C; c++)
			y[n * C + c] = global_plane(is_max, x + n * hw * C + c,
						    hw, C);
}

/* y = x / (bias + alpha / size * sum of squares over nearby channels)^beta */
void rt_lrn(int64_t size, float alpha, float beta, float bias,
	    const float *x, const rt_shape *xs, float *y)
{
	int64_t N = xs->d[0], C = xs->d[1], hw = 1;
	int64_t before = (size - 1) / 2, after = size - 1 - before;

	for (int i = 2; i < xs->rank; i++)
		hw *= xs->d[i];
	for (int64_t n = 0; n < N; n++)
	for (int64_t c = 0; c < C; c++)
	for (int64_t i = 0; i < hw; i++) {
		float sq = 0.0f;
		for (int64_t cc = max64(0, c - before);
		     cc <= min64(C - 1, c + after); cc++) {
			float v = x[(n * C + cc) * hw + i];
			sq += v * v;
		}
		y[(n * C + c) * hw + i] = x[(n * C + c) * hw + i] /
			powf(bias + alpha / (float)size * sq, beta);
	}
}
