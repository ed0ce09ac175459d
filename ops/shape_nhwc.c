/*
 * shape_nhwc.c — shapes of the channels-last variants --layout nhwc
 * makes (AR_NHWC_DOMAIN: Conv, the pools, BatchNormalization,
 * QLinearConv; frontend/layout.c).
 *
 * Such a node is its ONNX op with input 0 and output 0 in [N, H, W, C]
 * order, as onnxruntime's layout transformer leaves them
 * (onnxruntime/core/optimizer/layout_transformation/
 * layout_transformation.cc, TransformLayoutForEP: it wraps input 0 and
 * output 0 of each layout-sensitive node in Transposes and moves the node
 * to kMSInternalNHWCDomain, the weights untouched).  So its shape is the
 * ONNX op's, computed on input 0 (and a convolution's filter, which
 * --layout nhwc stores as TFLite Micro's kernels read it) seen as the
 * ONNX op has them, and output 0 turned channels-last again: one window
 * computation (shape_conv.c) serves both layouts, and the two cannot
 * disagree.
 */
#include <string.h>

#include "infer_ops.h"

void ar_dims_channels_last(int64_t *dims, int rank, bool to_last)
{
	int64_t c;
	if (rank < 3)
		return;
	if (to_last) {
		c = dims[1];
		memmove(dims + 1, dims + 2, (size_t)(rank - 2) * sizeof *dims);
		dims[rank - 1] = c;
	} else {
		c = dims[rank - 1];
		memmove(dims + 2, dims + 1, (size_t)(rank - 2) * sizeof *dims);
		dims[1] = c;
	}
}

const int *ar_filter_perm(const int64_t *onnx_dims, int64_t group)
{
	static const int OHWI[4] = {0, 2, 3, 1}, DEPTHWISE[4] = {1, 2, 3, 0};
	return group > 1 && onnx_dims[1] == 1 ? DEPTHWISE : OHWI;
}

int ar_perm_axis(const int *perm, int axis)
{
	for (int k = 0; k < 4 && axis >= 0; k++)
		if (perm[k] == axis)
			return k;
	return axis;
}

/* A depthwise filter is [1, kH, kW, M], M a multiple of group > 1; an
 * OHWI one has M >= group rows. */
void ar_filter_dims_onnx(int64_t *dims, int64_t group)
{
	int64_t d[4];
	bool dw = group > 1 && dims[0] == 1;
	memcpy(d, dims, sizeof d);
	dims[0] = dw ? d[3] : d[0];
	dims[1] = dw ? 1 : d[3];
	dims[2] = d[1];
	dims[3] = d[2];
}

int ar_shape_nhwc(InferCtx *c, ArNode *n)
{
	const ArOpDef *twin = ar_op_find(NULL, n->op, c->g->opset);
	const ArOpDef *self = ar_op_of(n);
	int64_t saved[AR_MAX_RANK], wsaved[AR_MAX_RANK];
	ArTensor *x, *y, *w = NULL;
	bool fresh = false;
	int rc;

	if (!twin || !twin->shape)
		return ar_node_fail(c, n, "no ONNX op '%s' at opset %lld to "
				    "lay out channels-last", n->op,
				    (long long)c->g->opset);
	if ((rc = ar_need(c, n, 0, &x)))
		return rc;
	if (x->rank < 3)
		return ar_node_fail(c, n, "input 0 ('%s') has rank %d; "
				    "expected [N, spatial..., C]", x->name,
				    x->rank);
	/* The ONNX op's function reads input 0 as [N, C, spatial...]. */
	if (self && self->filter && (rc = ar_need(c, n, self->filter, &w)))
		return rc;
	if (w && w->rank != 4)
		return ar_node_fail(c, n, "filter '%s' has rank %d; expected "
				    "TFLite's [M, kH, kW, C/group] or "
				    "[1, kH, kW, M]", w->name, w->rank);
	memcpy(saved, x->dims, sizeof saved);
	ar_dims_channels_last(x->dims, x->rank, false);
	if (w) {
		memcpy(wsaved, w->dims, sizeof wsaved);
		ar_filter_dims_onnx(w->dims, ar_attr_int(n, "group", 1));
		fresh = w->quant.scale < 0 && w->quant.zero_point < 0;
	}
	rc = twin->shape(c, n);
	memcpy(x->dims, saved, sizeof saved);
	if (w) {
		/* A per-output-channel axis this op recorded (frontend/
		 * layout.c moved an earlier record), where the perm put it. */
		if (fresh)
			w->quant.axis = ar_perm_axis(ar_filter_perm(w->dims,
				ar_attr_int(n, "group", 1)), w->quant.axis);
		memcpy(w->dims, wsaved, sizeof wsaved);
	}
	if (rc)
		return rc;
	y = ar_out(c, n, 0);
	ar_dims_channels_last(y->dims, y->rank, true);
	return AR_OK;
}
