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
 * that walks them without the counts.  Each planned subgraph has tables
 * of the same types, static, named PREFIX_sgID_* (header_subgraphs.c
 * lists them); their offsets are absolute, like the model graph's.
 */
#include <stdlib.h>

#include "header_parts.h"
#include "sanitize.h"

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
	if (h->nsubs)
		hdr_tmpl(h, "extern const @_subgraph "
			 "@_subgraphs[$_NUM_SUBGRAPHS + 1];\n");
	hdr_tmpl(h, "/* Defined by the C file of arenac --weights FILE.c. */\n"
		 "extern const uint8_t @_weights[$_WEIGHTS_SIZE > 0 ? "
		 "$_WEIGHTS_SIZE : 1];\n\n");
}

/* Where tensor i of the current set lives (a subgraph's: resolved). */
static const ArSlot *place(const Hdr *h, int i, int64_t *offset,
			   int *region)
{
	ArWhere w;
	if (!h->sub) {
		*offset = h->p->slots[i].offset;
		*region = h->p->slots[i].region;
		return &h->p->slots[i];
	}
	ar_sub_where(h->sub, i, &w);
	*offset = w.offset;
	*region = w.region;
	return &w.p->slots[w.t];
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

/* One entry per quantized tensor of the set, in tensor order (a
 * subgraph's indices name its own tensors). */
static void write_quants(const Hdr *h, ArText *out)
{
	const ArGraph *g = h->g;
	hdr_open_table(h, out, "quant", "quants", "NUM_QUANTS", hdr_num_quants(g));
	for (int i = 0; i < g->ntensors; i++) {
		const ArQuant *q = &g->tensors[i].quant;
		if (quantized(&g->tensors[i]))
			ar_text_printf(out, "\t{%d, %d, %d, %lldu},\n", q->scale,
				q->zero_point, q->axis,
				(long long)(q->block > 0 ? q->block : 0));
	}
	ar_text_puts(out, "\t{-1, -1, -1, 0u}\n};\n\n");
}

/*
 * One row per tensor, the bulk of the header: written field by field
 * rather than through a format, as the row's literal pieces then cost a
 * store each (most of DenseNet's header time went to scanning formats).
 */
static void write_tensors(const Hdr *h, ArText *out)
{
	const ArGraph *g = h->g;
	const int64_t *woff = h->wl->off[h->sub_id + 1];
	int k = 0, at = 0, nq = 0;

	hdr_open_pool(h, out, "int32_t", "dims");
	for (int i = 0; i < g->ntensors; i++)
		for (int d = 0; d < g->tensors[i].rank; d++) {
			hdr_pool_sep(out, &k);
			hdr_num(out, g->tensors[i].dims[d], ",");
		}
	hdr_pool_sep(out, &k);
	ar_text_puts(out, "0\n};\n\n");

	if (!h->sub)
		ar_text_puts(out, "/* Indexed by tensor id. */\n");
	hdr_open_table(h, out, "tensor", "tensors", "NUM_TENSORS", g->ntensors);
	for (int i = 0; i < g->ntensors; i++) {
		const ArTensor *t = &g->tensors[i];
		const ArSlot *s = &h->p->slots[i], *o;
		int64_t offset;
		int region;

		o = place(h, i, &offset, &region);
		ar_text_puts(out, "\t/* ");
		ar_text_dec(out, i);
		ar_text_puts(out, " */ {");
		/* --strip-names keeps the graph's inputs' and outputs': a
		 * handful, which a harness prints its results by. */
		if (t->kind == AR_TK_INPUT || t->kind == AR_TK_OUTPUT)
			hdr_str(out, t->name);
		else
			hdr_name(h, out, t->name);
		ar_text_puts(out, ", ");
		hdr_dtype(h, out, t->dtype);
		ar_text_puts(out, ", ");
		hdr_macro(h, out, "KIND_");
		ar_text_upper(out, ar_kind_name(t->kind));
		ar_text_puts(out, ", ");
		hdr_num(out, t->rank, ", ");
		hdr_pool_ref(h, out, "_dims + ", at);
		hdr_num(out, t->bytes > 0 ? t->bytes : 0, "u, ");
		if (o->planned)
			hdr_num(out, offset, "u, ");
		else
			hdr_macro(h, out, "NOT_IN_ARENA, ");
		if (h->nreg)
			hdr_num(out, o->planned ? region : 0, ", ");
		hdr_num(out, s->first, ", ");
		hdr_num(out, s->last, ", ");
		hdr_num(out, s->alias_of, ", ");
		hdr_num(out, s->alias_of >= 0 ? s->alias_offset : 0, "u, ");
		hdr_num(out, s->inplace_of, ", ");
		if (woff[i] >= 0)
			hdr_num(out, woff[i], "u, ");
		else
			hdr_macro(h, out, "NOT_IN_ARENA, ");
		hdr_num(out, t->rank >= 0 ? ar_numel(t) : 0, "u, ");
		hdr_num(out, o->io, ", ");
		if (quantized(t))
			hdr_num(out, nq++, ", ");
		else
			hdr_macro(h, out, "NO_QUANT, ");
		ar_text_printf(out, "0x%xu},\n", (unsigned)t->bounded);
		at += t->rank > 0 ? t->rank : 0;
	}
	ar_text_printf(out, "\t{0, %s_DT_UNDEFINED, 0, 0, %s_dims, 0u, "
		"%s_NOT_IN_ARENA, %s-1, -1, -1, 0u, -1, %s_NOT_IN_ARENA, 0u, "
		"-1, %s_NO_QUANT, 0u}\n};\n\n", h->up, h->tab, h->up,
		h->nreg ? "0, " : "", h->up, h->up);
}

/* A list of tensor ids, ending with -1. */
static void write_ids(const Hdr *h, ArText *out, const char *name,
		      const int *ids, int n)
{
	if (h->sub)
		ar_text_printf(out, "static const int32_t %s_%s[%d] = {", h->tab,
			name, n + 1);
	else
		ar_text_printf(out, "const int32_t %s_%s[%s_NUM_%s + 1] = {", h->lo,
			name, h->up, name[0] == 'i' ? "INPUTS" : "OUTPUTS");
	for (int i = 0; i < n; i++)
		ar_text_printf(out, "%d, ", ids[i]);
	ar_text_puts(out, "-1};\n");
}

static void write_steps(const Hdr *h, ArText *out)
{
	const ArPlan *p = h->p;
	int k = 0, io = 0, na = 0, nq = 0;

	hdr_open_pool(h, out, "int32_t", "step_io");
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = hdr_step_node(h, s);
		for (int j = 0; j < n->nexplicit; j++) {
			hdr_pool_sep(out, &k);
			hdr_num(out, n->inputs[j], ",");
		}
		for (int j = 0; j < n->noutputs; j++) {
			hdr_pool_sep(out, &k);
			hdr_num(out, n->outputs[j], ",");
		}
	}
	hdr_pool_sep(out, &k);
	ar_text_puts(out, "-1\n};\n\n");

	hdr_write_attrs(h, out);
	hdr_write_requant_pools(h, out);
	if (h->work)
		hdr_write_step_sub_pool(h, out);
	if (!h->sub)
		ar_text_puts(out, "/* In execution order. */\n");
	hdr_open_table(h, out, "step", "steps", "NUM_STEPS", p->nsteps);
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = hdr_step_node(h, s);
		ar_text_puts(out, "\t/* ");
		ar_text_dec(out, s);
		ar_text_puts(out, " */ {");
		hdr_str(out, n->op);
		ar_text_puts(out, ", ");
		hdr_op_code(h, out, n);
		ar_text_puts(out, ", ");
		hdr_str(out, n->domain);
		ar_text_puts(out, ", ");
		hdr_name(h, out, n->name);
		ar_text_puts(out, ", ");
		hdr_num(out, p->steps[s], ", ");
		hdr_pool_ref(h, out, "_step_io + ", io);
		hdr_num(out, n->nexplicit, ", ");
		hdr_pool_ref(h, out, "_step_io + ", io + n->nexplicit);
		hdr_num(out, n->noutputs, ", ");
		hdr_pool_ref(h, out, "_attrs + ", na);
		hdr_num(out, n->nattrs, ", ");
		hdr_num(out, p->noop[s], ", ");
		hdr_num(out, n->opset, ", ");
		hdr_macro(h, out, "PHASE_");
		ar_text_upper(out, ar_phase_name(n->phase));
		if (h->work)
			hdr_write_step_work(h, out, s);
		hdr_write_step_requant(h, out, s, &nq);
		ar_text_puts(out, "},\n");
		io += n->nexplicit + n->noutputs;
		na += n->nattrs;
	}
	ar_text_printf(out, "\t{0, %s_NUM_OPS, 0, 0, -1, %s_step_io, 0, "
		"%s_step_io, 0, %s_attrs, 0, 0, 0, %s_PHASE_FORWARD", h->up,
		h->tab, h->tab, h->tab, h->up);
	if (h->work)
		ar_text_printf(out, ", %s_NOT_IN_ARENA, 0u,%s %s_step_subgraphs, 0",
			h->up, h->nreg ? " 0," : "", h->tab);
	if (h->requant)
		ar_text_printf(out, ", %s_requant_multiplier, %s_requant_shift, 0",
			h->tab, h->tab);
	ar_text_puts(out, "}\n};\n\n");
}

/* One table set: tensors, inputs and outputs, steps; the bulk of the
 * header, written through one ArText (text.h). */
static void write_set(const Hdr *h)
{
	ArText out = ar_text_on(h->f);

	write_tensors(h, &out);
	write_quants(h, &out);
	write_ids(h, &out, "inputs", h->g->inputs, h->g->ninputs);
	write_ids(h, &out, "outputs", h->g->outputs, h->g->noutputs);
	ar_text_putc(&out, '\n');
	if (h->nreg && !h->sub)
		hdr_write_regions(h, &out);
	write_steps(h, &out);
	ar_text_close(&out);
}

static void write_sub_set(const Hdr *sh, void *ctx)
{
	(void)ctx;
	fprintf(sh->f, "/* Subgraph %d: '", sh->sub_id);
	ar_c_comment(sh->f, sh->sub->attr);
	fputs("' of step node '", sh->f);
	ar_c_comment(sh->f, sh->sub->up_g->nodes[sh->sub->node].name);
	fputs("'. */\n", sh->f);
	write_set(sh);
}

void hdr_write_tables(const Hdr *h)
{
	write_externs(h);
	hdr_tmpl(h, "#ifdef $_DEFINE_TABLES\n");
	write_set(h);
	hdr_each_sub(h, write_sub_set, NULL);
	if (h->nsubs)
		hdr_write_subgraphs(h);
	hdr_tmpl(h, "#endif\n\n");
}
