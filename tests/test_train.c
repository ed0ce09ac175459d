/*
 * test_train.c — training-step planning: the memory bill of LeNet by hand,
 * the validity of every policy's schedule (verifier, poison executor, no
 * backward step reading a freed activation), optimal against sqrt, and
 * optimal (the segment DP on chains, its brute force on small DAGs)
 * against a brute force over all checkpoint subsets, written here, on
 * small hand-made chains and DAGs.
 */
#include "testutil.h"

#include "graph.h"
#include "infer.h"
#include "load.h"
#include "plan.h"
#include "checkpoint.h"

static ArGraph *load_lenet(int64_t batch)
{
	ArLoadOptions lo = {.dim_default = -1, .batch = batch};
	ArGraph *g = NULL;
	ArError err = {0};
	if (ar_load_onnx("testdata/lenet.onnx", &lo, &g, &err) ||
	    ar_infer(g, NULL, &err))
		fail_msg("lenet: %s", err.msg);
	return g;
}

static const ArTrainSpec sgd = {.optimizer = AR_OPTIM_SGD};

static void train_opts(ArTrainOptions *o, ArOptimizer opt, ArCkptPolicy pol,
		       int64_t budget)
{
	memset(o, 0, sizeof *o);
	ar_plan_options_default(&o->plan);
	o->spec.optimizer = opt;
	o->policy = pol;
	o->budget = budget;
}

/*
 * Hand-computed: parameters 431,080 floats; FLOPs (multiply-add = 2):
 * conv1 64*20*24*24 * 25*2 + bias, relu1, pool1 (2x2 window), conv2
 * 64*50*8*8 * 500*2 + bias, relu2, pool2, fc1 64*500 * 800*2 + bias,
 * relu3, fc2 64*10 * 500*2 + bias, loss 3 per logit.
 */
static void test_lenet_bill(void **state)
{
	ArGraph *g = load_lenet(64);
	ArTrainOptions o;
	ArTrainResult r;
	ArError err = {0};
	int64_t fwd = (737280LL * 50 + 737280) + 737280 + 184320 * 4 +
		      (204800LL * 1000 + 204800) + 204800 + 51200 * 4 +
		      (32000LL * 1600 + 32000) + 32000 + (640LL * 1000 + 640) +
		      3 * 640;

	train_opts(&o, AR_OPTIM_MOMENTUM, AR_CKPT_NONE, 0);
	if (ar_train_plan(g, &o, &r, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(r.bill.parameter_bytes, 1724320);
	assert_int_equal(r.bill.gradient_bytes, 1724320);
	assert_int_equal(r.bill.optimizer_state_bytes, 1724320);
	/* The one constant a step reads: the Reshape's int64 [2] target. */
	assert_int_equal(r.bill.constant_bytes, 16);
	assert_int_equal(r.bill.total_bytes,
			 3 * 1724320 + 16 + r.plan->arena_bytes);
	/* The persistent parts are the step's weights, W.next not again. */
	assert_int_equal(r.plan->weights_bytes, 3 * 1724320 + 16);
	assert_int_equal(r.bill.parameter_count, 431080);
	assert_int_equal(r.bill.forward_flops, fwd);
	assert_int_equal(r.bill.recompute_flops, 0);
	/* conv1, relu1, pool1, conv2, relu2, pool2, flat, fc1, relu3 (the
	 * loss keeps its log-probabilities, not the logits) */
	assert_int_equal(r.bill.ncandidates, 9);
	assert_int_equal(r.bill.ncheckpoints, 9);
	/* The peak is pool1's gradient step (MaxPoolGrad): it reads relu1
	 * (737,280 floats, saved) and pool1 with pool1's gradient (184,320
	 * floats each) and writes relu1's gradient (737,280), with the input
	 * (50,176 floats) and the loss (4 bytes, 16 aligned) still live.
	 * ReluGrad after it runs in place, so no later step is larger, and
	 * no checkpointing can go below it. */
	assert_int_equal(r.plan->lower_bound,
			 4 * (2 * 737280 + 2 * 184320 + 50176) + 16);
	assert_true(r.plan->arena_bytes >= r.plan->lower_bound);
	assert_int_equal(ar_verify(r.graph, r.plan, &err), 0);
	assert_int_equal(ar_poison_run(r.graph, r.plan, &err), 0);
	ar_train_result_free(&r);

	train_opts(&o, AR_OPTIM_ADAM, AR_CKPT_NONE, 0);
	assert_int_equal(ar_train_plan(g, &o, &r, &err), 0);
	assert_int_equal(r.bill.optimizer_state_bytes, 2 * 1724320);
	ar_train_result_free(&r);
	train_opts(&o, AR_OPTIM_SGD, AR_CKPT_NONE, 0);
	assert_int_equal(ar_train_plan(g, &o, &r, &err), 0);
	assert_int_equal(r.bill.optimizer_state_bytes, 0);
	ar_train_result_free(&r);
	ar_graph_free(g);
}

/* Every backward step reads forward activations only if they stayed
 * resident; the plan passes the verifier and the poison executor. */
static void check_schedule(const ArTrainResult *r)
{
	const ArGraph *g = r->graph;
	int nbase = r->model->base->ntensors, nrec = 0, nbwd = 0, nupd = 0;
	ArError err = {0};
	for (int s = 0; s < r->plan->nsteps; s++) {
		const ArNode *n = &g->nodes[r->plan->steps[s]];
		nrec += n->phase == AR_PHASE_RECOMPUTE;
		nbwd += n->phase == AR_PHASE_BACKWARD;
		nupd += n->phase == AR_PHASE_UPDATE;
		if (n->phase != AR_PHASE_BACKWARD &&
		    n->phase != AR_PHASE_RECOMPUTE)
			continue;
		for (int j = 0; j < n->ninputs; j++) {
			int t = n->inputs[j];
			if (t >= 0 && t < nbase &&
			    g->tensors[t].kind == AR_TK_ACTIVATION &&
			    !ar_train_resident(r->model, r->resident, t))
				fail_msg("step '%s' reads '%s', which was freed",
					 n->name, g->tensors[t].name);
		}
	}
	assert_true(nbwd > 0);
	assert_int_equal(nrec > 0, r->bill.recompute_flops > 0);
	assert_int_equal(nupd, 8);
	if (ar_verify(g, r->plan, &err) || ar_poison_run(g, r->plan, &err))
		fail_msg("%s", err.msg);
}

static void test_policies_valid(void **state)
{
	ArGraph *g = load_lenet(8);
	ArTrainResult r, none;
	ArTrainOptions o;
	ArError err = {0};

	train_opts(&o, AR_OPTIM_SGD, AR_CKPT_NONE, 0);
	assert_int_equal(ar_train_plan(g, &o, &none, &err), 0);
	check_schedule(&none);
	for (ArCkptPolicy p = AR_CKPT_ALL; p <= AR_CKPT_SQRT; p++) {
		train_opts(&o, AR_OPTIM_SGD, p, 0);
		if (ar_train_plan(g, &o, &r, &err))
			fail_msg("%s: %s", ar_ckpt_policy_name(p), err.msg);
		check_schedule(&r);
		assert_true(r.bill.recompute_flops > 0);
		assert_true(r.bill.ncheckpoints < none.bill.ncheckpoints);
		ar_train_result_free(&r);
	}
	/* Its peak is the first layer's backward: nothing fits below it. */
	train_opts(&o, AR_OPTIM_SGD, AR_CKPT_OPTIMAL,
		   none.plan->arena_bytes * 9 / 10);
	assert_int_equal(ar_train_plan(g, &o, &r, &err), AR_EXIT_BUDGET);
	assert_int_equal(r.min_arena, none.plan->arena_bytes);
	assert_non_null(strstr(err.msg, "smallest reachable arena"));
	ar_train_result_free(&r);
	ar_train_result_free(&none);
	ar_graph_free(g);
}

static void test_optimal_beats_sqrt(void **state)
{
	ArGraph *g = load_lenet(16);
	ArTrainResult sq, opt;
	ArTrainOptions o;
	ArError err = {0};

	train_opts(&o, AR_OPTIM_SGD, AR_CKPT_SQRT, 0);
	assert_int_equal(ar_train_plan(g, &o, &sq, &err), 0);
	train_opts(&o, AR_OPTIM_SGD, AR_CKPT_OPTIMAL, sq.plan->arena_bytes);
	assert_int_equal(ar_train_plan(g, &o, &opt, &err), 0);
	assert_true(opt.bill.exact);
	assert_true(opt.plan->arena_bytes <= sq.plan->arena_bytes);
	assert_true(opt.bill.recompute_flops <= sq.bill.recompute_flops);
	ar_train_result_free(&sq);
	ar_train_result_free(&opt);
	ar_graph_free(g);
}

static int tensor(ArGraph *g, const char *name, ArTensorKind k, int64_t d0,
		  int64_t d1)
{
	int t = ar_graph_add_tensor(g, name);
	ArTensor *x = &g->tensors[t];
	x->dtype = AR_DT_FLOAT;
	x->rank = 2;
	x->dims[0] = d0;
	x->dims[1] = d1;
	x->bytes = 4 * d0 * d1;
	x->kind = k;
	return t;
}

static void node(ArGraph *g, const char *op, int a, int b, int out)
{
	int in[2] = {a, b};
	int n = ar_graph_add_node(g, g->tensors[out].name, op, "");
	ar_node_set_io(&g->nodes[n], in, b < 0 ? 1 : 2, &out, 1);
	g->tensors[out].producer = n;
}

/* MatMul/Relu layers of the given widths; with residual, layer i > 1 adds
 * its input back (widths equal), so activations have several readers. */
static ArGraph *net(const int64_t *w, int nlayers, bool residual)
{
	ArGraph *g = ar_graph_new("net");
	int x = tensor(g, "x", AR_TK_INPUT, 4, w[0]), cur = x;
	char name[32];
	for (int i = 1; i <= nlayers; i++) {
		int wt, h, r;
		snprintf(name, sizeof name, "w%d", i);
		wt = tensor(g, name, AR_TK_WEIGHT, w[i - 1], w[i]);
		snprintf(name, sizeof name, "h%d", i);
		h = tensor(g, name, AR_TK_ACTIVATION, 4, w[i]);
		node(g, "MatMul", cur, wt, h);
		if (i == nlayers) {
			cur = h;
			break;
		}
		snprintf(name, sizeof name, "r%d", i);
		r = tensor(g, name, AR_TK_ACTIVATION, 4, w[i]);
		node(g, "Relu", h, -1, r);
		if (residual && i > 1 && w[i] == w[i - 1]) {
			snprintf(name, sizeof name, "s%d", i);
			int s = tensor(g, name, AR_TK_ACTIVATION, 4, w[i]);
			node(g, "Add", r, cur, s);
			r = s;
		}
		cur = r;
	}
	g->tensors[cur].kind = AR_TK_OUTPUT;
	g->inputs = malloc(sizeof(int));
	g->inputs[0] = x;
	g->ninputs = 1;
	g->outputs = malloc(sizeof(int));
	g->outputs[0] = cur;
	g->noutputs = 1;
	return g;
}

/* nblocks residual blocks h' = h + Relu(h W) of width w, then a MatMul to
 * 8 classes: a chain of repeated blocks, each but the first (whose input
 * is the graph's: a1, r1, h1 are points) with two interior candidates
 * (the product and its Relu) between its points h_i. */
static ArGraph *blocks(int nblocks, int64_t w)
{
	ArGraph *g = ar_graph_new("blocks");
	int x = tensor(g, "x", AR_TK_INPUT, 4, w), h = x, y;
	char name[32];
	for (int i = 1; i <= nblocks + 1; i++) {
		int wt, a, r, s;
		snprintf(name, sizeof name, "w%d", i);
		wt = tensor(g, name, AR_TK_WEIGHT, w, i > nblocks ? 8 : w);
		snprintf(name, sizeof name, "a%d", i);
		a = tensor(g, name, AR_TK_ACTIVATION, 4, i > nblocks ? 8 : w);
		node(g, "MatMul", h, wt, a);
		if (i > nblocks) {
			h = a;
			break;
		}
		snprintf(name, sizeof name, "r%d", i);
		r = tensor(g, name, AR_TK_ACTIVATION, 4, w);
		node(g, "Relu", a, -1, r);
		snprintf(name, sizeof name, "h%d", i);
		s = tensor(g, name, AR_TK_ACTIVATION, 4, w);
		node(g, "Add", h, r, s);
		h = s;
	}
	y = h;
	g->tensors[y].kind = AR_TK_OUTPUT;
	g->inputs = malloc(sizeof(int));
	g->inputs[0] = x;
	g->ninputs = 1;
	g->outputs = malloc(sizeof(int));
	g->outputs[0] = y;
	g->noutputs = 1;
	return g;
}

/* Every subset of candidates, planned exactly as the search plans. */
typedef struct Brute {
	int n;
	int64_t *arena, *cost;
	int64_t lo, hi;         /* smallest and largest arena */
} Brute;

static void brute_force(const ArGraph *fwd, Brute *b)
{
	ArTrainModel *m;
	ArError err = {0};
	ArPlanOptions po;
	bool *res;

	assert_int_equal(ar_train_model(fwd, &sgd, &m, &err), 0);
	assert_true(m->ncand <= 12);
	ar_plan_options_default(&po);
	po.order = AR_ORDER_FILE;
	po.effort -= AR_CKPT_EVAL_DROP;
	res = calloc((size_t)m->base->ntensors, sizeof *res);
	b->n = 1 << m->ncand;
	b->arena = calloc((size_t)b->n, sizeof *b->arena);
	b->cost = calloc((size_t)b->n, sizeof *b->cost);
	b->lo = INT64_MAX;
	b->hi = 0;
	for (int mask = 0; mask < b->n; mask++) {
		ArGraph *g;
		ArPlan *p;
		for (int i = 0; i < m->ncand; i++)
			res[m->cand[i]] = mask >> i & 1;
		g = ar_train_graph(m, res);
		assert_int_equal(ar_plan(g, &po, &p, &err), 0);
		b->cost[mask] = ar_train_recompute_flops(m, res);
		b->arena[mask] = p->arena_bytes;
		if (p->arena_bytes < b->lo)
			b->lo = p->arena_bytes;
		if (p->arena_bytes > b->hi)
			b->hi = p->arena_bytes;
		ar_plan_free(p);
		ar_graph_free(g);
	}
	free(res);
	ar_train_model_free(m);
}

/* Least recompute of a subset whose plan fits budget; -1 if none fits. */
static int64_t brute_best(const Brute *b, int64_t budget)
{
	int64_t best = -1;
	for (int i = 0; i < b->n; i++)
		if (b->arena[i] <= budget && (best < 0 || b->cost[i] < best))
			best = b->cost[i];
	return best;
}

/* optimal (the DP on chains, brute force on small DAGs) against brute
 * force at nine budgets from below the smallest arena to the largest. */
static void compare_with_brute_force(const ArGraph *g)
{
	Brute bf;
	ArTrainOptions o;
	ArError err = {0};

	brute_force(g, &bf);
	assert_true(bf.lo < bf.hi);
	/* At sqrt's own arena, optimal recomputes no more than sqrt. */
	{
		ArTrainResult sq, opt;
		train_opts(&o, AR_OPTIM_SGD, AR_CKPT_SQRT, 0);
		assert_int_equal(ar_train_plan(g, &o, &sq, &err), 0);
		assert_true(sq.bill.recompute_flops > 0);
		train_opts(&o, AR_OPTIM_SGD, AR_CKPT_OPTIMAL,
			   sq.plan->arena_bytes);
		assert_int_equal(ar_train_plan(g, &o, &opt, &err), 0);
		assert_true(opt.bill.recompute_flops <= sq.bill.recompute_flops);
		ar_train_result_free(&sq);
		ar_train_result_free(&opt);
	}
	for (int k = 0; k <= 8; k++) {
		int64_t budget = bf.lo - 16 + (bf.hi - bf.lo + 16) * k / 8;
		int64_t want = brute_best(&bf, budget);
		ArTrainResult r;
		int rc;
		train_opts(&o, AR_OPTIM_SGD, AR_CKPT_OPTIMAL, budget);
		rc = ar_train_plan(g, &o, &r, &err);
		if (want < 0) {
			assert_int_equal(rc, AR_EXIT_BUDGET);
			assert_int_equal(r.min_arena, bf.lo);
		} else {
			if (rc)
				fail_msg("budget %lld: %s", (long long)budget,
					 err.msg);
			assert_true(r.bill.exact);
			assert_int_equal(r.bill.recompute_flops, want);
			assert_true(r.plan->arena_bytes <= budget);
			if (ar_poison_run(r.graph, r.plan, &err))
				fail_msg("%s", err.msg);
		}
		ar_train_result_free(&r);
	}
	free(bf.arena);
	free(bf.cost);
}

/* The chain view of g: its points and whether it is pure. */
static void check_chain(const ArGraph *g, bool pure, int points)
{
	ArTrainModel *m;
	ArChain *c;
	ArPlanOptions po;
	ArBudget work;
	ArError err = {0};
	assert_int_equal(ar_train_model(g, &sgd, &m, &err), 0);
	ar_plan_options_default(&po);
	ar_budget_init(&work, INT64_MAX, NULL);
	assert_int_equal(ar_chain_build(m, &po, &work, &c, &err), 0);
	assert_non_null(c);
	assert_int_equal(ar_chain_complete(c), pure);
	assert_int_equal(ar_chain_points(c), points);
	ar_chain_free(c);
	ar_train_model_free(m);
}

/* Two chains of 11 ops (MatMul, Relu), so 10 candidates (the last
 * product's output is read by the loss alone, which keeps its
 * log-probabilities instead), every one a point: the DP ranges over all
 * selections. */
static void test_dp_chain(void **state)
{
	static const int64_t w[] = {64, 256, 32, 512, 128, 128, 16};
	static const int64_t w2[] = {16, 384, 384, 64, 256, 512, 8};
	ArGraph *g = net(w, 6, false);
	check_chain(g, true, 10);
	compare_with_brute_force(g);
	ar_graph_free(g);
	g = net(w2, 6, false);
	check_chain(g, true, 10);
	compare_with_brute_force(g);
	ar_graph_free(g);
}

/* Residual adds: the block interiors are no points (h1, r1, s2, s3, h4,
 * r4 are; h5, the logits, no candidate), so brute force decides. */
static void test_brute_force_dag(void **state)
{
	static const int64_t w[] = {32, 128, 128, 128, 256, 16};
	ArGraph *g = net(w, 5, true);
	check_chain(g, true, 6);
	compare_with_brute_force(g);
	ar_graph_free(g);
}

/* A chain of three repeated blocks: the dynamic program over blocks,
 * each block's interior choices measured once for its type and reused,
 * is exact: it agrees with brute force over every selection at every
 * budget, and so is never worse than sqrt. */
static void test_dp_blocks(void **state)
{
	ArGraph *g = blocks(3, 64);
	check_chain(g, true, 5);
	compare_with_brute_force(g);
	ar_graph_free(g);
}

/* Every op without a rule on the gradient path is named, once each. */
static void test_missing_rule(void **state)
{
	static const int64_t w[] = {8, 8, 8, 8, 8};
	ArGraph *g = net(w, 4, false);
	ArTrainModel *m;
	ArError err = {0};
	/* MatMul Relu MatMul Relu MatMul Relu MatMul: three Relus become
	 * two kinds of op without a gradient rule. */
	for (int i = 1; i < 6; i += 2) {
		ar_node_set_op(g, &g->nodes[i], i == 3 ? "Hardmax" : "Cosh",
			       g->nodes[i].domain);
	}
	assert_int_equal(ar_train_model(g, &sgd, &m, &err),
			 AR_EXIT_MODEL);
	assert_string_equal(err.msg, "--train: no gradient rule for these "
			    "ops: Cosh (node 'r3'), Hardmax (node 'r2')");
	ar_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lenet_bill),
		cmocka_unit_test(test_policies_valid),
		cmocka_unit_test(test_optimal_beats_sqrt),
		cmocka_unit_test(test_dp_chain),
		cmocka_unit_test(test_brute_force_dag),
		cmocka_unit_test(test_dp_blocks),
		cmocka_unit_test(test_missing_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
