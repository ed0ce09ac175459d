/*
 * parallel.h — one device's forward graph under Megatron-LM's tensor
 * parallelism (Shoeybi et al. 2019) and sequence parallelism (Korthikanti
 * et al. 2022), built from the model's graph (tp_roles.c decides who is
 * split, tp_build.c builds the graph).
 *
 * Found in the real graph, not assumed:
 *   - a column-parallel linear is a product of an activation that every
 *     device holds by a 2-D weight (MatMul, Gemm): the weight's output
 *     axis is split, so is its output;
 *   - the steps reading split activations (the attention core, GELU,
 *     SwiGLU) run on each device's share, their weights (biases) split
 *     alike;
 *   - a row-parallel linear reads a split activation along the axis its
 *     product sums over: the weight's input axis is split and each device
 *     holds a partial sum, added by an all-reduce (with sequence
 *     parallelism a reduce-scatter along the sequence);
 *   - a token embedding (a Gather from a 2-D weight by integer
 *     activations) is vocabulary-parallel: rows split, partial sums
 *     all-reduced; a head whose split output is the model's output (the
 *     logits, views after the product only) is vocabulary-parallel too,
 *     and the loss runs on each device's share of the vocabulary;
 *   - with sequence parallelism everything else from the embeddings'
 *     sum (the input of the first layer, back through steps that read it
 *     alone) to the head runs on each device's share of the sequence
 *     (axis 1 of activations of rank 3 or more, else axis 0): a Shard at
 *     the start, an AllGather before each column-parallel linear (its
 *     output gathered again for the backward pass, never stored:
 *     AR_OP_RECOMPUTED), a ReduceScatter after each row-parallel one.
 * A split axis that t does not divide is rounded up (padded, as
 * Megatron-LM pads the vocabulary); shapes are then derived by the op
 * table's shape functions, and a view's constant target is rewritten to
 * match.  A model whose split does not fit its shapes is refused, naming
 * the step.
 */
#ifndef ARENAC_PARALLEL_H
#define ARENAC_PARALLEL_H

#include "graph.h"

typedef struct ArTpSpec {
	int tp;                 /* devices sharing each layer, >= 1 */
	bool sp;                /* sequence parallelism (tp > 1) */
	/* The layers (for sequence parallelism's start), as
	 * --layer-boundary gives them; NULL: found as repeated blocks. */
	const char *layer_boundary;
} ArTpSpec;

/*
 * What one node of a device's graph sends: the collective it is (or, for
 * a column-parallel linear reading a whole activation, the all-reduce of
 * its input's gradient), as ring passes over the whole tensor (output 0
 * when `out`, else input 0), in its forward step and in its backward
 * step.  An all-reduce is 2 passes, an all-gather or reduce-scatter 1;
 * each pass sends (t - 1) / t of the tensor (ar_tp_sent).  Counted so,
 * not in bytes, because the step's precision sizes the tensor.
 */
typedef struct ArTpComm {
	unsigned char fwd, bwd;
	bool out;
} ArTpComm;

static inline int64_t ar_tp_sent(int64_t bytes, int passes, int t)
{
	return t > 1 ? bytes / t * passes * (t - 1) : 0;
}

typedef struct ArTpGraph {
	ArGraph *g;             /* one device's forward graph */
	ArTpComm *comm;         /* per node of g */
	int ncolumn, nrow, nembed;      /* linears and embeddings split */
} ArTpGraph;

/*
 * Builds one device's forward graph of fwd (an inferred graph) under
 * spec.  AR_EXIT_MODEL when the model cannot be split as asked (a shape
 * that does not divide, no layers for sequence parallelism, a subgraph),
 * naming the step.
 */
int ar_tp_graph(const ArGraph *fwd, const ArTpSpec *spec, ArTpGraph *out,
		ArError *err);
void ar_tp_graph_free(ArTpGraph *t);

/* Who is split (tp_roles.c), per node of the model's graph. */
typedef enum {
	AR_TP_NONE,             /* every device runs it whole */
	AR_TP_COLUMN,           /* a column-parallel linear */
	AR_TP_ROW,              /* a row-parallel linear */
	AR_TP_EMBED,            /* a vocabulary-parallel embedding */
	AR_TP_REGION            /* runs on split activations */
} ArTpRole;

typedef struct ArTpRoles {
	ArTpRole *role;         /* per node */
	int *axis;              /* per tensor: a weight's split axis, or -1 */
} ArTpRoles;

/* Roles of g's nodes (its linears' weights probed with their shape
 * functions on a copy of its tensors). */
int ar_tp_roles(const ArGraph *g, ArTpRoles *r, ArError *err);
void ar_tp_roles_free(ArTpRoles *r);

/* Whether t is a weight a product may be split along: a float constant
 * of rank 1 or more (not in the arena). */
bool ar_tp_weight(const ArGraph *g, int t);

#endif
