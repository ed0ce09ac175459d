/*
 * shape_signal.c — shapes of the signal-processing ops of opset 17: DFT
 * (and its opset 20 form), STFT, the window generators (HannWindow,
 * HammingWindow, BlackmanWindow) and MelWeightMatrix.
 *
 * Their sizes come from scalar inputs (a window size, a DFT length, a
 * frame step).  Known at compile time they give exact shapes; known only
 * at run time, a bound where the other shapes imply one (an STFT cannot
 * have more frames than samples), else none (--bound).
 */
#include <stdlib.h>
#include <string.h>

#include "infer_ops.h"

/*
 * Scalar size input j: *v its value, AR_NO_BOUND when known only at run
 * time; *present false (and *v AR_NO_BOUND) when omitted.  A constant
 * below min fails.
 */
static int size_input(InferCtx *c, const ArNode *n, int j, int64_t min,
		      int64_t *v, bool *present)
{
	int64_t *vals, cnt;
	int rc;

	*v = AR_NO_BOUND;
	*present = ar_in(c, n, j) != NULL;
	if (!*present || ar_runtime_input(c, n, j))
		return AR_OK;
	if ((rc = ar_const_ints(c, n, j, &vals, &cnt)))
		return rc;
	if (cnt == 1)
		*v = vals[0];
	free(vals);
	if (cnt != 1 || *v < min)
		return ar_node_fail(c, n, "input %d must be one value of at "
				    "least %lld", j, (long long)min);
	return AR_OK;
}

/* The element type an output_datatype attribute names (default float). */
static int out_dtype(InferCtx *c, const ArNode *n, ArDType *dt)
{
	int64_t v = ar_attr_int(n, "output_datatype", AR_DT_FLOAT);
	if (v <= AR_DT_UNDEFINED || v >= AR_DT_COUNT || v == AR_DT_STRING)
		return ar_node_fail(c, n, "output_datatype %lld is not a "
				    "numeric type", (long long)v);
	*dt = (ArDType)v;
	return AR_OK;
}

/* HannWindow, HammingWindow, BlackmanWindow: [size]. */
int ar_shape_window(InferCtx *c, ArNode *n)
{
	ArDType dt = AR_DT_FLOAT;
	int64_t size;
	bool present;
	int rc;

	if ((rc = out_dtype(c, n, &dt)) ||
	    (rc = size_input(c, n, 0, 0, &size, &present)))
		return rc;
	if (!present)
		return ar_node_fail(c, n, "input 0 (size) is required");
	ar_set_shape(ar_out(c, n, 0), dt, 1, &size);
	if (size < 0)
		ar_bound_axis(ar_out(c, n, 0), 0, AR_NO_BOUND);
	return AR_OK;
}

/* MelWeightMatrix: [floor(dft_length / 2) + 1, num_mel_bins]. */
int ar_shape_melweight(InferCtx *c, ArNode *n)
{
	ArDType dt = AR_DT_FLOAT;
	int64_t bins, len, dims[2];
	bool p0, p1;
	int rc;

	if ((rc = out_dtype(c, n, &dt)) ||
	    (rc = size_input(c, n, 0, 0, &bins, &p0)) ||
	    (rc = size_input(c, n, 1, 1, &len, &p1)))
		return rc;
	if (!p0 || !p1)
		return ar_node_fail(c, n, "num_mel_bins and dft_length are "
				    "required");
	dims[0] = len < 0 ? len : len / 2 + 1;
	dims[1] = bins;
	ar_set_shape(ar_out(c, n, 0), dt, 2, dims);
	for (int i = 0; i < 2; i++)
		if (dims[i] < 0)
			ar_bound_axis(ar_out(c, n, 0), i, AR_NO_BOUND);
	return AR_OK;
}

/*
 * DFT: the transformed axis becomes the DFT length n (the axis's extent by
 * default; for an inverse one-sided one, 2 * (extent - 1)), or
 * floor(n / 2) + 1 for a forward one-sided one; the last axis holds the
 * real and imaginary parts (only the real part for an inverse one-sided
 * one).  The axis is an attribute (default 1) in opset 17, an input
 * (default -2) from 20.
 */
int ar_shape_dft(InferCtx *c, ArNode *n)
{
	ArTensor *x, *y = ar_out(c, n, 0);
	int64_t len, dims[AR_MAX_RANK], *av = NULL, na = -1, axis;
	bool present, one = ar_attr_int(n, "onesided", 0) != 0,
	     inv = ar_attr_int(n, "inverse", 0) != 0;
	int rc;

	if ((rc = ar_need(c, n, 0, &x)) ||
	    (rc = size_input(c, n, 1, 1, &len, &present)))
		return rc;
	if (n->opset >= 20 && (rc = ar_const_ints(c, n, 2, &av, &na)))
		return rc;
	axis = n->opset < 20 ? ar_attr_int(n, "axis", 1) : na == 1 ? av[0] : -2;
	free(av);
	/* The spec's range: [-r, -2] and [0, r - 2]. */
	if (axis < 0)
		axis += x->rank;
	if (x->rank < 2 || (x->dims[x->rank - 1] != 1 &&
			    x->dims[x->rank - 1] != 2) || na > 1 ||
	    axis < 0 || axis > x->rank - 2)
		return ar_node_fail(c, n, "needs an input [..., 1] (real) or "
				    "[..., 2] (complex) and one axis before "
				    "the last");
	if (!present)
		len = one && inv ? 2 * (x->dims[axis] - 1) : x->dims[axis];
	memcpy(dims, x->dims, sizeof dims);
	dims[axis] = len >= 0 && one && !inv ? len / 2 + 1 : len;
	dims[x->rank - 1] = one && inv ? 1 : 2;
	ar_set_shape(y, x->dtype, x->rank, dims);
	if (y)
		y->bounded = present ? x->bounded & ~AR_BIT(axis) : x->bounded;
	if (len < 0)
		ar_bound_axis(y, (int)axis, AR_NO_BOUND);
	return AR_OK;
}

/*
 * STFT(signal [B, L, 1|2], frame_step, window?, frame_length?) ->
 * [B, frames, bins, 2]: frames = (L - frame_length) / frame_step + 1,
 * bins = frame_length / 2 + 1 when one-sided (the default), else
 * frame_length.  The frame length is the window's when not given.
 */
int ar_shape_stft(InferCtx *c, ArNode *n)
{
	ArTensor *x, *w = ar_in(c, n, 2);
	int64_t step, fl, dims[4], hi;
	bool present, one = ar_attr_int(n, "onesided", 1) != 0;
	int rc;

	if ((rc = ar_need(c, n, 0, &x)) ||
	    (rc = size_input(c, n, 1, 1, &step, &present)) ||
	    (rc = size_input(c, n, 3, 1, &fl, &present)))
		return rc;
	if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2) ||
	    (w && w->rank != 1))
		return ar_node_fail(c, n, "needs a signal [batch, length, 1 or "
				    "2] and a 1-D window");
	if (w && fl >= 0 && fl != w->dims[0])
		return ar_node_fail(c, n, "frame_length %lld differs from the "
				    "window's %lld", (long long)fl,
				    (long long)w->dims[0]);
	if (w)
		fl = w->dims[0];
	else if (!present)
		return ar_node_fail(c, n, "needs a window or a frame_length");
	if (fl > x->dims[1])
		return ar_node_fail(c, n, "frame_length %lld is longer than the "
				    "signal (%lld)", (long long)fl,
				    (long long)x->dims[1]);
	/* Unknown frame length: at least 1, at most the signal. */
	hi = fl >= 0 ? fl : x->dims[1];
	dims[0] = x->dims[0];
	dims[1] = (x->dims[1] - (fl >= 0 ? fl : 1)) / (step > 0 ? step : 1) + 1;
	dims[2] = one ? hi / 2 + 1 : hi;
	dims[3] = 2;
	ar_set_shape(ar_out(c, n, 0), x->dtype, 4, dims);
	if (step < 0 || fl < 0)
		ar_bound_axis(ar_out(c, n, 0), 1, dims[1]);
	if (fl < 0)
		ar_bound_axis(ar_out(c, n, 0), 2, dims[2]);
	return AR_OK;
}
