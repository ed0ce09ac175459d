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
			  !within(g->dout, d->out_max)))
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
		for (int j = 0; g && j < AR_GRAD_NAMED; j++) {
			/* What a gradient reads: inputs and outputs the op
			 * has, or those a training step materialises. */
			int outs = d->train_outputs ? 5 : d->out_max;
			if (!within(g->reads[j].in, d->in_max) ||
			    !within(g->reads[j].out, outs))
				fail_entry(d, "a gradient reading an input or "
					   "output the op lacks");
			if ((g->reads[j].in || g->reads[j].out) &&
			    !(g->diff & AR_BIT(j)))
				fail_entry(d, "what the gradient of an input "
					   "with no gradient reads");
		}
		if (d->train_outputs && !g)
			fail_entry(d, "training outputs without a gradient");
		if ((d->flags & AR_OP_LOSS) && !g)
			fail_entry(d, "a loss without a gradient");
		/* Defaults: a value of a header type; a list's values per
		 * spatial axis or from an input the op has; a requantisation's
		 * scales inputs it has. */
		for (const ArAttrDefault *a = d->defaults; a && a->name; a++)
			if ((a->type != AR_ATTR_INT && a->type != AR_ATTR_FLOAT &&
			     a->type != AR_ATTR_STRING && a->type != AR_ATTR_INTS) ||
			    (a->type == AR_ATTR_STRING && !a->s) ||
			    (a->type == AR_ATTR_INTS &&
			     (a->per_axis > 0) == (a->from > 0)) ||
			    a->from >= d->in_max || a->since < 1)
				fail_entry(d, "a malformed attribute default");
		if (d->requant.y && (d->requant.x < 1 || d->requant.w < 1 ||
				     d->requant.y >= d->in_max))
			fail_entry(d, "requantisation scales it lacks");
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
		{AR_TRAIN_DOMAIN, "DropoutGrad", AR_ALL_INPUTS},
		{AR_TRAIN_DOMAIN, "GeluGrad", AR_ALL_INPUTS},
		{AR_TRAIN_DOMAIN, "LayerNormalizationGrad", 0},
		{AR_TRAIN_DOMAIN, "DivGrad", 0},
		{AR_TRAIN_DOMAIN, "AdamUpdate", AR_BIT(0)},
		{AR_TRAIN_DOMAIN, "LogitsChunkGradInput", AR_BIT(2)},
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

/* Each gradient pattern's ops are entries, its fused op has a rule, its
 * operands and outputs name steps and inputs it has. */
static void test_grad_patterns(void **state)
{
	int n;
	const ArGradPattern *p = ar_grad_patterns(&n);
	assert_true(n >= 3);
	for (int i = 0; i < n; i++) {
		const ArOpDef *f = ar_op_find(p[i].domain, p[i].fused,
					       0);
		if (!f || !f->grad)
			fail_msg("%s: fused op %s has no rule", p[i].name,
				 p[i].fused);
		assert_true(p[i].nsteps >= 2 &&
			    p[i].nsteps <= AR_PAT_MAX_STEPS);
		assert_true(p[i].nmin >= 0 && p[i].nmin <= p[i].nsteps);
		assert_true(p[i].nout >= 0 && p[i].nout <= AR_PAT_MAX_IO);
		/* Named outputs come from the steps every match has. */
		for (int j = 1; j < p[i].nout; j++)
			assert_true(p[i].out[j] >= 0 && p[i].out[j] <
				    (p[i].nmin ? p[i].nmin : p[i].nsteps));
		for (int k = 0; k < p[i].nsteps; k++) {
			const ArPatStep *s = &p[i].steps[k];
			const ArOpDef *d = ar_op_find(NULL, s->op, 0);
			bool prev = k == 0;
			if (!d || s->nin < d->in_min || s->nin > d->in_max)
				fail_msg("%s: step %d (%s)", p[i].name, k,
					 s->op);
			for (int j = 0; j < s->nin; j++) {
				const ArPatOperand *o = &s->in[j];
				prev = prev || o->kind == AR_PAT_PREV;
				/* An earlier step; a fused input past X. */
				if ((o->kind == AR_PAT_STEP &&
				     (o->index < 0 || o->index >= k)) ||
				    (o->kind == AR_PAT_ARG &&
				     (o->index < 1 || o->index >= AR_PAT_MAX_IO)))
					fail_msg("%s: step %d operand %d",
						 p[i].name, k, j);
			}
			/* A chain: each step reads the one before. */
			if (!prev)
				fail_msg("%s: step %d reads no previous step",
					 p[i].name, k);
		}
	}
}

/* Which inputs a rule's step reads, for some inputs needing a gradient. */
static void test_grad_reads(void **state)
{
	const ArGradRule *mul = ar_op_find("", "Mul", 13)->grad;
	const ArGradRule *div = ar_op_find("", "Div", 13)->grad;
	const ArGradRule *where = ar_op_find("", "Where", 16)->grad;
	ArGradReads r = ar_grad_reads(mul, AR_BIT(0));
	/* x * c, c a constant: x's gradient reads c alone. */
	assert_int_equal(r.in, AR_BIT(1));
	assert_int_equal(r.out, 0);
	r = ar_grad_reads(div, AR_BIT(1));
	assert_int_equal(r.in, AR_BIT(1));
	assert_int_equal(r.out, AR_BIT(0));
	r = ar_grad_reads(where, AR_BIT(1) | AR_BIT(2));
	assert_int_equal(r.in, AR_BIT(0));
	assert_true(ar_grad_moves(ar_op_find("", "Transpose", 13)->grad, 0));
	assert_true(ar_grad_moves(ar_op_find("", "Gather", 13)->grad, 0));
	assert_false(ar_grad_moves(mul, 0));
	assert_false(ar_grad_moves(ar_op_find("", "Gather", 13)->grad, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sorted_and_unique),
		cmocka_unit_test(test_entries_consistent),
		cmocka_unit_test(test_runtime_flags),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_gradient_steps_inplace),
		cmocka_unit_test(test_grad_patterns),
		cmocka_unit_test(test_grad_reads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
