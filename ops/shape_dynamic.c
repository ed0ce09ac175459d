/*
 * shape_dynamic.c — shapes of ops whose output size depends on the values
 * of their inputs: NonZero, NonMaxSuppression, Unique, Compress.
 *
 * arenac plans one static size per tensor, so such an output is planned for
 * its upper bound and marked bounded (infer_ops.h), as TFLite Micro and
 * XLA's bounded dynamic shapes do; the user can tighten the bound with
 * --bound.  Where the values are compile-time constants the size is
 * exact.
 */
#include "infer_ops.h"

/* Whether x's values are known and readable as numbers. */
static bool readable(const ArTensor *x)
{
	return x->data && (ar_dtype_is_int(x->dtype) ||
			   ar_dtype_is_float(x->dtype));
}

/* Non-zero elements among the first len of x (known values). */
static int64_t count_nonzero(const ArTensor *x, int64_t len)
{
	int64_t k = 0;
	for (int64_t i = 0; i < len; i++)
		k += ar_get_float(x, i) != 0;
	return k;
}

/*
 * Output 0 keeps x's other axes when same_rank (an axis given), so it
 * keeps their bounds; flattened, its one axis is marked anyway.
 */
static void keep_bounds(InferCtx *c, const ArNode *n, const ArTensor *x,
			bool same_rank)
{
	ArTensor *y = ar_out(c, n, 0);
	if (y && same_rank)
		y->bounded |= x->bounded;
}

/* NonZero: [rank, count], count at most the element count. */
int ar_shape_nonzero(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t dims[2];
	int rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	dims[0] = x->rank;
	dims[1] = ar_numel(x);
	if (readable(x) && !x->bounded) {
		dims[1] = count_nonzero(x, dims[1]);
		ar_set_shape(ar_out(c, n, 0), AR_DT_INT64, 2, dims);
		return AR_OK;
	}
	ar_set_shape(ar_out(c, n, 0), AR_DT_INT64, 2, dims);
	ar_bound_axis(ar_out(c, n, 0), 1, dims[1]);
	return AR_OK;
}

/*
 * NonMaxSuppression: [selected, 3] rows of (batch, class, box); at most
 * max_output_boxes_per_class boxes per batch and class, and never more
 * than the boxes there are.  An omitted maximum is 0: no output.
 */
int ar_shape_nms(InferCtx *c, ArNode *n)
{
	ArTensor *boxes, *scores, *m = ar_in(c, n, 2);
	int64_t per_class, rows[2] = {0, 3};
	int rc;

	if ((rc = ar_need(c, n, 0, &boxes)) || (rc = ar_need(c, n, 1, &scores)))
		return rc;
	if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 ||
	    scores->dims[0] != boxes->dims[0] ||
	    scores->dims[2] != boxes->dims[1])
		return ar_node_fail(c, n, "needs boxes [batches, boxes, 4] and "
				    "scores [batches, classes, boxes]");
	per_class = boxes->dims[1];
	if (m && m->data && ar_numel(m) == 1 && ar_dtype_is_int(m->dtype)) {
		int64_t v = ar_get_int(m, 0);
		per_class = v < 0 ? 0 : v < per_class ? v : per_class;
	} else if (!m) {
		per_class = 0;
	}
	if (!ar_mul64(boxes->dims[0], scores->dims[1], &rows[0]) ||
	    !ar_mul64(rows[0], per_class, &rows[0]))
		return ar_node_fail(c, n, "the bound on selected boxes "
				    "overflows");
	ar_set_shape(ar_out(c, n, 0), AR_DT_INT64, 2, rows);
	if (rows[0] > 0)
		ar_bound_axis(ar_out(c, n, 0), 0, rows[0]);
	return AR_OK;
}

/*
 * Unique(X) -> Y, indices, inverse_indices, counts.  Without an axis X is
 * flattened and Y holds at most every element; with one, Y keeps X's other
 * dims and at most X's slices along it.  inverse_indices has one entry
 * per element (or slice) of X: its size is static.
 */
int ar_shape_unique(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	const ArAttr *ax = ar_attr(n, "axis");
	int64_t dims[AR_MAX_RANK], len;
	int axis = 0, rank = 1, rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	if (ax) {
		if ((rc = ar_axis(c, n, ax->i, x->rank, &axis)))
			return rc;
		rank = x->rank;
		for (int i = 0; i < rank; i++)
			dims[i] = x->dims[i];
		len = x->dims[axis];
	} else {
		len = dims[0] = ar_numel(x);
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, rank, dims);
	keep_bounds(c, n, x, ax != NULL);
	ar_bound_axis(ar_out(c, n, 0), axis, len);
	for (int j = 1; j < 4; j++) {
		ar_set_shape(ar_out(c, n, j), AR_DT_INT64, 1, &len);
		if (j != 2)
			ar_bound_axis(ar_out(c, n, j), 0, len);
	}
	return AR_OK;
}

/*
 * Compress(input, condition): the slices along axis (or the elements of
 * the flattened input) whose condition is true; the condition may be
 * shorter than the axis, and slices past its end are dropped.
 */
int ar_shape_compress(InferCtx *c, ArNode *n)
{
	ArTensor *x, *cond;
	const ArAttr *ax = ar_attr(n, "axis");
	int64_t dims[AR_MAX_RANK], len;
	int axis = 0, rank = 1, rc;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &cond)))
		return rc;
	if (cond->rank != 1)
		return ar_node_fail(c, n, "condition must be 1-D, not rank %d",
				    cond->rank);
	if (ax) {
		if ((rc = ar_axis(c, n, ax->i, x->rank, &axis)))
			return rc;
		rank = x->rank;
		for (int i = 0; i < rank; i++)
			dims[i] = x->dims[i];
	} else {
		dims[0] = ar_numel(x);
	}
	len = cond->dims[0] < dims[axis] ? cond->dims[0] : dims[axis];
	if (readable(cond) && !cond->bounded && !x->bounded) {
		dims[axis] = count_nonzero(cond, len);
		ar_set_shape(ar_out(c, n, 0), x->dtype, rank, dims);
		return AR_OK;
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, rank, dims);
	keep_bounds(c, n, x, ax != NULL);
	ar_bound_axis(ar_out(c, n, 0), axis, len);
	return AR_OK;
}
