/*
 * attention_ops.c — the attention ops of a graph to train, written as the
 * attention core they compute, so every later pass sees what an exported
 * core is: ONNX's Attention (opset 23; onnx/defs/nn/defs.cc, its function
 * body) and com.microsoft's MultiHeadAttention (onnxruntime's
 * ContribOperators.md) become, in a copy of the forward graph:
 *
 *   3-D Q, K, V (B, seq, heads x size): each split into heads,
 *     Reshape (B, seq, heads, size) and Transpose to (B, heads, seq, size);
 *   grouped-query K and V (fewer kv heads) expanded as repeat_kv does,
 *     Unsqueeze, Expand, Reshape: query head h reads kv head h / group;
 *   MatMul(Q, Transpose(K)), Mul by the scale (the attribute, else
 *     1/sqrt(head size)), the causal mask (is_causal, unidirectional: a
 *     constant lower triangle, Where), the attention mask (attn_mask:
 *     Add of a float one, Where of a boolean one; MultiHeadAttention's
 *     attention_bias: Add), Softmax on the last axis, MatMul by V;
 *   3-D Y: the heads merged back (Transpose, Reshape).
 *
 * So the math plan keeps what the decomposition keeps (Q, K^T, V and the
 * probabilities, per query head), --attention flash|efficient fuses it
 * (train/attention.c, grouped-query K and V unexpanded for flash),
 * --checkpoint selective recomputes it, and its FLOPs are the steps'.  A
 * qk_matmul_output that is read comes from the step its mode names.
 * com.microsoft's Attention first projects its input: MatMul by its
 * weights (in, q + k + v hidden), Add of its bias, Split into Q, K and V
 * (qkv_hidden_sizes, else three equal parts), as GPT-2's exported c_attn.
 * Refused, exit 2 naming the node: a KV cache (past inputs, present
 * outputs read), softcap, softmax_precision other than Q's format,
 * nonpad_kv_seqlen; MultiHeadAttention's packed layouts, bias and
 * key_padding_mask; com.microsoft Attention's mask_index and rotary;
 * GroupQueryAttention (a decoding op: its KV cache, seqlens_k and
 * total_sequence_length are its inputs).
 */
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_copy.h"

typedef struct Lower {
	ArGraph *g;
	const ArNode *n;
	int64_t opset;          /* the default domain's, for the steps */
	ArDType dt;             /* Q's format */
} Lower;

static int tensor(Lower *l, const char *suffix, ArDType dt, int rank,
		  const int64_t *dims)
{
	char name[512];
	int t;
	ArTensor *x;
	snprintf(name, sizeof name, "%s%s", l->n->name, suffix);
	t = ar_graph_add_tensor(l->g, name);
	x = &l->g->tensors[t];
	x->dtype = dt;
	x->rank = rank;
	for (int i = 0; i < rank; i++)
		x->dims[i] = dims[i];
	ar_tensor_set_bytes(x, NULL);
	return t;
}

/* A constant with its values (nbytes of them). */
static int constant(Lower *l, const char *suffix, ArDType dt, int rank,
		    const int64_t *dims, const void *vals, size_t nbytes)
{
	int t = tensor(l, suffix, dt, rank, dims);
	ArTensor *x = &l->g->tensors[t];
	x->kind = AR_TK_CONSTANT;
	x->data = ar_xmalloc(nbytes + 1);
	memcpy(x->data, vals, nbytes);
	return t;
}

static int ints(Lower *l, const char *suffix, const int64_t *v, int count)
{
	int64_t n = count;
	return constant(l, suffix, AR_DT_INT64, 1, &n, v,
			(size_t)count * sizeof *v);
}

static int scalar(Lower *l, const char *suffix, float v)
{
	return constant(l, suffix, AR_DT_FLOAT, 0, NULL, &v, sizeof v);
}

static ArNode *step(Lower *l, const char *suffix, const char *op,
		    const int *in, int nin, int out)
{
	char name[512];
	int id;
	ArNode *n;
	snprintf(name, sizeof name, "%s%s", l->n->name, suffix);
	id = ar_graph_add_node(l->g, name, op, "");
	n = &l->g->nodes[id];
	ar_node_set_io(n, in, nin, &out, 1);
	n->opset = l->opset;
	n->phase = l->n->phase;
	l->g->tensors[out].producer = id;
	return n;
}

static void ints_attr(Lower *l, ArNode *n, const char *name,
		      const int64_t *v, int count)
{
	ArAttr *a = ar_node_add_attr(l->g, n, name, AR_ATTR_INTS);
	a->ints = ar_xmalloc((size_t)count * sizeof *a->ints);
	memcpy(a->ints, v, (size_t)count * sizeof *v);
	a->nints = count;
}

/* x (B, seq, heads x size) as (B, heads, seq, size), or (B, heads, size,
 * seq) with `keys` (K^T for the product). */
static int split_heads(Lower *l, int x, const char *what, int64_t heads,
		       bool keys)
{
	const ArTensor *t = &l->g->tensors[x];
	ArDType dt = t->dtype;
	int64_t b = t->dims[0], s = t->dims[1], d = t->dims[2] / heads;
	int64_t shape[4] = {b, s, heads, d}, out[4] = {b, heads, s, d};
	int64_t perm[4] = {0, 2, 1, 3}, kperm[4] = {0, 2, 3, 1};
	char sfx[64];
	int in[2], r, y;
	snprintf(sfx, sizeof sfx, ".%s.shape", what);
	in[0] = x, in[1] = ints(l, sfx, shape, 4);
	snprintf(sfx, sizeof sfx, ".%s.heads", what);
	r = tensor(l, sfx, dt, 4, shape);
	step(l, sfx, "Reshape", in, 2, r);
	if (keys)
		out[2] = d, out[3] = s;
	snprintf(sfx, sizeof sfx, ".%s.t", what);
	y = tensor(l, sfx, dt, 4, out);
	ints_attr(l, step(l, sfx, "Transpose", &r, 1, y), "perm",
		  keys ? kperm : perm, 4);
	return y;
}

/* x (B, kv heads, rows, cols) repeated to `heads` (repeat_kv). */
static int expand_heads(Lower *l, int x, const char *what, int64_t heads)
{
	const ArTensor *t = &l->g->tensors[x];
	ArDType dt = t->dtype;
	int64_t b = t->dims[0], g = t->dims[1], r = t->dims[2], c = t->dims[3];
	int64_t one[5] = {b, g, 1, r, c}, rep[5] = {b, g, heads / g, r, c};
	int64_t out[4] = {b, heads, r, c}, axis = 2;
	char sfx[64];
	int in[2], u, e, y;
	snprintf(sfx, sizeof sfx, ".%s.unsq", what);
	in[0] = x, in[1] = ints(l, ".axes", &axis, 1);
	u = tensor(l, sfx, dt, 5, one);
	step(l, sfx, "Unsqueeze", in, 2, u);
	snprintf(sfx, sizeof sfx, ".%s.exp", what);
	in[0] = u, in[1] = ints(l, ".expand", rep, 5);
	e = tensor(l, sfx, dt, 5, rep);
	step(l, sfx, "Expand", in, 2, e);
	snprintf(sfx, sizeof sfx, ".%s.rep", what);
	in[0] = e, in[1] = ints(l, ".rep.shape", out, 4);
	y = tensor(l, sfx, dt, 4, out);
	step(l, sfx, "Reshape", in, 2, y);
	return y;
}

/* A constant boolean (s, t) lower triangle, true where a query attends
 * (top-left aligned, as the ONNX op's is_causal). */
static int causal_mask(Lower *l, int64_t s, int64_t t)
{
	int64_t dims[2] = {s, t};
	size_t n = (size_t)(s * t);
	unsigned char *m = ar_xcalloc(n + 1, 1);
	int c;
	for (int64_t i = 0; i < s; i++)
		for (int64_t j = 0; j <= i && j < t; j++)
			m[i * t + j] = 1;
	c = constant(l, ".causal", AR_DT_BOOL, 2, dims, m, n);
	free(m);
	return c;
}

/* What one op gives the core, from its inputs and attributes. */
typedef struct Spec {
	ArAttnDims a;
	int rank;               /* of Q: 3 or 4 */
	int q, k, v;            /* the inputs, as they come */
	int x, w, bias;         /* com.microsoft Attention's projection */
	int64_t sizes[3];       /* its Q, K, V hidden sizes */
	bool k4;                /* K and V 4-D while Q is 3-D (MHA's BNSH) */
	int mask;               /* attn_mask / attention_bias, or -1 */
	bool causal;
	float scale;
	int64_t qk_mode;        /* which step output 3 is */
} Spec;

/* The core on 4-D q, kT, v of s; y the output tensor, qk output 3 or -1. */
static void core(Lower *l, const Spec *s, int q, int kt, int v, int y,
		 int qk)
{
	const ArAttnDims *a = &s->a;
	int64_t sc[4] = {a->b, a->hq, a->s, a->t};
	int in[3], t, u;
	ArDType dt = l->dt;
	in[0] = q, in[1] = kt;
	t = tensor(l, ".scores", dt, 4, sc);
	step(l, ".scores", "MatMul", in, 2, t);
	in[0] = t, in[1] = scalar(l, ".scale", s->scale);
	u = qk >= 0 && s->qk_mode == 0 ? qk : tensor(l, ".scaled", dt, 4, sc);
	step(l, ".scaled", "Mul", in, 2, u);
	if (s->causal) {
		in[0] = causal_mask(l, a->s, a->t), in[1] = u;
		in[2] = scalar(l, ".neg_inf", -INFINITY);
		u = tensor(l, ".causal_masked", dt, 4, sc);
		step(l, ".causal_masked", "Where", in, 3, u);
	}
	if (s->mask >= 0) {
		bool where = l->g->tensors[s->mask].dtype == AR_DT_BOOL;
		int m = tensor(l, ".masked", dt, 4, sc);
		if (where) {
			in[0] = s->mask, in[1] = u;
			in[2] = scalar(l, ".mask_inf", -INFINITY);
		} else {
			in[0] = u, in[1] = s->mask;
		}
		step(l, ".masked", where ? "Where" : "Add", in, where ? 3 : 2,
		     m);
		u = m;
	}
	/* Mode 0 is the scaled scores (above), modes 1 and 2 (after the
	 * masks, after softcap: none here) the masked ones, 3 the
	 * probabilities (below). */
	if (qk >= 0 && (s->qk_mode == 1 || s->qk_mode == 2) && u != qk) {
		in[0] = u;
		step(l, ".qk", "Identity", in, 1, qk);
	}
	t = qk >= 0 && s->qk_mode == 3 ? qk : tensor(l, ".probs", dt, 4, sc);
	ar_node_add_attr(l->g, step(l, ".probs", "Softmax", &u, 1, t), "axis",
			 AR_ATTR_INT)->i = -1;
	in[0] = t, in[1] = v;
	step(l, ".ctx", "MatMul", in, 2, y);
}

/* Whether tensor t of src is used: read by a node or a graph output. */
static bool used(const ArGraph *src, const int *readers, int t)
{
	return t >= 0 && (readers[t] || src->tensors[t].kind == AR_TK_OUTPUT);
}

static int refuse(ArError *err, const ArNode *n, const char *what)
{
	return ar_fail(err, AR_EXIT_MODEL, "node '%s' (%s): --train writes it "
		       "as its attention core, which takes no %s", n->name,
		       n->op, what);
}

/* ONNX's Attention: inputs Q, K, V, attn_mask, past_key, past_value,
 * nonpad_kv_seqlen; outputs Y, present_key, present_value,
 * qk_matmul_output. */
static int onnx_spec(const ArGraph *g, const ArNode *n, const int *readers,
		     Spec *s, ArError *err)
{
	int64_t prec = ar_attr_int(n, "softmax_precision", 0);
	if ((s->rank = ar_onnx_attention_dims(g, n, &s->a)) < 0)
		return ar_fail(err, AR_EXIT_MODEL, "node '%s' (Attention): Q, "
			       "K and V fit none of its layouts", n->name);
	for (int j = 4; j < n->ninputs; j++)
		if (n->inputs[j] >= 0)
			return refuse(err, n, j < 6 ? "KV cache (past_key, "
				      "past_value)" : "nonpad_kv_seqlen");
	for (int j = 1; j < 3 && j < n->noutputs; j++)
		if (used(g, readers, n->outputs[j]))
			return refuse(err, n, "KV cache (present_key, "
				      "present_value read)");
	if (ar_attr_float(n, "softcap", 0.0f) != 0.0f)
		return refuse(err, n, "softcap");
	if (prec && prec != (int64_t)g->tensors[n->inputs[0]].dtype)
		return refuse(err, n, "softmax_precision other than Q's format");
	s->q = n->inputs[0], s->k = n->inputs[1], s->v = n->inputs[2];
	s->k4 = false;
	s->mask = n->ninputs > 3 ? n->inputs[3] : -1;
	s->causal = ar_attr_int(n, "is_causal", 0) != 0;
	s->scale = ar_attr_float(n, "scale", 1.0f / sqrtf((float)s->a.d));
	s->qk_mode = ar_attr_int(n, "qk_matmul_output_mode", 0);
	if (s->qk_mode < 0 || s->qk_mode > 3)
		return refuse(err, n, "qk_matmul_output_mode outside 0-3");
	return AR_OK;
}

/* com.microsoft MultiHeadAttention: query (B, S, N H), key and value
 * (B, L, N H) or (B, N, L, H); attention_bias (input 5) added; outputs
 * output, present_key, present_value, qk (the scaled scores). */
static int mha_spec(const ArGraph *g, const ArNode *n, const int *readers,
		    Spec *s, ArError *err)
{
	static const char *const inputs[] = {
		NULL, NULL, NULL, "bias", "key_padding_mask", NULL,
		"KV cache (past_key)", "KV cache (past_value)",
		"past_sequence_length", "cache_indirection"};
	const ArTensor *q, *k, *v;
	int64_t heads = ar_attr_int(n, "num_heads", 0);
	for (int j = 3; j < n->ninputs && j < 10; j++)
		if (inputs[j] && n->inputs[j] >= 0)
			return refuse(err, n, inputs[j]);
	for (int j = 1; j < 3 && j < n->noutputs; j++)
		if (used(g, readers, n->outputs[j]))
			return refuse(err, n, "KV cache (present_key, "
				      "present_value read)");
	if (n->ninputs < 3 || n->inputs[1] < 0 || n->inputs[2] < 0)
		return refuse(err, n, "packed QKV");
	q = &g->tensors[n->inputs[0]];
	k = &g->tensors[n->inputs[1]];
	v = &g->tensors[n->inputs[2]];
	if (q->rank != 3 || k->rank != v->rank ||
	    (k->rank != 3 && k->rank != 4) || heads < 1 || q->dims[2] % heads)
		return refuse(err, n, "packed Q, K or V (only (B, S, N H) query "
			      "with (B, L, N H) or (B, N, L, H) key and value)");
	s->a.b = q->dims[0], s->a.hq = s->a.hkv = heads;
	s->a.s = q->dims[1], s->a.d = q->dims[2] / heads;
	s->k4 = k->rank == 4;
	s->a.t = k->dims[s->k4 ? 2 : 1];
	s->a.e = s->k4 ? v->dims[3] : v->dims[2] / heads;
	s->rank = 3;
	s->q = n->inputs[0], s->k = n->inputs[1], s->v = n->inputs[2];
	s->mask = n->ninputs > 5 ? n->inputs[5] : -1;
	s->causal = ar_attr_int(n, "unidirectional", 0) != 0;
	s->scale = ar_attr_float(n, "scale", 1.0f / sqrtf((float)s->a.d));
	s->qk_mode = 0;
	return AR_OK;
}

/* com.microsoft Attention: input (B, S, in), weights (in, q + k + v),
 * bias, mask_index, past, attention_bias (input 5), past_sequence_length;
 * outputs output and present. */
static int ms_attention_spec(const ArGraph *g, const ArNode *n,
			     const int *readers, Spec *s, ArError *err)
{
	const ArAttr *hs = ar_attr(n, "qkv_hidden_sizes");
	const ArTensor *x, *w;
	int64_t heads = ar_attr_int(n, "num_heads", 0), all;
	for (int j = 3; j < n->ninputs; j++)
		if (j != 5 && n->inputs[j] >= 0)
			return refuse(err, n, j == 3 ? "mask_index" :
				      j == 4 ? "KV cache (past)" :
				      "past_sequence_length");
	if (n->noutputs > 1 && used(g, readers, n->outputs[1]))
		return refuse(err, n, "KV cache (present read)");
	if (ar_attr_int(n, "do_rotary", 0))
		return refuse(err, n, "rotary embedding (do_rotary)");
	x = &g->tensors[n->inputs[0]];
	w = &g->tensors[n->inputs[1]];
	all = w->rank == 2 ? w->dims[1] : 0;
	for (int i = 0; i < 3; i++)
		s->sizes[i] = hs && hs->nints == 3 ? hs->ints[i] : all / 3;
	if (x->rank != 3 || w->rank != 2 || heads < 1 ||
	    s->sizes[0] + s->sizes[1] + s->sizes[2] != all ||
	    s->sizes[0] != s->sizes[1] || s->sizes[0] % heads ||
	    s->sizes[2] % heads)
		return ar_fail(err, AR_EXIT_MODEL, "node '%s' (Attention): "
			       "--train takes a (B, S, in) input with (in, q + "
			       "k + v) weights, q and k of one size, num_heads "
			       "dividing each", n->name);
	s->x = n->inputs[0], s->w = n->inputs[1];
	s->bias = n->ninputs > 2 ? n->inputs[2] : -1;
	s->a.b = x->dims[0], s->a.s = s->a.t = x->dims[1];
	s->a.hq = s->a.hkv = heads;
	s->a.d = s->sizes[0] / heads, s->a.e = s->sizes[2] / heads;
	s->rank = 3;
	s->k4 = false;
	s->mask = n->ninputs > 5 ? n->inputs[5] : -1;
	s->causal = ar_attr_int(n, "unidirectional", 0) != 0;
	s->scale = ar_attr_float(n, "scale", 1.0f / sqrtf((float)s->a.d));
	s->qk_mode = 0;
	return AR_OK;
}

/* Its projection: s->q, s->k, s->v from MatMul, Add and Split. */
static void project(Lower *l, Spec *s)
{
	int64_t dims[3] = {s->a.b, s->a.s, s->sizes[0] + s->sizes[1] +
			   s->sizes[2]};
	int in[2], p, out[3];
	ArNode *n;
	in[0] = s->x, in[1] = s->w;
	p = tensor(l, ".qkv", l->dt, 3, dims);
	step(l, ".qkv", "MatMul", in, 2, p);
	if (s->bias >= 0) {
		int b = tensor(l, ".qkv_bias", l->dt, 3, dims);
		in[0] = p, in[1] = s->bias;
		step(l, ".qkv_bias", "Add", in, 2, b);
		p = b;
	}
	for (int i = 0; i < 3; i++) {
		dims[2] = s->sizes[i];
		out[i] = tensor(l, (const char *[]){".q", ".k", ".v"}[i],
				l->dt, 3, dims);
	}
	in[0] = p;
	if (l->opset >= 13)
		in[1] = ints(l, ".split", s->sizes, 3);
	n = step(l, ".split", "Split", in, l->opset >= 13 ? 2 : 1, out[0]);
	ar_node_set_io(n, in, l->opset >= 13 ? 2 : 1, out, 3);
	for (int i = 0; i < 3; i++)
		l->g->tensors[out[i]].producer = (int)(n - l->g->nodes);
	ar_node_add_attr(l->g, n, "axis", AR_ATTR_INT)->i = 2;
	if (l->opset < 13)
		ints_attr(l, n, "split", s->sizes, 3);
	s->q = out[0], s->k = out[1], s->v = out[2];
}

/* Node n of src as its core, into l->g (src's tensor ids). */
static int lower(Lower *l, const ArGraph *src, const int *readers,
		 ArError *err)
{
	const ArNode *n = l->n;
	bool ms = !ar_default_domain(n->domain);
	bool proj = ms && !strcmp(n->op, "Attention");
	Spec s = {.x = -1};
	int q, k, v, kt, y, qk, rc;
	int64_t tperm[4] = {0, 1, 3, 2}, merge[4] = {0, 2, 1, 3};

	if (ms && !strcmp(n->op, "GroupQueryAttention"))
		return ar_fail(err, AR_EXIT_MODEL, "node '%s' "
			       "(GroupQueryAttention): ONNX Runtime's KV-cache "
			       "decoding op (seqlens_k, total_sequence_length) "
			       "has no training form; export the model's "
			       "attention as ONNX's Attention or op by op",
			       n->name);
	if ((rc = (proj ? ms_attention_spec : ms ? mha_spec :
		   onnx_spec)(src, n, readers, &s, err)))
		return rc;
	l->dt = src->tensors[proj ? s.x : s.q].dtype;
	{
		int64_t sc;
		if (!ar_mul64(s.a.b, s.a.hq, &sc) || !ar_mul64(sc, s.a.s, &sc) ||
		    !ar_mul64(sc, s.a.t, &sc) || !ar_mul64(sc, 8, &sc))
			return ar_fail(err, AR_EXIT_MODEL, "node '%s' (%s): its "
				       "score matrices are too large to plan",
				       n->name, n->op);
	}
	if (proj)
		project(l, &s);
	qk = n->noutputs > 3 && used(src, readers, n->outputs[3]) ?
	     n->outputs[3] : -1;
	if (s.rank == 4) {
		q = s.q, k = s.k, v = s.v;
	} else {
		q = split_heads(l, s.q, "q", s.a.hq, false);
		k = s.k4 ? s.k : split_heads(l, s.k, "k", s.a.hkv,
					     s.a.hkv == s.a.hq);
		v = s.k4 ? s.v : split_heads(l, s.v, "v", s.a.hkv, false);
	}
	if (s.a.hkv != s.a.hq) {
		k = expand_heads(l, k, "k", s.a.hq);
		v = expand_heads(l, v, "v", s.a.hq);
	}
	kt = k;
	if (s.rank == 4 || s.k4 || s.a.hkv != s.a.hq) {
		int64_t dims[4] = {s.a.b, s.a.hq, s.a.d, s.a.t};
		kt = tensor(l, ".kT", l->dt, 4, dims);
		ints_attr(l, step(l, ".kT", "Transpose", &k, 1, kt), "perm",
			  tperm, 4);
	}
	if (s.rank == 4) {
		core(l, &s, q, kt, v, n->outputs[0], qk);
	} else {
		int64_t dims[4] = {s.a.b, s.a.hq, s.a.s, s.a.e};
		int64_t flat[3] = {s.a.b, s.a.s, s.a.hq * s.a.e};
		int in[2], m;
		y = tensor(l, ".y4", l->dt, 4, dims);
		core(l, &s, q, kt, v, y, qk);
		dims[1] = s.a.s, dims[2] = s.a.hq;
		m = tensor(l, ".merged", l->dt, 4, dims);
		ints_attr(l, step(l, ".merged", "Transpose", &y, 1, m), "perm",
			  merge, 4);
		in[0] = m, in[1] = ints(l, ".out.shape", flat, 3);
		step(l, ".out", "Reshape", in, 2, n->outputs[0]);
	}
	return AR_OK;
}

static bool attention_op(const ArNode *n)
{
	if (ar_default_domain(n->domain))
		return !strcmp(n->op, "Attention");
	return !strcmp(n->domain, "com.microsoft") &&
	       (!strcmp(n->op, "MultiHeadAttention") ||
		!strcmp(n->op, "Attention") ||
		!strcmp(n->op, "GroupQueryAttention"));
}

int ar_train_attention_ops(const ArGraph *src, ArGraph **out, ArError *err)
{
	int *readers = ar_xcalloc((size_t)src->ntensors + 1, sizeof *readers);
	bool *drop, *none;
	int rc = AR_OK, found = 0;
	ArGraph *g;

	*out = NULL;
	for (int i = 0; i < src->nnodes; i++) {
		found += attention_op(&src->nodes[i]);
		for (int j = 0; j < src->nodes[i].ninputs; j++)
			if (src->nodes[i].inputs[j] >= 0)
				readers[src->nodes[i].inputs[j]]++;
	}
	if (!found) {
		free(readers);
		return AR_OK;
	}
	g = ar_copy_tensors(src);
	drop = ar_xcalloc((size_t)src->ntensors + 1, sizeof *drop);
	for (int i = 0; i < src->nnodes && !rc; i++) {
		const ArNode *n = &src->nodes[i];
		Lower l = {g, n, src->opset, AR_DT_FLOAT};
		if (!attention_op(n)) {
			if (ar_copy_node(g, n, n->inputs, n->outputs, err) < 0)
				rc = err->code;
			continue;
		}
		rc = lower(&l, src, readers, err);
		/* The outputs nothing reads (caches, scores) go. */
		for (int j = 1; j < n->noutputs; j++)
			if (n->outputs[j] >= 0 &&
			    !used(src, readers, n->outputs[j]))
				drop[n->outputs[j]] = true;
	}
	free(readers);
	if (rc) {
		free(drop);
		ar_graph_free(g);
		return rc;
	}
	none = ar_xcalloc((size_t)g->nnodes + 1, sizeof *none);
	{
		bool *dt = ar_xcalloc((size_t)g->ntensors + 1, sizeof *dt);
		memcpy(dt, drop, (size_t)src->ntensors * sizeof *dt);
		ar_graph_drop(g, none, dt);
		free(dt);
	}
	free(none);
	free(drop);
	*out = g;
	return AR_OK;
}
