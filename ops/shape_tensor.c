/*
 * shape_tensor.c — shapes of ops that rearrange, select or create tensors:
 * Reshape, Transpose, Concat, Split, Slice, Gather, Pad, Resize, Expand,
 * Tile, the reductions, and the shape-producing ops (Shape, Constant...).
 *
 * Many of these moved an attribute to an input at some opset (Slice 10,
 * Pad 11, Split/Squeeze/Unsqueeze/ReduceSum 13, the other reductions 18);
 * params() reads whichever form the node's opset uses.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer_ops.h"

/*
 * Int parameters from attribute `attr` before opset `since`, from input j
 * from then on.  *v is NULL with *cnt -1 when absent.
 */
static int params(InferCtx *c, const ArNode *n, const char *attr, int64_t since,
		  int j, int64_t **v, int64_t *cnt)
{
	if (n->opset < since) {
		ar_attr_ints(n, attr, v, cnt);
		return AR_OK;
	}
	return ar_const_ints(c, n, j, v, cnt);
}

/*
 * The element count of input j, a 1-D parameter known only at run time
 * (a shape, axes): its length is static unless the input is bounded.
 */
static int runtime_len(InferCtx *c, const ArNode *n, int j, int64_t *len)
{
	const ArTensor *t = ar_in(c, n, j);
	if (t->bounded || t->rank > 1)
		return ar_node_fail(c, n, "input %d ('%s') is known only at "
				    "run time and so is its length: the output "
				    "rank is not static", j, t->name);
	*len = ar_numel(t);
	if (*len > AR_MAX_RANK)
		return ar_node_fail(c, n, "input %d ('%s') has %lld values, "
				    "above the rank limit of %d", j, t->name,
				    (long long)*len, AR_MAX_RANK);
	return AR_OK;
}

/* Output 0 of rank len with every axis data-dependent, at most max. */
static void all_bounded(InferCtx *c, const ArNode *n, ArDType dt, int rank,
			int64_t max)
{
	int64_t dims[AR_MAX_RANK];
	for (int i = 0; i < rank; i++)
		dims[i] = max;
	ar_set_shape(ar_out(c, n, 0), dt, rank, dims);
	for (int i = 0; i < rank; i++)
		ar_bound_axis(ar_out(c, n, 0), i, max);
}

int ar_shape_constant(InferCtx *c, ArNode *n)
{
	const ArAttr *a;
	int64_t len;

	if ((a = ar_attr(n, "value")) && a->t) {
		if (a->t->dtype == AR_DT_STRING)
			return ar_node_fail(c, n, "string constants have no "
					    "fixed byte size");
		ar_set_shape(ar_out(c, n, 0), a->t->dtype, a->t->rank,
			     a->t->dims);
	} else if ((a = ar_attr(n, "value_int"))) {
		ar_set_shape(ar_out(c, n, 0), AR_DT_INT64, 0, NULL);
	} else if ((a = ar_attr(n, "value_ints"))) {
		len = a->nints;
		ar_set_shape(ar_out(c, n, 0), AR_DT_INT64, 1, &len);
	} else if ((a = ar_attr(n, "value_float"))) {
		ar_set_shape(ar_out(c, n, 0), AR_DT_FLOAT, 0, NULL);
	} else if ((a = ar_attr(n, "value_floats"))) {
		len = a->nfloats;
		ar_set_shape(ar_out(c, n, 0), AR_DT_FLOAT, 1, &len);
	} else if (ar_attr(n, "value_string") || ar_attr(n, "value_strings")) {
		return ar_node_fail(c, n, "string constants have no fixed "
				    "byte size");
	} else {
		return ar_node_fail(c, n, "has no value attribute arenac "
				    "supports (sparse values are not)");
	}
	return AR_OK;
}

/* Dims from a 1-D int tensor of values, each >= 0. */
static int dims_from_input(InferCtx *c, const ArNode *n, int j, int *rank,
			   int64_t *dims)
{
	int64_t *v, cnt;
	int rc = ar_const_ints(c, n, j, &v, &cnt);
	if (rc)
		return rc;
	if (cnt < 0)
		return ar_node_fail(c, n, "input %d is required but missing",
				    j);
	if (cnt > AR_MAX_RANK) {
		free(v);
		return ar_node_fail(c, n, "shape has %lld dims, above the "
				    "limit of %d", (long long)cnt, AR_MAX_RANK);
	}
	for (int i = 0; i < cnt; i++)
		dims[i] = v[i];
	*rank = (int)cnt;
	free(v);
	return AR_OK;
}

int ar_shape_constantofshape(InferCtx *c, ArNode *n)
{
	const ArAttr *a = ar_attr(n, "value");
	ArDType dt = a && a->t ? a->t->dtype : AR_DT_FLOAT;
	int64_t dims[AR_MAX_RANK], len;
	int rank, rc;

	if (ar_runtime_input(c, n, 0)) {
		if (!(rc = runtime_len(c, n, 0, &len)))
			all_bounded(c, n, dt, (int)len, AR_NO_BOUND);
		return rc;
	}
	if ((rc = dims_from_input(c, n, 0, &rank, dims)))
		return rc;
	for (int i = 0; i < rank; i++)
		if (dims[i] < 0)
			return ar_node_fail(c, n, "negative dim %lld in the "
					    "shape", (long long)dims[i]);
	ar_set_shape(ar_out(c, n, 0), dt, rank, dims);
	return AR_OK;
}

/* Shape's [start, end) (opset 15), clamped to the rank. */
void ar_shape_range_of(const ArNode *n, int rank, int *start, int *end)
{
	int64_t s = ar_attr_int(n, "start", 0), e = ar_attr_int(n, "end", rank);
	if (s < 0)
		s += rank;
	if (e < 0)
		e += rank;
	s = s < 0 ? 0 : s > rank ? rank : s;
	e = e < 0 ? 0 : e > rank ? rank : e;
	*start = (int)s;
	*end = (int)(e < s ? s : e);
}

int ar_shape_shape(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t len;
	int s, e, rc = ar_need(c, n, 0, &x);
	if (rc)
		return rc;
	ar_shape_range_of(n, x->rank, &s, &e);
	len = e - s;
	ar_set_shape(ar_out(c, n, 0), AR_DT_INT64, 1, &len);
	return AR_OK;
}

int ar_shape_size(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int rc = ar_need(c, n, 0, &x);
	if (rc)
		return rc;
	ar_set_shape(ar_out(c, n, 0), AR_DT_INT64, 0, NULL);
	return AR_OK;
}

/*
 * A Reshape to a shape known only at run time keeps the element count: a
 * rank-1 result is exact, each axis of another is at most the count (the
 * driver caps the view's bytes at its input's).
 */
static int reshape_runtime(InferCtx *c, ArNode *n, const ArTensor *x)
{
	int64_t len, numel = ar_numel(x);
	int rc = runtime_len(c, n, 1, &len);
	if (rc)
		return rc;
	if (len == 1 && numel > 0 && !x->bounded)
		ar_set_shape(ar_out(c, n, 0), x->dtype, 1, &numel);
	else
		all_bounded(c, n, x->dtype, (int)len,
			    numel > 0 ? numel : AR_NO_BOUND);
	return AR_OK;
}

int ar_shape_reshape(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t *v, cnt, dims[AR_MAX_RANK], known = 1, numel;
	int infer = -1, rc;
	bool allowzero = ar_attr_int(n, "allowzero", 0) != 0;
	uint32_t axes = 0;

	if ((rc = ar_need(c, n, 0, &x)))
		return rc;
	if (n->opset >= 5 && ar_runtime_input(c, n, 1))
		return reshape_runtime(c, n, x);
	if ((rc = params(c, n, "shape", 5, 1, &v, &cnt)))
		return rc;
	if (cnt < 0)
		return ar_node_fail(c, n, "the target shape is missing");
	if (cnt > AR_MAX_RANK)
		rc = ar_node_fail(c, n, "target shape has %lld dims, above "
				  "the limit of %d", (long long)cnt,
				  AR_MAX_RANK);
	for (int i = 0; !rc && i < cnt; i++) {
		dims[i] = v[i];
		if (v[i] == 0 && !allowzero) {
			if (i >= x->rank)
				rc = ar_node_fail(c, n, "target dim %d is 0 "
						  "(copy) but the input has "
						  "rank %d", i, x->rank);
			else
				dims[i] = x->dims[i];
			axes |= i < x->rank ? AR_BOUNDED(x, i) << i : 0;
		} else if (v[i] == -1) {
			if (infer >= 0)
				rc = ar_node_fail(c, n, "target shape has more "
						  "than one -1");
			infer = i;
			continue;
		} else if (v[i] < 0) {
			rc = ar_node_fail(c, n, "target dim %lld is invalid",
					  (long long)v[i]);
		}
		if (!rc && !ar_mul64(known, dims[i], &known))
			rc = ar_node_fail(c, n, "target shape overflows");
	}
	free(v);
	if (rc)
		return rc;
	/* A bounded input has at most numel elements: the -1 dim takes
	 * the largest whole count. */
	numel = ar_numel(x);
	if (infer >= 0) {
		if (known == 0 || (numel % known && !x->bounded))
			return ar_node_fail(c, n, "cannot reshape %lld elements "
					    "with a -1 dim: the other dims "
					    "make %lld", (long long)numel,
					    (long long)known);
		dims[infer] = numel / known;
		axes |= x->bounded ? 1u << infer : 0;
	} else if (x->bounded ? known > numel : known != numel) {
		return ar_node_fail(c, n, "cannot reshape %lld elements into "
				    "%lld", (long long)numel, (long long)known);
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, (int)cnt, dims);
	ar_set_bounded(ar_out(c, n, 0), axes);
	return AR_OK;
}

int ar_shape_flatten(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t axis = ar_attr_int(n, "axis", 1), dims[2];
	int rc = ar_need(c, n, 0, &x);
	if (rc)
		return rc;
	if (axis < -x->rank || axis > x->rank)
		return ar_node_fail(c, n, "axis %lld is out of range for rank "
				    "%d", (long long)axis, x->rank);
	if (axis < 0)
		axis += x->rank;
	dims[0] = ar_prod(x->dims, 0, (int)axis);
	dims[1] = ar_prod(x->dims, (int)axis, x->rank);
	ar_set_shape(ar_out(c, n, 0), x->dtype, 2, dims);
	return AR_OK;
}

int ar_shape_transpose(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t dims[AR_MAX_RANK];
	const ArAttr *perm = ar_attr(n, "perm");
	bool used[AR_MAX_RANK] = {0};
	uint32_t axes = 0;
	int rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	if (perm && perm->nints != x->rank)
		return ar_node_fail(c, n, "perm has %d values for rank %d",
				    perm->nints, x->rank);
	for (int i = 0; i < x->rank; i++) {
		int64_t p = perm ? perm->ints[i] : x->rank - 1 - i;
		if (p < 0 || p >= x->rank || used[p])
			return ar_node_fail(c, n, "perm is not a permutation "
					    "of 0..%d", x->rank - 1);
		used[p] = true;
		dims[i] = x->dims[p];
		axes |= AR_BOUNDED(x, p) << i;
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
	ar_set_bounded(ar_out(c, n, 0), axes);
	return AR_OK;
}

int ar_shape_concat(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t dims[AR_MAX_RANK];
	uint32_t axes;
	int axis, rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	axes = x->bounded;
	if (!ar_attr(n, "axis"))
		return ar_node_fail(c, n, "attribute 'axis' is missing");
	if ((rc = ar_axis(c, n, ar_attr_int(n, "axis", 0), x->rank, &axis)))
		return rc;
	memcpy(dims, x->dims, sizeof dims);
	for (int j = 1; j < n->nexplicit; j++) {
		ArTensor *t;
		if ((rc = ar_need(c, n, j, &t)))
			return rc;
		if (t->rank != x->rank)
			return ar_node_fail(c, n, "input %d ('%s') has rank %d, "
					    "input 0 has %d", j, t->name,
					    t->rank, x->rank);
		for (int i = 0; i < x->rank; i++)
			if (i != axis && t->dims[i] != x->dims[i])
				return ar_node_fail(c, n, "input %d ('%s') has "
						    "dim %lld at axis %d, input "
						    "0 has %lld", j, t->name,
						    (long long)t->dims[i], i,
						    (long long)x->dims[i]);
		if (!ar_add64(dims[axis], t->dims[axis], &dims[axis]))
			return ar_node_fail(c, n, "concatenated dim overflows");
		axes |= t->bounded;
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
	ar_set_bounded(ar_out(c, n, 0), axes);
	return AR_OK;
}

int ar_shape_split(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t *sizes, cnt, dims[AR_MAX_RANK], total = 0, nout = n->noutputs;
	int axis, rc = ar_need(c, n, 0, &x);

	if (rc || (rc = ar_axis(c, n, ar_attr_int(n, "axis", 0), x->rank,
				&axis)))
		return rc;
	/* Sizes known only at run time: each part at most the whole. */
	if (n->opset >= 13 && ar_runtime_input(c, n, 1)) {
		for (int j = 0; j < nout; j++) {
			ar_same_as(c, n, j, x);
			ar_bound_axis(ar_out(c, n, j), axis, x->dims[axis]);
		}
		return AR_OK;
	}
	if ((rc = params(c, n, "split", 13, 1, &sizes, &cnt)))
		return rc;
	if (cnt < 0) {
		/* Equal parts; opset 18's num_outputs allows a smaller last. */
		int64_t num = ar_attr_int(n, "num_outputs", nout), d = x->dims[axis];
		int64_t chunk = num > 0 ? d / num + (d % num != 0) : 0;
		if (num != nout || num < 1 ||
		    (!ar_attr(n, "num_outputs") && d % num))
			return ar_node_fail(c, n, "cannot split dim %lld into %lld "
					    "equal parts", (long long)d,
					    (long long)nout);
		cnt = nout;
		sizes = ar_xmalloc((size_t)nout * sizeof *sizes);
		for (int64_t i = 0; i < nout; i++, d -= chunk)
			sizes[i] = d < chunk ? (d > 0 ? d : 0) : chunk;
	}
	if (cnt != nout) {
		free(sizes);
		return ar_node_fail(c, n, "split has %lld sizes for %lld "
				    "outputs", (long long)cnt, (long long)nout);
	}
	for (int64_t i = 0; i < cnt; i++)
		if (sizes[i] < 0 || !ar_add64(total, sizes[i], &total)) {
			free(sizes);
			return ar_node_fail(c, n, "invalid split size");
		}
	if (total != x->dims[axis]) {
		free(sizes);
		return ar_node_fail(c, n, "split sizes add up to %lld, the dim "
				    "is %lld", (long long)total,
				    (long long)x->dims[axis]);
	}
	memcpy(dims, x->dims, sizeof dims);
	for (int j = 0; j < nout; j++) {
		dims[axis] = sizes[j];
		ar_set_shape(ar_out(c, n, j), x->dtype, x->rank, dims);
	}
	free(sizes);
	return AR_OK;
}

void ar_slice_bounds(int64_t dim, int64_t start, int64_t end, int64_t step,
		     int64_t *first, int64_t *len)
{
	if (start < 0)
		start += dim;
	if (end < 0)
		end += dim;
	if (step > 0) {
		start = start < 0 ? 0 : start > dim ? dim : start;
		end = end < 0 ? 0 : end > dim ? dim : end;
		*len = end > start ? (end - start - 1) / step + 1 : 0;
	} else {
		start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
		end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
		*len = start > end ? (start - end - 1) / -step + 1 : 0;
	}
	*first = start;
}

/*
 * Slice's parameters per axis of x: first index, step and count.  Shared
 * with the folder, which walks the same elements.
 */
int ar_slice_params(InferCtx *c, const ArNode *n, const ArTensor *x,
		    int64_t *first, int64_t *step, int64_t *len)
{
	int64_t *st = NULL, *en = NULL, *ax = NULL, *sp = NULL;
	int64_t ns, ne, na, np;
	bool seen[AR_MAX_RANK] = {0};
	int rc;

	if ((rc = params(c, n, "starts", 10, 1, &st, &ns)) ||
	    (rc = params(c, n, "ends", 10, 2, &en, &ne)) ||
	    (rc = params(c, n, "axes", 10, 3, &ax, &na)) ||
	    (rc = ar_const_ints(c, n, n->opset < 10 ? -1 : 4, &sp, &np)))
		goto out;
	if (ns < 0 || ne != ns || (na >= 0 && na != ns) ||
	    (np >= 0 && np != ns)) {
		rc = ar_node_fail(c, n, "starts, ends, axes and steps must be "
				  "given with equal lengths");
		goto out;
	}
	for (int i = 0; i < x->rank; i++)
		first[i] = 0, step[i] = 1, len[i] = x->dims[i];
	for (int64_t k = 0; k < ns; k++) {
		int a;
		int64_t s = sp ? sp[k] : 1;
		if ((rc = ar_axis(c, n, ax ? ax[k] : k, x->rank, &a)))
			goto out;
		if (seen[a] || s == 0) {
			rc = ar_node_fail(c, n, "axis %d repeated or step 0", a);
			goto out;
		}
		seen[a] = true;
		step[a] = s;
		ar_slice_bounds(x->dims[a], st[k], en[k], s, &first[a], &len[a]);
	}
out:
	free(st), free(en), free(ax), free(sp);
	return rc;
}

/* Marks normalised axes; fails on duplicates. */
static int mark_axes(InferCtx *c, const ArNode *n, const int64_t *ax,
		     int64_t cnt, int rank, bool *mark)
{
	int rc;
	for (int i = 0; i < rank; i++)
		mark[i] = false;
	for (int64_t k = 0; k < cnt; k++) {
		int a;
		if ((rc = ar_axis(c, n, ax[k], rank, &a)))
			return rc;
		if (mark[a])
			return ar_node_fail(c, n, "axis %d is repeated", a);
		mark[a] = true;
	}
	return AR_OK;
}

/*
 * Marks the axes a node names in its axes input j (or attribute before
 * opset since): all axes when the axes are absent or known only at run
 * time.
 */
static int axes_or_all(InferCtx *c, const ArNode *n, int64_t since, int j,
		       int rank, bool *mark)
{
	int64_t *ax = NULL, cnt = -1;
	int rc = AR_OK;

	if (n->opset < since || !ar_runtime_input(c, n, j))
		rc = params(c, n, "axes", since, j, &ax, &cnt);
	if (!rc && cnt >= 0)
		rc = mark_axes(c, n, ax, cnt, rank, mark);
	for (int i = 0; !rc && cnt < 0 && i < rank; i++)
		mark[i] = true;
	free(ax);
	return rc;
}

/* Starts, ends or steps known only at run time: each sliced axis keeps
 * at most its extent. */
static int slice_runtime(InferCtx *c, ArNode *n, const ArTensor *x)
{
	bool mark[AR_MAX_RANK];
	int rc = axes_or_all(c, n, 10, 3, x->rank, mark);
	if (rc)
		return rc;
	ar_same_as(c, n, 0, x);
	for (int i = 0; i < x->rank; i++)
		if (mark[i])
			ar_bound_axis(ar_out(c, n, 0), i, x->dims[i]);
	return AR_OK;
}

int ar_shape_slice(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t first[AR_MAX_RANK], step[AR_MAX_RANK], len[AR_MAX_RANK];
	int rc = ar_need(c, n, 0, &x);
	if (rc)
		return rc;
	for (int j = 1; n->opset >= 10 && j <= 4; j++)
		if (ar_runtime_input(c, n, j))
			return slice_runtime(c, n, x);
	if ((rc = ar_slice_params(c, n, x, first, step, len)))
		return rc;
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, len);
	ar_set_bounded(ar_out(c, n, 0), x->bounded);
	return AR_OK;
}

/* The largest of x's dims [from, to), at least lo. */
static int64_t max_dim(const ArTensor *x, int from, int to, int64_t lo)
{
	for (int i = from < 0 ? 0 : from; i < to && i < x->rank; i++)
		lo = x->dims[i] > lo ? x->dims[i] : lo;
	return lo;
}

/*
 * Axes input j names k axes known only at run time.  Squeezing (or
 * reducing without keepdims) drops k of x's axes, so output axis i is one
 * of x's axes i..i+k; unsqueezing inserts k, so output axis i is 1 or one
 * of x's axes i-k..i.  Either way it is at most their largest.
 */
static int runtime_axes(InferCtx *c, ArNode *n, const ArTensor *x, int j,
			bool insert)
{
	int64_t k;
	int rank, rc = runtime_len(c, n, j, &k);
	if (rc)
		return rc;
	rank = insert ? x->rank + (int)k : x->rank - (int)k;
	if (rank < 0 || rank > AR_MAX_RANK)
		return ar_node_fail(c, n, "%lld axes for rank %d",
				    (long long)k, x->rank);
	all_bounded(c, n, x->dtype, rank, 0);
	for (int i = 0; i < rank; i++)
		ar_bound_axis(ar_out(c, n, 0), i, insert ?
			      max_dim(x, i - (int)k, i + 1, 1) :
			      max_dim(x, i, i + (int)k + 1, 0));
	return AR_OK;
}

int ar_shape_squeeze(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t *ax, cnt, dims[AR_MAX_RANK];
	bool mark[AR_MAX_RANK];
	uint32_t axes = 0;
	int rank = 0, rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	if (n->opset >= 13 && ar_runtime_input(c, n, 1))
		return runtime_axes(c, n, x, 1, false);
	if ((rc = params(c, n, "axes", 13, 1, &ax, &cnt)))
		return rc;
	rc = mark_axes(c, n, ax, cnt < 0 ? 0 : cnt, x->rank, mark);
	free(ax);
	if (rc)
		return rc;
	for (int i = 0; i < x->rank; i++) {
		if (cnt <= 0 ? x->dims[i] == 1 : mark[i]) {
			if (x->dims[i] != 1)
				return ar_node_fail(c, n, "cannot squeeze axis "
						    "%d of size %lld", i,
						    (long long)x->dims[i]);
			continue;
		}
		axes |= AR_BOUNDED(x, i) << rank;
		dims[rank++] = x->dims[i];
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, rank, dims);
	ar_set_bounded(ar_out(c, n, 0), axes);
	return AR_OK;
}

int ar_shape_unsqueeze(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t *ax, cnt, dims[AR_MAX_RANK];
	bool mark[AR_MAX_RANK];
	uint32_t axes = 0;
	int rank, k = 0, rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	if (n->opset >= 13 && ar_runtime_input(c, n, 1))
		return runtime_axes(c, n, x, 1, true);
	if ((rc = params(c, n, "axes", 13, 1, &ax, &cnt)))
		return rc;
	if (cnt < 0 || x->rank + cnt > AR_MAX_RANK) {
		free(ax);
		return ar_node_fail(c, n, "axes are missing or the rank would "
				    "pass %d", AR_MAX_RANK);
	}
	rank = x->rank + (int)cnt;
	rc = mark_axes(c, n, ax, cnt, rank, mark);
	free(ax);
	if (rc)
		return rc;
	for (int i = 0; i < rank; i++) {
		axes |= mark[i] ? 0 : AR_BOUNDED(x, k) << i;
		dims[i] = mark[i] ? 1 : x->dims[k++];
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, rank, dims);
	ar_set_bounded(ar_out(c, n, 0), axes);
	return AR_OK;
}

int ar_shape_gather(InferCtx *c, ArNode *n)
{
	ArTensor *x, *idx;
	int64_t dims[AR_MAX_RANK];
	uint32_t axes = 0;
	int axis, rank = 0, rc;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &idx)) ||
	    (rc = ar_axis(c, n, ar_attr_int(n, "axis", 0), x->rank, &axis)))
		return rc;
	if (x->rank - 1 + idx->rank > AR_MAX_RANK)
		return ar_node_fail(c, n, "output rank above %d", AR_MAX_RANK);
	/* Indices known here (a folded Range of positions, say) must be in
	 * [-size, size - 1] (the operator spec): a sequence longer than a
	 * position table is a model that cannot run, not a plan. */
	if (idx->data && (idx->dtype == AR_DT_INT64 ||
			  idx->dtype == AR_DT_INT32)) {
		int64_t size = x->dims[axis], cnt = ar_numel(idx);
		for (int64_t k = 0; k < cnt; k++) {
			int64_t v = idx->dtype == AR_DT_INT64 ?
				((const int64_t *)idx->data)[k] :
				((const int32_t *)idx->data)[k];
			if (v < -size || v >= size)
				return ar_node_fail(c, n, "index %lld out of "
						    "range for axis %d of "
						    "size %lld", (long long)v,
						    axis, (long long)size);
		}
	}
	for (int i = 0; i < x->rank; i++) {
		for (int k = 0; i == axis && k < idx->rank; k++) {
			axes |= AR_BOUNDED(idx, k) << rank;
			dims[rank++] = idx->dims[k];
		}
		if (i != axis) {
			axes |= AR_BOUNDED(x, i) << rank;
			dims[rank++] = x->dims[i];
		}
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, rank, dims);
	ar_set_bounded(ar_out(c, n, 0), axes);
	return AR_OK;
}

int ar_shape_gather_elements(InferCtx *c, ArNode *n)
{
	ArTensor *x, *idx;
	int rc;
	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_need(c, n, 1, &idx)))
		return rc;
	ar_set_shape(ar_out(c, n, 0), x->dtype, idx->rank, idx->dims);
	return AR_OK;
}

int ar_shape_pad(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t *pads, cnt, *ax = NULL, na = -1, dims[AR_MAX_RANK];
	int rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	/* Pads known only at run time can grow an axis without limit. */
	if ((n->opset >= 11 && ar_runtime_input(c, n, 1)) ||
	    (n->opset >= 18 && ar_runtime_input(c, n, 3))) {
		bool mark[AR_MAX_RANK];
		if ((rc = axes_or_all(c, n, 18, 3, x->rank, mark)))
			return rc;
		ar_same_as(c, n, 0, x);
		for (int i = 0; i < x->rank; i++)
			if (mark[i])
				ar_bound_axis(ar_out(c, n, 0), i, AR_NO_BOUND);
		return AR_OK;
	}
	if (n->opset < 2)
		ar_attr_ints(n, "paddings", &pads, &cnt);
	else if ((rc = params(c, n, "pads", 11, 1, &pads, &cnt)))
		return rc;
	if (n->opset >= 18 && (rc = ar_const_ints(c, n, 3, &ax, &na))) {
		free(pads);
		return rc;
	}
	if (na > x->rank || cnt != 2 * (na >= 0 ? na : x->rank)) {
		rc = ar_node_fail(c, n, "pads has %lld values for %lld axes",
				  (long long)cnt,
				  (long long)(na >= 0 ? na : x->rank));
		goto out;
	}
	memcpy(dims, x->dims, sizeof dims);
	for (int64_t k = 0; k < cnt / 2; k++) {
		int a = (int)k;
		if (ax && (rc = ar_axis(c, n, ax[k], x->rank, &a)))
			goto out;
		if (!ar_add64(dims[a], pads[k], &dims[a]) ||
		    !ar_add64(dims[a], pads[cnt / 2 + k], &dims[a]) ||
		    dims[a] < 0) {
			rc = ar_node_fail(c, n, "padding makes axis %d negative "
					  "or overflows", a);
			goto out;
		}
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
out:
	free(pads);
	free(ax);
	return rc;
}

/*
 * CenterCropPad(input, shape): the axes (attribute, default all) take the
 * extents shape gives, cropped or padded about the centre; extents known
 * only at run time have no bound.
 */
int ar_shape_centercroppad(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t *ax, *v = NULL, nax, cnt, dims[AR_MAX_RANK];
	bool mark[AR_MAX_RANK], rt = ar_runtime_input(c, n, 1);
	uint32_t axes;
	int rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	ar_attr_ints(n, "axes", &ax, &nax);
	if ((rc = mark_axes(c, n, ax, nax < 0 ? 0 : nax, x->rank, mark)) ||
	    (!rt && (rc = ar_const_ints(c, n, 1, &v, &cnt))))
		goto out;
	if (rt)
		cnt = ar_numel(ar_in(c, n, 1));
	if (cnt != (nax < 0 ? x->rank : nax)) {
		rc = ar_node_fail(c, n, "shape has %lld values for %lld axes",
				  (long long)cnt,
				  (long long)(nax < 0 ? x->rank : nax));
		goto out;
	}
	memcpy(dims, x->dims, sizeof dims);
	axes = x->bounded;
	for (int i = 0, k = 0; i < x->rank; i++) {
		if (nax >= 0 && !mark[i])
			continue;
		dims[i] = v ? v[k++] : AR_NO_BOUND;
		if (v && dims[i] < 0) {
			rc = ar_node_fail(c, n, "negative extent %lld",
					  (long long)dims[i]);
			goto out;
		}
		axes = v ? axes & ~AR_BIT(i) : axes | AR_BIT(i);
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
	ar_set_bounded(ar_out(c, n, 0), axes);
out:
	free(ax);
	free(v);
	return rc;
}

/*
 * Resize (and Upsample): the resized axes (the axes attribute from opset
 * 18, else all) from sizes or from scales, floor(dim * scale), as onnx's
 * shape inference and reference do (the roi of tf_crop_and_resize moves
 * the sampling window, not the size).  keep_aspect_ratio_policy (18)
 * scales every resized axis by the smallest (not_larger) or largest
 * (not_smaller) ratio of sizes to dims, rounding halves up.  Scales or
 * sizes known only at run time leave the resized axes without a bound.
 */
int ar_shape_resize(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	double *sc = NULL, ratio = 0;
	int64_t *sz = NULL, *ax = NULL, nsc = -1, nsz = -1, nax = -1;
	int64_t dims[AR_MAX_RANK];
	bool up = !strcmp(n->op, "Upsample"), mark[AR_MAX_RANK];
	const char *policy = ar_attr_str(n, "keep_aspect_ratio_policy",
					 "stretch");
	int jsc = up || n->opset < 11 ? 1 : 2, rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	ar_attr_ints(n, "axes", &ax, &nax);
	if ((rc = mark_axes(c, n, ax, nax < 0 ? 0 : nax, x->rank, mark)))
		goto out;
	for (int i = 0; nax < 0 && i < x->rank; i++)
		mark[i] = true;
	memcpy(dims, x->dims, sizeof dims);
	if ((!(up && n->opset < 9) && ar_runtime_input(c, n, jsc)) ||
	    (!up && n->opset >= 11 && ar_runtime_input(c, n, 3))) {
		ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
		for (int i = 0; i < x->rank; i++)
			if (mark[i])
				ar_bound_axis(ar_out(c, n, 0), i, AR_NO_BOUND);
		goto out;
	}
	if (up && n->opset < 9) {
		const ArAttr *a = ar_attr(n, "scales");
		if (a && a->type == AR_ATTR_FLOATS) {
			nsc = a->nfloats;
			sc = ar_xmalloc((size_t)nsc * sizeof *sc);
			for (int i = 0; i < nsc; i++)
				sc[i] = a->floats[i];
		}
	} else if ((rc = ar_const_floats(c, n, jsc, &sc, &nsc))) {
		goto out;
	}
	if (!up && n->opset >= 11 && (rc = ar_const_ints(c, n, 3, &sz, &nsz)))
		goto out;
	nax = nax < 0 ? x->rank : nax;
	if (nsz > 0 ? nsz != nax : nsc != nax) {
		rc = ar_node_fail(c, n, "needs %lld scales or sizes, one per "
				  "resized axis", (long long)nax);
		goto out;
	}
	if (nsz > 0 && strcmp(policy, "stretch")) {
		bool larger = !strcmp(policy, "not_smaller");
		if (!larger && strcmp(policy, "not_larger")) {
			rc = ar_node_fail(c, n, "unknown keep_aspect_ratio_policy "
					  "'%s'", policy);
			goto out;
		}
		for (int i = 0, k = 0; i < x->rank; i++) {
			double r;
			if (!mark[i])
				continue;
			r = x->dims[i] ? (double)sz[k] / (double)x->dims[i] : 0;
			if (!k++ || (larger ? r > ratio : r < ratio))
				ratio = r;
		}
	}
	for (int i = 0, k = 0; i < x->rank; i++) {
		double d;
		if (!mark[i])
			continue;
		d = nsz <= 0 ? floor((double)x->dims[i] * sc[k]) :
		    ratio > 0 ? floor(ratio * (double)x->dims[i] + 0.5) :
		    (double)sz[k];
		k++;
		if (!(d >= 0 && d < 9e18)) {
			rc = ar_node_fail(c, n, "output dim at axis %d is "
					  "invalid", i);
			goto out;
		}
		dims[i] = (int64_t)d;
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
out:
	free(sc);
	free(sz);
	free(ax);
	return rc;
}

/*
 * Expand to a shape known only at run time: an axis where x has an extent
 * other than 1 keeps it (the shape may only say 1 or the same there);
 * the others can grow without limit.
 */
static int expand_runtime(InferCtx *c, ArNode *n, const ArTensor *x)
{
	int64_t len, dims[AR_MAX_RANK];
	int rank, rc = runtime_len(c, n, 1, &len);
	if (rc)
		return rc;
	rank = (int)len > x->rank ? (int)len : x->rank;
	for (int i = 0; i < rank; i++) {
		int k = i - (rank - x->rank);
		dims[i] = k >= 0 ? x->dims[k] : 1;
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, rank, dims);
	for (int i = 0; i < rank; i++) {
		int k = i - (rank - x->rank);
		if (k < 0 || x->dims[k] == 1)
			ar_bound_axis(ar_out(c, n, 0), i, AR_NO_BOUND);
		else if (x->bounded & AR_BIT(k))
			ar_bound_axis(ar_out(c, n, 0), i, x->dims[k]);
	}
	return AR_OK;
}

int ar_shape_expand(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t dims[AR_MAX_RANK];
	int rank, rc = ar_need(c, n, 0, &x);
	if (!rc && ar_runtime_input(c, n, 1))
		return expand_runtime(c, n, x);
	if (rc || (rc = dims_from_input(c, n, 1, &rank, dims)) ||
	    (rc = ar_broadcast2(c, n, x->rank, x->dims, rank, dims, &rank,
				dims)))
		return rc;
	ar_set_shape(ar_out(c, n, 0), x->dtype, rank, dims);
	return AR_OK;
}

int ar_shape_tile(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t *rep, cnt, dims[AR_MAX_RANK];
	int rc = ar_need(c, n, 0, &x);
	if (rc)
		return rc;
	/* Repeats known only at run time: empty axes stay empty. */
	if (n->opset >= 6 && ar_runtime_input(c, n, 1)) {
		ar_same_as(c, n, 0, x);
		for (int i = 0; i < x->rank; i++)
			if (x->dims[i])
				ar_bound_axis(ar_out(c, n, 0), i, AR_NO_BOUND);
		return AR_OK;
	}
	if ((rc = ar_const_ints(c, n, 1, &rep, &cnt)))
		return rc;
	if (cnt != x->rank) {
		free(rep);
		return ar_node_fail(c, n, "repeats has %lld values for rank %d",
				    (long long)cnt, x->rank);
	}
	for (int i = 0; i < x->rank; i++)
		if (rep[i] < 0 || !ar_mul64(x->dims[i], rep[i], &dims[i])) {
			free(rep);
			return ar_node_fail(c, n, "invalid repeat at axis %d",
					    i);
		}
	free(rep);
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
	return AR_OK;
}

int ar_shape_range(InferCtx *c, ArNode *n)
{
	ArTensor *t[3];
	double v[3];
	int64_t len;
	int rc;

	for (int j = 0; j < 3; j++) {
		if ((rc = ar_need(c, n, j, &t[j])))
			return rc;
		if (ar_numel(t[j]) != 1)
			return ar_node_fail(c, n, "input %d ('%s') must be a "
					    "scalar", j, t[j]->name);
		/* The spec's types: float, double, int16, int32, int64. */
		if (t[j]->dtype != t[0]->dtype ||
		    (t[j]->dtype != AR_DT_FLOAT && t[j]->dtype != AR_DT_DOUBLE &&
		     t[j]->dtype != AR_DT_INT16 && t[j]->dtype != AR_DT_INT32 &&
		     t[j]->dtype != AR_DT_INT64))
			return ar_node_fail(c, n, "input %d ('%s') is %s; Range "
					    "takes one of float, double, int16, "
					    "int32, int64 for all three", j,
					    t[j]->name,
					    ar_dtype_name(t[j]->dtype));
	}
	/* Limits known only at run time: any length. */
	for (int j = 0; j < 3; j++)
		if (!t[j]->data) {
			all_bounded(c, n, t[0]->dtype, 1, AR_NO_BOUND);
			return AR_OK;
		}
	for (int j = 0; j < 3; j++)
		v[j] = ar_get_float(t[j], 0);
	if (ar_dtype_is_int(t[0]->dtype)) {
		int64_t s = ar_get_int(t[0], 0), l = ar_get_int(t[1], 0),
			d = ar_get_int(t[2], 0), span;
		if (d == 0 || d == INT64_MIN || s == INT64_MIN ||
		    !ar_add64(l, -s, &span) || span == INT64_MIN)
			return ar_node_fail(c, n, "delta is 0 or the range "
					    "overflows");
		/* Exact in integers: ceil(span / d) without doubles. */
		len = d > 0 ? (span > 0 ? (span - 1) / d + 1 : 0) :
			      (span < 0 ? (-span - 1) / -d + 1 : 0);
	} else {
		if (v[2] == 0)
			return ar_node_fail(c, n, "delta is 0");
		double cnt = ceil((v[1] - v[0]) / v[2]);
		if (!(cnt < 9e18))
			return ar_node_fail(c, n, "too many elements");
		len = cnt > 0 ? (int64_t)cnt : 0;
	}
	ar_set_shape(ar_out(c, n, 0), t[0]->dtype, 1, &len);
	return AR_OK;
}

/* The axes attribute moved to an input: ReduceSum at 13, the rest at 18. */
static int64_t reduce_axes_since(const ArNode *n)
{
	return !strcmp(n->op, "ReduceSum") ? 13 : 18;
}

/* Marks the reduced axes of x; all when none are given (unless noop). */
int ar_reduce_axes(InferCtx *c, const ArNode *n, const ArTensor *x,
		   bool *mark)
{
	int64_t *ax, cnt;
	int rc = params(c, n, "axes", reduce_axes_since(n), 1, &ax, &cnt);
	if (rc)
		return rc;
	if (cnt <= 0) {
		bool noop = ar_attr_int(n, "noop_with_empty_axes", 0) != 0;
		for (int i = 0; i < x->rank; i++)
			mark[i] = !noop;
		free(ax);
		return AR_OK;
	}
	rc = mark_axes(c, n, ax, cnt, x->rank, mark);
	free(ax);
	return rc;
}

/* Drops or keeps (as 1) the marked axes of x. */
static void reduced_shape(const ArTensor *x, const bool *mark, bool keep,
			  ArDType dt, ArTensor *out)
{
	int64_t dims[AR_MAX_RANK];
	int rank = 0;
	for (int i = 0; i < x->rank; i++) {
		if (!mark[i])
			dims[rank++] = x->dims[i];
		else if (keep)
			dims[rank++] = 1;
	}
	ar_set_shape(out, dt, rank, dims);
}

int ar_shape_reduce(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	bool mark[AR_MAX_RANK], keep = ar_attr_int(n, "keepdims", 1) != 0;
	int rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	/* Axes known only at run time: kept, an axis is its dim or 1. */
	if (n->opset >= reduce_axes_since(n) && ar_runtime_input(c, n, 1)) {
		if (!keep)
			return runtime_axes(c, n, x, 1, false);
		all_bounded(c, n, x->dtype, x->rank, 0);
		for (int i = 0; i < x->rank; i++)
			ar_bound_axis(ar_out(c, n, 0), i,
				      max_dim(x, i, i + 1, 1));
		return AR_OK;
	}
	if ((rc = ar_reduce_axes(c, n, x, mark)))
		return rc;
	reduced_shape(x, mark, keep, x->dtype, ar_out(c, n, 0));
	return AR_OK;
}

int ar_shape_argreduce(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	bool mark[AR_MAX_RANK] = {0};
	int axis, rc = ar_need(c, n, 0, &x);
	if (rc || (rc = ar_axis(c, n, ar_attr_int(n, "axis", 0), x->rank,
				&axis)))
		return rc;
	mark[axis] = true;
	reduced_shape(x, mark, ar_attr_int(n, "keepdims", 1) != 0,
		      AR_DT_INT64, ar_out(c, n, 0));
	return AR_OK;
}

int ar_shape_topk(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t *kv = NULL, cnt, k, dims[AR_MAX_RANK];
	int axis, rc = ar_need(c, n, 0, &x);

	if (rc || (rc = ar_axis(c, n, ar_attr_int(n, "axis", -1), x->rank,
				&axis)))
		return rc;
	if (n->opset < 10) {
		k = ar_attr_int(n, "k", -1);
	} else if (ar_runtime_input(c, n, 1)) {
		/* k known only at run time: at most the whole axis. */
		for (int j = 0; j < 2; j++) {
			ar_same_as(c, n, j, x);
			ar_bound_axis(ar_out(c, n, j), axis, x->dims[axis]);
		}
		if (ar_out(c, n, 1))
			ar_out(c, n, 1)->dtype = AR_DT_INT64;
		return AR_OK;
	} else {
		if ((rc = ar_const_ints(c, n, 1, &kv, &cnt)))
			return rc;
		k = cnt == 1 ? kv[0] : -1;
		free(kv);
	}
	if (k < 0 || k > x->dims[axis])
		return ar_node_fail(c, n, "k must be one value in [0, %lld]",
				    (long long)x->dims[axis]);
	memcpy(dims, x->dims, sizeof dims);
	dims[axis] = k;
	ar_set_shape(ar_out(c, n, 0), x->dtype, x->rank, dims);
	ar_set_shape(ar_out(c, n, 1), AR_DT_INT64, x->rank, dims);
	return AR_OK;
}

/* DepthToSpace (up = true) and SpaceToDepth move b*b channels to space. */
static int block_move(InferCtx *c, ArNode *n, bool up)
{
	ArTensor *x;
	int64_t b = ar_attr_int(n, "blocksize", 0), bb, dims[4];
	int rc = ar_need(c, n, 0, &x);
	if (rc)
		return rc;
	if (x->rank != 4 || b < 1 || !ar_mul64(b, b, &bb))
		return ar_node_fail(c, n, "needs a 4-D input and blocksize >= 1");
	dims[0] = x->dims[0];
	if (up ? x->dims[1] % bb : x->dims[2] % b || x->dims[3] % b)
		return ar_node_fail(c, n, "dims do not divide by the block");
	if ((up && (!ar_mul64(x->dims[2], b, &dims[2]) ||
		    !ar_mul64(x->dims[3], b, &dims[3]))) ||
	    (!up && !ar_mul64(x->dims[1], bb, &dims[1])))
		return ar_node_fail(c, n, "output overflows");
	if (up)
		dims[1] = x->dims[1] / bb;
	else
		dims[2] = x->dims[2] / b, dims[3] = x->dims[3] / b;
	ar_set_shape(ar_out(c, n, 0), x->dtype, 4, dims);
	return AR_OK;
}

int ar_shape_depth_to_space(InferCtx *c, ArNode *n)
{
	return block_move(c, n, true);
}

int ar_shape_space_to_depth(InferCtx *c, ArNode *n)
{
	return block_move(c, n, false);
}
