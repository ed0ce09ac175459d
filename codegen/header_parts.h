/*
 * header_parts.h — the C header writer's parts, internal to codegen/.
 *
 * ar_write_header (header.c) writes the header top to bottom; each part
 * lives in a file of its own: the comment block (header_intro.c), the
 * limits of the narrow table fields (header_limits.c), the macros
 * (header_macros.c), the ops the plan runs (header_uses.c), the types
 * (header_types.c), the tables
 * (header_tables.c, attributes in header_attrs.c), the pointer macros and
 * the arena (header_arena.c), and what only a tiered plan has
 * (header_tiers.c).  They share the Hdr state below.
 */
#ifndef ARENAC_HEADER_PARTS_H
#define ARENAC_HEADER_PARTS_H

#include "emit.h"
#include "text.h"

typedef struct Hdr {
	FILE *f;
	const ArGraph *g;
	const ArPlan *p;
	const ArEmitInfo *info;
	char *up;           /* prefix for macros */
	const char *lo;     /* prefix for other identifiers */
	int nreg;           /* regions of a tiered plan; 0 without tiers */
	char **rup, **rlo;  /* region names as macro and identifier parts */
	int nattrs;         /* attributes of all steps together */
	/*
	 * The table set being written: the model graph's (sub NULL, tab =
	 * lo) or subgraph sub_id's (tab = lo_sgID, g and p its own).  A
	 * subgraph's tables are static, sized by number, not by macro.
	 */
	const char *tab;
	const ArSubPlan *sub;
	int sub_id;
	const ArPlan *top;          /* the model's plan */
	const ArWeightsLayout *wl;  /* the blob's offsets, every graph's */
	bool work;          /* steps carry workspace and subgraph columns */
	int nsubs;          /* subgraphs, nested ones included */
	char **ops;         /* the op enum's names, sorted (header_uses.c) */
	int nops;
	bool requant;       /* steps carry requantisation columns */
	bool strip;         /* --strip-names: no tensor, step or graph names */
} Hdr;

/* header.c: writing helpers. */
/* t with "@" standing for the identifier prefix and "$" for the macro
 * prefix, which keeps the long fixed parts of the header readable. */
void hdr_tmpl(const Hdr *h, const char *t);
/* The parts that write through an ArText take one (text.h). */
void hdr_str(ArText *out, const char *s);       /* a C string literal */
void hdr_dtype(const Hdr *h, ArText *out, ArDType dt); /* PREFIX_DT_FLOAT32 */
/* Opens a pool: a static array defined with the tables, whose entries the
 * tables point into.  Every pool ends with a filler element (C has no
 * empty arrays), so an entry may point one past its last value. */
void hdr_open_pool(const Hdr *h, ArText *out, const char *type,
		   const char *name);
void hdr_pool_sep(ArText *out, int *k);         /* sixteen values a line */
/*
 * The big tables' rows are written field by field rather than through
 * formats (a format is scanned byte by byte on every row, a literal given
 * to ar_text_puts is copied by an inlined store): v then sep ("u, " after
 * the unsigned fields); PREFIX_name; TABLE<pool> + at and ", " (an entry's
 * place in a pool, pool e.g. "_dims + ").  Inline, so that each literal's
 * length is known where it is written.
 */
static inline void hdr_num(ArText *out, int64_t v, const char *sep)
{
	ar_text_dec(out, v);
	ar_text_puts(out, sep);
}

static inline void hdr_macro(const Hdr *h, ArText *out, const char *name)
{
	ar_text_puts(out, h->up);
	ar_text_putc(out, '_');
	ar_text_puts(out, name);
}

static inline void hdr_pool_ref(const Hdr *h, ArText *out, const char *pool,
				int at)
{
	ar_text_puts(out, h->tab);
	ar_text_puts(out, pool);
	hdr_num(out, at, ", ");
}
const ArNode *hdr_step_node(const Hdr *h, int s);
void hdr_set_case(char *s, int upper);

/* Opens table name of the current set: "const T @_name[$_COUNT + 1]"
 * for the model graph's, a static one of count + 1 for a subgraph's. */
void hdr_open_table(const Hdr *h, ArText *out, const char *type,
		    const char *name, const char *count_macro, int count);
/* Calls fn with the Hdr of each planned subgraph's table set. */
void hdr_each_sub(const Hdr *h, void (*fn)(const Hdr *sh, void *ctx),
		  void *ctx);
/* Whether pred holds for the model's table set or a subgraph's. */
int hdr_any_set(const Hdr *h, int (*pred)(const Hdr *sh));

int hdr_check_limits(const Hdr *h, ArError *err);   /* header_limits.c */
void hdr_write_intro(const Hdr *h);                 /* header_intro.c */
void hdr_write_macros(const Hdr *h);                /* header_macros.c */
/* header_uses.c: the ops the plan runs, their enum and each step's. */
void hdr_collect_ops(Hdr *h);
void hdr_write_uses(const Hdr *h);
void hdr_op_code(const Hdr *h, ArText *out, const ArNode *n);
/* header_defaults.c: g with each node's attributes followed by the ONNX
 * defaults it leaves out (ar_attr_defaults); free with the second. */
ArGraph *hdr_with_defaults(const ArGraph *g);
void hdr_free_defaults(ArGraph *dg, const ArGraph *g);
/* header_requant.c: int8 steps' multipliers and shifts (h->requant). */
bool hdr_any_requant(const Hdr *h);
void hdr_write_requant_macros(const Hdr *h);
void hdr_write_requant_fields(const Hdr *h);
void hdr_write_requant_pools(const Hdr *h, ArText *out);
void hdr_write_step_requant(const Hdr *h, ArText *out, int s, int *at);
/* A name column's value: the literal, or 0 with --strip-names. */
void hdr_name(const Hdr *h, ArText *out, const char *s);
void hdr_write_types(const Hdr *h);                 /* header_types.c */
const char *hdr_attr_type_name(ArAttrType t);       /* header_types.c */
void hdr_write_tables(const Hdr *h);                /* header_tables.c */
int hdr_num_quants(const ArGraph *g);               /* header_tables.c */

/* header_subgraphs.c: workspaces and subgraphs (h->work, h->nsubs). */
bool hdr_any_scratch(const Hdr *h);
void hdr_write_sub_macros(const Hdr *h);
void hdr_write_step_fields(const Hdr *h);
void hdr_write_sub_types(const Hdr *h);
void hdr_write_step_sub_pool(const Hdr *h, ArText *out);
void hdr_write_step_work(const Hdr *h, ArText *out, int s);
void hdr_write_subgraphs(const Hdr *h);
void hdr_write_sub_intro(const Hdr *h);
const char *hdr_sub_use(const Hdr *h);
void hdr_write_arena(const Hdr *h);                 /* header_arena.c */

/* header_attrs.c: attribute values, pooled per type. */
int hdr_num_attrs(const Hdr *h);
int hdr_needs_math(const Hdr *h);   /* NAN or HUGE_VALF among the values */
/* Values of one attribute in the int, float and string pools. */
void hdr_attr_counts(const ArAttr *a, int *ni, int *nf, int *ns);
void hdr_write_attrs(const Hdr *h, ArText *out);
/* The shortest literal that reads back as the same float, with a point
 * or exponent so that the f suffix is valid (NAN, HUGE_VALF: math.h). */
void hdr_f32(ArText *out, float v);

/* header_tiers.c: what a tiered plan (--memory) adds. */
void hdr_region_idents(Hdr *h);
void hdr_write_intro_regions(const Hdr *h);
void hdr_write_region_macros(const Hdr *h);
void hdr_write_regions(const Hdr *h, ArText *out);
int hdr_weights_region(const Hdr *h);   /* --weights-in's region, or -1 */

#endif
