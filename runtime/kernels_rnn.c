/*
 * kernels_rnn.c — the recurrent layers RNN, GRU and LSTM, float32, every
 * direction and both layouts.
 *
 * Each batch element's recurrence is independent of the others', so the
 * kernel runs one (direction, batch element) at a time through the time
 * steps, holding its hidden (and cell) state and one step's gate
 * pre-activations in a workspace the caller provides: (gates + 2) x
 * hidden floats, gates 1 (RNN), 3 (GRU) or 4 (LSTM).  That is the only
 * kernel of the runtime that needs memory beyond its operands.
 */
#include <string.h>

#include "kernels.h"

static const int ngates[] = {1, 3, 4};

/* Gate pre-activation clip, then the activation. */
static float act(const rt_rnn *p, int d, int k, float v)
{
	if (p->clip > 0)
		v = v < -p->clip ? -p->clip : v > p->clip ? p->clip : v;
	return rt_unary_value32(p->act[d][k], p->alpha[d][k], p->beta[d][k],
				v);
}

/* acc[g] += sum_k m[g][k] v[k] for the n rows from row `first`. */
static void matvec(const float *m, const float *v, int64_t first, int64_t n,
		   int64_t cols, float *acc)
{
	for (int64_t g = 0; g < n; g++) {
		const float *row = m + (first + g) * cols;
		float s = 0.0f;
		for (int64_t k = 0; k < cols; k++)
			s += row[k] * v[k];
		acc[g] += s;
	}
}

/* Sequence length of batch element b (all of them when not given). */
static int64_t length(const rt_rnn *p, int64_t b)
{
	int64_t n = p->seq_lens ? rt_get_i(p->seq_lens_dt, p->seq_lens, b) :
		    p->seq;
	return n < 0 ? 0 : n > p->seq ? p->seq : n;
}

/* Offsets of X[t, b] and Y[t, d, b] in either layout. */
static int64_t x_at(const rt_rnn *p, int64_t t, int64_t b)
{
	return (p->layout ? b * p->seq + t : t * p->batch + b) * p->input;
}

static int64_t y_at(const rt_rnn *p, int64_t t, int d, int64_t b)
{
	return (p->layout ? (b * p->seq + t) * p->dirs + d :
		(t * p->dirs + d) * p->batch + b) * p->hidden;
}

/* Offset of Y_h[d, b] / Y_c[d, b] (layout 1: [b, d]). */
static int64_t state_at(const rt_rnn *p, int d, int64_t b)
{
	return (p->layout ? b * p->dirs + d : d * p->batch + b) * p->hidden;
}

/* One time step of direction d for one batch element: x in, h (and c)
 * updated; gates is the workspace for the pre-activations. */
static void step(const rt_rnn *p, int d, const float *x, float *h, float *c,
		 float *gates)
{
	int64_t H = p->hidden, G = ngates[p->kind] * H;
	const float *w = p->w + d * G * p->input, *r = p->r + d * G * H;
	const float *wb = p->b ? p->b + d * 2 * G : NULL;
	const float *rb = wb ? wb + G : NULL;

	for (int64_t g = 0; g < G; g++)
		gates[g] = wb ? wb[g] + rb[g] : 0.0f;
	matvec(w, x, 0, G, p->input, gates);
	if (p->kind == RT_GRU_CELL) {
		/* z and r from h; the candidate from r and h */
		float *z = gates, *rg = gates + H, *hh = gates + 2 * H;
		matvec(r, h, 0, 2 * H, H, gates);
		for (int64_t i = 0; i < 2 * H; i++)
			gates[i] = act(p, d, 0, gates[i]);
		if (p->linear_before_reset) {
			/* r (.) (h R_h + Rb_h), with Rb_h already in hh */
			float *lin = c;     /* GRU has no cell: free space */
			memset(lin, 0, (size_t)H * sizeof *lin);
			matvec(r, h, 2 * H, H, H, lin);
			for (int64_t i = 0; i < H; i++)
				hh[i] += (rg[i] - 1.0f) * (rb ? rb[2 * H + i] : 0) +
					 rg[i] * lin[i];
		} else {
			float *rh = c;
			for (int64_t i = 0; i < H; i++)
				rh[i] = rg[i] * h[i];
			matvec(r, rh, 2 * H, H, H, hh);
		}
		for (int64_t i = 0; i < H; i++) {
			float cand = act(p, d, 1, hh[i]);
			h[i] = (1.0f - z[i]) * cand + z[i] * h[i];
		}
		return;
	}
	matvec(r, h, 0, G, H, gates);
	if (p->kind == RT_RNN_CELL) {
		for (int64_t i = 0; i < H; i++)
			h[i] = act(p, d, 0, gates[i]);
		return;
	}
	/* LSTM, gates i o f c; peepholes i o f */
	{
		const float *pp = p->p ? p->p + d * 3 * H : NULL;
		float *gi = gates, *go = gates + H, *gf = gates + 2 * H;
		float *gc = gates + 3 * H;
		for (int64_t i = 0; i < H; i++) {
			float it = act(p, d, 0, gi[i] + (pp ? pp[i] * c[i] : 0));
			float ft = act(p, d, 0, gf[i] +
				       (pp ? pp[2 * H + i] * c[i] : 0));
			float ct = act(p, d, 1, gc[i]);
			float ot;
			c[i] = ft * c[i] + it * ct;
			ot = act(p, d, 0, go[i] + (pp ? pp[H + i] * c[i] : 0));
			h[i] = ot * act(p, d, 2, c[i]);
		}
	}
}

void rt_rnn_apply(const rt_rnn *p, float *work)
{
	int64_t H = p->hidden;
	float *h = work, *c = work + H, *gates = work + 2 * H;

	for (int d = 0; d < p->dirs; d++)
	for (int64_t b = 0; b < p->batch; b++) {
		int64_t n = length(p, b);
		int rev = p->reverse || d == 1;
		int64_t s0 = state_at(p, d, b);
		for (int64_t i = 0; i < H; i++) {
			h[i] = p->h0 ? p->h0[s0 + i] : 0.0f;
			c[i] = p->c0 ? p->c0[s0 + i] : 0.0f;
		}
		for (int64_t j = 0; j < n; j++) {
			int64_t t = rev ? n - 1 - j : j;
			step(p, d, p->x + x_at(p, t, b), h, c, gates);
			if (p->y)
				memcpy(p->y + y_at(p, t, d, b), h,
				       (size_t)H * sizeof *h);
		}
		/* Steps past this element's length output zeros. */
		for (int64_t t = n; p->y && t < p->seq; t++)
			memset(p->y + y_at(p, t, d, b), 0,
			       (size_t)H * sizeof *h);
		if (p->yh)
			memcpy(p->yh + s0, h, (size_t)H * sizeof *h);
		if (p->yc)
			memcpy(p->yc + s0, c, (size_t)H * sizeof *c);
	}
}
