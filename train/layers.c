/*
 * layers.c — the layers of a forward graph: cut points, and the longest
 * run of repeated blocks between them (or the bounds an expression names).
 *
 * A cut point is an activation that alone is open right after the step
 * producing it: everything the rest of the forward pass reads is that
 * tensor, the graph inputs and constants.  In a pre-norm transformer the
 * cut points are its residual stream (each layer's input and the sum
 * after its attention), plus the embeddings before and the head after.
 * The steps between consecutive cut points form segments; each gets a
 * signature (ops, shapes, and how each input is wired: a constant, the
 * segment's entry, or the step so many before), and the layers are the
 * longest run of one repeating sequence of signatures, one period each:
 * two segments (attention, MLP) a transformer layer.
 */
#include "layers.h"
#include "ops.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* Activations a forward step produces (the open ones are among them). */
static bool counted(const ArGraph *g, int nfwd, int t)
{
	int p = t < 0 ? -1 : g->tensors[t].producer;
	return p >= 0 && p < nfwd && ar_in_arena(g, t);
}

/* Per tensor, the last node in [0, nfwd] that reads it (nfwd for a graph
 * output), -1 for none. */
static int *last_reads(const ArGraph *g, int nfwd)
{
	int *last = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	int end = nfwd < g->nnodes ? nfwd + 1 : g->nnodes;
	for (int t = 0; t < g->ntensors; t++)
		last[t] = g->tensors[t].kind == AR_TK_OUTPUT ? nfwd : -1;
	for (int k = 0; k < end; k++)
		for (int j = 0; j < g->nodes[k].ninputs; j++) {
			int t = g->nodes[k].inputs[j];
			if (t >= 0 && last[t] < k)
				last[t] = k;
		}
	return last;
}

int ar_cut_points(const ArGraph *g, int nfwd, int *cut)
{
	int *last = last_reads(g, nfwd);
	int *closed = ar_xcalloc((size_t)g->ntensors + 1, sizeof(int));
	int n = 0, open = 0;
	int64_t sum = 0;        /* of the open ids: the one left, when one is */

	for (int k = 0; k < nfwd; k++) {
		const ArNode *nd = &g->nodes[k];
		if (!ar_is_step(g, k))
			continue;
		for (int j = 0; j < nd->ninputs; j++) {
			int t = nd->inputs[j];
			if (counted(g, nfwd, t) && last[t] == k && !closed[t]) {
				closed[t] = 1;
				open--;
				sum -= t;
			}
		}
		for (int j = 0; j < nd->noutputs; j++) {
			int t = nd->outputs[j];
			if (counted(g, nfwd, t) && last[t] > k)
				open++, sum += t;
		}
		if (open == 1 && g->tensors[sum].producer == k)
			cut[n++] = (int)sum;
	}
	free(last);
	free(closed);
	return n;
}

static uint64_t mix(uint64_t h, int64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (uint64_t)v >> (8 * i) & 0xff;
		h *= 1099511628211ull;
	}
	return h;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = mix(h, *s);
	return mix(h, 0);
}

static uint64_t mix_shape(uint64_t h, const ArTensor *t)
{
	h = mix(h, t->dtype);
	h = mix(h, t->rank);
	for (int i = 0; i < t->rank; i++)
		h = mix(h, t->dims[i]);
	return h;
}

/* The signature of the steps in (from, to]. */
static uint64_t signature(const ArGraph *g, int from, int to)
{
	uint64_t h = 14695981039346656037ull;
	for (int k = from + 1; k <= to; k++) {
		const ArNode *n = &g->nodes[k];
		if (!ar_is_step(g, k))
			continue;
		h = mix_str(mix_str(h, n->op), n->domain);
		h = mix(mix(h, n->ninputs), n->noutputs);
		for (int j = 0; j < n->ninputs; j++) {
			int t = n->inputs[j], p;
			if (t < 0) {
				h = mix(h, -1);
				continue;
			}
			p = g->tensors[t].producer;
			h = mix_shape(h, &g->tensors[t]);
			/* a constant, a graph input, the entry, or a step of
			 * the segment so many steps back */
			h = mix(h, !ar_in_arena(g, t) ? -2 : p < 0 ? -3 :
				   p <= from ? -4 : k - p);
		}
		for (int j = 0; j < n->noutputs; j++)
			if (n->outputs[j] >= 0)
				h = mix_shape(h, &g->tensors[n->outputs[j]]);
	}
	return h;
}

/* Longest periods looked for: a layer of more segments is not a layer. */
#define MAX_PERIOD 32

/* The longest run of >= 2 repeats of a period of sig[0..m): its start,
 * period and repeats (0 when there is none). */
static void longest_run(const uint64_t *sig, int m, int *start, int *period,
			int *reps)
{
	int best = 0;
	*reps = 0;
	for (int p = 1; p <= MAX_PERIOD && 2 * p <= m; p++)
		for (int s = 0; s + 2 * p <= m; s++) {
			int r = 1;
			/* A run one period earlier covers more. */
			if (s >= p && !memcmp(sig + s - p, sig + s,
					      (size_t)p * sizeof *sig))
				continue;
			while (s + (r + 1) * p <= m &&
			       !memcmp(sig + s, sig + s + r * p,
				       (size_t)p * sizeof *sig))
				r++;
			if (r >= 2 && r * p > best) {
				best = r * p;
				*start = s, *period = p, *reps = r;
			}
		}
}

static void alloc_layers(ArLayers *l, int n)
{
	l->n = n;
	l->bound = ar_xmalloc(((size_t)n + 1) * sizeof(int));
	l->start = ar_xmalloc(((size_t)n + 1) * sizeof(int));
}

static int by_repeats(const ArGraph *g, int nfwd, ArLayers *l,
		      ArError *err)
{
	int *cut = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	int ncut = ar_cut_points(g, nfwd, cut), s = 0, p = 0, r = 0;
	uint64_t *sig = ar_xmalloc(((size_t)ncut + 1) * sizeof *sig);

	for (int j = 0; j + 1 < ncut; j++)
		sig[j] = signature(g, g->tensors[cut[j]].producer,
				   g->tensors[cut[j + 1]].producer);
	if (ncut > 1)
		longest_run(sig, ncut - 1, &s, &p, &r);
	free(sig);
	if (!r) {
		free(cut);
		return ar_fail(err, AR_EXIT_MODEL, "found no layers (no "
			       "repeated blocks between the activations that "
			       "cut the forward pass); name each layer's "
			       "input with --layer-boundary REGEX");
	}
	alloc_layers(l, r);
	for (int k = 0; k <= r; k++) {
		l->bound[k] = cut[s + k * p];
		l->start[k] = g->tensors[l->bound[k]].producer;
	}
	l->repeated = true;
	free(cut);
	return AR_OK;
}

static int by_regex(const ArGraph *g, int nfwd, const char *regex,
		    ArLayers *l, ArError *err)
{
	regex_t re;
	int n = 0, *hit;

	if (regcomp(&re, regex, REG_EXTENDED | REG_NOSUB))
		return ar_fail(err, AR_EXIT_USAGE, "--layer-boundary: '%s' is "
			       "not a valid regular expression", regex);
	hit = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	/* Graph inputs first (a pipeline stage's received activation), then
	 * in production order: by producer, outputs in their order. */
	for (int i = 0; i < g->ninputs; i++) {
		int t = g->inputs[i];
		if (ar_in_arena(g, t) &&
		    !regexec(&re, g->tensors[t].name, 0, NULL, 0))
			hit[n++] = t;
	}
	for (int k = 0; k < nfwd; k++)
		for (int j = 0; ar_is_step(g, k) && j < g->nodes[k].noutputs;
		     j++) {
			int t = g->nodes[k].outputs[j];
			if (counted(g, nfwd, t) &&
			    !regexec(&re, g->tensors[t].name, 0, NULL, 0))
				hit[n++] = t;
		}
	regfree(&re);
	if (n < 2) {
		free(hit);
		return ar_fail(err, AR_EXIT_MODEL, "--layer-boundary '%s' "
			       "matches %d computed activation%s; a layer "
			       "needs its input and the next one's", regex, n,
			       n == 1 ? "" : "s");
	}
	alloc_layers(l, n - 1);
	for (int k = 0; k < n; k++) {
		l->bound[k] = hit[k];
		l->start[k] = g->tensors[hit[k]].producer;
	}
	l->repeated = false;
	free(hit);
	return AR_OK;
}

int ar_layers_find(const ArGraph *g, int nfwd, const char *regex,
		   ArLayers *out, ArError *err)
{
	memset(out, 0, sizeof *out);
	return regex ? by_regex(g, nfwd, regex, out, err)
		     : by_repeats(g, nfwd, out, err);
}

void ar_layers_free(ArLayers *l)
{
	free(l->bound);
	free(l->start);
	memset(l, 0, sizeof *l);
}

int ar_layer_of(const ArLayers *l, int node)
{
	int lo = 0, hi = l->n;
	if (l->n < 1 || node <= l->start[0] || node > l->start[l->n])
		return -1;
	/* The k with start[k] < node <= start[k + 1]. */
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (l->start[mid] < node)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}
