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
 *   layer    Megatron's full recomputation: each layer's input stays,
 *            the layer is recomputed (ckpt_layers.c);
 *   selective  Megatron's selective recomputation: only the attention
 *            core is recomputed (ckpt_layers.c);
 *   optimal  the least recompute FLOPs whose arena fits the budget, never
 *            more than any fixed policy (the others, layer and selective
 *            where the model has layers) that fits, never more at a
 *            larger budget; without a budget, the smallest arena any
 *            selection reaches, at its least recompute.
 * A node's statistics and masks stay exactly when its first output does
 * (train.h), under every policy.
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
	int64_t optimizer_state_bytes;  /* on the device (optimizers.c) */
	int64_t host_state_bytes;       /* a paged optimizer's, host memory */
	/* The formats of the largest trained parameter's gradient, master
	 * copy ("none") and optimizer moments ("none" for SGD). */
	const char *gradient_dtype, *master_dtype, *state_dtype;
	int64_t frozen_bytes;           /* persistent, frozen parameters */
	int64_t frozen_count;           /* their elements */
	int64_t quant_base_bytes;       /* persistent, --base-quant weights */
	/* --lora: rank (0: none), alpha, adapted linears, adapter elements
	 * (all of them trained, in parameter_count). */
	int64_t lora_rank, adapter_parameters;
	double lora_alpha;
	int adapted_linears;
	int64_t constant_bytes;         /* persistent, other constants */
	int64_t arena_bytes;            /* the planned arena */
	int64_t logits_bytes;           /* in the arena (per chunk) */
	int64_t logits_grad_bytes;
	/* In the arena (per chunk): the log-probabilities the loss keeps for
	 * its backward, in loss_dtype ("none": a loss keeping none). */
	int64_t loss_kept_bytes;
	const char *loss_dtype;
	int64_t autocast_copy_bytes;    /* in the arena (amp): 16-bit copies
					 * of the weights autocast caches */
	int loss_chunks;                /* 1: the loss in one piece */
	int64_t total_bytes;
	/* What one device holds: persistent state + the arena's part on the
	 * device + reserve; checked against device_bytes (0: no bound). */
	int64_t device_bytes, reserve_bytes, device_total_bytes;
	int64_t headroom_bytes;         /* device_bytes - device_total_bytes */
	const char *device_name;        /* NULL: --budget */
	int64_t max_batch;              /* --max-batch's answer, 0: none */
	int64_t max_seq;                /* --max-dim's answer, 0: none, */
	const char *max_seq_dim;        /* and the dim it searched */
	/* --grad-accum: micro-batches a step, and the step's FLOPs (the
	 * micro-batch's forward, backward and recompute, that many times) */
	int grad_accum;
	int64_t step_flops;
	/* --allocator caching: the simulated peaks (0: static) */
	int64_t cache_allocated_bytes, cache_reserved_bytes;
	int64_t forward_flops, backward_flops, recompute_flops;
	int ncheckpoints;
	const char **checkpoints;       /* names of resident activations */
	int ncandidates;
	/* The arena size of each search candidate came from ar_plan (a real
	 * plan); exact: the selection is proven to need the least recompute
	 * (no recompute at all, brute force, or the chain's dynamic program
	 * over every selection whose model held at its answer). */
	bool exact;
	int evaluations;                /* selections planned by the search */
} ArTrainBill;

/* The bill's persistent parts, named as the outputs show them (--trace's
 * counters, the timeline's device memory), zero ones too; returns how many
 * (AR_BILL_NPARTS). */
#define AR_BILL_NPARTS 7
typedef struct ArBillPart {
	const char *name;
	int64_t bytes;
} ArBillPart;
int ar_train_bill_parts(const ArTrainBill *b, ArBillPart *part);

/* The optimal search plans each selection it judges with this many
 * effort levels less than the user's (a 64th of the offset search). */
#define AR_CKPT_EVAL_DROP 3

typedef struct ArTrainOptions {
	ArTrainSpec spec;       /* what to train, optimizer, precision */
	ArCkptPolicy policy;
	int64_t budget;         /* arena bytes, 0 for none */
	/*
	 * The whole device, 0 for no bound: the persistent state, the arena
	 * (its part in the first memory, with tiers) and reserve together
	 * must fit (ar_train_plan), or the step is AR_EXIT_BUDGET.
	 * device_name: the --memory it is, NULL for --budget.
	 */
	int64_t device_bytes;
	const char *device_name;
	int64_t reserve;        /* --reserve: held by what is not the step */
	/* --allocator caching: the device holds what PyTorch's caching
	 * allocator reserves for the planned step (caching.c), not the plan's
	 * ideal sum. */
	bool allocator_caching;
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
	/* With AR_EXIT_BUDGET: the smallest arena any selection the search
	 * knows reaches and its least recompute FLOPs (also in err), the
	 * same whatever the budget; for a fixed policy, its own arena. */
	int64_t min_arena, min_arena_recompute;
	int64_t policy_arena;
} ArTrainResult;

/*
 * Builds the model, selects checkpoints, plans and verifies the step.
 * AR_EXIT_BUDGET when no selection the policy allows fits o->budget.
 * optimal without a budget: the smallest arena the search reaches.
 */
int ar_train_plan(const ArGraph *fwd, const ArTrainOptions *o,
		  ArTrainResult *res, ArError *err);
void ar_train_result_free(ArTrainResult *res);

/* One point of the memory/recompute trade-off curve. */
typedef struct ArSweepPoint {
	int64_t budget;
	bool feasible;
	bool smallest;          /* the smallest reachable arena's row */
	int64_t arena_bytes;
	int64_t recompute_flops;
	double extra_percent;   /* recompute FLOPs in % of the forward pass */
	int ncheckpoints;
	bool stopped_by_time_limit; /* --time-limit cut the search short */
} ArSweepPoint;

/* optimal at eleven budgets from the no-recompute arena down to
 * o->budget (without one: the smallest reachable arena), evenly, the
 * recompute never rising as the budget grows, and a last row with the
 * smallest reachable arena when the budgets go below it. */
int ar_train_sweep(const ArGraph *fwd, const ArTrainOptions *o,
		   ArSweepPoint **pts, int *npts, ArError *err);

/*
 * The chain view of a training model (chain.h) for the dynamic program
 * of chain_dp.c: ar_chain_build finds its points and units, gives each
 * unit its options and measures the segments with ar_plan under plan's
 * alias options, within the work budget (nodes of the step graphs it
 * plans); *out stays NULL when the work ran out before the options were
 * measured.
 */
typedef struct ArChain ArChain;
int ar_chain_build(const ArTrainModel *m, const ArPlanOptions *plan,
		   ArBudget *work, ArChain **out, ArError *err);
void ar_chain_free(ArChain *c);
/* The measured entries cover every selection: the program's optimum is
 * the optimum over all of them (when its model holds). */
bool ar_chain_complete(const ArChain *c);
int ar_chain_points(const ArChain *c);
int ar_chain_probes(const ArChain *c);
/* The points of the chain's memory / recompute curve (chain_dp.c), the
 * same for every budget: by model peak, smallest first, each cheaper than
 * the one before. */
int ar_chain_npoints(const ArChain *c);
/* Point k's selection into res (per base tensor); returns its recompute
 * FLOPs, *peak its model peak. */
int64_t ar_chain_point(const ArChain *c, int k, bool *res, int64_t *peak);
/* A selection of the smallest model peak, likewise. */
int64_t ar_chain_smallest(const ArChain *c, bool *res, int64_t *peak);

const char *ar_ckpt_policy_name(ArCkptPolicy p);

#endif
