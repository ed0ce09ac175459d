/*
 * devices_print.c — the multi-device tables a user reads: one row per
 * pipeline stage (its devices hold the same), bytes per device, then the
 * split, the offloads and the step-time estimate; and --fit's ranking.
 */
#include "devices_print.h"
#include "host.h"
#include "numfmt.h"

/* --fit's rows on the terminal, at most. */
#define FIT_SHOWN 20

static const char *const offload_name[AR_OFF_KINDS] = {
	"optimizer", "parameters", "activations"};

/* "dp 8 (ZeRO 1), tp 2 (sequence parallel), pp 4 (8 microbatches, 1f1b)" */
static void describe(FILE *f, const ArDevicesSpec *s)
{
	fprintf(f, "dp %d", s->dp);
	if (s->dp > 1)
		fprintf(f, " (ZeRO %d)", s->zero);
	fprintf(f, ", tp %d%s, pp %d", s->tp, s->sp ? " (sequence parallel)"
						  : "", s->pp);
	if (s->pp > 1)
		fprintf(f, " (%d microbatch%s, %s)", s->microbatches,
			s->microbatches == 1 ? "" : "es",
			ar_schedule_name(s->schedule));
}

static void cell(FILE *f, int64_t v)
{
	char b[AR_NUMFMT_LEN];
	fprintf(f, " %16s", ar_fmt_count(b, v));
}

static void print_split(FILE *f, const ArDevicesResult *r)
{
	char a[AR_NUMFMT_LEN];
	fprintf(f, "  split          layers");
	for (int i = 0; i < r->nstages; i++)
		fprintf(f, "%s%d-%d", i ? " | " : " ", r->split[i],
			r->split[i + 1] - 1);
	if (r->even_largest == r->largest)
		fprintf(f, " (the best split by layer count)\n");
	else
		fprintf(f, " (the best split by layer count: largest %s bytes)"
			"\n", ar_fmt_count(a, r->even_largest));
}

static void print_offload(FILE *f, const ArDevicesResult *r)
{
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN];
	const ArDevicesSpec *s = &r->spec;
	for (int k = 0; k < AR_OFF_KINDS; k++) {
		int64_t held, moved;
		if (s->offload[k] < 0)
			continue;
		ar_devices_offload_most(r, k, &held, &moved);
		fprintf(f, "  offload        %s in '%s': %s bytes a device, %s "
			"moved a step", offload_name[k],
			s->memories[s->offload[k]].name, ar_fmt_count(a, held),
			ar_fmt_count(b, moved));
		if (s->memories[s->offload[k]].bandwidth > 0)
			fprintf(f, ", %.4g s", r->moved_s[k]);
		fputc('\n', f);
	}
}

void ar_print_devices(FILE *f, const char *model, const ArDevicesResult *r)
{
	static const char *const heads[] = {
		"parameters", "gradients", "optimizer state", "activations",
		"buffers", "constants", "total"};
	const ArDevicesSpec *s = &r->spec;
	int per = s->dp * s->tp;
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN];

	fprintf(f, "%s: %d device%s: ", model, r->ndevices,
		r->ndevices == 1 ? "" : "s");
	describe(f, s);
	fprintf(f, "; checkpoint %s\n", ar_ckpt_policy_name(r->policy));
	fprintf(f, "  %5s %11s %7s %6s", "stage", "ranks", "layers", "mb");
	for (size_t i = 0; i < sizeof heads / sizeof *heads; i++)
		fprintf(f, " %16s", heads[i]);
	fputc('\n', f);
	for (int i = 0; i < r->nstages; i++) {
		const ArStage *st = &r->stages[i];
		const ArDeviceBill *d = &st->bill;
		char ranks[32], layers[32];
		snprintf(ranks, sizeof ranks, per > 1 ? "%d-%d" : "%d",
			 i * per, (i + 1) * per - 1);
		if (r->split)
			snprintf(layers, sizeof layers, "%d-%d", st->first_layer,
				 st->first_layer + st->layers - 1);
		else
			snprintf(layers, sizeof layers, "all");
		fprintf(f, "  %5d %11s %7s %6d", i, ranks, layers, st->inflight);
		cell(f, d->parameters);
		cell(f, d->gradients);
		cell(f, d->optimizer_state);
		cell(f, d->activations_arena);
		cell(f, d->buffers);
		cell(f, d->constants);
		cell(f, d->total);
		fputc('\n', f);
	}
	fprintf(f, "  (bytes a device; mb: micro-batches it holds at once)\n");
	fprintf(f, "  largest        %s bytes (%s)\n",
		ar_fmt_count(a, r->largest), ar_fmt_size(b, r->largest));
	if (r->split)
		print_split(f, r);
	print_offload(f, r);
	fprintf(f, "  step estimate  %.4g s: compute %.4g, communication %.4g, "
		"bubble %.4g, offload %.4g\n", r->step_s, r->compute_s,
		r->comm_s, r->bubble_s, r->offload_s);
}

/* A row of the --fit table: its number, or "host" for one refused. */
static void fit_row(FILE *f, const ArFitResult *fr, const ArFitRow *row,
		    int i)
{
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN], d[150];
	if (i)
		fprintf(f, "  %4d", i);
	else
		fprintf(f, "  %4s", "host");
	fprintf(f, " %4d %4d %4d %3s %4d %5d %-10s %16s %16s %12.4g",
		row->spec.dp, row->spec.zero, row->spec.tp,
		row->spec.sp ? "yes" : "-", row->spec.pp,
		row->spec.microbatches, ar_ckpt_policy_name(row->policy),
		ar_fmt_count(a, row->largest), ar_fmt_count(b, row->host_bytes),
		row->step_s);
	if (fr->nvariants > 1) {
		ar_fit_describe(&fr->variants[row->variant], d, sizeof d);
		fprintf(f, "  %s", d);
	}
	fputc('\n', f);
}

void ar_print_fit(FILE *f, const char *model, const ArFitSpec *spec,
		  const ArFitResult *fr)
{
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN], name[AR_HOST_BOUND_LEN];
	fprintf(f, "%s: --fit %d devices of %s bytes (%s): %d configurations, "
		"%d fit; the cheapest first\n", model, spec->devices,
		ar_fmt_count(a, spec->memory), ar_fmt_size(b, spec->memory),
		fr->considered, fr->nrows);
	if (fr->nvariants > 1)
		fprintf(f, "  (over %d setups: --fit-axis)\n", fr->nvariants);
	fprintf(f, "  %4s %4s %4s %4s %3s %4s %5s %-10s %16s %16s %12s%s\n",
		"#", "dp", "zero", "tp", "sp", "pp", "mb", "checkpoint",
		"largest", "host", "step (s)", fr->nvariants > 1 ? "  setup" :
		"");
	for (int i = 0; i < fr->nrows && i < FIT_SHOWN; i++)
		fit_row(f, fr, &fr->rows[i], i + 1);
	if (fr->nrows > FIT_SHOWN)
		fprintf(f, "  ... %d more (every one in the JSON report)\n",
			fr->nrows - FIT_SHOWN);
	if (fr->nrefused && spec->host)
		fprintf(f, "  refused: %d whose devices fit but whose host needs "
			"more than %s %s bytes a node:\n", fr->nrefused,
			ar_host_bound_name(spec->host, name),
			ar_fmt_count(a, spec->host->memory));
	for (int i = 0; i < fr->nrefused && i < FIT_SHOWN; i++)
		fit_row(f, fr, &fr->refused[i], 0);
	if (fr->nrefused > FIT_SHOWN)
		fprintf(f, "  ... %d more refused (every one in the JSON "
			"report)\n", fr->nrefused - FIT_SHOWN);
	fprintf(f, "  (largest: the largest device's total, estimated; host: "
		"the largest node's host total; the first, planned in full:)\n");
}
