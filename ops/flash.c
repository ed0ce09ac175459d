/*
 * flash.c — arenac.FlashAttention: an attention core as one fused kernel,
 * as train/attention.c writes it for --attention flash|efficient.  Its
 * shape, FLOPs and the workspace of its backward step.
 *
 *   inputs   q [..., h, s, d], kT [..., g, d, t] (K transposed, as the
 *            exported core multiplies it; with attribute kt 0, K
 *            [..., g, t, d]), v [..., g, t, e], then the constants the
 *            core read (a causal mask, the scale): the kernel applies
 *            them itself.  g = h, or grouped-query attention's kv heads
 *            (g divides h, axis rank - 3; train/attention.c);
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
 *     again from the RNG state.  With fewer kv heads than query heads
 *     (num_heads_k != num_heads, "MQA / GQA") it allocates dk_expanded and
 *     dv_expanded {batch, seqlen_k, num_heads, head_size} in q's format
 *     and sums them into dk and dv over each group (at::sum_out of their
 *     reshape to {.., num_heads_k, num_heads / num_heads_k, ..});
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

/* Scores of one kernel call: batch dims x query heads x s x t (t: v's
 * rows, whatever k's layout and heads). */
static int64_t scores(const ArGraph *g, const ArNode *n, int64_t *d)
{
	const ArTensor *q = &g->tensors[n->inputs[0]];
	const ArTensor *v = &g->tensors[n->inputs[2]];
	int64_t r;
	if (q->rank < 2 || v->rank < 2)
		return -1;
	*d = q->dims[q->rank - 1];
	r = ar_numel(q) / (*d > 0 ? *d : 1);
	return ar_mul64(r, v->dims[v->rank - 2], &r) ? r : -1;
}

/* k's heads are q's, or a divisor of them (axis rank - 3). */
static bool heads_ok(const ArTensor *q, const ArTensor *k)
{
	int r = q->rank;
	if (r < 3)
		return true;
	return k->dims[r - 3] > 0 && k->dims[r - 3] <= q->dims[r - 3] &&
	       q->dims[r - 3] % k->dims[r - 3] == 0;
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
	int rc, tr = ar_attr_int(n, "kt", 1) ? 1 : 0, r;

	if ((rc = ar_need(c, n, 0, &q)) || (rc = ar_need(c, n, 1, &kt)) ||
	    (rc = ar_need(c, n, 2, &v)))
		return rc;
	r = q->rank;
	/* kt 1: kT [.., d, t]; kt 0: K [.., t, d]. */
	if (r < 2 || kt->rank != r || v->rank != r ||
	    q->dims[r - 1] != kt->dims[r - 1 - tr] ||
	    kt->dims[r - 2 + tr] != v->dims[r - 2] || align < 1 ||
	    !heads_ok(q, kt) || !heads_ok(q, v) ||
	    (r >= 3 && kt->dims[r - 3] != v->dims[r - 3]))
		return ar_node_fail(c, n, "needs q [..., h, s, d], kT "
				    "[..., g, d, t] (k [..., g, t, d] with kt "
				    "0) and v [..., g, t, e], g dividing h");
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

/* Grouped-query attention's dk_expanded and dv_expanded: batch x heads
 * (q's leading dims) x seqlen_k (v's rows) x head_size, q's format; 0
 * when v has q's heads. */
static int64_t expanded_kv(const ArTensor *q, const ArTensor *v, int64_t bh)
{
	int r = q->rank;
	int64_t e;
	if (r < 3 || v->rank != r || v->dims[r - 3] == q->dims[r - 3])
		return 0;
	if (!ar_mul64(bh, v->dims[r - 2], &e) ||
	    !ar_mul64(e, q->dims[r - 1], &e) ||
	    !ar_mul64(e, 2 * (int64_t)ar_dtype_size(q->dtype), &e))
		return INT64_MAX / 4;
	return e;
}

/*
 * FlashAttentionGrad reads q, k, v first (step.c: the inputs that get
 * gradients, then the outputs, then dY): dq_accum and softmax_d, fp32,
 * for batch x heads the leading dims of q, and for grouped-query
 * attention dk_expanded and dv_expanded.
 */
int64_t ar_scratch_flash_grad(const ArGraph *g, const ArNode *n)
{
	const ArTensor *q;
	int64_t rows, s, d, heads = 1, acc, sd, kv = 0;
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
	if (n->ninputs > 2 && n->inputs[2] >= 0)
		kv = expanded_kv(q, &g->tensors[n->inputs[2]], heads);
	if (!ar_mul64(heads, s, &rows) || !ar_mul64(rows, d + 1, &acc) ||
	    !ar_mul64(acc, 4, &sd) || kv == INT64_MAX / 4)
		return INT64_MAX / 4;
	return sd + kv;
}
