/*
 * test_ops.c — the op table (ops/table.c) against the invariants ops.h
 * states, entry by entry, and the lookups every pass relies on.  A new
 * entry that contradicts itself (a view with a FLOP cost, a gradient rule
 * naming an input the op lacks, a runtime flag the runtime does not back)
 * fails here.
 */
#include "testutil.h"

#include "arenac_rt.h"
#include "graph_build.h"
#include "ops.h"

static const char *dom(const ArOpDef *d)
{
	return d->domain ? d->domain : "";
}

/* Every bit of mask names one of n slots (variadic: any); a mask of all
 * bits says "every one", whatever their number. */
static bool within(uint32_t mask, int n)
{
	return mask == AR_ALL_INPUTS || n >= 32 || !(mask >> n);
}

static void fail_entry(const ArOpDef *d, const char *why)
{
	fail_msg("%s.%s (since %d): %s", dom(d), d->name, d->since, why);
}

static void test_sorted_and_unique(void **state)
{
	int n;
	const ArOpDef *t = ar_op_table(&n);
	assert_true(n > 100);
	for (int i = 1; i < n; i++) {
		int c = strcmp(dom(&t[i - 1]), dom(&t[i]));
		if (!c)
			c = strcmp(t[i - 1].name, t[i].name);
		if (!c)
			c = t[i - 1].since < t[i].since ? -1 : 1;
		if (c >= 0)
			fail_entry(&t[i], "out of order (or a duplicate)");
	}
}

static void test_entries_consistent(void **state)
{
	int n;
	const ArOpDef *t = ar_op_table(&n);
	for (int i = 0; i < n; i++) {
		const ArOpDef *d = &t[i];
		const ArGradRule *g = d->grad;
		if (d->since < 1)
			fail_entry(d, "since below 1");
		if (d->in_min < 0 || d->in_min > d->in_max || d->out_min < 0 ||
		    d->out_min > d->out_max || d->out_max < 1)
			fail_entry(d, "input or output counts out of order");
		/* Dropout is a view only in inference: training computes. */
		if ((d->alias == AR_ALIAS_VIEW || d->alias == AR_ALIAS_CONCAT) &&
		    !d->view_when && d->flops != ar_flops_none)
			fail_entry(d, "a view or concat with a FLOP cost");
		if ((d->alias == AR_ALIAS_INPLACE) != (d->inplace != 0))
			fail_entry(d, "in-place inputs without the in-place "
				   "class, or the class without inputs");
		if (!within(d->inplace, d->in_max))
			fail_entry(d, "in-place input past its inputs");
		if (d->view_when && d->alias != AR_ALIAS_VIEW)
			fail_entry(d, "a view condition on a non-view");
		if (d->alias == AR_ALIAS_VIEW && d->in_min < 1)
			fail_entry(d, "a view without an input");
		if (d->refuse && d->shape)
			fail_entry(d, "refused, yet with a shape function");
		if (d->fold && !d->shape)
			fail_entry(d, "a folder without a shape function");
		if (d->prologue && !(d->alias == AR_ALIAS_INPLACE))
			fail_entry(d, "a prologue op that is not elementwise");
		/* Its subgraphs run inside its step: no value is known
		 * before, and no output shares an input's bytes. */
		if (d->control && (!(d->flags & AR_OP_NOFOLD) || d->fold ||
				   d->alias != AR_ALIAS_NONE || d->scratch))
			fail_entry(d, "a control-flow op that folds, aliases "
				   "or declares kernel scratch");
		if (g && (!g->diff || !within(g->diff, d->in_max) ||
			  !within(g->save_in, d->in_max) ||
			  !within(g->save_out, d->out_max) ||
			  (g->cross && d->in_max < 2)))
			fail_entry(d, "a gradient rule naming an input or "
				   "output the op lacks");
		if (d->nkv < 0 || d->nkv > AR_MAX_KV)
			fail_entry(d, "KV cache count out of range");
		for (int k = 0; k < d->nkv; k++)
			if (d->kv[k].out < 1 || d->kv[k].out >= d->out_max ||
			    d->kv[k].in < 0 || d->kv[k].in >= d->in_max ||
			    d->kv[k].seq < 0 || d->kv[k].seq >= AR_MAX_RANK)
				fail_entry(d, "a KV cache naming an output or "
					   "input the op lacks");
	}
}

/* The runtime's kernels (its own dispatch table) and the table's flags. */
static void test_runtime_flags(void **state)
{
	int n;
	const ArOpDef *t = ar_op_table(&n);
	const char *dom, *op;
	for (int i = 0; i < n; i++)
		if (art_has_kernel(t[i].domain ? t[i].domain : "", t[i].name) !=
		    t[i].runtime)
			fail_entry(&t[i], t[i].runtime ? "flagged, but the "
				   "runtime has no kernel" : "the runtime has a "
				   "kernel the table does not flag");
	for (int k = 0; (op = art_kernel_op(k, &dom)); k++) {
		const ArOpDef *d = ar_op_find(dom, op, 0);
		if (!d || !d->runtime)
			fail_msg("runtime kernel %s.%s has no flagged entry",
				 dom, op);
	}
}

static void test_lookup(void **state)
{
	const ArOpDef *d = ar_op_find("", "Relu", 13);
	assert_non_null(d);
	assert_string_equal(d->name, "Relu");
	assert_ptr_equal(ar_op_find("ai.onnx", "Relu", 13), d);
	assert_ptr_equal(ar_op_find(NULL, "Relu", 0), d);
	assert_null(ar_op_find("", "NoSuchOp", 13));
	assert_null(ar_op_find("com.example", "Relu", 13));
	assert_non_null(ar_op_find("arenac", "PreactConv", 1));
	assert_non_null(ar_op_find(AR_TRAIN_DOMAIN, "GradAccumulate", 1));
	assert_int_equal(ar_op_find("", "Reshape", 13)->alias, AR_ALIAS_VIEW);
	assert_int_equal(ar_op_find("", "Concat", 13)->alias, AR_ALIAS_CONCAT);
	assert_non_null(ar_op_find("", "SequenceAt", 13)->refuse);
}

/* A training node's in-place inputs come from its forward op's rule. */
static void test_gradient_steps_inplace(void **state)
{
	static const struct {
		const char *domain, *op;
		uint32_t want;
	} cases[] = {
		{AR_TRAIN_DOMAIN, "ReluGrad", AR_ALL_INPUTS},
		{AR_TRAIN_DOMAIN, "BatchNormalizationGrad", AR_ALL_INPUTS},
		{AR_TRAIN_DOMAIN, "MulGrad", 0},
		{AR_TRAIN_DOMAIN, "SoftmaxGrad", 0},
		{AR_TRAIN_DOMAIN, "SoftmaxCrossEntropyLossGrad", 0},
		{AR_TRAIN_DOMAIN, "GradAccumulate", AR_ALL_INPUTS},
		{AR_TRAIN_DOMAIN, "Grad", 0},
		{"", "ReluGrad", 0},            /* not a training op */
		{"", "Clip", AR_BIT(0)},
		{"", "Conv", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ArGraph *g = ar_graph_new("g");
		int id = ar_graph_add_node(g, "n", cases[i].op,
					   cases[i].domain);
		if (ar_op_inplace_inputs(&g->nodes[id]) != cases[i].want)
			fail_msg("%s.%s", cases[i].domain, cases[i].op);
		ar_graph_free(g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sorted_and_unique),
		cmocka_unit_test(test_entries_consistent),
		cmocka_unit_test(test_runtime_flags),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_gradient_steps_inplace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
