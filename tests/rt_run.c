/*
 * rt_run.c — runs one generated header in the reference runtime and
 * compares its first output with a reference TensorProto.
 *
 *   cc -DARENAC_HEADER='"m.h"' -DLO=m -DUP=M rt_run.c pbread.c ...
 *   rt_run [options] WEIGHTS.bin [EXPECTED.pb]
 *     --input FILE.pb   a graph input, any element type (repeatable; each
 *                       goes to the input of its TensorProto's name, else
 *                       to the inputs in order; default: element i of the
 *                       only float input is i/n, the shared light_*
 *                       convention)
 *     --fill random     fill the arena with random bytes first (default
 *                       zeros), so reads of unwritten bytes show up
 *     --rtol R --atol A tolerances (1e-3, 1e-7)
 *     --output K        compare graph output K (default: the first)
 *     --print           print the output values
 *     --dump FILE       write the output's bytes, as the arena holds them
 *     --repeat N        run N times (timing)
 *
 * Prints one line with the errors, time, and the arena beside the arena a
 * plan with one buffer per tensor would need.  Exit 0 when every value is
 * within atol + rtol * |expected|, 1 otherwise, 2 on a usage or run error.
 * Built with -DWEIGHTS_LINKED the weights come from the C array that
 * `arenac --weights FILE.c` wrote, and no WEIGHTS argument is taken.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"             /* rt_get_f reads any element type */
#include "pbread.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define L(x) CAT(LO, x)
#define U(x) CAT(UP, x)

#include ARENAC_HEADER

ARENAC_RT_BIND(LO, UP)

#define MAX_INPUTS 16

/* The only float graph input, or -1. */
static int float_input(void)
{
	int found = -1;
	for (int i = 0; i < U(_NUM_TENSORS); i++)
		if (L(_tensors)[i].kind == U(_KIND_INPUT) &&
		    L(_tensors)[i].dtype == U(_DT_FLOAT32)) {
			if (found >= 0)
				return -1;
			found = i;
		}
	return found;
}

/* The graph input called name, else the k-th graph input, else -1. */
static int input_for(const char *name, int k)
{
	for (int i = 0; i < U(_NUM_TENSORS); i++)
		if (L(_tensors)[i].kind == U(_KIND_INPUT) &&
		    !strcmp(L(_tensors)[i].name, name))
			return i;
	for (int i = 0; i < U(_NUM_TENSORS); i++)
		if (L(_tensors)[i].kind == U(_KIND_INPUT) && k-- == 0)
			return i;
	return -1;
}

static int first_output(void)
{
	for (int i = 0; i < U(_NUM_TENSORS); i++)
		if (L(_tensors)[i].kind == U(_KIND_OUTPUT))
			return i;
	return -1;
}

static int64_t numel(int t)
{
	int64_t n = 1;
	for (int i = 0; i < L(_tensors)[t].rank; i++)
		n *= L(_tensors)[t].dims[i];
	return n;
}

/* The arena of a plan that gives every tensor its own buffer (a planned
 * subgraph's own ones too). */
static uint64_t naive_arena(void)
{
	uint64_t sum = 0, a = U(_ARENA_ALIGN);
	for (int i = 0; i < U(_NUM_TENSORS); i++)
		if (L(_tensors)[i].offset != U(_NOT_IN_ARENA))
			sum += (L(_tensors)[i].bytes + a - 1) / a * a;
#if U(_HAS_SUBGRAPHS)
	for (int k = 0; k < U(_NUM_SUBGRAPHS); k++)
		for (int i = 0; i < L(_subgraphs)[k].ntensors; i++) {
			const L(_tensor) *t = &L(_subgraphs)[k].tensors[i];
			if (t->first >= 0 && t->offset != U(_NOT_IN_ARENA))
				sum += (t->bytes + a - 1) / a * a;
		}
#endif
	return sum;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int usage(void)
{
	fputs("usage: rt_run [--input X.pb] [--fill zero|random] [--rtol R] "
	      "[--atol A] [--output K] [--print] [--dump FILE] [--repeat N]"
#ifndef WEIGHTS_LINKED
	      " WEIGHTS.bin"
#endif
	      " [EXPECTED.pb]\n", stderr);
	return 2;
}

/* Reads the --input files and finds their graph inputs; 0 or 2. */
static int read_inputs(const char *const *paths, int n, PbTensor *pin,
		       int *tensor)
{
	char err[512];
	for (int k = 0; k < n; k++) {
		int t;
		if (pb_read_raw(paths[k], &pin[k], err, sizeof err)) {
			fprintf(stderr, "rt_run: %s\n", err);
			return 2;
		}
		t = tensor[k] = input_for(pin[k].name, k);
		if (t < 0 || pin[k].dtype != L(_tensors)[t].dtype ||
		    pin[k].raw_bytes != L(_tensors)[t].bytes) {
			fprintf(stderr, "rt_run: %s fits no graph input (type "
				"%d, %zu bytes)\n", paths[k], pin[k].dtype,
				pin[k].raw_bytes);
			return 2;
		}
	}
	return 0;
}

/* Fills the arena (zeros, or random bytes that differ per run r). */
static void fill_arena(int random, int r)
{
	uint64_t s = 0x9e3779b97f4a7c15ull + (uint64_t)r;
	if (!random) {
		memset(L(_arena), 0, U(_ARENA_SIZE));
		return;
	}
	for (size_t i = 0; i < U(_ARENA_SIZE); i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		L(_arena)[i] = (uint8_t)s;
	}
}

/* The inputs read and the weights file (pb_slurp's) freed: LeakSanitizer
 * checks every run, the ones that must fail included. */
static void release(PbTensor *pin, int nin, const uint8_t *weights)
{
	for (int k = 0; k < nin; k++)
		pb_free(&pin[k]);
#ifndef WEIGHTS_LINKED
	free((void *)weights);
#else
	(void)weights;
#endif
}

int main(int argc, char **argv)
{
	const char *inputs[MAX_INPUTS], *fill = "zero", *wpath = NULL;
	const char *expect = NULL, *dump = NULL;
	double rtol = 1e-3, atol = 1e-7, t0, secs;
	int print = 0, repeat = 1, nin = 0, in = -1, outt, bad = 0, outk = 0;
	int tensor[MAX_INPUTS];
	PbTensor pin[MAX_INPUTS];
	const uint8_t *weights;
	size_t wlen = 0;
	PbTensor ref = {0};
	char err[512];
	art_error rerr;
	const void *y;
	double max_abs = 0, max_rel = 0;
	int64_t n;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--input") && i + 1 < argc &&
		    nin < MAX_INPUTS)
			inputs[nin++] = argv[++i];
		else if (!strcmp(argv[i], "--fill") && i + 1 < argc)
			fill = argv[++i];
		else if (!strcmp(argv[i], "--rtol") && i + 1 < argc)
			rtol = atof(argv[++i]);
		else if (!strcmp(argv[i], "--atol") && i + 1 < argc)
			atol = atof(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--output") && i + 1 < argc)
			outk = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--print"))
			print = 1;
		else if (!strcmp(argv[i], "--dump") && i + 1 < argc)
			dump = argv[++i];
#ifndef WEIGHTS_LINKED
		else if (!wpath)
			wpath = argv[i];
#endif
		else if (!expect)
			expect = argv[i];
		else
			return usage();
	}
#ifdef WEIGHTS_LINKED
	weights = L(_weights);
	wlen = U(_WEIGHTS_SIZE);
	(void)wpath;
#else
	if (!wpath)
		return usage();
	if (!(weights = pb_slurp(wpath, &wlen))) {
		fprintf(stderr, "rt_run: %s: cannot read\n", wpath);
		return 2;
	}
#endif
	if (repeat < 1 || (strcmp(fill, "zero") && strcmp(fill, "random")))
		return usage();
	if (read_inputs(inputs, nin, pin, tensor))
		return 2;
	if (!nin)
		in = float_input();
	outt = outk ? (outk > 0 && outk < U(_NUM_OUTPUTS) ?
		       L(_outputs)[outk] : -1) : first_output();
	if ((!nin && in < 0) || outt < 0) {
		fputs("rt_run: the model needs an output, and --input files "
		      "or one float input\n", stderr);
		return 2;
	}

	t0 = now();
	for (int r = 0; r < repeat; r++) {
		fill_arena(!strcmp(fill, "random"), r);
		for (int k = 0; k < nin; k++)
			memcpy(L(_arena) + L(_tensors)[tensor[k]].offset,
			       pin[k].raw, pin[k].raw_bytes);
		if (!nin) {
			float *x = (float *)(void *)(L(_arena) +
						     L(_tensors)[in].offset);
			n = numel(in);
			for (int64_t i = 0; i < n; i++)
				x[i] = (float)i / (float)n;
		}
		if (art_run(L(_rt_model)(), L(_arena), U(_ARENA_SIZE), weights,
			    wlen, &rerr)) {
			char msg[256];
			art_error_message(&rerr, msg, sizeof msg);
			fprintf(stderr, "rt_run: %s\n", msg);
			release(pin, nin, weights);
			return 2;
		}
	}
	secs = (now() - t0) / repeat;
	release(pin, nin, weights);

	y = L(_arena) + L(_tensors)[outt].offset;
	n = numel(outt);
	if (dump) {
		FILE *f = fopen(dump, "wb");
		if (!f || fwrite(y, 1, L(_tensors)[outt].bytes, f) !=
			  L(_tensors)[outt].bytes || fclose(f)) {
			fprintf(stderr, "rt_run: %s: cannot write\n", dump);
			return 2;
		}
	}
	if (print)
		for (int64_t i = 0; i < n; i++)
			printf("%s[%lld] = %.6g\n", L(_tensors)[outt].name,
			       (long long)i,
			       rt_get_f(L(_tensors)[outt].dtype, y, i));
	if (expect) {
		if (pb_read_raw(expect, &ref, err, sizeof err)) {
			fprintf(stderr, "rt_run: %s\n", err);
			return 2;
		}
		if (ref.numel != n || ref.dtype != L(_tensors)[outt].dtype) {
			fprintf(stderr, "rt_run: %s has %lld values of type %d, "
				"the output %lld of type %d\n", expect,
				(long long)ref.numel, ref.dtype, (long long)n,
				L(_tensors)[outt].dtype);
			return 2;
		}
		for (int64_t i = 0; i < n; i++) {
			double g = rt_get_f(ref.dtype, y, i);
			double w = rt_get_f(ref.dtype, ref.raw, i);
			double d = fabs(g - w), lim = atol + rtol * fabs(w);
			if (!(d <= lim)) {
				if (bad < 3)
					fprintf(stderr, "  %s[%lld]: got %.8g, "
						"want %.8g\n",
						L(_tensors)[outt].name,
						(long long)i, g, w);
				bad++;
			}
			if (!(d <= max_abs))
				max_abs = d;
			if (w != 0 && !(d / fabs(w) <= max_rel))
				max_rel = d / fabs(w);
		}
		pb_free(&ref);
	}
	printf("%lld values%s, max abs err %.3g, max rel err %.3g, %d "
	       "outside; %.1f ms; arena %lu, one buffer per tensor %llu\n",
	       (long long)n, expect ? " compared" : "", max_abs, max_rel, bad,
	       secs * 1e3, (unsigned long)U(_ARENA_SIZE),
	       (unsigned long long)naive_arena());
	return bad ? 1 : 0;
}
