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

/* The TensorProto in path with its name, type and dims in t; NULL after
 * a message in err. */
static Onnx__TensorProto *load(const char *path, PbTensor *t, char *err,
			       size_t errlen)
{
	size_t len = 0;
	uint8_t *buf = pb_slurp(path, &len);
	Onnx__TensorProto *tp;

	memset(t, 0, sizeof *t);
	if (!buf) {
		snprintf(err, errlen, "%s: cannot read", path);
		return NULL;
	}
	tp = onnx__tensor_proto__unpack(NULL, len, buf);
	free(buf);
	if (!tp) {
		snprintf(err, errlen, "%s: not a TensorProto", path);
		return NULL;
	}
	snprintf(t->name, sizeof t->name, "%s", tp->name ? tp->name : "");
	t->dtype = tp->data_type;
	t->rank = (int)tp->n_dims;
	t->numel = 1;
	if (tp->n_dims > PB_MAX_RANK) {
		snprintf(err, errlen, "%s: rank %zu", path, tp->n_dims);
		goto bad;
	}
	for (size_t i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0 || tp->dims[i] > ((int64_t)1 << 31)) {
			snprintf(err, errlen, "%s: bad dim %lld", path,
				 (long long)tp->dims[i]);
			goto bad;
		}
		t->dims[i] = tp->dims[i];
		t->numel *= tp->dims[i];
		if (t->numel > ((int64_t)1 << 31)) {
			snprintf(err, errlen, "%s: too many values", path);
			goto bad;
		}
	}
	return tp;
bad:
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return NULL;
}

int pb_read_float(const char *path, PbTensor *t, char *err, size_t errlen)
{
	Onnx__TensorProto *tp = load(path, t, err, errlen);
	int rc = -1;

	if (!tp)
		return -1;
	if (tp->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
		snprintf(err, errlen, "%s: data type %d, not float32", path,
			 tp->data_type);
		goto out;
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

/* Element size of a fixed-size ONNX type, else 0. */
static size_t elem_size(int dt)
{
	switch (dt) {
	case 2: case 3: case 9: return 1;             /* uint8 int8 bool */
	case 4: case 5: case 10: case 16: return 2;   /* (u)int16 half bf16 */
	case 1: case 6: case 12: return 4;            /* float (u)int32 */
	case 7: case 11: case 13: return 8;           /* int64 double uint64 */
	default: return 0;
	}
}

int pb_read_raw(const char *path, PbTensor *t, char *err, size_t errlen)
{
	Onnx__TensorProto *tp = load(path, t, err, errlen);
	size_t es, n;
	uint8_t *p;

	if (!tp)
		return -1;
	es = elem_size(tp->data_type);
	n = (size_t)t->numel;
	p = t->raw = malloc(n * es + 8);
	t->raw_bytes = n * es;
	if (!es || !p) {
		snprintf(err, errlen, "%s: data type %d has no fixed size",
			 path, tp->data_type);
		goto bad;
	}
	if (tp->has_raw_data) {
		if (tp->raw_data.len != n * es)
			goto count;
		memcpy(p, tp->raw_data.data, n * es);
	} else if (tp->n_float_data == n && es == 4) {
		memcpy(p, tp->float_data, n * es);
	} else if (tp->n_double_data == n && es == 8) {
		memcpy(p, tp->double_data, n * es);
	} else if (tp->n_int64_data == n && es == 8) {
		memcpy(p, tp->int64_data, n * es);
	} else if (tp->n_uint64_data == n) {
		/* uint32 and uint64 */
		for (size_t i = 0; i < n; i++)
			memcpy(p + i * es, &tp->uint64_data[i], es);
	} else if (tp->n_int32_data == n) {
		/* the low bytes of each int32 (little-endian hosts) */
		for (size_t i = 0; i < n; i++)
			memcpy(p + i * es, &tp->int32_data[i], es);
	} else {
		goto count;
	}
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return 0;
count:
	snprintf(err, errlen, "%s: value count does not match the dims", path);
bad:
	pb_free(t);
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return -1;
}

void pb_free(PbTensor *t)
{
	free(t->data);
	free(t->raw);
	t->data = NULL;
	t->raw = NULL;
}
