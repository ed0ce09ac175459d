/*
 * values.c — how option values are read: sizes with K/M/G suffixes (the
 * bad suffix named when there is one), rates with K/M/G/T, and the
 * options that are more than one value: --dim NAME=VALUE, --input-shape
 * NAME=DIMS, --memory NAME:SIZE[:BANDWIDTH].  Strings are cut apart in
 * place: argv outlives the run.
 */
#include "values.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What *bad points at when a size is too large for 2^63. */
const char cli_size_too_large[] = "";

/*
 * Size suffixes, longest first: K, M, G, T and KiB ... TiB are powers of
 * 1024 (numfmt --from=iec, and arenac always took K, M, G so); KB, MB,
 * GB, TB powers of 1000 (numfmt --from=si's units with their B, as disk
 * sizes and DeepSpeed's estimators print them); B alone is bytes.
 */
static const struct { const char *s; int64_t mul; } suffixes[] = {
	{"KiB", (int64_t)1 << 10}, {"MiB", (int64_t)1 << 20},
	{"GiB", (int64_t)1 << 30}, {"TiB", (int64_t)1 << 40},
	{"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000},
	{"TB", 1000000000000}, {"kB", 1000},
	{"K", (int64_t)1 << 10}, {"M", (int64_t)1 << 20},
	{"G", (int64_t)1 << 30}, {"T", (int64_t)1 << 40},
	{"k", (int64_t)1 << 10}, {"m", (int64_t)1 << 20},
	{"g", (int64_t)1 << 30}, {"t", (int64_t)1 << 40}, {"B", 1},
};

bool cli_parse_size(const char *s, int64_t *out, const char **bad)
{
	int64_t whole = 0, mul = 1, frac_num = 0, frac_den = 1;
	const char *p = s;

	*bad = NULL;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++)
		if (!ar_mul64(whole, 10, &whole) ||
		    !ar_add64(whole, *p - '0', &whole)) {
			*bad = cli_size_too_large;
			return false;
		}
	/* 1.5G: a fraction, rounded to the nearest byte. */
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (frac_den < (int64_t)1 << 40) {
				frac_num = frac_num * 10 + (*p - '0');
				frac_den *= 10;
			}
	}
	for (size_t k = 0; *p && k < sizeof suffixes / sizeof *suffixes; k++)
		if (!strcmp(p, suffixes[k].s)) {
			mul = suffixes[k].mul;
			p += strlen(p);
		}
	if (*p) {
		*bad = p;
		return false;
	}
	if (!ar_mul64(whole, mul, out) ||
	    !ar_add64(*out, (int64_t)((double)frac_num * (double)mul /
				      (double)frac_den + 0.5), out) ||
	    *out > (int64_t)1 << 62) {
		*bad = cli_size_too_large;
		return false;
	}
	return true;
}

int cli_size_error(const char *opt, const char *what, const char *text,
		      const char *bad)
{
	if (bad == cli_size_too_large)
		return cli_usage_error("%s: '%s' is too large (at most 2^62 "
				       "bytes)", opt, text);
	if (bad)
		return cli_usage_error("%s: '%s' has an unknown suffix '%s' "
				       "(K, M, G, T and KiB to TiB: powers of "
				       "1024; KB, MB, GB, TB: powers of 1000)",
				       opt, text, bad);
	return cli_usage_error("%s wants %s, not '%s'", opt, what, text);
}

/* Bytes per second: a number with an optional K/M/G/T (1000-based). */
static bool parse_rate(const char *s, double *out, const char **bad)
{
	static const char units[] = "kKmMgGtT";
	char *end;
	const char *u;
	*bad = NULL;
	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || !(*out > 0))
		return false;
	if (*end && (u = strchr(units, *end))) {
		for (long i = 0; i <= (u - units) / 2; i++)
			*out *= 1000;
		end++;
	}
	if (*end)
		*bad = end;
	return *end == 0;
}

int cli_parse_dim(Cli *c, char *arg)
{
	char *eq = strchr(arg, '=');
	const char *bad;
	int64_t v;
	if (!eq || eq == arg)
		return cli_usage_error("--dim wants NAME=VALUE, not '%s'", arg);
	if (!cli_parse_size(eq + 1, &v, &bad) || v == 0)
		return cli_size_error("--dim", "NAME=VALUE with VALUE > 0", arg,
				  bad);
	if (c->load.ndims == CLI_MAX_DIMS)
		return cli_usage_error("more than %d --dim options",
				       CLI_MAX_DIMS);
	*eq = 0;        /* argv outlives the run: the name, cut in place */
	c->dims[c->load.ndims].name = arg;
	c->dims[c->load.ndims++].value = v;
	return AR_OK;
}

int cli_parse_input_shape(Cli *c, char *arg)
{
	char *eq = strrchr(arg, '=');   /* names may hold '=', shapes not */
	ArInputShape *s = &c->shapes[c->load.nshapes];
	if (c->load.nshapes == CLI_MAX_SHAPES)
		return cli_usage_error("more than %d --input-shape options",
				       CLI_MAX_SHAPES);
	if (!eq || eq == arg || !ar_parse_dims(eq + 1, &s->rank, s->dims))
		return cli_usage_error("--input-shape wants NAME=DIMS, DIMS "
				       "like 1x3x224x224 (each dim above 0, "
				       "at most %d dims) or scalar, not '%s'",
				       AR_MAX_RANK, arg);
	*eq = 0;
	s->name = arg;
	c->load.nshapes++;
	return AR_OK;
}

/* --input-value NAME=V[,V...]: the loader reads V in the input's type. */
int cli_parse_input_value(Cli *c, char *arg)
{
	char *eq = strrchr(arg, '=');   /* names may hold '=', numbers not */
	if (c->load.nvalues == CLI_MAX_VALUES)
		return cli_usage_error("more than %d --input-value options",
				       CLI_MAX_VALUES);
	if (!eq || eq == arg || !eq[1])
		return cli_usage_error("--input-value wants NAME=V or "
				       "NAME=V,V,..., not '%s'", arg);
	*eq = 0;
	c->values[c->load.nvalues++] = (ArInputValue){arg, eq + 1};
	return AR_OK;
}

/* --bound NAME=N or NAME=D0xD1x..., cut apart in place. */
int cli_parse_bound(Cli *c, char *arg)
{
	ArBound *b = &c->bounds[c->nbounds];
	char *eq = strrchr(arg, '='), *p, *end;

	if (c->nbounds == CLI_MAX_BOUNDS)
		return cli_usage_error("more than %d --bound options",
				       CLI_MAX_BOUNDS);
	if (!eq || eq == arg || !eq[1])
		return cli_usage_error("--bound wants NAME=N or NAME=D0xD1x..., "
				       "not '%s'", arg);
	*eq = 0;
	b->name = arg;
	b->rank = 0;
	for (p = eq + 1;; p = end + 1) {
		int64_t v;
		errno = 0;
		v = strtoll(p, &end, 10);
		if (errno || end == p || v < 0 || *p == '-' || *p == '+' ||
		    (*end && *end != 'x') || b->rank == AR_MAX_RANK)
			return cli_usage_error("--bound wants sizes of at least 0 "
					       "(N or D0xD1x..., at most %d), "
					       "not '%s'", AR_MAX_RANK, eq + 1);
		b->dims[b->rank++] = v;
		if (!*end)
			break;
	}
	/* One number bounds every data-dependent axis alike. */
	if (b->rank == 1 && !strchr(eq + 1, 'x')) {
		b->max = b->dims[0];
		b->rank = 0;
	}
	c->nbounds++;
	return AR_OK;
}

/* --dot-focus STEP[:RADIUS], step numbers as in the JSON report. */
int cli_parse_dot_focus(Cli *c, char *arg)
{
	char *colon = strchr(arg, ':');
	const char *bad;
	int64_t v, r = 3;
	if (colon)
		*colon = 0;
	if (!cli_parse_size(arg, &v, &bad) || v > 100000000 ||
	    (colon && (!cli_parse_size(colon + 1, &r, &bad) || r > 1000))) {
		if (colon)
			*colon = ':';
		return cli_usage_error("--dot-focus wants STEP or STEP:RADIUS "
				       "(step numbers as in the JSON report), "
				       "not '%s'", arg);
	}
	c->dot_focus_set = true;
	c->dot_focus = (int)v;
	c->dot_radius = (int)r;
	return AR_OK;
}

/* --timeline-other BYTES, 0 allowed (draw every tensor). */
int cli_parse_timeline_other(Cli *c, char *arg)
{
	const char *bad;
	if (!cli_parse_size(arg, &c->timeline_other, &bad))
		return cli_size_error("--timeline-other", "bytes", arg, bad);
	c->timeline_other_set = true;
	return AR_OK;
}

int cli_parse_kernel_scratch(Cli *c, char *arg)
{
	ArKernelScratch *k;
	ArError err = {0};

	if (c->kernel_scratch)
		return cli_usage_error("--kernel-scratch given twice");
	if (ar_kernel_scratch_load(arg, &k, &err))
		return cli_usage_error("%s", err.msg);
	c->plan.kernel_table = c->kernel_scratch = k;
	return AR_OK;
}

int cli_parse_effort(Cli *c, char *arg)
{
	char *end;
	long v;
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < AR_EFFORT_MIN ||
	    v > AR_EFFORT_MAX)
		return cli_usage_error("--effort wants a level from %d to %d, "
				       "not '%s'", AR_EFFORT_MIN,
				       AR_EFFORT_MAX, arg);
	c->plan.effort = (int)v;
	return AR_OK;
}

int cli_parse_precision(Cli *c, char *arg)
{
	if (!ar_precision_parse(arg, &c->topt.spec.precision))
		return cli_usage_error("--precision wants fp32, fp16, bf16, "
				       "mixed-fp16, mixed-bf16, amp-fp16 or "
				       "amp-bf16, not '%s'", arg);
	return AR_OK;
}

int cli_parse_optimizer(Cli *c, char *arg)
{
	char list[512];
	size_t n = 0;
	if (ar_optimizer_parse(arg, &c->topt.spec.optimizer))
		return AR_OK;
	list[0] = '\0';
	for (int o = 0; o < AR_OPTIM_COUNT && n < sizeof list; o++)
		n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
				      o ? ", " : "",
				      ar_optimizer_name((ArOptimizer)o));
	return cli_usage_error("--optimizer wants one of %s, not '%s'", list,
			       arg);
}

/* A number from 0 to 1 (excluded) for option opt, into *v. */
static int parse_fraction(const char *opt, const char *arg, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(arg, &end);
	if (errno || end == arg || *end || !(*v >= 0 && *v < 1))
		return cli_usage_error("%s wants a number from 0 to 1 "
				       "(excluded), not '%s'", opt, arg);
	return AR_OK;
}

/* --beta1 B: Adafactor's first moment, 0 <= B < 1. */
int cli_parse_beta1(Cli *c, char *arg)
{
	double b;
	int rc = parse_fraction("--beta1", arg, &b);
	if (!rc)
		c->topt.spec.beta1 = true;
	return rc;
}

/* --trainable and --freeze: one more regular expression each time. */
static int add_regex(const char *opt, const char **v, int *n, char *arg)
{
	if (*n == CLI_MAX_REGEX)
		return cli_usage_error("at most %d %s options", CLI_MAX_REGEX,
				       opt);
	v[(*n)++] = arg;
	return AR_OK;
}

int cli_parse_trainable(Cli *c, char *arg)
{
	return add_regex("--trainable", c->trainable,
			 &c->topt.spec.ntrainable, arg);
}

int cli_parse_freeze(Cli *c, char *arg)
{
	return add_regex("--freeze", c->freeze, &c->topt.spec.nfreeze, arg);
}

int cli_parse_lora_target(Cli *c, char *arg)
{
	return add_regex("--lora-target", c->lora_targets,
			 &c->topt.spec.lora.ntargets, arg);
}

/* --lora RANK[:ALPHA]: a rank from 1, alpha above 0 (default: the rank,
 * so s = alpha / rank = 1). */
/* RANK[:ALPHA] of option opt into l's rank and alpha. */
static int parse_lora(const char *opt, const char *arg, ArLoraSpec *l)
{
	char *end;
	const char *colon = strchr(arg, ':');
	long long r;
	double a = 0;
	errno = 0;
	r = strtoll(arg, &end, 10);
	if (errno || end == arg || (*end && end != colon) || r < 1 ||
	    r > (1LL << 30) || (colon && ((a = strtod(colon + 1, &end)) <= 0 ||
					  end == colon + 1 || *end)))
		return cli_usage_error("%s wants RANK or RANK:ALPHA, a rank "
				       "of 1 or more and alpha above 0, not "
				       "'%s'", opt, arg);
	l->rank = r;
	l->alpha = colon ? a : (double)r;
	return AR_OK;
}

int cli_parse_lora(Cli *c, char *arg)
{
	return parse_lora("--lora", arg, &c->topt.spec.lora);
}

/* nf4|fp4|int8[:BLOCK] of option opt into q: BLOCK one of bitsandbytes'
 * block sizes (quantize_4bit: 32 to 4096, powers of two; default 64). */
static int parse_base_quant(const char *opt, const char *arg,
			    ArBaseQuant *q)
{
	static const ArBqFormat formats[] = {AR_BQ_NF4, AR_BQ_FP4,
					     AR_BQ_INT8};
	const char *colon = strchr(arg, ':');
	char *end;
	size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
	long long b = 64;

	q->format = AR_BQ_NONE;
	for (int k = 0; k < 3; k++) {
		const char *name = ar_base_quant_name(formats[k]);
		if (strlen(name) == len && !strncmp(arg, name, len))
			q->format = formats[k];
	}
	if (colon) {
		errno = 0;
		b = strtoll(colon + 1, &end, 10);
		if (errno || end == colon + 1 || *end || b < 32 || b > 4096 ||
		    (b & (b - 1)) || q->format == AR_BQ_INT8)
			q->format = AR_BQ_NONE;
	}
	if (q->format == AR_BQ_NONE)
		return cli_usage_error("%s wants nf4, fp4 or int8, the 4-bit "
				       "ones with :BLOCK a power of two from "
				       "32 to 4096, not '%s'", opt, arg);
	q->block = b;
	return AR_OK;
}

int cli_parse_base_quant(Cli *c, char *arg)
{
	return parse_base_quant("--base-quant", arg, &c->topt.spec.base_quant);
}

/* The axes of --fit-axis, by the option each varies. */
static const char *const axis_names[CLI_AXES] = {
	[CLI_AXIS_ATTENTION] = "attention", [CLI_AXIS_LORA] = "lora",
	[CLI_AXIS_BASE_QUANT] = "base-quant", [CLI_AXIS_BATCH] = "batch"};

int cli_fit_axis_named(const char *name)
{
	for (int a = 0; a < CLI_AXES; a++)
		if (!strcmp(axis_names[a], name))
			return a;
	return -1;
}

/* One value v of axis a into slot k of c->axes (what the option's
 * other settings, --lora-dropout, --double-quant, ... add comes from the
 * command line when the setups are made: cli/devices.c). */
static int parse_axis_value(Cli *c, int a, int k, const char *v)
{
	CliFitAxes *x = &c->axes;
	char opt[40];
	int64_t n;
	const char *bad;

	snprintf(opt, sizeof opt, "--fit-axis %s", axis_names[a]);
	switch ((CliAxis)a) {
	case CLI_AXIS_ATTENTION:
		for (int m = AR_ATTN_MATH; m <= AR_ATTN_EFFICIENT; m++)
			if (!strcmp(v, ar_attention_name((ArAttention)m))) {
				x->attention[k] = (ArAttention)m;
				return AR_OK;
			}
		return cli_usage_error("%s wants math, flash or efficient, not "
				       "'%s'", opt, v);
	case CLI_AXIS_LORA:
		/* Rank 0: the step without adapters. */
		x->lora[k] = (ArLoraSpec){0};
		return strcmp(v, "0") ? parse_lora(opt, v, &x->lora[k]) : AR_OK;
	case CLI_AXIS_BASE_QUANT:
		x->quant[k] = (ArBaseQuant){0};
		return strcmp(v, "none") ? parse_base_quant(opt, v,
							    &x->quant[k])
					 : AR_OK;
	case CLI_AXIS_BATCH:
		if (!cli_parse_size(v, &n, &bad) || n < 1 || n > 1 << 20)
			return cli_size_error(opt, "a micro-batch from 1 to "
					      "1048576", v, bad);
		x->batch[k] = n;
		return AR_OK;
	case CLI_AXES:
		break;
	}
	assert(!"an axis without a parser");
	return AR_EXIT_INTERNAL;
}

/* --fit-axis NAME=V[,V...]: the values --fit tries of option NAME. */
int cli_parse_fit_axis(Cli *c, char *arg)
{
	char *eq = strchr(arg, '='), *v, *next;
	int a, rc, setups = 1;

	if (eq)
		*eq = 0;        /* argv outlives the run: cut in place */
	a = eq ? cli_fit_axis_named(arg) : -1;
	if (a < 0)
		return cli_usage_error("--fit-axis wants NAME=V[,V...], NAME "
				       "attention, lora, base-quant or batch, "
				       "not '%s'", arg);
	if (c->axes.n[a])
		return cli_usage_error("--fit-axis %s given twice: list its "
				       "values once, comma separated", arg);
	for (v = eq + 1; v; v = next) {
		if ((next = strchr(v, ',')))
			*next++ = 0;
		if (c->axes.n[a] == CLI_MAX_AXIS_VALUES)
			return cli_usage_error("--fit-axis %s: more than %d "
					       "values", arg,
					       CLI_MAX_AXIS_VALUES);
		if ((rc = parse_axis_value(c, a, c->axes.n[a], v)))
			return rc;
		c->axes.n[a]++;
	}
	for (int k = 0; k < CLI_AXES; k++)
		setups *= c->axes.n[k] ? c->axes.n[k] : 1;
	if (setups > CLI_MAX_SETUPS)
		return cli_usage_error("--fit-axis: %d setups, more than the "
				       "%d --fit plans at most; list fewer "
				       "values", setups, CLI_MAX_SETUPS);
	return AR_OK;
}

/* --lora-dropout P: the adapter path's dropout, 0 <= P < 1. */
int cli_parse_lora_dropout(Cli *c, char *arg)
{
	return parse_fraction("--lora-dropout", arg,
			      &c->topt.spec.lora.dropout);
}

/* --memory NAME or NAME:SIZE, NAME a row of the device table: its
 * bandwidth, and its size unless given (a host memory's must be). */
static int table_memory(Cli *c, ArMemory *m, const char *name,
			const char *size)
{
	const ArDeviceInfo *d;
	const char *bad;
	int rc = cli_device_named("--memory (NAME:SIZE[:BANDWIDTH], or a "
				  "device's name)", name, &d);
	if (rc)
		return rc;
	if (size && strchr(size, ':'))
		return cli_usage_error("--memory %s: the device table gives "
				       "its bandwidth; a memory of another "
				       "bandwidth needs a name of its own",
				       d->name);
	*m = (ArMemory){d->name, d->memory, d->bandwidth};
	if (size && (!cli_parse_size(size, &m->capacity, &bad) ||
		     !m->capacity))
		return cli_size_error("--memory", "a size above 0", size, bad);
	if (!m->capacity)
		return cli_usage_error("--memory %s: a host memory's size is "
				       "what is fitted; give it: --memory "
				       "%s:SIZE", d->name, d->name);
	c->plan.memories = c->memories;
	c->plan.nmemories++;
	return AR_OK;
}

/* --memory NAME:SIZE[:BANDWIDTH], cut apart in place. */
int cli_parse_memory(Cli *c, char *arg)
{
	ArMemory *m = &c->memories[c->plan.nmemories];
	char *size = strchr(arg, ':'), *bw;
	const char *bad;
	if (c->plan.nmemories == AR_MAX_TIERS)
		return cli_usage_error("at most %d --memory options",
				       AR_MAX_TIERS);
	if (!*arg || size == arg)
		return cli_usage_error("--memory wants NAME:SIZE[:BANDWIDTH], "
				       "not '%s'", arg);
	if (size)
		*size++ = 0;
	/* A name from the device table brings its size and bandwidth. */
	if (!size || ar_device_find(arg))
		return table_memory(c, m, arg, size);
	bw = strchr(size, ':');
	if (bw)
		*bw++ = 0;
	m->name = arg;
	if (!cli_parse_size(size, &m->capacity, &bad) || m->capacity == 0)
		return cli_size_error("--memory", "a size above 0", size, bad);
	if (bw && !parse_rate(bw, &m->bandwidth, &bad))
		return bad ? cli_usage_error("--memory: bandwidth '%s' has an "
					     "unknown suffix '%s' (K, M, G, T: "
					     "powers of 1000)", bw, bad) :
			     cli_usage_error("--memory wants a bandwidth in "
					     "bytes per second, not '%s'", bw);
	c->plan.memories = c->memories;
	c->plan.nmemories++;
	return AR_OK;
}


/* --reserve BYTES: 0 too, to hold none where --device has a default. */
int cli_parse_reserve(Cli *c, char *arg)
{
	const char *bad;
	if (!cli_parse_size(arg, &c->topt.reserve, &bad))
		return cli_size_error("--reserve", "bytes", arg, bad);
	return AR_OK;
}

/* --offload WHAT:MEMORY; the memory is found once every --memory is read
 * (devices.c). */
int cli_parse_offload(Cli *c, char *arg)
{
	static const char *const what[AR_OFF_KINDS] = {
		"optimizer", "parameters", "activations"};
	char *colon = strchr(arg, ':');
	if (colon && colon[1])
		for (int k = 0; k < AR_OFF_KINDS; k++)
			if ((size_t)(colon - arg) == strlen(what[k]) &&
			    !strncmp(arg, what[k], strlen(what[k]))) {
				c->offload_to[k] = colon + 1;
				return AR_OK;
			}
	return cli_usage_error("--offload wants optimizer:MEMORY, "
			       "parameters:MEMORY or activations:MEMORY, "
			       "not '%s'", arg);
}

/* --fit NxSIZE[:FLOPS[:LINK]], cut apart in place. */
int cli_parse_fit(Cli *c, char *arg)
{
	char *x = strchr(arg, 'x'), *end, *rate, *link;
	const char *bad;
	long n;
	errno = 0;
	n = x ? strtol(arg, &end, 10) : 0;
	if (!x || errno || end != x || n < 1 || n > 1 << 16)
		return cli_usage_error("--fit wants DEVICESxSIZE, like 8x80G, "
				       "not '%s'", arg);
	rate = strchr(x + 1, ':');
	link = rate ? strchr(rate + 1, ':') : NULL;
	if (rate)
		*rate++ = 0;
	if (link)
		*link++ = 0;
	c->fit.devices = (int)n;
	/* Rates not given come from the device named (here or by
	 * --device), else the defaults (cli_apply_device). */
	c->fit.device_flops = c->fit.link_bandwidth = 0;
	c->fit_device = NULL;
	if (x[1] < '0' || x[1] > '9') {
		const ArDeviceInfo *d;
		int rc = cli_device_named("--fit", x + 1, &d);
		if (rc)
			return rc;
		if (!d->flops)
			return cli_usage_error("--fit %s: a host memory, not a "
					       "device that computes", d->name);
		c->fit_device = d;
		c->fit.memory = d->memory;
	} else if (!cli_parse_size(x + 1, &c->fit.memory, &bad) ||
		   !c->fit.memory) {
		return cli_size_error("--fit", "a memory size above 0", x + 1,
				      bad);
	}
	if ((rate && !parse_rate(rate, &c->fit.device_flops, &bad)) ||
	    (link && !parse_rate(link, &c->fit.link_bandwidth, &bad)))
		return cli_usage_error("--fit wants FLOP/s and bytes/s with "
				       "K, M, G or T (powers of 1000), not "
				       "'%s'", link && bad >= link ? link :
				       rate);
	c->fitting = true;
	return AR_OK;
}
