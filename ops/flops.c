/*
 * flops.c — floating-point operations of one node, from its shapes: the
 * counts the op table (table.c) names, and the lookup that applies them.
 *
 * A multiply-add counts 2.  The numbers are for comparing recompute costs,
 * so they follow the usual conventions rather than any kernel: bilinear
 * ops count their products, pools their window, normalisations a few ops
 * per element, pure data movement (Reshape, Transpose, Concat, ...) zero,
 * and anything else one op per output element.  A count whose operands
 * are not what it expects falls back to one op per output element.  Sums
 * saturate instead of overflowing.
 */
#include <string.h>

#include "ops.h"

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

static const ArTensor *out0(const ArGraph *g, const ArNode *n)
{
	return n->noutputs && n->outputs[0] >= 0 ? &g->tensors[n->outputs[0]]
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

static int64_t per_output(const ArGraph *g, const ArNode *n, int64_t k)
{
	return mul_sat(numel(out0(g, n)), k);
}

int64_t ar_flops_none(const ArGraph *g, const ArNode *n)
{
	return 0;
}

/* Each output element: Cin/group x kernel multiply-adds (W's elements
 * per output channel, in whichever layout: a channels-last variant's
 * filter is TFLite's, ops.h ar_filter_perm), plus the bias; weights at
 * input wi, the bias (-1: none) at bi. */
static int64_t conv_flops(const ArGraph *g, const ArNode *n, int wi, int bi)
{
	const ArTensor *w = in(g, n, wi), *y = out0(g, n);
	int64_t out = numel(y), f, m;
	if (!w || w->rank < 2 || !y || y->rank < 2)
		return out;
	m = y->dims[n->domain && !strcmp(n->domain, AR_NHWC_DOMAIN) ?
		    y->rank - 1 : 1];
	if (m <= 0 || numel(w) % m)
		return out;
	f = mul_sat(2, mul_sat(out, numel(w) / m));
	return bi >= 0 && in(g, n, bi) ? add_sat(f, out) : f;
}

int64_t ar_flops_conv(const ArGraph *g, const ArNode *n)
{
	return conv_flops(g, n, 1, 2);
}

/* QLinearConv: x, x_scale, x_zp, w (3), ..., B (8). */
int64_t ar_flops_qlinearconv(const ArGraph *g, const ArNode *n)
{
	return conv_flops(g, n, 3, 8);
}

/* ConvInteger: inputs 2 and 3 are zero points, not a bias. */
int64_t ar_flops_convinteger(const ArGraph *g, const ArNode *n)
{
	return conv_flops(g, n, 1, -1);
}

/* Each input element scatters into Cout/group x kernel outputs. */
int64_t ar_flops_convtranspose(const ArGraph *g, const ArNode *n)
{
	const ArTensor *w = in(g, n, 1);
	if (!w || w->rank < 2)
		return numel(out0(g, n));
	return mul_sat(2, mul_sat(numel(in(g, n, 0)), dims_from(w, 1)));
}

/* M x N x K multiply-adds, K = numel(A) / M whichever way A is
 * transposed, plus C (input ci). */
static int64_t gemm_flops(const ArGraph *g, const ArNode *n, int ci)
{
	const ArTensor *a = in(g, n, 0), *y = out0(g, n);
	int64_t out = numel(y), f;
	if (!a || !y || y->rank != 2 || !y->dims[0])
		return out;
	f = mul_sat(2, mul_sat(out, numel(a) / y->dims[0]));
	return in(g, n, ci) ? add_sat(f, out) : f;
}

int64_t ar_flops_gemm(const ArGraph *g, const ArNode *n)
{
	return gemm_flops(g, n, 2);
}

/* QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C (6), ... */
int64_t ar_flops_qgemm(const ArGraph *g, const ArNode *n)
{
	return gemm_flops(g, n, 6);
}

/* Each output element: K multiply-adds. */
static int64_t matmul_flops(const ArGraph *g, const ArNode *n, int64_t k)
{
	return k < 0 ? numel(out0(g, n)) :
	       mul_sat(2, mul_sat(numel(out0(g, n)), k));
}

/* K = A's last dim. */
int64_t ar_flops_matmul(const ArGraph *g, const ArNode *n)
{
	const ArTensor *a = in(g, n, 0);
	return matmul_flops(g, n, a && a->rank >= 1 ? a->dims[a->rank - 1] :
					      -1);
}

/* FusedMatMul: with transA, K is A's second-to-last dim, or its first
 * when transBatchA moved that one there (shape_contrib.c). */
int64_t ar_flops_fusedmatmul(const ArGraph *g, const ArNode *n)
{
	const ArTensor *a = in(g, n, 0);
	int r = a ? a->rank : 0;
	if (r < 2)
		return ar_flops_matmul(g, n);
	if (!ar_attr_int(n, "transA", 0))
		return matmul_flops(g, n, a->dims[r - 1]);
	return matmul_flops(g, n, ar_attr_int(n, "transBatchA", 0) && r >= 3 ?
			    a->dims[0] : a->dims[r - 2]);
}

/* MatMulNBits: K is an attribute (B is packed). */
int64_t ar_flops_matmulnbits(const ArGraph *g, const ArNode *n)
{
	return matmul_flops(g, n, ar_attr_int(n, "K", -1));
}

/*
 * The attention core of output 0 (B, S, hidden): each of B x S queries
 * meets T keys in Q K^T and again in A V, over hidden = heads x head
 * values each, plus a softmax over the B x heads x S x T scores.  T is
 * the cache length (present's sequence axis, seq), else S: with a static
 * cache that is --max-seq, the most a step can attend to.
 */
static int64_t attention_core(const ArGraph *g, const ArNode *n, int seq)
{
	const ArTensor *y = out0(g, n), *pres = n->noutputs > 1 &&
		n->outputs[1] >= 0 ? &g->tensors[n->outputs[1]] : NULL;
	int64_t heads = ar_attr_int(n, "num_heads", 1), t, bs;
	if (!y || y->rank != 3)
		return numel(y);
	t = pres && pres->rank > seq ? pres->dims[seq] : y->dims[1];
	bs = mul_sat(y->dims[0], y->dims[1]);
	return add_sat(mul_sat(4, mul_sat(bs, mul_sat(t, y->dims[2]))),
		       mul_sat(3, mul_sat(bs, mul_sat(t, heads))));
}

int64_t ar_flops_mha(const ArGraph *g, const ArNode *n)
{
	return attention_core(g, n, 2);
}

/* Attention adds its input projection: input (B, S, in) x (in, q+k+v). */
int64_t ar_flops_attention(const ArGraph *g, const ArNode *n)
{
	const ArTensor *w = in(g, n, 1);
	int64_t proj = w && w->rank == 2 ?
		mul_sat(2, mul_sat(numel(in(g, n, 0)), w->dims[1])) : 0;
	return add_sat(proj, attention_core(g, n, 3));
}

/* Each output element: its window. */
int64_t ar_flops_pool(const ArGraph *g, const ArNode *n)
{
	const ArAttr *ks = ar_attr(n, "kernel_shape");
	int64_t k = 1;
	for (int i = 0; ks && i < ks->nints; i++)
		k = mul_sat(k, ks->ints[i]);
	return per_output(g, n, k);
}

/* Each input element once. */
int64_t ar_flops_globalpool(const ArGraph *g, const ArNode *n)
{
	return numel(in(g, n, 0));
}

int64_t ar_flops_lrn(const ArGraph *g, const ArNode *n)
{
	return per_output(g, n, 2 * ar_attr_int(n, "size", 1) + 3);
}

int64_t ar_flops_batchnorm(const ArGraph *g, const ArNode *n)
{
	return per_output(g, n, 4);
}

/* Exponent, sum and divide per element. */
int64_t ar_flops_softmax(const ArGraph *g, const ArNode *n)
{
	return per_output(g, n, 3);
}

/* One add per operand past the first. */
int64_t ar_flops_sum(const ArGraph *g, const ArNode *n)
{
	return per_output(g, n, n->ninputs > 1 ? n->ninputs - 1 : 1);
}

/* A softmax over the scores, then a weighted pick per label. */
int64_t ar_flops_sce_loss(const ArGraph *g, const ArNode *n)
{
	return add_sat(mul_sat(3, numel(in(g, n, 0))),
		       mul_sat(2, numel(in(g, n, 1))));
}

/* A weighted pick per label, summed. */
int64_t ar_flops_nll_loss(const ArGraph *g, const ArNode *n)
{
	return mul_sat(2, numel(in(g, n, 1)));
}

/* A multiply-add per tap: 1 (nearest), 2^r (linear), 4^r (cubic) for r
 * spatial axes; opset 16 names the modes bilinear and bicubic. */
int64_t ar_flops_gridsample(const ArGraph *g, const ArNode *n)
{
	const ArTensor *y = out0(g, n);
	const char *mode = ar_attr_str(n, "mode", n->opset < 20 ? "bilinear" :
				       "linear");
	int64_t per = mode[0] == 'n' ? 1 : strstr(mode, "cubic") ? 4 : 2, taps = 1;
	for (int i = 2; y && i < y->rank; i++)
		taps = mul_sat(taps, per);
	return per_output(g, n, 2 * taps);
}

/* Each output averages sampling_ratio^2 bilinear samples (4 taps); an
 * adaptive ratio is counted at its largest, a region the whole map. */
int64_t ar_flops_roialign(const ArGraph *g, const ArNode *n)
{
	const ArTensor *x = in(g, n, 0), *y = out0(g, n);
	int64_t sr = ar_attr_int(n, "sampling_ratio", 0), samples = sr * sr;
	if (sr <= 0 && x && y && x->rank == 4 && y->rank == 4 &&
	    y->dims[2] > 0 && y->dims[3] > 0)
		samples = mul_sat((x->dims[2] + y->dims[2] - 1) / y->dims[2],
				  (x->dims[3] + y->dims[3] - 1) / y->dims[3]);
	return per_output(g, n, mul_sat(8, samples > 0 ? samples : 1));
}

/* An intersection over union (about 12 ops) for each pair of boxes, per
 * batch and class. */
int64_t ar_flops_nms(const ArGraph *g, const ArNode *n)
{
	const ArTensor *s = in(g, n, 1);
	int64_t boxes = s && s->rank == 3 ? s->dims[2] : 0;
	return mul_sat(mul_sat(6, numel(s)), boxes);
}

/* LU decomposition: 2/3 M^3 per matrix. */
int64_t ar_flops_det(const ArGraph *g, const ArNode *n)
{
	const ArTensor *x = in(g, n, 0);
	int64_t m = x && x->rank >= 2 ? x->dims[x->rank - 1] : 1;
	return mul_sat(numel(out0(g, n)),
		       mul_sat(mul_sat(m, m), m) / 3 * 2 + 1);
}

/* An FFT of length len: 5 len log2(len) per transform, so 5 log2(len)
 * per output value. */
static int64_t fft(const ArGraph *g, const ArNode *n, int64_t len)
{
	int64_t lg = 1;
	while (lg < 62 && ((int64_t)1 << lg) < len)
		lg++;
	return per_output(g, n, 5 * lg);
}

int64_t ar_flops_dft(const ArGraph *g, const ArNode *n)
{
	const ArTensor *x = in(g, n, 0);
	int64_t axis = n->opset < 20 ? ar_attr_int(n, "axis", 1) : -2;
	if (x && axis < 0)
		axis += x->rank;
	return fft(g, n, x && axis >= 0 && axis < x->rank ? x->dims[axis] : 1);
}

/* Output [batch, frames, bins, 2]: one transform of about 2 bins. */
int64_t ar_flops_stft(const ArGraph *g, const ArNode *n)
{
	const ArTensor *y = out0(g, n);
	return fft(g, n, y && y->rank == 4 ? 2 * y->dims[2] : 1);
}

int64_t ar_node_flops(const ArGraph *g, const ArNode *n)
{
	const ArOpDef *d = ar_op_of(n);
	if (d && d->flops)
		return d->flops(g, n);
	return numel(out0(g, n));
}
