/*
 * ops_loss.c — NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss:
 * reduction, ignore_index, class weights, and the log_prob output.
 */
#include <string.h>

#include "ops.h"

int op_loss(Ctx *c)
{
	static const char *const reds[] = {"none", "sum", "mean"};
	const float *x, *w;
	float *y;
	rt_shape xs, ys, ws;
	rt_arr t;
	int sce = !strcmp(c->s->op, "SoftmaxCrossEntropyLoss"), red = -1;
	const char *r = ctx_attr_str(c, "reduction", "mean");
	art_attr igb;
	const art_attr *ig = ctx_attr(c, "ignore_index", &igb);
	int64_t ignore = ig && ig->type == ART_ATTR_INT ? ig->ints[0] : 0;
	int64_t N, C, D = 1;

	for (int i = 0; i < 3; i++)
		if (!strcmp(r, reds[i]))
			red = i;
	if (red < 0)
		return ctx_fail(c, ART_E_UNKNOWN_REDUCTION, ART_S(r));
	if (ctx_fin(c, 0, 1, &x, &xs) || ctx_arg(c, 1, 1, &t) ||
	    ctx_fin(c, 2, 0, &w, &ws) || ctx_fout(c, 0, &y, &ys))
		return -1;
	if (xs.rank < 2 || rt_is_float(t.dt))
		return ctx_fail(c, ART_E_WANTS_N_C_INPUTS);
	N = xs.d[0], C = xs.d[1];
	for (int i = 2; i < xs.rank; i++)
		D *= xs.d[i];
	if (rt_numel(&t.s) != N * D || (w && rt_numel(&ws) != C) ||
	    rt_numel(&ys) != (red == RT_LOSS_NONE ? N * D : 1))
		return ctx_fail(c, ART_E_TARGETS_WEIGHTS_OUTPUT_MISSHAPEN);
	for (int64_t i = 0; i < N * D; i++) {
		int64_t v = rt_get_i(t.dt, t.p, i);
		if ((v < 0 || v >= C) && !(ig && v == ignore))
			return ctx_fail(c, ART_E_TARGET_CLASS,
					ART_I((long long)v),
					    ART_I((long long)C));
	}
	/* SoftmaxCrossEntropyLoss's second output: the log-probabilities */
	if (sce && ctx_out(c, 1) >= 0 && ctx_tensor(c, ctx_out(c, 1)).rank >= 0) {
		float *lp;
		rt_shape ls;
		if (ctx_fout(c, 1, &lp, &ls))
			return -1;
		if (rt_numel(&ls) != rt_numel(&xs))
			return ctx_fail(c, ART_E_LOG_PROB_MISSHAPEN);
		rt_softmax(RT_LOGSOFTMAX, x, N, C, D, lp);
	}
	rt_nll_loss(x, N, C, D, &t, w, ig ? &ignore : NULL,
		    (rt_loss_reduction)red, sce, y);
	return 0;
}
