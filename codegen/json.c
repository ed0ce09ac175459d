/*
 * json.c — the JSON plan report, arenac's stable machine interface.
 *
 * Field names and meanings are a contract with tools and tests: add fields,
 * never rename them.  The report holds no timings or addresses, so the same
 * model and options always give byte-identical output.
 */
#include "emit.h"
#include "checkpoint.h"

#include <inttypes.h>
#include <string.h>

void ar_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void tensor_ref(FILE *f, const ArGraph *g, int id)
{
	if (id < 0)
		fputs("null", f);
	else
		ar_json_str(f, g->tensors[id].name);
}

static void write_steps(FILE *f, const ArGraph *g, const ArPlan *p)
{
	fputs("  \"steps\": [", f);
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		fprintf(f, "%s\n    {\"index\": %d, \"name\": ", s ? "," : "", s);
		ar_json_str(f, n->name);
		fputs(", \"op\": ", f);
		ar_json_str(f, n->op);
		if (*n->domain) {
			fputs(", \"domain\": ", f);
			ar_json_str(f, n->domain);
		}
		fprintf(f, ", \"phase\": \"%s\", \"inputs\": [",
			ar_phase_name(n->phase));
		for (int i = 0; i < n->nexplicit; i++) {
			fputs(i ? ", " : "", f);
			tensor_ref(f, g, n->inputs[i]);
		}
		fputs("], \"outputs\": [", f);
		for (int i = 0; i < n->noutputs; i++) {
			fputs(i ? ", " : "", f);
			tensor_ref(f, g, n->outputs[i]);
		}
		fputs("]", f);
		if (n->ninputs > n->nexplicit) {
			/* Outer-scope reads of subgraphs: live during this step. */
			fputs(", \"captures\": [", f);
			for (int i = n->nexplicit; i < n->ninputs; i++) {
				fputs(i > n->nexplicit ? ", " : "", f);
				tensor_ref(f, g, n->inputs[i]);
			}
			fputs("]", f);
		}
		fputs("}", f);
	}
	fputs("\n  ],\n", f);
}

static void write_tensors(FILE *f, const ArGraph *g, const ArPlan *p)
{
	fputs("  \"tensors\": [", f);
	for (int i = 0; i < g->ntensors; i++) {
		const ArTensor *t = &g->tensors[i];
		const ArSlot *s = &p->slots[i];
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		ar_json_str(f, t->name);
		fprintf(f, ", \"dtype\": \"%s\", \"shape\": ",
			ar_dtype_name(t->dtype));
		if (t->rank < 0) {
			fputs("null", f);
		} else {
			fputc('[', f);
			for (int d = 0; d < t->rank; d++)
				fprintf(f, "%s%" PRId64, d ? ", " : "",
					t->dims[d]);
			fputc(']', f);
		}
		if (t->bytes < 0)
			fputs(", \"bytes\": null", f);
		else
			fprintf(f, ", \"bytes\": %" PRId64, t->bytes);
		fprintf(f, ", \"kind\": \"%s\"", ar_kind_name(t->kind));
		if (s->planned && p->nregions > 0) {
			fputs(", \"region\": ", f);
			ar_json_str(f, p->regions[s->region].name);
		}
		if (s->planned)
			fprintf(f, ", \"offset\": %" PRId64 ", \"first_step\": "
				"%d, \"last_step\": %d", s->offset, s->first,
				s->last);
		else
			fputs(", \"offset\": null, \"first_step\": null, "
			      "\"last_step\": null", f);
		fputs(", \"alias_of\": ", f);
		tensor_ref(f, g, s->alias_of);
		if (s->alias_of >= 0)
			fprintf(f, ", \"alias_offset\": %" PRId64,
				s->alias_offset);
		fputs(", \"inplace_of\": ", f);
		tensor_ref(f, g, s->inplace_of);
		fputs("}", f);
	}
	fputs("\n  ]", f);
}

/*
 * Memory tiers: one entry per region, fastest first.  traffic_seconds is
 * the estimate the placement minimised (null without bandwidths).
 */
static void write_regions(FILE *f, const ArPlan *p)
{
	if (p->nregions == 0)
		return;
	fprintf(f, ",\n  \"placement_optimal\": %s",
		p->placement_optimal ? "true" : "false");
	fputs(",\n  \"regions\": [", f);
	for (int r = 0; r < p->nregions; r++) {
		const ArRegion *x = &p->regions[r];
		fprintf(f, "%s\n    {\"name\": ", r ? "," : "");
		ar_json_str(f, x->name);
		fprintf(f, ", \"capacity_bytes\": %" PRId64 ", \"used_bytes\": "
			"%" PRId64 ", \"weights_bytes\": %" PRId64
			", \"lower_bound_bytes\": %" PRId64 ", \"peak_step\": "
			"%d, \"optimal\": %s", x->capacity, x->used_bytes,
			x->weights_bytes, x->lower_bound, x->peak_step,
			x->optimal ? "true" : "false");
		if (x->bandwidth > 0)
			fprintf(f, ", \"bandwidth_bytes_per_s\": %.17g",
				x->bandwidth);
		else
			fputs(", \"bandwidth_bytes_per_s\": null", f);
		fprintf(f, ", \"traffic_bytes\": %" PRId64, x->traffic_bytes);
		if (x->bandwidth > 0)
			fprintf(f, ", \"traffic_seconds\": %.9g}",
				(double)x->traffic_bytes / x->bandwidth);
		else
			fputs(", \"traffic_seconds\": null}", f);
	}
	fputs("\n  ]", f);
}

/* Subgraph tensors are not planned: say so, with how many there are. */
static void write_subgraphs(FILE *f, const ArGraph *g)
{
	bool any = false;
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].nattrs; j++) {
			const ArAttr *a = &g->nodes[i].attrs[j];
			if (!a->g)
				continue;
			fputs(any ? ",\n    {\"node\": " :
			      ",\n  \"subgraphs\": [\n    {\"node\": ", f);
			ar_json_str(f, g->nodes[i].name);
			fputs(", \"attribute\": ", f);
			ar_json_str(f, a->name);
			fprintf(f, ", \"nodes\": %d, \"tensors\": %d, "
				"\"planned\": false}", a->g->nnodes,
				a->g->ntensors);
			any = true;
		}
	if (any)
		fputs("\n  ]", f);
}

/* --train: the memory bill; persistent parts are outside the arena. */
static void write_training(FILE *f, const ArTrainBill *b)
{
	fputs(",\n  \"training\": {\"optimizer\": ", f);
	ar_json_str(f, b->optimizer);
	fputs(", \"checkpoint_policy\": ", f);
	ar_json_str(f, b->policy);
	fprintf(f, ", \"parameter_bytes\": %" PRId64 ", \"gradient_bytes\": %"
		PRId64 ", \"optimizer_state_bytes\": %" PRId64
		", \"arena_bytes\": %" PRId64 ", \"total_bytes\": %" PRId64
		", \"forward_flops\": %" PRId64 ", \"backward_flops\": %"
		PRId64 ", \"recompute_flops\": %" PRId64
		", \"checkpoint_candidates\": %d, \"selection_exact\": %s"
		", \"checkpoints\": [", b->parameter_bytes, b->gradient_bytes,
		b->optimizer_state_bytes, b->arena_bytes, b->total_bytes,
		b->forward_flops, b->backward_flops, b->recompute_flops,
		b->ncandidates, b->exact ? "true" : "false");
	for (int i = 0; i < b->ncheckpoints; i++) {
		fputs(i ? ", " : "", f);
		ar_json_str(f, b->checkpoints[i]);
	}
	fputs("]}", f);
}

int ar_write_json(FILE *f, const ArGraph *g, const ArPlan *p,
		  const ArEmitInfo *info)
{
	const char *model = strrchr(info->model_path, '/');
	model = model ? model + 1 : info->model_path;
	fputs("{\n  \"model\": ", f);
	ar_json_str(f, model);
	fputs(",\n  \"arenac_version\": \"" ARENAC_VERSION "\"", f);
	fprintf(f, ",\n  \"alignment\": %" PRId64, p->align);
	fprintf(f, ",\n  \"arena_bytes\": %" PRId64, p->arena_bytes);
	fprintf(f, ",\n  \"lower_bound_bytes\": %" PRId64, p->lower_bound);
	fprintf(f, ",\n  \"file_order_peak_bytes\": %" PRId64,
		p->file_order_peak);
	fprintf(f, ",\n  \"weights_bytes\": %" PRId64, p->weights_bytes);
	fputs(",\n  \"algorithm\": ", f);
	ar_json_str(f, p->algorithm ? p->algorithm : "none");
	fprintf(f, ",\n  \"optimal\": %s", p->optimal ? "true" : "false");
	/* Only then: the plan no longer depends on the input alone. */
	if (p->stopped_by_time_limit)
		fputs(",\n  \"stopped_by_time_limit\": true", f);
	fprintf(f, ",\n  \"peak_step\": %d", p->peak_step);
	write_regions(f, p);
	fputs(",\n  \"options\": ", f);
	ar_json_str(f, info->options ? info->options : "");
	fputs(",\n", f);
	write_steps(f, g, p);
	write_tensors(f, g, p);
	write_subgraphs(f, g);
	if (info->training)
		write_training(f, info->training);
	fputs("\n}\n", f);
	return ferror(f) ? AR_EXIT_USAGE : AR_OK;
}
