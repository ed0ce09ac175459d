/*
 * attention.c — attention cores: where they are, and, for --attention
 * flash|efficient, each one written as a single fused kernel.
 *
 * A core is found from the graph: a product of two activations (a
 * bilinear op, no weight) whose first input comes, through steps that
 * each read one activation and no parameter (scale, mask, softmax,
 * dropout), a Softmax among them, from another such product (SwiGLU's
 * silu(gate) * up is two products of activations too, with no softmax).  As torch exports
 * softmax(q k^T * scale + mask) v: MatMul(q, kT), Mul or Div, Add or
 * Where, Softmax, Dropout, MatMul(probs, v).  --checkpoint selective
 * recomputes exactly these (planner/ckpt_layers.c).
 *
 * FlashAttention never stores the scores: it computes softmax(q k^T) v
 * tile by tile, keeps q, k, v, the output and the fp32 log-sum-exp of
 * each row for the backward pass, and recomputes the scores there (Dao et
 * al. 2022; PyTorch's scaled_dot_product_attention saves the same:
 * _scaled_dot_product_flash_attention's query, key, value, output,
 * logsumexp and the RNG state its dropout mask is drawn again from).  So
 * the copy of the forward graph this pass makes has, in place of each
 * core, one arenac.FlashAttention(q, kT, v, the core's constants) -> (Y,
 * lse) node (ops/flash.c, whose gradient rule reads q, kT, v, Y and lse),
 * and none of the core's intermediate tensors.  A core is fused only when
 * nothing outside it reads those tensors (a model returning its attention
 * probabilities keeps them): fusing it would drop values the model uses.
 * With --attention flash, grouped-query attention written with repeat_kv
 * (Unsqueeze, Expand,
 * Reshape, or Tile; a Transpose of the last two axes on either side) is
 * fused on the keys and values before it, with their own kv heads, as
 * FlashAttention-2 takes them (flash_attn_interface.py: q (b, s, h, d),
 * k and v (b, s, h_kv, d)): when each expansion step's output is read by
 * the next alone, the expansion leaves the graph with its copies, and the
 * fused node reads k (attribute kt 0: [.., t, d]) or kT (kt 1) and v
 * unexpanded.  Its backward's workspace then has the expanded dk and dv
 * mha_bwd sums over each group (ops/flash.c).  The repeat_interleave
 * form (Split and Concat) stays expanded, and so does every core under
 * --attention efficient: PyTorch's memory-efficient kernel takes k and v
 * with q's heads (ops/flash.c's kernels table).
 */
#include "train.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "graph_copy.h"

const char *ar_attention_name(ArAttention a)
{
	static const char *const names[] = {
		[AR_ATTN_MATH] = "math", [AR_ATTN_FLASH] = "flash",
		[AR_ATTN_EFFICIENT] = "efficient"};
	return names[a];
}

/* The steps between two attention products, the first included. */
#define CORE_MAX_PATH (AR_ATTN_MAX_CHAIN + 1)

/* A product of two activations: a bilinear op reading no weight. */
static bool act_product(const ArGraph *g, int node)
{
	const ArNode *n = &g->nodes[node];
	const ArGradRule *r = ar_op_grad(n);
	if (!r || r->cost != 2 || n->nexplicit != 2 || !ar_is_step(g, node))
		return false;
	for (int j = 0; j < 2; j++)
		if (n->inputs[j] < 0 || !ar_in_arena(g, n->inputs[j]))
			return false;
	return true;
}

/* The one activation node n reads (and no parameter), or -1. */
static int single_input(const ArGraph *g, const bool *param, const ArNode *n)
{
	int x = -1;
	for (int j = 0; j < n->nexplicit; j++) {
		int t = n->inputs[j];
		if (t < 0)
			continue;
		if (param[t])
			return -1;
		if (ar_in_arena(g, t)) {
			if (x >= 0)
				return -1;
			x = t;
		}
	}
	return x;
}

/*
 * The producers from x back to an activation product, that product first
 * in path[] (n of them); false when none is found within the limit.
 */
static bool walk_back(const ArGraph *g, int nnodes, const bool *param, int x,
		      int *path, int *n)
{
	int k = 0;
	bool softmax = false;
	for (int t = x; t >= 0 && k < CORE_MAX_PATH;) {
		int p = g->tensors[t].producer;
		if (p < 0 || p >= nnodes)
			return false;
		path[k++] = p;
		softmax = softmax || !strcmp(g->nodes[p].op, "Softmax");
		if (act_product(g, p)) {
			if (!softmax)   /* SwiGLU's two products are no core */
				return false;
			/* first the product, then the chain in order */
			for (int i = 0; i < k / 2; i++) {
				int s = path[i];
				path[i] = path[k - 1 - i];
				path[k - 1 - i] = s;
			}
			*n = k;
			return true;
		}
		t = single_input(g, param, &g->nodes[p]);
	}
	return false;
}

int ar_attention_cores(const ArGraph *g, int nnodes, const bool *param,
		       bool *core, ArAttnCore *cores, int max)
{
	int found = 0, path[CORE_MAX_PATH];

	for (int i = 0; i < nnodes; i++)
		for (int j = 0; act_product(g, i) && j < 2; j++) {
			int n;
			if (!walk_back(g, nnodes, param, g->nodes[i].inputs[j],
				       path, &n))
				continue;
			for (int k = 0; k < n; k++)
				core[path[k]] = true;
			core[i] = true;
			if (found < max && j == 0) {
				cores[found].first = path[0];
				cores[found].last = i;
				cores[found].nchain = n - 1;
				for (int k = 1; k < n; k++)
					cores[found].chain[k - 1] = path[k];
			}
			found++;
		}
	return found;
}

/* repeat_kv's steps between the kv heads and the core: at most this many. */
#define MAX_EXPANSION 6

/* Transpose n swaps its input's last two axes, nothing else. */
static bool swaps_last_two(const ArNode *n)
{
	const ArAttr *a = ar_attr(n, "perm");
	int r = a ? a->nints : 0;
	if (r < 2)
		return false;
	for (int i = 0; i < r - 2; i++)
		if (a->ints[i] != i)
			return false;
	return a->ints[r - 2] == r - 1 && a->ints[r - 1] == r - 2;
}

/* u holds x's values with fewer heads (axis rank - 3), its last two axes
 * x's, swapped or not. */
static bool grouped(const ArGraph *g, int u, int x, bool swapped)
{
	const ArTensor *a = &g->tensors[u], *b = &g->tensors[x];
	int r = b->rank;
	if (a->rank != r || r < 3 || a->dims[r - 3] < 1 ||
	    a->dims[r - 3] >= b->dims[r - 3] ||
	    b->dims[r - 3] % a->dims[r - 3])
		return false;
	for (int i = 0; i < r - 3; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return a->dims[r - 2] == b->dims[swapped ? r - 1 : r - 2] &&
	       a->dims[r - 1] == b->dims[swapped ? r - 2 : r - 1];
}

/*
 * x (the core's kT or v) as repeat_kv made it: the tensor u before the
 * expansion, furthest back, whose values x repeats over its heads; -1 for
 * none.  nodes[] gets the *n steps from x back to u, each output read by
 * the next alone; *swapped: u's last two axes are x's swapped.
 */
static int unexpanded(const ArGraph *g, int x, const int *readers,
		      int *nodes, int *n, bool *swapped)
{
	int t = x, best = -1, k = 0;
	bool expanded = false, sw = false;
	while (k < MAX_EXPANSION && readers[t] == 1 &&
	       g->tensors[t].kind != AR_TK_OUTPUT && g->tensors[t].producer >= 0) {
		int p = g->tensors[t].producer;
		const ArNode *nd = &g->nodes[p];
		if (!ar_is_step(g, p) || nd->domain[0] || nd->nexplicit < 1 ||
		    nd->inputs[0] < 0 || !ar_in_arena(g, nd->inputs[0]))
			break;
		if (!strcmp(nd->op, "Expand") || !strcmp(nd->op, "Tile"))
			expanded = true;
		else if (!strcmp(nd->op, "Transpose") && swaps_last_two(nd))
			sw = !sw;
		else if (strcmp(nd->op, "Unsqueeze") && strcmp(nd->op, "Reshape"))
			break;
		nodes[k++] = p;
		t = nd->inputs[0];
		if (expanded && grouped(g, t, x, sw)) {
			best = t;
			*n = k;
			*swapped = sw;
		}
	}
	return best;
}

/* The kv heads of core c unexpanded (module comment): kv[0] k or kT,
 * kv[1] v, *kt whether kv[0] is transposed; marks the expansion steps in
 * skip[] and their outputs in drop[].  False: the core stays on the
 * expanded ones. */
static bool kv_heads(const ArGraph *g, const ArAttnCore *c,
		     const int *readers, bool *skip, bool *drop, int *kv,
		     int64_t *kt)
{
	int nodes[2][MAX_EXPANSION], n[2];
	bool sw[2];
	kv[0] = unexpanded(g, g->nodes[c->first].inputs[1], readers, nodes[0],
			   &n[0], &sw[0]);
	kv[1] = unexpanded(g, g->nodes[c->last].inputs[1], readers, nodes[1],
			   &n[1], &sw[1]);
	/* One head count for both, v untransposed. */
	if (kv[0] < 0 || kv[1] < 0 || sw[1] ||
	    g->tensors[kv[0]].dims[g->tensors[kv[0]].rank - 3] !=
	    g->tensors[kv[1]].dims[g->tensors[kv[1]].rank - 3])
		return false;
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < n[i]; k++) {
			const ArNode *nd = &g->nodes[nodes[i][k]];
			skip[nodes[i][k]] = true;
			for (int j = 0; j < nd->noutputs; j++)
				if (nd->outputs[j] >= 0)
					drop[nd->outputs[j]] = true;
		}
	*kt = !sw[0];
	return true;
}

/* Float initializers of rank >= 1: what the training stage may train. */
static bool *forward_params(const ArGraph *g)
{
	bool *param = ar_xcalloc((size_t)g->ntensors + 1, sizeof *param);
	for (int t = 0; t < g->ntensors; t++) {
		const ArTensor *x = &g->tensors[t];
		param[t] = x->kind == AR_TK_WEIGHT && x->rank >= 1 &&
			   ar_train_is_float(x->dtype);
	}
	return param;
}

/*
 * Whether core c can be one kernel: each intermediate output read by the
 * next node of the core alone (an unread dropout mask is fine) and no
 * graph output; marks those tensors in drop[].
 */
static bool fusible(const ArGraph *g, const ArAttnCore *c, const int *readers,
		    bool *drop)
{
	int nodes[CORE_MAX_PATH + 1], n = 0;
	/* The kernel's layout is MatMul's: q [.., s, d] times kT [.., d, t];
	 * an einsum core stays op by op. */
	if (strcmp(g->nodes[c->first].op, "MatMul") ||
	    strcmp(g->nodes[c->last].op, "MatMul"))
		return false;
	nodes[n++] = c->first;
	for (int k = 0; k < c->nchain; k++)
		nodes[n++] = c->chain[k];
	for (int k = 0; k < n; k++) {
		const ArNode *nd = &g->nodes[nodes[k]];
		for (int j = 0; j < nd->noutputs; j++) {
			int t = nd->outputs[j];
			if (t < 0)
				continue;
			if (g->tensors[t].kind == AR_TK_OUTPUT ||
			    readers[t] > (j == 0))
				return false;
		}
	}
	for (int k = 0; k < n; k++) {
		const ArNode *nd = &g->nodes[nodes[k]];
		for (int j = 0; j < nd->noutputs; j++)
			if (nd->outputs[j] >= 0)
				drop[nd->outputs[j]] = true;
	}
	return true;
}

/* The fused node in place of core c: q, kT (or k, kv[0], with kt 0),
 * v (kv[1]), then the constants the chain read; Y, the core's output
 * (the training stage adds the log-sum-exp, ops/train_outputs.c). */
static void add_fused(ArGraph *dst, const ArGraph *src, const ArAttnCore *c,
		      ArFlashKernel kernel, const int *kv, int64_t kt)
{
	const ArNode *p1 = &src->nodes[c->first], *p2 = &src->nodes[c->last];
	int in[3 + 4 * CORE_MAX_PATH], nin = 0, id;
	char name[512];
	ArNode *n;
	const int64_t attrs[3] = {ar_flash_kernel(kernel)->lse_align, kt,
				  kernel};

	in[nin++] = p1->inputs[0];
	in[nin++] = kv[0] >= 0 ? kv[0] : p1->inputs[1];
	in[nin++] = kv[1] >= 0 ? kv[1] : p2->inputs[1];
	for (int k = 0; k < c->nchain; k++) {
		const ArNode *s = &src->nodes[c->chain[k]];
		for (int j = 0; j < s->nexplicit && nin < (int)(sizeof in /
							       sizeof *in); j++)
			if (s->inputs[j] >= 0 && !ar_in_arena(src, s->inputs[j]))
				in[nin++] = s->inputs[j];
	}
	snprintf(name, sizeof name, "%s.flash", p2->name);
	id = ar_graph_add_node(dst, name, AR_FLASH_ATTENTION, AR_FUSED_DOMAIN);
	n = &dst->nodes[id];
	ar_node_set_io(n, in, nin, p2->outputs, 1);
	n->opset = p2->opset;
	n->phase = p2->phase;
	ar_add_int_attrs(dst, n, (const char *const[]){"lse_align", "kt",
			 "kernel"}, attrs, 3);
	dst->tensors[p2->outputs[0]].producer = id;
}

int ar_train_flash(const ArGraph *src, ArAttention kernel, ArGraph **out,
		   ArError *err)
{
	ArFlashKernel fk = kernel == AR_ATTN_FLASH ? AR_FLASH_FA2 :
			   AR_FLASH_MEM_EFF;
	int max = src->nnodes + 1, ncores, nfused = 0, rc = AR_OK;
	bool *param = forward_params(src);
	bool *core = ar_xcalloc((size_t)src->nnodes + 1, sizeof *core);
	bool *drop = ar_xcalloc((size_t)src->ntensors + 1, sizeof *drop);
	int *last = ar_xmalloc((size_t)src->nnodes * sizeof *last + 1);
	int *readers = ar_xcalloc((size_t)src->ntensors + 1, sizeof *readers);
	bool *skip = ar_xcalloc((size_t)src->nnodes + 1, sizeof *skip);
	ArAttnCore *cores = ar_xmalloc((size_t)max * sizeof *cores);
	/* per core: its unexpanded kv heads (-1: as the core reads them) */
	int (*kv)[2] = ar_xmalloc((size_t)max * sizeof *kv);
	int64_t *kt = ar_xmalloc((size_t)max * sizeof *kt);
	ArGraph *g;

	assert(kernel == AR_ATTN_FLASH || kernel == AR_ATTN_EFFICIENT);
	*out = NULL;
	ncores = ar_attention_cores(src, src->nnodes, param, core, cores, max);
	for (int i = 0; i < src->nnodes; i++) {
		last[i] = -1;
		for (int j = 0; j < src->nodes[i].ninputs; j++)
			if (src->nodes[i].inputs[j] >= 0)
				readers[src->nodes[i].inputs[j]]++;
	}
	for (int k = 0; k < ncores && k < max; k++) {
		if (!fusible(src, &cores[k], readers, drop))
			continue;
		skip[cores[k].first] = true;
		for (int c = 0; c < cores[k].nchain; c++)
			skip[cores[k].chain[c]] = true;
		last[cores[k].last] = k;
		drop[src->nodes[cores[k].last].outputs[0]] = false;
		kt[k] = 1;
		if (!ar_flash_kernel(fk)->kv_heads ||
		    !kv_heads(src, &cores[k], readers, skip, drop, kv[k], &kt[k]))
			kv[k][0] = kv[k][1] = -1;
		nfused++;
	}
	if (!nfused)
		goto done;
	g = ar_copy_tensors(src);
	for (int i = 0; i < src->nnodes && !rc; i++) {
		const ArNode *n = &src->nodes[i];
		if (skip[i])
			continue;
		if (last[i] >= 0)
			add_fused(g, src, &cores[last[i]], fk,
				  kv[last[i]], kt[last[i]]);
		else if (ar_copy_node(g, n, n->inputs, n->outputs, err) < 0)
			rc = err->code;
	}
	if (rc) {
		ar_graph_free(g);
		goto done;
	}
	{
		bool *none = ar_xcalloc((size_t)g->nnodes + 1, sizeof *none);
		bool *dt = ar_xcalloc((size_t)g->ntensors + 1, sizeof *dt);
		for (int t = 0; t < src->ntensors; t++)
			dt[t] = drop[t];
		ar_graph_drop(g, none, dt);
		free(none);
		free(dt);
	}
	*out = g;
done:
	free(param), free(core), free(drop), free(last), free(readers);
	free(skip), free(cores), free(kv), free(kt);
	return rc;
}
