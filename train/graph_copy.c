/*
 * graph_copy.c — a deep copy of an inferred graph's tensors, for
 * the graphs derived from a model: one device's share under tensor
 * parallelism (tp_build.c), one pipeline stage (stage.c).
 *
 * Unlike ar_train_copy (train.c), values and attributes travel (nodes
 * through ar_copy_node, frontend/splice.c): shape functions run again on
 * the copy (they read attributes and constant shape inputs) and the
 * training stage reads both (Dropout's attributes, the scalars of a GELU
 * chain).  Where a weight's bytes are is not copied: no derived graph
 * reads weight bytes.  Subgraphs are not copied (AR_EXIT_MODEL):
 * multi-device plans are for graphs without control flow.  And the one
 * Cast node the rewrites add (autocast.c's casts, loss.c's upcast of the
 * logits).
 */
#include "graph_copy.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strpool.h"

ArGraph *ar_copy_tensors(const ArGraph *src)
{
	ArGraph *g = ar_graph_new(src->name);
	g->opset = src->opset;
	g->ir_version = src->ir_version;
	ar_graph_copy_meta(g, src);
	for (int t = 0; t < src->ntensors; t++) {
		int id = ar_graph_add_tensor(g, src->tensors[t].name);
		ar_copy_tensor(&g->tensors[id], &src->tensors[t]);
	}
	ar_graph_copy_io(g, src);
	return g;
}

int ar_add_int_attrs(ArGraph *g, ArNode *n, const char *const *names,
		     const int64_t *values, int count)
{
	n->attrs = ar_xrealloc(n->attrs, ((size_t)n->nattrs + (size_t)count) *
			       sizeof *n->attrs);
	for (int k = 0; k < count; k++) {
		ArAttr *a = &n->attrs[n->nattrs++];
		memset(a, 0, sizeof *a);
		a->name = ar_strpool_intern(&g->strs, names[k]);
		a->type = AR_ATTR_INT;
		a->i = values[k];
	}
	return n->nattrs;
}

/* A fresh tensor name: base.suffix, numbered if taken. */
static int new_tensor(ArGraph *g, const char *base, const char *suffix)
{
	char name[512];
	snprintf(name, sizeof name, "%s.%s", base, suffix);
	for (int k = 1; ar_graph_find(g, name) >= 0; k++)
		snprintf(name, sizeof name, "%s.%s.%d", base, suffix, k);
	return ar_graph_add_tensor(g, name);
}

int ar_add_cast(ArGraph *g, int x, ArDType dt, const char *who,
		ArError *err)
{
	static const char *const to[] = {"to"};
	const char *sfx = dt == AR_DT_FLOAT ? "fp32" :
			  dt == AR_DT_FLOAT16 ? "fp16" : "bf16";
	int y = new_tensor(g, g->tensors[x].name, sfx), node;
	int64_t v = dt;
	ArTensor *c = &g->tensors[y];
	char name[512];

	assert(dt == AR_DT_FLOAT || dt == AR_DT_FLOAT16 ||
	       dt == AR_DT_BFLOAT16);
	c->dtype = dt;
	c->rank = g->tensors[x].rank;
	memcpy(c->dims, g->tensors[x].dims, sizeof c->dims);
	c->kind = AR_TK_ACTIVATION;
	if (ar_tensor_set_bytes(c, err))
		return -1;
	snprintf(name, sizeof name, "%s/%s", who, c->name);
	node = ar_graph_add_node(g, name, "Cast", "");
	ar_node_set_io(&g->nodes[node], &x, 1, &y, 1);
	g->nodes[node].opset = 13;      /* Cast to bfloat16: opset 13 */
	ar_add_int_attrs(g, &g->nodes[node], to, &v, 1);
	c->producer = node;
	return y;
}
