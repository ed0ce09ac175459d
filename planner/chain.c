/*
 * chain.c — the chain view of a training model (chain.h): its points,
 * units and block types, and the build that gives each unit its options
 * (chain_options.c) and measures the segments (chain_probe.c) for the
 * dynamic program (chain_dp.c).
 *
 * A point is a candidate that, in the forward order, is the only
 * activation crossing the boundary right after its producer: it separates
 * the graph.  VGG, AlexNet and LeNet are chains of one-node units, every
 * candidate a point; a ResNet has a point per block boundary and a
 * transformer two per layer (the residual stream after the attention and
 * after the MLP), its blocks' insides being interior candidates.  A graph
 * without a point is one unit: the search inside it is the whole search.
 *
 * Block types: units whose nodes match one for one (ops, shapes, FLOPs,
 * how each input is reached) share a signature, so the search inside a
 * block runs once per type, and a segment is known by the types it spans.
 * A signature is a 64-bit hash; two types that collided would share
 * measurements, which the real plan of every answer would then catch.
 *
 * Owners, for the memory model of chain_dp.c: each arena buffer of a step
 * graph is owned by a position: p_i (and what is tied to it), its
 * recomputed copy and its gradient by i; a tensor inside unit i (and its
 * kin) by i-1; graph inputs and outputs by none.
 */
#include "chain.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Probes a complete chain may take at most (chain_probe.c). */
#define COMPLETE_MAX 4096

static bool counted(const ArGraph *g, int t, int loss)
{
	return t >= 0 && t != loss && ar_in_arena(g, t) &&
	       g->tensors[t].producer >= 0;
}

/*
 * Points in forward order: the open activations (produced, read later in
 * the forward pass, or a graph output) number one right after the node
 * that produced it.  The sum of the open ids names the one left.
 */
static void find_points(ArChain *c)
{
	const ArTrainModel *m = c->m;
	const ArGraph *g = m->base;
	int nt = g->ntensors, loss = g->nodes[m->nfwd].outputs[0], open = 0;
	int *last = ar_xmalloc(((size_t)nt + 1) * sizeof(int));
	int *seen = ar_xmalloc(((size_t)nt + 1) * sizeof(int));
	int64_t sum = 0;

	for (int t = 0; t < nt; t++)
		last[t] = g->tensors[t].kind == AR_TK_OUTPUT ? m->nfwd + 1 : -1,
		seen[t] = -1;
	for (int k = 0; k <= m->nfwd; k++)
		for (int j = 0; j < g->nodes[k].ninputs; j++) {
			int t = g->nodes[k].inputs[j];
			if (t >= 0 && last[t] < k)
				last[t] = k;
		}
	c->point = ar_xmalloc(((size_t)m->ncand + 2) * sizeof(int));
	for (int k = 0; k < m->nfwd; k++) {
		const ArNode *n = &g->nodes[k];
		if (!ar_is_step(g, k))
			continue;
		for (int j = 0; j < n->ninputs; j++) {
			int t = n->inputs[j];
			if (counted(g, t, loss) && last[t] == k && seen[t] != k)
				seen[t] = k, open--, sum -= t;
		}
		for (int j = 0; j < n->noutputs; j++) {
			int t = n->outputs[j];
			if (counted(g, t, loss) && last[t] > k)
				open++, sum += t;
		}
		if (open == 1 && m->lead[sum] == sum &&
		    g->tensors[sum].producer == k)
			c->point[++c->L] = (int)sum;
	}
	free(last);
	free(seen);
}

/* Units, owners, and each unit's interior candidates in production
 * order (so that units of one type list theirs alike). */
static void assign_units(ArChain *c)
{
	const ArTrainModel *m = c->m;
	const ArGraph *g = m->base;
	int u = 1, n = 0;
	int *at = ar_xcalloc((size_t)g->nnodes + 1, sizeof(int));

	c->unit = ar_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	c->owner = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	c->inner = ar_xmalloc(((size_t)m->ncand + 1) * sizeof(int));
	c->inner_at = ar_xcalloc((size_t)c->L + 3, sizeof(int));
	for (int i = 1; i <= c->L; i++)
		at[g->tensors[c->point[i]].producer] = i;
	for (int k = 0; k <= m->nfwd; k++) {
		c->unit[k] = u;
		if (u <= c->L && g->tensors[c->point[u]].producer == k)
			u++;
	}
	for (int t = 0; t < g->ntensors; t++) {
		const ArTensor *x = &g->tensors[t];
		int lead = m->lead[t], pos;
		c->owner[t] = -1;
		if (x->producer < 0 || x->producer > m->nfwd ||
		    x->kind != AR_TK_ACTIVATION)
			continue;
		pos = lead >= 0 ? at[g->tensors[lead].producer] : 0;
		c->owner[t] = pos && c->point[pos] == lead ?
			      pos : c->unit[x->producer] - 1;
	}
	/* Candidates are in production order, units contiguous in it. */
	for (int i = 0; i < m->ncand; i++) {
		int t = m->cand[i], p = g->tensors[t].producer;
		if (c->owner[t] != at[p] || !at[p])
			c->inner_at[c->unit[p] + 1]++;
	}
	for (u = 1; u <= c->L + 1; u++)
		c->inner_at[u + 1] += c->inner_at[u];
	for (int i = 0; i < m->ncand; i++) {
		int t = m->cand[i], p = g->tensors[t].producer;
		if (c->owner[t] != at[p] || !at[p])
			c->inner[n++] = t;
	}
	assert(n == c->inner_at[c->L + 2]);
	free(at);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	uint64_t f = 0xcbf29ce484222325ull;
	for (; s && *s; s++)
		f = (f ^ (unsigned char)*s) * 0x100000001b3ull;
	return mix(h, f);
}

static uint64_t mix_shape(uint64_t h, const ArTensor *x)
{
	h = mix(h, (uint64_t)x->dtype);
	h = mix(h, (uint64_t)x->rank);
	for (int d = 0; d < x->rank; d++)
		h = mix(h, (uint64_t)x->dims[d]);
	return mix(h, (uint64_t)x->bytes);
}

/* How node k's input t is reached, seen from unit u starting at node
 * first: made inside the unit (which node, which output), the unit's
 * input point, or from outside (by what it is). */
static uint64_t mix_input(const ArChain *c, uint64_t h, int u, int first,
			  int t)
{
	const ArTrainModel *m = c->m;
	const ArTensor *x;
	int p;
	if (t < 0)
		return mix(h, 1);
	x = &m->base->tensors[t];
	p = x->producer;
	if (p >= first && c->unit[p] == u) {
		int slot = 0;
		while (m->base->nodes[p].outputs[slot] != t)
			slot++;
		return mix(mix(mix(h, 2), (uint64_t)(p - first)),
			   (uint64_t)slot);
	}
	h = mix(h, u > 1 && t == c->point[u - 1] ? 3 : 4);
	h = mix(h, (uint64_t)x->kind * 8 + m->param[t] * 4 +
		m->frozen[t] * 2 + m->grad[t]);
	return mix_shape(h, x);
}

/* The block type of each unit, and the first unit of each type. */
static void signatures(ArChain *c)
{
	const ArTrainModel *m = c->m;
	const ArGraph *g = m->base;
	int n = c->L + 2, first = 0;

	c->sig = ar_xcalloc((size_t)n, sizeof *c->sig);
	c->type_rep = ar_xmalloc((size_t)n * sizeof(int));
	for (int k = 0; k <= m->nfwd; k++) {
		const ArNode *x = &g->nodes[k];
		int u = c->unit[k];
		uint64_t h;
		if (k == 0 || c->unit[k - 1] != u)
			first = k;
		h = mix_str(mix_str(c->sig[u], x->op), x->domain);
		h = mix(h, (uint64_t)ar_is_step(g, k) << 4 |
			(uint64_t)(m->rule[k] != NULL) << 3 |
			(uint64_t)(m->fused[k].op != NULL) << 2 |
			(uint64_t)m->in_pattern[k] << 1 | m->in_loss[k]);
		h = mix(h, (uint64_t)m->flops[k]);
		for (int j = 0; j < x->ninputs; j++)
			h = mix_input(c, h, u, first, x->inputs[j]);
		for (int j = 0; j < x->noutputs; j++) {
			int t = x->outputs[j];
			if (t < 0) {
				h = mix(h, 5);
				continue;
			}
			h = mix(h, (uint64_t)(m->lead[t] == t) << 2 |
				(uint64_t)(m->lead[t] >= 0) << 1 |
				m->saved[t]);
			h = mix_shape(h, &g->tensors[t]);
		}
		c->sig[u] = h;
	}
	for (int u = 0; u < n; u++) {
		c->type_rep[u] = u;
		for (int v = 0; v < u; v++)
			if (c->sig[v] == c->sig[u] &&
			    ar_chain_ninner(c, v) == ar_chain_ninner(c, u)) {
				c->type_rep[u] = c->type_rep[v];
				break;
			}
	}
}

/* Whether every combo of every segment, each unit listing all subsets of
 * its interior, fits in COMPLETE_MAX probes. */
static bool small_enough(const ArChain *c)
{
	int64_t total = 0;
	for (int u = 1; u <= c->L + 1; u++)
		if (!ar_chain_all_subsets(ar_chain_ninner(c, u)))
			return false;
	for (int a = 0; a <= c->L; a++) {
		int64_t k = 1;
		for (int b = a + 1; b <= c->L + 1; b++) {
			k <<= ar_chain_ninner(c, b);
			total += k;
			if (total > COMPLETE_MAX)
				return false;
		}
	}
	return true;
}

void ar_chain_apply(const ArChain *c, int a, int b, int combo, bool *res)
{
	for (int i = a + 1; i < b; i++)
		res[c->point[i]] = false;
	for (int u = a + 1; u <= b; u++) {
		int o = combo < 0 ? c->none_opt[u] : combo % c->nopt[u];
		const bool *row = c->opt[u] + (size_t)o * ar_chain_ninner(c, u);
		for (int j = 0; j < ar_chain_ninner(c, u); j++)
			res[c->inner[c->inner_at[u] + j]] = row[j];
		if (combo >= 0)
			combo /= c->nopt[u];
	}
}

const ArSeg *ar_chain_segs(const ArChain *c, int a, int b, int *n)
{
	const int *at = &c->seg_at[a * (c->span + 1) + (b - a)];
	assert(b - a >= 1 && b - a <= c->D && b <= c->L + 1);
	*n = at[1] - at[0];
	return &c->segs[at[0]];
}

bool ar_chain_long_seg(const ArChain *c, int a, int b, ArSeg *out)
{
	int n, d = b - c->D;
	const ArSeg *s;
	if (!c->extrapolate || b - a > c->wmax)
		return false;
	/* (a, b) is (d, b), measured, grown by the increments of the units
	 * d, d-1, ..., a+1 (chain_probe.c). */
	s = ar_chain_segs(c, d, b, &n);
	assert(n == 1);
	*out = s[0];
	out->peak += c->inc_peak[d] - c->inc_peak[a];
	out->cost += c->inc_cost[d] - c->inc_cost[a];
	s = ar_chain_segs(c, a, a + c->D, &n);
	out->kept = s[n - 1].kept;
	out->combo = -1;
	return true;
}

int ar_chain_build(const ArTrainModel *m, const ArPlanOptions *plan,
		   ArBudget *work, ArChain **out, ArError *err)
{
	ArChain *c = ar_xcalloc(1, sizeof *c);
	ArPlanOptions popt = *plan;
	ArBudget share;
	int rc;

	*out = NULL;
	c->m = m;
	find_points(c);
	assign_units(c);
	signatures(c);
	c->complete = small_enough(c);
	ar_chain_options(c, work);
	popt.order = AR_ORDER_FILE;
	popt.budget = 0;
	/* A quarter of the work stays for the curve. */
	ar_budget_share(work, 3, 4, &share);
	rc = ar_chain_measure(c, &popt, &share, err);
	ar_budget_settle(work, &share);
	if (!rc && !ar_chain_curve(c, work))
		rc = -1;
	if (rc) {
		ar_chain_free(c);
		return rc > 0 ? rc : AR_OK;
	}
	*out = c;
	return AR_OK;
}

void ar_chain_free(ArChain *c)
{
	if (!c)
		return;
	ar_chain_curve_free(c);
	for (int u = 0; c->opt && u <= c->L + 1; u++)
		free(c->opt[u]);
	free(c->opt);
	free(c->nopt);
	free(c->none_opt);
	free(c->point);
	free(c->unit);
	free(c->owner);
	free(c->inner);
	free(c->inner_at);
	free(c->sig);
	free(c->type_rep);
	free(c->seg_at);
	free(c->segs);
	free(c->inc_peak);
	free(c->inc_cost);
	free(c);
}

bool ar_chain_complete(const ArChain *c)
{
	return c->complete;
}

int ar_chain_points(const ArChain *c)
{
	return c->L;
}

int ar_chain_probes(const ArChain *c)
{
	return c->nprobes;
}
