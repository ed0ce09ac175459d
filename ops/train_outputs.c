/*
 * train_outputs.c — outputs a training step materialises for an op's
 * backward pass, as the op table's train_outputs name them.
 *
 * Inference may leave them out, training needs them: Dropout's mask (bool,
 * one byte an element, shaped like Y, even where an old opset types it
 * like Y), LayerNormalization's per-row mean
 * and inverse standard deviation (outputs 1 and 2, in stash_type,
 * float32 by default, shaped like X with the normalised axes 1), and
 * BatchNormalization's batch mean and inverse standard deviation (float32,
 * one per channel, in outputs 3 and 4: the saved_mean and saved_var of
 * BatchNormalization-9, where ONNX kept exactly these; training always runs
 * BatchNormalization in training mode, as the running statistics are no
 * gradient's business).  These are what PyTorch saves too (native_dropout's
 * mask, native_layer_norm's mean and rstd, native_batch_norm's save_mean
 * and save_invstd), so the training bill counts them as it does; and
 * arenac.FlashAttention's fp32 log-sum-exp per query row (output 1, see
 * flash.c), what FlashAttention's forward returns for its backward; and
 * SoftmaxCrossEntropyLoss's log-probabilities (output 1, shaped like the
 * scores, in the format the loss computes in: loss.c), what PyTorch's
 * cross_entropy keeps (tools/autograd/derivatives.yaml, _log_softmax:
 * "self: _log_softmax_backward_data(grad, result, ...)", its result) and,
 * as the softmax, Megatron-LM's vocab-parallel cross-entropy
 * (_VocabParallelCrossEntropy.forward: ctx.save_for_backward(exp_logits,
 * ...)).  An
 * output the model already has keeps its tensor; one it lacks gets a new
 * tensor named after Y.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

/* Output j of node in g: the model's tensor, or a new one named after
 * output 0 with suffix; outputs before j the node lacks stay absent. */
static int output_slot(ArGraph *g, int node, int j, const char *suffix)
{
	ArNode *n = &g->nodes[node];
	char name[512];
	int t;

	if (j < n->noutputs && n->outputs[j] >= 0)
		return n->outputs[j];
	snprintf(name, sizeof name, "%s%s", g->tensors[n->outputs[0]].name,
		 suffix);
	while (ar_graph_find(g, name) >= 0 && strlen(name) + 7 < sizeof name)
		strcat(name, ".train");
	t = ar_graph_add_tensor(g, name);
	n = &g->nodes[node];
	if (j >= n->noutputs) {
		n->outputs = ar_xrealloc(n->outputs, (size_t)(j + 1) *
					 sizeof(int));
		for (int k = n->noutputs; k < j; k++)
			n->outputs[k] = -1;
		n->noutputs = j + 1;
	}
	n->outputs[j] = t;
	g->tensors[t].kind = AR_TK_ACTIVATION;
	g->tensors[t].producer = node;
	return t;
}

/* Gives output j its type and shape unless inference already did. */
static int set_output(ArGraph *g, int node, int j, const char *suffix,
		      ArDType dt, int rank, const int64_t *dims, ArError *err)
{
	int id = output_slot(g, node, j, suffix);
	ArTensor *t = &g->tensors[id];
	if (t->rank >= 0 && t->bytes >= 0)
		return AR_OK;
	t->dtype = dt;
	t->rank = rank;
	memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
	return ar_tensor_set_bytes(t, err);
}

static const ArTensor *output0(const ArGraph *g, int node)
{
	const ArNode *n = &g->nodes[node];
	return n->noutputs && n->outputs[0] >= 0 ? &g->tensors[n->outputs[0]]
						 : NULL;
}

static const ArTensor *input0(const ArGraph *g, int node)
{
	const ArNode *n = &g->nodes[node];
	return n->ninputs && n->inputs[0] >= 0 ? &g->tensors[n->inputs[0]]
					       : NULL;
}

/* Output 1 of node shaped like *like, in format dt even where the model
 * types it otherwise. */
static int output1_like(ArGraph *g, int node, const ArTensor *like,
			const char *suffix, ArDType dt, ArError *err)
{
	int64_t dims[AR_MAX_RANK];
	int rank = like->rank, rc;
	ArTensor *t;
	/* A new output moves the tensors: copy the shape first. */
	memcpy(dims, like->dims, sizeof dims);
	if ((rc = set_output(g, node, 1, suffix, dt, rank, dims, err)))
		return rc;
	t = &g->tensors[g->nodes[node].outputs[1]];
	if (t->dtype == dt)
		return AR_OK;
	t->dtype = dt;
	return ar_tensor_set_bytes(t, err);
}

/* Dropout before opset 10 types its mask like Y; a training kernel
 * writes bits, one byte each, whatever the opset. */
int ar_train_out_mask(const ArNode *attrs, ArGraph *g, int node,
		      ArError *err)
{
	const ArTensor *y = output0(g, node);
	if (!y || y->rank < 0)
		return AR_OK;
	return output1_like(g, node, y, ".mask", AR_DT_BOOL, err);
}

int ar_train_out_layernorm(const ArNode *attrs, ArGraph *g, int node,
			   ArError *err)
{
	const ArTensor *x = input0(g, node);
	int64_t axis = ar_attr_int(attrs, "axis", -1), dims[AR_MAX_RANK];
	ArDType stash = (ArDType)ar_attr_int(attrs, "stash_type",
						    AR_DT_FLOAT);
	int rc, rank;

	if (!x || x->rank < 0 || !output0(g, node))
		return AR_OK;
	rank = x->rank;
	if (axis < 0)
		axis += rank;
	for (int i = 0; i < rank; i++)
		dims[i] = i < axis ? x->dims[i] : 1;
	if ((rc = set_output(g, node, 1, ".mean", stash, rank, dims, err)))
		return rc;
	return set_output(g, node, 2, ".inv_std", stash, rank, dims, err);
}

int ar_train_out_batchnorm(const ArNode *attrs, ArGraph *g, int node,
			   ArError *err)
{
	const ArTensor *x = input0(g, node);
	int64_t c[1];
	int rc;

	if (!x || x->rank < 2 || !output0(g, node))
		return AR_OK;
	c[0] = x->dims[1];
	if ((rc = set_output(g, node, 3, ".batch_mean", AR_DT_FLOAT, 1, c,
			     err)))
		return rc;
	return set_output(g, node, 4, ".batch_inv_std", AR_DT_FLOAT, 1, c,
			  err);
}

int ar_train_out_flash(const ArNode *attrs, ArGraph *g, int node,
		       ArError *err)
{
	const ArTensor *q = input0(g, node);
	int64_t dims[AR_MAX_RANK];
	int rank;
	if (!q || q->rank < 2 || !output0(g, node))
		return AR_OK;
	rank = ar_flash_lse_shape(q, ar_attr_int(attrs, "lse_align", 1), dims);
	/* The training graph's copy of the node names its kernel, which its
	 * gradient step carries (ArGradRule.attrs) for its workspace. */
	if (attrs != &g->nodes[node] && !ar_attr(&g->nodes[node], "kernel"))
		ar_node_add_attr(g, &g->nodes[node], "kernel", AR_ATTR_INT)->i =
			ar_attr_int(attrs, "kernel", AR_FLASH_FA2);
	return set_output(g, node, 1, ".lse", AR_DT_FLOAT, rank, dims, err);
}

/* The kernel writes them in the format it computes in, its scores' (a
 * model's own output may be typed otherwise). */
int ar_train_out_log_prob(const ArNode *attrs, ArGraph *g, int node,
			  ArError *err)
{
	const ArTensor *x = input0(g, node);
	if (!x || x->rank < 1 || !output0(g, node))
		return AR_OK;
	return output1_like(g, node, x, ".log_prob", x->dtype, err);
}
