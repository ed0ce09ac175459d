/*
 * timeline.c — the arena over time, as a page: a title, a legend, and one
 * block per plan (tlpanel.c): this run's plan, and with --timeline-compare
 * another plan read from its JSON report below it, on the same scales, so
 * "what did recomputation buy me?" is the difference of two shapes.
 *
 * Every shape is a Graphviz node pinned where it belongs (the nop engine,
 * i.e. "neato -n"), so the picture is an exact drawing of the plan, not a
 * layout Graphviz chose.  Scales adapt to the plans and are bounded: a step
 * is 4 to 48 points wide until the plot reaches 1,800 points, narrower
 * beyond (several steps then share a hover column), a step away from the
 * arena an eighth of that (tlsteps.c); the larger arena is 720 points high
 * (440 for each of two).  Tensors too small to see merge into grey "other"
 * bands; names go on the largest rectangles only.  Text is laid out with
 * DejaVu Sans's widths (textwidth.c), so it fits in any common sans.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "devices.h"
#include "emit.h"
#include "planjson.h"
#include "sanitize.h"
#include "timeline.h"

#define PLOT_W 1400.0    /* a plot's width when steps need not be narrow */
#define PLOT_W_MAX 1800.0
#define PLOT_H 720.0     /* arena height, one plan */
#define PLOT_H2 440.0    /* the larger arena's height, two plans */
#define CHART_H 140.0    /* bytes-in-use height at the larger arena */
#define CHART_H2 100.0
#define LEFT 90.0        /* room for offset labels */
#define BOTTOM 6.0
#define MAX_LABELS 60    /* names written on rectangles, per plan */
#define OTHER_PT 2.0     /* "other" by default: under this many points */
#define LEGEND_ROW 18.0
#define LEGEND_W 900.0   /* the legend wraps at the plots' width, or this */

Agnode_t *ar_tl_box(ArTlPage *pg, const char *name, const char *cls,
		    double x, double y, double w, double h)
{
	/* Graphviz keeps node sizes in whole points, so the corners are
	 * rounded here, once: boxes that touch in the plan touch in the
	 * picture instead of overlapping by a rounding error. */
	double x0 = round(x), y0 = round(y), x1 = round(x + w),
	       y1 = round(y + h);
	char id[32], *tagged = NULL;
	Agnode_t *n;

	if (!name) {
		snprintf(id, sizeof id, "n%d", pg->nshapes);
		name = id;
	} else if (pg->tag) {
		size_t len = strlen(name) + strlen(pg->tag) + 2;
		tagged = ar_xmalloc(len);
		snprintf(tagged, len, "%s\n%s", name, pg->tag);
		name = tagged;
	}
	pg->nshapes++;
	/* A name met twice would move the first shape: never. */
	assert(!ar_gv()->agnode(pg->gv, (char *)name, 0));
	n = ar_gv()->agnode(pg->gv, (char *)name, 1);
	free(tagged);
	ar_gv_set(n, "class", "%s", cls);
	ar_gv_set(n, "pos", "%.1f,%.1f!", (x0 + x1) / 2, (y0 + y1) / 2);
	ar_gv_set(n, "width", "%.4f", (x1 - x0) / 72);
	ar_gv_set(n, "height", "%.4f", (y1 - y0) / 72);
	ar_gv_set(n, "label", "%s", "");
	return n;
}

Agnode_t *ar_tl_text(ArTlPage *pg, double x, double y, const char *s,
		     double size, int align)
{
	/* A box larger than the text (a line is 1.2 em and 2 points), the
	 * label pushed to the side given ("\l", "\r" justify within a fixed
	 * size).  Graphviz warns of a label larger than its fixed box: never,
	 * since no sans it may measure with is wider than DejaVu Sans. */
	double w = ar_gv_text_width(s, size) + 8, h = size * 1.6 + 4;
	Agnode_t *n = ar_tl_box(pg, NULL, "text", align < 0 ? x : align > 0 ?
				x - w : x - w / 2, y - h / 2, w, h);
	ar_gv_set(n, "shape", "plaintext");
	ar_gv_set(n, "fixedsize", "true");
	ar_gv_set(n, "margin", "0");
	ar_gv_set(n, "label", "%s%s", s, align < 0 ? "\\l" : align > 0 ?
		  "\\r" : "");
	ar_gv_set(n, "fontsize", "%.0f", size);
	return n;
}

int64_t ar_tl_nice_step(double min)
{
	int64_t s = 1;
	for (;;) {
		if (s >= min)
			return s;
		if (2 * s >= min)
			return 2 * s;
		if (5 * s >= min)
			return 5 * s;
		s *= 10;
	}
}

int64_t ar_tl_pow2_step(double min)
{
	int64_t s = 1;
	while (s < min)
		s *= 2;
	return s;
}

/* A legend entry: a swatch (fill, or an outline style) and its words. */
typedef struct Entry {
	const char *fill, *style, *border;
	char words[96];
} Entry;

static double entry_width(const Entry *e)
{
	return 18 + ar_gv_text_width(e->words, 10) + 16;
}

/*
 * A legend row: its heading, then its entries, wrapped to lines no wider
 * than width; the first line's middle at y, the next ones below.  Draws
 * only when asked; returns how many lines it takes.
 */
static int row(ArTlPage *pg, double y, const char *heading, const Entry *e,
	       int n, double width, bool draw)
{
	double start = pg->x0 + ar_gv_text_width(heading, 10) + 12, x = start;
	int lines = 1;

	if (draw)
		ar_tl_text(pg, pg->x0, y, heading, 10, -1);
	for (int i = 0; i < n; i++) {
		if (x > start && x + entry_width(&e[i]) > pg->x0 + width) {
			x = start;
			y -= LEGEND_ROW;
			lines++;
		}
		if (draw) {
			Agnode_t *s = ar_tl_box(pg, NULL, "legend", x, y - 5, 14,
						10);
			ar_gv_set(s, "style", "%s", e[i].style);
			if (e[i].fill)
				ar_gv_set(s, "fillcolor", "%s", e[i].fill);
			ar_gv_set(s, "color", "%s", e[i].border);
			ar_gv_set(s, "penwidth", "0.6");
			ar_tl_text(pg, x + 18, y, e[i].words, 10, -1);
		}
		x += entry_width(&e[i]);
	}
	return lines;
}

static void add_entry(Entry *e, int *n, const char *fill, const char *style,
		      const char *border, const char *words)
{
	e[*n] = (Entry){fill, style, border, ""};
	snprintf(e[*n].words, sizeof e[*n].words, "%s", words);
	(*n)++;
}

/* The device memory chart's entries: the persistent parts, the arena in
 * use over them, the device's total and limit. */
static int device_entries(const ArTlPage *pg, Entry *e)
{
	int n = 0;
	char bytes[32], words[96];

	for (int k = 0; k < pg->nparts; k++) {
		ar_gv_bytes(bytes, sizeof bytes, pg->part[k].bytes);
		snprintf(words, sizeof words, "%s %s", pg->part[k].name, bytes);
		add_entry(e, &n, pg->part[k].fill, "filled", "#555555", words);
	}
	add_entry(e, &n, AR_TL_IN_USE_FILL, "filled", "#555555",
		  "arena in use");
	ar_gv_bytes(bytes, sizeof bytes, pg->device_total);
	snprintf(words, sizeof words, "dashed: device total %s", bytes);
	add_entry(e, &n, NULL, "dashed", AR_TL_TOTAL_COLOR, words);
	if (pg->device_limit) {
		ar_gv_bytes(bytes, sizeof bytes, pg->device_limit);
		snprintf(words, sizeof words, "solid: the device's %s", bytes);
		add_entry(e, &n, NULL, "solid", AR_TL_LIMIT_COLOR, words);
	}
	return n;
}

/* What colour, bands, borders and red mean, above the blocks (whose top
 * is at y), in lines no wider than width. */
static void legend(ArTlPage *pg, double y, double width)
{
	Entry colours[AR_GV_NKINDS + 3], bands[5], device[16];
	int nc = 0, nb = 0, nd = 0, lines;
	const char *ch = pg->training ? "colour: the phase that made the tensor" :
			 "colour: the kind of op that made the tensor";
	const char *bh = "bands, behind: the training phase";
	const char *dh = "bottom chart: the device's memory";
	char words[96], under[32];

	for (int k = 0; k < AR_GV_NKINDS; k++)
		if (pg->kind_used[k])
			add_entry(colours, &nc, ar_gv_kind_fill((ArGvKind)k),
				  "filled", "#555555",
				  ar_gv_kind_label((ArGvKind)k));
	if (pg->other_used) {
		ar_gv_bytes(under, sizeof under, pg->other_below);
		snprintf(words, sizeof words, "no border: tensors under %s, "
			 "merged", under);
		add_entry(colours, &nc, "#cccccc", "filled", "#cccccc", words);
	}
	if (pg->alias_used)
		add_entry(colours, &nc, NULL, "dashed", "#555555",
			  "dashed: shares another tensor's bytes");
	for (int ph = 0; ph < 4; ph++)
		if (pg->phase_used[ph])
			add_entry(bands, &nb, ar_gv_phase_fill((ArPhase)ph),
				  "filled", "#555555", ar_phase_name((ArPhase)ph));
	add_entry(pg->training ? bands : colours, pg->training ? &nb : &nc,
		  "#ff000030", "filled,dashed", "red", "red: the peak step");
	if (pg->device)
		nd = device_entries(pg, device);
	lines = row(pg, 0, ch, colours, nc, width, false) +
		(pg->training ? row(pg, 0, bh, bands, nb, width, false) : 0) +
		(nd ? row(pg, 0, dh, device, nd, width, false) : 0);
	y += lines * LEGEND_ROW;
	y -= row(pg, y, ch, colours, nc, width, true) * LEGEND_ROW;
	if (pg->training)
		y -= row(pg, y, bh, bands, nb, width, true) * LEGEND_ROW;
	if (nd)
		row(pg, y, dh, device, nd, width, true);
}

/* "arena 116 KiB (118,352 B), lower bound ..., peak at step 19, ...". */
static void describe(char *buf, size_t n, const ArPlan *p)
{
	char arena[32], exact[32], lb[32];

	ar_gv_bytes(arena, sizeof arena, p->arena_bytes);
	ar_gv_count(exact, sizeof exact, p->arena_bytes);
	ar_gv_bytes(lb, sizeof lb, p->lower_bound);
	snprintf(buf, n, "arena %s (%s B), lower bound %s (%.1f%%), peak at "
		 "step %d, %s%s", arena, exact, lb, p->arena_bytes ?
		 100.0 * p->lower_bound / p->arena_bytes : 100.0, p->peak_step,
		 p->algorithm ? p->algorithm : "none",
		 p->optimal ? ", optimal" : "");
}

/* A plan's name and options, for a heading: "this plan (--train)". */
static char *who(const char *name, const char *options)
{
	char *n = ar_dot_label(name, 80), *o = ar_dot_label(options ?
							     options : "", 160);
	size_t len = strlen(n) + strlen(o) + 8;
	char *s = ar_xmalloc(len);
	snprintf(s, len, *o ? "%s (%s)" : "%s%s", n, o);
	free(n), free(o);
	return s;
}

/* The title of a comparison: both arenas and the difference. */
static void compare_title(char *buf, size_t n, const char *model,
			  const ArPlan *a, const char *bname, const ArPlan *b)
{
	char as[32], ae[32], bs[32], be[32], ds[32];
	int64_t d = a->arena_bytes - b->arena_bytes;

	ar_gv_bytes(as, sizeof as, a->arena_bytes);
	ar_gv_count(ae, sizeof ae, a->arena_bytes);
	ar_gv_bytes(bs, sizeof bs, b->arena_bytes);
	ar_gv_count(be, sizeof be, b->arena_bytes);
	ar_gv_bytes(ds, sizeof ds, d < 0 ? -d : d);
	if (d == 0)
		snprintf(buf, n, "%s: arena %s (%s B) in this plan and in %s, "
			 "the same", model, as, ae, bname);
	else
		snprintf(buf, n, "%s: arena %s (%s B) in this plan, %s (%s B) in "
			 "%s: %s %s (%+.1f%%)", model, as, ae, bs, be, bname, ds,
			 d < 0 ? "less" : "more", b->arena_bytes ?
			 100.0 * d / b->arena_bytes : 0.0);
}

/* Scales for plans as wide as `steps` full-width steps and amax bytes, two
 * or one to a page (see the top of the file). */
static void scales(ArTlPage *pg, double steps, int64_t amax, bool two,
		   const ArEmitInfo *info)
{
	pg->x0 = LEFT;
	pg->sx = fmin(fmax(PLOT_W / (steps > 0 ? steps : 1), 4), 48);
	if (steps * pg->sx > PLOT_W_MAX)
		pg->sx = PLOT_W_MAX / steps;
	pg->sy = amax > 0 ? (two ? PLOT_H2 : PLOT_H) / amax : 0;
	pg->psy = amax > 0 ? (two ? CHART_H2 : CHART_H) / amax : 0;
	pg->other_below = info->timeline_other_set ? info->timeline_other :
			  pg->sy > 0 ? (int64_t)ceil(OTHER_PT / pg->sy) : 0;
	pg->max_labels = MAX_LABELS;
}

/* The other plan's block at the bottom, titled; returns where this
 * plan's block goes. */
static double other_block(ArTlPage *pg, const ArEmitInfo *info,
			  const char *model, const ArPlan *p, char *title,
			  size_t n)
{
	const ArPlanReport *cmp = info->compare;
	char *other = ar_dot_label(ar_gv_basename(info->compare_path ?
				   info->compare_path : "the report"), 80);
	char *name = who(other, cmp->options), plan[256], heading[768],
	     tag[128];
	double top;

	describe(plan, sizeof plan, cmp->p);
	snprintf(heading, sizeof heading, "below: %s, %s", name, plan);
	snprintf(tag, sizeof tag, "(below: %s)", other);
	pg->tag = tag;
	top = ar_tl_block(pg, cmp->g, cmp->p, heading, BOTTOM);
	pg->tag = "(above: this plan)";
	compare_title(title, n, model, p, other, cmp->p);
	free(name), free(other);
	return top + 24;
}

static void add_part(ArTlPage *pg, const char *name, int64_t bytes)
{
	/* ColorBrewer's Set3, apart from the tensors' pastels. */
	static const struct { const char *name, *fill; } fills[] = {
		{"parameters", "#8dd3c7"}, {"gradients", "#ccebc5"},
		{"master weights", "#bc80bd"}, {"optimizer state", "#bebada"},
		{"frozen parameters", "#d9d9d9"}, {"quantized base", "#fccde5"},
		{"constants", "#ffffb3"}, {"communication buffers", "#fdb462"},
		{"reserve", "#eeeeee"},
	};
	size_t k = 0;
	while (k + 1 < sizeof fills / sizeof *fills &&
	       strcmp(fills[k].name, name))
		k++;
	assert(!strcmp(fills[k].name, name));
	assert(pg->nparts < (int)(sizeof pg->part / sizeof *pg->part));
	if (bytes > 0)
		pg->part[pg->nparts++] = (struct ArTlPart){name, fills[k].fill,
							   bytes};
}

/*
 * What the device holds besides the arena, its total and size: the
 * training bill's persistent parts and reserve, or with --dp/--tp/--pp
 * the stage's first device's (ZeRO's shares, the communication buffers),
 * checked against the first --memory.
 */
static void device_memory(ArTlPage *pg, const ArEmitInfo *info)
{
	const ArTrainBill *bill = info->training;
	ArBillPart part[AR_BILL_NPARTS];
	int n;

	pg->device = true;
	if (info->devices) {
		const ArDevicesResult *r = info->devices;
		const ArDeviceBill *d = &r->stages[info->stage].bill;
		add_part(pg, "parameters", d->parameters);
		add_part(pg, "gradients", d->gradients);
		add_part(pg, "optimizer state", d->optimizer_state);
		add_part(pg, "communication buffers", d->buffers);
		add_part(pg, "constants", d->constants);
		add_part(pg, "reserve", r->spec.reserve);
		pg->device_total = d->total + r->spec.reserve;
		pg->device_limit = r->spec.nmemories ?
				   r->spec.memories[0].capacity : 0;
		pg->limit_name = r->spec.nmemories ?
				 r->spec.memories[0].name : "";
		return;
	}
	n = ar_train_bill_parts(bill, part);
	for (int k = 0; k < n; k++)
		add_part(pg, part[k].name, part[k].bytes);
	add_part(pg, "reserve", bill->reserve_bytes);
	pg->device_total = bill->device_total_bytes;
	pg->device_limit = bill->device_bytes;
	pg->limit_name = bill->device_name ? bill->device_name : "--budget";
}

static Agraph_t *build(const ArGraph *g, const ArPlan *p,
		       const ArEmitInfo *info)
{
	const ArPlanReport *cmp = info->compare;
	const ArGvLib *lib = ar_gv();
	ArTlPage pg = {.gv = lib->agopen("timeline", lib->Agundirected, NULL)};
	double steps = ar_tl_step_edges(g, p, 0, 1, NULL);
	int64_t amax = p->arena_bytes;
	char *model = ar_dot_label(ar_gv_basename(info->model_path ?
				   info->model_path : g->name), 80);
	char title[768], plan[256], heading[768];
	char *name = who(cmp ? "above: this plan" : "this plan", info->options);
	double y = BOTTOM;

	if (cmp) {
		steps = fmax(steps, ar_tl_step_edges(cmp->g, cmp->p, 0, 1, NULL));
		amax = cmp->p->arena_bytes > amax ? cmp->p->arena_bytes : amax;
	}
	scales(&pg, steps, amax, cmp != NULL, info);
	/* A comparison's other plan, read from its report, has no bill to
	 * set against it. */
	if (info->training && !cmp)
		device_memory(&pg, info);
	pg.training = ar_gv_training(g, p) ||
		      (cmp && ar_gv_training(cmp->g, cmp->p));
	ar_gv_set(pg.gv, "labelloc", "t");
	ar_gv_set(pg.gv, "fontname", AR_GV_FONT);
	ar_gv_set(pg.gv, "fontsize", "16");
	ar_gv_set(pg.gv, "bgcolor", "white");
	ar_gv_set(pg.gv, "layout", "nop");
	ar_gv_set(pg.gv, "pad", "0.2");
	lib->agattr(pg.gv, AGNODE, "shape", "box");
	/* "shape": a label may overflow its box (the tick texts) without a
	 * warning.  The label default stays Graphviz's own, so the empty
	 * labels that ar_tl_box sets survive a round trip through DOT. */
	lib->agattr(pg.gv, AGNODE, "fixedsize", "shape");
	lib->agattr(pg.gv, AGNODE, "fontname", AR_GV_FONT);
	lib->agattr(pg.gv, AGNODE, "label", "\\N");

	describe(plan, sizeof plan, p);
	if (cmp) {
		y = other_block(&pg, info, model, p, title, sizeof title);
		snprintf(heading, sizeof heading, "%s, %s", name, plan);
	} else {
		snprintf(title, sizeof title, "%s: %s", model, plan);
		snprintf(heading, sizeof heading, "%s", info->options &&
			 *info->options ? name : "");
	}
	y = ar_tl_block(&pg, g, p, heading, y);
	/* As wide as the plots, or as the title where they are narrow. */
	legend(&pg, y, fmax(steps * pg.sx, LEGEND_W));
	ar_gv_set(pg.gv, "label", "%s", title);
	free(model), free(name);
	return pg.gv;
}

int ar_write_timeline(const char *path, const ArGraph *g, const ArPlan *p,
		      const ArEmitInfo *info, ArOutFile *out, ArError *err)
{
	Agraph_t *gv;
	int rc = ar_gv_load(path, err);

	if (rc != AR_OK)
		return rc;
	gv = build(g, p, info);
	rc = ar_gv_write(gv, path, "nop", out, err);
	ar_gv()->agclose(gv);
	return rc;
}
