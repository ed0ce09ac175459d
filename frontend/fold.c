/*
 * fold.c — when to evaluate a node whose inputs are compile-time constants.
 *
 * Every output of such a node is a constant by kind (infer.c marks it);
 * its value is computed only when something needs it.  Eagerly, as
 * inference passes, only small values (the AR_FOLD_EAGER limits below):
 * shape computations (Shape -> Gather -> Concat -> Reshape),
 * scalars, index arithmetic.  On demand, the rest: a shape function that
 * needs a larger constant's values (ar_const_ints) gets it computed with
 * whatever it is computed from, up to AR_FOLD_MAX_ELEMS elements; the
 * weights writer (--weights) gets any constant computed, whatever its
 * size, one at a time.  Weights folded from ConstantOfShape fills (the
 * ONNX suite's "light" models carry all their weights that way) are thus
 * never materialised to plan a model.
 *
 * Values of types other than ints, bool, float and double, and of ops
 * whose table entry names no folder, stay unknown (data NULL), and a shape
 * that needs them reports that clearly.  How each op computes its value is
 * the op table's business (ops/fold_eval.c).
 */
#include "infer.h"

#include <assert.h>
#include <stdlib.h>

#include "infer_ops.h"

/*
 * Values computed as inference passes, whether needed or not: integer
 * ones (shape arithmetic) up to AR_FOLD_EAGER_INTS elements, others (a
 * Resize's scales) up to AR_FOLD_EAGER_FLOATS; small float weights are
 * then left alone, which the ONNX suite's light models have by the
 * thousand.
 */
#define AR_FOLD_EAGER_INTS 1024
#define AR_FOLD_EAGER_FLOATS 16

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

/* Computes the outputs of n of at most limit elements (-1: any; -2: the
 * eager limits above, by type). */
static void fold_node(InferCtx *c, ArNode *n, int64_t limit)
{
	const ArOpDef *d = ar_op_of(n);

	if (!d || !d->fold || !inputs_ready(c, n, d))
		return;
	for (int j = 0; j < n->noutputs; j++) {
		ArTensor *out = ar_out(c, n, j);
		int64_t numel;
		if (!out || out->data || out->rank < 0 || out->bytes < 0 ||
		    !foldable_type(out->dtype))
			continue;
		numel = ar_numel(out);
		if (numel < 0 || (limit >= 0 && numel > limit) ||
		    (limit == -2 && numel > (ar_dtype_is_int(out->dtype) ?
					     AR_FOLD_EAGER_INTS :
					     AR_FOLD_EAGER_FLOATS)))
			continue;
		out->data = ar_xcalloc((size_t)out->bytes + 1, 1);
		if (!d->fold(c, n, j, out, d->fold_arg)) {
			free(out->data);
			out->data = NULL;
		}
	}
}

void ar_fold(InferCtx *c, ArNode *n)
{
	fold_node(c, n, -2);
}

/* A constant whose value can still be computed from its producer. */
static bool pending(const InferCtx *c, int t)
{
	const ArTensor *x = &c->g->tensors[t];
	return !x->data && x->producer >= 0 && ar_is_const(c, t);
}

bool ar_fold_value(InferCtx *c, int t, int64_t limit, int *made, int *nmade)
{
	int *stack = ar_xmalloc(((size_t)c->g->ntensors + 1) * sizeof *stack);
	int fresh[AR_MAX_OUTPUTS];
	int top = 0;

	if (pending(c, t))
		stack[top++] = t;
	/*
	 * Depth first over producers: a tensor stays on the stack until the
	 * inputs of its producer have values, then the producer is folded.
	 * The graph is acyclic, so each tensor is pushed at most once while
	 * its value is pending.
	 */
	while (top > 0) {
		int x = stack[top - 1], pushed = 0;
		ArNode *n = &c->g->nodes[c->g->tensors[x].producer];
		for (int j = 0; j < n->nexplicit; j++) {
			int in = n->inputs[j];
			if (in >= 0 && pending(c, in)) {
				stack[top++] = in;
				pushed++;
				break;
			}
		}
		if (pushed)
			continue;
		top--;
		if (c->g->tensors[x].data)
			continue;
		/* Outputs without a value now are the ones this fold makes. */
		assert(n->noutputs <= AR_MAX_OUTPUTS);
		for (int j = 0; j < n->noutputs; j++) {
			int o = n->outputs[j];
			fresh[j] = o >= 0 && !c->g->tensors[o].data ? o : -1;
		}
		fold_node(c, n, limit);
		for (int j = 0; made && j < n->noutputs; j++) {
			int o = fresh[j];
			if (o >= 0 && c->g->tensors[o].data)
				made[(*nmade)++] = o;
		}
		if (!c->g->tensors[x].data)
			break;
	}
	free(stack);
	return c->g->tensors[t].data != NULL;
}

bool ar_const_value(ArGraph *g, int t, int **made, int *nmade)
{
	ArError scratch;
	InferCtx c = {.g = g, .err = &scratch};
	*made = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof **made);
	*nmade = 0;
	return g->tensors[t].data || ar_fold_value(&c, t, -1, *made, nmade);
}
