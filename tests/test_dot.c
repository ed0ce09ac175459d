/*
 * test_dot.c — the dataflow picture, read back and checked by structure:
 * nodes, edges and labels for the hand-made plan and for lenet through the
 * whole pipeline; the condensed view of a stack of repeated blocks (which
 * steps share a box, the cluster, tensors drawn once for all repeats) and
 * the view around one step.
 */
#include "picture_util.h"

#include <unistd.h>

#include "dotfold.h"
#include "emit.h"
#include "gvutil.h"
#include "fixture_plan.h"
#include "graph_build.h"

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
	assert_non_null(strstr(attr(v, "label"), "[816, 1,840)"));
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

static void test_lenet(void **state)
{
	ArEmitInfo info = {.model_path = "testdata/lenet.onnx",
			   .prefix = "lenet", .options = "",
			   .dot_weights = false};
	ArError err = {0};
	ArGraph *g;
	ArPlan *p;
	Agraph_t *d;

	plan_lenet(&g, &p);

	assert_int_equal(ar_write_dot(tmp("lenet.svg"), g, p, &info, NULL,
				      &err), AR_OK);
	assert_true(starts_with_file(tmp("lenet.svg"), "<?xml"));

	assert_int_equal(ar_write_dot(tmp("lenet.dot"), g, p, &info, NULL,
				      &err), AR_OK);
	d = read_dot(tmp("lenet.dot"));
	assert_int_equal(count_class(d, "op"), p->nsteps);
	assert_non_null(strstr(attr(agnode(d, "t9", 0), "label"),
			       "float32[1,1,28,28]"));
	agclose(d);
	ar_plan_free(p);
	ar_graph_free(g);
}

/*
 * A stem Relu, then count repeats of MatMul -> Relu -> Add (a residual
 * block), then a final Relu: 3 * count + 2 steps, planned in file order.
 */
static void residual_stack(int count, ArGraph **gp, ArPlan **pp)
{
	ArGraph *g = ar_graph_new("stack");
	ArPlanOptions po;
	ArError err = {0};
	int x = gb_tensor(g, "x", AR_TK_INPUT, 1, 16, 0, 0), y;
	int h = gb_tensor(g, "h0", AR_TK_ACTIVATION, 1, 16, 0, 0);
	char name[32];

	gb_node(g, "Relu", (int[]){x}, 1, h);
	for (int i = 0; i < count; i++) {
		int w, m, r, o;
		snprintf(name, sizeof name, "w%d", i);
		w = gb_tensor(g, name, AR_TK_WEIGHT, 16, 16, 0, 0);
		snprintf(name, sizeof name, "m%d", i);
		m = gb_tensor(g, name, AR_TK_ACTIVATION, 1, 16, 0, 0);
		snprintf(name, sizeof name, "r%d", i);
		r = gb_tensor(g, name, AR_TK_ACTIVATION, 1, 16, 0, 0);
		snprintf(name, sizeof name, "h%d", i + 1);
		o = gb_tensor(g, name, AR_TK_ACTIVATION, 1, 16, 0, 0);
		gb_node(g, "MatMul", (int[]){h, w}, 2, m);
		gb_node(g, "Relu", (int[]){m}, 1, r);
		gb_node(g, "Add", (int[]){r, h}, 2, o);
		h = o;
	}
	y = gb_tensor(g, "y", AR_TK_OUTPUT, 1, 16, 0, 0);
	gb_node(g, "Relu", (int[]){h}, 1, y);
	gb_io(g, &x, 1, &y, 1);
	ar_plan_options_default(&po);
	po.order = AR_ORDER_FILE;
	assert_int_equal(ar_plan(g, &po, pp, &err), AR_OK);
	assert_int_equal((*pp)->nsteps, 3 * count + 2);
	*gp = g;
}

static void test_fold(void **state)
{
	ArGraph *g;
	ArPlan *p;
	ArDotView v;
	int last;

	residual_stack(5, &g, &p);
	last = p->nsteps - 1;
	ar_dot_view(g, p, AR_DOT_CONDENSED, 0, 0, &v);
	/* One block: the 5 repeats from step 1; the stem's output is read
	 * twice and the first repeat reads it as the others read the repeat
	 * before. */
	assert_int_equal(v.nblocks, 1);
	assert_int_equal(v.blocks[0].first, 1);
	assert_int_equal(v.blocks[0].period, 3);
	assert_int_equal(v.blocks[0].count, 5);
	assert_false(v.segments);
	/* Boxes: the stem, MatMul -> Relu (a chain), Add, the last Relu. */
	assert_int_equal(v.nboxes, 4);
	assert_int_not_equal(v.box[0], v.box[1]);
	assert_int_equal(v.box[1], v.box[2]);
	assert_int_not_equal(v.box[2], v.box[3]);
	for (int k = 1; k < 5; k++) {
		assert_int_equal(v.box[1 + 3 * k], v.box[1]);
		assert_int_equal(v.box[3 + 3 * k], v.box[3]);
		assert_int_equal(v.repeat[1 + 3 * k], k);
	}
	assert_int_equal(v.box_block[v.box[1]], 0);
	assert_int_equal(v.box_block[v.box[last]], -1);
	assert_int_equal(v.start[v.box[1] + 1] - v.start[v.box[1]], 2);
	assert_int_equal(v.steps[v.start[v.box[1]]], 1);
	assert_int_equal(v.steps[v.start[v.box[1]] + 1], 2);
	ar_dot_view_free(&v);

	/* Around the first Add (step 3), one tensor away: what made its
	 * inputs (steps 0 and 2) and what reads its output (4 and 6). */
	ar_dot_view(g, p, AR_DOT_FOCUS, 3, 1, &v);
	assert_int_equal(v.nboxes, 5);
	for (int s = 0; s < p->nsteps; s++)
		assert_int_equal(v.box[s] >= 0, s == 0 || s == 2 || s == 3 ||
				 s == 4 || s == 6);
	ar_dot_view_free(&v);

	ar_dot_view(g, p, AR_DOT_FULL, 0, 0, &v);
	assert_int_equal(v.nboxes, p->nsteps);
	assert_int_equal(v.nblocks, 0);
	ar_dot_view_free(&v);
	ar_plan_free(p);
	ar_graph_free(g);
}

static int count_label(Agraph_t *g, const char *cls, const char *text)
{
	int n = 0;
	for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v))
		n += !strcmp(attr(v, "class"), cls) &&
		     strstr(attr(v, "label"), text) != NULL;
	return n;
}

static void test_condensed(void **state)
{
	ArEmitInfo info = {.model_path = "some/folder/stack.onnx", .options = ""};
	ArError err = {0};
	ArGraph *g;
	ArPlan *p;
	Agraph_t *d, *c;

	/* 92 steps: over the size drawn in full. */
	residual_stack(30, &g, &p);
	assert_int_equal(ar_write_dot(tmp("stack.dot"), g, p, &info, NULL, &err),
			 AR_OK);
	d = read_dot(tmp("stack.dot"));
	assert_non_null(strstr(attr(d, "label"), "stack.onnx: arena"));
	assert_null(strstr(attr(d, "label"), "folder"));
	assert_non_null(strstr(attr(d, "label"), "92 steps in 4 boxes"));
	c = agsubg(d, "cluster_b0", 0);
	assert_non_null(c);
	assert_non_null(strstr(attr(c, "label"), "30: steps 1 to 90, 30 repeats "
			       "of 3 steps"));
	/* Its two boxes, the r tensors and the h tensors fed back. */
	assert_int_equal(agnnodes(c), 4);
	assert_int_equal(count_class(d, "op"), 3);
	assert_int_equal(count_label(d, "ops", "MatMul \xe2\x86\x92 Relu"), 1);
	/* x, h0, the 30 r, h1..h29 fed back, h30 and y: the m tensors stay
	 * inside their box. */
	assert_int_equal(count_class(d, "tensor"), 6);
	assert_int_equal(count_label(d, "tensor", "30 tensors, 64 B each"), 1);
	assert_int_equal(count_label(d, "tensor", "29 tensors, 64 B each"), 1);
	assert_int_equal(count_label(d, "tensor", "h30\\n"), 1);
	assert_int_equal(count_label(d, "legend", ""), 1);
	agclose(d);

	/* --dot-expand: every step. */
	info.dot_expand = true;
	assert_int_equal(ar_write_dot(tmp("stack.dot"), g, p, &info, NULL, &err),
			 AR_OK);
	d = read_dot(tmp("stack.dot"));
	assert_int_equal(count_class(d, "op"), 92);
	assert_null(agsubg(d, "cluster_b0", 0));
	agclose(d);

	/* --dot-focus 3:1, and a step the plan does not have. */
	info.dot_expand = false;
	info.dot_focus_set = true;
	info.dot_focus = 3;
	info.dot_radius = 1;
	assert_int_equal(ar_write_dot(tmp("stack.dot"), g, p, &info, NULL, &err),
			 AR_OK);
	d = read_dot(tmp("stack.dot"));
	assert_int_equal(count_class(d, "op"), 5);
	assert_non_null(strstr(attr(d, "label"), "the 5 steps within 1 tensor "
			       "of step 3 (outlined blue), of 92"));
	assert_string_equal(attr(agnode(d, "s3", 0), "color"), "#1f78b4");
	assert_non_null(agnode(d, "s6", 0));
	assert_null(agnode(d, "s7", 0));
	agclose(d);
	info.dot_focus = 92;
	assert_int_equal(ar_write_dot(tmp("stack.dot"), g, p, &info, NULL, &err),
			 AR_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "--dot-focus 92: the plan has steps 0 "
			       "to 91"));
	ar_plan_free(p);
	ar_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dataflow),
		cmocka_unit_test(test_bad_extension),
		cmocka_unit_test(test_lenet),
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_condensed),
	};
	if (!mkdtemp(tmpdir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, remove_tmpdir);
}
