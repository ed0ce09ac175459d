/*
 * fuzz_pipeline.c — libFuzzer target over the whole pipeline.
 *
 * Bytes go through the same stages as `arenac -o H --json J MODEL`: load,
 * infer, (for inputs of odd length) fuse, plan, verify, then the JSON report and the C header written to
 * memory.  Every stage may refuse its input with an error code; what the
 * fuzzer looks for is everything else: a crash, a sanitizer report, a leak,
 * a hang, or a plan the planner accepted and the verifier rejected.  The
 * limits are lower than the CLI's defaults so that one input costs
 * milliseconds, not seconds; the limits themselves are tested in
 * tests/e2e_limits.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "emit.h"
#include "fuse.h"
#include "infer.h"
#include "load.h"
#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ignore_warning(void *ctx, const char *msg)
{
	(void)ctx, (void)msg;
}

/* Writes through a memory stream: codegen must not care where it goes. */
static void emit_to_memory(const ArGraph *g, const ArPlan *p)
{
	ArEmitInfo info = {
		.model_path = "fuzz.onnx",
		.prefix = "fuzz",
		.options = "--dim-default 1",
	};
	ArError err = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	if (ar_write_json(f, g, p, &info) != AR_OK)
		abort();    /* a memory stream cannot fail to take bytes */
	if (ar_write_header(f, g, p, &info, &err) != AR_OK &&
	    err.code == AR_EXIT_INTERNAL)
		abort();
	fclose(f);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ArLoadOptions lo = {
		.dim_default = 1,       /* reach inference with symbolic inputs */
		.batch = -1,
		.max_nodes = 2000,     /* scale is e2e_bad's job; keep runs fast */
		.diag = {.warn = ignore_warning},
	};
	ArPlanOptions po;
	ArGraph *g = NULL;
	ArPlan *p = NULL;
	ArError err = {0};
	int rc;

	/* A third (by length) plan static KV caches (--max-seq). */
	lo.max_seq = size % 3 ? 0 : 8;
	rc = ar_load_onnx_buffer(data, size, &lo, &g, &err);
	if (!rc)
		rc = ar_infer(g, &lo.diag, &err);
	/* Half the inputs (by their length) also go through --fuse preact. */
	if (!rc && size % 2)
		ar_fuse_preact(g);
	if (!rc) {
		ar_plan_options_default(&po);
		po.effort = AR_EFFORT_MIN;
		po.diag = lo.diag;
		rc = ar_plan(g, &po, &p, &err);
		/* ar_plan verifies its own result; an independent second
		 * verification of an accepted plan must agree. */
		if (rc == AR_EXIT_INTERNAL || (!rc && ar_verify(g, p, &err)))
			abort();
	}
	if (!rc)
		emit_to_memory(g, p);
	ar_plan_free(p);
	ar_graph_free(g);
	return 0;
}
