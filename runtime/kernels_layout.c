/*
 * kernels_layout.c — kernels that move elements without arithmetic, for
 * every element type: concat / split slabs, transpose, slice, tile, pad,
 * trilu, reverse sequence.
 *
 * Transpose and Slice are one algorithm: each output element reads x at
 * an affine function of its index (a strided view of x), walked with an
 * odometer over the outer axes and a strided run along the last one.
 * Elements are copied as whole units of 1, 2, 4 or 8 bytes.
 */
#include <string.h>

#include "kernels.h"

void rt_copy_slab(const void *x, int64_t xaxis, int64_t xat, void *y,
		  int64_t yaxis, int64_t yat, int64_t len, int64_t outer,
		  int64_t inner, size_t es)
{
	size_t row = (size_t)(len * inner) * es;
	for (int64_t o = 0; o < outer; o++)
		memcpy((char *)y + (size_t)((o * yaxis + yat) * inner) * es,
		       (const char *)x + (size_t)((o * xaxis + xat) * inner) * es,
		       row);
}

/* n elements of es bytes, y contiguous, x every xs elements. */
static void copy_run(char *y, const char *x, int64_t xs, int64_t n,
		     size_t es)
{
	switch (es) {
	case 1:
		for (int64_t i = 0; i < n; i++)
			y[i] = x[i * xs];
		break;
	case 2:
		for (int64_t i = 0; i < n; i++)
			memcpy(y + 2 * i, x + 2 * i * xs, 2);
		break;
	case 4:
		for (int64_t i = 0; i < n; i++)
			memcpy(y + 4 * i, x + 4 * i * xs, 4);
		break;
	default:
		for (int64_t i = 0; i < n; i++)
			memcpy(y + (int64_t)es * i, x + (int64_t)es * i * xs,
			       es);
		break;
	}
}

/* y[idx] = x[base + sum idx[i] * st[i]] over y's shape. */
static void strided_copy(const void *x, int64_t base, const int64_t *st,
			 rt_arr *y)
{
	const rt_shape *ys = &y->s;
	size_t es = art_dtype_size(y->dt);
	int64_t idx[ART_MAX_RANK] = {0}, n, outer = 1, k = 0;
	int r = ys->rank;

	if (rt_numel(ys) == 0)
		return;
	if (r == 0) {
		memcpy(y->p, (const char *)x + base * (int64_t)es, es);
		return;
	}
	n = ys->d[r - 1];
	for (int i = 0; i < r - 1; i++)
		outer *= ys->d[i];
	for (int64_t o = 0; o < outer; o++, k += n) {
		int64_t src = base;
		for (int i = 0; i < r - 1; i++)
			src += idx[i] * st[i];
		copy_run((char *)y->p + k * (int64_t)es,
			 (const char *)x + src * (int64_t)es, st[r - 1], n, es);
		for (int i = r - 2; i >= 0 && ++idx[i] == ys->d[i]; i--)
			idx[i] = 0;
	}
}

/* Element strides of a row-major shape. */
static void strides(const rt_shape *s, int64_t *st)
{
	int64_t k = 1;
	for (int i = s->rank - 1; i >= 0; i--)
		st[i] = k, k *= s->d[i];
}

void rt_transpose(const rt_arr *x, const int64_t *perm, rt_arr *y)
{
	int64_t xst[ART_MAX_RANK], st[ART_MAX_RANK];
	strides(&x->s, xst);
	for (int i = 0; i < x->s.rank; i++)
		st[i] = xst[perm[i]];
	strided_copy(x->p, 0, st, y);
}

void rt_slice(const rt_arr *x, const int64_t *start, const int64_t *step,
	      rt_arr *y)
{
	int64_t xst[ART_MAX_RANK], st[ART_MAX_RANK], base = 0;
	strides(&x->s, xst);
	for (int i = 0; i < x->s.rank; i++) {
		base += start[i] * xst[i];
		st[i] = step[i] * xst[i];
	}
	strided_copy(x->p, base, st, y);
}

/* Advances idx over dims (last axis fastest); false after the last. */
static int next_index(int64_t *idx, const int64_t *dims, int rank)
{
	for (int i = rank - 1; i >= 0; i--) {
		if (++idx[i] < dims[i])
			return 1;
		idx[i] = 0;
	}
	return 0;
}

void rt_tile(const rt_arr *x, rt_arr *y)
{
	int64_t idx[ART_MAX_RANK] = {0}, xst[ART_MAX_RANK], k = 0;
	size_t es = art_dtype_size(y->dt);

	strides(&x->s, xst);
	if (rt_numel(&y->s) == 0)
		return;
	do {
		int64_t src = 0;
		for (int i = 0; i < x->s.rank; i++)
			src += idx[i] % x->s.d[i] * xst[i];
		memcpy((char *)y->p + k++ * (int64_t)es,
		       (const char *)x->p + src * (int64_t)es, es);
	} while (next_index(idx, y->s.d, y->s.rank));
}

/* Source index along one axis of a pad, or -1 for the constant. */
static int64_t pad_src(int64_t o, int64_t begin, int64_t in, rt_pad_mode mode)
{
	int64_t i = o - begin, period;
	if (i >= 0 && i < in)
		return i;
	if (mode == RT_PAD_CONSTANT || in == 0)
		return -1;
	if (mode == RT_PAD_EDGE)
		return i < 0 ? 0 : in - 1;
	if (mode == RT_PAD_WRAP)
		return (i % in + in) % in;
	/* reflect: mirror without repeating the edge, period 2 (in - 1) */
	if (in == 1)
		return 0;
	period = 2 * (in - 1);
	i %= period;
	if (i < 0)
		i += period;
	return i < in ? i : period - i;
}

void rt_pad(rt_pad_mode mode, const int64_t *pads, const void *value,
	    const rt_arr *x, rt_arr *y)
{
	int64_t idx[ART_MAX_RANK] = {0}, xst[ART_MAX_RANK], k = 0;
	size_t es = art_dtype_size(y->dt);
	int r = x->s.rank;

	strides(&x->s, xst);
	if (rt_numel(&y->s) == 0)
		return;
	do {
		int64_t src = 0;
		int inside = 1;
		for (int i = 0; i < r && inside; i++) {
			int64_t j = pad_src(idx[i], pads[i], x->s.d[i], mode);
			if (j < 0)
				inside = 0;
			src += j * xst[i];
		}
		memcpy((char *)y->p + k++ * (int64_t)es,
		       inside ? (const char *)x->p + src * (int64_t)es : value,
		       es);
	} while (next_index(idx, y->s.d, r));
}

void rt_trilu(const rt_arr *x, int64_t k, int upper, rt_arr *y)
{
	int r = x->s.rank;
	int64_t rows = x->s.d[r - 2], cols = x->s.d[r - 1];
	int64_t mats = rows > 0 && cols > 0 ? rt_numel(&x->s) / (rows * cols) : 0;
	size_t es = art_dtype_size(y->dt);

	for (int64_t m = 0; m < mats; m++)
	for (int64_t i = 0; i < rows; i++)
	for (int64_t j = 0; j < cols; j++) {
		int64_t e = (m * rows + i) * cols + j;
		int keep = upper ? j - i >= k : j - i <= k;
		if (keep)
			memmove((char *)y->p + e * (int64_t)es,
				(const char *)x->p + e * (int64_t)es, es);
		else
			memset((char *)y->p + e * (int64_t)es, 0, es);
	}
}

void rt_reverse_sequence(const rt_arr *x, int time_axis, const rt_arr *lens,
			 rt_arr *y)
{
	int64_t T = x->s.d[time_axis], B = x->s.d[1 - time_axis], inner = 1;
	size_t es = art_dtype_size(y->dt);
	for (int i = 2; i < x->s.rank; i++)
		inner *= x->s.d[i];
	for (int64_t b = 0; b < B; b++) {
		int64_t n = rt_get_i(lens->dt, lens->p, b);
		for (int64_t t = 0; t < T; t++) {
			int64_t from = t < n ? n - 1 - t : t;
			/* element strides: [T, B, ...] or [B, T, ...] */
			int64_t yo = time_axis ? b * T + t : t * B + b;
			int64_t xo = time_axis ? b * T + from : from * B + b;
			memcpy((char *)y->p + (size_t)(yo * inner) * es,
			       (const char *)x->p + (size_t)(xo * inner) * es,
			       (size_t)inner * es);
		}
	}
}
