/*
 * kernels_math.c — elementwise, normalisation and matrix kernels.
 *
 * Broadcasting works on a coalesced shape: neighbouring axes on which both
 * operands broadcast the same way merge into one, so a per-channel Mul on
 * NCHW becomes a loop over channels around a contiguous inner loop.
 */
#include <math.h>
#include <string.h>

#include "kernels.h"

int64_t rt_numel(const rt_shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->rank; i++)
		n *= s->d[i];
	return n;
}

static float unary1(rt_unary op, float a, float b, float v)
{
	switch (op) {
	case RT_RELU: return v > 0.0f ? v : 0.0f;
	case RT_SIGMOID: return 1.0f / (1.0f + expf(-v));
	case RT_HARDSIGMOID: return fmaxf(0.0f, fminf(1.0f, a * v + b));
	case RT_HARDSWISH:
		return v * fmaxf(0.0f, fminf(1.0f, v / 6.0f + 0.5f));
	case RT_CLIP: return v < a ? a : v > b ? b : v;
	case RT_LEAKYRELU: return v >= 0.0f ? v : a * v;
	case RT_TANH: return tanhf(v);
	case RT_EXP: return expf(v);
	case RT_NEG: return -v;
	case RT_ABS: return fabsf(v);
	case RT_SQRT: return sqrtf(v);
	case RT_COPY: return v;
	}
	return v;
}

void rt_unary_apply(rt_unary op, float a, float b, const float *x, float *y,
		    int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = unary1(op, a, b, x[i]);
}

static float binary1(rt_binary op, float a, float b)
{
	switch (op) {
	case RT_ADD: return a + b;
	case RT_SUB: return a - b;
	case RT_MUL: return a * b;
	case RT_DIV: return a / b;
	case RT_MAX: return a > b ? a : b;
	case RT_MIN: return a < b ? a : b;
	}
	return a;
}

/* y[i] = a[i * sa] op b[i * sb]: the innermost loop of a broadcast. */
static void binary_row(rt_binary op, const float *a, int64_t sa,
		       const float *b, int64_t sb, float *y, int64_t n)
{
	if (sa == 1 && sb == 1) {
		for (int64_t i = 0; i < n; i++)
			y[i] = binary1(op, a[i], b[i]);
	} else if (sa == 1) {
		for (int64_t i = 0; i < n; i++)
			y[i] = binary1(op, a[i], b[0]);
	} else if (sb == 1) {
		for (int64_t i = 0; i < n; i++)
			y[i] = binary1(op, a[0], b[i]);
	} else {
		for (int64_t i = 0; i < n; i++)
			y[i] = binary1(op, a[0], b[0]);
	}
}

/*
 * Output dims with, per operand, 1 where the operand has the axis and 0
 * where it broadcasts; axes of equal pattern merge.  Returns the rank.
 */
static int coalesce(const rt_shape *as, const rt_shape *bs,
		    const rt_shape *ys, int64_t *dims, int *ha, int *hb)
{
	int r = 0;
	for (int i = 0; i < ys->rank; i++) {
		int ia = i - (ys->rank - as->rank), ib = i - (ys->rank - bs->rank);
		int fa = ia >= 0 && as->d[ia] != 1;
		int fb = ib >= 0 && bs->d[ib] != 1;
		if (ys->d[i] == 1)
			continue;
		if (r > 0 && ha[r - 1] == fa && hb[r - 1] == fb) {
			dims[r - 1] *= ys->d[i];
			continue;
		}
		dims[r] = ys->d[i], ha[r] = fa, hb[r] = fb;
		r++;
	}
	if (r == 0)
		dims[0] = 1, ha[0] = hb[0] = 0, r = 1;
	return r;
}

void rt_binary_apply(rt_binary op, const float *a, const rt_shape *as,
		     const float *b, const rt_shape *bs, float *y,
		     const rt_shape *ys)
{
	int64_t dims[ART_MAX_RANK], sa[ART_MAX_RANK], sb[ART_MAX_RANK];
	int64_t idx[ART_MAX_RANK] = {0}, n, outer = 1, ea = 1, eb = 1;
	int ha[ART_MAX_RANK], hb[ART_MAX_RANK];
	int r = coalesce(as, bs, ys, dims, ha, hb);

	/* Element strides of each operand on the coalesced axes. */
	for (int i = r - 1; i >= 0; i--) {
		sa[i] = ha[i] ? ea : 0;
		sb[i] = hb[i] ? eb : 0;
		ea *= ha[i] ? dims[i] : 1;
		eb *= hb[i] ? dims[i] : 1;
	}
	n = dims[r - 1];
	for (int i = 0; i < r - 1; i++)
		outer *= dims[i];
	for (int64_t o = 0; o < outer; o++) {
		int64_t oa = 0, ob = 0;
		for (int i = 0; i < r - 1; i++)
			oa += idx[i] * sa[i], ob += idx[i] * sb[i];
		binary_row(op, a + oa, sa[r - 1], b + ob, sb[r - 1],
			   y + o * n, n);
		for (int i = r - 2; i >= 0 && ++idx[i] == dims[i]; i--)
			idx[i] = 0;
	}
}

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

void rt_softmax(const float *x, int64_t rows, int64_t n, float *y)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = x + r * n;
		float *yr = y + r * n;
		float mx = -INFINITY, sum = 0.0f;
		for (int64_t i = 0; i < n; i++)
			mx = xr[i] > mx ? xr[i] : mx;
		for (int64_t i = 0; i < n; i++) {
			yr[i] = expf(xr[i] - mx);
			sum += yr[i];
		}
		for (int64_t i = 0; i < n; i++)
			yr[i] /= sum;
	}
}

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

void rt_matmul(const float *a, const rt_shape *as, const float *b,
	       const rt_shape *bs, float *y, const rt_shape *ys)
{
	/* 1-D operands are a row (a) or a column (b) vector. */
	int64_t m = as->rank >= 2 ? as->d[as->rank - 2] : 1;
	int64_t k = as->d[as->rank - 1];
	int64_t n = bs->rank >= 2 ? bs->d[bs->rank - 1] : 1;
	int br = ys->rank - (as->rank >= 2) - (bs->rank >= 2);
	int64_t idx[ART_MAX_RANK] = {0}, batches = 1;

	if (br < 0)
		br = 0;
	for (int i = 0; i < br; i++)
		batches *= ys->d[i];
	for (int64_t t = 0; t < batches; t++) {
		int64_t oa = 0, ob = 0;
		/* Batch offsets with numpy broadcasting of the batch dims. */
		for (int i = 0; i < br; i++) {
			int ia = i - (br - (as->rank - 2));
			int ib = i - (br - (bs->rank - 2));
			if (ia >= 0)
				oa = oa * as->d[ia] + (as->d[ia] == 1 ? 0 : idx[i]);
			if (ib >= 0)
				ob = ob * bs->d[ib] + (bs->d[ib] == 1 ? 0 : idx[i]);
		}
		rt_gemm(a + oa * m * k, b + ob * k * n, NULL, NULL,
			y + t * m * n, m, n, k, 0, 0, 1.0f, 0.0f);
		for (int i = br - 1; i >= 0 && ++idx[i] == ys->d[i]; i--)
			idx[i] = 0;
	}
}
