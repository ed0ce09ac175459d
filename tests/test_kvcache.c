/*
 * test_kvcache.c — a static KV cache (--max-seq) planned in place: the
 * present outputs of a GroupQueryAttention decode step take their past
 * inputs' offsets, so a runtime feeds them back without moving the cache;
 * a growing cache, or a past still read after the step, keeps its own
 * bytes.  Every plan passes the verifier and the poison executor.
 */
#include "shape_build.h"

#include "plan.h"

#define ME "com.microsoft"

static void outputs(ArGraph *g, int n, const char *const *names)
{
	g->outputs = ar_xmalloc((size_t)n * sizeof(int));
	for (int i = 0; i < n; i++) {
		int t = ar_graph_find(g, names[i]);
		assert_true(t >= 0);
		g->tensors[t].kind = AR_TK_OUTPUT;
		g->outputs[g->noutputs++] = t;
	}
}

/*
 * One decoder step: q/k/v from a projection of x, GQA with a cache of
 * `past` positions (8 query heads, 2 KV heads of 16), an output
 * projection.  With reread, a later node reads past_key again; with
 * last, GQA is the last step and past_key a graph output too.
 */
static ArGraph *decoder(int64_t past, int64_t max_seq, bool reread,
			bool last)
{
	ArGraph *g = ar_graph_new("decode");
	const char *outs[] = {"out", "present_key", "present_value", "r"};
	const char *outs_last[] = {"attn", "present_key", "present_value",
				   "past_key"};
	int n;

	g->max_seq = max_seq;
	INPUT(g, "x", 1, 1, 128);
	INPUT(g, "past_key", 1, 2, past, 16);
	INPUT(g, "past_value", 1, 2, past, 16);
	input(g, "seqlens_k", AR_DT_INT32, 1, DIMS(1));
	input(g, "total", AR_DT_INT32, 0, NULL);
	weight(g, "wqkv", AR_DT_FLOAT, 2, DIMS(128, 192), NULL);
	weight(g, "wo", AR_DT_FLOAT, 2, DIMS(128, 128), NULL);
	node(g, "MatMul", 13, "x,wqkv", "qkv");
	n = node_in(g, ME, "GroupQueryAttention", 1,
		    "qkv,,,past_key,past_value,seqlens_k,total",
		    "attn,present_key,present_value");
	attr_i(g, n, "num_heads", 8);
	attr_i(g, n, "kv_num_heads", 2);
	if (last) {
		outputs(g, 4, outs_last);
		ok(g);
		return g;
	}
	node(g, "MatMul", 13, "attn,wo", "out");
	if (reread)
		node(g, "ReduceSum", 13, "past_key", "r");
	outputs(g, reread ? 4 : 3, outs);
	ok(g);
	return g;
}

static ArPlan *plan(ArGraph *g)
{
	ArPlanOptions o;
	ArPlan *p;
	ArError err;
	int rc;

	ar_plan_options_default(&o);
	rc = ar_plan(g, &o, &p, &err);
	if (rc)
		print_error("ar_plan: %s\n", err.msg);
	assert_int_equal(rc, AR_OK);
	assert_int_equal(ar_poison_run(g, p, &err), AR_OK);
	return p;
}

static const ArSlot *slot(ArGraph *g, ArPlan *p, const char *name)
{
	return &p->slots[ar_graph_find(g, name)];
}

static void test_static_cache_in_place(void **state)
{
	ArGraph *g = decoder(64, 64, false, false);
	ArPlan *p = plan(g);
	int64_t cache = 1 * 2 * 64 * 16 * 4;
	(void)state;
	SHAPE(g, "present_key", 1, 2, 64, 16);
	assert_int_equal(slot(g, p, "present_key")->offset,
			 slot(g, p, "past_key")->offset);
	assert_int_equal(slot(g, p, "present_value")->offset,
			 slot(g, p, "past_value")->offset);
	assert_int_equal(slot(g, p, "present_key")->inplace_of,
			 ar_graph_find(g, "past_key"));
	assert_true(slot(g, p, "past_key")->offset !=
		    slot(g, p, "past_value")->offset);
	/* Both caches once, beside the largest step's other tensors. */
	assert_true(p->arena_bytes < 3 * cache);
	ar_plan_free(p);
	ar_graph_free(g);
}

static void test_growing_cache_apart(void **state)
{
	ArGraph *g = decoder(64, 0, false, false);
	ArPlan *p = plan(g);
	(void)state;
	SHAPE(g, "present_key", 1, 2, 65, 16);
	assert_int_equal(slot(g, p, "present_key")->inplace_of, -1);
	assert_true(slot(g, p, "present_key")->offset !=
		    slot(g, p, "past_key")->offset);
	ar_plan_free(p);
	ar_graph_free(g);
}

/*
 * A past read after the step, or returned as a graph output, must survive
 * it: past_key keeps its bytes, past_value (read by GQA alone) does not.
 */
static void test_past_still_needed(void **state)
{
	(void)state;
	for (int last = 0; last < 2; last++) {
		ArGraph *g = decoder(64, 64, !last, last);
		ArPlan *p = plan(g);
		assert_int_equal(slot(g, p, "present_key")->inplace_of, -1);
		assert_int_equal(slot(g, p, "present_value")->inplace_of,
				 ar_graph_find(g, "past_value"));
		ar_plan_free(p);
		ar_graph_free(g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_cache_in_place),
		cmocka_unit_test(test_growing_cache_apart),
		cmocka_unit_test(test_past_still_needed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
