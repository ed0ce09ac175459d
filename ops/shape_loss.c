/*
 * shape_loss.c — shapes of the loss ops: SoftmaxCrossEntropyLoss and
 * NegativeLogLikelihoodLoss (opsets 12 and 13).
 *
 * Both take scores [N, C, d1, ..., dk] and labels [N, d1, ..., dk]: the
 * loss is one value per label with reduction 'none', else a scalar.
 * SoftmaxCrossEntropyLoss may also return the log-probabilities, shaped
 * like the scores.
 */
#include <string.h>

#include "infer_ops.h"

/* NegativeLogLikelihoodLoss has only the loss: output 1 is then NULL. */
int ar_shape_loss(InferCtx *c, ArNode *n)
{
	ArTensor *x, *labels, *w = ar_in(c, n, 2);
	const char *red = ar_attr_str(n, "reduction", "mean");
	int64_t dims[AR_MAX_RANK];
	int rc;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &labels)))
		return rc;
	if (x->rank < 2 || labels->rank != x->rank - 1 ||
	    labels->dims[0] != x->dims[0] ||
	    memcmp(labels->dims + 1, x->dims + 2,
		   (size_t)(x->rank - 2) * sizeof *dims))
		return ar_node_fail(c, n, "needs scores [N, C, d...] and labels "
				    "[N, d...]");
	if (w && (w->rank != 1 || w->dims[0] != x->dims[1]))
		return ar_node_fail(c, n, "weights must be 1-D with one value "
				    "per class (%lld)", (long long)x->dims[1]);
	if (!strcmp(red, "none"))
		ar_set_shape(ar_out(c, n, 0), x->dtype, labels->rank,
			     labels->dims);
	else if (!strcmp(red, "sum") || !strcmp(red, "mean"))
		ar_set_shape(ar_out(c, n, 0), x->dtype, 0, dims);
	else
		return ar_node_fail(c, n, "unknown reduction '%s'", red);
	ar_same_as(c, n, 1, x);
	return AR_OK;
}
