/*
 * layout.c — --layout nhwc: the 4-D activations planned channels-last,
 * as CMSIS-NN and TFLite Micro kernels read and write them.
 *
 * One walk in node order, after inference, as onnxruntime's NHWC
 * transformer does in two (onnxruntime/core/optimizer/nhwc_transformer.cc,
 * NhwcTransformer::ApplyImpl, then transpose_optimization/
 * onnx_transpose_optimization.cc, Optimize, which sinks the Transposes it
 * added and cancels the pairs that meet):
 *
 *   - an op with a channels-last variant in the op table (AR_NHWC_DOMAIN)
 *     and a 4-D input 0 becomes it: it reads input 0 channels-last and
 *     writes output 0 channels-last, into a new tensor (the "twin"), and
 *     a convolution's filter as TFLite Micro and CMSIS-NN read it (OHWI,
 *     or [1, kH, kW, M] depthwise: filter_to_tflite);
 *   - an op the table calls layout-free (ArOpDef.layout) whose 4-D
 *     operands have twins computes on the twins (a Concat's axis
 *     remapped, a broadcast constant permuted), so no Transpose is needed
 *     between two layout-sensitive ops;
 *   - any other op, and the graph's outputs, read the model's layout: the
 *     first such reader gets the tensor computed from its twin by a
 *     Transpose, or a Reshape (a view, no copy) when the move is of unit
 *     axes only (a [1,1,1,C] pool output, a one-channel image), as
 *     onnxruntime's TransposeReplacement rule does
 *     (orttraining/core/optimizer/transpose_replacement.h: the axes
 *     longer than 1 keep their order).
 *
 * Tensor ids of the model keep their meaning and layout; a model tensor
 * nobody reads in that layout is dropped.  So the graph's inputs and
 * outputs stay as the model declares them (what its reference data and
 * its caller use; onnxruntime keeps them so too), and a firmware that
 * feeds NHWC pixels sees the Transpose at the input as one step of the
 * plan.  The rewritten graph is inferred again: the variants' shape
 * functions check every shape this walk set.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"
#include "layout.h"
#include "ops.h"
#include "splice.h"

typedef struct Pass {
	ArGraph *g;
	int nt0;            /* tensors of the model: the maps' size */
	int *twin;          /* its channels-last copy, or -1 */
	int *filter;        /* the filter in TFLite's layout made of it, -1 */
	bool *act;          /* the twin is an activation (not a constant) */
	bool *stale;        /* its own value not computed (yet) */
	int *order, norder, caporder;   /* the new node order */
} Pass;

static const int TO_LAST[4] = {0, 2, 3, 1}, TO_FIRST[4] = {0, 3, 1, 2};

static void emit(Pass *p, int node)
{
	if (p->norder == p->caporder) {
		p->caporder = 2 * p->caporder + 16;
		p->order = ar_xrealloc(p->order, (size_t)p->caporder *
				       sizeof *p->order);
	}
	p->order[p->norder++] = node;
}

/* Output axis i takes input axis perm[i]: the bytes stay in order when
 * the axes longer than 1 keep theirs. */
static bool unit_moves(const int64_t *dims, const int *perm)
{
	int last = -1;
	for (int i = 0; i < 4; i++) {
		if (dims[perm[i]] == 1)
			continue;
		if (perm[i] < last)
			return false;
		last = perm[i];
	}
	return true;
}

/* A new tensor named after t plus suffix. */
static int new_tensor(ArGraph *g, int t, const char *suffix)
{
	char name[512];
	snprintf(name, sizeof name, "%s%s", g->tensors[t].name, suffix);
	return ar_graph_add_tensor(g, name);
}

/* A node computing out from in, moving axes by perm. */
static void move(Pass *p, int in, int out, const int *perm)
{
	ArGraph *g = p->g;
	const char *op = "Transpose";
	int ins[2] = {in, -1}, nin = 1, node;
	char name[512];

	snprintf(name, sizeof name, "%s/%s", g->tensors[out].name,
		 perm == TO_LAST ? "to_nhwc" : perm == TO_FIRST ? "to_nchw" :
		 "to_tflite");
	/* Reshape takes its shape as an input from opset 5 on. */
	if (g->opset >= 5 && unit_moves(g->tensors[in].dims, perm)) {
		int s = new_tensor(g, out, "/shape");
		ArTensor *st = &g->tensors[s];
		st->dtype = AR_DT_INT64;
		st->rank = 1;
		st->dims[0] = 4;
		st->bytes = 4 * (int64_t)sizeof(int64_t);
		st->kind = AR_TK_CONSTANT;
		st->data = ar_xmalloc((size_t)st->bytes);
		memcpy(st->data, g->tensors[out].dims, (size_t)st->bytes);
		ins[nin++] = s;
		op = "Reshape";
	}
	node = ar_graph_add_node(g, name, op, "");
	if (!strcmp(op, "Transpose")) {
		ArAttr *a = ar_node_add_attr(g, &g->nodes[node], "perm",
					     AR_ATTR_INTS);
		a->ints = ar_xmalloc(4 * sizeof *a->ints);
		a->nints = 4;
		for (int i = 0; i < 4; i++)
			a->ints[i] = perm[i];
	}
	ar_node_set_io(&g->nodes[node], ins, nin, &out, 1);
	g->nodes[node].nexplicit = nin;
	emit(p, node);
}

/* Model tensor t in the model's layout, computed from its twin first
 * where it is not yet. */
static void need_model(Pass *p, int t)
{
	if (t < 0 || t >= p->nt0 || !p->stale[t])
		return;
	p->stale[t] = false;
	move(p, p->twin[t], t, TO_FIRST);
}

/* A channels-last twin of 4-D tensor t, not computed yet. */
static int add_twin(Pass *p, int t, bool act)
{
	ArGraph *g = p->g;
	int id = new_tensor(g, t, "_nhwc");
	ArTensor *x = &g->tensors[t], *y = &g->tensors[id];

	y->dtype = x->dtype;
	y->rank = 4;
	memcpy(y->dims, x->dims, sizeof y->dims);
	ar_dims_channels_last(y->dims, 4, true);
	y->bytes = x->bytes;
	y->quant = x->quant;
	p->twin[t] = id;
	p->act[t] = act;
	return id;
}

/* 4-D values src of dims d (elements of es bytes) to dst, axis i of dst
 * axis perm[i] of src, as Transpose. */
static void permute4(void *dst, const void *src, const int64_t *d,
		     const int *perm, size_t es)
{
	int64_t od[4], at[4], n = d[0] * d[1] * d[2] * d[3];
	for (int i = 0; i < 4; i++)
		od[i] = d[perm[i]];
	for (int64_t o = 0; o < n; o++) {
		int64_t r = o, i = 0;
		for (int k = 3; k >= 0; k--) {
			at[perm[k]] = r % od[k];
			r /= od[k];
		}
		for (int k = 0; k < 4; k++)
			i = i * d[k] + at[k];
		memcpy((uint8_t *)dst + o * (int64_t)es,
		       (const uint8_t *)src + i * (int64_t)es, es);
	}
}

/* A constant of rank at most 4 as numpy broadcasting aligns it with a
 * 4-D operand (leading unit axes), permuted channels-last: Add's bias
 * [C, 1, 1] becomes [1, 1, 1, C]. */
static int permuted_constant(Pass *p, int t)
{
	ArGraph *g = p->g;
	const ArTensor *x = &g->tensors[t];
	int64_t d[4] = {1, 1, 1, 1};
	int id;
	ArTensor *y;

	for (int i = 0; i < x->rank; i++)
		d[4 - x->rank + i] = x->dims[i];
	id = new_tensor(g, t, "_nhwc");
	x = &g->tensors[t];
	y = &g->tensors[id];
	y->dtype = x->dtype;
	y->rank = 4;
	y->dims[0] = d[0], y->dims[1] = d[2], y->dims[2] = d[3];
	y->dims[3] = d[1];
	y->bytes = x->bytes;
	y->kind = AR_TK_CONSTANT;
	y->data = ar_xmalloc((size_t)x->bytes);
	permute4(y->data, x->data, d, TO_LAST, ar_dtype_size(x->dtype));
	p->twin[t] = id;
	p->act[t] = false;
	return id;
}

/* A constant list of one value per axis of a 4-D tensor (or two: the
 * starts, then the ends), its values in channels-last axis order. */
static int permuted_list(Pass *p, int t)
{
	ArGraph *g = p->g;
	int id = new_tensor(g, t, "_nhwc");
	const ArTensor *x = &g->tensors[t];
	ArTensor *y = &g->tensors[id];
	size_t es = ar_dtype_size(x->dtype);

	ar_copy_tensor(y, x);
	y->kind = AR_TK_CONSTANT;
	for (int64_t k = 0; k < x->dims[0]; k++)
		memcpy((uint8_t *)y->data + (size_t)k * es,
		       (const uint8_t *)x->data +
		       (size_t)(k / 4 * 4 + TO_LAST[k % 4]) * es, es);
	p->twin[t] = id;
	p->act[t] = false;
	return id;
}

/* Model tensor t channels-last: its twin, made by a Transpose if it has
 * none. */
static int need_last(Pass *p, int t)
{
	assert(t >= 0 && t < p->nt0);
	if (p->twin[t] >= 0)
		return p->twin[t];
	add_twin(p, t, true);
	move(p, t, p->twin[t], TO_LAST);
	return p->twin[t];
}

static bool is_scalar(const ArTensor *t)
{
	return ar_numel(t) == 1;
}

/* How a layout-free node may compute on twins: 0 it may not; 1 it may,
 * each operand a twin, a scalar (or empty), a constant to permute (2), a
 * 4-D activation to transpose (3) or a per-axis list to permute (4). */
static int operand_way(const Pass *p, const ArOpDef *d, int t)
{
	const ArTensor *x = &p->g->tensors[t];
	if (t < p->nt0 && p->twin[t] >= 0 && p->act[t])
		return 1;
	if (d->layout == AR_LAYOUT_AXIS)
		return 0;
	if (d->layout == AR_LAYOUT_PER_AXIS)
		return ar_numel(x) == 0 ? 1 :
		       (x->kind == AR_TK_CONSTANT || x->kind == AR_TK_WEIGHT) &&
		       x->rank == 1 && (x->dims[0] == 4 || x->dims[0] == 8) &&
		       ar_dtype_size(x->dtype) > 0 ? 4 : 0;
	if (is_scalar(x))
		return 1;
	if (d->layout != AR_LAYOUT_BROADCAST)
		return 0;
	if ((x->kind == AR_TK_CONSTANT || x->kind == AR_TK_WEIGHT) &&
	    x->rank <= 4 && ar_dtype_size(x->dtype) > 0)
		return 2;
	return x->rank == 4 && !x->bounded ? 3 : 0;
}

/* Constant t's values in its data, computed where the graph knows it
 * constant by kind alone (a ConstantOfShape fill: inference keeps no
 * large values); false when they cannot be. */
static bool const_values(Pass *p, int t)
{
	int *made = NULL, nmade = 0;
	if (p->g->tensors[t].data)
		return true;
	if (!ar_const_value(p->g, t, &made, &nmade)) {
		free(made);
		return false;
	}
	for (int k = 0; k < nmade; k++)
		if (made[k] != t) {
			free(p->g->tensors[made[k]].data);
			p->g->tensors[made[k]].data = NULL;
		}
	free(made);
	return p->g->tensors[t].data != NULL;
}

/* Whether layout-free node i reads a 4-D twin and all its operands can
 * follow. */
static bool follows(Pass *p, int i)
{
	const ArNode *n = &p->g->nodes[i];
	const ArOpDef *d = ar_op_of(n);
	bool any = false;

	if (!d || d->layout == AR_LAYOUT_FIXED || n->nexplicit != n->ninputs ||
	    (d->layout == AR_LAYOUT_PER_AXIS &&
	     (ar_attr(n, "axes") || n->inputs[0] < 0 ||
	      n->inputs[0] >= p->nt0 || !p->act[n->inputs[0]])))
		return false;
	for (int j = 0; j < n->noutputs; j++) {
		int o = n->outputs[j];
		if (o >= 0 && p->g->tensors[o].rank >= 0 &&
		    p->g->tensors[o].rank != 4)
			return false;
	}
	for (int j = 0; j < n->ninputs; j++) {
		int t = n->inputs[j];
		if (t < 0)
			continue;
		if (!operand_way(p, d, t))
			return false;
		any |= t < p->nt0 && p->twin[t] >= 0 && p->act[t];
	}
	for (int j = 0; any && j < n->ninputs; j++)
		if (n->inputs[j] >= 0 && n->inputs[j] < p->nt0 &&
		    p->twin[n->inputs[j]] < 0 &&
		    (operand_way(p, d, n->inputs[j]) == 2 ||
		     operand_way(p, d, n->inputs[j]) == 4) &&
		    !const_values(p, n->inputs[j]))
			return false;
	return any;
}

/* Whether node i has a channels-last variant it can become: a 4-D input
 * 0 and no output but the first read. */
static bool has_variant(const Pass *p, int i)
{
	const ArNode *n = &p->g->nodes[i];
	if (!ar_default_domain(n->domain) || n->ninputs < 1 ||
	    n->inputs[0] < 0 || p->g->tensors[n->inputs[0]].rank != 4 ||
	    !ar_op_find(AR_NHWC_DOMAIN, n->op, 1))
		return false;
	for (int j = 1; j < n->noutputs; j++)
		if (n->outputs[j] >= 0 && p->g->tensors[n->outputs[j]].rank >= 0)
			return false;
	return true;
}

/* Output j of node i written to a new twin. */
static void output_twin(Pass *p, int i, int j)
{
	int o = p->g->nodes[i].outputs[j];
	if (o < 0 || p->g->tensors[o].rank < 0)
		return;
	p->g->nodes[i].outputs[j] = add_twin(p, o, true);
	p->stale[o] = true;
}

/* The input holding node i's filter once it is a channels-last variant,
 * or 0. */
static int filter_of(const ArGraph *g, int i)
{
	const ArOpDef *d = ar_op_find(AR_NHWC_DOMAIN, g->nodes[i].op, 1);
	return d ? d->filter : 0;
}

/* Whether filter t can be permuted at compile time: a weight or constant
 * with values that every reader reads as the filter of a convolution
 * this pass makes channels-last, all in the same layout. */
static bool filter_foldable(const Pass *p, int t, const int *perm)
{
	const ArGraph *g = p->g;
	const ArTensor *w = &g->tensors[t];

	if (t >= p->nt0 || (w->kind != AR_TK_WEIGHT &&
			    w->kind != AR_TK_CONSTANT) || !w->data)
		return false;
	for (int k = 0; k < g->ninputs; k++)
		if (g->inputs[k] == t)
			return false;
	for (int k = 0; k < g->noutputs; k++)
		if (g->outputs[k] == t)
			return false;
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++)
			if (g->nodes[i].inputs[j] == t &&
			    (!ar_is_step(g, i) || !has_variant(p, i) ||
			     j != filter_of(g, i) ||
			     ar_filter_perm(w->dims, ar_attr_int(
				&g->nodes[i], "group", 1)) != perm))
				return false;
	return true;
}

/*
 * Node i's filter (input j) in the layout TFLite Micro's and CMSIS-NN's
 * kernels read (ops.h ar_filter_perm), its kernel_shape written first
 * where the node leaves it to W's dims.  A weight or constant only such
 * filters read is permuted once at compile time, as onnxruntime's NHWC
 * transformer folds the Transposes it puts on constant weights
 * (onnx_transpose_optimization.cc, TransposeInitializer): an initializer
 * in place (its name kept), a Constant node's value (paddle2onnx's
 * weights) into a new constant; any other (shared with a channels-first
 * reader, computed, a graph input or external data) is moved by a
 * Transpose step, each once.  Its per-channel quantisation axis moves
 * with it (inference keeps a record it finds).
 */
static void filter_to_tflite(Pass *p, int i, int j)
{
	ArGraph *g = p->g;
	int t = g->nodes[i].inputs[j], id;
	ArTensor *w, *y;
	const int *perm;
	int64_t d[4];
	bool fold;

	if (t < 0 || g->tensors[t].rank != 4)
		return;
	w = &g->tensors[t];
	/* An initializer another reader permuted in place is TFLite's. */
	memcpy(d, w->dims, sizeof d);
	if (t < p->nt0 && p->filter[t] == t)
		ar_filter_dims_onnx(d, ar_attr_int(&g->nodes[i], "group", 1));
	if (!ar_attr(&g->nodes[i], "kernel_shape")) {
		ArAttr *a = ar_node_add_attr(g, &g->nodes[i], "kernel_shape",
					     AR_ATTR_INTS);
		a->ints = ar_xmalloc(2 * sizeof *a->ints);
		a->nints = 2;
		a->ints[0] = d[2];
		a->ints[1] = d[3];
	}
	if (t < p->nt0 && p->filter[t] >= 0) {
		g->nodes[i].inputs[j] = p->filter[t];
		return;
	}
	perm = ar_filter_perm(d, ar_attr_int(&g->nodes[i], "group", 1));
	fold = filter_foldable(p, t, perm);
	id = fold && w->kind == AR_TK_WEIGHT && w->producer < 0 ? t :
	     new_tensor(g, t, "_tflite");
	w = &g->tensors[t];
	y = &g->tensors[id];
	if (fold) {
		void *v = ar_xmalloc((size_t)w->bytes);
		permute4(v, w->data, d, perm, ar_dtype_size(w->dtype));
		if (id == t)
			free(w->data);
		y->data = v;
		y->kind = w->kind;
	}
	y->dtype = w->dtype;
	y->rank = 4;
	for (int k = 0; k < 4; k++)
		y->dims[k] = d[perm[k]];
	y->bytes = w->bytes;
	y->quant = w->quant;
	y->quant.axis = ar_perm_axis(perm, w->quant.axis);
	if (!fold)
		move(p, t, id, perm);
	if (t < p->nt0)
		p->filter[t] = id;
	g->nodes[i].inputs[j] = id;
}

static void rewrite_variant(Pass *p, int i)
{
	int x = need_last(p, p->g->nodes[i].inputs[0]);
	int f = filter_of(p->g, i);
	ArNode *n;

	for (int j = 1; j < p->g->nodes[i].ninputs; j++)
		need_model(p, p->g->nodes[i].inputs[j]);
	if (f)
		filter_to_tflite(p, i, f);
	n = &p->g->nodes[i];
	n->inputs[0] = x;
	ar_node_set_op(p->g, n, n->op, AR_NHWC_DOMAIN);
	n->opset = 1;
	output_twin(p, i, 0);
}

static void rewrite_follower(Pass *p, int i)
{
	const ArOpDef *d = ar_op_of(&p->g->nodes[i]);

	for (int j = 0; j < p->g->nodes[i].ninputs; j++) {
		int t = p->g->nodes[i].inputs[j], id = t;
		if (t < 0)
			continue;
		switch (operand_way(p, d, t)) {
		case 1:
			if (t < p->nt0 && p->twin[t] >= 0 && p->act[t])
				id = p->twin[t];
			break;
		case 2:
			id = p->twin[t] >= 0 ? p->twin[t] :
			     permuted_constant(p, t);
			break;
		case 4:
			id = p->twin[t] >= 0 ? p->twin[t] :
			     permuted_list(p, t);
			break;
		default:
			id = need_last(p, t);
			break;
		}
		p->g->nodes[i].inputs[j] = id;
	}
	if (d->layout == AR_LAYOUT_AXIS) {
		ArNode *n = &p->g->nodes[i];
		for (int k = 0; k < n->nattrs; k++)
			if (!strcmp(n->attrs[k].name, "axis")) {
				int64_t a = n->attrs[k].i < 0 ?
					    n->attrs[k].i + 4 : n->attrs[k].i;
				n->attrs[k].i = a == 0 ? 0 : a == 1 ? 3 : a - 1;
			}
	}
	for (int j = 0; j < p->g->nodes[i].noutputs; j++)
		output_twin(p, i, j);
}

/* The nodes in the order emitted, each tensor's producer set again. */
static void reorder(Pass *p)
{
	ArGraph *g = p->g;
	ArNode *nodes;

	/* Every node of the model and every one added, once. */
	assert(p->norder == g->nnodes);
	nodes = ar_xmalloc((size_t)g->nnodes * sizeof *nodes);

	for (int k = 0; k < p->norder; k++)
		nodes[k] = g->nodes[p->order[k]];
	memcpy(g->nodes, nodes, (size_t)g->nnodes * sizeof *nodes);
	free(nodes);
	for (int t = 0; t < g->ntensors; t++)
		g->tensors[t].producer = -1;
	for (int k = 0; k < g->nnodes; k++)
		for (int j = 0; j < g->nodes[k].noutputs; j++)
			if (g->nodes[k].outputs[j] >= 0)
				g->tensors[g->nodes[k].outputs[j]].producer = k;
}

/* Drops the model tensors that only their twins hold. */
static void drop_stale(Pass *p)
{
	ArGraph *g = p->g;
	bool *dn = ar_xcalloc((size_t)g->nnodes + 1, sizeof *dn);
	bool *dt = ar_xcalloc((size_t)g->ntensors + 1, sizeof *dt);
	for (int t = 0; t < p->nt0; t++)
		dt[t] = p->stale[t];
	ar_graph_drop(g, dn, dt);
	free(dn);
	free(dt);
}

int ar_layout_nhwc(ArGraph *g, const ArDiag *diag, int *rewritten,
		   ArError *err)
{
	Pass p = {.g = g, .nt0 = g->ntensors};
	int nn0 = g->nnodes, done = 0;

	p.twin = ar_xmalloc((size_t)p.nt0 * sizeof *p.twin + 1);
	p.filter = ar_xmalloc((size_t)p.nt0 * sizeof *p.filter + 1);
	p.act = ar_xcalloc((size_t)p.nt0 + 1, sizeof *p.act);
	p.stale = ar_xcalloc((size_t)p.nt0 + 1, sizeof *p.stale);
	for (int t = 0; t < p.nt0; t++)
		p.twin[t] = p.filter[t] = -1;
	for (int i = 0; i < nn0; i++) {
		if (ar_is_step(g, i) && has_variant(&p, i)) {
			rewrite_variant(&p, i);
			done++;
		} else if (ar_is_step(g, i) && follows(&p, i)) {
			rewrite_follower(&p, i);
		} else {
			for (int j = 0; j < g->nodes[i].ninputs; j++)
				need_model(&p, g->nodes[i].inputs[j]);
		}
		emit(&p, i);
	}
	for (int k = 0; k < g->noutputs; k++)
		need_model(&p, g->outputs[k]);
	reorder(&p);
	drop_stale(&p);
	free(p.twin);
	free(p.filter);
	free(p.act);
	free(p.stale);
	free(p.order);
	*rewritten = done;
	g->nhwc = true;
	return done ? ar_infer(g, diag, err) : AR_OK;
}
