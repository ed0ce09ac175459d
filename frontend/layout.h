/*
 * layout.h — --layout nhwc: the graph's 4-D activations made
 * channels-last (layout.c).
 */
#ifndef ARENAC_LAYOUT_H
#define ARENAC_LAYOUT_H

#include "graph.h"

/*
 * Rewrites an inferred inference graph so that its 4-D activations are
 * [N, H, W, C]: layout-sensitive ops become their channels-last variants
 * (AR_NHWC_DOMAIN), layout-free ones follow their operands, and a
 * Transpose (a Reshape, a view, where it moves only unit axes) stands
 * wherever an op reads the model's own layout: graph inputs and outputs
 * keep it.  Infers the rewritten graph again; sets g->nhwc.  Returns the
 * nodes rewritten via *rewritten (0: the graph has no 4-D activation a
 * variant reads, and is left as it was).
 */
int ar_layout_nhwc(ArGraph *g, const ArDiag *diag, int *rewritten,
		   ArError *err);

#endif
