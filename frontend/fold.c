/*
 * fold.c — evaluates nodes whose inputs are compile-time constants.
 *
 * Only values that later shapes may depend on are worth computing: shape
 * subgraphs (Shape -> Gather -> Concat -> Reshape), ConstantOfShape fills,
 * small index arithmetic.  Results above AR_FOLD_MAX_ELEMS, of types other
 * than ints, bool, float and double, or of ops not below stay unknown
 * (data NULL): the tensor is still a constant by kind, and a shape that
 * needs its values reports that clearly.  Evaluation works per output
 * element through index arithmetic, which is slow but simple and exact.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer_ops.h"

static bool foldable_type(ArDType dt)
{
	return ar_dtype_is_int(dt) || ar_dtype_is_float(dt);
}

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

typedef enum {
	E_ADD, E_SUB, E_MUL, E_DIV, E_POW, E_MOD, E_MIN, E_MAX, E_SUM, E_MEAN,
	E_EQ, E_LT, E_GT, E_LE, E_GE, E_AND, E_OR, E_XOR,
	E_NEG, E_ABS, E_NOT, E_SQRT, E_EXP, E_LOG, E_FLOOR, E_CEIL, E_RELU,
	E_SIGN, E_RECIP, E_NONE
} Arith;

static const struct {
	const char *op;
	Arith e;
} arith_ops[] = {
	{"Add", E_ADD}, {"Sub", E_SUB}, {"Mul", E_MUL}, {"Div", E_DIV},
	{"Pow", E_POW}, {"Mod", E_MOD}, {"Min", E_MIN}, {"Max", E_MAX},
	{"Sum", E_SUM}, {"Mean", E_MEAN}, {"Equal", E_EQ}, {"Less", E_LT},
	{"Greater", E_GT}, {"LessOrEqual", E_LE}, {"GreaterOrEqual", E_GE},
	{"And", E_AND}, {"Or", E_OR}, {"Xor", E_XOR}, {"Neg", E_NEG},
	{"Abs", E_ABS}, {"Not", E_NOT}, {"Sqrt", E_SQRT}, {"Exp", E_EXP},
	{"Log", E_LOG}, {"Floor", E_FLOOR}, {"Ceil", E_CEIL}, {"Relu", E_RELU},
	{"Sign", E_SIGN}, {"Reciprocal", E_RECIP},
};

static Arith arith_of(const char *op)
{
	for (size_t i = 0; i < sizeof arith_ops / sizeof arith_ops[0]; i++)
		if (!strcmp(arith_ops[i].op, op))
			return arith_ops[i].e;
	return E_NONE;
}

/* One step of a (left fold of a) binary op, or a unary op on a. */
static bool arith_int(Arith e, int64_t a, int64_t b, int64_t *r)
{
	switch (e) {
	case E_ADD: case E_SUM: case E_MEAN: return ar_add64(a, b, r);
	case E_SUB: return b != INT64_MIN && ar_add64(a, -b, r);
	case E_MUL: return ar_mul64(a, b, r);
	case E_DIV:
		if (b == 0 || (a == INT64_MIN && b == -1))
			return false;
		*r = a / b;
		return true;
	case E_MOD:
		if (b == 0 || (a == INT64_MIN && b == -1))
			return false;
		*r = a % b;
		if (*r && ((*r < 0) != (b < 0)))
			*r += b;    /* fmod=0: the sign of the divisor */
		return true;
	case E_MIN: *r = a < b ? a : b; return true;
	case E_MAX: *r = a > b ? a : b; return true;
	case E_EQ: *r = a == b; return true;
	case E_LT: *r = a < b; return true;
	case E_GT: *r = a > b; return true;
	case E_LE: *r = a <= b; return true;
	case E_GE: *r = a >= b; return true;
	case E_AND: *r = a && b; return true;
	case E_OR: *r = a || b; return true;
	case E_XOR: *r = !a != !b; return true;
	case E_NEG: return a != INT64_MIN && (*r = -a, true);
	case E_ABS: return a != INT64_MIN && (*r = a < 0 ? -a : a, true);
	case E_NOT: *r = !a; return true;
	case E_RELU: *r = a > 0 ? a : 0; return true;
	case E_SIGN: *r = (a > 0) - (a < 0); return true;
	case E_FLOOR: case E_CEIL: *r = a; return true;
	default: return false;
	}
}

static bool arith_float(Arith e, double a, double b, double *r)
{
	switch (e) {
	case E_ADD: case E_SUM: case E_MEAN: *r = a + b; return true;
	case E_SUB: *r = a - b; return true;
	case E_MUL: *r = a * b; return true;
	case E_DIV: *r = a / b; return true;
	case E_POW: *r = pow(a, b); return true;
	case E_MOD: *r = fmod(a, b); return true;
	case E_MIN: *r = a < b ? a : b; return true;
	case E_MAX: *r = a > b ? a : b; return true;
	case E_EQ: *r = a == b; return true;
	case E_LT: *r = a < b; return true;
	case E_GT: *r = a > b; return true;
	case E_LE: *r = a <= b; return true;
	case E_GE: *r = a >= b; return true;
	case E_NEG: *r = -a; return true;
	case E_ABS: *r = fabs(a); return true;
	case E_SQRT: *r = sqrt(a); return true;
	case E_EXP: *r = exp(a); return true;
	case E_LOG: *r = log(a); return true;
	case E_FLOOR: *r = floor(a); return true;
	case E_CEIL: *r = ceil(a); return true;
	case E_RELU: *r = a > 0 ? a : 0; return true;
	case E_SIGN: *r = (a > 0) - (a < 0); return true;
	case E_RECIP: *r = 1 / a; return true;
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
static bool eval_arith(InferCtx *c, ArNode *n, ArTensor *out, Arith e)
{
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
		if (e == E_MEAN) {
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

/* Identity-like ops: the values in order, converted to out's type. */
static bool eval_copy(const ArTensor *x, ArTensor *out)
{
	int64_t numel = ar_numel(out);
	if (ar_numel(x) != numel)
		return false;
	for (int64_t k = 0; k < numel; k++)
		copy_elem(out, k, x, k);
	return true;
}

/* Expand: every output element reads its broadcast source. */
static bool eval_expand(const ArTensor *x, ArTensor *out)
{
	int64_t idx[AR_MAX_RANK], numel = ar_numel(out);
	for (int64_t k = 0; k < numel; k++) {
		unravel(k, out->rank, out->dims, idx);
		copy_elem(out, k, x, bcast_index(x, out->rank, idx));
	}
	return true;
}

static bool eval_where(InferCtx *c, ArNode *n, ArTensor *out)
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

static bool eval_constant(const ArNode *n, ArTensor *out)
{
	const ArAttr *a;
	if ((a = ar_attr(n, "value")) && a->t) {
		if (!a->t->data)
			return false;
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

static bool eval_gather(InferCtx *c, ArNode *n, ArTensor *out)
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

static bool eval_slice(InferCtx *c, ArNode *n, ArTensor *out)
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

static bool eval_concat(InferCtx *c, ArNode *n, ArTensor *out)
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

static bool eval_transpose(InferCtx *c, ArNode *n, ArTensor *out)
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

static bool eval_range(InferCtx *c, ArNode *n, ArTensor *out)
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

/* ReduceSum/Prod/Min/Max over the marked axes, for ints. */
static bool eval_reduce(InferCtx *c, ArNode *n, ArTensor *out)
{
	const ArTensor *x = ar_in(c, n, 0);
	bool mark[AR_MAX_RANK];
	int64_t idx[AR_MAX_RANK], numel = ar_numel(x), *acc;
	Arith e = !strcmp(n->op, "ReduceSum") ? E_ADD :
		  !strcmp(n->op, "ReduceProd") ? E_MUL :
		  !strcmp(n->op, "ReduceMin") ? E_MIN :
		  !strcmp(n->op, "ReduceMax") ? E_MAX : E_NONE;
	ArError scratch;
	InferCtx quiet = *c;
	bool ok = true;

	quiet.err = &scratch;
	if (e == E_NONE || !ar_dtype_is_int(x->dtype) || numel == 0 ||
	    ar_reduce_axes(&quiet, n, x, mark))
		return false;
	acc = ar_xmalloc(((size_t)ar_numel(out) + 1) * sizeof *acc);
	for (int64_t k = 0; k < ar_numel(out); k++)
		acc[k] = e == E_ADD ? 0 : e == E_MUL ? 1 :
			 e == E_MIN ? INT64_MAX : INT64_MIN;
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

static bool eval(InferCtx *c, ArNode *n, int j, ArTensor *out)
{
	const char *op = n->op;
	ArTensor *x = ar_in(c, n, 0);
	Arith e;

	if (!strcmp(op, "Constant"))
		return eval_constant(n, out);
	if (!strcmp(op, "Shape")) {
		int s, end;
		ar_shape_range_of(n, x->rank, &s, &end);
		for (int i = s; i < end; i++)
			set_int(out, i - s, x->dims[i]);
		return true;
	}
	if (!strcmp(op, "Size")) {
		set_int(out, 0, ar_numel(x));
		return true;
	}
	if (!strcmp(op, "ConstantOfShape")) {
		const ArAttr *a = ar_attr(n, "value");
		for (int64_t k = 0; k < ar_numel(out); k++) {
			if (a && a->t && a->t->data)
				copy_elem(out, k, a->t, 0);
			else
				set_int(out, k, 0);
		}
		return true;
	}
	if (!strcmp(op, "Range"))
		return eval_range(c, n, out);
	/* Everything below reads its inputs' values. */
	for (int i = 0; i < n->nexplicit; i++) {
		const ArTensor *t = ar_in(c, n, i);
		if (t && (!t->data || !foldable_type(t->dtype)))
			return false;
	}
	if (!x)
		return false;
	if (!strcmp(op, "Identity") || !strcmp(op, "Reshape") ||
	    !strcmp(op, "Flatten") || !strcmp(op, "Squeeze") ||
	    !strcmp(op, "Unsqueeze") || !strcmp(op, "Cast") ||
	    !strcmp(op, "CastLike") || (!strcmp(op, "Dropout") && j == 0))
		return eval_copy(x, out);
	if (!strcmp(op, "Expand"))
		return eval_expand(x, out);
	if (!strcmp(op, "Where"))
		return eval_where(c, n, out);
	if (!strcmp(op, "Gather"))
		return eval_gather(c, n, out);
	if (!strcmp(op, "Slice"))
		return eval_slice(c, n, out);
	if (!strcmp(op, "Concat"))
		return eval_concat(c, n, out);
	if (!strcmp(op, "Transpose"))
		return eval_transpose(c, n, out);
	if (!strncmp(op, "Reduce", 6))
		return eval_reduce(c, n, out);
	if ((e = arith_of(op)) != E_NONE)
		return eval_arith(c, n, out, e);
	return false;
}

void ar_fold(InferCtx *c, ArNode *n)
{
	for (int j = 0; j < n->noutputs; j++) {
		ArTensor *out = ar_out(c, n, j);
		int64_t numel;
		if (!out || out->data || out->rank < 0 ||
		    !foldable_type(out->dtype))
			continue;
		numel = ar_numel(out);
		if (numel < 0 || numel > AR_FOLD_MAX_ELEMS)
			continue;
		out->data = ar_xcalloc((size_t)out->bytes + 1, 1);
		if (!eval(c, n, j, out)) {
			free(out->data);
			out->data = NULL;
		}
	}
}
