/*
 * graph.c — construction, lookup and size arithmetic for the IR.
 *
 * Every byte size in arenac is computed here with checked arithmetic, so a
 * model with absurd dims becomes a clean error instead of a wrapped size.
 */
#include "graph.h"
#include "strpool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sizes stay below 2^62 so that sums of a few of them cannot overflow. */
#define AR_MAX_BYTES ((int64_t)1 << 62)

int ar_fail(ArError *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

void ar_warn(const ArDiag *d, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	if (!d || !d->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	d->warn(d->ctx, buf);
}

static ArOomHandler oom_handler;

void ar_set_oom_handler(ArOomHandler h)
{
	oom_handler = h;
}

/* The library neither prints nor exits: the program's handler decides. */
static void *checked(void *p, size_t n)
{
	if (!p) {
		if (oom_handler)
			oom_handler(n);
		abort();        /* no handler, or one that returned */
	}
	return p;
}

void *ar_xmalloc(size_t n)
{
	return checked(malloc(n ? n : 1), n);
}

void *ar_xcalloc(size_t n, size_t sz)
{
	size_t total;
	if (__builtin_mul_overflow(n, sz, &total))
		total = SIZE_MAX;
	return checked(calloc(n ? n : 1, sz ? sz : 1), total);
}

void *ar_xrealloc(void *p, size_t n)
{
	return checked(realloc(p, n ? n : 1), n);
}

char *ar_xstrdup(const char *s)
{
	size_t n = strlen(s ? s : "") + 1;
	char *d = ar_xmalloc(n);
	memcpy(d, s ? s : "", n);
	return d;
}

bool ar_mul64(int64_t a, int64_t b, int64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

bool ar_add64(int64_t a, int64_t b, int64_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

/* Names as in the JSON report and the header; sizes in bits. */
static const struct {
	const char *name;
	int bits;
} dtypes[AR_DT_COUNT] = {
	[AR_DT_UNDEFINED] = {"undefined", 0},  [AR_DT_FLOAT] = {"float32", 32},
	[AR_DT_UINT8] = {"uint8", 8},          [AR_DT_INT8] = {"int8", 8},
	[AR_DT_UINT16] = {"uint16", 16},       [AR_DT_INT16] = {"int16", 16},
	[AR_DT_INT32] = {"int32", 32},         [AR_DT_INT64] = {"int64", 64},
	[AR_DT_STRING] = {"string", 0},        [AR_DT_BOOL] = {"bool", 8},
	[AR_DT_FLOAT16] = {"float16", 16},     [AR_DT_DOUBLE] = {"float64", 64},
	[AR_DT_UINT32] = {"uint32", 32},       [AR_DT_UINT64] = {"uint64", 64},
	[AR_DT_COMPLEX64] = {"complex64", 64},
	[AR_DT_COMPLEX128] = {"complex128", 128},
	[AR_DT_BFLOAT16] = {"bfloat16", 16},
	[AR_DT_FLOAT8E4M3FN] = {"float8e4m3fn", 8},
	[AR_DT_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", 8},
	[AR_DT_FLOAT8E5M2] = {"float8e5m2", 8},
	[AR_DT_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", 8},
	[AR_DT_UINT4] = {"uint4", 4},          [AR_DT_INT4] = {"int4", 4},
	[AR_DT_FLOAT4E2M1] = {"float4e2m1", 4},
	[AR_DT_FLOAT8E8M0] = {"float8e8m0", 8},
	[AR_DT_UINT2] = {"uint2", 2},          [AR_DT_INT2] = {"int2", 2},
};

int ar_dtype_bits(ArDType dt)
{
	return (unsigned)dt < AR_DT_COUNT ? dtypes[dt].bits : 0;
}

size_t ar_dtype_size(ArDType dt)
{
	int bits = ar_dtype_bits(dt);
	return bits % 8 ? 0 : (size_t)bits / 8;
}

const char *ar_dtype_name(ArDType dt)
{
	return (unsigned)dt < AR_DT_COUNT ? dtypes[dt].name : "invalid";
}

const char *ar_kind_name(ArTensorKind k)
{
	static const char *names[] = {"input", "output", "activation", "weight",
				      "constant"};
	return (unsigned)k < 5 ? names[k] : "invalid";
}

const char *ar_phase_name(ArPhase p)
{
	static const char *names[] = {"forward", "recompute", "backward",
				      "update"};
	return (unsigned)p < 4 ? names[p] : "invalid";
}

int64_t ar_numel(const ArTensor *t)
{
	int64_t n = 1;
	if (t->rank < 0)
		return -1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] < 0 || !ar_mul64(n, t->dims[i], &n) ||
		    n > AR_MAX_BYTES)
			return -1;
	}
	return n;
}

int ar_tensor_set_bytes(ArTensor *t, ArError *err)
{
	int bits = ar_dtype_bits(t->dtype);
	int64_t n, b;

	if (t->dtype == AR_DT_STRING)
		return ar_fail(err, AR_EXIT_MODEL,
			       "tensor '%s' is a string tensor, which has no "
			       "fixed byte size", t->name);
	if (bits == 0)
		return ar_fail(err, AR_EXIT_MODEL,
			       "tensor '%s' has unknown element type %d",
			       t->name, (int)t->dtype);
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i] < 0)
			return ar_fail(err, AR_EXIT_MODEL,
				       "tensor '%s' has negative dim %lld at "
				       "axis %d", t->name,
				       (long long)t->dims[i], i);
	n = ar_numel(t);
	/* Whole bytes per element, or packed: ceil(n * bits / 8), rounded
	 * once for the tensor (n < 2^62 keeps n * 4 from overflowing). */
	if (n >= 0 && bits % 8 == 0) {
		if (!ar_mul64(n, bits / 8, &b))
			b = -1;
	} else {
		b = n < 0 ? -1 : (n / 8) * bits + ((n % 8) * bits + 7) / 8;
	}
	if (b < 0 || b > AR_MAX_BYTES)
		return ar_fail(err, AR_EXIT_MODEL,
			       "tensor '%s' is too large: its byte size "
			       "overflows 2^62", t->name);
	t->bytes = b;
	return AR_OK;
}

ArGraph *ar_graph_new(const char *name)
{
	ArGraph *g = ar_xcalloc(1, sizeof *g);
	g->name = ar_xstrdup(name);
	g->opset = 1;
	return g;
}

/* The name stays: the graph's pool holds it. */
static void free_tensor_fields(ArTensor *t)
{
	free(t->data);
	free(t->declared);
	if (t->external)
		free(t->external->location);
	free(t->external);
}

static void free_attr(ArAttr *a)
{
	free(a->s);
	free(a->ints);
	free(a->floats);
	if (a->t) {
		free_tensor_fields(a->t);
		free(a->t);
	}
	if (a->g)
		ar_graph_free(a->g);
}

static void free_node_fields(ArNode *n)
{
	free(n->inputs);
	free(n->outputs);
	for (int j = 0; j < n->nattrs; j++)
		free_attr(&n->attrs[j]);
	free(n->attrs);
}

void ar_graph_free(ArGraph *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->ntensors; i++)
		free_tensor_fields(&g->tensors[i]);
	for (int i = 0; i < g->nnodes; i++)
		free_node_fields(&g->nodes[i]);
	free(g->tensors);
	free(g->nodes);
	free(g->inputs);
	free(g->outputs);
	free(g->captures);
	free(g->name);
	ar_strpool_free(g->strs);
	free(g);
}

static int remap(const int *map, int id)
{
	return id >= 0 ? map[id] : id;
}

void ar_graph_drop(ArGraph *g, const bool *drop_node, const bool *drop_tensor)
{
	int *tmap = ar_xmalloc((size_t)g->ntensors * sizeof(int) + 1);
	int *nmap = ar_xmalloc((size_t)g->nnodes * sizeof(int) + 1);
	int nt = 0, nn = 0;

	for (int t = 0; t < g->ntensors; t++) {
		tmap[t] = drop_tensor[t] ? -1 : nt;
		if (drop_tensor[t])
			free_tensor_fields(&g->tensors[t]);
		else
			g->tensors[nt++] = g->tensors[t];
	}
	for (int i = 0; i < g->nnodes; i++) {
		nmap[i] = drop_node[i] ? -1 : nn;
		if (drop_node[i])
			free_node_fields(&g->nodes[i]);
		else
			g->nodes[nn++] = g->nodes[i];
	}
	g->ntensors = nt;
	g->nnodes = nn;
	for (int t = 0; t < nt; t++) {
		ArQuant *q = &g->tensors[t].quant;
		g->tensors[t].producer = remap(nmap, g->tensors[t].producer);
		q->scale = remap(tmap, q->scale);
		q->zero_point = remap(tmap, q->zero_point);
	}
	for (int i = 0; i < nn; i++) {
		ArNode *n = &g->nodes[i];
		for (int j = 0; j < n->ninputs; j++)
			n->inputs[j] = remap(tmap, n->inputs[j]);
		for (int j = 0; j < n->noutputs; j++)
			n->outputs[j] = remap(tmap, n->outputs[j]);
	}
	for (int i = 0; i < g->ninputs; i++)
		g->inputs[i] = remap(tmap, g->inputs[i]);
	for (int i = 0; i < g->noutputs; i++)
		g->outputs[i] = remap(tmap, g->outputs[i]);
	for (int i = 0; i < g->ncaptures; i++)
		g->captures[i] = remap(tmap, g->captures[i]);
	free(tmap), free(nmap);
}

int ar_graph_find(const ArGraph *g, const char *name)
{
	/*
	 * Linear scans would make loading quadratic; the loader keeps its own
	 * hash index and this is only for small lookups by tools and tests.
	 */
	for (int i = 0; i < g->ntensors; i++)
		if (strcmp(g->tensors[i].name, name) == 0)
			return i;
	return -1;
}

int ar_graph_add_tensor(ArGraph *g, const char *name)
{
	ArTensor *t;
	if (g->ntensors == g->captensors) {
		g->captensors = g->captensors ? 2 * g->captensors : 64;
		g->tensors = ar_xrealloc(g->tensors,
					 g->captensors * sizeof *g->tensors);
	}
	t = &g->tensors[g->ntensors];
	memset(t, 0, sizeof *t);
	t->name = ar_strpool_copy(&g->strs, name);
	t->rank = -1;
	t->bytes = -1;
	t->kind = AR_TK_ACTIVATION;
	t->producer = -1;
	t->quant.scale = t->quant.zero_point = t->quant.axis = -1;
	return g->ntensors++;
}

int ar_graph_add_node(ArGraph *g, const char *name, const char *op,
		      const char *domain)
{
	ArNode *n;
	if (g->nnodes == g->capnodes) {
		g->capnodes = g->capnodes ? 2 * g->capnodes : 64;
		g->nodes = ar_xrealloc(g->nodes, g->capnodes * sizeof *g->nodes);
	}
	n = &g->nodes[g->nnodes];
	memset(n, 0, sizeof *n);
	n->name = ar_strpool_copy(&g->strs, name);
	n->op = ar_strpool_intern(&g->strs, op);
	n->domain = ar_strpool_intern(&g->strs, domain);
	n->opset = g->opset;
	return g->nnodes++;
}

void ar_node_set_op(ArGraph *g, ArNode *n, const char *op,
		    const char *domain)
{
	n->op = ar_strpool_intern(&g->strs, op);
	n->domain = ar_strpool_intern(&g->strs, domain);
	n->def_known = false;
}

ArAttr *ar_node_add_attr(ArGraph *g, ArNode *n, const char *name,
			 ArAttrType type)
{
	ArAttr *a;
	n->attrs = ar_xrealloc(n->attrs, (size_t)(n->nattrs + 1) *
					 sizeof *n->attrs);
	a = &n->attrs[n->nattrs++];
	memset(a, 0, sizeof *a);
	a->name = ar_strpool_intern(&g->strs, name);
	a->type = type;
	return a;
}

void ar_node_set_io(ArNode *n, const int *in, int nin, const int *out,
		    int nout)
{
	free(n->inputs);
	free(n->outputs);
	n->inputs = ar_xmalloc((size_t)nin * sizeof *in);
	n->outputs = ar_xmalloc((size_t)nout * sizeof *out);
	if (nin)
		memcpy(n->inputs, in, (size_t)nin * sizeof *in);
	if (nout)
		memcpy(n->outputs, out, (size_t)nout * sizeof *out);
	n->ninputs = n->nexplicit = nin;
	n->noutputs = nout;
}

const ArAttr *ar_attr(const ArNode *n, const char *name)
{
	for (int i = 0; i < n->nattrs; i++)
		if (strcmp(n->attrs[i].name, name) == 0)
			return &n->attrs[i];
	return NULL;
}

bool ar_default_domain(const char *domain)
{
	return !domain[0] || !strcmp(domain, "ai.onnx");
}

int64_t ar_attr_int(const ArNode *n, const char *name, int64_t dflt)
{
	const ArAttr *a = ar_attr(n, name);
	return a && a->type == AR_ATTR_INT ? a->i : dflt;
}

float ar_attr_float(const ArNode *n, const char *name, float dflt)
{
	const ArAttr *a = ar_attr(n, name);
	return a && a->type == AR_ATTR_FLOAT ? a->f : dflt;
}

const char *ar_attr_str(const ArNode *n, const char *name, const char *dflt)
{
	const ArAttr *a = ar_attr(n, name);
	return a && a->type == AR_ATTR_STRING ? a->s : dflt;
}

bool ar_is_step(const ArGraph *g, int node)
{
	const ArNode *n = &g->nodes[node];
	for (int i = 0; i < n->noutputs; i++) {
		int t = n->outputs[i];
		if (t >= 0 && g->tensors[t].kind != AR_TK_CONSTANT)
			return true;
	}
	return false;
}

bool ar_in_arena(const ArGraph *g, int t)
{
	const ArTensor *x = &g->tensors[t];
	if (x->kind == AR_TK_WEIGHT || x->kind == AR_TK_CONSTANT)
		return false;
	if (x->rank < 0 || x->bytes < 0)
		return false;   /* an unread output of unknown shape */
	return x->producer < 0 || ar_is_step(g, x->producer);
}

void ar_graph_copy_io(ArGraph *g, const ArGraph *src)
{
	g->inputs = ar_xmalloc(((size_t)src->ninputs + 2) * sizeof(int));
	memcpy(g->inputs, src->inputs, (size_t)src->ninputs * sizeof(int));
	g->ninputs = src->ninputs;
	g->outputs = ar_xmalloc(((size_t)src->noutputs + 1) * sizeof(int));
	memcpy(g->outputs, src->outputs, (size_t)src->noutputs * sizeof(int));
	g->noutputs = src->noutputs;
}

static const char *copy_meta(ArGraph *g, const char *s)
{
	return s ? ar_strpool_intern(&g->strs, s) : NULL;
}

void ar_graph_copy_meta(ArGraph *g, const ArGraph *src)
{
	g->meta_trainable = copy_meta(g, src->meta_trainable);
	g->meta_frozen = copy_meta(g, src->meta_frozen);
	g->meta_buffers = copy_meta(g, src->meta_buffers);
	g->meta_ties = copy_meta(g, src->meta_ties);
}
