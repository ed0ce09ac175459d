/*
 * plan.c — the planning pipeline: order, aliases, lifetimes, offsets, proof.
 *
 * Aliased tensors (views, concat slices, in-place outputs) share one
 * buffer: the buffer of the tensor at the end of their alias chain (the
 * root).  Offset assignment sees only roots, each live over the union of its
 * members' lifetimes and as large as its furthest member reaches; members
 * take the root's offset plus their alias offset.  Every plan goes through
 * the independent verifier before anyone sees it.
 */
#include "passes.h"
#include "dsa.h"
#include "tiers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void ar_plan_options_default(ArPlanOptions *o)
{
	memset(o, 0, sizeof *o);
	o->align = 16;
	o->algo = "auto";
	o->effort = AR_EFFORT_DEFAULT;
	o->order = AR_ORDER_MEMORY;
	o->views = true;
	o->inplace = AR_INPLACE_ELEMENTWISE;
	o->concat_elide = true;
}

void ar_plan_free(ArPlan *p)
{
	if (!p)
		return;
	free(p->steps);
	free(p->slots);
	ar_regions_free(p);
	free(p);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * The offset problem: one buffer per alias group (alias.c), bufs[k] for
 * group k.  Zero-byte tensors get no buffer (offset 0 is always safe).
 */
static ArBuf *build_buffers(const ArGraph *g, const ArPlan *p, ArGroups *gr)
{
	ArBuf *bufs;
	ar_groups_build(g, p, gr);
	bufs = ar_xmalloc((size_t)gr->n * sizeof *bufs + 1);
	for (int k = 0; k < gr->n; k++) {
		bufs[k].lo = gr->first[k];
		bufs[k].hi = gr->last[k] + 1;
		bufs[k].size = gr->size[k];
		bufs[k].offset = 0;
	}
	return bufs;
}

int64_t ar_live_peak(const ArGraph *g, ArPlan *p, int *peak_step)
{
	ArGroups gr;
	ArBuf *bufs = build_buffers(g, p, &gr);
	int64_t at = 0, peak = ar_dsa_lower_bound(bufs, gr.n, &at);
	if (peak_step)
		*peak_step = (int)at;
	free(bufs);
	ar_groups_free(&gr);
	return peak;
}

static void reset_aliases(ArPlan *p)
{
	for (int t = 0; t < p->ntensors; t++) {
		p->slots[t].alias_of = p->slots[t].inplace_of = -1;
		p->slots[t].alias_offset = 0;
		p->slots[t].offset = -1;
	}
}

static int assign_offsets(const ArGraph *g, const ArPlanOptions *opt,
			  ArPlan *p, ArError *err)
{
	ArGroups gr;
	ArBuf *bufs = build_buffers(g, p, &gr);
	int nb = gr.n;
	ArDsaResult res;
	ArBudget work;
	int64_t at = 0;
	int rc = AR_OK;

	p->lower_bound = ar_dsa_lower_bound(bufs, nb, &at);
	p->peak_step = (int)at;
	ar_budget_init(&work, ar_effort_units(opt->effort, opt->nmemories ?
					      AR_TIERS_WORK : AR_DSA_WORK),
		       opt->watch);
	if (opt->nmemories > 0) {
		/* Memory tiers: a region per buffer, offsets inside it. */
		if ((rc = ar_tiers_assign(g, opt, p, bufs, gr.of, nb, &work,
					  err)))
			goto out;
	} else if (ar_dsa_solve(bufs, nb, opt->algo, 0, &work, &res) < 0) {
		rc = ar_fail(err, AR_EXIT_USAGE, "unknown --algo '%s'",
			     opt->algo);
		goto out;
	} else {
		p->arena_bytes = nb ? res.height : 0;
		p->algorithm = res.algorithm;
		p->optimal = nb == 0 || res.optimal;
	}
	p->offset_work = work.granted - work.left;
	for (int t = 0; t < g->ntensors; t++)
		if (p->slots[t].planned)
			p->slots[t].offset = gr.of[t] < 0 ? 0 :
				bufs[gr.of[t]].offset + gr.off[t];
out:
	free(bufs);
	ar_groups_free(&gr);
	return rc;
}

static const char *step_name(const ArGraph *g, const ArPlan *p, int step)
{
	if (step < 0 || step >= p->nsteps)
		return "(no steps)";
	return g->nodes[p->steps[step]].name;
}

/*
 * Each size is below 2^62, but a few huge ones together are not: every sum
 * the planner forms later (live bytes, heights, offsets) stays below the
 * total of all padded sizes, so bounding that total once here keeps all of
 * them from overflowing.
 */
static int check_totals(const ArGraph *g, ArPlan *p, ArError *err)
{
	const int64_t limit = (int64_t)1 << 62;
	int64_t act = 0;
	for (int t = 0; t < g->ntensors; t++) {
		const ArTensor *x = &g->tensors[t];
		if (x->bytes <= 0)
			continue;
		if (x->kind == AR_TK_WEIGHT || x->kind == AR_TK_CONSTANT) {
			if (!ar_add64(p->weights_bytes, x->bytes,
				      &p->weights_bytes) ||
			    p->weights_bytes > limit)
				return ar_fail(err, AR_EXIT_MODEL, "weights and "
					       "constants total more than 2^62 "
					       "bytes (at '%s')", x->name);
		} else if (!ar_add64(act, ar_plan_padded(p, x->bytes), &act) ||
			   act > limit) {
			return ar_fail(err, AR_EXIT_MODEL, "activations total "
				       "more than 2^62 bytes (at '%s')",
				       x->name);
		}
	}
	return AR_OK;
}

/* Everything before the offsets: order, alias links, lifetimes. */
static int plan_links(const ArGraph *g, const ArPlanOptions *opt, ArPlan *p,
		      ArError *err)
{
	int rc;
	if (opt->align <= 0 || (opt->align & (opt->align - 1)))
		return ar_fail(err, AR_EXIT_USAGE, "--align %lld is not a "
			       "power of two", (long long)opt->align);
	p->align = opt->align;
	p->ntensors = g->ntensors;
	p->slots = ar_xcalloc((size_t)g->ntensors + 1, sizeof *p->slots);
	p->steps = ar_xmalloc(((size_t)g->nnodes + 1) * sizeof(int));
	if ((rc = check_totals(g, p, err)))
		return rc;
	reset_aliases(p);

	/* The reference point every improvement is measured against. */
	p->nsteps = ar_schedule_file(g, p->steps);
	ar_lifetimes(g, p);
	p->file_order_peak = ar_live_peak(g, p, NULL);

	if (opt->views)
		ar_views(g, p);
	if (opt->concat_elide)
		ar_concat_elide(g, p);
	p->nsteps = ar_schedule(g, opt, p, p->steps);
	ar_lifetimes(g, p);
	if (opt->concat_elide)
		ar_concat_refine(g, opt, p);
	else if (opt->inplace == AR_INPLACE_ELEMENTWISE)
		ar_inplace(g, p);
	return AR_OK;
}

int ar_plan_links(const ArGraph *g, const ArPlanOptions *opt, ArPlan **out,
		  ArError *err)
{
	*out = ar_xcalloc(1, sizeof **out);
	return plan_links(g, opt, *out, err);
}

int ar_plan(const ArGraph *g, const ArPlanOptions *opt, ArPlan **out,
	    ArError *err)
{
	ArPlan *p = ar_xcalloc(1, sizeof *p);
	ArPlanOptions o = *opt;
	ArWatch own;
	double t0 = now();
	int rc;

	*out = p;
	if (!o.watch) {
		ar_watch_start(&own, o.time_limit);
		o.watch = &own;
	}
	if (!(rc = plan_links(g, &o, p, err)))
		rc = assign_offsets(g, &o, p, err);
	p->plan_seconds = now() - t0;
	p->stopped_by_time_limit = o.watch->fired;
	if (rc)
		return rc;
	rc = ar_verify(g, p, err);
	if (rc)
		return rc;
	if (opt->budget > 0 && p->arena_bytes > opt->budget)
		return ar_fail(err, AR_EXIT_BUDGET, "does not fit the budget of "
			       "%lld bytes: the arena needs %lld bytes (lower "
			       "bound %lld, peak at step %d '%s')",
			       (long long)opt->budget,
			       (long long)p->arena_bytes,
			       (long long)p->lower_bound, p->peak_step,
			       step_name(g, p, p->peak_step));
	return AR_OK;
}
