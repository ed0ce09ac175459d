/*
 * prequant.c — linears a model stores quantised already, recognised as
 * what --base-quant makes (base_quant.c): frozen quantised base weights,
 * dequantised for each use into a transient of that step alone.
 *
 * Each form of the table below ends in a linear y = x W whose W the graph
 * computes from stored integers: ONNX's DequantizeLinear of an integer
 * initializer (per tensor, per axis, or blocked as opset 21 has it; ORT's
 * quantize_static and int4 exports), the QDQ pair on a float initializer
 * (QAT exports, TensorRT's explicit quantization), or com.microsoft's
 * MatMulNBits (ORT's MatMul4BitsQuantizer and GenAI builder), which is
 * the linear itself.  Between the dequantised weight and the MatMul or
 * Gemm reading it, a Cast to its float type and a Transpose may stand.
 *
 * Read as the model writes it, the dequantised W is an activation the
 * MatMul's backward reads for dX = dY W^T, so it would be kept from the
 * forward to the backward pass (a full-precision copy of every weight),
 * and the scales, float initializers, would be trained.  A runtime that
 * fine-tunes such a model does as bitsandbytes' MatMul4Bit does (see
 * quant_matmul.c): dequantise in the forward, again in the backward, keep
 * neither.  So each match becomes one arenac.QuantizedMatMul(x, Wq, bias,
 * scale, zero point, g_idx) writing the linear's output: its stored
 * operands (1 and 3 on) are the quantised base in the bill, in the
 * stored types (--precision does not convert them), no parameter and no
 * gradient; the dequantised weight is the workspace of its step and of
 * its gradient's.  The QDQ form's stored weight is QuantizeLinear's
 * output, the integer tensor ORT's and TensorRT's constant folding make
 * of it (the float W the file ships is not kept).  A dequantised weight
 * read by anything but linears (an embedding's Gather) is left as the
 * graph has it, and --train then names DequantizeLinear as an op
 * without a gradient rule: its float scale would be a parameter.
 */
#include "train.h"

#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "graph_copy.h"

#define NSLOT 6

/*
 * A form: the op that reads the stored weight at its input 0 (for a
 * linear form, input 1), the op its output must then go through (QDQ's
 * DequantizeLinear) or NULL, and for a linear form the QuantizedMatMul
 * operand each of its inputs becomes (-1 past its inputs).  Dequantising
 * forms give the dequantize node's inputs (weight, scale, zero point)
 * operands 1, 3 and 4, and the linear's x and bias 0 and 2.
 */
typedef struct QuantForm {
	const char *domain, *op, *then;
	bool linear;
	bool float_weight;      /* the stored operand is a float tensor */
	int slot[NSLOT];
} QuantForm;

static const QuantForm forms[] = {
	{"", "QuantizeLinear", "DequantizeLinear", false, true, {0}},
	{"", "DequantizeLinear", NULL, false, false, {0}},
	{"com.microsoft", "DequantizeLinear", NULL, false, false, {0}},
	/* A, B, scales, zero_points, g_idx, bias (ORT's
	 * ContribOperators.md, com.microsoft.MatMulNBits). */
	{"com.microsoft", "MatMulNBits", NULL, true, false,
	 {0, 1, 3, 4, 5, 2}},
};

/* Ops the dequantised weight may pass through to the linear: its format
 * and its layout. */
static const char *const passes[] = {"Cast", "Transpose"};

typedef struct Scan {
	const ArGraph *g;
	int *nread;             /* per tensor: inputs reading it */
	int *reader;            /* per tensor: the last node reading it */
	bool *skip;             /* per node: replaced */
	bool *drop;             /* per tensor: an intermediate gone */
	int *stored;            /* per node: its QuantizedMatMul operands */
	int (*ops)[NSLOT];
	bool *counted;          /* per tensor: a stored weight counted */
} Scan;

static bool op_is(const ArNode *n, const char *domain, const char *op)
{
	return !strcmp(n->op, op) && (*domain ? !strcmp(n->domain, domain) :
				      ar_default_domain(n->domain));
}

/* The explicit inputs of n from `from` on are stored (or absent). */
static bool stored_from(const ArGraph *g, const ArNode *n, int from)
{
	for (int j = from; j < n->nexplicit; j++)
		if (n->inputs[j] >= 0 && ar_in_arena(g, n->inputs[j]))
			return false;
	return true;
}

/* The one node reading t (at input 0 only), or -1. */
static int only_reader(const Scan *s, int t)
{
	int r = s->reader[t];
	return s->nread[t] == 1 && r >= 0 && s->g->nodes[r].inputs[0] == t &&
	       ar_is_step(s->g, r) ? r : -1;
}

static bool graph_output(const ArGraph *g, int t)
{
	for (int i = 0; i < g->noutputs; i++)
		if (g->outputs[i] == t)
			return true;
	return false;
}

/* Node r reads w as a linear's weight: MatMul(x, w) or Gemm(x, w[, b])
 * without transA, x an activation. */
static bool linear_of(const ArGraph *g, int r, int w)
{
	const ArNode *n = &g->nodes[r];
	bool gemm = op_is(n, "", "Gemm");
	return (gemm || op_is(n, "", "MatMul")) && ar_is_step(g, r) &&
	       n->nexplicit >= 2 && n->inputs[1] == w && n->inputs[0] >= 0 &&
	       n->inputs[0] != w && ar_in_arena(g, n->inputs[0]) &&
	       !(gemm && ar_attr_int(n, "transA", 0)) &&
	       (!gemm || stored_from(g, n, 2));
}

/* Every reader of w is a linear reading it as its weight (one at least). */
static bool all_linears(const Scan *s, int w)
{
	int k = 0;
	for (int i = 0; i < s->g->nnodes; i++)
		for (int j = 0; j < s->g->nodes[i].ninputs; j++)
			if (s->g->nodes[i].inputs[j] == w) {
				if (!linear_of(s->g, i, w))
					return false;
				k++;
			}
	return k == s->nread[w] && k > 0;
}

/* The operands of a QuantizedMatMul for linear node r whose weight
 * dequantize node dq computes. */
static void operands(Scan *s, int r, const ArNode *dq, int wq)
{
	const ArNode *n = &s->g->nodes[r];
	int *o = s->ops[r];
	for (int j = 0; j < NSLOT; j++)
		o[j] = -1;
	o[0] = n->inputs[0];
	o[1] = wq;
	o[2] = op_is(n, "", "Gemm") && n->nexplicit > 2 ? n->inputs[2] : -1;
	o[3] = dq->nexplicit > 1 ? dq->inputs[1] : -1;
	o[4] = dq->nexplicit > 2 ? dq->inputs[2] : -1;
	s->stored[r] = 1;
}

/* A dequantising form from node i: the chain to the linears, each of
 * them marked; false when it does not hold. */
static bool dequant_chain(Scan *s, const QuantForm *f, int i)
{
	const ArGraph *g = s->g;
	int dq = i, chain[4], nchain = 0, w, wq = g->nodes[i].inputs[0];
	const ArTensor *x = &g->tensors[wq];

	if (ar_in_arena(g, wq) || ar_train_is_float(x->dtype) !=
	    f->float_weight || !stored_from(g, &g->nodes[i], 1))
		return false;
	if (f->then) {
		dq = only_reader(s, g->nodes[i].outputs[0]);
		if (dq < 0 || !op_is(&g->nodes[dq], f->domain, f->then) ||
		    !stored_from(g, &g->nodes[dq], 1))
			return false;
		wq = g->nodes[i].outputs[0];    /* QuantizeLinear's integers */
		chain[nchain++] = dq;
	}
	w = g->nodes[dq].outputs[0];
	for (;;) {
		int r = only_reader(s, w), k = 0;
		if (graph_output(g, w))
			return false;
		while (r >= 0 && k < (int)(sizeof passes / sizeof *passes) &&
		       !op_is(&g->nodes[r], "", passes[k]))
			k++;
		if (r < 0 || k == (int)(sizeof passes / sizeof *passes) ||
		    nchain == 4)
			break;
		chain[nchain++] = r;
		s->drop[w] = true;
		w = g->nodes[r].outputs[0];
	}
	if (!all_linears(s, w))
		return false;
	s->skip[i] = true;
	s->drop[g->nodes[dq].outputs[0]] = true;
	s->drop[w] = true;
	for (int k = 0; k < nchain; k++)
		s->skip[chain[k]] = true;
	for (int r = 0; r < g->nnodes; r++)
		if (linear_of(g, r, w))
			operands(s, r, &g->nodes[dq], wq);
	return true;
}

/* A linear form: node i itself. */
static bool linear_form(Scan *s, const QuantForm *f, int i)
{
	const ArNode *n = &s->g->nodes[i];
	if (n->nexplicit < 2 || n->inputs[0] < 0 ||
	    !ar_in_arena(s->g, n->inputs[0]) || !stored_from(s->g, n, 1))
		return false;
	for (int j = 0; j < NSLOT; j++)
		s->ops[i][j] = -1;
	for (int j = 0; j < n->nexplicit && j < NSLOT; j++)
		s->ops[i][f->slot[j]] = n->inputs[j];
	s->stored[i] = 1;
	return true;
}

/* Node r as QuantizedMatMul of its operands into g; the weights it
 * stands for into *params (each stored weight once). */
static void add_qmatmul(Scan *s, ArGraph *g, int r, int64_t *params)
{
	const ArNode *n = &s->g->nodes[r];
	const int *o = s->ops[r];
	int nin = NSLOT, id, x = o[0], y = n->outputs[0];
	ArTensor *wq = &g->tensors[o[1]];

	while (nin > 2 && o[nin - 1] < 0)
		nin--;
	/* QDQ: QuantizeLinear's output, now stored. */
	wq->kind = AR_TK_WEIGHT;
	wq->producer = -1;
	if (!s->counted[o[1]]) {
		const ArTensor *a = &s->g->tensors[x], *b = &s->g->tensors[y];
		s->counted[o[1]] = true;
		*params = ar_train_add(*params, ar_train_mul(
			a->dims[a->rank - 1], b->dims[b->rank - 1]));
	}
	id = ar_graph_add_node(g, n->name, AR_QUANT_MATMUL, AR_FUSED_DOMAIN);
	ar_node_set_io(&g->nodes[id], o, nin, &y, 1);
	g->nodes[id].opset = n->opset;
	g->nodes[id].phase = n->phase;
	g->tensors[y].producer = id;
}

int ar_train_prequant(const ArGraph *src, ArGraph **out, int64_t *params,
		      ArError *err)
{
	size_t nt = (size_t)src->ntensors + 1, nn = (size_t)src->nnodes + 1;
	Scan s = {src, ar_xcalloc(nt, sizeof(int)), ar_xmalloc(nt * sizeof(int)),
		  ar_xcalloc(nn, sizeof(bool)), ar_xcalloc(nt, sizeof(bool)),
		  ar_xcalloc(nn, sizeof(int)), ar_xmalloc(nn * sizeof *s.ops),
		  ar_xcalloc(nt, sizeof(bool))};
	int nq = 0, rc = AR_OK;
	ArGraph *g = NULL;

	*out = NULL;
	*params = 0;
	for (size_t t = 0; t < nt; t++)
		s.reader[t] = -1;
	for (int i = 0; i < src->nnodes; i++)
		for (int j = 0; j < src->nodes[i].ninputs; j++)
			if (src->nodes[i].inputs[j] >= 0) {
				s.nread[src->nodes[i].inputs[j]]++;
				s.reader[src->nodes[i].inputs[j]] = i;
			}
	for (int i = 0; i < src->nnodes; i++)
		for (int k = 0; k < (int)(sizeof forms / sizeof *forms); k++) {
			const QuantForm *f = &forms[k];
			if (!s.skip[i] && !s.stored[i] && ar_is_step(src, i) &&
			    op_is(&src->nodes[i], f->domain, f->op) &&
			    src->nodes[i].nexplicit > 0 &&
			    src->nodes[i].inputs[0] >= 0 &&
			    (f->linear ? linear_form(&s, f, i) :
			     dequant_chain(&s, f, i))) {
				nq++;
				break;
			}
		}
	if (nq) {
		bool *none = ar_xcalloc(nn, sizeof *none);
		g = ar_copy_tensors(src);
		for (int i = 0; i < src->nnodes && !rc; i++) {
			const ArNode *n = &src->nodes[i];
			if (s.stored[i])
				add_qmatmul(&s, g, i, params);
			else if (!s.skip[i] &&
				 ar_copy_node(g, n, n->inputs, n->outputs, err) < 0)
				rc = err->code;
		}
		if (!rc)
			ar_graph_drop(g, none, s.drop);
		free(none);
	}
	if (rc)
		ar_graph_free(g);
	else
		*out = g;
	free(s.nread), free(s.reader), free(s.skip), free(s.drop);
	free(s.stored), free(s.ops), free(s.counted);
	return rc;
}
