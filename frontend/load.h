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

typedef struct ArLoadOptions {
	const ArDimBinding *dims;   /* --dim NAME=VALUE */
	int ndims;
	int64_t dim_default;        /* --dim-default, -1 if not given */
	int64_t batch;              /* --batch: axis 0 of every input, -1 if not given */
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

/* Reads a file; on failure *out is NULL and err says what and where. */
int ar_load_onnx(const char *path, const ArLoadOptions *opt, ArGraph **out,
		 ArError *err);
/* The same from memory (the fuzzer's entry point). */
int ar_load_onnx_buffer(const uint8_t *buf, size_t len,
			const ArLoadOptions *opt, ArGraph **out, ArError *err);

#endif
