/*
 * fold.c — when to evaluate a node whose inputs are compile-time constants.
 *
 * Only values that later shapes may depend on are worth computing: shape
 * subgraphs (Shape -> Gather -> Concat -> Reshape), ConstantOfShape fills,
 * small index arithmetic.  Results above AR_FOLD_MAX_ELEMS, of types other
 * than ints, bool, float and double, or of ops whose table entry names no
 * folder stay unknown (data NULL): the tensor is still a constant by kind,
 * and a shape that needs its values reports that clearly.  How each op
 * computes its value is the op table's business (ops/fold_eval.c).
 */
#include <stdlib.h>

#include "infer_ops.h"

static bool foldable_type(ArDType dt)
{
	return ar_dtype_is_int(dt) || ar_dtype_is_float(dt);
}

/*
 * Whether the folder may read the inputs' values: every input present has
 * them, in a type folders handle, and input 0 is there when the op needs
 * one.  Shape and Size read shapes only.
 */
static bool inputs_ready(InferCtx *c, const ArNode *n, const ArOpDef *d)
{
	if (d->flags & AR_OP_SHAPEONLY)
		return true;
	for (int i = 0; i < n->nexplicit; i++) {
		const ArTensor *t = ar_in(c, n, i);
		if (t && (!t->data || !foldable_type(t->dtype)))
			return false;
	}
	return d->in_min == 0 || ar_in(c, n, 0);
}

void ar_fold(InferCtx *c, ArNode *n)
{
	const ArOpDef *d = ar_op_of(n);

	if (!d || !d->fold || !inputs_ready(c, n, d))
		return;
	for (int j = 0; j < n->noutputs; j++) {
		ArTensor *out = ar_out(c, n, j);
		int64_t numel;
		if (!out || out->data || out->rank < 0 ||
		    !foldable_type(out->dtype))
			continue;
		numel = ar_numel(out);
		if (numel < 0 || numel > AR_FOLD_MAX_ELEMS)
			continue;
		out->data = ar_xcalloc((size_t)out->bytes + 1, 1);
		if (!d->fold(c, n, j, out, d->fold_arg)) {
			free(out->data);
			out->data = NULL;
		}
	}
}
