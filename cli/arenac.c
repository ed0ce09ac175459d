/*
 * arenac.c — the command line: parse options, run the stages, write outputs.
 *
 * The CLI owns policy (which outputs, which limits, what to print) and the
 * mapping of failures to exit codes; the stages below it never print and
 * never exit (out of memory, they call the handler installed here).  The
 * options themselves are one table, in options.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "fuse.h"
#include "infer.h"
#include "layout.h"
#include "max_fit.h"
#include "numfmt.h"
#include "options.h"
#include "solve.h"
#include "summary.h"
#include "values.h"

static void warn_stderr(void *ctx, const char *msg)
{
	const Cli *c = ctx;
	if (!c->quiet)
		fprintf(stderr, "arenac: warning: %s: %s\n", c->model, msg);
}

/* The library calls this when memory runs out; the run cannot go on. */
static const char *oom_model = "arenac";

static void out_of_memory(size_t bytes)
{
	char n[AR_NUMFMT_LEN];
	fprintf(stderr, "arenac: error: %s: out of memory (allocating %s "
		"bytes)\n", oom_model,
		ar_fmt_count(n, bytes > INT64_MAX ? INT64_MAX : (int64_t)bytes));
	exit(AR_EXIT_INTERNAL);
}

/* The default prefix: the model's file name without folder or extension. */
static char *default_prefix(const char *path)
{
	const char *base = strrchr(path, '/');
	char *p, *dot;
	p = ar_xstrdup(base ? base + 1 : path);
	dot = strrchr(p, '.');
	if (dot && dot != p)
		*dot = 0;
	return p;
}

int cli_write_outputs(const Cli *c, ArGraph *g, const ArPlan *p,
		      const ArTrainBill *bill, ArError *err)
{
	char *prefix = c->prefix ? NULL : default_prefix(c->model);
	ArEmitInfo info = {
		.model_path = c->model,
		.prefix = c->prefix ? c->prefix : prefix,
		.options = c->options,
		.dot_weights = c->dot_weights,
		.strip_names = c->strip_names,
		.training = bill,
		.dot_expand = c->dot_expand,
		.dot_focus_set = c->dot_focus_set,
		.dot_focus = c->dot_focus,
		.dot_radius = c->dot_radius,
		.timeline_other_set = c->timeline_other_set,
		.timeline_other = c->timeline_other,
		.compare = c->compare ? &c->report : NULL,
		.compare_path = c->compare,
		.devices = c->devices,
		.fit = c->fit_result,
		.stage = c->stage,
		.host = c->host_done ? &c->host_bill : NULL,
	};
	/* Every output is finished before any is published: all or none. */
	ArOutFile out[6];
	int n = 0, rc = AR_OK;

	if (c->json && !(rc = ar_out_open(&out[n], c->json, err))) {
		if ((rc = ar_write_json(out[n].f, g, p, &info)))
			ar_fail(err, rc, "%s: write failed", c->json),
				ar_out_abort(&out[n]);
		else if (!(rc = ar_out_finish(&out[n], err)))
			n++;
	}
	if (!rc && c->trace && !(rc = ar_out_open(&out[n], c->trace, err))) {
		if ((rc = ar_write_trace(out[n].f, g, p, &info)))
			ar_fail(err, rc, "%s: write failed", c->trace),
				ar_out_abort(&out[n]);
		else if (!(rc = ar_out_finish(&out[n], err)))
			n++;
	}
	if (!rc && c->header && !(rc = ar_out_open(&out[n], c->header, err))) {
		if ((rc = ar_write_header(out[n].f, g, p, &info, err)))
			ar_out_abort(&out[n]);
		else if (!(rc = ar_out_finish(&out[n], err)))
			n++;
	}
	if (!rc && c->weights && !(rc = ar_out_open(&out[n], c->weights, err))) {
		size_t len = strlen(c->weights);
		bool c_text = len > 2 && !strcmp(c->weights + len - 2, ".c");
		if ((rc = ar_write_weights(out[n].f, c_text, g, p, &info, err)))
			ar_out_abort(&out[n]);
		else if (!(rc = ar_out_finish(&out[n], err)))
			n++;
	}
	if (!rc && c->dot &&
	    !(rc = ar_write_dot(c->dot, g, p, &info, &out[n], err)))
		n++;
	if (!rc && c->timeline &&
	    !(rc = ar_write_timeline(c->timeline, g, p, &info, &out[n], err)))
		n++;
	for (int i = 0; i < n; i++) {
		if (rc)
			ar_out_abort(&out[i]);
		else
			rc = ar_out_publish(&out[i], err);
	}
	free(prefix);
	return rc;
}

bool cli_no_outputs(const Cli *c)
{
	return !c->quiet && !c->json && !c->header && !c->dot && !c->timeline &&
	       !c->weights && !c->trace;
}

/* The training step in place of the inference plan. */
/* The safety net fired: the plan is valid but no longer reproducible. */
static void note_time_limit(const Cli *c, const ArPlan *p)
{
	if (p && p->stopped_by_time_limit)
		fprintf(stderr, "arenac: note: %s: --time-limit %g stopped a "
			"search: the plan is valid, but another run may "
			"differ\n", c->model, c->plan.time_limit);
}

static int run_train(Cli *c, const ArGraph *g, ArError *err)
{
	ArTrainResult r;
	int rc;

	if (c->sweep) {
		ArSweepPoint *pts;
		int n;
		if (!(rc = ar_train_sweep(g, &c->topt, &pts, &n, err)))
			ar_print_train_sweep(stdout, c->model, pts, n);
		if (!rc && n > 0 && pts[n - 1].stopped_by_time_limit)
			fprintf(stderr, "arenac: note: %s: --time-limit %g "
				"stopped a search: the sweep is valid, but "
				"another run may differ\n", c->model,
				c->plan.time_limit);
		free(pts);
		return rc;
	}
	rc = ar_train_plan(g, &c->topt, &r, err);
	if (!rc)
		note_time_limit(c, r.plan);
	if (c->max_dim) {
		r.bill.max_seq = c->max_found;
		r.bill.max_seq_dim = c->max_dim;
	} else {
		r.bill.max_batch = c->max_found;
	}
	if (!rc && c->stats)
		ar_print_train_plan_stats(stderr, g, r.graph, r.plan);
	if (!rc && c->selfcheck)
		rc = ar_poison_run(r.graph, r.plan, err);
	if (!rc)
		rc = cli_host_bill(c, g, &c->topt.spec, r.model, &r.bill, NULL,
				   err);
	if (!rc)
		rc = cli_write_outputs(c, r.graph, r.plan, &r.bill, err);
	/* The bill once: with the summary, or else with the statistics. */
	if (!rc && cli_no_outputs(c)) {
		ar_print_summary(stdout, c->model, r.graph, r.plan);
		ar_print_train_stats(stdout, &r.bill);
		if (c->device)
			cli_print_step_rates(stdout, c->device, &r.bill, r.plan);
		cli_print_host(stdout, &c->host_bill);
	} else if (!rc && c->stats) {
		ar_print_train_stats(stderr, &r.bill);
		cli_print_host(stderr, &c->host_bill);
	}
	ar_host_bill_free(&c->host_bill);
	ar_train_result_free(&r);
	return rc;
}

/*
 * Many exported models (the light_* CNNs among them) flatten with a
 * Reshape whose constant target spells out a batch of 1, e.g. [1, 25088]:
 * with --batch N they fail in shape inference ("cannot reshape ...").
 * When the failing node is such a Reshape, say why and what to do.
 */
static void batch_hint(const Cli *c, const ArGraph *g, const ArError *err)
{
	if (c->load.batch <= 1)
		return;
	for (int i = 0; i < g->nnodes; i++) {
		const ArNode *n = &g->nodes[i];
		const ArTensor *s;
		char quoted[300];
		int64_t v;
		if (strcmp(n->op, "Reshape") || n->ninputs < 2 ||
		    n->inputs[1] < 0)
			continue;
		s = &g->tensors[n->inputs[1]];
		snprintf(quoted, sizeof quoted, "'%s'", n->name);
		if (!s->data || s->dtype != AR_DT_INT64 || s->rank != 1 ||
		    s->dims[0] < 2 || ((const int64_t *)s->data)[0] != 1 ||
		    !strstr(err->msg, quoted))
			continue;
		/* One -1 at most: with [1, -1] the batch becomes 0 (copy). */
		v = ((const int64_t *)s->data)[1];
		fprintf(stderr, "arenac: note: %s: Reshape '%s' hard-codes a "
			"batch of 1 in its target shape [1, %" PRId64 "%s], so "
			"the model cannot run with --batch %" PRId64 "; plan "
			"it with --batch 1, or re-export it with %s for the "
			"batch in that shape ([%s, %" PRId64 "%s])\n",
			c->model, n->name, v, s->dims[0] > 2 ? ", ..." : "",
			c->load.batch, v < 0 ? "0" : "0 or -1",
			v < 0 ? "0" : "-1", v, s->dims[0] > 2 ? ", ..." : "");
		return;
	}
}

int main(int argc, char **argv)
{
	Cli c = {.load.diag = {warn_stderr, &c}};
	ArDimBinding max_dims[CLI_MAX_DIMS + 1];   /* --max-dim's answer */
	ArGraph *g = NULL;
	ArPlan *p = NULL;
	ArError err = {0};
	bool shapes_failed;
	int rc;

	ar_set_oom_handler(out_of_memory);
	if (argc > 1 && !strcmp(argv[1], "solve"))
		return arenac_solve_main(argc - 1, argv + 1);
	if ((rc = cli_parse_args(&c, argc, argv)))
		return rc == CLI_DONE ? AR_OK : rc;
	oom_model = c.model;
	/* The other plan first: a wrong file fails before the planning. */
	if (c.compare && (rc = ar_read_plan_report(c.compare, &c.report,
						    &err))) {
		fprintf(stderr, "arenac: error: %s\n", err.msg);
		return rc;
	}
	/* --max-batch and --max-dim find the value; the run below plans and
	 * writes it. */
	if ((c.max_batch || c.max_dim) &&
	    (rc = cli_max_fit(&c, &c.max_found, &err))) {
		fprintf(stderr, "arenac: error: %s: %s%s\n", c.model, err.msg,
			rc != AR_EXIT_BUDGET ? "" : c.max_dim ? " (--max-dim: "
			"not even 1 fits)" : " (--max-batch: not even a batch "
			"of 1 fits)");
		return rc;
	}
	if (c.max_batch || c.max_dim)
		cli_max_fit_set(&c, c.max_found, &c.load, max_dims);
	rc = ar_load_onnx(c.model, &c.load, &g, &err);
	if (!rc)
		rc = ar_infer_bounded(g, &c.load.diag, c.bounds, c.nbounds,
				      &err);
	if (!rc && c.fuse)
		ar_fuse_preact(g);
	if (!rc && c.nhwc) {
		int nrewritten;
		rc = ar_layout_nhwc(g, &c.load.diag, &nrewritten, &err);
		if (!rc && !nrewritten)
			ar_warn(&c.load.diag, "--layout nhwc: no 4-D "
				"activation feeds an op with a channels-last "
				"kernel; the plan keeps the model's layout");
	}
	if (!rc && c.train) {
		if ((rc = c.multi || c.fitting ? cli_run_devices(&c, g, &err)
					       : run_train(&c, g, &err)))
			fprintf(stderr, "arenac: error: %s: %s\n", c.model,
				err.msg);
		ar_graph_free(g);
		ar_plan_report_free(&c.report);
		ar_kernel_scratch_free(c.kernel_scratch);
		return rc;
	}
	shapes_failed = rc && g;
	if (!rc) {
		rc = ar_plan(g, &c.plan, &p, &err);
		note_time_limit(&c, p);
		/* A plan over budget is still a plan: its numbers help. */
		if (c.stats && (!rc || rc == AR_EXIT_BUDGET))
			ar_print_stats(stderr, g, p);
	}
	if (!rc && c.selfcheck)
		rc = ar_poison_run(g, p, &err);
	if (!rc)
		rc = cli_write_outputs(&c, g, p, NULL, &err);
	if (!rc && cli_no_outputs(&c))
		ar_print_summary(stdout, c.model, g, p);
	if (rc)
		fprintf(stderr, "arenac: error: %s: %s\n", c.model, err.msg);
	if (shapes_failed)
		batch_hint(&c, g, &err);
	ar_plan_free(p);
	ar_graph_free(g);
	ar_plan_report_free(&c.report);
	ar_kernel_scratch_free(c.kernel_scratch);
	return rc;
}
