/*
 * test_facts.c — the facts a finished plan carries for its writers
 * (planner/facts.c): each tensor's buffer root and offset in it, the
 * caller's buffer of an --io separate input or output, and the steps
 * that are no-ops.  On the hand-made fixture, on real plans of views and
 * nested concats (whose roots chain through several links), and with
 * --io separate, where nothing may alias a caller's buffer.
 */
#include "testutil.h"

#include "fixture_plan.h"
#include "graph_build.h"
#include "plan.h"

static ArPlan *plan(const ArGraph *g, bool io_separate)
{
	ArPlanOptions o;
	ArError err = {0};
	ArPlan *p;
	ar_plan_options_default(&o);
	o.order = AR_ORDER_FILE;
	o.io_separate = io_separate;
	if (ar_plan(g, &o, &p, &err))
		fail_msg("ar_plan: %s", err.msg);
	if (ar_poison_run(g, p, &err))
		fail_msg("poison: %s", err.msg);
	return p;
}

/* Conv -> c1, Relu over c1 in place -> r1, Reshape view -> v1: one buffer,
 * c1's; only the Reshape is a no-op. */
static void test_fixture(void **state)
{
	static const bool noop[] = {false, false, true, false, false};
	Fixture fx;

	fixture_init(&fx);
	assert_int_equal(fx.slots[FX_R1].root, FX_C1);
	assert_int_equal(fx.slots[FX_V1].root, FX_C1);
	assert_int_equal(fx.slots[FX_V1].root_offset, 0);
	assert_int_equal(fx.slots[FX_EVILT].root, FX_EVILT);
	assert_int_equal(fx.slots[FX_W].root, -1);       /* a weight */
	for (int s = 0; s < 5; s++)
		assert_int_equal(fx.p.noop[s], noop[s]);
	for (int t = 0; t < FX_NT; t++)
		assert_int_equal(fx.slots[t].io, -1);
	fixture_free(&fx);

	/* The inputs and the output in the caller's buffers 0, 1, 2. */
	fixture_io(&fx);
	assert_int_equal(fx.slots[FX_X].io, 0);
	assert_int_equal(fx.slots[FX_IN2].io, 1);
	assert_int_equal(fx.slots[FX_Y].io, 2);
	assert_int_equal(fx.slots[FX_Y].root, -1);
	assert_int_equal(fx.slots[FX_C1].io, -1);
	assert_true(fx.p.noop[2]);
	fixture_free(&fx);
}

/*
 * x -> Conv -> a, Conv -> b, Concat(a, b) -> c1, Flatten(c1) -> f,
 * Conv(f) -> e, Concat(c1, e) -> c2 -> Conv -> y: with elision a and b are
 * slices of c1, itself a slice of c2, so a's root is c2 two links up; the
 * two Concats and the Flatten are no-ops.
 */
static void test_nested_roots(void **state)
{
	ArGraph *g = ar_graph_new("facts");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 1, 1, 4, 4);
	int a = gb_tensor(g, "a", AR_TK_ACTIVATION, 1, 2, 4, 4);
	int b = gb_tensor(g, "b", AR_TK_ACTIVATION, 1, 2, 4, 4);
	int c1 = gb_tensor(g, "c1", AR_TK_ACTIVATION, 1, 4, 4, 4);
	int f = gb_tensor(g, "f", AR_TK_ACTIVATION, 1, 64, 0, 0);
	int e = gb_tensor(g, "e", AR_TK_ACTIVATION, 1, 2, 4, 4);
	int c2 = gb_tensor(g, "c2", AR_TK_ACTIVATION, 1, 6, 4, 4);
	int y = gb_tensor(g, "y", AR_TK_OUTPUT, 1, 1, 4, 4);
	static const bool noop[] = {false, false, true, true, false, true,
				    false};
	ArPlan *p;

	gb_node(g, "Conv", &x, 1, a);
	gb_node(g, "Conv", &x, 1, b);
	gb_int_attr(g, gb_node(g, "Concat", (int[]){a, b}, 2, c1), "axis", 1);
	gb_node(g, "Flatten", &c1, 1, f);
	gb_node(g, "Conv", &f, 1, e);
	gb_int_attr(g, gb_node(g, "Concat", (int[]){c1, e}, 2, c2), "axis", 1);
	gb_node(g, "Conv", &c2, 1, y);
	gb_io(g, &x, 1, &y, 1);
	p = plan(g, false);
	assert_int_equal(p->slots[a].alias_of, c1);
	assert_int_equal(p->slots[c1].alias_of, c2);
	assert_int_equal(p->slots[a].root, c2);
	assert_int_equal(p->slots[b].root, c2);
	assert_int_equal(p->slots[b].root_offset, 128);
	assert_int_equal(p->slots[f].root, c2);
	assert_int_equal(p->slots[e].root_offset, 256);
	assert_int_equal(p->slots[c2].root, c2);
	for (int t = 0; t < g->ntensors; t++)
		assert_int_equal(p->slots[t].offset,
				 p->slots[p->slots[t].root].offset +
				 p->slots[t].root_offset);
	for (int s = 0; s < p->nsteps; s++)
		assert_int_equal(p->noop[s], noop[s]);
	ar_plan_free(p);
	ar_graph_free(g);
}

/*
 * --io separate: x -> Flatten -> v -> Relu -> r -> Flatten -> y.  The
 * input and the output are the caller's (slots 0 and 1), so neither view
 * may share their bytes: both Flattens copy, no step is a no-op, and the
 * arena holds v and r alone (Relu over v in place: 64 bytes).
 */
static void test_io_separate(void **state)
{
	ArGraph *g = ar_graph_new("io");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 1, 4, 4, 0);
	int v = gb_tensor(g, "v", AR_TK_ACTIVATION, 1, 16, 0, 0);
	int r = gb_tensor(g, "r", AR_TK_ACTIVATION, 1, 16, 0, 0);
	int y = gb_tensor(g, "y", AR_TK_OUTPUT, 1, 16, 0, 0);
	ArPlan *p;

	gb_node(g, "Flatten", &x, 1, v);
	gb_node(g, "Relu", &v, 1, r);
	gb_node(g, "Flatten", &r, 1, y);
	gb_io(g, &x, 1, &y, 1);

	p = plan(g, false);
	assert_int_equal(p->slots[v].alias_of, x);
	assert_true(p->noop[0]);
	assert_int_equal(p->slots[x].io, -1);
	ar_plan_free(p);

	p = plan(g, true);
	assert_true(p->io_separate);
	assert_false(p->slots[x].planned);
	assert_false(p->slots[y].planned);
	assert_int_equal(p->slots[x].io, 0);
	assert_int_equal(p->slots[y].io, 1);
	assert_int_equal(p->slots[v].alias_of, -1);
	assert_int_equal(p->slots[r].inplace_of, v);
	assert_int_equal(p->slots[y].alias_of, -1);
	for (int s = 0; s < p->nsteps; s++)
		assert_false(p->noop[s]);
	assert_int_equal(p->arena_bytes, 64);
	ar_plan_free(p);
	ar_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_nested_roots),
		cmocka_unit_test(test_io_separate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
