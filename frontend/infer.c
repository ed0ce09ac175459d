/*
 * infer.c — the shape inference driver and the helpers shape functions
 * share.
 *
 * Nodes are visited once, in the loader's topological order (a top-graph
 * sequence op or Loop over sequences first becomes the tensor ops it
 * stands for, unroll.c, which are visited in its place).  For each the
 * driver finds the op's entry in the op table (ops/table.c), checks the
 * input and output counts and that every explicit input has a known shape,
 * calls the entry's shape function, sizes the outputs, marks
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
	t->bounded = 0;
	for (int i = 0; i < rank; i++)
		t->dims[i] = dims[i];
}

void ar_same_as(InferCtx *c, const ArNode *n, int j, const ArTensor *in)
{
	ArTensor *t = ar_out(c, n, j);
	ar_set_shape(t, in->dtype, in->rank, in->dims);
	if (t)
		t->bounded = in->bounded;
}

void ar_bound_axis(ArTensor *t, int axis, int64_t max)
{
	if (!t)
		return;
	assert(axis >= 0 && axis < t->rank);
	t->bounded |= AR_BIT(axis);
	t->dims[axis] = max;
}

void ar_set_bounded(ArTensor *t, uint32_t axes)
{
	if (t)
		t->bounded = axes;
}

bool ar_runtime_input(InferCtx *c, const ArNode *n, int j)
{
	const ArTensor *t = ar_in(c, n, j);
	if (!t)
		return false;
	/* A constant's value is computed when a shape needs it (fold.c). */
	if (!t->data && ar_is_const(c, n->inputs[j]))
		ar_fold_value(c, n->inputs[j], AR_FOLD_MAX_ELEMS, NULL, NULL);
	return !t->data && ar_numel(t) != 0;
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
	/* Packed, the first element in the low bits (onnx.proto). */
	case AR_DT_UINT4: case AR_DT_INT4: case AR_DT_UINT2: case AR_DT_INT2: {
		int bits = ar_dtype_bits(t->dtype), per = 8 / bits;
		unsigned v = ((const uint8_t *)p)[k / per] >>
			     (k % per * bits) & ((1u << bits) - 1);
		bool sign = t->dtype == AR_DT_INT4 || t->dtype == AR_DT_INT2;
		return sign && v >> (bits - 1) ? (int64_t)v - (1 << bits) : v;
	}
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

/* IEEE half: sign, 5 exponent bits, 10 fraction bits. */
static double half(uint16_t h)
{
	int e = h >> 10 & 0x1f, f = h & 0x3ff;
	double v = e == 0 ? ldexp(f, -24) : e == 31 ? (f ? NAN : INFINITY) :
		   ldexp(f + 1024, e - 25);
	return h >> 15 ? -v : v;
}

double ar_get_float(const ArTensor *t, int64_t k)
{
	if (t->dtype == AR_DT_FLOAT16)
		return half(((const uint16_t *)t->data)[k]);
	if (t->dtype == AR_DT_BFLOAT16) {
		uint32_t u = (uint32_t)((const uint16_t *)t->data)[k] << 16;
		float f;
		memcpy(&f, &u, sizeof f);
		return f;
	}
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
	if (!(*t)->data)
		ar_fold_value(c, n->inputs[j], AR_FOLD_MAX_ELEMS, NULL, NULL);
	/* An empty input has all its values, none. */
	if ((!(*t)->data && ar_numel(*t) != 0) ||
	    ((*t)->dtype != AR_DT_FLOAT && (*t)->dtype != AR_DT_DOUBLE &&
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
	const ArDeclared *d = t->declared;
	char si[256], sd[256];
	bool differ;

	if (before != AR_DT_UNDEFINED && before != t->dtype)
		ar_warn(c->diag, "tensor '%s': declared type %s, inferred %s",
			t->name, ar_dtype_name(before), ar_dtype_name(t->dtype));
	if (!d)
		return;
	/* A declared extent within a bounded axis's bound is consistent. */
	differ = d->rank != t->rank;
	for (int i = 0; !differ && i < t->rank; i++)
		differ = d->dims[i] >= 0 &&
			 (AR_BOUNDED(t, i) ? d->dims[i] > t->dims[i] :
			  d->dims[i] != t->dims[i]);
	if (!differ)
		return;
	fmt_shape(si, sizeof si, t->rank, t->dims);
	fmt_shape(sd, sizeof sd, d->rank, d->dims);
	ar_warn(c->diag, "tensor '%s': declared shape %s, inferred %s "
		"(using the inferred one)", t->name, sd, si);
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

/* "has 2 inputs; the op takes 1", "... takes 1 to 3", "... at least 2". */
static int count_fail(InferCtx *c, const ArNode *n, const char *what,
		      int has, int lo, int hi)
{
	char range[64];
	if (lo == hi)
		snprintf(range, sizeof range, "%d", lo);
	else if (hi == AR_VARIADIC)
		snprintf(range, sizeof range, "at least %d", lo);
	else
		snprintf(range, sizeof range, "%d to %d", lo, hi);
	return ar_node_fail(c, n, "has %d %s; the op takes %s", has, what,
			    range);
}

/* The node's entry, or a clear refusal naming why there is none. */
static int find_def(InferCtx *c, const ArNode *n, const ArOpDef **d)
{
	int nout = 0;

	*d = ar_op_of(n);
	if (!*d && !ar_default_domain(n->domain))
		return ar_node_fail(c, n, "no shape inference for this op "
				    "(domain '%s')", n->domain);
	if (*d && (*d)->refuse)
		return ar_node_fail(c, n, "%s", (*d)->refuse);
	if (!*d || !(*d)->shape)
		return ar_node_fail(c, n, "no shape inference for this op");
	/* Trailing omitted outputs do not count; a missing input does. */
	for (int j = 0; j < n->noutputs; j++)
		if (n->outputs[j] >= 0)
			nout = j + 1;
	if (n->nexplicit < (*d)->in_min || n->nexplicit > (*d)->in_max)
		return count_fail(c, n, "inputs", n->nexplicit, (*d)->in_min,
				  (*d)->in_max);
	if (nout > (*d)->out_max)
		return count_fail(c, n, "outputs", nout, (*d)->out_min,
				  (*d)->out_max);
	return AR_OK;
}

/*
 * A view shares its input's bytes, so a bounded one never holds more: a
 * Reshape to a run-time shape has bounds per axis (each at most the
 * element count) whose product exceeds the input.
 */
static void view_cap(InferCtx *c, const ArNode *n, const ArOpDef *d,
		     ArTensor *t)
{
	const ArTensor *x = ar_in(c, n, 0);
	if (t->bounded && d->alias == AR_ALIAS_VIEW && x &&
	    t == ar_out(c, n, 0) && x->bytes >= 0 && t->bytes > x->bytes)
		t->bytes = x->bytes;
}

/* The node's shapes, its outputs sized, folded and cross-checked;
 * *tainted once its outputs depend on a missing bound (bounds.c). */
static int infer_shapes(InferCtx *c, ArNode *n, const ArOpDef *d,
			bool *tainted)
{
	ArDType before[AR_MAX_OUTPUTS];
	int missing = ar_missing_count(c);
	bool cst;
	int rc;

	if ((rc = check_inputs(c, n)))
		return rc;
	for (int j = 0; j < n->noutputs; j++) {
		ArTensor *t = ar_out(c, n, j);
		before[j] = t ? t->dtype : AR_DT_UNDEFINED;
	}
	rc = d->shape(c, n);
	/* A subgraph with a missing bound taints all the node computes. */
	*tainted |= ar_missing_count(c) > missing;
	if (rc || (rc = ar_settle_bounds(c, n, d)))
		return rc;

	/* A value whose size is known only at run time is computed then;
	 * Shape and Size fold whatever their input's values, not its size. */
	cst = !(d->flags & AR_OP_NOFOLD);
	for (int j = 0; cst && j < n->nexplicit; j++)
		cst = n->inputs[j] < 0 ||
		      ((d->flags & AR_OP_SHAPEONLY) ?
		       !c->g->tensors[n->inputs[j]].bounded :
		       ar_is_const(c, n->inputs[j]));
	for (int j = 0; cst && j < n->noutputs; j++)
		cst = n->outputs[j] < 0 ||
		      !c->g->tensors[n->outputs[j]].bounded;
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
		view_cap(c, n, d, t);
		/* Graph outputs stay outputs: the caller must receive them. */
		if (cst && t->kind == AR_TK_ACTIVATION)
			t->kind = AR_TK_CONSTANT;
		/* A placeholder size differs from any declared one. */
		if (!*tainted && !ar_unsized(c, n->outputs[j]))
			cross_check(c, t, before[j]);
	}
	if (cst)
		ar_fold(c, n);
	return AR_OK;
}

/*
 * A node reading an unsized tensor is inferred as it will be once the
 * bound is given; an error it meets may come from the placeholder, so it
 * leaves its outputs unknown and unsized instead.  An error elsewhere
 * does not depend on bounds and stops inference.
 */
static int infer_node(InferCtx *c, int idx)
{
	ArNode *n = &c->g->nodes[idx];
	const ArOpDef *d;
	bool tainted = ar_reads_unsized(c, n);
	int rc;

	if ((rc = find_def(c, n, &d)))
		return rc;
	if (n->noutputs > AR_MAX_OUTPUTS)
		return ar_node_fail(c, n, "has %d outputs, more than %d",
				    n->noutputs, AR_MAX_OUTPUTS);
	rc = infer_shapes(c, n, d, &tainted);
	if (tainted)
		ar_unsize_outputs(c, n, rc != AR_OK);
	return tainted ? AR_OK : rc;
}

static int infer_graph(InferCtx *c)
{
	ArGraph *g = c->g;
	int rc;
	for (int i = 0; i < g->nnodes; i++) {
		bool rewrote;
		if ((rc = ar_seq_rewrite(c, i, &rewrote)))
			return rc;
		if (rewrote)
			i--;    /* what replaced node i starts there */
		else if ((rc = infer_node(c, i)))
			return rc;
	}
	if ((rc = ar_seq_finish(c)))
		return rc;
	for (int i = 0; i < g->noutputs; i++) {
		const ArTensor *t = &g->tensors[g->outputs[i]];
		if (ar_unsized(c, g->outputs[i]))
			continue;
		if (t->rank < 0 || t->bytes < 0)
			return ar_fail(c->err, AR_EXIT_MODEL, "graph output "
				       "'%s' has an unknown shape", t->name);
	}
	return AR_OK;
}

int ar_infer_subgraph(InferCtx *outer, ArGraph *sub)
{
	InferCtx c = *outer;
	int rc;

	c.g = sub;
	c.seqs = NULL;
	c.capconst = ar_xcalloc((size_t)sub->ntensors + 1, sizeof(bool));
	c.unsized = ar_xcalloc((size_t)sub->ntensors + 1, sizeof(bool));
	c.nunsized = sub->ntensors;
	for (int k = 0; k < sub->ncaptures; k++) {
		int id = sub->captures[k];
		ArTensor *t = &sub->tensors[id];
		int oid = ar_graph_find(outer->g, t->name);
		const ArTensor *o;

		/* The loader captures a name in every scope it passes through. */
		if (oid < 0) {
			free(c.capconst);
			free(c.unsized);
			return ar_fail(c.err, AR_EXIT_INTERNAL, "subgraph '%s' "
				       "captures '%s', which its parent lacks",
				       sub->name, t->name);
		}
		/* A subgraph's shapes may need an outer constant's value. */
		if (ar_is_const(outer, oid))
			ar_fold_value(outer, oid, AR_FOLD_MAX_ELEMS, NULL, NULL);
		o = &outer->g->tensors[oid];
		ar_set_shape(t, o->dtype, o->rank, o->dims);
		t->bounded = o->bounded;
		t->bytes = o->bytes;
		free(t->data);
		t->data = NULL;
		if (o->data && o->bytes >= 0) {
			t->data = ar_xmalloc((size_t)o->bytes);
			memcpy(t->data, o->data, (size_t)o->bytes);
		}
		c.capconst[id] = ar_is_const(outer, oid);
		c.unsized[id] = ar_unsized(outer, oid);
	}
	rc = infer_graph(&c);
	free(c.capconst);
	free(c.unsized);
	return rc;
}

int ar_infer_bounded(ArGraph *g, const ArDiag *diag, const ArBound *bounds,
		     int nbounds, ArError *err)
{
	InferCtx c = {.g = g, .diag = diag, .err = err, .bounds = bounds,
		      .nbounds = nbounds};
	int rc;

	c.bound_used = ar_xcalloc((size_t)nbounds + 1, sizeof(bool));
	ar_missing_start(&c);
	rc = infer_graph(&c);
	if (!rc)
		rc = ar_check_bounds_used(&c);
	if (!rc && ar_missing_count(&c))
		rc = ar_missing_error(&c);
	if (!rc)
		ar_inline_constant_ifs(g);
	ar_seq_free(&c);
	ar_missing_free(&c);
	free(c.unsized);
	free(c.bound_used);
	return rc;
}

int ar_infer(ArGraph *g, const ArDiag *diag, ArError *err)
{
	return ar_infer_bounded(g, diag, NULL, 0, err);
}
