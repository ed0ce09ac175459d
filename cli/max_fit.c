/*
 * max_fit.c — --max-batch and --max-dim NAME: the largest --batch, or the
 * largest value of the symbolic dim NAME (a sequence length), whose
 * training step fits the device (--budget or the first --memory,
 * --reserve included).
 *
 * Each value tried is a real step: the model loaded with it, its shapes
 * inferred, the step built, checkpoints selected under the policy given,
 * planned and verified (ar_train_plan), and judged by the one meaning of
 * "fits" the single run has: the device's total, and the host's bill
 * (planner/host.c: the loader's batches grow with the batch) within
 * --host-memory.  The search doubles from 1 until a value
 * does not fit, then bisects between the last that fits and the first
 * that does not, so the answer V is proven both ways: V planned and fits,
 * V + 1 planned and does not.  It assumes what a step's memory does: more
 * samples or positions never need fewer bytes.  A model that cannot take
 * a value at all (a position table shorter than the sequence, a Reshape
 * that spells out the batch) bounds the search like a value that does not
 * fit, and the table says why; at 1 it is the run's error.  The same
 * model and options give the same answer everywhere (each plan is
 * deterministic).
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "infer.h"
#include "numfmt.h"
#include "options.h"
#include "max_fit.h"

/* The search stops doubling here: a million samples is no micro-batch,
 * a million positions no sequence a step plans. */
#define MAX_FIT_CAP ((int64_t)1 << 20)
/* Rows of the table: doubling and bisecting both take log2(cap) steps. */
#define MAX_TRIES 48

typedef struct Try {
	int64_t value;
	int rc;                 /* AR_OK: fits, AR_EXIT_BUDGET: does not,
				 * else the model cannot take the value */
	int64_t device_total;   /* when it fits, or the host does not */
	int64_t host_total;     /* the node's host bill, likewise */
	bool host_over;         /* the device fits, the host does not */
	int64_t recompute, forward;
} Try;

/* Why the model cannot take the smallest value it refused (at 0: none). */
typedef struct Refusal {
	int64_t at;
	ArError err;
} Refusal;

/* Whether --batch b reached any graph input's axis 0. */
static bool takes_batch(const ArGraph *g, int64_t b)
{
	for (int i = 0; i < g->ninputs; i++) {
		const ArTensor *t = &g->tensors[g->inputs[i]];
		if (t->rank > 0 && t->dims[0] == b)
			return true;
	}
	return false;
}

int cli_check_batch(const ArGraph *g, int64_t b, const char *what,
		    ArError *err)
{
	const ArTensor *first = NULL;
	if (takes_batch(g, b))
		return AR_OK;
	for (int i = 0; i < g->ninputs && !first; i++)
		if (g->tensors[g->inputs[i]].rank > 0)
			first = &g->tensors[g->inputs[i]];
	if (!first)
		return ar_fail(err, AR_EXIT_USAGE, "%s: no graph input takes "
			       "--batch: none has an axis 0", what);
	return ar_fail(err, AR_EXIT_USAGE, "%s: no graph input takes --batch "
		       "%" PRId64 ": the model's batch is fixed at %" PRId64
		       " (graph input '%s', axis 0; --batch binds an axis 0 "
		       "that is symbolic or 1); re-export the model with a "
		       "dynamic batch axis", what, b, first->dims[0],
		       first->name);
}

void cli_max_fit_set(const Cli *c, int64_t v, ArLoadOptions *lo,
		     ArDimBinding *dims)
{
	int n = 0;
	if (!c->max_dim) {
		lo->batch = v;
		return;
	}
	for (int i = 0; i < c->load.ndims; i++)
		if (strcmp(c->load.dims[i].name, c->max_dim))
			dims[n++] = c->load.dims[i];
	dims[n++] = (ArDimBinding){c->max_dim, v};
	lo->dims = dims;        /* lo may be &c->load: set after the reads */
	lo->ndims = n;
}

/* Plans the step at value v; an internal error, or the model refusing
 * the first value, fails; the model refusing a later one is t->rc, and
 * its reason *why when it is the smallest value refused so far. */
static int try_value(const Cli *c, int64_t v, Try *t, Refusal *why,
		     ArError *err)
{
	/* The answer's own run (arenac.c) warns; the trials stay quiet. */
	ArLoadOptions lo = c->load;
	ArDimBinding dims[CLI_MAX_DIMS + 1];
	ArTrainOptions o = c->topt;
	ArGraph *g = NULL;
	ArTrainResult r;
	ArError e = {0};
	int rc;

	cli_max_fit_set(c, v, &lo, dims);
	lo.diag.warn = NULL;
	o.plan.diag.warn = NULL;
	*t = (Try){.value = v};
	rc = ar_load_onnx(c->model, &lo, &g, &e);
	if (!rc)
		rc = ar_infer_bounded(g, &lo.diag, c->bounds, c->nbounds, &e);
	/* A fixed batch would plan every value alike, "fitting" them all. */
	if (!rc && !c->max_dim)
		rc = cli_check_batch(g, v, "--max-batch", &e);
	if (rc) {
		ar_graph_free(g);
		if (v == 1 || rc == AR_EXIT_USAGE || rc == AR_EXIT_INTERNAL) {
			*err = e;
			return rc;
		}
		if (!why->at || v < why->at) {
			why->at = v;
			why->err = e;
		}
		t->rc = rc;
		return AR_OK;
	}
	t->rc = ar_train_plan(g, &o, &r, &e);
	if (!t->rc) {
		ArHostModel hm;
		ArHostBill hb;
		ar_host_model(g, r.model, &hm);
		t->rc = ar_host_bill_one(&c->host, &hm, &r.bill, &hb, &e);
		t->host_over = t->rc == AR_EXIT_BUDGET;
		t->host_total = hb.peak_bytes;
		ar_host_bill_free(&hb);
		t->device_total = r.bill.device_total_bytes;
		t->recompute = r.bill.recompute_flops;
		t->forward = r.bill.forward_flops;
	}
	if (t->rc && t->rc != AR_EXIT_BUDGET) {
		*err = e;
		rc = t->rc;
	} else if (t->rc && v == 1) {
		*err = e;   /* nothing fits: the reason is the value 1's */
	}
	ar_train_result_free(&r);
	ar_graph_free(g);
	return rc;
}

static void print_table(FILE *f, const Cli *c, const Try *t, int n,
			int64_t best, const Refusal *why)
{
	const char *what = c->max_dim ? c->max_dim : "batch";
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN], d[AR_NUMFMT_LEN],
	     name[AR_HOST_BOUND_LEN];
	fprintf(f, "%s: --max-%s%s for %s%s%s of %s bytes: %s %" PRId64 "\n",
		c->model, c->max_dim ? "dim " : "batch", c->max_dim ?
		c->max_dim : "", c->topt.device_name ? "memory '" : "--budget",
		c->topt.device_name ? c->topt.device_name : "",
		c->topt.device_name ? "'" : "",
		ar_fmt_count(d, c->topt.device_bytes), what, best);
	fprintf(f, "  %9s  %20s  %20s\n", what, "on the device", "on the host");
	for (int i = 0; i < n; i++)
		if (t[i].host_over)
			fprintf(f, "  %9" PRId64 "  %20s  %20s  does not fit the "
				"host: over %s %s\n", t[i].value,
				ar_fmt_count(a, t[i].device_total),
				ar_fmt_count(b, t[i].host_total),
				ar_host_bound_name(&c->host, name),
				ar_fmt_count(d, c->host.memory));
		else if (t[i].rc == AR_EXIT_BUDGET)
			fprintf(f, "  %9" PRId64 "  %20s  %20s  does not fit "
				"the device\n",
				t[i].value, "-", "-");
		else if (t[i].rc)
			fprintf(f, "  %9" PRId64 "  %20s  %20s  the model cannot "
				"take it\n", t[i].value, "-", "-");
		else
			fprintf(f, "  %9" PRId64 "  %20s  %20s  fits, %.2f%% "
				"recompute\n", t[i].value,
				ar_fmt_count(a, t[i].device_total),
				ar_fmt_count(b, t[i].host_total),
				t[i].forward > 0 ? 100.0 * (double)t[i].recompute /
				(double)t[i].forward : 0.0);
	if (why->at)
		fprintf(f, "  (%s %" PRId64 ": %s)\n", what, why->at,
			why->err.msg);
}

int cli_max_fit(const Cli *c, int64_t *best, ArError *err)
{
	Try t[MAX_TRIES];
	Refusal why = {0};
	int n = 0, rc;
	int64_t lo = 0, hi = 0;   /* largest that fits, smallest that not */

	if (!c->topt.device_bytes)
		return ar_fail(err, AR_EXIT_USAGE, "--max-%s needs a device: "
			       "--budget or --memory", c->max_dim ? "dim" :
			       "batch");
	/* Doubling until a value fails (or the cap), then bisecting. */
	for (;;) {
		int64_t v = hi ? lo + (hi - lo) / 2 : lo ? 2 * lo : 1;
		if (hi ? hi - lo <= 1 : lo >= MAX_FIT_CAP / 2)
			break;
		assert(n < MAX_TRIES);
		if ((rc = try_value(c, v, &t[n], &why, err)))
			return rc;
		if (t[n++].rc)
			hi = v;
		else
			lo = v;
		if (!lo)
			return AR_EXIT_BUDGET; /* err: the value 1's reason */
	}
	*best = lo;
	if (!c->quiet)
		print_table(cli_no_outputs(c) ? stdout : stderr, c, t, n, lo,
			    &why);
	return AR_OK;
}
