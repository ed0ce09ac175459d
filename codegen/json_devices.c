/*
 * json_devices.c — the JSON report's multi-device part (devices.h): the
 * configuration, each pipeline stage, the offloads, the step-time
 * estimate, every device's bill, and with --fit the configurations that
 * fit.  The report's plan (steps, tensors) is the one of the stage it
 * names ("parallel": {"stage": N}).
 */
#include "host.h"
#include "emit.h"

#include <inttypes.h>

static const char *const offload_name[AR_OFF_KINDS] = {
	"optimizer", "parameters", "activations"};

static void write_spec(FILE *f, const ArDevicesSpec *s, ArCkptPolicy pol)
{
	fprintf(f, "\"dp\": %d, \"zero\": %d, \"tp\": %d, "
		"\"sequence_parallel\": %s, \"pp\": %d, \"microbatches\": %d, "
		"\"schedule\": \"%s\", \"checkpoint_policy\": \"%s\"",
		s->dp, s->zero, s->tp, s->sp ? "true" : "false", s->pp,
		s->microbatches, ar_schedule_name(s->schedule),
		ar_ckpt_policy_name(pol));
}

static void write_stages(FILE *f, const ArDevicesResult *r)
{
	fputs(", \"stages\": [", f);
	for (int i = 0; i < r->nstages; i++) {
		const ArStage *st = &r->stages[i];
		fprintf(f, "%s\n    {\"stage\": %d, \"first_layer\": %d, "
			"\"layers\": %d, \"inflight_microbatches\": %d, "
			"\"stash_bytes\": %" PRId64 ", \"arena_one_microbatch"
			"_bytes\": %" PRId64 ", \"activations_arena\": %" PRId64
			", \"flops_per_microbatch\": %" PRId64 ", \"comm_bytes"
			"_per_microbatch\": %" PRId64 ", \"recompute_comm_bytes"
			"\": %" PRId64 ", \"dp_bytes_per_step\": %" PRId64
			", \"total\": %" PRId64 "}", i ? "," : "", i,
			st->first_layer, st->layers, st->inflight,
			st->stash_bytes, st->arena_one,
			st->bill.activations_arena, st->flops, st->comm_bytes,
			st->recompute_comm, st->dp_bytes, st->bill.total);
	}
	fputs("]", f);
}

static void write_offload(FILE *f, const ArDevicesResult *r)
{
	const ArDevicesSpec *s = &r->spec;
	bool any = false;
	fputs(", \"offload\": [", f);
	for (int k = 0; k < AR_OFF_KINDS; k++) {
		int64_t held, moved;
		if (s->offload[k] < 0)
			continue;
		ar_devices_offload_most(r, k, &held, &moved);
		fprintf(f, "%s{\"what\": \"%s\", \"memory\": ", any ? ", " : "",
			offload_name[k]);
		ar_json_str(f, s->memories[s->offload[k]].name);
		fprintf(f, ", \"bytes_per_device\": %" PRId64 ", \"moved_bytes_"
			"per_step\": %" PRId64 ", \"seconds_per_step\": %.9g}",
			held, moved, r->moved_s[k]);
		any = true;
	}
	fputs("]", f);
}

static void write_devices(FILE *f, const ArDevicesResult *r)
{
	fputs(",\n  \"devices\": [", f);
	for (int i = 0; i < r->ndevices; i++) {
		const ArDeviceBill *d = &r->devices[i];
		fprintf(f, "%s\n    {\"rank\": %d, \"stage\": %d, \"dp_rank\": "
			"%d, \"tp_rank\": %d, \"parameters\": %" PRId64
			", \"gradients\": %" PRId64 ", \"optimizer_state\": %"
			PRId64 ", \"activations_arena\": %" PRId64
			", \"buffers\": %" PRId64 ", \"constants\": %" PRId64
			", \"total\": %" PRId64 ", \"offloaded\": %" PRId64 "}",
			i ? "," : "", d->rank, d->stage, d->dp_rank, d->tp_rank,
			d->parameters, d->gradients, d->optimizer_state,
			d->activations_arena, d->buffers, d->constants,
			d->total, d->offloaded);
	}
	fputs("\n  ]", f);
}

/* A --fit-axis setup: the options it sets (batch null: the model's). */
static void write_setup(FILE *f, const ArFitVariant *v)
{
	const ArTrainSpec *t = &v->opt.spec;
	fputs(", \"attention\": ", f);
	ar_json_str(f, ar_attention_name(t->attention));
	fprintf(f, ", \"lora_rank\": %" PRId64 ", \"base_quant\": ",
		t->lora.rank);
	ar_json_str(f, ar_base_quant_name(t->base_quant.format));
	if (v->batch)
		fprintf(f, ", \"batch\": %" PRId64, v->batch);
	else
		fputs(", \"batch\": null", f);
}

/* A --fit row; host_fits null without a host bound. */
static void write_fit_row(FILE *f, const ArFitResult *fit, const ArFitRow *row,
			  bool bound, bool planned)
{
	write_spec(f, &row->spec, row->policy);
	if (fit->nvariants > 1)
		write_setup(f, &fit->variants[row->variant]);
	fprintf(f, ", \"largest_bytes\": %" PRId64 ", \"host_bytes\": %" PRId64
		", \"host_fits\": %s, \"step_seconds\": %.9g, \"planned\": %s}",
		row->largest, row->host_bytes, !bound ? "null" :
		row->host_over ? "false" : "true", row->step_s,
		planned ? "true" : "false");
}

static void write_fit(FILE *f, const ArFitResult *fit, bool bound)
{
	fprintf(f, ",\n  \"fit\": {\"considered\": %d, \"smallest_bytes\": %"
		PRId64 ", \"configurations\": [", fit->considered,
		fit->smallest);
	for (int i = 0; i < fit->nrows; i++) {
		fprintf(f, "%s\n    {", i ? "," : "");
		write_fit_row(f, fit, &fit->rows[i], bound, i == 0);
	}
	fputs("],\n    \"host_refused\": [", f);
	for (int i = 0; i < fit->nrefused; i++) {
		fprintf(f, "%s\n    {", i ? "," : "");
		write_fit_row(f, fit, &fit->refused[i], bound, false);
	}
	fputs("]}", f);
}

void ar_write_devices_json(FILE *f, const ArEmitInfo *info)
{
	const ArDevicesResult *r = info->devices;
	fputs(",\n  \"parallel\": {", f);
	write_spec(f, &r->spec, r->policy);
	fprintf(f, ", \"bucket_bytes\": %" PRId64 ", \"stage\": %d, "
		"\"ranks\": %d, \"layers\": %d, \"tensor_parallel\": "
		"{\"column\": %d, \"row\": %d, \"embedding\": %d}",
		r->spec.bucket, info->stage, r->ndevices, r->nlayers,
		r->tp_columns, r->tp_rows, r->tp_embeddings);
	if (r->split) {
		fputs(", \"split\": [", f);
		for (int i = 0; i <= r->nstages; i++)
			fprintf(f, "%s%d", i ? ", " : "", r->split[i]);
		fprintf(f, "], \"even_split_largest_bytes\": %" PRId64,
			r->even_largest);
	}
	/* What the step-time estimate assumed (--device, --fit NxNAME or
	 * the defaults). */
	fprintf(f, ", \"device_flops_per_s\": %.9g, \"link_bytes_per_s\": "
		"%.9g", r->spec.device_flops, r->spec.link_bandwidth);
	fprintf(f, ", \"largest_bytes\": %" PRId64, r->largest);
	write_stages(f, r);
	write_offload(f, r);
	fprintf(f, ",\n    \"estimate\": {\"compute_seconds\": %.9g, "
		"\"comm_seconds\": %.9g, \"bubble_seconds\": %.9g, "
		"\"offload_seconds\": %.9g, \"step_seconds\": %.9g}}",
		r->compute_s, r->comm_s, r->bubble_s, r->offload_s, r->step_s);
	write_devices(f, r);
	if (info->fit)
		write_fit(f, info->fit, info->host && info->host->spec.memory);
}
