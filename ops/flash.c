/*
 * flash.c — arenac.FlashAttention: an attention core as one fused kernel,
 * as train/attention.c writes it for --attention flash|efficient.  Its
 * shape, FLOPs and the workspace of its backward step.
 *
 *   inputs   q [..., s, d], kT [..., d, t] (K transposed, as the exported
 *            core multiplies it), v [..., t, e], then the constants the
 *            core read (a causal mask, the scale): the kernel applies
 *            them itself;
 *   outputs  Y [..., s, e] and the fp32 log-sum-exp of each query row
 *            [..., s'], s' = s rounded up to lse_align.
 *
 * What the kernels keep and allocate, from their sources:
 *   - FlashAttention-2, csrc/flash_attn/flash_api.cpp: mha_fwd returns
 *     softmax_lse {batch, heads, seqlen_q} fp32 (lse_align 1); mha_bwd
 *     takes dout, q, k, v, out and softmax_lse, and allocates softmax_d
 *     {batch, heads, round(seqlen_q, 128)} fp32 (the rows of dO . O) and
 *     dq_accum {batch, round(seqlen_q, 128), heads, round(head_size, 32,
 *     or 64 above 128)} fp32 (loop is always true there), besides dq, dk
 *     and dv; no s x s matrix either way, and dropout's mask is drawn
 *     again from the RNG state;
 *   - PyTorch's memory-efficient kernel (aten/src/ATen/native/
 *     transformers/cuda/attention.cu, _efficient_attention_forward): the
 *     log-sum-exp padded to ceil_div(seqlen_q, kAlignLSE) * kAlignLSE
 *     rows, kAlignLSE = 32 (lse_align 32); its backward's workspace is
 *     not modelled.
 * The FLOPs: the two products (2 s t d + 2 s t e per batch and head) and
 * a few per score for the scale, mask and online softmax; the backward
 * (ArGradRule.recompute) recomputes the scores once more, 2.5 forward
 * passes in all, as FlashAttention's paper counts it.
 */
#include "infer_ops.h"

/* Scores of one kernel call: batch dims x s x t. */
static int64_t scores(const ArGraph *g, const ArNode *n, int64_t *d)
{
	const ArTensor *q = &g->tensors[n->inputs[0]];
	const ArTensor *kt = &g->tensors[n->inputs[1]];
	int64_t r;
	if (q->rank < 2 || kt->rank < 2)
		return -1;
	*d = q->dims[q->rank - 1];
	r = ar_numel(q) / (*d > 0 ? *d : 1);
	return ar_mul64(r, kt->dims[kt->rank - 1], &r) ? r : -1;
}

int ar_flash_lse_shape(const ArTensor *q, int64_t align,
		       int64_t dims[AR_MAX_RANK])
{
	for (int i = 0; i + 1 < q->rank; i++)
		dims[i] = q->dims[i];
	dims[q->rank - 2] = (q->dims[q->rank - 2] + align - 1) / align * align;
	return q->rank - 1;
}

int ar_shape_flash(InferCtx *c, ArNode *n)
{
	ArTensor *q, *kt, *v;
	int64_t dims[AR_MAX_RANK], align = ar_attr_int(n, "lse_align", 1);
	int rc;

	if ((rc = ar_need(c, n, 0, &q)) || (rc = ar_need(c, n, 1, &kt)) ||
	    (rc = ar_need(c, n, 2, &v)))
		return rc;
	if (q->rank < 2 || kt->rank != q->rank || v->rank != q->rank ||
	    q->dims[q->rank - 1] != kt->dims[kt->rank - 2] ||
	    kt->dims[kt->rank - 1] != v->dims[v->rank - 2] || align < 1)
		return ar_node_fail(c, n, "needs q [..., s, d], kT [..., d, t] "
				    "and v [..., t, e]");
	for (int i = 0; i < q->rank; i++)
		dims[i] = q->dims[i];
	dims[q->rank - 1] = v->dims[v->rank - 1];
	ar_set_shape(ar_out(c, n, 0), q->dtype, q->rank, dims);
	ar_set_shape(ar_out(c, n, 1), AR_DT_FLOAT,
		     ar_flash_lse_shape(q, align, dims), dims);
	return AR_OK;
}

int64_t ar_flops_flash(const ArGraph *g, const ArNode *n)
{
	int64_t d, st = scores(g, n, &d), f;
	if (st < 0)
		return 0;
	/* QK^T and PV (2 d each per score), five for scale, mask, softmax. */
	return ar_mul64(st, 4 * d + 5, &f) ? f : INT64_MAX;
}

/* round_multiple(x, m) of flash_api.cpp. */
static int64_t round_up(int64_t x, int64_t m)
{
	return (x + m - 1) / m * m;
}

/*
 * FlashAttentionGrad reads q first (step.c: the inputs that get
 * gradients, then the outputs, then dY): dq_accum and softmax_d, fp32,
 * for batch x heads the leading dims of q.
 */
int64_t ar_scratch_flash_grad(const ArGraph *g, const ArNode *n)
{
	const ArTensor *q;
	int64_t rows, s, d, heads = 1, acc, sd;
	if (n->ninputs < 1 || n->inputs[0] < 0)
		return 0;
	q = &g->tensors[n->inputs[0]];
	if (q->rank < 2)
		return 0;
	s = round_up(q->dims[q->rank - 2], 128);
	d = q->dims[q->rank - 1];
	d = round_up(d, d <= 128 ? 32 : 64);
	for (int i = 0; i < q->rank - 2; i++)
		heads *= q->dims[i];
	if (!ar_mul64(heads, s, &rows) || !ar_mul64(rows, d + 1, &acc) ||
	    !ar_mul64(acc, 4, &sd))
		return INT64_MAX / 4;
	return sd;
}
