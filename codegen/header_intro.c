/*
 * header_intro.c — the header's opening comment: what was planned, how
 * well, and how a firmware uses the rest of the file.
 *
 * The figures come first (model, options, arena, bound, weights, peak
 * step, optimality), so that a diff of two regenerated headers shows what
 * changed; then one paragraph of instructions written for the layout at
 * hand (one arena or tiers, inputs in the arena or in the caller's
 * buffers), naming the very macros and arrays this header defines.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "header_parts.h"
#include "sanitize.h"

/* Instruction lines are wrapped to this width, " * " included. */
#define WIDTH 76

/* t with the prefixes put in (see hdr_tmpl), malloc'ed. */
static char *expand(const Hdr *h, const char *t)
{
	size_t n = strlen(t) + 1;
	char *r, *w;

	for (const char *c = t; *c; c++)
		n += *c == '@' ? strlen(h->lo) : *c == '$' ? strlen(h->up) : 0;
	w = r = ar_xmalloc(n);
	for (; *t; t++) {
		const char *s = *t == '@' ? h->lo : *t == '$' ? h->up : NULL;
		if (s)
			w += sprintf(w, "%s", s);
		else
			*w++ = *t;
	}
	*w = 0;
	return r;
}

/*
 * Writes text as comment lines of at most WIDTH columns, breaking at
 * spaces; a line that starts with a space (a code example) stays whole.
 */
static void put_wrapped(const Hdr *h, const char *t)
{
	char *text = expand(h, t);

	for (char *line = text, *end; *line; line = *end ? end + 1 : end) {
		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		if (line == end) {
			fputs(" *\n", h->f);
			continue;
		}
		if (*line == ' ') {
			fprintf(h->f, " * %.*s\n", (int)(end - line), line);
			continue;
		}
		for (;;) {
			char *cut, *sp = NULL, *last;
			while (line < end && *line == ' ')
				line++;
			if (line == end)
				break;
			cut = line + (WIDTH - 3);
			if (cut >= end) {
				cut = end;
			} else {
				for (char *q = line; q <= cut; q++)
					if (*q == ' ')
						sp = q;
				/* A word longer than the line stays whole. */
				if (!sp)
					sp = memchr(cut, ' ', (size_t)(end - cut));
				cut = sp ? sp : end;
			}
			for (last = cut; last > line && last[-1] == ' ';)
				last--;
			fprintf(h->f, " * %.*s\n", (int)(last - line), line);
			line = cut;
		}
	}
	free(text);
}

/* The paragraph on using the header, for this header's layout. */
static void write_use(const Hdr *h)
{
	const char *where = h->nreg ? (h->p->io_separate ? "bases, io" :
				       "bases") :
			    (h->p->io_separate ? "@_arena, io" : "@_arena");
	char buf[5000];
	size_t n;

	n = (size_t)snprintf(buf, sizeof buf, "\nUse: in exactly one C or C++ "
		"file,\n    #define $_DEFINE_TABLES\n    #define $_DEFINE_ARENA\n"
		"    #include \"this header\"\ndefines the tables (@_tensors, "
		"@_steps, @_inputs, @_outputs, ...), which other files see as "
		"extern declarations, and ");
	if (h->nreg)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "one array per "
			"region, uint8_t @_arena_%s[$_ARENA_%s_SIZE] and so on, "
			"each aligned to $_ARENA_ALIGN, and @_arenas[], their "
			"bases indexed by region.  Each array takes its "
			"memory's section hook, $_ARENA_SECTION (empty) unless "
			"defined before the include, e.g. with\n    "
			"-D$_ARENA_%s_SECTION="
			"'__attribute__((section(\".%s\")))'\nThe reference "
			"runtime runs it with art_run_arenas, an arena per "
			"region.\n", h->rlo[0], h->rup[0], h->rup[0], h->rlo[0]);
	else
		n += (size_t)snprintf(buf + n, sizeof buf - n, "uint8_t "
			"@_arena[$_ARENA_SIZE], aligned to $_ARENA_ALIGN, "
			"with the section hook $_ARENA_SECTION, empty unless "
			"defined before the include, e.g. with\n    "
			"-D$_ARENA_SECTION='__attribute__((section(\".arena\")))'"
			"\n");
	n += (size_t)snprintf(buf + n, sizeof buf - n, "Run @_steps[0 .. "
		"$_NUM_STEPS) in order with your kernels, skipping those "
		"flagged noop (their outputs are views already in place); "
		"a step's op_code ($_OP_...) picks its kernel, and its "
		"attributes include ONNX's defaults%s.  Tensor i is at $_TENSOR_PTR(%s, i), typed $_TENSOR_F32(%s, i) "
		"and so on, while first <= step <= last%s.  The graph's inputs "
		"are tensors @_inputs[0 .. $_NUM_INPUTS), its outputs "
		"@_outputs[0 .. $_NUM_OUTPUTS).  %s", h->requant ? "; an int8 "
		"step's requant_multiplier and requant_shift are TFLite's, per "
		"output channel" : "", where, where, h->nreg ?
		", where bases[r] is region r's arena (@_arenas or your own)" :
		"", hdr_sub_use(h));
	if (h->p->io_separate)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "They are not "
			"in the arena but in buffers of yours: io[k] for input "
			"k, io[$_NUM_INPUTS + j] for output j, each "
			"$_TENSOR_SIZE(i) bytes aligned to $_ARENA_ALIGN.  ");
	if (hdr_weights_region(h) >= 0)
		snprintf(buf + n, sizeof buf - n, "Weights and constants "
			 "(offset $_NOT_IN_ARENA) are at $_WEIGHT_PTR(w, i) in "
			 "the blob of arenac --weights, which goes at the start "
			 "of region $_WEIGHTS_REGION: w = "
			 "bases[$_WEIGHTS_REGION].");
	else
		snprintf(buf + n, sizeof buf - n, "Weights and constants "
			 "(offset $_NOT_IN_ARENA) are at $_WEIGHT_PTR(w, i) in "
			 "the blob of arenac --weights; written as FILE.c it "
			 "defines @_weights (w), which\n    -D$_WEIGHTS_SECTION="
			 "'__attribute__((section(\".rodata.weights\")))'\n"
			 "on its compile line places.");
	assert(strlen(buf) + 1 < sizeof buf);
	put_wrapped(h, buf);
	fputs(" */\n", h->f);
}

/* The model's name as the other outputs give it: its file name alone, so
 * that the header does not depend on the folder it was planned from. */
static const char *model_name(const Hdr *h)
{
	return h->info->model_path ? ar_model_name(h->info) : h->g->name;
}

static void write_figures(const Hdr *h)
{
	FILE *f = h->f;
	const ArPlan *p = h->p;
	int wr = hdr_weights_region(h);

	if (h->nreg)
		hdr_write_intro_regions(h);
	else
		fprintf(f, "\n * arena:       %lld bytes (%s_ARENA_SIZE), "
			"offsets aligned to %lld\n", (long long)p->arena_bytes,
			h->up, (long long)p->align);
	if (p->io_separate)
		fputs(" * io:          graph inputs and outputs in the "
		      "caller's buffers (--io separate)\n", f);
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
		const ArNode *n = hdr_step_node(h, p->peak_step);
		fprintf(f, " * peak step:   %d of %d: ", p->peak_step,
			p->nsteps);
		ar_c_comment(f, n->op);
		fputs(" \"", f);
		ar_c_comment(f, n->name);
		fputs("\"\n", f);
	}
	if (h->nreg)
		fputs(p->optimal ? " * optimal:     yes, each region's arena "
		      "is minimal" : " * optimal:     not proven", f);
	else if (h->nsubs && p->optimal)
		fputs(" * optimal:     yes, no smaller arena exists for these "
		      "step orders\n *              with each subgraph in a "
		      "region of its own", f);
	else
		fputs(p->optimal ? " * optimal:     yes, no smaller arena "
		      "exists for this step order" :
		      " * optimal:     not proven", f);
	fputs(" (algorithm ", f);
	ar_c_comment(f, p->algorithm ? p->algorithm : "unknown");
	fputs(")\n", f);
	if (h->nreg)
		fputs(p->placement_optimal ? " * placement:   proven least "
		      "estimated traffic cost\n" : " * placement:   least "
		      "estimated traffic cost found, not proven\n", f);
	hdr_write_sub_intro(h);
}

void hdr_write_intro(const Hdr *h)
{
	FILE *f = h->f;

	fputs("/*\n * Memory plan for ", f);
	ar_c_comment(f, model_name(h));
	fputs(", generated by arenac; do not edit.\n *\n * model:       ", f);
	ar_c_comment(f, model_name(h));
	fputs(" (graph \"", f);
	ar_c_comment(f, h->g->name);
	fputs("\")\n * arenac:      " ARENAC_VERSION "\n * options:     ", f);
	ar_c_comment(f, h->info->options && *h->info->options ?
		     h->info->options : "(defaults)");
	write_figures(h);
	write_use(h);
}
