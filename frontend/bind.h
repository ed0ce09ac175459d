/*
 * bind.h — giving the graph inputs' declared dims their numbers (the
 * loader's part that reads the shape options; see ArLoadOptions in load.h
 * for the rules).  The loader hands over shapes as declared, free of
 * protobuf types, so the rules live apart from the parsing.
 */
#ifndef ARENAC_BIND_H
#define ARENAC_BIND_H

#include "load.h"

/* One declared dim: a number, a name (dim_param), or neither. */
typedef enum { AR_DIM_FIXED, AR_DIM_NAMED, AR_DIM_UNKNOWN } ArDimKind;

typedef struct ArDeclDim {
	ArDimKind kind;
	int64_t value;              /* FIXED: as declared, maybe negative */
	const char *name;           /* NAMED */
} ArDeclDim;

/* A top-level graph input's declared shape. */
typedef struct ArDeclShape {
	int tensor;                 /* its id in the graph */
	int rank;
	ArDeclDim dims[AR_MAX_RANK];
} ArDeclShape;

/* One name's number and where it came from (for messages). */
typedef struct ArNamedDim {
	const char *name;
	int64_t value;
	int source;                 /* index into --dim, else SRC_* in bind.c */
	int shape;                  /* --input-shape index for SRC_SHAPE */
} ArNamedDim;

typedef struct ArBinder {
	const ArLoadOptions *opt;
	const ArDiag *diag;
	ArNamedDim *names;          /* one per name, sorted by name */
	int nnames;
	bool *dim_used;             /* per --dim: the model has the name */
} ArBinder;

void ar_binder_init(ArBinder *b, const ArLoadOptions *opt, const ArDiag *d);
void ar_binder_free(ArBinder *b);

/*
 * Sets rank, dims and bytes of the graph inputs in[0..n) of g.  Fails
 * (exit 2 for the model, 1 for the options) naming every unbound dim at
 * once, or the two sources that disagree.
 */
int ar_bind_inputs(ArBinder *b, ArGraph *g, const ArDeclShape *in, int n,
		   ArError *err);

/*
 * Turns each --input-value's graph input of g into a constant holding the
 * value, once its shape is bound, and drops it from g->inputs.  Fails
 * (exit 1) for a name that is no graph input, a value count other than
 * the input's element count, or a number its type cannot hold.
 */
int ar_bind_values(const ArLoadOptions *opt, ArGraph *g, ArError *err);

/*
 * A dim declared elsewhere (outputs, value_info, subgraph inputs): its
 * number when fixed or bound, else -1.  Valid after ar_bind_inputs.
 */
int64_t ar_bind_declared(ArBinder *b, const ArDeclDim *d);

/* After the whole model: a --dim whose name no dim has is an error that
 * lists the names the graph inputs have. */
int ar_binder_check_used(const ArBinder *b, const ArGraph *g,
			 const ArDeclShape *in, int n, ArError *err);

#endif
