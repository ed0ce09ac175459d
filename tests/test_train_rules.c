/*
 * test_train_rules.c — what a training step keeps, rule by rule, on small
 * hand-made graphs: the saved set of each transformer op's gradient rule
 * (a product by a constant keeps nothing, Where only its condition, Div's
 * divisor gradient reads the divisor and the quotient, Gather only its
 * indices, LayerNorm and BatchNorm their materialised statistics, Dropout
 * its one-byte mask, GELU's Erf and tanh chains and SiLU's only their
 * input, a decomposed LayerNorm its input and row statistics), statistics and
 * masks tied to their node's output under every checkpoint policy, which
 * tensors are
 * parameters (folded transforms of a weight are the weight; scalars,
 * integers and shape-derived constants never), --freeze and --trainable,
 * the precision modes' bill, a model's own loss, and the chunked loss.
 */
#include "testutil.h"

#include "graph.h"
#include "graph_build.h"
#include "plan.h"
#include "checkpoint.h"
#include "ckpt_search.h"
#include "strpool.h"

/* A graph under construction: x [4, 8] input, a weight per MatMul. */
typedef struct G {
	ArGraph *g;
	int x;
} G;

static G start(void)
{
	G b = {ar_graph_new("t"), -1};
	b.x = gb_tensor(b.g, "x", AR_TK_INPUT, 4, 8, 0, 0);
	return b;
}

static int t2(G *b, const char *name, ArTensorKind k, int64_t d0, int64_t d1)
{
	return gb_tensor(b->g, name, k, d0, d1, 0, 0);
}

/* A float constant scalar of value v (the kind a Constant node gives). */
static int scalar(G *b, const char *name, float v)
{
	int t = ar_graph_add_tensor(b->g, name);
	ArTensor *x = &b->g->tensors[t];
	x->dtype = AR_DT_FLOAT;
	x->rank = 0;
	x->bytes = 4;
	x->kind = AR_TK_WEIGHT;
	x->data = malloc(4);
	memcpy(x->data, &v, 4);
	return t;
}

static int op(G *b, const char *o, int a, int c, int out)
{
	int in[2] = {a, c};
	int n = gb_node(b->g, o, in, c < 0 ? 1 : 2, out);
	b->g->nodes[n].name = ar_strpool_copy(&b->g->strs,
					      b->g->tensors[out].name);
	return n;
}

/* h = MatMul(x, w) with a fresh [8, n] weight. */
static int linear(G *b, const char *name, int in, int64_t n)
{
	char w[64];
	int h = t2(b, name, AR_TK_ACTIVATION, 4, n);
	snprintf(w, sizeof w, "%s.w", name);
	op(b, "MatMul", in, t2(b, w, AR_TK_WEIGHT, 8, n), h);
	return h;
}

static void finish(G *b, int out)
{
	b->g->tensors[out].kind = AR_TK_OUTPUT;
	gb_io(b->g, &b->x, 1, &out, 1);
}

static const ArTrainSpec plain = {.optimizer = AR_OPTIM_SGD,
				  .grad_patterns = true};

static ArTrainModel *model(ArGraph *g, const ArTrainSpec *spec)
{
	ArTrainModel *m;
	ArError err = {0};
	if (ar_train_model(g, spec, &m, &err))
		fail_msg("%s", err.msg);
	return m;
}

/* The saved activations (and inputs) of m, as "a b c" in id order. */
static void saved_names(const ArTrainModel *m, char *buf, size_t cap)
{
	buf[0] = 0;
	for (int t = 0; t < m->base->ntensors; t++) {
		const ArTensor *x = &m->base->tensors[t];
		if (!m->saved[t] || x->kind == AR_TK_WEIGHT ||
		    x->kind == AR_TK_CONSTANT)
			continue;
		snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s",
			 buf[0] ? " " : "", x->name);
	}
}

static void expect_saved(ArGraph *g, const ArTrainSpec *spec,
			 const char *want)
{
	ArTrainModel *m = model(g, spec);
	char got[512];
	saved_names(m, got, sizeof got);
	assert_string_equal(got, want);
	ar_train_model_free(m);
}

/* x -> MatMul -> h, then h op c (a constant scalar): the constant gets no
 * gradient, so h's gradient reads only c and h is not kept; a trailing
 * MatMul reads its input (the loss reads the logits). */
static void scaled(const char *o, const char *want)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8);
	int y = t2(&b, "y", AR_TK_ACTIVATION, 4, 8);
	op(&b, o, h, scalar(&b, "c", 0.125f), y);
	finish(&b, linear(&b, "logits", y, 10));
	expect_saved(b.g, &plain, want);
	ar_graph_free(b.g);
}

static void test_scale_keeps_nothing(void **state)
{
	scaled("Mul", "x y label loss.log_prob");
	scaled("Div", "x y label loss.log_prob");
	scaled("Pow", "x h y label loss.log_prob");     /* x^c: c x^(c-1) */
}

/* Div of two computed tensors: a's gradient reads b, b's reads b and
 * the quotient. */
static void test_div(void **state)
{
	G b = start();
	int a = linear(&b, "a", b.x, 8), d = linear(&b, "d", b.x, 8);
	int q = t2(&b, "q", AR_TK_ACTIVATION, 4, 8);
	op(&b, "Div", a, d, q);
	finish(&b, linear(&b, "logits", q, 10));
	expect_saved(b.g, &plain, "x d q label loss.log_prob");
	ar_graph_free(b.g);
}

/* Where(cond, h, fill): only the condition, a constant here. */
static void test_where(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8);
	int c = gb_tensor(b.g, "cond", AR_TK_WEIGHT, 4, 8, 0, 0);
	int y = t2(&b, "y", AR_TK_ACTIVATION, 4, 8), n;
	int in[3] = {c, h, scalar(&b, "fill", -1e9f)};
	b.g->tensors[c].dtype = AR_DT_BOOL;
	ar_tensor_set_bytes(&b.g->tensors[c], NULL);
	n = gb_node(b.g, "Where", in, 3, y);
	(void)n;
	finish(&b, linear(&b, "logits", y, 10));
	expect_saved(b.g, &plain, "x y label loss.log_prob");
	ar_graph_free(b.g);
}

/* Softmax, Sqrt, Exp keep their output; Erf, Gelu their input; Neg,
 * Cast, Resize nothing. */
static void test_unary(void **state)
{
	static const struct {
		const char *op, *want;
	} cases[] = {
		{"Softmax", "x y label loss.log_prob"},
		{"Sqrt", "x y label loss.log_prob"},
		{"Exp", "x y label loss.log_prob"},
		{"Reciprocal", "x y label loss.log_prob"},
		{"Erf", "x h y label loss.log_prob"},
		{"Gelu", "x h y label loss.log_prob"},
		{"Neg", "x y label loss.log_prob"},
		{"Cast", "x y label loss.log_prob"},
		{"Resize", "x y label loss.log_prob"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		G b = start();
		int h = linear(&b, "h", b.x, 8);
		int y = t2(&b, "y", AR_TK_ACTIVATION, 4, 8);
		op(&b, cases[i].op, h, -1, y);
		finish(&b, linear(&b, "logits", y, 10));
		expect_saved(b.g, &plain, cases[i].want);
		ar_graph_free(b.g);
	}
}

/* Embedding: Gather(table, ids); the table's gradient is a scatter-add
 * that reads the int64 ids alone. */
static void test_gather(void **state)
{
	ArGraph *g = ar_graph_new("emb");
	int ids = ar_graph_add_tensor(g, "ids");
	int wte = gb_tensor(g, "wte", AR_TK_WEIGHT, 50, 8, 0, 0);
	int e = gb_tensor(g, "emb", AR_TK_ACTIVATION, 4, 8, 0, 0);
	int w = gb_tensor(g, "head.w", AR_TK_WEIGHT, 8, 10, 0, 0);
	int y = gb_tensor(g, "logits", AR_TK_OUTPUT, 4, 10, 0, 0);
	int in[2] = {wte, ids};
	ArTrainModel *m;
	ArGraph *step;
	g->tensors[ids].dtype = AR_DT_INT64;
	g->tensors[ids].rank = 1;
	g->tensors[ids].dims[0] = 4;
	g->tensors[ids].kind = AR_TK_INPUT;
	ar_tensor_set_bytes(&g->tensors[ids], NULL);
	gb_node(g, "Gather", in, 2, e);
	in[0] = e;
	in[1] = w;
	gb_node(g, "MatMul", in, 2, y);
	gb_io(g, &ids, 1, &y, 1);
	m = model(g, &plain);
	assert_true(m->param[wte] && m->param[w] && !m->grad[ids]);
	assert_true(m->saved[ids] && m->saved[e]);
	step = ar_train_graph(m, NULL);
	for (int i = 0; i < step->nnodes; i++)
		if (!strcmp(step->nodes[i].op, "GatherGrad")) {
			/* ids and dY in, the table's gradient out. */
			assert_int_equal(step->nodes[i].ninputs, 2);
			assert_int_equal(step->nodes[i].inputs[0], ids);
			assert_string_equal(step->tensors[step->nodes[i]
					    .outputs[0]].name, "wte.grad");
			assert_int_equal(step->tensors[step->nodes[i]
					 .outputs[0]].kind, AR_TK_WEIGHT);
		}
	ar_graph_free(step);
	ar_train_model_free(m);
	ar_graph_free(g);
}

/* LayerNormalization: input and the per-row mean and 1/std, float32 [4, 1],
 * materialised as outputs 1 and 2. */
static void test_layernorm(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8);
	int y = t2(&b, "ln", AR_TK_ACTIVATION, 4, 8);
	int in[3] = {h, gb_tensor(b.g, "ln.g", AR_TK_WEIGHT, 8, 0, 0, 0),
		     gb_tensor(b.g, "ln.b", AR_TK_WEIGHT, 8, 0, 0, 0)};
	ArTrainModel *m;
	char got[256];
	gb_node(b.g, "LayerNormalization", in, 3, y);
	finish(&b, linear(&b, "logits", y, 10));
	m = model(b.g, &plain);
	saved_names(m, got, sizeof got);
	assert_string_equal(got, "x h ln label ln.mean ln.inv_std "
			    "loss.log_prob");
	for (int t = 0; t < m->base->ntensors; t++)
		if (strstr(m->base->tensors[t].name, "ln.mean") ||
		    strstr(m->base->tensors[t].name, "ln.inv_std")) {
			assert_int_equal(m->base->tensors[t].dtype, AR_DT_FLOAT);
			assert_int_equal(m->base->tensors[t].bytes, 16);
		}
	/* Its scale and bias are parameters: 2 x 8 floats with the MatMuls'. */
	assert_int_equal(m->mem.parameter_count, 64 + 16 + 80);
	ar_train_model_free(m);
	ar_graph_free(b.g);
}

/* BatchNormalization trains on batch statistics: its gradient reads the
 * materialised batch mean and 1/std (outputs 3 and 4, float32 [C]), never
 * the running mean and variance. */
static void test_batchnorm(void **state)
{
	ArGraph *g = ar_graph_new("bn");
	int x = gb_tensor(g, "x", AR_TK_INPUT, 2, 3, 4, 4);
	int y = gb_tensor(g, "bn", AR_TK_ACTIVATION, 2, 3, 4, 4);
	int r = gb_tensor(g, "relu", AR_TK_ACTIVATION, 2, 3, 4, 4);
	int f = gb_tensor(g, "flat", AR_TK_ACTIVATION, 2, 48, 0, 0);
	int w = gb_tensor(g, "fc.w", AR_TK_WEIGHT, 48, 10, 0, 0);
	int o = gb_tensor(g, "logits", AR_TK_OUTPUT, 2, 10, 0, 0);
	int in[5] = {x, gb_tensor(g, "s", AR_TK_WEIGHT, 3, 0, 0, 0),
		     gb_tensor(g, "b", AR_TK_WEIGHT, 3, 0, 0, 0),
		     gb_tensor(g, "mean", AR_TK_WEIGHT, 3, 0, 0, 0),
		     gb_tensor(g, "var", AR_TK_WEIGHT, 3, 0, 0, 0)};
	ArTrainModel *m;
	ArGraph *step;
	char got[256];
	gb_node(g, "BatchNormalization", in, 5, y);
	gb_node(g, "Relu", &y, 1, r);
	gb_node(g, "Flatten", &r, 1, f);
	in[0] = f;
	in[1] = w;
	gb_node(g, "MatMul", in, 2, o);
	gb_io(g, &x, 1, &o, 1);
	m = model(g, &plain);
	saved_names(m, got, sizeof got);
	assert_string_equal(got, "x relu flat label bn.batch_mean "
			    "bn.batch_inv_std loss.log_prob");
	assert_false(m->param[in[3]] || m->param[in[4]]);
	assert_true(m->param[in[1]] && m->param[in[2]]);
	step = ar_train_graph(m, NULL);
	for (int i = 0; i < step->nnodes; i++)
		if (!strcmp(step->nodes[i].op, "BatchNormalizationGrad")) {
			const ArNode *n = &step->nodes[i];
			/* x is an input: the scale's gradient alone reads
			 * x and the statistics, then dY. */
			assert_int_equal(n->ninputs, 4);
			assert_string_equal(step->tensors[n->inputs[1]].name,
					    "bn.batch_mean");
			assert_int_equal(step->tensors[n->inputs[2]].bytes, 12);
		}
	ar_graph_free(step);
	ar_train_model_free(m);
	ar_graph_free(g);
}

/* GELU as torch exports it, x (1 + erf(x / sqrt 2)) 0.5: one GeluGrad
 * reading the chain's input; per op, erf's input and 1 + erf too. */
static void test_gelu_chain(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8), t[5];
	const char *names[] = {"g.div", "g.erf", "g.erf1", "g.xe", "g"};
	ArTrainSpec per_op = plain;
	ArTrainModel *m;
	ArGraph *step;
	int ngelu = 0;
	for (int i = 0; i < 5; i++)
		t[i] = t2(&b, names[i], AR_TK_ACTIVATION, 4, 8);
	op(&b, "Div", h, scalar(&b, "sqrt2", 1.41421356f), t[0]);
	op(&b, "Erf", t[0], -1, t[1]);
	op(&b, "Add", t[1], scalar(&b, "one", 1.0f), t[2]);
	op(&b, "Mul", h, t[2], t[3]);
	op(&b, "Mul", t[3], scalar(&b, "half", 0.5f), t[4]);
	finish(&b, linear(&b, "logits", t[4], 10));
	expect_saved(b.g, &plain, "x h g label loss.log_prob");
	per_op.grad_patterns = false;
	expect_saved(b.g, &per_op, "x h g.div g.erf1 g label loss.log_prob");
	m = model(b.g, &plain);
	step = ar_train_graph(m, NULL);
	for (int i = 0; i < step->nnodes; i++)
		if (!strcmp(step->nodes[i].op, "GeluGrad")) {
			ngelu++;
			assert_int_equal(step->nodes[i].inputs[0], h);
		}
	assert_int_equal(ngelu, 1);
	ar_graph_free(step);
	ar_train_model_free(m);
	/* Another value than 0.5 at the end: no GELU, per-op rules. */
	*(float *)b.g->tensors[b.g->nodes[5].inputs[1]].data = 0.25f;
	expect_saved(b.g, &plain, "x h g.div g.erf1 g label loss.log_prob");
	ar_graph_free(b.g);
}

/* The number of steps of op in the training step of g. */
static int count_steps(ArGraph *g, const char *op)
{
	ArTrainModel *m = model(g, &plain);
	ArGraph *step = ar_train_graph(m, NULL);
	int n = 0;
	for (int i = 0; i < step->nnodes; i++)
		n += !strcmp(step->nodes[i].op, op);
	ar_graph_free(step);
	ar_train_model_free(m);
	return n;
}

/* t[0..9) named names, [4, 1] where row says, else [4, 8]; the first
 * four steps of a decomposed LayerNorm of h into t[0..4): the mean,
 * h - mean, its square, the variance. */
static void ln_variance(G *b, int h, int *t, const char *const *names,
			const bool *row)
{
	for (int i = 0; i < 9; i++)
		t[i] = t2(b, names[i], AR_TK_ACTIVATION, 4, row[i] ? 1 : 8);
	op(b, "ReduceMean", h, -1, t[0]);
	op(b, "Sub", h, t[0], t[1]);
	op(b, "Pow", t[1], scalar(b, "two", 2.0f), t[2]);
	op(b, "ReduceMean", t[2], -1, t[3]);
}

/* nn.LayerNorm as torch exports it below opset 17 (ReduceMean, Sub, Pow,
 * ReduceMean, Add eps, Sqrt, Div, Mul, Add): LayerNorm's gradient, which
 * keeps x, the mean and std ([4, 1]) as torch's native_layer_norm keeps x,
 * mean and 1/std; per op, x - mean, std and the normalised x.  A scale of
 * another size than a row is no LayerNorm scale: the chain ends at Div. */
static void test_layernorm_chain(void **state)
{
	static const char *const trainable[] = {"^ln\\.g$", "^ln\\.b$",
						"^h\\.w$", "^logits\\.w$"};
	G b = start();
	int h = linear(&b, "h", b.x, 8), t[9];
	const char *names[] = {"ln.mean", "ln.xc", "ln.sq", "ln.var", "ln.ve",
			       "ln.std", "ln.xn", "ln.sc", "ln"};
	const bool row[] = {1, 0, 0, 1, 1, 1, 0, 0, 0};
	int g = gb_tensor(b.g, "ln.g", AR_TK_WEIGHT, 8, 0, 0, 0);
	int bias = gb_tensor(b.g, "ln.b", AR_TK_WEIGHT, 8, 0, 0, 0);
	ArTrainSpec per_op = plain;
	ln_variance(&b, h, t, names, row);
	op(&b, "Add", t[3], scalar(&b, "eps", 1e-5f), t[4]);
	op(&b, "Sqrt", t[4], -1, t[5]);
	op(&b, "Div", t[1], t[5], t[6]);
	op(&b, "Mul", t[6], g, t[7]);
	op(&b, "Add", t[7], bias, t[8]);
	finish(&b, linear(&b, "logits", t[8], 10));
	expect_saved(b.g, &plain, "x h ln.mean ln.std ln label loss.log_prob");
	assert_int_equal(count_steps(b.g, "LayerNormalizationGrad"), 1);
	per_op.grad_patterns = false;
	expect_saved(b.g, &per_op,
		     "x ln.xc ln.std ln.xn ln label loss.log_prob");
	/* A [4, 8] "scale": LayerNorm without affine part, then Mul, Add.
	 * A whole table multiplying an activation is taken for a buffer
	 * (buffers.c) unless --trainable names it, as here. */
	b.g->tensors[g].dims[0] = 4;
	b.g->tensors[g].dims[1] = 8;
	b.g->tensors[g].rank = 2;
	ar_tensor_set_bytes(&b.g->tensors[g], NULL);
	expect_saved(b.g, &plain, "x h ln.mean ln.std ln label loss.log_prob");
	per_op = plain;
	per_op.trainable = trainable;
	per_op.ntrainable = 4;
	expect_saved(b.g, &per_op,
		     "x h ln.mean ln.std ln.xn ln label loss.log_prob");
	ar_graph_free(b.g);
}

/* LayerNorm with eps after the square root, times the reciprocal, a
 * weight and no bias: LayerNorm's gradient from x and the weight, keeping
 * x, the mean and 1/(std + eps), float in a bf16 step. */
static void test_layernorm_forms(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8), t[9];
	const char *names[] = {"ln.mean", "ln.xc", "ln.sq", "ln.var",
			       "ln.std", "ln.se", "ln.inv", "ln.xn", "ln"};
	const bool row[] = {1, 0, 0, 1, 1, 1, 1, 0, 0};
	int g = gb_tensor(b.g, "ln.g", AR_TK_WEIGHT, 8, 0, 0, 0);
	ArTrainSpec bf16 = plain;
	ArTrainModel *m;
	ln_variance(&b, h, t, names, row);
	op(&b, "Sqrt", t[3], -1, t[4]);
	op(&b, "Add", t[4], scalar(&b, "eps", 1e-6f), t[5]);
	op(&b, "Reciprocal", t[5], -1, t[6]);
	op(&b, "Mul", t[6], t[1], t[7]);
	op(&b, "Mul", g, t[7], t[8]);
	finish(&b, linear(&b, "logits", t[8], 10));
	expect_saved(b.g, &plain, "x h ln.mean ln.inv ln label loss.log_prob");
	assert_int_equal(count_steps(b.g, "LayerNormalizationGrad"), 1);
	m = model(b.g, &plain);
	assert_int_equal(m->mem.parameter_count, 64 + 8 + 80);
	ar_train_model_free(m);
	/* In bf16 the statistics stay float, as LayerNormalization's. */
	bf16.precision = AR_PREC_BF16;
	m = model(b.g, &bf16);
	for (int i = 0; i < m->base->ntensors; i++) {
		const ArTensor *x = &m->base->tensors[i];
		bool stat = !strcmp(x->name, "ln.mean") ||
			    !strcmp(x->name, "ln.inv");
		if (stat || !strcmp(x->name, "ln.xn")) {
			assert_int_equal(x->dtype, stat ? AR_DT_FLOAT :
					 AR_DT_BFLOAT16);
			assert_int_equal(x->bytes, stat ? 16 : 64);
		}
	}
	ar_train_model_free(m);
	ar_graph_free(b.g);
}

/* The normalised x also read past the chain: LayerNorm ends at the Div
 * (its weight's Mul keeps x_n, as the graph needs x_n anyway). */
static void test_layernorm_xn_shared(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8), t[9], sum;
	const char *names[] = {"ln.mean", "ln.xc", "ln.sq", "ln.var", "ln.ve",
			       "ln.std", "ln.xn", "ln.sc", "ln"};
	const bool row[] = {1, 0, 0, 1, 1, 1, 0, 0, 0};
	int g = gb_tensor(b.g, "ln.g", AR_TK_WEIGHT, 8, 0, 0, 0);
	ln_variance(&b, h, t, names, row);
	op(&b, "Add", t[3], scalar(&b, "eps", 1e-5f), t[4]);
	op(&b, "Sqrt", t[4], -1, t[5]);
	op(&b, "Div", t[1], t[5], t[6]);
	op(&b, "Mul", t[6], g, t[7]);
	op(&b, "Add", t[7], t[6], t[8]);
	sum = t2(&b, "sum", AR_TK_ACTIVATION, 4, 8);
	op(&b, "Add", t[8], h, sum);
	finish(&b, linear(&b, "logits", sum, 10));
	expect_saved(b.g, &plain,
		     "x h ln.mean ln.std ln.xn sum label loss.log_prob");
	assert_int_equal(count_steps(b.g, "LayerNormalizationGrad"), 1);
	ar_graph_free(b.g);
}

/* SiLU as torch exports it, Mul(x, Sigmoid(x)): Swish's gradient, reading
 * x alone (torch's silu_backward); per op, the sigmoid too. */
static void test_silu_chain(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8);
	int s = t2(&b, "sig", AR_TK_ACTIVATION, 4, 8);
	int y = t2(&b, "silu", AR_TK_ACTIVATION, 4, 8);
	ArTrainSpec per_op = plain;
	op(&b, "Sigmoid", h, -1, s);
	op(&b, "Mul", h, s, y);
	finish(&b, linear(&b, "logits", y, 10));
	expect_saved(b.g, &plain, "x h silu label loss.log_prob");
	assert_int_equal(count_steps(b.g, "SwishGrad"), 1);
	per_op.grad_patterns = false;
	expect_saved(b.g, &per_op, "x h sig silu label loss.log_prob");
	ar_graph_free(b.g);
}

/* torch.rsqrt as torch exports it, Div(1, Sqrt(v)): one RsqrtGrad reading
 * its result, as torch's RsqrtBackward0; per op, the square root too. */
static void test_rsqrt_chain(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8);
	int s = t2(&b, "rms", AR_TK_ACTIVATION, 4, 8);
	int r = t2(&b, "inv", AR_TK_ACTIVATION, 4, 8);
	ArTrainSpec per_op = plain;
	op(&b, "Sqrt", h, -1, s);
	op(&b, "Div", scalar(&b, "one", 1.0f), s, r);
	finish(&b, linear(&b, "logits", r, 10));
	expect_saved(b.g, &plain, "x inv label loss.log_prob");
	assert_int_equal(count_steps(b.g, "RsqrtGrad"), 1);
	per_op.grad_patterns = false;
	expect_saved(b.g, &per_op, "x rms inv label loss.log_prob");
	ar_graph_free(b.g);
}

/* nn.GELU(approximate='tanh') as torch exports it, the cube as
 * Mul(x, Mul(x, x)): one GeluGrad reading x; per op, x^2, tanh and
 * 1 + tanh too. */
static void test_gelu_tanh_chain(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8), t[9];
	const char *names[] = {"g.sq", "g.cube", "g.kc", "g.in", "g.bi",
			       "g.tanh", "g.t1", "g.xt", "g"};
	ArTrainSpec per_op = plain;
	for (int i = 0; i < 9; i++)
		t[i] = t2(&b, names[i], AR_TK_ACTIVATION, 4, 8);
	op(&b, "Mul", h, h, t[0]);
	op(&b, "Mul", h, t[0], t[1]);
	op(&b, "Mul", scalar(&b, "kappa", 0.044715f), t[1], t[2]);
	op(&b, "Add", h, t[2], t[3]);
	op(&b, "Mul", scalar(&b, "beta", 0.7978846f), t[3], t[4]);
	op(&b, "Tanh", t[4], -1, t[5]);
	op(&b, "Add", scalar(&b, "one", 1.0f), t[5], t[6]);
	op(&b, "Mul", h, t[6], t[7]);
	op(&b, "Mul", scalar(&b, "half", 0.5f), t[7], t[8]);
	finish(&b, linear(&b, "logits", t[8], 10));
	expect_saved(b.g, &plain, "x h g label loss.log_prob");
	assert_int_equal(count_steps(b.g, "GeluGrad"), 1);
	per_op.grad_patterns = false;
	expect_saved(b.g, &per_op, "x h g.sq g.tanh g.t1 g label loss.log_prob");
	ar_graph_free(b.g);
}

/* Split: one backward step takes the pieces' gradients; Mul of two pieces
 * keeps both. */
static void test_split(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 24), p[3], n, y, z;
	const char *names[] = {"q", "k", "v"};
	ArTrainModel *m;
	ArGraph *step;
	for (int i = 0; i < 3; i++)
		p[i] = t2(&b, names[i], AR_TK_ACTIVATION, 4, 8);
	n = ar_graph_add_node(b.g, "split", "Split", "");
	ar_node_set_io(&b.g->nodes[n], &h, 1, p, 3);
	b.g->nodes[n].opset = 13;
	for (int i = 0; i < 3; i++)
		b.g->tensors[p[i]].producer = n;
	y = t2(&b, "qk", AR_TK_ACTIVATION, 4, 8);
	op(&b, "Mul", p[0], p[1], y);
	z = t2(&b, "s", AR_TK_ACTIVATION, 4, 8);
	op(&b, "Add", y, p[2], z);
	finish(&b, linear(&b, "logits", z, 10));
	/* h's weight is [8, 24]: linear() sized it by the output. */
	expect_saved(b.g, &plain, "x q k s label loss.log_prob");
	m = model(b.g, &plain);
	step = ar_train_graph(m, NULL);
	for (int i = 0; i < step->nnodes; i++)
		if (!strcmp(step->nodes[i].op, "SplitGrad")) {
			assert_int_equal(step->nodes[i].ninputs, 3);
			assert_string_equal(step->tensors[step->nodes[i]
					    .inputs[2]].name, "v.grad");
		}
	ar_graph_free(step);
	ar_train_model_free(m);
	ar_graph_free(b.g);
}

/* LayerNorm's statistics and Dropout's mask are tied to the node's first
 * output: no candidate of their own, and under every policy recomputed
 * exactly when it is (sqrt used to count them as activations, which on
 * DenseNet-121 kept the BatchNorm statistics and freed their outputs). */
static void test_ties(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8);
	int y = t2(&b, "ln", AR_TK_ACTIVATION, 4, 8);
	int d = t2(&b, "d", AR_TK_ACTIVATION, 4, 8);
	int in[3] = {h, gb_tensor(b.g, "ln.g", AR_TK_WEIGHT, 8, 0, 0, 0),
		     gb_tensor(b.g, "ln.b", AR_TK_WEIGHT, 8, 0, 0, 0)};
	ArTrainModel *m;
	gb_node(b.g, "LayerNormalization", in, 3, y);
	op(&b, "Dropout", y, -1, d);
	finish(&b, linear(&b, "logits", d, 10));
	m = model(b.g, &plain);
	/* h, ln, d: the statistics and the mask are no candidates, nor the
	 * logits (the loss keeps its log-probabilities). */
	assert_int_equal(m->ncand, 3);
	for (int t = 0; t < m->base->ntensors; t++) {
		const char *n = m->base->tensors[t].name;
		if (strstr(n, "ln.mean") || strstr(n, "ln.inv_std"))
			assert_int_equal(m->lead[t], y);
		if (strstr(n, "d.mask"))
			assert_int_equal(m->lead[t], d);
	}
	for (ArCkptPolicy pol = AR_CKPT_NONE; pol <= AR_CKPT_SQRT; pol++) {
		bool *res = calloc((size_t)m->base->ntensors, sizeof *res);
		ArGraph *step;
		bool ln_redo = false, stats_redo = false;
		bool d_redo = false, mask_redo = false;
		ar_ckpt_select(m, pol, res);
		step = ar_train_graph(m, res);
		for (int t = 0; t < step->ntensors; t++) {
			const char *n = step->tensors[t].name;
			ln_redo |= !strcmp(n, "ln.recompute");
			stats_redo |= !strcmp(n, "ln.mean.recompute");
			d_redo |= !strcmp(n, "d.recompute");
			mask_redo |= !strcmp(n, "d.mask.recompute");
		}
		assert_int_equal(ln_redo, !res[y]);
		assert_int_equal(stats_redo, ln_redo);
		assert_int_equal(d_redo, !res[d]);
		assert_int_equal(mask_redo, d_redo);
		ar_graph_free(step);
		free(res);
	}
	ar_train_model_free(m);
	ar_graph_free(b.g);
}

/* Dropout: its bool mask, one byte an element. */
static void test_dropout_mask(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8);
	int y = t2(&b, "d", AR_TK_ACTIVATION, 4, 8);
	ArTrainModel *m;
	char got[256];
	int n = op(&b, "Dropout", h, -1, y), mk;
	finish(&b, linear(&b, "logits", y, 10));
	m = model(b.g, &plain);
	saved_names(m, got, sizeof got);
	assert_string_equal(got, "x d label d.mask loss.log_prob");
	assert_int_equal(m->base->tensors[ar_graph_find(m->base, "d.mask")]
			 .bytes, 32);
	ar_train_model_free(m);
	/* Dropout-7 types its mask like Y (float32 here): still one byte. */
	mk = t2(&b, "d.mask7", AR_TK_ACTIVATION, 4, 8);
	ar_node_set_io(&b.g->nodes[n], &h, 1, (int[]){y, mk}, 2);
	b.g->nodes[n].opset = 7;
	b.g->tensors[mk].producer = n;
	m = model(b.g, &plain);
	assert_true(m->saved[mk]);
	assert_int_equal(m->base->tensors[mk].dtype, AR_DT_BOOL);
	assert_int_equal(m->base->tensors[mk].bytes, 32);
	ar_train_model_free(m);
	ar_graph_free(b.g);
}

/* torch's nn.Linear on 3-d input: MatMul(x, Transpose(W)), the Transpose
 * folded into a constant W^T.  W^T is the parameter (W, read by no step,
 * is not stored), nothing is kept for it, and --freeze W freezes it. */
static void test_folded_transpose(void **state)
{
	G b = start();
	int w = t2(&b, "fc.weight", AR_TK_WEIGHT, 10, 8);
	int wt = t2(&b, "fc.wT", AR_TK_CONSTANT, 8, 10);
	int y = t2(&b, "logits", AR_TK_ACTIVATION, 4, 10);
	int h = linear(&b, "h", b.x, 8);
	static const char *const fc[] = {"^fc\\.weight$"};
	ArTrainSpec frozen = plain;
	ArTrainModel *m;
	op(&b, "Transpose", w, -1, wt);
	op(&b, "MatMul", h, wt, y);
	finish(&b, y);
	m = model(b.g, &plain);
	assert_true(m->param[wt] && !m->param[w]);
	assert_int_equal(m->mem.parameter_bytes, 4 * (64 + 80));
	assert_int_equal(m->mem.constant_bytes, 0);
	ar_train_model_free(m);
	expect_saved(b.g, &plain, "x h label loss.log_prob");
	frozen.freeze = fc;
	frozen.nfreeze = 1;
	m = model(b.g, &frozen);
	assert_true(m->frozen[wt] && !m->param[wt] && !m->grad[wt]);
	assert_int_equal(m->mem.frozen_bytes, 320);
	assert_int_equal(m->mem.state_bytes, 0);
	ar_train_model_free(m);
	ar_graph_free(b.g);
}

/* --trainable and --freeze: frozen layers get no gradient and their ops
 * keep nothing when no input of theirs needs a gradient. */
static void test_freeze(void **state)
{
	G b = start();
	int h1 = linear(&b, "l1", b.x, 8);
	int r = t2(&b, "r1", AR_TK_ACTIVATION, 4, 8);
	int h2, y;
	static const char *const last[] = {"^logits"};
	static const char *const l1[] = {"l1", "logits"};
	static const char *const typo[] = {"nope"};
	static const char *const bad[] = {"("};
	static const char *const all[] = {"."};
	ArTrainSpec s = plain;
	ArTrainModel *m;
	ArError err = {0};
	op(&b, "Relu", h1, -1, r);
	h2 = linear(&b, "l2", r, 8);
	y = linear(&b, "logits", h2, 10);
	finish(&b, y);
	s.trainable = last;
	s.ntrainable = 1;
	/* Only the head trains: it keeps its input, nothing else is kept. */
	expect_saved(b.g, &s, "l2 label loss.log_prob");
	m = model(b.g, &s);
	assert_int_equal(m->mem.parameter_count, 80);
	assert_int_equal(m->mem.frozen_bytes, 2 * 256);
	ar_train_model_free(m);
	/* --freeze wins over --trainable: l1 alone trains; the frozen head
	 * passes the gradient on through its weight. */
	s.trainable = l1;
	s.ntrainable = 2;
	s.freeze = last;
	s.nfreeze = 1;
	expect_saved(b.g, &s, "x r1 label loss.log_prob");
	s.freeze = typo;
	assert_int_equal(ar_train_model(b.g, &s, &m, &err), AR_EXIT_USAGE);
	assert_string_equal(err.msg, "--freeze 'nope' matches no parameter");
	s.freeze = bad;
	assert_int_equal(ar_train_model(b.g, &s, &m, &err), AR_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "is not a regular expression"));
	/* Everything frozen: the option leaves nothing to train (a usage
	 * error naming it, not a model error). */
	s.freeze = all;
	s.ntrainable = 0;
	assert_int_equal(ar_train_model(b.g, &s, &m, &err), AR_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "--freeze leaves none of the model's"));
	ar_graph_free(b.g);
}

/* Scalars, integer tensors and constants computed from other constants
 * by arithmetic are no parameters. */
static void test_not_params(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8);
	int c = t2(&b, "bias2", AR_TK_CONSTANT, 4, 8);
	int y = t2(&b, "y", AR_TK_ACTIVATION, 4, 8);
	int z = t2(&b, "z", AR_TK_ACTIVATION, 4, 8);
	ArTrainModel *m;
	/* bias2 = table * 2 (folded): a mask bias, not a weight. */
	op(&b, "Mul", t2(&b, "table", AR_TK_WEIGHT, 4, 8),
	   scalar(&b, "two", 2.0f), c);
	op(&b, "Add", h, c, y);
	op(&b, "Mul", y, scalar(&b, "s", 3.0f), z);
	finish(&b, linear(&b, "logits", z, 10));
	m = model(b.g, &plain);
	assert_int_equal(m->mem.parameter_count, 64 + 80);
	assert_false(m->param[c]);
	/* Read by a step: counted as a constant (with the two scalars? no:
	 * "two" is read by the folded Mul only). */
	assert_int_equal(m->mem.constant_bytes, 128 + 4);
	ar_train_model_free(m);
	ar_graph_free(b.g);
}

/* The bill per precision, Adam: bytes per parameter 4+4+8 (fp32),
 * 2+2+4 (bf16), 2+2+4+8 mixed (ZeRO's 16 with the master copy). */
static void test_precision(void **state)
{
	static const struct {
		ArPrecision p;
		int64_t param, master, state, act;
	} cases[] = {
		{AR_PREC_MODEL, 4, 0, 8, 4},
		{AR_PREC_FP32, 4, 0, 8, 4},
		{AR_PREC_BF16, 2, 0, 4, 2},
		{AR_PREC_FP16, 2, 0, 4, 2},
		/* the loss reads an fp32 copy of the 16-bit logits
		 * (--loss-dtype auto) */
		{AR_PREC_MIXED_FP16, 2, 4, 8, 4},
		{AR_PREC_MIXED_BF16, 2, 4, 8, 4},
		/* autocast: fp32 parameters, no master copy, the loss reads
		 * an fp32 copy of the logits */
		{AR_PREC_AMP_FP16, 4, 0, 8, 4},
		{AR_PREC_AMP_BF16, 4, 0, 8, 4},
	};
	G b = start();
	int h = linear(&b, "h", b.x, 8);
	finish(&b, linear(&b, "logits", h, 10));
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ArTrainOptions o;
		ArTrainResult r;
		ArError err = {0};
		int64_t n = 64 + 80;
		memset(&o, 0, sizeof o);
		ar_plan_options_default(&o.plan);
		o.spec.optimizer = AR_OPTIM_ADAM;
		o.spec.precision = cases[i].p;
		if (ar_train_plan(b.g, &o, &r, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(r.bill.parameter_bytes, n * cases[i].param);
		assert_int_equal(r.bill.gradient_bytes, n * cases[i].param);
		assert_int_equal(r.bill.master_weight_bytes,
				 n * cases[i].master);
		assert_int_equal(r.bill.optimizer_state_bytes,
				 n * cases[i].state);
		assert_int_equal(r.bill.logits_bytes, 40 * cases[i].act);
		/* Its log-probabilities, in the format it computes in. */
		assert_int_equal(r.bill.loss_kept_bytes, 40 * cases[i].act);
		/* The persistent parts are the step graph's weights. */
		assert_int_equal(r.plan->weights_bytes,
				 r.bill.total_bytes - r.bill.arena_bytes);
		assert_int_equal(ar_poison_run(r.graph, r.plan, &err), 0);
		ar_train_result_free(&r);
	}
	ar_graph_free(b.g);
}

/* amp-bf16 types each op as torch.autocast: a MatMul in bf16 reading a
 * cast of its input and one cached cast of its weight, Softmax in fp32
 * (its own cast copy of the bf16 input, saved by nobody), an Add of bf16
 * and fp32 promoted to fp32, a bf16 tensor times a 0-d scalar still bf16.
 * What the backward steps keep is the cast copies; the parameters stay
 * fp32 and the bill names the weight copies. */
static void test_autocast(void **state)
{
	ArTrainSpec amp = plain;
	G b = start();
	int h = linear(&b, "h", b.x, 8);
	int s = t2(&b, "s", AR_TK_ACTIVATION, 4, 8);
	int r = t2(&b, "r", AR_TK_ACTIVATION, 4, 8);
	int z = t2(&b, "z", AR_TK_ACTIVATION, 4, 8);
	ArTrainModel *m;
	ArError err = {0};
	char got[256];
	(void)state;
	op(&b, "Softmax", h, -1, s);
	op(&b, "Add", s, b.x, r);
	op(&b, "Mul", r, scalar(&b, "half", 0.5f), z);
	finish(&b, linear(&b, "logits", z, 10));
	amp.precision = AR_PREC_AMP_BF16;
	m = model(b.g, &amp);
	assert_int_equal(m->base->tensors[h].dtype, AR_DT_BFLOAT16);
	assert_int_equal(m->base->tensors[s].dtype, AR_DT_FLOAT);
	assert_int_equal(m->base->tensors[r].dtype, AR_DT_FLOAT);
	assert_int_equal(m->base->tensors[z].dtype, AR_DT_FLOAT);
	assert_int_equal(m->base->tensors[ar_graph_find(m->base, "h.w")].dtype,
			 AR_DT_FLOAT);
	saved_names(m, got, sizeof got);
	/* h.w's copy is made (the bill counts it) but kept by nobody: x
	 * gets no gradient, so the product's backward needs no weight. */
	assert_string_equal(got, "s x.bf16 z.bf16 logits.w.bf16 label "
			    "loss.log_prob");
	assert_int_equal(m->mem.autocast_copy_bytes, 2 * (64 + 80));
	assert_int_equal(m->mem.gradient_bytes, 4 * (64 + 80));
	assert_int_equal(m->mem.master_bytes, 0);
	ar_train_model_free(m);
	ar_graph_free(b.g);

	/* bf16 + bf16 * 0-d fp32 stays bf16 (a Python number does not
	 * widen a tensor); a model without float activations is refused. */
	b = start();
	h = linear(&b, "h", b.x, 8);
	z = t2(&b, "z", AR_TK_ACTIVATION, 4, 8);
	op(&b, "Mul", h, scalar(&b, "half", 0.5f), z);
	finish(&b, linear(&b, "logits", z, 10));
	m = model(b.g, &amp);
	assert_int_equal(m->base->tensors[z].dtype, AR_DT_BFLOAT16);
	ar_train_model_free(m);
	/* --loss-chunk finds the head through the fp32 cast of the logits
	 * and the weight's cached copy. */
	amp.loss_chunks = 2;
	m = model(b.g, &amp);
	assert_true(m->head >= 0);
	assert_int_equal(m->mem.logits_bytes, 2 * 10 * 4);
	amp.loss_chunks = 0;
	ar_train_model_free(m);
	ar_graph_free(b.g);

	b = start();
	b.g->tensors[b.x].dtype = AR_DT_INT64;
	z = t2(&b, "z", AR_TK_ACTIVATION, 4, 8);
	b.g->tensors[z].dtype = AR_DT_INT64;
	op(&b, "Neg", b.x, -1, z);
	finish(&b, z);
	assert_int_equal(ar_train_model(b.g, &amp, &m, &err), AR_EXIT_MODEL);
	assert_non_null(strstr(err.msg, "amp-bf16"));
	ar_graph_free(b.g);
}

/* A model with its own loss (SoftmaxCrossEntropyLoss on its logits and
 * its labels): trained on it, no label added. */
static void test_own_loss(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8);
	int y = linear(&b, "scores", h, 10);
	int lab = ar_graph_add_tensor(b.g, "labels");
	int loss = ar_graph_add_tensor(b.g, "loss"), in[2] = {y, lab};
	int ins[2] = {b.x, lab};
	ArTrainModel *m;
	char got[256];
	b.g->tensors[lab].dtype = AR_DT_INT64;
	b.g->tensors[lab].rank = 1;
	b.g->tensors[lab].dims[0] = 4;
	b.g->tensors[lab].kind = AR_TK_INPUT;
	ar_tensor_set_bytes(&b.g->tensors[lab], NULL);
	b.g->tensors[loss].dtype = AR_DT_FLOAT;
	b.g->tensors[loss].rank = 0;
	b.g->tensors[loss].bytes = 4;
	b.g->tensors[loss].kind = AR_TK_OUTPUT;
	gb_node(b.g, "SoftmaxCrossEntropyLoss", in, 2, loss);
	gb_io(b.g, ins, 2, &loss, 1);
	m = model(b.g, &plain);
	assert_true(m->own_loss);
	assert_int_equal(m->base->ninputs, 2);
	saved_names(m, got, sizeof got);
	/* Its log-probabilities, not its scores (train_outputs.c). */
	assert_string_equal(got, "x h labels loss.log_prob");
	ar_train_model_free(m);
	ar_graph_free(b.g);
}

/* --loss-chunk: one chunk's logits at a time, the head's gradients added
 * chunk by chunk in place. */
static void test_loss_chunks(void **state)
{
	G b = start();
	int h = linear(&b, "h", b.x, 8);
	ArTrainOptions o;
	ArTrainResult whole, r;
	ArError err = {0};
	int chunks = 0;
	finish(&b, linear(&b, "logits", h, 1000));
	memset(&o, 0, sizeof o);
	ar_plan_options_default(&o.plan);
	assert_int_equal(ar_train_plan(b.g, &o, &whole, &err), 0);
	o.spec.loss_chunks = 4;
	if (ar_train_plan(b.g, &o, &r, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(r.bill.logits_bytes, 4000);
	assert_int_equal(r.bill.logits_grad_bytes, 4000);
	assert_int_equal(r.bill.loss_chunks, 4);
	assert_int_equal(r.bill.parameter_bytes, whole.bill.parameter_bytes);
	assert_true(r.plan->arena_bytes < whole.plan->arena_bytes);
	for (int i = 0; i < r.graph->nnodes; i++) {
		const ArNode *n = &r.graph->nodes[i];
		chunks += !strcmp(n->op, "LogitsChunk");
		assert_true(strcmp(n->op, "MatMul") ||
			    strcmp(n->name, "logits"));
	}
	assert_int_equal(chunks, 4);
	assert_int_equal(ar_poison_run(r.graph, r.plan, &err), 0);
	ar_train_result_free(&r);
	ar_train_result_free(&whole);
	o.spec.loss_chunks = 5;         /* 4 rows */
	assert_int_equal(ar_train_plan(b.g, &o, &r, &err), AR_EXIT_USAGE);
	ar_train_result_free(&r);
	ar_graph_free(b.g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scale_keeps_nothing),
		cmocka_unit_test(test_div),
		cmocka_unit_test(test_where),
		cmocka_unit_test(test_unary),
		cmocka_unit_test(test_gather),
		cmocka_unit_test(test_layernorm),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_batchnorm),
		cmocka_unit_test(test_gelu_chain),
		cmocka_unit_test(test_layernorm_chain),
		cmocka_unit_test(test_layernorm_forms),
		cmocka_unit_test(test_layernorm_xn_shared),
		cmocka_unit_test(test_silu_chain),
		cmocka_unit_test(test_rsqrt_chain),
		cmocka_unit_test(test_gelu_tanh_chain),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_dropout_mask),
		cmocka_unit_test(test_folded_transpose),
		cmocka_unit_test(test_freeze),
		cmocka_unit_test(test_not_params),
		cmocka_unit_test(test_precision),
		cmocka_unit_test(test_autocast),
		cmocka_unit_test(test_own_loss),
		cmocka_unit_test(test_loss_chunks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
