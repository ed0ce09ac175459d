/*
 * shape_conv.c — shapes of sliding-window ops (Conv, ConvTranspose, the
 * pools, Col2Im) and of the matrix ops (Gemm, MatMul, Det).
 *
 * Conv and the pools share one window computation, so pads, strides,
 * dilations, auto_pad and ceil_mode mean the same thing everywhere.  The
 * *_dims helpers take their operands as tensors, for the quantized and
 * fused variants whose operands sit at other input positions
 * (shape_quant.c, shape_contrib.c).
 */
#include <stdlib.h>
#include <string.h>

#include "infer_ops.h"

typedef struct Window {
	int nk;                     /* spatial axes */
	int64_t k[AR_MAX_RANK], s[AR_MAX_RANK], d[AR_MAX_RANK];
	int64_t pb[AR_MAX_RANK], pe[AR_MAX_RANK];
	const char *autopad;
} Window;

/* Reads an optional per-axis attribute, checking its length. */
static int axis_attr(InferCtx *c, const ArNode *n, const char *name, int len,
		     int64_t dflt, int64_t *out)
{
	const ArAttr *a = ar_attr(n, name);
	for (int i = 0; i < len; i++)
		out[i] = dflt;
	if (!a)
		return AR_OK;
	if (a->type != AR_ATTR_INTS || a->nints != len)
		return ar_node_fail(c, n, "attribute '%s' needs %d values, has "
				    "%d", name, len, a->nints);
	for (int i = 0; i < len; i++)
		out[i] = a->ints[i];
	return AR_OK;
}

/* Fills w from the attributes; kernel comes from the weights or attrs. */
static int window_attrs(InferCtx *c, const ArNode *n, int nk,
			const int64_t *wk, Window *w)
{
	int64_t pads[2 * AR_MAX_RANK];
	int rc;

	w->nk = nk;
	if (wk)
		memcpy(w->k, wk, (size_t)nk * sizeof *wk);
	if (ar_attr(n, "kernel_shape") || !wk)
		rc = axis_attr(c, n, "kernel_shape", nk, 1, w->k);
	else
		rc = AR_OK;
	if (rc || (rc = axis_attr(c, n, "strides", nk, 1, w->s)) ||
	    (rc = axis_attr(c, n, "dilations", nk, 1, w->d)) ||
	    (rc = axis_attr(c, n, "pads", 2 * nk, 0, pads)))
		return rc;
	for (int i = 0; i < nk; i++) {
		w->pb[i] = pads[i];
		w->pe[i] = pads[nk + i];
		if (w->k[i] < 1 || w->s[i] < 1 || w->d[i] < 1 ||
		    w->pb[i] < 0 || w->pe[i] < 0)
			return ar_node_fail(c, n, "kernel, stride or dilation "
					    "below 1 or negative pad at "
					    "spatial axis %d", i);
	}
	w->autopad = ar_attr_str(n, "auto_pad", "NOTSET");
	if (strcmp(w->autopad, "NOTSET") && strcmp(w->autopad, "VALID") &&
	    strcmp(w->autopad, "SAME_UPPER") && strcmp(w->autopad, "SAME_LOWER"))
		return ar_node_fail(c, n, "unknown auto_pad '%s'", w->autopad);
	return AR_OK;
}

/* The extent a dilated kernel covers: (k - 1) * d + 1. */
static int64_t extent(const Window *w, int i)
{
	int64_t e;
	if (!ar_mul64(w->k[i] - 1, w->d[i], &e) || !ar_add64(e, 1, &e))
		return -1;
	return e;
}

/* Spatial output dims of Conv and the pools, from input dims in[]. */
static int window_out(InferCtx *c, const ArNode *n, const Window *w,
		      const int64_t *in, bool ceil_mode, int64_t *out)
{
	for (int i = 0; i < w->nk; i++) {
		int64_t e = extent(w, i), num;
		if (e < 0)
			return ar_node_fail(c, n, "kernel extent overflows");
		if (!strncmp(w->autopad, "SAME", 4)) {
			out[i] = in[i] / w->s[i] + (in[i] % w->s[i] != 0);
			continue;
		}
		num = in[i] - e;
		if (!strcmp(w->autopad, "NOTSET") &&
		    (!ar_add64(num, w->pb[i], &num) ||
		     !ar_add64(num, w->pe[i], &num)))
			return ar_node_fail(c, n, "pads overflow");
		if (num < 0)
			return ar_node_fail(c, n, "window of extent %lld is "
					    "larger than the padded input "
					    "(%lld) at spatial axis %d",
					    (long long)e, (long long)(num + e),
					    i);
		out[i] = num / w->s[i] + 1;
		if (ceil_mode && num % w->s[i]) {
			out[i]++;
			/* A window starting inside the end padding is dropped. */
			if ((out[i] - 1) * w->s[i] >= in[i] + w->pb[i])
				out[i]--;
		}
	}
	return AR_OK;
}

/* X must be [N, C, spatial...] with at least one spatial axis. */
static int check_nchw(InferCtx *c, const ArNode *n, const ArTensor *x)
{
	if (x->rank < 3)
		return ar_node_fail(c, n, "input 0 ('%s') has rank %d; expected "
				    "[N, C, spatial...]", x->name, x->rank);
	return AR_OK;
}

static int need_nchw(InferCtx *c, const ArNode *n, ArTensor **x)
{
	int rc = ar_need(c, n, 0, x);
	return rc ? rc : check_nchw(c, n, *x);
}

/* Checks W against X for Conv and ConvTranspose; returns group. */
static int conv_weights(InferCtx *c, const ArNode *n, const ArTensor *x,
			const ArTensor *w, int64_t *group)
{
	*group = ar_attr_int(n, "group", 1);
	if (w->rank != x->rank)
		return ar_node_fail(c, n, "weights '%s' have rank %d, input "
				    "has rank %d", w->name, w->rank, x->rank);
	if (*group < 1 || x->dims[1] % *group)
		return ar_node_fail(c, n, "group %lld does not divide the "
				    "%lld input channels", (long long)*group,
				    (long long)x->dims[1]);
	return AR_OK;
}

int ar_conv_out(InferCtx *c, ArNode *n, int xi, int wi, ArDType dt)
{
	ArTensor *x, *wt;
	int64_t dims[AR_MAX_RANK], group;
	Window w;
	int rc;

	if ((rc = ar_need(c, n, xi, &x)) || (rc = ar_need(c, n, wi, &wt)) ||
	    (rc = check_nchw(c, n, x)) ||
	    (rc = conv_weights(c, n, x, wt, &group)))
		return rc;
	if (wt->dims[1] * group != x->dims[1])
		return ar_node_fail(c, n, "input has %lld channels but weights "
				    "'%s' expect %lld x group %lld",
				    (long long)x->dims[1], wt->name,
				    (long long)wt->dims[1], (long long)group);
	if ((rc = window_attrs(c, n, x->rank - 2, wt->dims + 2, &w)) ||
	    (rc = window_out(c, n, &w, x->dims + 2, false, dims + 2)))
		return rc;
	dims[0] = x->dims[0];
	dims[1] = wt->dims[0];
	ar_set_shape(ar_out(c, n, 0), dt ? dt : x->dtype, x->rank, dims);
	return AR_OK;
}

int ar_shape_conv(InferCtx *c, ArNode *n)
{
	return ar_conv_out(c, n, 0, 1, AR_DT_UNDEFINED);
}

int ar_shape_convtranspose(InferCtx *c, ArNode *n)
{
	ArTensor *x, *wt;
	int64_t dims[AR_MAX_RANK], opad[AR_MAX_RANK], group, *oshape, nos;
	Window w;
	int rc, nk;

	if ((rc = need_nchw(c, n, &x)) || (rc = ar_need(c, n, 1, &wt)) ||
	    (rc = conv_weights(c, n, x, wt, &group)))
		return rc;
	nk = x->rank - 2;
	if (wt->dims[0] != x->dims[1])
		return ar_node_fail(c, n, "input has %lld channels but weights "
				    "'%s' have %lld", (long long)x->dims[1],
				    wt->name, (long long)wt->dims[0]);
	if ((rc = window_attrs(c, n, nk, wt->dims + 2, &w)) ||
	    (rc = axis_attr(c, n, "output_padding", nk, 0, opad)))
		return rc;
	dims[0] = x->dims[0];
	if (!ar_mul64(wt->dims[1], group, &dims[1]))
		return ar_node_fail(c, n, "output channels overflow");
	ar_attr_ints(n, "output_shape", &oshape, &nos);
	for (int i = 0; i < nk; i++) {
		int64_t in = x->dims[2 + i], o, e = extent(&w, i);
		if (oshape) {
			/* Either the spatial dims or the whole shape. */
			if (nos != nk && nos != nk + 2) {
				free(oshape);
				return ar_node_fail(c, n, "output_shape has %lld "
						    "values for %d spatial axes",
						    (long long)nos, nk);
			}
			dims[2 + i] = oshape[nos - nk + i];
			continue;
		}
		if (!strncmp(w.autopad, "SAME", 4)) {
			if (!ar_mul64(in, w.s[i], &dims[2 + i]))
				return ar_node_fail(c, n, "output overflows");
			continue;
		}
		if (e < 0 || !ar_mul64(in - 1, w.s[i], &o) ||
		    !ar_add64(o, opad[i], &o) || !ar_add64(o, e, &o))
			return ar_node_fail(c, n, "output overflows");
		if (!strcmp(w.autopad, "NOTSET"))
			o -= w.pb[i] + w.pe[i];
		if (o < 0)
			return ar_node_fail(c, n, "pads exceed the output at "
					    "spatial axis %d", i);
		dims[2 + i] = o;
	}
	free(oshape);
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
	return AR_OK;
}

int ar_pool_dims(InferCtx *c, const ArNode *n, const ArTensor *x,
		 int64_t *dims)
{
	Window w;
	int rc;

	if ((rc = check_nchw(c, n, x)))
		return rc;
	if (!ar_attr(n, "kernel_shape"))
		return ar_node_fail(c, n, "attribute 'kernel_shape' is missing");
	if ((rc = window_attrs(c, n, x->rank - 2, NULL, &w)) ||
	    (rc = window_out(c, n, &w, x->dims + 2,
			     ar_attr_int(n, "ceil_mode", 0) != 0, dims + 2)))
		return rc;
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	return AR_OK;
}

int ar_shape_pool(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t dims[AR_MAX_RANK];
	int rc;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_pool_dims(c, n, x, dims)))
		return rc;
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
	ar_set_shape(ar_out(c, n, 1), AR_DT_INT64, x->rank, dims);
	return AR_OK;
}

int ar_shape_globalpool(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t dims[AR_MAX_RANK];
	int rc = need_nchw(c, n, &x);
	if (rc)
		return rc;
	for (int i = 0; i < x->rank; i++)
		dims[i] = i < 2 ? x->dims[i] : 1;
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
	return AR_OK;
}

int ar_gemm_dims(InferCtx *c, const ArNode *n, const ArTensor *a,
		 const ArTensor *b, int64_t *dims)
{
	int64_t k1, k2;
	int ta = ar_attr_int(n, "transA", 0) != 0,
	    tb = ar_attr_int(n, "transB", 0) != 0;

	if (a->rank != 2 || b->rank != 2)
		return ar_node_fail(c, n, "inputs must be matrices (ranks %d "
				    "and %d)", a->rank, b->rank);
	dims[0] = a->dims[ta ? 1 : 0];
	k1 = a->dims[ta ? 0 : 1];
	k2 = b->dims[tb ? 1 : 0];
	dims[1] = b->dims[tb ? 0 : 1];
	if (k1 != k2)
		return ar_node_fail(c, n, "inner dims differ: %lld and %lld",
				    (long long)k1, (long long)k2);
	return AR_OK;
}

int ar_shape_gemm(InferCtx *c, ArNode *n)
{
	ArTensor *a, *b;
	int64_t dims[2];
	int rc;

	if ((rc = ar_need(c, n, 0, &a)) || (rc = ar_need(c, n, 1, &b)) ||
	    (rc = ar_gemm_dims(c, n, a, b, dims)))
		return rc;
	ar_set_shape(ar_out(c, n, 0), a->dtype, 2, dims);
	return AR_OK;
}

int ar_matmul_dims(InferCtx *c, const ArNode *n, const ArTensor *a,
		   const ArTensor *b, int *rank, int64_t *dims)
{
	int64_t da[AR_MAX_RANK], db[AR_MAX_RANK];
	int ra, rb, rc;

	if (a->rank < 1 || b->rank < 1)
		return ar_node_fail(c, n, "inputs must not be scalars");
	/* numpy: a vector is a row on the left and a column on the right. */
	ra = a->rank, rb = b->rank;
	memcpy(da, a->dims, sizeof da);
	memcpy(db, b->dims, sizeof db);
	if (ra == 1)
		da[1] = da[0], da[0] = 1, ra = 2;
	if (rb == 1)
		db[1] = 1, rb = 2;
	if (da[ra - 1] != db[rb - 2])
		return ar_node_fail(c, n, "inner dims differ: %lld and %lld",
				    (long long)da[ra - 1],
				    (long long)db[rb - 2]);
	if ((rc = ar_broadcast2(c, n, ra - 2, da, rb - 2, db, rank, dims)))
		return rc;
	if (a->rank > 1)
		dims[(*rank)++] = da[ra - 2];
	if (b->rank > 1)
		dims[(*rank)++] = db[rb - 1];
	if (*rank > AR_MAX_RANK)
		return ar_node_fail(c, n, "rank above %d", AR_MAX_RANK);
	return AR_OK;
}

/* Det(X [*, M, M]) -> [*]: one determinant per square matrix. */
int ar_shape_det(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int rc = ar_need(c, n, 0, &x);
	if (rc)
		return rc;
	if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
		return ar_node_fail(c, n, "needs square matrices [*, M, M]");
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank - 2, x->dims);
	return AR_OK;
}

/*
 * Col2Im(input [N, C * prod(block_shape), L], image_shape, block_shape) ->
 * [N, C, image_shape...]: the blocks summed back into an image.  Sizes
 * known only at run time: the image without a bound, the channels at most
 * the input's.
 */
int ar_shape_col2im(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t *img = NULL, *blk = NULL, ni = -1, nb = -1, dims[AR_MAX_RANK];
	int64_t per = 1;
	bool rt_img = ar_runtime_input(c, n, 1), rt_blk = ar_runtime_input(c, n, 2);
	int rc = ar_need(c, n, 0, &x);

	if (rc || (!rt_img && (rc = ar_const_ints(c, n, 1, &img, &ni))) ||
	    (!rt_blk && (rc = ar_const_ints(c, n, 2, &blk, &nb))))
		goto out;
	if (rt_img)
		ni = ar_numel(ar_in(c, n, 1));
	if (rt_blk)
		nb = ar_numel(ar_in(c, n, 2));
	for (int64_t i = 0; blk && i < nb && per > 0; i++)
		per = blk[i] > 0 && ar_mul64(per, blk[i], &per) ? per : 0;
	if (x->rank != 3 || ni < 2 || ni != nb || ni + 2 > AR_MAX_RANK ||
	    per < 1 || x->dims[1] % per) {
		rc = ar_node_fail(c, n, "needs input [N, C x block elements, L] "
				  "and image and block shapes of equal length");
		goto out;
	}
	dims[0] = x->dims[0];
	dims[1] = x->dims[1] / per;
	for (int64_t i = 0; i < ni; i++)
		dims[2 + i] = img ? img[i] : AR_NO_BOUND;
	ar_set_shape(ar_out(c, n, 0), x->dtype, (int)ni + 2, dims);
	for (int i = 0; i < (int)ni + 2; i++)
		if ((i == 1 && rt_blk) || (i >= 2 && rt_img))
			ar_bound_axis(ar_out(c, n, 0), i, dims[i]);
out:
	free(img);
	free(blk);
	return rc;
}

int ar_matmul_out(InferCtx *c, ArNode *n, int ai, int bi, ArDType dt)
{
	ArTensor *a, *b;
	int64_t dims[AR_MAX_RANK];
	int rank, rc;

	if ((rc = ar_need(c, n, ai, &a)) || (rc = ar_need(c, n, bi, &b)) ||
	    (rc = ar_matmul_dims(c, n, a, b, &rank, dims)))
		return rc;
	ar_set_shape(ar_out(c, n, 0), dt ? dt : a->dtype, rank, dims);
	return AR_OK;
}

int ar_shape_matmul(InferCtx *c, ArNode *n)
{
	return ar_matmul_out(c, n, 0, 1, AR_DT_UNDEFINED);
}
