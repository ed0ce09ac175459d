/*
 * chain_probe.c — measures the segments of a chain (chain.h) for the
 * dynamic program of chain_dp.c, on the real step graphs.
 *
 * A probe is a selection: every point and interior candidate resident
 * except what some segments free, each segment run with one combo of its
 * units' options.  Its step graph goes through ar_plan's order, alias and
 * lifetime passes (ar_plan_links, with the caller's options; offsets play
 * no part), and for each segment (a, b) in it:
 *   peak  the most live buffer bytes owned at a or later, or by none,
 *         over the steps of its units (forward, recompute, backward);
 *   kept  the bytes owned in [a, b) live at the first forward step after
 *         unit b: what it holds from its forward steps to its backward;
 *   cost  the FLOPs of the recompute steps of its units.
 * These depend on the segment alone (chain_dp.c's model), so one probe
 * measures many segments at once: every unit's option k in one probe, all
 * segments of one length and one offset in another.
 *
 * What is measured: each unit's options (as many probes as the most
 * options a unit has); then segments of length n = 2, 3, ... with their
 * units all `none`, each (a, a+n) measured directly or through another
 * with the same block types (the first unit's type, which sizes p_a, and
 * the types of the units inside); an offset whose segments are all known
 * already is not probed.  A chain of identical blocks so needs a probe or
 * two per length, whatever its depth.  When the segments of length n are
 * those of length n-1 grown by one unit at their start by the same
 * increment, checked for every start, longer segments are taken as grown
 * further by those increments (ar_chain_long_seg), and no longer one is
 * probed: a stack of any depth costs a few probes per length up to the
 * length where its blocks stop interacting.
 *
 * A small chain whose units list every subset of their interior gets
 * every combo of every segment measured (complete): the dynamic program
 * then ranges over every selection.
 */
#include "chain.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* The longest segment measured, where the increments do not settle. */
#define SPAN_MAX 64

typedef struct Probe {
	int n;
	int *a, *b, *combo;     /* segments, in position order */
	ArSeg *out;
} Probe;

/* Fenwick tree of live bytes per owner position. */
static void fw_add(int64_t *f, int n, int i, int64_t v)
{
	for (i++; i <= n; i += i & -i)
		f[i] += v;
}

static int64_t fw_sum(const int64_t *f, int i)     /* owners 0..i-1 */
{
	int64_t s = 0;
	for (; i > 0; i -= i & -i)
		s += f[i];
	return s;
}

/*
 * Per step, the live bytes that change owner there.  A buffer's bytes
 * belong to the tensor holding it at the time: a step's output written in
 * place over its input takes the buffer over from it (the input's owner
 * to the output's), a view inside a buffer holds it while it lives.
 */
typedef struct Events {
	int n, cap;
	int *step, *owner;
	int64_t *delta;
	int *at;                /* per step: its events at[s] .. at[s+1] */
} Events;

static void event(Events *e, int step, int owner, int64_t delta)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 256;
		e->step = ar_xrealloc(e->step, (size_t)e->cap * sizeof(int));
		e->owner = ar_xrealloc(e->owner, (size_t)e->cap * sizeof(int));
		e->delta = ar_xrealloc(e->delta,
				       (size_t)e->cap * sizeof(int64_t));
	}
	e->step[e->n] = step;
	e->owner[e->n] = owner;
	e->delta[e->n++] = delta;
}

/* Group k's members mem[0..n): who holds its buffer when (the latest
 * born of the members alive), as events. */
static void holders(const ArPlan *p, const ArGroups *gr, int k,
		    const int *mem, int n, const int *owner, Events *e)
{
	int s = gr->first[k], cur = 0;
	bool held = false;
	while (s <= gr->last[k]) {
		int h = -1, next = gr->last[k] + 1;
		for (int i = 0; i < n; i++) {
			const ArSlot *x = &p->slots[mem[i]];
			if (x->first <= s && x->last >= s &&
			    (h < 0 || x->first > p->slots[h].first))
				h = mem[i];
			if (x->first > s && x->first < next)
				next = x->first;
			if (x->last >= s && x->last + 1 < next)
				next = x->last + 1;
		}
		if (!held || h < 0 || owner[h] != cur) {
			if (held)
				event(e, s, cur, -gr->size[k]);
			held = h >= 0;
			if (held) {
				cur = owner[h];
				event(e, s, cur, gr->size[k]);
			}
		}
		s = next;
	}
	if (held && gr->last[k] + 1 < p->nsteps)
		event(e, gr->last[k] + 1, cur, -gr->size[k]);
}

/* The events of every group, indexed by step; owner per step-graph
 * tensor as given. */
static void events(const ArGraph *g, const ArPlan *p, const ArGroups *gr,
		   const int *owner, Events *e)
{
	int *at = ar_xcalloc((size_t)gr->n + 2, sizeof(int));
	int *mem = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	int *fill, ns = p->nsteps;
	int *order, *idx;

	memset(e, 0, sizeof *e);
	for (int t = 0; t < g->ntensors; t++)
		if (gr->of[t] >= 0)
			at[gr->of[t] + 1]++;
	for (int k = 0; k < gr->n; k++)
		at[k + 1] += at[k];
	fill = ar_xmalloc(((size_t)gr->n + 1) * sizeof(int));
	memcpy(fill, at, ((size_t)gr->n + 1) * sizeof(int));
	for (int t = 0; t < g->ntensors; t++)
		if (gr->of[t] >= 0)
			mem[fill[gr->of[t]]++] = t;
	for (int k = 0; k < gr->n; k++)
		if (gr->last[k] >= gr->first[k])
			holders(p, gr, k, &mem[at[k]], at[k + 1] - at[k], owner,
				e);
	/* By step: a counting sort of the events. */
	e->at = ar_xcalloc((size_t)ns + 2, sizeof(int));
	for (int i = 0; i < e->n; i++)
		e->at[e->step[i] + 1]++;
	for (int s = 0; s <= ns; s++)
		e->at[s + 1] += e->at[s];
	idx = ar_xmalloc(((size_t)ns + 1) * sizeof(int));
	memcpy(idx, e->at, ((size_t)ns + 1) * sizeof(int));
	order = ar_xmalloc(((size_t)e->n + 1) * sizeof(int));
	for (int i = 0; i < e->n; i++)
		order[idx[e->step[i]]++] = i;
	/* Reorder the events in place of their arrays. */
	{
		int *so = ar_xmalloc(((size_t)e->n + 1) * sizeof(int));
		int64_t *sd = ar_xmalloc(((size_t)e->n + 1) * sizeof(int64_t));
		for (int i = 0; i < e->n; i++) {
			so[i] = e->owner[order[i]];
			sd[i] = e->delta[order[i]];
		}
		free(e->owner);
		free(e->delta);
		e->owner = so;
		e->delta = sd;
	}
	free(order);
	free(idx);
	free(fill);
	free(mem);
	free(at);
}

static void events_free(Events *e)
{
	free(e->step);
	free(e->owner);
	free(e->delta);
	free(e->at);
}

/* Plans the probe's selection and measures its segments: AR_OK, a
 * planner failure, or -1 when the work ran out. */
static int probe(ArChain *c, const ArPlanOptions *popt, ArBudget *work,
		 Probe *pr, ArError *err)
{
	const ArTrainModel *m = c->m;
	int npos = c->L + 2, *nsrc, *tsrc, rc, kr = 0;
	bool *res = ar_xmalloc((size_t)m->base->ntensors + 1);
	int *run_of = ar_xmalloc((size_t)npos * sizeof(int));
	int64_t *fw = ar_xcalloc((size_t)npos + 1, sizeof(int64_t));
	int64_t unowned = 0;
	int *own;
	ArGraph *g;
	ArPlan *p = NULL;
	ArGroups gr;
	Events ev;

	memset(res, 0, (size_t)m->base->ntensors + 1);
	for (int i = 0; i < m->ncand; i++)
		res[m->cand[i]] = true;
	for (int u = 0; u < npos; u++)
		run_of[u] = -1;
	for (int r = 0; r < pr->n; r++) {
		ar_chain_apply(c, pr->a[r], pr->b[r], pr->combo[r], res);
		for (int u = pr->a[r] + 1; u <= pr->b[r]; u++)
			run_of[u] = r;
		pr->out[r] = (ArSeg){0, 0, 0, pr->combo[r]};
	}
	g = ar_train_graph_traced(m, res, &nsrc, &tsrc);
	c->nprobes++;
	rc = ar_budget_spend(work, g->nnodes) ? ar_plan_links(g, popt, &p, err)
					       : -1;
	if (rc)
		goto out;
	ar_groups_build(g, p, &gr);
	own = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	for (int t = 0; t < g->ntensors; t++)
		own[t] = c->owner[tsrc[t]];
	events(g, p, &gr, own, &ev);
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		int src = nsrc[p->steps[s]], u = src >= 0 ? c->unit[src] : 0;
		int r = run_of[u];
		for (int e = ev.at[s]; e < ev.at[s + 1]; e++) {
			if (ev.owner[e] < 0)
				unowned += ev.delta[e];
			else
				fw_add(fw, npos, ev.owner[e], ev.delta[e]);
		}
		/* The first forward step past a segment: what it keeps. */
		while (n->phase == AR_PHASE_FORWARD && kr < pr->n &&
		       pr->b[kr] < u) {
			pr->out[kr].kept = fw_sum(fw, pr->b[kr]) -
					   fw_sum(fw, pr->a[kr]);
			kr++;
		}
		if (u == 0 || r < 0)
			continue;
		{
			int64_t live = unowned + fw_sum(fw, npos) -
				       fw_sum(fw, pr->a[r]);
			if (live > pr->out[r].peak)
				pr->out[r].peak = live;
		}
		if (n->phase == AR_PHASE_RECOMPUTE)
			pr->out[r].cost = ar_train_add(pr->out[r].cost,
						       m->flops[src]);
	}
	events_free(&ev);
	free(own);
	ar_groups_free(&gr);
out:
	ar_plan_free(p);
	ar_graph_free(g);
	free(nsrc);
	free(tsrc);
	free(res);
	free(run_of);
	free(fw);
	return rc;
}

static void probe_room(Probe *pr, int n)
{
	pr->a = ar_xrealloc(pr->a, ((size_t)n + 1) * sizeof(int));
	pr->b = ar_xrealloc(pr->b, ((size_t)n + 1) * sizeof(int));
	pr->combo = ar_xrealloc(pr->combo, ((size_t)n + 1) * sizeof(int));
	pr->out = ar_xrealloc(pr->out, ((size_t)n + 1) * sizeof(ArSeg));
}

static void probe_free(Probe *pr)
{
	free(pr->a);
	free(pr->b);
	free(pr->combo);
	free(pr->out);
}

/* Entries per segment (a, a+n): a unit's options, else every combo
 * (complete) or one. */
static int entries(const ArChain *c, int a, int n)
{
	int64_t k = 1;
	if (n == 1)
		return c->nopt[a + 1];
	if (!c->complete)
		return 1;
	for (int u = a + 1; u <= a + n; u++)
		k *= c->nopt[u];
	return (int)k;
}

/* Room for the entries of every segment up to length d. */
static void layout(ArChain *c, int d)
{
	int n = 0, np = c->L + 2;
	c->D = c->span = d;
	c->seg_at = ar_xmalloc(((size_t)np * (d + 1) + 1) * sizeof(int));
	for (int a = 0; a < np; a++)
		for (int k = 0; k <= d; k++) {
			c->seg_at[a * (d + 1) + k] = n;
			if (k >= 1 && a + k <= c->L + 1)
				n += entries(c, a, k);
		}
	c->seg_at[np * (d + 1)] = n;
	c->nsegs = n;
	c->segs = ar_xmalloc(((size_t)n + 1) * sizeof(ArSeg));
	for (int i = 0; i < n; i++)
		c->segs[i].combo = -2;          /* not measured */
}

static ArSeg *slot(ArChain *c, int a, int b, int e)
{
	return &c->segs[c->seg_at[a * (c->span + 1) + (b - a)] + e];
}

/* The entry of (a, b) with every unit `none`. */
static const ArSeg *freed(ArChain *c, int a, int b)
{
	return slot(c, a, b, b - a == 1 ? c->none_opt[b] : 0);
}

static bool same_seg(const ArSeg *x, const ArSeg *y)
{
	return x->peak == y->peak && x->kept == y->kept && x->cost == y->cost;
}

/* Option k on every unit, probe k. */
static int each_unit(ArChain *c, const ArPlanOptions *popt, ArBudget *work,
		     ArError *err)
{
	int np = c->L + 2, most = 0, rc = AR_OK;
	Probe pr = {0};
	for (int u = 1; u < np; u++)
		if (c->nopt[u] > most)
			most = c->nopt[u];
	probe_room(&pr, np);
	for (int k = 0; k < most && !rc; k++) {
		pr.n = 0;
		for (int u = 1; u < np; u++)
			if (k < c->nopt[u]) {
				pr.a[pr.n] = u - 1;
				pr.b[pr.n] = u;
				pr.combo[pr.n++] = k;
			}
		if (!(rc = probe(c, popt, work, &pr, err)))
			for (int r = 0; r < pr.n; r++)
				*slot(c, pr.a[r], pr.b[r], k) = pr.out[r];
	}
	probe_free(&pr);
	return rc;
}

/*
 * Units of one type measure alike, so probe k gives instance j of a type
 * its option j + k: a few probes measure every option of every type, on
 * two instances where the type has two, and the other instances take
 * their type's figures.  *agree: no two instances measured one option
 * differently.
 */
static int rotated(ArChain *c, const ArPlanOptions *popt, ArBudget *work,
		   bool *agree, ArError *err)
{
	int np = c->L + 2, rc = AR_OK, rounds = 0;
	int *inst = ar_xcalloc((size_t)np, sizeof(int));
	int *count = ar_xcalloc((size_t)np, sizeof(int));
	int *at = ar_xcalloc((size_t)np + 1, sizeof(int));
	int *from;              /* per type and option: a unit measured */
	Probe pr = {0};

	*agree = true;
	for (int u = 1; u < np; u++)
		inst[u] = count[c->type_rep[u]]++;
	for (int u = 1; u < np; u++)
		if (c->type_rep[u] == u) {
			int want = count[u] > 1 ? 2 : 1;
			int r = (want * c->nopt[u] + count[u] - 1) / count[u];
			rounds = r > rounds ? r : rounds;
		}
	for (int u = 1; u < np; u++)
		at[u + 1] = at[u] + c->nopt[u];
	from = ar_xmalloc(((size_t)at[np] + 1) * sizeof(int));
	for (int i = 0; i < at[np]; i++)
		from[i] = -1;
	probe_room(&pr, np);
	for (int k = 0; k < rounds && !rc && *agree; k++) {
		pr.n = 0;
		for (int u = 1; u < np; u++) {
			pr.a[pr.n] = u - 1;
			pr.b[pr.n] = u;
			pr.combo[pr.n++] = (inst[u] + k) % c->nopt[u];
		}
		if ((rc = probe(c, popt, work, &pr, err)))
			break;
		for (int r = 0; r < pr.n; r++) {
			int u = pr.b[r], o = pr.combo[r];
			int *f = &from[at[c->type_rep[u]] + o];
			*slot(c, u - 1, u, o) = pr.out[r];
			if (*f < 0)
				*f = u;
			else if (!same_seg(slot(c, *f - 1, *f, o), &pr.out[r]))
				*agree = false;
		}
	}
	for (int u = 1; u < np && !rc && *agree; u++)
		for (int o = 0; o < c->nopt[u]; o++) {
			int f = from[at[c->type_rep[u]] + o];
			assert(f > 0);
			*slot(c, u - 1, u, o) = *slot(c, f - 1, f, o);
		}
	free(inst);
	free(count);
	free(from);
	free(at);
	probe_free(&pr);
	return rc;
}

/* Each unit's options: rotated over the instances of each type, or,
 * on a complete chain or where instances disagree, each unit itself. */
static int measure_options(ArChain *c, const ArPlanOptions *popt,
			   ArBudget *work, ArError *err)
{
	bool agree = false;
	int rc;
	if (!c->complete && ((rc = rotated(c, popt, work, &agree, err)) ||
			     agree))
		return rc;
	return each_unit(c, popt, work, err);
}

/* Every combo of every longer segment, one probe each. */
static int measure_complete(ArChain *c, const ArPlanOptions *popt,
			    ArBudget *work, ArError *err)
{
	Probe pr = {0};
	int rc = AR_OK;
	probe_room(&pr, 1);
	pr.n = 1;
	for (int a = 0; a <= c->L && !rc; a++)
		for (int b = a + 2; b <= c->L + 1 && !rc; b++)
			for (int e = 0; e < entries(c, a, b - a) && !rc; e++) {
				pr.a[0] = a;
				pr.b[0] = b;
				pr.combo[0] = e;
				if (!(rc = probe(c, popt, work, &pr, err)))
					*slot(c, a, b, e) = pr.out[0];
			}
	probe_free(&pr);
	return rc;
}

/* Block-type keys of the segments of length n, grown from n-1's. */
static void grow_keys(const ArChain *c, uint64_t *key, int n)
{
	for (int a = 0; a + n <= c->L + 1; a++) {
		uint64_t h = key[a] ^ (c->sig[a + n] + 0x9e3779b97f4a7c15ull +
				       (key[a] << 6) + (key[a] >> 2));
		h = (h ^ (h >> 31)) * 0x7fb5d329728ea185ull;
		key[a] = h ^ (h >> 27);
	}
}

/* The first measured segment of length n with block-type key k, from an
 * open-addressed table of starts (-1: empty). */
static int *twin(int *tab, int size, const uint64_t *key, uint64_t k)
{
	int i = (int)(k % (uint64_t)size);
	while (tab[i] >= 0 && key[tab[i]] != k)
		i = (i + 1) % size;
	return &tab[i];
}

/*
 * Segments of length n, every unit `none`: the segments at offset o are
 * (o, o+n), (o+n, o+2n), ...; an offset is probed when one of its
 * segments has a block-type key not measured yet, the others are filled
 * from their twins.  Two segments with one key that measure differently
 * make keys untrusted for this length: then every offset is probed.
 */
static int measure_length(ArChain *c, const ArPlanOptions *popt,
			  ArBudget *work, const uint64_t *key, int n,
			  ArError *err)
{
	int np = c->L + 2, size = 2 * np + 1, rc = AR_OK;
	int *tab = ar_xmalloc((size_t)size * sizeof(int));
	bool *done = ar_xcalloc((size_t)np + 1, sizeof(bool));
	bool trust = true;
	Probe pr = {0};

	probe_room(&pr, np / n + 1);
	for (int i = 0; i < size; i++)
		tab[i] = -1;
	for (int pass = 0; pass < 2 && !rc; pass++) {
		for (int o = 0; o < n && o + n < np && !rc; o++) {
			bool fresh = false;
			pr.n = 0;
			for (int a = o; a + n < np; a += n) {
				pr.a[pr.n] = a;
				pr.b[pr.n] = a + n;
				pr.combo[pr.n++] = -1;
				fresh = fresh || *twin(tab, size, key, key[a]) < 0;
			}
			if (done[o] || (!fresh && trust))
				continue;
			if ((rc = probe(c, popt, work, &pr, err)))
				break;
			done[o] = true;
			for (int r = 0; r < pr.n; r++) {
				int a = pr.a[r], *t = twin(tab, size, key, key[a]);
				*slot(c, a, a + n, 0) = pr.out[r];
				if (*t < 0)
					*t = a;
				else if (!same_seg(slot(c, *t, *t + n, 0),
						   &pr.out[r]))
					trust = false;
			}
		}
		if (trust)
			break;
	}
	for (int a = 0; a + n < np && !rc; a++)
		if (!done[a % n]) {
			int t = *twin(tab, size, key, key[a]);
			assert(t >= 0);
			*slot(c, a, a + n, 0) = *slot(c, t, t + n, 0);
		}
	free(tab);
	free(done);
	probe_free(&pr);
	return rc;
}

/* Whether the segments of length n are those of n-1 grown at their start
 * by one increment per start: peak(a, a+n) - peak(a+1, a+n) equals
 * peak(a, a+n-1) - peak(a+1, a+n-1), cost likewise, kept unchanged. */
static bool grows_evenly(ArChain *c, int n)
{
	for (int a = 0; a + n <= c->L + 1; a++) {
		const ArSeg *x = freed(c, a, a + n), *y = freed(c, a + 1, a + n);
		const ArSeg *xs = freed(c, a, a + n - 1);
		const ArSeg *ys = freed(c, a + 1, a + n - 1);
		if (x->peak - y->peak != xs->peak - ys->peak ||
		    x->cost - y->cost != xs->cost - ys->cost ||
		    (x->kept != xs->kept && a + n <= c->L)) {
			return false;
		}
	}
	return true;
}

/* Prefix sums of the increments (see ar_chain_long_seg). */
static void increments(ArChain *c)
{
	int np = c->L + 2, d = c->D;
	c->inc_peak = ar_xcalloc((size_t)np + 1, sizeof(int64_t));
	c->inc_cost = ar_xcalloc((size_t)np + 1, sizeof(int64_t));
	for (int i = 1; i < np; i++) {
		int64_t ip = 0, ic = 0;
		if (i - 1 + d - 1 <= c->L + 1) {
			ip = freed(c, i - 1, i + d - 2)->peak -
			     freed(c, i, i + d - 2)->peak;
			ic = freed(c, i - 1, i + d - 2)->cost -
			     freed(c, i, i + d - 2)->cost;
		}
		c->inc_peak[i] = c->inc_peak[i - 1] + ip;
		c->inc_cost[i] = c->inc_cost[i - 1] + ic;
	}
}

int ar_chain_measure(ArChain *c, const ArPlanOptions *popt, ArBudget *work,
		     ArError *err)
{
	int np = c->L + 2, rc, n;
	uint64_t *key;

	layout(c, c->complete || np - 1 < SPAN_MAX ? np - 1 : SPAN_MAX);
	if ((rc = measure_options(c, popt, work, err)))
		return rc;
	c->wmax = c->span;
	if (c->complete)
		return measure_complete(c, popt, work, err);
	key = ar_xmalloc((size_t)np * sizeof *key);
	for (int a = 0; a < np; a++)
		key[a] = c->sig[a] ^ (uint64_t)(a == 0);
	grow_keys(c, key, 1);
	for (n = 2; n <= c->span; n++) {
		grow_keys(c, key, n);
		if ((rc = measure_length(c, popt, work, key, n, err)))
			break;
		if (n >= 3 && n < np - 1 && grows_evenly(c, n)) {
			c->extrapolate = true;
			break;
		}
	}
	free(key);
	if (rc > 0)
		return rc;
	/* Out of work: the lengths measured in full are what there is. */
	c->D = c->wmax = rc < 0 ? n - 1 : n <= c->span ? n : c->span;
	if (c->extrapolate) {
		increments(c);
		c->wmax = np - 1;
	}
	return AR_OK;
}
