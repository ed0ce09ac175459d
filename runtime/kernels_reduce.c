/*
 * kernels_reduce.c — reductions over any set of axes (Reduce*,
 * MeanVarianceNormalization), ArgMax / ArgMin and CumSum.
 *
 * A reduction splits x's axes into kept and reduced ones and walks two
 * odometers: the outer one over the kept axes gives each output element's
 * first input, the inner one the offsets of the values it reduces.  No
 * partial result is stored anywhere but in locals, so there is no
 * workspace, and output elements come out in order whether or not the
 * reduced axes are kept as size-1 dims.  Values accumulate in double
 * (kernels_dtype.c): exact for every integer up to 2^53.
 */
#include <math.h>

#include "kernels.h"

/* Dims and element strides of one group of axes (kept or reduced). */
typedef struct Axes {
	int n;
	int64_t d[ART_MAX_RANK], st[ART_MAX_RANK];
	int64_t count;              /* product of d */
} Axes;

static void split_axes(const rt_shape *xs, unsigned mask, Axes *kept,
		       Axes *red)
{
	int64_t s = 1, str[ART_MAX_RANK];
	for (int i = xs->rank - 1; i >= 0; i--)
		str[i] = s, s *= xs->d[i];
	kept->n = red->n = 0;
	kept->count = red->count = 1;
	for (int i = 0; i < xs->rank; i++) {
		Axes *a = mask >> i & 1 ? red : kept;
		a->d[a->n] = xs->d[i];
		a->st[a->n++] = str[i];
		a->count *= xs->d[i];
	}
}

/* The input offset of the k-th combination of a's axes (row-major). */
static int64_t offset_of(const Axes *a, int64_t k)
{
	int64_t off = 0;
	for (int i = a->n - 1; i >= 0; i--) {
		off += k % a->d[i] * a->st[i];
		k /= a->d[i];
	}
	return off;
}

static double reduce_one(rt_reduce op, const rt_arr *x, int64_t base,
			 const Axes *red)
{
	double acc, mx = -INFINITY;
	switch (op) {
	case RT_R_MAX: acc = -INFINITY; break;
	case RT_R_MIN: acc = INFINITY; break;
	case RT_R_PROD: acc = 1; break;
	default: acc = 0; break;
	}
	if (op == RT_R_LOGSUMEXP)
		for (int64_t k = 0; k < red->count; k++)
			mx = fmax(mx, rt_get_f(x->dt, x->p,
					       base + offset_of(red, k)));
	if (mx == -INFINITY)        /* nothing, or every value -inf */
		mx = 0;
	for (int64_t k = 0; k < red->count; k++) {
		double v = rt_get_f(x->dt, x->p, base + offset_of(red, k));
		switch (op) {
		case RT_R_MAX: acc = v > acc || v != v ? v : acc; break;
		case RT_R_MIN: acc = v < acc || v != v ? v : acc; break;
		case RT_R_PROD: acc *= v; break;
		case RT_R_L1: acc += fabs(v); break;
		case RT_R_L2: case RT_R_SUMSQUARE: acc += v * v; break;
		case RT_R_LOGSUMEXP: acc += exp(v - mx); break;
		default: acc += v; break;
		}
	}
	switch (op) {
	case RT_R_MEAN: return acc / (double)red->count;
	case RT_R_L2: return sqrt(acc);
	case RT_R_LOGSUM: return log(acc);
	case RT_R_LOGSUMEXP: return log(acc) + mx;
	default: return acc;
	}
}

void rt_reduce_apply(rt_reduce op, const rt_arr *x, unsigned axes,
		     rt_arr *y)
{
	Axes kept, red;
	split_axes(&x->s, axes, &kept, &red);
	for (int64_t o = 0; o < kept.count; o++)
		rt_set_f(y->dt, y->p, o,
			 reduce_one(op, x, offset_of(&kept, o), &red));
}

void rt_mvn(const float *x, const rt_shape *xs, unsigned axes, float *y)
{
	Axes kept, red;
	split_axes(xs, axes, &kept, &red);
	for (int64_t o = 0; o < kept.count; o++) {
		int64_t base = offset_of(&kept, o);
		double mean = 0, sq = 0, sd;
		for (int64_t k = 0; k < red.count; k++) {
			double v = x[base + offset_of(&red, k)];
			mean += v, sq += v * v;
		}
		mean /= (double)red.count, sq /= (double)red.count;
		/* The function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) +
		 * 1e-9). */
		sd = sqrt(fmax(sq - mean * mean, 0)) + 1e-9;
		for (int64_t k = 0; k < red.count; k++) {
			int64_t i = base + offset_of(&red, k);
			y[i] = (float)((x[i] - mean) / sd);
		}
	}
}

/* x as [outer, n, inner] around axis. */
static void around(const rt_shape *s, int axis, int64_t *outer, int64_t *n,
		   int64_t *inner)
{
	*outer = *inner = 1;
	for (int i = 0; i < axis; i++)
		*outer *= s->d[i];
	for (int i = axis + 1; i < s->rank; i++)
		*inner *= s->d[i];
	*n = s->d[axis];
}

void rt_argreduce(int is_max, int last, const rt_arr *x, int axis,
		  rt_arr *y)
{
	int64_t outer, n, inner;
	around(&x->s, axis, &outer, &n, &inner);
	for (int64_t o = 0; o < outer; o++)
	for (int64_t in = 0; in < inner; in++) {
		int64_t base = o * n * inner + in, arg = 0;
		double best = rt_get_f(x->dt, x->p, base);
		for (int64_t i = 1; i < n; i++) {
			double v = rt_get_f(x->dt, x->p, base + i * inner);
			int better = is_max ? v > best : v < best;
			if (better || (last && v == best))
				best = v, arg = i;
		}
		rt_set_i(y->dt, y->p, o * inner + in, arg);
	}
}

void rt_cumsum(const rt_arr *x, int axis, int exclusive, int reverse,
	       rt_arr *y)
{
	int64_t outer, n, inner;
	int fl = rt_is_float(x->dt);
	around(&x->s, axis, &outer, &n, &inner);
	for (int64_t o = 0; o < outer; o++)
	for (int64_t in = 0; in < inner; in++) {
		double fs = 0;
		int64_t is = 0;
		for (int64_t j = 0; j < n; j++) {
			int64_t i = o * n * inner + in +
				    (reverse ? n - 1 - j : j) * inner;
			/* Read x[i] before y[i] (maybe the same) is written. */
			double fv = fl ? rt_get_f(x->dt, x->p, i) : 0;
			int64_t iv = fl ? 0 : rt_get_i(x->dt, x->p, i);
			if (!exclusive)
				fs += fv, is = (int64_t)((uint64_t)is + (uint64_t)iv);
			if (fl)
				rt_set_f(y->dt, y->p, i, fs);
			else
				rt_set_i(y->dt, y->p, i, is);
			if (exclusive)
				fs += fv, is = (int64_t)((uint64_t)is + (uint64_t)iv);
		}
	}
}
