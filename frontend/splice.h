/*
 * splice.h — tensors and nodes copied or moved into a graph, and nodes
 * put in place of one (splice.c): what the rewrites that make a graph
 * from parts of another share (inlining an If, unrolling a Loop, a
 * device's share, a pipeline stage).
 */
#ifndef ARENAC_SPLICE_H
#define ARENAC_SPLICE_H

#include "graph.h"

/* src's fields into dst, whose name stays; values copied, no producer,
 * no external location, no quantization links. */
void ar_copy_tensor(ArTensor *dst, const ArTensor *src);
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
/* Moves tensor t of another graph into g under its name (values,
 * declared shape and external location taken over, t left without
 * them); a graph input or output becomes an activation.  Returns its
 * id in g. */
int ar_move_tensor(ArGraph *g, ArTensor *t);
/* The nodes from `first` on (appended last) take node i's place, in
 * their order; node i is dropped, tensor ids stay. */
void ar_graph_splice(ArGraph *g, int i, int first);

#endif
