/*
 * test_tiers.c — memory-tier placement on hand-made instances whose best
 * placement is known, and on a hand-made graph through ar_plan, the
 * verifier and the poison executor.
 */
#include "testutil.h"

#include "graph.h"
#include "passes.h"
#include "plan.h"
#include "tiers.h"

static const ArTier two_tiers[2] = {{100, 1.0}, {1000, 2.0}};

static int place(ArBuf *b, const int64_t *traffic, int n, const ArTier *t,
		 int nt, const char *algo, int *tier_of, ArTierResult *res)
{
	ArBudget work;
	ar_budget_init(&work, AR_TIERS_WORK, NULL);
	return ar_tiers_place(b, traffic, n, t, nt, algo, &work, tier_of, res);
}

/* No two buffers of one tier share bytes while alive; heights fit. */
static void assert_valid(const ArBuf *b, int n, const int *tier_of,
			 const ArTier *t, int nt, const ArTierResult *res)
{
	for (int k = 0; k < nt; k++)
		assert_true(res->height[k] <= t[k].capacity);
	for (int i = 0; i < n; i++) {
		assert_true(b[i].offset >= 0);
		assert_true(b[i].offset + b[i].size <= res->height[tier_of[i]]);
		for (int j = 0; j < i; j++)
			if (tier_of[i] == tier_of[j] && b[i].lo < b[j].hi &&
			    b[j].lo < b[i].hi)
				assert_true(b[i].offset + b[i].size <= b[j].offset ||
					    b[j].offset + b[j].size <= b[i].offset);
	}
}

/* The buffers with the most accesses per byte take the fast tier. */
static void test_density(void **state)
{
	ArBuf b[3] = {{0, 2, 60, 0}, {0, 2, 60, 0}, {0, 2, 40, 0}};
	int64_t traffic[3] = {600, 120, 400};
	int tier_of[3];
	ArTierResult res;
	(void)state;
	assert_int_equal(place(b, traffic, 3, two_tiers, 2, "auto", tier_of,
			       &res), AR_OK);
	assert_valid(b, 3, tier_of, two_tiers, 2, &res);
	assert_int_equal(tier_of[0], 0);
	assert_int_equal(tier_of[1], 1);
	assert_int_equal(tier_of[2], 0);
	assert_true(res.optimal);
	assert_true(res.cost == 600 + 2 * 120 + 400);
}

/*
 * A knapsack the greedy gets wrong: X has the most accesses per byte but,
 * once in the fast tier, leaves no room for Y and Z, worth more together.
 */
static void test_knapsack(void **state)
{
	ArBuf b[3] = {{0, 3, 51, 0}, {0, 3, 50, 0}, {1, 3, 50, 0}};
	int64_t traffic[3] = {510, 450, 450};
	int tier_of[3];
	ArTierResult res;
	(void)state;
	assert_int_equal(place(b, traffic, 3, two_tiers, 2, "auto", tier_of,
			       &res), AR_OK);
	assert_valid(b, 3, tier_of, two_tiers, 2, &res);
	assert_int_equal(tier_of[0], 1);
	assert_int_equal(tier_of[1], 0);
	assert_int_equal(tier_of[2], 0);
	assert_true(res.exact && res.optimal);
	assert_true(res.cost == 2 * 510 + 450 + 450);
}

/* Buffers alive at different times share the fast tier's bytes. */
static void test_time_sharing(void **state)
{
	ArBuf b[3] = {{0, 1, 100, 0}, {1, 2, 100, 0}, {2, 3, 100, 0}};
	int64_t traffic[3] = {200, 200, 200};
	int tier_of[3];
	ArTierResult res;
	(void)state;
	assert_int_equal(place(b, traffic, 3, two_tiers, 2, "auto", tier_of,
			       &res), AR_OK);
	assert_valid(b, 3, tier_of, two_tiers, 2, &res);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tier_of[i], 0);
	assert_int_equal(res.height[0], 100);
	assert_int_equal(res.height[1], 0);
}

/*
 * Live bytes never pass 5, yet greedy-size packs P, Q, R, S to height 7
 * (S lands at 5): with that offset solver the fast tier of 5 bytes must
 * shed a buffer, the one with the least traffic.  The exact solver packs
 * all four into 5 bytes, so nothing moves.
 */
static void test_height_not_live_bytes(void **state)
{
	static const ArTier tiers[2] = {{5, 1.0}, {100, 4.0}};
	const ArBuf init[4] = {{0, 1, 3, 0}, {2, 3, 3, 0}, {1, 3, 2, 0},
			       {0, 2, 2, 0}};
	int64_t traffic[4] = {30, 30, 20, 10};
	ArBuf b[4];
	int tier_of[4];
	ArTierResult res;
	(void)state;
	memcpy(b, init, sizeof b);
	assert_int_equal(place(b, traffic, 4, tiers, 2, "greedy-size", tier_of,
			       &res), AR_OK);
	assert_valid(b, 4, tier_of, tiers, 2, &res);
	assert_int_equal(tier_of[0], 0);
	assert_int_equal(tier_of[1], 0);
	assert_int_equal(tier_of[2], 0);
	assert_int_equal(tier_of[3], 1);

	memcpy(b, init, sizeof b);
	assert_int_equal(place(b, traffic, 4, tiers, 2, "auto", tier_of, &res),
			 AR_OK);
	assert_valid(b, 4, tier_of, tiers, 2, &res);
	for (int i = 0; i < 4; i++)
		assert_int_equal(tier_of[i], 0);
	assert_int_equal(res.height[0], 5);
	assert_true(res.optimal);
}

/* 150 bytes live at time 1 do not fit 100 + 40: the slow tier is named. */
static void test_does_not_fit(void **state)
{
	static const ArTier tiers[2] = {{100, 1.0}, {40, 2.0}};
	ArBuf b[3] = {{0, 2, 50, 0}, {1, 3, 50, 0}, {1, 2, 50, 0}};
	int64_t traffic[3] = {100, 100, 100};
	int tier_of[3];
	ArTierResult res;
	(void)state;
	assert_int_equal(place(b, traffic, 3, tiers, 2, "auto", tier_of, &res),
			 AR_EXIT_BUDGET);
	assert_int_equal(res.fail_tier, 1);
	assert_int_equal(res.fail_time, 1);
	assert_int_equal(res.fail_need, 150);
}

/*
 * Past the exact search's size, greedy plus repair: a chain of 60 buffers,
 * each alive with its two neighbours, the fast tier holding about two.
 */
static void test_large(void **state)
{
	enum { N = 60 };
	static const ArTier tiers[2] = {{64, 1.0}, {1 << 20, 8.0}};
	ArBuf b[N];
	int64_t traffic[N];
	int tier_of[N], fast = 0;
	ArTierResult res;
	(void)state;
	for (int i = 0; i < N; i++) {
		b[i] = (ArBuf){i, i + 3, 16 + 16 * (i % 3), 0};
		traffic[i] = b[i].size * (1 + i % 5);
	}
	assert_int_equal(place(b, traffic, N, tiers, 2, "auto", tier_of, &res),
			 AR_OK);
	assert_valid(b, N, tier_of, tiers, 2, &res);
	assert_false(res.exact);
	for (int i = 0; i < N; i++)
		fast += tier_of[i] == 0;
	assert_true(fast >= N / 4);
	assert_true(fast < N);
}

/*
 * x -> R -> a -> M(a, a) -> b -> S(a, b, a) -> c, 256 bytes each.  a is
 * touched 5 times (1 write, 4 reads), every other tensor twice; a fast
 * tier of 256 bytes holds one tensor at a time, and a lives throughout,
 * so the best placement puts a alone in it (x and b, the only other
 * fitting pair, save 4 accesses against a's 5).
 */
static ArGraph *hot_graph(void)
{
	ArGraph *g = ar_graph_new("hot");
	const char *names[] = {"x", "a", "b", "c"};
	int ins[3][3] = {{0}, {1, 1}, {1, 2, 1}}, nin[3] = {1, 2, 3};
	const char *ops[3] = {"Relu", "Mul", "Sum"};
	for (int i = 0; i < 4; i++) {
		int t = ar_graph_add_tensor(g, names[i]);
		g->tensors[t].dtype = AR_DT_FLOAT;
		g->tensors[t].rank = 1;
		g->tensors[t].dims[0] = 64;
		g->tensors[t].bytes = 256;
		g->tensors[t].kind = AR_TK_ACTIVATION;
	}
	g->tensors[0].kind = AR_TK_INPUT;
	g->tensors[3].kind = AR_TK_OUTPUT;
	for (int i = 0; i < 3; i++) {
		int out = i + 1;
		int n = ar_graph_add_node(g, names[i + 1], ops[i], "");
		ar_node_set_io(&g->nodes[n], ins[i], nin[i], &out, 1);
		g->tensors[out].producer = n;
	}
	/* A weight, for --weights-in. */
	{
		int w = ar_graph_add_tensor(g, "w");
		g->tensors[w].dtype = AR_DT_FLOAT;
		g->tensors[w].rank = 1;
		g->tensors[w].dims[0] = 10;
		g->tensors[w].bytes = 40;
		g->tensors[w].kind = AR_TK_WEIGHT;
	}
	g->inputs = malloc(sizeof(int));
	g->inputs[0] = 0;
	g->ninputs = 1;
	g->outputs = malloc(sizeof(int));
	g->outputs[0] = 3;
	g->noutputs = 1;
	return g;
}

static void plain_options(ArPlanOptions *o)
{
	ar_plan_options_default(o);
	o->views = false;
	o->concat_elide = false;
	o->inplace = AR_INPLACE_NONE;
}

static void test_graph_two_tiers(void **state)
{
	ArMemory mem[2] = {{"sram", 256, 100e9}, {"dram", 1 << 20, 1e9}};
	ArGraph *g = hot_graph();
	ArPlanOptions o;
	ArPlan *p;
	ArError err = {0};
	(void)state;
	plain_options(&o);
	o.memories = mem;
	o.nmemories = 2;
	assert_int_equal(ar_plan(g, &o, &p, &err), AR_OK);
	assert_int_equal(ar_poison_run(g, p, &err), AR_OK);
	assert_int_equal(p->nregions, 2);
	assert_string_equal(p->regions[0].name, "sram");
	assert_int_equal(p->slots[1].region, 0);
	assert_int_equal(p->slots[0].region, 1);
	assert_int_equal(p->slots[2].region, 1);
	assert_int_equal(p->slots[3].region, 1);
	assert_int_equal(p->regions[0].used_bytes, 256);
	assert_int_equal(p->regions[0].traffic_bytes, 5 * 256);
	assert_int_equal(p->regions[1].traffic_bytes, 6 * 256);
	/* x dies as b is born, c comes after: two 256-byte slots. */
	assert_int_equal(p->regions[1].used_bytes, 512);
	assert_int_equal(p->arena_bytes, 768);
	assert_true(p->placement_optimal);
	ar_plan_free(p);
	ar_graph_free(g);
}

/* One memory is today's single arena, only with a name and a capacity. */
static void test_graph_one_tier(void **state)
{
	ArMemory mem = {"ram", 4096, 0};
	ArGraph *g = hot_graph();
	ArPlanOptions o;
	ArPlan *p, *q;
	ArError err = {0};
	(void)state;
	plain_options(&o);
	assert_int_equal(ar_plan(g, &o, &p, &err), AR_OK);
	o.memories = &mem;
	o.nmemories = 1;
	assert_int_equal(ar_plan(g, &o, &q, &err), AR_OK);
	assert_int_equal(q->arena_bytes, p->arena_bytes);
	assert_int_equal(p->nregions, 0);
	for (int t = 0; t < g->ntensors; t++)
		assert_int_equal(q->slots[t].region, 0);
	assert_int_equal(ar_poison_run(g, q, &err), AR_OK);
	ar_plan_free(p);
	ar_plan_free(q);

	mem.capacity = 512;     /* three tensors are live at the last step */
	assert_int_equal(ar_plan(g, &o, &q, &err), AR_EXIT_BUDGET);
	assert_non_null(strstr(err.msg, "'ram'"));
	assert_non_null(strstr(err.msg, "step 2 'c'"));
	ar_plan_free(q);
	ar_graph_free(g);
}

static void test_graph_weights_in(void **state)
{
	ArMemory mem[2] = {{"sram", 320, 0}, {"dram", 1 << 20, 0}};
	ArGraph *g = hot_graph();
	ArPlanOptions o;
	ArPlan *p;
	ArError err = {0};
	(void)state;
	plain_options(&o);
	o.memories = mem;
	o.nmemories = 2;
	o.weights_in = "sram";
	assert_int_equal(ar_plan(g, &o, &p, &err), AR_OK);
	assert_int_equal(p->regions[0].weights_bytes, 48);
	assert_int_equal(p->slots[1].region, 0);
	assert_int_equal(p->slots[1].offset, 48);
	assert_int_equal(p->regions[0].used_bytes, 48 + 256);
	assert_int_equal(ar_poison_run(g, p, &err), AR_OK);
	ar_plan_free(p);

	o.weights_in = "flash";
	assert_int_equal(ar_plan(g, &o, &p, &err), AR_EXIT_USAGE);
	ar_plan_free(p);
	o.weights_in = NULL;
	mem[0].bandwidth = 1e9;
	assert_int_equal(ar_plan(g, &o, &p, &err), AR_EXIT_USAGE);
	ar_plan_free(p);
	ar_graph_free(g);
}

/* Equal offsets in two regions are fine; in one region they clash. */
static void test_verify_regions(void **state)
{
	ArMemory mem[2] = {{"sram", 256, 0}, {"dram", 1 << 20, 0}};
	ArGraph *g = hot_graph();
	ArPlanOptions o;
	ArPlan *p;
	ArError err = {0};
	(void)state;
	plain_options(&o);
	o.memories = mem;
	o.nmemories = 2;
	assert_int_equal(ar_plan(g, &o, &p, &err), AR_OK);
	/* b (dram) lives with a (sram) over steps 1-2: same offset, apart. */
	p->slots[2].offset = p->slots[1].offset;
	assert_int_equal(ar_verify(g, p, &err), AR_OK);
	assert_int_equal(ar_poison_run(g, p, &err), AR_OK);
	p->slots[2].region = 0;
	assert_int_equal(ar_verify(g, p, &err), AR_EXIT_INTERNAL);
	assert_int_equal(ar_poison_run(g, p, &err), AR_EXIT_INTERNAL);
	p->slots[2].region = 2;
	assert_int_equal(ar_verify(g, p, &err), AR_EXIT_INTERNAL);
	p->slots[2].region = 1;
	assert_int_equal(ar_verify(g, p, &err), AR_OK);
	p->regions[0].used_bytes = 512;
	assert_int_equal(ar_verify(g, p, &err), AR_EXIT_INTERNAL);
	ar_plan_free(p);
	ar_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_density),
		cmocka_unit_test(test_knapsack),
		cmocka_unit_test(test_time_sharing),
		cmocka_unit_test(test_height_not_live_bytes),
		cmocka_unit_test(test_does_not_fit),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_graph_two_tiers),
		cmocka_unit_test(test_graph_one_tier),
		cmocka_unit_test(test_graph_weights_in),
		cmocka_unit_test(test_verify_regions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
