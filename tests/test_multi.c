/*
 * test_multi.c — the pieces of multi-device planning on small cases: cut
 * points and layers found as repeated blocks (or named by an expression),
 * the pipeline split's dynamic program against every split, the best even
 * split, the microbatches in flight under 1F1B and GPipe, and ZeRO's
 * partitions with their padding.
 */
#include "testutil.h"

#include "devices.h"
#include "graph_build.h"
#include "layers.h"

/*
 * x -> h0 = Relu(x); per layer i: a = Relu(h_i), b = Sigmoid(a),
 * h_{i+1} = Add(h_i, b); then y = Relu(h_n), the output.
 */
static ArGraph *residual_stack(int n)
{
	ArGraph *g = ar_graph_new("stack");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 2, 8, 0, 0), h, y;
	char name[32];
	h = gb_tensor(g, "h0", AR_TK_ACTIVATION, 2, 8, 0, 0);
	gb_node(g, "Relu", &x, 1, h);
	for (int i = 0; i < n; i++) {
		int a, b, in[2];
		snprintf(name, sizeof name, "l%d.a", i);
		a = gb_tensor(g, name, AR_TK_ACTIVATION, 2, 8, 0, 0);
		gb_node(g, "Relu", &h, 1, a);
		snprintf(name, sizeof name, "l%d.b", i);
		b = gb_tensor(g, name, AR_TK_ACTIVATION, 2, 8, 0, 0);
		gb_node(g, "Sigmoid", &a, 1, b);
		snprintf(name, sizeof name, "h%d", i + 1);
		in[0] = h;
		in[1] = b;
		h = gb_tensor(g, name, AR_TK_ACTIVATION, 2, 8, 0, 0);
		gb_node(g, "Add", in, 2, h);
	}
	y = gb_tensor(g, "y", AR_TK_OUTPUT, 2, 8, 0, 0);
	gb_node(g, "Relu", &h, 1, y);
	gb_io(g, &x, 1, &y, 1);
	return g;
}

static void test_cut_points(void **state)
{
	ArGraph *g = residual_stack(3);
	int cut[64], n = ar_cut_points(g, g->nnodes, cut);
	const char *want[] = {"h0", "h1", "h2", "h3", "y"};
	(void)state;
	assert_int_equal(n, 5);
	for (int i = 0; i < n; i++)
		assert_string_equal(g->tensors[cut[i]].name, want[i]);
	ar_graph_free(g);
}

static void test_layers_repeated(void **state)
{
	ArGraph *g = residual_stack(4);
	ArLayers l;
	ArError err = {0};
	(void)state;
	assert_int_equal(ar_layers_find(g, g->nnodes, NULL, &l, &err), AR_OK);
	assert_int_equal(l.n, 4);
	assert_true(l.repeated);
	for (int k = 0; k <= 4; k++) {
		char name[16];
		snprintf(name, sizeof name, "h%d", k);
		assert_string_equal(g->tensors[l.bound[k]].name, name);
	}
	/* Node 0 makes h0 (the prefix); layer 1 is nodes 4 to 6; the last
	 * node makes y (the tail). */
	assert_int_equal(ar_layer_of(&l, 0), -1);
	assert_int_equal(ar_layer_of(&l, 1), 0);
	assert_int_equal(ar_layer_of(&l, 4), 1);
	assert_int_equal(ar_layer_of(&l, 6), 1);
	assert_int_equal(ar_layer_of(&l, g->nnodes - 1), -1);
	ar_layers_free(&l);
	ar_graph_free(g);
}

static void test_layers_regex(void **state)
{
	ArGraph *g = residual_stack(4);
	ArLayers l;
	ArError err = {0};
	(void)state;
	/* Every other layer input: two layers of two blocks each. */
	assert_int_equal(ar_layers_find(g, g->nnodes, "^h[024]$", &l, &err),
			 AR_OK);
	assert_int_equal(l.n, 2);
	assert_false(l.repeated);
	assert_string_equal(g->tensors[l.bound[1]].name, "h2");
	ar_layers_free(&l);
	assert_int_equal(ar_layers_find(g, g->nnodes, "^h0$", &l, &err),
			 AR_EXIT_MODEL);
	assert_int_equal(ar_layers_find(g, g->nnodes, "(", &l, &err),
			 AR_EXIT_USAGE);
	ar_graph_free(g);
}

static void test_no_layers(void **state)
{
	ArGraph *g = residual_stack(1);
	ArLayers l;
	ArError err = {0};
	(void)state;
	/* One block does not repeat. */
	assert_int_equal(ar_layers_find(g, g->nnodes, NULL, &l, &err),
			 AR_EXIT_MODEL);
	assert_non_null(strstr(err.msg, "--layer-boundary"));
	ar_graph_free(g);
}

/* A fixed pseudo-random cost per (stage, a, b). */
typedef struct Costs {
	int64_t v[4][12][12];
} Costs;

static int64_t cost(void *ctx, int stage, int a, int b)
{
	return ((Costs *)ctx)->v[stage][a][b];
}

static int64_t brute(const Costs *c, int n, int pp, int stage, int a)
{
	int64_t best = INT64_MAX;
	if (stage == pp - 1)
		return c->v[stage][a][n];
	for (int b = a + 1; b <= n - (pp - stage - 1); b++) {
		int64_t rest = brute(c, n, pp, stage + 1, b);
		int64_t m = c->v[stage][a][b] > rest ? c->v[stage][a][b] : rest;
		best = m < best ? m : best;
	}
	return best;
}

static void test_split_optimal(void **state)
{
	Costs c;
	uint32_t seed = 12345;
	int bounds[5];
	(void)state;
	for (int s = 0; s < 4; s++)
		for (int a = 0; a < 12; a++)
			for (int b = 0; b < 12; b++) {
				seed = seed * 1103515245u + 12345u;
				c.v[s][a][b] = (int64_t)(seed >> 8 & 0xffff) *
					       (b - a);
			}
	for (int pp = 2; pp <= 4; pp++) {
		int64_t got = ar_pipeline_split(11, pp, cost, &c, bounds);
		int64_t m = 0;
		assert_int_equal(got, brute(&c, 11, pp, 0, 0));
		assert_int_equal(bounds[0], 0);
		assert_int_equal(bounds[pp], 11);
		for (int i = 0; i < pp; i++) {
			assert_true(bounds[i] < bounds[i + 1]);
			if (c.v[i][bounds[i]][bounds[i + 1]] > m)
				m = c.v[i][bounds[i]][bounds[i + 1]];
		}
		assert_int_equal(m, got);
	}
}

/* Layers cost 10 each, plus 25 on the first stage: of the even splits
 * of 10 layers over 4 stages (3 or 2 each), the first gets 2. */
static int64_t skewed(void *ctx, int stage, int a, int b)
{
	(void)ctx;
	return 10 * (b - a) + (stage == 0 ? 25 : 0);
}

static void test_even_split(void **state)
{
	int bounds[5];
	(void)state;
	assert_int_equal(ar_pipeline_even(10, 4, skewed, NULL, bounds), 45);
	assert_int_equal(bounds[1] - bounds[0], 2);
	for (int i = 1; i < 4; i++)
		assert_in_range(bounds[i + 1] - bounds[i], 2, 3);
	assert_int_equal(bounds[4], 10);
}

static void test_inflight(void **state)
{
	(void)state;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(ar_inflight(AR_SCHED_1F1B, 4, i, 8), 4 - i);
		assert_int_equal(ar_inflight(AR_SCHED_GPIPE, 4, i, 8), 8);
		assert_int_equal(ar_inflight(AR_SCHED_1F1B, 4, i, 2),
				 4 - i < 2 ? 4 - i : 2);
	}
}

static void test_zero_partitions(void **state)
{
	/* 10 parameters, mixed-precision Adam: 2 + 2 + 4 + 8 bytes each. */
	ArTrainBill b = {.parameter_count = 10, .parameter_bytes = 20,
			 .gradient_bytes = 20, .master_weight_bytes = 40,
			 .optimizer_state_bytes = 80, .constant_bytes = 7};
	int64_t want[4][3] = {{20, 20, 120}, {20, 20, 36}, {20, 6, 36},
			      {6, 6, 36}};
	(void)state;
	for (int z = 0; z < 4; z++) {
		ArDeviceBill d;
		int64_t dp_bytes;
		ar_zero_bill(&b, 4, z, 8, 5, &d, &dp_bytes);
		/* ceil(10 / 4) = 3 elements a device. */
		assert_int_equal(d.parameters, want[z][0]);
		assert_int_equal(d.gradients, want[z][1]);
		assert_int_equal(d.optimizer_state, want[z][2]);
		assert_int_equal(d.constants, 7);
		assert_int_equal(d.buffers, z == 3 ? 8 + 5 : 8);
		assert_int_equal(dp_bytes, (20 / 4) * (z == 3 ? 3 : 2) * 3);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_points),
		cmocka_unit_test(test_layers_repeated),
		cmocka_unit_test(test_layers_regex),
		cmocka_unit_test(test_no_layers),
		cmocka_unit_test(test_split_optimal),
		cmocka_unit_test(test_even_split),
		cmocka_unit_test(test_inflight),
		cmocka_unit_test(test_zero_partitions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
