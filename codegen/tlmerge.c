/*
 * tlmerge.c — the timeline's "other" bands.
 *
 * A training step of a deep model has thousands of tensors of a few
 * kilobytes: drawn one by one they are hairlines a fraction of a point
 * tall, unreadable and megabytes of SVG.  The tensors the caller picks
 * (under a size the user chooses, one colour at a time) are drawn together
 * instead: at each step, the arena ranges they cover are merged (gaps of
 * up to `snap` bytes, about a point, closed), and a range that stays the
 * same over consecutive steps becomes one rectangle.  Rounding the ends
 * out to multiples of snap keeps a range steady while its tensors come
 * and go, so the rectangles stay few.
 */
#include <assert.h>
#include <stdlib.h>

#include "timeline.h"

bool ar_tl_drawn(const ArGraph *g, const ArPlan *p, int t)
{
	return p->slots[t].planned && g->tensors[t].bytes > 0;
}

typedef struct Range {
	int64_t lo, hi;
	int t;
} Range;

static int cmp_range(const void *a, const void *b)
{
	const Range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->t - y->t;
}

static int cmp_band(const void *a, const void *b)
{
	const ArTlOther *x = a, *y = b;
	if (x->first != y->first)
		return x->first - y->first;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * Walks the steps, keeping the list of the picked tensors live at each
 * (every drawn tensor when pick is NULL).  Tensors enter in the order of
 * their first step (a counting sort: steps are few), leave after their
 * last.
 */
typedef struct Walk {
	const ArPlan *p;
	int *order, norder, born;
	int *live, nlive;
} Walk;

static bool picked(const ArGraph *g, const ArPlan *p, const bool *pick,
		   int t)
{
	return pick ? pick[t] : ar_tl_drawn(g, p, t);
}

static void walk_init(Walk *w, const ArGraph *g, const ArPlan *p,
		      const bool *pick)
{
	int *at = ar_xcalloc((size_t)p->nsteps + 1, sizeof *at);

	w->p = p;
	w->order = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *w->order);
	w->live = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *w->live);
	w->norder = w->born = w->nlive = 0;
	for (int t = 0; t < g->ntensors; t++)
		if (picked(g, p, pick, t)) {
			assert(ar_tl_drawn(g, p, t));
			assert(p->slots[t].first >= 0 &&
			       p->slots[t].first < p->nsteps);
			at[p->slots[t].first + 1]++;
			w->norder++;
		}
	for (int s = 0; s < p->nsteps; s++)
		at[s + 1] += at[s];
	for (int t = 0; t < g->ntensors; t++)
		if (picked(g, p, pick, t))
			w->order[at[p->slots[t].first]++] = t;
	free(at);
}

/* Moves to step s (called for s = 0, 1, ...): w->live[0..nlive). */
static void walk_step(Walk *w, int s)
{
	int k = 0;
	for (int i = 0; i < w->nlive; i++)
		if (w->p->slots[w->live[i]].last >= s)
			w->live[k++] = w->live[i];
	w->nlive = k;
	while (w->born < w->norder &&
	       w->p->slots[w->order[w->born]].first == s)
		w->live[w->nlive++] = w->order[w->born++];
}

static void walk_free(Walk *w)
{
	free(w->order);
	free(w->live);
}

void ar_tl_in_use(const ArGraph *g, const ArPlan *p, int64_t *used)
{
	Walk w;
	Range *r = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *r);

	walk_init(&w, g, p, NULL);
	for (int s = 0; s < p->nsteps; s++) {
		int64_t sum = 0, lo = 0, hi = 0;
		walk_step(&w, s);
		for (int i = 0; i < w.nlive; i++) {
			r[i].lo = ar_gv_place(p, w.live[i]);
			r[i].hi = r[i].lo + ar_plan_padded(p,
				g->tensors[w.live[i]].bytes);
			r[i].t = w.live[i];
		}
		qsort(r, (size_t)w.nlive, sizeof *r, cmp_range);
		/* The union: views and in-place pairs count once. */
		for (int i = 0; i < w.nlive; i++) {
			if (i == 0 || r[i].lo > hi) {
				sum += hi - lo;
				lo = r[i].lo;
				hi = r[i].hi;
			} else if (r[i].hi > hi) {
				hi = r[i].hi;
			}
		}
		used[s] = sum + hi - lo;
	}
	walk_free(&w);
	free(r);
}

typedef struct Merger {
	ArTlOther *out;
	int n, cap;
	int *open, nopen;       /* bands still growing, by offset */
	int *next, nnext;
	int *seen;              /* per tensor: the last band it was counted in */
} Merger;

/* The band for range [lo, hi) at step s: the open one with that range,
 * extended, or a new one. */
static int band_at(Merger *m, int *cursor, int s, int64_t lo, int64_t hi)
{
	ArTlOther *b;
	while (*cursor < m->nopen && m->out[m->open[*cursor]].lo < lo)
		(*cursor)++;
	if (*cursor < m->nopen) {
		b = &m->out[m->open[*cursor]];
		if (b->lo == lo && b->hi == hi) {
			b->last = s;
			return m->open[(*cursor)++];
		}
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->out = ar_xrealloc(m->out, (size_t)m->cap * sizeof *m->out);
	}
	b = &m->out[m->n];
	*b = (ArTlOther){s, s, lo, hi, 0, 0, {-1, -1, -1, -1}};
	return m->n++;
}

static void count(Merger *m, const ArGraph *g, int band, int t)
{
	ArTlOther *b = &m->out[band];
	if (m->seen[t] == band)
		return;
	m->seen[t] = band;
	if (b->ntensors < 4)
		b->sample[b->ntensors] = t;
	b->ntensors++;
	b->bytes += g->tensors[t].bytes;
}

int ar_tl_merge(const ArGraph *g, const ArPlan *p, const bool *pick,
		int64_t snap, ArTlOther **out)
{
	Merger m = {0};
	Walk w;
	Range *r = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *r);

	assert(snap > 0);
	walk_init(&w, g, p, pick);
	m.open = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *m.open);
	m.next = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *m.next);
	m.seen = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *m.seen);
	for (int t = 0; t < g->ntensors; t++)
		m.seen[t] = -1;
	for (int s = 0; s < p->nsteps; s++) {
		int nr = 0, cursor = 0;
		walk_step(&w, s);
		for (int i = 0; i < w.nlive; i++) {
			int64_t at = ar_gv_place(p, w.live[i]);
			r[nr].lo = at / snap * snap;
			r[nr].hi = (at + g->tensors[w.live[i]].bytes + snap - 1) /
				   snap * snap;
			r[nr++].t = w.live[i];
		}
		qsort(r, (size_t)nr, sizeof *r, cmp_range);
		m.nnext = 0;
		for (int i = 0; i < nr;) {
			int64_t lo = r[i].lo, hi = r[i].hi;
			int j = i + 1, band;
			while (j < nr && r[j].lo <= hi + snap) {
				if (r[j].hi > hi)
					hi = r[j].hi;
				j++;
			}
			band = band_at(&m, &cursor, s, lo, hi);
			m.next[m.nnext++] = band;
			for (; i < j; i++)
				count(&m, g, band, r[i].t);
		}
		/* Bands not continued at s are finished: only the
		 * continued and the new stay open, in offset order. */
		for (int i = 0; i < m.nnext; i++)
			m.open[i] = m.next[i];
		m.nopen = m.nnext;
	}
	if (m.n)
		qsort(m.out, (size_t)m.n, sizeof *m.out, cmp_band);
	walk_free(&w);
	free(r), free(m.open), free(m.next), free(m.seen);
	*out = m.out;
	return m.n;
}
