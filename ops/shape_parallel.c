/*
 * shape_parallel.c — shapes of the collective operations a per-device
 * training graph holds (train/parallel.c inserts them; domain
 * AR_PARALLEL_DOMAIN): each names the axis it gathers or splits along
 * ("axis") and the number of devices taking part ("world").
 *
 *   AllGather      the devices' pieces side by side: axis grows world times;
 *   ReduceScatter  the devices' partial sums added, each keeping one
 *                  piece: axis shrinks world times;
 *   Shard          this device's piece of a tensor every device holds (no
 *                  communication): axis shrinks world times;
 *   AllReduce      the devices' partial sums added: the input's shape;
 *   PipelineSend   a pipeline stage's output sent to the next stage, which
 *                  sends its gradient back: a scalar token, the stage's
 *                  "loss" (its gradient step receives the gradient).
 */
#include <string.h>

#include "infer_ops.h"

/* axis and world of a gathering or splitting collective, checked. */
static int collective(InferCtx *c, ArNode *n, const ArTensor *x, int *axis,
		      int64_t *world)
{
	*world = ar_attr_int(n, "world", 0);
	if (*world < 1)
		return ar_node_fail(c, n, "needs a 'world' of 1 or more "
				    "devices");
	return ar_axis(c, n, ar_attr_int(n, "axis", 0), x->rank, axis);
}

int ar_shape_allgather(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t dims[AR_MAX_RANK], world;
	int axis, rc;
	if ((rc = ar_need(c, n, 0, &x)) ||
	    (rc = collective(c, n, x, &axis, &world)))
		return rc;
	memcpy(dims, x->dims, sizeof dims);
	if (!ar_mul64(dims[axis], world, &dims[axis]))
		return ar_node_fail(c, n, "the gathered axis overflows");
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
	return AR_OK;
}

/* ReduceScatter and Shard: one world-th of the axis each. */
int ar_shape_scatter(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t dims[AR_MAX_RANK], world;
	int axis, rc;
	if ((rc = ar_need(c, n, 0, &x)) ||
	    (rc = collective(c, n, x, &axis, &world)))
		return rc;
	if (x->dims[axis] % world)
		return ar_node_fail(c, n, "axis %d of '%s' (%lld) does not "
				    "split over %lld devices", axis, x->name,
				    (long long)x->dims[axis],
				    (long long)world);
	memcpy(dims, x->dims, sizeof dims);
	dims[axis] /= world;
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
	return AR_OK;
}

int ar_shape_send(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int rc = ar_need(c, n, 0, &x);
	if (!rc)
		ar_set_shape(ar_out(c, n, 0), x->dtype, 0, x->dims);
	return rc;
}
