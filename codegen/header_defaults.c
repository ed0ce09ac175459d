/*
 * header_defaults.c — the graph the header writes its steps from: the
 * model's, each node's attributes followed by the ONNX defaults it leaves
 * out (ops/attr_defaults.c), so that a kernel library reads a Conv's
 * strides or a LeakyRelu's alpha from the attribute table whether or not
 * the exporter wrote them.
 *
 * A shallow copy: the nodes are copied with their own attribute arrays,
 * everything else (tensors, names, subgraphs) is the model's and is not
 * freed here.  The planner and the JSON report see the model as it is.
 */
#include <stdlib.h>
#include <string.h>

#include "header_parts.h"
#include "ops.h"

ArGraph *hdr_with_defaults(const ArGraph *g)
{
	ArGraph *dg = ar_xmalloc(sizeof *dg);

	*dg = *g;
	dg->nodes = ar_xcalloc((size_t)g->nnodes + 1, sizeof *dg->nodes);
	for (int i = 0; i < g->nnodes; i++) {
		const ArNode *n = &g->nodes[i];
		ArNode *m = &dg->nodes[i];
		ArAttr *d;
		int nd = ar_attr_defaults(g, n, &d);

		*m = *n;
		m->attrs = ar_xcalloc((size_t)(n->nattrs + nd) + 1,
				      sizeof *m->attrs);
		if (n->nattrs)
			memcpy(m->attrs, n->attrs,
			       (size_t)n->nattrs * sizeof *n->attrs);
		if (nd)
			memcpy(m->attrs + n->nattrs, d, (size_t)nd * sizeof *d);
		m->nattrs = n->nattrs + nd;
		/* The copies own the defaults' values now. */
		free(d);
	}
	return dg;
}

/* Frees what hdr_with_defaults allocated: node i's attributes past the
 * model's own. */
void hdr_free_defaults(ArGraph *dg, const ArGraph *g)
{
	for (int i = 0; i < dg->nnodes; i++) {
		ArNode *m = &dg->nodes[i];
		for (int a = g->nodes[i].nattrs; a < m->nattrs; a++) {
			free(m->attrs[a].s);
			free(m->attrs[a].ints);
		}
		free(m->attrs);
	}
	free(dg->nodes);
	free(dg);
}
