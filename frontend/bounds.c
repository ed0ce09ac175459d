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
 *
 * A missing bound does not stop inference: the axis gets a placeholder
 * extent and the tensor, with everything computed from it, is "unsized"
 * (its numbers mean nothing, its errors go unreported), and one error at
 * the end names every tensor whose axis lacks a bound at its source, in
 * the model's order, each with the --bound to add, so one run says all a
 * user must give.  What is computed from an unsized tensor is inferred
 * just as it will be once the bound is given (bounded, never constant),
 * so a size data-dependent further down is named in the same run.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
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

/* One tensor with data-dependent axes no bound covers. */
typedef struct Missing {
	char *tensor, *node, *op;
	int rank;
	int64_t dims[AR_MAX_RANK];      /* -1 on the axes without a bound */
} Missing;

struct ArMissing {
	Missing *v;
	int n, cap;
};

void ar_missing_start(InferCtx *c)
{
	c->missing = ar_xcalloc(1, sizeof *c->missing);
}

int ar_missing_count(const InferCtx *c)
{
	return c->missing->n;
}

void ar_missing_free(InferCtx *c)
{
	for (int k = 0; k < c->missing->n; k++) {
		free(c->missing->v[k].tensor);
		free(c->missing->v[k].node);
		free(c->missing->v[k].op);
	}
	free(c->missing->v);
	free(c->missing);
	c->missing = NULL;
}

bool ar_unsized(const InferCtx *c, int id)
{
	return id >= 0 && id < c->nunsized && c->unsized[id];
}

static void set_unsized(InferCtx *c, int id)
{
	/* Sequence unrolling adds tensors as it goes. */
	if (id >= c->nunsized) {
		int n = c->g->ntensors > id ? c->g->ntensors : id + 1;
		c->unsized = ar_xrealloc(c->unsized, (size_t)n * sizeof(bool));
		memset(c->unsized + c->nunsized, 0,
		       (size_t)(n - c->nunsized) * sizeof(bool));
		c->nunsized = n;
	}
	c->unsized[id] = true;
}

bool ar_reads_unsized(const InferCtx *c, const ArNode *n)
{
	for (int j = 0; j < n->nexplicit; j++)
		if (ar_unsized(c, n->inputs[j]))
			return true;
	return false;
}

void ar_unsize_outputs(InferCtx *c, const ArNode *n, bool failed)
{
	for (int j = 0; j < n->noutputs; j++) {
		if (n->outputs[j] < 0)
			continue;
		set_unsized(c, n->outputs[j]);
		if (failed)
			c->g->tensors[n->outputs[j]].rank = -1;
	}
}

static void appendf(char *buf, size_t cap, size_t *k, const char *fmt, ...)
{
	va_list ap;
	if (*k >= cap)
		return;
	va_start(ap, fmt);
	*k += (size_t)vsnprintf(buf + *k, cap - *k, fmt, ap);
	va_end(ap);
}

static int unbound_axes(const Missing *m)
{
	int count = 0;
	for (int i = 0; i < m->rank; i++)
		count += m->dims[i] < 0;
	return count;
}

/* "axis 1" or "axes 0, 1": where m lacks a bound. */
static void where(char *buf, size_t cap, const Missing *m)
{
	size_t k = 0;
	appendf(buf, cap, &k, "%s", unbound_axes(m) > 1 ? "axes" : "axis");
	for (int i = 0, first = 1; i < m->rank; i++)
		if (m->dims[i] < 0) {
			appendf(buf, cap, &k, "%s %d", first ? "" : ",", i);
			first = 0;
		}
}

/* What to add: "--bound t=N" for one axis, else axis by axis with the
 * static extents given ("--bound t=2xD1xD2", the form --bound takes). */
static void option(char *buf, size_t cap, const Missing *m)
{
	size_t k = 0;
	appendf(buf, cap, &k, "--bound %s=", m->tensor);
	if (unbound_axes(m) == 1) {
		appendf(buf, cap, &k, "N");
		return;
	}
	for (int i = 0; i < m->rank; i++)
		appendf(buf, cap, &k, m->dims[i] < 0 ? "%sD%d" : "%s%lld",
			i ? "x" : "", m->dims[i] < 0 ? i : (long long)m->dims[i]);
}

/* Axes of output t of n left at AR_NO_BOUND: noted, given a placeholder
 * extent of 1 (broadcasts with anything) and t marked unsized. */
static void note_missing(InferCtx *c, const ArNode *n, int id)
{
	struct ArMissing *ms = c->missing;
	ArTensor *t = &c->g->tensors[id];
	Missing *m;

	if (ms->n == ms->cap) {
		ms->cap = ms->cap ? 2 * ms->cap : 8;
		ms->v = ar_xrealloc(ms->v, (size_t)ms->cap * sizeof *ms->v);
	}
	m = &ms->v[ms->n++];
	m->tensor = ar_xstrdup(t->name);
	m->node = ar_xstrdup(n->name);
	m->op = ar_xstrdup(n->op);
	m->rank = t->rank;
	for (int i = 0; i < t->rank; i++) {
		m->dims[i] = t->dims[i];
		if (t->dims[i] < 0)
			t->dims[i] = 1;
	}
	set_unsized(c, id);
}

int ar_missing_error(InferCtx *c)
{
	const struct ArMissing *ms = c->missing;
	ArError *err = c->err;
	char ax[64], opt[160];
	size_t k = 0, cap = sizeof err->msg;
	int width = 0;

	assert(ms->n > 0);
	if (ms->n == 1) {
		const Missing *m = &ms->v[0];
		where(ax, sizeof ax, m);
		option(opt, sizeof opt, m);
		return ar_fail(err, AR_EXIT_MODEL, "node '%s' (%s): output '%s' "
			       "has a size known only at run time (%s) and no "
			       "bound arenac can compute; give its largest size "
			       "with %s", m->node, m->op, m->tensor, ax, opt);
	}
	for (int i = 0; i < ms->n; i++) {
		option(opt, sizeof opt, &ms->v[i]);
		if ((int)strlen(opt) > width)
			width = (int)strlen(opt);
	}
	err->code = AR_EXIT_MODEL;
	appendf(err->msg, cap, &k, "%d tensors have a size known only at run "
		"time and no bound arenac can compute; give each its largest "
		"size:", ms->n);
	for (int i = 0; i < ms->n; i++) {
		const Missing *m = &ms->v[i];
		char line[512];
		where(ax, sizeof ax, m);
		option(opt, sizeof opt, m);
		snprintf(line, sizeof line, "\n  %-*s  (node '%s' (%s), %s)",
			 width, opt, m->node, m->op, ax);
		/* Room for the count of those that do not fit. */
		if (k + strlen(line) + 32 >= cap) {
			appendf(err->msg, cap, &k, "\n  and %d more", ms->n - i);
			break;
		}
		appendf(err->msg, cap, &k, "%s", line);
	}
	return AR_EXIT_MODEL;
}

static int apply_bound(InferCtx *c, const ArNode *n, ArTensor *t,
		       const ArBound *b, bool quiet)
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
			if (!quiet)
				ar_warn(c->diag, "--bound %s: %lld is above "
					"the bound of axis %d that node '%s' "
					"(%s) allows (%lld); using %lld",
					t->name, (long long)m, i, n->name,
					n->op, (long long)t->dims[i],
					(long long)t->dims[i]);
			continue;
		}
		t->dims[i] = m;
	}
	return AR_OK;
}

int ar_settle_bounds(InferCtx *c, const ArNode *n, const ArOpDef *d)
{
	/* Bounds computed from a placeholder mean nothing to warn about. */
	bool reads_bounded = false, quiet = ar_reads_unsized(c, n);
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
			if ((rc = apply_bound(c, n, t, b, quiet)))
				return rc;
		}
		for (int i = 0; i < t->rank; i++)
			if (t->dims[i] < 0) {
				note_missing(c, n, n->outputs[j]);
				break;
			}
	}
	return AR_OK;
}

/* Bounds that were never applied: a name the model lacks is a usage
 * error (the likelier mistake, so before the missing bounds), a tensor
 * of static shape a warning (unless the missing bounds left it unsized). */
int ar_check_bounds_used(InferCtx *c)
{
	for (int k = 0; k < c->nbounds; k++) {
		const char *name = c->bounds[k].name;
		if (c->bound_used[k])
			continue;
		if (ar_graph_find(c->g, name) < 0)
			return ar_fail(c->err, AR_EXIT_USAGE, "--bound %s: the "
				       "model has no tensor '%s'", name, name);
		if (c->missing->n)
			continue;
		ar_warn(c->diag, "--bound %s: '%s' has a static shape; the "
			"bound is not used", name, name);
	}
	return AR_OK;
}
