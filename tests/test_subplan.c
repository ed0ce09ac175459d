/*
 * test_subplan.c — If branches and Loop and Scan bodies planned as graphs
 * of their own, inside their step's workspace, and kernel scratch: hand-made
 * graphs with sizes worked out below, the verifier and the poison
 * executor over every subgraph, and plans they must refuse.
 *
 * Float tensors [1,64] are 256 bytes; a bool or int64 scalar pads to 16.
 */
#include "testutil.h"

#include "graph_build.h"
#include "ops.h"
#include "plan.h"

#define V 64                    /* floats per [1,V] tensor: 256 bytes */

static int scalar(ArGraph *g, const char *name, ArTensorKind k, ArDType dt)
{
	int t = ar_graph_add_tensor(g, name);
	g->tensors[t].kind = k;
	g->tensors[t].dtype = dt;
	g->tensors[t].rank = 0;
	ar_tensor_set_bytes(&g->tensors[t], NULL);
	return t;
}

static ArGraph *subgraph(ArGraph *parent, const char *name)
{
	ArGraph *s = ar_graph_new(name);
	s->parent = parent;
	s->depth = parent->depth + 1;
	return s;
}

/* A local tensor of sub standing for the enclosing graph's `name`. */
static int capture(ArGraph *sub, const char *name, int64_t n)
{
	int t = gb_tensor(sub, name, AR_TK_INPUT, 1, n, 0, 0);
	sub->captures = ar_xrealloc(sub->captures,
				    (size_t)(sub->ncaptures + 1) * sizeof(int));
	sub->captures[sub->ncaptures++] = t;
	return t;
}

static void graph_attr(ArGraph *g, int node, const char *name, ArGraph *sub)
{
	ar_node_add_attr(g, &g->nodes[node], name, AR_ATTR_GRAPH)->g = sub;
}

/* The node reads `t` of its own graph through a subgraph. */
static void add_capture_input(ArGraph *g, int node, int t)
{
	ArNode *n = &g->nodes[node];
	n->inputs = ar_xrealloc(n->inputs, (size_t)(n->ninputs + 1) *
				sizeof(int));
	n->inputs[n->ninputs++] = t;
}

static int node_n(ArGraph *g, const char *op, const int *in, int nin,
		  const int *out, int nout)
{
	int n = ar_graph_add_node(g, op, op, "");
	ar_node_set_io(&g->nodes[n], in, nin, out, nout);
	g->nodes[n].opset = 13;
	for (int j = 0; j < nout; j++)
		if (out[j] >= 0)
			g->tensors[out[j]].producer = n;
	return n;
}

/* then: a = Relu(x); b = Sigmoid(a); y = Add(a, b): 512 bytes inside. */
static ArGraph *then_branch(ArGraph *g)
{
	ArGraph *s = subgraph(g, "then");
	int x = capture(s, "x", V);
	int a = gb_tensor(s, "a", AR_TK_ACTIVATION, 1, V, 0, 0);
	int b = gb_tensor(s, "b", AR_TK_ACTIVATION, 1, V, 0, 0);
	int y = gb_tensor(s, "yt", AR_TK_OUTPUT, 1, V, 0, 0);
	gb_node(s, "Relu", &x, 1, a);
	gb_node(s, "Sigmoid", &a, 1, b);
	gb_node(s, "Add", (int[]){a, b}, 2, y);
	gb_io(s, (int[]){0}, 0, &y, 1);
	return s;
}

/* else: c = Neg(x); y = Relu(c): 256 bytes inside. */
static ArGraph *else_branch(ArGraph *g)
{
	ArGraph *s = subgraph(g, "else");
	int x = capture(s, "x", V);
	int c = gb_tensor(s, "c", AR_TK_ACTIVATION, 1, V, 0, 0);
	int y = gb_tensor(s, "ye", AR_TK_OUTPUT, 1, V, 0, 0);
	gb_node(s, "Neg", &x, 1, c);
	gb_node(s, "Relu", &c, 1, y);
	gb_io(s, (int[]){0}, 0, &y, 1);
	return s;
}

/*
 * y = If(cond) over x, then z = Add(y, x).  At the If's step x, cond, y
 * and the larger branch's region are live: 256 + 16 + 256 + 512 = 1040.
 */
static ArGraph *if_graph(bool const_cond)
{
	ArGraph *g = ar_graph_new("ifg");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 1, V, 0, 0);
	int c = scalar(g, "cond", const_cond ? AR_TK_CONSTANT : AR_TK_INPUT,
		       AR_DT_BOOL);
	int y = gb_tensor(g, "y", AR_TK_ACTIVATION, 1, V, 0, 0);
	int z = gb_tensor(g, "z", AR_TK_OUTPUT, 1, V, 0, 0);
	int n = gb_node(g, "If", &c, 1, y);

	graph_attr(g, n, "else_branch", else_branch(g));
	graph_attr(g, n, "then_branch", then_branch(g));
	add_capture_input(g, n, x);
	gb_node(g, "Add", (int[]){y, x}, 2, z);
	if (const_cond) {
		/* then_branch taken: inference never shaped the other. */
		ArGraph *e = g->nodes[n].attrs[0].g;
		g->tensors[c].data = ar_xcalloc(1, 1);
		*(uint8_t *)g->tensors[c].data = 1;
		for (int t = 0; t < e->ntensors; t++)
			e->tensors[t].rank = -1, e->tensors[t].bytes = -1;
		gb_io(g, &x, 1, &z, 1);
	} else {
		gb_io(g, (int[]){x, c}, 2, &z, 1);
	}
	return g;
}

static ArPlan *plan_ok(const ArGraph *g, const ArPlanOptions *o)
{
	ArPlan *p = NULL;
	ArError err = {0};
	if (ar_plan(g, o, &p, &err))
		fail_msg("plan: %s", err.msg);
	if (ar_poison_run(g, p, &err))
		fail_msg("poison: %s", err.msg);
	return p;
}

static const ArSubPlan *sub_named(const ArPlan *p, const char *attr)
{
	for (int k = 0; k < p->nsubs; k++)
		if (!strcmp(p->subs[k].attr, attr))
			return &p->subs[k];
	fail_msg("no subgraph '%s'", attr);
	return NULL;
}

/* The branches share one region, as large as the larger one's arena. */
static void test_if_branches_share_region(void **state)
{
	ArGraph *g = if_graph(false);
	ArPlanOptions o;
	ArPlan *p;
	const ArSubPlan *t, *e;
	const ArScratch *w;

	(void)state;
	ar_plan_options_default(&o);
	p = plan_ok(g, &o);
	t = sub_named(p, "then_branch");
	e = sub_named(p, "else_branch");
	assert_non_null(t->plan);
	assert_non_null(e->plan);
	assert_int_equal(t->plan->arena_bytes, 512);
	assert_int_equal(e->plan->arena_bytes, 256);
	w = ar_plan_scratch(p, 0);
	assert_non_null(w);
	assert_int_equal(w->bytes, 512);
	/* x 256 + cond 16 + y 256 + the workspace 512, all at step 0. */
	assert_int_equal(p->lower_bound, 1040);
	assert_int_equal(p->arena_bytes, 1040);
	assert_int_equal(t->base, w->offset);
	assert_int_equal(e->base, w->offset);
	/* The capture and the output are the enclosing graph's tensors. */
	for (int k = 0; k < 2; k++) {
		const ArSubPlan *sp = k ? t : e;
		int out = sp->g->outputs[0], x = sp->g->captures[0];
		ArWhere wo, wx;
		assert_false(sp->plan->slots[out].planned);
		assert_false(sp->plan->slots[x].planned);
		ar_sub_where(sp, out, &wo);
		ar_sub_where(sp, x, &wx);
		assert_int_equal(wo.offset,
				 p->slots[ar_graph_find(g, "y")].offset);
		assert_int_equal(wx.offset, p->slots[g->inputs[0]].offset);
	}
	ar_plan_free(p);
	ar_graph_free(g);
}

/* A constant condition: the branch it skips is not planned, and said. */
static void test_if_constant_condition(void **state)
{
	ArGraph *g = if_graph(true);
	ArPlanOptions o;
	ArPlan *p;
	const ArSubPlan *e;

	(void)state;
	ar_plan_options_default(&o);
	p = plan_ok(g, &o);
	e = sub_named(p, "else_branch");
	assert_null(e->plan);
	assert_true(e->never_runs);
	assert_non_null(strstr(e->why, "never runs"));
	assert_int_equal(ar_plan_scratch(p, 0)->bytes, 512);
	ar_plan_free(p);
	ar_graph_free(g);
}

/*
 * Loop(trips, "", x) -> (acc, scans); body (i, cond_in, v_in) ->
 * (cond_out, v_out, s): v_out = Add(v_in, x), cond_out =
 * Identity(cond_in), s = Mul(v_out, x).  Body inputs live to the last
 * step, so at step 2 all of i, cond_in, v_in, cond_out, v_out and s are
 * live: 16 + 16 + 256 + 16 + 256 + 256 = 816, whatever the trip count.
 */
static ArGraph *loop_graph(int64_t trips, bool permute)
{
	ArGraph *g = ar_graph_new("loopg"), *b = subgraph(g, "body");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 1, V, 0, 0);
	int w = gb_tensor(g, "w", AR_TK_INPUT, 1, V, 0, 0);
	int m = scalar(g, "trips", AR_TK_WEIGHT, AR_DT_INT64);
	int acc = gb_tensor(g, "acc", AR_TK_OUTPUT, 1, V, 0, 0);
	int acc2 = gb_tensor(g, "acc2", AR_TK_OUTPUT, 1, V, 0, 0);
	int sc = gb_tensor(g, "scans", AR_TK_OUTPUT, trips, 1, V, 0);
	int i = scalar(b, "i", AR_TK_INPUT, AR_DT_INT64);
	int ci = scalar(b, "cond_in", AR_TK_INPUT, AR_DT_BOOL);
	int vi = gb_tensor(b, "v_in", AR_TK_INPUT, 1, V, 0, 0);
	int ui = gb_tensor(b, "u_in", AR_TK_INPUT, 1, V, 0, 0);
	int bx = capture(b, "x", V);
	int co = scalar(b, "cond_out", AR_TK_OUTPUT, AR_DT_BOOL);
	int vo = gb_tensor(b, "v_out", AR_TK_OUTPUT, 1, V, 0, 0);
	int s = gb_tensor(b, "s", AR_TK_OUTPUT, 1, V, 0, 0);
	int n;

	g->tensors[m].data = ar_xcalloc(1, 8);
	*(int64_t *)g->tensors[m].data = trips;
	gb_node(b, "Add", (int[]){vi, bx}, 2, vo);
	gb_node(b, "Identity", &ci, 1, co);
	gb_node(b, "Mul", (int[]){vo, bx}, 2, s);
	gb_io(b, (int[]){i, ci, vi, ui}, 4,
	      permute ? (int[]){co, ui, vo, s} : (int[]){co, vo, ui, s}, 4);
	n = node_n(g, "Loop", (int[]){m, -1, x, w}, 4,
		   (int[]){acc, acc2, sc}, 3);
	graph_attr(g, n, "body", b);
	add_capture_input(g, n, x);
	gb_io(g, (int[]){x, w}, 2, (int[]){acc, acc2, sc}, 3);
	return g;
}

static void test_loop_body_reused(void **state)
{
	ArPlanOptions o;
	int64_t arena[2];

	(void)state;
	ar_plan_options_default(&o);
	for (int k = 0; k < 2; k++) {
		ArGraph *g = loop_graph(k ? 100 : 4, false);
		ArPlan *p = plan_ok(g, &o);
		const ArSubPlan *b = sub_named(p, "body");
		const ArGraph *bg = b->g;
		assert_non_null(b->plan);
		assert_true(b->plan->carried);
		/* u_in passes through: 816 + its 256. */
		assert_int_equal(b->plan->arena_bytes, 816 + 256);
		arena[k] = ar_plan_scratch(p, 0)->bytes;
		for (int i = 0; i < bg->ninputs; i++)
			assert_int_equal(b->plan->slots[bg->inputs[i]].last,
					 b->plan->nsteps - 1);
		ar_plan_free(p);
		ar_graph_free(g);
	}
	/* The body's region does not grow with the iterations. */
	assert_int_equal(arena[0], arena[1]);
}

/* A carried output that is another body input: left out, and said. */
static int warned;
static void count_warning(void *ctx, const char *msg)
{
	(void)ctx;
	warned += strstr(msg, "not planned") != NULL;
}

static void test_loop_permutation_unplanned(void **state)
{
	ArGraph *g = loop_graph(4, true);
	ArPlanOptions o;
	ArPlan *p;
	const ArSubPlan *b;

	(void)state;
	ar_plan_options_default(&o);
	o.diag.warn = count_warning;
	warned = 0;
	p = plan_ok(g, &o);
	b = sub_named(p, "body");
	assert_null(b->plan);
	assert_false(b->never_runs);
	assert_non_null(strstr(b->why, "permutation"));
	assert_int_equal(warned, 1);
	ar_plan_free(p);
	ar_graph_free(g);
}

/*
 * Scan(a0, b0, xs) -> (a, b, ys), num_scan_inputs 1; the body reads
 * (a_in, b_in, x) and writes (a_out = Add(a_in, x), b_in passed on, y =
 * Relu(a_out)), or with permute (b_in, a_out, y): b_in would go back onto
 * a_in, a permutation.  Body: a_in, b_in, x, a_out and y all live at its
 * last step: 5 x 256 = 1280.
 */
static ArGraph *scan_graph(bool permute)
{
	ArGraph *g = ar_graph_new("scang"), *b = subgraph(g, "body");
	int a0 = gb_tensor(g, "a0", AR_TK_INPUT, 1, V, 0, 0);
	int b0 = gb_tensor(g, "b0", AR_TK_INPUT, 1, V, 0, 0);
	int xs = gb_tensor(g, "xs", AR_TK_INPUT, 3, 1, V, 0);
	int a = gb_tensor(g, "a", AR_TK_OUTPUT, 1, V, 0, 0);
	int bb = gb_tensor(g, "b", AR_TK_OUTPUT, 1, V, 0, 0);
	int ys = gb_tensor(g, "ys", AR_TK_OUTPUT, 3, 1, V, 0);
	int ai = gb_tensor(b, "a_in", AR_TK_INPUT, 1, V, 0, 0);
	int bi = gb_tensor(b, "b_in", AR_TK_INPUT, 1, V, 0, 0);
	int x = gb_tensor(b, "x", AR_TK_INPUT, 1, V, 0, 0);
	int ao = gb_tensor(b, "a_out", AR_TK_OUTPUT, 1, V, 0, 0);
	int y = gb_tensor(b, "y", AR_TK_OUTPUT, 1, V, 0, 0);
	int n;

	gb_node(b, "Add", (int[]){ai, x}, 2, ao);
	gb_node(b, "Relu", &ao, 1, y);
	gb_io(b, (int[]){ai, bi, x}, 3,
	      permute ? (int[]){bi, ao, y} : (int[]){ao, bi, y}, 3);
	n = node_n(g, "Scan", (int[]){a0, b0, xs}, 3, (int[]){a, bb, ys}, 3);
	gb_int_attr(g, n, "num_scan_inputs", 1);
	graph_attr(g, n, "body", b);
	gb_io(g, (int[]){a0, b0, xs}, 3, (int[]){a, bb, ys}, 3);
	return g;
}

static void test_scan_body(void **state)
{
	ArPlanOptions o;
	ArPlan *p;
	const ArSubPlan *b;
	ArGraph *g = scan_graph(false);

	(void)state;
	ar_plan_options_default(&o);
	/* States go back to the inputs they came from; slices go out. */
	for (int k = 0; k < 3; k++)
		assert_int_equal(ar_control_carried(&g->nodes[0],
						    AR_CONTROL_SCAN, k),
				 k < 2 ? k : -1);
	p = plan_ok(g, &o);
	b = sub_named(p, "body");
	assert_non_null(b->plan);
	assert_true(b->plan->carried);
	assert_int_equal(b->plan->arena_bytes, 1280);
	assert_int_equal(ar_plan_scratch(p, 0)->bytes, 1280);
	ar_plan_free(p);
	ar_graph_free(g);

	g = scan_graph(true);
	o.diag.warn = count_warning;
	warned = 0;
	p = plan_ok(g, &o);
	assert_null(sub_named(p, "body")->plan);
	assert_int_equal(warned, 1);
	ar_plan_free(p);
	ar_graph_free(g);
}

static void expect_internal(const ArGraph *g, const ArPlan *p,
			    const char *what)
{
	ArError err = {0};
	assert_int_equal(ar_verify(g, p, &err), AR_EXIT_INTERNAL);
	if (!strstr(err.msg, what))
		fail_msg("verifier said '%s', wanted '%s'", err.msg, what);
}

/* Broken plans: the verifier and the poison executor both object. */
static void test_verifier_and_poison_catch(void **state)
{
	ArGraph *g = if_graph(false);
	ArPlanOptions o;
	ArPlan *p;
	ArSubPlan *t;
	ArError err = {0};
	int a, x = 0;
	int64_t keep;

	(void)state;
	ar_plan_options_default(&o);
	p = plan_ok(g, &o);
	t = (ArSubPlan *)sub_named(p, "then_branch");
	a = ar_graph_find(t->g, "a");

	/* A workspace smaller than the branch's arena. */
	p->scratch[0].bytes -= 16;
	expect_internal(g, p, "needs 512");
	p->scratch[0].bytes += 16;

	/* A workspace over x, which is live at the step. */
	keep = p->scratch[0].offset;
	p->scratch[0].offset = p->slots[x].offset;
	expect_internal(g, p, "overlaps 'x'");
	p->scratch[0].offset = keep;

	/* A branch whose region is not its step's workspace: its tensor a
	 * then lands on x, which the poison executor sees clobbered. */
	keep = t->base;
	t->base = p->slots[x].offset - t->plan->slots[a].offset;
	expect_internal(g, p, "not its step's workspace");
	assert_int_equal(ar_poison_run(g, p, &err), AR_EXIT_INTERNAL);
	assert_non_null(strstr(err.msg, "'x'"));
	t->base = keep;

	/* Inside the branch: b moved onto a, both live at the Add. */
	keep = t->plan->slots[ar_graph_find(t->g, "b")].offset;
	t->plan->slots[ar_graph_find(t->g, "b")].offset =
		t->plan->slots[a].offset;
	expect_internal(g, p, "overlap");
	assert_int_equal(ar_poison_run(g, p, &err), AR_EXIT_INTERNAL);
	t->plan->slots[ar_graph_find(t->g, "b")].offset = keep;

	/* An output that should be the node's, planned in the branch. */
	t->plan->outer[t->g->outputs[0]] = -1;
	expect_internal(g, p, "wrong tensor");
	ar_plan_free(p);
	ar_graph_free(g);
}

/* A carried input that dies early could be overwritten by the copies. */
static void test_verifier_loop_inputs_pinned(void **state)
{
	ArGraph *g = loop_graph(4, false);
	ArPlanOptions o;
	ArPlan *p;
	ArSubPlan *b;

	(void)state;
	ar_plan_options_default(&o);
	p = plan_ok(g, &o);
	b = (ArSubPlan *)sub_named(p, "body");
	b->plan->slots[b->g->inputs[2]].last = 0;
	expect_internal(g, p, "dies before");
	ar_plan_free(p);
	ar_graph_free(g);
}

/*
 * LSTM, hidden 8: the reference kernel keeps (4 gates + 2) x 8 floats,
 * 192 bytes, for its step alone.  X [2,1,4] is 32 bytes, Y [2,1,1,8] 64.
 */
static ArGraph *lstm_graph(void)
{
	ArGraph *g = ar_graph_new("lstm");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 2, 1, 4, 0);
	int w = gb_tensor(g, "w", AR_TK_WEIGHT, 1, 32, 4, 0);
	int r = gb_tensor(g, "r", AR_TK_WEIGHT, 1, 32, 8, 0);
	int y = gb_tensor(g, "y", AR_TK_OUTPUT, 2, 1, 1, 8);
	int n = gb_node(g, "LSTM", (int[]){x, w, r}, 3, y);
	gb_int_attr(g, n, "hidden_size", 8);
	gb_io(g, &x, 1, &y, 1);
	return g;
}

static void test_kernel_scratch(void **state)
{
	ArGraph *g = lstm_graph();
	ArPlanOptions o;
	ArPlan *p;

	(void)state;
	ar_plan_options_default(&o);
	assert_true(o.kernel_scratch);
	p = plan_ok(g, &o);
	assert_non_null(ar_plan_scratch(p, 0));
	assert_int_equal(ar_plan_scratch(p, 0)->bytes, 192);
	assert_int_equal(p->arena_bytes, 32 + 64 + 192);
	ar_plan_free(p);

	o.kernel_scratch = false;
	p = plan_ok(g, &o);
	assert_null(ar_plan_scratch(p, 0));
	assert_int_equal(p->arena_bytes, 32 + 64);
	ar_plan_free(p);
	ar_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_if_branches_share_region),
		cmocka_unit_test(test_if_constant_condition),
		cmocka_unit_test(test_loop_body_reused),
		cmocka_unit_test(test_loop_permutation_unplanned),
		cmocka_unit_test(test_scan_body),
		cmocka_unit_test(test_verifier_and_poison_catch),
		cmocka_unit_test(test_verifier_loop_inputs_pinned),
		cmocka_unit_test(test_kernel_scratch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
