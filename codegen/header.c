/*
 * header.c — the plan as a C header a firmware build can include.
 *
 * Everything an interpreter-style runtime needs besides its kernels and the
 * weights: the arena size and alignment, each tensor's place, size and
 * lifetime, the graph's inputs and outputs, the steps in order with their
 * operands and attributes.  The tables are defined in the one file that
 * defines PREFIX_DEFINE_TABLES and declared extern everywhere else, so a
 * firmware of several files holds them once.  Table fields are as narrow
 * as a firmware wants them (32-bit offsets, 16-bit operand counts); a
 * model that would overflow one is refused rather than truncated.
 *
 * A tiered plan (--memory) gets one arena per region, each with a section
 * hook so that the firmware's linker script can put it in its memory, and
 * a region column; an --io separate plan leaves the graph's inputs and
 * outputs to buffers of the caller's.  Either way the pointer macros take
 * what the layout needs (the regions' bases, the caller's buffers), so
 * code written for a single arena fails to build rather than reading the
 * wrong memory.
 *
 * This file writes the parts in order; header_parts.h lists where each is.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "header_parts.h"
#include "sanitize.h"

/* ISO C99 compilers need only take string literals this long. */
#define MAX_LITERAL 4000

void hdr_set_case(char *s, int upper)
{
	for (; *s; s++)
		if (upper && *s >= 'a' && *s <= 'z')
			*s -= 'a' - 'A';
		else if (!upper && *s >= 'A' && *s <= 'Z')
			*s += 'a' - 'A';
}

void hdr_tmpl(const Hdr *h, const char *t)
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

void hdr_str(ArText *out, const char *s)
{
	ar_text_c_str(out, s, MAX_LITERAL);
}

void hdr_name(const Hdr *h, ArText *out, const char *s)
{
	if (h->strip)
		ar_text_putc(out, '0');
	else
		hdr_str(out, s);
}

void hdr_dtype(const Hdr *h, ArText *out, ArDType dt)
{
	ar_text_puts(out, h->up);
	ar_text_puts(out, "_DT_");
	ar_text_upper(out, ar_dtype_name(dt));
}

void hdr_open_pool(const Hdr *h, ArText *out, const char *type,
		   const char *name)
{
	ar_text_printf(out, "static const %s %s_%s[] = {", type, h->tab, name);
}

void hdr_open_table(const Hdr *h, ArText *out, const char *type,
		    const char *name, const char *count_macro, int count)
{
	if (h->sub)
		ar_text_printf(out, "static const %s_%s %s_%s[%d] = {\n", h->lo,
			       type, h->tab, name, count + 1);
	else
		ar_text_printf(out, "const %s_%s %s_%s[%s_%s + 1] = {\n", h->lo,
			       type, h->lo, name, h->up, count_macro);
}

typedef struct Each {
	const Hdr *h;
	void (*fn)(const Hdr *sh, void *ctx);
	void *ctx;
} Each;

static void each_sub(const ArSubPlan *sp, int id, int parent, void *ctx)
{
	const Each *e = ctx;
	Hdr sh = *e->h;
	ArGraph *dg;
	char tab[300];

	(void)parent;
	if (!sp->plan)
		return;
	snprintf(tab, sizeof tab, "%s_sg%d", e->h->lo, id);
	dg = hdr_with_defaults(sp->g);
	sh.g = dg;
	sh.p = sp->plan;
	sh.sub = sp;
	sh.sub_id = id;
	sh.tab = tab;
	sh.nattrs = hdr_num_attrs(&sh);
	e->fn(&sh, e->ctx);
	hdr_free_defaults(dg, sp->g);
}

void hdr_each_sub(const Hdr *h, void (*fn)(const Hdr *sh, void *ctx),
		  void *ctx)
{
	Each e = {h, fn, ctx};
	ar_plan_walk_subs(h->top, each_sub, &e);
}

typedef struct Any {
	int (*pred)(const Hdr *sh);
	int any;
} Any;

static void any_sub(const Hdr *sh, void *ctx)
{
	Any *a = ctx;
	a->any |= a->pred(sh);
}

int hdr_any_set(const Hdr *h, int (*pred)(const Hdr *sh))
{
	Any a = {pred, pred(h)};
	hdr_each_sub(h, any_sub, &a);
	return a.any;
}

void hdr_pool_sep(ArText *out, int *k)
{
	ar_text_puts(out, *k % 16 ? " " : "\n\t");
	(*k)++;
}

const ArNode *hdr_step_node(const Hdr *h, int s)
{
	return &h->g->nodes[h->p->steps[s]];
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
	ArGraph *dg = hdr_with_defaults(g);
	ArWeightsLayout wl;
	ArSubCounts c;
	Hdr h = {f, dg, p, info, up, lo, p->nregions, NULL, NULL, 0, lo, NULL,
		 -1, p, &wl, false, 0, NULL, 0, false, info->strip_names};
	int rc;

	assert(p->noop || p->nsteps == 0);     /* ar_plan_facts ran */
	ar_weights_layout_all(g, p, &wl);
	ar_plan_sub_counts(p, &c);
	h.nsubs = c.total;
	h.work = c.total > 0 || hdr_any_scratch(&h);
	h.requant = hdr_any_requant(&h);
	hdr_collect_ops(&h);
	hdr_set_case(up, 1);
	if (h.nreg)
		hdr_region_idents(&h);
	h.nattrs = hdr_num_attrs(&h);
	rc = hdr_check_limits(&h, err);
	if (rc == AR_OK) {
		hdr_write_intro(&h);
		hdr_tmpl(&h, "#ifndef $_ARENAC_H\n#define $_ARENAC_H\n\n"
			 "#include <stdint.h>\n");
		if (hdr_needs_math(&h))
			fputs("#include <math.h>\n", f);
		hdr_write_macros(&h);
		hdr_write_uses(&h);
		hdr_tmpl(&h, "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
		hdr_write_types(&h);
		hdr_write_tables(&h);
		hdr_write_arena(&h);
		hdr_tmpl(&h, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
		if (ferror(f))
			rc = ar_fail(err, AR_EXIT_USAGE, "writing the header "
				     "failed");
	}
	ar_strv_free(h.ops, h.nops);
	hdr_free_defaults(dg, g);
	ar_strv_free(h.rup, h.nreg);
	ar_strv_free(h.rlo, h.nreg);
	ar_weights_layout_free(&wl);
	free(up), free(lo);
	return rc;
}
