/*
 * test_plan.c — lifetimes, the verifier and the poison executor on
 * hand-made graphs and hand-made (good and deliberately broken) plans,
 * and the verifier's overlap sweep against an all-pairs check on random
 * plans.
 */
#include "testutil.h"

#include "graph.h"
#include "passes.h"
#include "plan.h"

/*
 * x -> A -> a -> B -> b -> C(b, a) -> c (graph output), each tensor 4 floats:
 * a stays live while b is born, so a plan that puts b onto a corrupts a.
 */
static ArGraph *chain(void)
{
	ArGraph *g = ar_graph_new("chain");
	const char *names[] = {"x", "a", "b", "c"};
	for (int i = 0; i < 4; i++) {
		int t = ar_graph_add_tensor(g, names[i]);
		g->tensors[t].dtype = AR_DT_FLOAT;
		g->tensors[t].rank = 1;
		g->tensors[t].dims[0] = 4;
		g->tensors[t].bytes = 16;
	}
	g->tensors[0].kind = AR_TK_INPUT;
	g->tensors[3].kind = AR_TK_OUTPUT;
	for (int i = 0; i < 3; i++) {
		int in[2] = {i, 1}, out = i + 1;
		int n = ar_graph_add_node(g, names[i + 1], i < 2 ? "Relu" : "Add",
					  "");
		ar_node_set_io(&g->nodes[n], in, i < 2 ? 1 : 2, &out, 1);
		g->tensors[out].producer = n;
	}
	g->inputs = malloc(sizeof(int));
	g->inputs[0] = 0;
	g->ninputs = 1;
	g->outputs = malloc(sizeof(int));
	g->outputs[0] = 3;
	g->noutputs = 1;
	return g;
}

/* A valid plan: x,b at 0, a at 16, c at 32 (x dies at step 0). */
static ArPlan *good_plan(const ArGraph *g)
{
	ArPlan *p = calloc(1, sizeof *p);
	static const int64_t offs[] = {0, 16, 0, 32};
	p->ntensors = g->ntensors;
	p->slots = calloc((size_t)g->ntensors, sizeof *p->slots);
	p->steps = malloc(3 * sizeof(int));
	p->nsteps = 3;
	for (int i = 0; i < 3; i++)
		p->steps[i] = i;
	p->align = 16;
	p->arena_bytes = 48;
	ar_lifetimes(g, p);
	for (int t = 0; t < 4; t++) {
		p->slots[t].offset = offs[t];
		p->slots[t].alias_of = p->slots[t].inplace_of = -1;
	}
	return p;
}

static void expect_reject(const ArGraph *g, const ArPlan *p, const char *what)
{
	ArError err = {0};
	assert_int_equal(ar_verify(g, p, &err), AR_EXIT_INTERNAL);
	if (!strstr(err.msg, what))
		fail_msg("verifier said '%s', expected '%s'", err.msg, what);
}

static void test_lifetimes(void **state)
{
	ArGraph *g = chain();
	ArPlan *p = good_plan(g);
	static const int first[] = {0, 0, 1, 2}, last[] = {0, 2, 2, 2};
	for (int t = 0; t < 4; t++) {
		assert_true(p->slots[t].planned);
		assert_int_equal(p->slots[t].first, first[t]);
		assert_int_equal(p->slots[t].last, last[t]);
	}
	ar_plan_free(p);
	ar_graph_free(g);
}

static void test_verifier_accepts_good_plan(void **state)
{
	ArGraph *g = chain();
	ArPlan *p = good_plan(g);
	ArError err = {0};
	assert_int_equal(ar_verify(g, p, &err), 0);
	assert_int_equal(ar_poison_run(g, p, &err), 0);
	ar_plan_free(p);
	ar_graph_free(g);
}

static void test_verifier_catches_overlap(void **state)
{
	ArGraph *g = chain();
	ArPlan *p = good_plan(g);
	ArError err = {0};
	p->slots[2].offset = 16;     /* b onto a, both live at steps 1-2 */
	expect_reject(g, p, "'b' [16, 32) steps [1, 2] and 'a'");
	/* The poison executor, knowing nothing of the rules, sees it too. */
	assert_int_equal(ar_poison_run(g, p, &err), AR_EXIT_INTERNAL);
	assert_non_null(strstr(err.msg, "reads 'a'"));
	ar_plan_free(p);
	ar_graph_free(g);
}

static void test_verifier_catches_misalignment(void **state)
{
	ArGraph *g = chain();
	ArPlan *p = good_plan(g);
	p->slots[3].offset = 24;
	expect_reject(g, p, "not a multiple of the alignment");
	ar_plan_free(p);
	ar_graph_free(g);
}

static void test_verifier_catches_arena_overrun(void **state)
{
	ArGraph *g = chain();
	ArPlan *p = good_plan(g);
	p->arena_bytes = 32;
	expect_reject(g, p, "ends past the arena");
	ar_plan_free(p);
	ar_graph_free(g);
}

static void test_verifier_catches_short_lifetime(void **state)
{
	ArGraph *g = chain();
	ArPlan *p = good_plan(g);
	p->slots[1].last = 0;       /* a freed before B reads it */
	expect_reject(g, p, "'a' lives over steps [0, 0] but is needed over [0, 2]");
	ar_plan_free(p);
	ar_graph_free(g);
}

static void test_verifier_catches_bad_order(void **state)
{
	ArGraph *g = chain();
	ArPlan *p = good_plan(g);
	p->steps[0] = 1;
	p->steps[1] = 0;
	expect_reject(g, p, "before it is produced");
	p->steps[1] = 1;
	expect_reject(g, p, "twice");
	ar_plan_free(p);
	ar_graph_free(g);
}

static void test_verifier_catches_bad_alias(void **state)
{
	ArGraph *g = chain();
	ArPlan *p = good_plan(g);
	p->slots[2].alias_of = 1;   /* b claims to view a, at the wrong place */
	expect_reject(g, p, "claims to alias 'a'");
	ar_plan_free(p);
	ar_graph_free(g);
}

static void test_inplace(void **state)
{
	ArGraph *g = chain();
	ArPlan *p = good_plan(g);
	ArError err = {0};
	/* C overwrites b, which dies at C's step: c shares b's offset. */
	p->slots[3].offset = 0;
	p->slots[3].inplace_of = 2;
	p->arena_bytes = 32;
	assert_int_equal(ar_verify(g, p, &err), 0);
	assert_int_equal(ar_poison_run(g, p, &err), 0);
	/* B claiming to overwrite a, which C still reads, is caught. */
	p->slots[2].offset = 16;
	p->slots[2].inplace_of = 1;
	expect_reject(g, p, "overwrite 'a' in place");
	ar_plan_free(p);
	ar_graph_free(g);
}

static void test_view_alias(void **state)
{
	ArGraph *g = chain();
	ArPlan *p = good_plan(g);
	ArError err = {0};
	/* b is a view of a (Reshape-like): same bytes, both live to step 2. */
	ar_node_set_op(g, &g->nodes[1], "Reshape", g->nodes[1].domain);
	p->slots[2].alias_of = 1;
	p->slots[2].offset = 16;
	p->slots[3].offset = 0;
	p->arena_bytes = 32;
	assert_int_equal(ar_verify(g, p, &err), 0);
	assert_int_equal(ar_poison_run(g, p, &err), 0);
	ar_plan_free(p);
	ar_graph_free(g);
}

static uint32_t seed = 99;

static int rnd(int n)
{
	return test_rand(&seed, n);
}

/*
 * x feeds N Relu steps t_0..t_{N-1} (sizes 16 to 64 bytes), which a chain
 * of Adds then consumes in a random order, so that their lifetimes end at
 * different steps.  p gets the order, the lifetimes and no links; the
 * offsets are the caller's.
 */
enum { N = 40 };

static ArGraph *fan(ArPlan *p)
{
	ArGraph *g = ar_graph_new("fan");
	int order[N], acc, nt;
	char name[16];
	int x = ar_graph_add_tensor(g, "x");
	g->tensors[x].kind = AR_TK_INPUT;
	g->tensors[x].dtype = AR_DT_FLOAT;
	g->tensors[x].rank = 1;
	g->tensors[x].dims[0] = 4;
	g->tensors[x].bytes = 16;
	for (int i = 0; i < N; i++) {
		int t, n;
		snprintf(name, sizeof name, "t%d", i);
		t = ar_graph_add_tensor(g, name);
		g->tensors[t].dtype = AR_DT_FLOAT;
		g->tensors[t].rank = 1;
		g->tensors[t].dims[0] = 4 * (1 + rnd(4));
		g->tensors[t].bytes = 4 * g->tensors[t].dims[0];
		n = ar_graph_add_node(g, name, "Relu", "");
		ar_node_set_io(&g->nodes[n], &x, 1, &t, 1);
		g->tensors[t].producer = n;
		order[i] = t;
	}
	for (int i = N - 1; i > 0; i--) {
		int j = rnd(i + 1), t = order[i];
		order[i] = order[j], order[j] = t;
	}
	acc = order[0];
	for (int i = 1; i < N; i++) {
		int in[2] = { acc, order[i] }, t, n;
		snprintf(name, sizeof name, "a%d", i);
		t = ar_graph_add_tensor(g, name);
		g->tensors[t].dtype = AR_DT_FLOAT;
		g->tensors[t].rank = 1;
		g->tensors[t].dims[0] = 4;
		g->tensors[t].bytes = 16;
		n = ar_graph_add_node(g, name, "Add", "");
		ar_node_set_io(&g->nodes[n], in, 2, &t, 1);
		g->tensors[t].producer = n;
		acc = t;
	}
	g->tensors[acc].kind = AR_TK_OUTPUT;
	g->inputs = malloc(sizeof(int));
	g->inputs[0] = x;
	g->ninputs = 1;
	g->outputs = malloc(sizeof(int));
	g->outputs[0] = acc;
	g->noutputs = 1;
	nt = g->ntensors;
	p->ntensors = nt;
	p->align = 16;
	p->slots = calloc((size_t)nt, sizeof *p->slots);
	p->steps = malloc((size_t)g->nnodes * sizeof(int));
	p->nsteps = g->nnodes;
	for (int i = 0; i < g->nnodes; i++)
		p->steps[i] = i;
	ar_lifetimes(g, p);
	p->arena_bytes = 16 * 4 * (int64_t)nt + 64;
	for (int t = 0; t < nt; t++)
		p->slots[t].alias_of = p->slots[t].inplace_of = -1;
	return g;
}

/*
 * The plan gives every fan tensor a random 16-byte slot; the verifier must
 * reject it exactly when two tensors that share a step share a byte (no
 * aliasing here), which the all-pairs loop decides.
 */
static void test_verifier_vs_all_pairs(void **state)
{
	(void)state;
	for (int trial = 0; trial < 300; trial++) {
		ArPlan *p = calloc(1, sizeof *p);
		ArError err = {0};
		ArGraph *g = fan(p);
		int nt = g->ntensors;
		bool clash = false;
		for (int t = 0; t < nt; t++) {
			/* Spread out, and now and then a narrow range. */
			int slots = trial % 3 ? 4 * nt : 8;
			p->slots[t].offset = 16 * rnd(slots);
		}
		for (int a = 0; a < nt && !clash; a++)
			for (int b = 0; b < a && !clash; b++) {
				const ArSlot *sa = &p->slots[a], *sb = &p->slots[b];
				clash = sa->first <= sb->last &&
					sb->first <= sa->last &&
					sa->offset < sb->offset + g->tensors[b].bytes &&
					sb->offset < sa->offset + g->tensors[a].bytes;
			}
		assert_int_equal(ar_verify(g, p, &err),
				 clash ? AR_EXIT_INTERNAL : AR_OK);
		if (clash)
			assert_non_null(strstr(err.msg, "overlap"));
		ar_plan_free(p);
		ar_graph_free(g);
	}
}

/*
 * Every fan tensor in a slot of its own, then one moved onto another that
 * is live beside it: the verifier must name exactly those two, wherever
 * they sit in its byte order and whenever they were born.
 */
static void test_verifier_finds_the_one_clash(void **state)
{
	(void)state;
	for (int trial = 0; trial < 300; trial++) {
		ArPlan *p = calloc(1, sizeof *p);
		ArError err = {0};
		ArGraph *g = fan(p);
		int nt = g->ntensors, a, b;
		char want_a[40], want_b[40];
		/* 128-byte slots: b, moved 16 bytes in, still meets a alone. */
		p->arena_bytes = 128 * (int64_t)nt;
		for (int t = 0; t < nt; t++)
			p->slots[t].offset = 128 * ((t * 7 + trial) % nt);
		assert_int_equal(ar_verify(g, p, &err), AR_OK);
		do {
			a = rnd(nt), b = rnd(nt);
		} while (a == b || p->slots[a].first > p->slots[b].last ||
			 p->slots[b].first > p->slots[a].last);
		p->slots[b].offset = p->slots[a].offset + 16 * rnd(2) *
				     (g->tensors[a].bytes > 16);
		assert_int_equal(ar_verify(g, p, &err), AR_EXIT_INTERNAL);
		snprintf(want_a, sizeof want_a, "'%s'", g->tensors[a].name);
		snprintf(want_b, sizeof want_b, "'%s'", g->tensors[b].name);
		if (!strstr(err.msg, want_a) || !strstr(err.msg, want_b))
			fail_msg("verifier said '%s', expected %s and %s",
				 err.msg, want_a, want_b);
		ar_plan_free(p);
		ar_graph_free(g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifetimes),
		cmocka_unit_test(test_verifier_accepts_good_plan),
		cmocka_unit_test(test_verifier_catches_overlap),
		cmocka_unit_test(test_verifier_vs_all_pairs),
		cmocka_unit_test(test_verifier_finds_the_one_clash),
		cmocka_unit_test(test_verifier_catches_misalignment),
		cmocka_unit_test(test_verifier_catches_arena_overrun),
		cmocka_unit_test(test_verifier_catches_short_lifetime),
		cmocka_unit_test(test_verifier_catches_bad_order),
		cmocka_unit_test(test_verifier_catches_bad_alias),
		cmocka_unit_test(test_inplace),
		cmocka_unit_test(test_view_alias),
	};
	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
