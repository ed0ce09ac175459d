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
 * from where the loader recorded them (ArExternal), beside the model,
 * after checking their location and bounds.
 *
 * A model with subgraphs has their weights too: the top graph's section
 * first (with the enclosing weights its subgraphs read, which its steps
 * list as captures), then each planned subgraph's own, depth first.  A
 * subgraph's capture of an enclosing weight is that weight, at its offset.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "emit.h"
#include "infer.h"
#include "numfmt.h"
#include "ops.h"
#include "sanitize.h"

/* A weight or constant with bytes, of g's own (not an outer tensor). */
static bool blob_value(const ArGraph *g, const ArPlan *p, int id)
{
	const ArTensor *t;
	if (id < 0 || (p->outer && p->outer[id] >= 0))
		return false;
	t = &g->tensors[id];
	return (t->kind == AR_TK_WEIGHT || t->kind == AR_TK_CONSTANT) &&
	       !p->slots[id].planned && t->rank >= 0 && t->bytes > 0 &&
	       t->dtype != AR_DT_STRING;
}

/*
 * Tensors in the blob: constants and weights some step reads (its
 * subgraphs' reads included), one per storage (a training step's W.next,
 * W rewritten in place, is W's bytes: ar_weight_storage), and a
 * subgraph's outputs that are constants of its own, which the runtime
 * copies into the node's outputs.
 */
static bool *blob_members(const ArGraph *g, const ArPlan *p)
{
	bool *in = ar_xcalloc((size_t)g->ntensors + 1, sizeof *in);
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		for (int j = 0; j < n->ninputs; j++) {
			int t = n->inputs[j] < 0 ? -1 :
				ar_weight_storage(p, n->inputs[j]);
			if (blob_value(g, p, t))
				in[t] = true;
		}
	}
	for (int j = 0; p->outer && j < g->noutputs; j++)
		if (blob_value(g, p, g->outputs[j]))
			in[g->outputs[j]] = true;
	return in;
}

/* One plan's section from at on: offsets of its members; the new end. */
static int64_t section(const ArGraph *g, const ArPlan *p, int64_t at,
		       int64_t *offsets)
{
	bool *in = blob_members(g, p);
	for (int i = 0; i < g->ntensors; i++) {
		offsets[i] = in[i] ? at : -1;
		if (in[i])
			at += ar_plan_padded(p, g->tensors[i].bytes);
	}
	/* A tensor rewritten in place (alias_of) is at its storage's
	 * offset; put_section writes the storage once. */
	for (int i = 0; i < g->ntensors; i++)
		if (!in[i] && !p->slots[i].planned &&
		    p->slots[i].alias_of >= 0)
			offsets[i] = offsets[ar_weight_storage(p, i)];
	free(in);
	return at;
}

static void layout_sub(const ArSubPlan *sp, int id, int parent, void *ctx)
{
	ArWeightsLayout *l = ctx;
	int64_t *off, *up = l->off[parent + 1];

	if (!sp->plan)
		return;
	off = l->off[id + 1] = ar_xmalloc(((size_t)sp->g->ntensors + 1) *
					  sizeof *off);
	l->size = section(sp->g, sp->plan, l->size, off);
	for (int t = 0; t < sp->g->ntensors; t++)
		if (sp->plan->outer[t] >= 0)
			off[t] = up[sp->plan->outer[t]];
}

void ar_weights_layout_all(const ArGraph *g, const ArPlan *p,
			   ArWeightsLayout *l)
{
	ArSubCounts c;
	ar_plan_sub_counts(p, &c);
	l->n = 1 + c.total;
	l->off = ar_xcalloc((size_t)l->n, sizeof *l->off);
	l->off[0] = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int64_t));
	l->size = section(g, p, 0, l->off[0]);
	ar_plan_walk_subs(p, layout_sub, l);
}

void ar_weights_layout_free(ArWeightsLayout *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->off[i]);
	free(l->off);
}

int64_t ar_weights_layout(const ArGraph *g, const ArPlan *p, int64_t *offsets)
{
	ArWeightsLayout l;
	int64_t size;

	ar_weights_layout_all(g, p, &l);
	if (offsets)
		memcpy(offsets, l.off[0], (size_t)g->ntensors * sizeof *offsets);
	size = l.size;
	ar_weights_layout_free(&l);
	return size;
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

/*
 * An external initializer's bytes: location relative to the model's
 * folder, never absolute or upwards, and offset + length inside the file.
 */
static int put_external(Sink *s, const ArEmitInfo *info, const ArTensor *t,
			ArError *err)
{
	const ArExternal *x = t->external;
	const char *loc = x->location ? x->location : "", *slash;
	char *path;
	FILE *f;
	struct stat st;
	uint8_t buf[65536];
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN];
	int rc = AR_OK;

	/* The loader checked the length against the shape. */
	assert(x->length < 0 || x->length == t->bytes);
	if (!*loc || loc[0] == '/' || strstr(loc, ".."))
		return ar_fail(err, AR_EXIT_MODEL, "weight '%s' has external "
			       "location '%s', not a file beside the model",
			       t->name, loc);
	slash = strrchr(info->model_path, '/');
	path = ar_xmalloc(strlen(info->model_path) + strlen(loc) + 2);
	sprintf(path, "%.*s%s", slash ? (int)(slash - info->model_path + 1) :
		0, info->model_path, loc);
	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st) || st.st_size < x->offset ||
	    st.st_size - x->offset < t->bytes ||
	    fseeko(f, (off_t)x->offset, SEEK_SET)) {
		rc = ar_fail(err, AR_EXIT_MODEL, "weight '%s': external file "
			     "'%s' is missing or has no %s bytes at offset "
			     "%s", t->name, path, ar_fmt_count(a, t->bytes),
			     ar_fmt_count(b, x->offset));
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
	if (x->external)
		return put_external(&w->s, w->info, x, err);
	if (n && !strcmp(n->op, "ConstantOfShape")) {
		const ArAttr *a = ar_attr(n, "value");
		uint8_t zero[16] = {0};
		size_t es = ar_dtype_size(x->dtype);
		if (a && a->t && (!a->t->data || a->t->dtype != x->dtype))
			return ar_fail(err, AR_EXIT_MODEL, "constant '%s': the "
				       "ConstantOfShape value has no data of "
				       "its type", x->name);
		if (es == 0) {
			/* Packed: the value's bits repeated through a byte. */
			int bits = ar_dtype_bits(x->dtype);
			uint8_t v = a && a->t ? *(const uint8_t *)a->t->data &
					       ((1u << bits) - 1) : 0, b = 0;
			for (int i = 0; i < 8; i += bits)
				b |= (uint8_t)(v << i);
			put_fill(&w->s, &b, 1, x->bytes);
			return AR_OK;
		}
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
	ar_c_comment(f, w->info->model_path ? ar_model_name(w->info) : "");
	fprintf(f, ", generated by arenac;\n * do not edit.  Tensor i is at "
		"%1$s_weights + %1$s_tensors[i].weights_offset.\n *\n"
		" * %2$s_WEIGHTS_SECTION, empty unless defined on the compile "
		"line, places the\n * array, e.g. in flash with\n *     -D%2$s_"
		"WEIGHTS_SECTION='__attribute__((section(\".rodata.weights\"))"
		")'\n */\n#include <stdint.h>\n\n#ifndef %2$s_WEIGHTS_SIZE\n"
		"#define %2$s_WEIGHTS_SIZE %3$lldu\n#endif\n"
		"#ifndef %2$s_WEIGHTS_SECTION\n#define %2$s_WEIGHTS_SECTION\n"
		"#endif\n\n"
		"#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n"
		"_Alignas(%4$lld)\n#endif\nconst uint8_t %1$s_weights[%2$s_"
		"WEIGHTS_SIZE > 0 ? %2$s_WEIGHTS_SIZE : 1]\n"
		"#if defined(__GNUC__) && !(defined(__STDC_VERSION__) && "
		"__STDC_VERSION__ >= 201112L)\n__attribute__((aligned(%4$lld)))\n"
		"#endif\n%2$s_WEIGHTS_SECTION = {\n", lo, up, (long long)size,
		(long long)align);
}

/* The members of one section (offsets past *at are its own), in order. */
static int put_section(Writer *w, const int64_t *off, int64_t *at,
		       ArError *err)
{
	int rc = AR_OK;
	for (int i = 0; i < w->g->ntensors && !rc; i++) {
		if (off[i] < *at)
			continue;
		put_zeros(&w->s, off[i] - *at);
		rc = put_value(w, i, err);
		*at = off[i] + w->g->tensors[i].bytes;
	}
	return rc;
}

typedef struct Sections {
	Writer *w;
	const ArWeightsLayout *l;
	int64_t at;
	ArError *err;
	int rc;
} Sections;

static void put_sub(const ArSubPlan *sp, int id, int parent, void *ctx)
{
	Sections *x = ctx;
	(void)parent;
	if (!sp->plan || x->rc)
		return;
	x->w->g = sp->g;
	x->rc = put_section(x->w, x->l->off[id + 1], &x->at, x->err);
}

int ar_write_weights(FILE *f, bool c_text, ArGraph *g,
		     const ArPlan *p, const ArEmitInfo *info, ArError *err)
{
	ArWeightsLayout l;
	Writer w = {{f, c_text, 0}, g, info};
	Sections x = {&w, &l, 0, err, AR_OK};
	char *lo = ar_header_prefix(info->prefix), *up = ar_xstrdup(lo);
	int rc;

	ar_weights_layout_all(g, p, &l);
	for (char *c = up; *c; c++)
		if (*c >= 'a' && *c <= 'z')
			*c -= 'a' - 'A';
	if (c_text)
		put_c_intro(&w, up, lo, l.size, p->align);
	rc = put_section(&w, l.off[0], &x.at, err);
	if (!rc) {
		ar_plan_walk_subs(p, put_sub, &x);
		rc = x.rc;
	}
	if (!rc)
		/* Padding to the end; C has no empty arrays. */
		put_zeros(&w.s, l.size - x.at + (c_text && l.size == 0));
	if (c_text && !rc)
		fputs(w.s.col ? "\n};\n" : "};\n", f);
	ar_weights_layout_free(&l);
	free(lo), free(up);
	if (!rc && ferror(f))
		rc = ar_fail(err, AR_EXIT_USAGE, "--weights: write failed");
	return rc;
}
