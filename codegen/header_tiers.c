/*
 * header_tiers.c — what a tiered plan (--memory) adds to the header: its
 * memories' names as identifiers, their lines in the opening comment,
 * their macros and their table.  Their arenas are in header_arena.c.
 *
 * Region names are the user's (--memory sram:...), so they are sanitised
 * and upper-cased before collisions are resolved: "sram" and "SRAM" are
 * two memories but one macro.  The first region keeps the name, later
 * ones get _2, _3, ... in region order.
 */
#include "header_parts.h"
#include "sanitize.h"

void hdr_region_idents(Hdr *h)
{
	char **names = ar_xmalloc(((size_t)h->nreg + 1) * sizeof *names);

	for (int r = 0; r < h->nreg; r++) {
		names[r] = ar_xstrdup(h->p->regions[r].name);
		hdr_set_case(names[r], 1);
	}
	h->rup = ar_c_idents_unique((const char *const *)names, h->nreg,
				    "REGION");
	h->rlo = ar_xmalloc(((size_t)h->nreg + 1) * sizeof *h->rlo);
	for (int r = 0; r < h->nreg; r++) {
		h->rlo[r] = ar_xstrdup(h->rup[r]);
		hdr_set_case(h->rlo[r], 0);
	}
	ar_strv_free(names, h->nreg);
}

int hdr_weights_region(const Hdr *h)
{
	for (int r = 0; r < h->nreg; r++)
		if (h->p->regions[r].weights_bytes > 0)
			return r;
	return -1;
}

/* The comment lists what firmware needs to size and place each region,
 * and what the placement is expected to cost. */
void hdr_write_intro_regions(const Hdr *h)
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

/* Per region its index and arena size; the weights' region and the
 * bytes reserved at its start for them.  $_HAS_REGIONS and a step's
 * workspace region whichever layout its type has tell ARENAC_RT_BIND
 * to bind the regions. */
void hdr_write_region_macros(const Hdr *h)
{
	int wr = hdr_weights_region(h);

	hdr_tmpl(h, h->work ? "#define $_STEP_SCRATCH_REGION(s) "
		 "((s)->scratch_region)\n" :
		 "#define $_STEP_SCRATCH_REGION(s) 0\n");
	fprintf(h->f, "#define %s_HAS_REGIONS 1\n#define %s_NUM_REGIONS %d\n",
		h->up, h->up, h->nreg);
	for (int r = 0; r < h->nreg; r++)
		fprintf(h->f, "#define %1$s_REGION_%2$s %3$d\n"
			"#define %1$s_ARENA_%2$s_SIZE %4$lldu\n", h->up,
			h->rup[r], r, (long long)h->p->regions[r].used_bytes);
	if (wr >= 0)
		fprintf(h->f, "#define %1$s_WEIGHTS_REGION %1$s_REGION_%2$s\n"
			"#define %1$s_WEIGHTS_RESERVED %3$lldu\n", h->up,
			h->rup[wr], (long long)h->p->regions[wr].weights_bytes);
}

/* The regions as a table, for code that walks them. */
void hdr_write_regions(const Hdr *h, ArText *out)
{
	ar_text_printf(out, "const %s_region %s_regions[%s_NUM_REGIONS] = {\n",
		       h->lo, h->lo, h->up);
	for (int r = 0; r < h->nreg; r++) {
		ar_text_puts(out, "\t{");
		hdr_str(out, h->p->regions[r].name);
		ar_text_printf(out, ", %s_ARENA_%s_SIZE, %lldu}%s\n", h->up, h->rup[r],
			(long long)h->p->regions[r].weights_bytes,
			r + 1 < h->nreg ? "," : "");
	}
	ar_text_puts(out, "};\n\n");
}
