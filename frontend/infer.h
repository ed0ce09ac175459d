/*
 * infer.h — constant folding and shape inference over the IR.
 */
#ifndef ARENAC_INFER_H
#define ARENAC_INFER_H

#include "graph.h"

/*
 * Walks the nodes in order, folding nodes whose inputs are all compile-time
 * constants (their outputs become AR_TK_CONSTANT) and giving every output a
 * dtype, shape and byte size.  Declared shapes (value_info, outputs) that
 * disagree with the inferred ones produce a warning.  Fails with
 * AR_EXIT_MODEL naming the node, its op and the input that is unknown.
 */
int ar_infer(ArGraph *g, const ArDiag *diag, ArError *err);

/*
 * After inference: each If of the top graph whose condition is constant
 * replaced by the nodes of the branch it takes (inline_if.c), in turn for
 * the Ifs that brings up.  Returns how many were.
 */
int ar_inline_constant_ifs(ArGraph *g);

/*
 * The value of constant tensor t of an inferred graph, computed into its
 * data whatever its size (for the weights writer, --weights), with the
 * constants it is computed from.  *made (the caller frees it, and the
 * values of the tensors it lists once done with them) lists the tensors
 * given a value.  False when t's value cannot be computed.
 */
bool ar_const_value(ArGraph *g, int t, int **made, int *nmade);

/*
 * --bound NAME=N or NAME=D0xD1x...: what the user knows of a tensor whose
 * size depends on values known only at run time.  With rank 0, max is the
 * largest extent of each of its data-dependent axes; otherwise dims is its
 * largest shape, axis by axis (static axes must match).
 */
typedef struct ArBound {
	const char *name;
	int64_t max;
	int rank;
	int64_t dims[AR_MAX_RANK];
} ArBound;

/*
 * ar_infer with user bounds: a bound tightens the one arenac computes for a
 * data-dependent axis, or supplies one where none is computable (without,
 * that is an error naming the tensor, the op and --bound).  A bound naming
 * no tensor fails with AR_EXIT_USAGE; one naming a tensor of static shape
 * is ignored with a warning.
 */
int ar_infer_bounded(ArGraph *g, const ArDiag *diag, const ArBound *bounds,
		     int nbounds, ArError *err);

#endif
