/*
 * summary.c — what a person reads: the plan in a dozen lines.
 */
#include "summary.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"
#include "values.h"

/* Counts and sizes read the same here as in pictures and errors. */
static const char *grouped(int64_t v, char buf[AR_NUMFMT_LEN])
{
	return ar_fmt_count(buf, v);
}

static const char *human(int64_t v, char buf[AR_NUMFMT_LEN])
{
	return ar_fmt_size(buf, v);
}

static int planned_count(const ArPlan *p)
{
	int n = 0;
	for (int t = 0; t < p->ntensors; t++)
		n += p->slots[t].planned;
	return n;
}

static const char *peak_name(const ArGraph *g, const ArPlan *p)
{
	return p->nsteps ? g->nodes[p->steps[p->peak_step]].name : "-";
}

static const char *peak_op(const ArGraph *g, const ArPlan *p)
{
	return p->nsteps ? g->nodes[p->steps[p->peak_step]].op : "-";
}

static double efficiency(const ArPlan *p)
{
	return p->arena_bytes ? 100.0 * p->lower_bound / p->arena_bytes : 100.0;
}

/* Subgraphs: how many are planned, and any that are not, said. */
static void print_subgraphs(FILE *f, const ArPlan *p)
{
	ArSubCounts c;
	ar_plan_sub_counts(p, &c);
	if (!c.total)
		return;
	fprintf(f, "  subgraphs    %d: %d planned, each in its step's "
		"workspace", c.total, c.planned);
	if (c.never_run)
		fprintf(f, "; %d never run%s (a constant If condition skips "
			"them)", c.never_run, c.never_run == 1 ? "s" : "");
	if (c.unplanned)
		fprintf(f, "; %d NOT planned (see the warnings)", c.unplanned);
	fputc('\n', f);
}

/* The workspace of the peak step, which the peak's bytes include. */
static void print_peak_workspace(FILE *f, const ArGraph *g, const ArPlan *p)
{
	const ArScratch *x = p->nsteps ?
			     ar_plan_scratch(p, p->steps[p->peak_step]) : NULL;
	char a[32], name[64];
	if (!x)
		return;
	snprintf(name, sizeof name, "(workspace of %s)",
		 g->nodes[p->steps[p->peak_step]].name);
	fprintf(f, "    %-24s %12s bytes  %s[%" PRId64 ", %" PRId64
		")  step %d\n", name, grouped(x->bytes, a),
		p->nregions ? p->regions[x->region].name : "", x->offset,
		x->offset + x->bytes, p->peak_step);
}

void ar_print_summary(FILE *f, const char *model, const ArGraph *g,
		      const ArPlan *p)
{
	char a[32], b[32];
	int top[5], ntop = 0, nbounded = 0;
	ArSubCounts c;

	ar_plan_sub_counts(p, &c);
	fprintf(f, "%s: %d steps, %d tensors in the arena", model, p->nsteps,
		planned_count(p));
	if (c.planned)
		fprintf(f, ", %d more in %d subgraphs", c.tensors, c.planned);
	fputc('\n', f);
	fprintf(f, "  arena        %s bytes (%s)\n", grouped(p->arena_bytes, a),
		human(p->arena_bytes, b));
	if (p->nregions)        /* tiers: bound and efficiency are per memory */
		fprintf(f, "  lower bound  %s bytes live at the peak, all "
			"memories together\n", grouped(p->lower_bound, a));
	else
		fprintf(f, "  lower bound  %s bytes, efficiency %.1f%%%s\n",
			grouped(p->lower_bound, a), efficiency(p),
			!p->optimal ? "" : p->nsubs ? " (proven optimal, each "
			"subgraph in a region of its own)" :
			" (proven optimal)");
	fprintf(f, "  weights      %s bytes (%s)\n", grouped(p->weights_bytes, a),
		human(p->weights_bytes, b));
	fprintf(f, "  peak         step %d '%s' (%s)\n", p->peak_step,
		peak_name(g, p), peak_op(g, p));
	fprintf(f, "  algorithm    %s\n", p->algorithm ? p->algorithm : "none");
	for (int t = 0; t < g->ntensors; t++)
		nbounded += p->slots[t].planned && g->tensors[t].bounded;
	if (nbounded)
		fprintf(f, "  bounded      %d tensor%s planned for the upper "
			"bound of its run-time size (--bound)\n", nbounded,
			nbounded > 1 ? "s, each" : "");
	print_subgraphs(f, p);
	for (int r = 0; r < p->nregions; r++) {
		const ArRegion *x = &p->regions[r];
		fprintf(f, "  memory %-6s %s of %s bytes%s", x->name,
			grouped(x->used_bytes, a), grouped(x->capacity, b),
			x->optimal ? " (proven optimal)" : "");
		if (x->weights_bytes)
			fprintf(f, " (weights %s)", grouped(x->weights_bytes, a));
		fprintf(f, ", traffic %s bytes\n", grouped(x->traffic_bytes, a));
	}
	/* The largest tensors live at the peak step: what to shrink first. */
	for (int t = 0; t < g->ntensors; t++) {
		const ArSlot *s = &p->slots[t];
		int k;
		if (!s->planned || s->first > p->peak_step ||
		    s->last < p->peak_step || s->alias_of >= 0)
			continue;
		if (ntop == 5 &&
		    g->tensors[top[4]].bytes >= g->tensors[t].bytes)
			continue;
		k = ntop < 5 ? ntop++ : 4;
		top[k] = t;
		for (; k > 0 && g->tensors[top[k - 1]].bytes <
				g->tensors[top[k]].bytes; k--) {
			int x = top[k];
			top[k] = top[k - 1];
			top[k - 1] = x;
		}
	}
	if (ntop || (p->nsteps && ar_plan_scratch(p, p->steps[p->peak_step])))
		fputs("  live at the peak:\n", f);
	print_peak_workspace(f, g, p);
	for (int i = 0; i < ntop; i++) {
		const ArTensor *t = &g->tensors[top[i]];
		const ArSlot *s = &p->slots[top[i]];
		fprintf(f, "    %-24s %12s bytes  %s[%" PRId64 ", %" PRId64
			")  steps %d-%d%s\n", t->name, grouped(t->bytes, a),
			p->nregions ? p->regions[s->region].name : "",
			s->offset, s->offset + t->bytes, s->first, s->last,
			t->bounded ? "  (upper bound)" : "");
	}
}

/*
 * How much memory of which kind: weights by dtype (of wg, the model's
 * graph: a training step's graph holds gradients and optimizer state as
 * weights too; those are the bill's) and activations per tier.
 */
static void add_weights(const ArGraph *g, int64_t *by)
{
	for (int t = 0; t < g->ntensors; t++) {
		const ArTensor *x = &g->tensors[t];
		if ((x->kind == AR_TK_WEIGHT || x->kind == AR_TK_CONSTANT) &&
		    x->bytes > 0 && x->dtype < AR_DT_COUNT)
			ar_add64(by[x->dtype], x->bytes, &by[x->dtype]);
	}
}

/* Those of the subgraphs that run count too, as in the plan's figure. */
static void add_sub_weights(const ArSubPlan *sp, int id, int parent,
			    void *ctx)
{
	(void)id, (void)parent;
	if (sp->plan)
		add_weights(sp->g, ctx);
}

static void print_needs(FILE *f, const ArGraph *wg, const ArPlan *p)
{
	int64_t by[AR_DT_COUNT] = {0};
	char a[32], b[32], c[32], d[32], e[32];

	add_weights(wg, by);
	ar_plan_walk_subs(p, add_sub_weights, by);
	for (int k = 0; k < AR_DT_COUNT; k++)
		if (by[k])
			fprintf(f, "stats: weights %s %s bytes (%s)\n",
				ar_dtype_name((ArDType)k), grouped(by[k], a),
				human(by[k], b));
	for (int r = 0; r < p->nregions && p->algorithm; r++) {
		const ArRegion *x = &p->regions[r];
		fprintf(f, "stats: memory %s activations peak %s bytes, arena "
			"%s of %s bytes, weights %s bytes, traffic %s bytes",
			x->name, grouped(x->lower_bound, a),
			grouped(x->used_bytes, b), grouped(x->capacity, c),
			grouped(x->weights_bytes, d),
			grouped(x->traffic_bytes, e));
		if (x->bandwidth > 0)
			fprintf(f, " (%.3g s)", (double)x->traffic_bytes /
				x->bandwidth);
		fputc('\n', f);
	}
	if (p->nregions && p->algorithm)
		fprintf(f, "stats: placement %s\n", p->placement_optimal ?
			"proven optimal" : "best found");
}

/* Steps with a workspace, the largest, and the subgraphs behind them. */
static void print_workspace_stats(FILE *f, const ArGraph *g, const ArPlan *p)
{
	ArSubCounts c;
	int n = 0;
	int64_t most = 0;
	char a[32];

	for (int i = 0; i < g->nnodes; i++) {
		const ArScratch *x = ar_plan_scratch(p, i);
		n += x != NULL;
		if (x && x->bytes > most)
			most = x->bytes;
	}
	ar_plan_sub_counts(p, &c);
	if (n)
		fprintf(f, "stats: workspaces %d steps, largest %s bytes\n", n,
			grouped(most, a));
	if (c.total)
		fprintf(f, "stats: subgraphs %d, planned %d (%d tensors), never "
			"run %d, not planned %d\n", c.total, c.planned,
			c.tensors, c.never_run, c.unplanned);
}

/*
 * The name's layer or module: up to the first component (between '.' and
 * '/') that is or ends in a number ("l3", "layers.3", "encoder.layer.11"),
 * as TensorBoard's memory view groups by scope; else all but the last
 * component.  Its length in name.
 */
static size_t scope_len(const char *name)
{
	size_t n = strlen(name), last = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && name[j] != '.' && name[j] != '/')
			j++;
		if (j > i && name[j - 1] >= '0' && name[j - 1] <= '9')
			return j;
		if (j < n)
			last = j;
		i = j + 1;
	}
	return last ? last : n;
}

typedef struct Scope {
	const char *name;
	size_t len;
	int64_t bytes;
	int tensors;
} Scope;

static int by_bytes(const void *a, const void *b)
{
	const Scope *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strncmp(x->name, y->name, x->len < y->len ? x->len : y->len);
}

/* The scopes holding the most bytes at the peak step, the top ten. */
static void print_top_consumers(FILE *f, const ArGraph *g, const ArPlan *p)
{
	Scope *sc = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *sc);
	int *first = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	int *last = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	int n = 0, s = p->peak_step;
	char a[32];

	ar_plan_storage_spans(g, p, first, last);
	for (int t = 0; t < g->ntensors; t++) {
		const char *name = g->tensors[t].name;
		size_t len = scope_len(name);
		int k = 0;
		if (!p->slots[t].planned || p->slots[t].root != t ||
		    first[t] < 0 || first[t] > s || last[t] < s)
			continue;
		while (k < n && (sc[k].len != len ||
				 strncmp(sc[k].name, name, len)))
			k++;
		if (k == n)
			sc[n++] = (Scope){name, len, 0, 0};
		sc[k].bytes += g->tensors[t].bytes;
		sc[k].tensors++;
	}
	if (n)
		qsort(sc, (size_t)n, sizeof *sc, by_bytes);
	for (int k = 0; k < n && k < 10; k++)
		fprintf(f, "stats: top %d at the peak: %.*s %s bytes (%d "
			"tensor%s)\n", k + 1, (int)sc[k].len, sc[k].name,
			grouped(sc[k].bytes, a), sc[k].tensors,
			sc[k].tensors == 1 ? "" : "s");
	free(sc);
	free(first);
	free(last);
}

static void print_plan_stats(FILE *f, const ArGraph *g, const ArPlan *p)
{
	char a[32];
	fprintf(f, "stats: nodes %d, steps %d, tensors %d, in arena %d\n",
		g->nnodes, p->nsteps, g->ntensors, planned_count(p));
	fprintf(f, "stats: file_order_peak_bytes %s\n",
		grouped(p->file_order_peak, a));
	fprintf(f, "stats: lower_bound_bytes %s\n", grouped(p->lower_bound, a));
	/* Without an algorithm no offsets were assigned (the memory tiers
	 * did not fit): there is no arena to report. */
	if (p->algorithm) {
		fprintf(f, "stats: arena_bytes %s\n",
			grouped(p->arena_bytes, a));
		fprintf(f, "stats: efficiency %.2f%%\n", efficiency(p));
		fprintf(f, "stats: algorithm %s, optimal %s\n", p->algorithm,
			p->optimal ? "yes" : "no");
	}
	print_workspace_stats(f, g, p);
	fprintf(f, "stats: peak step %d '%s'\n", p->peak_step, peak_name(g, p));
	print_top_consumers(f, g, p);
	fprintf(f, "stats: plan time %.3f ms\n", p->plan_seconds * 1e3);
}

void ar_print_stats(FILE *f, const ArGraph *g, const ArPlan *p)
{
	print_plan_stats(f, g, p);
	print_needs(f, g, p);
}

void ar_print_train_plan_stats(FILE *f, const ArGraph *model,
			       const ArGraph *g, const ArPlan *p)
{
	print_plan_stats(f, g, p);
	print_needs(f, model, p);
}

static double percent(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The bound the step was checked against, and what it leaves. */
static void print_device(FILE *f, const ArTrainBill *b)
{
	char a[32], h[32], d[32], r[32], where[80];
	/* A memory of the device table is named by its kind and speed. */
	const ArDeviceInfo *dev = b->device_name ?
				  ar_device_find(b->device_name) : NULL;
	if (dev)
		cli_device_about(dev, where, sizeof where);
	else if (b->device_name)
		snprintf(where, sizeof where, "memory '%s'", b->device_name);
	else
		snprintf(where, sizeof where, "--budget");
	if (b->reserve_bytes)
		fprintf(f, "  %-16s %15s bytes  %10s  --reserve, on the device\n",
			"reserve", grouped(b->reserve_bytes, a),
			human(b->reserve_bytes, h));
	fprintf(f, "  %-16s %15s bytes  %10s  of %s (%s): fits, headroom "
		"%s\n", "on the device", grouped(b->device_total_bytes, a),
		human(b->device_total_bytes, h), human(b->device_bytes, d),
		where, human(b->headroom_bytes, r));
}

void ar_print_train_stats(FILE *f, const ArTrainBill *b)
{
	char a[32], h[32], note[96], gw[48], mw[48], sw[48], lk[80];
	const struct {
		const char *what;
		int64_t bytes;
		const char *where;
		bool always;
	} rows[] = {
		{"parameters", b->parameter_bytes, "persistent", true},
		{"gradients", b->gradient_bytes, gw, true},
		{"master weights", b->master_weight_bytes, mw, false},
		{"optimizer state", b->optimizer_state_bytes, sw, true},
		{"paged state", b->host_state_bytes,
		 "host memory (paged), not in the total", false},
		{"frozen params", b->frozen_bytes, "persistent, no gradient",
		 false},
		{"quantized base", b->quant_base_bytes,
		 "persistent, frozen, dequantised per use", false},
		{"constants", b->constant_bytes, "persistent", false},
		{"arena", b->arena_bytes, "planned", true},
		{"  logits", b->logits_bytes, note, true},
		{"  logits grad", b->logits_grad_bytes, note, false},
		{"  loss kept", b->loss_kept_bytes, lk, false},
		{"  weight copies", b->autocast_copy_bytes,
		 "in the arena, autocast's 16-bit casts", false},
		{"total", b->total_bytes, "", true},
	};
	snprintf(gw, sizeof gw, "persistent, %s", b->gradient_dtype);
	snprintf(mw, sizeof mw, "persistent, %s", b->master_dtype);
	snprintf(sw, sizeof sw, "persistent, %s", b->state_dtype);
	snprintf(lk, sizeof lk, "in the arena, %s log-probabilities%s",
		 b->loss_dtype, b->loss_chunks > 1 ? ", per chunk" : "");
	if (b->loss_chunks > 1)
		snprintf(note, sizeof note, "in the arena, one of %d chunks at "
			 "a time", b->loss_chunks);
	else
		snprintf(note, sizeof note, "in the arena");
	fprintf(f, "training step (optimizer %s, precision %s, checkpoint "
		"%s):\n", b->optimizer, b->precision, b->policy);
	fprintf(f, "  %-16s %15s", "trained params",
		grouped(b->parameter_count, a));
	if (b->frozen_count)
		fprintf(f, "  %.3g%% of %s", percent(b->parameter_count,
			b->parameter_count + b->frozen_count),
			grouped(b->parameter_count + b->frozen_count, h));
	fputc('\n', f);
	if (b->lora_rank)
		fprintf(f, "  %-16s rank %" PRId64 ", alpha %g: %d linears "
			"adapted, %s adapter parameters\n", "lora",
			b->lora_rank, b->lora_alpha, b->adapted_linears,
			grouped(b->adapter_parameters, a));
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
		if (rows[i].always || rows[i].bytes)
			fprintf(f, "  %-16s %15s bytes  %10s  %s\n", rows[i].what,
				grouped(rows[i].bytes, a),
				human(rows[i].bytes, h), rows[i].where);
	if (b->cache_reserved_bytes)
		fprintf(f, "  %-16s %15s bytes  %10s  reserved by PyTorch's caching "
			"allocator (allocated %s)\n", "caching alloc",
			grouped(b->cache_reserved_bytes, a),
			human(b->cache_reserved_bytes, h),
			grouped(b->cache_allocated_bytes, note));
	if (b->device_bytes)
		print_device(f, b);
	if (b->grad_accum > 1)
		fprintf(f, "  %-16s %d micro-batches a step, the plan one's; "
			"gradients kept across them, one update; step %s FLOPs\n",
			"grad accum", b->grad_accum, grouped(b->step_flops, a));
	fprintf(f, "  %-16s %15s FLOPs\n", "forward", grouped(b->forward_flops, a));
	fprintf(f, "  %-16s %15s FLOPs\n", "backward",
		grouped(b->backward_flops, a));
	fprintf(f, "  %-16s %15s FLOPs  %9.2f%% of forward\n", "recompute",
		grouped(b->recompute_flops, a),
		percent(b->recompute_flops, b->forward_flops));
	fprintf(f, "  checkpoints      %d of %d activations resident%s\n",
		b->ncheckpoints, b->ncandidates,
		!b->recompute_flops ? " (nothing recomputed)" :
		b->exact ? " (least recompute for the budget, proven)" : "");
}

void ar_print_train_sweep(FILE *f, const char *model, const ArSweepPoint *pts,
			  int n)
{
	char a[32], b[32];
	fprintf(f, "%s: budget sweep (optimal checkpoints)\n", model);
	fprintf(f, "  %15s  %15s  %11s  %12s\n", "budget", "arena",
		"checkpoints", "extra FLOPs");
	for (int i = 0; i < n; i++)
		fprintf(f, "  %15s  %15s  %11d  %11.2f%%%s\n",
			grouped(pts[i].budget, a),
			grouped(pts[i].arena_bytes, b), pts[i].ncheckpoints,
			pts[i].extra_percent,
			pts[i].smallest ? "  the smallest reachable arena" : "");
}
