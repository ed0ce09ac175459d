/*
 * mode.c — ops whose behaviour depends on how they run: the predicates the
 * op table (table.c) names where a class holds only in one mode.
 */
#include "ops.h"

/*
 * Dropout copies its input unless it runs in training mode.  A training
 * step (train/train.c: a graph with backward steps) runs every Dropout in
 * training mode, masks and all, whatever the model's opset leaves to the
 * runtime: its output is then a new value, not a view, and writing it over
 * the input would destroy a tensor a backward step reads (a Relu output).
 */
bool ar_dropout_is_view(const ArGraph *g, const ArNode *n, bool training)
{
	if (training)
		return false;
	if (n->opset < 7)
		return ar_attr_int(n, "is_test", 0) != 0;
	if (n->nexplicit >= 3 && n->inputs[2] >= 0) {
		const ArTensor *m = &g->tensors[n->inputs[2]];
		return m->data && m->dtype == AR_DT_BOOL &&
		       !*(const uint8_t *)m->data;
	}
	return true;
}
