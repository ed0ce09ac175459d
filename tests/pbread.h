/*
 * pbread.h — reads a serialized ONNX TensorProto (.pb), the format of the
 * ONNX test suite's input_K.pb / output_K.pb reference data.
 */
#ifndef ARENAC_PBREAD_H
#define ARENAC_PBREAD_H

#include <stddef.h>
#include <stdint.h>

#define PB_MAX_RANK 16

typedef struct PbTensor {
	char name[256];
	int dtype;                  /* ONNX TensorProto.DataType */
	int rank;
	int64_t dims[PB_MAX_RANK];
	int64_t numel;
	float *data;                /* float32 values, malloc'ed */
	void *raw;                  /* pb_read_raw: elements as stored in
				       memory, malloc'ed */
	size_t raw_bytes;
} PbTensor;

/*
 * Reads a float32 tensor from path; 0 on success, else -1 with a message
 * in err.  Raw and float_data encodings are both accepted; the value count
 * must match the dims.
 */
int pb_read_float(const char *path, PbTensor *t, char *err, size_t errlen);
/*
 * Reads a tensor of any fixed-size numeric type or bool into t->raw, laid
 * out as the type's elements in memory (little-endian, as raw_data is),
 * whichever field of the TensorProto holds them; also 0 or -1.
 */
int pb_read_raw(const char *path, PbTensor *t, char *err, size_t errlen);
void pb_free(PbTensor *t);
/* A whole file in 64-byte-aligned memory (free() it), or NULL. */
uint8_t *pb_slurp(const char *path, size_t *len);

#endif
