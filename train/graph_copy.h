/*
 * graph_copy.h — deep copies of an inferred graph's parts, values and
 * attributes included (graph_copy.c), for the graphs derived from a
 * model: a device's share (tensor parallelism), a pipeline stage.
 */
#ifndef ARENAC_GRAPH_COPY_H
#define ARENAC_GRAPH_COPY_H

#include "graph.h"
#include "splice.h"             /* ar_copy_tensor, ar_copy_node */

/* A graph of src's tensors (the same ids, copied as above), src's inputs
 * and outputs, and no nodes. */
ArGraph *ar_copy_tensors(const ArGraph *src);
/* Adds integer attributes to node n of g; returns its attribute count. */
int ar_add_int_attrs(ArGraph *g, ArNode *n, const char *const *names,
		     const int64_t *values, int count);
/* Appends Cast(x) to dt (fp32, fp16 or bf16) to g, its node named
 * who/<copy's name>; returns the copy's id ("x.fp32"), or -1 with err
 * set.  Autocast's casts (autocast.c) and the loss's upcast (loss.c). */
int ar_add_cast(ArGraph *g, int x, ArDType dt, const char *who,
		ArError *err);

#endif
