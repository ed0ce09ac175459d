/*
 * shape_misc.c — shapes of the recurrent layers (RNN, GRU, LSTM) and of
 * control flow (If, Loop).
 *
 * Control flow is inferred by inferring the body graphs with their
 * captures bound to the enclosing graph.  An If whose condition folds to a
 * constant only infers the branch taken (the other may not even type-check
 * for these shapes); otherwise both branches must agree, because arenac
 * plans one static size per tensor.
 */
#include <string.h>

#include "infer_ops.h"

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
		if ((rc = ar_infer_subgraph(c, br[b])))
			return rc;
		if (br[b]->noutputs != n->noutputs)
			return ar_node_fail(c, n, "a branch has %d outputs, the "
					    "node %d", br[b]->noutputs,
					    n->noutputs);
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

/*
 * Loop(M, cond, v...) -> (v_final..., scan...).  The body reads
 * (iter, cond, v...) and writes (cond, v..., scan...).  Carried values
 * must keep their shape; scan outputs stack one slice per iteration, so
 * they need a constant trip count.
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
	ar_set_shape(&g->tensors[g->inputs[0]], AR_DT_INT64, 0, NULL);
	ar_set_shape(&g->tensors[g->inputs[1]], AR_DT_BOOL, 0, NULL);
	for (int j = 0; j < ncarried; j++) {
		ArTensor *v;
		if ((rc = ar_need(c, n, 2 + j, &v)))
			return rc;
		ar_set_shape(&g->tensors[g->inputs[2 + j]], v->dtype, v->rank,
			     v->dims);
	}
	for (int j = 0; j < g->ninputs; j++)
		if ((rc = ar_tensor_set_bytes(&g->tensors[g->inputs[j]],
					      c->err)))
			return rc;
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
		if (trips < 0)
			return ar_node_fail(c, n, "scan output %d needs a "
					    "compile-time trip count", k);
		if (s->rank + 1 > AR_MAX_RANK)
			return ar_node_fail(c, n, "scan output rank above %d",
					    AR_MAX_RANK);
		dims[0] = trips;
		memcpy(dims + 1, s->dims, (size_t)s->rank * sizeof *dims);
		ar_set_shape(ar_out(c, n, k), s->dtype, s->rank + 1, dims);
	}
	return AR_OK;
}
