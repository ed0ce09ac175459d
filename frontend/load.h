/*
 * load.h — reading an ONNX file into the IR.
 */
#ifndef ARENAC_LOAD_H
#define ARENAC_LOAD_H

#include "graph.h"

typedef struct ArDimBinding {
	const char *name;
	int64_t value;
} ArDimBinding;

/* --input-shape NAME=DIMS: a graph input's whole shape. */
typedef struct ArInputShape {
	const char *name;
	int rank;
	int64_t dims[AR_MAX_RANK];
} ArInputShape;

/*
 * --input-value NAME=V[,V...]: a graph input that has this value at every
 * run (a sample rate, a flag).  It stops being an input and becomes a
 * constant of the model, so the shapes and the If branches that depend
 * on it fold at compile time; text is parsed in the input's own type
 * (bind_values.c).
 */
typedef struct ArInputValue {
	const char *name;
	const char *text;
} ArInputValue;

/*
 * How graph input dims get numbers (bind.c): an --input-shape gives an
 * input's whole shape; a symbolic dim takes its --dim, else the value an
 * --input-shape or --batch gave the same name elsewhere, else
 * --dim-default; --batch sets axis 0 where it is symbolic or 1 (a fixed
 * axis 0 of another size is left, with a warning).  Sources that disagree
 * are an error naming both; so is a --dim or --input-shape the model has
 * no use for.  Every dim left unbound is named in one error.
 */
typedef struct ArLoadOptions {
	const ArDimBinding *dims;   /* --dim NAME=VALUE */
	int ndims;
	const ArInputShape *shapes; /* --input-shape NAME=DIMS */
	int nshapes;
	const ArInputValue *values; /* --input-value NAME=V[,V...] */
	int nvalues;
	int64_t dim_default;        /* --dim-default, -1 if not given */
	int64_t batch;              /* --batch, -1 if not given */
	/* --max-seq: the sequence axis of every attention op's KV-cache
	 * input (ops.h ArKvCache), 0 if not given */
	int64_t max_seq;
	int64_t max_model_bytes;    /* 0: the built-in default */
	int max_nodes;              /* 0: the built-in default (also tensors x4) */
	int max_depth;              /* subgraph nesting, 0: the built-in default */
	ArDiag diag;
} ArLoadOptions;

#define AR_DEFAULT_MAX_MODEL_BYTES ((int64_t)2 << 30)
#define AR_DEFAULT_MAX_NODES 1000000
#define AR_DEFAULT_MAX_DEPTH 16

/*
 * Parses DIMS of --input-shape: "1x3x224x224", or "scalar" for rank 0;
 * every dim a positive number.  False when it is not such a shape.
 */
bool ar_parse_dims(const char *s, int *rank, int64_t dims[AR_MAX_RANK]);

/* Reads a file; on failure *out is NULL and err says what and where. */
int ar_load_onnx(const char *path, const ArLoadOptions *opt, ArGraph **out,
		 ArError *err);
/* The same from memory (the fuzzer's entry point). */
int ar_load_onnx_buffer(const uint8_t *buf, size_t len,
			const ArLoadOptions *opt, ArGraph **out, ArError *err);

#endif
