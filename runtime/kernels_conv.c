/*
 * kernels_conv.c — direct 2-D convolution and transposed convolution.
 *
 * No im2col: its scratch buffer would be memory the plan never gave us.
 * Instead each (output channel, input channel, kernel tap) adds one scaled
 * input row to one output row, an inner loop over contiguous floats that
 * the compiler vectorises when the stride is 1.  The valid column range of
 * each tap is computed once, so the inner loop has no bounds tests.
 */
#include <math.h>
#include <string.h>

#include "kernels.h"

static int64_t ceil_div(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void fill_bias(float *y, const float *b, int64_t m, int64_t n)
{
	float v = b ? b[m] : 0.0f;
	for (int64_t i = 0; i < n; i++)
		y[i] = v;
}

/*
 * Convolution computes a tile of MB output channels by PB pixels of one
 * row in registers, so each input value loaded feeds MB multiply-adds and
 * no partial sum goes back to memory until the tile is done.
 */
#define MB 4
#define PB 8

typedef struct Conv {
	const rt_conv *p;
	const float *x;             /* the group's first input channel */
	int64_t c0;                 /* and its index */
	int64_t cg, H, W;
	const float *w[MB];         /* each tile channel's weights */
	float *y[MB];               /* each tile channel's output plane */
	int nb;                     /* channels of the tile that exist */
} Conv;

/* A prologue folded per channel: v -> a v + b, then Relu where relu. */
typedef struct Stage {
	float a, b;
	int relu;
} Stage;

/* Channel ch's prologue as affine stages, each closed by a Relu. */
static int stages(const rt_preact *pre, int64_t ch, Stage *st)
{
	int n = 0;
	float a = 1.0f, b = 0.0f;
	for (int k = 0; k < pre->n; k++) {
		int64_t i = pre->scalar[k] ? 0 : ch;
		const float *const *q = pre->p[k];
		float s;
		switch (pre->code[k]) {
		case RT_PRE_BATCHNORM:
			/* as rt_batchnorm: v a' + (bias - mean a') */
			s = q[0][i] / sqrtf(q[3][i] + pre->eps[k]);
			a *= s;
			b = b * s + (q[1][i] - q[2][i] * s);
			break;
		case RT_PRE_MUL:
			a *= q[0][i];
			b *= q[0][i];
			break;
		case RT_PRE_ADD:
			b += q[0][i];
			break;
		default:
			st[n++] = (Stage){a, b, 1};
			a = 1.0f, b = 0.0f;
			break;
		}
	}
	if (a != 1.0f || b != 0.0f)
		st[n++] = (Stage){a, b, 0};
	return n;
}

static float apply(const Stage *st, int n, float v)
{
	for (int k = 0; k < n; k++) {
		v = st[k].a * v + st[k].b;
		if (st[k].relu && v < 0.0f)
			v = 0.0f;
	}
	return v;
}

/* The taps of kernel row i over input channel ci, into acc. */
static void conv_row(const Conv *c, int64_t ci, int64_t i, const Stage *st,
		     int ns, int64_t oh, int64_t ow0, int npx, int interior,
		     float acc[MB][PB])
{
	const rt_conv *p = c->p;
	int64_t ih = oh * p->sh - p->ph + i * p->dh;
	const float *xr;

	if (ih < 0 || ih >= c->H)
		return;
	xr = c->x + (ci * c->H + ih) * c->W;
	for (int64_t j = 0; j < p->kw; j++) {
		int64_t iw0 = ow0 * p->sw - p->pw + j * p->dw;
		float xv[PB];
		if (interior && p->sw == 1) {
			memcpy(xv, xr + iw0, sizeof xv);
			for (int q = 0; q < PB && ns; q++)
				xv[q] = apply(st, ns, xv[q]);
		} else {
			for (int q = 0; q < PB; q++) {
				int64_t iw = iw0 + q * p->sw;
				xv[q] = q < npx && iw >= 0 && iw < c->W ?
					apply(st, ns, xr[iw]) : 0.0f;
			}
		}
		/* Fully unrolled, acc stays in registers. */
#pragma GCC unroll 4
		for (int m = 0; m < MB; m++) {
			float wv = c->w[m][(ci * p->kh + i) * p->kw + j];
			for (int q = 0; q < PB; q++)
				acc[m][q] += wv * xv[q];
		}
	}
}

/*
 * Pixels [ow0, ow0 + npx) of row oh; c->y point at the first of them.
 * Inside the row (interior) the PB inputs of a tap are loaded directly;
 * at the borders they are gathered, with zeros for the padding (which
 * pads the prologue's output, so it stays zero).
 */
static void conv_tile(const Conv *c, int64_t oh, int64_t ow0, int npx,
		      int interior)
{
	const rt_conv *p = c->p;
	float acc[MB][PB] = {{0}};

	for (int64_t ci = 0; ci < c->cg; ci++) {
		Stage st[RT_PREACT_MAX];
		int ns = p->pre ? stages(p->pre, c->c0 + ci, st) : 0;
		for (int64_t i = 0; i < p->kh; i++)
			conv_row(c, ci, i, st, ns, oh, ow0, npx, interior,
				 acc);
	}
	for (int m = 0; m < c->nb; m++)
		for (int q = 0; q < npx; q++)
			c->y[m][q] += acc[m][q];
}

void rt_conv2d(const rt_conv *p, const float *x, const rt_shape *xs,
	       const float *w, const float *b, float *y, const rt_shape *ys)
{
	int64_t N = xs->d[0], C = xs->d[1], H = xs->d[2], W = xs->d[3];
	int64_t M = ys->d[1], OH = ys->d[2], OW = ys->d[3];
	int64_t cg = C / p->group, mg = M / p->group;
	/* Columns whose every tap lies inside the input row. */
	int64_t lo = clamp(ceil_div(p->pw, p->sw), 0, OW);
	int64_t hi = clamp(ceil_div(W + p->pw - (p->kw - 1) * p->dw, p->sw),
			   lo, OW);

	for (int64_t n = 0; n < N; n++)
	for (int64_t m0 = 0; m0 < M; m0 += MB) {
		int64_t g = m0 / mg;
		Conv c = {p, x + (n * C + g * cg) * H * W, g * cg, cg, H, W,
			  {0}, {0}, 0};
		/* A tile stays inside one group; missing channels repeat the
		 * last one and are not stored. */
		for (int k = 0; k < MB; k++) {
			int64_t m = m0 + k < M && (m0 + k) / mg == g ? m0 + k :
				    m0 + c.nb - 1;
			if (m == m0 + k)
				c.nb++;
			c.w[k] = w + m * cg * p->kh * p->kw;
			c.y[k] = y + (n * M + m) * OH * OW;
		}
		for (int k = 0; k < c.nb; k++)
			fill_bias(c.y[k], b, m0 + k, OH * OW);
		for (int64_t oh = 0; oh < OH; oh++)
		for (int64_t ow = 0; ow < OW; ow += PB) {
			Conv t = c;
			int npx = OW - ow < PB ? (int)(OW - ow) : PB;
			for (int k = 0; k < MB; k++)
				t.y[k] = c.y[k] + oh * OW + ow;
			conv_tile(&t, oh, ow, npx, ow >= lo && ow + PB <= hi);
		}
		m0 += c.nb - MB;   /* a group's last tile may be short */
	}
}

void rt_convtranspose2d(const rt_conv *p, const float *x, const rt_shape *xs,
			const float *w, const float *b, float *y,
			const rt_shape *ys)
{
	int64_t N = xs->d[0], C = xs->d[1], H = xs->d[2], W = xs->d[3];
	int64_t M = ys->d[1], OH = ys->d[2], OW = ys->d[3];
	int64_t cg = C / p->group, mg = M / p->group;

	for (int64_t n = 0; n < N; n++)
		for (int64_t m = 0; m < M; m++)
			fill_bias(y + (n * M + m) * OH * OW, b, m, OH * OW);
	/* Each input pixel scatters into the output: oh = ih*sh - ph + i*dh. */
	for (int64_t n = 0; n < N; n++)
	for (int64_t c = 0; c < C; c++) {
		const float *xc = x + (n * C + c) * H * W;
		int64_t g = c / cg;
		for (int64_t ml = 0; ml < mg; ml++) {
			int64_t m = g * mg + ml;
			float *yo = y + (n * M + m) * OH * OW;
			const float *wk = w + (c * mg + ml) * p->kh * p->kw;
			for (int64_t i = 0; i < p->kh; i++)
			for (int64_t j = 0; j < p->kw; j++) {
				float wv = wk[i * p->kw + j];
				int64_t shift = j * p->dw - p->pw;
				/* 0 <= iw * sw + shift < OW */
				int64_t lo = clamp(ceil_div(-shift, p->sw), 0, W);
				int64_t hi = clamp(ceil_div(OW - shift, p->sw), lo, W);
				for (int64_t ih = 0; ih < H; ih++) {
					int64_t oh = ih * p->sh - p->ph + i * p->dh;
					if (oh < 0 || oh >= OH)
						continue;
					for (int64_t iw = lo; iw < hi; iw++)
						yo[oh * OW + iw * p->sw + shift] +=
							wv * xc[ih * W + iw];
				}
			}
		}
	}
}
