/*
 * test_fuse.c — --fuse preact on hand-made chains: which per-channel ops
 * join a convolution's prologue, where a chain must stop, that the graph
 * is renumbered consistently, and what the fused plan saves.
 */
#include "testutil.h"

#include "fuse.h"
#include "graph_build.h"
#include "plan.h"

typedef struct {
	ArGraph *g;
	int x, y1, y2, y3, y4, out;
	int bn, mul, add;
} Chain;

/*
 * x [1,4,8,8] -> BatchNormalization -> y1 -> Mul k -> y2 -> Add c -> y3
 * -> Relu -> y4 -> Conv (1x1, 2 filters) -> out [1,2,8,8].  factor gives
 * Mul's constant: [4,1,1] per channel, or [1,1,8,8] per pixel.
 */
static Chain chain(bool spatial_factor)
{
	Chain c;
	ArGraph *g = c.g = ar_graph_new("chain");
	int bnp[4], k, b, w;
	c.x = gb_tensor(g, "x", AR_TK_INPUT, 1, 4, 8, 8);
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof name, "bn%d", i);
		bnp[i] = gb_tensor(g, name, AR_TK_WEIGHT, 4, 0, 0, 0);
	}
	k = spatial_factor ? gb_tensor(g, "k", AR_TK_WEIGHT, 1, 1, 8, 8) :
			     gb_tensor(g, "k", AR_TK_WEIGHT, 4, 1, 1, 0);
	b = gb_tensor(g, "c", AR_TK_CONSTANT, 4, 1, 1, 0);
	w = gb_tensor(g, "w", AR_TK_WEIGHT, 2, 4, 1, 1);
	c.y1 = gb_tensor(g, "y1", AR_TK_ACTIVATION, 1, 4, 8, 8);
	c.y2 = gb_tensor(g, "y2", AR_TK_ACTIVATION, 1, 4, 8, 8);
	c.y3 = gb_tensor(g, "y3", AR_TK_ACTIVATION, 1, 4, 8, 8);
	c.y4 = gb_tensor(g, "y4", AR_TK_ACTIVATION, 1, 4, 8, 8);
	c.out = gb_tensor(g, "out", AR_TK_OUTPUT, 1, 2, 8, 8);
	c.bn = gb_node(g, "BatchNormalization",
		       (int[]){c.x, bnp[0], bnp[1], bnp[2], bnp[3]}, 5, c.y1);
	c.mul = gb_node(g, "Mul", (int[]){c.y1, k}, 2, c.y2);
	c.add = gb_node(g, "Add", (int[]){b, c.y2}, 2, c.y3);
	gb_node(g, "Relu", &c.y3, 1, c.y4);
	gb_node(g, "Conv", (int[]){c.y4, w}, 2, c.out);
	gb_io(g, &c.x, 1, &c.out, 1);
	return c;
}

static const ArNode *only_conv(const ArGraph *g)
{
	const ArNode *found = NULL;
	for (int i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].op, AR_PREACT_CONV)) {
			assert_null(found);
			found = &g->nodes[i];
		}
	assert_non_null(found);
	assert_string_equal(found->domain, AR_FUSED_DOMAIN);
	return found;
}

static void expect_prologue(const ArNode *n, const int64_t *codes, int ncodes)
{
	const ArAttr *a = ar_attr(n, "prologue");
	assert_non_null(a);
	assert_int_equal(a->nints, ncodes);
	for (int i = 0; i < ncodes; i++)
		assert_int_equal(a->ints[i], codes[i]);
}

/* The graph still holds together: ids in range, producers agree. */
static void expect_consistent(const ArGraph *g)
{
	for (int i = 0; i < g->nnodes; i++) {
		const ArNode *n = &g->nodes[i];
		for (int j = 0; j < n->ninputs; j++)
			assert_true(n->inputs[j] < g->ntensors);
		for (int j = 0; j < n->noutputs; j++) {
			assert_in_range(n->outputs[j], 0, g->ntensors - 1);
			assert_int_equal(g->tensors[n->outputs[j]].producer, i);
		}
	}
	for (int i = 0; i < g->noutputs; i++)
		assert_in_range(g->outputs[i], 0, g->ntensors - 1);
}

static int64_t peak(const ArGraph *g)
{
	ArPlanOptions o;
	ArError err = {0};
	ArPlan *p;
	int64_t lb;
	ar_plan_options_default(&o);
	if (ar_plan(g, &o, &p, &err))
		fail_msg("ar_plan: %s", err.msg);
	if (ar_poison_run(g, p, &err))
		fail_msg("poison: %s", err.msg);
	lb = p->lower_bound;
	ar_plan_free(p);
	return lb;
}

/* The whole chain joins; x feeds the convolution; 1 KiB saved. */
static void test_whole_chain(void **state)
{
	Chain c = chain(false);
	const ArNode *n;
	int nt = c.g->ntensors;

	/* x (a graph input) cannot be overwritten: x + y1, then y4 + out. */
	assert_int_equal(peak(c.g), 2048);
	assert_int_equal(ar_fuse_preact(c.g), 1);
	expect_consistent(c.g);
	assert_int_equal(c.g->nnodes, 1);
	assert_int_equal(c.g->ntensors, nt - 4);
	n = only_conv(c.g);
	expect_prologue(n, (int64_t[]){AR_PRE_BATCHNORM, AR_PRE_MUL,
				       AR_PRE_ADD, AR_PRE_RELU}, 4);
	assert_int_equal(n->ninputs, 3 + 4 + 1 + 1);
	assert_string_equal(c.g->tensors[n->inputs[0]].name, "x");
	assert_string_equal(c.g->tensors[n->inputs[1]].name, "w");
	assert_int_equal(n->inputs[2], -1);
	assert_string_equal(c.g->tensors[n->inputs[3]].name, "bn0");
	assert_string_equal(c.g->tensors[n->inputs[7]].name, "k");
	assert_string_equal(c.g->tensors[n->inputs[8]].name, "c");
	assert_non_null(ar_attr(n, "prologue_epsilon"));
	assert_int_equal(peak(c.g), 1024 + 512);
	ar_graph_free(c.g);
}

/* An intermediate the caller reads (a graph output) ends the chain. */
static void test_stops_at_shared_tensor(void **state)
{
	Chain c = chain(false);
	int outs[2] = {c.out, c.y3};
	const ArNode *n;
	free(c.g->inputs), free(c.g->outputs);
	gb_io(c.g, &c.x, 1, outs, 2);
	assert_int_equal(ar_fuse_preact(c.g), 1);
	expect_consistent(c.g);
	n = only_conv(c.g);
	expect_prologue(n, (int64_t[]){AR_PRE_RELU}, 1);
	assert_string_equal(c.g->tensors[n->inputs[0]].name, "y3");
	assert_null(ar_attr(n, "prologue_epsilon"));
	ar_graph_free(c.g);
}

/* A training-mode BatchNormalization and a per-pixel factor stay out. */
static void test_not_per_channel(void **state)
{
	Chain c = chain(false), d = chain(true);
	gb_int_attr(c.g, c.bn, "training_mode", 1);
	assert_int_equal(ar_fuse_preact(c.g), 1);
	expect_consistent(c.g);
	expect_prologue(only_conv(c.g), (int64_t[]){AR_PRE_MUL, AR_PRE_ADD,
						    AR_PRE_RELU}, 3);
	assert_int_equal(ar_fuse_preact(d.g), 1);
	expect_consistent(d.g);
	expect_prologue(only_conv(d.g), (int64_t[]){AR_PRE_ADD, AR_PRE_RELU},
			2);
	assert_string_equal(d.g->tensors[only_conv(d.g)->inputs[0]].name,
			    "y2");
	ar_graph_free(c.g);
	ar_graph_free(d.g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_chain),
		cmocka_unit_test(test_stops_at_shared_tensor),
		cmocka_unit_test(test_not_per_channel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
