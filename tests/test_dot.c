/*
 * test_dot.c — the Graphviz pictures, read back and checked by structure:
 * the dataflow graph's nodes, edges and labels, and the timeline after a
 * real layout (rectangles where the plan puts them, inside the canvas,
 * apart when their tensors are live together), for the hand-made plan
 * and for lenet through the whole pipeline.
 */
#include "testutil.h"

#include <math.h>
#include <unistd.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "emit.h"
#include "gvutil.h"
#include "fixture_plan.h"
#include "infer.h"
#include "load.h"

static char tmpdir[] = "/tmp/arenac_dotXXXXXX";

static const char *tmp(const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
	return buf;
}

static Agraph_t *read_dot(const char *path)
{
	FILE *f = fopen(path, "r");
	Agraph_t *g;
	assert_non_null(f);
	g = agread(f, NULL);
	fclose(f);
	assert_non_null(g);
	return g;
}

static const char *attr(void *obj, const char *name)
{
	char *v = agget(obj, (char *)name);
	return v ? v : "";
}

static int count_class(Agraph_t *g, const char *cls)
{
	int n = 0;
	for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v))
		n += strcmp(attr(v, "class"), cls) == 0;
	return n;
}

static Agraph_t *dataflow(const Fixture *fx, bool weights)
{
	ArEmitInfo info = {.model_path = "fx.onnx", .prefix = "m",
			   .options = "", .dot_weights = weights};
	ArError err = {0};
	assert_int_equal(ar_write_dot(tmp("df.dot"), fx->g, &fx->p, &info, NULL,
				      &err), AR_OK);
	return read_dot(tmp("df.dot"));
}

static void test_dataflow(void **state)
{
	Fixture fx;
	Agraph_t *g;
	Agnode_t *v;

	fixture_init(&fx);
	g = dataflow(&fx, false);
	assert_int_equal(count_class(g, "op"), 5);
	/* The seven arena tensors; weights and the shape constant hidden. */
	assert_int_equal(count_class(g, "tensor"), 7);
	assert_int_equal(agnedges(g), 11);
	v = agnode(g, "t4", 0);
	assert_non_null(v);
	assert_non_null(strstr(attr(v, "label"), "c1\\nfloat32[1,4,8,8] 1 KiB"));
	assert_non_null(strstr(attr(v, "label"), "[816, 1840)"));
	assert_string_equal(attr(v, "color"), "red");  /* live at the peak */
	assert_non_null(strstr(attr(agnode(g, "t7", 0), "label"), "within r1"));
	assert_non_null(strstr(attr(agnode(g, "t5", 0), "label"), "over c1"));
	/* The hostile name survives as text, backslash doubled. */
	assert_non_null(strstr(attr(agnode(g, "t10", 0), "label"),
			       "y\"\\\\?"));
	v = agnode(g, "s0", 0);
	assert_non_null(strstr(attr(v, "label"), "PEAK"));
	assert_string_equal(attr(v, "color"), "red");
	assert_null(strstr(attr(agnode(g, "s1", 0), "label"), "PEAK"));
	agclose(g);

	g = dataflow(&fx, true);
	assert_int_equal(count_class(g, "tensor"), 11);
	assert_int_equal(agnedges(g), 15);
	assert_non_null(strstr(attr(agnode(g, "t8", 0), "label"),
			       "weight, not in the arena"));
	agclose(g);
	fixture_free(&fx);
}

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
static Agraph_t *timeline(const ArGraph *ag, const ArPlan *p)
{
	ArEmitInfo info = {.model_path = "fx.onnx", .prefix = "m",
			   .options = "", .dot_weights = false};
	ArError err = {0};
	GVC_t *gvc = ar_gv_context();
	Agraph_t *g, *out;
	char *text;
	unsigned len;

	assert_int_equal(ar_write_timeline(tmp("tl.dot"), ag, p, &info, NULL,
					   &err), AR_OK);
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
	/* Step 0 is the peak: its band spans c1's first column, and c1
	 * (steps 0-1, 1024 B) is twice as wide and 4/3 as high as in:0
	 * (step 0, 768 B), right above it. */
	assert_true(fabs(peak.x0 - c1.x0) < 0.05);
	assert_true(fabs((c1.x1 - c1.x0) - 2 * (x.x1 - x.x0)) < 0.05);
	assert_true(fabs((c1.y1 - c1.y0) / (x.y1 - x.y0) - 1024.0 / 768) < 0.01);
	assert_true(fabs(c1.y0 - x.y1) < 0.05);  /* rounded alike */
	agclose(g);
	fixture_free(&fx);
}

static void test_bad_extension(void **state)
{
	ArEmitInfo info = {.model_path = "fx.onnx", .prefix = "m",
			   .options = "", .dot_weights = false};
	ArError err = {0};
	Fixture fx;

	fixture_init(&fx);
	assert_int_equal(ar_write_dot(tmp("x.jpgx"), fx.g, &fx.p, &info, NULL,
				      &err), AR_EXIT_USAGE);
	assert_non_null(strstr(err.msg, ".svg"));
	assert_int_not_equal(access(tmp("x.jpgx"), F_OK), 0);
	fixture_free(&fx);
}

static bool starts_with_file(const char *path, const char *magic)
{
	char buf[16] = {0};
	FILE *f = fopen(path, "rb");
	size_t n;
	if (!f)
		return false;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	return n >= strlen(magic) && memcmp(buf, magic, strlen(magic)) == 0;
}

static void test_lenet(void **state)
{
	ArLoadOptions lo = {0};
	ArPlanOptions po;
	ArEmitInfo info = {.model_path = "testdata/lenet.onnx",
			   .prefix = "lenet", .options = "",
			   .dot_weights = false};
	ArError err = {0};
	ArGraph *g;
	ArPlan *p;
	Agraph_t *d;

	lo.dim_default = 1;
	lo.batch = -1;
	assert_int_equal(ar_load_onnx("testdata/lenet.onnx", &lo, &g, &err),
			 AR_OK);
	assert_int_equal(ar_infer(g, NULL, &err), AR_OK);
	ar_plan_options_default(&po);
	assert_int_equal(ar_plan(g, &po, &p, &err), AR_OK);

	assert_int_equal(ar_write_dot(tmp("lenet.svg"), g, p, &info, NULL,
				      &err), AR_OK);
	assert_true(starts_with_file(tmp("lenet.svg"), "<?xml"));
	assert_int_equal(ar_write_timeline(tmp("lenet_tl.png"), g, p, &info, NULL,
					   &err), AR_OK);
	assert_true(starts_with_file(tmp("lenet_tl.png"), "\x89PNG"));

	assert_int_equal(ar_write_dot(tmp("lenet.dot"), g, p, &info, NULL,
				      &err), AR_OK);
	d = read_dot(tmp("lenet.dot"));
	assert_int_equal(count_class(d, "op"), p->nsteps);
	assert_non_null(strstr(attr(agnode(d, "t9", 0), "label"),
			       "float32[1,1,28,28]"));
	agclose(d);
	d = timeline(g, p);
	assert_true(check_rects(d, p) > 5);
	assert_int_equal(count_class(d, "peak-bar"), 1);
	agclose(d);
	ar_plan_free(p);
	ar_graph_free(g);
}

static int cleanup(void **state)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dataflow),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_bad_extension),
		cmocka_unit_test(test_lenet),
	};
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, cleanup);
}
