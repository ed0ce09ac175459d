/*
 * test_sched.c — the memory-aware order on hand-made graphs: a diamond
 * whose file order holds both big tensors at once, a chain that leaves no
 * choice, and small random graphs where every topological order is tried
 * and the scheduler must match the best of them.
 */
#include "testutil.h"

#include "graph_build.h"
#include "passes.h"
#include "plan.h"

static void plan_ok(const ArGraph *g, const ArPlanOptions *o, ArPlan **p)
{
	ArError err = {0};
	if (ar_plan(g, o, p, &err))
		fail_msg("ar_plan: %s", err.msg);
	if (ar_poison_run(g, *p, &err))
		fail_msg("poison: %s", err.msg);
}

/* Options that make the planner's peak the scheduler's whole model. */
static void plain_options(ArPlanOptions *o, ArOrderMode order)
{
	ar_plan_options_default(o);
	o->order = order;
	o->views = false;
	o->inplace = AR_INPLACE_NONE;
	o->concat_elide = false;
}

/*
 * x(16 B) feeds two branches, each big (256 B) then small (16 B), joined
 * at the end.  The file runs both big steps first: 16 + 256 + 256 = 528.
 * Finishing one branch first peaks at 288 (x, a small and a big tensor),
 * which is optimal: whichever big step runs second sees x or the first
 * branch's result beside it.
 */
static ArGraph *diamond(void)
{
	ArGraph *g = ar_graph_new("diamond");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 4, 0, 0, 0);
	int a1 = gb_tensor(g, "a1", AR_TK_ACTIVATION, 64, 0, 0, 0);
	int b1 = gb_tensor(g, "b1", AR_TK_ACTIVATION, 64, 0, 0, 0);
	int a2 = gb_tensor(g, "a2", AR_TK_ACTIVATION, 4, 0, 0, 0);
	int b2 = gb_tensor(g, "b2", AR_TK_ACTIVATION, 4, 0, 0, 0);
	int y = gb_tensor(g, "y", AR_TK_OUTPUT, 4, 0, 0, 0);
	gb_node(g, "Conv", &x, 1, a1);
	gb_node(g, "Conv", &x, 1, b1);
	gb_node(g, "MaxPool", &a1, 1, a2);
	gb_node(g, "MaxPool", &b1, 1, b2);
	gb_node(g, "Max", (int[]){a2, b2}, 2, y);
	gb_io(g, &x, 1, &y, 1);
	return g;
}

static void test_diamond(void **state)
{
	ArGraph *g = diamond();
	ArPlanOptions o;
	ArPlan *p;

	plain_options(&o, AR_ORDER_FILE);
	plan_ok(g, &o, &p);
	assert_int_equal(p->lower_bound, 528);
	assert_int_equal(p->file_order_peak, 528);
	ar_plan_free(p);

	plain_options(&o, AR_ORDER_MEMORY);
	plan_ok(g, &o, &p);
	assert_int_equal(p->lower_bound, 288);
	assert_int_equal(p->file_order_peak, 528);
	assert_int_equal(p->arena_bytes, 288);
	ar_plan_free(p);
	ar_graph_free(g);
}

/* A chain has one order: the memory order must be the file's. */
static void test_chain_keeps_file_order(void **state)
{
	ArGraph *g = ar_graph_new("chain");
	int t[5];
	ArPlanOptions o;
	ArPlan *p;
	for (int i = 0; i < 5; i++)
		t[i] = gb_tensor(g, "t", i ? AR_TK_ACTIVATION : AR_TK_INPUT,
				 4 * (i + 1), 0, 0, 0);
	g->tensors[t[4]].kind = AR_TK_OUTPUT;
	for (int i = 0; i < 4; i++)
		gb_node(g, "Conv", &t[i], 1, t[i + 1]);
	gb_io(g, &t[0], 1, &t[4], 1);
	plain_options(&o, AR_ORDER_MEMORY);
	plan_ok(g, &o, &p);
	for (int i = 0; i < 4; i++)
		assert_int_equal(p->steps[i], i);
	assert_int_equal(p->lower_bound, p->file_order_peak);
	ar_plan_free(p);
	ar_graph_free(g);
}

static unsigned rng_next(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

/* A random DAG: node i reads one or two earlier tensors (or x). */
static ArGraph *random_dag(unsigned seed, int n)
{
	ArGraph *g = ar_graph_new("random");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 4, 0, 0, 0), last = x;
	for (int i = 0; i < n; i++) {
		int in[2], nin = 1 + (int)(rng_next(&seed) % 2), out;
		for (int j = 0; j < nin; j++)
			in[j] = (int)(rng_next(&seed) % (unsigned)(i + 1));
		if (nin == 2 && in[0] == in[1])
			nin = 1;
		out = gb_tensor(g, "t", AR_TK_ACTIVATION,
				4 * (1 + rng_next(&seed) % 16), 0, 0, 0);
		gb_node(g, "Conv", in, nin, out);
		last = out;
	}
	/* Tensors nobody reads become graph outputs, as in a real model. */
	{
		int outs[16], nout = 0;
		for (int t = 1; t < g->ntensors && nout < 16; t++) {
			bool read = false;
			for (int k = 0; k < g->nnodes; k++)
				for (int j = 0; j < g->nodes[k].ninputs; j++)
					read |= g->nodes[k].inputs[j] == t;
			if (!read || t == last) {
				g->tensors[t].kind = AR_TK_OUTPUT;
				outs[nout++] = t;
			}
		}
		gb_io(g, &x, 1, outs, nout);
	}
	return g;
}

/* Least peak over every topological order, by exhaustive search. */
static int64_t brute(const ArGraph *g, ArPlan *p, int depth, bool *done)
{
	int64_t best = INT64_MAX;
	if (depth == g->nnodes) {
		ar_lifetimes(g, p);
		return ar_live_peak(g, p, NULL);
	}
	for (int v = 0; v < g->nnodes; v++) {
		const ArNode *n = &g->nodes[v];
		bool ready = !done[v];
		for (int j = 0; j < n->ninputs && ready; j++) {
			int pr = g->tensors[n->inputs[j]].producer;
			ready = pr < 0 || done[pr];
		}
		if (!ready)
			continue;
		done[v] = true;
		p->steps[depth] = v;
		int64_t pk = brute(g, p, depth + 1, done);
		if (pk < best)
			best = pk;
		done[v] = false;
	}
	return best;
}

static void test_random_optimal(void **state)
{
	for (unsigned seed = 1; seed <= 40; seed++) {
		ArGraph *g = random_dag(seed, 7);
		ArPlanOptions o;
		ArPlan *p, ref = {0};
		bool done[8] = {0};
		int64_t best;

		plain_options(&o, AR_ORDER_MEMORY);
		plan_ok(g, &o, &p);
		ref = *p;
		ref.steps = ar_xmalloc(8 * sizeof(int));
		ref.slots = ar_xmalloc((size_t)g->ntensors * sizeof(ArSlot));
		memcpy(ref.slots, p->slots, (size_t)g->ntensors * sizeof(ArSlot));
		best = brute(g, &ref, 0, done);
		if (p->lower_bound != best)
			fail_msg("seed %u: scheduled peak %lld, best order %lld",
				 seed, (long long)p->lower_bound,
				 (long long)best);
		assert_true(p->lower_bound <= p->file_order_peak);
		free(ref.steps), free(ref.slots);
		ar_plan_free(p);
		ar_graph_free(g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diamond),
		cmocka_unit_test(test_chain_keeps_file_order),
		cmocka_unit_test(test_random_optimal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
