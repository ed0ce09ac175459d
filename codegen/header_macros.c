/*
 * header_macros.c — the header's macros: the plan's figures, and for each
 * graph input and output its index, place, size, element count and type.
 *
 * Macros are what a firmware's own declarations can use at compile time
 * (a static input buffer of PREFIX_INPUT_x_NUMEL floats, a linker check
 * against PREFIX_ARENA_SIZE), so every number a declaration might need is
 * one.  Each input and output has its macros twice: by name (made from
 * the model's tensor names, sanitised and kept distinct) and by position
 * (PREFIX_INPUT_0_...), as TFLite Micro's interpreter.input(0) and
 * STM32Cube.AI's AI_NETWORK_IN_1_... give them: dtype (ONNX's code),
 * rank, shape as a braced initializer ({0} for rank 0, a filler), bytes,
 * and where the tensor is per-tensor quantised with constant parameters,
 * scale and zero point.
 */
#include <stdlib.h>
#include <string.h>

#include "header_parts.h"
#include "ops.h"
#include "sanitize.h"

/* What a declaration or a kernel's setup reads of the tensor. */
static void write_io_type(const Hdr *h, const char *m, const ArTensor *t)
{
	ArText out = ar_text_on(h->f);
	double scale;
	int64_t zp;

	ar_text_printf(&out, "#define %s_DTYPE %d /* %s_DT_", m,
		       (int)t->dtype, h->up);
	ar_text_upper(&out, ar_dtype_name(t->dtype));
	ar_text_printf(&out, " */\n#define %s_RANK %d\n", m, t->rank);
	/* Rank 0: {0}, a filler, as C has no empty arrays. */
	ar_text_printf(&out, "#define %s_SHAPE {", m);
	for (int d = 0; d < t->rank; d++)
		ar_text_printf(&out, "%s%lld", d ? ", " : "",
			       (long long)t->dims[d]);
	ar_text_puts(&out, t->rank > 0 ? "}\n" : "0}\n");
	ar_text_printf(&out, "#define %s_BYTES %lldu\n", m,
		       (long long)(t->bytes > 0 ? t->bytes : 0));
	if (ar_quant_scalar(h->g, t, &scale, &zp)) {
		ar_text_printf(&out, "#define %s_SCALE ", m);
		hdr_f32(&out, (float)scale);
		ar_text_printf(&out, "\n#define %s_ZERO_POINT %lld\n", m,
			       (long long)zp);
	}
	ar_text_close(&out);
}

/* Input or output ids[i]'s macros; m is their common name part. */
static void write_io_tensor(const Hdr *h, const char *m, int id)
{
	const ArTensor *t = &h->g->tensors[id];
	const ArSlot *s = &h->p->slots[id];

	fputs("/* ", h->f);
	ar_c_comment(h->f, t->name);
	fprintf(h->f, ": %s[", ar_dtype_name(t->dtype));
	for (int d = 0; d < t->rank; d++)
		fprintf(h->f, "%s%lld", d ? "," : "", (long long)t->dims[d]);
	fprintf(h->f, "] */\n#define %s_INDEX %d\n", m, id);
	if (h->nreg && s->planned)
		fprintf(h->f, "#define %s_REGION %s_REGION_%s\n", m, h->up,
			h->rup[s->region]);
	else if (h->nreg)
		fprintf(h->f, "#define %s_REGION 0\n", m);
	if (s->io >= 0)
		fprintf(h->f, "#define %s_IO %d\n", m, s->io);
	else if (s->planned)
		fprintf(h->f, "#define %s_OFFSET %lldu\n", m,
			(long long)s->offset);
	else
		fprintf(h->f, "#define %s_OFFSET %s_NOT_IN_ARENA\n", m, h->up);
	fprintf(h->f, "#define %s_SIZE %lldu\n#define %s_NUMEL %lldu\n", m,
		(long long)(t->bytes > 0 ? t->bytes : 0), m,
		(long long)(t->rank >= 0 ? ar_numel(t) : 0));
	write_io_type(h, m, t);
	/* A caller's buffer has no pointer macro: io[PREFIX_..._IO] is it,
	 * and code written for the arena must not build against it. */
	if (s->io >= 0)
		return;
	if (h->nreg)
		fprintf(h->f, "#define %s_PTR(bases) ((void *)((uint8_t "
			"*)(bases)[%s_REGION] + %s_OFFSET))\n", m, m, m);
	else
		fprintf(h->f, "#define %s_PTR(arena) ((void *)((uint8_t "
			"*)(arena) + %s_OFFSET))\n", m, m);
}

static void write_io_macros(const Hdr *h, const char *what, const int *ids,
			    int n)
{
	const char **names = ar_xmalloc(((size_t)n + 1) * sizeof *names);
	char **own = ar_xcalloc((size_t)n + 1, sizeof *own), **frag;

	/* A name that would start with a digit gets T_ in front, so that
	 * a tensor named "1" does not take position 1's macros. */
	for (int i = 0; i < n; i++) {
		const char *nm = h->g->tensors[ids[i]].name;
		char *id = ar_c_ident(nm);
		if (*id >= '0' && *id <= '9') {
			own[i] = ar_xmalloc(strlen(nm) + 3);
			sprintf(own[i], "T_%s", nm);
		}
		free(id);
		names[i] = own[i] ? own[i] : nm;
	}
	frag = ar_c_idents_unique(names, n, "tensor");
	ar_strv_free(own, n);
	for (int i = 0; i < n; i++) {
		char m[256];
		snprintf(m, sizeof m, "%s_%s_%.200s", h->up, what, frag[i]);
		write_io_tensor(h, m, ids[i]);
		snprintf(m, sizeof m, "%s_%s_%d", h->up, what, i);
		write_io_tensor(h, m, ids[i]);
	}
	ar_strv_free(frag, n);
	free(names);
}

void hdr_write_macros(const Hdr *h)
{
	const ArPlan *p = h->p;
	struct {
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
		{"NUM_ATTRS", h->nattrs, ""},
		{"NUM_QUANTS", hdr_num_quants(h->g), ""},
		{"IO_SEPARATE", p->io_separate, ""},
	};

	fputc('\n', h->f);
	/* Several memories have no one arena size: code that wants one must
	 * not build.  One memory (--memory sram:384K) is one arena, its
	 * region's, which a runtime taking one arena binds as any other. */
	if (h->nreg == 1)
		m[0].v = p->regions[0].used_bytes;
	for (size_t i = h->nreg > 1 ? 1 : 0; i < sizeof m / sizeof m[0]; i++)
		fprintf(h->f, "#define %s_%s %lld%s\n", h->up, m[i].name,
			m[i].v, m[i].suffix);
	/* --layout nhwc (frontend/layout.c): the tables' 4-D activations
	 * are [N, H, W, C], the graph's inputs and outputs as declared, the
	 * channels-last convolutions' filters as TFLite Micro's and
	 * CMSIS-NN's kernels read them (ops.h ar_filter_perm). */
	if (h->g->nhwc)
		hdr_tmpl(h, "/* 4-D activations channels-last ([N,H,W,C]: "
			 "--layout nhwc); inputs and outputs\n"
			 " * as the model declares them. */\n"
			 "#define $_LAYOUT_NHWC 1\n"
			 "/* Channels-last convolutions' filters OHWI "
			 "[M,kH,kW,C/group], depthwise ones\n"
			 " * (group = C > 1) [1,kH,kW,M], as TFLite Micro and "
			 "CMSIS-NN read them. */\n"
			 "#define $_WEIGHTS_LAYOUT_OHWI 1\n");
	if (h->nreg)
		hdr_write_region_macros(h);
	hdr_write_sub_macros(h);
	hdr_write_requant_macros(h);
	hdr_tmpl(h, "#define $_NOT_IN_ARENA 0xFFFFFFFFu\n"
		 "#define $_NO_QUANT (-1)\n\n");
	write_io_macros(h, "INPUT", h->g->inputs, h->g->ninputs);
	write_io_macros(h, "OUTPUT", h->g->outputs, h->g->noutputs);
}
