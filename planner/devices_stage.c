/*
 * devices_stage.c — one pipeline stage (or the whole device graph)
 * planned as a training step and billed per device: the numbers its plan
 * gives (the bill's parts, the stash, the tensor-parallel bytes sent, the
 * largest layer for ZeRO-3, the activations fetched back), then ZeRO
 * (zero.c), the offloads and the microbatches in flight (pipeline.c).
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
#include "devices_int.h"
#include "stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void offload(const ArDevicesSpec *s, const ArStageNumbers *n, ArStage *st)
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
	if (b->host_state_bytes > 0) {
		/* A paged optimizer's state (optimizers.c) lives in host
		 * memory, paged in for the update and out again. */
		int64_t h = s->zero >= 1 ? ar_zero_part(b->host_state_bytes,
						b->parameter_count, s->dp)
					 : b->host_state_bytes;
		st->offloaded[AR_OFF_OPTIMIZER] = ar_train_add(
			st->offloaded[AR_OFF_OPTIMIZER], h);
		st->moved_bytes[AR_OFF_OPTIMIZER] = ar_train_add(
			st->moved_bytes[AR_OFF_OPTIMIZER], ar_train_mul(2, h));
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

void ar_stage_apply(const ArDevicesSpec *s, const ArStageNumbers *n,
		    int stage, ArStage *st)
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

int ar_stage_plan(ArDevicePlanner *c, const ArDevicesSpec *s, int a, int b,
		  int stage, bool staged, bool full, ArStage *st,
		  ArStageNumbers *n)
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
		ar_stage_apply(s, n, stage, st);
		if (full && (rc = ar_inflight_plan(r, st->inflight, n->stash,
						   &o.plan, c->err)) == AR_OK) {
			st->bill.activations_arena = r->plan->arena_bytes;
			bill_total(&st->bill);
		}
	}
	ar_stage_graph_free(&sg);
	return rc;
}
