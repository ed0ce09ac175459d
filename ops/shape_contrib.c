/*
 * shape_contrib.c — shapes of the com.microsoft ops ONNX Runtime's
 * transformer optimizer emits: the attention ops with their KV caches,
 * the fused normalisations, the embedding layer, and the fused matrix
 * products.  The rules follow ORT's contrib schemas (bert_defs.cc,
 * shape_inference_functions.cc); where ORT leaves a dim unknown, arenac
 * takes the largest size a run can need, since it plans one static size.
 *
 * KV caches.  past is (batch, heads, past_len, head_size) (Attention:
 * (2, batch, heads, past_len, head_size)); present holds past and this
 * step's keys or values.  A growing cache (the default) makes present
 * past_len + new tokens long.  A static cache (--max-seq N, or ORT's
 * share-buffer forms: Attention's past_present_share_buffer, a
 * MultiHeadAttention given past_sequence_length) has N positions and the
 * op writes the new tokens in place: present has past's shape, and the
 * planner gives it past's bytes (planner/kvcache.c).
 */
#include <stdlib.h>
#include <string.h>

#include "infer_ops.h"

/* Input j's single value when it is a compile-time constant, else -1. */
static int64_t const_scalar(InferCtx *c, const ArNode *n, int j)
{
	const ArTensor *t = ar_in(c, n, j);
	if (!t || !t->data || !ar_is_const(c, n->inputs[j]) ||
	    ar_numel(t) != 1 || !ar_dtype_is_int(t->dtype))
		return -1;
	return ar_get_int(t, 0);
}

static int need_rank(InferCtx *c, const ArNode *n, const ArTensor *t,
		     int rank)
{
	if (t->rank != rank)
		return ar_node_fail(c, n, "input '%s' has rank %d; expected %d",
				    t->name, t->rank, rank);
	return AR_OK;
}

/* heads from the attribute; d split into heads equal parts. */
static int head_size(InferCtx *c, const ArNode *n, int64_t d, int64_t heads,
		     int64_t *out)
{
	if (heads < 1 || d % heads)
		return ar_node_fail(c, n, "%lld values do not split into %lld "
				    "heads", (long long)d, (long long)heads);
	*out = d / heads;
	return AR_OK;
}

/*
 * Output k as the cache in past (axis seq its sequence): past's shape,
 * seq being past's length plus grow for a growing cache; with --max-seq
 * past must hold exactly that many positions.
 */
static int present_of(InferCtx *c, const ArNode *n, int k,
		      const ArTensor *past, int seq, int64_t grow,
		      bool share)
{
	int64_t dims[AR_MAX_RANK], max = c->g->max_seq;

	if (max > 0 && past->dims[seq] != max)
		return ar_node_fail(c, n, "KV cache '%s' holds %lld positions, "
				    "not the %lld of --max-seq", past->name,
				    (long long)past->dims[seq], (long long)max);
	memcpy(dims, past->dims, sizeof dims);
	if (!share && max <= 0 && !ar_add64(dims[seq], grow, &dims[seq]))
		return ar_node_fail(c, n, "cache length overflows");
	ar_set_shape(ar_out(c, n, k), past->dtype, past->rank, dims);
	return AR_OK;
}

/* Without a past, outputs 1 and 2 are caches of len positions:
 * (batch, heads, len, hk) and (batch, heads, len, hv). */
static void fresh_caches(InferCtx *c, const ArNode *n, const ArTensor *q,
			 int64_t heads, int64_t len, int64_t hk, int64_t hv)
{
	int64_t dims[4] = {q->dims[0], heads, len, hk};
	ar_set_shape(ar_out(c, n, 1), q->dtype, 4, dims);
	dims[3] = hv;
	ar_set_shape(ar_out(c, n, 2), q->dtype, 4, dims);
}

/* Output 3, the attention scores: (batch, heads, S, total). */
static void scores(InferCtx *c, const ArNode *n, const ArTensor *q,
		   int64_t heads, int64_t total)
{
	int64_t dims[4] = {q->dims[0], heads, q->dims[1], total};
	ar_set_shape(ar_out(c, n, 3), q->dtype, 4, dims);
}

/*
 * Attention (com.microsoft): input (B, S, in_hidden), weights (in_hidden,
 * q + k + v hidden), bias, mask_index, past (2, B, heads, P, head),
 * attention_bias, past_sequence_length -> output (B, S, v_hidden),
 * present.
 */
int ar_shape_attention(InferCtx *c, ArNode *n)
{
	ArTensor *x, *w, *past = ar_in(c, n, 4);
	int64_t hid[3], dims[5], heads = ar_attr_int(n, "num_heads", 0);
	int64_t head = 0;
	int64_t *qkv, nq;
	int rc;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &w)) ||
	    (rc = need_rank(c, n, x, 3)) || (rc = need_rank(c, n, w, 2)))
		return rc;
	/* Without qkv_hidden_sizes, q, k and v are a third each. */
	ar_attr_ints(n, "qkv_hidden_sizes", &qkv, &nq);
	for (int i = 0; i < 3; i++)
		hid[i] = nq == 3 ? qkv[i] : w->dims[1] / 3;
	free(qkv);
	if ((nq >= 0 && nq != 3) || w->dims[0] != x->dims[2] ||
	    hid[0] + hid[1] + hid[2] != w->dims[1])
		return ar_node_fail(c, n, "weights '%s' [%lld, %lld] do not "
				    "project the input's %lld features onto "
				    "q, k and v", w->name,
				    (long long)w->dims[0],
				    (long long)w->dims[1],
				    (long long)x->dims[2]);
	dims[0] = x->dims[0], dims[1] = x->dims[1], dims[2] = hid[2];
	ar_set_shape(ar_out(c, n, 0), x->dtype, 3, dims);
	if (!ar_out(c, n, 1))
		return AR_OK;
	if (past) {
		if ((rc = need_rank(c, n, past, 5)))
			return rc;
		return present_of(c, n, 1, past, 3, x->dims[1],
				  ar_attr_int(n, "past_present_share_buffer",
					      0) != 0);
	}
	if ((rc = head_size(c, n, hid[1], heads, &head)))
		return rc;
	dims[0] = 2, dims[1] = x->dims[0], dims[2] = heads;
	dims[3] = x->dims[1], dims[4] = head;
	ar_set_shape(ar_out(c, n, 1), x->dtype, 5, dims);
	return AR_OK;
}

/*
 * MultiHeadAttention: query (B, S, hidden) or packed QKV (B, S, N, 3, H);
 * key (B, L, hidden), packed KV (B, L, N, 2, H) or per-head (B, N, L, H);
 * value (B, L, v_hidden) or (B, N, L, Hv); bias, key_padding_mask,
 * attention_bias, past_key, past_value (B, N, P, H), past_sequence_length,
 * cache_indirection -> output, present_key, present_value, qk.
 */
int ar_shape_mha(InferCtx *c, ArNode *n)
{
	ArTensor *q, *k = ar_in(c, n, 1), *v = ar_in(c, n, 2);
	ArTensor *pk = ar_in(c, n, 6), *pv = ar_in(c, n, 7);
	int64_t heads = ar_attr_int(n, "num_heads", 0), out[3], len;
	int64_t hk = 0, hv = 0;
	int64_t total;
	bool share = ar_in(c, n, 8) ||
		     ar_attr_int(n, "past_present_share_buffer", 0);
	int rc;

	if ((rc = ar_need(c, n, 0, &q)))
		return rc;
	out[0] = q->dims[0], out[1] = q->dims[1];
	if (q->rank == 5) {                     /* packed QKV */
		hk = hv = q->dims[4];
		len = q->dims[1];
		out[2] = q->dims[2] * hk;
	} else if (q->rank == 3 && v && (v->rank == 3 || v->rank == 4)) {
		len = v->dims[v->rank - 2];
		if (v->rank == 4) {
			hv = v->dims[3];
			out[2] = v->dims[1] * hv;
		} else if ((rc = head_size(c, n, v->dims[2], heads, &hv))) {
			return rc;
		} else {
			out[2] = v->dims[2];
		}
		if ((rc = head_size(c, n, q->dims[2], heads, &hk)))
			return rc;
	} else if (q->rank == 3 && k && k->rank == 5) {  /* packed KV */
		len = k->dims[1];
		hk = hv = k->dims[4];
		out[2] = q->dims[2];
	} else {
		return ar_node_fail(c, n, "query, key and value have none of "
				    "the layouts MultiHeadAttention takes");
	}
	ar_set_shape(ar_out(c, n, 0), q->dtype, 3, out);
	total = len;
	if (pk && pv) {
		if ((rc = need_rank(c, n, pk, 4)) ||
		    (rc = need_rank(c, n, pv, 4)) ||
		    (rc = present_of(c, n, 1, pk, 2, len, share)) ||
		    (rc = present_of(c, n, 2, pv, 2, len, share)))
			return rc;
		total = ar_out(c, n, 1) ? ar_out(c, n, 1)->dims[2] :
			pk->dims[2] + len;
	} else {
		fresh_caches(c, n, q, heads, len, hk, hv);
	}
	scores(c, n, q, heads, total);
	return AR_OK;
}

/*
 * GroupQueryAttention: query (B, S, heads * H) with key and value
 * (B, L, kv_heads * H), or packed (B, S, (heads + 2 kv_heads) * H);
 * past_key, past_value (B, kv_heads, P, H), seqlens_k,
 * total_sequence_length, ... -> output (B, S, heads * H), present_key,
 * present_value, output_qk.  A constant total_sequence_length sizes a
 * growing cache as ORT does (max(total, P)); without one, P + L, the
 * most this step can hold.
 */
int ar_shape_gqa(InferCtx *c, ArNode *n)
{
	ArTensor *q, *k = ar_in(c, n, 1), *v = ar_in(c, n, 2);
	ArTensor *pk = ar_in(c, n, 3), *pv = ar_in(c, n, 4);
	int64_t heads = ar_attr_int(n, "num_heads", 0),
		kvh = ar_attr_int(n, "kv_num_heads", 0),
		total = const_scalar(c, n, 6), out[3], len, head = 0, pres;
	int rc;

	if ((rc = ar_need(c, n, 0, &q)) || (rc = need_rank(c, n, q, 3)))
		return rc;
	if (kvh < 1 || heads < 1 || heads % kvh)
		return ar_node_fail(c, n, "num_heads %lld is not a multiple of "
				    "kv_num_heads %lld", (long long)heads,
				    (long long)kvh);
	if (!k != !v)
		return ar_node_fail(c, n, "key and value must be both given "
				    "or both omitted");
	if (k) {
		if ((rc = need_rank(c, n, v, 3)) ||
		    (rc = head_size(c, n, q->dims[2], heads, &head)))
			return rc;
		if (v->dims[2] != kvh * head || k->rank != 3 ||
		    k->dims[2] != kvh * head)
			return ar_node_fail(c, n, "key and value must have "
					    "kv_num_heads x %lld = %lld "
					    "features", (long long)head,
					    (long long)(kvh * head));
		len = v->dims[1];
	} else {
		if ((rc = head_size(c, n, q->dims[2], heads + 2 * kvh, &head)))
			return rc;
		len = q->dims[1];
	}
	out[0] = q->dims[0], out[1] = q->dims[1], out[2] = heads * head;
	ar_set_shape(ar_out(c, n, 0), q->dtype, 3, out);
	if (pk && pv) {
		int64_t grow = len;
		if ((rc = need_rank(c, n, pk, 4)) ||
		    (rc = need_rank(c, n, pv, 4)))
			return rc;
		/* ORT: max(total, P) when total is known. */
		if (total >= 0)
			grow = total > pk->dims[2] ? total - pk->dims[2] : 0;
		if (c->g->max_seq > 0 && total > c->g->max_seq)
			return ar_node_fail(c, n, "total_sequence_length %lld "
					    "exceeds --max-seq %lld",
					    (long long)total,
					    (long long)c->g->max_seq);
		if ((rc = present_of(c, n, 1, pk, 2, grow, false)) ||
		    (rc = present_of(c, n, 2, pv, 2, grow, false)))
			return rc;
		pres = ar_out(c, n, 1) ? ar_out(c, n, 1)->dims[2] :
		       pk->dims[2] + grow;
	} else {
		pres = total > 0 ? total : len;
		fresh_caches(c, n, q, kvh, pres, head, head);
	}
	scores(c, n, q, heads, pres);
	return AR_OK;
}

/*
 * SkipLayerNormalization, SkipSimplifiedLayerNormalization: input,
 * skip (broadcast to input), gamma, beta/bias -> output, mean,
 * inv_std_var (float, the last axis 1), input_skip_bias_sum.
 */
int ar_shape_skiplayernorm(InferCtx *c, ArNode *n)
{
	ArTensor *x, *skip, *gamma;
	int64_t dims[AR_MAX_RANK];
	int rank, rc;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &skip)) ||
	    (rc = ar_need(c, n, 2, &gamma)) ||
	    (rc = ar_broadcast2(c, n, x->rank, x->dims, skip->rank,
				skip->dims, &rank, dims)))
		return rc;
	if (x->rank < 1 || gamma->rank < 1 || rank != x->rank ||
	    memcmp(dims, x->dims, (size_t)rank * sizeof *dims) ||
	    gamma->dims[gamma->rank - 1] != x->dims[x->rank - 1])
		return ar_node_fail(c, n, "skip '%s' and gamma '%s' must fit "
				    "input '%s'", skip->name, gamma->name,
				    x->name);
	ar_same_as(c, n, 0, x);
	ar_same_as(c, n, 3, x);
	dims[rank - 1] = 1;
	ar_set_shape(ar_out(c, n, 1), AR_DT_FLOAT, rank, dims);
	ar_set_shape(ar_out(c, n, 2), AR_DT_FLOAT, rank, dims);
	return AR_OK;
}

/*
 * EmbedLayerNormalization: input_ids (B, S), segment_ids, word, position
 * and segment embeddings (rows, hidden), gamma, beta, mask, position_ids
 * -> output (B, S, hidden), mask_index (B) int32, embedding_sum.
 */
int ar_shape_embedlayernorm(InferCtx *c, ArNode *n)
{
	ArTensor *ids, *word, *pos;
	int64_t dims[3], b;
	int rc;

	if ((rc = ar_need(c, n, 0, &ids)) || (rc = ar_need(c, n, 2, &word)) ||
	    (rc = ar_need(c, n, 3, &pos)) || (rc = need_rank(c, n, ids, 2)) ||
	    (rc = need_rank(c, n, word, 2)) || (rc = need_rank(c, n, pos, 2)))
		return rc;
	for (int j = 4; j <= 6; j++) {
		const ArTensor *t = ar_in(c, n, j);
		if (t && (t->rank < 1 || t->dims[t->rank - 1] != word->dims[1]))
			return ar_node_fail(c, n, "'%s' does not have the word "
					    "embedding's %lld features",
					    t->name, (long long)word->dims[1]);
	}
	if (pos->dims[1] != word->dims[1])
		return ar_node_fail(c, n, "position embedding '%s' does not "
				    "have the word embedding's %lld features",
				    pos->name, (long long)word->dims[1]);
	dims[0] = b = ids->dims[0], dims[1] = ids->dims[1];
	dims[2] = word->dims[1];
	ar_set_shape(ar_out(c, n, 0), word->dtype, 3, dims);
	ar_set_shape(ar_out(c, n, 1), AR_DT_INT32, 1, &b);
	ar_set_shape(ar_out(c, n, 2), word->dtype, 3, dims);
	return AR_OK;
}

/* BiasSplitGelu: X (B, S, D), bias (D) -> (B, S, D / 2). */
int ar_shape_bias_split_gelu(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t dims[AR_MAX_RANK];
	int rc = ar_need(c, n, 0, &x);

	if (rc || (rc = need_rank(c, n, x, 3)))
		return rc;
	if (x->dims[2] % 2)
		return ar_node_fail(c, n, "last dim %lld is odd",
				    (long long)x->dims[2]);
	memcpy(dims, x->dims, sizeof dims);
	dims[2] /= 2;
	ar_set_shape(ar_out(c, n, 0), x->dtype, 3, dims);
	return AR_OK;
}

/*
 * FusedMatMul's operand as MatMul sees it: transBatch moves the first
 * dim behind the batch dims (perm 1, ..., r-2, 0, r-1), trans swaps the
 * last two.
 */
static int fused_operand(InferCtx *c, const ArNode *n, int j,
			 const char *trans, const char *batch, ArTensor *out)
{
	ArTensor *t;
	int r, rc = ar_need(c, n, j, &t);

	if (rc)
		return rc;
	*out = *t;
	r = t->rank;
	if (ar_attr_int(n, batch, 0) && r >= 3) {
		memmove(out->dims, t->dims + 1,
			(size_t)(r - 2) * sizeof *t->dims);
		out->dims[r - 2] = t->dims[0];
	}
	if (ar_attr_int(n, trans, 0) && r >= 2) {
		int64_t d = out->dims[r - 1];
		out->dims[r - 1] = out->dims[r - 2];
		out->dims[r - 2] = d;
	}
	return AR_OK;
}

int ar_shape_fusedmatmul(InferCtx *c, ArNode *n)
{
	ArTensor a, b;
	int64_t dims[AR_MAX_RANK];
	int rank, rc;

	if ((rc = fused_operand(c, n, 0, "transA", "transBatchA", &a)) ||
	    (rc = fused_operand(c, n, 1, "transB", "transBatchB", &b)) ||
	    (rc = ar_matmul_dims(c, n, &a, &b, &rank, dims)))
		return rc;
	ar_set_shape(ar_out(c, n, 0), a.dtype, rank, dims);
	return AR_OK;
}
