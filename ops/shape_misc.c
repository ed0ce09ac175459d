/*
 * shape_misc.c — shapes of the recurrent layers (RNN, GRU, LSTM) and of
 * control flow (If, Loop, Scan).
 *
 * Control flow is inferred by inferring the body graphs with their
 * captures bound to the enclosing graph.  An If whose condition folds to a
 * constant only infers the branch taken (the other may not even type-check
 * for these shapes); otherwise both branches must agree, because arenac
 * plans one static size per tensor.  Bodies get shapes only: the planner
 * does not plan subgraphs yet (their tensors are listed, not placed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer_ops.h"
#include "strpool.h"

int ar_shape_rnn(InferCtx *c, ArNode *n)
{
	ArTensor *x;
	int64_t hidden = ar_attr_int(n, "hidden_size", -1), dirs, seq, batch;
	int64_t y[4], h[3];
	const char *dir = ar_attr_str(n, "direction", "forward");
	bool bl = ar_attr_int(n, "layout", 0) != 0;
	int rc = ar_need(c, n, 0, &x);

	if (rc)
		return rc;
	if (x->rank != 3 || hidden < 1)
		return ar_node_fail(c, n, "needs a 3-D input and hidden_size");
	if (!strcmp(dir, "bidirectional"))
		dirs = 2;
	else if (!strcmp(dir, "forward") || !strcmp(dir, "reverse"))
		dirs = 1;
	else
		return ar_node_fail(c, n, "unknown direction '%s'", dir);
	seq = x->dims[bl ? 1 : 0];
	batch = x->dims[bl ? 0 : 1];
	/* layout 1 puts batch first in every output. */
	if (bl) {
		y[0] = batch, y[1] = seq, y[2] = dirs, y[3] = hidden;
		h[0] = batch, h[1] = dirs, h[2] = hidden;
	} else {
		y[0] = seq, y[1] = dirs, y[2] = batch, y[3] = hidden;
		h[0] = dirs, h[1] = batch, h[2] = hidden;
	}
	ar_set_shape(ar_out(c, n, 0), x->dtype, 4, y);
	for (int j = 1; j < n->noutputs; j++)
		ar_set_shape(ar_out(c, n, j), x->dtype, 3, h);
	return AR_OK;
}

static ArGraph *body(InferCtx *c, const ArNode *n, const char *name)
{
	const ArAttr *a = ar_attr(n, name);
	if (!a || !a->g) {
		ar_node_fail(c, n, "subgraph '%s' is missing", name);
		return NULL;
	}
	return a->g;
}

static const ArTensor *sub_out(const ArGraph *g, int k)
{
	return &g->tensors[g->outputs[k]];
}

static bool same_shape(const ArTensor *a, const ArTensor *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

/*
 * A graph input the value t depends on (the first met going back through
 * its producers), or NULL: what --input-value could fix.
 */
static const char *input_behind(const ArGraph *g, int t, int depth)
{
	const ArTensor *x = &g->tensors[t];
	if (x->producer < 0)
		return x->kind == AR_TK_INPUT ? x->name : NULL;
	if (depth > 16)
		return NULL;
	for (int j = 0; j < g->nodes[x->producer].nexplicit; j++) {
		int in = g->nodes[x->producer].inputs[j];
		const char *name = in < 0 ? NULL :
				   input_behind(g, in, depth + 1);
		if (name)
			return name;
	}
	return NULL;
}

/*
 * A branch that fails to infer when the condition is not known: the model
 * may be one of several configurations (Silero VAD's 8 kHz branch cannot
 * take a 16 kHz window), so the message says how to pick one.
 */
static int branch_failed(InferCtx *c, const ArNode *n, const char *attr)
{
	const char *in = input_behind(c->g, n->inputs[0], 0);
	size_t len = strlen(c->err->msg);
	snprintf(c->err->msg + len, sizeof c->err->msg - len, " (in the %s "
		 "of If '%s', whose condition is not a compile-time constant%s"
		 "%s%s)", attr, n->name, in ? "; if that branch cannot run, "
		 "fix the input it depends on with --input-value " : "",
		 in ? in : "", in ? "=V" : "");
	return c->err->code;
}

/*
 * A branch that failed to infer while the condition is known only at run
 * time, the other one inferring: the model may be one of several
 * configurations (Silero VAD v5's 8 kHz branch cannot take a 16 kHz
 * window; onnxruntime fails in it too), so the branch is kept with the
 * reason, unplanned (planner/subplan.c warns), the node takes the other's
 * shapes, and a run that takes it fails with an error.
 */
static void keep_unplanned(InferCtx *c, ArGraph *b)
{
	b->cannot_run = ar_strpool_copy(&b->strs, c->err->msg);
	c->err->code = AR_OK;
	c->err->msg[0] = 0;
}

int ar_shape_if(InferCtx *c, ArNode *n)
{
	ArTensor *cond;
	ArGraph *br[2];
	int nb = 2, rc;

	if ((rc = ar_need(c, n, 0, &cond)))
		return rc;
	if (!(br[0] = body(c, n, "then_branch")) ||
	    !(br[1] = body(c, n, "else_branch")))
		return c->err->code;
	if (ar_is_const(c, n->inputs[0]) && cond->data && ar_numel(cond) == 1) {
		if (!ar_get_int(cond, 0))
			br[0] = br[1];
		nb = 1;
	}
	for (int b = 0; b < nb; b++) {
		br[b]->cannot_run = NULL;
		rc = ar_infer_subgraph(c, br[b]);
		/* A constant condition's branch, a failure not the model's, or
		 * both branches failing: the error. */
		if (rc && nb == 1)
			return rc;
		if (rc && (rc != AR_EXIT_MODEL || (b == 1 && br[0]->cannot_run)))
			return branch_failed(c, n, b ? "else branch" :
					     "then branch");
		if (rc) {
			keep_unplanned(c, br[b]);
			continue;
		}
		if (br[b]->noutputs != n->noutputs)
			return ar_node_fail(c, n, "a branch has %d outputs, the "
					    "node %d", br[b]->noutputs,
					    n->noutputs);
	}
	/* One branch that runs: the node's shapes are its. */
	if (nb == 2 && (br[0]->cannot_run || br[1]->cannot_run)) {
		nb = 1;
		if (br[0]->cannot_run)
			br[0] = br[1];
	}
	for (int k = 0; k < n->noutputs; k++) {
		const ArTensor *t = sub_out(br[0], k);
		if (nb == 2 && !same_shape(t, sub_out(br[1], k)))
			return ar_node_fail(c, n, "output %d has a different "
					    "type or shape in each branch and "
					    "the condition is not a "
					    "compile-time constant", k);
		ar_set_shape(ar_out(c, n, k), t->dtype, t->rank, t->dims);
	}
	return AR_OK;
}

/* Gives body input k of g a shape and its size. */
static int bind_input(InferCtx *c, ArGraph *g, int k, ArDType dt, int rank,
		      const int64_t *dims, uint32_t bounded)
{
	ArTensor *t = &g->tensors[g->inputs[k]];
	ar_set_shape(t, dt, rank, dims);
	t->bounded = bounded;
	return ar_tensor_set_bytes(t, c->err);
}

/*
 * Whether a Loop runs exactly its trip count: its body's condition output
 * is constant true, or passes on (through views, which keep values) a
 * condition input that is absent or true.
 */
static bool runs_all_trips(InferCtx *c, const ArNode *n, const ArGraph *g)
{
	const ArTensor *out = sub_out(g, 0), *cond = ar_in(c, n, 1);
	int t = g->outputs[0];

	if (out->data && ar_numel(out) == 1)
		return ar_get_int(out, 0) != 0;
	while (t != g->inputs[1] && g->tensors[t].producer >= 0) {
		const ArNode *p = &g->nodes[g->tensors[t].producer];
		const ArOpDef *d = ar_op_of(p);
		if (!d || d->alias != AR_ALIAS_VIEW || d->view_when ||
		    p->nexplicit < 1 || p->inputs[0] < 0)
			break;
		t = p->inputs[0];
	}
	return t == g->inputs[1] &&
	       (!cond || (cond->data && ar_numel(cond) == 1 &&
			  ar_get_int(cond, 0) != 0));
}

/*
 * Loop(M, cond, v...) -> (v_final..., scan...).  The body reads
 * (iter, cond, v...) and writes (cond, v..., scan...).  Carried values
 * must keep their shape; scan outputs stack one slice per iteration: M of
 * them for a constant M the condition cannot cut short, at most M when it
 * can, and without a bound (--bound) when M is known only at run time.
 */
int ar_shape_loop(InferCtx *c, ArNode *n)
{
	ArGraph *g = body(c, n, "body");
	ArTensor *m = ar_in(c, n, 0);
	int64_t trips = -1, dims[AR_MAX_RANK];
	int ncarried = n->nexplicit - 2, rc;

	if (!g)
		return c->err->code;
	if (ncarried < 0 || g->ninputs != ncarried + 2 ||
	    g->noutputs < ncarried + 1 || n->noutputs != g->noutputs - 1)
		return ar_node_fail(c, n, "body inputs and outputs do not "
				    "match the node's");
	if (m && m->data && ar_numel(m) == 1)
		trips = ar_get_int(m, 0);
	if ((rc = bind_input(c, g, 0, AR_DT_INT64, 0, NULL, 0)) ||
	    (rc = bind_input(c, g, 1, AR_DT_BOOL, 0, NULL, 0)))
		return rc;
	for (int j = 0; j < ncarried; j++) {
		ArTensor *v;
		if ((rc = ar_need(c, n, 2 + j, &v)) ||
		    (rc = bind_input(c, g, 2 + j, v->dtype, v->rank, v->dims,
				     v->bounded)))
			return rc;
	}
	if ((rc = ar_infer_subgraph(c, g)))
		return rc;
	for (int j = 0; j < ncarried; j++) {
		const ArTensor *v = ar_in(c, n, 2 + j);
		if (!same_shape(v, sub_out(g, 1 + j)))
			return ar_node_fail(c, n, "loop-carried value %d changes "
					    "type or shape in the body", j);
		ar_set_shape(ar_out(c, n, j), v->dtype, v->rank, v->dims);
	}
	for (int k = ncarried; k < n->noutputs; k++) {
		const ArTensor *s = sub_out(g, 1 + k);
		ArTensor *y = ar_out(c, n, k);
		if (s->rank + 1 > AR_MAX_RANK)
			return ar_node_fail(c, n, "scan output rank above %d",
					    AR_MAX_RANK);
		dims[0] = trips < 0 ? 0 : trips;
		memcpy(dims + 1, s->dims, (size_t)s->rank * sizeof *dims);
		ar_set_shape(y, s->dtype, s->rank + 1, dims);
		if (y)
			y->bounded = s->bounded << 1;
		if (trips < 0 || !runs_all_trips(c, n, g))
			ar_bound_axis(y, 0, trips < 0 ? AR_NO_BOUND : trips);
	}
	return AR_OK;
}

/*
 * Scan: a loop over slices of its scan inputs along their scan axes, with
 * state carried between iterations.  Opset 8 has a leading batch axis on
 * every input and output and an optional sequence_lens first; from 9 the
 * scan axes and the axes scan outputs stack along are attributes.  The
 * body reads (state..., slice...) and writes (state..., slice...).
 */
int ar_shape_scan(InferCtx *c, ArNode *n)
{
	ArGraph *g = body(c, n, "body");
	int64_t m = ar_attr_int(n, "num_scan_inputs", -1), seq = -1;
	int64_t *in_ax = NULL, *out_ax = NULL, nin_ax, nout_ax;
	int64_t dims[AR_MAX_RANK];
	int v8 = n->opset < 9, first = v8, lead = v8 ? 2 : 1;
	int nstate = n->nexplicit - first - (int)m, rc = AR_OK;
	uint32_t seq_bounded = 0;

	if (!g)
		return c->err->code;
	if (m < 1 || nstate < 0 || g->ninputs != nstate + m ||
	    g->noutputs != n->noutputs || g->noutputs < nstate)
		return ar_node_fail(c, n, "body inputs and outputs do not "
				    "match num_scan_inputs and the node's");
	ar_attr_ints(n, "scan_input_axes", &in_ax, &nin_ax);
	ar_attr_ints(n, "scan_output_axes", &out_ax, &nout_ax);
	for (int j = 0; !rc && j < nstate; j++) {
		ArTensor *v;
		if ((rc = ar_need(c, n, first + j, &v)))
			break;
		if (v->rank < v8)
			rc = ar_node_fail(c, n, "state %d has no batch axis", j);
		else
			rc = bind_input(c, g, j, v->dtype, v->rank - v8,
					v->dims + v8, v->bounded >> v8);
	}
	for (int k = 0; !rc && k < m; k++) {
		ArTensor *x;
		int axis = 1, r = 0;
		if ((rc = ar_need(c, n, first + nstate + k, &x)) ||
		    (!v8 && (rc = ar_axis(c, n, k < nin_ax ? in_ax[k] : 0,
					  x->rank, &axis))))
			break;
		if (x->rank < lead) {
			rc = ar_node_fail(c, n, "scan input %d has rank %d", k,
					  x->rank);
			break;
		}
		if (seq >= 0 && x->dims[axis] != seq) {
			rc = ar_node_fail(c, n, "scan inputs have %lld and %lld "
					  "iterations", (long long)seq,
					  (long long)x->dims[axis]);
			break;
		}
		seq = x->dims[axis];
		seq_bounded |= x->bounded & AR_BIT(axis);
		for (int i = v8; i < x->rank; i++)
			if (i != axis)
				dims[r++] = x->dims[i];
		rc = bind_input(c, g, nstate + k, x->dtype, r, dims, 0);
	}
	if (!rc)
		rc = ar_infer_subgraph(c, g);
	for (int j = 0; !rc && j < nstate; j++) {
		const ArTensor *v = ar_in(c, n, first + j);
		const ArTensor *o = sub_out(g, j);
		if (o->rank != v->rank - v8 ||
		    memcmp(o->dims, v->dims + v8, (size_t)o->rank * sizeof *dims)) {
			rc = ar_node_fail(c, n, "state %d changes shape in the "
					  "body", j);
			break;
		}
		ar_set_shape(ar_out(c, n, j), o->dtype, v->rank, v->dims);
	}
	for (int k = 0; !rc && k < n->noutputs - nstate; k++) {
		const ArTensor *s = sub_out(g, nstate + k);
		ArTensor *y = ar_out(c, n, nstate + k);
		int axis = 1;
		if (s->rank + lead > AR_MAX_RANK) {
			rc = ar_node_fail(c, n, "scan output rank above %d",
					  AR_MAX_RANK);
			break;
		}
		if (!v8 && (rc = ar_axis(c, n, k < nout_ax ? out_ax[k] : 0,
					 s->rank + 1, &axis)))
			break;
		/* Opset 8: [batch, seq, slice...], the batch from input 1. */
		dims[0] = v8 ? ar_in(c, n, first + nstate)->dims[0] : 0;
		for (int i = v8, r = 0; i < s->rank + lead; i++)
			dims[i] = i == axis ? seq : s->dims[r++];
		ar_set_shape(y, s->dtype, s->rank + lead, dims);
		if (seq_bounded)
			ar_bound_axis(y, axis, seq);
	}
	free(in_ax);
	free(out_ax);
	return rc;
}
