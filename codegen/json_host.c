/*
 * json_host.c — the JSON report's "host" object (planner/host.h): one
 * node's host memory part by part, its two moments and its total, the
 * bound, and DeepSpeed's estimate of the same configuration beside it.
 * README's "The host's bill" documents the fields.
 */
#include "emit.h"
#include "host.h"

#include <inttypes.h>

void ar_write_host_json(FILE *f, const ArHostBill *h)
{
	fprintf(f, ",\n  \"host\": {\"nodes\": %d, \"gpus_per_node\": %d, "
		"\"node\": %d, \"ranks\": %d, \"load_dtype\": ", h->nodes,
		h->gpus_per_node, h->node, h->ranks);
	ar_json_str(f, ar_dtype_name(h->spec.load_dtype));
	if (h->spec.workers || h->spec.prefetch)
		fprintf(f, ", \"loader_workers\": %d, \"loader_prefetch\": %d",
			h->spec.workers, h->spec.prefetch);
	else
		fputs(", \"loader_workers\": null, \"loader_prefetch\": null", f);
	fprintf(f, ", \"batch_input_bytes\": %" PRId64 ", \"total_params\": %"
		PRId64 ", \"loaded_params\": %" PRId64 ", \"largest_param\": %"
		PRId64, h->model.batch_bytes, h->model.total_params,
		h->model.loaded_params, h->model.largest_param);
	for (int k = 0; k < AR_HOST_PARTS; k++)
		fprintf(f, ", \"%s_bytes\": %" PRId64, ar_host_part(k)->name,
			h->part[k]);
	fputs(", \"node_peak_bytes\": [", f);
	for (int i = 0; i < h->nodes; i++)
		fprintf(f, "%s%" PRId64, i ? ", " : "", h->node_peak[i]);
	fputc(']', f);
	fprintf(f, ", \"load_bytes\": %" PRId64 ", \"step_bytes\": %" PRId64
		", \"peak_bytes\": %" PRId64 ", \"pinned_bytes\": %" PRId64,
		h->load_bytes, h->step_bytes, h->peak_bytes, h->pinned_bytes);
	/* Written only when it fits: true, or null without a bound. */
	if (h->spec.memory)
		fprintf(f, ", \"memory_bytes\": %" PRId64 ", \"headroom_bytes\": "
			"%" PRId64 ", \"fits\": true", h->spec.memory,
			h->headroom_bytes);
	else
		fputs(", \"memory_bytes\": null, \"headroom_bytes\": null, "
		      "\"fits\": null", f);
	fprintf(f, ",\n    \"deepspeed\": {\"estimator\": "
		"\"estimate_zero%d_model_states_mem_needs\", "
		"\"num_gpus_per_node\": %d, \"num_nodes\": %d, \"cpu_offload\": "
		"%s, \"cpu_offload_params\": %s, \"zero_init\": %s, "
		"\"additional_buffer_factor\": 1.5, \"total_params\": %" PRId64
		", \"largest_layer_params\": %" PRId64 ", \"cpu_bytes\": %" PRId64
		", \"gpu_bytes\": %" PRId64 "}}", h->ds_stage, h->gpus_per_node,
		h->nodes, h->ds_offload ? "true" : "false",
		h->ds_offload_params ? "true" : "false",
		h->spec.zero_init ? "true" : "false", h->model.total_params,
		h->model.largest_module, h->ds_cpu_bytes, h->ds_gpu_bytes);
}
