/*
 * kernels_loss.c — NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
 * (float32), over [N, C, D...] with one class index per (n, d).
 *
 * Softmax cross-entropy is the negative log-likelihood of the scores'
 * log-softmax along C; only the log-probability at each target is needed,
 * so it is computed per (n, d) from that column's maximum and sum of
 * exponentials, with no stored intermediate.
 */
#include <math.h>

#include "kernels.h"

/* log softmax(x)[t] of the column x[0], x[inner], ... (n values). */
static double log_prob(const float *x, int64_t n, int64_t inner, int64_t t)
{
	double mx = -INFINITY, s = 0;
	for (int64_t i = 0; i < n; i++)
		mx = fmax(mx, x[i * inner]);
	for (int64_t i = 0; i < n; i++)
		s += exp(x[i * inner] - mx);
	return x[t * inner] - mx - log(s);
}

void rt_nll_loss(const float *x, int64_t N, int64_t C, int64_t D,
		 const rt_arr *target, const float *w, const int64_t *ignore,
		 rt_loss_reduction red, int from_scores, float *y)
{
	double sum = 0, wsum = 0;
	for (int64_t n = 0; n < N; n++)
	for (int64_t d = 0; d < D; d++) {
		int64_t t = rt_get_i(target->dt, target->p, n * D + d);
		const float *col = x + n * C * D + d;
		double l = 0, wt = 0;
		if (!ignore || t != *ignore) {
			wt = w ? w[t] : 1;
			l = -wt * (from_scores ? log_prob(col, C, D, t) :
				   col[t * D]);
		}
		if (red == RT_LOSS_NONE)
			y[n * D + d] = (float)l;
		sum += l, wsum += wt;
	}
	if (red == RT_LOSS_SUM)
		y[0] = (float)sum;
	else if (red == RT_LOSS_MEAN)
		y[0] = (float)(sum / wsum);
}
