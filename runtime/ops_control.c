/*
 * ops_control.c — If: the branch its condition picks, run in the
 * branch's planned workspace.
 *
 * The condition is known only now (a constant one was inlined by arenac,
 * frontend/inline_if.c).  The branch is a planned subgraph (art_subgraph)
 * whose tensors lie in the If step's workspace; it writes the outputs it
 * computes straight into the node's, so only an output that is something
 * else (a capture, a constant) is copied there afterwards, as the
 * header's comment says.  A branch the plan left out (one that cannot run
 * with the planned shapes: Silero VAD v5's 8 kHz branch given a 16 kHz
 * window) is an error when taken, never a run.
 */
#include <string.h>

#include "ops.h"

int op_if(Ctx *c)
{
	rt_arr cond;
	art_subgraph sg;
	const char *want;
	int found = 0;
	Ctx sub;

	if (ctx_arg(c, 0, 1, &cond))
		return -1;
	if (rt_numel(&cond.s) != 1)
		return ctx_fail(c, ART_E_CONDITION_VALUES_ONE,
				ART_I((long long)rt_numel(&cond.s)));
	want = rt_get_f(cond.dt, cond.p, 0) != 0 ? "then_branch" :
	       "else_branch";
	for (int k = 0; k < c->s->nsubgraphs && !found; k++) {
		c->m->subgraph(c->m->subgraphs, c->s->subgraphs[k], &sg);
		found = !strcmp(sg.attribute, want);
	}
	if (!found)
		return ctx_fail(c, ART_E_PLAN_NO, ART_S(want));
	if (!sg.planned)
		return ctx_fail(c, ART_E_CONDITION_TAKES_PLAN_LEFT,
				ART_S(want));
	if (sg.g.noutputs != c->s->noutputs)
		return ctx_fail(c, ART_E_OUTPUTS_NODE, ART_S(want),
				ART_I(sg.g.noutputs), ART_I(c->s->noutputs));
	sub = *c;
	sub.g = &sg.g;
	sub.s = NULL;
	sub.up = c;
	if (rt_run_steps(&sub))
		return -1;
	for (int j = 0; j < c->s->noutputs; j++) {
		int o = ctx_out(c, j), b = sg.g.outputs[j];
		art_tensor to, tb;
		void *dst, *src;
		if (o < 0 || (to = ctx_tensor(c, o)).rank < 0)
			continue;
		tb = ctx_tensor(&sub, b);
		if (tb.bytes != to.bytes)
			return ctx_fail(c, ART_E_S_OUTPUT_BYTES_NODE,
			    ART_S(want), ART_I(j),
					ART_U((unsigned long)tb.bytes),
					ART_U((unsigned long)to.bytes));
		dst = ctx_ptr(c, o);
		src = ctx_ptr(&sub, b);
		if (dst != src)
			memmove(dst, src, to.bytes);
	}
	return 0;
}
