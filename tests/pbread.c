/*
 * pbread.c — TensorProto files through the protobuf-c code that arenac's
 * loader also uses (onnx.pb-c.h), so the tests parse reference data with
 * the same decoder instead of a second, hand-written one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "pbread.h"

uint8_t *pb_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 &&
	    !fseek(f, 0, SEEK_SET)) {
		/* 64: more than any plan's alignment of its weights. */
		buf = aligned_alloc(64, ((size_t)n + 64) / 64 * 64);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

int pb_read_float(const char *path, PbTensor *t, char *err, size_t errlen)
{
	size_t len = 0;
	uint8_t *buf = pb_slurp(path, &len);
	Onnx__TensorProto *tp;
	int rc = -1;

	memset(t, 0, sizeof *t);
	if (!buf) {
		snprintf(err, errlen, "%s: cannot read", path);
		return -1;
	}
	tp = onnx__tensor_proto__unpack(NULL, len, buf);
	free(buf);
	if (!tp) {
		snprintf(err, errlen, "%s: not a TensorProto", path);
		return -1;
	}
	snprintf(t->name, sizeof t->name, "%s", tp->name ? tp->name : "");
	t->dtype = tp->data_type;
	t->rank = (int)tp->n_dims;
	t->numel = 1;
	if (tp->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
		snprintf(err, errlen, "%s: data type %d, not float32", path,
			 tp->data_type);
		goto out;
	}
	if (tp->n_dims > PB_MAX_RANK) {
		snprintf(err, errlen, "%s: rank %zu", path, tp->n_dims);
		goto out;
	}
	for (size_t i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0 || tp->dims[i] > ((int64_t)1 << 31)) {
			snprintf(err, errlen, "%s: bad dim %lld", path,
				 (long long)tp->dims[i]);
			goto out;
		}
		t->dims[i] = tp->dims[i];
		t->numel *= tp->dims[i];
		if (t->numel > ((int64_t)1 << 31)) {
			snprintf(err, errlen, "%s: too many values", path);
			goto out;
		}
	}
	t->data = malloc((size_t)t->numel * sizeof(float) + 1);
	if (!t->data) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	if (tp->has_raw_data && tp->raw_data.len == (size_t)t->numel * 4) {
		memcpy(t->data, tp->raw_data.data, tp->raw_data.len);
	} else if (!tp->has_raw_data && tp->n_float_data == (size_t)t->numel) {
		memcpy(t->data, tp->float_data, (size_t)t->numel * 4);
	} else {
		snprintf(err, errlen, "%s: value count does not match the dims",
			 path);
		goto out;
	}
	rc = 0;
out:
	if (rc)
		pb_free(t);
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return rc;
}

void pb_free(PbTensor *t)
{
	free(t->data);
	t->data = NULL;
}
