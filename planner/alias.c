/*
 * alias.c — alias groups: the tensors that end up sharing one buffer.
 *
 * Views, concat slices and in-place outputs link tensors into chains whose
 * end (the root) owns the buffer.  The alias passes and the memory-aware
 * scheduler reason about whole groups rather than tensors: a group is born
 * with its first member and dies with its last reader, and it is as large
 * as its furthest-reaching member.  plan.c builds its offset problem the
 * same way, so both agree on what a buffer is.
 */
#include "passes.h"

#include <stdlib.h>

void ar_alias_memo_init(ArAliasMemo *m, const ArPlan *p)
{
	m->to = ar_xmalloc(((size_t)p->ntensors + 1) * sizeof(int));
	m->off = ar_xcalloc((size_t)p->ntensors + 1, sizeof(int64_t));
	for (int t = 0; t < p->ntensors; t++)
		m->to[t] = t;
}

void ar_alias_memo_free(ArAliasMemo *m)
{
	free(m->to), free(m->off);
}

/* One hop up t's chain (the memo's jump where it has one), or -1. */
static int hop(const ArPlan *p, const ArAliasMemo *m, int t, int64_t *d)
{
	const ArSlot *s = &p->slots[t];
	if (m && m->to[t] != t) {
		*d = m->off[t];
		return m->to[t];
	}
	if (s->alias_of >= 0) {
		*d = s->alias_offset;
		return s->alias_of;
	}
	*d = 0;
	return s->inplace_of;
}

int ar_alias_root(const ArPlan *p, ArAliasMemo *m, int t, int64_t *off)
{
	int64_t o = 0, d;
	int r = t, up;
	for (int hops = 0; hops <= p->ntensors && (up = hop(p, m, r, &d)) >= 0;
	     hops++) {
		o += d;
		r = up;
	}
	/* Path compression: everything on the way now jumps straight to r. */
	for (int64_t rest = o; m && t != r; t = up) {
		up = hop(p, m, t, &d);
		m->to[t] = r;
		m->off[t] = rest;
		rest -= d;
	}
	if (off)
		*off = o;
	return r;
}

bool *ar_graph_output_flags(const ArGraph *g)
{
	bool *out = ar_xcalloc((size_t)g->ntensors + 1, sizeof *out);
	for (int i = 0; i < g->noutputs; i++)
		out[g->outputs[i]] = true;
	return out;
}

void ar_groups_build(const ArGraph *g, const ArPlan *p, ArGroups *gr)
{
	size_t nt = (size_t)g->ntensors + 1;
	int *idx = ar_xmalloc(nt * sizeof(int));
	bool *isout = ar_graph_output_flags(g);
	ArAliasMemo m;

	ar_alias_memo_init(&m, p);
	gr->n = 0;
	gr->of = ar_xmalloc(nt * sizeof(int));
	gr->off = ar_xcalloc(nt, sizeof(int64_t));
	gr->root = ar_xmalloc(nt * sizeof(int));
	gr->size = ar_xcalloc(nt, sizeof(int64_t));
	gr->first = ar_xmalloc(nt * sizeof(int));
	gr->last = ar_xmalloc(nt * sizeof(int));
	gr->has_input = ar_xcalloc(nt, sizeof(bool));
	gr->has_output = ar_xcalloc(nt, sizeof(bool));
	for (int t = 0; t < g->ntensors; t++)
		idx[t] = gr->of[t] = -1;
	for (int t = 0; t < g->ntensors; t++) {
		const ArSlot *s = &p->slots[t];
		int64_t end;
		int r, k;
		if (!s->planned || g->tensors[t].bytes <= 0)
			continue;
		r = ar_alias_root(p, &m, t, &gr->off[t]);
		if (idx[r] < 0) {
			k = idx[r] = gr->n++;
			gr->root[k] = r;
			gr->first[k] = s->first;
			gr->last[k] = s->last;
		}
		k = gr->of[t] = idx[r];
		end = gr->off[t] + ar_plan_padded(p, g->tensors[t].bytes);
		if (end > gr->size[k])
			gr->size[k] = end;
		if (s->first < gr->first[k])
			gr->first[k] = s->first;
		if (s->last > gr->last[k])
			gr->last[k] = s->last;
		if (g->tensors[t].producer < 0)
			gr->has_input[k] = true;
		if (isout[t])
			gr->has_output[k] = true;
	}
	free(idx);
	free(isout);
	ar_alias_memo_free(&m);
}

void ar_groups_free(ArGroups *gr)
{
	free(gr->of);
	free(gr->off);
	free(gr->root);
	free(gr->size);
	free(gr->first);
	free(gr->last);
	free(gr->has_input);
	free(gr->has_output);
}
