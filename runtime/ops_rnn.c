/*
 * ops_rnn.c — RNN, GRU and LSTM: directions, layouts, activations with
 * their alpha and beta, clip, sequence lengths, initial states,
 * peepholes.
 *
 * The kernel needs (gates + 2) x hidden_size floats of workspace: the
 * plan's (--scratch kernels, the default, reserves it in the arena for the
 * step, ops/scratch.c), so a firmware's stack holds none of it; a plan
 * made without it (--scratch none) gets a small buffer on this function's
 * stack, and a hidden size above RT_RNN_STACK_HIDDEN is refused then.
 */
#include <string.h>

#include "ops.h"

#define RT_RNN_STACK_HIDDEN 128

static const struct {
	const char *name;
	rt_unary fn;
	float alpha, beta;          /* defaults, as the ops of that name */
	int uses;                   /* 1: alpha, 2: beta, 3: both */
} acts[] = {
	{"Relu", RT_RELU, 0, 0, 0}, {"Tanh", RT_TANH, 0, 0, 0},
	{"Sigmoid", RT_SIGMOID, 0, 0, 0}, {"Affine", RT_AFFINE, 1, 0, 3},
	{"LeakyRelu", RT_LEAKYRELU, 0.01f, 0, 1},
	{"ThresholdedRelu", RT_THRESHOLDEDRELU, 1, 0, 1},
	{"ScaledTanh", RT_SCALEDTANH, 1, 1, 3},
	{"HardSigmoid", RT_HARDSIGMOID, 0.2f, 0.5f, 3}, {"Elu", RT_ELU, 1, 0, 1},
	{"Softsign", RT_SOFTSIGN, 0, 0, 0}, {"Softplus", RT_SOFTPLUS, 0, 0, 0},
};

/*
 * The activations attribute (n per direction, or n for every direction)
 * with activation_alpha / activation_beta consumed in order by the
 * functions that take them; defaults when absent.
 */
static int activations(Ctx *c, rt_rnn *p, int n)
{
	static const char *const dflt[3][3] = {{"Tanh"},
		{"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
	art_attr ab, alb, beb;
	const art_attr *a = ctx_attr(c, "activations", &ab);
	const art_attr *al = ctx_attr(c, "activation_alpha", &alb);
	const art_attr *be = ctx_attr(c, "activation_beta", &beb);
	int na = 0, nb = 0;

	if (a && (a->type != ART_ATTR_STRINGS ||
		  (a->count != n && a->count != n * p->dirs)))
		return ctx_fail(c, ART_E_WANTS_ACTIVATIONS_PER_DIRECTION,
		    ART_I(n));
	for (int d = 0; d < p->dirs; d++)
	for (int k = 0; k < n; k++) {
		const char *name = a ? a->strings[(d * n + k) % a->count] :
			dflt[p->kind][k];
		size_t i = 0;
		while (i < sizeof acts / sizeof acts[0] &&
		       strcmp(acts[i].name, name))
			i++;
		if (i == sizeof acts / sizeof acts[0])
			return ctx_fail(c, ART_E_UNKNOWN_ACTIVATION,
			    ART_S(name));
		p->act[d][k] = acts[i].fn;
		p->alpha[d][k] = acts[i].alpha;
		p->beta[d][k] = acts[i].beta;
		if ((acts[i].uses & 1) && al && al->type == ART_ATTR_FLOATS &&
		    na < al->count)
			p->alpha[d][k] = al->floats[na++];
		if ((acts[i].uses & 2) && be && be->type == ART_ATTR_FLOATS &&
		    nb < be->count)
			p->beta[d][k] = be->floats[nb++];
	}
	return 0;
}

/* Optional float32 output j; NULL when the plan does not compute it. */
static int maybe_out(Ctx *c, int j, const rt_shape *want, float **p)
{
	rt_shape s;
	*p = NULL;
	if (ctx_out(c, j) < 0 || ctx_tensor(c, ctx_out(c, j)).rank < 0)
		return 0;
	if (ctx_fout(c, j, p, &s))
		return -1;
	if (rt_numel(&s) != rt_numel(want))
		return ctx_fail(c, ART_E_OUTPUT_VALUES, ART_I(j),
				ART_I((long long)rt_numel(&s)),
				ART_I((long long)rt_numel(want)));
	return 0;
}

/* Optional float32 input j of exactly n values, else NULL. */
static int maybe_in(Ctx *c, int j, int64_t n, const float **p)
{
	rt_shape s;
	if (ctx_fin(c, j, 0, p, &s))
		return -1;
	if (*p && rt_numel(&s) != n)
		return ctx_fail(c, ART_E_INPUT_VALUES, ART_I(j),
				ART_I((long long)rt_numel(&s)),
				    ART_I((long long)n));
	return 0;
}

int op_rnn(Ctx *c)
{
	static const int ngates[] = {1, 3, 4}, nacts[] = {1, 2, 3};
	rt_rnn p;
	rt_shape xs, ws, ys, hs;
	rt_arr lens;
	const char *dir = ctx_attr_str(c, "direction", "forward");
	float stack[(4 + 2) * RT_RNN_STACK_HIDDEN], *work;
	int64_t G;

	memset(&p, 0, sizeof p);
	p.kind = !strcmp(c->s->op, "RNN") ? RT_RNN_CELL :
		 !strcmp(c->s->op, "GRU") ? RT_GRU_CELL : RT_LSTM_CELL;
	p.dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
	p.reverse = !strcmp(dir, "reverse");
	p.layout = (int)ctx_attr_int(c, "layout", 0);
	p.hidden = ctx_attr_int(c, "hidden_size", 0);
	p.clip = (float)ctx_attr_num(c, "clip", 0);
	p.linear_before_reset = (int)ctx_attr_int(c, "linear_before_reset", 0);
	if (strcmp(dir, "forward") && strcmp(dir, "reverse") && p.dirs == 1)
		return ctx_fail(c, ART_E_UNKNOWN_DIRECTION, ART_S(dir));
	if (ctx_attr_int(c, "input_forget", 0))
		return ctx_fail(c, ART_E_INPUT_FORGET_SUPPORTED);
	if (p.hidden < 1)
		return ctx_fail(c, ART_E_HIDDEN_SIZE,
		    ART_I((long long)p.hidden));
	G = ngates[p.kind] * p.hidden;
	work = ctx_scratch(c, (size_t)(ngates[p.kind] + 2) * (size_t)p.hidden *
			      sizeof(float));
	if (!work && p.hidden > RT_RNN_STACK_HIDDEN)
		return ctx_fail(c, ART_E_HIDDEN_SIZE_NEEDS_PLAN,
		    ART_I((long long)p.hidden), ART_I(RT_RNN_STACK_HIDDEN));
	if (!work)
		work = stack;
	if (ctx_fin(c, 0, 1, &p.x, &xs) || ctx_fin(c, 1, 1, &p.w, &ws) ||
	    activations(c, &p, nacts[p.kind]))
		return -1;
	if (xs.rank != 3 || ws.rank != 3 || ws.d[0] != p.dirs ||
	    ws.d[1] != G || ws.d[2] != xs.d[2])
		return ctx_fail(c, ART_E_X_W_HIDDEN_SIZE);
	p.seq = xs.d[p.layout ? 1 : 0];
	p.batch = xs.d[p.layout ? 0 : 1];
	p.input = xs.d[2];
	if (maybe_in(c, 2, p.dirs * G * p.hidden, &p.r))
		return -1;
	if (!p.r)
		return ctx_fail(c, ART_E_R_MISSING);
	if (maybe_in(c, 3, p.dirs * 2 * G, &p.b) || ctx_arg(c, 4, 0, &lens) ||
	    maybe_in(c, 5, p.dirs * p.batch * p.hidden, &p.h0))
		return -1;
	if (p.kind == RT_LSTM_CELL &&
	    (maybe_in(c, 6, p.dirs * p.batch * p.hidden, &p.c0) ||
	     maybe_in(c, 7, p.dirs * 3 * p.hidden, &p.p)))
		return -1;
	if (lens.p && (rt_is_float(lens.dt) || rt_numel(&lens.s) != p.batch))
		return ctx_fail(c, ART_E_SEQUENCE_LENS_WANTS_ONE);
	p.seq_lens = lens.p;
	p.seq_lens_dt = lens.dt;
	ys.rank = 4;
	ys.d[0] = p.seq, ys.d[1] = p.dirs, ys.d[2] = p.batch;
	ys.d[3] = p.hidden;
	hs.rank = 3;
	hs.d[0] = p.dirs, hs.d[1] = p.batch, hs.d[2] = p.hidden;
	if (maybe_out(c, 0, &ys, &p.y) || maybe_out(c, 1, &hs, &p.yh) ||
	    (p.kind == RT_LSTM_CELL && maybe_out(c, 2, &hs, &p.yc)))
		return -1;
	rt_rnn_apply(&p, work);
	return 0;
}
