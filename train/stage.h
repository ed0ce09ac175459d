/*
 * stage.h — one pipeline stage of a forward graph as a graph of its own
 * (stage.c).
 */
#ifndef ARENAC_STAGE_H
#define ARENAC_STAGE_H

#include "layers.h"
#include "ops.h"

typedef struct ArStageGraph {
	ArGraph *g;
	/* Per node of g: the node of the model's graph it copies, -1 for
	 * the PipelineSend. */
	int *src;
	/* The activation received (a graph input of g) and the one sent
	 * on, as tensors of g; -1 for the first stage and the last. */
	int recv, send;
	int64_t recv_bytes, send_bytes;
} ArStageGraph;

/*
 * Stage [a, b) of fwd's layers l (0 <= a < b <= l->n).  AR_EXIT_MODEL for
 * a step that runs a subgraph.
 */
int ar_stage_graph(const ArGraph *fwd, const ArLayers *l, int a, int b,
		   ArStageGraph *out, ArError *err);
void ar_stage_graph_free(ArStageGraph *s);

#endif
