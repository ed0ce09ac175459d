/*
 * shape_elementwise.c — shapes of ops that keep their input's shape or
 * broadcast several inputs together: unary activations, casts, binary and
 * variadic arithmetic, comparisons, Where and the normalisations.
 *
 * Broadcasting follows onnx-Broadcasting.md (numpy rules); ops that only
 * allowed the old "axis" broadcast before opset 7 are read the same way,
 * which covers every file that broadcasts on trailing dims.
 */
#include "infer_ops.h"

int ar_shape_unary(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int rc = ar_need(c, n, 0, &x);
	if (rc)
		return rc;
	ar_same_as(c, n, 0, x);
	return AR_OK;
}

int ar_shape_cast(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t to = ar_attr_int(n, "to", -1);
	int rc = ar_need(c, n, 0, &x);
	if (rc)
		return rc;
	if (to <= AR_DT_UNDEFINED || to >= AR_DT_COUNT)
		return ar_node_fail(c, n, "attribute 'to' is missing or names "
				    "an unknown type (%lld)", (long long)to);
	ar_set_shape(ar_out(c, n, 0), (ArDType)to, x->rank, x->dims);
	return AR_OK;
}

int ar_shape_castlike(InferCtx *c, ArNode *n)
{
	ArTensor *x, *like;
	int rc = ar_need(c, n, 0, &x);
	if (rc || (rc = ar_need(c, n, 1, &like)))
		return rc;
	ar_set_shape(ar_out(c, n, 0), like->dtype, x->rank, x->dims);
	return AR_OK;
}

int ar_shape_tobool(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int rc = ar_need(c, n, 0, &x);
	if (rc)
		return rc;
	ar_set_shape(ar_out(c, n, 0), AR_DT_BOOL, x->rank, x->dims);
	return AR_OK;
}

int ar_shape_dropout(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int rc = ar_need(c, n, 0, &x);
	if (rc)
		return rc;
	ar_same_as(c, n, 0, x);
	/* The mask is bool from opset 10, x's type before. */
	ar_set_shape(ar_out(c, n, 1), n->opset >= 10 ? AR_DT_BOOL : x->dtype,
		     x->rank, x->dims);
	return AR_OK;
}

/* Broadcasts every explicit input into output 0 of type dt. */
static int broadcast_all(InferCtx *c, ArNode *n, ArDType dt)
{
	int64_t dims[AR_MAX_RANK];
	uint32_t axes = 0;
	int rank = 0, rc, seen = 0;

	for (int j = 0; j < n->nexplicit; j++) {
		ArTensor *t = ar_in(c, n, j);
		if (!t)
			continue;
		rc = ar_broadcast2(c, n, rank, dims, t->rank, t->dims, &rank,
				   dims);
		if (rc)
			return rc;
		seen++;
	}
	if (!seen)
		return ar_node_fail(c, n, "has no inputs");
	/* Trailing axes line up: an axis is data-dependent if any input's
	 * is. */
	for (int j = 0; j < n->nexplicit; j++) {
		ArTensor *t = ar_in(c, n, j);
		if (t)
			axes |= t->bounded << (rank - t->rank);
	}
	ar_set_shape(ar_out(c, n, 0), dt, rank, dims);
	ar_set_bounded(ar_out(c, n, 0), axes);
	return AR_OK;
}

int ar_shape_broadcast(InferCtx *c, ArNode *n)
{
	ArTensor *a;
	int rc = ar_need(c, n, 0, &a);
	return rc ? rc : broadcast_all(c, n, a->dtype);
}

int ar_shape_compare(InferCtx *c, ArNode *n)
{
	ArTensor *a;
	int rc = ar_need(c, n, 0, &a);
	return rc ? rc : broadcast_all(c, n, AR_DT_BOOL);
}

int ar_shape_where(InferCtx *c, ArNode *n)
{
	ArTensor *cond, *x, *y;
	int rc = ar_need(c, n, 0, &cond);
	if (rc || (rc = ar_need(c, n, 1, &x)) || (rc = ar_need(c, n, 2, &y)))
		return rc;
	return broadcast_all(c, n, x->dtype);
}

int ar_shape_batchnorm(InferCtx *c, ArNode *n)
{
	ArTensor *x, *scale;
	int rc = ar_need(c, n, 0, &x);
	if (rc || (rc = ar_need(c, n, 1, &scale)))
		return rc;
	ar_same_as(c, n, 0, x);
	/*
	 * Training mode's running and saved statistics are per channel, like
	 * scale (opset 14 drops the saved ones; absent outputs are -1).
	 */
	for (int j = 1; j < n->noutputs; j++)
		ar_set_shape(ar_out(c, n, j), scale->dtype, scale->rank,
			     scale->dims);
	return AR_OK;
}

int ar_shape_layernorm(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t dims[AR_MAX_RANK];
	int axis, rc = ar_need(c, n, 0, &x);
	ArDType stash;

	if (rc || (rc = ar_axis(c, n, ar_attr_int(n, "axis", -1), x->rank,
				&axis)))
		return rc;
	ar_same_as(c, n, 0, x);
	stash = (ArDType)ar_attr_int(n, "stash_type", AR_DT_FLOAT);
	for (int i = 0; i < x->rank; i++)
		dims[i] = i < axis ? x->dims[i] : 1;
	ar_set_shape(ar_out(c, n, 1), stash, x->rank, dims);
	ar_set_shape(ar_out(c, n, 2), stash, x->rank, dims);
	return AR_OK;
}

/*
 * The optimizers of ai.onnx.preview.training (Adagrad, Adam, Momentum):
 * (R, T, X..., G..., state...) -> (X_new..., state_new...), p tensors per
 * group; each output has its input's shape, the gradients G excepted.
 */
int ar_shape_optimizer(InferCtx *c, ArNode *n)
{
	int m = n->nexplicit - 2, k = n->noutputs, p = m - k, rc;

	if (p < 1 || k % p || m % p)
		return ar_node_fail(c, n, "has %d inputs after R and T and %d "
				    "outputs: not groups of equal size", m, k);
	for (int j = 0; j < k; j++) {
		int group = j / p;
		ArTensor *x;
		if ((rc = ar_need(c, n, 2 + (group ? group + 1 : 0) * p + j % p,
				  &x)))
			return rc;
		ar_same_as(c, n, j, x);
	}
	return AR_OK;
}
