/*
 * timeline.c — the arena over time: steps on x, offsets on y, one
 * rectangle per tensor, and below it the bytes in use at each step.
 *
 * Every shape is a Graphviz node pinned where it belongs (the nop engine,
 * i.e. "neato -n"), so the picture is an exact drawing of the plan, not a
 * layout Graphviz chose.  Scales adapt to the model: a step is 4 to 48 points wide
 * and the arena is 720 points high, so lenet and densenet121 both fit a
 * screen width or two; names appear only on rectangles they fit in, and
 * every rectangle carries its full description as an SVG tooltip.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "gvutil.h"
#include "sanitize.h"

#define PLOT_H 720.0     /* arena height, points */
#define PROF_H 140.0     /* live-bytes profile height */
#define GAP 46.0         /* between the panels: room for tick labels */
#define LEFT 84.0        /* room for offset labels */
#define BOTTOM 40.0

typedef struct Frame {
	Agraph_t *gv;
	const ArPlan *p;
	double sx, sy;       /* points per step, per byte */
	double x0, y0;       /* the arena panel's lower left corner */
	double py0;          /* the profile panel's bottom */
	int nshapes;
} Frame;

/*
 * A pinned box from (x, y) to (x + w, y + h), in points; returns it for
 * styling.  Graphviz keeps node sizes in whole points, so the corners are
 * rounded here, once: boxes that touch in the plan touch in the picture
 * instead of overlapping by a rounding error.  Boxes are drawn in creation
 * order, later ones on top.
 */
static Agnode_t *pinned(Frame *f, const char *cls, double x, double y,
			double w, double h)
{
	double x0 = round(x), y0 = round(y), x1 = round(x + w),
	       y1 = round(y + h);
	char id[32];
	Agnode_t *n;

	snprintf(id, sizeof id, "n%d", f->nshapes++);
	n = agnode(f->gv, id, 1);
	ar_gv_set(n, "class", "%s", cls);
	ar_gv_set(n, "pos", "%.1f,%.1f!", (x0 + x1) / 2, (y0 + y1) / 2);
	ar_gv_set(n, "width", "%.4f", (x1 - x0) / 72);
	ar_gv_set(n, "height", "%.4f", (y1 - y0) / 72);
	ar_gv_set(n, "label", "%s", "");
	return n;
}

static Agnode_t *text(Frame *f, double x, double y, const char *s,
		      double size)
{
	Agnode_t *n = pinned(f, "text", x - 40, y - size / 2, 80, size);
	ar_gv_set(n, "shape", "plaintext");
	ar_gv_set(n, "label", "%s", s);
	ar_gv_set(n, "fontsize", "%.0f", size);
	return n;
}

/* 1, 2 or 5 times a power of ten: at least min, for round tick labels. */
static int64_t nice_step(double min)
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

/* A power of two at least min: byte ticks land on whole KiB and MiB. */
static int64_t pow2_step(double min)
{
	int64_t s = 1;
	while (s < min)
		s *= 2;
	return s;
}

static void axes(Frame *f)
{
	const ArPlan *p = f->p;
	double w = p->nsteps * f->sx, top = f->y0 + PLOT_H;
	int64_t xs = nice_step(p->nsteps / 16.0);
	int64_t ys = pow2_step(p->arena_bytes / 8.0);
	char buf[48];

	for (int64_t k = 0; k < p->nsteps; k += xs) {
		double x = f->x0 + (k + 0.5) * f->sx;
		Agnode_t *n = pinned(f, "grid", x, f->py0, 0.01,
				  top - f->py0);
		ar_gv_set(n, "color", "#dddddd");
		snprintf(buf, sizeof buf, "%lld", (long long)k);
		text(f, x, f->py0 - 10, buf, 9);
		text(f, x, f->y0 - 10, buf, 9);
	}
	for (int64_t b = 0; b <= p->arena_bytes; b += ys) {
		double y = f->y0 + b * f->sy;
		Agnode_t *n = pinned(f, "grid", f->x0, y, w, 0.01);
		ar_gv_set(n, "color", "#dddddd");
		ar_gv_bytes(buf, sizeof buf, b);
		text(f, f->x0 - 44, y, buf, 9);
	}
	text(f, f->x0 + w / 2, f->py0 - 26, "step (execution order)", 11);
	text(f, f->x0 - 30, top + 14, "arena offset", 11);
	text(f, f->x0 - 30, f->py0 + PROF_H + 12, "bytes in use", 11);
}

static void tensor_rect(Frame *f, const ArGraph *g, int t)
{
	const ArTensor *x = &g->tensors[t];
	const ArSlot *s = &f->p->slots[t];
	double w = (s->last + 1 - s->first) * f->sx, h = x->bytes * f->sy;
	char color[32], shape[256], size[32];
	char *name = ar_dot_label(x->name, 0);
	Agnode_t *n = pinned(f, "tensor", f->x0 + s->first * f->sx,
			  f->y0 + ar_gv_place(f->p, t) * f->sy, w, h);
	/* A line of text is about 1.25 em high and 0.62 em per character;
	 * show what fits, cut with "...". */
	double fs = h / 1.3 < 10 ? h / 1.3 : 10;
	int fit = (int)((w - 4) / (0.62 * fs));

	snprintf(color, sizeof color, "t%d", t);
	ar_gv_set(n, "id", "%s", color);
	ar_gv_color(color, sizeof color, f->p, t);
	/* Aliases (views, Concat inputs written in place) lie over the
	 * tensor whose bytes they share: dashed, so both stay visible. */
	ar_gv_set(n, "style", s->alias_of >= 0 ? "filled,dashed" : "filled");
	ar_gv_set(n, "fillcolor", "%s", color);
	ar_gv_set(n, "color", "#555555");
	ar_gv_set(n, "penwidth", "0.4");
	/* Exactly the tensor's bytes and steps, whatever the label. */
	ar_gv_set(n, "fixedsize", "true");
	ar_gv_set(n, "margin", "0");
	ar_gv_shape(shape, sizeof shape, x);
	ar_gv_bytes(size, sizeof size, x->bytes);
	ar_gv_set(n, "tooltip", "%s %s %s [%lld, %lld) steps %d-%d", name,
		  shape, size, (long long)s->offset,
		  (long long)(s->offset + x->bytes), s->first, s->last);
	if (fs >= 6 && fit >= 4) {
		char *cut = ar_dot_label(x->name, fit);
		/* Left-justified: an in-place successor or an alias drawn
		 * over this tensor's last column leaves the name readable. */
		ar_gv_set(n, "label", " %s\\l", cut);
		ar_gv_set(n, "fontsize", "%.1f", fs);
		free(cut);
	}
	free(name);
}

static int cmp_range(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Bytes of the arena covered by tensors live at step s: the union of
 * their padded ranges, so views and in-place pairs count once. */
static int64_t in_use(const ArGraph *g, const ArPlan *p, int s, int64_t *r)
{
	int n = 0;
	int64_t sum = 0, lo = 0, hi = 0;

	for (int t = 0; t < g->ntensors; t++) {
		const ArSlot *x = &p->slots[t];
		if (!x->planned || g->tensors[t].bytes <= 0 || s < x->first ||
		    s > x->last)
			continue;
		r[2 * n] = ar_gv_place(p, t);
		r[2 * n + 1] = r[2 * n] + ar_plan_padded(p, g->tensors[t].bytes);
		n++;
	}
	qsort(r, (size_t)n, 2 * sizeof *r, cmp_range);
	for (int i = 0; i < n; i++) {
		if (i == 0 || r[2 * i] > hi) {
			sum += hi - lo;
			lo = r[2 * i];
			hi = r[2 * i + 1];
		} else if (r[2 * i + 1] > hi) {
			hi = r[2 * i + 1];
		}
	}
	return sum + hi - lo;
}

static void profile(Frame *f, const ArGraph *g)
{
	const ArPlan *p = f->p;
	int64_t *r = ar_xmalloc(((size_t)g->ntensors + 1) * 2 * sizeof *r);
	double scale = p->arena_bytes > 0 ? PROF_H / p->arena_bytes : 0;
	Agnode_t *n = pinned(f, "frame", f->x0, f->py0, p->nsteps * f->sx,
			  PROF_H);
	char buf[96], lb[32];

	ar_gv_set(n, "style", "dashed");
	ar_gv_set(n, "color", "#999999");
	for (int s = 0; s < p->nsteps; s++) {
		int64_t used = in_use(g, p, s, r);
		n = pinned(f, s == p->peak_step ? "peak-bar" : "bar",
			f->x0 + s * f->sx, f->py0, f->sx, used * scale);
		ar_gv_set(n, "style", "filled");
		ar_gv_set(n, "penwidth", "0");
		ar_gv_set(n, "fillcolor", s == p->peak_step ? "red" : "#7a9cc6");
		ar_gv_set(n, "tooltip", "step %d: %lld bytes in use", s,
			  (long long)used);
	}
	ar_gv_bytes(lb, sizeof lb, p->lower_bound);
	snprintf(buf, sizeof buf, "peak %s at step %d", lb, p->peak_step);
	n = text(f, f->x0 + (p->peak_step + 0.5) * f->sx,
		 f->py0 + PROF_H + 8, buf, 10);
	ar_gv_set(n, "fontcolor", "red");
	free(r);
}

/* Memory tiers: each region's arena stacked on the one before, a solid
 * line between them and the memory's name at its right. */
static void regions(Frame *f)
{
	const ArPlan *p = f->p;
	double w = p->nsteps * f->sx;

	for (int r = 0; r < p->nregions; r++) {
		double y = f->y0 + ar_gv_region_base(p, r) * f->sy;
		double h = ar_plan_region_bytes(p, r) * f->sy;
		char *name = ar_dot_label(p->regions[r].name, 16);
		Agnode_t *n;

		if (r > 0) {
			n = pinned(f, "region", f->x0, y, w, 0.01);
			ar_gv_set(n, "color", "#333333");
			ar_gv_set(n, "penwidth", "1.5");
		}
		n = text(f, f->x0 + w + 44, y + h / 2, name, 11);
		ar_gv_set(n, "class", "region-name");
		free(name);
	}
}

static Agraph_t *build(const ArGraph *g, const ArPlan *p,
		       const ArEmitInfo *info)
{
	Frame f = {agopen("timeline", Agundirected, NULL), p, 0, 0, 0, 0, 0,
		   0};
	double spw = 1400.0 / (p->nsteps > 0 ? p->nsteps : 1);
	char *title = ar_dot_label(info->model_path ? info->model_path :
				   g->name, 0);
	char arena[32], lb[32];
	Agnode_t *n;

	f.sx = spw < 4 ? 4 : spw > 48 ? 48 : spw;
	f.sy = p->arena_bytes > 0 ? PLOT_H / p->arena_bytes : 0;
	f.x0 = LEFT;
	f.py0 = BOTTOM;
	f.y0 = BOTTOM + PROF_H + GAP;
	ar_gv_bytes(arena, sizeof arena, p->arena_bytes);
	ar_gv_bytes(lb, sizeof lb, p->lower_bound);
	ar_gv_set(f.gv, "label", "%s: arena %s (%lld B), lower bound %s "
		  "(%.1f%%), peak at step %d, %s%s\\ncolour: arena region "
		  "(as in --dot); red: the peak step", title, arena,
		  (long long)p->arena_bytes, lb, p->arena_bytes ?
		  100.0 * p->lower_bound / p->arena_bytes : 100.0,
		  p->peak_step, p->algorithm ? p->algorithm : "",
		  p->optimal ? ", optimal" : "");
	free(title);
	ar_gv_set(f.gv, "labelloc", "t");
	ar_gv_set(f.gv, "fontname", "Helvetica");
	ar_gv_set(f.gv, "bgcolor", "white");
	ar_gv_set(f.gv, "layout", "nop");
	ar_gv_set(f.gv, "pad", "0.2");
	agattr(f.gv, AGNODE, "shape", "box");
	/* "shape": a label may overflow its box (the tick texts) without a
	 * warning.  The label default stays Graphviz's own, so the empty
	 * labels that pinned() sets survive a round trip through DOT. */
	agattr(f.gv, AGNODE, "fixedsize", "shape");
	agattr(f.gv, AGNODE, "fontname", "Helvetica");
	agattr(f.gv, AGNODE, "label", "\\N");

	axes(&f);
	n = pinned(&f, "frame", f.x0, f.y0, p->nsteps * f.sx, PLOT_H);
	ar_gv_set(n, "color", "#999999");
	for (int t = 0; t < g->ntensors; t++)
		if (p->slots[t].planned && g->tensors[t].bytes > 0)
			tensor_rect(&f, g, t);
	if (p->peak_step >= 0 && p->peak_step < p->nsteps) {
		n = pinned(&f, "peak", f.x0 + p->peak_step * f.sx, f.y0, f.sx,
			PLOT_H);
		ar_gv_set(n, "style", "filled,dashed");
		ar_gv_set(n, "fillcolor", "#ff000030");
		ar_gv_set(n, "color", "red");
	}
	if (p->lower_bound < p->arena_bytes) {
		n = pinned(&f, "bound", f.x0, f.y0 + p->lower_bound * f.sy,
			p->nsteps * f.sx, 0.01);
		ar_gv_set(n, "style", "dashed");
		ar_gv_set(n, "color", "red");
		n = text(&f, f.x0 + p->nsteps * f.sx + 44,
			 f.y0 + p->lower_bound * f.sy, "lower bound", 9);
		ar_gv_set(n, "fontcolor", "red");
	}
	regions(&f);
	profile(&f, g);
	return f.gv;
}

int ar_write_timeline(const char *path, const ArGraph *g, const ArPlan *p,
		      const ArEmitInfo *info, ArOutFile *out, ArError *err)
{
	Agraph_t *gv = build(g, p, info);
	int rc = ar_gv_write(gv, path, "nop", out, err);
	agclose(gv);
	return rc;
}
