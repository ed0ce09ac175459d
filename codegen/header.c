/*
 * header.c — the plan as a C header a firmware build can include.
 *
 * Everything an interpreter-style runtime needs besides its kernels and the
 * weights: the arena size and alignment, each tensor's place and lifetime,
 * the steps in order with their operands and attributes.  Tables are static
 * const (no link-time symbols, so several TUs may include the header) and
 * marked unused, so a program that reads one table still builds with
 * -Wall -Wextra -Werror.  Offsets and sizes are 32-bit: an arena past 4 GiB
 * is no firmware's, and is refused rather than truncated.
 *
 * A tiered plan (--memory) gets one arena per region, each with a section
 * hook so that the firmware's linker script can put it in its memory, and
 * a region column; its pointer macros take the regions' bases instead of
 * one arena, so code written for a single arena fails to build rather
 * than reading the wrong memory.  Without tiers the header is as before.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "sanitize.h"

/* ISO C99 compilers need only take string literals this long. */
#define MAX_LITERAL 4000
/* Tensor-valued attributes larger than this are the model's data, which
 * the header leaves out like the weights. */
#define MAX_TENSOR_ATTR 64

typedef struct Hdr {
	FILE *f;
	const ArGraph *g;
	const ArPlan *p;
	char *up;           /* prefix for macros */
	const char *lo;     /* prefix for other identifiers */
	int nreg;           /* regions of a tiered plan; 0 without tiers */
	char **rup, **rlo;  /* region names as macro and identifier parts */
} Hdr;

static void set_case(char *s, int upper)
{
	for (; *s; s++)
		if (upper && *s >= 'a' && *s <= 'z')
			*s -= 'a' - 'A';
		else if (!upper && *s >= 'A' && *s <= 'Z')
			*s += 'a' - 'A';
}

/*
 * Region names become parts of macro names, so they are sanitised and
 * upper-cased before collisions are resolved: "sram" and "SRAM" are two
 * memories but one macro.  The first region keeps the name, later ones
 * get _2, _3, ... in region order.
 */
static void region_idents(Hdr *h)
{
	char **names = ar_xmalloc(((size_t)h->nreg + 1) * sizeof *names);

	for (int r = 0; r < h->nreg; r++) {
		names[r] = ar_xstrdup(h->p->regions[r].name);
		set_case(names[r], 1);
	}
	h->rup = ar_c_idents_unique((const char *const *)names, h->nreg,
				    "REGION");
	h->rlo = ar_xmalloc(((size_t)h->nreg + 1) * sizeof *h->rlo);
	for (int r = 0; r < h->nreg; r++) {
		h->rlo[r] = ar_xstrdup(h->rup[r]);
		set_case(h->rlo[r], 0);
	}
	ar_strv_free(names, h->nreg);
}

static void put_str(FILE *f, const char *s)
{
	char buf[MAX_LITERAL + 1];
	snprintf(buf, sizeof buf, "%s", s);
	ar_c_str(f, buf);
}

static void put_i64(FILE *f, int64_t v)
{
	if (v == INT64_MIN)
		fputs("(-INT64_C(9223372036854775807) - 1)", f);
	else if (v >= INT32_MIN && v <= INT32_MAX)
		fprintf(f, "%lld", (long long)v);
	else
		fprintf(f, "INT64_C(%lld)", (long long)v);
}

/* The shortest text that reads back as the same float, always with a
 * point or exponent so the f suffix is valid. */
static void put_f32(FILE *f, float v)
{
	char buf[40];
	if (isnan(v)) {
		fputs("NAN", f);
		return;
	}
	if (isinf(v)) {
		fputs(v < 0 ? "-HUGE_VALF" : "HUGE_VALF", f);
		return;
	}
	snprintf(buf, sizeof buf, "%.9g", v);
	fputs(buf, f);
	if (!strpbrk(buf, ".e"))
		fputs(".0", f);
	fputc('f', f);
}

/* Numeric values of a small tensor attribute: integers into ints, floats
 * into floats; the count, or 0 when they are left out. */
static int tensor_attr_values(const ArTensor *t, int64_t *ints, float *floats)
{
	int64_t n = ar_numel(t);
	if (!t->data || n < 0 || n > MAX_TENSOR_ATTR)
		return 0;
	for (int64_t i = 0; i < n; i++) {
		const void *d = t->data;
		switch (t->dtype) {
		case AR_DT_FLOAT: floats[i] = ((const float *)d)[i]; break;
		case AR_DT_DOUBLE: floats[i] = (float)((const double *)d)[i]; break;
		case AR_DT_INT8: ints[i] = ((const int8_t *)d)[i]; break;
		case AR_DT_UINT8: ints[i] = ((const uint8_t *)d)[i]; break;
		case AR_DT_BOOL: ints[i] = ((const uint8_t *)d)[i]; break;
		case AR_DT_INT16: ints[i] = ((const int16_t *)d)[i]; break;
		case AR_DT_UINT16: ints[i] = ((const uint16_t *)d)[i]; break;
		case AR_DT_INT32: ints[i] = ((const int32_t *)d)[i]; break;
		case AR_DT_UINT32: ints[i] = ((const uint32_t *)d)[i]; break;
		case AR_DT_INT64: ints[i] = ((const int64_t *)d)[i]; break;
		case AR_DT_UINT64: ints[i] = (int64_t)((const uint64_t *)d)[i]; break;
		default: return 0;
		}
	}
	return (int)n;
}

static int is_float_dtype(ArDType dt)
{
	return dt == AR_DT_FLOAT || dt == AR_DT_DOUBLE;
}

/* Values an attribute contributes to the int, float and string pools. */
static void attr_counts(const ArAttr *a, int *ni, int *nf, int *ns)
{
	int64_t iv[MAX_TENSOR_ATTR];
	float fv[MAX_TENSOR_ATTR];
	*ni = *nf = *ns = 0;
	switch (a->type) {
	case AR_ATTR_INT: *ni = 1; break;
	case AR_ATTR_INTS: *ni = a->nints; break;
	case AR_ATTR_FLOAT: *nf = 1; break;
	case AR_ATTR_FLOATS: *nf = a->nfloats; break;
	case AR_ATTR_STRING: *ns = 1; break;
	case AR_ATTR_TENSOR:
		if (is_float_dtype(a->t->dtype))
			*nf = tensor_attr_values(a->t, iv, fv);
		else
			*ni = tensor_attr_values(a->t, iv, fv);
		break;
	default: break;
	}
}

/* t's buffer through alias_of links only: an in-place output is computed,
 * not a view, so it starts a buffer of its own here. */
static int alias_root(const ArPlan *p, int t)
{
	for (int hops = 0; p->slots[t].alias_of >= 0 && hops < p->ntensors;
	     hops++)
		t = p->slots[t].alias_of;
	return t;
}

/* Output o only names bytes of input i (a Reshape, a Split slice): it
 * aliases into i's buffer and lies inside i.  A Concat input written in
 * place aliases too, but into a later buffer, and is not a view. */
static int is_view(const Hdr *h, int o, int i)
{
	const ArSlot *so = &h->p->slots[o], *si = &h->p->slots[i];
	return so->alias_of >= 0 && si->planned &&
	       alias_root(h->p, o) == alias_root(h->p, i) &&
	       so->offset >= si->offset &&
	       so->offset + h->g->tensors[o].bytes <=
	       si->offset + h->g->tensors[i].bytes;
}

static int step_noop(const Hdr *h, const ArNode *n)
{
	const ArSlot *s = h->p->slots;
	int views = 1, slices = n->noutputs == 1 && n->nexplicit > 0;

	/* Every output a view of an input ... */
	for (int j = 0; j < n->noutputs; j++) {
		int any = 0;
		for (int k = 0; n->outputs[j] >= 0 && k < n->nexplicit; k++)
			any |= n->inputs[k] >= 0 &&
			       is_view(h, n->outputs[j], n->inputs[k]);
		views &= any;
	}
	/* ... or every input already written where the one output wants it
	 * (an elided Concat). */
	for (int j = 0; slices && j < n->nexplicit; j++)
		if (n->inputs[j] < 0 ||
		    s[n->inputs[j]].alias_of != n->outputs[0])
			slices = 0;
	return n->noutputs > 0 && (views || slices);
}

static int check_limits(const Hdr *h, ArError *err)
{
	const ArGraph *g = h->g;
	if (!h->nreg && h->p->arena_bytes >= UINT32_MAX)
		return ar_fail(err, AR_EXIT_USAGE, "--header: the arena of "
			       "%lld bytes does not fit the header's 32-bit "
			       "offsets", (long long)h->p->arena_bytes);
	for (int r = 0; r < h->nreg; r++)
		if (h->p->regions[r].used_bytes >= UINT32_MAX)
			return ar_fail(err, AR_EXIT_USAGE, "--header: the "
				       "arena of memory '%s', %lld bytes, does "
				       "not fit the header's 32-bit offsets",
				       h->p->regions[r].name,
				       (long long)h->p->regions[r].used_bytes);
	if (ar_weights_layout(g, h->p, NULL) >= UINT32_MAX)
		return ar_fail(err, AR_EXIT_USAGE, "--header: the weights do "
			       "not fit the header's 32-bit offsets");
	for (int i = 0; i < g->ntensors; i++) {
		const ArTensor *t = &g->tensors[i];
		if (t->bytes >= UINT32_MAX)
			return ar_fail(err, AR_EXIT_USAGE, "--header: tensor "
				       "'%s' of %lld bytes does not fit the "
				       "header's 32-bit sizes", t->name,
				       (long long)t->bytes);
		for (int d = 0; d < t->rank; d++)
			if (t->dims[d] > INT32_MAX)
				return ar_fail(err, AR_EXIT_USAGE, "--header: "
					       "tensor '%s' has dim %lld, past "
					       "the header's 32-bit dims",
					       t->name, (long long)t->dims[d]);
	}
	return AR_OK;
}


/* Writes t with "@" standing for the identifier prefix and "$" for the
 * macro prefix, which keeps the long fixed parts of the header readable. */
static void put_tmpl(const Hdr *h, const char *t)
{
	for (; *t; t++) {
		if (*t == '@')
			fputs(h->lo, h->f);
		else if (*t == '$')
			fputs(h->up, h->f);
		else
			fputc(*t, h->f);
	}
}

static const char *const kind_names[] = {"INPUT", "OUTPUT", "ACTIVATION",
					 "WEIGHT", "CONSTANT"};
static const char *const attr_names[] = {"UNDEFINED", "FLOAT", "INT",
					 "STRING", "TENSOR", "GRAPH",
					 "FLOATS", "INTS", "STRINGS"};

/* The enum constant's name for a dtype: float32 becomes FLOAT32. */
static void put_dtype(const Hdr *h, ArDType dt)
{
	fprintf(h->f, "%s_DT_", h->up);
	for (const char *c = ar_dtype_name(dt); *c; c++)
		fputc(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c, h->f);
}

/* The region holding the weights (--weights-in), or -1. */
static int weights_region(const Hdr *h)
{
	for (int r = 0; r < h->nreg; r++)
		if (h->p->regions[r].weights_bytes > 0)
			return r;
	return -1;
}

/* A tiered plan's comment lists what firmware needs to size and place each
 * region, and what the placement is expected to cost. */
static void write_intro_regions(const Hdr *h)
{
	FILE *f = h->f;

	fprintf(f, "\n * regions:     %d arena%s (%s_NUM_REGIONS), fastest "
		"first; offsets are\n *              relative to their "
		"tensor's region and aligned to %lld\n", h->nreg,
		h->nreg > 1 ? "s" : "", h->up, (long long)h->p->align);
	for (int r = 0; r < h->nreg; r++) {
		const ArRegion *x = &h->p->regions[r];
		fprintf(f, " * region %d:    ", r);
		ar_c_comment(f, x->name);
		fprintf(f, " (%s_ARENA_%s_SIZE): %lld of %lld bytes used,\n"
			" *              ", h->up, h->rup[r],
			(long long)x->used_bytes, (long long)x->capacity);
		if (x->bandwidth > 0)
			fprintf(f, "bandwidth %.6g bytes/s, traffic %lld "
				"bytes, %.6g s\n", x->bandwidth,
				(long long)x->traffic_bytes,
				(double)x->traffic_bytes / x->bandwidth);
		else
			fprintf(f, "bandwidth not given, traffic %lld bytes\n",
				(long long)x->traffic_bytes);
		if (x->weights_bytes > 0)
			fprintf(f, " *              [0, %lld) is reserved for "
				"the weights (%s_WEIGHTS_RESERVED)\n",
				(long long)x->weights_bytes, h->up);
	}
}

static void write_intro(const Hdr *h, const ArEmitInfo *info)
{
	FILE *f = h->f;
	const ArPlan *p = h->p;
	const char *model = info->model_path ? info->model_path : h->g->name;
	int wr = weights_region(h);

	fputs("/*\n * Memory plan for ", f);
	ar_c_comment(f, model);
	fputs(", generated by arenac; do not edit.\n *\n * model:       ", f);
	ar_c_comment(f, model);
	fputs(" (graph \"", f);
	ar_c_comment(f, h->g->name);
	fputs("\")\n * arenac:      " ARENAC_VERSION "\n * options:     ", f);
	ar_c_comment(f, info->options && *info->options ? info->options :
		     "(defaults)");
	if (h->nreg)
		write_intro_regions(h);
	else
		fprintf(f, "\n * arena:       %lld bytes (%s_ARENA_SIZE), "
			"offsets aligned to %lld\n", (long long)p->arena_bytes,
			h->up, (long long)p->align);
	fprintf(f, " * lower bound: %lld bytes live at the peak step",
		(long long)p->lower_bound);
	/* Tiers: each region's bound is its own; the sum says little. */
	if (h->nreg)
		fputs(", all regions together", f);
	else if (p->arena_bytes > 0)
		fprintf(f, ", efficiency %.1f%% (lower bound / arena)",
			100.0 * (double)p->lower_bound / (double)p->arena_bytes);
	fprintf(f, "\n * weights:     %lld bytes of weights and constants, ",
		(long long)p->weights_bytes);
	if (wr >= 0) {
		fputs("at the start\n *              of region ", f);
		ar_c_comment(f, p->regions[wr].name);
		fprintf(f, " (%s_WEIGHTS_REGION)\n", h->up);
	} else {
		fputs(h->nreg ? "not in the arenas\n" : "not in the arena\n",
		      f);
	}
	if (p->peak_step >= 0 && p->peak_step < p->nsteps) {
		const ArNode *n = &h->g->nodes[p->steps[p->peak_step]];
		fprintf(f, " * peak step:   %d of %d: ", p->peak_step,
			p->nsteps);
		ar_c_comment(f, n->op);
		fputs(" \"", f);
		ar_c_comment(f, n->name);
		fputs("\"\n", f);
	}
	if (h->nreg)
		fputs(p->optimal ? " * optimal:     yes, each region's arena "
		      "is minimal" :
		      " * optimal:     not proven", f);
	else
		fputs(p->optimal ? " * optimal:     yes, no smaller arena "
		      "exists for this step order" :
		      " * optimal:     not proven", f);
	fputs(" (algorithm ", f);
	ar_c_comment(f, p->algorithm ? p->algorithm : "unknown");
	fputs(")\n", f);
	if (!h->nreg) {
		put_tmpl(h, " *\n"
			 " * Use: in exactly one C or C++ file,\n"
			 " *     #define $_DEFINE_ARENA\n"
			 " *     #include \"this header\"\n"
			 " * defines uint8_t @_arena[$_ARENA_SIZE], aligned to "
			 "$_ARENA_ALIGN.  Run\n"
			 " * @_steps[0 .. $_NUM_STEPS) in order with your "
			 "kernels, skipping those\n"
			 " * flagged noop (their outputs are views already in "
			 "place).  Tensor i is\n"
			 " * at $_TENSOR_PTR(@_arena, i) while first <= step "
			 "<= last.  Weights and\n"
			 " * constants (offset $_NOT_IN_ARENA) are yours to "
			 "provide.\n"
			 " */\n");
		return;
	}
	fputs(p->placement_optimal ? " * placement:   proven least estimated "
	      "traffic cost\n" : " * placement:   least estimated traffic "
	      "cost found, not proven\n", f);
	put_tmpl(h, " *\n"
		 " * Use: in exactly one C or C++ file,\n"
		 " *     #define $_DEFINE_ARENA\n"
		 " *     #include \"this header\"\n"
		 " * defines one array per region, ");
	fprintf(f, "uint8_t %s_arena_%s[%s_ARENA_%s_SIZE]", h->lo, h->rlo[0],
		h->up, h->rup[0]);
	put_tmpl(h, "\n * and so on, each aligned to $_ARENA_ALIGN, and "
		 "@_arenas[], their bases\n"
		 " * indexed by region.  Each array takes its memory's section "
		 "hook, empty\n * unless defined before the include, e.g. "
		 "with\n");
	fprintf(f, " *     -D%s_ARENA_%s_SECTION='__attribute__((section("
		"\".%s\")))'\n", h->up, h->rup[0], h->rlo[0]);
	put_tmpl(h, " * Run @_steps[0 .. $_NUM_STEPS) in order with your "
		 "kernels, skipping those\n"
		 " * flagged noop (their outputs are views already in place).  "
		 "Tensor i is\n"
		 " * at $_TENSOR_PTR(bases, i), where bases[r] is region r's "
		 "arena (@_arenas\n"
		 " * or your own), while first <= step <= last.  Weights and "
		 "constants\n"
		 " * (offset $_NOT_IN_ARENA) are yours to provide");
	put_tmpl(h, wr >= 0 ? ": the --weights blob\n"
		 " * ($_WEIGHTS_SIZE bytes) goes at the start of region "
		 "$_WEIGHTS_REGION, so\n"
		 " * weight i is at bases[$_WEIGHTS_REGION] + "
		 "@_tensors[i].weights_offset.\n */\n" : ".\n */\n");
}

static void write_enums(const Hdr *h)
{
	put_tmpl(h, "/* Element types, numbered as ONNX "
		 "TensorProto.DataType. */\ntypedef enum @_dtype {\n");
	for (int d = 0; d < AR_DT_COUNT; d++) {
		fputc('\t', h->f);
		put_dtype(h, (ArDType)d);
		fprintf(h->f, " = %d%s\n", d, d + 1 < AR_DT_COUNT ? "," : "");
	}
	put_tmpl(h, "} @_dtype;\n\ntypedef enum @_kind {\n");
	for (int k = 0; k < 5; k++)
		fprintf(h->f, "\t%s_KIND_%s = %d%s\n", h->up, kind_names[k], k,
			k < 4 ? "," : "");
	put_tmpl(h, "} @_kind;\n\n/* Numbered as ONNX "
		 "AttributeProto.AttributeType. */\ntypedef enum @_attr_type "
		 "{\n");
	for (int a = 0; a < 9; a++)
		fprintf(h->f, "\t%s_ATTR_%s = %d%s\n", h->up, attr_names[a], a,
			a < 8 ? "," : "");
	put_tmpl(h, "} @_attr_type;\n\n");
}

static void write_types(const Hdr *h)
{
	put_tmpl(h,
		 "typedef struct @_tensor {\n"
		 "\tconst char *name;\n"
		 "\tuint8_t dtype;            /* @_dtype */\n"
		 "\tuint8_t kind;             /* @_kind */\n"
		 "\tint8_t rank;              /* -1: never computed (an unused "
		 "output) */\n"
		 "\tconst int32_t *dims;\n"
		 "\tuint32_t bytes;           /* unpadded */\n");
	if (h->nreg)
		put_tmpl(h, "\tuint32_t offset;          /* in its region's "
			 "arena, or $_NOT_IN_ARENA */\n"
			 "\tuint8_t region;           /* index into @_regions "
			 "(0 when not in an arena) */\n");
	else
		put_tmpl(h, "\tuint32_t offset;          /* in the arena, or "
			 "$_NOT_IN_ARENA */\n");
	put_tmpl(h,
		 "\tint32_t first, last;      /* live over these steps, "
		 "inclusive; -1 if not in the arena */\n"
		 "\tint32_t alias_of;         /* shares the bytes of this "
		 "tensor by design, or -1 */\n"
		 "\tuint32_t alias_offset;    /* at this byte offset inside "
		 "alias_of */\n"
		 "\tint32_t inplace_of;       /* overwrites this input, which "
		 "dies at this step, or -1 */\n"
		 "\tuint32_t weights_offset;  /* in the weights blob of arenac "
		 "--weights, or $_NOT_IN_ARENA */\n"
		 "} @_tensor;\n\n"
		 "typedef struct @_attr {\n"
		 "\tconst char *name;\n"
		 "\tuint8_t type;             /* @_attr_type */\n"
		 "\tuint8_t dtype;            /* TENSOR: its @_dtype */\n"
		 "\tuint16_t count;           /* values behind ints, floats or "
		 "strings; 0 for GRAPH\n"
		 "\t                             and for large TENSOR "
		 "values, which are data */\n"
		 "\tconst int64_t *ints;      /* INT, INTS, integer TENSOR */\n"
		 "\tconst float *floats;      /* FLOAT, FLOATS, float TENSOR */\n"
		 "\tconst char *const *strings; /* STRING, STRINGS */\n"
		 "} @_attr;\n\n"
		 "typedef struct @_step {\n"
		 "\tconst char *op;           /* ONNX op type */\n"
		 "\tconst char *domain;       /* \"\" for the default domain */\n"
		 "\tconst char *name;\n"
		 "\tint32_t node;             /* index in the model's node "
		 "list */\n"
		 "\tconst int32_t *inputs;    /* tensor indices, -1 for an "
		 "omitted optional one */\n"
		 "\tuint16_t ninputs;\n"
		 "\tconst int32_t *outputs;\n"
		 "\tuint16_t noutputs;\n"
		 "\tconst @_attr *attrs;\n"
		 "\tuint16_t nattrs;\n"
		 "\tuint8_t noop;             /* outputs already in place "
		 "(views, elided concat) */\n"
		 "\tint32_t opset;            /* of the op's domain: defaults "
		 "changed across versions */\n"
		 "} @_step;\n\n");
	if (h->nreg)
		put_tmpl(h, "typedef struct @_region {\n"
			 "\tconst char *name;         /* as given to --memory */\n"
			 "\tuint32_t size;            /* bytes of its arena */\n"
			 "\tuint32_t weights_bytes;   /* [0, weights_bytes) holds "
			 "the weights */\n"
			 "} @_region;\n\n");
}

static void write_io_macros(const Hdr *h, const char *what, const int *ids,
			    int n)
{
	const char **names = ar_xmalloc(((size_t)n + 1) * sizeof *names);
	char **frag;

	for (int i = 0; i < n; i++)
		names[i] = h->g->tensors[ids[i]].name;
	frag = ar_c_idents_unique(names, n, "tensor");
	for (int i = 0; i < n; i++) {
		const ArTensor *t = &h->g->tensors[ids[i]];
		const ArSlot *s = &h->p->slots[ids[i]];
		char m[256];

		snprintf(m, sizeof m, "%s_%s_%.200s", h->up, what, frag[i]);
		fputs("/* ", h->f);
		ar_c_comment(h->f, t->name);
		fprintf(h->f, ": %s[", ar_dtype_name(t->dtype));
		for (int d = 0; d < t->rank; d++)
			fprintf(h->f, "%s%lld", d ? "," : "",
				(long long)t->dims[d]);
		fprintf(h->f, "] */\n#define %s_INDEX %d\n", m, ids[i]);
		if (h->nreg && s->planned)
			fprintf(h->f, "#define %s_REGION %s_REGION_%s\n", m,
				h->up, h->rup[s->region]);
		else if (h->nreg)
			fprintf(h->f, "#define %s_REGION 0\n", m);
		if (s->planned)
			fprintf(h->f, "#define %s_OFFSET %lldu\n", m,
				(long long)s->offset);
		else
			fprintf(h->f, "#define %s_OFFSET %s_NOT_IN_ARENA\n", m,
				h->up);
		fprintf(h->f, "#define %s_SIZE %lldu\n", m,
			(long long)(t->bytes > 0 ? t->bytes : 0));
		if (h->nreg)
			fprintf(h->f, "#define %s_PTR(bases) ((void *)((uint8_t "
				"*)(bases)[%s_REGION] + %s_OFFSET))\n", m, m, m);
		else
			fprintf(h->f, "#define %s_PTR(arena) ((void *)((uint8_t "
				"*)(arena) + %s_OFFSET))\n", m, m);
	}
	ar_strv_free(frag, n);
	free(names);
}

/* Opens a pool array; every pool ends with a filler element (C has no
 * empty arrays), so entries may point one past their last value. */
static void open_pool(const Hdr *h, const char *type, const char *name)
{
	fprintf(h->f, "static const %s %s_%s[] %s_UNUSED = {", type, h->lo,
		name, h->up);
}

/* Pool values go sixteen to a line. */
static void pool_sep(const Hdr *h, int *k)
{
	fputs(*k % 16 ? " " : "\n\t", h->f);
	(*k)++;
}

static void write_tensors(const Hdr *h)
{
	const ArGraph *g = h->g;
	int k = 0, at = 0;
	int64_t *woff = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *woff);

	ar_weights_layout(g, h->p, woff);
	open_pool(h, "int32_t", "dims");
	for (int i = 0; i < g->ntensors; i++)
		for (int d = 0; d < g->tensors[i].rank; d++) {
			pool_sep(h, &k);
			fprintf(h->f, "%lld,", (long long)g->tensors[i].dims[d]);
		}
	pool_sep(h, &k);
	fputs("0\n};\n\n", h->f);

	put_tmpl(h, "/* Indexed by tensor id; the entry past the last has a "
		 "null name. */\nstatic const @_tensor @_tensors[$_NUM_TENSORS "
		 "+ 1] $_UNUSED = {\n");
	for (int i = 0; i < g->ntensors; i++) {
		const ArTensor *t = &g->tensors[i];
		const ArSlot *s = &h->p->slots[i];

		fprintf(h->f, "\t/* %d */ {", i);
		put_str(h->f, t->name);
		fputs(", ", h->f);
		put_dtype(h, t->dtype);
		fprintf(h->f, ", %s_KIND_%s, %d, %s_dims + %d, %lldu, ", h->up,
			kind_names[t->kind], t->rank, h->lo, at,
			(long long)(t->bytes > 0 ? t->bytes : 0));
		if (s->planned)
			fprintf(h->f, "%lldu, ", (long long)s->offset);
		else
			fprintf(h->f, "%s_NOT_IN_ARENA, ", h->up);
		if (h->nreg)
			fprintf(h->f, "%d, ", s->planned ? s->region : 0);
		fprintf(h->f, "%d, %d, %d, %lldu, %d, ", s->first, s->last,
			s->alias_of, (long long)(s->alias_of >= 0 ?
						 s->alias_offset : 0),
			s->inplace_of);
		if (woff[i] >= 0)
			fprintf(h->f, "%lldu},\n", (long long)woff[i]);
		else
			fprintf(h->f, "%s_NOT_IN_ARENA},\n", h->up);
		at += t->rank > 0 ? t->rank : 0;
	}
	put_tmpl(h, h->nreg ? "\t{0, $_DT_UNDEFINED, 0, 0, @_dims, 0u, "
		 "$_NOT_IN_ARENA, 0, -1, -1, -1, 0u, -1, $_NOT_IN_ARENA}\n};\n\n" :
		 "\t{0, $_DT_UNDEFINED, 0, 0, @_dims, 0u, $_NOT_IN_ARENA, "
		 "-1, -1, -1, 0u, -1, $_NOT_IN_ARENA}\n};\n\n");
	free(woff);
}

/* Tiers: the regions as a table, for code that walks them. */
static void write_regions(const Hdr *h)
{
	put_tmpl(h, "static const @_region @_regions[$_NUM_REGIONS] $_UNUSED "
		 "= {\n");
	for (int r = 0; r < h->nreg; r++) {
		fputs("\t{", h->f);
		put_str(h->f, h->p->regions[r].name);
		fprintf(h->f, ", %s_ARENA_%s_SIZE, %lldu}%s\n", h->up, h->rup[r],
			(long long)h->p->regions[r].weights_bytes,
			r + 1 < h->nreg ? "," : "");
	}
	fputs("};\n\n", h->f);
}

static const ArNode *step_node(const Hdr *h, int s)
{
	return &h->g->nodes[h->p->steps[s]];
}

static void write_attr_pools(const Hdr *h)
{
	int64_t iv[MAX_TENSOR_ATTR];
	float fv[MAX_TENSOR_ATTR];
	int k;

	open_pool(h, "int64_t", "attr_ints");
	k = 0;
	for (int s = 0; s < h->p->nsteps; s++) {
		const ArNode *n = step_node(h, s);
		for (int a = 0; a < n->nattrs; a++) {
			const ArAttr *at = &n->attrs[a];
			int cnt = 0;
			if (at->type == AR_ATTR_INT) {
				iv[0] = at->i;
				cnt = 1;
			} else if (at->type == AR_ATTR_TENSOR &&
				   !is_float_dtype(at->t->dtype)) {
				cnt = tensor_attr_values(at->t, iv, fv);
			}
			for (int j = 0; j < cnt; j++) {
				pool_sep(h, &k);
				put_i64(h->f, iv[j]);
				fputc(',', h->f);
			}
			for (int j = 0; at->type == AR_ATTR_INTS &&
			     j < at->nints; j++) {
				pool_sep(h, &k);
				put_i64(h->f, at->ints[j]);
				fputc(',', h->f);
			}
		}
	}
	pool_sep(h, &k);
	fputs("0\n};\n\n", h->f);

	open_pool(h, "float", "attr_floats");
	k = 0;
	for (int s = 0; s < h->p->nsteps; s++) {
		const ArNode *n = step_node(h, s);
		for (int a = 0; a < n->nattrs; a++) {
			const ArAttr *at = &n->attrs[a];
			const float *v = fv;
			int cnt = 0;
			if (at->type == AR_ATTR_FLOAT) {
				v = &at->f;
				cnt = 1;
			} else if (at->type == AR_ATTR_FLOATS) {
				v = at->floats;
				cnt = at->nfloats;
			} else if (at->type == AR_ATTR_TENSOR &&
				   is_float_dtype(at->t->dtype)) {
				cnt = tensor_attr_values(at->t, iv, fv);
			}
			for (int j = 0; j < cnt; j++) {
				pool_sep(h, &k);
				put_f32(h->f, v[j]);
				fputc(',', h->f);
			}
		}
	}
	pool_sep(h, &k);
	fputs("0.0f\n};\n\n", h->f);

	open_pool(h, "char *const", "attr_strings");
	fputc('\n', h->f);
	for (int s = 0; s < h->p->nsteps; s++) {
		const ArNode *n = step_node(h, s);
		for (int a = 0; a < n->nattrs; a++) {
			const ArAttr *at = &n->attrs[a];
			if (at->type != AR_ATTR_STRING)
				continue;
			fputc('\t', h->f);
			put_str(h->f, at->s);
			fputs(",\n", h->f);
		}
	}
	fputs("\t0\n};\n\n", h->f);
}

static void write_steps(const Hdr *h)
{
	const ArPlan *p = h->p;
	int k = 0, io = 0, na = 0, pi = 0, pf = 0, ps = 0;

	open_pool(h, "int32_t", "step_io");
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = step_node(h, s);
		for (int j = 0; j < n->nexplicit; j++) {
			pool_sep(h, &k);
			fprintf(h->f, "%d,", n->inputs[j]);
		}
		for (int j = 0; j < n->noutputs; j++) {
			pool_sep(h, &k);
			fprintf(h->f, "%d,", n->outputs[j]);
		}
	}
	pool_sep(h, &k);
	fputs("-1\n};\n\n", h->f);

	write_attr_pools(h);
	put_tmpl(h, "static const @_attr @_attrs[] $_UNUSED = {\n");
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = step_node(h, s);
		for (int a = 0; a < n->nattrs; a++) {
			const ArAttr *at = &n->attrs[a];
			int ni, nf, ns;
			attr_counts(at, &ni, &nf, &ns);
			fputs("\t{", h->f);
			put_str(h->f, at->name);
			fprintf(h->f, ", %s_ATTR_%s, ", h->up,
				(unsigned)at->type < 9 ? attr_names[at->type] :
				"UNDEFINED");
			put_dtype(h, at->type == AR_ATTR_TENSOR ? at->t->dtype :
				  AR_DT_UNDEFINED);
			fprintf(h->f, ", %d, %s_attr_ints + %d, %s_attr_floats "
				"+ %d, %s_attr_strings + %d},\n", ni + nf + ns,
				h->lo, pi, h->lo, pf, h->lo, ps);
			pi += ni;
			pf += nf;
			ps += ns;
		}
	}
	put_tmpl(h, "\t{0, $_ATTR_UNDEFINED, $_DT_UNDEFINED, 0, @_attr_ints, "
		 "@_attr_floats, @_attr_strings}\n};\n\n");

	put_tmpl(h, "/* In execution order; the entry past the last has a null "
		 "op. */\nstatic const @_step @_steps[$_NUM_STEPS + 1] "
		 "$_UNUSED = {\n");
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = step_node(h, s);
		fprintf(h->f, "\t/* %d */ {", s);
		put_str(h->f, n->op);
		fputs(", ", h->f);
		put_str(h->f, n->domain);
		fputs(", ", h->f);
		put_str(h->f, n->name);
		fprintf(h->f, ", %d, %s_step_io + %d, %d, %s_step_io + %d, "
			"%d, %s_attrs + %d, %d, %d, %lld},\n", p->steps[s], h->lo,
			io, n->nexplicit, h->lo, io + n->nexplicit, n->noutputs,
			h->lo, na, n->nattrs, step_noop(h, n),
			(long long)n->opset);
		io += n->nexplicit + n->noutputs;
		na += n->nattrs;
	}
	put_tmpl(h, "\t{0, 0, 0, -1, @_step_io, 0, @_step_io, 0, @_attrs, 0, "
		 "0, 0}\n};\n\n");
}

/* NAN and HUGE_VALF come from math.h, which most headers can do without. */
static int needs_math(const Hdr *h)
{
	int64_t iv[MAX_TENSOR_ATTR];
	float fv[MAX_TENSOR_ATTR];

	for (int s = 0; s < h->p->nsteps; s++) {
		const ArNode *n = step_node(h, s);
		for (int a = 0; a < n->nattrs; a++) {
			const ArAttr *at = &n->attrs[a];
			int cnt = 0;
			if (at->type == AR_ATTR_FLOAT && !isfinite(at->f))
				return 1;
			for (int j = 0; at->type == AR_ATTR_FLOATS &&
			     j < at->nfloats; j++)
				if (!isfinite(at->floats[j]))
					return 1;
			if (at->type == AR_ATTR_TENSOR &&
			    is_float_dtype(at->t->dtype))
				cnt = tensor_attr_values(at->t, iv, fv);
			for (int j = 0; j < cnt; j++)
				if (!isfinite(fv[j]))
					return 1;
		}
	}
	return 0;
}

/* One arena's definition in one compiler family's spelling; a tiered
 * plan's arena takes its region's section hook after the declarator. */
static void put_arena_def(const Hdr *h, const char *const *def, int r)
{
	int64_t n = h->nreg ? h->p->regions[r].used_bytes : h->p->arena_bytes;

	put_tmpl(h, def[0]);
	if (h->nreg)
		fprintf(h->f, "uint8_t %s_arena_%s[%lld]", h->lo, h->rlo[r],
			(long long)(n > 0 ? n : 1));
	else
		fprintf(h->f, "uint8_t %s_arena[%lld]", h->lo,
			(long long)(n > 0 ? n : 1));
	put_tmpl(h, def[1]);
	if (h->nreg)
		fprintf(h->f, " %s_ARENA_%s_SECTION", h->up, h->rup[r]);
	fputs(";\n", h->f);
}

static void write_arena(const Hdr *h)
{
	/* How each compiler family spells an aligned definition: the line
	 * choosing it, then what goes before and after the declarator. */
	static const char *const defs[][3] = {
		{"#if defined(__cplusplus) && __cplusplus >= 201103L\n",
		 "alignas($_ARENA_ALIGN) ", ""},
		{"#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= "
		 "201112L\n", "_Alignas($_ARENA_ALIGN) ", ""},
		{"#elif defined(__GNUC__)\n", "",
		 " __attribute__((aligned($_ARENA_ALIGN)))"},
		{"#elif defined(_MSC_VER)\n", "__declspec(align($_ARENA_ALIGN)) ",
		 ""},
	};

	if (!h->nreg) {
		put_tmpl(h, "/* Tensor i's bytes inside an arena laid out by "
			 "this plan. */\n#define $_TENSOR_PTR(arena, i) \\\n"
			 "\t((void *)((uint8_t *)(arena) + "
			 "@_tensors[i].offset))\n"
			 "#define $_TENSOR_SIZE(i) (@_tensors[i].bytes)\n\n"
			 "extern uint8_t @_arena[];\n#ifdef $_DEFINE_ARENA\n");
		for (int i = 0; i < 4; i++) {
			put_tmpl(h, defs[i][0]);
			put_arena_def(h, defs[i] + 1, 0);
		}
		put_tmpl(h, "#else\n#error \"define @_arena aligned to "
			 "$_ARENA_ALIGN for this compiler\"\n#endif\n#endif\n\n");
		return;
	}
	put_tmpl(h, "/* Tensor i's bytes, where bases[r] is the start of region "
		 "r's arena. */\n#define $_TENSOR_PTR(bases, i) \\\n"
		 "\t((void *)((uint8_t *)(bases)[@_tensors[i].region] + \\\n"
		 "\t\t   @_tensors[i].offset))\n"
		 "#define $_TENSOR_SIZE(i) (@_tensors[i].bytes)\n\n");
	for (int r = 0; r < h->nreg; r++)
		fprintf(h->f, "extern uint8_t %s_arena_%s[];\n", h->lo,
			h->rlo[r]);
	put_tmpl(h, "extern uint8_t *const @_arenas[$_NUM_REGIONS];\n"
		 "#ifdef $_DEFINE_ARENA\n"
		 "/* Each arena's section hook: an attribute placing it, such as "
		 "a GNU\n * __attribute__((section(...))) naming a section of "
		 "your linker script. */\n");
	for (int r = 0; r < h->nreg; r++)
		fprintf(h->f, "#ifndef %1$s_ARENA_%2$s_SECTION\n"
			"#define %1$s_ARENA_%2$s_SECTION\n#endif\n", h->up,
			h->rup[r]);
	for (int i = 0; i < 4; i++) {
		put_tmpl(h, defs[i][0]);
		for (int r = 0; r < h->nreg; r++)
			put_arena_def(h, defs[i] + 1, r);
	}
	put_tmpl(h, "#else\n#error \"define the @_arena_ arrays aligned to "
		 "$_ARENA_ALIGN for this compiler\"\n#endif\n"
		 "uint8_t *const @_arenas[$_NUM_REGIONS] = {");
	for (int r = 0; r < h->nreg; r++)
		fprintf(h->f, "%s%s_arena_%s", r ? ", " : "", h->lo, h->rlo[r]);
	fputs("};\n#endif\n\n", h->f);
}

/* Per region its index and arena size; the weights' region and the
 * bytes reserved at its start for them. */
static void write_region_macros(const Hdr *h)
{
	int wr = weights_region(h);

	fprintf(h->f, "#define %s_NUM_REGIONS %d\n", h->up, h->nreg);
	for (int r = 0; r < h->nreg; r++)
		fprintf(h->f, "#define %1$s_REGION_%2$s %3$d\n"
			"#define %1$s_ARENA_%2$s_SIZE %4$lldu\n", h->up,
			h->rup[r], r, (long long)h->p->regions[r].used_bytes);
	if (wr >= 0)
		fprintf(h->f, "#define %1$s_WEIGHTS_REGION %1$s_REGION_%2$s\n"
			"#define %1$s_WEIGHTS_RESERVED %3$lldu\n", h->up,
			h->rup[wr], (long long)h->p->regions[wr].weights_bytes);
}

static void write_macros(const Hdr *h)
{
	const ArPlan *p = h->p;
	const struct {
		const char *name;
		long long v;
		const char *suffix;
	} m[] = {
		{"ARENA_SIZE", p->arena_bytes, "u"},
		{"ARENA_ALIGN", p->align, ""},
		{"LOWER_BOUND", p->lower_bound, "u"},
		{"WEIGHTS_BYTES", p->weights_bytes, "u"},
		{"WEIGHTS_SIZE", ar_weights_layout(h->g, p, NULL), "u"},
		{"PEAK_STEP", p->peak_step, ""},
		{"NUM_TENSORS", h->g->ntensors, ""},
		{"NUM_STEPS", p->nsteps, ""},
		{"NUM_INPUTS", h->g->ninputs, ""},
		{"NUM_OUTPUTS", h->g->noutputs, ""},
	};

	fputc('\n', h->f);
	/* A tiered plan has no one arena size: code that wants one must not
	 * build. */
	for (size_t i = h->nreg ? 1 : 0; i < sizeof m / sizeof m[0]; i++)
		fprintf(h->f, "#define %s_%s %lld%s\n", h->up, m[i].name,
			m[i].v, m[i].suffix);
	if (h->nreg)
		write_region_macros(h);
	put_tmpl(h, "#define $_NOT_IN_ARENA 0xFFFFFFFFu\n\n");
	write_io_macros(h, "INPUT", h->g->inputs, h->g->ninputs);
	write_io_macros(h, "OUTPUT", h->g->outputs, h->g->noutputs);
}

/*
 * The prefix defaults to the model's file name, which may be anything, so
 * it is sanitised rather than refused: "my-net" becomes my_net, and one
 * that starts with a digit gets "m_" in front.
 */
char *ar_header_prefix(const char *prefix)
{
	char *id = ar_c_ident(prefix ? prefix : "");
	char *r;
	if (*id && !(*id >= '0' && *id <= '9'))
		return id;
	r = ar_xmalloc(strlen(id) + 8);
	sprintf(r, *id ? "m_%s" : "model", id);
	free(id);
	return r;
}

int ar_write_header(FILE *f, const ArGraph *g, const ArPlan *p,
		    const ArEmitInfo *info, ArError *err)
{
	char *lo = ar_header_prefix(info->prefix), *up = ar_xstrdup(lo);
	Hdr h = {f, g, p, up, lo, p->nregions, NULL, NULL};
	int rc;

	set_case(up, 1);
	if (h.nreg)
		region_idents(&h);
	rc = check_limits(&h, err);
	if (rc == AR_OK) {
		write_intro(&h, info);
		put_tmpl(&h, "#ifndef $_ARENAC_H\n#define $_ARENAC_H\n\n"
			 "#include <stdint.h>\n");
		if (needs_math(&h))
			fputs("#include <math.h>\n", f);
		write_macros(&h);
		put_tmpl(&h, "\n#if defined(__GNUC__) || defined(__clang__)\n"
			 "#define $_UNUSED __attribute__((unused))\n#else\n"
			 "#define $_UNUSED\n#endif\n\n"
			 "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
		write_enums(&h);
		write_types(&h);
		write_tensors(&h);
		if (h.nreg)
			write_regions(&h);
		write_steps(&h);
		write_arena(&h);
		put_tmpl(&h, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
		if (ferror(f))
			rc = ar_fail(err, AR_EXIT_USAGE, "writing the header "
				     "failed");
	}
	ar_strv_free(h.rup, h.nreg);
	ar_strv_free(h.rlo, h.nreg);
	free(up), free(lo);
	return rc;
}
