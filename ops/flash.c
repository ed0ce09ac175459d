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
 *     rows, kAlignLSE = 32 (lse_align 32).  It takes k and v with q's
 *     heads: _efficient_attention_forward and _efficient_attention_backward
 *     (cuda/attention_backward.cu) TORCH_CHECK query.size(2) ==
 *     key.size(2) == value.size(2) ("Num heads") and launch the kernel
 *     with num_heads = nH and q_heads_per_kv left at 1, so grouped-query
 *     keys and values reach it expanded.  Its backward's workspace as it
 *     allocates it on sm80 and sm90 (A100, H100): mem_eff_workspace below.
 * The FLOPs: the two products (2 s t d + 2 s t e per batch and head) and
 * a few per score for the scale, mask and online softmax; the backward
 * (ArGradRule.recompute) recomputes the scores once more, 2.5 forward
 * passes in all, as FlashAttention's paper counts it.
 */
#include "infer_ops.h"

#include <assert.h>

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

/* What each kernel keeps: train/attention.c writes lse_align on the node
 * from here, and fuses grouped-query cores on unexpanded k and v only for
 * a kernel that takes them (module comment). */
static const ArFlashKernelDef kernels[] = {
	[AR_FLASH_FA2] = {.lse_align = 1, .kv_heads = true},
	[AR_FLASH_MEM_EFF] = {.lse_align = 32, .kv_heads = false},
};

const ArFlashKernelDef *ar_flash_kernel(ArFlashKernel k)
{
	assert(k == AR_FLASH_FA2 || k == AR_FLASH_MEM_EFF);
	return &kernels[k];
}

/* round_multiple(x, m) of flash_api.cpp, align_up of the CUTLASS
 * kernels. */
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
 * PyTorch's memory-efficient backward kernels on sm80 and sm90: cutlassB.h
 * (mem_eff_attention/kernels/, generated) dispatch_cutlassB sends 80 <= cc
 * < 100 to dispatch_cutlassB_{bf16,f16,f32}_sm80, whose lists
 * _efficient_attention_backward's launchKernel walks in order, taking the
 * first kernel with kMaxK >= max(head_dim, head_dim_value).  Per head-dim
 * bound, its AttentionBackwardKernel's kBlockSizeI x kBlockSizeJ; the
 * seqaligned and dropout variants of a row have its block sizes, and the
 * 128x64 k96 kernel is listed for cc 86 and 89 only.  All fit the
 * shared memory of an A100 or H100 (the lists are generated for sm80).
 */
static const struct {
	int64_t max_k, block_i, block_j;
} mem_eff_sm80[2][4] = {
	/* 16-bit: AttentionBackwardKernel<Sm80, bfloat16_t or half_t, ...> */
	{{32, 64, 64}, {64, 64, 64}, {128, 128, 128}, {65536, 128, 64}},
	/* float */
	{{32, 64, 64}, {64, 64, 64}, {128, 128, 64}, {65536, 128, 64}},
};

/*
 * What _efficient_attention_backward (cuda/attention_backward.cu) holds
 * besides grad_q, grad_k and grad_v (the step's outputs: SDPA's
 * _scaled_dot_product_efficient_attention_backward_cuda leaves
 * shared_storage_dqdkdv false, three tensors, no shared chunk) for batch B
 * (q's dims before the heads), nH heads, M queries, N keys, head dims K
 * and Kv; kernel_backward.h's AttentionBackwardKernel for the flags:
 *   delta {B, nH, M} fp32: at::empty when kKernelComputesDelta (kIsHalf
 *     and, on sm80, always), else (grad_out.float() * out.float())
 *     .sum(-1).transpose(-2, -1).contiguous(), whose temporaries (the
 *     product {B, M, nH, Kv} and the sum {B, M, nH}; float inputs are not
 *     copied) live until the statement ends, before the workspace;
 *   workspace, Params::workspace_size() bytes = B nH workspace_strideBH()
 *     4, strideBH = align_up(gk + gv + gq, 4) floats:
 *     gq = ceil(M / I) ceil(K / J) sizeof(GradQTempStorage) / 4 (a lock,
 *       a counter, two pads and I x J fp32 accumulators: MatmulGradQ's
 *       threadblock tile), always (kNeedsAccumGradQ: kEnableSplitKeys);
 *     gk = num_splits_key J align_up(K, I), gv the same with Kv, when the
 *       output does not stay in registers (kNeedsAccumGradK/V = !kOutput-
 *       InRF, kOutputInRF = kIsHalf and kMaxK <= I) and is narrower than
 *       fp32;
 *   num_splits_key from its heuristic (SDPA passes none): ceil(N / J),
 *     1 when B nH >= 256 and N <= 2 J, at most 200 / (B nH) when gk or gv
 *     is kept, at least 1.
 * grad_out is taken as the kernel's layout (no contiguous() copy), as an
 * attention module's out.transpose(1, 2) hands it back.
 */
static int64_t mem_eff_workspace(const ArTensor *q, const ArTensor *v)
{
	int r = q->rank, w = q->dtype == AR_DT_FLOAT ? 1 : 0, k;
	int64_t bh = 1, nh = r >= 3 ? q->dims[r - 3] : 1, m = q->dims[r - 2];
	int64_t n = v->dims[r - 2], kq = q->dims[r - 1], kv = v->dims[r - 1];
	int64_t bi, bj, gq, gk = 0, gv = 0, splits, ws, delta, tmp;
	bool in_rf;

	for (int i = 0; i < r - 2; i++)
		bh *= q->dims[i];
	for (k = 0; k < 4 && mem_eff_sm80[w][k].max_k < (kq > kv ? kq : kv);
	     k++)
		;
	if (k == 4)     /* "cutlassB: no kernel found to launch!" */
		return INT64_MAX / 4;
	/* The sum below is under 1024 (B nH + 200) (M + 128) (K + 128)
	 * bytes (the split accumulators: B nH splits <= B nH + 200). */
	if (!ar_mul64(bh + 200, m + 128, &tmp) ||
	    !ar_mul64(tmp, (kq > kv ? kq : kv) + 128, &tmp) ||
	    !ar_mul64(tmp, 1024, &tmp))
		return INT64_MAX / 4;
	bi = mem_eff_sm80[w][k].block_i;
	bj = mem_eff_sm80[w][k].block_j;
	in_rf = !w && mem_eff_sm80[w][k].max_k <= bi;
	gq = (m + bi - 1) / bi * ((kq + bj - 1) / bj) * (4 + bi * bj);
	if (!w && !in_rf) {
		splits = (n + bj - 1) / bj;
		if (bh >= 256 && n <= 2 * bj)
			splits = 1;
		if (splits > 200 / bh)
			splits = 200 / bh;
		if (splits < 1)
			splits = 1;
		gk = splits * bj * round_up(kq, bi);
		gv = splits * bj * round_up(kv, bi);
	}
	ws = bh * round_up(gk + gv + gq, 4) * 4;
	delta = bh * m * 4;
	if (!w)
		return delta + ws;
	/* The product, the sum, and delta a copy of the transposed sum
	 * unless nH or M is 1 (then it is the sum, contiguous already). */
	tmp = bh * m * kv * 4 + delta + (nh > 1 && m > 1 ? delta : 0);
	return tmp > delta + ws ? tmp : delta + ws;
}

/* FlashAttention-2's mha_bwd (module comment): dq_accum and softmax_d,
 * fp32, and for grouped-query attention dk_expanded and dv_expanded. */
static int64_t fa2_workspace(const ArTensor *q, const ArTensor *v)
{
	int64_t rows, s, d, heads = 1, acc, sd, kv = 0;
	s = round_up(q->dims[q->rank - 2], 128);
	d = q->dims[q->rank - 1];
	d = round_up(d, d <= 128 ? 32 : 64);
	for (int i = 0; i < q->rank - 2; i++)
		heads *= q->dims[i];
	kv = expanded_kv(q, v, heads);
	if (!ar_mul64(heads, s, &rows) || !ar_mul64(rows, d + 1, &acc) ||
	    !ar_mul64(acc, 4, &sd) || kv == INT64_MAX / 4)
		return INT64_MAX / 4;
	return sd + kv;
}

/*
 * FlashAttentionGrad reads q, k, v first (step.c: the inputs that get
 * gradients, then the outputs, then dY), and carries the forward node's
 * attributes (ArGradRule.attrs): its kernel's workspace.
 */
int64_t ar_scratch_flash_grad(const ArGraph *g, const ArNode *n)
{
	const ArTensor *q, *v;
	if (n->ninputs < 3 || n->inputs[0] < 0 || n->inputs[2] < 0)
		return 0;
	q = &g->tensors[n->inputs[0]];
	v = &g->tensors[n->inputs[2]];
	if (q->rank < 2 || v->rank != q->rank)
		return 0;
	if (ar_attr_int(n, "kernel", AR_FLASH_FA2) == AR_FLASH_MEM_EFF)
		return mem_eff_workspace(q, v);
	return fa2_workspace(q, v);
}
