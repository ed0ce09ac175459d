/*
 * weights.c — the weights blob: every weight and constant the steps read,
 * in one aligned buffer, as raw bytes (.bin) or a C array (.c).
 *
 * The header and the blob must agree on where each tensor is, so both get
 * the layout from ar_weights_layout.  Values are streamed, never gathered:
 * a folded constant the frontend left without data (a ConstantOfShape fill
 * above the folder's size limit, possibly behind a Reshape) is written
 * straight from its fill value, so a 500 MB VGG blob needs no 500 MB of
 * memory.  External-data initializers are read here and nowhere else,
 * from beside the model, after checking their location and bounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "emit.h"
#include "infer.h"
#include "ops.h"
#include "onnx.pb-c.h"
#include "sanitize.h"

/* The blob holds the weights and constants some step reads, one per
 * storage (ar_weights_read); a tensor aliasing one (a training step's
 * W.next, W rewritten in place) has its offset. */
int64_t ar_weights_layout(const ArGraph *g, const ArPlan *p, int64_t *offsets)
{
	bool *in = ar_xcalloc((size_t)g->ntensors + 1, sizeof *in);
	int64_t at = 0;

	ar_weights_read(g, p, in);
	for (int i = 0; i < g->ntensors; i++) {
		if (offsets)
			offsets[i] = in[i] ? at : -1;
		if (in[i])
			at += ar_plan_padded(p, g->tensors[i].bytes);
	}
	for (int i = 0; offsets && i < g->ntensors; i++) {
		int r = i;
		for (int hops = 0; !in[r] && p->slots[r].alias_of >= 0 &&
		     !p->slots[r].planned && hops <= g->ntensors; hops++)
			r = p->slots[r].alias_of;
		if (!in[i] && in[r])
			offsets[i] = offsets[r];
	}
	free(in);
	return at;
}

/* Where bytes go: a raw file, or C hex text sixteen bytes to a line. */
typedef struct Sink {
	FILE *f;
	bool c_text;
	int64_t col;
} Sink;

static void put(Sink *s, const void *data, size_t n)
{
	static const char hexd[] = "0123456789abcdef";
	const uint8_t *b = data;
	char line[16 * 6 + 4];

	if (!s->c_text) {
		fwrite(data, 1, n, s->f);
		return;
	}
	while (n > 0) {
		size_t k = 0;
		if (s->col == 0)
			line[k++] = '\t';
		while (n > 0 && s->col < 16) {
			line[k++] = '0', line[k++] = 'x';
			line[k++] = hexd[*b >> 4], line[k++] = hexd[*b & 15];
			line[k++] = ',';
			line[k++] = ++s->col < 16 && n > 1 ? ' ' : '\n';
			b++, n--;
		}
		if (s->col == 16)
			s->col = 0;
		fwrite(line, 1, k, s->f);
	}
}

static void put_zeros(Sink *s, int64_t n)
{
	static const uint8_t zeros[256];
	for (; n > 0; n -= (int64_t)sizeof zeros)
		put(s, zeros, n < (int64_t)sizeof zeros ? (size_t)n :
		    sizeof zeros);
}

/* count copies of one element of size es. */
static void put_fill(Sink *s, const void *elem, size_t es, int64_t count)
{
	uint8_t buf[4096];
	size_t per = sizeof buf / es;
	for (size_t i = 0; i < per; i++)
		memcpy(buf + i * es, elem, es);
	while (count > 0) {
		size_t k = count < (int64_t)per ? (size_t)count : per;
		put(s, buf, k * es);
		count -= (int64_t)k;
	}
}

/* The initializer `name` of the model file, for its external_data. */
static const Onnx__TensorProto *find_initializer(const Onnx__ModelProto *m,
						 const char *name)
{
	if (!m->graph)
		return NULL;
	for (size_t i = 0; i < m->graph->n_initializer; i++)
		if (m->graph->initializer[i]->name &&
		    !strcmp(m->graph->initializer[i]->name, name))
			return m->graph->initializer[i];
	return NULL;
}

static Onnx__ModelProto *read_model(const char *path, ArError *err)
{
	FILE *f = fopen(path, "rb");
	Onnx__ModelProto *m = NULL;
	uint8_t *buf;
	long n;

	if (!f) {
		ar_fail(err, AR_EXIT_MODEL, "--weights: cannot reopen the "
			"model for its external data");
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		ar_fail(err, AR_EXIT_MODEL, "--weights: cannot size the model");
		return NULL;
	}
	buf = ar_xmalloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) == (size_t)n)
		m = onnx__model_proto__unpack(NULL, (size_t)n, buf);
	fclose(f);
	free(buf);
	if (!m)
		ar_fail(err, AR_EXIT_MODEL, "--weights: cannot reread the model");
	return m;
}

/*
 * An external initializer's bytes: location relative to the model's
 * folder, never absolute or upwards, and offset + length inside the file.
 */
static int put_external(Sink *s, const ArEmitInfo *info,
			const Onnx__ModelProto *m, const ArTensor *t,
			ArError *err)
{
	const Onnx__TensorProto *tp = find_initializer(m, t->name);
	const char *loc = NULL, *slash;
	int64_t off = 0, len = -1;
	char *path;
	FILE *f;
	struct stat st;
	uint8_t buf[65536];
	int rc = AR_OK;

	for (size_t i = 0; tp && i < tp->n_external_data; i++) {
		const char *k = tp->external_data[i]->key;
		const char *v = tp->external_data[i]->value;
		char *end;
		if (!k || !v)
			continue;
		if (!strcmp(k, "location"))
			loc = v;
		else if (!strcmp(k, "offset") || !strcmp(k, "length")) {
			long long x = strtoll(v, &end, 10);
			if (*end || end == v || x < 0)
				return ar_fail(err, AR_EXIT_MODEL, "weight '%s' "
					       "has external %s '%s'", t->name,
					       k, v);
			*(k[0] == 'o' ? &off : &len) = x;
		}
	}
	if (!loc || !*loc || loc[0] == '/' || strstr(loc, ".."))
		return ar_fail(err, AR_EXIT_MODEL, "weight '%s' has external "
			       "location '%s', not a file beside the model",
			       t->name, loc ? loc : "");
	if (len >= 0 && len != t->bytes)
		return ar_fail(err, AR_EXIT_MODEL, "weight '%s' has %lld "
			       "external bytes, its shape says %lld", t->name,
			       (long long)len, (long long)t->bytes);
	slash = strrchr(info->model_path, '/');
	path = ar_xmalloc(strlen(info->model_path) + strlen(loc) + 2);
	sprintf(path, "%.*s%s", slash ? (int)(slash - info->model_path + 1) :
		0, info->model_path, loc);
	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st) || st.st_size < off ||
	    st.st_size - off < t->bytes || fseek(f, (long)off, SEEK_SET)) {
		rc = ar_fail(err, AR_EXIT_MODEL, "weight '%s': external file "
			     "'%s' is missing or has no %lld bytes at offset "
			     "%lld", t->name, path, (long long)t->bytes,
			     (long long)off);
	} else {
		for (int64_t left = t->bytes; left > 0 && !rc;) {
			size_t k = left < (int64_t)sizeof buf ? (size_t)left :
				   sizeof buf;
			if (fread(buf, 1, k, f) != k)
				rc = ar_fail(err, AR_EXIT_MODEL, "weight '%s': "
					     "short read from '%s'", t->name,
					     path);
			put(s, buf, k);
			left -= (int64_t)k;
		}
	}
	if (f)
		fclose(f);
	free(path);
	return rc;
}

/* t is output 0 of a view op (ops/table.c): its input's values, reshaped. */
static bool is_copy_op(const ArNode *n, int t)
{
	const ArOpDef *d = ar_op_of(n);
	return d && d->alias == AR_ALIAS_VIEW && n->noutputs > 0 &&
	       n->outputs[0] == t;
}

typedef struct Writer {
	Sink s;
	ArGraph *g;             /* values computed on demand are cached here */
	const ArEmitInfo *info;
	Onnx__ModelProto *model;    /* read on the first external weight */
} Writer;

/*
 * A constant the frontend left to compute on demand (ops/fold_eval.c),
 * computed now, written, and dropped with what it was computed from, so
 * that no more than one such value is in memory at a time.
 */
static int put_computed(Writer *w, int t, ArError *err)
{
	const ArTensor *x = &w->g->tensors[t];
	const ArNode *n = x->producer >= 0 ? &w->g->nodes[x->producer] : NULL;
	int *made, nmade, rc = AR_OK;

	if (ar_const_value(w->g, t, &made, &nmade))
		put(&w->s, x->data, (size_t)x->bytes);
	else
		rc = ar_fail(err, AR_EXIT_MODEL, "constant '%s' (%s '%s') has "
			     "no computable value to write with --weights",
			     x->name, n ? n->op : "no producer",
			     n ? n->name : "");
	for (int i = 0; i < nmade; i++) {
		free(w->g->tensors[made[i]].data);
		w->g->tensors[made[i]].data = NULL;
	}
	free(made);
	return rc;
}

/* Writes tensor t's value, computing a fill the folder left implicit. */
static int put_value(Writer *w, int t, ArError *err)
{
	const ArTensor *x = &w->g->tensors[t];
	const ArNode *n = x->producer >= 0 ? &w->g->nodes[x->producer] : NULL;

	if (x->data) {
		put(&w->s, x->data, (size_t)x->bytes);
		return AR_OK;
	}
	if (x->external) {
		if (!w->model && !(w->model = read_model(w->info->model_path,
							 err)))
			return err->code;
		return put_external(&w->s, w->info, w->model, x, err);
	}
	if (n && !strcmp(n->op, "ConstantOfShape")) {
		const ArAttr *a = ar_attr(n, "value");
		uint8_t zero[16] = {0};
		size_t es = ar_dtype_size(x->dtype);
		if (a && a->t && (!a->t->data || a->t->dtype != x->dtype))
			return ar_fail(err, AR_EXIT_MODEL, "constant '%s': the "
				       "ConstantOfShape value has no data of "
				       "its type", x->name);
		put_fill(&w->s, a && a->t ? a->t->data : zero, es,
			 ar_numel(x));
		return AR_OK;
	}
	/* Same bytes as the input, only another shape. */
	if (n && is_copy_op(n, t) && n->ninputs > 0 && n->inputs[0] >= 0 &&
	    w->g->tensors[n->inputs[0]].bytes == x->bytes &&
	    w->g->tensors[n->inputs[0]].dtype == x->dtype)
		return put_value(w, n->inputs[0], err);
	return put_computed(w, t, err);
}

static void put_c_intro(Writer *w, const char *up, const char *lo,
			int64_t size, int64_t align)
{
	FILE *f = w->s.f;
	fputs("/*\n * Weights and constants of ", f);
	ar_c_comment(f, w->info->model_path ? w->info->model_path : "");
	fprintf(f, ", generated by arenac;\n * do not edit.  Tensor i is at "
		"%s_weights + %s_tensors[i].weights_offset.\n */\n"
		"#include <stdint.h>\n\n#ifndef %s_WEIGHTS_SIZE\n"
		"#define %s_WEIGHTS_SIZE %lldu\n#endif\n\n"
		"#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n"
		"_Alignas(%lld)\n#endif\nconst uint8_t %s_weights[%s_WEIGHTS_SIZE"
		" > 0 ? %s_WEIGHTS_SIZE : 1]\n"
		"#if defined(__GNUC__) && !(defined(__STDC_VERSION__) && "
		"__STDC_VERSION__ >= 201112L)\n__attribute__((aligned(%lld)))\n"
		"#endif\n= {\n", lo, lo, up, up, (long long)size,
		(long long)align, lo, up, up, (long long)align);
}

int ar_write_weights(FILE *f, bool c_text, ArGraph *g,
		     const ArPlan *p, const ArEmitInfo *info, ArError *err)
{
	int64_t *off = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *off);
	int64_t size = ar_weights_layout(g, p, off), at = 0;
	Writer w = {{f, c_text, 0}, g, info, NULL};
	char *lo = ar_header_prefix(info->prefix), *up = ar_xstrdup(lo);
	int rc = AR_OK;

	for (char *c = up; *c; c++)
		if (*c >= 'a' && *c <= 'z')
			*c -= 'a' - 'A';
	if (c_text)
		put_c_intro(&w, up, lo, size, p->align);
	for (int i = 0; i < g->ntensors && !rc; i++) {
		if (off[i] < 0 || p->slots[i].alias_of >= 0)
			continue;       /* none, or another tensor's bytes */
		put_zeros(&w.s, off[i] - at);
		rc = put_value(&w, i, err);
		at = off[i] + g->tensors[i].bytes;
	}
	if (!rc)
		/* Padding to the end; C has no empty arrays. */
		put_zeros(&w.s, size - at + (c_text && size == 0));
	if (c_text && !rc)
		fputs(w.s.col ? "\n};\n" : "};\n", f);
	if (w.model)
		onnx__model_proto__free_unpacked(w.model, NULL);
	free(off), free(lo), free(up);
	if (!rc && ferror(f))
		rc = ar_fail(err, AR_EXIT_USAGE, "--weights: write failed");
	return rc;
}
