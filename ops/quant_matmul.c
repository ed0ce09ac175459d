/*
 * quant_matmul.c — arenac.QuantizedMatMul(x, Wq[, bias]): a linear whose
 * frozen weight is stored quantised (train/base_quant.c: nf4, fp4 or
 * int8, as bitsandbytes stores it) and dequantised for each use.  Its
 * FLOPs and the workspace of its step and of its gradient's.
 *
 * Wq is a byte tensor of the stored size; the sizes come from the
 * operands: x [..., in] and y [..., out] forward, dY [..., out] and dX
 * [..., in] backward.  The workspace is the dequantised weight, in x's
 * type (the compute format), for the step alone: bitsandbytes' MatMul4Bit
 * dequantises into a fresh [out, in] tensor in the forward (for
 * training-sized inputs: backends/cuda/ops.py _gemm_4bit_impl, B_dq) and
 * again in the backward (autograd/_functions.py MatMul4Bit.backward).
 */
#include "ops.h"

static int64_t last_dim(const ArGraph *g, int t)
{
	const ArTensor *x = t >= 0 ? &g->tensors[t] : NULL;
	return x && x->rank > 0 ? x->dims[x->rank - 1] : 0;
}

/* in x out elements of dt's size, saturating. */
static int64_t weight_bytes(int64_t in, int64_t out, ArDType dt)
{
	int64_t n, b;
	if (!ar_mul64(in, out, &n) || !ar_mul64(n, (int64_t)ar_dtype_size(dt),
						 &b))
		return INT64_MAX / 4;
	return b;
}

int64_t ar_scratch_qmatmul(const ArGraph *g, const ArNode *n)
{
	if (n->ninputs < 1 || n->noutputs < 1 || n->inputs[0] < 0)
		return 0;
	return weight_bytes(last_dim(g, n->inputs[0]), last_dim(g, n->outputs[0]),
			    g->tensors[n->inputs[0]].dtype);
}

/* The gradient step reads Wq and dY (step.c) and writes dX. */
int64_t ar_scratch_qmatmul_grad(const ArGraph *g, const ArNode *n)
{
	int dy = n->ninputs ? n->inputs[n->ninputs - 1] : -1;
	if (dy < 0 || n->noutputs < 1 || n->outputs[0] < 0)
		return 0;
	return weight_bytes(last_dim(g, n->outputs[0]), last_dim(g, dy),
			    g->tensors[dy].dtype);
}

/* 2 in out per row of y, and one op per weight to dequantise. */
int64_t ar_flops_qmatmul(const ArGraph *g, const ArNode *n)
{
	int64_t in, y, f, w;
	if (n->ninputs < 1 || n->noutputs < 1 || n->inputs[0] < 0 ||
	    n->outputs[0] < 0)
		return 0;
	in = last_dim(g, n->inputs[0]);
	y = ar_numel(&g->tensors[n->outputs[0]]);
	w = in * last_dim(g, n->outputs[0]);
	return ar_mul64(y, 2 * in, &f) && ar_add64(f, w, &f) ? f : INT64_MAX;
}
