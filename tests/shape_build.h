/*
 * shape_build.h — graphs built in code for the shape inference tests
 * (test_shape.c, test_shape_quant.c): typed inputs and initializers,
 * nodes named by their tensors, attributes, and the checks run after
 * ar_infer.  Functions are static inline so that a test program using
 * some of them compiles warning-free.
 */
#ifndef ARENAC_SHAPE_BUILD_H
#define ARENAC_SHAPE_BUILD_H

#include "testutil.h"

#include "fixture_plan.h"
#include "graph.h"
#include "infer.h"

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define NDIMS(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

/* A tensor of kind k with a shape now; rank 0 passes dims NULL, which
 * memcpy may not take. */
static inline int sb_tensor(ArGraph *g, const char *name, ArTensorKind k,
			    ArDType dt, int rank, const int64_t *dims)
{
	static const int64_t none[1];
	fx_tensor(g, name, k, dt, rank, dims ? dims : none);
	assert_true(g->tensors[g->ntensors - 1].bytes >= 0);
	return g->ntensors - 1;
}

/* Graph inputs get a shape now; node outputs get theirs from ar_infer. */
static inline int input(ArGraph *g, const char *name, ArDType dt, int rank,
			const int64_t *dims)
{
	int id = sb_tensor(g, name, AR_TK_INPUT, dt, rank, dims);
	g->inputs = realloc(g->inputs, (size_t)(g->ninputs + 1) * sizeof(int));
	g->inputs[g->ninputs++] = id;
	return id;
}

/* An initializer of type dt holding bytes (t->bytes of them), or with
 * no values when bytes is NULL. */
static inline int weight(ArGraph *g, const char *name, ArDType dt, int rank,
			 const int64_t *dims, const void *bytes)
{
	int id = sb_tensor(g, name, AR_TK_WEIGHT, dt, rank, dims);
	ArTensor *t = &g->tensors[id];
	if (bytes) {
		t->data = ar_xmalloc((size_t)t->bytes);
		memcpy(t->data, bytes, (size_t)t->bytes);
	}
	return id;
}

/* A 1-D int64 initializer holding vals. */
static inline int ints(ArGraph *g, const char *name, int n,
		       const int64_t *vals)
{
	int64_t dim = n;
	return weight(g, name, AR_DT_INT64, 1, &dim, vals);
}

#define INPUT(g, name, ...) input(g, name, AR_DT_FLOAT, NDIMS(__VA_ARGS__), \
				  DIMS(__VA_ARGS__))
#define INTS(g, name, ...) ints(g, name, NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

/*
 * Adds a node of domain dom: ins and outs are comma-separated tensor
 * names; an empty name is an omitted optional input or output, other
 * outputs are new tensors.
 */
static inline int node_in(ArGraph *g, const char *dom, const char *op,
			  int64_t opset, const char *ins, const char *outs)
{
	int in[24], out[24], nin = 0, nout = 0, id;
	char buf[512], *p;

	id = ar_graph_add_node(g, op, op, dom);
	snprintf(buf, sizeof buf, "%s", ins);
	for (p = buf; *ins && p; nin++) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = 0;
		in[nin] = *p ? ar_graph_find(g, p) : -1;
		assert_true(!*p || in[nin] >= 0);
		p = comma ? comma + 1 : NULL;
	}
	snprintf(buf, sizeof buf, "%s", outs);
	for (p = buf; *outs && p; nout++) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = 0;
		out[nout] = *p ? ar_graph_add_tensor(g, p) : -1;
		if (*p)
			g->tensors[out[nout]].producer = id;
		p = comma ? comma + 1 : NULL;
	}
	ar_node_set_io(&g->nodes[id], in, nin, out, nout);
	g->nodes[id].opset = opset;
	return id;
}

static inline int node(ArGraph *g, const char *op, int64_t opset,
		       const char *ins, const char *outs)
{
	return node_in(g, "", op, opset, ins, outs);
}

static inline void attr_i(ArGraph *g, int nid, const char *name, int64_t v)
{
	fx_attr(g, &g->nodes[nid], name, AR_ATTR_INT)->i = v;
}

static inline void attr_s(ArGraph *g, int nid, const char *name,
			  const char *v)
{
	fx_attr(g, &g->nodes[nid], name, AR_ATTR_STRING)->s = ar_xstrdup(v);
}

static inline void attr_is(ArGraph *g, int nid, const char *name, int n,
			   const int64_t *v)
{
	fx_ints(g, &g->nodes[nid], name, n, v);
}

#define ATTR_INTS(g, nid, name, ...) attr_is(g, nid, name, \
	NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

static int nwarn;
static char lastwarn[512];

static inline void count_warn(void *ctx, const char *msg)
{
	(void)ctx;
	nwarn++;
	snprintf(lastwarn, sizeof lastwarn, "%s", msg);
}

/* --bound options for the next inference (NULL: none). */
static const ArBound *bounds;
static int nbounds;

static inline int infer(ArGraph *g, ArError *err)
{
	ArDiag d = {count_warn, NULL};
	memset(err, 0, sizeof *err);
	nwarn = 0;
	return ar_infer_bounded(g, &d, bounds, nbounds, err);
}

static inline void ok(ArGraph *g)
{
	ArError err;
	int rc = infer(g, &err);
	if (rc)
		print_error("ar_infer: %s\n", err.msg);
	assert_int_equal(rc, AR_OK);
}

/* Fails with AR_EXIT_MODEL and a message containing text. */
static inline void fails(ArGraph *g, const char *text)
{
	ArError err;
	assert_int_equal(infer(g, &err), AR_EXIT_MODEL);
	if (!strstr(err.msg, text))
		print_error("message '%s' lacks '%s'\n", err.msg, text);
	assert_non_null(strstr(err.msg, text));
}

static inline const ArTensor *T(ArGraph *g, const char *name)
{
	int id = ar_graph_find(g, name);
	assert_true(id >= 0);
	return &g->tensors[id];
}

static inline void shape_is(ArGraph *g, const char *name, int rank,
			    const int64_t *dims)
{
	const ArTensor *t = T(g, name);
	assert_int_equal(t->rank, rank);
	for (int i = 0; i < rank; i++)
		assert_int_equal(t->dims[i], dims[i]);
	assert_true(t->bytes >= 0);
}

#define SHAPE(g, name, ...) shape_is(g, name, NDIMS(__VA_ARGS__), \
				     DIMS(__VA_ARGS__))

#endif
