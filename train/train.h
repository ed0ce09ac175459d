/*
 * train.h — the training stage: one training step (forward, loss,
 * backward, update) as a graph.
 *
 * The stage sits between the frontend and the planner.  It reads the
 * inferred forward graph and builds, through the IR alone, the graph of a
 * training step for a given selection of resident activations, so the
 * ordinary pipeline (ar_plan: lifetimes, offsets, verifier; ar_poison_run)
 * plans and checks it unchanged.  Which selection to build is the
 * planner's choice (planner/checkpoint.h).  What lives where:
 *   - in the arena (planned): graph inputs, the label, activations,
 *     activation gradients, recomputed activations, partial gradients;
 *   - persistent, outside the arena (kind AR_TK_WEIGHT, reported in the
 *     bill): parameters, their gradients, optimizer state, and the updated
 *     parameters ("W.next", written in place of W by the update step).
 *
 * Checkpointing: a forward activation that some backward step reads
 * ("saved") either stays resident from the forward pass (a checkpoint) or
 * is freed after its last forward use and recomputed, from the nearest
 * resident tensors, right before the first backward step that needs it.
 */
#ifndef ARENAC_TRAIN_H
#define ARENAC_TRAIN_H

#include "graph.h"
#include "ops.h"

typedef enum { AR_OPTIM_SGD, AR_OPTIM_MOMENTUM, AR_OPTIM_ADAM } ArOptimizer;

/*
 * The forward graph prepared for training (train.c): the loss attached to
 * the first output, Dropout masks materialised, and per tensor what the
 * backward pass needs.  Tensor and node ids are those of base.
 */
typedef struct ArTrainModel {
	ArGraph *base;          /* forward + loss, no attributes */
	ArOptimizer optimizer;
	int loss_in;            /* the output the loss reads */
	int nfwd;               /* forward nodes of base (the loss excluded) */
	const ArGradRule **rule;/* per base node with a backward step, else NULL */
	bool *param;            /* per tensor: a trained parameter */
	bool *grad;             /* per tensor: its gradient is computed */
	bool *saved;            /* per tensor: a backward step reads it */
	int *ncontrib;          /* per tensor: gradient contributions to sum */
	int *cand;              /* checkpoint candidates, in production order */
	int ncand;
	int64_t *flops;         /* per base node */
	int64_t forward_flops, backward_flops;
	int64_t parameter_bytes, state_bytes;
} ArTrainModel;

int ar_train_model(const ArGraph *fwd, ArOptimizer opt, ArTrainModel **out,
		   ArError *err);
void ar_train_model_free(ArTrainModel *m);

/*
 * resident: per base tensor, true for activations that stay resident (NULL:
 * all of them).  The FLOPs of the forward nodes the graph below re-runs.
 */
int64_t ar_train_recompute_flops(const ArTrainModel *m, const bool *resident);
/* The training-step graph for that selection; its node order is the step
 * order to plan it in (AR_ORDER_FILE). */
ArGraph *ar_train_graph(const ArTrainModel *m, const bool *resident);
/* The same graph, traced for the checkpoint search: *node_src gets per node
 * the base node it stems from (a recompute: the node it re-runs; a
 * backward step or gradient sum: the node whose gradient it is; the loss
 * gradient: the loss node; an update: -1), *tensor_src per tensor the base
 * tensor it is, copies, or is the gradient or optimizer state of.  The
 * caller frees both. */
ArGraph *ar_train_graph_traced(const ArTrainModel *m, const bool *resident,
			       int **node_src, int **tensor_src);

const char *ar_optimizer_name(ArOptimizer o);

#endif
