/*
 * shape_loss.c — shapes of the loss ops PyTorch exports with a model that
 * computes its own loss (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss):
 * scores [N, C, d1, ...] (C the classes, axis 1 as ONNX has it), labels
 * [N, d1, ...] (integers), optional per-class weights [C].
 *
 * Output 0 is the loss: a scalar for reduction mean or sum, the labels'
 * shape for none.  SoftmaxCrossEntropyLoss's output 1, the
 * log-probabilities, is shaped like the scores.  The training planner
 * (train/) needs no more than these shapes.
 */
#include <string.h>

#include "infer_ops.h"

int ar_shape_loss(InferCtx *c, ArNode *n)
{
	ArTensor *x, *label;
	const char *red = ar_attr_str(n, "reduction", "mean");
	int rc;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &label)))
		return rc;
	if (!ar_dtype_is_float(x->dtype) || x->rank < 2)
		return ar_node_fail(c, n, "needs float scores of rank 2 or more");
	if (!ar_dtype_is_int(label->dtype) || label->rank != x->rank - 1 ||
	    label->dims[0] != x->dims[0] ||
	    memcmp(label->dims + 1, x->dims + 2,
		   (size_t)(x->rank - 2) * sizeof *x->dims))
		return ar_node_fail(c, n, "needs integer labels shaped like the "
				    "scores without their class axis 1");
	if (!strcmp(red, "none"))
		ar_set_shape(ar_out(c, n, 0), x->dtype, label->rank,
			     label->dims);
	else if (!strcmp(red, "mean") || !strcmp(red, "sum"))
		ar_set_shape(ar_out(c, n, 0), x->dtype, 0, NULL);
	else
		return ar_node_fail(c, n, "unknown reduction '%s'", red);
	ar_same_as(c, n, 1, x);
	return AR_OK;
}
