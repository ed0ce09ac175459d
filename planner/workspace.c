/*
 * workspace.c — each step's workspace: how large it is, and where the
 * subgraphs that run in it end up.
 *
 * A step's workspace is what its kernel needs besides its operands (with
 * --scratch kernels, the op table's .scratch: a recurrent layer's state
 * and gates), or for an If or Loop the region its subgraphs run in, as
 * large as the largest of their arenas (subplan.c).  Sizes are per node,
 * since the order does not change them.  plan.c places each like a tensor
 * that lives for its step alone; once the offsets are final, each
 * subgraph's region starts at its step's workspace, and its tensors'
 * absolute offsets are that base plus their own.
 */
#include "ops.h"
#include "passes.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

const ArScratch *ar_plan_scratch(const ArPlan *p, int node)
{
	return p->scratch && p->scratch[node].bytes > 0 ? &p->scratch[node] :
							   NULL;
}

int ar_plan_workspaces(const ArGraph *g, const ArPlanOptions *opt,
		       ArPlan *p, ArError *err)
{
	ArScratch *sc = ar_xcalloc((size_t)g->nnodes + 1, sizeof *sc);
	bool any = false;

	p->kernel_scratch = opt->kernel_scratch;
	for (int i = 0; i < g->nnodes; i++) {
		const ArOpDef *d = ar_op_of(&g->nodes[i]);
		int64_t lib = -1;
		sc[i].offset = -1;
		if (opt->kernel_table && ar_is_step(g, i) &&
		    ar_kernel_scratch_bytes(opt->kernel_table, g, &g->nodes[i],
					    &lib, err)) {
			free(sc);
			return err->code;
		}
		if (lib >= 0)
			sc[i].bytes = lib;
		else if (opt->kernel_scratch && d && d->scratch &&
			 ar_is_step(g, i))
			sc[i].bytes = d->scratch(g, &g->nodes[i]);
	}
	for (int k = 0; k < p->nsubs; k++) {
		const ArSubPlan *sp = &p->subs[k];
		if (sp->plan && sp->plan->arena_bytes > sc[sp->node].bytes)
			sc[sp->node].bytes = sp->plan->arena_bytes;
	}
	for (int i = 0; i < g->nnodes; i++)
		any |= sc[i].bytes > 0;
	free(p->scratch);
	p->scratch = any ? sc : NULL;
	if (!any)
		free(sc);
	return AR_OK;
}

/* Bases of p's subgraphs, p's own offsets being relative to base. */
static void place(ArPlan *p, int64_t base, int region, const ArSubPlan *up)
{
	for (int k = 0; k < p->nsubs; k++) {
		ArSubPlan *sp = &p->subs[k];
		const ArScratch *sc = ar_plan_scratch(p, sp->node);
		sp->up = up;
		sp->region = region >= 0 ? region : sc ? sc->region : 0;
		sp->base = base + (sc ? sc->offset : 0);
		if (sp->plan)
			place(sp->plan, sp->base, sp->region, sp);
	}
}

void ar_plan_place_subs(ArPlan *p)
{
	place(p, 0, -1, NULL);
}

void ar_sub_where(const ArSubPlan *sub, int t, ArWhere *w)
{
	const ArSubPlan *s = sub;
	const ArGraph *g = sub->g;
	const ArPlan *p = sub->plan;
	const ArSlot *slot;

	assert(p);
	while (s && p->outer && p->outer[t] >= 0) {
		t = p->outer[t];
		g = s->up_g;
		p = s->up_p;
		s = s->up;
	}
	slot = &p->slots[t];
	w->g = g;
	w->p = p;
	w->sub = s;
	w->t = t;
	w->offset = !slot->planned ? -1 : s ? s->base + slot->offset :
		    slot->offset;
	w->region = !slot->planned ? 0 : s ? s->region : slot->region;
}

static void count(const ArPlan *p, ArSubCounts *c)
{
	for (int k = 0; k < p->nsubs; k++) {
		const ArPlan *q = p->subs[k].plan;
		c->total++;
		c->never_run += p->subs[k].never_runs;
		c->unplanned += !q && !p->subs[k].never_runs;
		if (!q)
			continue;
		c->planned++;
		for (int t = 0; t < q->ntensors; t++)
			c->tensors += q->slots[t].planned;
		count(q, c);
	}
}

void ar_plan_sub_counts(const ArPlan *p, ArSubCounts *c)
{
	memset(c, 0, sizeof *c);
	count(p, c);
}

int ar_plan_sub_id(const ArPlan *p, int first, int k)
{
	int id = first;
	for (int j = 0; j < k; j++) {
		ArSubCounts c = {0};
		if (p->subs[j].plan)
			ar_plan_sub_counts(p->subs[j].plan, &c);
		id += 1 + c.total;
	}
	return id;
}

static int walk(const ArPlan *p, int next, int parent, ArSubVisit fn,
		void *ctx)
{
	for (int k = 0; k < p->nsubs; k++) {
		int id = next++;
		fn(&p->subs[k], id, parent, ctx);
		if (p->subs[k].plan)
			next = walk(p->subs[k].plan, next, id, fn, ctx);
	}
	return next;
}

void ar_plan_walk_subs(const ArPlan *p, ArSubVisit fn, void *ctx)
{
	walk(p, 0, -1, fn, ctx);
}
