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
 * place there.
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
