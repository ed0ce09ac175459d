/*
 * devices.h — one training step on many devices: what each device holds
 * under data parallelism with ZeRO (zero.c), Megatron-LM's tensor and
 * sequence parallelism (train/parallel.h), pipeline parallelism
 * (pipeline.c) and offload to a slower memory, planned from the real
 * graph (devices.c), and the search for configurations that fit (fit.c).
 *
 * Ranks are numbered as Megatron-LM numbers them: tensor-parallel rank
 * fastest, then data-parallel, then the pipeline stage:
 *   rank = (stage * dp + dp_rank) * tp + tp_rank.
 * The model's batch is the micro-batch: what one device runs at a time.
 */
#ifndef ARENAC_DEVICES_H
#define ARENAC_DEVICES_H

#include "checkpoint.h"

typedef enum { AR_SCHED_1F1B, AR_SCHED_GPIPE } ArSchedule;

/* What --offload moves to a slower memory. */
enum {
	AR_OFF_OPTIMIZER,       /* fp32 master weights and optimizer state */
	AR_OFF_PARAMETERS,      /* the 16-bit (working) parameters */
	AR_OFF_ACTIVATIONS,     /* activations kept for the backward pass */
	AR_OFF_KINDS
};

typedef struct ArDevicesSpec {
	int dp, zero, tp, pp, microbatches;
	bool sp;                /* sequence parallelism (with tp > 1) */
	ArSchedule schedule;
	int64_t bucket;         /* gradient bucket, bytes */
	/* --memory: [0] each device's own memory; the others are where
	 * --offload may put state.  None: no capacity to check. */
	const ArMemory *memories;
	int nmemories;
	int64_t reserve;        /* --reserve: of memories[0], not the step's */
	int offload[AR_OFF_KINDS];      /* memory index, or -1 */
	/* The offload memories are a node's host memory, each node holding
	 * this many consecutive ranks (--gpus-per-node; 0: all of them). */
	int gpus_per_node;
	/* For the step-time estimate: each device's FLOP/s and the bytes
	 * per second a device sends to another. */
	double device_flops, link_bandwidth;
} ArDevicesSpec;

/* Defaults: ZeRO's and PyTorch DDP's bucket of 25 MiB; an A100's dense
 * bf16 FLOP/s and its NVLink bandwidth one way. */
#define AR_DEFAULT_BUCKET ((int64_t)25 << 20)
#define AR_DEFAULT_FLOPS 312e12
#define AR_DEFAULT_LINK 300e9

void ar_devices_spec_default(ArDevicesSpec *s);

/* What one device holds, bytes. */
typedef struct ArDeviceBill {
	int rank, stage, dp_rank, tp_rank;
	int64_t parameters;         /* 16-bit (working) weights, frozen too */
	int64_t gradients;
	int64_t optimizer_state;    /* fp32 master weights and moments */
	int64_t activations_arena;  /* the planned arena */
	int64_t buffers;            /* communication: gradient bucket,
				       gathered layer (ZeRO-3) */
	int64_t constants;          /* masks, tables and scalars the steps
				       read */
	int64_t total;              /* all of the above */
	int64_t offloaded;          /* bytes in the slower memory */
} ArDeviceBill;

typedef struct ArStage {
	int first_layer, layers;    /* its layers of the device's graph */
	ArTrainResult train;        /* the step: graph, plan, bill */
	int inflight;               /* microbatches held at once */
	int64_t stash_bytes;        /* one microbatch's activations held
				       from its forward to its backward */
	int64_t arena_one;          /* the arena of one microbatch's step */
	ArDeviceBill bill;          /* its devices' (rank: the first) */
	/* Per microbatch: FLOPs (forward, backward, recompute) and bytes
	 * each device sends (tensor-parallel collectives, pipeline
	 * sends); per step: data-parallel bytes and the bytes moved to and
	 * from each offload memory. */
	int64_t flops, comm_bytes, dp_bytes;
	int64_t moved_bytes[AR_OFF_KINDS];
	int64_t offloaded[AR_OFF_KINDS];    /* per device, bytes */
	int64_t recompute_comm;     /* of comm_bytes: collectives re-run */
} ArStage;

typedef struct ArDevicesResult {
	ArDevicesSpec spec;
	ArCkptPolicy policy;
	int nstages;
	ArStage *stages;
	int ndevices;
	ArDeviceBill *devices;
	int nlayers;                /* layers of the device's graph (pp > 1) */
	int tp_columns, tp_rows, tp_embeddings;
	/* pp > 1: the split of the layers (nstages + 1 bounds) and the
	 * largest device total of the best split by layer count. */
	int *split;
	int64_t even_largest;
	int64_t largest;            /* the largest device total */
	/* The step-time estimate, seconds: compute (recompute included),
	 * communication, the pipeline bubble, offload transfers. */
	double compute_s, comm_s, bubble_s, offload_s, step_s;
	double moved_s[AR_OFF_KINDS];
	int64_t offloaded_total;    /* over all devices */
} ArDevicesResult;

/*
 * Plans every stage's step and bills every device.  AR_EXIT_BUDGET when a
 * device's total exceeds memories[0] or the offloaded state exceeds its
 * memory (err says which; r is filled); AR_EXIT_MODEL when the model
 * cannot be split as asked; AR_EXIT_USAGE for a spec that contradicts
 * itself.
 */
int ar_devices_plan(const ArGraph *fwd, const ArTrainOptions *o,
		    const ArDevicesSpec *s, ArDevicesResult *r, ArError *err);
void ar_devices_free(ArDevicesResult *r);

/*
 * The planner behind both (devices.c): one device's graph under tp and sp
 * (and the offloads of s, which shape the plans), its layers, and the
 * probe plans of its stages, kept across calls.  ar_planner_estimate
 * bills a configuration of that graph (dp, zero, pp, microbatches,
 * schedule, policy as opened) from the probes without planning its
 * stages in full: r gets estimated stages (of their training results
 * the bill's numbers only: no graph, plan or checkpoint names), the
 * devices, the largest total and the step time.
 */
typedef struct ArDevicePlanner ArDevicePlanner;
int ar_planner_open(const ArGraph *fwd, const ArTrainOptions *o,
		    const ArDevicesSpec *s, ArDevicePlanner **out,
		    ArError *err);
int ar_planner_estimate(ArDevicePlanner *c, const ArDevicesSpec *s,
			ArDevicesResult *r, ArError *err);
/* The device graph's layers (0 when none were found). */
int ar_planner_layers(const ArDevicePlanner *c);
void ar_planner_close(ArDevicePlanner *c);

/* ZeRO (zero.c): a device's persistent parts and buffers from a stage's
 * bill; gathered: the largest layer's parameter bytes (stage 3 gathers
 * one layer's at a time).  *dp_bytes: what a device sends per step to
 * reduce the gradients (and, stage 3, gather the parameters). */
void ar_zero_bill(const ArTrainBill *b, int dp, int zero, int64_t bucket,
		  int64_t gathered, ArDeviceBill *out, int64_t *dp_bytes);

/* bytes of psi elements partitioned over dp: ceil(psi / dp) elements
 * (the bytes' dp-th, rounded up, when they are not psi's multiple). */
int64_t ar_zero_part(int64_t bytes, int64_t psi, int dp);

/* devices_bill.c: every device's bill from its stage's, the step-time
 * estimate and the largest total; then the capacities: AR_EXIT_BUDGET
 * when a device or an offload memory is too small. */
void ar_devices_finish(ArDevicesResult *r);
/* Offloaded kind k: the most bytes any device holds in the slower memory
 * and the most it moves a step (devices_bill.c). */
void ar_devices_offload_most(const ArDevicesResult *r, int k, int64_t *held,
			     int64_t *moved);
int ar_devices_check(const ArDevicesResult *r, ArError *err);

/* pipeline.c: bytes one microbatch holds from its forward pass to its
 * backward pass (the buffers live across the first backward step). */
int64_t ar_stash_bytes(const ArGraph *g, const ArPlan *p);
/* Replans r's step with inflight - 1 more microbatches' stashes held
 * throughout (graph inputs "inflight.mbK" live from the first step to
 * the last), verified like any plan. */
int ar_inflight_plan(ArTrainResult *r, int inflight, int64_t stash,
		     const ArPlanOptions *popt, ArError *err);
/* Microbatches stage i of pp holds at once. */
int ar_inflight(ArSchedule s, int pp, int stage, int microbatches);

/*
 * The split of n layers into pp stages (bounds[0] = 0 < ... < bounds[pp]
 * = n) that minimises the largest estimated device total, where
 * est(ctx, stage, a, b) estimates stage `stage` holding layers [a, b);
 * returns that total.
 */
int64_t ar_pipeline_split(int n, int pp,
			  int64_t (*est)(void *ctx, int stage, int a, int b),
			  void *ctx, int *bounds);
/* The best split with as even layer counts as can be (each stage n/pp
 * layers, the rest one more), by the same estimate. */
int64_t ar_pipeline_even(int n, int pp,
			 int64_t (*est)(void *ctx, int stage, int a, int b),
			 void *ctx, int *bounds);

/* --fit (fit.c). */
typedef struct ArFitSpec {
	int devices;
	int64_t memory;         /* bytes per device */
	ArSchedule schedule;
	int64_t bucket;
	double device_flops, link_bandwidth;
	/* The host's bill (host.h) of every configuration, and its bound:
	 * one over the node's host memory does not fit.  NULL: none. */
	const struct ArHostSpec *host;
} ArFitSpec;

/*
 * One training setup the search is over (--fit-axis: the attention
 * kernel, LoRA's rank, the base weights' format, the micro-batch): the
 * forward graph, whose batch is the micro-batch, the step's options, and
 * the micro-batches a step takes in all (the global batch over the
 * micro-batch): each configuration with dp replicas runs that over dp
 * microbatches each; 0: one per device.
 */
typedef struct ArFitVariant {
	const ArGraph *fwd;
	ArTrainOptions opt;
	int microbatches;
	int64_t batch;          /* the micro-batch searched, 0: the model's */
} ArFitVariant;

typedef struct ArFitRow {
	ArDevicesSpec spec;
	ArCkptPolicy policy;
	int variant;            /* of the variants searched */
	int64_t largest;        /* the largest device total, estimated */
	double step_s;
	bool fits;
	int64_t host_bytes;     /* the largest node's host total */
	bool host_over;         /* above the host's memory */
	int order;              /* in the search's order, from 1 */
} ArFitRow;

typedef struct ArFitResult {
	ArFitRow *rows;         /* those that fit, the cheapest first */
	int nrows;
	/* Those whose devices fit but whose host does not, the cheapest
	 * first (planned or not). */
	ArFitRow *refused;
	int nrefused;
	struct ArHostModel *hosts;      /* each setup's (host given) */
	int considered;         /* configurations looked at */
	int64_t smallest;       /* the least memory any of them needs */
	ArFitRow smallest_row;
	ArDevicesResult best;   /* the first row, planned in full */
	bool planned;           /* best is set */
	const ArFitVariant *variants;   /* the caller's, as searched */
	int nvariants;
} ArFitResult;

/* AR_EXIT_BUDGET when none fits (err names the smallest device memory
 * that would).  v: nv >= 1 setups, alive while r is. */
int ar_fit(const ArFitVariant *v, int nv, const ArFitSpec *f,
	   ArFitResult *r, ArError *err);
void ar_fit_free(ArFitResult *r);
/* "attention flash, lora 8, base nf4, batch 4": variant v's setup. */
void ar_fit_describe(const ArFitVariant *v, char *buf, size_t size);

const char *ar_schedule_name(ArSchedule s);

#endif
