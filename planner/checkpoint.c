/*
 * checkpoint.c — which forward activations stay resident for the backward
 * pass, and the planned training step that results: the fixed policies,
 * the bill, what is said when nothing fits, and the budget sweep.
 *
 * A fixed policy's selection depends on the model alone; optimal is the
 * search of ckpt_search.c, which plans every fixed policy of ar_ckpt_fixed
 * the model has (layer and selective need layers and an attention core:
 * ckpt_layers.c) among its candidates, so it is never worse than any of
 * them that fits.  A policy added to the list (and to ar_ckpt_select or
 * ar_ckpt_layers) is held against optimal with nothing else to change.
 *
 * When nothing fits, the message says what the policy asked for reaches,
 * and separately the smallest arena the search reaches at all (and its
 * least recompute): one figure per model and options, whatever budget was
 * asked for.  optimal without a budget plans that smallest arena.
 */
#include "checkpoint.h"
#include "ckpt_search.h"
#include "numfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const ArCkptPolicy ar_ckpt_fixed[] = {AR_CKPT_NONE, AR_CKPT_ALL,
				      AR_CKPT_SQRT, AR_CKPT_LAYER,
				      AR_CKPT_SELECTIVE};
const int ar_ckpt_nfixed = sizeof ar_ckpt_fixed / sizeof *ar_ckpt_fixed;

const char *ar_ckpt_policy_name(ArCkptPolicy p)
{
	static const char *const names[] = {"none", "all", "sqrt", "optimal",
					    "layer", "selective"};
	return (unsigned)p < sizeof names / sizeof *names ? names[p]
							   : "invalid";
}

void ar_ckpt_select(const ArTrainModel *m, ArCkptPolicy pol, bool *res)
{
	int k = (int)ceil(sqrt((double)m->ncand));
	for (int i = 0; i < m->ncand; i++) {
		int t = m->cand[i];
		switch (pol) {
		case AR_CKPT_ALL:
			res[t] = false;
			break;
		case AR_CKPT_SQRT:
			res[t] = (i + 1) % (k ? k : 1) == 0;
			break;
		default:
			res[t] = true;
		}
	}
	if (pol != AR_CKPT_ALL)
		return;
	/* Layer boundaries: activations a node with parameters reads. */
	for (int i = 0; i < m->nfwd; i++) {
		const ArNode *n = &m->base->nodes[i];
		bool has_param = false;
		for (int j = 0; j < n->ninputs; j++)
			has_param = has_param || (n->inputs[j] >= 0 &&
						  m->param[n->inputs[j]]);
		for (int j = 0; has_param && j < n->ninputs; j++) {
			int t = n->inputs[j];
			if (t >= 0 && m->lead[t] >= 0)
				res[m->lead[t]] = true;
		}
	}
}

int ar_train_bill_parts(const ArTrainBill *b, ArBillPart *part)
{
	const ArBillPart all[AR_BILL_NPARTS] = {
		{"parameters", b->parameter_bytes},
		{"gradients", b->gradient_bytes},
		{"master weights", b->master_weight_bytes},
		{"optimizer state", b->optimizer_state_bytes},
		{"frozen parameters", b->frozen_bytes},
		{"quantized base", b->quant_base_bytes},
		{"constants", b->constant_bytes},
	};
	memcpy(part, all, sizeof all);
	return AR_BILL_NPARTS;
}

/* The bill's persistent parts from the model's memory. */
static void persistent_parts(ArTrainBill *b, const ArTrainMemory *x)
{
	b->parameter_bytes = x->parameter_bytes;
	b->gradient_bytes = x->gradient_bytes;
	b->master_weight_bytes = x->master_bytes;
	b->optimizer_state_bytes = x->state_bytes;
	b->frozen_bytes = x->frozen_bytes;
	b->quant_base_bytes = x->quant_base_bytes;
	b->constant_bytes = x->constant_bytes;
}

/*
 * What one device holds besides the arena: the persistent state, summed
 * saturating (the bill's total and the device check both start from it),
 * and its largest part, for messages.
 */
static int64_t persistent_bytes(const ArTrainMemory *x, const char **largest,
				int64_t *largest_bytes)
{
	ArTrainBill b = {0};
	ArBillPart part[AR_BILL_NPARTS];
	int n;
	int64_t sum = 0;

	persistent_parts(&b, x);
	n = ar_train_bill_parts(&b, part);
	*largest = part[0].name;
	*largest_bytes = part[0].bytes;
	for (int k = 0; k < n; k++) {
		sum = ar_train_add(sum, part[k].bytes);
		if (part[k].bytes > *largest_bytes) {
			*largest = part[k].name;
			*largest_bytes = part[k].bytes;
		}
	}
	return sum;
}

static void fill_bill(ArTrainResult *r, ArCkptPolicy pol, bool exact,
		      int evals)
{
	const ArTrainModel *m = r->model;
	const ArTrainMemory *x = &m->mem;
	ArTrainBill *b = &r->bill;
	const char *largest;
	int64_t big;
	b->optimizer = ar_optimizer_name(m->spec.optimizer);
	b->precision = ar_precision_name(m->spec.precision);
	b->policy = ar_ckpt_policy_name(pol);
	b->parameter_count = x->parameter_count;
	persistent_parts(b, x);
	b->host_state_bytes = x->host_state_bytes;
	b->gradient_dtype = x->grad_dtype;
	b->master_dtype = x->master_dtype;
	b->state_dtype = x->state_dtype;
	b->frozen_count = x->frozen_count + m->quant_params;
	b->lora_rank = m->spec.lora.rank;
	b->lora_alpha = m->spec.lora.alpha;
	b->adapted_linears = m->lora.adapted_linears;
	b->adapter_parameters = m->lora.adapter_parameters;
	b->arena_bytes = r->plan->arena_bytes;
	b->logits_bytes = x->logits_bytes;
	b->logits_grad_bytes = x->logits_grad_bytes;
	b->loss_kept_bytes = x->loss_kept_bytes;
	b->loss_dtype = x->loss_dtype;
	b->autocast_copy_bytes = x->autocast_copy_bytes;
	b->loss_chunks = m->spec.loss_chunks > 1 ? m->spec.loss_chunks : 1;
	b->total_bytes = ar_train_add(persistent_bytes(x, &largest, &big),
				      b->arena_bytes);
	b->forward_flops = m->forward_flops;
	b->backward_flops = m->backward_flops;
	b->recompute_flops = ar_train_recompute_flops(m, r->resident);
	b->grad_accum = m->spec.grad_accum > 1 ? m->spec.grad_accum : 1;
	b->step_flops = ar_train_mul(ar_train_add(ar_train_add(
		b->forward_flops, b->backward_flops), b->recompute_flops),
		b->grad_accum);
	b->checkpoints = ar_xcalloc((size_t)m->ncand + 1, sizeof(char *));
	b->ncandidates = m->ncand;
	for (int i = 0; i < m->ncand; i++)
		if (r->resident[m->cand[i]])
			b->checkpoints[b->ncheckpoints++] =
				m->base->tensors[m->cand[i]].name;
	b->exact = exact;
	b->evaluations = evals;
}

static double pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "the smallest arena ... is X bytes, at Y recompute FLOPs (Z% ...)" */
static void smallest_text(const ArCkptSearch *s, int sm, char *buf,
			  size_t len)
{
	char a[AR_NUMFMT_LEN], f[AR_NUMFMT_LEN];
	snprintf(buf, len, "%s bytes, at %s recompute FLOPs (%.1f%% of the "
		 "forward pass)", ar_fmt_count(a, s->e[sm].arena),
		 ar_fmt_count(f, s->e[sm].cost),
		 pct(s->e[sm].cost, s->m->forward_flops));
}

/* Exit 3 for optimal: nothing fits o->budget. */
static int optimal_fails(ArCkptSearch *s, const ArTrainOptions *o,
			 ArTrainResult *r, const ArWatch *w, ArError *err)
{
	char b[AR_NUMFMT_LEN], text[200];
	int sm = ar_ckpt_smallest(s);
	if (sm < 0)
		return s->rc;
	r->min_arena = s->e[sm].arena;
	r->min_arena_recompute = s->e[sm].cost;
	smallest_text(s, sm, text, sizeof text);
	return ar_fail(err, AR_EXIT_BUDGET, "--train: no checkpoint selection "
		       "fits the budget of %s bytes; the smallest reachable "
		       "arena is %s%s", ar_fmt_count(b, o->budget), text,
		       w->fired ? " (--time-limit stopped the search)" : "");
}

/* Exit 3 for a fixed policy over o->budget: what it reaches, and what
 * optimal does there. */
static int fixed_fails(ArCkptSearch *s, const ArTrainOptions *o, int i,
		       ArTrainResult *r, ArError *err)
{
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN], text[200], then[400];
	const char *name = ar_ckpt_policy_name(o->policy);
	int sm = ar_ckpt_smallest(s), opt;
	bool exact;
	if (sm < 0)
		return s->rc;
	r->policy_arena = s->e[i].arena;
	r->min_arena = s->e[sm].arena;
	r->min_arena_recompute = s->e[sm].cost;
	smallest_text(s, sm, text, sizeof text);
	if (s->e[sm].arena > o->budget) {
		snprintf(then, sizeof then, "no selection fits it: the smallest "
			 "arena any reaches is %s", text);
	} else {
		if ((opt = ar_ckpt_optimal(s, o->budget, &exact)) < 0)
			return s->rc ? s->rc : AR_EXIT_INTERNAL;
		snprintf(then, sizeof then, "--checkpoint optimal fits it, "
			 "recomputing %s FLOPs (%.1f%% of the forward pass); "
			 "the smallest arena it reaches is %s",
			 ar_fmt_count(a, s->e[opt].cost),
			 pct(s->e[opt].cost, s->m->forward_flops), text);
	}
	return ar_fail(err, AR_EXIT_BUDGET, "--train: --checkpoint %s needs an "
		       "arena of %s bytes (%.1f%% recompute), above the budget "
		       "of %s bytes; %s", name, ar_fmt_count(a, s->e[i].arena),
		       pct(s->e[i].cost, s->m->forward_flops),
		       ar_fmt_count(b, o->budget), then);
}

/* "memory 'hbm' (11,811,160,064 bytes)" or "the --budget of ... bytes". */
static void device_text(const ArTrainOptions *o, char *buf, size_t len)
{
	char d[AR_NUMFMT_LEN];
	ar_fmt_count(d, o->device_bytes);
	if (o->device_name)
		snprintf(buf, len, "memory '%s' (%s bytes)", o->device_name, d);
	else
		snprintf(buf, len, "the --budget of %s bytes", d);
}

/*
 * One meaning of "fits" for a training step: the whole device, not the
 * arena alone.  The arena gets what the persistent state and the reserve
 * leave of the device (*room); none left is AR_EXIT_BUDGET before any
 * plan, naming the largest part and how far over it is.  Without a
 * device, *held alone (what the device total starts from).
 */
static int device_room(const ArTrainOptions *o, const ArTrainMemory *x,
		       int64_t *held, int64_t *room, ArError *err)
{
	char dev[120], a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN], c[AR_NUMFMT_LEN],
	     r[AR_NUMFMT_LEN];
	const char *largest;
	int64_t big, p = persistent_bytes(x, &largest, &big);

	*held = ar_train_add(p, o->reserve);
	*room = o->device_bytes - *held;
	if (!o->device_bytes || *room > 0)
		return AR_OK;
	device_text(o, dev, sizeof dev);
	ar_fmt_count(r, o->reserve);
	return ar_fail(err, AR_EXIT_BUDGET, "--train: the step does not fit "
		       "%s: the persistent state alone takes %s bytes (the "
		       "largest part: %s, %s bytes)%s%s%s, %s bytes over "
		       "before any activation", dev, ar_fmt_count(a, p),
		       largest, ar_fmt_count(b, big),
		       o->reserve ? " and --reserve " : "",
		       o->reserve ? r : "", o->reserve ? " bytes more" : "",
		       ar_fmt_count(c, -*room));
}

/* A failure to fit the arena: say what the device bound left it. */
static void explain_room(const ArTrainOptions *o, int64_t held,
			 int64_t room, ArError *err)
{
	char dev[120], h[AR_NUMFMT_LEN], m[AR_NUMFMT_LEN];
	size_t len = strlen(err->msg);
	device_text(o, dev, sizeof dev);
	snprintf(err->msg + len, sizeof err->msg - len, " (%s less the "
		 "persistent state and --reserve, %s bytes, leaves %s bytes "
		 "for the arena)", dev, ar_fmt_count(h, held),
		 ar_fmt_count(m, room));
}

/* The device's part of the bill: the arena's bytes on it, and the rest. */
static void fill_device(ArTrainResult *r, const ArTrainOptions *o,
			int64_t held)
{
	ArTrainBill *b = &r->bill;
	const ArPlan *p = r->plan;
	int64_t arena = p->nregions ? p->regions[0].used_bytes : p->arena_bytes;
	b->device_bytes = o->device_bytes;
	b->device_name = o->device_name;
	b->reserve_bytes = o->reserve;
	b->device_total_bytes = ar_train_add(held, arena);
	b->headroom_bytes = o->device_bytes ?
			    o->device_bytes - b->device_total_bytes : 0;
}

/*
 * --allocator caching: the device holds what PyTorch's caching allocator
 * reserves for this step (everything, persistent state included, in one
 * allocator) plus the reserve; over the device is exit 3 naming what the
 * rounding and fragmentation add to the plan.
 */
static int caching(ArTrainResult *r, const ArTrainOptions *o, ArError *err)
{
	ArTrainBill *b = &r->bill;
	ArCacheStats st;
	char dev[120], x[AR_NUMFMT_LEN], y[AR_NUMFMT_LEN], z[AR_NUMFMT_LEN];
	int64_t planned = b->device_total_bytes - o->reserve;

	ar_caching_simulate(r->graph, r->plan, o->device_bytes ?
			    o->device_bytes - o->reserve : 0, &st);
	b->cache_allocated_bytes = st.allocated_peak;
	b->cache_reserved_bytes = st.reserved_peak;
	b->device_total_bytes = ar_train_add(st.reserved_peak, o->reserve);
	b->headroom_bytes = o->device_bytes ?
			    o->device_bytes - b->device_total_bytes : 0;
	if (!o->device_bytes || b->headroom_bytes >= 0)
		return AR_OK;
	device_text(o, dev, sizeof dev);
	return ar_fail(err, AR_EXIT_BUDGET, "--train: with PyTorch's caching "
		       "allocator the step reserves %s bytes (%s more than the "
		       "plan's %s: rounding and fragmentation); with --reserve "
		       "it does not fit %s", ar_fmt_count(x, st.reserved_peak),
		       ar_fmt_count(y, st.reserved_peak - planned),
		       ar_fmt_count(z, planned), dev);
}

int ar_train_plan(const ArGraph *fwd, const ArTrainOptions *o,
		  ArTrainResult *r, ArError *err)
{
	ArTrainOptions eff = *o;
	ArCkptSearch s;
	ArWatch watch;
	bool exact = false;
	int64_t held = 0, room = 0;
	int rc, i;

	memset(r, 0, sizeof *r);
	if ((rc = ar_train_model(fwd, &o->spec, &r->model, err)))
		return rc;
	if ((rc = device_room(o, &r->model->mem, &held, &room, err)))
		return rc;
	/* With memories the tiers leave held bytes of the first; a --budget
	 * bounds the arena to the room directly. */
	if (o->device_bytes && o->plan.nmemories)
		eff.plan.held = held;
	if (o->device_bytes && (!o->device_name || !o->plan.nmemories))
		eff.budget = o->budget && o->budget < room ? o->budget : room;
	o = &eff;
	ar_watch_start(&watch, o->plan.time_limit);
	r->resident = ar_xcalloc((size_t)r->model->base->ntensors + 1,
				 sizeof *r->resident);
	ar_ckpt_search_init(&s, r->model, o, &watch, err);
	if (o->policy == AR_CKPT_OPTIMAL) {
		int64_t budget = o->budget;
		if (!budget) {
			if ((i = ar_ckpt_smallest(&s)) < 0)
				goto fail;
			budget = s.e[i].arena;
		}
		s.keep_budget = budget;
		i = ar_ckpt_optimal(&s, budget, &exact);
		if (i < 0) {
			rc = s.rc ? s.rc : optimal_fails(&s, o, r, &watch, err);
			goto out;
		}
	} else {
		s.keep_budget = INT64_MAX;
		if (o->policy == AR_CKPT_SELECTIVE &&
		    ar_ckpt_selective_empty(r->model))
			ar_warn(&o->plan.diag, "--checkpoint selective: the "
				"attention cores are fused kernels "
				"(--attention), which keep no score matrix: "
				"nothing is left to recompute, every activation "
				"stays (as --checkpoint none)");
		if ((i = ar_ckpt_plan_fixed(&s, o->policy)) < 0)
			goto fail;
		/* No recompute is the least there is. */
		exact = o->policy == AR_CKPT_NONE;
		if (o->budget && s.e[i].arena > o->budget) {
			rc = fixed_fails(&s, o, i, r, err);
			goto out;
		}
	}
	ar_ckpt_resident(&s, i, r->resident);
	if ((rc = ar_ckpt_take(&s, i, &r->graph, &r->plan)))
		goto out;
	r->plan->stopped_by_time_limit = watch.fired;
	fill_bill(r, o->policy, exact, s.n);
	fill_device(r, o, held);
	if (o->allocator_caching)
		rc = caching(r, o, err);
	goto out;
fail:
	rc = s.rc;
out:
	/* The tiers' own message names what the persistent state left. */
	if (rc == AR_EXIT_BUDGET && o->device_bytes &&
	    (!o->device_name || !o->plan.nmemories))
		explain_room(o, held, room, err);
	ar_ckpt_search_free(&s);
	return rc;
}

void ar_train_result_free(ArTrainResult *r)
{
	free(r->bill.checkpoints);
	free(r->resident);
	ar_plan_free(r->plan);
	ar_graph_free(r->graph);
	ar_train_model_free(r->model);
	memset(r, 0, sizeof *r);
}

static void sweep_point(const ArCkptSearch *s, int i, int64_t budget,
			const ArWatch *w, ArSweepPoint *p)
{
	memset(p, 0, sizeof *p);
	p->budget = budget;
	p->stopped_by_time_limit = w->fired;
	if (i < 0)
		return;
	p->feasible = true;
	p->arena_bytes = s->e[i].arena;
	p->recompute_flops = s->e[i].cost;
	p->extra_percent = pct(s->e[i].cost, s->m->forward_flops);
	for (int k = 0; k < s->m->ncand; k++)
		p->ncheckpoints += s->e[i].sel[k];
}

int ar_train_sweep(const ArGraph *fwd, const ArTrainOptions *o,
		   ArSweepPoint **pts, int *npts, ArError *err)
{
	ArTrainModel *m;
	ArCkptSearch s;
	ArWatch watch;
	int64_t full, lo, prev = -1;
	int rc, none, sm, best = -1, n = 0;
	ArSweepPoint *p;

	*pts = NULL;
	*npts = 0;
	if ((rc = ar_train_model(fwd, &o->spec, &m, err)))
		return rc;
	ar_watch_start(&watch, o->plan.time_limit);
	ar_ckpt_search_init(&s, m, o, &watch, err);
	if ((none = ar_ckpt_plan_fixed(&s, AR_CKPT_NONE)) < 0 ||
	    (sm = ar_ckpt_smallest(&s)) < 0)
		goto out;
	full = s.e[none].arena;
	lo = o->budget ? o->budget : s.e[sm].arena;
	if (lo > full)
		lo = full;
	p = *pts = ar_xcalloc(12, sizeof **pts);
	/* From the smallest budget up, each row keeping the best of the
	 * rows below it: what fits a budget fits every larger one. */
	for (int k = 10; k >= 0 && !s.rc; k--) {
		int64_t b = full - (full - lo) * k / 10;
		bool exact;
		int i;
		if (b == prev)
			continue;
		prev = b;
		i = b < s.e[sm].arena ? -1 : ar_ckpt_optimal(&s, b, &exact);
		if (i >= 0 && (best < 0 || s.e[i].cost < s.e[best].cost))
			best = i;
		sweep_point(&s, i < 0 ? -1 : best, b, &watch, &p[n++]);
	}
	/* Largest budget first; the smallest reachable arena last, where the
	 * budgets went below it. */
	for (int i = 0; i < n / 2; i++) {
		ArSweepPoint t = p[i];
		p[i] = p[n - 1 - i];
		p[n - 1 - i] = t;
	}
	if (n > 0 && !p[n - 1].feasible) {
		while (n > 1 && !p[n - 2].feasible)
			n--;
		sweep_point(&s, sm, s.e[sm].arena, &watch, &p[n - 1]);
	}
	if (n > 0 && p[n - 1].budget == s.e[sm].arena)
		p[n - 1].smallest = true;
	*npts = n;
	if (s.rc) {
		free(*pts);
		*pts = NULL;
		*npts = 0;
	}
out:
	rc = s.rc;
	ar_ckpt_search_free(&s);
	ar_train_model_free(m);
	return rc;
}
