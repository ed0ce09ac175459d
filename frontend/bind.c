/*
 * bind.c — numbers for the graph inputs' dims, from --dim, --input-shape,
 * --batch and --dim-default (the rules are in load.h).
 *
 * A symbolic name means one number wherever it appears, so every source
 * that fixes a name goes into one table first: --dim NAME=V, the names an
 * --input-shape meets along its input, and the names --batch meets at
 * axis 0.  Two sources giving one name different numbers is an error
 * naming both, before any input is bound; the inputs are then bound in
 * one pass that collects every dim still without a number, so the user
 * learns them all from one run.
 */
#include "bind.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ArNamedDim.source below 0; 0 and up index --dim.  An explicit --dim
 * sorts first among equal names, so it is what a lookup meets first. */
enum { SRC_BATCH = -2, SRC_SHAPE = -1 };

/*
 * Appends to a message list in buf[cap]; once it is full the list ends in
 * "..." and further items are dropped (false).
 */
static bool appendf(char *buf, size_t cap, size_t *k, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool appendf(char *buf, size_t cap, size_t *k, const char *fmt, ...)
{
	va_list ap;
	int m;
	if (*k >= cap)
		return false;
	va_start(ap, fmt);
	m = vsnprintf(buf + *k, cap - *k, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= cap - *k) {
		memcpy(buf + cap - 4, "...", 4);
		*k = cap;
		return false;
	}
	*k += (size_t)m;
	return true;
}

bool ar_parse_dims(const char *s, int *rank, int64_t dims[AR_MAX_RANK])
{
	*rank = 0;
	if (!strcmp(s, "scalar"))
		return true;
	for (;;) {
		char *end;
		long long v;
		if (*s < '0' || *s > '9' || *rank == AR_MAX_RANK)
			return false;
		v = strtoll(s, &end, 10);
		if (v <= 0 || v >= (1LL << 62))
			return false;
		dims[(*rank)++] = v;
		if (!*end)
			return true;
		if (*end != 'x')
			return false;
		s = end + 1;
	}
}

void ar_binder_init(ArBinder *b, const ArLoadOptions *opt, const ArDiag *d)
{
	memset(b, 0, sizeof *b);
	b->opt = opt;
	b->diag = d;
	b->dim_used = ar_xcalloc((size_t)opt->ndims + 1, sizeof *b->dim_used);
}

void ar_binder_free(ArBinder *b)
{
	free(b->names);
	free(b->dim_used);
	memset(b, 0, sizeof *b);
}

/* "x=1x3x224x224", "x=scalar": an --input-shape as the user wrote it. */
static const char *shape_text(const ArInputShape *x, char *buf, size_t n)
{
	size_t k = 0;
	appendf(buf, n, &k, "%s=%s", x->name, x->rank ? "" : "scalar");
	for (int i = 0; i < x->rank; i++)
		appendf(buf, n, &k, "%s%lld", i ? "x" : "",
			(long long)x->dims[i]);
	return buf;
}

/* "--dim N=2", "--input-shape x=1x3", "--batch 4": who said so. */
static const char *source_text(const ArBinder *b, const ArNamedDim *d,
			       char *buf, size_t n)
{
	char text[200];
	if (d->source >= 0)
		snprintf(buf, n, "--dim %s=%lld", d->name,
			 (long long)b->opt->dims[d->source].value);
	else if (d->source == SRC_SHAPE)
		snprintf(buf, n, "--input-shape %s",
			 shape_text(&b->opt->shapes[d->shape], text,
				    sizeof text));
	else
		snprintf(buf, n, "--batch %lld", (long long)b->opt->batch);
	return buf;
}

static int cmp_named(const void *a, const void *b)
{
	const ArNamedDim *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	/* --dim first (sources 0..), then --input-shape, then --batch. */
	if ((x->source >= 0) != (y->source >= 0))
		return x->source >= 0 ? -1 : 1;
	return x->source != y->source ? (x->source > y->source ? -1 : 1) :
	       (x->shape > y->shape) - (x->shape < y->shape);
}

static int cmp_name_key(const void *key, const void *elem)
{
	return strcmp(key, ((const ArNamedDim *)elem)->name);
}

/* The entry for name (one per name, the most explicit), or NULL. */
static const ArNamedDim *lookup(const ArBinder *b, const char *name)
{
	return b->nnames ? bsearch(name, b->names, (size_t)b->nnames,
				   sizeof *b->names, cmp_name_key) : NULL;
}

static void add_name(ArBinder *b, int *cap, const char *name, int64_t v,
		     int source, int shape)
{
	if (b->nnames == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		b->names = ar_xrealloc(b->names,
				       (size_t)*cap * sizeof *b->names);
	}
	b->names[b->nnames++] = (ArNamedDim){name, v, source, shape};
}

static const ArInputShape *shape_for(const ArBinder *b, const char *name)
{
	for (int i = 0; i < b->opt->nshapes; i++)
		if (!strcmp(b->opt->shapes[i].name, name))
			return &b->opt->shapes[i];
	return NULL;
}

/* "'x', 'y' and 'z'": the graph inputs, for a message. */
static void list_inputs(const ArGraph *g, const ArDeclShape *in, int n,
			char *buf, size_t cap)
{
	size_t k = 0;
	buf[0] = 0;
	for (int i = 0; i < n; i++)
		if (!appendf(buf, cap, &k, "%s'%s'", i == 0 ? "" :
			     i == n - 1 ? " and " : ", ",
			     g->tensors[in[i].tensor].name))
			return;
}

/* Every --input-shape names an input once and agrees with its fixed dims. */
static int check_shapes(const ArBinder *b, const ArGraph *g,
			const ArDeclShape *in, int n, ArError *err)
{
	for (int s = 0; s < b->opt->nshapes; s++) {
		const ArInputShape *x = &b->opt->shapes[s];
		const ArDeclShape *d = NULL;
		char names[256], text[200];
		shape_text(x, text, sizeof text);
		for (int i = 0; i < n && !d; i++)
			if (!strcmp(g->tensors[in[i].tensor].name, x->name))
				d = &in[i];
		if (shape_for(b, x->name) != x)
			return ar_fail(err, AR_EXIT_USAGE, "--input-shape %s: "
				       "input '%s' is given a shape twice",
				       text, x->name);
		if (!d) {
			list_inputs(g, in, n, names, sizeof names);
			return ar_fail(err, AR_EXIT_USAGE, "--input-shape %s: "
				       "the model has no graph input '%s' (its "
				       "inputs: %s)", text, x->name,
				       n ? names : "none");
		}
		if (d->rank != x->rank)
			return ar_fail(err, AR_EXIT_USAGE, "--input-shape %s "
				       "gives %d dims, but graph input '%s' has "
				       "rank %d", text, x->rank, x->name,
				       d->rank);
		for (int a = 0; a < d->rank; a++)
			if (d->dims[a].kind == AR_DIM_FIXED &&
			    d->dims[a].value != x->dims[a])
				return ar_fail(err, AR_EXIT_USAGE,
					       "--input-shape %s gives axis %d "
					       "the size %lld, but graph input "
					       "'%s' fixes it at %lld", text,
					       a, (long long)x->dims[a],
					       x->name,
					       (long long)d->dims[a].value);
	}
	return AR_OK;
}

/*
 * The name table: --dim, then the names along each --input-shape, then
 * the names --batch meets at axis 0 of the other inputs.  Sorted, so two
 * sources of one name sit side by side and must agree.
 */
static int build_names(ArBinder *b, const ArGraph *g, const ArDeclShape *in,
		       int n, ArError *err)
{
	const ArLoadOptions *o = b->opt;
	int cap = 0, k = 0;

	for (int i = 0; i < o->ndims; i++)
		add_name(b, &cap, o->dims[i].name, o->dims[i].value, i, 0);
	for (int i = 0; i < n; i++) {
		const ArInputShape *x = shape_for(b, g->tensors[in[i].tensor].name);
		for (int a = 0; x && a < in[i].rank; a++)
			if (in[i].dims[a].kind == AR_DIM_NAMED)
				add_name(b, &cap, in[i].dims[a].name,
					 x->dims[a], SRC_SHAPE,
					 (int)(x - o->shapes));
		if (!x && o->batch > 0 && in[i].rank > 0 &&
		    in[i].dims[0].kind == AR_DIM_NAMED)
			add_name(b, &cap, in[i].dims[0].name, o->batch,
				 SRC_BATCH, 0);
	}
	if (b->nnames)
		qsort(b->names, (size_t)b->nnames, sizeof *b->names, cmp_named);
	for (int i = 1; i < b->nnames; i++) {
		const ArNamedDim *p = &b->names[i - 1], *q = &b->names[i];
		char s1[300], s2[300];
		if (strcmp(p->name, q->name) || p->value == q->value)
			continue;
		return ar_fail(err, AR_EXIT_USAGE, "%s and %s disagree on the "
			       "size of dim '%s'",
			       source_text(b, p, s1, sizeof s1),
			       source_text(b, q, s2, sizeof s2), p->name);
	}
	/* They agree: one entry per name, the most explicit, for bsearch. */
	for (int i = 0; i < b->nnames; i++)
		if (k == 0 || strcmp(b->names[k - 1].name, b->names[i].name))
			b->names[k++] = b->names[i];
	b->nnames = k;
	return AR_OK;
}

/* A symbolic or unnamed dim's number, -1 when nothing binds it. */
static int64_t bind_free_dim(ArBinder *b, const ArDeclDim *d, int axis)
{
	if (d->kind == AR_DIM_NAMED) {
		int64_t v = ar_bind_declared(b, d);
		if (v >= 0)
			return v;
	} else if (axis == 0 && b->opt->batch > 0) {
		return b->opt->batch;
	}
	return b->opt->dim_default;
}

/* Collects the unbound dims into one message. */
typedef struct Unbound {
	int count;
	char list[360];
	size_t len;
	const char *first_input, *first_name;
	int first_axis;
	bool any_axis0;         /* an unbound dim is some input's axis 0 */
} Unbound;

static void note_unbound(Unbound *u, const char *input, const ArDeclDim *d,
			 int axis)
{
	bool named = d->kind == AR_DIM_NAMED;
	u->any_axis0 = u->any_axis0 || axis == 0;
	if (u->count++ == 0) {
		u->first_input = input;
		u->first_name = named ? d->name : NULL;
		u->first_axis = axis;
	}
	appendf(u->list, sizeof u->list, &u->len, "%s%s%s%s (input '%s', "
		"axis %d)", u->count > 1 ? ", " : "", named ? "'" : "unnamed",
		named ? d->name : "", named ? "'" : "", input, axis);
}

static int unbound_error(const Unbound *u, ArError *err)
{
	/* A leading batch axis is what --batch binds. */
	const char *batch = u->first_axis == 0 ? ", --batch N" : "";
	if (u->count == 1 && u->first_name)
		return ar_fail(err, AR_EXIT_MODEL, "graph input '%s' has "
			       "unbound symbolic dim '%s' at axis %d; bind it "
			       "with --dim %s=VALUE, --input-shape %s=DIMS%s or "
			       "--dim-default VALUE", u->first_input,
			       u->first_name, u->first_axis, u->first_name,
			       u->first_input, batch);
	if (u->count == 1)
		return ar_fail(err, AR_EXIT_MODEL, "graph input '%s' has an "
			       "unnamed unknown dim at axis %d; bind it with "
			       "--input-shape %s=DIMS%s or --dim-default VALUE",
			       u->first_input, u->first_axis, u->first_input,
			       batch);
	return ar_fail(err, AR_EXIT_MODEL, "the graph inputs have %d unbound "
		       "dims: %s; bind them with --dim NAME=VALUE, "
		       "--input-shape INPUT=DIMS%s or --dim-default VALUE",
		       u->count, u->list, u->any_axis0 ? ", --batch N" : "");
}

/* A fixed dim; --batch replaces a leading 1 and warns about others. */
static int64_t bind_fixed_dim(ArBinder *b, const char *input, int64_t v,
			      int axis)
{
	int64_t batch = b->opt->batch;
	if (axis != 0 || batch <= 0 || v == batch || v < 0)
		return v;
	if (v == 1)
		return batch;
	ar_warn(b->diag, "graph input '%s' has a fixed size of %lld at axis 0, "
		"not a batch: --batch %lld leaves it (give its whole shape "
		"with --input-shape %s=DIMS)", input, (long long)v,
		(long long)batch, input);
	return v;
}

int ar_bind_inputs(ArBinder *b, ArGraph *g, const ArDeclShape *in, int n,
		   ArError *err)
{
	Unbound u = {0};
	int rc;

	if ((rc = check_shapes(b, g, in, n, err)) ||
	    (rc = build_names(b, g, in, n, err)))
		return rc;
	for (int i = 0; i < n; i++) {
		ArTensor *t = &g->tensors[in[i].tensor];
		const ArInputShape *x = shape_for(b, t->name);
		t->rank = in[i].rank;
		for (int a = 0; a < in[i].rank; a++) {
			const ArDeclDim *d = &in[i].dims[a];
			int64_t v;
			if (d->kind == AR_DIM_NAMED)
				(void)ar_bind_declared(b, d); /* marks --dim used */
			if (x)
				v = x->dims[a];
			else if (d->kind == AR_DIM_FIXED)
				v = bind_fixed_dim(b, t->name, d->value, a);
			else
				v = bind_free_dim(b, d, a);
			if (d->kind == AR_DIM_FIXED && v < 0)
				return ar_fail(err, AR_EXIT_MODEL, "graph input "
					       "'%s' has negative dim %lld at "
					       "axis %d", t->name,
					       (long long)v, a);
			if (v < 0)
				note_unbound(&u, t->name, d, a);
			t->dims[a] = v;
		}
	}
	/* A --dim that matched nothing is the likelier mistake: its message
	 * lists the names there are. */
	if (u.count && (rc = ar_binder_check_used(b, g, in, n, err)))
		return rc;
	if (u.count)
		return unbound_error(&u, err);
	for (int i = 0; i < n; i++)
		if ((rc = ar_tensor_set_bytes(&g->tensors[in[i].tensor], err)))
			return rc;
	return AR_OK;
}

int64_t ar_bind_declared(ArBinder *b, const ArDeclDim *d)
{
	const ArNamedDim *e;
	if (d->kind == AR_DIM_FIXED)
		return d->value;
	if (d->kind != AR_DIM_NAMED || !(e = lookup(b, d->name)))
		return -1;
	if (e->source >= 0)
		b->dim_used[e->source] = true;
	return e->value;
}

/* "'N' (input 'x', axis 0), ...": the names the inputs have, each once. */
static void list_names(const ArGraph *g, const ArDeclShape *in, int n,
		       char *buf, size_t cap)
{
	const char *listed[32];
	int nlisted = 0;
	size_t k = 0;
	buf[0] = 0;
	for (int i = 0; i < n; i++)
		for (int a = 0; a < in[i].rank; a++) {
			const ArDeclDim *d = &in[i].dims[a];
			bool seen = false;
			if (d->kind != AR_DIM_NAMED)
				continue;
			for (int j = 0; j < nlisted && !seen; j++)
				seen = !strcmp(listed[j], d->name);
			if (seen)
				continue;
			if (nlisted == 32) {
				appendf(buf, cap, &k, ", ...");
				return;
			}
			if (!appendf(buf, cap, &k, "%s'%s' (input '%s', axis "
				     "%d)", nlisted ? ", " : "", d->name,
				     g->tensors[in[i].tensor].name, a))
				return;
			listed[nlisted++] = d->name;
		}
}

int ar_binder_check_used(const ArBinder *b, const ArGraph *g,
			 const ArDeclShape *in, int n, ArError *err)
{
	for (int i = 0; i < b->opt->ndims; i++) {
		const ArDimBinding *d = &b->opt->dims[i];
		char names[300];
		bool used = false;
		/* A --dim given twice counts as used once either copy is. */
		for (int j = 0; j < b->opt->ndims && !used; j++)
			used = b->dim_used[j] &&
			       !strcmp(b->opt->dims[j].name, d->name);
		if (used)
			continue;
		list_names(g, in, n, names, sizeof names);
		return ar_fail(err, AR_EXIT_USAGE, "--dim %s=%lld: the model has "
			       "no dim named '%s'; %s%s", d->name,
			       (long long)d->value, d->name, names[0] ?
			       "its graph inputs have " :
			       "its graph inputs have no symbolic dims", names);
	}
	return AR_OK;
}
