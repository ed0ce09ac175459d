/*
 * train.h — planning one training step: forward, loss, backward, update.
 *
 * The training step is just another ArGraph, built from the inferred
 * forward graph, so the ordinary pipeline (ar_plan: lifetimes, offsets,
 * verifier; ar_poison_run) plans and checks it unchanged.  What lives where:
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
#include "plan.h"

typedef enum { AR_OPTIM_SGD, AR_OPTIM_MOMENTUM, AR_OPTIM_ADAM } ArOptimizer;

/*
 *   none     every forward activation stays resident: no recompute;
 *   all      checkpoint every layer boundary: the activations read by a
 *            node with parameters (Conv, Gemm, ...) stay, everything inside
 *            a layer is recomputed;
 *   sqrt     Chen et al. 2016: every ceil(sqrt(n))-th candidate stays;
 *   optimal  least recompute FLOPs whose arena fits the budget.
 */
typedef enum {
	AR_CKPT_NONE, AR_CKPT_ALL, AR_CKPT_SQRT, AR_CKPT_OPTIMAL
} ArCkptPolicy;

/* Per-op gradient rule (grad_rules.c).  Bit i of a mask is input/output i. */
typedef struct ArGradRule {
	const char *op;
	uint32_t diff;      /* inputs that can receive a gradient */
	uint32_t save_in;   /* inputs the gradient step always reads */
	uint32_t save_out;  /* outputs the gradient step reads */
	/* Bilinear (Conv, Gemm, MatMul, Mul): the gradient of input 0 reads
	 * input 1 and the gradient of input 1 reads input 0. */
	bool cross;
} ArGradRule;

/* NULL when the op has no rule. */
const ArGradRule *ar_grad_rule(const char *op);

/* FLOPs of one node of an inferred graph, from its shapes (flops.c). */
int64_t ar_node_flops(const ArGraph *g, const ArNode *n);

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

/* The memory bill of a planned training step. */
typedef struct ArTrainBill {
	const char *optimizer;
	const char *policy;
	int64_t parameter_bytes;        /* persistent */
	int64_t gradient_bytes;         /* persistent, = parameters */
	int64_t optimizer_state_bytes;  /* momentum 1x, adam 2x parameters */
	int64_t arena_bytes;            /* the planned arena */
	int64_t total_bytes;
	int64_t forward_flops, backward_flops, recompute_flops;
	int ncheckpoints;
	const char **checkpoints;       /* names of resident activations */
	int ncandidates;
	/* The arena size of each search candidate came from ar_plan (a real
	 * plan); exact: the selection is proven to need the least recompute. */
	bool exact;
	int evaluations;                /* ar_plan calls made by the search */
} ArTrainBill;

typedef struct ArTrainOptions {
	ArOptimizer optimizer;
	ArCkptPolicy policy;
	int64_t budget;         /* arena bytes, 0 for none */
	double time_limit;      /* seconds for the selection search */
	ArPlanOptions plan;     /* for every ar_plan call (budget is ignored) */
} ArTrainOptions;

typedef struct ArTrainResult {
	ArTrainModel *model;
	ArGraph *graph;         /* the training step */
	ArPlan *plan;
	bool *resident;         /* per base tensor */
	ArTrainBill bill;
	/* With AR_EXIT_BUDGET: the smallest arena any selection reaches and
	 * its recompute FLOPs (also in err). */
	int64_t min_arena, min_arena_recompute;
} ArTrainResult;

/*
 * Builds the model, selects checkpoints, plans and verifies the step.
 * AR_EXIT_BUDGET when no selection the policy allows fits o->budget.
 */
int ar_train_plan(const ArGraph *fwd, const ArTrainOptions *o,
		  ArTrainResult *res, ArError *err);
void ar_train_result_free(ArTrainResult *res);

/* One point of the memory/recompute trade-off curve. */
typedef struct ArSweepPoint {
	int64_t budget;
	bool feasible;
	int64_t arena_bytes;
	int64_t recompute_flops;
	double extra_percent;   /* recompute FLOPs in % of the forward pass */
	int ncheckpoints;
} ArSweepPoint;

/* The optimal policy at budgets from the no-recompute arena downwards
 * (steps of 10% of it), ending at the first budget nothing fits. */
int ar_train_sweep(const ArGraph *fwd, const ArTrainOptions *o,
		   ArSweepPoint **pts, int *npts, ArError *err);

/*
 * The chain view of a training model for the dynamic program of
 * chain_dp.c (its header comment gives the model).  ar_chain_build
 * measures every segment, with ar_plan under plan's alias options, within
 * seconds; *out stays NULL when the forward graph has no point that
 * separates it or the seconds ran out (it gives up at once when the probes
 * made so far project to more than twice those seconds).
 */
typedef struct ArChain ArChain;
int ar_chain_build(const ArTrainModel *m, const ArPlanOptions *plan,
		   double seconds, ArChain **out, ArError *err);
void ar_chain_free(ArChain *c);
/* Every candidate is a point: the DP ranges over all selections. */
bool ar_chain_pure(const ArChain *c);
int ar_chain_points(const ArChain *c);
int ar_chain_probes(const ArChain *c);
/* The least-recompute selection whose model peak fits budget, into res
 * (per base tensor); returns its recompute FLOPs and sets *peak to its
 * model peak, or returns -1 when none fits the model. */
int64_t ar_chain_solve(const ArChain *c, int64_t budget, bool *res,
		       int64_t *peak);
/* The smallest model peak of any selection, the cheapest such into res. */
int64_t ar_chain_min_peak(const ArChain *c, bool *res);

/* Monotonic seconds, for the searches' deadlines. */
double ar_train_now(void);

const char *ar_optimizer_name(ArOptimizer o);
const char *ar_ckpt_policy_name(ArCkptPolicy p);

#endif
