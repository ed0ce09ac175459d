/*
 * patterns.c — the chains of ops/grad_patterns.c in a training model: each
 * match gets one backward step, its fused op's gradient, from the chain's
 * input to its output (ArFusedGrad on the last node), and the other nodes
 * of the chain get none.
 *
 * A match must be exact: each step a step of the graph, the op the
 * pattern names, its operands the chain's input, the previous output or a
 * scalar constant of the pattern's value (read from the forward graph,
 * within 1e-3 relative), and every output but the last read by the next
 * step alone and by nothing else (not a graph output either), so nothing
 * else needs the values the fused backward does not keep.
 */
#include "train.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

typedef struct Matcher {
	const ArTrainModel *m;
	const ArGraph *fwd;     /* the constants' values */
	int *nreaders;          /* per tensor: nodes reading it */
	int *reader;            /* per tensor: one of them */
	bool *isout;            /* per tensor: a graph output */
} Matcher;

static bool is_op(const ArNode *n, const char *op)
{
	const ArOpDef *d = ar_op_of(n);
	return d && d == ar_op_find(NULL, op, n->opset);
}

static bool scalar_is(const Matcher *mt, int t, double v)
{
	const ArTensor *x = &mt->fwd->tensors[t];
	double got;
	if ((x->kind != AR_TK_CONSTANT && x->kind != AR_TK_WEIGHT) ||
	    !x->data || ar_numel(x) != 1)
		return false;
	switch (x->dtype) {
	case AR_DT_FLOAT: got = *(const float *)x->data; break;
	case AR_DT_DOUBLE: got = *(const double *)x->data; break;
	case AR_DT_FLOAT16: case AR_DT_BFLOAT16: {
		/* Half formats: widen by hand (no compiler type for them). */
		uint16_t h = *(const uint16_t *)x->data;
		if (x->dtype == AR_DT_BFLOAT16) {
			union { uint32_t u; float f; } w = {(uint32_t)h << 16};
			got = w.f;
		} else {
			int e = h >> 10 & 31, f = h & 1023;
			got = e ? ldexp(1024 + f, e - 25) : ldexp(f, -24);
			got = h >> 15 ? -got : got;
		}
		break;
	}
	default:
		return false;
	}
	return fabs(got - v) <= 1e-3 * fabs(v);
}

static bool operand_is(const Matcher *mt, const ArPatOperand *o, int t,
		       int x, int prev)
{
	switch (o->kind) {
	case AR_PAT_X: return t == x;
	case AR_PAT_PREV: return t == prev;
	default: return scalar_is(mt, t, o->value);
	}
}

static bool step_is(const Matcher *mt, const ArPatStep *s, const ArNode *n,
		    int x, int prev)
{
	if (!is_op(n, s->op) || n->nexplicit != s->nin || n->noutputs < 1 ||
	    n->outputs[0] < 0)
		return false;
	for (int j = 0; j < s->nin; j++)
		if (n->inputs[j] < 0)
			return false;
	if (s->nin == 1)
		return operand_is(mt, &s->in[0], n->inputs[0], x, prev);
	return (operand_is(mt, &s->in[0], n->inputs[0], x, prev) &&
		operand_is(mt, &s->in[1], n->inputs[1], x, prev)) ||
	       (s->commutes &&
		operand_is(mt, &s->in[0], n->inputs[1], x, prev) &&
		operand_is(mt, &s->in[1], n->inputs[0], x, prev));
}

/* Follows pattern p from node first with x as the chain's input; the
 * chain's nodes into chain. */
static bool follow(const Matcher *mt, const ArGradPattern *p, int first,
		   int x, int *chain)
{
	const ArGraph *g = mt->m->base;
	int prev = -1, node = first;
	for (int k = 0; k < p->nsteps; k++) {
		const ArNode *s = &g->nodes[node];
		if (!ar_is_step(g, node) || mt->m->in_pattern[node] ||
		    !step_is(mt, &p->steps[k], s, x, prev))
			return false;
		chain[k] = node;
		prev = s->outputs[0];
		if (k + 1 == p->nsteps)
			break;
		if (mt->nreaders[prev] != 1 || mt->isout[prev] ||
		    g->tensors[prev].kind != AR_TK_ACTIVATION)
			return false;
		node = mt->reader[prev];
	}
	return true;
}

/* Matches pattern p from node first, trying each computed input as the
 * chain's input; that input, or -1. */
static int match(const Matcher *mt, const ArGradPattern *p, int first,
		 int *chain)
{
	const ArGraph *g = mt->m->base;
	const ArNode *n = &g->nodes[first];
	for (int j = 0; j < n->nexplicit; j++) {
		int x = n->inputs[j];
		if (x >= 0 && ar_in_arena(g, x) && follow(mt, p, first, x, chain))
			return x;
	}
	return -1;
}

void ar_train_patterns(ArTrainModel *m, const ArGraph *fwd)
{
	const ArGraph *g = m->base;
	Matcher mt = {m, fwd, NULL, NULL, NULL};
	int np, chain[AR_PAT_MAX_STEPS];
	const ArGradPattern *pats = ar_grad_patterns(&np);

	mt.nreaders = ar_xcalloc((size_t)g->ntensors + 1, sizeof(int));
	mt.reader = ar_xcalloc((size_t)g->ntensors + 1, sizeof(int));
	mt.isout = ar_xcalloc((size_t)g->ntensors + 1, sizeof(bool));
	for (int i = 0; i < g->noutputs; i++)
		mt.isout[g->outputs[i]] = true;
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++) {
			int t = g->nodes[i].inputs[j];
			if (t >= 0 && (!mt.nreaders[t] || mt.reader[t] != i)) {
				mt.nreaders[t]++;
				mt.reader[t] = i;
			}
		}
	for (int i = 0; i < m->nfwd; i++) {
		if (m->in_pattern[i])
			continue;
		for (int k = 0; k < np; k++) {
			const ArGradPattern *p = &pats[k];
			ArFusedGrad *f;
			int x = match(&mt, p, i, chain);
			if (x < 0)
				continue;
			f = &m->fused[chain[p->nsteps - 1]];
			f->op = ar_op_find(NULL, p->fused, 0);
			assert(f->op && f->op->grad);
			f->x = x;
			f->y = g->nodes[chain[p->nsteps - 1]].outputs[0];
			f->flops = 0;
			for (int s = 0; s < p->nsteps; s++) {
				m->in_pattern[chain[s]] = true;
				f->flops += m->flops[chain[s]];
			}
			break;
		}
	}
	free(mt.nreaders);
	free(mt.reader);
	free(mt.isout);
}
