/*
 * pipeline.c — pipeline parallelism's memory: how many microbatches a
 * stage holds at once, what each holds from its forward pass to its
 * backward pass, the stage's arena with them, and the split of the layers
 * into stages.
 *
 * In flight.  GPipe runs every microbatch's forward pass before any
 * backward pass, so each stage holds all M of them; 1F1B (PipeDream-Flush,
 * Narayanan et al. 2021) starts the backward passes as soon as the last
 * stage can, so stage i of p holds min(p - i, M).  A stage's arena is
 * planned as its one-microbatch step with, besides, the stash of each
 * other microbatch in flight: the bytes that microbatch holds between its
 * forward and its backward pass (the buffers live across the step graph's
 * first backward step), one block each, live throughout.  The plan is an
 * ordinary plan of that graph, verified like any other.
 *
 * Split.  Stages take consecutive layers; the first also runs the prefix
 * (embeddings), the last the tail (final norm, head, loss).  A device's
 * total depends on which layers it holds and how many microbatches, so
 * the split minimising the largest total is found by a dynamic program
 * over (stages, layers) with a caller's estimate per stage, and so is the
 * best split with as even layer counts as can be (the baseline).
 */
#include "devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ar_inflight(ArSchedule s, int pp, int stage, int microbatches)
{
	int k = pp - stage;
	if (s == AR_SCHED_GPIPE || microbatches < k)
		return microbatches;
	return k;
}

int64_t ar_stash_bytes(const ArGraph *g, const ArPlan *p)
{
	int first_bwd = p->nsteps, *lo, *hi;
	int64_t sum = 0;
	for (int i = 0; i < p->nsteps; i++)
		if (g->nodes[p->steps[i]].phase == AR_PHASE_BACKWARD) {
			first_bwd = i;
			break;
		}
	/* A buffer lives while any tensor sharing it does (views, in-place
	 * chains). */
	lo = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *lo);
	hi = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *hi);
	for (int t = 0; t < g->ntensors; t++)
		lo[t] = p->nsteps, hi[t] = -1;
	for (int t = 0; t < g->ntensors; t++) {
		const ArSlot *s = &p->slots[t];
		if (!s->planned || s->root < 0)
			continue;
		if (s->first < lo[s->root])
			lo[s->root] = s->first;
		if (s->last > hi[s->root])
			hi[s->root] = s->last;
	}
	for (int t = 0; t < g->ntensors; t++)
		if (p->slots[t].planned && p->slots[t].root == t &&
		    lo[t] < first_bwd && hi[t] >= first_bwd)
			sum = ar_train_add(sum, ar_plan_padded(
				p, g->tensors[t].bytes));
	free(lo);
	free(hi);
	return sum;
}

int ar_inflight_plan(ArTrainResult *r, int inflight, int64_t stash,
		     const ArPlanOptions *popt, ArError *err)
{
	ArGraph *g;
	ArPlanOptions po = *popt;
	ArPlan *p = NULL;
	int more = inflight - 1, rc;

	if (more < 1 || stash <= 0)
		return AR_OK;
	g = ar_train_copy(r->graph, NULL);
	g->inputs = ar_xrealloc(g->inputs, ((size_t)g->ninputs + (size_t)more +
					    1) * sizeof(int));
	g->outputs = ar_xrealloc(g->outputs, ((size_t)g->noutputs +
					      (size_t)more + 1) * sizeof(int));
	for (int k = 1; k <= more; k++) {
		char name[48];
		int t;
		ArTensor *x;
		snprintf(name, sizeof name, "inflight.mb%d", k);
		t = ar_graph_add_tensor(g, name);
		x = &g->tensors[t];
		x->dtype = AR_DT_UINT8;
		x->rank = 1;
		x->dims[0] = stash;
		x->bytes = stash;
		x->kind = AR_TK_INPUT;
		g->inputs[g->ninputs++] = t;
		g->outputs[g->noutputs++] = t;
	}
	po.budget = 0;
	po.order = AR_ORDER_FILE;
	if ((rc = ar_plan(g, &po, &p, err))) {
		ar_plan_free(p);
		ar_graph_free(g);
		return rc;
	}
	ar_plan_free(r->plan);
	ar_graph_free(r->graph);
	r->graph = g;
	r->plan = p;
	r->bill.total_bytes = ar_train_add(r->bill.total_bytes,
					   p->arena_bytes - r->bill.arena_bytes);
	r->bill.arena_bytes = p->arena_bytes;
	return AR_OK;
}

typedef int64_t (*Est)(void *ctx, int stage, int a, int b);

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

int64_t ar_pipeline_split(int n, int pp, Est est, void *ctx, int *bounds)
{
	size_t w = (size_t)n + 1;
	int64_t *best = ar_xmalloc(((size_t)pp + 1) * w * sizeof *best);
	int *from = ar_xmalloc(((size_t)pp + 1) * w * sizeof *from);
	int64_t r;

	/* best[i * w + j]: layers [0, j) in stages 0..i-1, the least
	 * largest total; from: where stage i-1 starts. */
	for (int j = 1; j <= n - pp + 1; j++) {
		best[w + j] = est(ctx, 0, 0, j);
		from[w + j] = 0;
	}
	for (int i = 2; i <= pp; i++)
		for (int j = i; j <= n - pp + i; j++) {
			if (i == pp && j != n)
				continue;
			best[i * w + j] = INT64_MAX;
			for (int a = i - 1; a < j; a++) {
				int64_t v = max64(best[(i - 1) * w + a],
						  est(ctx, i - 1, a, j));
				if (v < best[i * w + j])
					best[i * w + j] = v, from[i * w + j] = a;
			}
		}
	bounds[pp] = n;
	for (int i = pp; i >= 1; i--)
		bounds[i - 1] = from[i * w + bounds[i]];
	r = best[pp * w + n];
	free(best);
	free(from);
	return r;
}

/* The largest estimated total of a split. */
static int64_t split_cost(int pp, Est est, void *ctx, const int *bounds)
{
	int64_t m = 0;
	for (int i = 0; i < pp; i++)
		m = max64(m, est(ctx, i, bounds[i], bounds[i + 1]));
	return m;
}

/* Every arrangement of the extra layers is looked at up to this many
 * stages. */
#define EVEN_MAX_STAGES 16

static int bits(uint32_t m)
{
	int n = 0;
	for (; m; m &= m - 1)
		n++;
	return n;
}

int64_t ar_pipeline_even(int n, int pp, Est est, void *ctx, int *bounds)
{
	int q = n / pp, extra = n % pp;
	int *b = ar_xmalloc(((size_t)pp + 1) * sizeof *b);
	int64_t best = INT64_MAX;
	/* Which stages take one layer more: every way when there are few
	 * stages, else the last ones. */
	uint32_t first = extra ? ((1u << extra) - 1) << (pp - extra) : 0;
	uint32_t end = pp <= EVEN_MAX_STAGES ? 1u << pp : first + 1;

	for (uint32_t mask = pp <= EVEN_MAX_STAGES ? 0 : first; mask < end;
	     mask++) {
		int64_t c;
		if (bits(mask) != extra)
			continue;
		b[0] = 0;
		for (int i = 0; i < pp; i++)
			b[i + 1] = b[i] + q + (int)(mask >> i & 1u);
		c = split_cost(pp, est, ctx, b);
		if (c < best) {
			best = c;
			memcpy(bounds, b, ((size_t)pp + 1) * sizeof *b);
		}
	}
	free(b);
	return best;
}
