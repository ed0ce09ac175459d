/*
 * dotfold.c — the boxes of the dataflow picture: repeated blocks, folded
 * chains, or the neighbourhood of one step.
 *
 * Repeated blocks are found on the step order, left to right: at each
 * step, the period (up to MAX_PERIOD steps) whose repeats cover the most
 * steps wins, the shorter on a tie; the search resumes after the last
 * repeat.  Two steps at the same place of two repeats match when they run
 * the same op in the same phase and read alike: each arena input made the same number of
 * steps before within the repeat, or in the repeat before, or far away
 * (a saved activation, a gradient for the update), or being a graph
 * input, or a weight (which weight does not matter).  So DenseNet's dense
 * layers, ResNet's bottlenecks, a transformer's layers and the optimizer's
 * run of updates each collapse to one drawn repeat.
 *
 * Chains are folded within the first repeat of a block and outside
 * blocks: a step whose arena outputs are read by one step only, which
 * reads no other step's output, joins that step's box.
 */
#include "dotfold.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PERIOD 128    /* longest repeated block found, in steps */
#define MIN_SPAN 4        /* fewest steps worth collapsing */

typedef struct Ctx {
	const ArGraph *g;
	const ArPlan *p;
	const int *step_of;     /* the view's */
	const int *rstart, *readers;
} Ctx;

static const ArNode *node_at(const Ctx *c, int s)
{
	return &c->g->nodes[c->p->steps[s]];
}

static bool in_arena(const Ctx *c, int x)
{
	return x >= 0 && c->p->slots[x].planned;
}

/* The step that made tensor x, or -1 (graph input, weight, constant). */
static int maker(const Ctx *c, int x)
{
	int n = c->g->tensors[x].producer;
	return n >= 0 ? c->step_of[n] : -1;
}

static void readers_build(const ArGraph *g, const ArPlan *p, ArDotView *v)
{
	int *at = ar_xcalloc((size_t)g->ntensors + 2, sizeof *at), total = 0;

	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		for (int j = 0; j < n->ninputs; j++)
			if (n->inputs[j] >= 0)
				at[n->inputs[j] + 1]++, total++;
	}
	for (int t = 0; t < g->ntensors; t++)
		at[t + 1] += at[t];
	v->rstart = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *v->rstart);
	memcpy(v->rstart, at, ((size_t)g->ntensors + 1) * sizeof *at);
	v->readers = ar_xmalloc(((size_t)total + 1) * sizeof *v->readers);
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		for (int j = 0; j < n->ninputs; j++)
			if (n->inputs[j] >= 0)
				v->readers[at[n->inputs[j]]++] = s;
	}
	free(at);
}

/*
 * How step s, at place r of a repeat of period L, reads its input j: -1
 * none, -2 from outside the arena, -3 a graph input, -4 from far away,
 * d (made d steps before, within the repeat) or L + d (in the repeat
 * before).
 */
static long how_read(const Ctx *c, int s, int j, int r, int L)
{
	int x = node_at(c, s)->inputs[j], q, d;

	if (x < 0)
		return -1;
	if (!in_arena(c, x))
		return -2;
	if ((q = maker(c, x)) < 0)
		return -3;
	d = s - q;
	return d <= r ? d : d <= r + L ? (long)L + d : -4;
}

static bool same_step(const Ctx *c, int s, int t, int r, int L)
{
	const ArNode *a = node_at(c, s), *b = node_at(c, t);

	if (a->phase != b->phase || strcmp(a->op, b->op) ||
	    strcmp(a->domain, b->domain) || a->ninputs != b->ninputs ||
	    a->noutputs != b->noutputs)
		return false;
	for (int j = 0; j < a->ninputs; j++)
		if (how_read(c, s, j, r, L) != how_read(c, t, j, r, L))
			return false;
	return true;
}

/* How many repeats of the L steps from i follow each other. */
static int repeats(const Ctx *c, int i, int L)
{
	int k = 1;
	while (i + (k + 1) * L <= c->p->nsteps) {
		for (int r = 0; r < L; r++)
			if (!same_step(c, i + r, i + k * L + r, r, L))
				return k;
		k++;
	}
	return k;
}

static void find_blocks(const Ctx *c, ArDotView *v)
{
	int n = c->p->nsteps, cap = 0;

	for (int i = 0; i < n;) {
		int best_l = 0, best_k = 0;
		for (int L = 1; L <= MAX_PERIOD && i + 2 * L <= n; L++) {
			int k = repeats(c, i, L);
			/* A single op must repeat thrice to count. */
			if (k >= 2 + (L == 1) && k * L >= MIN_SPAN &&
			    k * L > best_k * best_l)
				best_l = L, best_k = k;
		}
		if (!best_l) {
			i++;
			continue;
		}
		if (v->nblocks == cap) {
			cap = cap ? 2 * cap : 16;
			v->blocks = ar_xrealloc(v->blocks, (size_t)cap *
						sizeof *v->blocks);
		}
		v->blocks[v->nblocks] = (ArDotBlock){i, best_l, best_k};
		for (int s = i; s < i + best_l * best_k; s++) {
			v->block[s] = v->nblocks;
			v->repeat[s] = (s - i) / best_l;
		}
		v->nblocks++;
		i += best_l * best_k;
	}
}

/* Whether step u is drawn with its only reader's box: all its arena
 * outputs read, by one step of its own repeat only, which reads no
 * other step's output; no output is a graph output. */
static int fold_target(const Ctx *c, const ArDotView *v, int u)
{
	const ArNode *n = node_at(c, u);
	int only = -1;

	for (int j = 0; j < n->noutputs; j++) {
		int x = n->outputs[j];
		if (!in_arena(c, x))
			continue;
		if (c->g->tensors[x].kind == AR_TK_OUTPUT ||
		    c->rstart[x] == c->rstart[x + 1])
			return -1;
		for (int k = c->rstart[x]; k < c->rstart[x + 1]; k++) {
			int r = c->readers[k];
			if ((only >= 0 && r != only) || v->block[r] != v->block[u] ||
			    v->repeat[r] != v->repeat[u])
				return -1;
			only = r;
		}
	}
	if (only < 0)
		return -1;
	n = node_at(c, only);
	for (int j = 0; j < n->ninputs; j++)
		if (in_arena(c, n->inputs[j]) && maker(c, n->inputs[j]) != u)
			return -1;
	return only;
}

static void condense(const Ctx *c, ArDotView *v)
{
	int n = c->p->nsteps;
	int *into = ar_xmalloc(((size_t)n + 1) * sizeof *into);

	find_blocks(c, v);
	/* Boxes of the first repeats and the steps outside blocks; a chain
	 * takes the box of its first step (steps come after their makers). */
	for (int s = 0; s < n; s++)
		into[s] = -1;
	for (int s = 0; s < n; s++) {
		int t;
		if (v->repeat[s] != 0)
			continue;
		if (into[s] < 0)
			into[s] = v->nboxes++;
		v->box[s] = into[s];
		if ((t = fold_target(c, v, s)) >= 0)
			into[t] = into[s];
	}
	for (int s = 0; s < n; s++)
		if (v->repeat[s] > 0) {
			const ArDotBlock *b = &v->blocks[v->block[s]];
			v->box[s] = v->box[s - v->repeat[s] * b->period];
		}
	free(into);
}

/*
 * Segments: runs of consecutive steps of one phase (a training step has a
 * few dozen).  An inference plan, one run, is cut instead into pieces of
 * as many units (a block, or a step outside blocks) as leave at most
 * AR_DOT_MAX_BOXES.  Each segment replaces the boxes it holds.
 */
static void segment(const Ctx *c, ArDotView *v)
{
	int n = c->p->nsteps, units = 0, runs = 1, per, in_seg = 0, seg = -1;
	int *unit_end = ar_xmalloc(((size_t)n + 1) * sizeof *unit_end);

	for (int s = 0; s < n; s++) {
		const ArDotBlock *b = v->block[s] >= 0 ? &v->blocks[v->block[s]] :
				      NULL;
		unit_end[s] = b ? b->first + b->period * b->count : s + 1;
		s = unit_end[s] - 1;
		units++;
	}
	for (int s = 1; s < n; s++)
		runs += node_at(c, s)->phase != node_at(c, s - 1)->phase;
	per = runs > 1 ? n : (units + AR_DOT_MAX_BOXES - 1) / AR_DOT_MAX_BOXES;
	for (int s = 0; s < n; s = unit_end[s]) {
		if (seg < 0 || in_seg == per ||
		    node_at(c, s)->phase != node_at(c, s - 1)->phase) {
			seg++;
			in_seg = 0;
		}
		for (int t = s; t < unit_end[s]; t++)
			v->box[t] = seg;
		in_seg++;
	}
	v->nboxes = seg + 1;
	v->segments = true;
	free(unit_end);
}

/* Steps within radius of the focus, up and down the dataflow. */
static void focus(const Ctx *c, ArDotView *v, int f, int radius)
{
	int n = c->p->nsteps, head = 0, tail = 0;
	int *dist = ar_xmalloc(((size_t)n + 1) * sizeof *dist);
	int *queue = ar_xmalloc(((size_t)n + 1) * sizeof *queue);

	assert(f >= 0 && f < n);
	for (int s = 0; s < n; s++)
		dist[s] = -1;
	dist[f] = 0;
	queue[tail++] = f;
	while (head < tail) {
		int s = queue[head++];
		const ArNode *x = node_at(c, s);
		if (dist[s] == radius)
			continue;
		for (int j = 0; j < x->ninputs; j++) {
			int q = in_arena(c, x->inputs[j]) ? maker(c, x->inputs[j]) : -1;
			if (q >= 0 && dist[q] < 0)
				dist[q] = dist[s] + 1, queue[tail++] = q;
		}
		for (int j = 0; j < x->noutputs; j++) {
			int t = x->outputs[j];
			if (!in_arena(c, t))
				continue;
			for (int k = c->rstart[t]; k < c->rstart[t + 1]; k++) {
				int r = c->readers[k];
				if (dist[r] < 0)
					dist[r] = dist[s] + 1, queue[tail++] = r;
			}
		}
	}
	for (int s = 0; s < n; s++)
		v->box[s] = dist[s] >= 0 ? v->nboxes++ : -1;
	free(dist), free(queue);
}

void ar_dot_view(const ArGraph *g, const ArPlan *p, ArDotMode mode,
		 int focus_step, int radius, ArDotView *v)
{
	Ctx c = {g, p, NULL, NULL, NULL};
	int n = p->nsteps, *at;

	memset(v, 0, sizeof *v);
	v->nsteps = n;
	v->box = ar_xmalloc(((size_t)n + 1) * sizeof *v->box);
	v->repeat = ar_xcalloc((size_t)n + 1, sizeof *v->repeat);
	v->block = ar_xmalloc(((size_t)n + 1) * sizeof *v->block);
	for (int s = 0; s < n; s++)
		v->block[s] = -1;
	v->step_of = ar_xmalloc(((size_t)g->nnodes + 1) * sizeof *v->step_of);
	for (int i = 0; i < g->nnodes; i++)
		v->step_of[i] = -1;
	for (int s = 0; s < n; s++)
		v->step_of[p->steps[s]] = s;
	readers_build(g, p, v);
	c.step_of = v->step_of;
	c.rstart = v->rstart;
	c.readers = v->readers;
	if (mode == AR_DOT_CONDENSED) {
		condense(&c, v);
		if (v->nboxes > AR_DOT_MAX_BOXES)
			segment(&c, v);
	} else if (mode == AR_DOT_FOCUS)
		focus(&c, v, focus_step, radius);
	else
		for (int s = 0; s < n; s++)
			v->box[s] = v->nboxes++;
	/* The boxes' steps: first repeats only, in step order. */
	v->start = ar_xcalloc((size_t)v->nboxes + 2, sizeof *v->start);
	v->steps = ar_xmalloc(((size_t)n + 1) * sizeof *v->steps);
	v->box_block = ar_xmalloc(((size_t)v->nboxes + 1) * sizeof *v->box_block);
	for (int s = 0; s < n; s++)
		if (v->box[s] >= 0 && (v->repeat[s] == 0 || v->segments)) {
			v->start[v->box[s] + 1]++;
			v->box_block[v->box[s]] = v->segments ? -1 : v->block[s];
		}
	for (int b = 0; b < v->nboxes; b++)
		v->start[b + 1] += v->start[b];
	at = ar_xmalloc(((size_t)v->nboxes + 1) * sizeof *at);
	memcpy(at, v->start, ((size_t)v->nboxes + 1) * sizeof *at);
	for (int s = 0; s < n; s++)
		if (v->box[s] >= 0 && (v->repeat[s] == 0 || v->segments))
			v->steps[at[v->box[s]]++] = s;
	free(at);
}

void ar_dot_view_free(ArDotView *v)
{
	free(v->box), free(v->repeat), free(v->block);
	free(v->start), free(v->steps), free(v->box_block);
	free(v->blocks);
	free(v->step_of), free(v->rstart), free(v->readers);
	memset(v, 0, sizeof *v);
}
