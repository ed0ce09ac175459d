/*
 * kernels.h — the runtime's reference kernels (NCHW layout).
 *
 * Kernels know shapes and pointers only; reading attributes, finding
 * tensors and checking the plan is the op layer's business (ops.h).  Each
 * kernel says in a comment whether its output may be its input (in
 * place), because the interpreter refuses an in-place step whose kernel
 * cannot do it.  Kernels never allocate; all but the recurrent layers
 * need no workspace either (every intermediate value lives in a local
 * variable), and those take theirs from the caller.
 */
#ifndef ARENAC_RT_KERNELS_H
#define ARENAC_RT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "arenac_rt.h"

typedef struct rt_shape {
	int rank;
	int64_t d[ART_MAX_RANK];
} rt_shape;

int64_t rt_numel(const rt_shape *s);

/* a / b and a % b of element indices and extents (a >= 0, b > 0) in
 * ptrdiff_t: every index of an object in memory fits it, as pointer
 * differences must; 32 bits on a Cortex-M, whose 64-bit division is
 * ~700 bytes of libgcc code, int64_t's width on a 64-bit host. */
static inline int64_t rt_div(int64_t a, int64_t b)
{
	return (ptrdiff_t)a / (ptrdiff_t)b;
}
static inline int64_t rt_mod(int64_t a, int64_t b)
{
	return (ptrdiff_t)a % (ptrdiff_t)b;
}

/* A tensor of any element type: its first element, ONNX dtype, shape. */
typedef struct rt_arr {
	void *p;
	int dt;
	rt_shape s;
} rt_arr;

/* ---- element types (kernels_dtype.c) ---- */

int rt_is_float(int dt);        /* float16, bfloat16, float, double */
/* Element i as a double or an int64, converting as ONNX Cast does. */
double rt_get_f(int dt, const void *p, int64_t i);
int64_t rt_get_i(int dt, const void *p, int64_t i);
void rt_set_f(int dt, void *p, int64_t i, double v);
void rt_set_i(int dt, void *p, int64_t i, int64_t v);
/* (float)v, rounded once, in 32-bit integer and float arithmetic: a
 * Cortex-M's FPU converts no 64-bit integer, and libgcc's conversion is
 * ~700 bytes of soft-float code. */
float rt_i64_to_f32(int64_t v);
/* The same for integer and bool types only (0 read, nothing written for
 * others): the integer kernels' accessors, which leave the float
 * conversions (float16's among them) out of an int8 firmware. */
int64_t rt_get_int(int dt, const void *p, int64_t i);
void rt_set_int(int dt, void *p, int64_t i, int64_t v);
/* y = x converted to y's type; y may be x when the sizes agree. */
void rt_cast(const rt_arr *x, rt_arr *y);
/* y[i] = start + i * delta in y's type (start, delta: its first value). */
void rt_range(const rt_arr *start, const rt_arr *delta, rt_arr *y);
/* The 2-D y: ones where column - row == k, zeros elsewhere (EyeLike). */
void rt_eye(int64_t k, rt_arr *y);

/* ---- broadcasting (kernels_broadcast.c) ---- */

#define RT_MAX_OPERANDS 4
/*
 * A run of n output elements: p[k] is operand k's first element (operand
 * 0 the output), st[k] its element stride, 1 or 0 (broadcast).
 */
typedef void (*rt_row_fn)(void *ctx, char *const *p, const int64_t *st,
			  int64_t n);
/* Numpy broadcasting of a[1..nops) into a[0]'s shape, run by run. */
void rt_broadcast(int nops, const rt_arr *const *a, rt_row_fn row,
		  void *ctx);

/* ---- elementwise (kernels_elementwise.c): y may be an operand ---- */

typedef enum {
	RT_RELU, RT_SIGMOID, RT_HARDSIGMOID, RT_HARDSWISH, RT_CLIP,
	RT_LEAKYRELU, RT_TANH, RT_EXP, RT_LOG, RT_NEG, RT_ABS, RT_SQRT,
	RT_RECIPROCAL, RT_ERF, RT_GELU, RT_SIN, RT_COS, RT_TAN, RT_ASIN,
	RT_ACOS, RT_ATAN, RT_SINH, RT_COSH, RT_ASINH, RT_ACOSH, RT_ATANH,
	RT_FLOOR, RT_CEIL, RT_ROUND, RT_SIGN, RT_SOFTPLUS, RT_SOFTSIGN,
	RT_ELU, RT_SELU, RT_CELU, RT_THRESHOLDEDRELU, RT_SHRINK, RT_MISH,
	RT_ISNAN, RT_ISINF, RT_NOT, RT_COPY, RT_AFFINE, RT_SCALEDTANH
} rt_unary;
/* a, b: the op's parameters (Clip: min, max; HardSigmoid: alpha, beta;
 * Selu: alpha, gamma; Shrink: bias, lambd; IsInf: detect_negative,
 * detect_positive; Gelu: a = 1 for the tanh form; Affine: a x + b;
 * ScaledTanh: a tanh(b x)). */
void rt_unary_apply(rt_unary op, double a, double b, const rt_arr *x,
		    rt_arr *y);
/* The same for one value. */
double rt_unary_value(rt_unary op, double a, double b, double v);
/* The same in float, for float32 tensors (no double arithmetic). */
float rt_unary_value32(rt_unary op, float a, float b, float v);
/* Whether op is defined on integers (else only float types reach it). */
int rt_unary_int(rt_unary op);

typedef enum {
	RT_ADD, RT_SUB, RT_MUL, RT_DIV, RT_MAX, RT_MIN, RT_POW, RT_MOD,
	RT_FMOD, RT_AND, RT_OR, RT_XOR, RT_EQUAL, RT_LESS, RT_LESS_EQUAL,
	RT_GREATER, RT_GREATER_EQUAL, RT_SHIFT_LEFT, RT_SHIFT_RIGHT, RT_PRELU
} rt_binary;
/* Numpy broadcasting of a and b into y's shape. */
void rt_binary_apply(rt_binary op, const rt_arr *a, const rt_arr *b,
		     rt_arr *y);
/* One value, in the float or the integer domain. */
double rt_binary_fvalue(rt_binary op, double a, double b);
float rt_binary_fvalue32(rt_binary op, float a, float b);
int64_t rt_binary_ivalue(rt_binary op, int64_t a, int64_t b);
/* out = cond ? x : y, broadcast; out may be x or y. */
void rt_where(const rt_arr *cond, const rt_arr *x, const rt_arr *y,
	      rt_arr *out);
/* x broadcast to y's shape (Expand); y must not be x. */
void rt_expand(const rt_arr *x, rt_arr *y);

/* ---- reductions (kernels_reduce.c) ---- */

typedef enum {
	RT_R_SUM, RT_R_MEAN, RT_R_MAX, RT_R_MIN, RT_R_PROD, RT_R_L1, RT_R_L2,
	RT_R_LOGSUM, RT_R_LOGSUMEXP, RT_R_SUMSQUARE
} rt_reduce;
/* Reduces x over the axes whose bit is set in axes into y, which holds
 * the kept axes in order (with or without the size-1 reduced ones). */
void rt_reduce_apply(rt_reduce op, const rt_arr *x, unsigned axes,
		     rt_arr *y);
/* ArgMax / ArgMin along axis into int64 y; last: the last of equal
 * extremes, else the first. */
void rt_argreduce(int is_max, int last, const rt_arr *x, int axis,
		  rt_arr *y);
/* Running sum along axis; y may be x. */
void rt_cumsum(const rt_arr *x, int axis, int exclusive, int reverse,
	       rt_arr *y);
/* (x - mean) / (sqrt(var) + 1e-9) over the axes in the mask, float32;
 * y may be x. */
void rt_mvn(const float *x, const rt_shape *xs, unsigned axes, float *y);

/* ---- normalisation and softmax (kernels_norm.c): y may be x ---- */

void rt_batchnorm(const float *x, const rt_shape *xs, const float *scale,
		  const float *bias, const float *mean, const float *var,
		  float eps, float *y);
/* BatchNormalization in training mode: normalised with the batch's mean
 * and (population) variance per channel; the running statistics (may be
 * NULL) = input ones * momentum + the batch's * (1 - momentum). */
void rt_batchnorm_train(const float *x, const rt_shape *xs,
			const float *scale, const float *bias,
			const float *mean, const float *var, float eps,
			float momentum, float *y, float *run_mean,
			float *run_var);
/* Per (n, c) over the spatial dims; scale and bias per channel. */
void rt_instancenorm(const float *x, const rt_shape *xs, const float *scale,
		     const float *bias, float eps, float *y);
/*
 * rows of n values, each normalised to zero mean and unit variance, then
 * times scale and plus bias (nscale / nbias values repeating along the
 * row; bias may be NULL); mean and inv_std (one per row) may be NULL.
 */
void rt_layernorm(const float *x, int64_t rows, int64_t n,
		  const float *scale, int64_t nscale, const float *bias,
		  int64_t nbias, float eps, float *y, float *mean,
		  float *inv_std);

typedef enum { RT_SOFTMAX, RT_LOGSOFTMAX, RT_HARDMAX } rt_softmax_kind;
/* Along the middle axis of [outer, n, inner]. */
void rt_softmax(rt_softmax_kind k, const float *x, int64_t outer, int64_t n,
		int64_t inner, float *y);

/* ---- convolution (kernels_conv.c, kernels_qconv.c) ---- */

/*
 * A per-input-channel prologue (arenac.PreactConv): op k is
 * RT_PRE_BATCHNORM (p[k][0..3]: scale, bias, mean, var; eps[k]),
 * RT_PRE_MUL or RT_PRE_ADD (p[k][0]) or RT_PRE_RELU; each parameter holds
 * one value per channel, or one for all when scalar[k].
 */
#define RT_PREACT_MAX 8
enum { RT_PRE_BATCHNORM = 1, RT_PRE_MUL, RT_PRE_ADD, RT_PRE_RELU };
typedef struct rt_preact {
	int n;
	int code[RT_PREACT_MAX];
	const float *p[RT_PREACT_MAX][4];
	int scalar[RT_PREACT_MAX];
	float eps[RT_PREACT_MAX];
} rt_preact;

/* 2-D convolution geometry; 1-D callers use kh = 1 and a height of 1. */
typedef struct rt_conv {
	int64_t group;
	int64_t kh, kw;             /* kernel */
	int64_t sh, sw;             /* strides */
	int64_t dh, dw;             /* dilations */
	int64_t ph, pw;             /* leading pads (trailing ones follow
				     * from the output shape) */
	const rt_preact *pre;       /* maps each input value, or NULL */
} rt_conv;

/*
 * --layout nhwc's filters are in the layout TFLite Micro's and CMSIS-NN's
 * kernels read (arenac's ops.h, ar_filter_perm): OHWI [M, kh, kw, C/group]
 * or, depthwise (group > 1, C/group 1), [1, kh, kw, M].  The index of
 * output channel m's tap (i, j) of its input channel 0 there; its input
 * channels follow it contiguously.
 */
static inline int64_t rt_filter_at(const rt_conv *p, int64_t M, int64_t cg,
				   int64_t m, int64_t i, int64_t j)
{
	return p->group > 1 && cg == 1 ? (i * p->kw + j) * M + m :
	       ((m * p->kh + i) * p->kw + j) * cg;
}

/* x [N,C,H,W], w [M,C/group,kh,kw], b [M] or NULL, y [N,M,OH,OW]. */
void rt_conv2d(const rt_conv *p, const float *x, const rt_shape *xs,
	       const float *w, const float *b, float *y, const rt_shape *ys);
/* x [N,H,W,C], w in TFLite's layout (rt_filter_at), b [M] or NULL, y
 * [N,OH,OW,M], the shapes given as [N,C,H,W] and [N,M,OH,OW]
 * (kernels_nhwc.c). */
void rt_conv2d_nhwc(const rt_conv *p, const float *x, const rt_shape *xs,
		    const float *w, const float *b, float *y,
		    const rt_shape *ys);
/* x [N,C,H,W], w [C,M/group,kh,kw], b [M] or NULL, y [N,M,OH,OW]. */
void rt_convtranspose2d(const rt_conv *p, const float *x, const rt_shape *xs,
			const float *w, const float *b, float *y,
			const rt_shape *ys);

/* An int8 / uint8 operand of an integer kernel and its zero points (one,
 * or one per row / output channel; NULL: 0). */
typedef struct rt_qin {
	const void *p;
	int dt;
	const void *zp;
	int zdt;
	int64_t nzp;
} rt_qin;
/*
 * How integer sums become outputs.  NULL: the int32 sum itself
 * (ConvInteger, MatMulInteger).  Otherwise y = saturate(round_half_even(
 * sum * sa * sb / sy) + zy) in y's type (QLinear*), sa one value or one
 * per row of a, sb one value or one per output channel / column, the
 * scale's product float32 and the rest exact as the spec's double
 * (integer arithmetic: kernels_matmul.c), for sums below RT_REQUANT_SUM.
 */
#define RT_REQUANT_SUM ((int64_t)1 << 39)
/* Products per requantised sum, so that it stays below RT_REQUANT_SUM
 * (each below 2^16, the int32 bias below 2^31). */
#define RT_REQUANT_TERMS ((int64_t)1 << 22)
typedef struct rt_requant {
	const float *sa, *sb;
	int64_t na, nb;
	float sy;
	int64_t zy;
} rt_requant;
/* Writes integer sum s of y's element i, whose row of a is r and output
 * channel or column ch, as rq says. */
void rt_requant_store(const rt_requant *rq, int64_t s, int64_t r,
		      int64_t ch, rt_arr *y, int64_t i);
/* Integer convolution; bias (int32, per output channel) may be NULL. */
void rt_conv2d_int(const rt_conv *p, const rt_qin *x, const rt_shape *xs,
		   const rt_qin *w, const int32_t *bias, const rt_requant *rq,
		   rt_arr *y);
/* The same, x and y [N,H,W,C] in memory (--layout nhwc), the shapes
 * given as [N,C,H,W], w in TFLite's layout (rt_filter_at). */
void rt_conv2d_int_nhwc(const rt_conv *p, const rt_qin *x,
			const rt_shape *xs, const rt_qin *w,
			const int32_t *bias, const rt_requant *rq, rt_arr *y);

/* ---- pooling (kernels_pool.c) ---- */

typedef enum { RT_POOL_MAX, RT_POOL_AVG, RT_POOL_AVG_PAD } rt_pool_kind;
/* Windows past the input are clipped; RT_POOL_AVG_PAD divides by the
 * window's part inside the padded input (count_include_pad).  Average
 * pools are float32 (dt ART_DT_FLOAT); max pools also take uint8 and
 * int8 (dt), the output of the input's type.  Max pools
 * write where each maximum is into indices (may be NULL), counted in the
 * flattened input, row-major or (col_major) columns first. */
void rt_pool2d(rt_pool_kind k, const rt_conv *p, const int64_t *pads_end,
	       int dt, const void *x, const rt_shape *xs, void *y,
	       const rt_shape *ys, int64_t *indices, int col_major);
/* The same, x and y [N,H,W,C] in memory (--layout nhwc), the shapes
 * given as [N,C,H,W]; no indices. */
void rt_pool2d_nhwc(rt_pool_kind k, const rt_conv *p, const int64_t *pads_end,
		    int dt, const void *x, const rt_shape *xs, void *y,
		    const rt_shape *ys, int64_t *indices, int col_major);
/* GlobalMaxPool (is_max) or GlobalAveragePool of float32 x [N, C, ...]
 * into y [N, C, 1, ...]. */
void rt_global_pool(int is_max, const float *x, const rt_shape *xs, float *y);
/* The same and rt_batchnorm for x [N,H,W,C], xs its shape as stored
 * (kernels_nhwc.c). */
void rt_global_pool_nhwc(int is_max, const float *x, const rt_shape *xs,
			 float *y);
void rt_batchnorm_nhwc(const float *x, const rt_shape *xs, const float *scale,
		       const float *bias, const float *mean, const float *var,
		       float eps, float *y);
void rt_lrn(int64_t size, float alpha, float beta, float bias,
	    const float *x, const rt_shape *xs, float *y);

/* ---- matrix products (kernels_matmul.c): y must not be an operand ---- */

/* y[M,N] = alpha * op(a) op(b) + beta * c, c broadcast to [M,N] from cs
 * (NULL for none). */
void rt_gemm(const float *a, const float *b, const float *c,
	     const rt_shape *cs, float *y, int64_t m, int64_t n, int64_t k,
	     int trans_a, int trans_b, float alpha, float beta);
/* Numpy matmul with broadcast batch dims and 1-D operands. */
void rt_matmul(const float *a, const rt_shape *as, const float *b,
	       const rt_shape *bs, float *y, const rt_shape *ys);
/* The same on int8 / uint8 operands (MatMulInteger, QLinearMatMul). */
void rt_matmul_int(const rt_qin *a, const rt_shape *as, const rt_qin *b,
		   const rt_shape *bs, const rt_requant *rq, rt_arr *y);

/* ---- quantization (kernels_quant.c) ---- */

/* Scales and zero points: one, or one per index of the quantized axis
 * (the elements inner apart form one index). zp NULL: 0. */
typedef struct rt_qparam {
	const float *scale;
	const void *zp;
	int zdt;
	int64_t n, inner;
} rt_qparam;
/* y = saturate(round_half_even(x / scale) + zp); y may be x only when
 * the sizes agree. */
void rt_quantize(const rt_arr *x, const rt_qparam *q, rt_arr *y);
/* y = (x - zp) * scale, float32. */
void rt_dequantize(const rt_arr *x, const rt_qparam *q, float *y);
/* uint8 quantization with the scale and zero point x's range gives. */
void rt_dynamic_quantize(const float *x, int64_t n, uint8_t *y, float *scale,
			 uint8_t *zp);

/* ---- data movement (kernels_layout.c, kernels_gather.c) ---- */

/*
 * Copies outer blocks of len elements (of es bytes, times inner) from x at
 * xat along an axis of xaxis to y at yat along an axis of yaxis: Concat
 * writes each input's slice, Split reads each output's.
 */
void rt_copy_slab(const void *x, int64_t xaxis, int64_t xat, void *y,
		  int64_t yaxis, int64_t yat, int64_t len, int64_t outer,
		  int64_t inner, size_t es);
/* perm as in ONNX Transpose; y must not be x. */
void rt_transpose(const rt_arr *x, const int64_t *perm, rt_arr *y);
typedef enum { RT_PAD_CONSTANT, RT_PAD_REFLECT, RT_PAD_EDGE,
	       RT_PAD_WRAP } rt_pad_mode;
/* pads: begins then ends, as in ONNX (negative pads crop); value: one
 * element of y's type. */
void rt_pad(rt_pad_mode mode, const int64_t *pads, const void *value,
	    const rt_arr *x, rt_arr *y);
/* y[i...] = x[start + i * step, ...] per axis; y must not be x. */
void rt_slice(const rt_arr *x, const int64_t *start, const int64_t *step,
	      rt_arr *y);
/* Reverses the first lens[b] steps along the time axis of every batch
 * element b (axes 0 and 1, either way round); y must not be x. */
void rt_reverse_sequence(const rt_arr *x, int time_axis, const rt_arr *lens,
			 rt_arr *y);
/* y[i...] = x[i mod x's dim, ...] per axis (Tile). */
void rt_tile(const rt_arr *x, rt_arr *y);
/* Keeps the upper (j - i >= k) or lower (j - i <= k) triangle of each
 * matrix in the last two axes; zeros elsewhere; y may be x. */
void rt_trilu(const rt_arr *x, int64_t k, int upper, rt_arr *y);
/* Gather along axis; the caller has checked every index is in [-d, d)
 * for the axis length d (negative ones count from the end). */
void rt_gather(const rt_arr *x, int axis, const rt_arr *idx, rt_arr *y);
void rt_gather_elements(const rt_arr *x, int axis, const rt_arr *idx,
			rt_arr *y);

/* ---- losses (kernels_loss.c) ---- */

typedef enum { RT_LOSS_NONE, RT_LOSS_SUM, RT_LOSS_MEAN } rt_loss_reduction;
/*
 * Negative log-likelihood of x [N, C, D] (D: the trailing dims' product),
 * log-probabilities, or with from_scores raw scores whose log-softmax
 * along C is taken, at target [N, D] (int32 or int64, checked in [0, C)
 * unless *ignore), weighted by w [C] (NULL: 1); a target equal to *ignore
 * (NULL: none) counts 0 with weight 0.  y: [N, D] for RT_LOSS_NONE, else
 * one value (mean: the weighted sum over the sum of the weights).
 */
void rt_nll_loss(const float *x, int64_t N, int64_t C, int64_t D,
		 const rt_arr *target, const float *w, const int64_t *ignore,
		 rt_loss_reduction red, int from_scores, float *y);

/* ---- recurrent layers (kernels_rnn.c) ---- */

typedef enum { RT_RNN_CELL, RT_GRU_CELL, RT_LSTM_CELL } rt_rnn_kind;
/*
 * One RNN, GRU or LSTM layer as ONNX defines it: x [seq, batch, input]
 * (layout 1: [batch, seq, input]); w, r, b, p (peepholes), h0, c0 per
 * direction as in the spec; y [seq, dirs, batch, hidden] (layout 1:
 * [batch, seq, dirs, hidden]), yh and yc [dirs, batch, hidden] (layout
 * 1: [batch, dirs, hidden]); optional pointers NULL.  act[d][k] with its
 * alpha and beta is activation k (f, g, h) of direction d.
 */
typedef struct rt_rnn {
	rt_rnn_kind kind;
	int64_t seq, batch, input, hidden;
	int dirs, reverse, layout, linear_before_reset;
	float clip;                 /* 0: none */
	const float *x, *w, *r, *b, *p, *h0, *c0;
	const void *seq_lens;       /* int32 per batch element, or NULL */
	int seq_lens_dt;
	float *y, *yh, *yc;
	rt_unary act[2][3];
	float alpha[2][3], beta[2][3];
} rt_rnn;
/* work: (3 + 2) x hidden floats for GRU, (4 + 2) for LSTM, 3 for RNN,
 * none of them an operand.  The outputs must not be inputs. */
void rt_rnn_apply(const rt_rnn *p, float *work);

/* ---- scatter and n-d gather (kernels_scatter.c) ---- */

/*
 * y already holds the data; each update lands on its element, replacing
 * it (red < 0) or combined with it by red (RT_ADD, RT_MUL, RT_MAX,
 * RT_MIN).  Indices are checked by the caller; negative ones count from
 * the end.
 */
/* ScatterElements: updates and indices share a shape; the index replaces
 * the coordinate along axis. */
void rt_scatter_elements(rt_arr *y, int axis, const rt_arr *idx,
			 const rt_arr *upd, int red);
/* ScatterND: indices [..., k] address slices of y's trailing dims. */
void rt_scatter_nd(rt_arr *y, const rt_arr *idx, const rt_arr *upd, int red);
/* GatherND with batch_dims leading batch axes. */
void rt_gather_nd(const rt_arr *x, const rt_arr *idx, int batch_dims,
		  rt_arr *y);

/* ---- resize (kernels_resize.c) ---- */

typedef enum { RT_COORD_HALF_PIXEL, RT_COORD_ASYMMETRIC,
	       RT_COORD_ALIGN_CORNERS, RT_COORD_PYTORCH_HALF_PIXEL,
	       RT_COORD_TF_HALF_PIXEL_FOR_NN, RT_COORD_TF_CROP_AND_RESIZE
} rt_coord;
typedef enum { RT_NEAREST_ROUND_PREFER_FLOOR, RT_NEAREST_ROUND_PREFER_CEIL,
	       RT_NEAREST_FLOOR, RT_NEAREST_CEIL } rt_nearest;
typedef enum { RT_RESIZE_NEAREST, RT_RESIZE_LINEAR, RT_RESIZE_CUBIC
} rt_resize_mode;
typedef struct rt_resize {
	rt_resize_mode mode;
	rt_coord coord;
	rt_nearest nearest;
	double cubic_a;             /* cubic_coeff_a */
	int exclude_outside;
	float extrapolation;        /* tf_crop_and_resize outside the input */
	double scale[ART_MAX_RANK];
	double roi[2 * ART_MAX_RANK];   /* starts then ends, normalised */
} rt_resize;
/* Every axis; float32; y must not be x. */
void rt_resize_apply(const rt_resize *r, const float *x, const rt_shape *xs,
		     float *y, const rt_shape *ys);

#endif
