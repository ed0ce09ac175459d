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

int ar_alias_root(const ArPlan *p, int t, int64_t *off)
{
	int64_t o = 0;
	for (int hops = 0; hops <= p->ntensors; hops++) {
		const ArSlot *s = &p->slots[t];
		if (s->alias_of >= 0) {
			o += s->alias_offset;
			t = s->alias_of;
		} else if (s->inplace_of >= 0) {
			t = s->inplace_of;
		} else {
			break;
		}
	}
	if (off)
		*off = o;
	return t;
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
	int *idx = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	bool *isout = ar_graph_output_flags(g);

	gr->n = 0;
	gr->of = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	gr->size = ar_xcalloc((size_t)g->ntensors + 1, sizeof(int64_t));
	gr->has_input = ar_xcalloc((size_t)g->ntensors + 1, sizeof(bool));
	gr->has_output = ar_xcalloc((size_t)g->ntensors + 1, sizeof(bool));
	for (int t = 0; t < g->ntensors; t++)
		idx[t] = gr->of[t] = -1;
	for (int t = 0; t < g->ntensors; t++) {
		int64_t off, end;
		int r, k;
		if (!p->slots[t].planned || g->tensors[t].bytes <= 0)
			continue;
		r = ar_alias_root(p, t, &off);
		if (idx[r] < 0)
			idx[r] = gr->n++;
		k = gr->of[t] = idx[r];
		end = off + ar_plan_padded(p, g->tensors[t].bytes);
		if (end > gr->size[k])
			gr->size[k] = end;
		if (g->tensors[t].producer < 0)
			gr->has_input[k] = true;
		if (isout[t])
			gr->has_output[k] = true;
	}
	free(idx);
	free(isout);
}

void ar_groups_free(ArGroups *gr)
{
	free(gr->of);
	free(gr->size);
	free(gr->has_input);
	free(gr->has_output);
}
