/*
 * bind_values.c — --input-value: a graph input fixed to one value.
 *
 * Models written for several configurations branch on an input: Silero
 * VAD v5 runs Equal(sr, 16000) -> If, and its 8 kHz branch cannot even
 * take a 512-sample window (its LSTM cell would get a rank-4 input).  A
 * device runs one configuration, so the user says which: the input becomes
 * a constant holding the value (kind CONSTANT, no producer, as a folded
 * tensor), inference folds the condition, and only the branch taken is
 * inferred and planned.  The input leaves the graph's inputs, so the
 * header no longer asks the caller for it.
 *
 * The text is read in the input's own type, so "16000" binds an int64
 * scalar and "0.5,1" a float pair; a number the type cannot hold exactly
 * is an error rather than a silently different constant.
 */
#include "bind.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Integer types: their range; floats and bool are handled apart. */
static bool int_range(ArDType dt, long long *lo, unsigned long long *hi)
{
	switch (dt) {
	case AR_DT_INT8:   *lo = INT8_MIN, *hi = INT8_MAX; return true;
	case AR_DT_UINT8:  *lo = 0, *hi = UINT8_MAX; return true;
	case AR_DT_INT16:  *lo = INT16_MIN, *hi = INT16_MAX; return true;
	case AR_DT_UINT16: *lo = 0, *hi = UINT16_MAX; return true;
	case AR_DT_INT32:  *lo = INT32_MIN, *hi = INT32_MAX; return true;
	case AR_DT_UINT32: *lo = 0, *hi = UINT32_MAX; return true;
	case AR_DT_INT64:  *lo = INT64_MIN, *hi = INT64_MAX; return true;
	case AR_DT_UINT64: *lo = 0, *hi = UINT64_MAX; return true;
	default: return false;
	}
}

/* Stores element k of text's value into data; false if it does not fit. */
static bool put_number(ArDType dt, void *data, int64_t k, const char *s, char **end)
{
	long long lo;
	unsigned long long hi;

	errno = 0;
	if (int_range(dt, &lo, &hi)) {
		long long v = 0;
		unsigned long long u = 0;
		if (lo < 0)
			v = strtoll(s, end, 10);
		else if (*s != '-')
			u = strtoull(s, end, 10);
		else
			return false;
		if (errno || *end == s || (lo < 0 ? v < lo || (v > 0 &&
		    (unsigned long long)v > hi) : u > hi))
			return false;
		switch (dt) {
		case AR_DT_INT8:   ((int8_t *)data)[k] = (int8_t)v; break;
		case AR_DT_UINT8:  ((uint8_t *)data)[k] = (uint8_t)u; break;
		case AR_DT_INT16:  ((int16_t *)data)[k] = (int16_t)v; break;
		case AR_DT_UINT16: ((uint16_t *)data)[k] = (uint16_t)u; break;
		case AR_DT_INT32:  ((int32_t *)data)[k] = (int32_t)v; break;
		case AR_DT_UINT32: ((uint32_t *)data)[k] = (uint32_t)u; break;
		case AR_DT_INT64:  ((int64_t *)data)[k] = v; break;
		default:           ((uint64_t *)data)[k] = u; break;
		}
		return true;
	}
	if (dt == AR_DT_BOOL) {
		static const char *const words[] = {"false", "true", "0", "1"};
		for (int w = 0; w < 4; w++) {
			size_t len = strlen(words[w]);
			if (!strncmp(s, words[w], len) &&
			    (s[len] == 0 || s[len] == ',')) {
				((uint8_t *)data)[k] = (uint8_t)(w & 1);
				*end = (char *)s + len;
				return true;
			}
		}
		return false;
	}
	if (dt == AR_DT_FLOAT || dt == AR_DT_DOUBLE) {
		double d = strtod(s, end);
		if (*end == s || !isfinite(d) ||
		    (dt == AR_DT_FLOAT && fabs(d) > 3.4028234663852886e38))
			return false;
		if (dt == AR_DT_FLOAT)
			((float *)data)[k] = (float)d;
		else
			((double *)data)[k] = d;
		return true;
	}
	return false;
}

/* The types put() writes. */
static bool writable(ArDType dt)
{
	long long lo;
	unsigned long long hi;
	return int_range(dt, &lo, &hi) || dt == AR_DT_BOOL ||
	       dt == AR_DT_FLOAT || dt == AR_DT_DOUBLE;
}

/* put_number, the number being all of one ','-separated item. */
static bool put(ArDType dt, void *data, int64_t k, const char *s, char **end)
{
	return put_number(dt, data, k, s, end) && (**end == 0 || **end == ',');
}

static int bind_one(const ArInputValue *v, ArGraph *g, int slot,
		    ArError *err)
{
	ArTensor *t = &g->tensors[g->inputs[slot]];
	int64_t n = ar_numel(t), k = 0;
	const char *s = v->text;
	void *data;

	if (!writable(t->dtype))
		return ar_fail(err, AR_EXIT_USAGE, "--input-value %s=%s: input "
			       "'%s' is %s, which --input-value cannot write "
			       "(integers, bool, float and double)", v->name,
			       v->text, v->name, ar_dtype_name(t->dtype));
	if (n < 1 || n > 4096)
		return ar_fail(err, AR_EXIT_USAGE, "--input-value %s=%s: input "
			       "'%s' has %lld elements; --input-value gives "
			       "1 to 4096", v->name, v->text, v->name,
			       (long long)n);
	data = ar_xcalloc((size_t)t->bytes + 1, 1);
	for (;;) {
		char *end = NULL;
		if (k == n || !put(t->dtype, data, k, s, &end)) {
			free(data);
			return ar_fail(err, AR_EXIT_USAGE, "--input-value %s=%s: "
				       "input '%s' is %s with %lld element%s; "
				       "%s", v->name, v->text, v->name,
				       ar_dtype_name(t->dtype), (long long)n,
				       n == 1 ? "" : "s", k == n ?
				       "more values than that" :
				       "a value does not fit that type");
		}
		k++;
		if (!*end)
			break;
		s = end + 1;
	}
	if (k != n) {
		free(data);
		return ar_fail(err, AR_EXIT_USAGE, "--input-value %s=%s: input "
			       "'%s' has %lld elements, the option gives %lld",
			       v->name, v->text, v->name, (long long)n,
			       (long long)k);
	}
	free(t->data);
	t->data = data;
	t->kind = AR_TK_CONSTANT;
	t->producer = -1;
	return AR_OK;
}

int ar_bind_values(const ArLoadOptions *opt, ArGraph *g, ArError *err)
{
	for (int i = 0; i < opt->nvalues; i++) {
		const ArInputValue *v = &opt->values[i];
		int slot = -1, rc;

		for (int j = 0; j < i; j++)
			if (!strcmp(opt->values[j].name, v->name))
				return ar_fail(err, AR_EXIT_USAGE, "--input-value "
					       "%s: input '%s' is given a value "
					       "twice", v->name, v->name);
		for (int j = 0; j < g->ninputs && slot < 0; j++)
			if (!strcmp(g->tensors[g->inputs[j]].name, v->name))
				slot = j;
		if (slot < 0)
			return ar_fail(err, AR_EXIT_USAGE, "--input-value %s=%s: "
				       "the model has no graph input '%s'",
				       v->name, v->text, v->name);
		if ((rc = bind_one(v, g, slot, err)))
			return rc;
		memmove(g->inputs + slot, g->inputs + slot + 1,
			(size_t)(g->ninputs - slot - 1) * sizeof *g->inputs);
		g->ninputs--;
	}
	return AR_OK;
}
