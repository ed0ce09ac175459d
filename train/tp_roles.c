/*
 * tp_roles.c — which nodes of a model tensor parallelism splits, and how
 * (parallel.h gives the scheme).
 *
 * One pass in topological order decides each step's role from whether
 * its inputs are split: a linear (a bilinear op, gradient cost 2, of an
 * activation by a 2-D weight) reading a whole activation is
 * column-parallel, one reading a split activation row-parallel; an
 * embedding is vocabulary-parallel; any other step reading a split
 * activation runs on the split (a region step).  Which weight axis a
 * linear produces and which it sums over is asked of its own shape
 * function: doubling the output axis doubles the output's last extent,
 * doubling the summed one is refused.  A region that reaches a graph
 * output other than through views after a column-parallel head would
 * hand a split result to the caller: its column-parallel linears are made
 * whole and the pass runs again.
 */
#include "parallel.h"
#include "graph_copy.h"
#include "infer_ops.h"
#include "train.h"

#include <stdlib.h>
#include <string.h>

bool ar_tp_weight(const ArGraph *g, int t)
{
	const ArTensor *x;
	if (t < 0)
		return false;
	x = &g->tensors[t];
	return (x->kind == AR_TK_WEIGHT || x->kind == AR_TK_CONSTANT) &&
	       ar_train_is_float(x->dtype) && x->rank >= 1;
}

/* Per node: a linear's weight axes (out: its output's, in: summed). */
typedef struct Linear {
	int w, out, in;
} Linear;

/*
 * What doubling axis a of node n's input 1 does: 1 the output's last
 * extent doubles (a is the output axis), 0 the shape function refuses (a
 * is summed over), -1 anything else.  scratch holds the tensors; they are
 * restored.
 */
static int probe(ArGraph *scratch, const ArNode *n, int a)
{
	const ArOpDef *d = ar_op_of(n);
	ArNode node = *n;       /* the shape function gets its own copy */
	ArTensor *w = &scratch->tensors[n->inputs[1]];
	ArTensor *y = &scratch->tensors[n->outputs[0]];
	ArTensor keep_w = *w, keep_y = *y;
	ArDiag quiet = {NULL, NULL};
	ArError e;
	InferCtx c = {.g = scratch, .diag = &quiet, .err = &e};
	int r;

	w->dims[a] *= 2;
	if (d->shape(&c, &node))
		r = 0;
	else
		r = y->rank == keep_y.rank && y->rank >= 1 &&
		    y->dims[y->rank - 1] == 2 * keep_y.dims[y->rank - 1] ? 1 : -1;
	*w = keep_w;
	*y = keep_y;
	return r;
}

static void find_linear(const ArGraph *g, ArGraph *scratch, int k,
			Linear *l)
{
	const ArNode *n = &g->nodes[k];
	const ArOpDef *d = ar_op_of(n);
	int p0, p1;
	l->w = -1;
	if (!ar_is_step(g, k) || !d || !d->grad || d->grad->cost != 2 ||
	    !d->shape || n->nexplicit < 2 || n->noutputs < 1 ||
	    n->outputs[0] < 0 || n->inputs[0] < 0 ||
	    !ar_in_arena(g, n->inputs[0]) || !ar_tp_weight(g, n->inputs[1]) ||
	    g->tensors[n->inputs[1]].rank != 2)
		return;
	p0 = probe(scratch, n, 0);
	p1 = probe(scratch, n, 1);
	if (p0 == 1 && p1 == 0)
		*l = (Linear){n->inputs[1], 0, 1};
	else if (p1 == 1 && p0 == 0)
		*l = (Linear){n->inputs[1], 1, 0};
}

/* A table of rows gathered by integer activations: a token embedding. */
static bool embedding(const ArGraph *g, int k)
{
	const ArNode *n = &g->nodes[k];
	const ArGradRule *r = ar_op_grad(n);
	const ArTensor *w, *y;
	bool indexed = false;
	if (!ar_is_step(g, k) || !r || n->nexplicit < 2 || n->noutputs < 1 ||
	    n->outputs[0] < 0 || !ar_tp_weight(g, n->inputs[0]) ||
	    !ar_grad_moves(r, 0))
		return false;
	w = &g->tensors[n->inputs[0]];
	y = &g->tensors[n->outputs[0]];
	for (int j = 1; j < n->nexplicit; j++) {
		int t = n->inputs[j];
		indexed = indexed || (t >= 0 && ar_in_arena(g, t) &&
				      !ar_train_is_float(g->tensors[t].dtype));
	}
	return indexed && w->rank == 2 && y->rank >= 1 &&
	       y->dims[y->rank - 1] == w->dims[1];
}

/* Sets weight w's split axis; AR_EXIT_MODEL when another says another. */
static int split_weight(const ArGraph *g, ArTpRoles *r, int w, int axis,
			int node, ArError *err)
{
	if (r->axis[w] >= 0 && r->axis[w] != axis)
		return ar_fail(err, AR_EXIT_MODEL, "--tp: weight '%s' would be "
			       "split along axis %d by node '%s' and along axis "
			       "%d by another", g->tensors[w].name, axis,
			       g->nodes[node].name, r->axis[w]);
	r->axis[w] = axis;
	return AR_OK;
}

/* One pass: roles from the linears, embeddings and forced-whole nodes. */
static int assign(const ArGraph *g, const Linear *lin, const bool *emb,
		  const bool *whole, ArTpRoles *r, bool *split, ArError *err)
{
	int rc = AR_OK;
	memset(split, 0, (size_t)g->ntensors * sizeof *split);
	for (int t = 0; t < g->ntensors; t++)
		r->axis[t] = -1;
	for (int k = 0; k < g->nnodes && !rc; k++) {
		const ArNode *n = &g->nodes[k];
		bool any = false;
		r->role[k] = AR_TP_NONE;
		if (!ar_is_step(g, k))
			continue;
		for (int j = 0; j < n->nexplicit; j++)
			any = any || (n->inputs[j] >= 0 && split[n->inputs[j]]);
		if (lin[k].w >= 0 && any) {
			r->role[k] = AR_TP_ROW;
			rc = split_weight(g, r, lin[k].w, lin[k].in, k, err);
			continue;
		}
		if (lin[k].w >= 0 && !whole[k]) {
			int b = n->nexplicit > 2 ? n->inputs[2] : -1;
			r->role[k] = AR_TP_COLUMN;
			rc = split_weight(g, r, lin[k].w, lin[k].out, k, err);
			if (!rc && ar_tp_weight(g, b) && g->tensors[b].rank == 1)
				rc = split_weight(g, r, b, 0, k, err);
		} else if (emb[k] && !any) {
			r->role[k] = AR_TP_EMBED;
			rc = split_weight(g, r, n->inputs[0], 0, k, err);
			continue;
		} else if (any) {
			r->role[k] = AR_TP_REGION;
		} else {
			continue;
		}
		for (int j = 0; j < n->noutputs; j++)
			if (n->outputs[j] >= 0)
				split[n->outputs[j]] = true;
	}
	return rc;
}

/* Marks whole the column-parallel linears a split tensor t comes from;
 * how many. */
static int make_whole(const ArGraph *g, const ArTpRoles *r,
		      const bool *split, int t, bool *whole, bool *seen)
{
	int p = g->tensors[t].producer, n = 0;
	if (p < 0 || seen[p])
		return 0;
	seen[p] = true;
	if (r->role[p] == AR_TP_COLUMN) {
		whole[p] = true;
		return 1;
	}
	for (int j = 0; r->role[p] == AR_TP_REGION && j < g->nodes[p].nexplicit;
	     j++)
		if (g->nodes[p].inputs[j] >= 0 && split[g->nodes[p].inputs[j]])
			n += make_whole(g, r, split, g->nodes[p].inputs[j],
					whole, seen);
	return n;
}

/* A split graph output is a head's when only views lead to it from a
 * column-parallel linear. */
static bool split_head(const ArGraph *g, const ArTpRoles *r, int t)
{
	for (int p = g->tensors[t].producer; p >= 0;
	     p = g->tensors[g->nodes[p].inputs[0]].producer) {
		const ArOpDef *d = ar_op_of(&g->nodes[p]);
		if (r->role[p] == AR_TP_COLUMN)
			return true;
		if (r->role[p] != AR_TP_REGION || !d ||
		    d->alias != AR_ALIAS_VIEW || d->view_when ||
		    g->nodes[p].inputs[0] < 0)
			return false;
	}
	return false;
}

int ar_tp_roles(const ArGraph *g, ArTpRoles *r, ArError *err)
{
	size_t nn = (size_t)g->nnodes + 1, nt = (size_t)g->ntensors + 1;
	ArGraph *scratch = ar_copy_tensors(g);
	Linear *lin = ar_xmalloc(nn * sizeof *lin);
	bool *emb = ar_xcalloc(nn, sizeof *emb);
	bool *whole = ar_xcalloc(nn, sizeof *whole);
	bool *seen = ar_xmalloc(nn * sizeof *seen);
	bool *split = ar_xcalloc(nt, sizeof *split);
	bool again = true;
	int rc = AR_OK;

	r->role = ar_xcalloc(nn, sizeof *r->role);
	r->axis = ar_xmalloc(nt * sizeof *r->axis);
	for (int k = 0; k < g->nnodes; k++) {
		find_linear(g, scratch, k, &lin[k]);
		emb[k] = lin[k].w < 0 && embedding(g, k);
	}
	ar_graph_free(scratch);
	/* Each round makes at least one more linear whole. */
	while (again && !rc) {
		again = false;
		if ((rc = assign(g, lin, emb, whole, r, split, err)))
			break;
		memset(seen, 0, nn * sizeof *seen);
		for (int i = 0; i < g->noutputs; i++) {
			int t = g->outputs[i];
			if (split[t] && !split_head(g, r, t) &&
			    make_whole(g, r, split, t, whole, seen))
				again = true;
		}
	}
	free(lin);
	free(emb);
	free(whole);
	free(seen);
	free(split);
	return rc;
}

void ar_tp_roles_free(ArTpRoles *r)
{
	free(r->role);
	free(r->axis);
	memset(r, 0, sizeof *r);
}
