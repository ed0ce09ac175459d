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
 *      device with ZeRO (zero.c) and offload; every plan verified.
 *   4. Every rank's bill, the step-time estimate and the capacities
 *      (devices_bill.c).
 * --fit (fit.c) asks the same planner for estimates of many
 * configurations that share a device graph and its probes.
 *
 * Offload (ZeRO-Offload's accounting, Ren et al. 2021; ZeRO-Infinity's
 * for parameters and activations):
 *   optimizer    the fp32 master weights and optimizer state of a
 *                device's partition live in the slower memory; each step
 *                sends that partition's gradients there and its updated
 *                16-bit weights back: 2 x the partition's gradient bytes;
 *   parameters   the 16-bit weights live there, each layer's fetched for
 *                the forward and again for the backward pass of every
 *                microbatch (2 x M x the device's weights), one layer's
 *                at a time on the device (a buffer);
 *   activations  what stays for the backward pass goes there after its
 *                last forward use and comes back before its first
 *                backward one (train/step.c's Fetch): 2 x M x its bytes;
 *                the slower memory holds the microbatches in flight.
 */
#include "devices.h"
#include "layers.h"
#include "parallel.h"
#include "stage.h"

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

/* What one microbatch's plan of a stage gives the bills and the
 * estimate: the training bill's numbers, the largest layer's weights
 * (ZeRO-3 gathers them), the arena, the stash, the bytes fetched back
 * (offloaded activations), FLOPs and bytes sent. */
typedef struct Numbers {
	ArTrainBill bill;       /* numbers only: no checkpoint names */
	int64_t gathered, arena, stash, fetched, flops, comm, again;
} Numbers;

enum { FIRST, MIDDLE, LAST, KINDS };

struct ArDevicePlanner {
	const ArTrainOptions *o;
	ArDevicesSpec s;        /* tp and sp; the rest per call */
	ArTpGraph tg;
	const ArGraph *d;       /* one device's forward graph */
	const ArTpComm *comm;   /* per node of d, or NULL without --tp */
	ArLayers l;             /* d's layers; n 0 when none were found */
	ArError *err;
	int rc;                 /* a probe's failure */
	Numbers probe[KINDS][2], whole;
	bool probed[KINDS][2], have_whole;
};

/* "^(h3|l3\.res1|...)$": a stage's layer bounds as --layer-boundary. */
static char *bounds_regex(const ArGraph *g, const ArLayers *l, int a, int b)
{
	size_t cap = 8, n = 0;
	char *re;
	for (int k = a; k <= b; k++)
		cap += 2 * strlen(g->tensors[l->bound[k]].name) + 1;
	re = ar_xmalloc(cap);
	re[n++] = '^';
	re[n++] = '(';
	for (int k = a; k <= b; k++) {
		for (const char *p = g->tensors[l->bound[k]].name; *p; p++) {
			if (strchr(".[]()*+?{}|^$\\", *p))
				re[n++] = '\\';
			re[n++] = *p;
		}
		re[n++] = k < b ? '|' : ')';
	}
	re[n++] = '$';
	re[n] = 0;
	return re;
}

/* Bytes a device sends in tensor-parallel collectives in one
 * microbatch's step; *again: of them, in collectives recomputed. */
static int64_t tp_comm(const ArDevicePlanner *c, const ArTrainResult *r,
		       const int *src, int64_t *again)
{
	const ArTrainModel *m = r->model;
	int *nsrc, *tsrc;
	ArGraph *g;
	int64_t sum = 0;

	*again = 0;
	if (!c->comm)
		return 0;
	g = ar_train_graph_traced(m, r->resident, &nsrc, &tsrc);
	for (int i = 0; i < g->nnodes; i++) {
		const ArNode *n = &g->nodes[i], *bn;
		int b = nsrc[i], dn = b < 0 || b >= m->nfwd ? -1 :
				      src ? src[b] : b;
		const ArTpComm *x;
		int64_t whole, fwd;
		if (dn < 0 || dn >= c->d->nnodes)
			continue;
		/* The tensor the passes go over, in the step's precision. */
		x = &c->comm[dn];
		bn = &m->base->nodes[b];
		whole = x->out ? m->base->tensors[bn->outputs[0]].bytes :
				 bn->ninputs ? m->base->tensors[bn->inputs[0]].bytes
					     : 0;
		fwd = ar_tp_sent(whole, x->fwd, c->s.tp);
		if (n->phase == AR_PHASE_FORWARD)
			sum = ar_train_add(sum, fwd);
		else if (n->phase == AR_PHASE_RECOMPUTE &&
			 !strcmp(n->op, bn->op)) {
			sum = ar_train_add(sum, fwd);
			*again = ar_train_add(*again, fwd);
		} else if (n->phase == AR_PHASE_BACKWARD && !ar_op_of(n)) {
			/* a gradient step (sums and updates are in the table) */
			sum = ar_train_add(sum, ar_tp_sent(whole, x->bwd,
							   c->s.tp));
		}
	}
	free(nsrc);
	free(tsrc);
	ar_graph_free(g);
	return sum;
}

/* The largest layer's weights (ZeRO-3 gathers a layer's at a time): the
 * weights the steps of each layer read first, each weight outside the
 * layers on its own. */
static int64_t largest_layer(const ArDevicePlanner *c, const ArTrainModel *m,
			     const int *src)
{
	const ArGraph *g = m->base;
	int64_t *sum = ar_xcalloc((size_t)c->l.n + 1, sizeof *sum), best = 0;
	bool *seen = ar_xcalloc((size_t)g->ntensors + 1, sizeof *seen);

	for (int i = 0; i < m->nfwd; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++) {
			int t = g->nodes[i].inputs[j], dn = src ? src[i] : i, k;
			if (t < 0 || seen[t] || !(m->param[t] || m->frozen[t]))
				continue;
			seen[t] = true;
			k = c->l.n && dn >= 0 ? ar_layer_of(&c->l, dn) : -1;
			if (k >= 0)
				sum[k] = ar_train_add(sum[k], g->tensors[t].bytes);
			else if (g->tensors[t].bytes > best)
				best = g->tensors[t].bytes;
		}
	for (int k = 0; k < c->l.n; k++)
		if (sum[k] > best)
			best = sum[k];
	free(sum);
	free(seen);
	return best;
}

/* Bytes of the activations one microbatch's step fetches back. */
static int64_t fetched_bytes(const ArGraph *g)
{
	const ArOpDef *fetch = ar_op_find(AR_PARALLEL_DOMAIN, "Fetch", 1);
	int64_t sum = 0;
	for (int i = 0; i < g->nnodes; i++)
		if (ar_op_of(&g->nodes[i]) == fetch)
			sum = ar_train_add(sum,
				g->tensors[g->nodes[i].outputs[0]].bytes);
	return sum;
}

static void offload(const ArDevicesSpec *s, const Numbers *n, ArStage *st)
{
	const ArTrainBill *b = &n->bill;
	ArDeviceBill *d = &st->bill;
	int64_t m = s->microbatches;

	if (s->offload[AR_OFF_OPTIMIZER] >= 0) {
		int64_t g = s->zero >= 1 ? ar_zero_part(b->gradient_bytes,
						b->parameter_count, s->dp)
					 : b->gradient_bytes;
		st->offloaded[AR_OFF_OPTIMIZER] = d->optimizer_state;
		st->moved_bytes[AR_OFF_OPTIMIZER] = ar_train_mul(2, g);
		d->optimizer_state = 0;
	}
	if (s->offload[AR_OFF_PARAMETERS] >= 0) {
		st->offloaded[AR_OFF_PARAMETERS] = d->parameters;
		st->moved_bytes[AR_OFF_PARAMETERS] =
			ar_train_mul(2 * m, d->parameters);
		d->parameters = 0;
		if (s->zero < 3)
			d->buffers = ar_train_add(d->buffers, n->gathered);
	}
	if (s->offload[AR_OFF_ACTIVATIONS] >= 0) {
		st->offloaded[AR_OFF_ACTIVATIONS] =
			ar_train_mul(n->fetched, st->inflight);
		st->moved_bytes[AR_OFF_ACTIVATIONS] =
			ar_train_mul(2 * m, n->fetched);
	}
	d->offloaded = 0;
	for (int k = 0; k < AR_OFF_KINDS; k++)
		d->offloaded = ar_train_add(d->offloaded, st->offloaded[k]);
}

static void bill_total(ArDeviceBill *d)
{
	d->total = ar_train_add(ar_train_add(ar_train_add(d->parameters,
		d->gradients), ar_train_add(d->optimizer_state,
		d->activations_arena)), ar_train_add(d->buffers, d->constants));
}

/* A stage's device bill and figures from its numbers under s; the arena
 * with inflight microbatches estimated as one's plus the others'
 * stashes (what ar_inflight_plan plans). */
static void apply(const ArDevicesSpec *s, const Numbers *n, int stage,
		  ArStage *st)
{
	st->inflight = s->pp > 1 ? ar_inflight(s->schedule, s->pp, stage,
					       s->microbatches) : 1;
	st->arena_one = n->arena;
	st->stash_bytes = n->stash;
	st->flops = n->flops;
	st->comm_bytes = n->comm;
	st->recompute_comm = n->again;
	ar_zero_bill(&n->bill, s->dp, s->zero, s->bucket, n->gathered,
		     &st->bill, &st->dp_bytes);
	offload(s, n, st);
	st->bill.activations_arena = ar_train_add(n->arena, ar_train_mul(
		st->inflight - 1, n->stash));
	bill_total(&st->bill);
}

/*
 * Plans layers [a, b) of the device graph as stage `stage` of s (staged:
 * as a graph of its own, else the whole device graph); full: with the
 * microbatches in flight, else one microbatch's step only (a probe).
 * *n gets its numbers.
 */
static int plan_stage(ArDevicePlanner *c, const ArDevicesSpec *s, int a,
		      int b, int stage, bool staged, bool full, ArStage *st,
		      Numbers *n)
{
	ArStageGraph sg = {.recv = -1, .send = -1};
	ArTrainOptions o = *c->o;
	const ArGraph *g = c->d;
	char *regex = NULL;
	ArTrainResult *r = &st->train;
	int rc;

	memset(st, 0, sizeof *st);
	memset(n, 0, sizeof *n);
	st->first_layer = a;
	st->layers = b - a;
	if (staged) {
		if ((rc = ar_stage_graph(c->d, &c->l, a, b, &sg, c->err)))
			return rc;
		g = sg.g;
		o.spec.input_grads = a > 0;
		o.spec.some_params = true;
		/* The loss is the last stage's; the others send on. */
		if (b < c->l.n)
			o.spec.loss_chunks = 0;
		if (o.policy == AR_CKPT_LAYER && !o.layer_boundary)
			o.layer_boundary = regex = bounds_regex(c->d, &c->l,
								a, b);
	}
	o.spec.offload_activations = s->offload[AR_OFF_ACTIVATIONS] >= 0;
	rc = ar_train_plan(g, &o, r, c->err);
	free(regex);
	if (rc && staged) {
		char why[sizeof c->err->msg];
		snprintf(why, sizeof why, "%s", c->err->msg);
		ar_fail(c->err, rc, "--pp %d: stage %d (layers %d to %d): %s",
			s->pp, stage, a, b - 1, why);
	}
	if (!rc) {
		n->bill = r->bill;
		n->bill.checkpoints = NULL;
		n->arena = r->plan->arena_bytes;
		n->stash = ar_stash_bytes(r->graph, r->plan);
		n->fetched = fetched_bytes(r->graph);
		n->flops = ar_train_add(ar_train_add(r->bill.forward_flops,
				r->bill.backward_flops), r->bill.recompute_flops);
		n->comm = ar_train_add(tp_comm(c, r, sg.src, &n->again),
				       sg.send_bytes + sg.recv_bytes);
		n->gathered = largest_layer(c, r->model, sg.src);
		apply(s, n, stage, st);
		if (full && (rc = ar_inflight_plan(r, st->inflight, n->stash,
						   &o.plan, c->err)) == AR_OK) {
			st->bill.activations_arena = r->plan->arena_bytes;
			bill_total(&st->bill);
		}
	}
	ar_stage_graph_free(&sg);
	return rc;
}

static void free_stages(ArStage *st, int n)
{
	for (int i = 0; st && i < n; i++)
		ar_train_result_free(&st[i].train);
	free(st);
}

/* The numbers of kind k's probe of m layers: a stage of that kind
 * planned alone (the first m layers, the m after the first, the last m). */
static const Numbers *probe(ArDevicePlanner *c, const ArDevicesSpec *s,
			    int k, int m)
{
	int n = c->l.n, a = k == FIRST ? 0 : k == MIDDLE ? 1 : n - m;
	int stage = k == FIRST ? 0 : k == MIDDLE ? 1 : s->pp - 1;
	ArStage st;
	if (!c->probed[k][m - 1] && !c->rc) {
		c->rc = plan_stage(c, s, a, a + m, stage, true, false, &st,
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
		       int m, Numbers *n)
{
	const Numbers *p = probe(c, s, k, 1), *q = m > 1 ? probe(c, s, k, 2)
							  : p;
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
	b->frozen_bytes = lerp(p->bill.frozen_bytes, q->bill.frozen_bytes, m);
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
	return stage == 0 ? FIRST : stage == pp - 1 ? LAST : MIDDLE;
}

/* For the split search: the estimated device total of a stage. */
typedef struct EstCtx {
	ArDevicePlanner *c;
	const ArDevicesSpec *s;
} EstCtx;

static int64_t estimate(void *ctx, int stage, int a, int b)
{
	EstCtx *e = ctx;
	Numbers n;
	ArStage st;
	numbers_of(e->c, e->s, kind_of(stage, e->s->pp), b - a, &n);
	if (e->c->rc)
		return INT64_MAX;
	memset(&st, 0, sizeof st);
	apply(e->s, &n, stage, &st);
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
			rc = plan_stage(c, s, 0, c->l.n, 0, false, false, &st,
					&c->whole);
			ar_train_result_free(&st.train);
			if (rc)
				return rc;
			c->have_whole = true;
		}
		apply(s, &c->whole, 0, &r->stages[0]);
	} else {
		int *bal = ar_xmalloc(((size_t)s->pp + 1) * sizeof *bal);
		int *even = ar_xmalloc(((size_t)s->pp + 1) * sizeof *even);
		if ((rc = need_layers(c, s->pp, err))) {
			free(bal), free(even);
			return rc;
		}
		splits(c, s, bal, even);
		for (int i = 0; i < s->pp && !c->rc; i++) {
			Numbers n;
			numbers_of(c, s, kind_of(i, s->pp), bal[i + 1] - bal[i],
				   &n);
			apply(s, &n, i, &r->stages[i]);
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
		Numbers n;
		rc = plan_stage(c, s, bounds[i], bounds[i + 1], i, true, true,
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
		Numbers n;
		r->nstages = 1;
		r->stages = ar_xcalloc(1, sizeof *r->stages);
		rc = plan_stage(c, s, 0, c->l.n, 0, false, true, &r->stages[0],
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
