/*
 * host.h — the host's bill of a training run (host.c): what each node's
 * host memory holds beside its GPUs, part by part, at the two moments it
 * peaks: while each rank loads the model, and during the steps.
 */
#ifndef ARENAC_HOST_H
#define ARENAC_HOST_H

#include "devices.h"

/* The parts, in the order the summary and the JSON give them. */
enum {
	AR_HOST_LOAD_COPY,      /* load: a rank's full copy of the weights */
	AR_HOST_OPTIMIZER,      /* --offload optimizer: master and moments */
	AR_HOST_GRADIENTS,      /* --offload optimizer: the gradient the CPU
				   optimizer reads, in its format */
	AR_HOST_STAGING,        /* --offload optimizer: pinned transfer
				   buffers */
	AR_HOST_PARAMETERS,     /* --offload parameters */
	AR_HOST_ACTIVATIONS,    /* --offload activations */
	AR_HOST_PAGED,          /* a paged optimizer's state */
	AR_HOST_LOADER,         /* --loader: the batches prefetched */
	AR_HOST_LOADER_PINNED,  /* --loader: the batch pinned for the copy */
	AR_HOST_PARTS
};

typedef struct ArHostPartInfo {
	const char *name;       /* the JSON's key, without "_bytes" */
	bool load;              /* held while loading (else during steps) */
	bool pinned;            /* page-locked (cudaHostAlloc) memory */
	const char *what;       /* one line for the summary */
} ArHostPartInfo;

const ArHostPartInfo *ar_host_part(int k);

/* The host's bound as messages name it: "host memory 'NAME'" or
 * "--host-memory" (buf: AR_HOST_BOUND_LEN bytes). */
#define AR_HOST_BOUND_LEN 96
const char *ar_host_bound_name(const struct ArHostSpec *h, char *buf);

/* --loader, --load-dtype, --gpus-per-node, --host-memory. */
typedef struct ArHostSpec {
	int workers, prefetch;  /* workers 0: no loader billed */
	ArDType load_dtype;     /* the format each rank loads the weights in */
	/* --zero-init (ZeRO-3): deepspeed.zero.Init partitions each module
	 * as it is built, so a rank holds one whole at a time. */
	bool zero_init;
	int gpus_per_node;      /* 0: every rank on one node */
	int64_t memory;         /* one node's host memory, 0: no bound */
	const char *memory_name;        /* its name, NULL: a size given */
} ArHostSpec;

/* What the bill needs of the whole (unsplit) model. */
typedef struct ArHostModel {
	int64_t total_params;   /* trained and frozen elements, tied once */
	int64_t loaded_params;  /* of them in the checkpoint (not adapters) */
	int64_t largest_param;  /* the largest parameter tensor's elements */
	int64_t largest_module; /* the most elements one module holds */
	int64_t batch_bytes;    /* one micro-batch's inputs and labels, in
				   the model file's types */
} ArHostModel;

/* A run's host bill: the node whose peak is the largest. */
typedef struct ArHostBill {
	ArHostSpec spec;
	ArHostModel model;
	int ranks, nodes, gpus_per_node;
	int node;                       /* the node billed */
	int64_t part[AR_HOST_PARTS];    /* that node's, summed over its ranks */
	int64_t load_bytes, step_bytes; /* its two moments */
	int64_t peak_bytes;             /* the larger: the node's total */
	int64_t pinned_bytes;           /* of the step's, page-locked */
	int64_t headroom_bytes;         /* spec.memory - peak_bytes */
	int64_t *node_peak;             /* every node's total (nodes) */
	/* DeepSpeed's own estimator for the same model and configuration,
	 * for comparison (host.c names the source); ds_stage 0: none. */
	int ds_stage;
	bool ds_offload, ds_offload_params;
	int64_t ds_cpu_bytes, ds_gpu_bytes, ds_largest_layer_bytes;
} ArHostBill;

/* Whole-model facts from the trained model m built from fwd. */
void ar_host_model(const ArGraph *fwd, const ArTrainModel *m,
		   ArHostModel *out);

/*
 * One device's run (no --dp/--tp/--pp): b is its step's bill.  Many
 * devices: r's stages give each rank's parts.  AR_EXIT_BUDGET when the
 * node's peak exceeds h->memory, err naming the moment and its largest
 * part; out is filled either way.
 */
int ar_host_bill_one(const ArHostSpec *h, const ArHostModel *m,
		     const ArTrainBill *b, ArHostBill *out, ArError *err);
int ar_host_bill_devices(const ArHostSpec *h, const ArHostModel *m,
			 const ArDevicesResult *r, ArHostBill *out,
			 ArError *err);
void ar_host_bill_free(ArHostBill *b);

#endif
