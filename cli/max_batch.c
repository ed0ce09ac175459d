/*
 * max_batch.c — --max-batch: the largest --batch whose training step fits
 * the device (--budget or the first --memory, --reserve included).
 *
 * Each batch tried is a real step: the model loaded with that batch, its
 * shapes inferred, the step built, checkpoints selected under the policy
 * given, planned and verified (ar_train_plan), and judged by the one
 * meaning of "fits" the single run has.  The search doubles from 1 until a
 * batch does not fit, then bisects between the last that fits and the
 * first that does not, so the answer B is proven both ways: B planned and
 * fits, B + 1 planned and does not.  It assumes what a step's memory does:
 * more samples never need fewer bytes.  The same model and options give
 * the same answer everywhere (each plan is deterministic).
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuse.h"
#include "infer.h"
#include "numfmt.h"
#include "options.h"
#include "max_batch.h"

/* The search stops doubling here: a million samples is no micro-batch. */
#define MAX_BATCH_CAP ((int64_t)1 << 20)
/* Rows of the table: doubling and bisecting both take log2(cap) steps. */
#define MAX_TRIES 48

typedef struct Try {
	int64_t batch;
	int rc;                 /* AR_OK: fits, AR_EXIT_BUDGET: does not */
	int64_t device_total;   /* when it fits */
	int64_t recompute, forward;
} Try;

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

/* Plans the step at batch b; only a model or internal error fails. */
static int try_batch(const Cli *c, int64_t b, Try *t, ArError *err)
{
	/* The answer's own run (arenac.c) warns; the trials stay quiet. */
	ArLoadOptions lo = c->load;
	ArTrainOptions o = c->topt;
	ArGraph *g = NULL;
	ArTrainResult r;
	ArError e = {0};
	int rc;

	lo.batch = b;
	lo.diag.warn = NULL;
	o.plan.diag.warn = NULL;
	t->batch = b;
	rc = ar_load_onnx(c->model, &lo, &g, err);
	if (!rc)
		rc = ar_infer_bounded(g, &lo.diag, c->bounds, c->nbounds, err);
	if (!rc && b == 2 && !takes_batch(g, 2))
		rc = ar_fail(err, AR_EXIT_USAGE, "--max-batch: no graph input "
			     "takes --batch (axis 0 must be symbolic or 1); "
			     "re-export the model with a dynamic batch axis");
	if (rc) {
		ar_graph_free(g);
		return rc;
	}
	t->rc = ar_train_plan(g, &o, &r, &e);
	if (!t->rc) {
		t->device_total = r.bill.device_total_bytes;
		t->recompute = r.bill.recompute_flops;
		t->forward = r.bill.forward_flops;
	} else if (t->rc != AR_EXIT_BUDGET) {
		*err = e;
		rc = t->rc;
	} else if (b == 1) {
		*err = e;   /* nothing fits: the reason is the batch of 1's */
	}
	ar_train_result_free(&r);
	ar_graph_free(g);
	return rc;
}

static void print_table(FILE *f, const Cli *c, const Try *t, int n,
			int64_t best)
{
	char a[AR_NUMFMT_LEN], d[AR_NUMFMT_LEN];
	fprintf(f, "%s: --max-batch for %s%s%s of %s bytes: batch %" PRId64
		"\n", c->model, c->topt.device_name ? "memory '" : "--budget",
		c->topt.device_name ? c->topt.device_name : "",
		c->topt.device_name ? "'" : "",
		ar_fmt_count(d, c->topt.device_bytes), best);
	fprintf(f, "  %9s  %20s  %s\n", "batch", "on the device", "");
	for (int i = 0; i < n; i++) {
		if (t[i].rc)
			fprintf(f, "  %9" PRId64 "  %20s  does not fit\n",
				t[i].batch, "-");
		else
			fprintf(f, "  %9" PRId64 "  %20s  fits, %.2f%% "
				"recompute\n", t[i].batch,
				ar_fmt_count(a, t[i].device_total),
				t[i].forward > 0 ? 100.0 * (double)t[i].recompute /
				(double)t[i].forward : 0.0);
	}
}

int cli_max_batch(const Cli *c, int64_t *best, ArError *err)
{
	Try t[MAX_TRIES];
	int n = 0, rc;
	int64_t lo = 0, hi = 0;   /* largest that fits, smallest that not */

	if (!c->topt.device_bytes)
		return ar_fail(err, AR_EXIT_USAGE, "--max-batch needs a device: "
			       "--budget or --memory");
	/* Doubling until a batch fails (or the cap), then bisecting. */
	for (;;) {
		int64_t b = hi ? lo + (hi - lo) / 2 : lo ? 2 * lo : 1;
		if (hi ? hi - lo <= 1 : lo >= MAX_BATCH_CAP / 2)
			break;
		assert(n < MAX_TRIES);
		if ((rc = try_batch(c, b, &t[n], err)))
			return rc;
		if (t[n++].rc)
			hi = b;
		else
			lo = b;
		if (!lo)
			return AR_EXIT_BUDGET; /* err: the batch of 1's reason */
	}
	*best = lo;
	if (!c->quiet)
		print_table(cli_no_outputs(c) ? stdout : stderr, c, t, n, lo);
	return AR_OK;
}
