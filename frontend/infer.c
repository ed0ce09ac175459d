/*
 * infer.c — the shape inference driver and the helpers shape functions
 * share.
 *
 * Nodes are visited once, in the loader's topological order.  For each the
 * driver checks that every explicit input has a known shape, calls the op's
 * shape function from a sorted dispatch table, sizes the outputs, marks
 * them constant when every input is (so they join the weights instead of
 * the arena), lets the folder compute small values that later shapes
 * depend on, and compares with what the file declared.
 */
#include "infer.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer_ops.h"

enum {
	NOFOLD = 1,     /* outputs never constant (control flow) */
	SHAPEONLY = 2   /* outputs constant whatever the input (Shape, Size) */
};

static const struct OpEntry {
	const char *op;
	ArShapeFn fn;
	int flags;
} ops[] = {
	/* Sorted by name (strcmp) for bsearch. */
	{"Abs", ar_shape_unary, 0},
	{"Acos", ar_shape_unary, 0},
	{"Acosh", ar_shape_unary, 0},
	{"Add", ar_shape_broadcast, 0},
	{"And", ar_shape_compare, 0},
	{"ArgMax", ar_shape_argreduce, 0},
	{"ArgMin", ar_shape_argreduce, 0},
	{"Asin", ar_shape_unary, 0},
	{"Asinh", ar_shape_unary, 0},
	{"Atan", ar_shape_unary, 0},
	{"Atanh", ar_shape_unary, 0},
	{"AveragePool", ar_shape_pool, 0},
	{"BatchNormalization", ar_shape_batchnorm, 0},
	{"BitShift", ar_shape_broadcast, 0},
	{"BitwiseAnd", ar_shape_broadcast, 0},
	{"BitwiseNot", ar_shape_unary, 0},
	{"BitwiseOr", ar_shape_broadcast, 0},
	{"BitwiseXor", ar_shape_broadcast, 0},
	{"Cast", ar_shape_cast, 0},
	{"CastLike", ar_shape_castlike, 0},
	{"Ceil", ar_shape_unary, 0},
	{"Celu", ar_shape_unary, 0},
	{"Clip", ar_shape_unary, 0},
	{"Concat", ar_shape_concat, 0},
	{"Constant", ar_shape_constant, 0},
	{"ConstantOfShape", ar_shape_constantofshape, 0},
	{"Conv", ar_shape_conv, 0},
	{"ConvTranspose", ar_shape_convtranspose, 0},
	{"Cos", ar_shape_unary, 0},
	{"Cosh", ar_shape_unary, 0},
	{"CumSum", ar_shape_unary, 0},
	{"DepthToSpace", ar_shape_depth_to_space, 0},
	{"Div", ar_shape_broadcast, 0},
	{"Dropout", ar_shape_dropout, 0},
	{"Elu", ar_shape_unary, 0},
	{"Equal", ar_shape_compare, 0},
	{"Erf", ar_shape_unary, 0},
	{"Exp", ar_shape_unary, 0},
	{"Expand", ar_shape_expand, 0},
	{"Flatten", ar_shape_flatten, 0},
	{"Floor", ar_shape_unary, 0},
	{"GRU", ar_shape_rnn, 0},
	{"Gather", ar_shape_gather, 0},
	{"GatherElements", ar_shape_gather_elements, 0},
	{"Gelu", ar_shape_unary, 0},
	{"Gemm", ar_shape_gemm, 0},
	{"GlobalAveragePool", ar_shape_globalpool, 0},
	{"GlobalLpPool", ar_shape_globalpool, 0},
	{"GlobalMaxPool", ar_shape_globalpool, 0},
	{"Greater", ar_shape_compare, 0},
	{"GreaterOrEqual", ar_shape_compare, 0},
	{"HardSigmoid", ar_shape_unary, 0},
	{"HardSwish", ar_shape_unary, 0},
	{"Hardmax", ar_shape_unary, 0},
	{"Identity", ar_shape_unary, 0},
	{"If", ar_shape_if, NOFOLD},
	{"InstanceNormalization", ar_shape_unary, 0},
	{"IsInf", ar_shape_tobool, 0},
	{"IsNaN", ar_shape_tobool, 0},
	{"LRN", ar_shape_unary, 0},
	{"LSTM", ar_shape_rnn, 0},
	{"LayerNormalization", ar_shape_layernorm, 0},
	{"LeakyRelu", ar_shape_unary, 0},
	{"Less", ar_shape_compare, 0},
	{"LessOrEqual", ar_shape_compare, 0},
	{"Log", ar_shape_unary, 0},
	{"LogSoftmax", ar_shape_unary, 0},
	{"Loop", ar_shape_loop, NOFOLD},
	{"LpNormalization", ar_shape_unary, 0},
	{"LpPool", ar_shape_pool, 0},
	{"MatMul", ar_shape_matmul, 0},
	{"Max", ar_shape_broadcast, 0},
	{"MaxPool", ar_shape_pool, 0},
	{"Mean", ar_shape_broadcast, 0},
	{"MeanVarianceNormalization", ar_shape_unary, 0},
	{"Min", ar_shape_broadcast, 0},
	{"Mish", ar_shape_unary, 0},
	{"Mod", ar_shape_broadcast, 0},
	{"Mul", ar_shape_broadcast, 0},
	{"Neg", ar_shape_unary, 0},
	{"Not", ar_shape_unary, 0},
	{"Or", ar_shape_compare, 0},
	{"PRelu", ar_shape_broadcast, 0},
	{"Pad", ar_shape_pad, 0},
	{"Pow", ar_shape_broadcast, 0},
	{"RNN", ar_shape_rnn, 0},
	{"Range", ar_shape_range, 0},
	{"Reciprocal", ar_shape_unary, 0},
	{"ReduceL1", ar_shape_reduce, 0},
	{"ReduceL2", ar_shape_reduce, 0},
	{"ReduceLogSum", ar_shape_reduce, 0},
	{"ReduceLogSumExp", ar_shape_reduce, 0},
	{"ReduceMax", ar_shape_reduce, 0},
	{"ReduceMean", ar_shape_reduce, 0},
	{"ReduceMin", ar_shape_reduce, 0},
	{"ReduceProd", ar_shape_reduce, 0},
	{"ReduceSum", ar_shape_reduce, 0},
	{"ReduceSumSquare", ar_shape_reduce, 0},
	{"Relu", ar_shape_unary, 0},
	{"Reshape", ar_shape_reshape, 0},
	{"Resize", ar_shape_resize, 0},
	{"Round", ar_shape_unary, 0},
	{"Selu", ar_shape_unary, 0},
	{"Shape", ar_shape_shape, SHAPEONLY},
	{"Shrink", ar_shape_unary, 0},
	{"Sigmoid", ar_shape_unary, 0},
	{"Sign", ar_shape_unary, 0},
	{"Sin", ar_shape_unary, 0},
	{"Sinh", ar_shape_unary, 0},
	{"Size", ar_shape_size, SHAPEONLY},
	{"Slice", ar_shape_slice, 0},
	{"Softmax", ar_shape_unary, 0},
	{"Softplus", ar_shape_unary, 0},
	{"Softsign", ar_shape_unary, 0},
	{"SpaceToDepth", ar_shape_space_to_depth, 0},
	{"Split", ar_shape_split, 0},
	{"Sqrt", ar_shape_unary, 0},
	{"Squeeze", ar_shape_squeeze, 0},
	{"Sub", ar_shape_broadcast, 0},
	{"Sum", ar_shape_broadcast, 0},
	{"Tan", ar_shape_unary, 0},
	{"Tanh", ar_shape_unary, 0},
	{"ThresholdedRelu", ar_shape_unary, 0},
	{"Tile", ar_shape_tile, 0},
	{"TopK", ar_shape_topk, 0},
	{"Transpose", ar_shape_transpose, 0},
	{"Trilu", ar_shape_unary, 0},
	{"Unsqueeze", ar_shape_unsqueeze, 0},
	{"Upsample", ar_shape_resize, 0},
	{"Where", ar_shape_where, 0},
	{"Xor", ar_shape_compare, 0},
};

static int cmp_op(const void *key, const void *e)
{
	return strcmp(key, ((const struct OpEntry *)e)->op);
}

/* The order bsearch relies on, strictly (no name twice). */
static bool ops_sorted(void)
{
	for (size_t i = 1; i < sizeof ops / sizeof ops[0]; i++)
		if (strcmp(ops[i - 1].op, ops[i].op) >= 0)
			return false;
	return true;
}

int ar_node_fail(InferCtx *c, const ArNode *n, const char *fmt, ...)
{
	char buf[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return ar_fail(c->err, AR_EXIT_MODEL, "node '%s' (%s): %s", n->name,
		       n->op, buf);
}

ArTensor *ar_in(InferCtx *c, const ArNode *n, int j)
{
	if (j < 0 || j >= n->nexplicit || n->inputs[j] < 0)
		return NULL;
	return &c->g->tensors[n->inputs[j]];
}

ArTensor *ar_out(InferCtx *c, const ArNode *n, int j)
{
	if (j < 0 || j >= n->noutputs || n->outputs[j] < 0)
		return NULL;
	return &c->g->tensors[n->outputs[j]];
}

int ar_need(InferCtx *c, const ArNode *n, int j, ArTensor **t)
{
	*t = ar_in(c, n, j);
	if (!*t)
		return ar_node_fail(c, n, "input %d is required but missing",
				    j);
	return AR_OK;
}

bool ar_is_const(const InferCtx *c, int id)
{
	const ArTensor *t = &c->g->tensors[id];
	return t->kind == AR_TK_WEIGHT || t->kind == AR_TK_CONSTANT ||
	       (c->capconst && c->capconst[id]);
}

void ar_set_shape(ArTensor *t, ArDType dt, int rank, const int64_t *dims)
{
	if (!t)
		return;
	t->dtype = dt;
	t->rank = rank;
	for (int i = 0; i < rank; i++)
		t->dims[i] = dims[i];
}

void ar_same_as(InferCtx *c, const ArNode *n, int j, const ArTensor *in)
{
	ar_set_shape(ar_out(c, n, j), in->dtype, in->rank, in->dims);
}

int ar_axis(InferCtx *c, const ArNode *n, int64_t axis, int rank, int *out)
{
	if (axis < -rank || axis >= rank)
		return ar_node_fail(c, n, "axis %lld is out of range for "
				    "rank %d", (long long)axis, rank);
	*out = (int)(axis < 0 ? axis + rank : axis);
	return AR_OK;
}

int64_t ar_prod(const int64_t *dims, int from, int to)
{
	int64_t p = 1;
	for (int i = from; i < to; i++)
		if (!ar_mul64(p, dims[i], &p))
			return -1;
	return p;
}

bool ar_dtype_is_int(ArDType dt)
{
	switch (dt) {
	case AR_DT_UINT8: case AR_DT_INT8: case AR_DT_UINT16:
	case AR_DT_INT16: case AR_DT_INT32: case AR_DT_INT64:
	case AR_DT_UINT32: case AR_DT_UINT64: case AR_DT_BOOL:
		return true;
	default:
		return false;
	}
}

bool ar_dtype_is_float(ArDType dt)
{
	return dt == AR_DT_FLOAT || dt == AR_DT_DOUBLE;
}

int64_t ar_get_int(const ArTensor *t, int64_t k)
{
	const void *p = t->data;
	switch (t->dtype) {
	case AR_DT_UINT8: case AR_DT_BOOL: return ((const uint8_t *)p)[k];
	case AR_DT_INT8: return ((const int8_t *)p)[k];
	case AR_DT_UINT16: return ((const uint16_t *)p)[k];
	case AR_DT_INT16: return ((const int16_t *)p)[k];
	case AR_DT_INT32: return ((const int32_t *)p)[k];
	case AR_DT_INT64: return ((const int64_t *)p)[k];
	case AR_DT_UINT32: return ((const uint32_t *)p)[k];
	case AR_DT_UINT64: return (int64_t)((const uint64_t *)p)[k];
	/* Casting to int saturates rather than invoking undefined behaviour. */
	case AR_DT_FLOAT: case AR_DT_DOUBLE: {
		double v = ar_get_float(t, k);
		if (isnan(v))
			return 0;
		if (v >= 9.2e18)
			return INT64_MAX;
		if (v <= -9.2e18)
			return INT64_MIN;
		return (int64_t)v;
	}
	/* Callers check dtypes first; this only keeps the two total. */
	default: return 0;
	}
}

double ar_get_float(const ArTensor *t, int64_t k)
{
	if (t->dtype == AR_DT_FLOAT)
		return ((const float *)t->data)[k];
	if (t->dtype == AR_DT_DOUBLE)
		return ((const double *)t->data)[k];
	if (ar_dtype_is_int(t->dtype))
		return (double)ar_get_int(t, k);
	return NAN;
}

/* Values of input j as the shape function needs them, or a clear error. */
static int const_input(InferCtx *c, const ArNode *n, int j, ArTensor **t,
		       int64_t *count)
{
	*t = ar_in(c, n, j);
	*count = -1;
	if (!*t)
		return AR_OK;
	if (!(*t)->data || ((*t)->dtype != AR_DT_FLOAT &&
			    (*t)->dtype != AR_DT_DOUBLE &&
			    !ar_dtype_is_int((*t)->dtype)))
		return ar_node_fail(c, n, "input %d ('%s') must be a "
				    "compile-time constant: the output shape "
				    "depends on its values", j, (*t)->name);
	*count = ar_numel(*t);
	return AR_OK;
}

int ar_const_ints(InferCtx *c, const ArNode *n, int j, int64_t **vals,
		  int64_t *count)
{
	ArTensor *t;
	int rc = const_input(c, n, j, &t, count);
	*vals = NULL;
	if (rc || *count < 0)
		return rc;
	*vals = ar_xmalloc((size_t)*count * sizeof **vals);
	for (int64_t k = 0; k < *count; k++)
		(*vals)[k] = ar_get_int(t, k);
	return AR_OK;
}

int ar_const_floats(InferCtx *c, const ArNode *n, int j, double **vals,
		    int64_t *count)
{
	ArTensor *t;
	int rc = const_input(c, n, j, &t, count);
	*vals = NULL;
	if (rc || *count < 0)
		return rc;
	*vals = ar_xmalloc((size_t)*count * sizeof **vals);
	for (int64_t k = 0; k < *count; k++)
		(*vals)[k] = ar_get_float(t, k);
	return AR_OK;
}

void ar_attr_ints(const ArNode *n, const char *name, int64_t **vals,
		  int64_t *count)
{
	const ArAttr *a = ar_attr(n, name);
	*vals = NULL;
	*count = -1;
	if (!a || a->type != AR_ATTR_INTS)
		return;
	*count = a->nints;
	*vals = ar_xmalloc((size_t)a->nints * sizeof **vals);
	for (int i = 0; i < a->nints; i++)
		(*vals)[i] = a->ints[i];
}

static void fmt_shape(char *buf, size_t cap, int rank, const int64_t *dims)
{
	size_t k = 0;
	k += (size_t)snprintf(buf + k, cap - k, "[");
	for (int i = 0; i < rank && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "",
				      (long long)dims[i]);
	if (k < cap)
		snprintf(buf + k, cap - k, "]");
}

int ar_broadcast2(InferCtx *c, const ArNode *n, int ra, const int64_t *da,
		  int rb, const int64_t *db, int *rank, int64_t *dims)
{
	int64_t out[AR_MAX_RANK];
	int r = ra > rb ? ra : rb;
	for (int i = 0; i < r; i++) {
		int64_t a = i < r - ra ? 1 : da[i - (r - ra)];
		int64_t b = i < r - rb ? 1 : db[i - (r - rb)];
		if (a != b && a != 1 && b != 1) {
			char sa[128], sb[128];
			fmt_shape(sa, sizeof sa, ra, da);
			fmt_shape(sb, sizeof sb, rb, db);
			return ar_node_fail(c, n, "shapes %s and %s cannot be "
					    "broadcast together", sa, sb);
		}
		out[i] = a == 1 ? b : a;
	}
	/* dims may alias da or db. */
	memcpy(dims, out, (size_t)r * sizeof *dims);
	*rank = r;
	return AR_OK;
}

/* Warns where the file declared a different type or shape. */
static void cross_check(InferCtx *c, const ArTensor *t, ArDType before)
{
	char si[256], sd[256];
	bool differ;

	if (before != AR_DT_UNDEFINED && before != t->dtype)
		ar_warn(c->diag, "tensor '%s': declared type %s, inferred %s",
			t->name, ar_dtype_name(before), ar_dtype_name(t->dtype));
	if (!t->declared)
		return;
	differ = t->decl_rank != t->rank;
	for (int i = 0; !differ && i < t->rank; i++)
		differ = t->decl_dims[i] >= 0 && t->decl_dims[i] != t->dims[i];
	if (!differ)
		return;
	fmt_shape(si, sizeof si, t->rank, t->dims);
	fmt_shape(sd, sizeof sd, t->decl_rank, t->decl_dims);
	ar_warn(c->diag, "tensor '%s': declared shape %s, inferred %s "
		"(using the inferred one)", t->name, sd, si);
}

static bool is_sequence_op(const char *op)
{
	return strstr(op, "Sequence") || !strcmp(op, "Optional") ||
	       !strcmp(op, "OptionalGetElement") ||
	       !strcmp(op, "OptionalHasElement");
}

static int check_inputs(InferCtx *c, const ArNode *n)
{
	for (int j = 0; j < n->nexplicit; j++) {
		const ArTensor *t = ar_in(c, n, j);
		if (!t)
			continue;
		if (t->dtype == AR_DT_STRING)
			return ar_node_fail(c, n, "input %d ('%s') is a string "
					    "tensor, which has no fixed byte "
					    "size", j, t->name);
		if (t->rank < 0 || t->dtype == AR_DT_UNDEFINED)
			return ar_node_fail(c, n, "input %d ('%s') has an "
					    "unknown shape", j, t->name);
	}
	return AR_OK;
}

static int infer_node(InferCtx *c, int idx)
{
	ArNode *n = &c->g->nodes[idx];
	const struct OpEntry *e = NULL;
	ArDType before[64];
	bool cst;
	int rc;

	if (!ar_default_domain(n->domain))
		return ar_node_fail(c, n, "no shape inference for this op "
				    "(domain '%s')", n->domain);
	e = bsearch(n->op, ops, sizeof ops / sizeof ops[0], sizeof ops[0],
		    cmp_op);
	if (!e && is_sequence_op(n->op))
		return ar_node_fail(c, n, "sequence and optional values are "
				    "not supported: arenac plans tensors only");
	if (!e)
		return ar_node_fail(c, n, "no shape inference for this op");
	if ((rc = check_inputs(c, n)))
		return rc;
	if (n->noutputs > 64)
		return ar_node_fail(c, n, "has %d outputs, more than 64",
				    n->noutputs);
	for (int j = 0; j < n->noutputs; j++) {
		ArTensor *t = ar_out(c, n, j);
		before[j] = t ? t->dtype : AR_DT_UNDEFINED;
	}
	if ((rc = e->fn(c, n)))
		return rc;

	cst = !(e->flags & NOFOLD);
	for (int j = 0; cst && !(e->flags & SHAPEONLY) && j < n->nexplicit; j++)
		cst = n->inputs[j] < 0 || ar_is_const(c, n->inputs[j]);
	for (int j = 0; j < n->noutputs; j++) {
		ArTensor *t = ar_out(c, n, j);
		if (!t || t->rank < 0)
			continue;
		if (t->dtype == AR_DT_STRING)
			return ar_node_fail(c, n, "output '%s' is a string "
					    "tensor, which has no fixed byte "
					    "size", t->name);
		if ((rc = ar_tensor_set_bytes(t, c->err)))
			return rc;
		/* Graph outputs stay outputs: the caller must receive them. */
		if (cst && t->kind == AR_TK_ACTIVATION)
			t->kind = AR_TK_CONSTANT;
		cross_check(c, t, before[j]);
	}
	if (cst)
		ar_fold(c, n);
	return AR_OK;
}

static int infer_graph(InferCtx *c)
{
	ArGraph *g = c->g;
	int rc;
	for (int i = 0; i < g->nnodes; i++)
		if ((rc = infer_node(c, i)))
			return rc;
	for (int i = 0; i < g->noutputs; i++) {
		const ArTensor *t = &g->tensors[g->outputs[i]];
		if (t->rank < 0 || t->bytes < 0)
			return ar_fail(c->err, AR_EXIT_MODEL, "graph output "
				       "'%s' has an unknown shape", t->name);
	}
	return AR_OK;
}

int ar_infer_subgraph(InferCtx *outer, ArGraph *sub)
{
	InferCtx c = {sub, outer->diag, outer->err, NULL};
	int rc;

	c.capconst = ar_xcalloc((size_t)sub->ntensors + 1, sizeof(bool));
	for (int k = 0; k < sub->ncaptures; k++) {
		int id = sub->captures[k];
		ArTensor *t = &sub->tensors[id];
		int oid = ar_graph_find(outer->g, t->name);
		const ArTensor *o;

		/* The loader captures a name in every scope it passes through. */
		if (oid < 0) {
			free(c.capconst);
			return ar_fail(c.err, AR_EXIT_INTERNAL, "subgraph '%s' "
				       "captures '%s', which its parent lacks",
				       sub->name, t->name);
		}
		o = &outer->g->tensors[oid];
		ar_set_shape(t, o->dtype, o->rank, o->dims);
		t->bytes = o->bytes;
		free(t->data);
		t->data = NULL;
		if (o->data && o->bytes >= 0) {
			t->data = ar_xmalloc((size_t)o->bytes);
			memcpy(t->data, o->data, (size_t)o->bytes);
		}
		c.capconst[id] = ar_is_const(outer, oid);
	}
	rc = infer_graph(&c);
	free(c.capconst);
	return rc;
}

int ar_infer(ArGraph *g, const ArDiag *diag, ArError *err)
{
	InferCtx c = {g, diag, err, NULL};
	assert(ops_sorted());
	return infer_graph(&c);
}
