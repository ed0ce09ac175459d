/*
 * tlpanel.c — one plan's block of the memory timeline.
 *
 * From the bottom up: the bytes in use at each step (with a y scale; in a
 * training step, over the persistent memory of the bill, each part a band
 * of its own, with the device's total and limit as lines: the device's
 * memory, not only the arena's), the arena panel (steps on x, offsets on
 * y, one rectangle per tensor, the peak step outlined in red), the names
 * of the training phases and a heading.  Behind both panels each run of
 * steps of one training phase is a pale band of that phase's colour, so
 * where forward ends and backward begins reads at a glance, and a run of
 * steps with no tensor in the arena (the optimizer update) says so,
 * narrow (tlsteps.c).
 *
 * Hover: SVG shows a shape's <title>, which Graphviz fills with the node's
 * name, so the shapes people point at are named with their description: a
 * transparent column over both panels per step (per few steps when a
 * step is under a point wide) names the step, its op and the bytes in
 * use; a tensor's rectangle, drawn over the columns, names the tensor,
 * the op that made it, dtype and shape, bytes, offsets, lifetime and what
 * it shares bytes with.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "timeline.h"

#define STEP_AXIS 36.0   /* below the chart: step ticks and the axis name */
#define GAP 46.0         /* chart to arena panel: ticks and the chart name */
#define ROW 16.0         /* a line of text above the arena panel */
#define TITLE_MAX 8192   /* a title's bytes; names are cut to fit */
#define COLUMN_LINES 16  /* steps listed in one column's title: all
			  * of a point of steps away from the arena
			  * while steps are half a point wide or more */
#define DEVICE_H 180.0   /* the chart's height over the device's memory */

typedef struct Block {
	ArTlPage *pg;
	const ArGraph *g;
	const ArPlan *p;
	bool training;
	double py, ph;       /* the chart: bottom, height */
	double psy;          /* the chart's points per byte */
	int64_t height;      /* the bytes the chart's height stands for */
	int64_t base;        /* bytes under the arena in the chart */
	double ay, ah;       /* the arena panel: bottom, height */
	double w;            /* both panels' width */
	double *x;           /* per step its left edge, then the right one */
	ArTlCols cols;       /* hover columns */
	int64_t *used;       /* bytes in use per step */
	int *step_of;        /* per node: its step, or -1 */
} Block;

/* Steps s0 to s1, inclusive: their left edge, width and middle. */
static double xat(const Block *b, int s)
{
	return b->x[s];
}

static double wof(const Block *b, int s0, int s1)
{
	return b->x[s1 + 1] - b->x[s0];
}

static double mid(const Block *b, int s)
{
	return (b->x[s] + b->x[s + 1]) / 2;
}

static ArPhase phase_at(const Block *b, int s)
{
	return b->g->nodes[b->p->steps[s]].phase;
}

/* The runs of steps of one phase, behind both panels, named above. */
static void bands(Block *b)
{
	ArTlPage *pg = b->pg;
	const ArPlan *p = b->p;

	for (int s0 = 0, s1; s0 < p->nsteps; s0 = s1 + 1) {
		ArPhase ph = phase_at(b, s0);
		bool arena = ar_tl_busy(b->g, p, s0);
		double w;
		char name[128];
		const char *label;
		Agnode_t *n;

		for (s1 = s0; s1 + 1 < p->nsteps && phase_at(b, s1 + 1) == ph;)
			arena |= ar_tl_busy(b->g, p, ++s1);
		w = wof(b, s0, s1);
		snprintf(name, sizeof name, "%s phase: steps %d to %d%s",
			 ar_phase_name(ph), s0, s1, arena ? "" :
			 ", no step reads or writes the arena (drawn narrow)");
		n = ar_tl_box(pg, name, "band", xat(b, s0), b->py, w,
			      b->ay + b->ah - b->py);
		ar_gv_set(n, "style", "filled");
		ar_gv_set(n, "fillcolor", "%s", ar_gv_phase_fill(ph));
		ar_gv_set(n, "penwidth", "0");
		pg->phase_used[ph] = true;
		/* The optimizer's update reads and writes parameters,
		 * gradients and optimizer state, all outside the arena (only
		 * graph outputs, kept to the last step, stay in it). */
		label = !arena && ph == AR_PHASE_UPDATE ?
			"update: outside the arena" : ar_phase_name(ph);
		if (ar_gv_text_width(label, 10) > w - 4)
			label = ar_phase_name(ph);
		if (ar_gv_text_width(label, 10) <= w - 4)
			ar_tl_text(pg, xat(b, s0) + w / 2,
				   b->ay + b->ah + ROW / 2, label, 10, 0);
	}
}

/* A byte tick spacing near `want`, at least 14 points apart at `scale`
 * points per byte, so that labels never touch. */
static int64_t byte_tick(double want, double scale)
{
	return ar_tl_pow2_step(scale > 0 ? fmax(want, 14 / scale) : 1);
}

static void axes(Block *b)
{
	ArTlPage *pg = b->pg;
	const ArPlan *p = b->p;
	int64_t xs = ar_tl_nice_step(p->nsteps / 16.0);
	int64_t ys = byte_tick(p->arena_bytes / 8.0, pg->sy);
	int64_t top = b->height;
	int64_t cs = byte_tick(top / 3.0, b->psy);
	double free_from = -1e9;    /* where the last tick's label ended */
	char buf[48];

	for (int64_t k = 0; k < p->nsteps; k += xs) {
		double x = mid(b, (int)k), half;
		Agnode_t *n;
		snprintf(buf, sizeof buf, "%lld", (long long)k);
		/* Ticks in a run of narrow steps would crowd: a tick only
		 * where its label clears the last one's. */
		half = ar_gv_text_width(buf, 9) / 2;
		if (x - half < free_from + 6)
			continue;
		free_from = x + half;
		n = ar_tl_box(pg, NULL, "grid", x, b->py, 0.01,
			      b->ay + b->ah - b->py);
		ar_gv_set(n, "color", "#dddddd");
		ar_tl_text(pg, x, b->py - 10, buf, 9, 0);
		ar_tl_text(pg, x, b->ay - 10, buf, 9, 0);
	}
	for (int64_t v = 0; v <= p->arena_bytes; v += ys) {
		Agnode_t *n = ar_tl_box(pg, NULL, "grid", b->pg->x0,
					b->ay + v * pg->sy, b->w, 0.01);
		ar_gv_set(n, "color", "#dddddd");
		ar_gv_bytes(buf, sizeof buf, v);
		ar_tl_text(pg, pg->x0 - 6, b->ay + v * pg->sy, buf, 9, 1);
	}
	/* The chart's own scale: a third of its height per tick. */
	for (int64_t v = 0; v <= top; v += cs) {
		Agnode_t *n = ar_tl_box(pg, NULL, "grid", b->pg->x0,
					b->py + v * b->psy, b->w, 0.01);
		ar_gv_set(n, "color", "#dddddd");
		ar_gv_bytes(buf, sizeof buf, v);
		ar_tl_text(pg, pg->x0 - 6, b->py + v * b->psy, buf, 9, 1);
	}
	ar_tl_text(pg, pg->x0 + b->w / 2, b->py - 26, "step (execution order)",
		   11, 0);
	ar_tl_text(pg, pg->x0 - 6, b->ay + b->ah + ROW / 2, "arena offset",
		   11, 1);
	ar_tl_text(pg, pg->x0 - 6, b->py + b->ph + 12, pg->device ?
		   "device memory" : "bytes in use", 11, 1);
}

/* Appends to a title; the title stays a valid string when it is full. */
static void add(char *buf, size_t *k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(char *buf, size_t *k, const char *fmt, ...)
{
	va_list ap;
	if (*k >= TITLE_MAX - 1)
		return;
	va_start(ap, fmt);
	*k += (size_t)vsnprintf(buf + *k, TITLE_MAX - *k, fmt, ap);
	va_end(ap);
	if (*k > TITLE_MAX - 1)
		*k = TITLE_MAX - 1;
}

/* Transparent hover targets, one per step or few steps, under the
 * tensors: what runs there and how much of the arena is in use. */
static void columns(Block *b)
{
	ArTlPage *pg = b->pg;
	const ArPlan *p = b->p;
	char *title = ar_xmalloc(TITLE_MAX);
	double bottom = b->py + b->base * b->psy;

	for (int c = 0; c < b->cols.n; c++) {
		int s0 = b->cols.first[c], s1 = b->cols.first[c + 1];
		size_t k = 0;
		Agnode_t *n;

		title[0] = '\0';
		for (int s = s0; s < s1; s++) {
			const ArNode *x = &b->g->nodes[p->steps[s]];
			char *op = ar_dot_label(x->op, 64);
			char *name = ar_dot_label(x->name, 200);
			char used[32];
			if (s - s0 == COLUMN_LINES) {
				add(title, &k, "\nand %d more steps", s1 - s);
				free(op), free(name);
				break;
			}
			ar_gv_count(used, sizeof used, b->used[s]);
			add(title, &k, "%sstep %d: %s '%s' (%s), %s B in use",
			    s > s0 ? "\n" : "", s, op, name,
			    ar_phase_name(x->phase), used);
			free(op), free(name);
		}
		/* Above the device's persistent parts, which have titles
		 * of their own. */
		n = ar_tl_box(pg, title, "step", xat(b, s0), bottom,
			      wof(b, s0, s1 - 1), b->ay + b->ah - bottom);
		ar_gv_set(n, "style", "filled");
		ar_gv_set(n, "fillcolor", "#ffffff00");
		ar_gv_set(n, "color", "#ffffff00");
		ar_gv_set(n, "penwidth", "0");
	}
	free(title);
}

static void tensor_title(char *buf, const Block *b, int t)
{
	const ArTensor *x = &b->g->tensors[t];
	const ArSlot *s = &b->p->slots[t];
	char *name = ar_dot_label(x->name, 200);
	char shape[256], bytes[32], lo[32], hi[32];
	size_t k = 0;

	ar_gv_shape(shape, sizeof shape, x);
	ar_gv_count(bytes, sizeof bytes, x->bytes);
	ar_gv_count(lo, sizeof lo, s->offset);
	ar_gv_count(hi, sizeof hi, s->offset + x->bytes);
	buf[0] = '\0';
	add(buf, &k, "%s\n%s, %s B\n", name, shape, bytes);
	if (b->p->nregions > 0) {
		char *region = ar_dot_label(b->p->regions[s->region].name, 64);
		add(buf, &k, "memory %s ", region);
		free(region);
	} else {
		add(buf, &k, "arena ");
	}
	add(buf, &k, "[%s, %s), steps %d to %d", lo, hi, s->first, s->last);
	if (x->producer >= 0) {
		const ArNode *n = &b->g->nodes[x->producer];
		char *op = ar_dot_label(n->op, 64), *by = ar_dot_label(n->name, 200);
		add(buf, &k, "\nmade by %s '%s' at step %d (%s)", op, by,
		    b->step_of[x->producer], ar_phase_name(n->phase));
		free(op), free(by);
	}
	if (x->kind == AR_TK_INPUT || x->kind == AR_TK_OUTPUT)
		add(buf, &k, "\ngraph %s", ar_kind_name(x->kind));
	if (s->alias_of >= 0 || s->inplace_of >= 0) {
		char *other = ar_dot_label(b->g->tensors[s->alias_of >= 0 ?
				s->alias_of : s->inplace_of].name, 200);
		if (s->alias_of >= 0)
			add(buf, &k, "\nshares the bytes of %s from +%lld B",
			    other, (long long)s->alias_offset);
		else
			add(buf, &k, "\nwritten in place over %s", other);
		free(other);
	}
	if (x->producer >= 0 &&
	    b->g->nodes[x->producer].phase == AR_PHASE_RECOMPUTE)
		add(buf, &k, "\nrecomputed for the backward pass (a copy of "
		    "the forward value, not kept)");
	free(name);
}

static void other_band(Block *b, const ArTlOther *o, ArGvKind kind,
		       const char *under, char *title)
{
	char bytes[32], lo[32], hi[32];
	size_t k = 0;
	Agnode_t *v;

	ar_gv_count(bytes, sizeof bytes, o->bytes);
	ar_gv_count(lo, sizeof lo, o->lo);
	ar_gv_count(hi, sizeof hi, o->hi);
	title[0] = '\0';
	add(title, &k, "other: %d tensor%s under %s B each (%s), %s B in all\n"
	    "arena [%s, %s), steps %d to %d\n", o->ntensors,
	    o->ntensors == 1 ? "" : "s", under, ar_gv_kind_label(kind), bytes,
	    lo, hi, o->first, o->last);
	for (int j = 0; j < 4 && o->sample[j] >= 0; j++) {
		char *name = ar_dot_label(b->g->tensors[o->sample[j]].name, 64);
		add(title, &k, "%s%s", j ? ", " : "", name);
		free(name);
	}
	if (o->ntensors > 4)
		add(title, &k, " and %d more", o->ntensors - 4);
	v = ar_tl_box(b->pg, title, "other", xat(b, o->first),
		      b->ay + o->lo * b->pg->sy,
		      fmax(wof(b, o->first, o->last), 1),
		      (o->hi - o->lo) * b->pg->sy);
	ar_gv_set(v, "style", "filled");
	ar_gv_set(v, "fillcolor", "%s", ar_gv_kind_fill(kind));
	ar_gv_set(v, "penwidth", "0");
	b->pg->kind_used[kind] = true;
	b->pg->other_used = true;
}

typedef struct Rect {
	int t;
	double x, y, w, h, area;
	int label;           /* bytes of the name written, 0 for none */
	double lw;           /* the written name's width */
} Rect;

static int by_area(const void *a, const void *b)
{
	const Rect *x = a, *y = b;
	if (x->area != y->area)
		return x->area > y->area ? -1 : 1;
	return x->t - y->t;
}

static int by_tensor(const void *a, const void *b)
{
	return ((const Rect *)a)->t - ((const Rect *)b)->t;
}

/* A line of text is 1.2 em and 2 points high: the font size a name gets
 * in a rectangle. */
static double font_for(const Rect *r)
{
	return fmin((r->h - 4) / 1.2, 10);
}

/*
 * How much of tensor t's name is written on r, as ar_dot_label's limit:
 * all of it, or as many characters as fit before "..." with a space to
 * spare each side (Graphviz warns of a label larger than its fixed box);
 * 0 when not even five do.  Sets r->lw to the written width.
 */
static int fit_name(const char *name, Rect *r)
{
	double f = font_for(r), room = r->w - 2 * ar_gv_text_width(" ", f) - 2;
	int n = (int)strlen(name), keep;

	if (ar_gv_text_width(name, f) <= room) {
		r->lw = ar_gv_text_width(name, f) + ar_gv_text_width(" ", f);
		return n;
	}
	keep = ar_gv_text_fit(name, f, room - ar_gv_text_width("...", f));
	keep = keep < n - 4 ? keep : n - 4;     /* ar_dot_label cuts */
	if (keep < 5)
		return 0;
	r->lw = room;
	return keep + 3;
}

/* Whether the names on r and q would overlap: an alias or an in-place
 * output lies over the tensor whose bytes it shares. */
static bool labels_meet(const Rect *r, const Rect *q)
{
	double ry = r->y + r->h / 2, qy = q->y + q->h / 2;
	double rf = font_for(r), qf = font_for(q);
	return r->x < q->x + q->lw && q->x < r->x + r->lw &&
	       fabs(ry - qy) < 0.6 * (rf + qf);
}

static void tensor_rect(Block *b, const Rect *r, char *title)
{
	ArTlPage *pg = b->pg;
	const ArSlot *s = &b->p->slots[r->t];
	ArGvKind kind = ar_gv_kind(b->g, b->training, r->t);
	char id[32];
	Agnode_t *n;

	tensor_title(title, b, r->t);
	n = ar_tl_box(pg, title, "tensor", r->x, r->y, r->w, r->h);
	snprintf(id, sizeof id, "t%d", r->t);
	ar_gv_set(n, "id", "%s", id);
	/* Aliases (views, Concat inputs written in place) lie over the
	 * tensor whose bytes they share: dashed, so both stay visible. */
	ar_gv_set(n, "style", s->alias_of >= 0 ? "filled,dashed" : "filled");
	ar_gv_set(n, "fillcolor", "%s", ar_gv_kind_fill(kind));
	if (kind == AR_GV_RECOMPUTE) {
		ar_gv_set(n, "color", "#b35806");
		ar_gv_set(n, "penwidth", "1.2");
	} else {
		ar_gv_set(n, "color", "#555555");
		ar_gv_set(n, "penwidth", "0.4");
	}
	/* Exactly the tensor's bytes and steps, whatever the label. */
	ar_gv_set(n, "fixedsize", "true");
	ar_gv_set(n, "margin", "0");
	pg->kind_used[kind] = true;
	pg->alias_used |= s->alias_of >= 0;
	if (r->label) {
		char *cut = ar_dot_label(b->g->tensors[r->t].name, r->label);
		/* Left-justified: an in-place successor or an alias drawn
		 * over this tensor's last column leaves the name readable. */
		ar_gv_set(n, "label", " %s\\l", cut);
		ar_gv_set(n, "fontsize", "%.1f", font_for(r));
		free(cut);
	}
}

/* The tensors at or over the "other" size, each a rectangle; names on
 * the largest ones, as many as the page allows and where they fit. */
static void tensors(Block *b)
{
	ArTlPage *pg = b->pg;
	const ArGraph *g = b->g;
	Rect *r = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *r);
	char *title = ar_xmalloc(TITLE_MAX);
	int n = 0, labels = 0;

	for (int t = 0; t < g->ntensors; t++) {
		const ArSlot *s = &b->p->slots[t];
		if (!ar_tl_drawn(g, b->p, t) || g->tensors[t].bytes < pg->other_below)
			continue;
		r[n].t = t;
		r[n].x = xat(b, s->first);
		/* At least a point wide: a one-step tensor of a long plan
		 * stays visible. */
		r[n].w = fmax(wof(b, s->first, s->last), 1);
		r[n].y = b->ay + ar_gv_place(b->p, t) * pg->sy;
		r[n].h = g->tensors[t].bytes * pg->sy;
		r[n].area = r[n].w * r[n].h;
		r[n].label = 0;
		n++;
	}
	qsort(r, (size_t)n, sizeof *r, by_area);
	/* A name whole, or cut to at least five of its characters, clear
	 * of the names already placed. */
	for (int i = 0; i < n && labels < pg->max_labels; i++) {
		bool clear = true;
		if (font_for(&r[i]) < 6 ||
		    !(r[i].label = fit_name(g->tensors[r[i].t].name, &r[i])))
			continue;
		for (int j = 0; j < i && clear; j++)
			clear = !r[j].label || !labels_meet(&r[i], &r[j]);
		if (clear)
			labels++;
		else
			r[i].label = 0;
	}
	qsort(r, (size_t)n, sizeof *r, by_tensor);
	for (int i = 0; i < n; i++)
		tensor_rect(b, &r[i], title);
	free(r), free(title);
}

/* Tensors under the "other" size: bands of their colour where they lie,
 * each kind merged apart. */
static void others(Block *b)
{
	ArTlPage *pg = b->pg;
	const ArGraph *g = b->g;
	int64_t snap = pg->sy > 0 ? (int64_t)ceil(1 / pg->sy) : 1;
	bool *pick = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *pick);
	char *title = ar_xmalloc(TITLE_MAX);
	char under[32];

	ar_gv_count(under, sizeof under, pg->other_below);
	for (int kind = 0; kind < AR_GV_NKINDS; kind++) {
		ArTlOther *o;
		int n;

		for (int t = 0; t < g->ntensors; t++)
			pick[t] = ar_tl_drawn(g, b->p, t) &&
				  g->tensors[t].bytes < pg->other_below &&
				  (int)ar_gv_kind(g, b->training, t) == kind;
		n = ar_tl_merge(g, b->p, pick, snap, &b->cols, &o);
		for (int i = 0; i < n; i++)
			other_band(b, &o[i], (ArGvKind)kind, under, title);
		free(o);
	}
	free(pick), free(title);
}

/* Memory tiers: each region's arena stacked on the one before, a solid
 * line between them and the memory's name at its right. */
static void regions(Block *b)
{
	ArTlPage *pg = b->pg;
	const ArPlan *p = b->p;

	for (int r = 0; r < p->nregions; r++) {
		double y = b->ay + ar_gv_region_base(p, r) * pg->sy;
		double h = ar_plan_region_bytes(p, r) * pg->sy;
		char *name = ar_dot_label(p->regions[r].name, 16);
		Agnode_t *n;

		if (r > 0) {
			n = ar_tl_box(pg, NULL, "region", pg->x0, y, b->w, 0.01);
			ar_gv_set(n, "color", "#333333");
			ar_gv_set(n, "penwidth", "1.5");
		}
		n = ar_tl_text(pg, pg->x0 + b->w + 6, y + h / 2, name, 11, -1);
		ar_gv_set(n, "class", "region-name");
		free(name);
	}
}

/* The device's persistent parts under the chart's bars, each a band of
 * its colour, named in it where there is room and in its title. */
static void persistent_bands(Block *b)
{
	ArTlPage *pg = b->pg;
	int64_t at = 0;

	for (int k = 0; k < pg->nparts; k++) {
		const struct ArTlPart *x = &pg->part[k];
		double y = b->py + at * b->psy, h = x->bytes * b->psy;
		char title[160], bytes[32], size[32], words[96];
		Agnode_t *n;

		ar_gv_count(bytes, sizeof bytes, x->bytes);
		ar_gv_bytes(size, sizeof size, x->bytes);
		snprintf(title, sizeof title, "%s: %s B, %s the whole step",
			 x->name, bytes, strcmp(x->name, "reserve") ?
			 "persistent, held" : "held by what is not the step "
			 "(--reserve, the device's own)");
		n = ar_tl_box(pg, title, "persistent", pg->x0, y, b->w, h);
		ar_gv_set(n, "style", "filled");
		ar_gv_set(n, "fillcolor", "%s", x->fill);
		ar_gv_set(n, "color", "#555555");
		ar_gv_set(n, "penwidth", "0.4");
		snprintf(words, sizeof words, "%s %s", x->name, size);
		if (h >= 13 && ar_gv_text_width(words, 9) + 12 < b->w)
			ar_tl_text(pg, pg->x0 + 4, y + h / 2, words, 9, -1);
		at += x->bytes;
	}
}

/* A line across the chart at v bytes, named at the right at label_y. */
static void chart_line(Block *b, int64_t v, const char *cls,
		       const char *style, const char *color, const char *words,
		       double label_y)
{
	ArTlPage *pg = b->pg;
	Agnode_t *n = ar_tl_box(pg, NULL, cls, pg->x0, b->py + v * b->psy,
				b->w, 0.01);
	ar_gv_set(n, "style", "%s", style);
	ar_gv_set(n, "color", "%s", color);
	ar_gv_set(n, "penwidth", "1.2");
	n = ar_tl_text(pg, pg->x0 + b->w + 6, label_y, words, 9, -1);
	ar_gv_set(n, "fontcolor", "%s", color);
}

/* The device's total (persistent, reserve and arena: the bill's) and,
 * with --memory, --device or --budget, its limit; labels apart. */
static void device_lines(Block *b)
{
	ArTlPage *pg = b->pg;
	double yt = b->py + pg->device_total * b->psy,
	       yl = b->py + pg->device_limit * b->psy;
	char size[32], words[96];

	if (pg->device_limit && fabs(yt - yl) < 12) {
		double m = (yt + yl) / 2, d = yt < yl ? -6 : 6;
		yt = m + d, yl = m - d;
	}
	ar_gv_bytes(size, sizeof size, pg->device_total);
	snprintf(words, sizeof words, "device total %s", size);
	chart_line(b, pg->device_total, "device-total", "dashed",
		   AR_TL_TOTAL_COLOR, words, yt);
	if (!pg->device_limit)
		return;
	ar_gv_bytes(size, sizeof size, pg->device_limit);
	snprintf(words, sizeof words, "limit %s (%s)", size,
		 pg->limit_name);
	chart_line(b, pg->device_limit, "device-limit", "solid",
		   AR_TL_LIMIT_COLOR, words, yl);
}

/* The bytes in use: one bar per column, its highest step's height, the
 * peak's column red; over the device's persistent memory when there is a
 * bill. */
static void chart(Block *b)
{
	ArTlPage *pg = b->pg;
	const ArPlan *p = b->p;
	Agnode_t *n = ar_tl_box(pg, NULL, "frame", pg->x0, b->py, b->w, b->ph);
	char buf[96], lb[32];
	double lw, cx;

	ar_gv_set(n, "style", "dashed");
	ar_gv_set(n, "color", "#999999");
	if (pg->device)
		persistent_bands(b);
	for (int c = 0; c < b->cols.n; c++) {
		int s0 = b->cols.first[c], s1 = b->cols.first[c + 1];
		int64_t most = 0;
		bool peak = p->peak_step >= s0 && p->peak_step < s1;
		for (int s = s0; s < s1; s++)
			most = b->used[s] > most ? b->used[s] : most;
		if (most == 0)
			continue;
		/* A point wider than its steps, under the next bar: columns
		 * a fraction of a pixel wide would otherwise leave seams. */
		n = ar_tl_box(pg, NULL, peak ? "peak-bar" : "bar", xat(b, s0),
			      b->py + b->base * b->psy,
			      wof(b, s0, s1 - 1) + (s1 < p->nsteps),
			      most * b->psy);
		ar_gv_set(n, "style", "filled");
		ar_gv_set(n, "penwidth", "0");
		ar_gv_set(n, "fillcolor", peak ? "red" : AR_TL_IN_USE_FILL);
	}
	if (pg->device)
		device_lines(b);
	if (p->peak_step >= 0 && p->peak_step < p->nsteps) {
		ar_gv_bytes(lb, sizeof lb, p->lower_bound);
		snprintf(buf, sizeof buf, "peak %s at step %d", lb,
			 p->peak_step);
		/* Over the peak, kept within the plot. */
		lw = ar_gv_text_width(buf, 10);
		cx = fmin(fmax(mid(b, p->peak_step), pg->x0 + lw / 2),
			  pg->x0 + b->w - lw / 2);
		n = ar_tl_text(pg, cx, b->py + b->ph + 8, buf, 10, 0);
		ar_gv_set(n, "fontcolor", "red");
	}
}

/* The peak step: a red tint under the tensors, a dashed red outline
 * over them (unfilled, so the tensors under it keep their hover). */
static void peak(Block *b, bool over)
{
	const ArPlan *p = b->p;
	Agnode_t *n;

	if (p->peak_step < 0 || p->peak_step >= p->nsteps)
		return;
	n = ar_tl_box(b->pg, NULL, over ? "peak" : "peak-tint",
		      xat(b, p->peak_step), b->ay, wof(b, p->peak_step,
		      p->peak_step), b->ah);
	if (over) {
		ar_gv_set(n, "style", "dashed");
		ar_gv_set(n, "color", "red");
	} else {
		ar_gv_set(n, "style", "filled");
		ar_gv_set(n, "fillcolor", "#ff000030");
		ar_gv_set(n, "penwidth", "0");
	}
}

static void lower_bound(Block *b)
{
	ArTlPage *pg = b->pg;
	const ArPlan *p = b->p;
	Agnode_t *n;

	if (p->lower_bound >= p->arena_bytes)
		return;
	n = ar_tl_box(pg, NULL, "bound", pg->x0, b->ay + p->lower_bound * pg->sy,
		      b->w, 0.01);
	ar_gv_set(n, "style", "dashed");
	ar_gv_set(n, "color", "red");
	n = ar_tl_text(pg, pg->x0 + b->w + 6, b->ay + p->lower_bound * pg->sy,
		       "lower bound", 9, -1);
	ar_gv_set(n, "fontcolor", "red");
}

double ar_tl_block(ArTlPage *pg, const ArGraph *g, const ArPlan *p,
		   const char *heading, double y)
{
	Block b = {.pg = pg, .g = g, .p = p, .training = ar_gv_training(g, p)};
	double top;
	int64_t most = 0;
	Agnode_t *n;

	b.used = ar_xmalloc(((size_t)p->nsteps + 1) * sizeof *b.used);
	b.step_of = ar_xmalloc(((size_t)g->nnodes + 1) * sizeof *b.step_of);
	for (int i = 0; i < g->nnodes; i++)
		b.step_of[i] = -1;
	for (int s = 0; s < p->nsteps; s++)
		b.step_of[p->steps[s]] = s;
	ar_tl_in_use(g, p, b.used);
	b.x = ar_xmalloc(((size_t)p->nsteps + 1) * sizeof *b.x);
	b.w = ar_tl_step_edges(g, p, pg->x0, pg->sx, b.x);
	ar_tl_columns(b.x, p->nsteps, &b.cols);
	b.py = y + STEP_AXIS;
	b.psy = pg->psy;
	b.height = p->arena_bytes;
	if (pg->device) {
		/* The chart holds the device: its scale, its own. */
		for (int k = 0; k < pg->nparts; k++)
			b.base += pg->part[k].bytes;
		for (int s = 0; s < p->nsteps; s++)
			most = b.used[s] > most ? b.used[s] : most;
		b.height = b.base + most;
		if (pg->device_total > b.height)
			b.height = pg->device_total;
		if (pg->device_limit > b.height)
			b.height = pg->device_limit;
		b.psy = b.height > 0 ? DEVICE_H / b.height : 0;
	}
	b.ph = fmax(b.height * b.psy, 1);
	b.ay = b.py + b.ph + GAP;
	b.ah = fmax(p->arena_bytes * pg->sy, 1);

	if (b.training)
		bands(&b);
	axes(&b);
	peak(&b, false);
	chart(&b);
	columns(&b);
	n = ar_tl_box(pg, NULL, "frame", pg->x0, b.ay, b.w, b.ah);
	ar_gv_set(n, "color", "#999999");
	tensors(&b);
	others(&b);
	peak(&b, true);
	lower_bound(&b);
	regions(&b);
	top = b.ay + b.ah + ROW;
	if (heading && *heading) {
		ar_tl_text(pg, pg->x0, top + ROW / 2, heading, 11, -1);
		top += ROW;
	}
	free(b.used), free(b.step_of), free(b.x);
	ar_tl_columns_free(&b.cols);
	return top;
}
