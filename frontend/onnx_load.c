/*
 * onnx_load.c — ONNX protobuf (via protobuf-c) to the IR.
 *
 * The loader does every structural check once, so later passes may trust
 * the graph: each tensor has one producer, every read tensor exists, the
 * nodes are in a topological order (the file's, unless the file is out of
 * order, then a stable Kahn order), names are unique, dims of graph inputs
 * are bound to numbers (bind.c).  Initializers become weights even when
 * they are also listed as graph inputs (IR 3).  Weight bytes from external
 * files are never read: planning needs only their size; where they live
 * is recorded for the weights blob (codegen/weights.c), so nothing after
 * the loader parses ONNX again.
 */
#include "load.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bind.h"
#include "ops.h"
#include "numfmt.h"
#include "onnx.pb-c.h"
#include "pbarena.h"
#include "strpool.h"

/* Raw data and the narrowing copies below read ONNX's little-endian bytes
 * as host values. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "arenac reads ONNX tensor bytes in host order: little-endian hosts only"
#endif

/*
 * Name -> tensor id, open addressing; the graph owns the strings.  Each
 * slot keeps its name's hash beside the id, so that a probe past another
 * name compares numbers, not strings behind two pointers (the tensor's
 * record, then its name), which miss the cache on a large graph.
 */
typedef struct {
	uint32_t hash;
	int id;                     /* -1: empty */
} NameSlot;

typedef struct {
	NameSlot *slot;
	size_t cap;
	const ArGraph *g;
} NameIndex;

static void index_alloc(NameIndex *ix)
{
	ix->slot = ar_xmalloc(ix->cap * sizeof *ix->slot);
	for (size_t i = 0; i < ix->cap; i++)
		ix->slot[i].id = -1;
}

static void index_init(NameIndex *ix, const ArGraph *g, size_t expect)
{
	ix->cap = 16;
	while (ix->cap < 2 * expect + 16)
		ix->cap *= 2;
	index_alloc(ix);
	ix->g = g;
}

static int index_get(const NameIndex *ix, const char *name)
{
	uint32_t h = ar_str_hash(name);
	for (size_t i = h & (ix->cap - 1); ix->slot[i].id >= 0;
	     i = (i + 1) & (ix->cap - 1))
		if (ix->slot[i].hash == h &&
		    strcmp(ix->g->tensors[ix->slot[i].id].name, name) == 0)
			return ix->slot[i].id;
	return -1;
}

/*
 * The index of a large graph is far larger than the cache, and its slots
 * are read at random: waiting for each was most of loading a graph of a
 * million nodes.  The passes over the nodes ask for the slots of the
 * names PREFETCH_AHEAD nodes ahead, so that they are in the cache by the
 * time they are read.  An index that fits in the cache (PREFETCH_SLOTS,
 * 512 KiB) is not worth hashing each name twice.
 */
#define PREFETCH_AHEAD 8
#define PREFETCH_SLOTS ((size_t)1 << 16)

static void index_prefetch(const NameIndex *ix, char *const *names,
			   size_t n)
{
	if (ix->cap < PREFETCH_SLOTS)
		return;
	for (size_t j = 0; j < n; j++)
		if (names[j])
			__builtin_prefetch(&ix->slot[ar_str_hash(names[j]) &
						     (ix->cap - 1)]);
}

static void index_insert(NameIndex *ix, NameSlot e)
{
	size_t i = e.hash & (ix->cap - 1);
	while (ix->slot[i].id >= 0)
		i = (i + 1) & (ix->cap - 1);
	ix->slot[i] = e;
}

/* Keeps the index at most half full. */
static void index_put(NameIndex *ix, int id)
{
	if ((size_t)ix->g->ntensors * 2 > ix->cap) {
		NameSlot *old = ix->slot;
		size_t oldcap = ix->cap;
		ix->cap *= 2;
		index_alloc(ix);
		for (size_t j = 0; j < oldcap; j++)
			if (old[j].id >= 0)
				index_insert(ix, old[j]);
		free(old);
	}
	index_insert(ix, (NameSlot){ar_str_hash(ix->g->tensors[id].name), id});
}

typedef struct Loader {
	const ArLoadOptions *opt;
	ArError *err;
	const Onnx__ModelProto *model;
	int64_t nnodes_total;       /* across subgraphs, for the node limit */
	int max_nodes, max_depth;
	ArBinder bind;
	ArDeclShape *inputs;        /* the top graph's inputs as declared */
	int ninputs;
	int ncaches;                /* graph inputs --max-seq bound */
} Loader;

/* One graph being loaded; scopes chain to the enclosing graph's. */
typedef struct Scope {
	ArGraph *g;
	NameIndex ix;
	struct Scope *parent;
} Scope;

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* The arenac.* metadata_props (scripts/torch_export.py). */
static void load_meta(ArGraph *g, const Onnx__ModelProto *m)
{
	for (size_t i = 0; i < m->n_metadata_props; i++) {
		const char *k = nz(m->metadata_props[i]->key);
		const char *v = ar_strpool_intern(&g->strs,
					nz(m->metadata_props[i]->value));
		if (!strcmp(k, "arenac.trainable"))
			g->meta_trainable = v;
		else if (!strcmp(k, "arenac.frozen"))
			g->meta_frozen = v;
		else if (!strcmp(k, "arenac.buffers"))
			g->meta_buffers = v;
		else if (!strcmp(k, "arenac.ties"))
			g->meta_ties = v;
	}
}

static int64_t opset_of(const Onnx__ModelProto *m, const char *domain)
{
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const char *d = nz(m->opset_import[i]->domain);
		if ((ar_default_domain(domain) && ar_default_domain(d)) ||
		    !strcmp(d, domain))
			return m->opset_import[i]->version;
	}
	return -1;
}

/* Copies n elements of src (elements of srcsize bytes) narrowing to es. */
static void narrow_copy(void *dst, size_t es, const void *src, size_t srcsize,
			size_t n)
{
	const uint8_t *s = src;
	uint8_t *d = dst;
	/* Little-endian hosts: the low bytes of each wider element. */
	for (size_t i = 0; i < n; i++)
		memcpy(d + i * es, s + i * srcsize, es);
}

/*
 * Where an external tensor's bytes are, as the file says: location
 * (relative to the model's folder; codegen checks it before it opens
 * anything), offset and length, the length agreeing with the shape.
 */
static int external_ref(Loader *L, const Onnx__TensorProto *tp, ArTensor *t,
			const char *what)
{
	ArExternal *x = ar_xcalloc(1, sizeof *x);
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN];

	x->length = -1;
	t->external = x;
	for (size_t i = 0; i < tp->n_external_data; i++) {
		const char *k = tp->external_data[i]->key;
		const char *v = tp->external_data[i]->value;
		char *end;
		long long n;
		if (!k || !v)
			continue;
		if (!strcmp(k, "location")) {
			free(x->location);
			x->location = ar_xstrdup(v);
			continue;
		}
		if (strcmp(k, "offset") && strcmp(k, "length"))
			continue;
		errno = 0;
		n = strtoll(v, &end, 10);
		if (errno || *end || end == v || n < 0)
			return ar_fail(L->err, AR_EXIT_MODEL, "%s '%s' has "
				       "external %s '%s'", what, t->name, k, v);
		*(k[0] == 'o' ? &x->offset : &x->length) = n;
	}
	if (x->length >= 0 && x->length != t->bytes)
		return ar_fail(L->err, AR_EXIT_MODEL, "%s '%s' has %s external "
			       "bytes, its shape says %s", what, t->name,
			       ar_fmt_count(a, x->length),
			       ar_fmt_count(b, t->bytes));
	return AR_OK;
}

/*
 * Fills dtype, dims, bytes and (for in-file data) a host copy of the
 * values.  `what` names the tensor's role in messages.
 */
static int decode_tensor(Loader *L, const Onnx__TensorProto *tp, ArTensor *t,
			 const char *what)
{
	int64_t numel;
	size_t es, have = 0;
	const void *src = NULL;
	size_t srcsize = 0;

	t->dtype = tp->has_data_type ? (ArDType)tp->data_type : AR_DT_UNDEFINED;
	if (t->dtype <= AR_DT_UNDEFINED || t->dtype >= AR_DT_COUNT)
		return ar_fail(L->err, AR_EXIT_MODEL,
			       "%s '%s' has unknown data type %d", what,
			       t->name, (int)t->dtype);
	if (tp->n_dims > AR_MAX_RANK)
		return ar_fail(L->err, AR_EXIT_MODEL,
			       "%s '%s' has rank %zu, above the limit of %d",
			       what, t->name, tp->n_dims, AR_MAX_RANK);
	t->rank = (int)tp->n_dims;
	for (size_t i = 0; i < tp->n_dims; i++)
		t->dims[i] = tp->dims[i];
	if (tp->segment)
		return ar_fail(L->err, AR_EXIT_MODEL,
			       "%s '%s' is segmented, which arenac does not "
			       "support", what, t->name);
	if (t->dtype == AR_DT_STRING) {
		/* No byte size; a consumer that needs one reports it. */
		for (int i = 0; i < t->rank; i++)
			if (t->dims[i] < 0)
				return ar_fail(L->err, AR_EXIT_MODEL,
					       "%s '%s' has a negative dim",
					       what, t->name);
		return AR_OK;
	}
	if (ar_tensor_set_bytes(t, L->err))
		return L->err->code;
	if (tp->has_data_location &&
	    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return external_ref(L, tp, t, what);
	numel = ar_numel(t);
	es = ar_dtype_size(t->dtype);
	/* Sub-byte types arrive packed, one byte per int32_data entry. */
	if (es == 0)
		numel = t->bytes, es = 1;
	if (tp->has_raw_data) {
		char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN];
		if ((int64_t)tp->raw_data.len != t->bytes)
			return ar_fail(L->err, AR_EXIT_MODEL,
				       "%s '%s' holds %s raw bytes but its "
				       "dims and type say %s", what, t->name,
				       ar_fmt_count(a, (int64_t)tp->raw_data.len),
				       ar_fmt_count(b, t->bytes));
		t->data = ar_xmalloc((size_t)t->bytes);
		/* An empty tensor's raw data may be a null pointer. */
		if (t->bytes)
			memcpy(t->data, tp->raw_data.data, (size_t)t->bytes);
		return AR_OK;
	}
	switch (t->dtype) {
	case AR_DT_FLOAT:
	case AR_DT_COMPLEX64:
		src = tp->float_data, have = tp->n_float_data, srcsize = 4;
		break;
	case AR_DT_INT32: case AR_DT_INT16: case AR_DT_INT8:
	case AR_DT_UINT16: case AR_DT_UINT8: case AR_DT_BOOL:
	case AR_DT_FLOAT16: case AR_DT_BFLOAT16:
	case AR_DT_FLOAT8E4M3FN: case AR_DT_FLOAT8E4M3FNUZ:
	case AR_DT_FLOAT8E5M2: case AR_DT_FLOAT8E5M2FNUZ:
	case AR_DT_FLOAT8E8M0: case AR_DT_UINT4: case AR_DT_INT4:
	case AR_DT_FLOAT4E2M1: case AR_DT_UINT2: case AR_DT_INT2:
		src = tp->int32_data, have = tp->n_int32_data, srcsize = 4;
		break;
	case AR_DT_INT64:
		src = tp->int64_data, have = tp->n_int64_data, srcsize = 8;
		break;
	case AR_DT_DOUBLE:
	case AR_DT_COMPLEX128:
		src = tp->double_data, have = tp->n_double_data, srcsize = 8;
		break;
	case AR_DT_UINT32: case AR_DT_UINT64:
		src = tp->uint64_data, have = tp->n_uint64_data, srcsize = 8;
		break;
	default:
		break;
	}
	if (t->dtype == AR_DT_COMPLEX64 || t->dtype == AR_DT_COMPLEX128)
		have /= 2, es /= 2, numel *= 2;
	if (have == 0 && numel > 0)
		return AR_OK;       /* no data: known by shape only */
	if ((int64_t)have != numel)
		return ar_fail(L->err, AR_EXIT_MODEL,
			       "%s '%s' holds %zu values but its dims say "
			       "%lld", what, t->name, have, (long long)numel);
	t->data = ar_xmalloc((size_t)t->bytes);
	narrow_copy(t->data, es, src, srcsize, have);
	return AR_OK;
}

/* A dim as the file declares it, for bind.c. */
static ArDeclDim decl_dim(const Onnx__TensorShapeProto__Dimension *d)
{
	if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
		return (ArDeclDim){AR_DIM_FIXED, d->dim_value, NULL};
	if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
	    d->dim_param && *d->dim_param)
		return (ArDeclDim){AR_DIM_NAMED, -1, d->dim_param};
	return (ArDeclDim){AR_DIM_UNKNOWN, -1, NULL};
}

static const Onnx__TypeProto__Tensor *tensor_type(const Onnx__ValueInfoProto *vi)
{
	if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return NULL;
	return vi->type->tensor_type;
}

/* Records a value_info/output declaration for the cross-check. */
static void declare(Loader *L, ArTensor *t, const Onnx__ValueInfoProto *vi)
{
	const Onnx__TypeProto__Tensor *tt = tensor_type(vi);
	if (!tt)
		return;
	if (t->dtype == AR_DT_UNDEFINED && tt->has_elem_type &&
	    tt->elem_type > 0 && tt->elem_type < AR_DT_COUNT)
		t->dtype = (ArDType)tt->elem_type;
	if (!tt->shape || tt->shape->n_dim > AR_MAX_RANK)
		return;
	if (!t->declared)
		t->declared = ar_xmalloc(sizeof *t->declared);
	t->declared->rank = (int)tt->shape->n_dim;
	for (size_t i = 0; i < tt->shape->n_dim; i++) {
		ArDeclDim d = decl_dim(tt->shape->dim[i]);
		t->declared->dims[i] = ar_bind_declared(&L->bind, &d);
	}
}

/*
 * --max-seq: the sequence axis of graph input `name` where an attention op
 * of gp reads it as a KV cache (its op table entry says which inputs are
 * caches), else -1.
 */
static int cache_axis(const Loader *L, const Onnx__GraphProto *gp,
		      const char *name)
{
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		const char *dom = nz(np->domain);
		const ArOpDef *d = np->op_type ?
			ar_op_find(dom, np->op_type, opset_of(L->model, dom)) :
			NULL;
		for (int k = 0; d && k < d->nkv; k++) {
			size_t j = (size_t)d->kv[k].in;
			if (j < np->n_input && !strcmp(nz(np->input[j]), name))
				return d->kv[k].seq;
		}
	}
	return -1;
}

/*
 * A top-level graph input's type and declared shape (bound later);
 * cache_ax: its KV-cache axis, which --max-seq fixes, or -1.
 */
static int load_input(Loader *L, ArTensor *t, const Onnx__ValueInfoProto *vi,
		      ArDeclShape *decl, int cache_ax)
{
	const Onnx__TypeProto__Tensor *tt = tensor_type(vi);
	if (!tt)
		return ar_fail(L->err, AR_EXIT_MODEL,
			       "graph input '%s' is not a tensor (sequence, map "
			       "and optional values are not supported)",
			       t->name);
	if (!tt->has_elem_type || tt->elem_type <= 0 ||
	    tt->elem_type >= AR_DT_COUNT)
		return ar_fail(L->err, AR_EXIT_MODEL,
			       "graph input '%s' has unknown element type %d",
			       t->name, tt->has_elem_type ? tt->elem_type : 0);
	t->dtype = (ArDType)tt->elem_type;
	if (!tt->shape)
		return ar_fail(L->err, AR_EXIT_MODEL,
			       "graph input '%s' has no shape; arenac needs "
			       "static input shapes", t->name);
	if (tt->shape->n_dim > AR_MAX_RANK)
		return ar_fail(L->err, AR_EXIT_MODEL,
			       "graph input '%s' has rank %zu, above the limit "
			       "of %d", t->name, tt->shape->n_dim, AR_MAX_RANK);
	decl->rank = (int)tt->shape->n_dim;
	for (int i = 0; i < decl->rank; i++)
		decl->dims[i] = decl_dim(tt->shape->dim[i]);
	if (cache_ax < 0 || cache_ax >= decl->rank)
		return AR_OK;
	L->ncaches++;
	if (decl->dims[cache_ax].kind == AR_DIM_FIXED &&
	    decl->dims[cache_ax].value != L->opt->max_seq)
		return ar_fail(L->err, AR_EXIT_MODEL, "graph input '%s' has "
			       "fixed dim %lld at axis %d, its KV cache's "
			       "sequence axis, which --max-seq %lld "
			       "contradicts", t->name,
			       (long long)decl->dims[cache_ax].value, cache_ax,
			       (long long)L->opt->max_seq);
	decl->dims[cache_ax] = (ArDeclDim){AR_DIM_FIXED, L->opt->max_seq, NULL};
	return AR_OK;
}

static int load_graph(Loader *L, const Onnx__GraphProto *gp, Scope *parent,
		      int depth, ArGraph **out);

/* Looks a name up here, then in enclosing scopes (capturing it). */
static int resolve(Loader *L, Scope *s, const char *name)
{
	int id = index_get(&s->ix, name), outer;
	ArGraph *g = s->g;
	(void)L;
	if (id >= 0 || !s->parent)
		return id;
	outer = resolve(L, s->parent, name);
	if (outer < 0)
		return -1;
	id = ar_graph_add_tensor(g, name);
	g->tensors[id].kind = AR_TK_INPUT;
	index_put(&s->ix, id);
	g->captures = ar_xrealloc(g->captures,
				  (size_t)(g->ncaptures + 1) * sizeof(int));
	g->captures[g->ncaptures++] = id;
	return id;
}

static int load_attr(Loader *L, Scope *s, const ArNode *n, ArAttr *a,
		     const Onnx__AttributeProto *ap)
{
	a->name = ar_strpool_intern(&s->g->strs, nz(ap->name));
	a->type = ap->has_type ? (ArAttrType)ap->type : AR_ATTR_UNDEFINED;
	if (ap->ref_attr_name)
		return ar_fail(L->err, AR_EXIT_MODEL,
			       "node '%s' (%s): attribute '%s' refers to a "
			       "function attribute, which is not supported",
			       n->name, n->op, a->name);
	switch (a->type) {
	case AR_ATTR_FLOAT:
		a->f = ap->f;
		break;
	case AR_ATTR_INT:
		a->i = ap->i;
		break;
	case AR_ATTR_STRING:
		a->s = ar_xmalloc(ap->s.len + 1);
		if (ap->s.len)
			memcpy(a->s, ap->s.data, ap->s.len);
		a->s[ap->s.len] = 0;
		break;
	case AR_ATTR_INTS:
		a->nints = (int)ap->n_ints;
		a->ints = ar_xmalloc(ap->n_ints * sizeof(int64_t));
		if (ap->n_ints)
			memcpy(a->ints, ap->ints, ap->n_ints * sizeof(int64_t));
		break;
	case AR_ATTR_FLOATS:
		a->nfloats = (int)ap->n_floats;
		a->floats = ar_xmalloc(ap->n_floats * sizeof(float));
		if (ap->n_floats)
			memcpy(a->floats, ap->floats, ap->n_floats * sizeof(float));
		break;
	case AR_ATTR_TENSOR:
		if (!ap->t)
			return ar_fail(L->err, AR_EXIT_MODEL,
				       "node '%s' (%s): tensor attribute '%s' "
				       "is empty", n->name, n->op, a->name);
		a->t = ar_xcalloc(1, sizeof *a->t);
		a->t->name = ar_strpool_copy(&s->g->strs, n->noutputs ?
					     n->name : a->name);
		a->t->producer = -1;
		a->t->kind = AR_TK_CONSTANT;
		return decode_tensor(L, ap->t, a->t, "constant");
	case AR_ATTR_GRAPH:
		if (!ap->g)
			return ar_fail(L->err, AR_EXIT_MODEL,
				       "node '%s' (%s): graph attribute '%s' "
				       "is empty", n->name, n->op, a->name);
		return load_graph(L, ap->g, s, s->g->depth + 1, &a->g);
	default:
		/* STRINGS, sparse tensors, graphs lists: kept by name only. */
		break;
	}
	return AR_OK;
}

/*
 * Orders nodes so every input is produced before it is read.  The file's
 * order is kept when valid; otherwise a stable Kahn order; a cycle is an
 * error naming one node on it.
 */
static int topo_order(Loader *L, ArGraph *g)
{
	int n = g->nnodes, done = 0;
	int *indeg = ar_xcalloc((size_t)n, sizeof(int));
	int *order = ar_xmalloc((size_t)n * sizeof(int));
	int *users_start = ar_xcalloc((size_t)g->ntensors + 1, sizeof(int));
	int *users, *fill, *queue;
	bool sorted = true;
	int qh = 0, qt = 0, rc = AR_OK;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++) {
			int t = g->nodes[i].inputs[j];
			if (t >= 0 && g->tensors[t].producer >= 0) {
				indeg[i]++;
				users_start[t + 1]++;
				if (g->tensors[t].producer >= i)
					sorted = false;
			}
		}
	if (sorted) {
		free(indeg), free(order), free(users_start);
		return AR_OK;
	}
	for (int t = 0; t < g->ntensors; t++)
		users_start[t + 1] += users_start[t];
	users = ar_xmalloc((size_t)users_start[g->ntensors] * sizeof(int) + 1);
	fill = ar_xcalloc((size_t)g->ntensors, sizeof(int));
	for (int i = 0; i < n; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++) {
			int t = g->nodes[i].inputs[j];
			if (t >= 0 && g->tensors[t].producer >= 0)
				users[users_start[t] + fill[t]++] = i;
		}
	queue = ar_xmalloc((size_t)n * sizeof(int));
	for (int i = 0; i < n; i++)
		if (!indeg[i])
			queue[qt++] = i;
	/* A min-index pick would keep file order better; FIFO is stable enough
	 * for files that are only locally out of order. */
	while (qh < qt) {
		int v = queue[qh++];
		order[done++] = v;
		for (int j = 0; j < g->nodes[v].noutputs; j++) {
			int t = g->nodes[v].outputs[j];
			if (t < 0)
				continue;   /* omitted optional output */
			for (int k = users_start[t]; k < users_start[t + 1]; k++)
				if (--indeg[users[k]] == 0)
					queue[qt++] = users[k];
		}
	}
	if (done < n) {
		for (int i = 0; i < n; i++)
			if (indeg[i]) {
				rc = ar_fail(L->err, AR_EXIT_MODEL,
					     "graph '%s' has a cycle through "
					     "node '%s' (%s)", g->name,
					     g->nodes[i].name, g->nodes[i].op);
				break;
			}
	} else {
		ArNode *nodes = ar_xmalloc((size_t)n * sizeof *nodes);
		int *newpos = ar_xmalloc((size_t)n * sizeof(int));
		for (int i = 0; i < n; i++) {
			nodes[i] = g->nodes[order[i]];
			newpos[order[i]] = i;
		}
		memcpy(g->nodes, nodes, (size_t)n * sizeof *nodes);
		for (int t = 0; t < g->ntensors; t++)
			if (g->tensors[t].producer >= 0)
				g->tensors[t].producer =
					newpos[g->tensors[t].producer];
		free(nodes), free(newpos);
	}
	free(indeg), free(order), free(users_start), free(users), free(fill);
	free(queue);
	return rc;
}

static int add_unique(Loader *L, Scope *s, const char *name, const char *what)
{
	int id;
	if (!*name)
		return ar_fail(L->err, AR_EXIT_MODEL, "graph '%s': %s with an "
			       "empty name", s->g->name, what), -1;
	if (index_get(&s->ix, name) >= 0)
		return ar_fail(L->err, AR_EXIT_MODEL, "graph '%s': duplicate "
			       "name '%s' (%s)", s->g->name, name, what), -1;
	id = ar_graph_add_tensor(s->g, name);
	index_put(&s->ix, id);
	return id;
}

/* Initializers: weights, with their values when the file holds them. */
static int load_initializers(Loader *L, Scope *s, const Onnx__GraphProto *gp)
{
	int rc = AR_OK;
	for (size_t i = 0; i < gp->n_initializer && !rc; i++) {
		int id = add_unique(L, s, nz(gp->initializer[i]->name),
				    "initializer");
		if (id < 0)
			return L->err->code;
		s->g->tensors[id].kind = AR_TK_WEIGHT;
		rc = decode_tensor(L, gp->initializer[i], &s->g->tensors[id],
				   "initializer");
	}
	return rc;
}

/*
 * Graph inputs that are not initializers.  The top graph's get their
 * shapes from bind.c, all at once; a subgraph's are declarations only
 * (inference gives them their shapes from the node that runs it).
 */
static int load_inputs(Loader *L, Scope *s, const Onnx__GraphProto *gp)
{
	ArGraph *g = s->g;
	int rc = AR_OK;

	g->inputs = ar_xmalloc((gp->n_input + 1) * sizeof(int));
	if (g->depth == 0)
		L->inputs = ar_xcalloc(gp->n_input + 1, sizeof *L->inputs);
	for (size_t i = 0; i < gp->n_input && !rc; i++) {
		const char *name = nz(gp->input[i]->name);
		int id = index_get(&s->ix, name);
		if (id >= 0 && g->tensors[id].kind == AR_TK_WEIGHT)
			continue;   /* IR 3: initializers listed as inputs */
		id = add_unique(L, s, name, "graph input");
		if (id < 0)
			return L->err->code;
		g->tensors[id].kind = AR_TK_INPUT;
		g->inputs[g->ninputs++] = id;
		if (g->depth > 0) {
			declare(L, &g->tensors[id], gp->input[i]);
			continue;
		}
		L->inputs[L->ninputs].tensor = id;
		rc = load_input(L, &g->tensors[id], gp->input[i],
				&L->inputs[L->ninputs++], L->opt->max_seq > 0 ?
				cache_axis(L, gp, name) : -1);
	}
	if (!rc && g->depth == 0)
		rc = ar_bind_inputs(&L->bind, g, L->inputs, L->ninputs, L->err);
	if (!rc && g->depth == 0)
		rc = ar_bind_values(L->opt, g, L->err);
	return rc;
}

/*
 * "OP_I", cut to size - 1 characters as snprintf("%s_%zu") would cut it:
 * snprintf took a thousand instructions a name, 4% of loading a model
 * whose nodes have none (DenseNet-121's).
 */
static void auto_name(char *buf, size_t size, const char *op, size_t i)
{
	char digits[24];
	int nd = 0;
	size_t len = 0;
	assert(size > 0);
	do
		digits[nd++] = (char)('0' + i % 10);
	while (i /= 10);
	for (; *op && len + 1 < size; op++)
		buf[len++] = *op;
	if (len + 1 < size)
		buf[len++] = '_';
	while (nd && len + 1 < size)
		buf[len++] = digits[--nd];
	buf[len] = 0;
}

/* Pass 1 over the nodes: each node and its outputs, so that every name a
 * node (or a subgraph) reads exists before any read resolves. */
static int add_nodes(Loader *L, Scope *s, const Onnx__GraphProto *gp)
{
	ArGraph *g = s->g;
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		char autoname[32];
		int ni, *outs;
		ArNode *n;
		if (i + PREFETCH_AHEAD < gp->n_node)
			index_prefetch(&s->ix, gp->node[i + PREFETCH_AHEAD]->output,
				       gp->node[i + PREFETCH_AHEAD]->n_output);
		if (!np->op_type || !*np->op_type)
			return ar_fail(L->err, AR_EXIT_MODEL, "graph '%s': node "
				       "%zu has no op_type", g->name, i);
		/* Only for a node without a name: formatting one for every
		 * node was 4% of loading and planning a large graph. */
		if (!np->name || !*np->name)
			auto_name(autoname, sizeof autoname, np->op_type, i);
		ni = ar_graph_add_node(g, np->name && *np->name ? np->name :
				       autoname, np->op_type, nz(np->domain));
		n = &g->nodes[ni];
		n->opset = opset_of(L->model, n->domain);
		if (n->opset < 1 && ar_default_domain(n->domain))
			return ar_fail(L->err, AR_EXIT_MODEL, "node '%s' (%s): "
				       "the model imports no opset of the "
				       "default ONNX domain", n->name, n->op);
		if (n->opset < 0)
			return ar_fail(L->err, AR_EXIT_MODEL, "node '%s' (%s) is "
				       "in domain '%s', which the model does "
				       "not import", n->name, n->op, n->domain);
		outs = ar_xmalloc((np->n_output + 1) * sizeof(int));
		/* Set first, so the graph owns outs whatever happens next. */
		n->outputs = outs;
		n->noutputs = (int)np->n_output;
		for (size_t j = 0; j < np->n_output; j++) {
			const char *name = nz(np->output[j]);
			int id;
			if (!*name) {
				outs[j] = -1;   /* omitted optional output */
				continue;
			}
			id = index_get(&s->ix, name);
			if (id >= 0) {
				n->noutputs = (int)j;
				return ar_fail(L->err, AR_EXIT_MODEL,
					       "tensor '%s' is produced twice: "
					       "by node '%s' (%s) and by %s",
					       name, n->name, n->op,
					       g->tensors[id].producer >= 0 ?
					       g->nodes[g->tensors[id].producer].name
					       : "the graph's inputs or "
					       "initializers");
			}
			id = ar_graph_add_tensor(g, name);  /* nodes stay put */
			index_put(&s->ix, id);
			g->tensors[id].producer = ni;
			outs[j] = id;
		}
	}
	return AR_OK;
}

/* The outer-scope names node n's subgraphs read become inputs of n. */
static void add_captures(Loader *L, Scope *s, ArNode *n)
{
	for (int j = 0; j < n->nattrs; j++) {
		const ArGraph *sub = n->attrs[j].g;
		for (int k = 0; sub && k < sub->ncaptures; k++) {
			const char *name = sub->tensors[sub->captures[k]].name;
			int id = resolve(L, s, name);
			bool seen = false;
			for (int m = 0; m < n->ninputs; m++)
				seen |= n->inputs[m] == id;
			if (seen)
				continue;
			n->inputs = ar_xrealloc(n->inputs,
				(size_t)(n->ninputs + 1) * sizeof(int));
			n->inputs[n->ninputs++] = id;
		}
	}
}

/* Pass 2: attributes (subgraphs see every outer name), then inputs. */
static int link_nodes(Loader *L, Scope *s, const Onnx__GraphProto *gp)
{
	int rc = AR_OK;
	for (size_t i = 0; i < gp->n_node && !rc; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		ArNode *n = &s->g->nodes[i];
		if (i + PREFETCH_AHEAD < gp->n_node)
			index_prefetch(&s->ix, gp->node[i + PREFETCH_AHEAD]->input,
				       gp->node[i + PREFETCH_AHEAD]->n_input);
		/* Most nodes have none: no allocation for them. */
		n->attrs = np->n_attribute ?
			   ar_xcalloc(np->n_attribute, sizeof(ArAttr)) : NULL;
		for (size_t j = 0; j < np->n_attribute && !rc; j++) {
			n->nattrs++;
			rc = load_attr(L, s, n, &n->attrs[j], np->attribute[j]);
		}
		if (rc)
			return rc;
		n->inputs = ar_xmalloc((np->n_input + 1) * sizeof(int));
		n->ninputs = n->nexplicit = (int)np->n_input;
		for (size_t j = 0; j < np->n_input; j++) {
			const char *name = nz(np->input[j]);
			n->inputs[j] = *name ? resolve(L, s, name) : -1;
			if (*name && n->inputs[j] < 0)
				return ar_fail(L->err, AR_EXIT_MODEL,
					       "node '%s' (%s) reads tensor "
					       "'%s', which nothing produces",
					       n->name, n->op, name);
		}
		add_captures(L, s, n);
	}
	return rc;
}

static int load_outputs(Loader *L, Scope *s, const Onnx__GraphProto *gp)
{
	ArGraph *g = s->g;
	g->outputs = ar_xmalloc((gp->n_output + 1) * sizeof(int));
	for (size_t i = 0; i < gp->n_output; i++) {
		const char *name = nz(gp->output[i]->name);
		int id = resolve(L, s, name);
		if (id < 0)
			return ar_fail(L->err, AR_EXIT_MODEL, "graph output "
				       "'%s' is never produced", name);
		for (int j = 0; j < g->noutputs; j++)
			if (g->outputs[j] == id)
				return ar_fail(L->err, AR_EXIT_MODEL, "graph "
					       "output '%s' is listed twice",
					       name);
		if (g->tensors[id].kind == AR_TK_ACTIVATION)
			g->tensors[id].kind = AR_TK_OUTPUT;
		declare(L, &g->tensors[id], gp->output[i]);
		g->outputs[g->noutputs++] = id;
	}
	for (size_t i = 0; i < gp->n_value_info; i++) {
		int id = index_get(&s->ix, nz(gp->value_info[i]->name));
		if (id >= 0 && g->tensors[id].producer >= 0)
			declare(L, &g->tensors[id], gp->value_info[i]);
	}
	return AR_OK;
}

/* What topo_order promises: every node's inputs come from earlier nodes. */
static bool topo_sorted(const ArGraph *g)
{
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++) {
			int t = g->nodes[i].inputs[j];
			if (t >= 0 && g->tensors[t].producer >= i)
				return false;
		}
	return true;
}

/* Limits checked before a graph is built; counts its nodes. */
static int check_limits(Loader *L, const Onnx__GraphProto *gp, int depth)
{
	if (depth > L->max_depth)
		return ar_fail(L->err, AR_EXIT_MODEL, "subgraphs nested deeper "
			       "than %d", L->max_depth);
	L->nnodes_total += (int64_t)gp->n_node;
	if (L->nnodes_total > L->max_nodes)
		return ar_fail(L->err, AR_EXIT_MODEL, "model has more than %d "
			       "nodes (the limit; raise it with --max-nodes)",
			       L->max_nodes);
	if (gp->n_sparse_initializer)
		return ar_fail(L->err, AR_EXIT_MODEL, "graph '%s' has sparse "
			       "initializers, which are not supported",
			       nz(gp->name));
	return AR_OK;
}

/*
 * Room for the graph's nodes and named tensors at once: grown by doubling,
 * the arrays of a graph of a million nodes were copied (or moved) 14
 * times and left up to half their room unused.  Captures of outer
 * names, if any, grow them past this.
 */
static void reserve(ArGraph *g, const Onnx__GraphProto *gp)
{
	size_t nt = gp->n_initializer + gp->n_input;
	for (size_t i = 0; i < gp->n_node; i++)
		nt += gp->node[i]->n_output;
	assert(!g->tensors && !g->nodes);
	if (nt > INT_MAX || gp->n_node > INT_MAX)
		return;     /* past int: left to grow, and to the checks */
	g->captensors = (int)nt;
	g->tensors = ar_xmalloc((nt + 1) * sizeof *g->tensors);
	g->capnodes = (int)gp->n_node;
	g->nodes = ar_xmalloc((gp->n_node + 1) * sizeof *g->nodes);
}

/* One graph, pass by pass; *out is set (for freeing) even on failure. */
static int load_graph(Loader *L, const Onnx__GraphProto *gp, Scope *parent,
		      int depth, ArGraph **out)
{
	Scope s = {0};
	ArGraph *g;
	int rc;

	*out = NULL;
	if ((rc = check_limits(L, gp, depth)))
		return rc;
	g = ar_graph_new(nz(gp->name));
	g->depth = depth;
	g->parent = parent ? parent->g : NULL;
	g->opset = opset_of(L->model, "");
	g->ir_version = L->model->ir_version;
	if (!depth)
		load_meta(g, L->model);
	g->max_seq = L->opt->max_seq > 0 ? L->opt->max_seq : 0;
	s.g = g;
	s.parent = parent;
	reserve(g, gp);
	index_init(&s.ix, g, (size_t)g->captensors);
	*out = g;

	if (!(rc = load_initializers(L, &s, gp)) &&
	    !(rc = load_inputs(L, &s, gp)) &&
	    !(rc = add_nodes(L, &s, gp)) &&
	    !(rc = link_nodes(L, &s, gp)) &&
	    !(rc = load_outputs(L, &s, gp)))
		rc = topo_order(L, g);
	assert(rc || topo_sorted(g));
	free(s.ix.slot);
	return rc;
}

/*
 * protobuf-c unpacks nested messages by recursion without a depth limit:
 * under a megabyte of TypeProtos nested in each other overflows the stack.
 * So the bytes are walked first, guided by the same descriptors, and
 * refused past MAX_PROTO_DEPTH levels.  Subgraphs nested AR_DEFAULT_MAX_DEPTH
 * deep take about 60 levels.  Malformed bytes pass: unpack reports them.
 */
#define MAX_PROTO_DEPTH 256

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* False only when messages nest deeper than the limit. */
static bool nesting_ok(const ProtobufCMessageDescriptor *d, const uint8_t *p,
		       const uint8_t *end, int depth)
{
	uint64_t key, v;
	if (depth > MAX_PROTO_DEPTH)
		return false;
	while (p < end) {
		const ProtobufCFieldDescriptor *f;
		if (!read_varint(&p, end, &key))
			return true;
		switch (key & 7) {
		case 0:
			if (!read_varint(&p, end, &v))
				return true;
			break;
		case 1:
			if (end - p < 8)
				return true;
			p += 8;
			break;
		case 5:
			if (end - p < 4)
				return true;
			p += 4;
			break;
		case 2:
			if (!read_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return true;
			/* Each level takes at least two bytes (a key and a
			 * length) of its parent: v bytes nest at most v / 2
			 * levels, and a small node need not be walked. */
			if (depth + 1 + v / 2 <= MAX_PROTO_DEPTH) {
				p += v;
				break;
			}
			f = key >> 3 <= UINT32_MAX ?
			    protobuf_c_message_descriptor_get_field(d,
						(unsigned)(key >> 3)) : NULL;
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    !nesting_ok(f->descriptor, p, p + v, depth + 1))
				return false;
			p += v;
			break;
		default:
			return true;
		}
	}
	return true;
}

/* buf's model unpacked into arena, which the caller frees whatever the
 * outcome. */
static int unpack(const uint8_t *buf, size_t len, ArPbArena *arena,
		  Onnx__ModelProto **m, ArError *err)
{
	if (len == 0)
		return ar_fail(err, AR_EXIT_MODEL, "empty file");
	if (!nesting_ok(&onnx__model_proto__descriptor, buf, buf + len, 0))
		return ar_fail(err, AR_EXIT_MODEL, "not a usable ONNX model: "
			       "protobuf messages nested deeper than %d levels",
			       MAX_PROTO_DEPTH);
	*m = onnx__model_proto__unpack(&arena->alloc, len, buf);
	if (!*m)
		return ar_fail(err, AR_EXIT_MODEL, "not an ONNX model: the "
			       "protobuf is truncated or malformed");
	return AR_OK;
}

/* The IR of an unpacked model. */
static int load_model(const Onnx__ModelProto *m, const ArLoadOptions *opt,
		      ArGraph **out, ArError *err)
{
	static const ArLoadOptions defaults = {.dim_default = -1, .batch = -1};
	Loader L = {0};
	int rc;

	L.opt = opt ? opt : &defaults;
	L.err = err;
	L.max_nodes = L.opt->max_nodes ? L.opt->max_nodes : AR_DEFAULT_MAX_NODES;
	L.max_depth = L.opt->max_depth ? L.opt->max_depth : AR_DEFAULT_MAX_DEPTH;
	L.model = m;
	if (!m->graph)
		return ar_fail(err, AR_EXIT_MODEL, "not an ONNX model: no graph");
	if (!m->has_ir_version || m->ir_version < 3)
		return ar_fail(err, AR_EXIT_MODEL, "unsupported IR version %lld "
			       "(arenac reads IR 3 to 10)",
			       (long long)m->ir_version);
	if (m->ir_version > 10)
		ar_warn(&L.opt->diag, "IR version %lld is newer than arenac "
			"knows (10); reading it as 10",
			(long long)m->ir_version);
	ar_binder_init(&L.bind, L.opt, &L.opt->diag);
	rc = load_graph(&L, m->graph, NULL, 0, out);
	if (!rc)
		rc = ar_binder_check_used(&L.bind, *out, L.inputs, L.ninputs,
					  err);
	if (!rc && L.opt->max_seq > 0 && !L.ncaches)
		ar_warn(&L.opt->diag, "--max-seq %lld: no graph input is an "
			"attention op's KV cache (past_key, past_value, past)",
			(long long)L.opt->max_seq);
	if (rc) {
		ar_graph_free(*out);
		*out = NULL;
	}
	ar_binder_free(&L.bind);
	free(L.inputs);
	return rc;
}

int ar_load_onnx_buffer(const uint8_t *buf, size_t len,
			const ArLoadOptions *opt, ArGraph **out, ArError *err)
{
	ArPbArena arena;
	Onnx__ModelProto *m;
	int rc;

	*out = NULL;
	ar_pb_arena_init(&arena);
	rc = unpack(buf, len, &arena, &m, err);
	if (!rc)
		rc = load_model(m, opt, out, err);
	ar_pb_arena_free(&arena);
	return rc;
}

/*
 * A file that cannot be read is a file error (exit 1, like an output that
 * cannot be written); one that reads but is no usable model is exit 2.
 */
int ar_load_onnx(const char *path, const ArLoadOptions *opt, ArGraph **out,
		 ArError *err)
{
	int64_t limit = opt && opt->max_model_bytes ? opt->max_model_bytes :
			AR_DEFAULT_MAX_MODEL_BYTES;
	char a[AR_NUMFMT_LEN], b[AR_NUMFMT_LEN];
	FILE *f = fopen(path, "rb");
	struct stat st;
	ArPbArena arena;
	Onnx__ModelProto *m;
	uint8_t *buf;
	size_t size;
	int rc;

	*out = NULL;
	if (!f)
		return ar_fail(err, AR_EXIT_USAGE, "cannot open: %s",
			       strerror(errno));
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		bool dir = S_ISDIR(st.st_mode);
		fclose(f);
		return ar_fail(err, AR_EXIT_USAGE, "%s, not a model file",
			       dir ? "is a directory" : "cannot read: not a "
			       "regular file");
	}
	if (st.st_size > limit)
		return fclose(f), ar_fail(err, AR_EXIT_MODEL, "file is %s bytes, "
					  "above the limit of %s "
					  "(--max-model-bytes)",
					  ar_fmt_count(a, st.st_size),
					  ar_fmt_count(b, limit));
	size = (size_t)st.st_size;
	buf = ar_xmalloc(size);
	if (fread(buf, 1, size, f) != size) {
		const char *why = ferror(f) ? strerror(errno) :
				  "the file shrank while it was read";
		fclose(f);
		free(buf);
		return ar_fail(err, AR_EXIT_USAGE, "cannot read: %s", why);
	}
	fclose(f);
	/* The unpacked model holds copies of all it needs (the raw data
	 * too), so the file's bytes go before the IR is built beside it:
	 * 40 MB less at the peak for a graph of a million nodes. */
	ar_pb_arena_init(&arena);
	rc = unpack(buf, size, &arena, &m, err);
	free(buf);
	if (!rc)
		rc = load_model(m, opt, out, err);
	ar_pb_arena_free(&arena);
	return rc;
}
