/*
 * shape_index.c — shapes of ops that address a tensor by index values:
 * GatherND, OneHot, TfIdfVectorizer (n-gram counts into a pool of index
 * slots).
 *
 * (Gather, GatherElements and the Scatter family keep their data's or
 * indices' shape: shape_tensor.c and ar_shape_unary.)
 */
#include <math.h>
#include <stdlib.h>

#include "infer_ops.h"

/*
 * GatherND(data [r dims], indices [q dims], batch_dims b): each index
 * tuple of k = indices' last dim picks a slice of data's dims past b + k:
 * indices.dims[:-1] + data.dims[b + k:].
 */
int ar_shape_gathernd(InferCtx *c, ArNode *n)
{
	ArTensor *x, *idx;
	int64_t dims[AR_MAX_RANK], b = ar_attr_int(n, "batch_dims", 0), k;
	int rank = 0, rc;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &idx)))
		return rc;
	k = idx->rank ? idx->dims[idx->rank - 1] : -1;
	if (x->rank < 1 || idx->rank < 1 || b < 0 || b >= x->rank ||
	    b >= idx->rank || k < 1 || k > x->rank - b ||
	    idx->rank - 1 + x->rank - b - k > AR_MAX_RANK)
		return ar_node_fail(c, n, "indices [..., %lld] do not fit data "
				    "of rank %d with batch_dims %lld",
				    (long long)k, x->rank, (long long)b);
	for (int i = 0; i < idx->rank - 1; i++)
		dims[rank++] = idx->dims[i];
	for (int64_t i = b + k; i < x->rank; i++)
		dims[rank++] = x->dims[i];
	ar_set_shape(ar_out(c, n, 0), x->dtype, rank, dims);
	return AR_OK;
}

/*
 * OneHot(indices, depth, values [off, on]): indices' shape with a new axis
 * of depth entries at axis (default -1, the last), of values' type.  A
 * depth known only at run time leaves that axis without a bound.
 */
int ar_shape_onehot(InferCtx *c, ArNode *n)
{
	ArTensor *idx, *depth, *vals;
	double *dv = NULL;
	int64_t dims[AR_MAX_RANK], cnt, d = AR_NO_BOUND;
	int axis, k = 0, rc;

	if ((rc = ar_need(c, n, 0, &idx)) || (rc = ar_need(c, n, 1, &depth)) ||
	    (rc = ar_need(c, n, 2, &vals)))
		return rc;
	if (idx->rank + 1 > AR_MAX_RANK || ar_numel(depth) != 1 ||
	    ar_numel(vals) != 2)
		return ar_node_fail(c, n, "needs one depth value, two values "
				    "and indices of rank below %d",
				    AR_MAX_RANK);
	if ((rc = ar_axis(c, n, ar_attr_int(n, "axis", -1), idx->rank + 1,
			  &axis)))
		return rc;
	if (!ar_runtime_input(c, n, 1)) {
		if ((rc = ar_const_floats(c, n, 1, &dv, &cnt)))
			return rc;
		/* The spec takes any numeric depth, as an integer. */
		d = dv[0] >= 1 && dv[0] < 9e18 ? (int64_t)floor(dv[0]) : -2;
		free(dv);
		if (d < 1)
			return ar_node_fail(c, n, "depth must be at least 1");
	}
	for (int i = 0; i <= idx->rank; i++)
		dims[i] = i == axis ? d : idx->dims[k++];
	ar_set_shape(ar_out(c, n, 0), vals->dtype, idx->rank + 1, dims);
	if (d < 0)
		ar_bound_axis(ar_out(c, n, 0), axis, AR_NO_BOUND);
	return AR_OK;
}

/*
 * TfIdfVectorizer(X [C] or [N, C]): one float per slot of the n-gram pool,
 * max(ngram_indexes) + 1 of them, per row.
 */
int ar_shape_tfidf(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	const ArAttr *a = ar_attr(n, "ngram_indexes");
	int64_t dims[2], slots = 0;
	int rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	if ((x->rank != 1 && x->rank != 2) || !a || a->type != AR_ATTR_INTS ||
	    !a->nints)
		return ar_node_fail(c, n, "needs a 1-D or 2-D input and "
				    "ngram_indexes");
	for (int i = 0; i < a->nints; i++) {
		if (a->ints[i] < 0 || a->ints[i] >= ((int64_t)1 << 40))
			return ar_node_fail(c, n, "ngram index %lld is invalid",
					    (long long)a->ints[i]);
		slots = a->ints[i] + 1 > slots ? a->ints[i] + 1 : slots;
	}
	dims[0] = x->dims[0];
	dims[x->rank - 1] = slots;
	ar_set_shape(ar_out(c, n, 0), AR_DT_FLOAT, x->rank, dims);
	return AR_OK;
}
