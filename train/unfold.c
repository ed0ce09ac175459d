/*
 * unfold.c — each weight reaches compute in its own shape.
 *
 * Folding evaluates an op whose inputs are all constants (frontend/fold.c),
 * so a weight the model reads through an expand, a slice or an index
 * arrives at compute as a constant of another size: ViT's
 * cls_token.expand(B, -1, -1) as a [B, 1, d] constant, pos_embed[:, :T]
 * of a longer table as [1, T, d], a position table gathered at Range(0,
 * T).  Trained as it stands, that constant would be the parameter: one
 * that grows with the batch, or a table whose other rows are missing from
 * the bill.  torch trains the weight itself, its gradient reduced back to
 * its shape (ExpandBackward: sum_to_size) or scattered (SliceBackward,
 * IndexBackward: a zero-filled gradient of the weight's shape,
 * derivatives.yaml's slice_backward and index_select_backward).
 *
 * So the copy made here computes such a constant as a step, from the
 * weight, and every constant folded from it after; the weight is then a
 * parameter read at a differentiable input (params.c), its gradient the
 * op's rule's.  A move that keeps the element count (Transpose, Reshape,
 * a Concat of one) stays folded: that constant is the weight in another
 * layout, as params.c trains it.  Only float weights count; integer and
 * bool constants (shapes, masks) are never parameters, nor are a
 * module's buffers (buffers.c), which stay folded.
 */
#include "train.h"

#include <stdlib.h>

#include "graph_copy.h"

/* Whether node n (all of whose outputs are constants) moves a weight into
 * a constant of another size, or reads a constant already unfolded. */
static bool unfolds(const ArGraph *g, const ArNode *n, const bool *act,
		    const bool *buffer, char *memo)
{
	const ArGradRule *r = ar_op_grad(n);
	for (int j = 0; j < n->nexplicit; j++) {
		int t = n->inputs[j];
		if (t < 0)
			continue;
		if (act[t])
			return true;
		if (!ar_grad_moves(r, j) || (buffer && buffer[t]) ||
		    !ar_train_holds_weights(g, t, memo))
			continue;
		for (int k = 0; k < n->noutputs; k++)
			if (n->outputs[k] >= 0 &&
			    ar_numel(&g->tensors[n->outputs[k]]) !=
			    ar_numel(&g->tensors[t]))
				return true;
	}
	return false;
}

int ar_train_unfold(const ArGraph *src, const bool *buffer, ArGraph **out,
		    ArError *err)
{
	bool *act = ar_xcalloc((size_t)src->ntensors + 1, sizeof *act);
	char *memo = ar_xcalloc((size_t)src->ntensors + 1, sizeof *memo);
	int n = 0, rc = AR_OK;
	ArGraph *g;

	*out = NULL;
	/* Nodes are in order: a constant is unfolded before its readers. */
	for (int i = 0; i < src->nnodes; i++) {
		const ArNode *nd = &src->nodes[i];
		if (ar_is_step(src, i) || !unfolds(src, nd, act, buffer, memo))
			continue;
		for (int k = 0; k < nd->noutputs; k++)
			if (nd->outputs[k] >= 0) {
				act[nd->outputs[k]] = true;
				n++;
			}
	}
	if (!n)
		goto done;
	g = ar_copy_tensors(src);
	for (int t = 0; t < src->ntensors; t++)
		if (act[t]) {
			ArTensor *x = &g->tensors[t];
			x->kind = AR_TK_ACTIVATION;
			free(x->data);
			x->data = NULL;
		}
	for (int i = 0; i < src->nnodes && !rc; i++)
		if (ar_copy_node(g, &src->nodes[i], src->nodes[i].inputs,
				 src->nodes[i].outputs, err) < 0)
			rc = err->code;
	if (rc)
		ar_graph_free(g);
	else
		*out = g;
done:
	free(act);
	free(memo);
	return rc;
}
