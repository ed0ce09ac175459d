/*
 * plan.c — the planning pipeline: order, aliases, lifetimes, offsets, proof.
 *
 * Aliased tensors (views, concat slices, in-place outputs) share one
 * buffer: the buffer of the tensor at the end of their alias chain (the
 * root).  Offset assignment sees only roots, each live over the union of its
 * members' lifetimes and as large as its furthest member reaches; members
 * take the root's offset plus their alias offset.  A step's workspace (its
 * kernel's scratch, its subgraphs' region: workspace.c) is one more buffer,
 * live at that step alone.  Subgraphs are planned first, each by this same
 * pipeline (subplan.c), since their sizes make the workspaces.  Every plan
 * goes through the independent verifier before anyone sees it.
 */
#include "passes.h"
#include "dsa.h"
#include "numfmt.h"
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
	o->kernel_scratch = true;
}

static void free_subs(ArPlan *p)
{
	for (int k = 0; k < p->nsubs; k++)
		ar_plan_free(p->subs[k].plan);
	free(p->subs);
}

void ar_plan_free(ArPlan *p)
{
	if (!p)
		return;
	free(p->steps);
	free(p->slots);
	free(p->noop);
	free(p->scratch);
	free(p->outer);
	free_subs(p);
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
 * group k, then one per step with a workspace, in step order; *nb gets
 * their number.  Zero-byte tensors get no buffer (offset 0 is always
 * safe).
 */
static ArBuf *build_buffers(const ArGraph *g, const ArPlan *p, ArGroups *gr,
			    int *nb)
{
	ArBuf *bufs;
	ar_groups_build(g, p, gr);
	bufs = ar_xmalloc(((size_t)gr->n + (size_t)p->nsteps) * sizeof *bufs +
			  1);
	for (int k = 0; k < gr->n; k++) {
		bufs[k].lo = gr->first[k];
		bufs[k].hi = gr->last[k] + 1;
		bufs[k].size = gr->size[k];
		bufs[k].offset = 0;
	}
	*nb = gr->n;
	for (int s = 0; s < p->nsteps; s++) {
		const ArScratch *sc = ar_plan_scratch(p, p->steps[s]);
		if (!sc)
			continue;
		bufs[*nb].lo = s;
		bufs[*nb].hi = s + 1;
		bufs[*nb].size = ar_plan_padded(p, sc->bytes);
		bufs[(*nb)++].offset = 0;
	}
	return bufs;
}

int64_t ar_live_peak(const ArGraph *g, ArPlan *p, int *peak_step)
{
	ArGroups gr;
	int nb;
	ArBuf *bufs = build_buffers(g, p, &gr, &nb);
	int64_t at = 0, peak = ar_dsa_lower_bound(bufs, nb, &at);
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
	int nb, k;
	ArBuf *bufs = build_buffers(g, p, &gr, &nb);
	int *region = ar_xcalloc((size_t)nb + 1, sizeof *region);
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
		if ((rc = ar_tiers_assign(g, opt, p, bufs, gr.of, nb, region,
					  &work, err)))
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
	/* The workspaces, in the order build_buffers listed them. */
	k = gr.n;
	for (int s = 0; s < p->nsteps; s++)
		if (ar_plan_scratch(p, p->steps[s])) {
			p->scratch[p->steps[s]].offset = bufs[k].offset;
			p->scratch[p->steps[s]].region = region[k++];
		}
out:
	free(region);
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
	int64_t act = 0, weights = 0;
	for (int t = 0; t < g->ntensors; t++) {
		const ArTensor *x = &g->tensors[t];
		if (x->bytes <= 0)
			continue;
		if (x->kind == AR_TK_WEIGHT || x->kind == AR_TK_CONSTANT) {
			if (!ar_add64(weights, x->bytes, &weights) ||
			    weights > limit)
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
	for (int i = 0; i < g->nnodes; i++) {
		const ArScratch *sc = ar_plan_scratch(p, i);
		if (sc && (sc->bytes > limit ||
			   !ar_add64(act, ar_plan_padded(p, sc->bytes), &act) ||
			   act > limit))
			return ar_fail(err, AR_EXIT_MODEL, "activations and "
				       "workspaces total more than 2^62 bytes "
				       "(at the workspace of '%s')",
				       g->nodes[i].name);
	}
	return AR_OK;
}

/* Everything before the offsets: order, alias links, lifetimes. */
static int plan_links(const ArGraph *g, const ArPlanOptions *opt, ArPlan *p,
		      ArError *err)
{
	bool *read;
	int rc;
	if (opt->align <= 0 || (opt->align & (opt->align - 1)))
		return ar_fail(err, AR_EXIT_USAGE, "--align %lld is not a "
			       "power of two", (long long)opt->align);
	p->align = opt->align;
	p->io_separate = opt->io_separate;
	p->ntensors = g->ntensors;
	p->slots = ar_xcalloc((size_t)g->ntensors + 1, sizeof *p->slots);
	p->steps = ar_xmalloc(((size_t)g->nnodes + 1) * sizeof(int));
	if ((rc = check_totals(g, p, err)))
		return rc;
	reset_aliases(p);
	ar_persist_inplace(g, p);
	read = ar_xmalloc((size_t)g->ntensors + 1);
	p->weights_bytes = ar_weights_read(g, p, read);
	free(read);

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
	ar_kv_alias(g, p);
	return AR_OK;
}

int ar_plan_links(const ArGraph *g, const ArPlanOptions *opt, ArPlan **out,
		  ArError *err)
{
	*out = ar_xcalloc(1, sizeof **out);
	return plan_links(g, opt, *out, err);
}

/* A plan is proven minimal only when each of its subgraphs' is too. */
static bool subs_optimal(const ArPlan *p)
{
	for (int k = 0; k < p->nsubs; k++)
		if (p->subs[k].plan && !p->subs[k].plan->optimal)
			return false;
	return true;
}

int ar_plan_graph(const ArGraph *g, const ArPlanOptions *opt, int *outer,
		  bool carried, ArPlan **out, ArError *err)
{
	ArPlan *p = ar_xcalloc(1, sizeof *p);
	int rc;

	*out = p;
	p->outer = outer;
	p->carried = carried;
	if ((rc = ar_plan_subgraphs(g, opt, p, err)))
		return rc;
	if ((rc = ar_plan_workspaces(g, opt, p, err)) ||
	    (rc = plan_links(g, opt, p, err)) ||
	    (rc = assign_offsets(g, opt, p, err)))
		return rc;
	p->optimal = p->optimal && subs_optimal(p);
	ar_plan_facts(g, p);
	return AR_OK;
}

int ar_plan(const ArGraph *g, const ArPlanOptions *opt, ArPlan **out,
	    ArError *err)
{
	ArPlanOptions o = *opt;
	ArWatch own;
	double t0 = now();
	ArPlan *p;
	int rc;

	if (!o.watch) {
		ar_watch_start(&own, o.time_limit);
		o.watch = &own;
	}
	rc = ar_plan_graph(g, &o, NULL, false, out, err);
	p = *out;
	p->plan_seconds = now() - t0;
	p->stopped_by_time_limit = o.watch->fired;
	if (rc)
		return rc;
	ar_plan_place_subs(p);
	if (p->nsubs)
		p->weights_bytes = ar_weights_total(g, p);
	rc = ar_verify(g, p, err);
	if (rc)
		return rc;
	if (opt->budget > 0 && p->arena_bytes > opt->budget) {
		char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN], c[AR_NUMFMT_LEN];
		return ar_fail(err, AR_EXIT_BUDGET, "does not fit the budget of "
			       "%s bytes: the arena needs %s bytes (lower "
			       "bound %s, peak at step %d '%s')",
			       ar_fmt_count(a, opt->budget),
			       ar_fmt_count(b, p->arena_bytes),
			       ar_fmt_count(c, p->lower_bound), p->peak_step,
			       step_name(g, p, p->peak_step));
	}
	return AR_OK;
}
