/*
 * kernels_norm.c — normalisations (BatchNormalization in inference,
 * InstanceNormalization, LayerNormalization) and the softmax family.
 *
 * Every kernel reads all the values it needs for one row before it
 * writes any of that row, so each may run in place.  They compute in
 * float, as onnxruntime's float kernels do (its LayerNormalization
 * accumulates a float tensor's mean and variance in float:
 * core/providers/cpu/nn/layer_norm_impl.cc, ComputeJob's DoubleOrFloat),
 * so a Cortex-M4F needs no software double; the two exceptions are
 * named below.  Softmax runs along the middle axis of [outer, n, inner]: any
 * axis of any rank comes down to that view without moving data.
 */
#include <math.h>

#include "kernels.h"

void rt_batchnorm(const float *x, const rt_shape *xs, const float *scale,
		  const float *bias, const float *mean, const float *var,
		  float eps, float *y)
{
	int64_t N = xs->d[0], C = xs->rank > 1 ? xs->d[1] : 1, hw = 1;
	for (int i = 2; i < xs->rank; i++)
		hw *= xs->d[i];
	for (int64_t n = 0; n < N; n++)
	for (int64_t c = 0; c < C; c++) {
		float a = scale[c] / sqrtf(var[c] + eps);
		float b = bias[c] - mean[c] * a;
		const float *xc = x + (n * C + c) * hw;
		float *yc = y + (n * C + c) * hw;
		for (int64_t i = 0; i < hw; i++)
			yc[i] = xc[i] * a + b;
	}
}

void rt_batchnorm_train(const float *x, const rt_shape *xs,
			const float *scale, const float *bias,
			const float *mean, const float *var, float eps,
			float momentum, float *y, float *run_mean,
			float *run_var)
{
	int64_t N = xs->d[0], C = xs->rank > 1 ? xs->d[1] : 1, hw = 1;
	for (int i = 2; i < xs->rank; i++)
		hw *= xs->d[i];
	/* One channel at a time: its statistics, then its outputs.  Double
	 * here only: a training step's statistics run over N x H x W values
	 * and feed the running mean and variance kept across steps, where a
	 * float sum's rounding would accumulate (torch accumulates them in
	 * a wider type too, ATen's batch_norm_cpu_collect_stats). */
	for (int64_t c = 0; c < C; c++) {
		double s = 0, v = 0, m, inv;
		int64_t cnt = N * hw;
		for (int64_t n = 0; n < N; n++)
			for (int64_t i = 0; i < hw; i++)
				s += x[(n * C + c) * hw + i];
		m = cnt ? s / (double)cnt : 0;
		for (int64_t n = 0; n < N; n++)
			for (int64_t i = 0; i < hw; i++) {
				double d = x[(n * C + c) * hw + i] - m;
				v += d * d;
			}
		v = cnt ? v / (double)cnt : 0;
		inv = 1 / sqrt(v + eps);
		for (int64_t n = 0; n < N; n++)
			for (int64_t i = 0; i < hw; i++) {
				int64_t k = (n * C + c) * hw + i;
				y[k] = (float)((x[k] - m) * inv * scale[c] +
					       bias[c]);
			}
		if (run_mean)
			run_mean[c] = (float)(mean[c] * momentum +
					      m * (1 - momentum));
		if (run_var)
			run_var[c] = (float)(var[c] * momentum +
					     v * (1 - momentum));
	}
}

/* Mean and 1 / sqrt(variance + eps) of n values (population variance,
 * two passes). */
static void moments(const float *x, int64_t n, float eps, float *mean,
		    float *inv_std)
{
	float s = 0, v = 0;
	for (int64_t i = 0; i < n; i++)
		s += x[i];
	s = n ? s / (float)n : 0;
	for (int64_t i = 0; i < n; i++)
		v += (x[i] - s) * (x[i] - s);
	v = n ? v / (float)n : 0;
	*mean = s;
	*inv_std = 1 / sqrtf(v + eps);
}

void rt_instancenorm(const float *x, const rt_shape *xs, const float *scale,
		     const float *bias, float eps, float *y)
{
	int64_t C = xs->d[1], hw = 1;
	for (int i = 2; i < xs->rank; i++)
		hw *= xs->d[i];
	for (int64_t nc = 0; nc < xs->d[0] * C; nc++) {
		const float *xr = x + nc * hw;
		float *yr = y + nc * hw;
		float mean, inv;
		moments(xr, hw, eps, &mean, &inv);
		for (int64_t i = 0; i < hw; i++)
			yr[i] = (xr[i] - mean) * inv * scale[nc % C] +
				bias[nc % C];
	}
}

void rt_layernorm(const float *x, int64_t rows, int64_t n,
		  const float *scale, int64_t nscale, const float *bias,
		  int64_t nbias, float eps, float *y, float *mean,
		  float *inv_std)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = x + r * n;
		float *yr = y + r * n;
		float mu, inv;
		moments(xr, n, eps, &mu, &inv);
		for (int64_t i = 0; i < n; i++) {
			float v = (xr[i] - mu) * inv * scale[i % nscale];
			yr[i] = bias ? v + bias[i % nbias] : v;
		}
		if (mean)
			mean[r] = mu;
		if (inv_std)
			inv_std[r] = inv;
	}
}

void rt_softmax(rt_softmax_kind k, const float *x, int64_t outer, int64_t n,
		int64_t inner, float *y)
{
	for (int64_t o = 0; o < outer; o++)
	for (int64_t in = 0; in < inner; in++) {
		const float *xr = x + o * n * inner + in;
		float *yr = y + o * n * inner + in;
		/* Double, rounded once at the end: the value the spec
		 * evaluation of tests/e2e_dynquant.py computes.  In float
		 * an output is an ulp off at times, and YOLOv8n quantises
		 * its softmax again (a DynamicQuantizeLinear), which turns
		 * the ulp into a whole step: 0.13 of 637 at its output. */
		double mx = -INFINITY, sum = 0;
		int64_t arg = 0;
		for (int64_t i = 0; i < n; i++)
			if (xr[i * inner] > mx)
				mx = xr[i * inner], arg = i;
		if (k == RT_HARDMAX) {
			/* the first of equal maxima */
			for (int64_t i = 0; i < n; i++)
				yr[i * inner] = i == arg ? 1.0f : 0.0f;
			continue;
		}
		for (int64_t i = 0; i < n; i++)
			sum += exp(xr[i * inner] - mx);
		for (int64_t i = 0; i < n; i++)
			yr[i * inner] = (float)(k == RT_SOFTMAX ?
				exp(xr[i * inner] - mx) / sum :
				xr[i * inner] - mx - log(sum));
	}
}
