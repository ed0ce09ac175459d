/*
 * tlsteps.c — where each step of a plan goes across the timeline.
 *
 * A step that reads or writes a tensor of the arena gets the page's full
 * step width; a step that does neither gets an eighth of it.  Those are
 * the optimizer's updates above all (parameters, gradients and optimizer
 * state all live outside the arena), which drawn full width were an empty
 * band over a seventh (GPT-2) to a quarter (DenseNet-121) of the picture.
 * Its run of steps stays, narrow, with its hover titles.
 *
 * Hover columns gather consecutive steps until they are a point wide, so
 * a picture of many thin steps keeps one target per point.
 */
#include <stdlib.h>

#include "timeline.h"

#define QUIET 0.125     /* a step away from the arena, in step widths */

bool ar_tl_busy(const ArGraph *g, const ArPlan *p, int s)
{
	const ArNode *n = &g->nodes[p->steps[s]];
	for (int j = 0; j < n->ninputs; j++)
		if (n->inputs[j] >= 0 && p->slots[n->inputs[j]].planned)
			return true;
	for (int j = 0; j < n->noutputs; j++)
		if (n->outputs[j] >= 0 && p->slots[n->outputs[j]].planned)
			return true;
	return false;
}

double ar_tl_step_edges(const ArGraph *g, const ArPlan *p, double x0,
			double sx, double *x)
{
	double at = x0;
	for (int s = 0; s < p->nsteps; s++) {
		if (x)
			x[s] = at;
		at += (ar_tl_busy(g, p, s) ? 1 : QUIET) * sx;
	}
	if (x)
		x[p->nsteps] = at;
	return at - x0;
}

void ar_tl_columns(const double *x, int nsteps, ArTlCols *c)
{
	c->n = 0;
	c->first = ar_xmalloc(((size_t)nsteps + 1) * sizeof *c->first);
	c->of = ar_xmalloc(((size_t)nsteps + 1) * sizeof *c->of);
	for (int s = 0; s < nsteps; s++) {
		/* A point, less a rounding error: steps of a third of a point
		 * go three to a column. */
		if (c->n == 0 || x[s] - x[c->first[c->n - 1]] >= 1 - 1e-9)
			c->first[c->n++] = s;
		c->of[s] = c->n - 1;
	}
	c->first[c->n] = nsteps;
}

void ar_tl_columns_free(ArTlCols *c)
{
	free(c->first), free(c->of);
}
