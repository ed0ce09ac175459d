/*
 * buffers.c — which float initializers are a module's buffers (a rotary
 * table, a causal mask), not parameters.
 *
 * torch.onnx.export writes registered buffers as initializers, as it
 * writes the parameters, and the names alone do not tell them apart.
 * scripts/torch_export.py's metadata says it exactly (arenac.buffers, or
 * in neither arenac.trainable nor arenac.frozen: params.c).  Without it,
 * the rule, on the graph as folded: an initializer is a buffer when it
 * reaches compute only through ops that move values (folded: slices,
 * reshapes, transposes, a select), every step reading what comes of it
 * is
 *   - a Mul by an activation (a rotary table times q or k, or times
 *     rotate_half(q)), or
 *   - an Add, Sub, Mul or Where of an attention core's chain (a mask on
 *     the scores; attention.c finds the cores),
 * and it is a table of positions: cut to the sequence by a Slice
 * (cos_cached[:T], causal_mask[:T, :T]), or read whole, never gathered,
 * with two axes or more above 1 (a [T, d] rotary table, a [T, T] mask).
 * Not buffers: a norm's weight multiplies an activation but is a [d]
 * scale; a learned position table cut the same way is added to the
 * embeddings (ViT's pos_embed[:, :T]) or gathered at the positions
 * (GPT-2's wpe), outside any core and by no Mul; a learned attention
 * bias is gathered at relative positions (T5's, Swin's table) before it
 * reaches the scores.  Each initializer taken for a buffer is named in
 * one warning, and --trainable naming one overrules the rule for it.
 *
 * The answer feeds two passes: unfold.c leaves a buffer folded (it is a
 * constant, whatever its shape), and params.c trains none.
 */
#include "train.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A reading step that leaves what it reads a buffer's use. */
static bool buffer_use(const ArGraph *g, const ArNode *n, int t,
		       const bool *core)
{
	int other = -1;
	for (int j = 0; j < n->nexplicit && j < 2; j++)
		if (n->inputs[j] != t && n->inputs[j] >= 0)
			other = n->inputs[j];
	if (!strcmp(n->op, "Mul") && n->nexplicit == 2 && other >= 0 &&
	    ar_in_arena(g, other))
		return true;
	return core[n - g->nodes] &&
	       (!strcmp(n->op, "Add") || !strcmp(n->op, "Sub") ||
		!strcmp(n->op, "Mul") || !strcmp(n->op, "Where"));
}

/* Who reads each tensor: reads first[t], next[r], ... (-1 ends), read r
 * being input rj[r] of node rnode[r]. */
typedef struct Readers {
	int *first, *next, *rnode, *rj;
} Readers;

static void readers_of(const ArGraph *g, Readers *rd)
{
	int nr = 0;
	for (int i = 0; i < g->nnodes; i++)
		nr += g->nodes[i].nexplicit;
	rd->first = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof *rd->first);
	rd->next = ar_xmalloc(((size_t)nr + 1) * sizeof *rd->next);
	rd->rnode = ar_xmalloc(((size_t)nr + 1) * sizeof *rd->rnode);
	rd->rj = ar_xmalloc(((size_t)nr + 1) * sizeof *rd->rj);
	for (int t = 0; t < g->ntensors; t++)
		rd->first[t] = -1;
	nr = 0;
	for (int i = g->nnodes - 1; i >= 0; i--)
		for (int j = g->nodes[i].nexplicit - 1; j >= 0; j--) {
			int t = g->nodes[i].inputs[j];
			if (t < 0)
				continue;
			rd->rnode[nr] = i;
			rd->rj[nr] = j;
			rd->next[nr] = rd->first[t];
			rd->first[t] = nr++;
		}
}

static void readers_free(Readers *rd)
{
	free(rd->first);
	free(rd->next);
	free(rd->rnode);
	free(rd->rj);
}

/* Axes of t above 1. */
static int wide_axes(const ArTensor *t)
{
	int n = 0;
	for (int i = 0; i < t->rank; i++)
		n += t->dims[i] > 1;
	return n;
}

/*
 * Whether weight w meets the rule: a walk over what is folded from it
 * (stack: room for every tensor), each folding node a move of it, every
 * step reading the results a buffer's use, and w a table of positions.
 */
static bool is_buffer(const ArGraph *g, int w, const Readers *rd,
		      const bool *core, int *stack, bool *seen)
{
	int n = 0, steps = 0;
	bool cut = false, gathered = false, ok = true;

	memset(seen, 0, (size_t)g->ntensors * sizeof *seen);
	stack[n++] = w;
	seen[w] = true;
	while (n > 0 && ok) {
		int t = stack[--n];
		for (int r = rd->first[t]; r >= 0 && ok; r = rd->next[r]) {
			int i = rd->rnode[r], j = rd->rj[r];
			const ArNode *nd = &g->nodes[i];
			if (ar_is_step(g, i)) {
				ok = buffer_use(g, nd, t, core);
				steps++;
				continue;
			}
			ok = ar_grad_moves(ar_op_grad(nd), j);
			cut = cut || !strcmp(nd->op, "Slice");
			gathered = gathered || !strcmp(nd->op, "Gather");
			for (int k = 0; ok && k < nd->noutputs; k++) {
				int o = nd->outputs[k];
				if (o >= 0 && !seen[o]) {
					seen[o] = true;
					stack[n++] = o;
				}
			}
		}
	}
	return ok && steps > 0 &&
	       (cut || (!gathered && wide_axes(&g->tensors[w]) >= 2));
}

/* Whether one of the --trainable expressions matches name. */
static bool named_trainable(const ArTrainSpec *spec, const char *name)
{
	bool hit = false;
	for (int k = 0; k < spec->ntrainable && !hit; k++) {
		regex_t re;
		if (regcomp(&re, spec->trainable[k], REG_EXTENDED | REG_NOSUB))
			continue;   /* params.c reports it */
		hit = !regexec(&re, name, 0, NULL, 0);
		regfree(&re);
	}
	return hit;
}

/* The exporter's word on weight t (params.c's apply_meta reads it the
 * same way): named a buffer, or named in neither list while they are
 * stated. */
static bool meta_buffer(const ArGraph *g, int t)
{
	const char *name = g->tensors[t].name;
	const char *lists[3] = {g->meta_buffers, g->meta_trainable,
				g->meta_frozen};
	bool in[3] = {false, false, false};
	size_t len = strlen(name);
	for (int k = 0; k < 3; k++)
		for (const char *p = lists[k]; p && *p && !in[k];) {
			const char *e = strchr(p, ',');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			in[k] = n == len && !strncmp(p, name, len);
			p += n + (e != NULL);
		}
	return in[0] || ((lists[1] || lists[2]) && !in[1] && !in[2]);
}

/* Float weights of rank 1 or more: what attention.c's chains stop at. */
static bool *float_weights(const ArGraph *g)
{
	bool *w = ar_xcalloc((size_t)g->ntensors + 1, sizeof *w);
	for (int t = 0; t < g->ntensors; t++)
		w[t] = g->tensors[t].kind == AR_TK_WEIGHT &&
		       g->tensors[t].rank >= 1 &&
		       ar_train_is_float(g->tensors[t].dtype);
	return w;
}

/* The rule's buffers, each named in the warning. */
static int guess(const ArGraph *g, const ArTrainSpec *spec,
		 const bool *weight, bool *buf)
{
	size_t nt = (size_t)g->ntensors + 1, len = 0;
	bool *core = ar_xcalloc((size_t)g->nnodes + 1, sizeof *core);
	bool *seen = ar_xmalloc(nt * sizeof *seen);
	bool *none = ar_xcalloc(nt, sizeof *none);
	int *stack = ar_xmalloc(nt * sizeof *stack), nbuf = 0;
	char list[400] = "";
	Readers rd;

	readers_of(g, &rd);
	/* The cores as if no weight stopped a chain (none: all false): a
	 * mask read straight from an initializer is one of their steps. */
	ar_attention_cores(g, g->nnodes, none, core, NULL, 0);
	for (int t = 0; t < g->ntensors; t++) {
		if (!weight[t] || !is_buffer(g, t, &rd, core, stack, seen) ||
		    named_trainable(spec, g->tensors[t].name))
			continue;
		buf[t] = true;
		nbuf++;
		if (len < sizeof list - 1)
			len += (size_t)snprintf(list + len, sizeof list - len,
						"%s%s", len ? ", " : "",
						g->tensors[t].name);
	}
	if (nbuf)
		ar_warn(&spec->diag, "%d initializer%s taken for buffers "
			"(tables of positions multiplying activations or "
			"added to attention scores: rotary tables, causal "
			"masks), not trained: %s%s; "
			"--trainable overrules, scripts/torch_export.py's "
			"metadata says it exactly", nbuf, nbuf == 1 ? "" : "s",
			list, len >= sizeof list - 1 ? ", ..." : "");
	readers_free(&rd);
	free(core);
	free(seen);
	free(none);
	free(stack);
	return nbuf;
}

bool *ar_train_buffers(const ArGraph *g, const ArTrainSpec *spec)
{
	bool *weight = float_weights(g);
	bool *buf = ar_xcalloc((size_t)g->ntensors + 1, sizeof *buf);
	int nbuf = 0;

	if (g->meta_buffers || g->meta_trainable || g->meta_frozen) {
		for (int t = 0; t < g->ntensors; t++)
			if (weight[t] && meta_buffer(g, t))
				buf[t] = true, nbuf++;
	} else {
		nbuf = guess(g, spec, weight, buf);
	}
	free(weight);
	if (!nbuf) {
		free(buf);
		buf = NULL;
	}
	return buf;
}
