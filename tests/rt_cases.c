/*
 * rt_cases.c — runs the one-node cases of gen_rt_cases.py through the
 * reference runtime, each as a one-step plan built here by hand.
 *
 *   rt_cases CASES.txt
 *
 * Element types: floats compared within a tolerance, integers and bools
 * exactly.  A case may have several outputs (the "out" tensors, last).
 * Every case runs with each tensor in its own place, its output bytes
 * poisoned with NaNs (all-ones bytes) first.  A case marked "ok" runs
 * again with output 0 planned in place over input 0 ("ok:K": input K)
 * and must give the same values; one marked "refused" must then fail
 * (when the sizes allow such a plan at all), since an in-place plan for a
 * kernel that cannot do it is an error, never a silent copy; one marked
 * "untested" runs only once.  Prints one line per failure and "N passed,
 * N failed".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"             /* rt_get_f reads any element type */

#define MAXT 12
#define MAXA 16
#define MAXV (1 << 16)
#define ARENA (1 << 20)

typedef struct Case {
	char name[64], op[48], inplace[16];
	const char *domain, *opname;    /* op is DOMAIN.OP or OP */
	int opset;
	art_attr attrs[MAXA];
	char anames[MAXA][32], astr[MAXA][8][32];
	const char *aptr[MAXA][8];
	int64_t aints[MAXA][8];
	float afloats[MAXA][8];
	int nattrs;
	art_tensor t[MAXT];         /* inputs, then the expected outputs */
	int32_t dims[MAXT][ART_MAX_RANK];
	char role[MAXT][8];
	void *vals[MAXT];
	int nt;
} Case;

static _Alignas(64) uint8_t arena[ARENA];
static _Alignas(64) uint8_t weights[ARENA];

static int read_attr(FILE *f, Case *c)
{
	art_attr *a = &c->attrs[c->nattrs];
	int k = c->nattrs;
	char type[16];

	if (k == MAXA || fscanf(f, "%31s %15s", c->anames[k], type) != 2)
		return -1;
	memset(a, 0, sizeof *a);
	a->name = c->anames[k];
	a->ints = c->aints[k];
	a->floats = c->afloats[k];
	a->strings = c->aptr[k];
	for (int i = 0; i < 8; i++)
		c->aptr[k][i] = c->astr[k][i];
	if (!strcmp(type, "i")) {
		long long v;
		a->type = ART_ATTR_INT, a->count = 1;
		if (fscanf(f, "%lld", &v) != 1)
			return -1;
		c->aints[k][0] = v;
	} else if (!strcmp(type, "f")) {
		a->type = ART_ATTR_FLOAT, a->count = 1;
		if (fscanf(f, "%f", &c->afloats[k][0]) != 1)
			return -1;
	} else if (!strcmp(type, "s")) {
		a->type = ART_ATTR_STRING, a->count = 1;
		if (fscanf(f, "%31s", c->astr[k][0]) != 1)
			return -1;
	} else if (!strcmp(type, "strs")) {
		int n;
		a->type = ART_ATTR_STRINGS;
		if (fscanf(f, "%d", &n) != 1 || n < 0 || n > 8)
			return -1;
		a->count = n;
		for (int i = 0; i < n; i++)
			if (fscanf(f, "%31s", c->astr[k][i]) != 1)
				return -1;
	} else {
		int n;
		a->type = !strcmp(type, "ints") ? ART_ATTR_INTS : ART_ATTR_FLOATS;
		if (fscanf(f, "%d", &n) != 1 || n < 0 || n > 8)
			return -1;
		a->count = n;
		for (int i = 0; i < n; i++) {
			long long v;
			if (a->type == ART_ATTR_INTS ?
			    fscanf(f, "%lld", &v) != 1 :
			    fscanf(f, "%f", &c->afloats[k][i]) != 1)
				return -1;
			if (a->type == ART_ATTR_INTS)
				c->aints[k][i] = v;
		}
	}
	c->nattrs++;
	return 0;
}

/* Element types by the names the generator writes (ONNX codes). */
static const struct {
	const char *name;
	int dtype, size, is_float;
} types[] = {
	{"f32", ART_DT_FLOAT, 4, 1}, {"f64", ART_DT_DOUBLE, 8, 1},
	{"f16", ART_DT_FLOAT16, 2, 1}, {"bf16", ART_DT_BFLOAT16, 2, 1},
	{"i64", ART_DT_INT64, 8, 0},
	{"i32", ART_DT_INT32, 4, 0}, {"i16", ART_DT_INT16, 2, 0},
	{"i8", ART_DT_INT8, 1, 0}, {"u8", ART_DT_UINT8, 1, 0},
	{"u16", ART_DT_UINT16, 2, 0}, {"u32", ART_DT_UINT32, 4, 0},
	{"u64", ART_DT_UINT64, 8, 0}, {"bool", ART_DT_BOOL, 1, 0},
};
#define NTYPES (int)(sizeof types / sizeof types[0])

static int type_of(int dtype)
{
	int k = 0;
	while (k < NTYPES && types[k].dtype != dtype)
		k++;
	return k;
}

/*
 * Reads element i of a tensor of type k: floats in decimal, float16 and
 * bfloat16 as bit patterns (rounded by the generator, not the runtime),
 * integers and bools as integers.
 */
static int store(int k, void *p, int64_t i, FILE *f)
{
	long long v;
	double d;
	if (types[k].is_float && types[k].size != 2) {
		if (fscanf(f, "%lf", &d) != 1)
			return -1;
		if (types[k].size == 4)
			((float *)p)[i] = (float)d;
		else
			((double *)p)[i] = d;
		return 0;
	}
	if (fscanf(f, "%lld", &v) != 1)
		return -1;
	switch (types[k].size) {
	case 1: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case 2: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case 4: ((uint32_t *)p)[i] = (uint32_t)v; break;
	default: ((int64_t *)p)[i] = v; break;
	}
	return 0;
}

static int read_tensor(FILE *f, Case *c)
{
	int k = c->nt, rank, ty = 0;
	art_tensor *t = &c->t[k];
	char type[8];
	int64_t n = 1;

	if (k == MAXT || fscanf(f, "%7s %7s %d", c->role[k], type, &rank) != 3 ||
	    rank < 0 || rank > ART_MAX_RANK)
		return -1;
	while (ty < NTYPES && strcmp(types[ty].name, type))
		ty++;
	if (ty == NTYPES)
		return -1;
	memset(t, 0, sizeof *t);
	t->name = c->role[k];
	t->rank = rank;
	t->dims = c->dims[k];
	t->dtype = types[ty].dtype;
	t->alias_of = t->inplace_of = t->io = -1;
	t->offset = t->weights_offset = ART_NOT_IN_ARENA;
	for (int i = 0; i < rank; i++) {
		if (fscanf(f, "%d", &c->dims[k][i]) != 1)
			return -1;
		n *= c->dims[k][i];
	}
	if (!strcmp(c->role[k], "none")) {
		t->rank = -1;
		c->vals[k] = NULL;
		c->nt++;
		return 0;
	}
	if (n > MAXV)
		return -1;
	t->bytes = (uint32_t)(n * types[ty].size);
	c->vals[k] = malloc(t->bytes + 8);
	for (int64_t i = 0; i < n; i++)
		if (store(ty, c->vals[k], i, f))
			return -1;
	c->nt++;
	return 0;
}

static void free_case(Case *c)
{
	for (int i = 0; i < c->nt; i++)
		free(c->vals[i]);
}

/* Reads the next case; 1 done, 0 read, -1 malformed. */
static int read_case(FILE *f, Case *c)
{
	char word[16];
	memset(c, 0, sizeof *c);
	if (fscanf(f, "%15s", word) != 1)
		return 1;
	if (strcmp(word, "case") || fscanf(f, "%63s %47s %15s", c->name, c->op,
					   c->inplace) != 3)
		return -1;
	c->opname = strrchr(c->op, '.');
	if (c->opname) {
		*(char *)c->opname++ = 0;
		c->domain = c->op;
	} else {
		c->opname = c->op;
		c->domain = "";
	}
	for (;;) {
		long pos = ftell(f);
		if (fscanf(f, "%15s", word) != 1)
			return c->nt ? 0 : -1;
		if (!strcmp(word, "opset")) {
			if (fscanf(f, "%d", &c->opset) != 1)
				return -1;
		} else if (!strcmp(word, "attr")) {
			if (read_attr(f, c))
				return -1;
		} else if (!strcmp(word, "tensor")) {
			if (read_tensor(f, c))
				return -1;
		} else {
			fseek(f, pos, SEEK_SET);
			return c->nt ? 0 : -1;
		}
	}
}

static uint32_t place(uint32_t *at, uint32_t bytes)
{
	uint32_t off = *at;
	*at += (bytes + 63) / 64 * 64;
	return off;
}

/* The expected outputs are the tensors after the last input. */
static int first_output(const Case *c)
{
	int o = c->nt;
	while (o > 0 && !strcmp(c->role[o - 1], "out"))
		o--;
	return o;
}

/* Floats within 1e-5 + 1e-4 |want| (NaN matches NaN), the rest exact. */
static int compare(const art_tensor *y, const void *got, const void *want,
		   char *why, size_t size)
{
	int k = type_of(y->dtype);
	int64_t n = y->bytes / types[k].size;
	for (int64_t i = 0; i < n; i++) {
		double g = rt_get_f(y->dtype, got, i);
		double w = rt_get_f(y->dtype, want, i);
		int same = types[k].is_float ?
			   fabs(g - w) <= 1e-5 + 1e-4 * fabs(w) ||
			   (g != g && w != w) || g == w : g == w;
		if (!same) {
			snprintf(why, size, "%s value %lld: got "
				 "%.8g, want %.8g", y->name, (long long)i, g, w);
			return 1;
		}
	}
	return 0;
}

/*
 * Lays the case out (arena or weights by role), runs it, compares the
 * outputs; over >= 0 plans output 0 in place over that input.  0 ok, 1
 * wrong values, -1 the runtime refused (why says it, from its error
 * record).
 */
static int run_case(Case *c, int over_input, char *why, size_t size)
{
	art_error err;
	int32_t ins[MAXT], outs[MAXT];
	art_step step = {0};
	art_model m;
	uint32_t aat = 0, wat = 0;
	int o, nin = 0, nout = 0;

	o = first_output(c);
	for (int i = 0; i < o; i++) {
		art_tensor *t = &c->t[i];
		ins[nin++] = t->rank < 0 ? -1 : i;
		if (t->rank < 0)
			continue;
		if (!strcmp(c->role[i], "in")) {
			t->offset = place(&aat, t->bytes);
			memcpy(arena + t->offset, c->vals[i], t->bytes);
		} else {
			t->weights_offset = place(&wat, t->bytes);
			memcpy(weights + t->weights_offset, c->vals[i], t->bytes);
		}
	}
	for (int i = o; i < c->nt; i++) {
		art_tensor *y = &c->t[i];
		int over = over_input >= 0 && i == o;
		y->inplace_of = over ? over_input : -1;
		y->offset = over ? c->t[over_input].offset :
			    place(&aat, y->bytes);
		if (!over)
			memset(arena + y->offset, 0xff, y->bytes);   /* NaNs */
		outs[nout++] = i;
	}
	step.op = c->opname;
	step.domain = c->domain;
	step.name = c->name;
	step.inputs = ins;
	step.ninputs = nin;
	step.outputs = outs;
	step.noutputs = nout;
	step.attrs = c->attrs;
	step.nattrs = c->nattrs;
	step.opset = c->opset;
	art_plain_model(&m, c->t, c->nt, &step, 1);
	m.arena_size = aat;
	m.weights_size = wat;
	if (art_run(&m, arena, sizeof arena, weights, sizeof weights, &err)) {
		art_error_message(&err, why, size);
		return -1;
	}
	for (int i = o; i < c->nt; i++)
		if (compare(&c->t[i], arena + c->t[i].offset, c->vals[i], why, size))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	static Case c;
	FILE *f;
	int pass = 0, fail = 0, rc;

	if (argc != 2 || !(f = fopen(argv[1], "r"))) {
		fputs("usage: rt_cases CASES.txt\n", stderr);
		return 2;
	}
	while ((rc = read_case(f, &c)) == 0) {
		char msg[256];
		int ok = run_case(&c, -1, msg, sizeof msg) == 0, in_place_ok = 1;
		const char *why = ok ? "" : msg;
		/* "ok:K": in place over input K rather than input 0 */
		int k = !strncmp(c.inplace, "ok:", 3) ? atoi(c.inplace + 3) : 0;

		/* In place only where a planner could put it: same bytes. */
		if (ok && strcmp(c.inplace, "untested") &&
		    k < first_output(&c) && c.t[k].rank >= 0 &&
		    !strcmp(c.role[k], "in") &&
		    c.t[k].bytes == c.t[first_output(&c)].bytes) {
			int r = run_case(&c, k, msg, sizeof msg);
			if (!strncmp(c.inplace, "ok", 2))
				in_place_ok = r == 0;
			else
				in_place_ok = r == -1 && strstr(msg,
								"in place");
			if (!in_place_ok)
				why = r == 0 ? "in place ran, should be "
				      "refused" : msg;
		}
		if (ok && in_place_ok) {
			pass++;
		} else {
			fail++;
			printf("FAIL %s (%s)%s: %s\n", c.name, c.op,
			       ok ? " in place" : "", why);
		}
		free_case(&c);
	}
	fclose(f);
	if (rc < 0) {
		printf("FAIL malformed cases file after %d cases\n", pass + fail);
		fail++;
	}
	printf("kernels: %d passed, %d failed\n", pass, fail);
	return fail ? 1 : 0;
}
