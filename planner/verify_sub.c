/*
 * verify_sub.c — the verifier's part for workspaces and subgraphs, called
 * by verify.c for a plan and each plan nested in it.
 *
 * Like the rest of the verifier it shares no code with what it checks
 * (workspace.c, subplan.c): it derives from the graph and the op table what
 * must hold and compares.
 *   - Each step's workspace is at least what the step needs (its kernel's
 *     scratch when planned with --scratch kernels; each of its subgraphs'
 *     arenas), aligned, inside its region, and disjoint from every tensor
 *     live at that step.  Only steps have one.
 *   - Every subgraph of every step is listed once: planned, or not with a
 *     reason; one said never to run is the branch that its If's constant
 *     condition does not take.
 *   - A planned subgraph's region starts at its step's workspace, in the
 *     workspace's region; the tensors its plan leaves to the enclosing
 *     graph are exactly its captures (the enclosing tensor of that name)
 *     and, in an If branch, its outputs computed in the branch (the node's
 *     output at that position).
 *   - A loop body's inputs live to its last step, and no carried output
 *     is another body input, so in-order copies of the carried values
 *     never overwrite one still to be copied.
 *   - Its plan passes the whole verifier, recursively.
 * Together these make the absolute layout safe: a subgraph's tensors stay
 * inside a workspace that nothing else live at the step touches, and what
 * it shares with the enclosing graph is live there through the step.
 */
#include "infer_ops.h"
#include "ops.h"
#include "passes.h"

#include <stdlib.h>

static int fail_sub(ArError *err, const ArGraph *g, const ArSubPlan *sp,
		    const char *what)
{
	return ar_fail(err, AR_EXIT_INTERNAL, "plan: subgraph '%s' of node "
		       "'%s': %s", sp->attr, g->nodes[sp->node].name, what);
}

/* The bytes node i's step must have: kernel scratch, subgraph arenas. */
static int64_t needed(const ArGraph *g, const ArPlan *p, int i)
{
	/* The op table is asked only when kernel scratch is planned at all. */
	const ArOpDef *d = p->kernel_scratch ? ar_op_of(&g->nodes[i]) : NULL;
	int64_t need = 0;
	if (d && d->scratch)
		need = d->scratch(g, &g->nodes[i]);
	for (int k = 0; k < p->nsubs; k++)
		if (p->subs[k].node == i && p->subs[k].plan &&
		    p->subs[k].plan->arena_bytes > need)
			need = p->subs[k].plan->arena_bytes;
	return need;
}

static int check_workspace(const ArGraph *g, const ArPlan *p, int s,
			   ArError *err)
{
	int i = p->steps[s];
	const ArScratch *sc = p->scratch ? &p->scratch[i] : NULL;
	int64_t have = sc ? sc->bytes : 0, end;

	if (have < needed(g, p, i))
		return ar_fail(err, AR_EXIT_INTERNAL, "plan: step %d '%s' has "
			       "%lld bytes of workspace but needs %lld", s,
			       g->nodes[i].name, (long long)have,
			       (long long)needed(g, p, i));
	if (have <= 0)
		return AR_OK;
	end = sc->offset + ar_plan_padded(p, have);
	if (sc->offset < 0 || sc->offset % p->align || sc->region < 0 ||
	    sc->region >= ar_plan_nregions(p) ||
	    end > ar_plan_region_bytes(p, sc->region))
		return ar_fail(err, AR_EXIT_INTERNAL, "plan: the workspace of "
			       "step %d '%s' at %lld is unaligned or outside "
			       "its arena", s, g->nodes[i].name,
			       (long long)sc->offset);
	for (int t = 0; t < g->ntensors; t++) {
		const ArSlot *x = &p->slots[t];
		if (!x->planned || g->tensors[t].bytes <= 0 || x->first > s ||
		    x->last < s || x->region != sc->region)
			continue;
		if (x->offset < end &&
		    sc->offset < x->offset + g->tensors[t].bytes)
			return ar_fail(err, AR_EXIT_INTERNAL, "plan: the "
				       "workspace of step %d '%s' [%lld, %lld) "
				       "overlaps '%s', live then", s,
				       g->nodes[i].name, (long long)sc->offset,
				       (long long)end, g->tensors[t].name);
	}
	return AR_OK;
}

/* The branch a constant If condition leaves out, or NULL. */
static const ArGraph *never_taken(const ArGraph *g, const ArNode *n)
{
	const ArAttr *a;
	const ArTensor *c;
	if (n->nexplicit < 1 || n->inputs[0] < 0)
		return NULL;
	c = &g->tensors[n->inputs[0]];
	if (!c->data || ar_numel(c) != 1)
		return NULL;
	a = ar_attr(n, ar_get_int(c, 0) ? "else_branch" : "then_branch");
	return a ? a->g : NULL;
}

/* What the plan of sp leaves to the enclosing graph g, tensor by tensor. */
static int check_outer(const ArGraph *g, const ArSubPlan *sp, ArError *err)
{
	const ArGraph *sub = sp->g;
	const ArNode *n = &g->nodes[sp->node];
	int *want = ar_xmalloc(((size_t)sub->ntensors + 1) * sizeof(int));
	int rc = AR_OK;

	for (int t = 0; t < sub->ntensors; t++)
		want[t] = -1;
	for (int k = 0; k < sub->ncaptures; k++)
		want[sub->captures[k]] = ar_graph_find(g,
				sub->tensors[sub->captures[k]].name);
	for (int j = 0; !sp->loop && j < sub->noutputs && j < n->noutputs;
	     j++) {
		int t = sub->outputs[j], pr = sub->tensors[t].producer;
		if (pr >= 0 && ar_is_step(sub, pr) && want[t] < 0)
			want[t] = n->outputs[j];
	}
	for (int t = 0; t < sub->ntensors && !rc; t++)
		if (sp->plan->outer[t] != want[t])
			rc = fail_sub(err, g, sp, "a tensor stands for the "
				      "wrong tensor of the enclosing graph");
	free(want);
	return rc;
}

static int check_loop(const ArGraph *g, const ArSubPlan *sp, ArControl ctl,
		      ArError *err)
{
	const ArGraph *b = sp->g;
	const ArPlan *bp = sp->plan;
	const ArNode *n = &g->nodes[sp->node];

	if (!bp->carried)
		return fail_sub(err, g, sp, "a loop body planned as a branch");
	for (int i = 0; i < b->ninputs; i++) {
		const ArSlot *x = &bp->slots[b->inputs[i]];
		if (x->planned && bp->nsteps > 0 && x->last != bp->nsteps - 1)
			return fail_sub(err, g, sp, "a body input dies before "
					"the carried values are copied");
	}
	for (int o = 0; o < b->noutputs; o++) {
		int d = ar_control_carried(n, ctl, o);
		for (int i = 0; d >= 0 && i < b->ninputs; i++)
			if (b->outputs[o] == b->inputs[i] && i != d)
				return fail_sub(err, g, sp, "a carried output "
						"is another body input");
	}
	return AR_OK;
}

static int check_sub(const ArGraph *g, const ArPlan *p, const ArSubPlan *sp,
		     int64_t base, int region, ArError *err)
{
	const ArNode *n = &g->nodes[sp->node];
	const ArOpDef *d = ar_op_of(n);
	ArControl ctl = d ? d->control : AR_CONTROL_NONE;
	const ArScratch *sc = p->scratch && p->scratch[sp->node].bytes > 0 ?
			      &p->scratch[sp->node] : NULL;
	int rc;

	if (sp->never_runs && (ctl != AR_CONTROL_BRANCHES || sp->plan ||
			       never_taken(g, n) != sp->g))
		return fail_sub(err, g, sp, "said never to run, but it can");
	if (!sp->plan)
		return sp->why ? AR_OK :
		       fail_sub(err, g, sp, "not planned, and not said why");
	if (ctl == AR_CONTROL_NONE ||
	    sp->loop != (ctl == AR_CONTROL_LOOP || ctl == AR_CONTROL_SCAN))
		return fail_sub(err, g, sp, "planned as the wrong kind of "
				"subgraph for its op");
	if (sp->base != base + (sc ? sc->offset : 0) ||
	    sp->region != (region >= 0 ? region : sc ? sc->region : 0))
		return fail_sub(err, g, sp, "its region is not its step's "
				"workspace");
	if (!sp->plan->outer)
		return fail_sub(err, g, sp, "its plan lacks the outer map");
	if ((rc = check_outer(g, sp, err)) ||
	    (sp->loop && (rc = check_loop(g, sp, ctl, err))))
		return rc;
	return ar_verify_at(sp->g, sp->plan, sp->base, sp->region, err);
}

int ar_verify_subs(const ArGraph *g, const ArPlan *p, int64_t base,
		   int region, ArError *err)
{
	bool *step = ar_xcalloc((size_t)g->nnodes + 1, sizeof *step);
	int rc = AR_OK, seen = 0;

	for (int s = 0; s < p->nsteps && !rc; s++) {
		step[p->steps[s]] = true;
		rc = check_workspace(g, p, s, err);
	}
	for (int i = 0; i < g->nnodes && !rc; i++) {
		if (p->scratch && !step[i] && p->scratch[i].bytes != 0)
			rc = ar_fail(err, AR_EXIT_INTERNAL, "plan: node '%s' "
				     "has a workspace but never runs",
				     g->nodes[i].name);
		for (int j = 0; step[i] && j < g->nodes[i].nattrs && !rc; j++) {
			int hits = 0;
			if (!g->nodes[i].attrs[j].g)
				continue;
			seen++;
			for (int k = 0; k < p->nsubs; k++)
				hits += p->subs[k].node == i &&
					p->subs[k].g == g->nodes[i].attrs[j].g;
			if (hits != 1)
				rc = ar_fail(err, AR_EXIT_INTERNAL, "plan: "
					     "subgraph '%s' of node '%s' is "
					     "listed %d times",
					     g->nodes[i].attrs[j].name,
					     g->nodes[i].name, hits);
		}
	}
	if (!rc && seen != p->nsubs)
		rc = ar_fail(err, AR_EXIT_INTERNAL, "plan: %d subgraphs listed "
			     "for %d", p->nsubs, seen);
	for (int k = 0; k < p->nsubs && !rc; k++)
		rc = check_sub(g, p, &p->subs[k], base, region, err);
	free(step);
	return rc;
}
