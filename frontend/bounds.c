/*
 * bounds.c — bounded dynamic shapes during inference: after a node's
 * shape function, its outputs' data-dependent axes get their final bound.
 *
 * A shape function marks the axes it knows to depend on run-time values
 * (NonZero's count, a Slice with run-time starts) with the bound it can
 * compute, or AR_NO_BOUND.  Here the driver adds what shape functions need
 * not know: an output of a node that reads a bounded tensor is bounded on
 * every axis, unless the shape function marked it itself; then the user's
 * --bound tightens the computed bound or supplies a missing one, and an
 * axis still without a bound is an error that names the tensor, the op and
 * the option.  Planning for the bound is what TFLite Micro and XLA do for
 * such tensors; a user who knows better says so with --bound.
 */
#include <stdlib.h>
#include <string.h>

#include "infer.h"
#include "infer_ops.h"

static const ArBound *find_bound(InferCtx *c, const char *name, int *k)
{
	for (*k = 0; *k < c->nbounds; (*k)++)
		if (!strcmp(c->bounds[*k].name, name))
			return &c->bounds[*k];
	return NULL;
}

/* The user's largest extent for axis i of t. */
static int64_t user_max(const ArBound *b, int i)
{
	return b->rank ? b->dims[i] : b->max;
}

static int apply_bound(InferCtx *c, const ArNode *n, ArTensor *t,
		       const ArBound *b)
{
	if (b->rank && b->rank != t->rank)
		return ar_fail(c->err, AR_EXIT_USAGE, "--bound %s: the tensor "
			       "has rank %d, the bound gives %d dims", t->name,
			       t->rank, b->rank);
	for (int i = 0; i < t->rank; i++) {
		int64_t m = user_max(b, i);
		if (!(t->bounded & AR_BIT(i))) {
			if (b->rank && m != t->dims[i])
				return ar_fail(c->err, AR_EXIT_USAGE, "--bound "
					       "%s: axis %d has the static "
					       "extent %lld, the bound says %lld",
					       t->name, i,
					       (long long)t->dims[i],
					       (long long)m);
			continue;
		}
		if (t->dims[i] >= 0 && m > t->dims[i]) {
			ar_warn(c->diag, "--bound %s: %lld is above the bound "
				"of axis %d that node '%s' (%s) allows (%lld); "
				"using %lld", t->name, (long long)m, i,
				n->name, n->op, (long long)t->dims[i],
				(long long)t->dims[i]);
			continue;
		}
		t->dims[i] = m;
	}
	return AR_OK;
}

int ar_settle_bounds(InferCtx *c, const ArNode *n, const ArOpDef *d)
{
	bool reads_bounded = false;
	int rc;

	for (int j = 0; j < n->nexplicit; j++) {
		const ArTensor *x = ar_in(c, n, j);
		reads_bounded |= x && x->bounded;
	}
	/* Shape and Size depend on the rank only, which is never bounded:
	 * their outputs are simply not constant then (the driver). */
	if (d->flags & AR_OP_SHAPEONLY)
		reads_bounded = false;
	for (int j = 0; j < n->noutputs; j++) {
		ArTensor *t = ar_out(c, n, j);
		const ArBound *b;
		int k;
		if (!t || t->rank < 0)
			continue;
		if (reads_bounded && !t->bounded && t->rank > 0)
			t->bounded = (uint32_t)(((uint64_t)1 << t->rank) - 1);
		if (!t->bounded)
			continue;
		if ((b = find_bound(c, t->name, &k))) {
			c->bound_used[k] = true;
			if ((rc = apply_bound(c, n, t, b)))
				return rc;
		}
		for (int i = 0; i < t->rank; i++)
			if (t->dims[i] < 0)
				return ar_node_fail(c, n, "output '%s' has a "
						    "size known only at run "
						    "time (axis %d) and no "
						    "bound arenac can compute; "
						    "give its largest size with "
						    "--bound %s=N", t->name, i,
						    t->name);
	}
	return AR_OK;
}

/* Bounds that were never applied: a name the model lacks is a usage
 * error, a tensor of static shape a warning. */
int ar_check_bounds_used(InferCtx *c)
{
	for (int k = 0; k < c->nbounds; k++) {
		const char *name = c->bounds[k].name;
		if (c->bound_used[k])
			continue;
		if (ar_graph_find(c->g, name) < 0)
			return ar_fail(c->err, AR_EXIT_USAGE, "--bound %s: the "
				       "model has no tensor '%s'", name, name);
		ar_warn(c->diag, "--bound %s: '%s' has a static shape; the "
			"bound is not used", name, name);
	}
	return AR_OK;
}
