/*
 * lenet.c — LeNet run through the reference runtime from its header alone.
 *
 * A whole program written the way a firmware would use arenac: the tables
 * and the arena come from the header arenac generated (lenet_arena.h), the
 * weights from the C array of arenac --weights (lenet_weights.c, linked
 * in), the kernels from runtime/.  It finds the graph's inputs and
 * outputs through the header's lists, fills each input through the typed
 * pointer macros, runs the steps and prints every output value.  The same
 * source serves a header planned with --io separate: the input and the
 * output then live in buffers this program owns and passes at each run.
 *
 *   make examples
 *   build/examples/arena/lenet          (inputs and outputs in the arena)
 *   build/examples/io_separate/lenet    (in buffers of the program's)
 *
 * The input is the one testdata/gen_lenet.py computed its reference
 * logits for (element i of n is i/n), so the output can be checked
 * against testdata/lenet_output_0.pb.
 */
#include <stdio.h>
#include <stdlib.h>

#define LENET_DEFINE_TABLES     /* this file holds the tables ... */
#define LENET_DEFINE_ARENA      /* ... and the arena */
#include "lenet_arena.h"
#include "arenac_rt.h"

ARENAC_RT_BIND(lenet, LENET)

#if LENET_IO_SEPARATE
/* Graph input k's buffer is io[k], output j's io[LENET_NUM_INPUTS + j]. */
static void *io[LENET_NUM_INPUTS + LENET_NUM_OUTPUTS + 1];
#define TENSOR(i) LENET_TENSOR_F32(lenet_arena, io, i)
#else
#define TENSOR(i) LENET_TENSOR_F32(lenet_arena, i)
#endif

/* Every graph input: element e of n is e/n. */
static int fill_inputs(void)
{
	for (int k = 0; k < LENET_NUM_INPUTS; k++) {
		int t = lenet_inputs[k];
		uint32_t n = lenet_tensors[t].numel;
		float *x;
		if (lenet_tensors[t].dtype != LENET_DT_FLOAT32) {
			fprintf(stderr, "lenet: input '%s' is not float32\n",
				lenet_tensors[t].name);
			return -1;
		}
		x = TENSOR(t);
		for (uint32_t e = 0; e < n; e++)
			x[e] = (float)e / (float)n;
	}
	return 0;
}

static void print_outputs(void)
{
	for (int k = 0; k < LENET_NUM_OUTPUTS; k++) {
		int t = lenet_outputs[k];
		const float *y = TENSOR(t);
		for (uint32_t e = 0; e < lenet_tensors[t].numel; e++)
			printf("%s[%lu] = %.9g\n", lenet_tensors[t].name,
			       (unsigned long)e, (double)y[e]);
	}
}

int main(void)
{
	art_error err;
	int rc;

#if LENET_IO_SEPARATE
	for (int t = 0; t < LENET_NUM_TENSORS; t++)
		if (lenet_tensors[t].io >= 0 &&
		    !(io[lenet_tensors[t].io] = malloc(LENET_TENSOR_SIZE(t)))) {
			fputs("lenet: out of memory\n", stderr);
			return 1;
		}
#endif
	if (fill_inputs())
		return 1;
#if LENET_IO_SEPARATE
	rc = art_run_io(lenet_rt_model(), lenet_arena, LENET_ARENA_SIZE,
			lenet_weights, LENET_WEIGHTS_SIZE, io, &err);
#else
	rc = art_run(lenet_rt_model(), lenet_arena, LENET_ARENA_SIZE,
		     lenet_weights, LENET_WEIGHTS_SIZE, &err);
#endif
	if (rc) {
		char msg[256];
		art_error_message(&err, msg, sizeof msg);
		fprintf(stderr, "lenet: %s\n", msg);
		return 1;
	}
	print_outputs();
	printf("arena %lu bytes, weights %lu bytes, %d steps\n",
	       (unsigned long)LENET_ARENA_SIZE,
	       (unsigned long)LENET_WEIGHTS_SIZE, LENET_NUM_STEPS);
#if LENET_IO_SEPARATE
	for (int k = 0; k < LENET_NUM_INPUTS + LENET_NUM_OUTPUTS; k++)
		free(io[k]);
#endif
	return 0;
}
