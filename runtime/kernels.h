/*
 * kernels.h — the runtime's float32 reference kernels (NCHW layout).
 *
 * Kernels know shapes and pointers only; reading attributes, finding
 * tensors and checking the plan is interp.c's business.  Each kernel says
 * in a comment whether its output may be its input (in place), because the
 * interpreter refuses an in-place step whose kernel cannot do it.
 */
#ifndef ARENAC_RT_KERNELS_H
#define ARENAC_RT_KERNELS_H

#include <stdint.h>

#include "arenac_rt.h"

typedef struct rt_shape {
	int rank;
	int64_t d[ART_MAX_RANK];
} rt_shape;

int64_t rt_numel(const rt_shape *s);

/* 2-D convolution geometry; 1-D callers use kh = 1 and a height of 1. */
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

typedef struct rt_conv {
	int64_t group;
	int64_t kh, kw;             /* kernel */
	int64_t sh, sw;             /* strides */
	int64_t dh, dw;             /* dilations */
	int64_t ph, pw;             /* leading pads (trailing ones follow
				     * from the output shape) */
	const rt_preact *pre;       /* maps each input value, or NULL */
} rt_conv;

/* x [N,C,H,W], w [M,C/group,kh,kw], b [M] or NULL, y [N,M,OH,OW]. */
void rt_conv2d(const rt_conv *p, const float *x, const rt_shape *xs,
	       const float *w, const float *b, float *y, const rt_shape *ys);
/* x [N,C,H,W], w [C,M/group,kh,kw], b [M] or NULL, y [N,M,OH,OW]. */
void rt_convtranspose2d(const rt_conv *p, const float *x, const rt_shape *xs,
			const float *w, const float *b, float *y,
			const rt_shape *ys);

typedef enum { RT_POOL_MAX, RT_POOL_AVG, RT_POOL_AVG_PAD } rt_pool_kind;
/* Windows past the input are clipped; RT_POOL_AVG_PAD divides by the
 * window's part inside the padded input (count_include_pad). */
void rt_pool2d(rt_pool_kind k, const rt_conv *p, const int64_t *pads_end,
	       const float *x, const rt_shape *xs, float *y,
	       const rt_shape *ys);
void rt_global_avgpool(const float *x, const rt_shape *xs, float *y);
void rt_lrn(int64_t size, float alpha, float beta, float bias,
	    const float *x, const rt_shape *xs, float *y);

/* Elementwise kernels: y may be x. */
typedef enum {
	RT_RELU, RT_SIGMOID, RT_HARDSIGMOID, RT_HARDSWISH, RT_CLIP,
	RT_LEAKYRELU, RT_TANH, RT_EXP, RT_NEG, RT_ABS, RT_SQRT, RT_COPY
} rt_unary;
void rt_unary_apply(rt_unary op, float a, float b, const float *x, float *y,
		    int64_t n);

typedef enum { RT_ADD, RT_SUB, RT_MUL, RT_DIV, RT_MAX, RT_MIN } rt_binary;
/* Numpy broadcasting of a and b into ys; y may be a or b when that operand
 * has ys's shape. */
void rt_binary_apply(rt_binary op, const float *a, const rt_shape *as,
		     const float *b, const rt_shape *bs, float *y,
		     const rt_shape *ys);

/* y may be x. */
void rt_batchnorm(const float *x, const rt_shape *xs, const float *scale,
		  const float *bias, const float *mean, const float *var,
		  float eps, float *y);
/* Over the last axis, rows of n; y may be x. */
void rt_softmax(const float *x, int64_t rows, int64_t n, float *y);

/* y[M,N] = alpha * op(a) op(b) + beta * c, c broadcast to [M,N] from cs
 * (NULL for none); y must not be a, b or c. */
void rt_gemm(const float *a, const float *b, const float *c,
	     const rt_shape *cs, float *y, int64_t m, int64_t n, int64_t k,
	     int trans_a, int trans_b, float alpha, float beta);
/* Numpy matmul with broadcast batch dims; y must not be a or b. */
void rt_matmul(const float *a, const rt_shape *as, const float *b,
	       const rt_shape *bs, float *y, const rt_shape *ys);

/* Copies x into the slice of y starting at `at` along axis; outer is the
 * product of y's dims before axis, inner the product after. */
void rt_concat_part(const float *x, int64_t xaxis, float *y, int64_t yaxis,
		    int64_t at, int64_t outer, int64_t inner);
/* perm as in ONNX Transpose; y must not be x. */
void rt_transpose(const float *x, const rt_shape *xs, const int64_t *perm,
		  float *y);

typedef enum { RT_COORD_HALF_PIXEL, RT_COORD_ASYMMETRIC,
	       RT_COORD_ALIGN_CORNERS, RT_COORD_PYTORCH_HALF_PIXEL } rt_coord;
typedef enum { RT_NEAREST_ROUND_PREFER_FLOOR, RT_NEAREST_ROUND_PREFER_CEIL,
	       RT_NEAREST_FLOOR, RT_NEAREST_CEIL } rt_nearest;
/* Nearest-neighbour resize over every axis; scales[i] per axis. */
void rt_resize_nearest(const float *x, const rt_shape *xs,
		       const float *scales, rt_coord coord, rt_nearest mode,
		       float *y, const rt_shape *ys);

typedef enum { RT_PAD_CONSTANT, RT_PAD_REFLECT, RT_PAD_EDGE } rt_pad_mode;
/* pads: begins then ends, as in ONNX (negative pads crop). */
void rt_pad(rt_pad_mode mode, const int64_t *pads, float value,
	    const float *x, const rt_shape *xs, float *y, const rt_shape *ys);

#endif
