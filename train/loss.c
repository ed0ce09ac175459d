/*
 * loss.c — the loss of a training step, node nfwd of the training model.
 *
 * A model whose first output is the scalar of a loss op of its own
 * (AR_OP_LOSS: SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, as
 * PyTorch exports a module that computes its loss) is trained on it: its
 * node moves to the end of the base graph.  Otherwise arenac attaches
 * ONNX's SoftmaxCrossEntropyLoss to the first output, with an int64 label
 * shaped like the output less its last axis, and the loss replaces the
 * first output.  --loss-chunk then folds the head that computes the
 * logits into the loss (LinearCrossEntropy), which step.c plans in chunks;
 * under amp the head is the product of autocast's 16-bit copies, and the
 * chunks' logits are the fp32 casts the loss reads.
 *
 * --loss-dtype: the format the cross-entropy computes in.  fp32 (the
 * default in the mixed and amp precisions) is what the stacks do with
 * 16-bit logits: Megatron-LM's vocab-parallel cross-entropy upcasts them
 * (megatron/core/tensor_parallel/cross_entropy.py, calculate_logits_max:
 * vocab_parallel_logits.float()) and keeps the fp32 softmax over the local
 * vocabulary for its backward (_VocabParallelCrossEntropy.forward:
 * ctx.save_for_backward(exp_logits, target_mask, masked_target_1d)); under
 * torch.autocast cross_entropy is log_softmax and nll_loss, both on the
 * fp32 list, and log_softmax keeps its fp32 result (derivatives.yaml,
 * _log_softmax: _log_softmax_backward_data(grad, result, ...)).  So the
 * loss reads an fp32 copy of the logits (a Cast, made here for every
 * precision: the upcast is transient, read by the loss's forward alone,
 * and the 16-bit logits die at it) and keeps its log-probabilities,
 * output 1 (train_outputs.c), in fp32: B*T*V*4 bytes, per chunk with
 * --loss-chunk.  same: the loss runs in the logits' format and keeps
 * B*T*V*2 bytes of 16-bit log-probabilities (a fused 16-bit kernel).
 * Megatron's exp_logits overwrite the upcast in place, and its gradient
 * the softmax; PyTorch's log_softmax writes a new tensor, as planned
 * here.  A model's own NegativeLogLikelihoodLoss keeps nothing of its
 * own (its LogSoftmax does, in the model's format), and under amp a
 * model's own SoftmaxCrossEntropyLoss reads what autocast gives it (fp32).
 */
#include "train.h"

#include <stdlib.h>
#include <string.h>

#include "graph_copy.h"

/* The node computing the model's own loss (a loss op whose scalar is the
 * first output), or -1. */
static int own_loss(const ArGraph *fwd)
{
	const ArTensor *y;
	const ArOpDef *d;
	if (fwd->noutputs < 1)
		return -1;
	y = &fwd->tensors[fwd->outputs[0]];
	if (y->producer < 0 || y->rank != 0)
		return -1;
	d = ar_op_of(&fwd->nodes[y->producer]);
	return d && (d->flags & AR_OP_LOSS) ? y->producer : -1;
}

/* ONNX's SoftmaxCrossEntropyLoss, version 13: the loss arenac attaches. */
static int attach_loss(ArTrainModel *m, ArError *err)
{
	ArGraph *g = m->base;
	const char *lname = ar_graph_find(g, "label") < 0 ? "label"
							   : "label.train";
	int label = ar_graph_add_tensor(g, lname), loss, in[2], node, rc;
	ArTensor *y = &g->tensors[m->logits], *l = &g->tensors[label];

	l->dtype = AR_DT_INT64;
	l->rank = y->rank > 0 ? y->rank - 1 : 0;
	memcpy(l->dims, y->dims, sizeof l->dims);
	l->kind = AR_TK_INPUT;
	if ((rc = ar_tensor_set_bytes(l, err)))
		return rc;
	g->inputs[g->ninputs++] = label;
	loss = ar_graph_add_tensor(g, ar_graph_find(g, "loss") < 0 ? "loss"
							: "loss.train");
	g->tensors[loss].dtype = g->tensors[m->logits].dtype;
	g->tensors[loss].rank = 0;
	g->tensors[loss].bytes = (int64_t)ar_dtype_size(g->tensors[loss].dtype);
	g->tensors[loss].kind = AR_TK_OUTPUT;
	g->tensors[m->logits].kind = AR_TK_ACTIVATION;
	/* The loss replaces the first output; the others stay outputs. */
	g->outputs[0] = loss;
	in[0] = m->logits;
	in[1] = label;
	node = ar_graph_add_node(g, "loss", "SoftmaxCrossEntropyLoss", "");
	ar_node_set_io(&g->nodes[node], in, 2, &loss, 1);
	g->nodes[node].opset = 13;
	g->tensors[loss].producer = node;
	return AR_OK;
}

static int check_loss_output(const ArGraph *fwd, ArError *err)
{
	const ArTensor *y;
	if (fwd->noutputs < 1)
		return ar_fail(err, AR_EXIT_MODEL, "--train: the model has no "
			       "output to attach the loss to");
	y = &fwd->tensors[fwd->outputs[0]];
	if (!ar_train_is_float(y->dtype) || y->bytes < 0 || y->producer < 0)
		return ar_fail(err, AR_EXIT_MODEL, "--train: the loss needs a "
			       "computed float output, and output '%s' is %s%s",
			       y->name, ar_dtype_name(y->dtype),
			       y->producer < 0 ? " and not computed" : "");
	return AR_OK;
}

/* Swaps nodes a and b of g, their outputs' producers with them. */
static void swap_nodes(ArGraph *g, int a, int b)
{
	ArNode t = g->nodes[a];
	g->nodes[a] = g->nodes[b];
	g->nodes[b] = t;
	for (int i = 0; i < 2; i++) {
		const ArNode *n = &g->nodes[i ? b : a];
		for (int j = 0; j < n->noutputs; j++)
			if (n->outputs[j] >= 0)
				g->tensors[n->outputs[j]].producer = i ? b : a;
	}
}

/* --loss-dtype fp32 on 16-bit scores: the loss reads their fp32 copy, a
 * forward node before it (order[]'s entry -1: no node of the model).
 * Before the attached loss exists, or before the model's own. */
static int upcast(ArTrainModel *m, int *order, ArError *err)
{
	ArGraph *g = m->base;
	int s = m->logits, c;
	ArDType dt = ar_precision_final(m->spec.precision, g->tensors[s].dtype);
	const ArNode *own = m->own_loss ? &g->nodes[m->nfwd] : NULL;

	if (ar_train_loss_format(&m->spec, dt) == dt ||
	    (own && (own->domain[0] ||
		     strcmp(own->op, "SoftmaxCrossEntropyLoss"))))
		return AR_OK;
	if ((c = ar_add_cast(g, s, AR_DT_FLOAT, "loss", err)) < 0)
		return err->code ? err->code : AR_EXIT_MODEL;
	m->loss_upcast = true;
	m->logits = c;
	if (m->own_loss) {
		swap_nodes(g, m->nfwd, m->nfwd + 1);
		g->nodes[m->nfwd + 1].inputs[0] = c;
		order[m->nfwd + 1] = order[m->nfwd];
	} else {
		g->tensors[s].kind = AR_TK_ACTIVATION;
	}
	order[m->nfwd++] = -1;
	return AR_OK;
}

int ar_train_loss(ArTrainModel *m, const ArGraph *fwd, int **order,
		     ArError *err)
{
	int own = own_loss(fwd), k = 0, rc;
	*order = ar_xmalloc(((size_t)fwd->nnodes + 2) * sizeof(int));
	for (int i = 0; i < fwd->nnodes; i++)
		if (i != own)
			(*order)[k++] = i;
	if (own >= 0)
		(*order)[k] = own;
	m->base = ar_train_copy(fwd, *order);
	m->own_loss = own >= 0;
	m->nfwd = own >= 0 ? fwd->nnodes - 1 : fwd->nnodes;
	if (own >= 0) {
		const ArNode *n = &m->base->nodes[m->nfwd];
		if (m->spec.loss_chunks > 1)
			return ar_fail(err, AR_EXIT_USAGE, "--loss-chunk plans "
				       "the loss arenac attaches, and this "
				       "model computes its own ('%s')",
				       n->name);
		m->logits = n->inputs[0];
		return upcast(m, *order, err);
	}
	if ((rc = check_loss_output(fwd, err)))
		return rc;
	m->logits = fwd->outputs[0];
	if ((rc = upcast(m, *order, err)))
		return rc;
	(*order)[m->nfwd] = -1;         /* the attached loss */
	return attach_loss(m, err);
}

/*
 * --loss-chunk: the logits must come from a product by a weight (a
 * language model's head, MatMul or Gemm, views after it), whose rows the
 * chunks split.  The head and its views then run inside the loss's chunks
 * (their nodes stay in base, read by nobody, and step.c leaves them out);
 * the loss node becomes LinearCrossEntropy(x, W, label): the product and
 * the cross-entropy as one op, whose gradient reads x, W and the labels.
 */
/* Node h of g is a Cast (amp's casts, autocast.c): the chunks compute
 * the head's product and then its cast, chunk by chunk. */
static bool is_cast(const ArGraph *g, int h)
{
	return !strcmp(g->nodes[h].op, "Cast") && !g->nodes[h].domain[0];
}

/* Tensor w is a weight: a parameter, or amp's cached cast of one. */
static bool weight(const ArTrainModel *m, int w)
{
	const ArGraph *g = m->base;
	int p = w >= 0 ? g->tensors[w].producer : -1;
	if (p >= 0 && is_cast(g, p))
		w = g->nodes[p].inputs[0];
	return w >= 0 && (m->param[w] || m->frozen[w]);
}

int ar_train_chunk_loss(ArTrainModel *m, ArError *err)
{
	ArGraph *g = m->base;
	const ArTensor *y = &g->tensors[m->logits];
	ArNode *loss = &g->nodes[m->nfwd];
	int h = y->producer, in[3], out[2];
	const ArOpDef *d;

	while (h >= 0 && (d = ar_op_of(&g->nodes[h])) &&
	       ((d->alias == AR_ALIAS_VIEW && !d->view_when) ||
		is_cast(g, h)) &&
	       g->nodes[h].nexplicit >= 1 && g->nodes[h].inputs[0] >= 0)
		h = g->tensors[g->nodes[h].inputs[0]].producer;
	d = h >= 0 ? ar_op_of(&g->nodes[h]) : NULL;
	if (!d || !d->grad || d->grad->cost != 2 ||
	    g->nodes[h].nexplicit != 2 || y->rank < 2 ||
	    !ar_in_arena(g, g->nodes[h].inputs[0]) ||
	    !weight(m, g->nodes[h].inputs[1]))
		return ar_fail(err, AR_EXIT_MODEL, "--loss-chunk: the logits "
			       "'%s' must come from a MatMul or Gemm of an "
			       "activation by a weight (a language model's "
			       "head)", y->name);
	m->head = h;
	for (int p = y->producer; p != h;
	     p = g->tensors[g->nodes[p].inputs[0]].producer)
		m->in_loss[p] = true;
	m->in_loss[h] = true;
	m->classes = y->dims[y->rank - 1];
	m->rows = ar_numel(y) / m->classes;
	if (m->spec.loss_chunks > m->rows)
		return ar_fail(err, AR_EXIT_USAGE, "--loss-chunk %d: the logits "
			       "have only %lld rows", m->spec.loss_chunks,
			       (long long)m->rows);
	in[0] = g->nodes[h].inputs[0];
	in[1] = g->nodes[h].inputs[1];
	in[2] = loss->inputs[1];
	ar_node_set_op(g, loss, "LinearCrossEntropy", AR_TRAIN_DOMAIN);
	loss->opset = 1;
	/* The loss and its log-probabilities (train_outputs.c), which
	 * step.c's chunks make chunk by chunk. */
	out[0] = loss->outputs[0];
	out[1] = loss->noutputs > 1 ? loss->outputs[1] : -1;
	ar_node_set_io(loss, in, 3, out, out[1] >= 0 ? 2 : 1);
	return AR_OK;
}

