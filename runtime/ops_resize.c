/*
 * ops_resize.c — Resize (opsets 10 to 19) and Upsample: the mode, the
 * coordinate transformation and each axis's scale.
 *
 * Upsample and Resize-10 take (X, scales) and map coordinates
 * asymmetrically with floor rounding; from Resize-11 the inputs are
 * (X, roi, scales, sizes).  Given sizes, an axis's scale is the plan's
 * output size over the input size, unless keep_aspect_ratio_policy makes
 * one scale for every listed axis.
 */
#include <math.h>
#include <string.h>

#include "ops.h"

/* The index of name in names (n of them), or -1. */
static int lookup(const char *name, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

/* Per-axis values of input j (n of them, for the listed axes) into v. */
static int per_axis(Ctx *c, int j, const int *axes, int nax, double *v,
		    double *w, int *given)
{
	rt_arr a;
	int64_t n;
	if (ctx_arg(c, j, 0, &a))
		return -1;
	n = a.p ? rt_numel(&a.s) : 0;
	*given = n > 0;
	if (!*given)
		return 0;
	if (n != nax && n != 2 * nax)
		return ctx_fail(c, ART_E_INPUT_VALUES_AXES, ART_I(j),
				ART_I((long long)n), ART_I(nax));
	for (int k = 0; k < nax; k++) {
		v[axes[k]] = rt_get_f(a.dt, a.p, k);
		if (w && n == 2 * nax)
			w[axes[k]] = rt_get_f(a.dt, a.p, nax + k);
	}
	return 0;
}

int op_resize(Ctx *c)
{
	static const char *const coords[] = {"half_pixel", "asymmetric",
		"align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn",
		"tf_crop_and_resize"};
	static const char *const nearests[] = {"round_prefer_floor",
		"round_prefer_ceil", "floor", "ceil"};
	static const char *const modes[] = {"nearest", "linear", "cubic"};
	static const char *const policies[] = {"stretch", "not_larger",
		"not_smaller"};
	const float *x;
	float *y;
	rt_shape xs, ys;
	rt_resize r;
	art_attr sa;
	int64_t ax[ART_MAX_RANK];
	int axes[ART_MAX_RANK], nax, old = c->s->ninputs <= 2 ||
		!strcmp(c->s->op, "Upsample");
	int gscale, given, mode, coord, nearest, policy, has_axes;
	double sizes[ART_MAX_RANK];

	if (ctx_fin(c, 0, 1, &x, &xs) || ctx_fout(c, 0, &y, &ys) ||
	    ctx_attr_ints(c, "axes", ax, ART_MAX_RANK, &nax))
		return -1;
	/* Looked up as ints and checked before the casts: an enum may be
	 * unsigned or 8 bits wide (arm-none-eabi-gcc's short enums), where
	 * a stored -1 never compares below zero. */
	mode = lookup(ctx_attr_str(c, "mode", "nearest"), modes, 3);
	coord = lookup(ctx_attr_str(c, "coordinate_transformation_mode",
				    old ? "asymmetric" : "half_pixel"),
		       coords, 6);
	nearest = lookup(ctx_attr_str(c, "nearest_mode",
				      old ? "floor" : "round_prefer_floor"),
			 nearests, 4);
	policy = lookup(ctx_attr_str(c, "keep_aspect_ratio_policy", "stretch"),
			policies, 3);
	if (mode < 0 || coord < 0 || nearest < 0 || policy < 0)
		return ctx_fail(c,
		    ART_E_UNKNOWN_MODE_COORDINATE_TRANSFORMATION);
	r.mode = (rt_resize_mode)mode;
	r.coord = (rt_coord)coord;
	r.nearest = (rt_nearest)nearest;
	if (ctx_attr_int(c, "antialias", 0))
		return ctx_fail(c, ART_E_ANTIALIASING_SUPPORTED);
	r.cubic_a = ctx_attr_num(c, "cubic_coeff_a", -0.75);
	r.exclude_outside = (int)ctx_attr_int(c, "exclude_outside", 0);
	r.extrapolation = (float)ctx_attr_num(c, "extrapolation_value", 0);
	if (xs.rank != ys.rank)
		return ctx_fail(c, ART_E_INPUT_OUTPUT_RANKS_DIFFER);
	for (int i = 0; i < xs.rank; i++) {
		r.scale[i] = 1;
		r.roi[i] = 0, r.roi[ART_MAX_RANK + i] = 1;
		sizes[i] = (double)ys.d[i];
	}
	has_axes = nax >= 0;
	if (!has_axes)
		nax = xs.rank;
	for (int k = 0; k < nax; k++)
		if (ctx_axis(c, has_axes ? ax[k] : k, xs.rank, &axes[k]))
			return -1;
	/* Upsample-7 keeps its scales in an attribute. */
	if (old && ctx_attr(c, "scales", &sa)) {
		const art_attr *a = &sa;
		if (a->type != ART_ATTR_FLOATS || a->count != xs.rank)
			return ctx_fail(c, ART_E_SCALES_WANTS_FLOATS,
			    ART_I(xs.rank));
		for (int i = 0; i < xs.rank; i++)
			r.scale[i] = a->floats[i];
		gscale = 1;
	} else if (per_axis(c, old ? 1 : 2, axes, nax, r.scale, NULL,
			    &gscale)) {
		return -1;
	}
	if (!old && (per_axis(c, 1, axes, nax, r.roi, r.roi + ART_MAX_RANK,
			      &given) ||
		     per_axis(c, 3, axes, nax, sizes, NULL, &given)))
		return -1;
	if (!gscale) {
		/* From sizes: the plan's output over the input. */
		double keep = policy == 1 ? INFINITY : 0;
		for (int k = 0; k < nax; k++) {
			int a = axes[k];
			double s = xs.d[a] ? sizes[a] / (double)xs.d[a] : 1;
			r.scale[a] = s;
			keep = policy == 1 ? fmin(keep, s) : fmax(keep, s);
		}
		for (int k = 0; policy > 0 && k < nax; k++)
			r.scale[axes[k]] = keep;
	}
	for (int i = 0; i < xs.rank; i++)
		if (!(r.scale[i] > 0))
			return ctx_fail(c, ART_E_SCALE_AXIS, ART_G(r.scale[i]),
			    ART_I(i));
	rt_resize_apply(&r, x, &xs, y, &ys);
	return 0;
}
