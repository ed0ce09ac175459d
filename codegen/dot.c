/*
 * dot.c — the dataflow graph as a Graphviz picture.
 *
 * Ops are rounded boxes numbered by step; tensors are smaller boxes
 * between them, labelled with shape, size and their [offset, end) in the
 * arena and filled with their arena region's colour, so the picture reads
 * against the timeline.  The peak step and the tensors live there get a
 * red border.  Weights and constants sit outside the arena and would
 * double the picture, so they appear only with --dot-weights.
 */
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "gvutil.h"
#include "sanitize.h"

/* Names longer than this are cut: a 200-op picture must stay readable. */
#define NAME_MAX_CHARS 28

static int shown(const ArGraph *g, const ArPlan *p, const ArEmitInfo *info,
		 int t)
{
	const ArTensor *x = &g->tensors[t];
	if (x->kind == AR_TK_WEIGHT || x->kind == AR_TK_CONSTANT)
		return info->dot_weights;
	return p->slots[t].planned;
}

static void tensor_node(Agraph_t *gv, const ArGraph *g, const ArPlan *p,
			int t, Agnode_t **nodes)
{
	const ArTensor *x = &g->tensors[t];
	const ArSlot *s = &p->slots[t];
	char id[32], shape[256], size[32], where[160];
	char *name = ar_dot_label(x->name, NAME_MAX_CHARS);
	Agnode_t *n;

	snprintf(id, sizeof id, "t%d", t);
	n = nodes[t] = agnode(gv, id, 1);
	ar_gv_shape(shape, sizeof shape, x);
	ar_gv_bytes(size, sizeof size, x->bytes > 0 ? x->bytes : 0);
	if (!s->planned) {
		snprintf(where, sizeof where, "%s, not in the arena",
			 ar_kind_name(x->kind));
		ar_gv_set(n, "style", "dashed");
	} else {
		int64_t end = s->offset + (x->bytes > 0 ? x->bytes : 0);
		char *region = ar_dot_label(p->nregions > 0 ?
					    p->regions[s->region].name : "", 12);
		int k = snprintf(where, sizeof where, "%s%s[%lld, %lld)",
				 region, *region ? " " : "",
				 (long long)s->offset, (long long)end);
		char *other = NULL;
		if (s->alias_of >= 0 || s->inplace_of >= 0)
			other = ar_dot_label(g->tensors[s->alias_of >= 0 ?
				s->alias_of : s->inplace_of].name, 16);
		if (s->alias_of >= 0)
			snprintf(where + k, sizeof where - k, " within %s",
				 other);
		else if (s->inplace_of >= 0)
			snprintf(where + k, sizeof where - k, " over %s", other);
		free(other), free(region);
		ar_gv_set(n, "style", "filled");
		ar_gv_set(n, "fillcolor", "%s", ar_gv_kind_fill(ar_gv_kind(g,
			  ar_gv_training(g, p), t)));
		if (p->peak_step >= s->first && p->peak_step <= s->last) {
			ar_gv_set(n, "color", "red");
			ar_gv_set(n, "penwidth", "2");
		}
	}
	ar_gv_set(n, "shape", x->kind == AR_TK_INPUT ? "invhouse" :
		  x->kind == AR_TK_OUTPUT ? "house" : "box");
	ar_gv_set(n, "label", "%s\\n%s %s\\n%s", name, shape, size, where);
	ar_gv_set(n, "class", "tensor");
	free(name);
}

static void op_node(Agraph_t *gv, const ArGraph *g, const ArPlan *p, int s,
		    Agnode_t *n)
{
	const ArNode *x = &g->nodes[p->steps[s]];
	char *op = ar_dot_label(x->op, NAME_MAX_CHARS);
	char *name = ar_dot_label(x->name, NAME_MAX_CHARS);

	ar_gv_set(n, "shape", "box");
	ar_gv_set(n, "class", "op");
	if (s == p->peak_step) {
		char lb[32];
		ar_gv_bytes(lb, sizeof lb, p->lower_bound);
		ar_gv_set(n, "style", "rounded,filled,bold");
		ar_gv_set(n, "fillcolor", "#ffd6d6");
		ar_gv_set(n, "color", "red");
		ar_gv_set(n, "penwidth", "3");
		ar_gv_set(n, "label", "%d: %s\\n%s\\nPEAK: %s live", s, op, name,
			  lb);
	} else {
		ar_gv_set(n, "style", "rounded,filled");
		ar_gv_set(n, "fillcolor", "#eeeeee");
		ar_gv_set(n, "label", "%d: %s\\n%s", s, op, name);
	}
	free(op), free(name);
}

static Agraph_t *build(const ArGraph *g, const ArPlan *p,
		       const ArEmitInfo *info)
{
	Agraph_t *gv = agopen("dataflow", Agdirected, NULL);
	Agnode_t **tn = ar_xcalloc((size_t)g->ntensors + 1, sizeof *tn);
	char *title = ar_dot_label(info->model_path ? info->model_path :
				   g->name, 0);
	char arena[32], lb[32];

	ar_gv_bytes(arena, sizeof arena, p->arena_bytes);
	ar_gv_bytes(lb, sizeof lb, p->lower_bound);
	ar_gv_set(gv, "label", "%s: arena %s (%lld B), lower bound %s, peak "
		  "at step %d", title, arena, (long long)p->arena_bytes, lb,
		  p->peak_step);
	ar_gv_set(gv, "labelloc", "t");
	ar_gv_set(gv, "fontname", "Helvetica");
	ar_gv_set(gv, "nodesep", "0.2");
	ar_gv_set(gv, "ranksep", "0.25");
	agattr(gv, AGNODE, "fontname", "Helvetica");
	agattr(gv, AGNODE, "fontsize", "10");
	agattr(gv, AGNODE, "margin", "0.06,0.03");
	agattr(gv, AGNODE, "height", "0.3");
	agattr(gv, AGEDGE, "arrowsize", "0.6");
	free(title);

	for (int t = 0; t < g->ntensors; t++)
		if (shown(g, p, info, t))
			tensor_node(gv, g, p, t, tn);
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *x = &g->nodes[p->steps[s]];
		char id[32];
		Agnode_t *n;

		snprintf(id, sizeof id, "s%d", s);
		n = agnode(gv, id, 1);
		op_node(gv, g, p, s, n);
		for (int j = 0; j < x->ninputs; j++)
			if (x->inputs[j] >= 0 && tn[x->inputs[j]])
				agedge(gv, tn[x->inputs[j]], n, NULL, 1);
		for (int j = 0; j < x->noutputs; j++)
			if (x->outputs[j] >= 0 && tn[x->outputs[j]])
				agedge(gv, n, tn[x->outputs[j]], NULL, 1);
	}
	free(tn);
	return gv;
}

int ar_write_dot(const char *path, const ArGraph *g, const ArPlan *p,
		 const ArEmitInfo *info, ArOutFile *out, ArError *err)
{
	Agraph_t *gv = build(g, p, info);
	int rc = ar_gv_write(gv, path, "dot", out, err);
	agclose(gv);
	return rc;
}
