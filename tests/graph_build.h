/*
 * graph_build.h — terse hand-made graphs for the planner pass tests:
 * float tensors given by their dims, nodes given by tensor ids, and the
 * graph's inputs and outputs set in one call.
 */
#ifndef ARENAC_GRAPH_BUILD_H
#define ARENAC_GRAPH_BUILD_H

#include <string.h>

#include "graph.h"

/* A float tensor of the given dims (up to 4; trailing zeros are unused). */
static inline int gb_tensor(ArGraph *g, const char *name, ArTensorKind kind,
			    int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
	int t = ar_graph_add_tensor(g, name);
	ArTensor *x = &g->tensors[t];
	const int64_t d[] = {d0, d1, d2, d3};
	x->kind = kind;
	x->dtype = AR_DT_FLOAT;
	x->rank = 0;
	for (int i = 0; i < 4 && d[i] > 0; i++)
		x->dims[x->rank++] = d[i];
	ar_tensor_set_bytes(x, NULL);
	return t;
}

static inline int gb_node(ArGraph *g, const char *op, const int *in, int nin,
			  int out)
{
	int n = ar_graph_add_node(g, op, op, "");
	ar_node_set_io(&g->nodes[n], in, nin, &out, 1);
	g->nodes[n].opset = 13;
	g->tensors[out].producer = n;
	return n;
}

static inline void gb_int_attr(ArGraph *g, int node, const char *name,
			       int64_t v)
{
	ar_node_add_attr(g, &g->nodes[node], name, AR_ATTR_INT)->i = v;
}

static inline void gb_io(ArGraph *g, const int *in, int nin, const int *out,
			 int nout)
{
	g->inputs = ar_xmalloc((size_t)nin * sizeof(int) + 1);
	memcpy(g->inputs, in, (size_t)nin * sizeof(int));
	g->ninputs = nin;
	g->outputs = ar_xmalloc((size_t)nout * sizeof(int) + 1);
	memcpy(g->outputs, out, (size_t)nout * sizeof(int));
	g->noutputs = nout;
}

#endif
