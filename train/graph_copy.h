/*
 * graph_copy.h — deep copies of an inferred graph's parts, values and
 * attributes included (graph_copy.c), for the graphs derived from a
 * model: a device's share (tensor parallelism), a pipeline stage.
 */
#ifndef ARENAC_GRAPH_COPY_H
#define ARENAC_GRAPH_COPY_H

#include "graph.h"

/* src's fields into dst, whose name stays; values copied, no producer,
 * no external location, no quantization links. */
void ar_copy_tensor(ArTensor *dst, const ArTensor *src);
/* A graph of src's tensors (the same ids, copied as above), src's inputs
 * and outputs, and no nodes. */
ArGraph *ar_copy_tensors(const ArGraph *src);
/*
 * Appends a copy of n (its attributes too) to dst, reading in[] and
 * writing out[] (dst's tensor ids, n's counts); the outputs get it as
 * their producer.  Returns its index, or -1 with AR_EXIT_MODEL in err for
 * a node that runs a subgraph.
 */
int ar_copy_node(ArGraph *dst, const ArNode *n, const int *in,
		 const int *out, ArError *err);
/* n's attributes (of another graph, or dst) copied onto c of dst, which
 * has none. */
void ar_copy_attrs(ArGraph *dst, ArNode *c, const ArNode *n);
/* Adds integer attributes to node n of g; returns its attribute count. */
int ar_add_int_attrs(ArGraph *g, ArNode *n, const char *const *names,
		     const int64_t *values, int count);
/* Appends Cast(x) to dt (fp32, fp16 or bf16) to g, its node named
 * who/<copy's name>; returns the copy's id ("x.fp32"), or -1 with err
 * set.  Autocast's casts (autocast.c) and the loss's upcast (loss.c). */
int ar_add_cast(ArGraph *g, int x, ArDType dt, const char *who,
		ArError *err);

#endif
