/*
 * json.c — the JSON plan report, arenac's stable machine interface.
 *
 * Field names and meanings are a contract with tools and tests: add fields,
 * never rename them.  The report holds no timings or addresses, so the same
 * model and options always give byte-identical output.
 */
#include "emit.h"
#include "checkpoint.h"
#include "infer_ops.h"
#include "text.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

/* Quantization parameters longer than this are left to their tensor
 * (in the weights, or the arena when computed at run time). */
#define QUANT_VALUES_MAX 4096

void ar_json_str(FILE *f, const char *s)
{
	ArText out = ar_text_on(f);
	ar_text_json_str(&out, s);
	ar_text_close(&out);
}

static void tensor_ref(ArText *out, const ArGraph *g, int id)
{
	if (id < 0)
		ar_text_puts(out, "null");
	else
		ar_text_json_str(out, g->tensors[id].name);
}

/* Tensors by name as a JSON list. */
static void ref_list(ArText *out, const ArGraph *g, const int *ids, int n)
{
	ar_text_putc(out, '[');
	for (int i = 0; i < n; i++) {
		ar_text_puts(out, i ? ", " : "");
		tensor_ref(out, g, ids[i]);
	}
	ar_text_putc(out, ']');
}

/* The graph's inputs or outputs ("what") by name, in the model's order,
 * as the report's own entry (top) or a subgraph's field. */
static void write_io(FILE *f, const ArGraph *g, const char *what,
		     const int *ids, int n, bool top)
{
	ArText out = ar_text_on(f);
	ar_text_printf(&out, top ? "  \"%s\": " : ", \"%s\": ", what);
	ref_list(&out, g, ids, n);
	ar_text_puts(&out, top ? ",\n" : "");
	ar_text_close(&out);
}

/*
 * One plan's steps and tensors, the top one's or a subgraph's (sub, its
 * tensors' offsets absolute), and the id of its first subgraph in the
 * report's depth-first "subgraphs" list.
 */
typedef struct Scope {
	const ArGraph *g;
	const ArPlan *p;
	const ArSubPlan *sub;
	int first_id;
	const char *in;             /* indent of the list's entries */
} Scope;

/* Closes a list of scope sc's entries: "]" indented one level out. */
static void close_list(ArText *out, const Scope *sc)
{
	ar_text_putc(out, '\n');
	ar_text_putn(out, sc->in, strlen(sc->in) - 2);
	ar_text_putc(out, ']');
}

static int sub_id(const Scope *sc, int k)
{
	return ar_plan_sub_id(sc->p, sc->first_id, k);
}

/* A step's workspace and the subgraphs it runs, when it has them. */
static void write_step_extras(ArText *out, const Scope *sc, int node)
{
	const ArScratch *x = ar_plan_scratch(sc->p, node);
	bool any = false;

	if (x) {
		ar_text_printf(out, ", \"scratch_offset\": %" PRId64 ", \"scratch_bytes\""
			": %" PRId64, (sc->sub ? sc->sub->base : 0) + x->offset,
			x->bytes);
		if (sc->p->nregions > 0) {
			ar_text_puts(out, ", \"scratch_region\": ");
			ar_text_json_str(out, sc->p->regions[x->region].name);
		}
	}
	for (int k = 0; k < sc->p->nsubs; k++) {
		if (sc->p->subs[k].node != node)
			continue;
		ar_text_printf(out, "%s%d", any ? ", " : ", \"subgraphs\": [",
			sub_id(sc, k));
		any = true;
	}
	if (any)
		ar_text_puts(out, "]");
}

/* A string field's value: ", \"key\": \"s\"" (s needs no escapes). */
static void str_field(ArText *out, const char *key, const char *s)
{
	ar_text_puts(out, key);
	ar_text_putc(out, '"');
	ar_text_puts(out, s);
	ar_text_putc(out, '"');
}

/* A number field: key (", \"name\": ") then v. */
static void num_field(ArText *out, const char *key, int64_t v)
{
	ar_text_puts(out, key);
	ar_text_dec(out, v);
}

static void write_steps(FILE *f, const Scope *sc)
{
	ArText text = ar_text_on(f), *out = &text;
	const ArGraph *g = sc->g;
	const ArPlan *p = sc->p;

	ar_text_puts(out, "\"steps\": [");
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		ar_text_puts(out, s ? ",\n" : "\n");
		ar_text_puts(out, sc->in);
		num_field(out, "{\"index\": ", s);
		ar_text_puts(out, ", \"name\": ");
		ar_text_json_str(out, n->name);
		ar_text_puts(out, ", \"op\": ");
		ar_text_json_str(out, n->op);
		if (*n->domain) {
			ar_text_puts(out, ", \"domain\": ");
			ar_text_json_str(out, n->domain);
		}
		str_field(out, ", \"phase\": ", ar_phase_name(n->phase));
		ar_text_puts(out, p->noop[s] ? ", \"noop\": true, \"inputs\": " :
			     ", \"noop\": false, \"inputs\": ");
		ref_list(out, g, n->inputs, n->nexplicit);
		ar_text_puts(out, ", \"outputs\": ");
		ref_list(out, g, n->outputs, n->noutputs);
		if (n->ninputs > n->nexplicit) {
			/* Outer-scope reads of subgraphs: live during this step. */
			ar_text_puts(out, ", \"captures\": ");
			ref_list(out, g, n->inputs + n->nexplicit,
				 n->ninputs - n->nexplicit);
		}
		write_step_extras(out, sc, p->steps[s]);
		ar_text_puts(out, "}");
	}
	close_list(out, sc);
	ar_text_close(out);
}

/*
 * A shape; with run_time, a bounded tensor's data-dependent axes are -1
 * (their bound is in max_shape).
 */
static void write_dims(ArText *out, const ArTensor *t, bool run_time)
{
	ar_text_putc(out, '[');
	for (int d = 0; d < t->rank; d++) {
		if (d)
			ar_text_puts(out, ", ");
		ar_text_dec(out, run_time && (t->bounded >> d & 1u) ? -1 :
			    t->dims[d]);
	}
	ar_text_putc(out, ']');
}

/* v as printf's %.9g writes it. */
static void put_g9(ArText *out, double v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%.9g", v);
	ar_text_puts(out, buf);
}

/* Types ar_get_int reads exactly: the integers, packed ones included. */
static bool int_values(ArDType dt)
{
	return ar_dtype_is_int(dt) || dt == AR_DT_INT4 || dt == AR_DT_UINT4 ||
	       dt == AR_DT_INT2 || dt == AR_DT_UINT2;
}

/* The values of parameter tensor id as a JSON list, or null when they
 * are not known at compile time (or too many, or of a type not read:
 * float8 zero points). */
static void quant_values(ArText *out, const ArGraph *g, int id)
{
	const ArTensor *t = &g->tensors[id];
	int64_t n = ar_numel(t);
	bool fl = t->dtype == AR_DT_FLOAT || t->dtype == AR_DT_DOUBLE ||
		  t->dtype == AR_DT_FLOAT16 || t->dtype == AR_DT_BFLOAT16;

	if (!t->data || n < 0 || n > QUANT_VALUES_MAX ||
	    (!fl && !int_values(t->dtype))) {
		ar_text_puts(out, "null");
		return;
	}
	ar_text_putc(out, '[');
	for (int64_t k = 0; k < n; k++) {
		double v = fl ? ar_get_float(t, k) : 0;
		ar_text_puts(out, k ? ", " : "");
		if (!fl)
			ar_text_printf(out, "%" PRId64, ar_get_int(t, k));
		else if (isfinite(v))
			put_g9(out, v);
		else
			ar_text_puts(out, "null");
	}
	ar_text_putc(out, ']');
}

/*
 * "quant": the tensors holding a quantized tensor's scale and zero point
 * with their values when known at compile time; an omitted zero point is
 * zero.  axis null: one scale for the tensor; block_size null: not
 * blocked.
 */
static void quant_param(ArText *out, const ArGraph *g, const char *key, int id,
			const char *absent)
{
	ar_text_printf(out, "\"%s_tensor\": ", key);
	tensor_ref(out, g, id);
	ar_text_printf(out, ", \"%s\": ", key);
	if (id >= 0)
		quant_values(out, g, id);
	else
		ar_text_puts(out, absent);
}

static void write_quant(ArText *out, const ArGraph *g, const ArQuant *q)
{
	ar_text_puts(out, ", \"quant\": {");
	quant_param(out, g, "scale", q->scale, "null");
	ar_text_puts(out, ", ");
	quant_param(out, g, "zero_point", q->zero_point, "[0]");
	if (q->axis >= 0)
		ar_text_printf(out, ", \"axis\": %d", q->axis);
	else
		ar_text_puts(out, ", \"axis\": null");
	if (q->block > 0)
		ar_text_printf(out, ", \"block_size\": %" PRId64 "}", q->block);
	else
		ar_text_puts(out, ", \"block_size\": null}");
}

/*
 * Where tensor i of the scope lives: for a subgraph's, the enclosing
 * tensor it stands for resolved (ar_sub_where); *here says whether it has
 * bytes of this plan's own.
 */
static const ArSlot *place_of(const Scope *sc, int i, int64_t *offset,
			      int *region, bool *here)
{
	ArWhere w;
	*here = sc->p->slots[i].planned;
	if (!sc->sub) {
		*offset = sc->p->slots[i].offset;
		*region = sc->p->slots[i].region;
		return &sc->p->slots[i];
	}
	ar_sub_where(sc->sub, i, &w);
	*offset = w.offset;
	*region = w.region;
	return &w.p->slots[w.t];
}

/* One entry per tensor, written field by field rather than through
 * formats (their scanning was most of the report's time). */
static void write_tensors(FILE *f, const Scope *sc)
{
	ArText text = ar_text_on(f), *out = &text;
	const ArGraph *g = sc->g;
	const ArPlan *p = sc->p;
	/* Regions are named by the top plan's list. */
	const ArPlan *top = p;
	for (const ArSubPlan *u = sc->sub; u; u = u->up)
		top = u->up_p;

	ar_text_puts(out, "\"tensors\": [");
	for (int i = 0; i < g->ntensors; i++) {
		const ArTensor *t = &g->tensors[i];
		const ArSlot *s = &p->slots[i], *owner;
		int64_t offset;
		int region;
		bool here;

		owner = place_of(sc, i, &offset, &region, &here);
		ar_text_puts(out, i ? ",\n" : "\n");
		ar_text_puts(out, sc->in);
		ar_text_puts(out, "{\"name\": ");
		ar_text_json_str(out, t->name);
		str_field(out, ", \"dtype\": ", ar_dtype_name(t->dtype));
		ar_text_puts(out, ", \"shape\": ");
		if (t->rank < 0)
			ar_text_puts(out, "null");
		else
			write_dims(out, t, true);
		if (t->bounded) {
			ar_text_puts(out, ", \"bounded\": true, \"max_shape\": ");
			write_dims(out, t, false);
		}
		if (t->bytes < 0)
			ar_text_puts(out, ", \"bytes\": null");
		else
			num_field(out, ", \"bytes\": ", t->bytes);
		str_field(out, ", \"kind\": ", ar_kind_name(t->kind));
		if (owner->planned && top->nregions > 0) {
			ar_text_puts(out, ", \"region\": ");
			ar_text_json_str(out, top->regions[region].name);
		}
		if (owner->planned)
			num_field(out, ", \"offset\": ", offset);
		else
			ar_text_puts(out, ", \"offset\": null");
		if (here) {
			num_field(out, ", \"first_step\": ", s->first);
			num_field(out, ", \"last_step\": ", s->last);
		} else
			ar_text_puts(out, ", \"first_step\": null, \"last_step\": null");
		ar_text_puts(out, ", \"alias_of\": ");
		tensor_ref(out, g, s->alias_of);
		if (s->alias_of >= 0)
			num_field(out, ", \"alias_offset\": ", s->alias_offset);
		ar_text_puts(out, ", \"inplace_of\": ");
		tensor_ref(out, g, s->inplace_of);
		if (owner->io >= 0)
			num_field(out, ", \"io\": ", owner->io);
		if (t->off_device)
			ar_text_puts(out, ", \"host_memory\": true");
		if (t->quant.scale >= 0 || t->quant.zero_point >= 0)
			write_quant(out, g, &t->quant);
		if (p->outer && p->outer[i] >= 0) {
			ar_text_puts(out, ", \"outer\": ");
			tensor_ref(out, sc->sub->up_g, p->outer[i]);
		}
		ar_text_puts(out, "}");
	}
	close_list(out, sc);
	ar_text_close(out);
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

static int step_of(const ArPlan *p, int node)
{
	for (int s = 0; s < p->nsteps; s++)
		if (p->steps[s] == node)
			return s;
	return -1;
}

/*
 * The subgraphs of sc's plan and, after each, those nested in it: one
 * flat list, ids in that order, parent naming the enclosing one.  A
 * subgraph left unplanned says why ("reason"); a planned one has its
 * own steps and tensors, its tensors' offsets absolute.
 */
static void write_sub_list(FILE *f, const Scope *sc, int parent, bool *any)
{
	for (int k = 0; k < sc->p->nsubs; k++) {
		const ArSubPlan *sp = &sc->p->subs[k];
		const ArPlan *q = sp->plan;
		int id = sub_id(sc, k);

		fprintf(f, "%s\n    {\"id\": %d, \"parent\": ",
			*any ? "," : ",\n  \"subgraphs\": [", id);
		*any = true;
		if (parent < 0)
			fputs("null", f);
		else
			fprintf(f, "%d", parent);
		fputs(", \"node\": ", f);
		ar_json_str(f, sc->g->nodes[sp->node].name);
		fprintf(f, ", \"step\": %d, \"attribute\": ",
			step_of(sc->p, sp->node));
		ar_json_str(f, sp->attr);
		fprintf(f, ", \"kind\": \"%s\", \"nodes\": %d, \"planned\": %s",
			sp->loop ? "loop_body" : "branch", sp->g->nnodes,
			q ? "true" : "false");
		if (!q) {
			fputs(", \"reason\": ", f);
			ar_json_str(f, sp->why);
			fputs("}", f);
			continue;
		}
		fprintf(f, ", \"region_offset\": %" PRId64 ", \"arena_bytes\": %"
			PRId64 ", \"lower_bound_bytes\": %" PRId64
			", \"optimal\": %s, \"algorithm\": ", sp->base,
			q->arena_bytes, q->lower_bound,
			q->optimal ? "true" : "false");
		ar_json_str(f, q->algorithm ? q->algorithm : "none");
		write_io(f, sp->g, "inputs", sp->g->inputs, sp->g->ninputs,
			 false);
		write_io(f, sp->g, "outputs", sp->g->outputs,
			 sp->g->noutputs, false);
		{
			Scope in = {sp->g, q, sp, id + 1, "      "};
			fputs(",\n     ", f);
			write_steps(f, &in);
			fputs(",\n     ", f);
			write_tensors(f, &in);
			fputs("}", f);
			write_sub_list(f, &in, id, any);
		}
	}
}

/* --train: the memory bill; persistent parts are outside the arena (they
 * add up to weights_bytes), the logits and their gradient inside it. */
static void write_training(FILE *f, const ArTrainBill *b)
{
	fputs(",\n  \"training\": {\"optimizer\": ", f);
	ar_json_str(f, b->optimizer);
	fputs(", \"precision\": ", f);
	ar_json_str(f, b->precision);
	fputs(", \"checkpoint_policy\": ", f);
	ar_json_str(f, b->policy);
	fprintf(f, ", \"parameters\": %" PRId64 ", \"parameter_bytes\": %"
		PRId64 ", \"gradient_bytes\": %" PRId64
		", \"master_weight_bytes\": %" PRId64
		", \"optimizer_state_bytes\": %" PRId64
		", \"frozen_bytes\": %" PRId64 ", \"constant_bytes\": %" PRId64
		", \"arena_bytes\": %" PRId64 ", \"logits_bytes\": %" PRId64
		", \"logits_grad_bytes\": %" PRId64 ", \"loss_chunks\": %d"
		", \"total_bytes\": %" PRId64, b->parameter_count,
		b->parameter_bytes, b->gradient_bytes, b->master_weight_bytes,
		b->optimizer_state_bytes, b->frozen_bytes, b->constant_bytes,
		b->arena_bytes, b->logits_bytes, b->logits_grad_bytes,
		b->loss_chunks, b->total_bytes);
	fprintf(f, ", \"autocast_copy_bytes\": %" PRId64,
		b->autocast_copy_bytes);
	/* A plan is written only when it fits: fits is true or, without a
	 * bound, null. */
	fprintf(f, ", \"reserve_bytes\": %" PRId64 ", \"device_total_bytes\": "
		"%" PRId64, b->reserve_bytes, b->device_total_bytes);
	if (b->device_bytes)
		fprintf(f, ", \"device_bytes\": %" PRId64 ", \"headroom_bytes\": "
			"%" PRId64 ", \"fits\": true", b->device_bytes,
			b->headroom_bytes);
	else
		fputs(", \"device_bytes\": null, \"headroom_bytes\": null, "
		      "\"fits\": null", f);
	fprintf(f, ", \"trainable_parameters\": %" PRId64 ", "
		"\"frozen_parameters\": %" PRId64 ", \"quantized_base_bytes\": %"
		PRId64, b->parameter_count, b->frozen_count,
		b->quant_base_bytes);
	if (b->lora_rank)
		fprintf(f, ", \"lora\": {\"rank\": %" PRId64 ", \"alpha\": %g, "
			"\"adapted_linears\": %d, \"adapter_parameters\": %"
			PRId64 "}", b->lora_rank, b->lora_alpha,
			b->adapted_linears, b->adapter_parameters);
	else
		fputs(", \"lora\": null", f);
	if (b->cache_reserved_bytes)
		fprintf(f, ", \"allocator\": \"caching\", "
			"\"allocator_allocated_bytes\": %" PRId64 ", "
			"\"allocator_reserved_bytes\": %" PRId64,
			b->cache_allocated_bytes, b->cache_reserved_bytes);
	else
		fputs(", \"allocator\": \"static\", "
		      "\"allocator_allocated_bytes\": null, "
		      "\"allocator_reserved_bytes\": null", f);
	fprintf(f, ", \"grad_accum\": %d, \"step_flops\": %" PRId64,
		b->grad_accum, b->step_flops);
	if (b->max_batch)
		fprintf(f, ", \"max_batch\": %" PRId64, b->max_batch);
	else
		fputs(", \"max_batch\": null", f);
	if (b->max_seq) {
		fprintf(f, ", \"max_seq\": %" PRId64 ", \"max_seq_dim\": ",
			b->max_seq);
		ar_json_str(f, b->max_seq_dim);
	} else {
		fputs(", \"max_seq\": null, \"max_seq_dim\": null", f);
	}
	fprintf(f, ", \"host_state_bytes\": %" PRId64 ", \"gradient_dtype\": ",
		b->host_state_bytes);
	ar_json_str(f, b->gradient_dtype);
	fputs(", \"master_dtype\": ", f);
	ar_json_str(f, b->master_dtype);
	fputs(", \"state_dtype\": ", f);
	ar_json_str(f, b->state_dtype);
	fputs(", \"loss_dtype\": ", f);
	ar_json_str(f, b->loss_dtype);
	fprintf(f, ", \"loss_kept_bytes\": %" PRId64, b->loss_kept_bytes);
	fprintf(f, ", \"forward_flops\": %" PRId64 ", \"backward_flops\": %"
		PRId64 ", \"recompute_flops\": %" PRId64
		", \"checkpoint_candidates\": %d, \"selection_exact\": %s"
		", \"checkpoints\": [", b->forward_flops, b->backward_flops,
		b->recompute_flops, b->ncandidates, b->exact ? "true" : "false");
	for (int i = 0; i < b->ncheckpoints; i++) {
		fputs(i ? ", " : "", f);
		ar_json_str(f, b->checkpoints[i]);
	}
	fputs("]}", f);
}

const char *ar_model_name(const ArEmitInfo *info)
{
	const char *slash = strrchr(info->model_path, '/');
	return slash ? slash + 1 : info->model_path;
}

int ar_write_json(FILE *f, const ArGraph *g, const ArPlan *p,
		  const ArEmitInfo *info)
{
	Scope top = {g, p, NULL, 0, "    "};
	bool any = false;

	assert(p->noop || p->nsteps == 0);     /* ar_plan_facts ran */
	fputs("{\n  \"model\": ", f);
	ar_json_str(f, ar_model_name(info));
	fputs(",\n  \"arenac_version\": \"" ARENAC_VERSION "\"", f);
	fprintf(f, ",\n  \"alignment\": %" PRId64, p->align);
	/* --layout nhwc: 4-D activations channels-last, the channels-last
	 * convolutions' filters OHWI (depthwise [1, kH, kW, M]) */
	if (g->nhwc)
		fputs(",\n  \"layout\": \"nhwc\",\n"
		      "  \"weights_layout\": \"ohwi\"", f);
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
	write_io(f, g, "inputs", g->inputs, g->ninputs, true);
	write_io(f, g, "outputs", g->outputs, g->noutputs, true);
	fputs("  ", f);
	write_steps(f, &top);
	fputs(",\n  ", f);
	write_tensors(f, &top);
	write_sub_list(f, &top, -1, &any);
	if (any)
		fputs("\n  ]", f);
	if (info->training)
		write_training(f, info->training);
	if (info->devices)
		ar_write_devices_json(f, info);
	if (info->host)
		ar_write_host_json(f, info->host);
	fputs("\n}\n", f);
	return ferror(f) ? AR_EXIT_USAGE : AR_OK;
}
