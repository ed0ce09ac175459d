/*
 * devices.c — the command line's runs on many devices: one configuration
 * (--dp, --zero, --tp, --sequence-parallel, --pp, --offload) or the
 * search (--fit).  The per-device table goes to stdout (as the summary
 * does: without output files; with --stats to stderr); the outputs are
 * each stage's: a file name holding "%d" is written once per pipeline
 * stage with its number (stage headers get the prefix PREFIX_stageN),
 * any other once, for stage 0.  The JSON report holds the devices of
 * every stage whichever stage's plan it carries.
 */
#include "devices_print.h"
#include "max_fit.h"
#include "numfmt.h"
#include "options.h"
#include "values.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"

/* --offload's memories, by name among --memory's (not the device's). */
static int resolve_offload(Cli *c, ArError *err)
{
	for (int k = 0; k < AR_OFF_KINDS; k++) {
		int idx = -1;
		if (!c->offload_to[k])
			continue;
		for (int m = 1; m < c->plan.nmemories; m++)
			if (!strcmp(c->memories[m].name, c->offload_to[k]))
				idx = m;
		if (idx < 0)
			return ar_fail(err, AR_EXIT_USAGE, "--offload: no "
				       "--memory named '%s' besides the "
				       "device's (the first --memory)",
				       c->offload_to[k]);
		c->dev.offload[k] = idx;
	}
	return AR_OK;
}

/* path with its "%d" as stage's number; NULL when it has none. */
static char *stage_path(const char *path, int stage)
{
	const char *d = path ? strstr(path, "%d") : NULL;
	size_t n;
	char *s;
	if (!d)
		return NULL;
	n = strlen(path) + 16;
	s = ar_xmalloc(n);
	snprintf(s, n, "%.*s%d%s", (int)(d - path), path, stage, d + 2);
	return s;
}

/* A '%' in an output name is "%d" once, or none. */
static int check_path(const char *path, ArError *err)
{
	const char *p = path ? strchr(path, '%') : NULL;
	if (p && (p[1] != 'd' || strchr(p + 1, '%')))
		return ar_fail(err, AR_EXIT_USAGE, "output '%s': a name may "
			       "hold one %%d (the stage's number), no other %%",
			       path);
	return AR_OK;
}

/* The header prefix of stage i: PREFIX_stageN (PREFIX: --prefix, else
 * the model's file name without folder or extension). */
static char *stage_prefix(const Cli *c, int i)
{
	const char *base = c->prefix, *slash, *dot;
	size_t len, n;
	char *s;
	if (!base) {
		slash = strrchr(c->model, '/');
		base = slash ? slash + 1 : c->model;
		dot = strrchr(base, '.');
		len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	} else {
		len = strlen(base);
	}
	n = len + 24;
	s = ar_xmalloc(n);
	snprintf(s, n, "%.*s_stage%d", (int)len, base, i);
	return s;
}

static int write_stages(const Cli *c, const ArDevicesResult *r,
			const ArFitResult *fit, ArError *err)
{
	int rc = AR_OK;
	for (int i = 0; i < r->nstages && !rc; i++) {
		const ArStage *st = &r->stages[i];
		Cli s = *c;
		char *json = stage_path(c->json, i), *hdr = stage_path(c->header,
								     i);
		char *dot = stage_path(c->dot, i), *tl = stage_path(c->timeline,
								  i);
		char *tr = stage_path(c->trace, i);
		char *prefix = NULL;
		s.json = json ? json : i ? NULL : c->json;
		s.header = hdr ? hdr : i ? NULL : c->header;
		s.dot = dot ? dot : i ? NULL : c->dot;
		s.timeline = tl ? tl : i ? NULL : c->timeline;
		s.trace = tr ? tr : i ? NULL : c->trace;
		if (r->nstages > 1 && s.header)
			s.prefix = prefix = stage_prefix(c, i);
		s.devices = r;
		s.fit_result = fit;
		s.stage = i;
		if (s.json || s.header || s.dot || s.timeline || s.trace)
			rc = cli_write_outputs(&s, st->train.graph,
					       st->train.plan, &st->train.bill,
					       err);
		free(json), free(hdr), free(dot), free(tl), free(tr);
		free(prefix);
	}
	return rc;
}

static int selfcheck(const ArDevicesResult *r, ArError *err)
{
	int rc = AR_OK;
	for (int i = 0; i < r->nstages && !rc; i++)
		rc = ar_poison_run(r->stages[i].train.graph,
				   r->stages[i].train.plan, err);
	return rc;
}

/* The table on stdout, or with --stats on stderr. */
static FILE *table_file(const Cli *c)
{
	return cli_no_outputs(c) ? stdout : c->stats ? stderr : NULL;
}

/* The model's micro-batch, g as loaded beside gb, loaded with --batch b
 * (which reached it: cli_check_batch): the axis 0 of an input --batch
 * moved (b in gb, not in g), else b (no input moved: g has it already).
 * Not the first input's axis 0, which need not be a batch (a recurrent
 * state's layers), nor --batch itself, which leaves a fixed axis 0 other
 * than 1 (bind.c) and is -1 when not given. */
static int64_t model_batch(const ArGraph *g, const ArGraph *gb, int64_t b)
{
	assert(g->ninputs == gb->ninputs);
	for (int i = 0; i < g->ninputs; i++) {
		const ArTensor *t = &g->tensors[g->inputs[i]];
		const ArTensor *u = &gb->tensors[gb->inputs[i]];
		if (u->rank > 0 && u->dims[0] == b && t->rank > 0 &&
		    t->dims[0] != b)
			return t->dims[0];
	}
	return b;
}

/* The setups --fit searches: every combination of the --fit-axis
 * values, the command line's own option where an axis is not searched.
 * A batch axis loads the model once per micro-batch (graphs[i] for its
 * value i; the others use g) and keeps the global batch: the model's
 * micro-batch times given (--microbatches), else times the devices. */
static int make_setups(const Cli *c, const ArGraph *g, int given,
		       ArFitVariant *v, int *nv, ArGraph **graphs,
		       ArError *err)
{
	const CliFitAxes *x = &c->axes;
	int64_t global = 0;     /* from the first batch value's graph */
	int n = 1, j = 0, rc = AR_OK;

	for (int a = 0; a < CLI_AXES; a++)
		n *= x->n[a] ? x->n[a] : 1;
	assert(n <= CLI_MAX_SETUPS);
	for (int k = 0; k < n; k++) {
		ArTrainSpec *t;
		int at[CLI_AXES], rest = k;
		/* Setup k's value of each axis, the last axis fastest. */
		for (int a = CLI_AXES - 1; a >= 0; a--) {
			int m = x->n[a] ? x->n[a] : 1;
			at[a] = rest % m;
			rest /= m;
		}
		v[j] = (ArFitVariant){g, c->topt, given, 0};
		t = &v[j].opt.spec;
		if (x->n[CLI_AXIS_ATTENTION])
			t->attention = x->attention[at[CLI_AXIS_ATTENTION]];
		if (x->n[CLI_AXIS_LORA]) {
			t->lora.rank = x->lora[at[CLI_AXIS_LORA]].rank;
			t->lora.alpha = x->lora[at[CLI_AXIS_LORA]].alpha;
		}
		if (x->n[CLI_AXIS_BASE_QUANT]) {
			t->base_quant.format =
				x->quant[at[CLI_AXIS_BASE_QUANT]].format;
			t->base_quant.block =
				x->quant[at[CLI_AXIS_BASE_QUANT]].block;
		}
		/* A base format stores frozen weights: full fine-tuning
		 * (no adapters, nothing frozen) has none, and is the setup
		 * without it (base_quant.c refuses it). */
		if (t->base_quant.format != AR_BQ_NONE && !t->lora.rank &&
		    !t->ntrainable && !t->nfreeze && x->n[CLI_AXIS_LORA])
			continue;
		if (x->n[CLI_AXIS_BATCH]) {
			int i = at[CLI_AXIS_BATCH];
			int64_t b = x->batch[i];
			char what[48];
			snprintf(what, sizeof what, "--fit-axis batch=%" PRId64,
				 b);
			if (!graphs[i]) {
				ArLoadOptions lo = c->load;
				lo.batch = b;
				lo.diag.warn = NULL;
				rc = ar_load_onnx(c->model, &lo, &graphs[i],
						  err);
				if (!rc)
					rc = ar_infer_bounded(graphs[i],
							      &lo.diag,
							      c->bounds,
							      c->nbounds, err);
				/* A batch the file fixes: every setup would
				 * plan it, whatever its label (max_fit.c
				 * refuses it alike). */
				if (!rc)
					rc = cli_check_batch(graphs[i], b, what,
							     err);
				if (rc)
					break;
			}
			if (!global)
				global = model_batch(g, graphs[i], b) *
					 (given ? given : c->fit.devices);
			if (global % b) {
				rc = ar_fail(err, AR_EXIT_USAGE, "%s: the global "
					     "batch %" PRId64 " is not a "
					     "multiple of it", what, global);
				break;
			}
			v[j].fwd = graphs[i];
			v[j].batch = b;
			v[j].microbatches = (int)(global / b);
		}
		j++;
	}
	*nv = j;
	if (!rc && !j)
		rc = ar_fail(err, AR_EXIT_USAGE, "--fit-axis base-quant: no "
			     "setup has adapters or anything frozen for a base "
			     "format to store");
	return rc;
}

/* given: --microbatches, or 0 (one per device). */
static int run_fit(Cli *c, const ArGraph *g, int given, ArError *err)
{
	ArFitVariant v[CLI_MAX_SETUPS];
	ArGraph *graphs[CLI_MAX_AXIS_VALUES] = {0};
	ArFitResult fr = {0};
	FILE *f = table_file(c);
	int nv = 0, rc;

	/* What --reserve holds is not the step's: the configurations are
	 * searched for the rest of each device. */
	if (c->topt.reserve >= c->fit.memory)
		return ar_fail(err, AR_EXIT_USAGE, "--reserve %lld is not below "
			       "the %lld bytes of each --fit device",
			       (long long)c->topt.reserve,
			       (long long)c->fit.memory);
	c->fit.memory -= c->topt.reserve;
	c->fit.schedule = c->dev.schedule;
	c->fit.bucket = c->dev.bucket;
	c->fit.host = &c->host;
	rc = make_setups(c, g, given, v, &nv, graphs, err);
	if (!rc)
		rc = ar_fit(v, nv, &c->fit, &fr, err);
	if (!rc && c->selfcheck)
		rc = selfcheck(&fr.best, err);
	/* The host of the first row, as planned (ar_fit checked it). */
	if (!rc) {
		rc = ar_host_bill_devices(&c->host, &fr.hosts[fr.rows[0].variant],
					  &fr.best, &c->host_bill, err);
		c->host_done = true;
	}
	if (!rc)
		rc = write_stages(c, &fr.best, &fr, err);
	if (!rc && f) {
		ar_print_fit(f, c->model, &c->fit, &fr);
		ar_print_devices(f, c->model, &fr.best);
		if (c->fit_device || c->device)
			cli_print_device(f, c->fit_device ? c->fit_device :
					 c->device, c->topt.reserve);
		cli_print_host(f, &c->host_bill);
	}
	ar_fit_free(&fr);
	ar_host_bill_free(&c->host_bill);
	for (int i = 0; i < CLI_MAX_AXIS_VALUES; i++)
		ar_graph_free(graphs[i]);
	return rc;
}

int cli_run_devices(Cli *c, const ArGraph *g, ArError *err)
{
	ArDevicesResult r;
	FILE *f = table_file(c);
	int given = c->dev.microbatches, rc;

	if ((rc = check_path(c->json, err)) ||
	    (rc = check_path(c->header, err)) ||
	    (rc = check_path(c->dot, err)) ||
	    (rc = check_path(c->timeline, err)) ||
	    (rc = check_path(c->trace, err)))
		return rc;
	/* The devices' memories are accounts, not arena tiers.  Each
	 * device's whole bill (ZeRO's shares, pipeline stages) is checked
	 * here, not by ar_train_plan; --budget without a --memory is the
	 * device's size. */
	c->topt.plan.memories = NULL;
	c->topt.plan.nmemories = 0;
	c->topt.device_bytes = 0;
	if (c->plan.budget && !c->plan.nmemories) {
		c->memories[0] = (ArMemory){"device", c->plan.budget, 0};
		c->plan.memories = c->memories;
		c->plan.nmemories = 1;
	}
	if (!given)
		c->dev.microbatches = 1;
	if (c->fitting)
		return run_fit(c, g, given, err);
	if ((rc = resolve_offload(c, err)))
		return rc;
	c->dev.memories = c->memories;
	c->dev.reserve = c->topt.reserve;
	c->dev.nmemories = c->plan.nmemories;
	c->dev.gpus_per_node = c->host.gpus_per_node;
	/* The memory --offload names is the node's host memory: the host's
	 * bound unless --host-memory gives one. */
	for (int k = 0; k < AR_OFF_KINDS && !c->host.memory; k++)
		if (c->dev.offload[k] > 0) {
			c->host.memory = c->memories[c->dev.offload[k]].capacity;
			c->host.memory_name = c->memories[c->dev.offload[k]].name;
		}
	rc = ar_devices_plan(g, &c->topt, &c->dev, &r, err);
	if (!rc && c->selfcheck)
		rc = selfcheck(&r, err);
	if (!rc)
		rc = cli_host_bill(c, g, &c->topt.spec, NULL, NULL, &r, err);
	if (!rc)
		rc = write_stages(c, &r, NULL, err);
	/* Over a memory, the table still says who holds what. */
	if ((!rc || (rc == AR_EXIT_BUDGET && r.devices)) && f) {
		ar_print_devices(f, c->model, &r);
		if (c->device)
			cli_print_device(f, c->device, c->topt.reserve);
		if (c->host_done)
			cli_print_host(f, &c->host_bill);
	}
	ar_devices_free(&r);
	ar_host_bill_free(&c->host_bill);
	return rc;
}
