/*
 * kernels_resize.c — Resize (and Upsample) in nearest, linear and cubic
 * modes over any number of axes, float32.
 *
 * Resize is separable: along each axis an output coordinate maps back to
 * a source coordinate (the coordinate transformation mode) and reads a
 * few source positions with weights, its taps: one for nearest, two for
 * linear, four for cubic, as in the spec's reference implementation
 * (positions past the ends repeat the edge value, or with exclude_outside
 * drop out and the other weights are renormalised).  An output value is
 * the sum over every combination of one tap per axis of the product of
 * their weights times the source value.  Taps of weight 0 are dropped, so
 * the axes a 2-D resize leaves alone cost nothing.
 */
#include <math.h>

#include "kernels.h"

typedef struct Taps {
	int n;
	int64_t idx[4];
	double w[4];
} Taps;

/*
 * The source coordinate of output coordinate o along axis.  The resized
 * length is the scale times the input length, fractional when the scale
 * was given, as the spec's reference implementation has it.
 */
static double source(const rt_resize *r, int axis, int64_t o, int64_t in)
{
	double s = r->scale[axis], x = (double)o, out = s * (double)in;
	double a = r->roi[axis], b = r->roi[ART_MAX_RANK + axis];

	switch (r->coord) {
	case RT_COORD_ASYMMETRIC:
		return x / s;
	case RT_COORD_ALIGN_CORNERS:
		return out == 1 ? 0 : x * (double)(in - 1) / (out - 1);
	case RT_COORD_PYTORCH_HALF_PIXEL:
		return out > 1 ? (x + 0.5) / s - 0.5 : 0;
	case RT_COORD_TF_HALF_PIXEL_FOR_NN:
		return (x + 0.5) / s;
	case RT_COORD_TF_CROP_AND_RESIZE:
		return out > 1 ? a * (double)(in - 1) + x * (b - a) *
				 (double)(in - 1) / (out - 1) :
			0.5 * (a + b) * (double)(in - 1);
	case RT_COORD_HALF_PIXEL:
		break;
	}
	return (x + 0.5) / s - 0.5;
}

static int64_t nearest(rt_nearest mode, double v)
{
	switch (mode) {
	case RT_NEAREST_FLOOR: return (int64_t)floor(v);
	case RT_NEAREST_CEIL: return (int64_t)ceil(v);
	case RT_NEAREST_ROUND_PREFER_CEIL: return (int64_t)floor(v + 0.5);
	case RT_NEAREST_ROUND_PREFER_FLOOR: break;
	}
	return v == floor(v) + 0.5 ? (int64_t)floor(v) : (int64_t)floor(v + 0.5);
}

/* The spec's cubic convolution weights for the four positions around a
 * coordinate whose distance past the left one is t, in (0, 1]. */
static void cubic(double A, double t, double *w)
{
	double u = 1 - t;
	w[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
	w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
	w[2] = ((A + 2) * u - (A + 3)) * u * u + 1;
	w[3] = ((A * (u + 1) - 5 * A) * (u + 1) + 8 * A) * (u + 1) - 4 * A;
}

/* Axis taps of output coordinate o; 0 when tf_crop_and_resize falls
 * outside the input (the extrapolation value). */
static int taps(const rt_resize *r, int axis, int64_t o, int64_t in,
		Taps *t)
{
	double x = source(r, axis, o, in), w[4], sum = 0;
	/* t in (0, 1]: an exact position counts as the right end. */
	double frac = x == floor(x) ? 1 : x - floor(x);
	int n = r->mode == RT_RESIZE_LINEAR ? 2 : 4;
	int64_t first = (int64_t)ceil(x) - n / 2;

	if (r->coord == RT_COORD_TF_CROP_AND_RESIZE &&
	    (x < 0 || x > (double)(in - 1)))
		return 0;
	t->n = 0;
	if (r->mode == RT_RESIZE_NEAREST) {
		int64_t i = nearest(r->nearest, x);
		t->n = 1;
		t->idx[0] = i < 0 ? 0 : i >= in ? in - 1 : i;
		t->w[0] = 1;
		return 1;
	}
	if (n == 2)
		w[0] = 1 - frac, w[1] = frac;
	else
		cubic(r->cubic_a, frac, w);
	for (int k = 0; k < n; k++) {
		int64_t i = first + k;
		if (r->exclude_outside && (i < 0 || i >= in))
			w[k] = 0;
		sum += w[k];
	}
	for (int k = 0; k < n; k++) {
		int64_t i = first + k;
		if (w[k] == 0)
			continue;
		t->idx[t->n] = i < 0 ? 0 : i >= in ? in - 1 : i;
		t->w[t->n++] = r->exclude_outside ? w[k] / sum : w[k];
	}
	return 1;
}

void rt_resize_apply(const rt_resize *r, const float *x, const rt_shape *xs,
		     float *y, const rt_shape *ys)
{
	int64_t idx[ART_MAX_RANK] = {0}, xst[ART_MAX_RANK], s = 1;
	int64_t n = rt_numel(ys);
	int rank = xs->rank;

	for (int i = rank - 1; i >= 0; i--)
		xst[i] = s, s *= xs->d[i];
	for (int64_t k = 0; k < n; k++) {
		Taps t[ART_MAX_RANK];
		int pick[ART_MAX_RANK] = {0}, inside = 1;
		double v = 0;

		for (int i = 0; i < rank && inside; i++)
			inside = taps(r, i, idx[i], xs->d[i], &t[i]);
		/* Every combination of one tap per axis. */
		while (inside) {
			double w = 1;
			int64_t src = 0;
			int i;
			for (i = 0; i < rank; i++) {
				w *= t[i].w[pick[i]];
				src += t[i].idx[pick[i]] * xst[i];
			}
			v += w * x[src];
			for (i = rank - 1; i >= 0 && ++pick[i] == t[i].n; i--)
				pick[i] = 0;
			if (i < 0)
				break;
		}
		y[k] = inside ? (float)v : r->extrapolation;
		for (int i = rank - 1; i >= 0 && ++idx[i] == ys->d[i]; i--)
			idx[i] = 0;
	}
}
