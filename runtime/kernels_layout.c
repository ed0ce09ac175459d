/*
 * kernels_layout.c — kernels that move values without arithmetic:
 * concat slices, transpose, nearest resize, pad.
 *
 * The general ones walk the output with an index odometer and compute each
 * source index, which is slow but obviously right; none of these ops is
 * where a CNN spends its time.
 */
#include <math.h>
#include <string.h>

#include "kernels.h"

void rt_concat_part(const float *x, int64_t xaxis, float *y, int64_t yaxis,
		    int64_t at, int64_t outer, int64_t inner)
{
	size_t row = (size_t)(xaxis * inner) * sizeof *x;
	for (int64_t o = 0; o < outer; o++)
		memcpy(y + (o * yaxis + at) * inner, x + o * xaxis * inner,
		       row);
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

void rt_transpose(const float *x, const rt_shape *xs, const int64_t *perm,
		  float *y)
{
	int64_t ydims[ART_MAX_RANK], stride[ART_MAX_RANK], xstr[ART_MAX_RANK];
	int64_t idx[ART_MAX_RANK] = {0}, k = 0, s = 1;
	int r = xs->rank;

	for (int i = r - 1; i >= 0; i--)
		xstr[i] = s, s *= xs->d[i];
	for (int i = 0; i < r; i++)
		ydims[i] = xs->d[perm[i]], stride[i] = xstr[perm[i]];
	if (rt_numel(xs) == 0)
		return;
	do {
		int64_t src = 0;
		for (int i = 0; i < r; i++)
			src += idx[i] * stride[i];
		y[k++] = x[src];
	} while (next_index(idx, ydims, r));
}

/* The input coordinate of output coordinate o along one axis. */
static int64_t nearest_src(int64_t o, int64_t in, int64_t out, float scale,
			   rt_coord coord, rt_nearest mode)
{
	double v;
	int64_t i;

	switch (coord) {
	case RT_COORD_ASYMMETRIC:
		v = o / (double)scale;
		break;
	case RT_COORD_ALIGN_CORNERS:
		v = out > 1 ? o * (double)(in - 1) / (double)(out - 1) : 0;
		break;
	case RT_COORD_PYTORCH_HALF_PIXEL:
		v = out > 1 ? (o + 0.5) / scale - 0.5 : 0;
		break;
	default:
		v = (o + 0.5) / scale - 0.5;
		break;
	}
	switch (mode) {
	case RT_NEAREST_FLOOR: i = (int64_t)floor(v); break;
	case RT_NEAREST_CEIL: i = (int64_t)ceil(v); break;
	case RT_NEAREST_ROUND_PREFER_CEIL: i = (int64_t)floor(v + 0.5); break;
	default:
		/* Halves go down. */
		i = v == floor(v) + 0.5 ? (int64_t)floor(v) :
		    (int64_t)floor(v + 0.5);
		break;
	}
	return i < 0 ? 0 : i >= in ? in - 1 : i;
}

void rt_resize_nearest(const float *x, const rt_shape *xs,
		       const float *scales, rt_coord coord, rt_nearest mode,
		       float *y, const rt_shape *ys)
{
	int64_t idx[ART_MAX_RANK] = {0}, xstr[ART_MAX_RANK], s = 1, k = 0;
	int r = xs->rank;

	for (int i = r - 1; i >= 0; i--)
		xstr[i] = s, s *= xs->d[i];
	if (rt_numel(ys) == 0)
		return;
	do {
		int64_t src = 0;
		for (int i = 0; i < r; i++)
			src += xstr[i] * nearest_src(idx[i], xs->d[i], ys->d[i],
						     scales[i], coord, mode);
		y[k++] = x[src];
	} while (next_index(idx, ys->d, r));
}

/* Source index along one axis of a pad, or -1 for the constant. */
static int64_t pad_src(int64_t o, int64_t begin, int64_t in, rt_pad_mode mode)
{
	int64_t i = o - begin;
	if (i >= 0 && i < in)
		return i;
	if (mode == RT_PAD_CONSTANT || in == 0)
		return -1;
	if (mode == RT_PAD_EDGE)
		return i < 0 ? 0 : in - 1;
	/* reflect: mirror without repeating the edge, period 2 (in - 1) */
	if (in == 1)
		return 0;
	{
		int64_t period = 2 * (in - 1);
		i %= period;
		if (i < 0)
			i += period;
		return i < in ? i : period - i;
	}
}

void rt_pad(rt_pad_mode mode, const int64_t *pads, float value,
	    const float *x, const rt_shape *xs, float *y, const rt_shape *ys)
{
	int64_t idx[ART_MAX_RANK] = {0}, xstr[ART_MAX_RANK], s = 1, k = 0;
	int r = xs->rank;

	for (int i = r - 1; i >= 0; i--)
		xstr[i] = s, s *= xs->d[i];
	if (rt_numel(ys) == 0)
		return;
	do {
		int64_t src = 0;
		int inside = 1;
		for (int i = 0; i < r && inside; i++) {
			int64_t j = pad_src(idx[i], pads[i], xs->d[i], mode);
			if (j < 0)
				inside = 0;
			src += j * xstr[i];
		}
		y[k++] = inside ? x[src] : value;
	} while (next_index(idx, ys->d, r));
}
