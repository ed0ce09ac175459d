/*
 * layers.h — the layers of a forward graph (layers.c): the repeated blocks
 * of a transformer (or of any stack) and the tensors between them.
 *
 * Checkpointing by layer (--checkpoint layer), pipeline stages and
 * sequence parallelism all cut a model where one activation alone carries
 * everything the rest of the forward pass needs: a cut point.  A layer is
 * the span of steps from one layer boundary to the next.
 */
#ifndef ARENAC_LAYERS_H
#define ARENAC_LAYERS_H

#include "graph.h"

/*
 * n layers over nodes of a graph in topological order: layer k reads
 * bound[k] and computes bound[k + 1], with the step nodes in
 * (start[k], start[k + 1]] (start[k]: bound[k]'s producer, -1 for a graph
 * input).  Nodes up to start[0] are the prefix (embeddings), nodes after
 * start[n] the tail (final norm, head, loss).  repeated: found as repeated
 * blocks (else given by an expression).
 */
typedef struct ArLayers {
	int n;
	int *bound;             /* n + 1 tensors */
	int *start;             /* n + 1 node indices */
	bool repeated;
} ArLayers;

/*
 * The layers of nodes [0, nfwd) of g.  With regex (a POSIX extended
 * expression on tensor names) the activations it matches, graph inputs
 * first and then in the order they are computed, are the bounds: each
 * layer's input and the last layer's output.  Without, the cut points
 * (activations that alone are open right after their producer; graph
 * inputs and constants, available throughout, do not count) split the
 * steps into segments, and the
 * longest run of a repeating sequence of segments (the same ops on the
 * same shapes, wired alike) gives the layers: one period of the run each.
 * AR_EXIT_MODEL when fewer than one layer is found (naming the option),
 * AR_EXIT_USAGE for an expression that does not compile.
 */
int ar_layers_find(const ArGraph *g, int nfwd, const char *regex,
		   ArLayers *out, ArError *err);
void ar_layers_free(ArLayers *l);

/* The layer node i belongs to, or -1 for the prefix and the tail. */
int ar_layer_of(const ArLayers *l, int node);

/*
 * The cut points of nodes [0, nfwd) of g in production order, into cut
 * (room for g->ntensors); returns how many.
 */
int ar_cut_points(const ArGraph *g, int nfwd, int *cut);

#endif
