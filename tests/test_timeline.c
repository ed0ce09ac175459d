/*
 * test_timeline.c — the memory timeline and what it is drawn from.
 *
 * The picture after a real layout (rectangles where the plan puts them,
 * inside the canvas, apart when their tensors are live together; phase
 * bands, hover titles, "other" bands, the width bound, a comparison of two
 * plans, a training step's device memory under it), where steps go across
 * (a step away from the arena narrow), the text measure, the merging of
 * small tensors and the bytes in use against brute force on random plans,
 * and the JSON report read back (the reader and its refusals).
 */
#include "picture_util.h"

#include <math.h>
#include <unistd.h>

#include "checkpoint.h"
#include "emit.h"
#include "fixture_plan.h"
#include "graph_build.h"
#include "gvutil.h"
#include "infer.h"
#include "jsonread.h"
#include "load.h"
#include "planjson.h"
#include "timeline.h"

typedef struct Rect {
	double x0, y0, x1, y1;
} Rect;

static Rect rect_of(Agnode_t *v)
{
	double x, y, w = atof(attr(v, "width")) * 72,
		     h = atof(attr(v, "height")) * 72;
	assert_int_equal(sscanf(attr(v, "pos"), "%lf,%lf", &x, &y), 2);
	return (Rect){x - w / 2, y - h / 2, x + w / 2, y + h / 2};
}

/* The timeline of a plan, laid out by Graphviz and read back as DOT. */
static Agraph_t *timeline_with(const ArGraph *ag, const ArPlan *p,
			       const ArEmitInfo *info)
{
	ArError err = {0};
	GVC_t *gvc;
	Agraph_t *g, *out;
	char *text;
	unsigned len;

	assert_int_equal(ar_write_timeline(tmp("tl.dot"), ag, p, info, NULL,
					   &err), AR_OK);
	gvc = ar_gv_context();      /* once the writer has loaded Graphviz */
	g = read_dot(tmp("tl.dot"));
	assert_string_equal(attr(g, "layout"), "nop");
	assert_int_equal(gvLayout(gvc, g, "nop"), 0);
	assert_int_equal(gvRenderData(gvc, g, "dot", &text, &len), 0);
	out = agmemread(text);
	assert_non_null(out);
	gvFreeRenderData(text);
	gvFreeLayout(gvc, g);
	agclose(g);
	return out;
}

static Agraph_t *timeline(const ArGraph *ag, const ArPlan *p)
{
	ArEmitInfo info = {.model_path = "fx.onnx", .prefix = "m",
			   .options = ""};
	return timeline_with(ag, p, &info);
}

/* The node of a class whose name (its SVG title) holds text, or NULL. */
static Agnode_t *titled(Agraph_t *g, const char *cls, const char *text)
{
	for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v))
		if (!strcmp(attr(v, "class"), cls) && strstr(agnameof(v), text))
			return v;
	return NULL;
}

/* The node of a class whose label holds text, or NULL. */
static Agnode_t *labelled(Agraph_t *g, const char *cls, const char *text)
{
	for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v))
		if (!strcmp(attr(v, "class"), cls) && strstr(attr(v, "label"), text))
			return v;
	return NULL;
}

/* Tensors sharing bytes by design: their alias_of/inplace_of chains meet. */
static int root(const ArPlan *p, int t)
{
	while (p->slots[t].alias_of >= 0 || p->slots[t].inplace_of >= 0)
		t = p->slots[t].alias_of >= 0 ? p->slots[t].alias_of :
		    p->slots[t].inplace_of;
	return t;
}

static bool linked(const ArPlan *p, int a, int b)
{
	return root(p, a) == root(p, b);
}

/* Rectangles inside the canvas, co-live ones apart; returns how many. */
static int check_rects(Agraph_t *g, const ArPlan *p)
{
	Rect bb, *r = calloc((size_t)p->ntensors, sizeof *r);
	bool *seen = calloc((size_t)p->ntensors, sizeof *seen);
	int n = 0;
	const double eps = 0.02;   /* points: DOT keeps two decimals */

	assert_int_equal(sscanf(attr(g, "bb"), "%lf,%lf,%lf,%lf", &bb.x0,
				&bb.y0, &bb.x1, &bb.y1), 4);
	for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v)) {
		int t;
		if (strcmp(attr(v, "class"), "tensor") != 0)
			continue;
		assert_int_equal(sscanf(attr(v, "id"), "t%d", &t), 1);
		r[t] = rect_of(v);
		seen[t] = true;
		n++;
		assert_true(r[t].x0 >= bb.x0 - eps && r[t].x1 <= bb.x1 + eps);
		assert_true(r[t].y0 >= bb.y0 - eps && r[t].y1 <= bb.y1 + eps);
	}
	for (int a = 0; a < p->ntensors; a++)
		for (int b = a + 1; b < p->ntensors && seen[a]; b++) {
			const ArSlot *sa = &p->slots[a], *sb = &p->slots[b];
			if (!seen[b] || sa->last < sb->first ||
			    sb->last < sa->first || linked(p, a, b))
				continue;
			assert_true(r[a].y1 <= r[b].y0 + eps ||
				    r[b].y1 <= r[a].y0 + eps);
		}
	free(r), free(seen);
	return n;
}

static void test_timeline(void **state)
{
	Fixture fx;
	Agraph_t *g;
	Rect peak = {0}, c1 = {0}, x = {0};
	int npeak = 0;

	fixture_init(&fx);
	g = timeline(fx.g, &fx.p);
	/* The seven arena tensors, the view v1 included. */
	assert_int_equal(check_rects(g, &fx.p), 7);
	for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v)) {
		if (!strcmp(attr(v, "class"), "peak"))
			peak = rect_of(v), npeak++;
		if (!strcmp(attr(v, "id"), "t4"))
			c1 = rect_of(v);
		if (!strcmp(attr(v, "id"), "t0"))
			x = rect_of(v);
	}
	assert_int_equal(npeak, 1);
	assert_int_equal(count_class(g, "peak-bar"), 1);
	assert_int_equal(count_class(g, "bar"), 4);
	/* Step 0 is the peak: its outline spans c1's first column, and c1
	 * (steps 0-1, 1024 B) is twice as wide and 4/3 as high as in:0
	 * (step 0, 768 B), right above it. */
	assert_true(fabs(peak.x0 - c1.x0) < 0.05);
	assert_true(fabs((c1.x1 - c1.x0) - 2 * (x.x1 - x.x0)) < 0.05);
	assert_true(fabs((c1.y1 - c1.y0) / (x.y1 - x.y0) - 1024.0 / 768) < 0.01);
	assert_true(fabs(c1.y0 - x.y1) < 0.05);  /* rounded alike */
	/* Inference: no phase bands; colour by op, said in the legend. */
	assert_int_equal(count_class(g, "band"), 0);
	assert_string_equal(attr(agnode(g, agnameof(titled(g, "tensor",
				"c1\n")), 0), "fillcolor"),
			    ar_gv_kind_fill(AR_GV_CONV));
	assert_non_null(labelled(g, "text", "colour: the kind of op that made"));
	/* Titled by the model's file name, not the path given. */
	assert_non_null(strstr(attr(g, "label"), "fx.onnx: arena 1.8 KiB "
			       "(1,840 B)"));
	agclose(g);
	fixture_free(&fx);
}

static void set_phases(Fixture *fx)
{
	static const ArPhase phase[] = {AR_PHASE_FORWARD, AR_PHASE_FORWARD,
		AR_PHASE_RECOMPUTE, AR_PHASE_BACKWARD, AR_PHASE_UPDATE};
	for (int i = 0; i < 5; i++)
		fx->g->nodes[i].phase = phase[i];
}

/* The fixture as a training step: steps 0-1 forward, 2 recompute, 3
 * backward, 4 update. */
static void test_phases(void **state)
{
	Fixture fx;
	Agraph_t *g;
	Agnode_t *v;

	fixture_init(&fx);
	set_phases(&fx);
	g = timeline(fx.g, &fx.p);
	assert_int_equal(count_class(g, "band"), 4);
	assert_non_null(titled(g, "band", "forward phase: steps 0 to 1"));
	assert_non_null(titled(g, "band", "recompute phase: steps 2 to 2"));
	assert_non_null(titled(g, "band", "backward phase: steps 3 to 3"));
	/* The update step reads evil, in the arena. */
	v = titled(g, "band", "update phase: steps 4 to 4");
	assert_non_null(v);
	assert_null(strstr(agnameof(v), "no step"));
	assert_string_equal(attr(v, "fillcolor"),
			    ar_gv_phase_fill(AR_PHASE_UPDATE));
	/* Every tensor's title: name, shape, bytes, range, steps, maker. */
	assert_non_null(titled(g, "tensor", "c1\nfloat32[1,4,8,8], 1,024 B\n"
			       "arena [816, 1,840), steps 0 to 1\nmade by Conv "
			       "'conv' at step 0 (forward)"));
	assert_non_null(titled(g, "tensor", "r1\n"));
	assert_non_null(strstr(agnameof(titled(g, "tensor", "r1\n")),
			       "written in place over c1"));
	/* v1, made at step 2, is a recomputed value: its own colour. */
	v = titled(g, "tensor", "v1\n");
	assert_non_null(strstr(agnameof(v), "shares the bytes of r1 from +0 B"));
	assert_non_null(strstr(agnameof(v), "recomputed for the backward pass"));
	assert_string_equal(attr(v, "fillcolor"),
			    ar_gv_kind_fill(AR_GV_RECOMPUTE));
	assert_string_equal(attr(titled(g, "tensor", "c1\n"), "fillcolor"),
			    ar_gv_kind_fill(AR_GV_FORWARD));
	/* One hover column per step, with the bytes in use there. */
	assert_int_equal(count_class(g, "step"), 5);
	assert_non_null(titled(g, "step", "step 0: Conv 'conv' (forward), "
			       "1,840 B in use"));
	assert_non_null(titled(g, "step", "step 2: Reshape 'flatten' "
			       "(recompute), 1,072 B in use"));
	assert_non_null(labelled(g, "text", "bands, behind: the training phase"));
	agclose(g);
	fixture_free(&fx);
}

/* The fixture as a training step with a bill: the chart stands on the
 * persistent parts and the reserve, each its bytes high on the chart's
 * scale, with the device's total and limit as lines at theirs. */
static void test_device(void **state)
{
	ArTrainBill bill = {.parameter_bytes = 4000, .gradient_bytes = 4000,
			    .optimizer_state_bytes = 8000, .reserve_bytes = 2000,
			    .device_total_bytes = 18000 + 1840,
			    .device_bytes = 40000, .device_name = "sram"};
	ArEmitInfo info = {.model_path = "fx.onnx", .options = "",
			   .training = &bill};
	static const char *const names[] = {"parameters: 4,000 B",
		"gradients: 4,000 B", "optimizer state: 8,000 B",
		"reserve: 2,000 B"};
	static const int64_t bytes[] = {4000, 4000, 8000, 2000};
	Fixture fx;
	Agraph_t *g;
	Rect r[4], total, limit;
	double scale;

	fixture_init(&fx);
	set_phases(&fx);
	g = timeline_with(fx.g, &fx.p, &info);
	assert_int_equal(count_class(g, "persistent"), 4);
	for (int k = 0; k < 4; k++) {
		Agnode_t *v = titled(g, "persistent", names[k]);
		assert_non_null(v);
		r[k] = rect_of(v);
	}
	total = rect_of(titled(g, "device-total", ""));
	limit = rect_of(titled(g, "device-limit", ""));
	/* The limit, the largest, is the chart's top: 180 points. */
	scale = (limit.y0 - r[0].y0) / 40000;
	assert_true(fabs(scale * 40000 - 180) < 1);
	for (int k = 0; k < 4; k++) {
		assert_true(fabs((r[k].y1 - r[k].y0) - bytes[k] * scale) < 1.01);
		if (k)
			assert_true(fabs(r[k].y0 - r[k - 1].y1) < 0.05);
	}
	assert_true(fabs(total.y0 - r[0].y0 - 19840 * scale) < 1.01);
	/* The hover columns leave the parts' own titles reachable. */
	assert_true(rect_of(titled(g, "step", "step 0:")).y0 >= r[3].y1 - 0.6);
	assert_non_null(labelled(g, "text", "optimizer state 7.81 KiB"));
	assert_non_null(labelled(g, "text", "limit 39.1 KiB (sram)"));
	assert_non_null(labelled(g, "text", "device memory"));
	agclose(g);
	/* No device: the total alone. */
	bill.device_bytes = 0;
	g = timeline_with(fx.g, &fx.p, &info);
	assert_int_equal(count_class(g, "device-total"), 1);
	assert_int_equal(count_class(g, "device-limit"), 0);
	agclose(g);
	fixture_free(&fx);
}

/* A step that reads and writes nothing in the arena is an eighth of a
 * step wide; hover columns gather steps until a point wide. */
static void test_steps(void **state)
{
	Fixture fx;
	double x[6], edges[7] = {0, 0.3, 0.6, 0.9, 1.2, 5, 5.1};
	ArTlCols c;

	fixture_init(&fx);
	assert_true(fabs(ar_tl_step_edges(fx.g, &fx.p, 10, 8, x) - 40) < 1e-9);
	/* Step 4 (evil + in/0 -> y) away from the arena. */
	fx.p.slots[FX_EVILT].planned = fx.p.slots[FX_IN2].planned =
		fx.p.slots[FX_Y].planned = false;
	assert_false(ar_tl_busy(fx.g, &fx.p, 4));
	assert_true(ar_tl_busy(fx.g, &fx.p, 3));
	assert_true(fabs(ar_tl_step_edges(fx.g, &fx.p, 10, 8, x) - 33) < 1e-9);
	assert_true(fabs(x[4] - 42) < 1e-9 && fabs(x[5] - 43) < 1e-9);
	fixture_free(&fx);
	/* Columns: [0, 0.3, 0.6, 0.9] reach a point at 1.2, then step 4
	 * alone (3.8 wide), then step 5. */
	ar_tl_columns(edges, 6, &c);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.first[0], 0);
	assert_int_equal(c.first[1], 4);
	assert_int_equal(c.first[2], 5);
	assert_int_equal(c.first[3], 6);
	assert_int_equal(c.of[3], 0);
	assert_int_equal(c.of[4], 1);
	ar_tl_columns_free(&c);
}

/* DejaVu Sans's advances (2048 units an em): H 1540, e 1260, l 569,
 * o 1253. */
static void test_text_width(void **state)
{
	assert_true(fabs(ar_gv_text_width("Hello", 10) -
			 (1540 + 1260 + 2 * 569 + 1253) * 10 / 2048.0) < 1e-9);
	assert_int_equal(ar_gv_text_fit("Hello", 10, 13), 1);
	assert_int_equal(ar_gv_text_fit("Hello", 10, 14), 2);
	assert_int_equal(ar_gv_text_fit("Hello", 10, 100), 5);
	/* Lines of a label: the widest; a doubled backslash is one, and
	 * the "n" after it a letter. */
	assert_true(fabs(ar_gv_label_width("l\\nHello\\lo", 10) -
			 ar_gv_text_width("Hello", 10)) < 1e-9);
	assert_true(fabs(ar_gv_label_width("l\\\\nHe", 10) -
			 ar_gv_text_width("l\\nHe", 10)) < 1e-9);
}

/* Tensors under 100 B are drawn merged: in/0, evil and the output. */
static void test_other(void **state)
{
	ArEmitInfo info = {.model_path = "fx.onnx", .options = "",
			   .timeline_other_set = true, .timeline_other = 100};
	Fixture fx;
	Agraph_t *g;
	Agnode_t *v;

	fixture_init(&fx);
	g = timeline_with(fx.g, &fx.p, &info);
	assert_int_equal(count_class(g, "tensor"), 4);
	assert_null(titled(g, "tensor", "#include"));
	v = titled(g, "other", "#include");
	assert_non_null(v);
	assert_non_null(strstr(agnameof(v), "under 100 B each"));
	assert_non_null(labelled(g, "text", "no border: tensors under 100 B, "
			       "merged"));
	agclose(g);
	/* 0: none merged. */
	info.timeline_other = 0;
	g = timeline_with(fx.g, &fx.p, &info);
	assert_int_equal(count_class(g, "tensor"), 7);
	assert_int_equal(count_class(g, "other"), 0);
	agclose(g);
	fixture_free(&fx);
}

/*
 * n Add steps, each adding the last one's output and the output of the
 * step `skip` before (the graph input at first): every tensor lives skip
 * steps; sizes from 64 B to 4 KiB.
 */
static void skips(int n, int skip, ArGraph **gp, ArPlan **pp)
{
	ArGraph *g = ar_graph_new("skips");
	ArPlanOptions po;
	ArError err = {0};
	int x = gb_tensor(g, "x", AR_TK_INPUT, 16, 0, 0, 0);
	int *t = malloc((size_t)n * sizeof *t);
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "t%d", i);
		t[i] = gb_tensor(g, name, i == n - 1 ? AR_TK_OUTPUT :
				 AR_TK_ACTIVATION, 16 << (i % 7), 0, 0, 0);
		gb_node(g, "Add", (int[]){i ? t[i - 1] : x,
				  i >= skip ? t[i - skip] : x}, 2, t[i]);
	}
	gb_io(g, &x, 1, &t[n - 1], 1);
	ar_plan_options_default(&po);
	po.order = AR_ORDER_FILE;
	po.inplace = AR_INPLACE_NONE;
	/* The picture is under test, not the offsets: the least search
	 * (the default's exact search on 3,000 tensors took 6 s of CPU in
	 * the plain build and 20 s under the sanitizers). */
	po.effort = AR_EFFORT_MIN;
	assert_int_equal(ar_plan(g, &po, pp, &err), AR_OK);
	free(t);
	*gp = g;
}

/* 3,000 steps: the plot stays 1,800 points wide, two steps share a
 * hover column and every step is in one; names go on 60 rectangles,
 * the largest (all equally wide: the 4 KiB ones). */
static void test_wide(void **state)
{
	ArGraph *g;
	ArPlan *p;
	Agraph_t *d;
	double width = 0;
	int labels = 0, seen = 0;

	skips(3000, 100, &g, &p);
	d = timeline(g, p);
	for (Agnode_t *v = agfstnode(d); v; v = agnxtnode(d, v)) {
		Rect r = rect_of(v);
		if (!strcmp(attr(v, "class"), "tensor") && *attr(v, "label")) {
			labels++;
			assert_non_null(strstr(agnameof(v), ", 4,096 B\n"));
		}
		if (!strcmp(attr(v, "class"), "frame"))
			width = r.x1 - r.x0;
		if (!strcmp(attr(v, "class"), "step"))
			for (const char *s = agnameof(v); (s = strstr(s, "step "));
			     s++)
				seen++;
	}
	assert_true(fabs(width - 1800) < 0.5);
	assert_int_equal(count_class(d, "step"), 1500);
	assert_int_equal(seen, 3000);
	assert_int_equal(labels, 60);
	agclose(d);
	ar_plan_free(p);
	ar_graph_free(g);
}

/* Random plans (overlaps allowed: the merge does not care). */
static void random_plan(unsigned seed, ArGraph **gp, ArPlan *p,
			ArSlot *slots, int nt, int ns)
{
	ArGraph *g = ar_graph_new("random");
	srand(seed);
	for (int t = 0; t < nt; t++) {
		char name[16];
		int id;
		snprintf(name, sizeof name, "r%d", t);
		id = gb_tensor(g, name, AR_TK_ACTIVATION, 1 + rand() % 300, 0,
			       0, 0);
		slots[id] = (ArSlot){.planned = true, .alias_of = -1,
				     .inplace_of = -1, .root = id, .io = -1};
		slots[id].first = rand() % ns;
		slots[id].last = slots[id].first + rand() % (ns - slots[id].first);
		slots[id].offset = 4 * (rand() % 2000);
		slots[id].planned = rand() % 8 != 0;
	}
	memset(p, 0, sizeof *p);
	p->nsteps = ns;
	p->ntensors = nt;
	p->slots = slots;
	p->align = 4;
	p->arena_bytes = 8000 + 1200;
	*gp = g;
}

/* Whether tensor t lives in the column of `per` steps starting at s. */
static bool in_column(const ArSlot *x, int s, int per)
{
	return x->first / per <= s / per && s / per <= x->last / per;
}

static void test_merge(void **state)
{
	enum { NT = 120, NS = 40 };
	ArSlot slots[NT];

	for (unsigned seed = 1; seed <= 30; seed++) {
		ArGraph *g;
		ArPlan p;
		ArTlOther *o;
		bool pick[NT];
		int64_t snap = 1 + seed % 7, used[NS];
		int per = 1 + seed % 3, n, first[NS + 1], of[NS];
		ArTlCols cols = {(NS + per - 1) / per, first, of};

		random_plan(seed, &g, &p, slots, NT, NS);
		for (int t = 0; t < NT; t++)
			pick[t] = ar_tl_drawn(g, &p, t) && t % 3 != 0;
		/* Columns of per steps, as a plot of steps a per-th of a
		 * point wide has them (ar_tl_columns). */
		for (int s = 0; s < NS; s++)
			of[s] = s / per;
		for (int c = 0; c <= cols.n; c++)
			first[c] = c * per < NS ? c * per : NS;
		n = ar_tl_merge(g, &p, pick, snap, &cols, &o);
		for (int s = 0; s < NS; s += per) {
			/* Bands in a column: whole columns, on multiples of
			 * snap, apart by more than one row (closer ones are
			 * one). */
			for (int i = 0; i < n; i++) {
				if (s < o[i].first || s > o[i].last)
					continue;
				assert_int_equal(o[i].first % per, 0);
				assert_true(o[i].last == NS - 1 ||
					    (o[i].last + 1) % per == 0);
				assert_true(o[i].lo % snap == 0 && o[i].hi % snap == 0);
				for (int j = 0; j < n; j++)
					if (j != i && s >= o[j].first &&
					    s <= o[j].last && o[j].lo >= o[i].lo)
						assert_true(o[j].lo > o[i].hi + snap);
			}
			/* Each picked tensor live there lies in one band
			 * there. */
			for (int t = 0; t < NT; t++) {
				int64_t lo, hi;
				int in = 0;
				if (!pick[t] || !in_column(&slots[t], s, per))
					continue;
				lo = slots[t].offset / snap * snap;
				hi = (slots[t].offset + g->tensors[t].bytes +
				      snap - 1) / snap * snap;
				for (int i = 0; i < n; i++)
					in += s >= o[i].first && s <= o[i].last &&
					      o[i].lo <= lo && hi <= o[i].hi;
				assert_int_equal(in, 1);
			}
		}
		/* Each band's ends are some member's rounded ends; its
		 * members are the picked tensors it meets. */
		for (int i = 0; i < n; i++) {
			bool lo_met = false, hi_met = false;
			int members = 0;
			for (int t = 0; t < NT; t++) {
				int64_t lo = slots[t].offset / snap * snap;
				int64_t hi = (slots[t].offset + g->tensors[t].bytes +
					      snap - 1) / snap * snap;
				bool meets = false;
				for (int s = o[i].first; s <= o[i].last; s++)
					meets |= in_column(&slots[t], s, per);
				if (!pick[t] || !meets || lo >= o[i].hi ||
				    hi <= o[i].lo)
					continue;
				members++;
				lo_met |= lo == o[i].lo;
				hi_met |= hi == o[i].hi;
			}
			assert_true(lo_met && hi_met);
			assert_int_equal(members, o[i].ntensors);
		}
		/* Bytes in use: the union of padded ranges, byte by byte. */
		ar_tl_in_use(g, &p, used);
		for (int s = 0; s < NS; s++) {
			static bool cell[9200];
			int64_t want = 0;
			memset(cell, 0, sizeof cell);
			for (int t = 0; t < NT; t++)
				if (ar_tl_drawn(g, &p, t) && s >= slots[t].first &&
				    s <= slots[t].last)
					for (int64_t b = slots[t].offset;
					     b < slots[t].offset +
					     ar_plan_padded(&p, g->tensors[t].bytes); b++)
						cell[b] = true;
			for (int b = 0; b < 9200; b++)
				want += cell[b];
			assert_int_equal(used[s], want);
		}
		free(o);
		ar_graph_free(g);
	}
}

static void test_json_read(void **state)
{
	static const char *const bad[][2] = {
		{"[1, 2,]", "at byte 6"}, {"{\"a\" 1}", "expected ':'"},
		{"\"abc", "unterminated string"}, {"01", "text after the value"},
		{"[1] x", "text after the value"}, {"tru", "unexpected text"},
		{"[}", "expected a value at byte 1"},
		{"\"a\\qb\"", "bad escape"}, {"\"\\ud800\"", "bad \\u escape"},
		{"\"a\nb\"", "control character"}, {"-", "bad number"},
		{"1e", "bad number"}, {"99999999999999999999", "out of range"},
		{"", "unexpected end"},
	};
	const char *text = "{\"n\": 4611686018427387904, \"r\": -1.5e3, "
			   "\"s\": \"\\u00e9\\ud83d\\ude00\\\"\\n\", \"a\": "
			   "[true, false, null, {}], \"n\": 1}";
	char msg[128], deep[200];
	ArJson v;

	assert_true(ar_json_parse(text, strlen(text), &v, msg, sizeof msg));
	assert_int_equal(ar_json_get(&v, "n")->type, AR_JSON_INT);
	assert_true(ar_json_get(&v, "n")->i == (int64_t)1 << 62);
	assert_true(ar_json_get(&v, "r")->d == -1500.0);
	assert_string_equal(ar_json_get(&v, "s")->s,
			    "\xc3\xa9\xf0\x9f\x98\x80\"\n");
	assert_int_equal(ar_json_get(&v, "a")->n, 4);
	assert_int_equal(ar_json_get(&v, "a")->items[3].type, AR_JSON_OBJECT);
	assert_null(ar_json_get(&v, "missing"));
	ar_json_free(&v);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_false(ar_json_parse(bad[i][0], strlen(bad[i][0]), &v, msg,
					   sizeof msg));
		assert_non_null(strstr(msg, bad[i][1]));
	}
	/* Nesting: 64 deep is fine, 65 is not. */
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	assert_false(ar_json_parse(deep, 130, &v, msg, sizeof msg));
	assert_non_null(strstr(msg, "nested deeper than 64"));
	assert_true(ar_json_parse(deep + 1, 128, &v, msg, sizeof msg));
	ar_json_free(&v);
}

static void write_report(const char *path, const Fixture *fx)
{
	ArEmitInfo info = {.model_path = "dir/fx.onnx", .options = "--x 1"};
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(ar_write_json(f, fx->g, &fx->p, &info), AR_OK);
	fclose(f);
}

/* The fixture's report read back is the fixture's plan. */
static void check_round_trip(const Fixture *fx)
{
	ArPlanReport r;
	ArError err = {0};

	write_report(tmp("fx.json"), fx);
	assert_int_equal(ar_read_plan_report(tmp("fx.json"), &r, &err), AR_OK);
	assert_string_equal(r.model, "fx.onnx");
	assert_string_equal(r.options, "--x 1");
	assert_string_equal(r.p->algorithm, fx->p.algorithm);
	assert_int_equal(r.p->nsteps, 5);
	assert_int_equal(r.g->ntensors, FX_NT);
	assert_true(r.p->arena_bytes == fx->p.arena_bytes);
	assert_int_equal(r.p->peak_step, fx->p.peak_step);
	assert_int_equal(r.p->nregions, fx->p.nregions);
	for (int q = 0; q < fx->p.nregions; q++) {
		assert_string_equal(r.p->regions[q].name, fx->p.regions[q].name);
		assert_true(r.p->regions[q].used_bytes ==
			    fx->p.regions[q].used_bytes);
	}
	for (int t = 0; t < FX_NT; t++) {
		const ArSlot *a = &r.p->slots[t], *b = &fx->p.slots[t];
		assert_string_equal(r.g->tensors[t].name, fx->g->tensors[t].name);
		assert_true(r.g->tensors[t].bytes == fx->g->tensors[t].bytes);
		assert_int_equal(r.g->tensors[t].kind, fx->g->tensors[t].kind);
		assert_int_equal(a->planned, b->planned);
		if (!a->planned)
			continue;
		assert_int_equal(a->first, b->first);
		assert_int_equal(a->last, b->last);
		assert_true(a->offset == b->offset);
		assert_int_equal(a->alias_of, b->alias_of);
		assert_int_equal(a->inplace_of, b->inplace_of);
		assert_int_equal(a->region, b->region);
	}
	assert_int_equal(r.g->nodes[3].ninputs, 2);
	assert_int_equal(r.g->nodes[3].inputs[0], FX_V1);
	assert_int_equal(r.g->tensors[FX_EVILT].producer, 3);
	ar_plan_report_free(&r);
}

static void expect_refused(const char *text, const char *words)
{
	ArPlanReport r;
	ArError err = {0};
	FILE *f = fopen(tmp("bad.json"), "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(ar_read_plan_report(tmp("bad.json"), &r, &err),
			 AR_EXIT_USAGE);
	if (!strstr(err.msg, words))
		fail_msg("'%s' gave '%s', not '%s'", text, err.msg, words);
	assert_null(r.g);
}

#define STEP0 "{\"name\": \"s\", \"op\": \"Relu\", \"inputs\": [\"a\"], " \
	      "\"outputs\": [\"b\"]}"
#define TA "{\"name\": \"a\", \"bytes\": 64, \"kind\": \"input\", " \
	   "\"offset\": 0, \"first_step\": 0, \"last_step\": 0}"

static void test_report(void **state)
{
	Fixture fx;
	char doc[1024];

	fixture_init(&fx);
	check_round_trip(&fx);
	fixture_free(&fx);
	fixture_tiered(&fx);
	check_round_trip(&fx);
	fixture_free(&fx);

	expect_refused("[1", "not JSON: expected ',' or ']' at byte 2");
	expect_refused("[]", "'steps' missing or wrong");
	expect_refused("{\"steps\": [], \"tensors\": [], \"arena_bytes\": 8, "
		       "\"alignment\": 3, \"peak_step\": -1}", "'alignment'");
	snprintf(doc, sizeof doc, "{\"steps\": [" STEP0 "], \"tensors\": [" TA
		 "], \"arena_bytes\": 64, \"alignment\": 16, \"peak_step\": 0}");
	expect_refused(doc, "step 0: 'outputs' missing or wrong");
	snprintf(doc, sizeof doc, "{\"steps\": [" STEP0 "], \"tensors\": [" TA
		 ", " TA "], \"arena_bytes\": 64, \"alignment\": 16, "
		 "\"peak_step\": 0}");
	expect_refused(doc, "tensor 1: 'name' missing or wrong");
	snprintf(doc, sizeof doc, "{\"steps\": [" STEP0 "], \"tensors\": [" TA
		 ", {\"name\": \"b\", \"bytes\": 8, \"kind\": \"output\", "
		 "\"offset\": 60, \"first_step\": 0, \"last_step\": 0}], "
		 "\"arena_bytes\": 64, \"alignment\": 16, \"peak_step\": 0}");
	expect_refused(doc, "tensor 1 lies past the end of its arena");
	snprintf(doc, sizeof doc, "{\"steps\": [" STEP0 "], \"tensors\": [" TA
		 ", {\"name\": \"b\", \"bytes\": 8, \"kind\": \"output\", "
		 "\"offset\": 0, \"first_step\": 0, \"last_step\": 1}], "
		 "\"arena_bytes\": 64, \"alignment\": 16, \"peak_step\": 0}");
	expect_refused(doc, "tensor 1: 'first_step'");
	snprintf(doc, sizeof doc, "{\"steps\": [" STEP0 "], \"tensors\": [" TA
		 ", {\"name\": \"b\", \"bytes\": 8, \"kind\": \"output\", "
		 "\"offset\": 16, \"first_step\": 0, \"last_step\": 0}], "
		 "\"arena_bytes\": 64, \"alignment\": 16, \"peak_step\": 0}");
	{
		ArPlanReport r;
		ArError err = {0};
		FILE *f = fopen(tmp("ok.json"), "w");
		fputs(doc, f);
		fclose(f);
		assert_int_equal(ar_read_plan_report(tmp("ok.json"), &r, &err),
				 AR_OK);
		assert_int_equal(r.p->slots[1].offset, 16);
		ar_plan_report_free(&r);
		assert_int_equal(ar_read_plan_report(tmpdir, &r, &err),
				 AR_EXIT_USAGE);
		assert_non_null(strstr(err.msg, "is a directory"));
		assert_int_equal(ar_read_plan_report(tmp("none.json"), &r, &err),
				 AR_EXIT_USAGE);
		assert_non_null(strstr(err.msg, "cannot read"));
	}
}

/* This plan above, the report's below, on one scale; both arenas and the
 * difference in the title; every name once. */
static void test_compare(void **state)
{
	ArEmitInfo info = {.model_path = "fx.onnx", .options = "--y 2",
			   .compare_path = "some/where/tiered.json"};
	ArPlanReport r;
	ArError err = {0};
	Fixture fx, tiered;
	Agraph_t *g;
	Rect top = {0}, bottom = {0};

	fixture_tiered(&tiered);
	write_report(tmp("tiered.json"), &tiered);
	fixture_free(&tiered);
	assert_int_equal(ar_read_plan_report(tmp("tiered.json"), &r, &err), AR_OK);
	info.compare = &r;
	fixture_init(&fx);
	g = timeline_with(fx.g, &fx.p, &info);
	assert_non_null(strstr(attr(g, "label"), "fx.onnx: arena 1.8 KiB "
			       "(1,840 B) in this plan, 12.3 KiB (12,640 B) in "
			       "tiered.json: 10.5 KiB less (-85.4%)"));
	assert_non_null(labelled(g, "text", "above: this plan (--y 2), arena "
			       "1.8 KiB (1,840 B)"));
	assert_non_null(labelled(g, "text", "below: tiered.json (--x 1), arena "
			       "12.3 KiB (12,640 B)"));
	/* Seven tensors each; those under 58 B (two points) merged. */
	assert_int_equal(count_class(g, "tensor"), 8);
	assert_true(count_class(g, "other") >= 2);
	assert_non_null(titled(g, "tensor", "c1\n"));
	assert_non_null(titled(g, "tensor", "c1\nfloat32[1,4,8,8], 1,024 B\n"
			       "memory slow [10,704, 11,728), steps 0 to 1"));
	assert_non_null(strstr(agnameof(titled(g, "tensor", "memory slow")),
			       "\n(below: tiered.json)"));
	/* The same scale: the arena panels' heights are as their arenas. */
	for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v)) {
		Rect x = rect_of(v);
		if (strcmp(attr(v, "class"), "frame") || !strcmp(attr(v, "style"),
								  "dashed"))
			continue;
		if (x.y0 > top.y0)
			bottom = top, top = x;
		else
			bottom = x;
	}
	assert_true(fabs((top.y1 - top.y0) / (bottom.y1 - bottom.y0) -
			 1840.0 / 12640) < 0.01);
	assert_int_equal(count_class(g, "peak-bar"), 2);
	agclose(g);
	fixture_free(&fx);
	ar_plan_report_free(&r);
}

static void test_lenet(void **state)
{
	ArEmitInfo info = {.model_path = "testdata/lenet.onnx",
			   .prefix = "lenet", .options = ""};
	ArError err = {0};
	ArGraph *g;
	ArPlan *p;
	Agraph_t *d;

	plan_lenet(&g, &p);
	assert_int_equal(ar_write_timeline(tmp("lenet_tl.png"), g, p, &info, NULL,
					   &err), AR_OK);
	assert_true(starts_with_file(tmp("lenet_tl.png"), "\x89PNG"));
	d = timeline(g, p);
	assert_true(check_rects(d, p) > 5);
	assert_int_equal(count_class(d, "peak-bar"), 1);
	agclose(d);
	ar_plan_free(p);
	ar_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_phases),
		cmocka_unit_test(test_other),
		cmocka_unit_test(test_device),
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_text_width),
		cmocka_unit_test(test_wide),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_json_read),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_lenet),
	};
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, remove_tmpdir);
}
