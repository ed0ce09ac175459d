/*
 * tlmerge.c — the timeline's "other" bands.
 *
 * A training step of a deep model has thousands of tensors of a few
 * kilobytes: drawn one by one they are hairlines a fraction of a point
 * tall, unreadable and megabytes of SVG.  The tensors the caller picks
 * (under a size the user chooses, one colour at a time) are drawn together
 * instead, at the picture's resolution: the arena is cut into rows of
 * `snap` bytes (about a point) and the steps into the hover columns
 * (about a point, tlsteps.c).  In each column, the rows that picked
 * tensors live in are counted; runs of covered rows (gaps of one row closed) are the
 * column's ranges, and a range that stays the same over consecutive
 * columns becomes one rectangle.  Counting by rows keeps the work linear
 * in what is drawn: a 50,000-wide fan-out whose outputs all live to the
 * end costs a few million steps, not a sort per step of everything live.
 */
#include <assert.h>
#include <stdlib.h>

#include "timeline.h"

bool ar_tl_drawn(const ArGraph *g, const ArPlan *p, int t)
{
	return p->slots[t].planned && g->tensors[t].bytes > 0;
}

static int cmp_band(const void *a, const void *b)
{
	const ArTlOther *x = a, *y = b;
	if (x->first != y->first)
		return x->first - y->first;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

typedef struct Merger {
	const ArGraph *g;
	const ArPlan *p;
	int64_t snap;
	const ArTlCols *cols;
	int nrows;
	ArTlOther *out;
	int n, cap;
	int *open, nopen;       /* bands still growing, by offset */
	int *next, nnext;
	int *seen;              /* per tensor: the last band it was counted in */
	int *cover;             /* per row: picked tensors live there */
	int *band_of;           /* per row: its band in this column, or -1 */
	int *order, norder;     /* picked tensors by first column */
	int *live, nlive;
} Merger;

static int row_lo(const Merger *m, int t)
{
	return (int)(ar_gv_place(m->p, t) / m->snap);
}

static int row_hi(const Merger *m, int t)
{
	int64_t end = ar_gv_place(m->p, t) + m->g->tensors[t].bytes;
	return (int)((end + m->snap - 1) / m->snap);
}

static void cover(Merger *m, int t, int d)
{
	for (int r = row_lo(m, t); r < row_hi(m, t); r++)
		m->cover[r] += d;
}

/* The band for rows [lo, hi) in the column from step s to step e: the
 * open one with that range, extended, or a new one. */
static int band_at(Merger *m, int *cursor, int s, int e, int lo, int hi)
{
	ArTlOther *b;
	while (*cursor < m->nopen &&
	       m->out[m->open[*cursor]].lo < lo * m->snap)
		(*cursor)++;
	if (*cursor < m->nopen) {
		b = &m->out[m->open[*cursor]];
		if (b->lo == lo * m->snap && b->hi == hi * m->snap) {
			b->last = e;
			return m->open[(*cursor)++];
		}
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->out = ar_xrealloc(m->out, (size_t)m->cap * sizeof *m->out);
	}
	b = &m->out[m->n];
	*b = (ArTlOther){s, e, lo * m->snap, hi * m->snap, 0, 0,
			 {-1, -1, -1, -1}};
	return m->n++;
}

static void count(Merger *m, int band, int t)
{
	ArTlOther *b = &m->out[band];
	if (m->seen[t] == band)
		return;
	m->seen[t] = band;
	if (b->ntensors < 4)
		b->sample[b->ntensors] = t;
	b->ntensors++;
	b->bytes += m->g->tensors[t].bytes;
}

/* The picked tensors by first column (a counting sort: columns are few),
 * and the rows they reach. */
static void setup(Merger *m, const bool *pick)
{
	const ArGraph *g = m->g;
	int *at = ar_xcalloc((size_t)m->cols->n + 2, sizeof *at);

	m->order = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *m->order);
	m->norder = m->nrows = 0;
	for (int t = 0; t < g->ntensors; t++)
		if (pick[t]) {
			assert(ar_tl_drawn(g, m->p, t));
			at[m->cols->of[m->p->slots[t].first] + 1]++;
			m->norder++;
			if (row_hi(m, t) > m->nrows)
				m->nrows = row_hi(m, t);
		}
	for (int c = 0; c < m->cols->n; c++)
		at[c + 1] += at[c];
	for (int t = 0; t < g->ntensors; t++)
		if (pick[t])
			m->order[at[m->cols->of[m->p->slots[t].first]]++] = t;
	free(at);
	m->cover = ar_xcalloc((size_t)m->nrows + 1, sizeof *m->cover);
	m->band_of = ar_xmalloc(((size_t)m->nrows + 1) * sizeof *m->band_of);
	m->live = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *m->live);
	m->open = ar_xmalloc(((size_t)m->nrows + 1) * sizeof *m->open);
	m->next = ar_xmalloc(((size_t)m->nrows + 1) * sizeof *m->next);
	m->seen = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *m->seen);
	for (int t = 0; t < g->ntensors; t++)
		m->seen[t] = -1;
}

/* Column c: its live tensors, its ranges of covered rows and their
 * bands, and each live tensor counted in the band it lies in. */
static void column(Merger *m, int c, int *born)
{
	int s = m->cols->first[c], e = m->cols->first[c + 1], k = 0,
	    cursor = 0;

	for (int i = 0; i < m->nlive; i++)
		if (m->p->slots[m->live[i]].last >= s)
			m->live[k++] = m->live[i];
		else
			cover(m, m->live[i], -1);
	m->nlive = k;
	for (; *born < m->norder &&
	       m->cols->of[m->p->slots[m->order[*born]].first] == c;
	       (*born)++) {
		m->live[m->nlive++] = m->order[*born];
		cover(m, m->order[*born], 1);
	}
	m->nnext = 0;
	for (int r = 0; r < m->nrows;) {
		int lo = r, hi, band;
		if (!m->cover[r]) {
			m->band_of[r++] = -1;
			continue;
		}
		/* A range ends at two uncovered rows, or the last row. */
		for (hi = r + 1; hi < m->nrows && (m->cover[hi] ||
		     (hi + 1 < m->nrows && m->cover[hi + 1])); hi++)
			;
		band = band_at(m, &cursor, s, e - 1, lo, hi);
		m->next[m->nnext++] = band;
		for (; r < hi; r++)
			m->band_of[r] = band;
	}
	for (int i = 0; i < m->nlive; i++)
		count(m, m->band_of[row_lo(m, m->live[i])], m->live[i]);
	/* Bands not continued here are finished: only the continued and
	 * the new stay open, in offset order. */
	for (int i = 0; i < m->nnext; i++)
		m->open[i] = m->next[i];
	m->nopen = m->nnext;
}

int ar_tl_merge(const ArGraph *g, const ArPlan *p, const bool *pick,
		int64_t snap, const ArTlCols *cols, ArTlOther **out)
{
	Merger m = {.g = g, .p = p, .snap = snap, .cols = cols};
	int born = 0;

	assert(snap > 0 && cols->first[cols->n] == p->nsteps);
	setup(&m, pick);
	for (int c = 0; c < cols->n; c++)
		column(&m, c, &born);
	if (m.n)
		qsort(m.out, (size_t)m.n, sizeof *m.out, cmp_band);
	free(m.order), free(m.cover), free(m.band_of), free(m.live);
	free(m.open), free(m.next), free(m.seen);
	*out = m.out;
	return m.n;
}
