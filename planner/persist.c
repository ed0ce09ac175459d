/*
 * persist.c — the persistent tensors of a plan: weights and constants,
 * which live outside the arena.
 *
 * A step that updates a persistent tensor in place (a training step's
 * optimizer update writes W.next over W; a chunked loss adds each chunk's
 * weight gradient into the previous chunks') has an output of the
 * weight kind that is its input's bytes rewritten: ar_persist_inplace
 * makes it alias_of that input, as the op table's in-place class says, so
 * it has no storage of its own.  What the weights take is then the
 * storage of those a step reads, each once (ar_weights_read): the weights
 * blob holds exactly these, and tensors aliasing one of them take its
 * place there.  A branch or loop body reads weights of its own and, by
 * capture, its enclosing graphs' (Silero VAD's LSTM weights live in the
 * main graph, its 16 and 8 kHz branches read them): ar_weights_total
 * counts each storage of the whole model once, wherever it is read.
 */
#include "ops.h"
#include "passes.h"

#include <stdlib.h>

static bool persistent(const ArTensor *t)
{
	return t->kind == AR_TK_WEIGHT || t->kind == AR_TK_CONSTANT;
}

void ar_persist_inplace(const ArGraph *g, ArPlan *p)
{
	for (int i = 0; i < g->nnodes; i++) {
		const ArNode *n = &g->nodes[i];
		const ArOpDef *d = ar_op_of(n);
		int y = n->noutputs > 0 ? n->outputs[0] : -1;
		if (!d || d->alias != AR_ALIAS_INPLACE || y < 0 ||
		    g->tensors[y].kind != AR_TK_WEIGHT || !ar_is_step(g, i))
			continue;
		for (int j = 0; j < n->nexplicit && j < 32; j++) {
			int x = n->inputs[j];
			if (x >= 0 && x != y && (d->inplace >> j & 1) &&
			    persistent(&g->tensors[x]) &&
			    g->tensors[x].bytes == g->tensors[y].bytes) {
				p->slots[y].alias_of = x;
				p->slots[y].alias_offset = 0;
				break;
			}
		}
	}
}

int ar_weight_storage(const ArPlan *p, int t)
{
	for (int hops = 0; p->slots[t].alias_of >= 0 && hops <= p->ntensors;
	     hops++)
		t = p->slots[t].alias_of;
	return t;
}

int64_t ar_weights_read(const ArGraph *g, const ArPlan *p, bool *in)
{
	int64_t sum = 0;
	for (int t = 0; t < g->ntensors; t++)
		in[t] = false;
	for (int i = 0; i < g->nnodes; i++) {
		const ArNode *n = &g->nodes[i];
		if (!ar_is_step(g, i))
			continue;
		for (int j = 0; j < n->nexplicit; j++) {
			int t = n->inputs[j] < 0 ? -1 :
				ar_weight_storage(p, n->inputs[j]);
			const ArTensor *x;
			if (t < 0 || in[t])
				continue;
			x = &g->tensors[t];
			if (persistent(x) && x->rank >= 0 && x->bytes > 0 &&
			    x->dtype != AR_DT_STRING) {
				in[t] = true;
				sum += x->bytes;
			}
		}
	}
	return sum;
}

/* Per graph, which storages are counted already. */
typedef struct Seen {
	int n;
	const ArGraph **g;
	bool **in;
	int64_t sum;
} Seen;

static void count_read(Seen *s, const ArGraph *g, const ArPlan *p, int t)
{
	const ArTensor *x;
	int k = 0;

	t = ar_weight_storage(p, t);
	x = &g->tensors[t];
	if (!persistent(x) || x->rank < 0 || x->bytes <= 0 ||
	    x->dtype == AR_DT_STRING)
		return;
	while (k < s->n && s->g[k] != g)
		k++;
	if (k == s->n) {
		s->g = ar_xrealloc(s->g, (size_t)(s->n + 1) * sizeof *s->g);
		s->in = ar_xrealloc(s->in, (size_t)(s->n + 1) * sizeof *s->in);
		s->g[k] = g;
		s->in[k] = ar_xcalloc((size_t)g->ntensors + 1, sizeof(bool));
		s->n++;
	}
	if (!s->in[k][t]) {
		s->in[k][t] = true;
		ar_add64(s->sum, x->bytes, &s->sum);
	}
}

static void count_sub(const ArSubPlan *sp, int id, int parent, void *ctx)
{
	(void)id, (void)parent;
	if (!sp->plan)
		return;
	for (int s = 0; s < sp->plan->nsteps; s++) {
		const ArNode *n = &sp->g->nodes[sp->plan->steps[s]];
		for (int j = 0; j < n->nexplicit; j++) {
			ArWhere w;
			if (n->inputs[j] < 0)
				continue;
			ar_sub_where(sp, n->inputs[j], &w);
			count_read(ctx, w.g, w.p, w.t);
		}
	}
}

int64_t ar_weights_total(const ArGraph *g, const ArPlan *p)
{
	Seen s = {0};

	for (int i = 0; i < p->nsteps; i++) {
		const ArNode *n = &g->nodes[p->steps[i]];
		for (int j = 0; j < n->nexplicit; j++)
			if (n->inputs[j] >= 0)
				count_read(&s, g, p, n->inputs[j]);
	}
	ar_plan_walk_subs(p, count_sub, &s);
	for (int k = 0; k < s.n; k++)
		free(s.in[k]);
	free(s.g);
	free(s.in);
	return s.sum;
}
