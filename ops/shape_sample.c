/*
 * shape_sample.c — shapes of ops that resample feature maps at computed
 * places: GridSample, RoiAlign, MaxUnpool.
 */
#include <stdlib.h>

#include "infer_ops.h"

/* GridSample(X [N, C, D...], grid [N, D_out..., r]) -> [N, C, D_out...]. */
int ar_shape_gridsample(InferCtx *c, ArNode *n)
{
	ArTensor *x, *grid;
	int64_t dims[AR_MAX_RANK];
	int r, rc;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &grid)))
		return rc;
	r = x->rank - 2;
	if (r < 1 || grid->rank != r + 2 || grid->dims[0] != x->dims[0] ||
	    grid->dims[r + 1] != r)
		return ar_node_fail(c, n, "needs X [N, C, D...] and grid "
				    "[N, D_out..., %d]", r > 0 ? r : 1);
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (int i = 0; i < r; i++)
		dims[2 + i] = grid->dims[1 + i];
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
	return AR_OK;
}

/* RoiAlign(X [N, C, H, W], rois [R, 4], batch_indices [R]) ->
 * [R, C, output_height, output_width]. */
int ar_shape_roialign(InferCtx *c, ArNode *n)
{
	ArTensor *x, *rois, *idx;
	int64_t dims[4];
	int rc;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &rois)) ||
	    (rc = ar_need(c, n, 2, &idx)))
		return rc;
	if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 ||
	    idx->rank != 1 || idx->dims[0] != rois->dims[0])
		return ar_node_fail(c, n, "needs X [N, C, H, W], rois [R, 4] "
				    "and batch_indices [R]");
	dims[0] = rois->dims[0];
	dims[1] = x->dims[1];
	dims[2] = ar_attr_int(n, "output_height", 1);
	dims[3] = ar_attr_int(n, "output_width", 1);
	if (dims[2] < 1 || dims[3] < 1)
		return ar_node_fail(c, n, "output_height and output_width must "
				    "be at least 1");
	ar_set_shape(ar_out(c, n, 0), x->dtype, 4, dims);
	return AR_OK;
}

/*
 * MaxUnpool(X [N, C, D...], I, output_shape?): output_shape when given,
 * else per spatial axis (d - 1) * stride - pad_begin - pad_end + kernel,
 * the size MaxPool came from.  An output_shape known only at run time
 * leaves the spatial axes without a bound.
 */
int ar_shape_maxunpool(InferCtx *c, ArNode *n)
{
	ArTensor *x, *idx;
	int64_t *k, *st, *pads, *os = NULL, nk, ns, np, nos = -1;
	int64_t dims[AR_MAX_RANK];
	int r, rc;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &idx)))
		return rc;
	r = x->rank - 2;
	ar_attr_ints(n, "kernel_shape", &k, &nk);
	ar_attr_ints(n, "strides", &st, &ns);
	ar_attr_ints(n, "pads", &pads, &np);
	if (r < 1 || nk != r || (ns >= 0 && ns != r) ||
	    (np >= 0 && np != 2 * r)) {
		rc = ar_node_fail(c, n, "needs X [N, C, D...] and kernel_shape, "
				  "strides and pads for its %d spatial axes",
				  r > 0 ? r : 0);
		goto out;
	}
	if (ar_runtime_input(c, n, 2)) {
		ar_same_as(c, n, 0, x);
		for (int i = 0; i < r; i++)
			ar_bound_axis(ar_out(c, n, 0), 2 + i, AR_NO_BOUND);
		goto out;
	}
	if ((rc = ar_const_ints(c, n, 2, &os, &nos)))
		goto out;
	if (nos >= 0 && (nos != x->rank || os[0] != x->dims[0] ||
			 os[1] != x->dims[1])) {
		rc = ar_node_fail(c, n, "output_shape must be [N, C, D...] "
				  "like X");
		goto out;
	}
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (int i = 0; i < r; i++) {
		int64_t s = st ? st[i] : 1, b = pads ? pads[i] : 0,
			e = pads ? pads[r + i] : 0, *d = &dims[2 + i];
		bool ok = nos >= 0 ? (*d = os[2 + i]) >= 0 :
			  s >= 1 && b >= 0 && e >= 0 &&
			  ar_mul64(x->dims[2 + i] - 1, s, d) &&
			  ar_add64(*d, k[i], d) && ar_add64(*d, -b, d) &&
			  ar_add64(*d, -e, d) && *d >= 0;
		if (!ok) {
			rc = ar_node_fail(c, n, "invalid output size at axis %d",
					  2 + i);
			goto out;
		}
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
out:
	free(k), free(st), free(pads), free(os);
	return rc;
}
