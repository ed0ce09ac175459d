/*
 * shape_random.c — shapes of ops that generate values: the random
 * samplers (RandomNormal, RandomUniform, their *Like forms, Bernoulli,
 * Multinomial) and EyeLike.
 *
 * Their element type comes from a dtype attribute where one is given.
 * The samplers are never folded (table.c marks them AR_OP_NOFOLD): each
 * run draws new values.
 */
#include "infer_ops.h"

/* The dtype attribute, or dflt when absent. */
static int dtype_attr(InferCtx *c, const ArNode *n, ArDType dflt,
		      ArDType *dt)
{
	int64_t v = ar_attr_int(n, "dtype", dflt);
	if (v <= AR_DT_UNDEFINED || v >= AR_DT_COUNT || v == AR_DT_STRING)
		return ar_node_fail(c, n, "dtype %lld is not a numeric type",
				    (long long)v);
	*dt = (ArDType)v;
	return AR_OK;
}

/* The input's shape, of the dtype attribute's type or else the input's. */
static int like(InferCtx *c, ArNode *n, bool matrix)
{
	ArTensor *x, *y = ar_out(c, n, 0);
	ArDType dt = AR_DT_FLOAT;
	int rc = ar_need(c, n, 0, &x);

	if (rc || (rc = dtype_attr(c, n, x->dtype, &dt)))
		return rc;
	if (matrix && x->rank != 2)
		return ar_node_fail(c, n, "needs a 2-D input, not rank %d",
				    x->rank);
	ar_same_as(c, n, 0, x);
	if (y)
		y->dtype = dt;
	return AR_OK;
}

/* RandomNormalLike, RandomUniformLike, Bernoulli. */
int ar_shape_like(InferCtx *c, ArNode *n)
{
	return like(c, n, false);
}

int ar_shape_eyelike(InferCtx *c, ArNode *n)
{
	return like(c, n, true);
}

/* RandomNormal, RandomUniform: the shape attribute, float by default. */
int ar_shape_random(InferCtx *c, ArNode *n)
{
	const ArAttr *a = ar_attr(n, "shape");
	ArDType dt = AR_DT_FLOAT;
	int rc = dtype_attr(c, n, AR_DT_FLOAT, &dt);

	if (rc)
		return rc;
	if (!a || a->type != AR_ATTR_INTS || a->nints > AR_MAX_RANK)
		return ar_node_fail(c, n, "attribute 'shape' is missing or has "
				    "more than %d dims", AR_MAX_RANK);
	ar_set_shape(ar_out(c, n, 0), dt, a->nints, a->ints);
	return AR_OK;
}

/* Multinomial(input [batch, classes]) -> [batch, sample_size], int32 by
 * default. */
int ar_shape_multinomial(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	ArDType dt = AR_DT_FLOAT;
	int64_t dims[2];
	int rc = ar_need(c, n, 0, &x);

	if (rc || (rc = dtype_attr(c, n, AR_DT_INT32, &dt)))
		return rc;
	if (x->rank != 2)
		return ar_node_fail(c, n, "needs a 2-D input [batch, classes]");
	dims[0] = x->dims[0];
	dims[1] = ar_attr_int(n, "sample_size", 1);
	ar_set_shape(ar_out(c, n, 0), dt, 2, dims);
	return AR_OK;
}
