/*
 * host_io.c — the build machine's side of a firmware run: the inputs
 * into the firmware, its printed outputs against the reference.
 *
 *   host_io carray [IN.pb ...]
 *       writes to standard output a C file defining fw_inputs
 *       (fw_inputs.h): each TensorProto's elements, named after it.
 *   host_io compare [--rtol R] [--atol A] LOG REF ...
 *       reads the outputs firmware/main.c printed in LOG and compares
 *       output k with REF k: a TensorProto file (.pb), or the log of
 *       another run (the host build of the same program) whose outputs
 *       are taken in order.  Floating outputs agree when |got - want|
 *       <= atol * scale + rtol * |want|, scale the largest |want| of
 *       the output (so atol is relative to the output's size, as the
 *       shared models' README asks: rtol 1e-3, atol 1e-5 by default);
 *       integer and bool outputs must be equal.  One line per output;
 *       exit 0 when all agree, 1 on a mismatch, 2 on bad input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h" /* rt_get_f reads any element type as a double */
#include "pbread.h"

#define MAX_OUT 32

typedef struct {
	char name[256];
	int dtype;
	size_t bytes;
	uint8_t *data;
} Out;

static int fail(const char *what, const char *where)
{
	fprintf(stderr, "host_io: %s: %s\n", where, what);
	return 2;
}

static int carray(int n, char **paths)
{
	char err[512];
	puts("/* Inputs for firmware/main.c, written by host_io carray. */");
	puts("#include \"fw_inputs.h\"\n");
	for (int k = 0; k < n; k++) {
		PbTensor t;
		if (pb_read_raw(paths[k], &t, err, sizeof err))
			return fail(err, paths[k]);
		printf("static const uint8_t in%d[%zu] __attribute__((aligned"
		       "(16))) = {", k, t.raw_bytes ? t.raw_bytes : 1);
		for (size_t i = 0; i < t.raw_bytes; i++)
			printf("%s0x%02x,", i % 16 ? " " : "\n\t",
			       ((const uint8_t *)t.raw)[i]);
		puts("\n};");
		printf("static const char name%d[] = \"", k);
		for (const char *c = t.name; *c; c++)
			printf(*c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
		printf("\";\n#define IN%d {name%d, in%d, %zuu},\n", k, k, k,
		       t.raw_bytes);
		pb_free(&t);
	}
	printf("const fw_blob fw_inputs[%d] = {", n ? n : 1);
	for (int k = 0; k < n; k++)
		printf(" IN%d", k);
	printf(" };\nconst int fw_ninputs = %d;\n", n);
	return 0;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The outputs of a log of firmware/main.c; their count, or -1. */
static int read_log(const char *path, Out *out)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int n = 0, done = 0;
	size_t at = 0;

	if (!f)
		return fail("cannot read", path), -1;
	while (fgets(line, sizeof line, f)) {
		if (!strncmp(line, "error: ", 7)) {
			fprintf(stderr, "host_io: %s: the run failed: %s", path,
				line + 7);
			break;
		}
		if (!strncmp(line, "done ", 5)) {
			done = 1;
			break;
		}
		if (!strncmp(line, "output ", 7)) {
			Out *o = &out[n];
			if (n == MAX_OUT ||
			    sscanf(line + 7, "%255s %d %zu", o->name, &o->dtype,
				   &o->bytes) != 3 ||
			    !(o->data = calloc(1, o->bytes + 1)))
				break;
			n++, at = 0;
			continue;
		}
		for (char *c = line; n && hexval(c[0]) >= 0 &&
		     hexval(c[1]) >= 0 && at < out[n - 1].bytes; c += 2)
			out[n - 1].data[at++] =
				(uint8_t)(hexval(c[0]) << 4 | hexval(c[1]));
	}
	fclose(f);
	if (!done)
		return fail("the run did not finish (no \"done\" line)", path),
		       -1;
	return n;
}

static int is_float(int dt)
{
	return dt == 1 || dt == 10 || dt == 11 || dt == 16;
}

/* Output got against want (numel elements of dtype dt); 0 or 1. */
static int agree(const Out *got, int dt, const void *want, int64_t numel,
		 double rtol, double atol)
{
	double scale = 0, worst = 0;
	int64_t bad = 0, at = -1;
	for (int64_t i = 0; i < numel; i++)
		scale = fmax(scale, fabs(rt_get_f(dt, want, i)));
	for (int64_t i = 0; i < numel; i++) {
		double g = rt_get_f(dt, got->data, i);
		double w = rt_get_f(dt, want, i);
		double e = fabs(g - w);
		int ok = is_float(dt) ? e <= atol * scale + rtol * fabs(w) :
					g == w;
		if (!ok && !bad++)
			at = i;
		worst = fmax(worst, e);
	}
	printf("%s %s: %lld values, max abs err %.3g (scale %.3g)",
	       bad ? "FAIL" : "ok  ", got->name, (long long)numel, worst,
	       scale);
	if (bad)
		printf(", %lld outside; first [%lld] got %.9g want %.9g",
		       (long long)bad, (long long)at,
		       rt_get_f(dt, got->data, at), rt_get_f(dt, want, at));
	putchar('\n');
	return bad != 0;
}

/* compare's outputs, freed by main whatever way it returns. */
static Out got[MAX_OUT], ref[MAX_OUT];

static int compare(int argc, char **argv)
{
	double rtol = 1e-3, atol = 1e-5;
	int i = 0, n, nref = -1, bad = 0;
	char err[512];

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--rtol"))
			rtol = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--atol"))
			atol = atof(argv[i + 1]);
		else
			return fail("unknown option", argv[i]);
	}
	if (argc - i < 2)
		return fail("usage: host_io compare [--rtol R] [--atol A] "
			    "LOG REF...", "compare");
	if ((n = read_log(argv[i], got)) < 0)
		return 2;
	i++;
	if (!strstr(argv[i], ".pb") && (nref = read_log(argv[i], ref)) < 0)
		return 2;
	if (nref >= 0 ? nref != n : argc - i != n) {
		fprintf(stderr, "host_io: %s has %d outputs, the reference "
			"%d\n", argv[i - 1], n, nref >= 0 ? nref : argc - i);
		return 2;
	}
	for (int k = 0; k < n; k++) {
		size_t esz;
		if (nref >= 0) {
			if (ref[k].dtype != got[k].dtype ||
			    ref[k].bytes != got[k].bytes)
				return fail("an output's type or size differs "
					    "from the reference", got[k].name);
			esz = art_dtype_size(got[k].dtype);
			bad |= agree(&got[k], got[k].dtype, ref[k].data,
				     (int64_t)(got[k].bytes / esz), rtol, atol);
			continue;
		}
		PbTensor t;
		if (pb_read_raw(argv[i + k], &t, err, sizeof err))
			return fail(err, argv[i + k]);
		if (t.dtype != got[k].dtype || t.raw_bytes != got[k].bytes) {
			fprintf(stderr, "host_io: %s: type %d, %zu bytes; the "
				"output '%s' has type %d, %zu bytes\n",
				argv[i + k], t.dtype, t.raw_bytes, got[k].name,
				got[k].dtype, got[k].bytes);
			pb_free(&t);
			return 2;
		}
		bad |= agree(&got[k], t.dtype, t.raw, t.numel, rtol, atol);
		pb_free(&t);
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "carray"))
		return carray(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "compare")) {
		int rc = compare(argc - 2, argv + 2);
		for (int k = 0; k < MAX_OUT; k++)
			free(got[k].data), free(ref[k].data);
		return rc;
	}
	fputs("usage: host_io carray [IN.pb ...] > inputs.c\n"
	      "       host_io compare [--rtol R] [--atol A] LOG REF...\n",
	      stderr);
	return 2;
}
