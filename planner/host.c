/*
 * host.c — the host's bill: what a node's host memory (DRAM) holds for a
 * training run, per rank, summed over the ranks of a node
 * (--gpus-per-node; ranks numbered as devices.h numbers them, node k
 * holding ranks k x G to k x G + G - 1), at its two peaks:
 *
 *   load   each rank builds the whole model and loads its checkpoint in
 *          --load-dtype before ZeRO-3 or tensor parallelism drops what is
 *          not its share (transformers' from_pretrained builds the
 *          module in fp32 unless torch_dtype says otherwise, then moves it
 *          to the device): trained and frozen weights, adapters excepted
 *          (PEFT creates them), tied weights once; with --zero-init,
 *          deepspeed.zero.Init (runtime/zero/partition_parameters.py)
 *          partitions each module's weights as the module is built, so
 *          a rank holds the largest one whole, as DeepSpeed's estimator
 *          has it (4 x largest_layer_params a GPU for zero_init);
 *   step   what stays on the host while the steps run: offloaded state
 *          (--offload, devices_stage.c), a paged optimizer's state, the
 *          pinned buffers the offload moves through, the data loader.
 *
 * The two do not overlap (the copy is freed when the model is on the
 * device, before the optimizer is built), so the node's total is the
 * larger: DeepSpeed's estimators take the same max() (below).  A part's
 * mechanism and source is its row in the table.
 */
#include "host.h"
#include "numfmt.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ArHostPartInfo parts[AR_HOST_PARTS] = {
	[AR_HOST_LOAD_COPY] = {"load_copy", true, false,
		"each rank's copy of the weights as it loads them, in "
		"--load-dtype"},
	/* DeepSpeed pins them (offload_optimizer.pin_memory):
	 * stage_1_and_2.py, DeepSpeedZeroOptimizer.__init__'s
	 * single_partition_of_fp32_groups; stage3.py's
	 * fp32_partitioned_groups_flat; DeepSpeedCPUAdam's moments. */
	[AR_HOST_OPTIMIZER] = {"offloaded_optimizer", false, true,
		"the rank's master weights and optimizer moments"},
	/* stage_1_and_2.py, initialize_optimizer_states: the fp32 grad of
	 * single_partition_of_fp32_groups, pinned; stage3.py,
	 * _setup_for_real_optimizer: subgroup_gradient_buffer. */
	[AR_HOST_GRADIENTS] = {"offloaded_gradients", false, true,
		"the gradient partition the CPU optimizer reads, in the "
		"master format"},
	/* ZeRO 1-2 (stage_1_and_2.py, DeepSpeedZeroOptimizer.__init__):
	 * param_buffer_of_bit16_for_cpu_offload_groups, the partition's
	 * updated weights in their 16-bit format, and
	 * temp_grad_buffer_for_cpu_offload, the largest parameter's gradient
	 * (largest_param_numel, self.dtype); ZeRO 3 (stage3.py,
	 * DeepSpeedZeroOptimizer_Stage3.__init__): grad_partitions_flat_buffer,
	 * the gradient partition in its own format. */
	[AR_HOST_STAGING] = {"pinned_staging", false, true,
		"pinned buffers the offloaded update sends through"},
	/* stage3.py, _create_fp16_partitions: param_groups_fp16_flat_cpu_memory
	 * (offload_param.pin_memory). */
	[AR_HOST_PARAMETERS] = {"offloaded_parameters", false, true,
		"the rank's 16-bit weights"},
	/* torch.autograd.graph.save_on_cpu(pin_memory=True). */
	[AR_HOST_ACTIVATIONS] = {"offloaded_activations", false, true,
		"activations kept for the backward pass, micro-batches in "
		"flight"},
	/* bitsandbytes' paged optimizers: cudaMallocManaged pages, not
	 * pinned (functional.py, get_paged). */
	[AR_HOST_PAGED] = {"paged_optimizer", false, false,
		"a paged optimizer's state (unified memory)"},
	/* torch.utils.data.DataLoader: each worker keeps prefetch_factor
	 * batches ready (_MultiProcessingDataLoaderIter: num_workers x
	 * prefetch_factor outstanding), in shared memory. */
	[AR_HOST_LOADER] = {"loader", false, false,
		"batches the loader's workers hold (workers x prefetch)"},
	/* pin_memory=True: the pin thread copies the batch into page-locked
	 * memory for the non-blocking copy to the device
	 * (torch/utils/data/_utils/pin_memory.py). */
	[AR_HOST_LOADER_PINNED] = {"loader_pinned", false, true,
		"the batch pinned for the copy to the device"},
};

const ArHostPartInfo *ar_host_part(int k)
{
	assert(k >= 0 && k < AR_HOST_PARTS);
	return &parts[k];
}

const char *ar_host_bound_name(const ArHostSpec *h, char *buf)
{
	if (!h->memory_name)
		return "--host-memory";
	snprintf(buf, AR_HOST_BOUND_LEN, "host memory '%s'", h->memory_name);
	return buf;
}

/* The length of name's module path: up to its last '.' (torch names a
 * parameter "<module path>.<attribute>" in the state dict, and exporters
 * keep it), 0 for a name without one (a module of its own). */
static size_t module_len(const char *name)
{
	const char *dot = strrchr(name, '.');
	return dot ? (size_t)(dot - name) : 0;
}

/* The name of the weight parameter t is folded from (a Transpose of a
 * Linear's weight, a Gather of a position table: the parameter is the
 * constant they make, its module the weight's), or t's own. */
static const char *weight_name(const ArGraph *g, int t)
{
	for (int depth = 0; depth < 8; depth++) {
		const ArTensor *x = &g->tensors[t];
		const ArNode *p = x->producer >= 0 ? &g->nodes[x->producer]
						   : NULL;
		if (x->kind != AR_TK_CONSTANT || !p || !p->ninputs ||
		    p->inputs[0] < 0)
			break;
		t = p->inputs[0];
	}
	return g->tensors[t].name;
}

typedef struct Owned {
	const char *name;       /* the weight's, for its module path */
	int64_t n;              /* elements */
} Owned;

/* By module: names without a path first, each a module of its own, then
 * by module path. */
static int by_module(const void *a, const void *b)
{
	const char *x = ((const Owned *)a)->name, *y = ((const Owned *)b)->name;
	size_t lx = module_len(x), ly = module_len(y);
	int c;
	if (!lx != !ly)
		return lx ? 1 : -1;
	if (!lx)
		return strcmp(x, y);
	c = strncmp(x, y, lx < ly ? lx : ly);
	return c ? c : (lx > ly) - (lx < ly);
}

/* DeepSpeed's largest_layer_params (stage3.py, model_to_params): the
 * most parameters one module holds itself (recurse=False), a module
 * being the parameters whose weights share a module path. */
static int64_t largest_module(Owned *o, int n)
{
	int64_t best = 0;
	qsort(o, (size_t)n, sizeof *o, by_module);
	for (int i = 0, j; i < n; i = j) {
		int64_t sum = 0;
		for (j = i; j < n && !by_module(&o[i], &o[j]); j++)
			sum = ar_train_add(sum, o[j].n);
		if (sum > best)
			best = sum;
	}
	return best;
}

void ar_host_model(const ArGraph *fwd, const ArTrainModel *m,
		   ArHostModel *out)
{
	const ArGraph *g = m->base;
	Owned *own = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *own);
	int n = 0;

	memset(out, 0, sizeof *out);
	out->total_params = ar_train_add(m->mem.parameter_count,
					 m->mem.frozen_count);
	/* --base-quant's weights are in the checkpoint in full. */
	out->loaded_params = ar_train_add(out->total_params - m->lora.
					  adapter_parameters, m->quant_params);
	out->total_params = ar_train_add(out->total_params, m->quant_params);
	for (int t = 0; t < g->ntensors; t++) {
		if (!(m->param[t] || m->frozen[t]) || m->tied[t])
			continue;
		own[n++] = (Owned){weight_name(g, t), ar_numel(&g->tensors[t])};
		if (ar_numel(&g->tensors[t]) > out->largest_param)
			out->largest_param = ar_numel(&g->tensors[t]);
	}
	out->largest_module = largest_module(own, n);
	free(own);
	/* The inputs as the file types them; the label the loss adds is
	 * the base graph's own. */
	for (int i = 0; i < g->ninputs; i++) {
		const ArTensor *t = &g->tensors[g->inputs[i]];
		int f;
		if (t->kind != AR_TK_INPUT || m->param[g->inputs[i]] ||
		    m->frozen[g->inputs[i]])
			continue;
		f = ar_graph_find(fwd, t->name);
		out->batch_bytes = ar_train_add(out->batch_bytes,
			f >= 0 ? fwd->tensors[f].bytes : t->bytes);
	}
}

/* Elements of the largest parameter in the trained weights' format. */
static int64_t largest_bytes(const ArHostModel *m, const ArTrainBill *b)
{
	return b->parameter_count ? ar_train_mul(m->largest_param,
			b->parameter_bytes / b->parameter_count) : 0;
}

/* One rank's parts: its stage's bill b, what the stage offloads
 * (offloaded[], devices.h; NULL: nothing) under s (NULL: one device). */
static void rank_parts(const ArHostSpec *h, const ArHostModel *m,
		       const ArDevicesSpec *s, const ArTrainBill *b,
		       const int64_t *offloaded, int64_t *p)
{
	int shards = s && s->zero >= 1 ? s->dp : 1;
	int64_t psi = b->parameter_count, batch = m->batch_bytes;

	memset(p, 0, AR_HOST_PARTS * sizeof *p);
	p[AR_HOST_LOAD_COPY] = ar_train_mul(h->zero_init ? m->largest_module
					    : m->loaded_params,
					    (int64_t)ar_dtype_size(h->load_dtype));
	/* As devices_stage.c's offload() partitions it. */
	p[AR_HOST_PAGED] = ar_zero_part(b->host_state_bytes, psi, shards);
	if (offloaded) {
		p[AR_HOST_OPTIMIZER] = offloaded[AR_OFF_OPTIMIZER] -
				       p[AR_HOST_PAGED];
		p[AR_HOST_PARAMETERS] = offloaded[AR_OFF_PARAMETERS];
		p[AR_HOST_ACTIVATIONS] = offloaded[AR_OFF_ACTIVATIONS];
	}
	if (s && s->offload[AR_OFF_OPTIMIZER] >= 0) {
		p[AR_HOST_GRADIENTS] = ar_zero_part(b->master_weight_bytes ?
			b->master_weight_bytes : b->gradient_bytes, psi, shards);
		p[AR_HOST_STAGING] = s->zero >= 3 ?
			ar_zero_part(b->gradient_bytes, psi, shards) :
			ar_train_add(ar_zero_part(b->parameter_bytes, psi,
						  shards), largest_bytes(m, b));
	}
	if (h->workers || h->prefetch) {
		p[AR_HOST_LOADER] = ar_train_mul(h->workers ?
			(int64_t)h->workers * h->prefetch : 1, batch);
		p[AR_HOST_LOADER_PINNED] = batch;
	}
}

/*
 * DeepSpeed's estimators for the same model (deepspeed/runtime/zero/
 * stage_1_and_2.py, estimate_zero2_model_states_mem_needs;
 * stage3.py, estimate_zero3_model_states_mem_needs), with their default
 * additional_buffer_factor of 1.5 and, for ZeRO-3, zero_init as
 * --zero-init says (without it every rank builds the whole model).  The float
 * arithmetic is Python's, in the same order, so the figures are
 * DeepSpeed's to the byte.
 */
static void deepspeed(const ArDevicesSpec *s, int gpn, int nodes,
		      const ArHostModel *m, ArHostBill *out)
{
	bool init = out->spec.zero_init;
	double p = (double)m->total_params, f = 1.5, mx;
	int64_t total = (int64_t)gpn * nodes, ll = 4 * m->largest_module;
	double gf = 1.0 / nodes;

	out->ds_stage = s && s->zero >= 3 ? 3 : 2;
	out->ds_offload = s && s->offload[AR_OFF_OPTIMIZER] >= 0;
	out->ds_offload_params = out->ds_stage == 3 && out->ds_offload &&
				 s->offload[AR_OFF_PARAMETERS] >= 0;
	out->ds_largest_layer_bytes = out->ds_stage == 3 ? ll : 0;
	if (out->ds_stage == 2 && out->ds_offload) {
		int64_t k = 4 * total > 16 ? 4 * total : 16;
		out->ds_gpu_bytes = 2 * m->total_params;
		out->ds_cpu_bytes = (int64_t)((double)(m->total_params * k) * f);
	} else if (out->ds_stage == 2) {
		out->ds_gpu_bytes = 2 * m->total_params +
			(int64_t)((double)(18 * m->total_params) / (double)total);
		out->ds_cpu_bytes = (int64_t)((double)(m->total_params * 4 *
						       gpn) * f);
	} else if (out->ds_offload) {
		double k = out->ds_offload_params ? 18 : 16;
		out->ds_gpu_bytes = out->ds_offload_params ? ll : ll +
			(int64_t)((double)(2 * m->total_params) / (double)total);
		/* max(4 * num_gpus_per_node, K * gpus_factor): an int or a
		 * float, whichever is larger; times total_params first. */
		mx = (double)(4 * gpn) >= k * gf ? (double)(4 * gpn) : k * gf;
		out->ds_cpu_bytes = init ? (int64_t)(p * k * gf * f) :
			(int64_t)(p * mx * f);
	} else {
		out->ds_gpu_bytes = ll + (int64_t)((double)(18 *
					m->total_params) / (double)total);
		out->ds_cpu_bytes = (int64_t)((double)((init ?
				m->largest_module : m->total_params) * 4 *
				gpn) * f);
	}
}

/* The node's moments and total from out->part. */
static void moments(ArHostBill *out)
{
	out->load_bytes = out->step_bytes = out->pinned_bytes = 0;
	for (int k = 0; k < AR_HOST_PARTS; k++) {
		int64_t *at = parts[k].load ? &out->load_bytes
					    : &out->step_bytes;
		*at = ar_train_add(*at, out->part[k]);
		if (parts[k].pinned && !parts[k].load)
			out->pinned_bytes = ar_train_add(out->pinned_bytes,
							 out->part[k]);
	}
	out->peak_bytes = out->load_bytes > out->step_bytes ? out->load_bytes
							    : out->step_bytes;
}

/* The bound: --host-memory against the node's total. */
static int check(ArHostBill *out, ArError *err)
{
	const ArHostSpec *h = &out->spec;
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN], c[AR_NUMFMT_LEN],
	     d[AR_NUMFMT_LEN], name[AR_HOST_BOUND_LEN];
	int big = -1;

	moments(out);
	out->headroom_bytes = h->memory ? h->memory - out->peak_bytes : 0;
	if (!h->memory || out->peak_bytes <= h->memory)
		return AR_OK;
	for (int k = 0; k < AR_HOST_PARTS; k++)
		if (parts[k].load == (out->load_bytes >= out->step_bytes) &&
		    (big < 0 || out->part[k] > out->part[big]))
			big = k;
	return ar_fail(err, AR_EXIT_BUDGET, "the host of node %d (%d rank%s) "
		       "needs %s bytes %s, %s more than %s %s; the "
		       "largest part: %s, %s bytes", out->node, out->ranks,
		       out->ranks == 1 ? "" : "s",
		       ar_fmt_count(a, out->peak_bytes),
		       out->load_bytes >= out->step_bytes ?
		       "while the ranks load the model" : "during the steps",
		       ar_fmt_count(b, out->peak_bytes - h->memory),
		       ar_host_bound_name(h, name), ar_fmt_count(c, h->memory),
		       parts[big].name, ar_fmt_count(d, out->part[big]));
}

int ar_host_bill_one(const ArHostSpec *h, const ArHostModel *m,
		     const ArTrainBill *b, ArHostBill *out, ArError *err)
{
	memset(out, 0, sizeof *out);
	out->spec = *h;
	out->model = *m;
	out->ranks = out->nodes = out->gpus_per_node = 1;
	rank_parts(h, m, NULL, b, NULL, out->part);
	deepspeed(NULL, 1, 1, m, out);
	moments(out);
	out->node_peak = ar_xmalloc(sizeof *out->node_peak);
	out->node_peak[0] = out->peak_bytes;
	return check(out, err);
}

int ar_host_bill_devices(const ArHostSpec *h, const ArHostModel *m,
			 const ArDevicesResult *r, ArHostBill *out,
			 ArError *err)
{
	const ArDevicesSpec *s = &r->spec;
	int world = r->ndevices, per = s->dp * s->tp;
	int gpn = h->gpus_per_node && h->gpus_per_node < world ?
		  h->gpus_per_node : world;
	int64_t best = -1, *peaks;

	memset(out, 0, sizeof *out);
	out->spec = *h;
	out->model = *m;
	out->gpus_per_node = gpn;
	out->nodes = (world + gpn - 1) / gpn;
	peaks = ar_xcalloc((size_t)out->nodes, sizeof *peaks);
	for (int node = 0; node < out->nodes; node++) {
		ArHostBill n = *out;
		int64_t p[AR_HOST_PARTS];
		memset(n.part, 0, sizeof n.part);
		n.node = node;
		n.ranks = 0;
		for (int rank = node * gpn; rank < world &&
		     rank < (node + 1) * gpn; rank++) {
			const ArStage *st = &r->stages[rank / per];
			rank_parts(h, m, s, &st->train.bill, st->offloaded, p);
			for (int k = 0; k < AR_HOST_PARTS; k++)
				n.part[k] = ar_train_add(n.part[k], p[k]);
			n.ranks++;
		}
		moments(&n);
		peaks[node] = n.peak_bytes;
		if (n.peak_bytes > best) {
			best = n.peak_bytes;
			*out = n;
		}
	}
	out->node_peak = peaks;
	deepspeed(s, gpn, out->nodes, m, out);
	return check(out, err);
}

void ar_host_bill_free(ArHostBill *b)
{
	free(b->node_peak);
	b->node_peak = NULL;
}
