/*
 * test_alias.c — views, in-place and concat elision on hand-made graphs
 * whose best peak is known, each switch on and off, every plan through the
 * verifier (inside ar_plan) and the poison executor.
 */
#include "testutil.h"

#include "graph_build.h"
#include "ops.h"
#include "passes.h"
#include "plan.h"

enum { VIEWS = 1, INPLACE = 2, ELIDE = 4 };

static ArPlan *plan(const ArGraph *g, int sw)
{
	ArPlanOptions o;
	ArError err = {0};
	ArPlan *p;
	ar_plan_options_default(&o);
	o.order = AR_ORDER_FILE;
	o.views = sw & VIEWS;
	o.inplace = sw & INPLACE ? AR_INPLACE_ELEMENTWISE : AR_INPLACE_NONE;
	o.concat_elide = sw & ELIDE;
	if (ar_plan(g, &o, &p, &err))
		fail_msg("ar_plan: %s", err.msg);
	if (ar_poison_run(g, p, &err))
		fail_msg("poison: %s", err.msg);
	return p;
}

static void expect_peak(const ArGraph *g, int sw, int64_t peak)
{
	ArPlan *p = plan(g, sw);
	assert_int_equal(p->lower_bound, peak);
	assert_int_equal(p->arena_bytes, peak);
	ar_plan_free(p);
}

/* x(16 B) -> Conv -> a(256) -> Reshape -> b -> Flatten -> c -> Conv -> y */
static void test_reshape_chain(void **state)
{
	ArGraph *g = ar_graph_new("views");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 4, 0, 0, 0);
	int a = gb_tensor(g, "a", AR_TK_ACTIVATION, 4, 16, 0, 0);
	int b = gb_tensor(g, "b", AR_TK_ACTIVATION, 64, 0, 0, 0);
	int c = gb_tensor(g, "c", AR_TK_ACTIVATION, 1, 64, 0, 0);
	int y = gb_tensor(g, "y", AR_TK_OUTPUT, 4, 0, 0, 0);
	ArPlan *p;
	gb_node(g, "Conv", &x, 1, a);
	gb_node(g, "Reshape", &a, 1, b);
	gb_node(g, "Flatten", &b, 1, c);
	gb_node(g, "Conv", &c, 1, y);
	gb_io(g, &x, 1, &y, 1);

	expect_peak(g, 0, 512);         /* a+b, then b+c */
	expect_peak(g, VIEWS, 272);     /* one 256-byte buffer, plus x or y */
	p = plan(g, VIEWS);
	assert_int_equal(p->slots[b].alias_of, a);
	assert_int_equal(p->slots[c].alias_of, b);
	assert_int_equal(p->slots[c].offset, p->slots[a].offset);
	assert_int_equal(p->slots[a].first, 0);
	ar_plan_free(p);
	ar_graph_free(g);
}

/* A graph output never shares bytes with a graph input; other views may. */
static void test_views_of_graph_input(void **state)
{
	ArGraph *g = ar_graph_new("io");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 16, 0, 0, 0);
	int y = gb_tensor(g, "y", AR_TK_OUTPUT, 16, 0, 0, 0);
	int v = gb_tensor(g, "v", AR_TK_ACTIVATION, 4, 4, 0, 0);
	int z = gb_tensor(g, "z", AR_TK_OUTPUT, 4, 0, 0, 0);
	ArPlan *p;
	gb_node(g, "Identity", &x, 1, y);
	gb_node(g, "Reshape", &x, 1, v);
	gb_node(g, "Relu", &v, 1, z);
	gb_io(g, &x, 1, (int[]){y, z}, 2);
	p = plan(g, VIEWS | INPLACE);
	assert_int_equal(p->slots[y].alias_of, -1);
	assert_int_equal(p->slots[v].alias_of, x);
	/* v is the caller's input bytes: nothing may overwrite them. */
	assert_int_equal(p->slots[z].inplace_of, -1);
	ar_plan_free(p);
	ar_graph_free(g);
}

/* x(16) -> Conv -> a(256) -> Relu -> b(256) -> Conv -> y(16) */
static void test_relu_inplace(void **state)
{
	ArGraph *g = ar_graph_new("relu");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 4, 0, 0, 0);
	int a = gb_tensor(g, "a", AR_TK_ACTIVATION, 64, 0, 0, 0);
	int b = gb_tensor(g, "b", AR_TK_ACTIVATION, 64, 0, 0, 0);
	int y = gb_tensor(g, "y", AR_TK_OUTPUT, 4, 0, 0, 0);
	ArPlan *p;
	gb_node(g, "Conv", &x, 1, a);
	gb_node(g, "Relu", &a, 1, b);
	gb_node(g, "Conv", &b, 1, y);
	gb_io(g, &x, 1, &y, 1);
	expect_peak(g, 0, 512);
	expect_peak(g, INPLACE, 272);
	p = plan(g, INPLACE);
	assert_int_equal(p->slots[b].inplace_of, a);
	assert_int_equal(p->slots[b].offset, p->slots[a].offset);
	ar_plan_free(p);
	ar_graph_free(g);
}

/* Relu(a) cannot overwrite a while Add still reads it; Add can, after. */
static void test_inplace_needs_dying_input(void **state)
{
	ArGraph *g = ar_graph_new("live");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 4, 0, 0, 0);
	int a = gb_tensor(g, "a", AR_TK_ACTIVATION, 64, 0, 0, 0);
	int b = gb_tensor(g, "b", AR_TK_ACTIVATION, 64, 0, 0, 0);
	int s = gb_tensor(g, "s", AR_TK_ACTIVATION, 64, 0, 0, 0);
	int y = gb_tensor(g, "y", AR_TK_OUTPUT, 64, 0, 0, 0);
	ArPlan *p;
	gb_node(g, "Conv", &x, 1, a);
	gb_node(g, "Relu", &a, 1, b);
	gb_node(g, "Add", (int[]){a, b}, 2, s);
	gb_node(g, "Sigmoid", &s, 1, y);
	gb_io(g, &x, 1, &y, 1);
	p = plan(g, INPLACE);
	assert_int_equal(p->slots[b].inplace_of, -1);
	assert_int_equal(p->slots[s].inplace_of, a);
	assert_int_equal(p->slots[y].inplace_of, -1);  /* a graph output */
	ar_plan_free(p);
	ar_graph_free(g);
}

/*
 * x [1,1,4,4] (64 B) -> three Convs -> a [1,2,4,4], b [1,4,4,4], c [1,2,4,4]
 * -> Concat(axis 1) -> d [1,8,4,4] (512 B) -> Conv -> y [1,1,4,4].
 * Copy peaks at the Concat (128 + 256 + 128 + 512); elided, d's buffer
 * holds everything from the first Conv on: 512 + x or y.
 */
static ArGraph *three_way(int64_t axis)
{
	ArGraph *g = ar_graph_new("concat");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 1, 1, 4, 4);
	int a = gb_tensor(g, "a", AR_TK_ACTIVATION, 1, 2, 4, 4);
	int b = gb_tensor(g, "b", AR_TK_ACTIVATION, 1, 4, 4, 4);
	int c = gb_tensor(g, "c", AR_TK_ACTIVATION, 1, 2, 4, 4);
	int d = gb_tensor(g, "d", AR_TK_ACTIVATION, 1, 8, 4, 4);
	int y = gb_tensor(g, "y", AR_TK_OUTPUT, 1, 1, 4, 4);
	gb_node(g, "Conv", &x, 1, a);
	gb_node(g, "Conv", &x, 1, b);
	gb_node(g, "Conv", &x, 1, c);
	gb_int_attr(g, gb_node(g, "Concat", (int[]){a, b, c}, 3, d), "axis",
		    axis);
	gb_node(g, "Conv", &d, 1, y);
	gb_io(g, &x, 1, &y, 1);
	return g;
}

static void test_concat_three_way(void **state)
{
	ArGraph *g = three_way(1);
	ArPlan *p;
	static const int64_t off[] = {0, 128, 384};
	expect_peak(g, 0, 1024);
	expect_peak(g, ELIDE, 576);
	p = plan(g, ELIDE);
	for (int i = 0; i < 3; i++) {
		const ArSlot *s = &p->slots[1 + i];
		assert_int_equal(s->alias_of, 4);
		assert_int_equal(s->alias_offset, off[i]);
		assert_int_equal(s->offset, p->slots[4].offset + off[i]);
	}
	assert_int_equal(p->slots[4].first, 3);
	ar_plan_free(p);
	ar_graph_free(g);

	/* Along H the slices interleave (channel dim 8 before the axis). */
	g = three_way(-2);
	p = plan(g, ELIDE);
	for (int t = 1; t <= 3; t++)
		assert_int_equal(p->slots[t].alias_of, -1);
	assert_int_equal(p->lower_bound, 1024);
	ar_plan_free(p);
	ar_graph_free(g);
}

/* The start of a dense block: c1 = Concat(a, b) of two Convs of x,
 * e = Conv(c1), c2 = Concat(c1, e).  Tensor ids: t[0..5] = x, a, b, c1,
 * e, c2. */
static ArGraph *dense_start(const char *name, int t[6])
{
	ArGraph *g = ar_graph_new(name);
	t[0] = gb_tensor(g, "x", AR_TK_INPUT, 1, 1, 4, 4);
	t[1] = gb_tensor(g, "a", AR_TK_ACTIVATION, 1, 2, 4, 4);
	t[2] = gb_tensor(g, "b", AR_TK_ACTIVATION, 1, 2, 4, 4);
	t[3] = gb_tensor(g, "c1", AR_TK_ACTIVATION, 1, 4, 4, 4);
	t[4] = gb_tensor(g, "e", AR_TK_ACTIVATION, 1, 2, 4, 4);
	t[5] = gb_tensor(g, "c2", AR_TK_ACTIVATION, 1, 6, 4, 4);
	gb_node(g, "Conv", &t[0], 1, t[1]);
	gb_node(g, "Conv", &t[0], 1, t[2]);
	gb_int_attr(g, gb_node(g, "Concat", (int[]){t[1], t[2]}, 2, t[3]),
		    "axis", 1);
	gb_node(g, "Conv", &t[3], 1, t[4]);
	gb_int_attr(g, gb_node(g, "Concat", (int[]){t[3], t[4]}, 2, t[5]),
		    "axis", 1);
	return g;
}

/*
 * DenseNet's pattern, c2 read by a last Conv.  Both elided, everything
 * lives in c2's 384 bytes (peak 448 with x or y); copies peak at 768
 * (c1 + e + c2).
 */
static void test_concat_nested(void **state)
{
	int t[6];
	ArGraph *g = dense_start("nested", t);
	int a = t[1], b = t[2], c1 = t[3], e = t[4], c2 = t[5];
	int y = gb_tensor(g, "y", AR_TK_OUTPUT, 1, 1, 4, 4);
	ArPlan *p;
	gb_node(g, "Conv", &c2, 1, y);
	gb_io(g, &t[0], 1, &y, 1);
	expect_peak(g, 0, 768);
	expect_peak(g, ELIDE, 448);
	p = plan(g, ELIDE);
	assert_int_equal(p->slots[a].alias_of, c1);
	assert_int_equal(p->slots[b].alias_offset, 128);
	assert_int_equal(p->slots[c1].alias_of, c2);
	assert_int_equal(p->slots[e].alias_of, c2);
	assert_int_equal(p->slots[e].alias_offset, 256);
	assert_int_equal(p->slots[b].offset, p->slots[c2].offset + 128);
	ar_plan_free(p);
	ar_graph_free(g);
}

/*
 * The end of a dense block: after the start above, two wide Convs (h, k:
 * 1024 bytes each) make f, the last slice of c3 = Concat(c2, f).  All
 * elided, c3's 512 bytes are reserved while h and k peak (2560 with x);
 * c3 a copy, c2's 384 are (2432), and c3's own copy (c2 + f + c3) stays
 * below.  So the refinement undoes c3 alone: undoing c1 or c2 frees
 * nothing at the peak (their slices are long dead), which concat.c also
 * sees without recomputing the peak.
 */
static void test_concat_refine_outer(void **state)
{
	int t[6];
	ArGraph *g = dense_start("block", t);
	int a = t[1], c1 = t[3], e = t[4], c2 = t[5];
	int h = gb_tensor(g, "h", AR_TK_ACTIVATION, 1, 16, 4, 4);
	int k = gb_tensor(g, "k", AR_TK_ACTIVATION, 1, 16, 4, 4);
	int f = gb_tensor(g, "f", AR_TK_ACTIVATION, 1, 2, 4, 4);
	int c3 = gb_tensor(g, "c3", AR_TK_ACTIVATION, 1, 8, 4, 4);
	int y = gb_tensor(g, "y", AR_TK_OUTPUT, 1, 1, 4, 4);
	ArPlan *p;
	gb_node(g, "Conv", &c2, 1, h);
	gb_node(g, "Conv", &h, 1, k);
	gb_node(g, "Conv", &k, 1, f);
	gb_int_attr(g, gb_node(g, "Concat", (int[]){c2, f}, 2, c3), "axis", 1);
	gb_node(g, "Conv", &c3, 1, y);
	gb_io(g, &t[0], 1, &y, 1);
	expect_peak(g, ELIDE, 2432);
	p = plan(g, ELIDE);
	assert_int_equal(p->slots[a].alias_of, c1);
	assert_int_equal(p->slots[c1].alias_of, c2);
	assert_int_equal(p->slots[e].alias_of, c2);
	assert_int_equal(p->slots[c2].alias_of, -1);
	assert_int_equal(p->slots[f].alias_of, -1);
	ar_plan_free(p);
	ar_graph_free(g);
}

/*
 * a, b -> Concat -> c -> Reshape -> v -> Conv -> w; Conv(a, w) -> z.  Elided,
 * a would sit inside c's bytes while v (c's view) is live and a is still
 * read: neither contains the other, so the Concat must stay a copy.  With
 * a read only by the Concat, the elision stands.
 */
static ArGraph *slice_outlives(bool late_reader)
{
	ArGraph *g = ar_graph_new("outlives");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 1, 1, 4, 4);
	int a = gb_tensor(g, "a", AR_TK_ACTIVATION, 1, 2, 4, 4);
	int b = gb_tensor(g, "b", AR_TK_ACTIVATION, 1, 2, 4, 4);
	int c = gb_tensor(g, "c", AR_TK_ACTIVATION, 1, 4, 4, 4);
	int v = gb_tensor(g, "v", AR_TK_ACTIVATION, 1, 64, 0, 0);
	int w = gb_tensor(g, "w", AR_TK_ACTIVATION, 1, 1, 4, 4);
	int z = gb_tensor(g, "z", AR_TK_OUTPUT, 1, 1, 4, 4);
	gb_node(g, "Conv", &x, 1, a);
	gb_node(g, "Conv", &x, 1, b);
	gb_int_attr(g, gb_node(g, "Concat", (int[]){a, b}, 2, c), "axis", 1);
	gb_node(g, "Reshape", &c, 1, v);
	gb_node(g, "Conv", &v, 1, w);
	gb_node(g, "Conv", late_reader ? (int[]){a, w} : (int[]){w, x}, 2, z);
	gb_io(g, &x, 1, &z, 1);
	return g;
}

static void test_concat_slice_outlives_view(void **state)
{
	for (int late = 0; late < 2; late++) {
		ArGraph *g = slice_outlives(late);
		ArPlan *p;
		for (int sw = 0; sw < 8; sw++)
			ar_plan_free(plan(g, sw));
		p = plan(g, VIEWS | INPLACE | ELIDE);
		assert_int_equal(p->slots[4].alias_of, 3);     /* v in c */
		assert_int_equal(p->slots[1].alias_of, late ? -1 : 3);
		ar_plan_free(p);
		ar_graph_free(g);
	}
}

/*
 * SqueezeNet's fire module in a training step: a, b -> Concat -> c ->
 * Dropout -> d -> Conv -> e, and ReluGrad reads a again after the Dropout.
 * In a training step Dropout computes (d is no view) and the elision is
 * safe; as an inference graph d is c's view and a must not sit in c.
 */
static void test_concat_dropout_backward(void **state)
{
	for (int train = 0; train < 2; train++) {
		ArGraph *g = ar_graph_new("fire");
		int x = gb_tensor(g, "x", AR_TK_INPUT, 1, 1, 4, 4);
		int a = gb_tensor(g, "a", AR_TK_ACTIVATION, 1, 2, 4, 4);
		int b = gb_tensor(g, "b", AR_TK_ACTIVATION, 1, 2, 4, 4);
		int c = gb_tensor(g, "c", AR_TK_ACTIVATION, 1, 4, 4, 4);
		int d = gb_tensor(g, "d", AR_TK_ACTIVATION, 1, 4, 4, 4);
		int m = gb_tensor(g, "d.mask", AR_TK_ACTIVATION, 1, 4, 4, 4);
		int e = gb_tensor(g, "e", AR_TK_ACTIVATION, 1, 2, 4, 4);
		int ga = gb_tensor(g, "a.grad", AR_TK_OUTPUT, 1, 2, 4, 4);
		int nd, ng;
		ArPlan *p;
		gb_node(g, "Conv", &x, 1, a);
		gb_node(g, "Conv", &x, 1, b);
		gb_int_attr(g, gb_node(g, "Concat", (int[]){a, b}, 2, c),
			    "axis", 1);
		nd = gb_node(g, "Dropout", &c, 1, d);
		ar_node_set_io(&g->nodes[nd], &c, 1, (int[]){d, m}, 2);
		g->tensors[m].producer = nd;
		gb_node(g, "Conv", &d, 1, e);
		ng = gb_node(g, "ReluGrad", (int[]){a, e}, 2, ga);
		g->nodes[ng].phase = train ? AR_PHASE_BACKWARD
					   : AR_PHASE_FORWARD;
		gb_io(g, &x, 1, &ga, 1);
		for (int sw = 0; sw < 8; sw++)
			ar_plan_free(plan(g, sw));
		p = plan(g, VIEWS | INPLACE | ELIDE);
		assert_int_equal(p->slots[d].alias_of, train ? -1 : c);
		assert_int_equal(p->slots[a].alias_of, train ? c : -1);
		ar_plan_free(p);
		ar_graph_free(g);
	}
}

/*
 * A training step's tail: a = Conv(x), r = Relu(a), y = Conv(r), then
 * dy, two gradient parts d1, d2 of r, ds = GradAccumulate(d1, d2),
 * da = ReluGrad(r, ds), dx = ConvGrad(da).  Without in-place the peak is
 * r + d1 + d2 + ds = 1024 at the sum; with it ds takes d1's bytes and da
 * those of r or ds, so the peak is r + dy + d1 + d2 = 832 just before.
 */
static void test_inplace_backward(void **state)
{
	ArGraph *g = ar_graph_new("backward");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 1, 1, 4, 4);
	int a = gb_tensor(g, "a", AR_TK_ACTIVATION, 1, 4, 4, 4);
	int r = gb_tensor(g, "r", AR_TK_ACTIVATION, 1, 4, 4, 4);
	int y = gb_tensor(g, "y", AR_TK_ACTIVATION, 1, 1, 4, 4);
	int dy = gb_tensor(g, "y.grad", AR_TK_ACTIVATION, 1, 1, 4, 4);
	int d1 = gb_tensor(g, "r.grad.0", AR_TK_ACTIVATION, 1, 4, 4, 4);
	int d2 = gb_tensor(g, "r.grad.1", AR_TK_ACTIVATION, 1, 4, 4, 4);
	int ds = gb_tensor(g, "r.grad", AR_TK_ACTIVATION, 1, 4, 4, 4);
	int da = gb_tensor(g, "a.grad", AR_TK_ACTIVATION, 1, 4, 4, 4);
	int dx = gb_tensor(g, "x.grad", AR_TK_OUTPUT, 1, 1, 4, 4);
	ArPlan *p;
	gb_node(g, "Conv", &x, 1, a);
	gb_node(g, "Relu", &a, 1, r);
	gb_node(g, "Conv", &r, 1, y);
	gb_node(g, "SoftmaxCrossEntropyLossGrad", &y, 1, dy);
	gb_node(g, "ConvGrad", &dy, 1, d1);
	gb_node(g, "ConvGrad", &dy, 1, d2);
	gb_node(g, "GradAccumulate", (int[]){d1, d2}, 2, ds);
	gb_node(g, "ReluGrad", (int[]){r, ds}, 2, da);
	gb_node(g, "ConvGrad", &da, 1, dx);
	for (int i = 3; i < g->nnodes; i++) {
		g->nodes[i].phase = AR_PHASE_BACKWARD;
		ar_node_set_op(g, &g->nodes[i], g->nodes[i].op,
			       AR_TRAIN_DOMAIN);
	}
	gb_io(g, &x, 1, &dx, 1);
	expect_peak(g, 0, 1024);
	expect_peak(g, INPLACE, 832);
	p = plan(g, INPLACE);
	assert_int_equal(p->slots[ds].inplace_of, d1);
	assert_true(p->slots[da].inplace_of == r ||
		    p->slots[da].inplace_of == ds);
	assert_int_equal(p->slots[d1].inplace_of, -1);  /* ConvGrad */
	ar_plan_free(p);
	ar_graph_free(g);
}

/*
 * The alias-root memo against plain walks: a 2,000-long chain mixing view
 * offsets and in-place links, asked in a scattered order, then again after
 * the root gains an in-place link of its own (links are only ever added at
 * roots while a memo is in use, and the memo must follow them).
 */
static void test_alias_memo(void **state)
{
	enum { N = 2000 };
	ArSlot *slots = calloc(N + 1, sizeof *slots);
	ArPlan p = {.ntensors = N + 1, .slots = slots};
	ArAliasMemo m;

	for (int t = 0; t <= N; t++)
		slots[t].alias_of = slots[t].inplace_of = -1;
	/* t links to t-1: a view at +t bytes when t is odd, else in place. */
	for (int t = 1; t < N; t++) {
		if (t % 2) {
			slots[t].alias_of = t - 1;
			slots[t].alias_offset = t;
		} else {
			slots[t].inplace_of = t - 1;
		}
	}
	ar_alias_memo_init(&m, &p);
	for (int round = 0; round < 2; round++) {
		for (int k = 0; k < N; k++) {
			int t = (int)((k * 7919L) % N);
			int64_t o1 = -1, o2 = -2;
			int r1 = ar_alias_root(&p, NULL, t, &o1);
			int r2 = ar_alias_root(&p, &m, t, &o2);
			assert_int_equal(r1, r2);
			assert_int_equal(o1, o2);
			/* the odd links up to t: 1 + 3 + ... */
			assert_int_equal(o1, (int64_t)((t + 1) / 2) *
						 ((t + 1) / 2));
			assert_int_equal(r1, round ? N : 0);
		}
		/* The old root now overwrites a new one. */
		slots[0].inplace_of = N;
	}
	ar_alias_memo_free(&m);
	free(slots);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alias_memo),
		cmocka_unit_test(test_reshape_chain),
		cmocka_unit_test(test_views_of_graph_input),
		cmocka_unit_test(test_relu_inplace),
		cmocka_unit_test(test_inplace_needs_dying_input),
		cmocka_unit_test(test_concat_three_way),
		cmocka_unit_test(test_concat_nested),
		cmocka_unit_test(test_concat_refine_outer),
		cmocka_unit_test(test_concat_slice_outlives_view),
		cmocka_unit_test(test_concat_dropout_backward),
		cmocka_unit_test(test_inplace_backward),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
