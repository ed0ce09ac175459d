/*
 * subplan.c — the subgraphs of If and Loop steps, each planned as a graph
 * of its own.
 *
 * A subgraph runs entirely within its node's step, so its tensors need
 * memory only then: each is planned by the whole pipeline (order,
 * aliasing, offsets) into an arena of its own, and the node's step gets a
 * workspace of that size (workspace.c), placed among the enclosing graph's
 * tensors like one that lives for that step alone.  An If's branches
 * share the workspace, sized for the larger; a Loop body's is reused by
 * every iteration.  Nested subgraphs are planned the same way, inside out.
 *
 * What a subgraph's arena leaves out, because it already has a place:
 *   - captures, the enclosing graph's tensors it reads: the node lists
 *     them as inputs, so they live through its step where they are;
 *   - an If branch's outputs computed in the branch: the branch writes
 *     them straight into the node's outputs, which are born at the step
 *     and so lie outside the workspace (a branch output that is a capture
 *     or a constant is copied there by the runtime).
 * A loop body (Loop, Scan) keeps its inputs (iteration number,
 * condition, carried values or states, scan input slices) and outputs
 * (condition, carried values or states, scan slices) in its arena: after
 * an iteration the runtime copies scan slices into the node's outputs and
 * each carried output onto its input (ops/control.c), in order.  The
 * body's inputs live to its last step, so those copies never overwrite a
 * value still to be copied; one thing remains that they could: a body
 * output that is itself another carried input (a permutation), which is
 * left unplanned and said.
 *
 * A branch of an If whose condition is a compile-time constant and that
 * the condition never takes is not planned (inference never gave its
 * tensors shapes): it never runs.  Nor is a branch that cannot run with
 * these shapes (ArGraph.cannot_run): said, and a run that takes it fails.
 */
#include "infer_ops.h"
#include "ops.h"
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/* The branch an If never takes when its condition is constant, or NULL. */
static const ArGraph *untaken(const ArGraph *g, const ArNode *n)
{
	const ArTensor *c;
	const ArAttr *then_b = ar_attr(n, "then_branch");
	const ArAttr *else_b = ar_attr(n, "else_branch");

	if (n->nexplicit < 1 || n->inputs[0] < 0 || !then_b || !else_b)
		return NULL;
	c = &g->tensors[n->inputs[0]];
	if (!c->data || ar_numel(c) != 1)
		return NULL;
	return ar_get_int(c, 0) ? else_b->g : then_b->g;
}

/*
 * Per tensor of sub: the tensor of g it stands for (see above), or -1.
 * The loader made a capture in every scope between a name's graph and
 * its reader, so a capture's name is always in the enclosing graph.
 */
static int *outer_map(const ArGraph *g, const ArNode *n, const ArGraph *sub,
		      bool branch)
{
	int *outer = ar_xmalloc(((size_t)sub->ntensors + 1) * sizeof(int));

	for (int t = 0; t < sub->ntensors; t++)
		outer[t] = -1;
	for (int k = 0; k < sub->ncaptures; k++)
		outer[sub->captures[k]] =
			ar_graph_find(g, sub->tensors[sub->captures[k]].name);
	for (int j = 0; branch && j < sub->noutputs && j < n->noutputs; j++) {
		int t = sub->outputs[j], pr = sub->tensors[t].producer;
		if (pr >= 0 && ar_is_step(sub, pr) && outer[t] < 0)
			outer[t] = n->outputs[j];
	}
	return outer;
}

/*
 * A carried output that is itself another body input: copying the carried
 * values in order could read it after its own copy overwrote it.  Which
 * input each output goes back to is the op's (ops/control.c).
 */
static const char *loop_hazard(const ArGraph *body, const ArNode *n,
			       ArControl ctl)
{
	for (int o = 0; o < body->noutputs; o++) {
		int d = ar_control_carried(n, ctl, o);
		for (int i = 0; d >= 0 && i < body->ninputs; i++)
			if (body->outputs[o] == body->inputs[i] && i != d)
				return "a carried output of the body is another "
				       "of its inputs (a permutation), which "
				       "in-order copies would read overwritten";
	}
	return NULL;
}

/* A subgraph that could run left unplanned: said, never silently. */
static int leave_out(const ArPlanOptions *opt, ArSubPlan *sp,
		     const ArNode *n, const char *why)
{
	sp->why = why;
	ar_warn(&opt->diag, "subgraph '%s' of node '%s' (%s) is not planned: "
		"%s; its tensors have no place in the arena, and a run that "
		"takes it fails", sp->attr, n->name, n->op, why);
	return AR_OK;
}

static int plan_one(const ArGraph *g, const ArPlanOptions *opt, ArPlan *p,
		    int node, const ArAttr *a, ArControl ctl, ArError *err)
{
	const ArNode *n = &g->nodes[node];
	ArSubPlan *sp = &p->subs[p->nsubs++];
	ArPlanOptions so = *opt;

	memset(sp, 0, sizeof *sp);
	sp->g = a->g;
	sp->attr = a->name;
	sp->node = node;
	sp->loop = ctl == AR_CONTROL_LOOP || ctl == AR_CONTROL_SCAN;
	sp->base = -1;
	sp->up_g = g;
	sp->up_p = p;
	if (ctl == AR_CONTROL_NONE)
		return leave_out(opt, sp, n, "its op has no control-flow "
				 "semantics arenac knows");
	if (ctl == AR_CONTROL_BRANCHES && a->g == untaken(g, n)) {
		sp->why = "never runs: the If's condition is a compile-time "
			  "constant that takes the other branch";
		sp->never_runs = true;
		return AR_OK;
	}
	if (a->g->cannot_run)
		return leave_out(opt, sp, n, a->g->cannot_run);
	if (sp->loop && loop_hazard(a->g, n, ctl))
		return leave_out(opt, sp, n, loop_hazard(a->g, n, ctl));
	/* Its own arena, within the enclosing plan's workspace. */
	so.budget = 0;
	so.memories = NULL;
	so.nmemories = 0;
	so.weights_in = NULL;
	so.io_separate = false;
	return ar_plan_graph(a->g, &so, outer_map(g, n, a->g, !sp->loop),
			     sp->loop, &sp->plan, err);
}

int ar_plan_subgraphs(const ArGraph *g, const ArPlanOptions *opt, ArPlan *p,
		      ArError *err)
{
	int total = 0, rc = AR_OK;

	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].nattrs; j++)
			total += g->nodes[i].attrs[j].g != NULL;
	if (!total)
		return AR_OK;
	p->subs = ar_xcalloc((size_t)total, sizeof *p->subs);
	for (int i = 0; i < g->nnodes && !rc; i++) {
		const ArNode *n = &g->nodes[i];
		const ArOpDef *d = ar_op_of(n);
		if (!ar_is_step(g, i))
			continue;
		for (int j = 0; j < n->nattrs && !rc; j++)
			if (n->attrs[j].g)
				rc = plan_one(g, opt, p, i, &n->attrs[j],
					      d ? d->control : AR_CONTROL_NONE,
					      err);
	}
	return rc;
}
