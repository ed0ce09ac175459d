/*
 * flops.c — floating-point operations of one node, from its shapes.
 *
 * A multiply-add counts 2.  The numbers are for comparing recompute costs,
 * so they follow the usual conventions rather than any kernel: bilinear
 * ops count their products, pools their window, normalisations a few ops
 * per element, pure data movement (Reshape, Transpose, Concat, ...) zero,
 * and anything else one op per output element.  Sums saturate instead of
 * overflowing.
 */
#include "train.h"

#include <string.h>

static int64_t mul_sat(int64_t a, int64_t b)
{
	int64_t r;
	return a < 0 || b < 0 ? 0 : ar_mul64(a, b, &r) ? r : INT64_MAX;
}

static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;
	return ar_add64(a, b, &r) ? r : INT64_MAX;
}

static const ArTensor *in(const ArGraph *g, const ArNode *n, int i)
{
	return i < n->ninputs && n->inputs[i] >= 0 ? &g->tensors[n->inputs[i]]
						   : NULL;
}

static int64_t numel(const ArTensor *t)
{
	int64_t v = t ? ar_numel(t) : 0;
	return v < 0 ? 0 : v;
}

/* Product of dims [from, rank) of t. */
static int64_t dims_from(const ArTensor *t, int from)
{
	int64_t v = 1;
	for (int i = from; t && i < t->rank; i++)
		v = mul_sat(v, t->dims[i]);
	return v;
}

static bool is_op(const ArNode *n, const char *const *ops)
{
	for (; *ops; ops++)
		if (!strcmp(n->op, *ops))
			return true;
	return false;
}

int64_t ar_node_flops(const ArGraph *g, const ArNode *n)
{
	static const char *const moves[] = {
		"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
		"Concat", "Identity", "Split", "Slice", "Gather", "Pad",
		"Expand", "Tile", "Shape", "Cast", NULL
	};
	const ArTensor *y = n->noutputs && n->outputs[0] >= 0 ?
			    &g->tensors[n->outputs[0]] : NULL;
	const ArTensor *a = in(g, n, 0), *w = in(g, n, 1);
	int64_t out = numel(y), f, k = 1;

	if (is_op(n, moves))
		return 0;
	if (!strcmp(n->op, "Conv") && w && w->rank >= 2) {
		/* Each output element: Cin/group x kernel multiply-adds. */
		f = mul_sat(2, mul_sat(out, dims_from(w, 1)));
		return in(g, n, 2) ? add_sat(f, out) : f;
	}
	if (!strcmp(n->op, "ConvTranspose") && w && w->rank >= 2)
		return mul_sat(2, mul_sat(numel(a), dims_from(w, 1)));
	if (!strcmp(n->op, "Gemm") && a && y && y->rank == 2 && y->dims[0]) {
		/* K = numel(A) / M, whichever way A is transposed. */
		f = mul_sat(2, mul_sat(out, numel(a) / y->dims[0]));
		return in(g, n, 2) ? add_sat(f, out) : f;
	}
	if (!strcmp(n->op, "MatMul") && a && a->rank >= 1)
		return mul_sat(2, mul_sat(out, a->dims[a->rank - 1]));
	if (!strcmp(n->op, "MaxPool") || !strcmp(n->op, "AveragePool")) {
		const ArAttr *ks = ar_attr(n, "kernel_shape");
		for (int i = 0; ks && i < ks->nints; i++)
			k = mul_sat(k, ks->ints[i]);
		return mul_sat(out, k);
	}
	if (!strcmp(n->op, "GlobalAveragePool") ||
	    !strcmp(n->op, "GlobalMaxPool"))
		return numel(a);
	if (!strcmp(n->op, "LRN"))
		return mul_sat(out, 2 * ar_attr_int(n, "size", 1) + 3);
	if (!strcmp(n->op, "BatchNormalization"))
		return mul_sat(out, 4);
	if (!strcmp(n->op, "Softmax") || !strcmp(n->op, "LogSoftmax"))
		return mul_sat(out, 3);
	if (!strcmp(n->op, "Sum"))
		return mul_sat(out, n->ninputs > 1 ? n->ninputs - 1 : 1);
	return out;
}
