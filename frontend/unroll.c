/*
 * unroll.c — sequence values turned into the tensors they hold, and the
 * Loops that build them unrolled, while the top graph is inferred.
 *
 * arenac plans tensors.  A sequence whose length and elements are known
 * at compile time is only a list of tensors, so each sequence op becomes
 * the tensor op it stands for, or nothing: torch.onnx.export writes
 * repeat_interleave with a run-time repeat count as SplitToSequence into
 * a Loop whose body SequenceInserts each repeated piece, then
 * ConcatFromSequence (torch/onnx/symbolic_opset13.py, repeat_interleave);
 * with the shapes known after folding that is a Split, per piece an
 * Unsqueeze/Expand/Reshape, and a Concat, each an op with a gradient
 * rule.  (Where torch 1.13 lost the sizes after the repeated dim, that
 * body's Reshape copies the wrong dims by ONNX's rules; the unrolled
 * graph is what the file says, and scripts/torch_export.py writes the
 * form later exporters do.)  The driver (infer.c) hands each top-graph node here before
 * inferring it, so every input is inferred and folded by then:
 *   - SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase and
 *     an Identity of a sequence only change the list (their node goes);
 *   - SequenceAt is an Identity of the element, SequenceLength a
 *     Constant, SplitToSequence a Split (a Slice a piece past a Split's
 *     AR_MAX_OUTPUTS; and a Squeeze per piece when keepdims=0 without
 *     split), ConcatFromSequence a Concat (of Unsqueezes with
 *     new_axis=1);
 *   - a Loop that reads or carries a sequence, or whose body uses one, is
 *     unrolled: its trip count M must be a compile-time constant, the
 *     body flat (no subgraph), at most AR_UNROLL_MAX_NODES nodes in all.
 *     Iteration k is a copy of the body, its tensors named LOOP[k]/NAME,
 *     reading k as a Constant, the condition and carried values of
 *     iteration k-1 and the outer tensors it captures; the last
 *     iteration writes the Loop's carried outputs, and each scan output
 *     is the Concat of the iterations' values, unsqueezed at axis 0.
 *     Every iteration's condition but the last must fold to true (checked
 *     once the graph is inferred): a Loop that may stop early is refused.
 * Positions, counts and split sizes must be compile-time constants; a
 * sequence graph output is refused (a plan has tensors only).  Sequences
 * in subgraphs are not rewritten (the op table refuses them there).
 */
#include "infer.h"
#include "infer_ops.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splice.h"
#include "strpool.h"

/* What one unrolled Loop may add to the graph. */
#define AR_UNROLL_MAX_NODES ((int64_t)1 << 16)

typedef struct Seq {
	int *elems;                 /* tensor ids, in order */
	int n;
	bool known;
} Seq;

/* A condition that must fold to true for the Loop to run its count. */
typedef struct Cond {
	int t;
	int iter;
	const char *loop;           /* in g's pool */
} Cond;

struct ArSeqs {
	Seq *seq;                   /* by tensor id, grown on demand */
	int cap;
	Cond *conds;
	int nconds;
};

static const char *const SEQ_OPS[] = {
	"SequenceEmpty", "SequenceConstruct", "SequenceInsert",
	"SequenceErase", "SequenceAt", "SequenceLength", "SplitToSequence",
	"ConcatFromSequence",
};

static bool seq_op(const ArNode *n)
{
	if (!ar_default_domain(n->domain))
		return false;
	for (size_t k = 0; k < sizeof SEQ_OPS / sizeof *SEQ_OPS; k++)
		if (!strcmp(n->op, SEQ_OPS[k]))
			return true;
	return false;
}

static Seq *seq_of(InferCtx *c, int t)
{
	struct ArSeqs *s = c->seqs;
	if (t < 0 || !s || t >= s->cap || !s->seq[t].known)
		return NULL;
	return &s->seq[t];
}

/* Sets tensor t's sequence to elems[0..n) (copied). */
static void set_seq(InferCtx *c, int t, const int *elems, int n)
{
	struct ArSeqs *s = c->seqs;
	assert(s && n >= 0);
	if (t < 0)
		return;
	if (t >= s->cap) {
		int cap = s->cap ? s->cap : 64;
		while (cap <= t)
			cap *= 2;
		s->seq = ar_xrealloc(s->seq, (size_t)cap * sizeof *s->seq);
		memset(s->seq + s->cap, 0, (size_t)(cap - s->cap) *
		       sizeof *s->seq);
		s->cap = cap;
	}
	free(s->seq[t].elems);
	s->seq[t].elems = ar_xmalloc(((size_t)n + 1) * sizeof(int));
	if (n)
		memcpy(s->seq[t].elems, elems, (size_t)n * sizeof(int));
	s->seq[t].n = n;
	s->seq[t].known = true;
}

static bool reads_seq(InferCtx *c, const ArNode *n)
{
	for (int j = 0; j < n->ninputs; j++)
		if (seq_of(c, n->inputs[j]))
			return true;
	return false;
}

static const ArGraph *body_of(const ArNode *n)
{
	const ArAttr *a = ar_attr(n, "body");
	return a ? a->g : NULL;
}

static bool wants(InferCtx *c, const ArNode *n)
{
	const ArGraph *b;
	if (!ar_default_domain(n->domain))
		return false;
	if (seq_op(n))
		return true;
	if (!strcmp(n->op, "Identity"))
		return reads_seq(c, n);
	if (strcmp(n->op, "Loop") || !(b = body_of(n)))
		return false;
	if (reads_seq(c, n))
		return true;
	for (int i = 0; i < b->nnodes; i++)
		if (seq_op(&b->nodes[i]))
			return true;
	return false;
}

/* base, or base~K, such that no tensor name of g starts with it and
 * '[', '/' or '#': the names made from it are new (PREFIX[k]/NAME for a
 * Loop body's, PREFIX[k]... and PREFIX#... for arenac's own).  malloc'd. */
static char *fresh(const ArGraph *g, const char *base)
{
	size_t len = strlen(base) + 24, plen;
	char *p = ar_xmalloc(len);
	for (int k = 0;; k++) {
		bool taken = false;
		if (k)
			snprintf(p, len, "%s~%d", base, k);
		else
			snprintf(p, len, "%s", base);
		plen = strlen(p);
		for (int t = 0; !taken && t < g->ntensors; t++) {
			const char *name = g->tensors[t].name;
			taken = !strncmp(name, p, plen) && name[plen] &&
				strchr("[/#", name[plen]);
		}
		if (!taken)
			return p;
	}
}

/* A new tensor named by fmt. */
static int add_tensor(ArGraph *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int add_tensor(ArGraph *g, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return ar_graph_add_tensor(g, buf);
}

static int add_node(ArGraph *g, const ArNode *like, const char *op,
		    const int *in, int nin, const int *out, int nout)
{
	int id = ar_graph_add_node(g, g->tensors[out[0]].name, op, "");
	ArNode *d = &g->nodes[id];
	ar_node_set_io(d, in, nin, out, nout);
	d->opset = like->opset;
	d->phase = like->phase;
	return id;
}

static void int_attr(ArGraph *g, int node, const char *name, int64_t v)
{
	ar_node_add_attr(g, &g->nodes[node], name, AR_ATTR_INT)->i = v;
}

/* Node `node` a Constant of values v[0..n) of dtype dt (INT64 or BOOL),
 * a scalar when rank is 0, writing tensor y. */
static void set_const(ArGraph *g, int node, int y, ArDType dt, int rank,
		      const int64_t *v, int64_t n)
{
	ArTensor *t = ar_xcalloc(1, sizeof *t);
	ArNode *d = &g->nodes[node];

	ar_node_set_op(g, d, "Constant", "");
	ar_node_set_io(d, NULL, 0, &y, 1);
	g->tensors[y].producer = node;
	t->name = g->tensors[y].name;
	t->dtype = dt;
	t->rank = rank;
	t->dims[0] = n;
	t->kind = AR_TK_CONSTANT;
	t->producer = -1;
	t->quant.scale = t->quant.zero_point = t->quant.axis = -1;
	t->bytes = n * (int64_t)ar_dtype_size(dt);
	t->data = ar_xmalloc((size_t)t->bytes + 1);
	for (int64_t e = 0; e < n; e++) {
		if (dt == AR_DT_BOOL)
			((uint8_t *)t->data)[e] = v[e] != 0;
		else
			((int64_t *)t->data)[e] = v[e];
	}
	ar_node_add_attr(g, d, "value", AR_ATTR_TENSOR)->t = t;
}

/* The same as a new node writing new tensor `name`; returns it. */
static int add_const(ArGraph *g, const ArNode *like, const char *name,
		     ArDType dt, int rank, const int64_t *v, int64_t n)
{
	int y = ar_graph_add_tensor(g, name);
	set_const(g, add_node(g, like, "Constant", NULL, 0, &y, 1), y, dt,
		  rank, v, n);
	return y;
}

/* A 1-D Constant of one value for piece k, PREFIX[k]/WHAT. */
static int piece_const(ArGraph *g, const ArNode *like, const char *prefix,
		       int k, const char *what, int64_t v)
{
	char name[1024];
	snprintf(name, sizeof name, "%s[%d]/%s", prefix, k, what);
	return add_const(g, like, name, AR_DT_INT64, 1, &v, 1);
}

/* Axes of Squeeze/Unsqueeze: an input from opset 13, an attribute
 * before.  Returns the node. */
static int add_axis_op(ArGraph *g, const ArNode *like, const char *op,
		       const char *prefix, int k, int x, int y, int64_t axis)
{
	int node;
	if (like->opset >= 13) {
		int in[2] = {x, piece_const(g, like, prefix, k, "axes", axis)};
		return add_node(g, like, op, in, 2, &y, 1);
	}
	node = add_node(g, like, op, &x, 1, &y, 1);
	ArAttr *a = ar_node_add_attr(g, &g->nodes[node], "axes",
				     AR_ATTR_INTS);
	a->ints = ar_xmalloc(sizeof *a->ints);
	a->ints[0] = axis;
	a->nints = 1;
	return node;
}

/* A compile-time scalar position in [lo, hi], negative from the end. */
static int position(InferCtx *c, const ArNode *n, int j, int64_t dflt,
		    int64_t len, int64_t lo, int64_t hi, int64_t *pos)
{
	int64_t *v, cnt;
	ArTensor *t;
	int rc = dflt == INT64_MIN ? ar_need(c, n, j, &t) : AR_OK;
	if (rc || (rc = ar_const_ints(c, n, j, &v, &cnt)))
		return rc;
	*pos = cnt < 0 ? dflt : cnt == 1 ? v[0] : INT64_MIN;
	free(v);
	if (*pos < lo || *pos > hi)
		return ar_node_fail(c, n, "position %lld is outside the "
				    "sequence of %lld", (long long)*pos,
				    (long long)len);
	if (*pos < 0)
		*pos += len;
	return AR_OK;
}

static int need_seq(InferCtx *c, const ArNode *n, int j, Seq **s)
{
	*s = j < n->nexplicit ? seq_of(c, n->inputs[j]) : NULL;
	if (!*s)
		return ar_node_fail(c, n, "input %d is not a sequence arenac "
				    "knows at compile time", j);
	return AR_OK;
}

/* The sequence ops that only change the list: their node goes. */
static int list_op(InferCtx *c, ArNode *n, bool *dropped)
{
	Seq *s = NULL;
	int64_t pos;
	int rc, y = n->outputs[0], *e;

	*dropped = true;
	if (!strcmp(n->op, "SequenceEmpty")) {
		set_seq(c, y, NULL, 0);
	} else if (!strcmp(n->op, "SequenceConstruct")) {
		for (int j = 0; j < n->nexplicit; j++)
			if (n->inputs[j] < 0 || seq_of(c, n->inputs[j]))
				return ar_node_fail(c, n, "input %d is not a "
						    "tensor", j);
		set_seq(c, y, n->inputs, n->nexplicit);
	} else if (!strcmp(n->op, "Identity")) {
		s = seq_of(c, n->inputs[0]);
		set_seq(c, y, s->elems, s->n);
	} else if (!strcmp(n->op, "SequenceInsert")) {
		if ((rc = need_seq(c, n, 0, &s)) ||
		    (rc = position(c, n, 2, s->n, s->n, -s->n, s->n, &pos)))
			return rc;
		e = ar_xmalloc(((size_t)s->n + 1) * sizeof *e);
		memcpy(e, s->elems, (size_t)pos * sizeof *e);
		e[pos] = n->inputs[1];
		memcpy(e + pos + 1, s->elems + pos,
		       (size_t)(s->n - pos) * sizeof *e);
		set_seq(c, y, e, s->n + 1);
		free(e);
	} else if (!strcmp(n->op, "SequenceErase")) {
		if ((rc = need_seq(c, n, 0, &s)) ||
		    (rc = position(c, n, 1, -1, s->n, -s->n, s->n - 1, &pos)))
			return rc;
		e = ar_xmalloc(((size_t)s->n + 1) * sizeof *e);
		memcpy(e, s->elems, (size_t)pos * sizeof *e);
		memcpy(e + pos, s->elems + pos + 1,
		       (size_t)(s->n - pos - 1) * sizeof *e);
		set_seq(c, y, e, s->n - 1);
		free(e);
	} else {
		*dropped = false;
	}
	return AR_OK;
}

/* SequenceAt: an Identity of the element, in the node's place. */
static int seq_at(InferCtx *c, ArNode *n)
{
	Seq *s;
	int64_t pos;
	int rc, y = n->outputs[0], x;
	if ((rc = need_seq(c, n, 0, &s)) ||
	    (rc = position(c, n, 1, INT64_MIN, s->n, -s->n, s->n - 1, &pos)))
		return rc;
	x = s->elems[pos];
	ar_node_set_op(c->g, n, "Identity", "");
	ar_node_set_io(n, &x, 1, &y, 1);
	return AR_OK;
}

/* SplitToSequence(x, split, axis, keepdims): a Split, appended. */
static int split_to_seq(InferCtx *c, ArNode *n, const char *prefix)
{
	ArGraph *g = c->g;
	ArTensor *x;
	int64_t *v, cnt, d, chunk, m, keep = ar_attr_int(n, "keepdims", 1);
	int axis, rc, *elems, *parts, node, xid = n->inputs[0];
	int split_in = n->nexplicit > 1 ? n->inputs[1] : -1;

	if ((rc = ar_need(c, n, 0, &x)) || (rc = ar_axis(c, n,
	    ar_attr_int(n, "axis", 0), x->rank, &axis)))
		return rc;
	if (AR_BOUNDED(x, axis))
		return ar_node_fail(c, n, "splits axis %d of '%s', whose extent "
				    "is known only at run time", axis, x->name);
	d = x->dims[axis];
	if ((rc = ar_const_ints(c, n, 1, &v, &cnt)))
		return rc;
	chunk = cnt < 0 ? 1 : g->tensors[split_in].rank == 0 ? v[0] : 0;
	m = chunk ? (chunk > 0 ? (d + chunk - 1) / chunk : -1) : cnt;
	if (m < 0) {
		free(v);
		return ar_node_fail(c, n, "split %lld is not a positive size",
				    (long long)chunk);
	}
	if (m > AR_UNROLL_MAX_NODES / 4) {
		free(v);
		return ar_node_fail(c, n, "makes %lld tensors, more than %lld",
				    (long long)m,
				    (long long)AR_UNROLL_MAX_NODES / 4);
	}
	if (chunk) {
		free(v);
		v = ar_xmalloc(((size_t)m + 1) * sizeof *v);
		for (int64_t k = 0; k < m; k++)
			v[k] = d - k * chunk < chunk ? d - k * chunk : chunk;
	}
	elems = ar_xmalloc(((size_t)m + 1) * sizeof *elems);
	parts = ar_xmalloc(((size_t)m + 1) * sizeof *parts);
	for (int k = 0; k < m; k++) {
		elems[k] = parts[k] = add_tensor(g, "%s[%d]", prefix, k);
		if (cnt < 0 && !keep)
			parts[k] = add_tensor(g, "%s[%d]/split", prefix,
						      k);
	}
	if (m > AR_MAX_OUTPUTS) {
		/* More pieces than a Split writes: a Slice each. */
		int64_t at = 0;
		for (int k = 0; k < m; k++) {
			int in[4] = {xid, -1, -1, -1};
			if (v[k] < 0 || at + v[k] > d)
				break;
			in[1] = piece_const(g, n, prefix, k, "start", at);
			in[2] = piece_const(g, n, prefix, k, "end", at += v[k]);
			in[3] = piece_const(g, n, prefix, k, "slice_axis", axis);
			add_node(g, n, "Slice", in, 4, &parts[k], 1);
		}
		if (at != d) {
			free(v), free(elems), free(parts);
			return ar_node_fail(c, n, "split sizes do not add up to "
					    "the dim, %lld", (long long)d);
		}
	} else if (m) {
		int in[2] = {xid, -1};
		char name[1024];
		snprintf(name, sizeof name, "%s/sizes", prefix);
		if (n->opset >= 13)
			in[1] = add_const(g, n, name, AR_DT_INT64, 1, v, m);
		node = add_node(g, n, "Split", in, 1 + (n->opset >= 13), parts,
				m);
		g->nodes[node].name = n->name;
		int_attr(g, node, "axis", axis);
		if (n->opset < 13) {
			ArAttr *a = ar_node_add_attr(g, &g->nodes[node],
						     "split", AR_ATTR_INTS);
			a->ints = v;
			a->nints = (int)m;
			v = NULL;
		}
	}
	for (int k = 0; k < m; k++)
		if (parts[k] != elems[k])
			add_axis_op(g, n, "Squeeze", prefix, k, parts[k],
				    elems[k], axis);
	set_seq(c, n->outputs[0], elems, (int)m);
	free(v), free(elems), free(parts);
	return AR_OK;
}

/* ConcatFromSequence(S, axis, new_axis): a Concat, appended. */
static int concat_from_seq(InferCtx *c, ArNode *n, const char *prefix)
{
	ArGraph *g = c->g;
	Seq *s;
	int rc, axis, node, *in;
	int64_t new_axis = ar_attr_int(n, "new_axis", 0);

	if ((rc = need_seq(c, n, 0, &s)))
		return rc;
	if (!s->n)
		return ar_node_fail(c, n, "concatenates an empty sequence");
	if ((rc = ar_axis(c, n, ar_attr_int(n, "axis", 0),
			  g->tensors[s->elems[0]].rank + (new_axis != 0),
			  &axis)))
		return rc;
	in = ar_xmalloc((size_t)s->n * sizeof *in);
	for (int k = 0; k < s->n; k++) {
		in[k] = s->elems[k];
		if (!new_axis)
			continue;
		in[k] = add_tensor(g, "%s[%d]/unsqueezed", prefix, k);
		add_axis_op(g, n, "Unsqueeze", prefix, k, s->elems[k], in[k],
			    axis);
	}
	node = add_node(g, n, "Concat", in, s->n, n->outputs, 1);
	g->nodes[node].name = n->name;
	int_attr(g, node, "axis", axis);
	free(in);
	return AR_OK;
}

/* An Identity from x into y (y keeps its id). */
static void add_identity(ArGraph *g, const ArNode *like, int x, int y)
{
	add_node(g, like, "Identity", &x, 1, &y, 1);
}

static void need_cond(InferCtx *c, int t, int iter, const char *loop)
{
	struct ArSeqs *s = c->seqs;
	s->conds = ar_xrealloc(s->conds, ((size_t)s->nconds + 1) *
			       sizeof *s->conds);
	s->conds[s->nconds++] = (Cond){t, iter, loop};
}

/* The Loop's trip count: M, 0 when the condition is false at entry. */
static int trip_count(InferCtx *c, const ArNode *n, const ArGraph *b,
		      int64_t *trips)
{
	const ArTensor *m = ar_in(c, n, 0), *cond = ar_in(c, n, 1);
	int64_t *v, cnt;
	int rc;

	if (!m)
		return ar_node_fail(c, n, "has no trip count (M): arenac unrolls "
				    "a Loop over sequence values only when M "
				    "is known at compile time");
	if (!ar_is_const(c, n->inputs[0]))
		return ar_node_fail(c, n, "trip count '%s' is known only at run "
				    "time: arenac unrolls a Loop over sequence "
				    "values only when it is a compile-time "
				    "constant", m->name);
	if ((rc = ar_const_ints(c, n, 0, &v, &cnt)))
		return rc;
	*trips = cnt == 1 ? (v[0] > 0 ? v[0] : 0) : -1;
	free(v);
	if (*trips < 0)
		return ar_node_fail(c, n, "trip count '%s' is not one value",
				    m->name);
	if (cond) {
		if (!ar_is_const(c, n->inputs[1]))
			return ar_node_fail(c, n, "condition '%s' is known only "
					    "at run time: arenac unrolls a Loop "
					    "over sequence values only when it "
					    "runs its trip count", cond->name);
		if ((rc = ar_const_ints(c, n, 1, &v, &cnt)))
			return rc;
		if (cnt != 1 || !v[0])
			*trips = 0;
		free(v);
	}
	if (*trips && (int64_t)b->nnodes > AR_UNROLL_MAX_NODES / *trips)
		return ar_node_fail(c, n, "runs %lld times over a body of %d "
				    "nodes: unrolled, more than %lld nodes",
				    (long long)*trips, b->nnodes,
				    (long long)AR_UNROLL_MAX_NODES);
	return AR_OK;
}

/* Copies the body's nodes as iteration k, tensors mapped by map[]
 * (inputs, captures and initializers set; the rest made here, or the
 * Loop's outputs in the last iteration). */
static int copy_iteration(InferCtx *c, const ArNode *n, const ArGraph *b,
			  int *map, const char *prefix, int k, bool last)
{
	ArGraph *g = c->g;
	int ncarried = n->nexplicit - 2;

	for (int j = 0; last && j < ncarried; j++) {
		int t = b->outputs[1 + j];
		if (map[t] < 0 && b->tensors[t].producer >= 0)
			map[t] = n->outputs[j];
	}
	for (int t = 0; t < b->ntensors; t++)
		if (map[t] < 0) {
			map[t] = add_tensor(g, "%s[%d]/%s", prefix, k,
					    b->tensors[t].name);
			ar_copy_tensor(&g->tensors[map[t]], &b->tensors[t]);
			g->tensors[map[t]].kind = AR_TK_ACTIVATION;
		}
	for (int i = 0; i < b->nnodes; i++) {
		const ArNode *bn = &b->nodes[i];
		int *in = ar_xmalloc(((size_t)bn->nexplicit + 1) * sizeof *in);
		int *out = ar_xmalloc(((size_t)bn->noutputs + 1) * sizeof *out);
		char name[1024];
		int id;

		for (int j = 0; j < bn->nexplicit; j++)
			in[j] = bn->inputs[j] < 0 ? -1 : map[bn->inputs[j]];
		for (int j = 0; j < bn->noutputs; j++)
			out[j] = bn->outputs[j] < 0 ? -1 : map[bn->outputs[j]];
		id = ar_copy_node(g, bn, in, out, c->err);
		free(in), free(out);
		if (id < 0)
			return c->err->code;
		snprintf(name, sizeof name, "%s[%d]/%s", prefix, k, bn->name);
		g->nodes[id].name = ar_strpool_copy(&g->strs, name);
	}
	return AR_OK;
}

/* Unrolls Loop n, appending the iterations. */
static int unroll_loop(InferCtx *c, ArNode *n, const char *prefix)
{
	ArGraph *g = c->g;
	ArGraph *b = (ArGraph *)body_of(n);  /* its initializers move out */
	int ncarried = n->nexplicit - 2, nscan, rc = AR_OK;
	int *map, *fixed, *cur, *scans, cond;
	int64_t trips = 0, one = 1;
	const char *loop = n->name;
	char name[1024];

	if (ncarried < 0 || b->ninputs != ncarried + 2 ||
	    b->noutputs < ncarried + 1 || n->noutputs != b->noutputs - 1)
		return ar_node_fail(c, n, "body inputs and outputs do not match "
				    "the node's");
	for (int i = 0; i < b->nnodes; i++)
		for (int j = 0; j < b->nodes[i].nattrs; j++)
			if (b->nodes[i].attrs[j].g)
				return ar_node_fail(c, n, "body node '%s' (%s) "
						    "runs a subgraph: arenac "
						    "unrolls flat bodies only",
						    b->nodes[i].name,
						    b->nodes[i].op);
	if ((rc = trip_count(c, n, b, &trips)))
		return rc;
	nscan = n->noutputs - ncarried;
	if (!trips && nscan)
		return ar_node_fail(c, n, "runs no iteration, so its scan "
				    "outputs have no known shape");
	map = ar_xmalloc(((size_t)b->ntensors + 1) * sizeof *map);
	fixed = ar_xmalloc(((size_t)b->ntensors + 1) * sizeof *fixed);
	cur = ar_xmalloc(((size_t)ncarried + 1) * sizeof *cur);
	scans = ar_xmalloc(((size_t)(trips * nscan) + 1) * sizeof *scans);
	snprintf(name, sizeof name, "%s#cond", prefix);
	cond = n->inputs[1] >= 0 ? n->inputs[1] :
	       add_const(g, n, name, AR_DT_BOOL, 0, &one, 1);
	for (int j = 0; j < ncarried; j++)
		cur[j] = n->inputs[2 + j];
	/* Initializers of the body: one tensor for every iteration. */
	for (int t = 0; t < b->ntensors; t++)
		map[t] = -1;
	for (int k = 0; !rc && k < b->ncaptures; k++) {
		const char *what = b->tensors[b->captures[k]].name;
		if ((map[b->captures[k]] = ar_graph_find(g, what)) < 0)
			rc = ar_node_fail(c, n, "body reads '%s', which the "
					  "graph lacks", what);
	}
	for (int j = 0; j < b->ninputs; j++)
		map[b->inputs[j]] = -2;
	for (int t = 0; t < b->ntensors; t++)
		if (map[t] == -1 && b->tensors[t].producer < 0) {
			ArTensor *bt = &b->tensors[t];
			const char *keep = bt->name;
			snprintf(name, sizeof name, "%s#%s", prefix, keep);
			bt->name = name;
			map[t] = ar_move_tensor(g, bt);
			bt->name = keep;
		}
	memcpy(fixed, map, (size_t)b->ntensors * sizeof *fixed);
	/* Iteration k: PREFIX[k]/NAME for the body's tensors. */
	for (int64_t k = 0; !rc && k < trips; k++) {
		memcpy(map, fixed, (size_t)b->ntensors * sizeof *map);
		for (int t = 0; t < b->ntensors; t++)
			if (map[t] == -2)
				map[t] = -1;
		snprintf(name, sizeof name, "%s#iteration%d", prefix, (int)k);
		map[b->inputs[0]] = add_const(g, n, name, AR_DT_INT64, 0, &k, 1);
		map[b->inputs[1]] = cond;
		for (int j = 0; j < ncarried; j++)
			map[b->inputs[2 + j]] = cur[j];
		if ((rc = copy_iteration(c, n, b, map, prefix, (int)k,
					 k == trips - 1)))
			break;
		cond = map[b->outputs[0]];
		if (k < trips - 1)
			need_cond(c, cond, (int)k, loop);
		for (int j = 0; j < ncarried; j++)
			cur[j] = map[b->outputs[1 + j]];
		for (int s = 0; s < nscan; s++)
			scans[k * nscan + s] = map[b->outputs[1 + ncarried + s]];
	}
	for (int j = 0; !rc && j < ncarried; j++)
		if (n->outputs[j] >= 0 && cur[j] != n->outputs[j])
			add_identity(g, n, cur[j], n->outputs[j]);
	for (int s = 0; !rc && s < nscan; s++) {
		int *in = ar_xmalloc(((size_t)trips + 1) * sizeof *in), node;
		if (n->outputs[ncarried + s] < 0) {
			free(in);
			continue;
		}
		snprintf(name, sizeof name, "%s#scan%d", prefix, s);
		for (int64_t k = 0; k < trips; k++) {
			in[k] = add_tensor(g, "%s[%d]", name, (int)k);
			add_axis_op(g, n, "Unsqueeze", name, (int)k,
				    scans[k * nscan + s], in[k], 0);
		}
		node = add_node(g, n, "Concat", in, (int)trips,
				&n->outputs[ncarried + s], 1);
		int_attr(g, node, "axis", 0);
		free(in);
	}
	free(map), free(fixed), free(cur), free(scans);
	return rc;
}

int ar_seq_rewrite(InferCtx *c, int i, bool *rewrote)
{
	ArGraph *g = c->g;
	ArNode *n = &g->nodes[i], node;
	int first = g->nnodes, rc;
	bool dropped;
	char *prefix;

	*rewrote = false;
	if (g->depth || c->capconst || !wants(c, n))
		return AR_OK;
	if (!c->seqs)
		c->seqs = ar_xcalloc(1, sizeof *c->seqs);
	*rewrote = true;
	if ((rc = list_op(c, n, &dropped)) || dropped) {
		if (!rc)
			ar_graph_splice(g, i, first);
		return rc;
	}
	if (!strcmp(n->op, "SequenceAt"))
		return seq_at(c, n);
	if (!strcmp(n->op, "SequenceLength")) {
		Seq *s;
		int64_t len;
		if ((rc = need_seq(c, n, 0, &s)))
			return rc;
		len = s->n;
		set_const(g, i, n->outputs[0], AR_DT_INT64, 0, &len, 1);
		return AR_OK;
	}
	/* Nodes are appended below: n would move with g->nodes. */
	node = *n;
	n = &node;
	prefix = fresh(g, strcmp(n->op, "Loop") && n->outputs[0] >= 0 ?
		       g->tensors[n->outputs[0]].name : n->name);
	if (!strcmp(n->op, "SplitToSequence"))
		rc = split_to_seq(c, n, prefix);
	else if (!strcmp(n->op, "ConcatFromSequence"))
		rc = concat_from_seq(c, n, prefix);
	else
		rc = unroll_loop(c, n, prefix);
	free(prefix);
	if (!rc)
		ar_graph_splice(g, i, first);
	return rc;
}

int ar_seq_finish(InferCtx *c)
{
	struct ArSeqs *s = c->seqs;
	ArGraph *g = c->g;
	bool *drop_n, *drop_t;

	if (!s)
		return AR_OK;
	for (int k = 0; k < s->nconds; k++) {
		const Cond *q = &s->conds[k];
		const ArTensor *t = &g->tensors[q->t];
		if (ar_is_const(c, q->t) && !t->data)
			ar_fold_value(c, q->t, AR_FOLD_MAX_ELEMS, NULL, NULL);
		if (!ar_is_const(c, q->t) || !t->data || ar_numel(t) != 1)
			return ar_fail(c->err, AR_EXIT_MODEL, "node '%s' (Loop): "
				       "whether iteration %d goes on ('%s') is "
				       "known only at run time: arenac unrolls "
				       "a Loop over sequence values only when "
				       "it runs its trip count", q->loop,
				       q->iter + 1, t->name);
		if (!ar_get_int(t, 0))
			return ar_fail(c->err, AR_EXIT_MODEL, "node '%s' (Loop): "
				       "stops after iteration %d ('%s' is "
				       "false), before its trip count: arenac "
				       "unrolls a Loop over sequence values "
				       "only when it runs its trip count",
				       q->loop, q->iter, t->name);
	}
	for (int k = 0; k < g->noutputs; k++)
		if (seq_of(c, g->outputs[k]))
			return ar_fail(c->err, AR_EXIT_MODEL, "graph output '%s' "
				       "is a sequence: arenac plans tensors "
				       "only", g->tensors[g->outputs[k]].name);
	/* The sequences are lists now: no node reads or writes them. */
	drop_n = ar_xcalloc((size_t)g->nnodes + 1, sizeof *drop_n);
	drop_t = ar_xcalloc((size_t)g->ntensors + 1, sizeof *drop_t);
	for (int t = 0; t < g->ntensors; t++)
		drop_t[t] = seq_of(c, t) != NULL;
	ar_graph_drop(g, drop_n, drop_t);
	free(drop_n), free(drop_t);
	ar_seq_free(c);
	return AR_OK;
}

void ar_seq_free(InferCtx *c)
{
	struct ArSeqs *s = c->seqs;
	if (!s)
		return;
	for (int t = 0; t < s->cap; t++)
		free(s->seq[t].elems);
	free(s->seq), free(s->conds), free(s);
	c->seqs = NULL;
}
