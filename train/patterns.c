/*
 * patterns.c — the chains of ops/grad_patterns.c in a training model: each
 * match gets one backward step, its fused op's gradient, from the chain's
 * input (and the tensors its ARG operands name: a norm's scale and bias)
 * to the outputs the pattern names (ArFusedGrad on the last node), and the
 * other nodes of the chain get none.
 *
 * A match must be exact: each step a step of the graph, the op the
 * pattern names, reading the previous step's output and besides the
 * chain's input, an earlier step's output, a scalar constant of the
 * pattern's value (read from the forward graph, within 1e-3 relative) or
 * of any value, or an ARG: a tensor outside the arena (a weight), of one
 * row's elements when the chain takes row statistics; a row statistic is
 * a mean over trailing axes, kept.  Every output but the last is read
 * only by the chain's own steps (not a graph output either), so nothing
 * else needs the values the fused backward does not keep.
 */
#include "train.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Matcher {
	const ArTrainModel *m;
	const ArGraph *fwd;     /* the constants' values */
	int *rstart;            /* per tensor: its readers, rlist[rstart[t]] */
	int *rlist;             /* up to rstart[t + 1] (each node once) */
	bool *isout;            /* per tensor: a graph output */
} Matcher;

/* A match under way: the chain's input, its nodes (n of them), its ARG
 * tensors. */
typedef struct Match {
	int x, n;
	int node[AR_PAT_MAX_STEPS];
	int arg[AR_PAT_MAX_IO];
} Match;

static bool is_op(const ArNode *n, const char *op)
{
	const ArOpDef *d = ar_op_of(n);
	return d && d == ar_op_find(NULL, op, n->opset);
}

/* The value of scalar constant t into *v; false when t is none. */
static bool scalar_of(const Matcher *mt, int t, double *v)
{
	const ArTensor *x = &mt->fwd->tensors[t];
	if ((x->kind != AR_TK_CONSTANT && x->kind != AR_TK_WEIGHT) ||
	    !x->data || ar_numel(x) != 1)
		return false;
	switch (x->dtype) {
	case AR_DT_FLOAT: *v = *(const float *)x->data; break;
	case AR_DT_DOUBLE: *v = *(const double *)x->data; break;
	case AR_DT_FLOAT16: case AR_DT_BFLOAT16: {
		/* Half formats: widen by hand (no compiler type for them). */
		uint16_t h = *(const uint16_t *)x->data;
		if (x->dtype == AR_DT_BFLOAT16) {
			union { uint32_t u; float f; } w = {(uint32_t)h << 16};
			*v = w.f;
		} else {
			int e = h >> 10 & 31, f = h & 1023;
			*v = e ? ldexp(1024 + f, e - 25) : ldexp(f, -24);
			*v = h >> 15 ? -*v : *v;
		}
		break;
	}
	default:
		return false;
	}
	return true;
}

static int out_of(const Matcher *mt, int node)
{
	return mt->m->base->nodes[node].outputs[0];
}

static bool operand_is(const Matcher *mt, const ArPatOperand *o, int t,
		       Match *mm, int k)
{
	double v;
	switch (o->kind) {
	case AR_PAT_X: return t == mm->x;
	case AR_PAT_PREV: return t == out_of(mt, mm->node[k - 1]);
	case AR_PAT_STEP: return t == out_of(mt, mm->node[o->index]);
	case AR_PAT_SCALAR: return scalar_of(mt, t, &v);
	case AR_PAT_ARG:
		assert(o->index > 0 && o->index < AR_PAT_MAX_IO);
		if (mm->arg[o->index] >= 0)
			return t == mm->arg[o->index];
		if (t == mm->x || ar_in_arena(mt->m->base, t))
			return false;
		mm->arg[o->index] = t;
		return true;
	default:
		return scalar_of(mt, t, &v) &&
		       fabs(v - o->value) <= 1e-3 * fabs(o->value);
	}
}

/* Operands a, b of node n are operands i, j of step s; ARGs bound on the
 * way are unbound when they are not. */
static bool operands_are(const Matcher *mt, const ArPatStep *s,
			 const ArNode *n, Match *mm, int k, int i, int j)
{
	Match keep = *mm;
	if (operand_is(mt, &s->in[0], n->inputs[i], mm, k) &&
	    (s->nin == 1 || operand_is(mt, &s->in[1], n->inputs[j], mm, k)))
		return true;
	*mm = keep;
	return false;
}

/* Output `out` a mean of `in` over trailing axes, dims kept. */
static bool row_stat(const ArGraph *g, int in, int out)
{
	const ArTensor *a = &g->tensors[in], *b = &g->tensors[out];
	int r = a->rank;
	if (r < 1 || b->rank != r)
		return false;
	while (r > 0 && b->dims[r - 1] == 1)
		r--;
	if (r == a->rank)
		return false;
	for (int i = 0; i < r; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

static bool step_is(const Matcher *mt, const ArPatStep *s, int node,
		    Match *mm, int k)
{
	const ArGraph *g = mt->m->base;
	const ArNode *n = &g->nodes[node];
	if (!ar_is_step(g, node) || mt->m->in_pattern[node] ||
	    !is_op(n, s->op) || n->nexplicit != s->nin || n->noutputs < 1 ||
	    n->outputs[0] < 0)
		return false;
	for (int j = 0; j < s->nin; j++)
		if (n->inputs[j] < 0)
			return false;
	if (s->rows && !row_stat(g, n->inputs[0], n->outputs[0]))
		return false;
	mm->node[k] = node;
	return operands_are(mt, s, n, mm, k, 0, 1) ||
	       (s->nin == 2 && s->commutes &&
		operands_are(mt, s, n, mm, k, 1, 0));
}

/* Whether node is one of the first k of the chain. */
static bool in_chain(const Match *mm, int k, int node)
{
	for (int i = 0; i < k; i++)
		if (mm->node[i] == node)
			return true;
	return false;
}

/* The chain's intermediate outputs feed its own steps alone; its ARGs
 * hold a row's elements where it takes row statistics. */
static bool closed(const Matcher *mt, const ArGradPattern *p, Match *mm)
{
	const ArGraph *g = mt->m->base;
	for (int k = 0; k + 1 < mm->n; k++) {
		int t = out_of(mt, mm->node[k]);
		if (mt->isout[t] || g->tensors[t].kind != AR_TK_ACTIVATION)
			return false;
		for (int r = mt->rstart[t]; r < mt->rstart[t + 1]; r++)
			if (!in_chain(mm, mm->n, mt->rlist[r]))
				return false;
	}
	for (int k = 0; k < mm->n; k++) {
		int64_t row;
		if (!p->steps[k].rows)
			continue;
		row = ar_numel(&g->tensors[out_of(mt, mm->node[k])]);
		for (int j = 1; j < AR_PAT_MAX_IO; j++)
			if (mm->arg[j] >= 0 && (row <= 0 ||
			    ar_numel(&g->tensors[mm->arg[j]]) * row !=
			    ar_numel(&g->tensors[mm->x])))
				return false;
		break;
	}
	return true;
}

/* Follows pattern p from node first with x as the chain's input, for at
 * most lim steps: step k is a reader of step k - 1's output.  The steps
 * matched, into mm->n; false when fewer than the pattern needs. */
static bool follow(const Matcher *mt, const ArGradPattern *p, int first,
		   int lim, Match *mm)
{
	int need = p->nmin ? p->nmin : p->nsteps;
	for (int a = 0; a < AR_PAT_MAX_IO; a++)
		mm->arg[a] = -1;
	mm->n = 0;
	if (!step_is(mt, &p->steps[0], first, mm, 0))
		return false;
	for (mm->n = 1; mm->n < lim; mm->n++) {
		int k = mm->n, t = out_of(mt, mm->node[k - 1]), r;
		for (r = mt->rstart[t]; r < mt->rstart[t + 1]; r++)
			if (step_is(mt, &p->steps[k], mt->rlist[r], mm, k))
				break;
		if (r == mt->rstart[t + 1])
			break;
	}
	return mm->n >= need;
}

/* Matches pattern p from node first, trying each computed input as the
 * chain's input, the longest closed chain first (optional steps the
 * rest of the graph reads between are left out). */
static bool match(const Matcher *mt, const ArGradPattern *p, int first,
		  Match *mm)
{
	const ArGraph *g = mt->m->base;
	const ArNode *n = &g->nodes[first];
	for (int j = 0; j < n->nexplicit; j++) {
		mm->x = n->inputs[j];
		if (mm->x < 0 || !ar_in_arena(g, mm->x))
			continue;
		for (int lim = p->nsteps; follow(mt, p, first, lim, mm);
		     lim = mm->n - 1)
			if (closed(mt, p, mm))
				return true;
	}
	return false;
}

/* Whether input j of n is a tensor n reads there first. */
static bool first_read(const ArNode *n, int j)
{
	for (int e = 0; e < j; e++)
		if (n->inputs[e] == n->inputs[j])
			return false;
	return n->inputs[j] >= 0;
}

/* The readers of each tensor, each node once (CSR). */
static void readers(Matcher *mt, const ArGraph *g)
{
	int *fill;
	mt->rstart = ar_xcalloc((size_t)g->ntensors + 2, sizeof(int));
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++)
			if (first_read(&g->nodes[i], j))
				mt->rstart[g->nodes[i].inputs[j] + 1]++;
	for (int t = 0; t < g->ntensors; t++)
		mt->rstart[t + 1] += mt->rstart[t];
	mt->rlist = ar_xcalloc((size_t)mt->rstart[g->ntensors] + 1,
			       sizeof(int));
	fill = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	memcpy(fill, mt->rstart, (size_t)g->ntensors * sizeof(int));
	for (int i = 0; i < g->nnodes; i++)
		for (int j = 0; j < g->nodes[i].ninputs; j++)
			if (first_read(&g->nodes[i], j))
				mt->rlist[fill[g->nodes[i].inputs[j]]++] = i;
	free(fill);
}

/* The fused backward of match mm of p, on the chain's last node. */
static void fuse(ArTrainModel *m, const ArGradPattern *p, const Match *mm)
{
	ArGraph *g = m->base;
	ArFusedGrad *f = &m->fused[mm->node[mm->n - 1]];
	f->op = ar_op_find(p->domain, p->fused, 0);
	assert(f->op && f->op->grad);
	f->in[0] = mm->x;
	f->nin = 1;
	for (int j = 1; j < AR_PAT_MAX_IO; j++) {
		f->in[j] = mm->arg[j];
		if (mm->arg[j] >= 0)
			f->nin = j + 1;
	}
	/* Output 0: the last step's; the others the steps p names. */
	f->nout = p->nout ? p->nout : 1;
	f->out[0] = g->nodes[mm->node[mm->n - 1]].outputs[0];
	for (int j = 1; j < f->nout; j++) {
		ArTensor *t;
		f->out[j] = g->nodes[mm->node[p->out[j]]].outputs[0];
		/* Statistics the chain computes narrower than the op keeps
		 * them: in the op's type (their bytes were valid before). */
		t = &g->tensors[f->out[j]];
		if (p->stash != AR_DT_UNDEFINED &&
		    ar_dtype_size(t->dtype) < ar_dtype_size(p->stash)) {
			int rc;
			t->dtype = p->stash;
			rc = ar_tensor_set_bytes(t, NULL);
			assert(rc == AR_OK);
			(void)rc;
		}
	}
	f->flops = 0;
	for (int s = 0; s < mm->n; s++) {
		m->in_pattern[mm->node[s]] = true;
		f->flops += m->flops[mm->node[s]];
	}
}

void ar_train_patterns(ArTrainModel *m, const ArGraph *fwd)
{
	const ArGraph *g = m->base;
	Matcher mt = {m, fwd, NULL, NULL, NULL};
	int np;
	const ArGradPattern *pats = ar_grad_patterns(&np);

	readers(&mt, g);
	mt.isout = ar_xcalloc((size_t)g->ntensors + 1, sizeof(bool));
	for (int i = 0; i < g->noutputs; i++)
		mt.isout[g->outputs[i]] = true;
	for (int i = 0; i < m->nfwd; i++)
		for (int k = 0; k < np && !m->in_pattern[i]; k++) {
			Match mm;
			if (match(&mt, &pats[k], i, &mm))
				fuse(m, &pats[k], &mm);
		}
	free(mt.rstart);
	free(mt.rlist);
	free(mt.isout);
}
