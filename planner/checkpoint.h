/*
 * checkpoint.h — checkpoint selection: which forward activations of a
 * training step stay resident and which are recomputed, judged by
 * planning the step graphs the training stage (train/train.h) builds.
 */
#ifndef ARENAC_CHECKPOINT_H
#define ARENAC_CHECKPOINT_H

#include "plan.h"
#include "train.h"

/*
 *   none     every forward activation stays resident: no recompute;
 *   all      checkpoint every layer boundary: the activations read by a
 *            node with parameters (Conv, Gemm, ...) stay, everything inside
 *            a layer is recomputed;
 *   sqrt     Chen et al. 2016: every ceil(sqrt(n))-th candidate stays;
 *   optimal  least recompute FLOPs whose arena fits the budget;
 *   layer    Megatron's full recomputation: each layer's input stays,
 *            the layer is recomputed (ckpt_layers.c);
 *   selective  Megatron's selective recomputation: only the attention
 *            core is recomputed (ckpt_layers.c).
 */
typedef enum {
	AR_CKPT_NONE, AR_CKPT_ALL, AR_CKPT_SQRT, AR_CKPT_OPTIMAL,
	AR_CKPT_LAYER, AR_CKPT_SELECTIVE
} ArCkptPolicy;

/*
 * The memory bill of a planned training step: the persistent parts
 * (train.h's ArTrainMemory: together the step graph's weights_bytes) and
 * the arena, which holds the logits and their gradient among the rest.
 */
typedef struct ArTrainBill {
	const char *optimizer;
	const char *precision;
	const char *policy;
	int64_t parameter_count;        /* trained parameters, elements */
	int64_t parameter_bytes;        /* persistent */
	int64_t gradient_bytes;         /* persistent, = parameters */
	int64_t master_weight_bytes;    /* persistent, fp32 (mixed) */
	int64_t optimizer_state_bytes;  /* momentum 1x, adam 2x parameters */
	int64_t frozen_bytes;           /* persistent, frozen parameters */
	int64_t constant_bytes;         /* persistent, other constants */
	int64_t arena_bytes;            /* the planned arena */
	int64_t logits_bytes;           /* in the arena (per chunk) */
	int64_t logits_grad_bytes;
	int loss_chunks;                /* 1: the loss in one piece */
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

/* The optimal search plans each selection it judges with this many
 * effort levels less than the user's (a 64th of the offset search). */
#define AR_CKPT_EVAL_DROP 3

typedef struct ArTrainOptions {
	ArTrainSpec spec;       /* what to train, optimizer, precision */
	ArCkptPolicy policy;
	int64_t budget;         /* arena bytes, 0 for none */
	/* For every ar_plan call (its budget is ignored); its effort and
	 * time limit bound the selection search too. */
	ArPlanOptions plan;
	/* --layer-boundary: the layers' inputs (an expression on tensor
	 * names) for the layer policy; NULL: found as repeated blocks. */
	const char *layer_boundary;
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
	bool stopped_by_time_limit; /* --time-limit cut the search short */
} ArSweepPoint;

/* The optimal policy at budgets from the no-recompute arena downwards
 * (steps of 10% of it), ending at the first budget nothing fits. */
int ar_train_sweep(const ArGraph *fwd, const ArTrainOptions *o,
		   ArSweepPoint **pts, int *npts, ArError *err);

/*
 * The chain view of a training model for the dynamic program of
 * chain_dp.c (its header comment gives the model).  ar_chain_build
 * measures every segment, with ar_plan under plan's alias options, within
 * the work budget (nodes of the step graphs it plans); *out stays NULL
 * when the forward graph has no point that separates it, or when the
 * probes would cost more than the budget has (known before the first).
 */
typedef struct ArChain ArChain;
int ar_chain_build(const ArTrainModel *m, const ArPlanOptions *plan,
		   ArBudget *work, ArChain **out, ArError *err);
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

const char *ar_ckpt_policy_name(ArCkptPolicy p);

/*
 * The resident set of a fixed policy, layer or selective (ckpt_layers.c),
 * into res (per base tensor); boundary as ArTrainOptions.layer_boundary.
 * AR_EXIT_MODEL when the model has no layers or no attention core.
 */
int ar_ckpt_fixed(const ArTrainModel *m, ArCkptPolicy pol,
		  const char *boundary, bool *res, ArError *err);

#endif
