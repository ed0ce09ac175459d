/*
 * tp_build.c — one device's forward graph under tensor (and sequence)
 * parallelism, from the model's graph and the roles tp_roles.c gives
 * (parallel.h has the scheme).
 *
 * The device's graph has the model's tensors (same ids, split weights
 * rounded up to a t-th along their axis) and its nodes in the same order,
 * with the collectives inserted: an AllReduce (or, past the start of
 * sequence parallelism, a ReduceScatter) right after each row-parallel
 * linear and embedding, whose partial sums it adds; a Shard where
 * sequence parallelism starts; an AllGather before each linear that reads
 * a sequence-split activation (one per activation).  The collectives
 * write the model's tensor names, their inputs get new ones (".partial",
 * ".seq", ".gathered"), so a layer's tensors keep their names.
 *
 * Shapes: every step that reads a tensor whose shape changed runs its
 * shape function again (the op table's); a weight a region step reads
 * along the split axis (a bias) is split with it; a view's constant
 * target (a Reshape to heads) is rewritten so that each group of axes it
 * merges or splits keeps its share, the outermost axis of a group taking
 * the change (the heads, never the head size: t must divide the heads),
 * and a broadcast's constant output shape (an Expand repeating grouped
 * keys and values) takes the input's split extents.
 */
#include "graph_copy.h"
#include "infer_ops.h"
#include "layers.h"
#include "parallel.h"
#include "strpool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Build {
	const ArGraph *g;       /* the model */
	const ArTpRoles *r;
	int t;                  /* devices */
	ArGraph *n;             /* the device's graph */
	int *cur;               /* per model tensor: what its readers read */
	int *gathered;          /* per model tensor: its AllGather's output */
	int *model;             /* per device tensor: the model tensor it
				   stands for (-1: a new constant) */
	int nmodel;
	ArTpComm *comm;         /* per device node */
	int cap;
	int entry;              /* sequence parallelism starts here, or -1 */
	bool seq;               /* past the entry */
	ArDiag quiet;
	InferCtx ctx;
	ArError *err;
} Build;

/* Node `node` sends fwd and bwd ring passes over its input 0 (out:
 * output 0). */
static void note_comm(Build *b, int node, int fwd, int bwd, bool out)
{
	if (node >= b->cap) {
		int cap = 2 * node + 64;
		b->comm = ar_xrealloc(b->comm, (size_t)cap * sizeof *b->comm);
		memset(b->comm + b->cap, 0,
		       (size_t)(cap - b->cap) * sizeof *b->comm);
		b->cap = cap;
	}
	b->comm[node] = (ArTpComm){(unsigned char)fwd, (unsigned char)bwd,
				   out};
}

/* A device tensor whose shape is not that of the model's it stands for. */
static bool changed(const Build *b, int x)
{
	const ArTensor *d, *m;
	if (x < 0 || b->model[x] < 0)
		return false;
	d = &b->n->tensors[x];
	m = &b->g->tensors[b->model[x]];
	return d->rank != m->rank ||
	       memcmp(d->dims, m->dims, (size_t)d->rank * sizeof *d->dims);
}

/* A new device tensor named like's name + suffix, shaped like it,
 * standing for model tensor m (-1: none). */
static int new_tensor(Build *b, int like, const char *suffix, int m)
{
	char name[512];
	int id;
	snprintf(name, sizeof name, "%s%s", b->n->tensors[like].name, suffix);
	id = ar_graph_add_tensor(b->n, name);
	ar_copy_tensor(&b->n->tensors[id], &b->n->tensors[like]);
	b->n->tensors[id].kind = AR_TK_ACTIVATION;
	if (id >= b->nmodel) {
		b->nmodel = 2 * id + 64;
		b->model = ar_xrealloc(b->model, (size_t)b->nmodel *
				       sizeof *b->model);
	}
	b->model[id] = m;
	return id;
}

/* Runs node id's shape function and sizes its outputs. */
static int reshape(Build *b, int id)
{
	ArNode *nd = &b->n->nodes[id];
	const ArOpDef *d = ar_op_of(nd);
	char why[sizeof b->err->msg];
	int rc = d && d->shape ? d->shape(&b->ctx, nd) : AR_EXIT_MODEL;
	for (int j = 0; !rc && j < nd->noutputs; j++)
		if (nd->outputs[j] >= 0 && b->n->tensors[nd->outputs[j]].rank >= 0)
			rc = ar_tensor_set_bytes(&b->n->tensors[nd->outputs[j]],
						 b->err);
	if (!rc)
		return AR_OK;
	snprintf(why, sizeof why, "%s", d && d->shape ? b->err->msg :
		 "no shape function");
	return ar_fail(b->err, AR_EXIT_MODEL, "--tp %d: cannot split node "
		       "'%s' (%s): %s", b->t, nd->name, nd->op, why);
}

/* Inserts collective op (in -> out) along axis; returns its node. */
static int collective(Build *b, const char *op, int in, int out, int axis,
		      int *rc)
{
	static const char *const names[] = {"axis", "world"};
	int64_t v[2] = {axis, b->t};
	char name[512];
	int id;
	snprintf(name, sizeof name, "%s.%s", b->n->tensors[out].name, op);
	id = ar_graph_add_node(b->n, name, op, AR_PARALLEL_DOMAIN);
	ar_node_set_io(&b->n->nodes[id], &in, 1, &out, 1);
	b->n->nodes[id].opset = 1;
	ar_add_int_attrs(b->n, &b->n->nodes[id], names, v, 2);
	b->n->tensors[out].producer = id;
	*rc = reshape(b, id);
	return id;
}

/* The axis along which a sequence-split activation of this rank lies. */
static int seq_axis(int rank)
{
	return rank >= 3 ? 1 : 0;
}

/* The first axis where device tensor x differs from model tensor m. */
static int split_axis(const Build *b, int x, int m)
{
	for (int i = 0; i < b->n->tensors[x].rank; i++)
		if (b->n->tensors[x].dims[i] != b->g->tensors[m].dims[i])
			return i;
	return 0;
}

/* The whole of model tensor m for a linear: an AllGather of the device's
 * sequence share, once per tensor. */
static int gather(Build *b, int m, int *rc)
{
	int x = b->cur[m], out, id;
	if (b->gathered[m] >= 0)
		return b->gathered[m];
	out = new_tensor(b, x, ".gathered", m);
	id = collective(b, "AllGather", x, out, split_axis(b, x, m), rc);
	note_comm(b, id, 1, 1, true);
	return b->gathered[m] = out;
}

/* "[2,32,13]" into buf (64 bytes). */
static const char *dims_text(char *buf, const ArTensor *t)
{
	size_t k = 0;
	buf[k++] = '[';
	for (int i = 0; i < t->rank && k < 48; i++)
		k += (size_t)snprintf(buf + k, 64 - k, "%s%lld", i ? "," : "",
				      (long long)t->dims[i]);
	snprintf(buf + k, 64 - k, "]");
	return buf;
}

/*
 * Groups of axes a reshape maps onto each other, from the model's shapes
 * I (rank r) and O (rank q): ig[k], og[k] the first axes of group k,
 * ig[n] = r, og[n] = q.  Returns n, or -1 when the shapes do not group.
 */
static int group_axes(const int64_t *I, int r, const int64_t *O, int q,
		      int *ig, int *og)
{
	int i = 0, j = 0, n = 0;
	while (i < r && j < q) {
		int64_t pi = I[i], po = O[j];
		ig[n] = i++;
		og[n++] = j++;
		while (pi != po) {
			if (pi < po && i < r)
				pi *= I[i++];
			else if (pi > po && j < q)
				po *= O[j++];
			else
				return -1;
		}
	}
	/* Trailing ones join the last group. */
	ig[n] = r;
	og[n] = q;
	return n > 0 || (r == 0 && q == 0) ? n : -1;
}

/*
 * The target of a view (a Reshape) whose input changed shape: each group
 * of axes it merges or splits keeps the input's share, the group's
 * outermost axis taking it.  False with err set when it cannot.
 */
static bool view_dims(Build *b, const ArNode *mn, const ArTensor *X,
		      int64_t *dims)
{
	const ArTensor *I = &b->g->tensors[mn->inputs[0]];
	const ArTensor *O = &b->g->tensors[mn->outputs[0]];
	int ig[AR_MAX_RANK + 1], og[AR_MAX_RANK + 1];
	int ng = group_axes(I->dims, I->rank, O->dims, O->rank, ig, og);
	char have[128], want[128];

	if (ng < 0 || X->rank != I->rank) {
		ar_fail(b->err, AR_EXIT_MODEL, "--tp %d: cannot split the view "
			"'%s' (%s)", b->t, mn->name, mn->op);
		return false;
	}
	memcpy(dims, O->dims, sizeof O->dims);
	for (int g = 0; g < ng; g++) {
		int64_t pin = ar_prod(X->dims, ig[g], ig[g + 1]);
		int64_t pout = ar_prod(O->dims, og[g], og[g + 1]);
		int j = og[g];
		if (pin == pout)
			continue;
		/* The group's outermost axis takes the share (the heads),
		 * never an inner one (the head size). */
		while (j + 1 < og[g + 1] && dims[j] == 1)
			j++;
		if ((dims[j] * pin) % pout) {
			ar_fail(b->err, AR_EXIT_MODEL, "--tp %d: view '%s' (%s) "
				"cannot split a device's share %s of '%s' like "
				"the whole, %s to %s: %d does not divide it",
				b->t, mn->name, mn->op, dims_text(have, X),
				I->name, dims_text(want, I),
				dims_text(want + 64, O), b->t);
			return false;
		}
		dims[j] = dims[j] * pin / pout;
	}
	return true;
}

/* The output shape of a broadcasting op (Expand) whose input changed:
 * each axis the input's changed one lines up with (from the right)
 * takes the input's extent. */
static void broadcast_dims(Build *b, const ArNode *mn, const ArTensor *X,
			   int64_t *dims)
{
	const ArTensor *I = &b->g->tensors[mn->inputs[0]];
	const ArTensor *O = &b->g->tensors[mn->outputs[0]];
	memcpy(dims, O->dims, sizeof O->dims);
	for (int k = O->rank - I->rank; k < O->rank; k++) {
		int a = k - (O->rank - I->rank);
		if (k >= 0 && X->dims[a] != I->dims[a])
			dims[k] = X->dims[a];
	}
}

/*
 * Input j of model node mn when it states the output's shape: a constant
 * 1-D integer input of one value per output axis (a Reshape's target,
 * not an Unsqueeze's axes) that, but for a view, holds the output's dims
 * (an Expand's shape); else -1.
 */
static int shape_input(const Build *b, const ArNode *mn, bool view)
{
	const ArTensor *O = &b->g->tensors[mn->outputs[0]];
	for (int j = 1; j < mn->nexplicit && (!view || j == 1); j++) {
		const ArTensor *c = mn->inputs[j] < 0 ? NULL :
				    &b->g->tensors[mn->inputs[j]];
		bool same = true;
		if (!c || !c->data || c->rank != 1 || c->dims[0] != O->rank ||
		    c->dtype != AR_DT_INT64)
			continue;
		for (int i = 0; !view && i < O->rank; i++)
			same = same && ((const int64_t *)c->data)[i] == O->dims[i];
		if (same)
			return j;
	}
	return -1;
}

/*
 * A step (model node k, device node id) whose input changed shape and
 * whose output shape is a constant input j: that input rewritten for the
 * device's share (a new constant, NODE.shape).
 */
static int retarget(Build *b, int k, int id, int j, bool view)
{
	const ArNode *mn = &b->g->nodes[k];
	ArNode *nd = &b->n->nodes[id];
	const ArTensor *X = &b->n->tensors[nd->inputs[0]];
	int rank = b->g->tensors[mn->outputs[0]].rank, s;
	int64_t dims[AR_MAX_RANK], *val;
	char name[512];

	if (view && !view_dims(b, mn, X, dims))
		return b->err->code;
	if (!view)
		broadcast_dims(b, mn, X, dims);
	snprintf(name, sizeof name, "%s.shape", nd->name);
	s = new_tensor(b, nd->inputs[j], "", -1);
	b->n->tensors[s].name = ar_strpool_copy(&b->n->strs, name);
	b->n->tensors[s].kind = AR_TK_CONSTANT;
	val = ar_xmalloc(8 * (size_t)rank + 8);
	memcpy(val, dims, 8 * (size_t)rank);
	free(b->n->tensors[s].data);
	b->n->tensors[s].data = val;
	nd->inputs[j] = s;
	return AR_OK;
}

/* A region step's weight along a split activation's axis (a bias)
 * splits with it. */
static void split_operands(Build *b, int id)
{
	ArNode *nd = &b->n->nodes[id];
	for (int j = 0; j < nd->nexplicit; j++) {
		int x = nd->inputs[j], a, mx;
		const ArTensor *X;
		if (x < 0 || !changed(b, x) || ar_tp_weight(b->n, x))
			continue;
		X = &b->n->tensors[x];
		mx = b->model[x];
		a = split_axis(b, x, mx);
		for (int i = 0; i < nd->nexplicit; i++) {
			int w = nd->inputs[i], wa;
			ArTensor *W;
			if (!ar_tp_weight(b->n, w) || changed(b, w))
				continue;
			W = &b->n->tensors[w];
			wa = a - (X->rank - W->rank);
			if (wa < 0 || W->dims[wa] != b->g->tensors[mx].dims[a] ||
			    W->dims[wa] == 1)
				continue;
			W->dims[wa] = X->dims[a];
			free(W->data);
			W->data = NULL;
			ar_tensor_set_bytes(W, b->err);
		}
	}
}

static bool needs_shapes(const Build *b, const ArNode *nd)
{
	for (int j = 0; j < nd->nexplicit; j++)
		if (changed(b, nd->inputs[j]))
			return true;
	return false;
}

/* Copies model node k, with its collectives around it. */
static int emit(Build *b, int k)
{
	const ArNode *mn = &b->g->nodes[k];
	ArTpRole role = b->r->role[k];
	const ArOpDef *d = ar_op_of(mn);
	int *in = ar_xmalloc(((size_t)mn->nexplicit + 1) * sizeof(int));
	int *out = ar_xmalloc(((size_t)mn->noutputs + 1) * sizeof(int));
	int rc = AR_OK, id = -1, y = mn->noutputs ? mn->outputs[0] : -1;
	bool step = ar_is_step(b->g, k);

	for (int j = 0; j < mn->nexplicit; j++)
		in[j] = mn->inputs[j] < 0 ? -1 : b->cur[mn->inputs[j]];
	memcpy(out, mn->outputs, (size_t)mn->noutputs * sizeof(int));
	if (step && role == AR_TP_COLUMN && changed(b, in[0]))
		in[0] = gather(b, mn->inputs[0], &rc);
	if (step && (role == AR_TP_ROW || role == AR_TP_EMBED))
		out[0] = new_tensor(b, y, ".partial", y);
	if (!rc && (id = ar_copy_node(b->n, mn, in, out, b->err)) < 0)
		rc = b->err->code;
	if (!rc && step && needs_shapes(b, &b->n->nodes[id])) {
		bool view = d && d->alias == AR_ALIAS_VIEW;
		int j = changed(b, in[0]) && mn->noutputs ?
			shape_input(b, mn, view) : -1;
		if (j > 0)
			rc = retarget(b, k, id, j, view);
		if (!rc && role == AR_TP_REGION)
			split_operands(b, id);
		if (!rc)
			rc = reshape(b, id);
	}
	/* Unless gathered, a column-parallel linear's input gradient is
	 * all-reduced, in place. */
	if (!rc && role == AR_TP_COLUMN && in[0] == b->cur[mn->inputs[0]])
		note_comm(b, id, 0, 2, false);
	if (!rc && out[0] != y) {
		bool scatter = b->seq && role == AR_TP_ROW;
		int c = collective(b, scatter ? "ReduceScatter" : "AllReduce",
				   out[0], y, seq_axis(b->n->tensors[y].rank),
				   &rc);
		note_comm(b, c, scatter ? 1 : 2, scatter, false);
	}
	for (int j = 0; !rc && b->entry >= 0 && j < mn->noutputs; j++)
		if (mn->outputs[j] == b->entry) {
			int s = new_tensor(b, b->entry, ".seq", b->entry);
			int c = collective(b, "Shard", b->entry, s,
					   seq_axis(b->n->tensors[s].rank), &rc);
			note_comm(b, c, 0, 1, false);
			b->cur[b->entry] = s;
			b->seq = true;
		}
	free(in);
	free(out);
	return rc;
}

/* Sequence parallelism starts at the first layer's input, back through
 * steps that read it alone (the embeddings' dropout), not before a step
 * that adds a constant of its shape (the position embeddings). */
static int seq_entry(const ArGraph *g, int t)
{
	for (;;) {
		int p = g->tensors[t].producer, x = -1, acts = 0;
		const ArNode *n;
		if (p < 0)
			return t;
		n = &g->nodes[p];
		for (int j = 0; j < n->nexplicit; j++) {
			int u = n->inputs[j];
			if (u < 0)
				continue;
			if (ar_in_arena(g, u))
				acts++, x = u;
			else if (g->tensors[u].rank >= 1)
				return t;
		}
		if (acts != 1 || g->tensors[x].rank != g->tensors[t].rank ||
		    memcmp(g->tensors[x].dims, g->tensors[t].dims,
			   (size_t)g->tensors[t].rank * sizeof(int64_t)))
			return t;
		t = x;
	}
}

/* Splits the weights the roles name, a t-th each, rounded up. */
static void split_weights(Build *b)
{
	for (int w = 0; w < b->g->ntensors; w++) {
		ArTensor *x = &b->n->tensors[w];
		int a = b->r->axis[w];
		if (a < 0)
			continue;
		x->dims[a] = (x->dims[a] + b->t - 1) / b->t;
		free(x->data);
		x->data = NULL;
		ar_tensor_set_bytes(x, b->err);
	}
}

static void count_roles(const ArTpRoles *r, int nnodes, ArTpGraph *out)
{
	for (int k = 0; k < nnodes; k++) {
		out->ncolumn += r->role[k] == AR_TP_COLUMN;
		out->nrow += r->role[k] == AR_TP_ROW;
		out->nembed += r->role[k] == AR_TP_EMBED;
	}
}

int ar_tp_graph(const ArGraph *fwd, const ArTpSpec *spec, ArTpGraph *out,
		ArError *err)
{
	Build b = {.g = fwd, .t = spec->tp, .entry = -1, .err = err};
	ArTpRoles r;
	int rc;

	memset(out, 0, sizeof *out);
	if ((rc = ar_tp_roles(fwd, &r, err)))
		return rc;
	if (spec->sp) {
		ArLayers l;
		char why[sizeof err->msg];
		if ((rc = ar_layers_find(fwd, fwd->nnodes, spec->layer_boundary,
					 &l, err))) {
			snprintf(why, sizeof why, "%s", err->msg);
			ar_tp_roles_free(&r);
			return ar_fail(err, rc, "--sequence-parallel: %s", why);
		}
		b.entry = seq_entry(fwd, l.bound[0]);
		ar_layers_free(&l);
	}
	b.r = &r;
	b.n = ar_copy_tensors(fwd);
	b.ctx = (InferCtx){.g = b.n, .diag = &b.quiet, .err = err};
	b.cur = ar_xmalloc(((size_t)fwd->ntensors + 1) * sizeof(int));
	b.gathered = ar_xmalloc(((size_t)fwd->ntensors + 1) * sizeof(int));
	b.nmodel = fwd->ntensors + 64;
	b.model = ar_xmalloc((size_t)b.nmodel * sizeof *b.model);
	for (int t = 0; t < fwd->ntensors; t++)
		b.cur[t] = b.model[t] = t, b.gathered[t] = -1;
	note_comm(&b, 0, 0, 0, false);
	split_weights(&b);
	for (int k = 0; k < fwd->nnodes && !rc; k++)
		rc = emit(&b, k);
	note_comm(&b, b.n->nnodes, 0, 0, false);  /* a slot per node */
	count_roles(&r, fwd->nnodes, out);
	ar_tp_roles_free(&r);
	free(b.cur);
	free(b.gathered);
	free(b.model);
	out->g = b.n;
	out->comm = b.comm;
	if (rc)
		ar_tp_graph_free(out);
	return rc;
}

void ar_tp_graph_free(ArTpGraph *t)
{
	ar_graph_free(t->g);
	free(t->comm);
	memset(t, 0, sizeof *t);
}
