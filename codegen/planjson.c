/*
 * planjson.c — arenac's JSON report read back into a Graph and a Plan.
 *
 * The report is the stable interface (json.c): this reads the fields it
 * documents and checks what the pictures rely on, since the file may be
 * old, edited or not a report at all: names unique and resolved, each
 * tensor made by one step at most, lifetimes inside the steps, offsets and
 * sizes inside the arena (or the tensor's memory region).
 */
#include "planjson.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsonread.h"

#define REPORT_MAX_BYTES (1LL << 30)
#define SIZE_MAX_BYTES (1LL << 62)

typedef struct Reader {
	const char *path;
	ArError *err;
	ArPlanReport *r;
	struct Name { const char *name; int id; } *names;
	int nregions;
} Reader;

static int bad(Reader *rd, const char *what, int index, const char *field)
{
	if (index >= 0)
		return ar_fail(rd->err, AR_EXIT_USAGE, "%s: not an arenac plan "
			       "report: %s %d: '%s' %s", rd->path, what, index,
			       field, "missing or wrong");
	return ar_fail(rd->err, AR_EXIT_USAGE, "%s: not an arenac plan report: "
		       "'%s' missing or wrong", rd->path, field);
}

static char *slurp(const char *path, size_t *len, ArError *err)
{
	struct stat st;
	FILE *f;
	char *buf;

	if (stat(path, &st) != 0) {
		ar_fail(err, AR_EXIT_USAGE, "%s: cannot read: %s", path,
			strerror(errno));
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		ar_fail(err, AR_EXIT_USAGE, "%s is a directory", path);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > REPORT_MAX_BYTES) {
		ar_fail(err, AR_EXIT_USAGE, "%s: not a plan report (%s)", path,
			S_ISREG(st.st_mode) ? "over 1 GiB" : "not a file");
		return NULL;
	}
	if (!(f = fopen(path, "rb"))) {
		ar_fail(err, AR_EXIT_USAGE, "%s: cannot read: %s", path,
			strerror(errno));
		return NULL;
	}
	buf = ar_xmalloc((size_t)st.st_size + 1);
	*len = fread(buf, 1, (size_t)st.st_size, f);
	if (ferror(f) || *len != (size_t)st.st_size) {
		ar_fail(err, AR_EXIT_USAGE, "%s: read failed", path);
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static bool is_int(const ArJson *v, int64_t lo, int64_t hi)
{
	return v && v->type == AR_JSON_INT && v->i >= lo && v->i <= hi;
}

static bool is_null(const ArJson *v)
{
	return !v || v->type == AR_JSON_NULL;
}

static const char *str_or(const ArJson *obj, const char *key, const char *dflt)
{
	const ArJson *v = ar_json_get(obj, key);
	return v && v->type == AR_JSON_STRING ? v->s : dflt;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct Name *)a)->name,
		      ((const struct Name *)b)->name);
}

/* Tensor id of a name, -1 if none. */
static int find(const Reader *rd, const char *name)
{
	struct Name key = {name, -1}, *hit;
	hit = bsearch(&key, rd->names, (size_t)rd->r->g->ntensors,
		      sizeof key, cmp_name);
	return hit ? hit->id : -1;
}

/* A tensor reference: a name of the table, or null (-1) where allowed. */
static bool ref(const Reader *rd, const ArJson *v, bool null_ok, int *id)
{
	if (is_null(v)) {
		*id = -1;
		return null_ok;
	}
	return v->type == AR_JSON_STRING && (*id = find(rd, v->s)) >= 0;
}

static int by_name(const char *name, const char *(*fn)(int), int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(name, fn(i)))
			return i;
	return -1;
}

static const char *dtype_name(int i) { return ar_dtype_name((ArDType)i); }
static const char *kind_name(int i) { return ar_kind_name((ArTensorKind)i); }
static const char *phase_name(int i) { return ar_phase_name((ArPhase)i); }

static int tensor(Reader *rd, const ArJson *v, int i)
{
	ArGraph *g = rd->r->g;
	const ArJson *name = ar_json_get(v, "name"), *shape, *bytes;
	ArTensor *t;
	int kind, id;

	if (!name || name->type != AR_JSON_STRING)
		return bad(rd, "tensor", i, "name");
	/* Added first: adding moves the table. */
	id = ar_graph_add_tensor(g, name->s);
	t = &g->tensors[id];
	t->dtype = (ArDType)by_name(str_or(v, "dtype", ""), dtype_name,
				    AR_DT_COUNT);
	if ((int)t->dtype < 0)
		t->dtype = AR_DT_UNDEFINED;
	if ((kind = by_name(str_or(v, "kind", ""), kind_name, 5)) < 0)
		return bad(rd, "tensor", i, "kind");
	t->kind = (ArTensorKind)kind;
	shape = ar_json_get(v, "shape");
	if (shape && shape->type == AR_JSON_ARRAY) {
		if (shape->n > AR_MAX_RANK)
			return bad(rd, "tensor", i, "shape");
		for (int d = 0; d < shape->n; d++) {
			if (!is_int(&shape->items[d], 0, SIZE_MAX_BYTES))
				return bad(rd, "tensor", i, "shape");
			t->dims[d] = shape->items[d].i;
		}
		t->rank = shape->n;
	} else if (!is_null(shape)) {
		return bad(rd, "tensor", i, "shape");
	}
	bytes = ar_json_get(v, "bytes");
	if (is_int(bytes, 0, SIZE_MAX_BYTES))
		t->bytes = bytes->i;
	else if (!is_null(bytes))
		return bad(rd, "tensor", i, "bytes");
	return AR_OK;
}

static int step(Reader *rd, const ArJson *v, int i)
{
	ArGraph *g = rd->r->g;
	const char *names[] = {"inputs", "outputs"};
	const ArJson *io[2] = {NULL, NULL};
	int *ids[2] = {NULL, NULL}, node, phase, rc = AR_OK;

	if (v->type != AR_JSON_OBJECT || !str_or(v, "name", NULL) ||
	    !str_or(v, "op", NULL))
		return bad(rd, "step", i, "name");
	if ((phase = by_name(str_or(v, "phase", "forward"), phase_name, 4)) < 0)
		return bad(rd, "step", i, "phase");
	node = ar_graph_add_node(g, str_or(v, "name", NULL),
				 str_or(v, "op", NULL), str_or(v, "domain", ""));
	g->nodes[node].phase = (ArPhase)phase;
	for (int k = 0; k < 2 && !rc; k++) {
		io[k] = ar_json_get(v, names[k]);
		if (!io[k] || io[k]->type != AR_JSON_ARRAY) {
			rc = bad(rd, "step", i, names[k]);
			break;
		}
		ids[k] = ar_xmalloc(((size_t)io[k]->n + 1) * sizeof *ids[k]);
		for (int j = 0; j < io[k]->n && !rc; j++)
			if (!ref(rd, &io[k]->items[j], true, &ids[k][j]))
				rc = bad(rd, "step", i, names[k]);
	}
	if (!rc) {
		ar_node_set_io(&g->nodes[node], ids[0], io[0]->n, ids[1],
			       io[1]->n);
		for (int j = 0; j < io[1]->n && !rc; j++) {
			ArTensor *t = ids[1][j] >= 0 ? &g->tensors[ids[1][j]] :
				      NULL;
			if (t && t->producer >= 0)
				rc = bad(rd, "step", i, "outputs");
			else if (t)
				t->producer = node;
		}
	}
	free(ids[0]), free(ids[1]);
	return rc;
}

static int slot(Reader *rd, const ArJson *v, int t)
{
	ArPlan *p = rd->r->p;
	ArSlot *s = &p->slots[t];
	const ArJson *off = ar_json_get(v, "offset"),
		     *first = ar_json_get(v, "first_step"),
		     *last = ar_json_get(v, "last_step");
	int64_t bytes = rd->r->g->tensors[t].bytes, room;

	*s = (ArSlot){.first = -1, .last = -1, .offset = -1, .alias_of = -1,
		      .inplace_of = -1, .root = -1, .io = -1};
	if (is_null(off))
		return AR_OK;
	s->planned = true;
	if (!is_int(off, 0, SIZE_MAX_BYTES) || bytes < 0)
		return bad(rd, "tensor", t, "offset");
	s->offset = off->i;
	if (!is_int(first, 0, p->nsteps - 1) ||
	    !is_int(last, first->i, p->nsteps - 1))
		return bad(rd, "tensor", t, "first_step");
	s->first = (int)first->i;
	s->last = (int)last->i;
	if (rd->nregions > 0) {
		const char *region = str_or(v, "region", "");
		s->region = -1;
		for (int r = 0; r < rd->nregions; r++)
			if (!strcmp(region, p->regions[r].name))
				s->region = r;
		if (s->region < 0)
			return bad(rd, "tensor", t, "region");
	}
	room = ar_plan_region_bytes(p, s->region);
	if (s->offset > room || bytes > room - s->offset)
		return ar_fail(rd->err, AR_EXIT_USAGE, "%s: not an arenac plan "
			       "report: tensor %d lies past the end of its "
			       "arena", rd->path, t);
	if (!ref(rd, ar_json_get(v, "alias_of"), true, &s->alias_of) ||
	    !ref(rd, ar_json_get(v, "inplace_of"), true, &s->inplace_of))
		return bad(rd, "tensor", t, "alias_of");
	if (s->alias_of >= 0) {
		const ArJson *ao = ar_json_get(v, "alias_offset");
		s->alias_offset = is_int(ao, 0, SIZE_MAX_BYTES) ? ao->i : 0;
	}
	return AR_OK;
}

static int regions(Reader *rd, const ArJson *root)
{
	const ArJson *rs = ar_json_get(root, "regions");
	ArPlan *p = rd->r->p;

	if (is_null(rs))
		return AR_OK;
	if (rs->type != AR_JSON_ARRAY || rs->n > AR_MAX_TIERS)
		return bad(rd, "", -1, "regions");
	p->regions = ar_xcalloc((size_t)rs->n + 1, sizeof *p->regions);
	for (int r = 0; r < rs->n; r++) {
		const ArJson *x = &rs->items[r], *used = ar_json_get(x, "used_bytes");
		ArRegion *m = &p->regions[r];
		if (!str_or(x, "name", NULL) || !is_int(used, 0, SIZE_MAX_BYTES))
			return bad(rd, "region", r, "used_bytes");
		m->name = ar_xstrdup(str_or(x, "name", NULL));
		m->used_bytes = used->i;
		p->nregions = rd->nregions = r + 1;
	}
	return AR_OK;
}

static int plan(Reader *rd, const ArJson *root)
{
	ArPlanReport *r = rd->r;
	ArPlan *p = r->p;
	const ArJson *steps = ar_json_get(root, "steps"),
		     *tensors = ar_json_get(root, "tensors"),
		     *arena = ar_json_get(root, "arena_bytes"),
		     *lb = ar_json_get(root, "lower_bound_bytes"),
		     *align = ar_json_get(root, "alignment"),
		     *peak = ar_json_get(root, "peak_step"),
		     *opt = ar_json_get(root, "optimal");
	int rc = AR_OK;

	if (!tensors || tensors->type != AR_JSON_ARRAY)
		return bad(rd, "", -1, "tensors");
	if (!steps || steps->type != AR_JSON_ARRAY)
		return bad(rd, "", -1, "steps");
	if (!is_int(arena, 0, SIZE_MAX_BYTES))
		return bad(rd, "", -1, "arena_bytes");
	if (!is_int(align, 1, 1 << 30) || (align->i & (align->i - 1)))
		return bad(rd, "", -1, "alignment");
	p->arena_bytes = arena->i;
	p->lower_bound = is_int(lb, 0, SIZE_MAX_BYTES) ? lb->i : arena->i;
	p->align = align->i;
	p->optimal = opt && opt->type == AR_JSON_BOOL && opt->b;
	r->algorithm = ar_xstrdup(str_or(root, "algorithm", "none"));
	p->algorithm = r->algorithm;
	for (int i = 0; i < tensors->n && !rc; i++)
		rc = tensors->items[i].type == AR_JSON_OBJECT ?
		     tensor(rd, &tensors->items[i], i) : bad(rd, "tensor", i, "name");
	if (rc)
		return rc;
	rd->names = ar_xmalloc(((size_t)r->g->ntensors + 1) * sizeof *rd->names);
	for (int t = 0; t < r->g->ntensors; t++)
		rd->names[t] = (struct Name){r->g->tensors[t].name, t};
	qsort(rd->names, (size_t)r->g->ntensors, sizeof *rd->names, cmp_name);
	for (int t = 1; t < r->g->ntensors; t++)
		if (!strcmp(rd->names[t - 1].name, rd->names[t].name))
			return bad(rd, "tensor", rd->names[t].id, "name");
	for (int i = 0; i < steps->n && !rc; i++)
		rc = step(rd, &steps->items[i], i);
	if (rc || (rc = regions(rd, root)))
		return rc;
	p->nsteps = r->g->nnodes;
	p->steps = ar_xmalloc(((size_t)p->nsteps + 1) * sizeof *p->steps);
	for (int s = 0; s < p->nsteps; s++)
		p->steps[s] = s;
	if (!is_int(peak, -1, p->nsteps - 1))
		return bad(rd, "", -1, "peak_step");
	p->peak_step = (int)peak->i;
	p->ntensors = r->g->ntensors;
	p->slots = ar_xmalloc(((size_t)p->ntensors + 1) * sizeof *p->slots);
	for (int t = 0; t < p->ntensors; t++)
		p->slots[t] = (ArSlot){.first = -1, .last = -1, .offset = -1,
				       .alias_of = -1, .inplace_of = -1,
				       .root = -1, .io = -1};
	for (int t = 0; t < p->ntensors && !rc; t++)
		rc = slot(rd, &tensors->items[t], t);
	return rc;
}

int ar_read_plan_report(const char *path, ArPlanReport *r, ArError *err)
{
	Reader rd = {path, err, r, NULL, 0};
	ArJson root;
	char msg[160];
	size_t len = 0;
	char *text = slurp(path, &len, err);
	int rc;

	memset(r, 0, sizeof *r);
	if (!text)
		return AR_EXIT_USAGE;
	if (!ar_json_parse(text, len, &root, msg, sizeof msg)) {
		free(text);
		return ar_fail(err, AR_EXIT_USAGE, "%s: not JSON: %s", path, msg);
	}
	free(text);
	r->g = ar_graph_new("report");
	r->p = ar_xcalloc(1, sizeof *r->p);
	r->model = ar_xstrdup(str_or(&root, "model", ""));
	r->options = ar_xstrdup(str_or(&root, "options", ""));
	rc = root.type == AR_JSON_OBJECT ? plan(&rd, &root) :
	     bad(&rd, "", -1, "steps");
	free(rd.names);
	ar_json_free(&root);
	if (rc)
		ar_plan_report_free(r);
	return rc;
}

void ar_plan_report_free(ArPlanReport *r)
{
	ar_plan_free(r->p);
	ar_graph_free(r->g);
	free(r->model), free(r->options), free(r->algorithm);
	memset(r, 0, sizeof *r);
}
