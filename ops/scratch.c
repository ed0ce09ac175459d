/*
 * scratch.c — the workspace a reference-runtime kernel needs besides its
 * operands, from the node's shapes and attributes: the sizes the op table
 * (table.c) names in .scratch.
 *
 * The planner gives each such step that many bytes of the arena for its
 * step alone (--scratch kernels), so the kernel needs no stack buffer of
 * a fixed bound and no allocation.  Only kernels that really keep values
 * outside their outputs have one: the recurrent layers run one
 * (direction, batch element) at a time through the sequence, holding its
 * hidden state, its cell state and one time step's gate pre-activations,
 * (gates + 2) x hidden_size elements of X's type.  Every other kernel of
 * the runtime works in locals (a convolution without im2col, a softmax
 * that normalises in its output), so it declares none.
 */
#include "ops.h"

static int64_t recurrent(const ArGraph *g, const ArNode *n, int64_t gates)
{
	int64_t hidden = ar_attr_int(n, "hidden_size", 0), elems, bytes;
	const ArTensor *x;

	if (n->ninputs < 1 || n->inputs[0] < 0 || hidden < 1)
		return 0;
	x = &g->tensors[n->inputs[0]];
	/* Past 2^63: the planner refuses it with the other totals. */
	if (!ar_mul64(gates + 2, hidden, &elems) ||
	    !ar_mul64(elems, (int64_t)ar_dtype_size(x->dtype), &bytes))
		return INT64_MAX;
	return bytes;
}

int64_t ar_scratch_rnn(const ArGraph *g, const ArNode *n)
{
	return recurrent(g, n, 1);
}

int64_t ar_scratch_gru(const ArGraph *g, const ArNode *n)
{
	return recurrent(g, n, 3);
}

int64_t ar_scratch_lstm(const ArGraph *g, const ArNode *n)
{
	return recurrent(g, n, 4);
}
