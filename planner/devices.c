/*
 * devices.c — one training step on many devices, planned from the real
 * graph (devices.h has the model of ranks).
 *
 *   1. One device's forward graph: the model's, or with --tp its share
 *      (train/parallel.h), collectives and their bytes included; and its
 *      layers (train/layers.h).
 *   2. Its stages: the whole graph, or with --pp a split of its layers
 *      (train/stage.h): the split that minimises the largest device total
 *      by an estimate (pipeline.c), and the best split by layer count,
 *      both planned; the one whose largest device total is smaller is
 *      kept (the split by layer count on a tie), so the split is never
 *      worse than the best split by layer count.  The estimate is affine
 *      in a stage's layer count between probe plans of one and two layers
 *      of each kind of stage (first, middle, last), layers found as
 *      repeated blocks being alike.
 *   3. Each stage's training step planned like any model (checkpoint.h),
 *      with the microbatches it holds at once (pipeline.c), billed per
 *      device with ZeRO (zero.c) and offload (devices_stage.c); every
 *      plan verified.
 *   4. Every rank's bill, the step-time estimate and the capacities
 *      (devices_bill.c).
 * --fit (fit.c) asks the same planner for estimates of many
 * configurations that share a device graph and its probes.
 */
#include "devices_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ar_devices_spec_default(ArDevicesSpec *s)
{
	memset(s, 0, sizeof *s);
	s->dp = s->tp = s->pp = s->microbatches = 1;
	s->bucket = AR_DEFAULT_BUCKET;
	s->device_flops = AR_DEFAULT_FLOPS;
	s->link_bandwidth = AR_DEFAULT_LINK;
	for (int k = 0; k < AR_OFF_KINDS; k++)
		s->offload[k] = -1;
}

const char *ar_schedule_name(ArSchedule s)
{
	return s == AR_SCHED_GPIPE ? "gpipe" : "1f1b";
}

static void free_stages(ArStage *st, int n)
{
	for (int i = 0; st && i < n; i++)
		ar_train_result_free(&st[i].train);
	free(st);
}

/* The numbers of kind k's probe of m layers: a stage of that kind
 * planned alone (the first m layers, the m after the first, the last m). */
static const ArStageNumbers *probe(ArDevicePlanner *c,
				   const ArDevicesSpec *s, int k, int m)
{
	int n = c->l.n, a, stage;
	a = k == AR_KIND_FIRST ? 0 : k == AR_KIND_MIDDLE ? 1 : n - m;
	stage = k == AR_KIND_FIRST ? 0 : k == AR_KIND_MIDDLE ? 1 : s->pp - 1;
	ArStage st;
	if (!c->probed[k][m - 1] && !c->rc) {
		c->rc = ar_stage_plan(c, s, a, a + m, stage, true, false, &st,
				   &c->probe[k][m - 1]);
		ar_train_result_free(&st.train);
		c->probed[k][m - 1] = true;
	}
	return &c->probe[k][m - 1];
}

static int64_t lerp(int64_t x1, int64_t x2, int m)
{
	return x1 + (int64_t)(m - 1) * (x2 - x1);
}

/* A stage of m layers of kind k, affine between its probes. */
static void numbers_of(ArDevicePlanner *c, const ArDevicesSpec *s, int k,
		       int m, ArStageNumbers *n)
{
	const ArStageNumbers *p = probe(c, s, k, 1);
	const ArStageNumbers *q = m > 1 ? probe(c, s, k, 2) : p;
	ArTrainBill *b = &n->bill;
	*n = *p;
	b->parameter_count = lerp(p->bill.parameter_count,
				  q->bill.parameter_count, m);
	b->parameter_bytes = lerp(p->bill.parameter_bytes,
				  q->bill.parameter_bytes, m);
	b->gradient_bytes = lerp(p->bill.gradient_bytes,
				 q->bill.gradient_bytes, m);
	b->master_weight_bytes = lerp(p->bill.master_weight_bytes,
				      q->bill.master_weight_bytes, m);
	b->optimizer_state_bytes = lerp(p->bill.optimizer_state_bytes,
					q->bill.optimizer_state_bytes, m);
	b->host_state_bytes = lerp(p->bill.host_state_bytes,
				   q->bill.host_state_bytes, m);
	b->frozen_bytes = lerp(p->bill.frozen_bytes, q->bill.frozen_bytes, m);
	b->quant_base_bytes = lerp(p->bill.quant_base_bytes,
				   q->bill.quant_base_bytes, m);
	b->constant_bytes = lerp(p->bill.constant_bytes,
				 q->bill.constant_bytes, m);
	n->gathered = p->gathered > q->gathered ? p->gathered : q->gathered;
	n->arena = lerp(p->arena, q->arena, m);
	n->stash = lerp(p->stash, q->stash, m);
	n->fetched = lerp(p->fetched, q->fetched, m);
	n->flops = lerp(p->flops, q->flops, m);
	n->comm = lerp(p->comm, q->comm, m);
	n->again = lerp(p->again, q->again, m);
}

static int kind_of(int stage, int pp)
{
	return stage == 0 ? AR_KIND_FIRST : stage == pp - 1 ? AR_KIND_LAST
						       : AR_KIND_MIDDLE;
}

/* For the split search: the estimated device total of a stage. */
typedef struct EstCtx {
	ArDevicePlanner *c;
	const ArDevicesSpec *s;
} EstCtx;

static int64_t estimate(void *ctx, int stage, int a, int b)
{
	EstCtx *e = ctx;
	ArStageNumbers n;
	ArStage st;
	numbers_of(e->c, e->s, kind_of(stage, e->s->pp), b - a, &n);
	if (e->c->rc)
		return INT64_MAX;
	memset(&st, 0, sizeof st);
	ar_stage_apply(e->s, &n, stage, &st);
	return st.bill.total;
}

static int check_spec(const ArDevicesSpec *s, ArError *err)
{
	if (s->dp < 1 || s->tp < 1 || s->pp < 1 || s->microbatches < 1 ||
	    s->zero < 0 || s->zero > 3)
		return ar_fail(err, AR_EXIT_USAGE, "a device count, ZeRO stage "
			       "or microbatch count out of range");
	if (s->sp && s->tp < 2)
		return ar_fail(err, AR_EXIT_USAGE, "--sequence-parallel splits "
			       "the sequence over the tensor-parallel devices: "
			       "it needs --tp 2 or more");
	for (int k = 0; k < AR_OFF_KINDS; k++)
		if (s->offload[k] == 0 || s->offload[k] >= s->nmemories)
			return ar_fail(err, AR_EXIT_USAGE, "--offload needs a "
				       "--memory besides the device's (the "
				       "first)");
	return AR_OK;
}

int ar_planner_open(const ArGraph *fwd, const ArTrainOptions *o,
		    const ArDevicesSpec *s, ArDevicePlanner **out,
		    ArError *err)
{
	ArDevicePlanner *c = ar_xcalloc(1, sizeof *c);
	int rc;
	*out = NULL;
	c->o = o;
	c->s = *s;
	c->d = fwd;
	c->err = err;
	if ((rc = check_spec(s, err))) {
		free(c);
		return rc;
	}
	if (s->tp > 1) {
		ArTpSpec ts = {s->tp, s->sp, o->layer_boundary};
		if ((rc = ar_tp_graph(fwd, &ts, &c->tg, err))) {
			free(c);
			return rc;
		}
		c->d = c->tg.g;
		c->comm = c->tg.comm;
	}
	/* Layers are a fact to use where found; --pp needs them. */
	if (ar_layers_find(c->d, c->d->nnodes, o->layer_boundary, &c->l, err))
		memset(&c->l, 0, sizeof c->l);
	*out = c;
	return AR_OK;
}

void ar_planner_close(ArDevicePlanner *c)
{
	if (!c)
		return;
	ar_layers_free(&c->l);
	ar_tp_graph_free(&c->tg);
	free(c);
}

int ar_planner_layers(const ArDevicePlanner *c)
{
	return c->l.n;
}

/* With --pp: the device graph's layers, enough of them. */
static int need_layers(ArDevicePlanner *c, int pp, ArError *err)
{
	ArLayers l;
	char why[sizeof err->msg];
	int rc;
	if (c->l.n >= pp)
		return AR_OK;
	if (!c->l.n) {
		/* Again, for the message. */
		rc = ar_layers_find(c->d, c->d->nnodes, c->o->layer_boundary,
				    &l, err);
		if (rc) {
			snprintf(why, sizeof why, "%s", err->msg);
			return ar_fail(err, rc, "--pp %d: %s", pp, why);
		}
		ar_layers_free(&l);
	}
	return ar_fail(err, AR_EXIT_USAGE, "--pp %d: the model has %d layer%s, "
		       "fewer than the stages", pp, c->l.n,
		       c->l.n == 1 ? "" : "s");
}

/* The split the estimate prefers, and the best even one. */
static void splits(ArDevicePlanner *c, const ArDevicesSpec *s, int *bal,
		   int *even)
{
	EstCtx e = {c, s};
	ar_pipeline_split(c->l.n, s->pp, estimate, &e, bal);
	ar_pipeline_even(c->l.n, s->pp, estimate, &e, even);
}

int ar_planner_estimate(ArDevicePlanner *c, const ArDevicesSpec *s,
			ArDevicesResult *r, ArError *err)
{
	int rc;
	memset(r, 0, sizeof *r);
	r->spec = *s;
	r->policy = c->o->policy;
	r->nstages = s->pp;
	r->stages = ar_xcalloc((size_t)s->pp, sizeof *r->stages);
	if (s->pp == 1) {
		ArStage st;
		if (!c->have_whole) {
			rc = ar_stage_plan(c, s, 0, c->l.n, 0, false, false, &st,
					&c->whole);
			ar_train_result_free(&st.train);
			if (rc)
				return rc;
			c->have_whole = true;
		}
		ar_stage_apply(s, &c->whole, 0, &r->stages[0]);
		r->stages[0].train.bill = c->whole.bill;
	} else {
		int *bal = ar_xmalloc(((size_t)s->pp + 1) * sizeof *bal);
		int *even = ar_xmalloc(((size_t)s->pp + 1) * sizeof *even);
		if ((rc = need_layers(c, s->pp, err))) {
			free(bal), free(even);
			return rc;
		}
		splits(c, s, bal, even);
		for (int i = 0; i < s->pp && !c->rc; i++) {
			ArStageNumbers n;
			numbers_of(c, s, kind_of(i, s->pp), bal[i + 1] - bal[i],
				   &n);
			ar_stage_apply(s, &n, i, &r->stages[i]);
			r->stages[i].train.bill = n.bill;
			r->stages[i].first_layer = bal[i];
			r->stages[i].layers = bal[i + 1] - bal[i];
		}
		r->split = bal;
		r->nlayers = c->l.n;
		free(even);
		if (c->rc)
			return c->rc;
	}
	ar_devices_finish(r);
	return AR_OK;
}

/* Plans every stage of a split; *largest: its largest device total. */
static int plan_split(ArDevicePlanner *c, const ArDevicesSpec *s,
		      const int *bounds, ArStage *st, int64_t *largest)
{
	int rc = AR_OK;
	*largest = 0;
	for (int i = 0; i < s->pp && !rc; i++) {
		ArStageNumbers n;
		rc = ar_stage_plan(c, s, bounds[i], bounds[i + 1], i, true, true,
				&st[i], &n);
		if (!rc && st[i].bill.total > *largest)
			*largest = st[i].bill.total;
	}
	return rc;
}

static int plan_pipeline(ArDevicePlanner *c, const ArDevicesSpec *s,
			 ArDevicesResult *r, ArError *err)
{
	int pp = s->pp, rc;
	size_t nb = (size_t)pp + 1;
	int *bal = ar_xmalloc(nb * sizeof *bal);
	int *even = ar_xmalloc(nb * sizeof *even);
	ArStage *sa = ar_xcalloc((size_t)pp, sizeof *sa);
	ArStage *sb = ar_xcalloc((size_t)pp, sizeof *sb);
	int64_t la = INT64_MAX, lb = INT64_MAX;

	if (!(rc = need_layers(c, pp, err))) {
		splits(c, s, bal, even);
		rc = c->rc;
	}
	if (!rc)
		rc = plan_split(c, s, even, sb, &lb);
	if (!rc && memcmp(bal, even, nb * sizeof *bal))
		rc = plan_split(c, s, bal, sa, &la);
	r->nlayers = c->l.n;
	r->even_largest = lb;
	r->nstages = pp;
	if (la < lb) {
		r->split = bal, r->stages = sa;
		free_stages(sb, pp), free(even);
	} else {
		r->split = even, r->stages = sb;
		free_stages(sa, pp), free(bal);
	}
	return rc;
}

int ar_devices_plan(const ArGraph *fwd, const ArTrainOptions *o,
		    const ArDevicesSpec *s, ArDevicesResult *r, ArError *err)
{
	ArDevicePlanner *c;
	int rc;

	memset(r, 0, sizeof *r);
	if ((rc = ar_planner_open(fwd, o, s, &c, err)))
		return rc;
	r->spec = *s;
	r->policy = o->policy;
	r->tp_columns = c->tg.ncolumn;
	r->tp_rows = c->tg.nrow;
	r->tp_embeddings = c->tg.nembed;
	if (s->pp > 1) {
		rc = plan_pipeline(c, s, r, err);
	} else {
		ArStageNumbers n;
		r->nstages = 1;
		r->stages = ar_xcalloc(1, sizeof *r->stages);
		rc = ar_stage_plan(c, s, 0, c->l.n, 0, false, true, &r->stages[0],
				&n);
	}
	if (!rc) {
		ar_devices_finish(r);
		rc = ar_devices_check(r, err);
	}
	ar_planner_close(c);
	return rc;
}

void ar_devices_free(ArDevicesResult *r)
{
	free_stages(r->stages, r->nstages);
	free(r->devices);
	free(r->split);
	memset(r, 0, sizeof *r);
}
