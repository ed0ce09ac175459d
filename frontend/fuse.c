/*
 * fuse.c — per-channel ops feeding a convolution, folded into its loads.
 *
 * Pre-activation networks (DenseNet, ResNet v2) normalise and rectify a
 * block's features only to feed one convolution: BatchNormalization, often
 * a Caffe-style scale (Mul, Add by per-channel constants), then Relu.
 * Materialised, each step's output is as large as the features, and one of
 * them is live together with the features (later layers read them again)
 * and with the convolution's output: in DenseNet-121 that alone holds the
 * peak at 7.2 MB whatever the order.  Fused, the convolution maps every
 * input value through the chain as it loads it (per channel, it is a few
 * multiply-adds and a max), and the copies never exist.  The convolution's
 * zero padding pads the chain's output, so padding stays zero.
 *
 * A runtime needs a kernel for the fused node, so this is opt-in (--fuse);
 * the reference runtime has one.
 */
#include "fuse.h"
#include "ops.h"

#include <stdlib.h>
#include <string.h>

/* Node i's role in a fusion (ops/table.c): its AR_PRE_* code, or 0. */
static int prologue_code(const ArGraph *g, int i)
{
	const ArOpDef *d = ar_op_of(&g->nodes[i]);
	return d ? d->prologue : 0;
}

/* t is an activation read exactly once and not a graph output. */
static bool private(const ArGraph *g, const int *reads, int t)
{
	return t >= 0 && g->tensors[t].kind == AR_TK_ACTIVATION &&
	       reads[t] == 1;
}

static bool constant_float(const ArGraph *g, int t)
{
	return t >= 0 && (g->tensors[t].kind == AR_TK_WEIGHT ||
			  g->tensors[t].kind == AR_TK_CONSTANT) &&
	       g->tensors[t].dtype == AR_DT_FLOAT;
}

/*
 * k broadcasts to x as one value per channel (axis 1) or one value in all:
 * [C,1,1] or [1,C,1,1] against [N,C,H,W], or a scalar.
 */
static bool per_channel(const ArTensor *k, const ArTensor *x)
{
	int64_t n = ar_numel(k);
	if (n == 1)
		return k->rank <= x->rank;
	if (x->rank < 2 || k->rank > x->rank || n != x->dims[1])
		return false;
	for (int d = 0; d < k->rank; d++) {
		int xd = x->rank - k->rank + d;
		if (k->dims[d] != (xd == 1 ? x->dims[1] : 1))
			return false;
	}
	return true;
}

/*
 * Node i as a prologue op on its data input: its code, the data input and
 * its parameters (count in *np), or 0 when it is not one.
 */
static int prologue_op(const ArGraph *g, int i, int *data, int *params,
		       int *np)
{
	const ArNode *n = &g->nodes[i];
	int code;
	*np = 0;
	if (n->noutputs < 1 || n->outputs[0] < 0)
		return 0;
	for (int j = 1; j < n->noutputs; j++)
		if (n->outputs[j] >= 0)
			return 0;
	code = prologue_code(g, i);
	if (code == AR_PRE_RELU && n->nexplicit == 1) {
		*data = n->inputs[0];
		return code;
	}
	if (code == AR_PRE_BATCHNORM && n->nexplicit == 5 &&
	    !ar_attr_int(n, "training_mode", 0)) {
		*data = n->inputs[0];
		for (int j = 1; j < 5; j++)
			if (!constant_float(g, params[(*np)++] = n->inputs[j]))
				return 0;
		return code;
	}
	if ((code == AR_PRE_MUL || code == AR_PRE_ADD) && n->nexplicit == 2) {
		const ArTensor *y = &g->tensors[n->outputs[0]];
		for (int j = 0; j < 2; j++) {
			int x = n->inputs[j], k = n->inputs[1 - j];
			if (x >= 0 && g->tensors[x].bytes == y->bytes &&
			    constant_float(g, k) &&
			    per_channel(&g->tensors[k], y)) {
				*data = x;
				params[(*np)++] = k;
				return code;
			}
		}
	}
	return 0;
}

typedef struct {
	int n;                          /* ops, first applied first */
	int64_t code[AR_PREACT_MAX];
	float eps[AR_PREACT_MAX];
	int neps;
	int params[4 * AR_PREACT_MAX];
	int nparams;
	int x;                          /* the chain's input */
	int node[AR_PREACT_MAX];        /* the ops' nodes, to remove */
} Chain;

/* The longest fusable chain ending at Conv node c's input; false if none. */
static bool find_chain(const ArGraph *g, const int *reads, int c, Chain *ch)
{
	const ArNode *conv = &g->nodes[c];
	const ArOpDef *d;
	int t;

	memset(ch, 0, sizeof *ch);
	if (!(d = ar_op_of(conv)) || !d->fuse_target || conv->nexplicit < 2 ||
	    conv->nexplicit > 3 || conv->noutputs != 1)
		return false;
	t = conv->inputs[0];
	/* Walk up from the Conv; ops are found last first. */
	while (ch->n < AR_PREACT_MAX && private(g, reads, t) &&
	       g->tensors[t].dtype == AR_DT_FLOAT) {
		int p = g->tensors[t].producer, data = -1, par[4], np, code;
		if (p < 0 || !(code = prologue_op(g, p, &data, par, &np)) ||
		    data < 0 || g->tensors[data].dtype != AR_DT_FLOAT ||
		    g->tensors[data].bytes != g->tensors[t].bytes)
			break;
		memmove(ch->code + 1, ch->code, (size_t)ch->n * sizeof *ch->code);
		memmove(ch->node + 1, ch->node, (size_t)ch->n * sizeof *ch->node);
		memmove(ch->params + np, ch->params,
			(size_t)ch->nparams * sizeof *ch->params);
		ch->code[0] = code;
		ch->node[0] = p;
		memcpy(ch->params, par, (size_t)np * sizeof *par);
		ch->nparams += np;
		ch->n++;
		t = data;
	}
	ch->x = t;
	for (int i = 0; i < ch->n; i++)
		if (ch->code[i] == AR_PRE_BATCHNORM)
			ch->eps[ch->neps++] = ar_attr_float(&g->nodes[ch->node[i]],
							    "epsilon", 1e-5f);
	return ch->n > 0;
}

/* Conv node c becomes the fused node reading the chain's input. */
static void rewrite(ArGraph *g, int c, const Chain *ch)
{
	ArNode *n = &g->nodes[c];
	int nin = 3 + ch->nparams;
	int *in = ar_xmalloc((size_t)nin * sizeof *in);
	ArAttr *a;

	in[0] = ch->x;
	in[1] = n->inputs[1];
	in[2] = n->nexplicit > 2 ? n->inputs[2] : -1;
	memcpy(in + 3, ch->params, (size_t)ch->nparams * sizeof *in);
	free(n->inputs);
	n->inputs = in;
	n->ninputs = n->nexplicit = nin;
	ar_node_set_op(g, n, AR_PREACT_CONV, AR_FUSED_DOMAIN);
	n->opset = 1;
	a = ar_node_add_attr(g, n, "prologue", AR_ATTR_INTS);
	a->ints = ar_xmalloc((size_t)ch->n * sizeof *a->ints);
	memcpy(a->ints, ch->code, (size_t)ch->n * sizeof *a->ints);
	a->nints = ch->n;
	if (ch->neps) {
		a = ar_node_add_attr(g, n, "prologue_epsilon",
				     AR_ATTR_FLOATS);
		a->floats = ar_xmalloc((size_t)ch->neps * sizeof *a->floats);
		memcpy(a->floats, ch->eps, (size_t)ch->neps * sizeof(float));
		a->nfloats = ch->neps;
	}
}

int ar_fuse_preact(ArGraph *g)
{
	int *reads = ar_xcalloc((size_t)g->ntensors + 1, sizeof(int));
	bool *dropn = ar_xcalloc((size_t)g->nnodes + 1, sizeof(bool));
	bool *dropt = ar_xcalloc((size_t)g->ntensors + 1, sizeof(bool));
	int fused = 0;

	/* A graph output counts as read: the caller reads it. */
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++)
			if (g->nodes[i].inputs[j] >= 0)
				reads[g->nodes[i].inputs[j]]++;
	for (int i = 0; i < g->noutputs; i++)
		reads[g->outputs[i]]++;
	for (int c = 0; c < g->nnodes; c++) {
		Chain ch;
		if (!find_chain(g, reads, c, &ch))
			continue;
		for (int i = 0; i < ch.n; i++) {
			dropn[ch.node[i]] = true;
			dropt[g->nodes[ch.node[i]].outputs[0]] = true;
		}
		rewrite(g, c, &ch);
		fused++;
	}
	if (fused)
		ar_graph_drop(g, dropn, dropt);
	free(reads), free(dropn), free(dropt);
	return fused;
}
