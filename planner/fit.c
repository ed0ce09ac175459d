/*
 * fit.c — --fit DEVICES: the configurations of a given number of devices
 * of a given memory that fit, cheapest first.
 *
 * The search is bounded and deterministic: every training setup the
 * caller gives (--fit-axis: attention kernel, LoRA rank, base format,
 * micro-batch; one without it), every tensor-parallel size t dividing
 * the device count (with and without sequence parallelism when t > 1),
 * every checkpoint policy of none, selective and layer, every pipeline
 * size p dividing what is left (up to the layers), the data parallelism
 * d filling the rest, and every ZeRO stage when d > 1.  The step keeps
 * one global batch: B micro-batches in all (the setup's), so each
 * pipeline runs B / d of them (a d not dividing B is skipped).  Each configuration is billed from the planner's
 * probes (devices.c: the whole device graph planned once per t, sequence
 * parallelism and policy; pipeline stages estimated from plans of one and
 * two layers) and ranked by the estimated step time (recompute FLOPs and
 * communication included, devices_bill.c).  The cheapest that fits is
 * then planned in full, every stage verified; should its real plan not
 * fit after all, the next is.  Nothing fits: AR_EXIT_BUDGET, naming the
 * least memory a device would need and the configuration that needs it.
 *
 * "Fits" is the single run's: the devices and the host.  Each
 * configuration gets the host's bill (host.c) from its estimated stages;
 * one whose devices fit but whose node's host memory does not is refused
 * (listed apart, the host named), and so is a planned one whose real
 * plan's host bill is over.
 */
#include "host.h"
#include "numfmt.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Configurations planned in full at most, in ranking order. */
#define FIT_PLANS 4

static const ArCkptPolicy policies[] = {AR_CKPT_NONE, AR_CKPT_SELECTIVE,
					AR_CKPT_LAYER};
#define NPOLICIES ((int)(sizeof policies / sizeof *policies))

typedef struct Rows {
	ArFitRow *v;
	int n, cap;
} Rows;

static void push(Rows *r, const ArFitRow *row)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->v = ar_xrealloc(r->v, (size_t)r->cap * sizeof *r->v);
	}
	r->v[r->n++] = *row;
}

/* Cheapest first; then the smaller; then the search's order. */
static int cmp_row(const void *a, const void *b)
{
	const ArFitRow *x = a, *y = b;
	if (x->step_s != y->step_s)
		return x->step_s < y->step_s ? -1 : 1;
	if (x->largest != y->largest)
		return x->largest < y->largest ? -1 : 1;
	return x->order - y->order;
}

/* row's host bill from d, its configuration's devices (estimated or
 * planned): the node's total and whether it is over the host's memory. */
static void host_row(const ArFitSpec *f, const ArFitResult *r,
		     const ArDevicesResult *d, ArFitRow *row)
{
	ArHostBill hb;
	ArError e;
	if (!f->host)
		return;
	row->host_over = ar_host_bill_devices(f->host, &r->hosts[row->variant],
					      d, &hb, &e) == AR_EXIT_BUDGET;
	row->host_bytes = hb.peak_bytes;
	ar_host_bill_free(&hb);
}

/* The configurations of planner c (its setup, t, sequence parallelism,
 * policy).  One that cannot be estimated is left out, unless it is the
 * plainest (must: one device's step, no recompute, no split), whose
 * failure is the setup's: its code, the message in err (c's, as
 * ar_planner_open was given it). */
static int configurations(ArDevicePlanner *c, const ArFitSpec *f,
			  const ArFitVariant *v, int variant,
			  const ArDevicesSpec *base, ArCkptPolicy pol,
			  bool must, Rows *rows, Rows *refused, ArFitResult *r,
			  ArError *err)
{
	int rest = f->devices / base->tp;
	int all = v->microbatches ? v->microbatches : f->devices;
	int rc;

	for (int pp = 1; pp <= rest; pp++) {
		int dp = rest / pp;
		if (rest % pp || all % dp ||
		    (pp > 1 && ar_planner_layers(c) < pp))
			continue;
		for (int zero = 0; zero <= (dp > 1 ? 3 : 0); zero++) {
			ArDevicesSpec s = *base;
			ArDevicesResult est;
			ArFitRow row = {.policy = pol, .variant = variant};
			s.dp = dp;
			s.pp = pp;
			s.zero = zero;
			s.microbatches = all / dp;
			r->considered++;
			rc = ar_planner_estimate(c, &s, &est, err);
			if (rc) {
				ar_devices_free(&est);
				if (must && pp == 1 && zero == 0)
					return rc;
				continue;
			}
			row.spec = s;
			row.largest = est.largest;
			row.step_s = est.step_s;
			row.fits = est.largest <= f->memory;
			host_row(f, r, &est, &row);
			row.order = r->considered;
			if (!r->smallest || row.largest < r->smallest) {
				r->smallest = row.largest;
				r->smallest_row = row;
			}
			if (row.fits)
				push(row.host_over ? refused : rows, &row);
			ar_devices_free(&est);
		}
	}
	return AR_OK;
}

/* Plans rows in order until one fits for real: it becomes the first. */
static int plan_best(const ArFitVariant *v, const ArFitSpec *f, Rows *rows,
		     Rows *refused, ArFitResult *r, ArError *err)
{
	ArMemory dev = {"device", f->memory, 0};
	for (int i = 0; i < rows->n && i < FIT_PLANS; i++) {
		const ArFitVariant *w = &v[rows->v[i].variant];
		ArTrainOptions po = w->opt;
		ArDevicesSpec s = rows->v[i].spec;
		int rc;
		po.policy = rows->v[i].policy;
		s.memories = &dev;
		s.nmemories = 1;
		rc = ar_devices_plan(w->fwd, &po, &s, &r->best, err);
		if (rc == AR_OK)
			host_row(f, r, &r->best, &rows->v[i]);
		if (rc == AR_OK && rows->v[i].host_over) {
			push(refused, &rows->v[i]);
			ar_devices_free(&r->best);
			continue;
		}
		if (rc == AR_OK) {
			r->best.spec.memories = NULL;
			r->best.spec.nmemories = 0;
			memmove(rows->v, rows->v + i,
				(size_t)(rows->n - i) * sizeof *rows->v);
			rows->n -= i;
			rows->v[0].largest = r->best.largest;
			r->planned = true;
			return AR_OK;
		}
		ar_devices_free(&r->best);
		if (rc != AR_EXIT_BUDGET)
			return rc;
	}
	return AR_OK;
}

void ar_fit_describe(const ArFitVariant *v, char *buf, size_t size)
{
	const ArTrainSpec *t = &v->opt.spec;
	int k = snprintf(buf, size, "attention %s, lora %" PRId64 ", base %s",
			 ar_attention_name(t->attention), t->lora.rank,
			 ar_base_quant_name(t->base_quant.format));
	if (v->batch && k >= 0 && (size_t)k < size)
		snprintf(buf + k, size - (size_t)k, ", batch %" PRId64,
			 v->batch);
}

/* Setup v failed with rc, e saying why: err says so, naming the setup
 * when there are several. */
static int setup_failed(const ArFitVariant *v, int nv, int rc,
			const ArError *e, ArError *err)
{
	char d[150];
	if (nv == 1) {
		*err = *e;
		return rc;
	}
	ar_fit_describe(v, d, sizeof d);
	return ar_fail(err, rc, "--fit (%s): %s", d, e->msg);
}

/* Every configuration of setup v, each planner probed once.  A setup
 * that cannot even be planned on one device without recompute fails
 * the search (a LoRA rank above a weight's side, say): err names it,
 * and the setup when there are several. */
static int search_variant(const ArFitVariant *v, int variant, int nv,
			  const ArFitSpec *f, Rows *rows, Rows *refused,
			  ArFitResult *r, ArError *err)
{
	for (int tp = 1; tp <= f->devices; tp++) {
		if (f->devices % tp)
			continue;
		for (int sp = 0; sp <= (tp > 1); sp++)
			for (int k = 0; k < NPOLICIES; k++) {
				ArTrainOptions po = v->opt;
				ArDevicesSpec base;
				ArDevicePlanner *c;
				ArError e;
				bool must = tp == 1 &&
					    policies[k] == AR_CKPT_NONE;
				int rc;
				/* Over fused cores selective recomputes
				 * nothing: it is none again. */
				if (policies[k] == AR_CKPT_SELECTIVE &&
				    v->opt.spec.attention != AR_ATTN_MATH)
					continue;
				ar_devices_spec_default(&base);
				base.tp = tp;
				base.sp = sp;
				base.schedule = f->schedule;
				base.bucket = f->bucket;
				base.device_flops = f->device_flops;
				base.link_bandwidth = f->link_bandwidth;
				po.policy = policies[k];
				po.budget = 0;
				/* A model that cannot be split so: none. */
				rc = ar_planner_open(v->fwd, &po, &base, &c, &e);
				if (!rc) {
					rc = configurations(c, f, v, variant,
							    &base, policies[k],
							    must, rows, refused,
							    r, &e);
					ar_planner_close(c);
				}
				if (rc && must)
					return setup_failed(v, nv, rc, &e,
							    err);
			}
	}
	return AR_OK;
}

/* "dp 2, zero 1, tp 1, pp 1, --checkpoint none" and, with several
 * setups, row's. */
static void row_name(const ArFitRow *m, const ArFitResult *r, char *buf,
		     size_t size)
{
	char d[150] = "";
	if (r->nvariants > 1) {
		d[0] = ',', d[1] = ' ';
		ar_fit_describe(&r->variants[m->variant], d + 2, sizeof d - 2);
	}
	snprintf(buf, size, "dp %d, zero %d, tp %d%s, pp %d, --checkpoint %s%s",
		 m->spec.dp, m->spec.zero, m->spec.tp, m->spec.sp ? " with "
		 "sequence parallelism" : "", m->spec.pp,
		 ar_ckpt_policy_name(m->policy), d);
}

/* Each setup's whole-model facts for the host's bill. */
static int host_models(const ArFitVariant *v, int nv, ArFitResult *r,
		       ArError *err)
{
	r->hosts = ar_xcalloc((size_t)nv, sizeof *r->hosts);
	for (int i = 0; i < nv; i++) {
		ArTrainModel *m;
		ArError e;
		int rc = ar_train_model(v[i].fwd, &v[i].opt.spec, &m, &e);
		if (rc)
			return setup_failed(&v[i], nv, rc, &e, err);
		ar_host_model(v[i].fwd, m, &r->hosts[i]);
		ar_train_model_free(m);
	}
	return AR_OK;
}

/* Nothing fits: why, in err. */
static int none_fits(const ArFitSpec *f, const Rows *rows, const Rows *refused,
		     ArFitResult *r, ArError *err)
{
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN], c[AR_NUMFMT_LEN], d[300],
	     name[AR_HOST_BOUND_LEN];
	const ArFitRow *m = &r->smallest_row;

	if (refused->n) {
		m = &refused->v[0];
		for (int i = 1; i < refused->n; i++)
			if (refused->v[i].host_bytes < m->host_bytes)
				m = &refused->v[i];
		row_name(m, r, d, sizeof d);
		return ar_fail(err, AR_EXIT_BUDGET, "--fit: %d configuration%s "
			       "of %d devices fit %s bytes each, but not the "
			       "host: the least a node's host memory needs is "
			       "%s bytes (%s), more than %s %s",
			       refused->n, refused->n == 1 ? "" : "s",
			       f->devices, ar_fmt_count(a, f->memory),
			       ar_fmt_count(b, m->host_bytes), d,
			       ar_host_bound_name(f->host, name),
			       ar_fmt_count(c, f->host->memory));
	}
	if (rows->n)
		return ar_fail(err, AR_EXIT_BUDGET, "--fit: %d configurations "
			       "of %d devices fit %s bytes each by estimate, "
			       "but the first %d planned in full do not",
			       rows->n, f->devices, ar_fmt_count(a, f->memory),
			       rows->n < FIT_PLANS ? rows->n : FIT_PLANS);
	if (!r->smallest)
		return ar_fail(err, AR_EXIT_MODEL, "--fit: no configuration of "
			       "%d devices could be planned", f->devices);
	row_name(m, r, d, sizeof d);
	return ar_fail(err, AR_EXIT_BUDGET, "--fit: no configuration of %d "
		       "devices fits %s bytes each; the smallest device memory "
		       "that would is %s bytes (%s)", f->devices,
		       ar_fmt_count(a, f->memory),
		       ar_fmt_count(b, r->smallest), d);
}

int ar_fit(const ArFitVariant *v, int nv, const ArFitSpec *f,
	   ArFitResult *r, ArError *err)
{
	Rows rows = {0}, refused = {0};
	int rc = AR_OK;

	assert(nv >= 1);
	memset(r, 0, sizeof *r);
	r->variants = v;
	r->nvariants = nv;
	if (f->host)
		rc = host_models(v, nv, r, err);
	for (int i = 0; i < nv && !rc; i++)
		rc = search_variant(&v[i], i, nv, f, &rows, &refused, r, err);
	if (!rc && rows.n) {
		qsort(rows.v, (size_t)rows.n, sizeof *rows.v, cmp_row);
		rc = plan_best(v, f, &rows, &refused, r, err);
	}
	if (refused.n)
		qsort(refused.v, (size_t)refused.n, sizeof *refused.v, cmp_row);
	r->rows = rows.v;
	r->nrows = r->planned ? rows.n : 0;
	r->refused = refused.v;
	r->nrefused = refused.n;
	if (!rc && !r->planned)
		rc = none_fits(f, &rows, &refused, r, err);
	return rc;
}

void ar_fit_free(ArFitResult *r)
{
	free(r->rows);
	free(r->refused);
	free(r->hosts);
	if (r->planned)
		ar_devices_free(&r->best);
	memset(r, 0, sizeof *r);
}
