/*
 * trace.c — --trace FILE.json: the plan in the Trace Event Format, which
 * Perfetto (ui.perfetto.dev), chrome://tracing and TensorBoard's trace
 * viewer open ("Trace Event Format", Google's document of the JSON that
 * catapult's trace viewer reads).
 *
 * Time is the step: step s spans [1000 s, 1000 s + 1000) microseconds, so
 * the viewer's time axis counts steps.  In one process:
 *   - a counter track "memory" (ph C) with the bytes live at each step per
 *     kind: activations, inputs, outputs, workspace (kernel scratch and
 *     subgraph regions), and for a training step what its backward made
 *     (gradients of activations, and of parameters with
 *     --optimizer-in-backward), what it recomputed, and the persistent
 *     parts of the bill (parameters, gradients, master weights, optimizer
 *     state, frozen and quantised weights, constants), constant lines
 *     under the arena;
 *   - a thread "steps": each step a complete slice (ph X) named after its
 *     node, with its op, phase, FLOPs and the bytes it reads and writes;
 *   - threads "arena lane k": each tensor that owns arena bytes as a slice
 *     over its storage's steps (to the last step of a view or in-place
 *     output sharing it), with its offset, size, type and shape.  Slices on one thread must not overlap, so tensors are dealt
 *     to lanes first-fit in offset order: lane 0 holds the lowest offsets,
 *     as ExecuTorch's memory-planning view stacks them.
 * Events come in time order per track, as the format asks of counters.
 */
#include "emit.h"
#include "checkpoint.h"
#include "infer_ops.h"
#include "text.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define STEP_US 1000

enum { K_ACT, K_IN, K_OUT, K_WORK, K_BWD, K_RECOMP, NKINDS };
static const char *const kind_names[NKINDS] = {
	"activations", "inputs", "outputs", "workspace", "backward (gradients)",
	"recomputed"};

/* Which counter a tensor's bytes go to: what produced it, or its kind. */
static int kind_of(const ArGraph *g, int t)
{
	const ArTensor *x = &g->tensors[t];
	if (x->kind == AR_TK_INPUT)
		return K_IN;
	if (x->kind == AR_TK_OUTPUT)
		return K_OUT;
	if (x->producer >= 0) {
		ArPhase ph = g->nodes[x->producer].phase;
		if (ph == AR_PHASE_BACKWARD || ph == AR_PHASE_UPDATE)
			return K_BWD;
		if (ph == AR_PHASE_RECOMPUTE)
			return K_RECOMP;
	}
	return K_ACT;
}

/* Whether t owns arena bytes (not an alias or in-place view of another). */
static bool owns(const ArPlan *p, int t)
{
	return p->slots[t].planned && p->slots[t].root == t;
}

static void str(FILE *f, const char *s)
{
	ar_json_str(f, s);
}

static void sep(FILE *f, bool *first)
{
	fputs(*first ? "\n  " : ",\n  ", f);
	*first = false;
}

static void persistent(FILE *f, const ArTrainBill *b)
{
	ArBillPart part[AR_BILL_NPARTS];
	int n = ar_train_bill_parts(b, part);
	for (int k = 0; k < n; k++)
		fprintf(f, ", \"%s (persistent)\": %" PRId64, part[k].name,
			part[k].bytes);
}

static void counters(FILE *f, const ArGraph *g, const ArPlan *p,
		     const ArEmitInfo *info, bool *first)
{
	int64_t *delta = ar_xcalloc((size_t)(p->nsteps + 1) * NKINDS + 1,
				    sizeof *delta);
	int64_t live[NKINDS] = {0};
	int *fst = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	int *lst = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));

	ar_plan_storage_spans(g, p, fst, lst);
	for (int t = 0; t < g->ntensors; t++) {
		int k = kind_of(g, t);
		if (!owns(p, t) || fst[t] < 0)
			continue;
		delta[(size_t)fst[t] * NKINDS + k] += g->tensors[t].bytes;
		delta[(size_t)(lst[t] + 1) * NKINDS + k] -= g->tensors[t].bytes;
	}
	free(fst);
	free(lst);
	for (int s = 0; s <= p->nsteps; s++) {
		const ArScratch *sc = s < p->nsteps ?
				      ar_plan_scratch(p, p->steps[s]) : NULL;
		for (int k = 0; k < NKINDS; k++)
			live[k] += delta[(size_t)s * NKINDS + k];
		sep(f, first);
		fprintf(f, "{\"name\": \"memory\", \"ph\": \"C\", \"pid\": 1, "
			"\"ts\": %d, \"args\": {", s * STEP_US);
		for (int k = 0; k < NKINDS; k++)
			fprintf(f, "%s\"%s\": %" PRId64, k ? ", " : "",
				kind_names[k], k == K_WORK ? (sc ? sc->bytes : 0)
							   : live[k]);
		if (info->training)
			persistent(f, info->training);
		fputs("}}", f);
	}
	free(delta);
}

/* Bytes a step reads and writes: its operands' sizes. */
static void io_bytes(const ArGraph *g, const ArNode *n, int64_t *rd,
		     int64_t *wr)
{
	*rd = *wr = 0;
	for (int j = 0; j < n->ninputs; j++)
		if (n->inputs[j] >= 0 && g->tensors[n->inputs[j]].bytes > 0)
			*rd += g->tensors[n->inputs[j]].bytes;
	for (int j = 0; j < n->noutputs; j++)
		if (n->outputs[j] >= 0 && g->tensors[n->outputs[j]].bytes > 0)
			*wr += g->tensors[n->outputs[j]].bytes;
}

static void steps(FILE *f, const ArGraph *g, const ArPlan *p, bool *first)
{
	sep(f, first);
	fputs("{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, "
	      "\"tid\": 1, \"args\": {\"name\": \"steps\"}}", f);
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		int64_t rd, wr;
		io_bytes(g, n, &rd, &wr);
		sep(f, first);
		fputs("{\"name\": ", f);
		str(f, n->name);
		fputs(", \"cat\": ", f);
		str(f, n->op);
		fprintf(f, ", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": %d, "
			"\"dur\": %d, \"args\": {\"step\": %d, \"op\": ",
			s * STEP_US, STEP_US, s);
		str(f, n->op);
		fputs(", \"phase\": ", f);
		str(f, ar_phase_name(n->phase));
		fprintf(f, ", \"flops\": %" PRId64 ", \"bytes_read\": %" PRId64
			", \"bytes_written\": %" PRId64 "}}",
			ar_node_flops(g, n), rd, wr);
	}
}

typedef struct Owned {
	int t;
	int64_t offset;
} Owned;

static int by_offset(const void *a, const void *b)
{
	const Owned *x = a, *y = b;
	if (x->offset != y->offset)
		return x->offset > y->offset ? 1 : -1;
	return (x->t > y->t) - (x->t < y->t);
}

static void shape_text(FILE *f, const ArTensor *x)
{
	fputc('[', f);
	for (int i = 0; i < x->rank; i++)
		fprintf(f, "%s%" PRId64, i ? ", " : "", x->dims[i]);
	fputc(']', f);
}

static void lanes(FILE *f, const ArGraph *g, const ArPlan *p, bool *first)
{
	Owned *o = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *o);
	int *free_at = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	int *fst = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	int *lst = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	int n = 0, nlanes = 0;

	ar_plan_storage_spans(g, p, fst, lst);
	for (int t = 0; t < g->ntensors; t++)
		if (owns(p, t) && fst[t] >= 0)
			o[n++] = (Owned){t, p->slots[t].offset};
	qsort(o, (size_t)n, sizeof *o, by_offset);
	for (int i = 0; i < n; i++) {
		const ArSlot *s = &p->slots[o[i].t];
		const ArTensor *x = &g->tensors[o[i].t];
		int lane = 0, a = fst[o[i].t], z = lst[o[i].t];
		while (lane < nlanes && free_at[lane] > a)
			lane++;
		if (lane == nlanes) {
			sep(f, first);
			fprintf(f, "{\"name\": \"thread_name\", \"ph\": \"M\", "
				"\"pid\": 1, \"tid\": %d, \"args\": {\"name\": "
				"\"arena lane %d\"}}", lane + 2, lane);
			nlanes++;
		}
		free_at[lane] = z + 1;
		sep(f, first);
		fputs("{\"name\": ", f);
		str(f, x->name);
		fprintf(f, ", \"cat\": \"tensor\", \"ph\": \"X\", \"pid\": 1, "
			"\"tid\": %d, \"ts\": %d, \"dur\": %d, \"args\": "
			"{\"offset\": %" PRId64 ", \"bytes\": %" PRId64
			", \"region\": %d, \"dtype\": ", lane + 2,
			a * STEP_US, (z - a + 1) * STEP_US, s->offset, x->bytes,
			s->region);
		str(f, ar_dtype_name(x->dtype));
		fputs(", \"shape\": ", f);
		shape_text(f, x);
		fputs("}}", f);
	}
	free(o);
	free(free_at);
	free(fst);
	free(lst);
}

int ar_write_trace(FILE *f, const ArGraph *g, const ArPlan *p,
		   const ArEmitInfo *info)
{
	bool first = true;
	char name[512];

	snprintf(name, sizeof name, "arenac plan: %s", ar_model_name(info));
	fputs("{\"displayTimeUnit\": \"ms\", \"otherData\": {\"arena_bytes\": ",
	      f);
	fprintf(f, "%" PRId64 ", \"steps\": %d, \"step_us\": %d}, "
		"\"traceEvents\": [", p->arena_bytes, p->nsteps, STEP_US);
	sep(f, &first);
	fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, "
	      "\"args\": {\"name\": ", f);
	str(f, name);
	fputs("}}", f);
	counters(f, g, p, info, &first);
	steps(f, g, p, &first);
	lanes(f, g, p, &first);
	fputs("\n]}\n", f);
	return ferror(f) ? AR_EXIT_USAGE : AR_OK;
}
