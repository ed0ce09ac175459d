/*
 * rt_node.c — runs many generated headers in the reference runtime, as
 * the ONNX node suite test (e2e_node_runtime.py) drives it.
 *
 *   cc rt_node.c node_models.o pbread.o onnx.pb-c.o libarenac_rt.a \
 *      -lprotobuf-c -lm
 *   rt_node < MANIFEST
 *   rt_node --ops           the runtime's kernel table, DOMAIN OP a line
 *
 * node_models.o (generated) includes every header with its own prefix,
 * binds each with ARENAC_RT_BIND and lists the bound models in
 * node_models[].  The manifest (on stdin) holds one block per run:
 *
 *   run K WEIGHTS.bin         model K of node_models, its weights blob
 *   in NAME FILE              raw elements of graph input NAME
 *   out NAME FILE             where to write tensor NAME's raw elements
 *   end
 *
 * Each run fills a fresh arena with random bytes, writes the inputs at
 * their offsets, runs the plan and writes the outputs from the arena (or
 * from the weights blob, for an output arenac folded).  It prints one
 * line: "ok K", "nokernel K OP" when a step's op has no kernel (nothing
 * is run), or "error K MESSAGE".  Comparing is the driver's job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arenac_rt.h"
#include "pbread.h"             /* pb_slurp */

extern const art_model *(*const node_models[])(void);
extern const int node_nmodels;
#define MAXIO 32

typedef struct Io {
	char name[256], path[1024];
} Io;

static int find(const art_model *m, const char *name)
{
	for (int i = 0; i < m->g.ntensors; i++)
		if (!strcmp(art_model_tensor(m, i).name, name))
			return i;
	return -1;
}

/* The first op without a kernel among the steps that compute, or NULL. */
static const char *missing_kernel(const art_model *m)
{
	for (int s = 0; s < m->g.nsteps; s++) {
		art_step st = art_model_step(m, s);
		if (!st.noop && !art_has_kernel(st.domain, st.op))
			return st.op;
	}
	return NULL;
}

/* Runs model k; the line it prints says how it went. */
static void run(int k, const char *wpath, const Io *in, int nin,
		const Io *out, int nout, uint64_t seed)
{
	const art_model *m;
	size_t wlen = 0, alen;
	uint8_t *w = NULL, *arena = NULL;
	art_error err;
	const char *op;

	if (k < 0 || k >= node_nmodels) {
		printf("error %d no such model\n", k);
		return;
	}
	m = node_models[k]();
	if ((op = missing_kernel(m))) {
		printf("nokernel %d %s\n", k, op);
		return;
	}
	w = pb_slurp(wpath, &wlen);
	alen = (size_t)(m->arena_size + 64) / 64 * 64;
	arena = aligned_alloc(64, alen);
	if (!arena || (!w && m->weights_size)) {
		printf("error %d cannot read %s\n", k, wpath);
		goto done;
	}
	for (size_t i = 0; i < alen; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		arena[i] = (uint8_t)seed;
	}
	for (int j = 0; j < nin; j++) {
		int t = find(m, in[j].name);
		art_tensor ts;
		size_t len = 0;
		uint8_t *v;
		if (t < 0 || (ts = art_model_tensor(m, t)).offset ==
			     ART_NOT_IN_ARENA)
			continue;       /* an input no step reads */
		v = pb_slurp(in[j].path, &len);
		if (!v || len != ts.bytes) {
			printf("error %d input %s: %zu bytes, the plan has %u\n",
			       k, in[j].name, len, ts.bytes);
			free(v);
			goto done;
		}
		memcpy(arena + ts.offset, v, len);
		free(v);
	}
	if (art_run(m, arena, alen, w, wlen, &err)) {
		char msg[256];
		art_error_message(&err, msg, sizeof msg);
		printf("error %d %s\n", k, msg);
		goto done;
	}
	for (int j = 0; j < nout; j++) {
		int t = find(m, out[j].name);
		art_tensor tv;
		const art_tensor *ts = t >= 0 ? (tv = art_model_tensor(m, t), &tv) :
				       NULL;
		FILE *f;
		if (!ts || (ts->offset == ART_NOT_IN_ARENA &&
			    ts->weights_offset == ART_NOT_IN_ARENA)) {
			printf("error %d output %s is in no buffer\n", k,
			       out[j].name);
			goto done;
		}
		f = fopen(out[j].path, "wb");
		if (!f || fwrite(ts->offset != ART_NOT_IN_ARENA ?
				 arena + ts->offset : w + ts->weights_offset,
				 1, ts->bytes, f) != ts->bytes) {
			printf("error %d cannot write %s\n", k, out[j].path);
			if (f)
				fclose(f);
			goto done;
		}
		fclose(f);
	}
	printf("ok %d\n", k);
done:
	free(w);
	free(arena);
}

int main(int argc, char **argv)
{
	static Io in[MAXIO], out[MAXIO];
	char word[16], wpath[1024];
	int k = -1, nin = 0, nout = 0, runs = 0;
	const char *op, *domain;

	if (argc > 1 && !strcmp(argv[1], "--ops")) {
		for (int i = 0; (op = art_kernel_op(i, &domain)); i++)
			printf("%s %s\n", *domain ? domain : "-", op);
		return 0;
	}
	while (scanf("%15s", word) == 1) {
		if (!strcmp(word, "run")) {
			nin = nout = 0;
			if (scanf("%d %1023s", &k, wpath) != 2)
				return 2;
		} else if (!strcmp(word, "in") && nin < MAXIO) {
			if (scanf("%255s %1023s", in[nin].name,
				  in[nin].path) != 2)
				return 2;
			nin++;
		} else if (!strcmp(word, "out") && nout < MAXIO) {
			if (scanf("%255s %1023s", out[nout].name,
				  out[nout].path) != 2)
				return 2;
			nout++;
		} else if (!strcmp(word, "end")) {
			run(k, wpath, in, nin, out, nout,
			    0x9e3779b97f4a7c15ull + (uint64_t)runs++);
			fflush(stdout);
		} else {
			fprintf(stderr, "rt_node: bad manifest word '%s'\n",
				word);
			return 2;
		}
	}
	return 0;
}
