/*
 * onnx_attention.c — ONNX's Attention op (opset 23, 24): the shapes its
 * schema infers and its FLOPs, one step for inference.  A training step
 * writes it as the attention core it computes (train/attention_ops.c).
 *
 * From onnx/defs/nn/defs.cc (Attention, AttentionShapeInference) and the
 * op's function body: Q (B, q_num_heads, S, d) with K (B, kv_num_heads, T,
 * d) and V (B, kv_num_heads, T, e), or the 3-D forms (B, S, q_num_heads
 * d), (B, T, kv_num_heads d), (B, T, kv_num_heads e) with the head counts
 * as attributes; then attn_mask, past_key (B, kv_num_heads, P, d),
 * past_value (B, kv_num_heads, P, e) and, from opset 24,
 * nonpad_kv_seqlen -> Y (B, q_num_heads, S, e) or (B, S, q_num_heads e),
 * present_key and present_value (P + T positions), qk_matmul_output
 * (B, q_num_heads, S, P + T).  q_num_heads a multiple of kv_num_heads
 * (grouped-query and multi-query attention).
 */
#include "infer_ops.h"

int ar_onnx_attention_dims(const ArGraph *g, const ArNode *n,
			   ArAttnDims *a)
{
	const ArTensor *q, *k, *v;
	if (n->ninputs < 3 || n->inputs[0] < 0 || n->inputs[1] < 0 ||
	    n->inputs[2] < 0)
		return -1;
	q = &g->tensors[n->inputs[0]];
	k = &g->tensors[n->inputs[1]];
	v = &g->tensors[n->inputs[2]];
	if (q->rank != k->rank || q->rank != v->rank ||
	    (q->rank != 3 && q->rank != 4))
		return -1;
	a->b = q->dims[0];
	if (q->rank == 4) {
		a->hq = q->dims[1], a->hkv = k->dims[1];
		a->s = q->dims[2], a->t = k->dims[2];
		a->d = q->dims[3], a->e = v->dims[3];
		if (v->dims[1] != a->hkv || v->dims[2] != a->t)
			return -1;
	} else {
		a->hq = ar_attr_int(n, "q_num_heads", 0);
		a->hkv = ar_attr_int(n, "kv_num_heads", 0);
		if (a->hq < 1 || a->hkv < 1 || q->dims[2] % a->hq ||
		    k->dims[2] % a->hkv || v->dims[2] % a->hkv)
			return -1;
		a->s = q->dims[1], a->t = k->dims[1];
		a->d = q->dims[2] / a->hq, a->e = v->dims[2] / a->hkv;
		if (v->dims[1] != a->t)
			return -1;
	}
	if (k->dims[0] != a->b || v->dims[0] != a->b ||
	    k->dims[q->rank - 1] != (q->rank == 4 ? a->d : a->hkv * a->d) ||
	    a->hkv < 1 || a->hq % a->hkv)
		return -1;
	return q->rank;
}

int ar_shape_onnx_attention(InferCtx *c, ArNode *n)
{
	ArTensor *q, *pk = ar_in(c, n, 4), *pv = ar_in(c, n, 5);
	ArAttnDims a;
	int64_t dims[4], past = 0;
	int rank, rc;

	if ((rc = ar_need(c, n, 0, &q)) || !ar_in(c, n, 1) || !ar_in(c, n, 2))
		return rc ? rc : ar_node_fail(c, n, "needs Q, K and V");
	if ((rank = ar_onnx_attention_dims(c->g, n, &a)) < 0)
		return ar_node_fail(c, n, "Q, K and V must be (B, heads, seq, "
				    "head_size) or (B, seq, heads x head_size)"
				    " with q_num_heads and kv_num_heads, "
				    "q_num_heads a multiple of kv_num_heads");
	if (!pk != !pv || (pk && (pk->rank != 4 || pv->rank != 4 ||
				  pk->dims[2] != pv->dims[2])))
		return ar_node_fail(c, n, "past_key and past_value must be both "
				    "(B, kv_num_heads, past, head_size)");
	if (pk)
		past = pk->dims[2];
	if (rank == 4) {
		dims[0] = a.b, dims[1] = a.hq, dims[2] = a.s, dims[3] = a.e;
	} else {
		dims[0] = a.b, dims[1] = a.s, dims[2] = a.hq * a.e;
	}
	ar_set_shape(ar_out(c, n, 0), q->dtype, rank, dims);
	dims[0] = a.b, dims[1] = a.hkv, dims[2] = past + a.t, dims[3] = a.d;
	ar_set_shape(ar_out(c, n, 1), q->dtype, 4, dims);
	dims[3] = a.e;
	ar_set_shape(ar_out(c, n, 2), q->dtype, 4, dims);
	dims[1] = a.hq, dims[2] = a.s, dims[3] = past + a.t;
	ar_set_shape(ar_out(c, n, 3), q->dtype, 4, dims);
	return AR_OK;
}

/* The two products (2 d and 2 e per score) and the scale, mask and
 * softmax (three per score), over the past and new keys. */
int64_t ar_flops_onnx_attention(const ArGraph *g, const ArNode *n)
{
	ArAttnDims a;
	int64_t scores, f, past = 0;
	if (ar_onnx_attention_dims(g, n, &a) < 0)
		return 0;
	if (n->ninputs > 4 && n->inputs[4] >= 0 &&
	    g->tensors[n->inputs[4]].rank == 4)
		past = g->tensors[n->inputs[4]].dims[2];
	if (!ar_mul64(a.b, a.hq, &scores) || !ar_mul64(scores, a.s, &scores) ||
	    !ar_mul64(scores, a.t + past, &scores) ||
	    !ar_mul64(scores, 2 * a.d + 2 * a.e + 3, &f))
		return INT64_MAX;
	return f;
}
