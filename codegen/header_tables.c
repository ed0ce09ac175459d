/*
 * header_tables.c — the header's tables: tensors, graph inputs and
 * outputs, steps (attributes: header_attrs.c, regions: header_tiers.c).
 *
 * Every file that includes the header sees the tables as extern
 * declarations with their lengths, so sizeof works on them and generic
 * code can loop over them; the one file that defines PREFIX_DEFINE_TABLES
 * holds their definitions.  Variable-length parts (dims, step operands,
 * attribute values) sit in static pools next to the definitions, and each
 * table ends with one entry past the last (a null name or op) for code
 * that walks them without the counts.
 */
#include <stdlib.h>

#include "header_parts.h"

static void write_externs(const Hdr *h)
{
	hdr_tmpl(h, "/* Defined where $_DEFINE_TABLES is (see above). */\n"
		 "extern const @_tensor @_tensors[$_NUM_TENSORS + 1];\n"
		 "extern const int32_t @_inputs[$_NUM_INPUTS + 1];\n"
		 "extern const int32_t @_outputs[$_NUM_OUTPUTS + 1];\n"
		 "extern const @_attr @_attrs[$_NUM_ATTRS + 1];\n"
		 "extern const @_step @_steps[$_NUM_STEPS + 1];\n"
		 "extern const @_quant @_quants[$_NUM_QUANTS + 1];\n");
	if (h->nreg)
		hdr_tmpl(h, "extern const @_region @_regions[$_NUM_REGIONS];\n");
	hdr_tmpl(h, "/* Defined by the C file of arenac --weights FILE.c. */\n"
		 "extern const uint8_t @_weights[$_WEIGHTS_SIZE > 0 ? "
		 "$_WEIGHTS_SIZE : 1];\n\n");
}

static bool quantized(const ArTensor *t)
{
	return t->quant.scale >= 0 || t->quant.zero_point >= 0;
}

int hdr_num_quants(const ArGraph *g)
{
	int n = 0;
	for (int i = 0; i < g->ntensors; i++)
		n += quantized(&g->tensors[i]);
	return n;
}

/* One entry per quantized tensor, in tensor order. */
static void write_quants(const Hdr *h)
{
	const ArGraph *g = h->g;
	hdr_tmpl(h, "const @_quant @_quants[$_NUM_QUANTS + 1] = {\n");
	for (int i = 0; i < g->ntensors; i++) {
		const ArQuant *q = &g->tensors[i].quant;
		if (quantized(&g->tensors[i]))
			fprintf(h->f, "\t{%d, %d, %d, %lldu},\n", q->scale,
				q->zero_point, q->axis,
				(long long)(q->block > 0 ? q->block : 0));
	}
	fputs("\t{-1, -1, -1, 0u}\n};\n\n", h->f);
}

static void write_tensors(const Hdr *h)
{
	const ArGraph *g = h->g;
	int k = 0, at = 0, nq = 0;
	int64_t *woff = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *woff);

	ar_weights_layout(g, h->p, woff);
	hdr_open_pool(h, "int32_t", "dims");
	for (int i = 0; i < g->ntensors; i++)
		for (int d = 0; d < g->tensors[i].rank; d++) {
			hdr_pool_sep(h, &k);
			fprintf(h->f, "%lld,", (long long)g->tensors[i].dims[d]);
		}
	hdr_pool_sep(h, &k);
	fputs("0\n};\n\n", h->f);

	hdr_tmpl(h, "/* Indexed by tensor id. */\n"
		 "const @_tensor @_tensors[$_NUM_TENSORS + 1] = {\n");
	for (int i = 0; i < g->ntensors; i++) {
		const ArTensor *t = &g->tensors[i];
		const ArSlot *s = &h->p->slots[i];

		fprintf(h->f, "\t/* %d */ {", i);
		hdr_str(h, t->name);
		fputs(", ", h->f);
		hdr_dtype(h, t->dtype);
		fprintf(h->f, ", %s_KIND_", h->up);
		hdr_upper(h, ar_kind_name(t->kind));
		fprintf(h->f, ", %d, %s_dims + %d, %lldu, ", t->rank, h->lo, at,
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
			fprintf(h->f, "%lldu, ", (long long)woff[i]);
		else
			fprintf(h->f, "%s_NOT_IN_ARENA, ", h->up);
		fprintf(h->f, "%lldu, %d, ",
			(long long)(t->rank >= 0 ? ar_numel(t) : 0), s->io);
		if (quantized(t))
			fprintf(h->f, "%d, ", nq++);
		else
			fprintf(h->f, "%s_NO_QUANT, ", h->up);
		fprintf(h->f, "0x%xu},\n", (unsigned)t->bounded);
		at += t->rank > 0 ? t->rank : 0;
	}
	hdr_tmpl(h, h->nreg ? "\t{0, $_DT_UNDEFINED, 0, 0, @_dims, 0u, "
		 "$_NOT_IN_ARENA, 0, -1, -1, -1, 0u, -1, $_NOT_IN_ARENA, 0u, "
		 "-1, $_NO_QUANT, 0u}\n};\n\n" :
		 "\t{0, $_DT_UNDEFINED, 0, 0, @_dims, 0u, $_NOT_IN_ARENA, "
		 "-1, -1, -1, 0u, -1, $_NOT_IN_ARENA, 0u, -1, $_NO_QUANT, 0u}"
		 "\n};\n\n");
	free(woff);
}

/* A list of tensor ids, ending with -1. */
static void write_ids(const Hdr *h, const char *name, const int *ids, int n)
{
	fprintf(h->f, "const int32_t %s_%s[%s_NUM_%s + 1] = {", h->lo, name,
		h->up, name[0] == 'i' ? "INPUTS" : "OUTPUTS");
	for (int i = 0; i < n; i++)
		fprintf(h->f, "%d, ", ids[i]);
	fputs("-1};\n", h->f);
}

static void write_steps(const Hdr *h)
{
	const ArPlan *p = h->p;
	int k = 0, io = 0, na = 0;

	hdr_open_pool(h, "int32_t", "step_io");
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = hdr_step_node(h, s);
		for (int j = 0; j < n->nexplicit; j++) {
			hdr_pool_sep(h, &k);
			fprintf(h->f, "%d,", n->inputs[j]);
		}
		for (int j = 0; j < n->noutputs; j++) {
			hdr_pool_sep(h, &k);
			fprintf(h->f, "%d,", n->outputs[j]);
		}
	}
	hdr_pool_sep(h, &k);
	fputs("-1\n};\n\n", h->f);

	hdr_write_attrs(h);
	hdr_tmpl(h, "/* In execution order. */\n"
		 "const @_step @_steps[$_NUM_STEPS + 1] = {\n");
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = hdr_step_node(h, s);
		fprintf(h->f, "\t/* %d */ {", s);
		hdr_str(h, n->op);
		fputs(", ", h->f);
		hdr_str(h, n->domain);
		fputs(", ", h->f);
		hdr_str(h, n->name);
		fprintf(h->f, ", %d, %s_step_io + %d, %d, %s_step_io + %d, "
			"%d, %s_attrs + %d, %d, %d, %lld, %s_PHASE_",
			p->steps[s], h->lo, io, n->nexplicit, h->lo,
			io + n->nexplicit, n->noutputs, h->lo, na, n->nattrs,
			p->noop[s], (long long)n->opset, h->up);
		hdr_upper(h, ar_phase_name(n->phase));
		fputs("},\n", h->f);
		io += n->nexplicit + n->noutputs;
		na += n->nattrs;
	}
	hdr_tmpl(h, "\t{0, 0, 0, -1, @_step_io, 0, @_step_io, 0, @_attrs, 0, "
		 "0, 0, $_PHASE_FORWARD}\n};\n\n");
}

void hdr_write_tables(const Hdr *h)
{
	write_externs(h);
	hdr_tmpl(h, "#ifdef $_DEFINE_TABLES\n");
	write_tensors(h);
	write_quants(h);
	write_ids(h, "inputs", h->g->inputs, h->g->ninputs);
	write_ids(h, "outputs", h->g->outputs, h->g->noutputs);
	fputc('\n', h->f);
	if (h->nreg)
		hdr_write_regions(h);
	write_steps(h);
	hdr_tmpl(h, "#endif\n\n");
}
