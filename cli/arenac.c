/*
 * arenac.c — the command line: parse options, run the stages, write outputs.
 *
 * The CLI owns policy (which outputs, which limits, what to print) and the
 * mapping of failures to exit codes; the stages below it never print and
 * never exit.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "fuse.h"
#include "infer.h"
#include "load.h"
#include "plan.h"
#include "solve.h"
#include "summary.h"
#include "checkpoint.h"

static const char usage_text[] =
"usage: arenac [options] MODEL.onnx\n"
"       arenac solve INPUT.csv [--capacity N] [-o OUTPUT.csv]\n"
"\n"
"Plans every activation of an ONNX model into one static arena and writes\n"
"the layout as a C header, a JSON report and Graphviz pictures.  Without\n"
"output options it prints a summary of the plan.\n"
"\n"
"Shapes:\n"
"  --dim NAME=VALUE      bind a symbolic input dim (repeatable)\n"
"  --dim-default VALUE   bind every symbolic dim not bound by --dim\n"
"  --batch N             set axis 0 of every graph input to N\n"
"\n"
"Planning:\n"
"  --align N             offset and size alignment, a power of two (16)\n"
"  --algo NAME           auto, greedy-size, greedy-breadth, greedy-lifetime,\n"
"                        exact (auto: heuristics, then exact search)\n"
"  --effort 1-9          how much work each search may do (order, offsets,\n"
"                        tiers, checkpoints): 4x more per level (5); the\n"
"                        same model and options give the same plan on\n"
"                        every machine\n"
"  --time-limit SECONDS  safety net: the searches stop SECONDS after the\n"
"                        run starts, and the run says so (off); plans cut\n"
"                        short by it depend on the machine's speed\n"
"  --budget BYTES        fail with exit 3 if the arena exceeds BYTES\n"
"                        (suffixes K, M, G: powers of 1024)\n"
"  --order file|memory   step order: the file's, or the one with the least\n"
"                        peak memory found (memory)\n"
"  --no-views            Reshape & co. copy instead of sharing their input\n"
"  --inplace none|elementwise\n"
"                        elementwise ops may overwrite a dying input of\n"
"                        their output's size (elementwise)\n"
"  --concat copy|elide   Concat inputs written straight into their slice\n"
"                        of the output where that is safe (elide)\n"
"  --fuse none|preact    a Conv whose input is only a chain of per-channel\n"
"                        ops (BatchNormalization, Mul, Add, Relu) applies\n"
"                        them as it loads (arenac.PreactConv), so their\n"
"                        outputs are never stored; needs a runtime kernel\n"
"                        (none)\n"
"  --memory NAME:SIZE[:BANDWIDTH]\n"
"                        a memory tier, fastest first (repeatable): each\n"
"                        gets its own arena, and each activation goes to\n"
"                        the tier that minimises the estimated traffic\n"
"                        time; SIZE in bytes (K, M, G: powers of 1024),\n"
"                        BANDWIDTH in bytes/s (K, M, G, T: powers of 1000)\n"
"  --weights-in NAME     place the weights at the start of memory NAME\n"
"                        (default: apart from the arenas, as without tiers)\n"
"\n"
"Training (one step: forward, loss, backward, update in one arena):\n"
"  --train               plan a training step instead of inference\n"
"  --loss cross-entropy  the loss on the first output (the only kind)\n"
"  --optimizer NAME      sgd, momentum, adam (sgd)\n"
"  --checkpoint POLICY   which activations stay for the backward pass:\n"
"                        none (all stay), all (layer boundaries stay),\n"
"                        sqrt (Chen et al.), optimal (least recompute\n"
"                        that fits --budget); default optimal with\n"
"                        --budget, else none\n"
"  --budget-sweep        print the budget / recompute trade-off and exit\n"
"\n"
"Outputs:\n"
"  --json FILE           JSON plan report ('-' for stdout)\n"
"  -o, --header FILE     C header with the arena layout\n"
"  --prefix NAME         identifier prefix in the header (from the file name)\n"
"  --dot FILE            dataflow graph (.dot, .svg, .png, .pdf)\n"
"  --dot-weights         show weights and constants in --dot\n"
"  --timeline FILE       memory timeline picture (.svg, .png, .dot)\n"
"  --weights FILE        weights and constants as one aligned blob: raw\n"
"                        (.bin) or a C array (.c); offsets in the header\n"
"  --stats               print planning statistics on stderr\n"
"  --selfcheck           also run the plan on poisoned bytes (slow)\n"
"  -q, --quiet           no summary and no warnings\n"
"\n"
"Limits:\n"
"  --max-model-bytes N   refuse larger files (2G)\n"
"  --max-nodes N         refuse models with more nodes (1000000)\n"
"\n"
"  -h, --help            this text\n"
"  -V, --version         the version\n"
"\n"
"Exit codes: 0 ok, 1 usage or output error, 2 bad or unsupported model,\n"
"3 the plan does not fit the budget, 4 internal error (a plan failed\n"
"verification).\n";

enum {
	OPT_DIM = 256, OPT_DIM_DEFAULT, OPT_BATCH, OPT_ALIGN, OPT_ALGO,
	OPT_TIME_LIMIT, OPT_BUDGET, OPT_JSON, OPT_PREFIX, OPT_DOT,
	OPT_DOT_WEIGHTS, OPT_TIMELINE, OPT_STATS, OPT_SELFCHECK,
	OPT_MAX_MODEL_BYTES, OPT_MAX_NODES, OPT_WEIGHTS, OPT_MEMORY,
	OPT_WEIGHTS_IN, OPT_ORDER, OPT_NO_VIEWS, OPT_INPLACE, OPT_CONCAT,
	OPT_TRAIN, OPT_LOSS, OPT_OPTIMIZER, OPT_CHECKPOINT, OPT_BUDGET_SWEEP,
	OPT_FUSE, OPT_EFFORT
};

static const struct option long_opts[] = {
	{"dim", required_argument, NULL, OPT_DIM},
	{"dim-default", required_argument, NULL, OPT_DIM_DEFAULT},
	{"batch", required_argument, NULL, OPT_BATCH},
	{"align", required_argument, NULL, OPT_ALIGN},
	{"algo", required_argument, NULL, OPT_ALGO},
	{"effort", required_argument, NULL, OPT_EFFORT},
	{"time-limit", required_argument, NULL, OPT_TIME_LIMIT},
	{"budget", required_argument, NULL, OPT_BUDGET},
	{"memory", required_argument, NULL, OPT_MEMORY},
	{"weights-in", required_argument, NULL, OPT_WEIGHTS_IN},
	{"train", no_argument, NULL, OPT_TRAIN},
	{"loss", required_argument, NULL, OPT_LOSS},
	{"optimizer", required_argument, NULL, OPT_OPTIMIZER},
	{"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
	{"budget-sweep", no_argument, NULL, OPT_BUDGET_SWEEP},
	{"json", required_argument, NULL, OPT_JSON},
	{"header", required_argument, NULL, 'o'},
	{"prefix", required_argument, NULL, OPT_PREFIX},
	{"dot", required_argument, NULL, OPT_DOT},
	{"dot-weights", no_argument, NULL, OPT_DOT_WEIGHTS},
	{"timeline", required_argument, NULL, OPT_TIMELINE},
	{"weights", required_argument, NULL, OPT_WEIGHTS},
	{"order", required_argument, NULL, OPT_ORDER},
	{"no-views", no_argument, NULL, OPT_NO_VIEWS},
	{"inplace", required_argument, NULL, OPT_INPLACE},
	{"concat", required_argument, NULL, OPT_CONCAT},
	{"fuse", required_argument, NULL, OPT_FUSE},
	{"stats", no_argument, NULL, OPT_STATS},
	{"selfcheck", no_argument, NULL, OPT_SELFCHECK},
	{"quiet", no_argument, NULL, 'q'},
	{"max-model-bytes", required_argument, NULL, OPT_MAX_MODEL_BYTES},
	{"max-nodes", required_argument, NULL, OPT_MAX_NODES},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0}
};

typedef struct Cli {
	const char *model;
	ArLoadOptions load;
	ArDimBinding dims[64];
	ArPlanOptions plan;
	ArMemory memories[AR_MAX_TIERS];
	const char *json, *header, *prefix, *dot, *timeline, *weights;
	bool dot_weights, stats, selfcheck, quiet;
	bool train, sweep, policy_set, fuse;
	/* Training options given on the command line, default or not. */
	const char *train_only;
	ArTrainOptions topt;
	char options[1024];     /* the planning options, echoed in outputs */
} Cli;

static int usage_error(const char *fmt, const char *arg)
{
	fputs("arenac: error: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\n(run 'arenac --help' for the options)\n", stderr);
	return AR_EXIT_USAGE;
}

/* A non-negative integer with an optional K/M/G (1024-based) suffix. */
static bool parse_size(const char *s, int64_t *out)
{
	char *end;
	int64_t v, mul = 1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || v < 0)
		return false;
	switch (*end) {
	case 'k': case 'K': mul = 1 << 10; end++; break;
	case 'm': case 'M': mul = 1 << 20; end++; break;
	case 'g': case 'G': mul = 1 << 30; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	return *end == 0 && ar_mul64(v, mul, out);
}

static bool parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(s, &end);
	return !errno && end != s && !*end && *out >= 0;
}

/* Bytes per second: a number with an optional K/M/G/T (1000-based). */
static bool parse_rate(const char *s, double *out)
{
	static const char units[] = "kKmMgGtT";
	char *end;
	const char *u;
	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || !(*out > 0))
		return false;
	if (*end && (u = strchr(units, *end))) {
		for (long i = 0; i <= (u - units) / 2; i++)
			*out *= 1000;
		end++;
	}
	return *end == 0;
}

/* --memory NAME:SIZE[:BANDWIDTH], cut apart in place (argv outlives the run). */
static int parse_memory(Cli *c, char *arg)
{
	ArMemory *m = &c->memories[c->plan.nmemories];
	char *size = strchr(arg, ':'), *bw;
	if (c->plan.nmemories == AR_MAX_TIERS)
		return usage_error("at most 8 --memory options%s", "");
	if (!size || size == arg)
		return usage_error("--memory wants NAME:SIZE[:BANDWIDTH], not "
				   "'%s'", arg);
	*size++ = 0;
	bw = strchr(size, ':');
	if (bw)
		*bw++ = 0;
	m->name = arg;
	if (!parse_size(size, &m->capacity) || m->capacity == 0)
		return usage_error("--memory wants a size above 0, not '%s'",
				   size);
	if (bw && !parse_rate(bw, &m->bandwidth))
		return usage_error("--memory wants a bandwidth in bytes per "
				   "second, not '%s'", bw);
	c->plan.memories = c->memories;
	c->plan.nmemories++;
	return AR_OK;
}

static void add_option_text(Cli *c, const char *name, const char *val)
{
	size_t n = strlen(c->options);
	snprintf(c->options + n, sizeof c->options - n, "%s%s%s%s",
		 n ? " " : "", name, val ? " " : "", val ? val : "");
}

static void warn_stderr(void *ctx, const char *msg)
{
	const Cli *c = ctx;
	if (!c->quiet)
		fprintf(stderr, "arenac: warning: %s: %s\n", c->model, msg);
}

static int parse_args(Cli *c, int argc, char **argv)
{
	int opt;
	int64_t v;
	double d;

	c->load.dim_default = -1;
	c->load.batch = -1;
	c->load.dims = c->dims;
	ar_plan_options_default(&c->plan);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:qhV", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_DIM: {
			char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || !parse_size(eq + 1, &v) || v == 0)
				return usage_error("--dim wants NAME=VALUE with "
						   "VALUE > 0, not '%s'", optarg);
			if (c->load.ndims == (int)(sizeof c->dims / sizeof *c->dims))
				return usage_error("too many --dim options%s", "");
			/* argv outlives the run: cut the name out in place,
			 * after echoing the option whole. */
			add_option_text(c, "--dim", optarg);
			*eq = 0;
			c->dims[c->load.ndims].name = optarg;
			c->dims[c->load.ndims++].value = v;
			break;
		}
		case OPT_DIM_DEFAULT:
			if (!parse_size(optarg, &v) || v == 0)
				return usage_error("--dim-default wants a "
						   "positive number, not '%s'", optarg);
			c->load.dim_default = v;
			add_option_text(c, "--dim-default", optarg);
			break;
		case OPT_BATCH:
			if (!parse_size(optarg, &v) || v == 0)
				return usage_error("--batch wants a positive "
						   "number, not '%s'", optarg);
			c->load.batch = v;
			add_option_text(c, "--batch", optarg);
			break;
		case OPT_ALIGN:
			if (!parse_size(optarg, &v) || v == 0 || (v & (v - 1)))
				return usage_error("--align wants a power of "
						   "two, not '%s'", optarg);
			c->plan.align = v;
			add_option_text(c, "--align", optarg);
			break;
		case OPT_ALGO:
			c->plan.algo = optarg;
			add_option_text(c, "--algo", optarg);
			break;
		case OPT_EFFORT:
			if (!parse_size(optarg, &v) || v < AR_EFFORT_MIN ||
			    v > AR_EFFORT_MAX)
				return usage_error("--effort wants a level from "
						   "1 to 9, not '%s'", optarg);
			c->plan.effort = (int)v;
			add_option_text(c, "--effort", optarg);
			break;
		case OPT_TIME_LIMIT:
			if (!parse_double(optarg, &d))
				return usage_error("--time-limit wants seconds, "
						   "not '%s'", optarg);
			c->plan.time_limit = d;
			add_option_text(c, "--time-limit", optarg);
			break;
		case OPT_BUDGET:
			if (!parse_size(optarg, &v) || v == 0)
				return usage_error("--budget wants bytes (K, M, "
						   "G suffixes allowed), not '%s'",
						   optarg);
			c->plan.budget = v;
			add_option_text(c, "--budget", optarg);
			break;
		case OPT_MEMORY:
			add_option_text(c, "--memory", optarg);
			if (parse_memory(c, optarg))
				return AR_EXIT_USAGE;
			break;
		case OPT_WEIGHTS_IN:
			c->plan.weights_in = optarg;
			add_option_text(c, "--weights-in", optarg);
			break;
		case OPT_TRAIN:
			c->train = true;
			add_option_text(c, "--train", NULL);
			break;
		case OPT_LOSS:
			if (strcmp(optarg, "cross-entropy"))
				return usage_error("--loss knows only "
						   "cross-entropy, not '%s'", optarg);
			c->train_only = "--loss";
			break;
		case OPT_OPTIMIZER:
			if (!strcmp(optarg, "sgd"))
				c->topt.optimizer = AR_OPTIM_SGD;
			else if (!strcmp(optarg, "momentum"))
				c->topt.optimizer = AR_OPTIM_MOMENTUM;
			else if (!strcmp(optarg, "adam"))
				c->topt.optimizer = AR_OPTIM_ADAM;
			else
				return usage_error("--optimizer wants sgd, "
						   "momentum or adam, not '%s'", optarg);
			c->train_only = "--optimizer";
			add_option_text(c, "--optimizer", optarg);
			break;
		case OPT_CHECKPOINT: {
			ArCkptPolicy p = AR_CKPT_NONE;
			while (p <= AR_CKPT_OPTIMAL &&
			       strcmp(optarg, ar_ckpt_policy_name(p)))
				p++;
			if (p > AR_CKPT_OPTIMAL)
				return usage_error("--checkpoint wants none, "
						   "all, sqrt or optimal, not '%s'",
						   optarg);
			c->topt.policy = p;
			c->policy_set = true;
			c->train_only = "--checkpoint";
			add_option_text(c, "--checkpoint", optarg);
			break;
		}
		case OPT_BUDGET_SWEEP:
			c->sweep = true;
			c->train_only = "--budget-sweep";
			break;
		case OPT_JSON: c->json = optarg; break;
		case 'o': c->header = optarg; break;
		case OPT_PREFIX: c->prefix = optarg; break;
		case OPT_DOT: c->dot = optarg; break;
		case OPT_DOT_WEIGHTS: c->dot_weights = true; break;
		case OPT_TIMELINE: c->timeline = optarg; break;
		case OPT_WEIGHTS: c->weights = optarg; break;
		case OPT_ORDER:
			if (strcmp(optarg, "file") && strcmp(optarg, "memory"))
				return usage_error("--order wants file or memory, "
						   "not '%s'", optarg);
			c->plan.order = optarg[0] == 'f' ? AR_ORDER_FILE :
							    AR_ORDER_MEMORY;
			add_option_text(c, "--order", optarg);
			break;
		case OPT_NO_VIEWS:
			c->plan.views = false;
			add_option_text(c, "--no-views", NULL);
			break;
		case OPT_INPLACE:
			if (strcmp(optarg, "none") && strcmp(optarg, "elementwise"))
				return usage_error("--inplace wants none or "
						   "elementwise, not '%s'", optarg);
			c->plan.inplace = optarg[0] == 'n' ? AR_INPLACE_NONE :
					  AR_INPLACE_ELEMENTWISE;
			add_option_text(c, "--inplace", optarg);
			break;
		case OPT_CONCAT:
			if (strcmp(optarg, "copy") && strcmp(optarg, "elide"))
				return usage_error("--concat wants copy or elide, "
						   "not '%s'", optarg);
			c->plan.concat_elide = optarg[0] == 'e';
			add_option_text(c, "--concat", optarg);
			break;
		case OPT_FUSE:
			if (strcmp(optarg, "none") && strcmp(optarg, "preact"))
				return usage_error("--fuse wants none or preact, "
						   "not '%s'", optarg);
			c->fuse = optarg[0] == 'p';
			add_option_text(c, "--fuse", optarg);
			break;
		case OPT_STATS: c->stats = true; break;
		case OPT_SELFCHECK: c->selfcheck = true; break;
		case 'q': c->quiet = true; break;
		case OPT_MAX_MODEL_BYTES:
			if (!parse_size(optarg, &v) || v == 0)
				return usage_error("--max-model-bytes wants "
						   "bytes, not '%s'", optarg);
			c->load.max_model_bytes = v;
			break;
		case OPT_MAX_NODES:
			if (!parse_size(optarg, &v) || v == 0 || v > 100000000)
				return usage_error("--max-nodes wants a count, "
						   "not '%s'", optarg);
			c->load.max_nodes = (int)v;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'V':
			puts("arenac " ARENAC_VERSION);
			exit(0);
		case ':':
			return usage_error("option '%s' needs a value",
					   argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error(optind < argc ? "expected one model file, "
				   "got more (%s ...)" : "no model file given%s",
				   optind < argc ? argv[optind + 1] : "");
	c->model = argv[optind];
	c->load.diag.warn = warn_stderr;
	c->load.diag.ctx = c;
	c->plan.diag = c->load.diag;
	if (c->train_only && !c->train)
		return usage_error("%s needs --train (so do all of "
				   "--optimizer, --checkpoint, --loss and "
				   "--budget-sweep)", c->train_only);
	if (c->train && c->weights)
		return usage_error("--weights is not available with "
				   "--train%s", "");
	if (c->train && c->fuse)
		return usage_error("--fuse is for inference plans: a training "
				   "step keeps the prologue's outputs for the "
				   "backward pass%s", "");
	c->topt.budget = c->plan.budget;
	c->topt.plan = c->plan;
	if (!c->policy_set)
		c->topt.policy = c->plan.budget ? AR_CKPT_OPTIMAL : AR_CKPT_NONE;
	return AR_OK;
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

static int write_outputs(const Cli *c, const ArGraph *g, const ArPlan *p,
			 const ArTrainBill *bill, ArError *err)
{
	char *prefix = c->prefix ? NULL : default_prefix(c->model);
	ArEmitInfo info = {
		.model_path = c->model,
		.prefix = c->prefix ? c->prefix : prefix,
		.options = c->options,
		.dot_weights = c->dot_weights,
		.training = bill,
	};
	/* Every output is finished before any is published: all or none. */
	ArOutFile out[5];
	int n = 0, rc = AR_OK;

	if (c->json && !(rc = ar_out_open(&out[n], c->json, err))) {
		if ((rc = ar_write_json(out[n].f, g, p, &info)))
			ar_fail(err, rc, "%s: write failed", c->json),
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

static bool no_outputs(const Cli *c)
{
	return !c->quiet && !c->json && !c->header && !c->dot && !c->timeline &&
	       !c->weights;
}

/* The safety net fired: the plan is valid but no longer reproducible. */
static void note_time_limit(const Cli *c, const ArPlan *p)
{
	if (p && p->stopped_by_time_limit)
		fprintf(stderr, "arenac: note: %s: --time-limit %g stopped a "
			"search: the plan is valid, but another run may "
			"differ\n", c->model, c->plan.time_limit);
}

/* The training step in place of the inference plan. */
static int run_train(const Cli *c, const ArGraph *g, ArError *err)
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
	if (!rc && c->stats) {
		ar_print_train_plan_stats(stderr, g, r.graph, r.plan, &r.bill);
		ar_print_train_stats(stderr, &r.bill);
	}
	if (!rc && c->selfcheck)
		rc = ar_poison_run(r.graph, r.plan, err);
	if (!rc)
		rc = write_outputs(c, r.graph, r.plan, &r.bill, err);
	if (!rc && no_outputs(c)) {
		ar_print_summary(stdout, c->model, r.graph, r.plan);
		ar_print_train_stats(stdout, &r.bill);
	}
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
	Cli c = {0};
	ArGraph *g = NULL;
	ArPlan *p = NULL;
	ArError err = {0};
	bool shapes_failed;
	int rc;

	if (argc > 1 && !strcmp(argv[1], "solve"))
		return arenac_solve_main(argc - 1, argv + 1);
	if ((rc = parse_args(&c, argc, argv)))
		return rc;
	rc = ar_load_onnx(c.model, &c.load, &g, &err);
	if (!rc)
		rc = ar_infer(g, &c.load.diag, &err);
	if (!rc && c.fuse)
		ar_fuse_preact(g);
	if (!rc && c.train) {
		if ((rc = run_train(&c, g, &err)))
			fprintf(stderr, "arenac: error: %s: %s\n", c.model,
				err.msg);
		ar_graph_free(g);
		return rc;
	}
	shapes_failed = rc && g;
	if (!rc) {
		rc = ar_plan(g, &c.plan, &p, &err);
		note_time_limit(&c, p);
		if (rc == AR_EXIT_BUDGET || (!rc && c.stats))
			ar_print_stats(stderr, g, p);
	}
	if (!rc && c.selfcheck)
		rc = ar_poison_run(g, p, &err);
	if (!rc)
		rc = write_outputs(&c, g, p, NULL, &err);
	if (!rc && no_outputs(&c))
		ar_print_summary(stdout, c.model, g, p);
	if (rc)
		fprintf(stderr, "arenac: error: %s: %s\n", c.model, err.msg);
	if (shapes_failed)
		batch_hint(&c, g, &err);
	ar_plan_free(p);
	ar_graph_free(g);
	return rc;
}
