/*
 * fold_eval.c — how each op computes its value from constant inputs: the
 * folders the op table (table.c) names.
 *
 * The driver (frontend/fold.c) decides when to fold and hands a folder
 * one output with its data allocated and zeroed; the folder fills it and
 * returns true, or returns false when it cannot (an overflow, an index out
 * of range, a type it does not handle), and the value stays unknown.
 * Evaluation works per output element through index arithmetic, which is
 * slow but simple and exact.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer_ops.h"

static void set_int(ArTensor *t, int64_t k, int64_t v)
{
	void *p = t->data;
	switch (t->dtype) {
	case AR_DT_BOOL: ((uint8_t *)p)[k] = v != 0; break;
	case AR_DT_UINT8: ((uint8_t *)p)[k] = (uint8_t)v; break;
	case AR_DT_INT8: ((int8_t *)p)[k] = (int8_t)v; break;
	case AR_DT_UINT16: ((uint16_t *)p)[k] = (uint16_t)v; break;
	case AR_DT_INT16: ((int16_t *)p)[k] = (int16_t)v; break;
	case AR_DT_INT32: ((int32_t *)p)[k] = (int32_t)v; break;
	case AR_DT_UINT32: ((uint32_t *)p)[k] = (uint32_t)v; break;
	case AR_DT_UINT64: ((uint64_t *)p)[k] = (uint64_t)v; break;
	case AR_DT_FLOAT: ((float *)p)[k] = (float)v; break;
	case AR_DT_DOUBLE: ((double *)p)[k] = (double)v; break;
	default: ((int64_t *)p)[k] = v; break;
	}
}

static void set_float(ArTensor *t, int64_t k, double v)
{
	if (t->dtype == AR_DT_FLOAT)
		((float *)t->data)[k] = (float)v;
	else if (t->dtype == AR_DT_DOUBLE)
		((double *)t->data)[k] = v;
	else if (t->dtype == AR_DT_BOOL)
		set_int(t, k, v != 0);
	else
		set_int(t, k, isnan(v) ? 0 : v >= 9.2e18 ? INT64_MAX :
			      v <= -9.2e18 ? INT64_MIN : (int64_t)v);
}

/* dst[k] = src[sk], converting the type as Cast would. */
static void copy_elem(ArTensor *d, int64_t k, const ArTensor *s, int64_t sk)
{
	if (ar_dtype_is_float(s->dtype))
		set_float(d, k, ar_get_float(s, sk));
	else if (ar_dtype_is_float(d->dtype))
		set_float(d, k, (double)ar_get_int(s, sk));
	else
		set_int(d, k, ar_get_int(s, sk));
}

static void unravel(int64_t k, int rank, const int64_t *dims, int64_t *idx)
{
	for (int i = rank - 1; i >= 0; i--) {
		idx[i] = dims[i] ? k % dims[i] : 0;
		k = dims[i] ? k / dims[i] : 0;
	}
}

/* Flat index into t of output index idx, broadcasting t's dims. */
static int64_t bcast_index(const ArTensor *t, int orank, const int64_t *idx)
{
	int64_t k = 0;
	for (int i = 0; i < t->rank; i++) {
		int64_t d = t->dims[i];
		k = k * d + (d == 1 ? 0 : idx[orank - t->rank + i]);
	}
	return k;
}

static int64_t ravel(int rank, const int64_t *dims, const int64_t *idx)
{
	int64_t k = 0;
	for (int i = 0; i < rank; i++)
		k = k * dims[i] + idx[i];
	return k;
}

/* One step of a (left fold of a) binary op, or a unary op on a. */
static bool arith_int(ArArith e, int64_t a, int64_t b, int64_t *r)
{
	switch (e) {
	case AR_E_ADD: case AR_E_SUM: case AR_E_MEAN: return ar_add64(a, b, r);
	case AR_E_SUB: return b != INT64_MIN && ar_add64(a, -b, r);
	case AR_E_MUL: return ar_mul64(a, b, r);
	case AR_E_DIV:
		if (b == 0 || (a == INT64_MIN && b == -1))
			return false;
		*r = a / b;
		return true;
	case AR_E_MOD:
		if (b == 0 || (a == INT64_MIN && b == -1))
			return false;
		*r = a % b;
		if (*r && ((*r < 0) != (b < 0)))
			*r += b;    /* fmod=0: the sign of the divisor */
		return true;
	case AR_E_MIN: *r = a < b ? a : b; return true;
	case AR_E_MAX: *r = a > b ? a : b; return true;
	case AR_E_EQ: *r = a == b; return true;
	case AR_E_LT: *r = a < b; return true;
	case AR_E_GT: *r = a > b; return true;
	case AR_E_LE: *r = a <= b; return true;
	case AR_E_GE: *r = a >= b; return true;
	case AR_E_AND: *r = a && b; return true;
	case AR_E_OR: *r = a || b; return true;
	case AR_E_XOR: *r = !a != !b; return true;
	case AR_E_NEG: return a != INT64_MIN && (*r = -a, true);
	case AR_E_ABS: return a != INT64_MIN && (*r = a < 0 ? -a : a, true);
	case AR_E_NOT: *r = !a; return true;
	case AR_E_RELU: *r = a > 0 ? a : 0; return true;
	case AR_E_SIGN: *r = (a > 0) - (a < 0); return true;
	case AR_E_FLOOR: case AR_E_CEIL: *r = a; return true;
	default: return false;
	}
}

static bool arith_float(ArArith e, double a, double b, double *r)
{
	switch (e) {
	case AR_E_ADD: case AR_E_SUM: case AR_E_MEAN: *r = a + b; return true;
	case AR_E_SUB: *r = a - b; return true;
	case AR_E_MUL: *r = a * b; return true;
	case AR_E_DIV: *r = a / b; return true;
	case AR_E_POW: *r = pow(a, b); return true;
	case AR_E_MOD: *r = fmod(a, b); return true;
	case AR_E_MIN: *r = a < b ? a : b; return true;
	case AR_E_MAX: *r = a > b ? a : b; return true;
	case AR_E_EQ: *r = a == b; return true;
	case AR_E_LT: *r = a < b; return true;
	case AR_E_GT: *r = a > b; return true;
	case AR_E_LE: *r = a <= b; return true;
	case AR_E_GE: *r = a >= b; return true;
	case AR_E_NEG: *r = -a; return true;
	case AR_E_ABS: *r = fabs(a); return true;
	case AR_E_SQRT: *r = sqrt(a); return true;
	case AR_E_EXP: *r = exp(a); return true;
	case AR_E_LOG: *r = log(a); return true;
	case AR_E_FLOOR: *r = floor(a); return true;
	case AR_E_CEIL: *r = ceil(a); return true;
	case AR_E_RELU: *r = a > 0 ? a : 0; return true;
	case AR_E_SIGN: *r = (a > 0) - (a < 0); return true;
	case AR_E_RECIP: *r = 1 / a; return true;
	default: return false;
	}
}

/*
 * Whether t broadcasts to out's shape.  bcast_index trusts that it does,
 * but a malformed node may break it: shape inference reads only input 0
 * of a unary op, so "Exp" given a second, larger input would be read past
 * its end.
 */
static bool broadcasts_to(const ArTensor *t, const ArTensor *out)
{
	if (t->rank > out->rank)
		return false;
	for (int i = 0; i < t->rank; i++) {
		int64_t d = t->dims[i];
		if (d != 1 && d != out->dims[out->rank - t->rank + i])
			return false;
	}
	return true;
}

/* Elementwise ops with broadcasting, in ints or doubles by input 0. */
bool ar_fold_arith(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg)
{
	ArArith e = (ArArith)arg;
	const ArTensor *in[8];
	int nin = 0;
	int64_t idx[AR_MAX_RANK], numel = ar_numel(out);
	bool fl;

	for (int j = 0; j < n->nexplicit; j++) {
		ArTensor *t = ar_in(c, n, j);
		if (!t || nin == 8 || !broadcasts_to(t, out))
			return false;
		in[nin++] = t;
	}
	if (!nin)
		return false;
	fl = ar_dtype_is_float(in[0]->dtype);
	for (int64_t k = 0; k < numel; k++) {
		int64_t ri = 0, s[8];
		double rf = 0;
		unravel(k, out->rank, out->dims, idx);
		for (int j = 0; j < nin; j++)
			s[j] = bcast_index(in[j], out->rank, idx);
		if (fl)
			rf = ar_get_float(in[0], s[0]);
		else
			ri = ar_get_int(in[0], s[0]);
		if (nin == 1 && !(fl ? arith_float(e, rf, 0, &rf) :
				   arith_int(e, ri, 0, &ri)))
			return false;
		for (int j = 1; j < nin; j++)
			if (!(fl ? arith_float(e, rf, ar_get_float(in[j], s[j]),
					       &rf) :
				   arith_int(e, ri, ar_get_int(in[j], s[j]),
					     &ri)))
				return false;
		if (e == AR_E_MEAN) {
			if (fl)
				rf /= nin;
			else
				ri /= nin;
		}
		if (fl)
			set_float(out, k, rf);
		else
			set_int(out, k, ri);
	}
	return true;
}

/*
 * Identity-like ops (views, Cast, Dropout's output 0): the values of input
 * 0 in order, converted to out's type.
 */
bool ar_fold_copy(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg)
{
	const ArTensor *x = ar_in(c, n, 0);
	int64_t numel = ar_numel(out);
	if (oj != 0 || ar_numel(x) != numel)
		return false;
	for (int64_t k = 0; k < numel; k++)
		copy_elem(out, k, x, k);
	return true;
}

/* Expand: every output element reads its broadcast source. */
bool ar_fold_expand(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg)
{
	const ArTensor *x = ar_in(c, n, 0);
	int64_t idx[AR_MAX_RANK], numel = ar_numel(out);
	for (int64_t k = 0; k < numel; k++) {
		unravel(k, out->rank, out->dims, idx);
		copy_elem(out, k, x, bcast_index(x, out->rank, idx));
	}
	return true;
}

bool ar_fold_where(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg)
{
	const ArTensor *cond = ar_in(c, n, 0), *a = ar_in(c, n, 1),
		       *b = ar_in(c, n, 2);
	int64_t idx[AR_MAX_RANK], numel = ar_numel(out);
	for (int64_t k = 0; k < numel; k++) {
		unravel(k, out->rank, out->dims, idx);
		if (ar_get_int(cond, bcast_index(cond, out->rank, idx)))
			copy_elem(out, k, a, bcast_index(a, out->rank, idx));
		else
			copy_elem(out, k, b, bcast_index(b, out->rank, idx));
	}
	return true;
}

bool ar_fold_constant(InferCtx *c, ArNode *n, int oj, ArTensor *out,
		      int arg)
{
	const ArAttr *a;
	if ((a = ar_attr(n, "value")) && a->t) {
		/* An empty value has all its elements (torch writes one for
		 * the empty tail of repeat_interleave's shape). */
		if (!a->t->data)
			return ar_numel(out) == 0;
		memcpy(out->data, a->t->data, (size_t)out->bytes);
	} else if ((a = ar_attr(n, "value_int"))) {
		set_int(out, 0, a->i);
	} else if ((a = ar_attr(n, "value_ints"))) {
		for (int i = 0; i < a->nints; i++)
			set_int(out, i, a->ints[i]);
	} else if ((a = ar_attr(n, "value_float"))) {
		set_float(out, 0, a->f);
	} else if ((a = ar_attr(n, "value_floats"))) {
		for (int i = 0; i < a->nfloats; i++)
			set_float(out, i, a->floats[i]);
	}
	return true;
}

bool ar_fold_gather(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg)
{
	const ArTensor *x = ar_in(c, n, 0), *ind = ar_in(c, n, 1);
	int64_t idx[AR_MAX_RANK], src[AR_MAX_RANK], numel = ar_numel(out);
	int64_t axis = ar_attr_int(n, "axis", 0);
	int q = ind->rank;

	if (axis < 0)
		axis += x->rank;
	for (int64_t k = 0; k < numel; k++) {
		int64_t v;
		unravel(k, out->rank, out->dims, idx);
		/* out = x[:axis] ++ ind ++ x[axis+1:] */
		v = ar_get_int(ind, ravel(q, ind->dims, idx + axis));
		if (v < 0)
			v += x->dims[axis];
		if (v < 0 || v >= x->dims[axis])
			return false;
		for (int i = 0; i < x->rank; i++)
			src[i] = i < axis ? idx[i] : i == axis ? v :
				 idx[i - 1 + q];
		copy_elem(out, k, x, ravel(x->rank, x->dims, src));
	}
	return true;
}

bool ar_fold_slice(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg)
{
	const ArTensor *x = ar_in(c, n, 0);
	int64_t first[AR_MAX_RANK], step[AR_MAX_RANK], len[AR_MAX_RANK];
	int64_t idx[AR_MAX_RANK], numel = ar_numel(out);
	ArError scratch;
	InferCtx quiet = *c;

	quiet.err = &scratch;   /* the shape function already checked */
	if (ar_slice_params(&quiet, n, x, first, step, len))
		return false;
	for (int64_t k = 0; k < numel; k++) {
		unravel(k, out->rank, out->dims, idx);
		for (int i = 0; i < x->rank; i++)
			idx[i] = first[i] + idx[i] * step[i];
		copy_elem(out, k, x, ravel(x->rank, x->dims, idx));
	}
	return true;
}

bool ar_fold_concat(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg)
{
	int64_t idx[AR_MAX_RANK], numel = ar_numel(out);
	int64_t axis = ar_attr_int(n, "axis", 0);
	if (axis < 0)
		axis += out->rank;
	for (int64_t k = 0; k < numel; k++) {
		int j = 0;
		const ArTensor *t;
		unravel(k, out->rank, out->dims, idx);
		while ((t = ar_in(c, n, j)) && idx[axis] >= t->dims[axis])
			idx[axis] -= t->dims[axis], j++;
		if (!t)
			return false;
		copy_elem(out, k, t, ravel(t->rank, t->dims, idx));
	}
	return true;
}

/* Output oj of Split: the slice of x along axis after the outputs before
 * it (their shapes, inferred already, give the sizes). */
bool ar_fold_split(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg)
{
	const ArTensor *x = ar_in(c, n, 0);
	int64_t idx[AR_MAX_RANK], numel = ar_numel(out), at = 0;
	int64_t axis = ar_attr_int(n, "axis", 0);
	if (!x || x->rank != out->rank)
		return false;
	if (axis < 0)
		axis += x->rank;
	for (int j = 0; j < oj; j++) {
		const ArTensor *o = ar_out(c, n, j);
		if (!o || o->rank != x->rank)
			return false;
		at += o->dims[axis];
	}
	for (int64_t k = 0; k < numel; k++) {
		unravel(k, out->rank, out->dims, idx);
		idx[axis] += at;
		copy_elem(out, k, x, ravel(x->rank, x->dims, idx));
	}
	return true;
}

bool ar_fold_transpose(InferCtx *c, ArNode *n, int oj, ArTensor *out,
		       int arg)
{
	const ArTensor *x = ar_in(c, n, 0);
	const ArAttr *perm = ar_attr(n, "perm");
	int64_t idx[AR_MAX_RANK], src[AR_MAX_RANK], numel = ar_numel(out);
	for (int64_t k = 0; k < numel; k++) {
		unravel(k, out->rank, out->dims, idx);
		for (int i = 0; i < x->rank; i++)
			src[perm ? perm->ints[i] : x->rank - 1 - i] = idx[i];
		copy_elem(out, k, x, ravel(x->rank, x->dims, src));
	}
	return true;
}

bool ar_fold_range(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg)
{
	const ArTensor *s = ar_in(c, n, 0), *d = ar_in(c, n, 2);
	int64_t numel = ar_numel(out);
	for (int64_t k = 0; k < numel; k++) {
		if (ar_dtype_is_float(out->dtype))
			set_float(out, k, ar_get_float(s, 0) +
					  (double)k * ar_get_float(d, 0));
		else
			set_int(out, k, ar_get_int(s, 0) +
					k * ar_get_int(d, 0));
	}
	return true;
}

/* ReduceSum/Prod/Min/Max (arg: the arithmetic op) over the reduced axes,
 * for ints. */
bool ar_fold_reduce(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg)
{
	const ArTensor *x = ar_in(c, n, 0);
	bool mark[AR_MAX_RANK];
	int64_t idx[AR_MAX_RANK], numel = ar_numel(x), *acc;
	ArArith e = (ArArith)arg;
	ArError scratch;
	InferCtx quiet = *c;
	bool ok = true;

	quiet.err = &scratch;
	if (!ar_dtype_is_int(x->dtype) || numel == 0 ||
	    ar_reduce_axes(&quiet, n, x, mark))
		return false;
	acc = ar_xmalloc(((size_t)ar_numel(out) + 1) * sizeof *acc);
	for (int64_t k = 0; k < ar_numel(out); k++)
		acc[k] = e == AR_E_ADD ? 0 : e == AR_E_MUL ? 1 :
			 e == AR_E_MIN ? INT64_MAX : INT64_MIN;
	for (int64_t k = 0; ok && k < numel; k++) {
		int64_t o = 0;
		unravel(k, x->rank, x->dims, idx);
		for (int i = 0; i < x->rank; i++)
			if (!mark[i])
				o = o * x->dims[i] + idx[i];
		ok = arith_int(e, acc[o], ar_get_int(x, k), &acc[o]);
	}
	for (int64_t k = 0; ok && k < ar_numel(out); k++)
		set_int(out, k, acc[k]);
	free(acc);
	return ok;
}

bool ar_fold_shape(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg)
{
	const ArTensor *x = ar_in(c, n, 0);
	int s, end;
	ar_shape_range_of(n, x->rank, &s, &end);
	for (int i = s; i < end; i++)
		set_int(out, i - s, x->dims[i]);
	return true;
}

bool ar_fold_size(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg)
{
	set_int(out, 0, ar_numel(ar_in(c, n, 0)));
	return true;
}

/* The fill value (its "value" attribute, else 0) everywhere. */
bool ar_fold_constantofshape(InferCtx *c, ArNode *n, int oj, ArTensor *out,
			     int arg)
{
	const ArAttr *a = ar_attr(n, "value");
	int64_t numel = ar_numel(out);
	for (int64_t k = 0; k < numel; k++) {
		if (a && a->t && a->t->data)
			copy_elem(out, k, a->t, 0);
		else
			set_int(out, k, 0);
	}
	return true;
}
