/*
 * inplace.c — elementwise ops that write their output over a dying input.
 *
 * An elementwise kernel reads element i of each input before it writes
 * element i of its output, so when an input of the output's size dies at
 * this very step its bytes can take the output: inplace_of links the two
 * and plan.c gives them one buffer.  The test is on the input's whole alias
 * group, not the tensor: overwriting a view or a concat slice overwrites
 * every other member too, so the group must die here.  Groups holding a
 * graph input (the caller's bytes) are never overwritten, and a graph
 * output is never written over anything.
 *
 * Which ops qualify, and which of their inputs they may overwrite, is the
 * op table's word (ops/table.c): elementwise ops of the in-place class,
 * and the gradient steps whose rule computes element by element (ReluGrad
 * reads Y[i] and dY[i] to write dX[i]).
 *
 * Runs after the order and lifetimes are final, visiting steps in order so
 * that chains (BatchNormalization -> Mul -> Add -> Relu, or a training
 * step's GradAccumulate -> ReluGrad -> DropoutGrad) share one buffer.
 */
#include "ops.h"
#include "passes.h"

#include <stdlib.h>

typedef struct {
	const ArGraph *g;
	ArPlan *p;
	ArGroups gr;            /* gr.last: per merged group, as links merge */
	ArAliasMemo roots;
	int *up;                /* union-find over groups as links merge them */
} Inplace;

static int group(const Inplace *ip, int t)
{
	int k = ip->gr.of[t];
	if (k < 0)
		return -1;
	while (ip->up[k] != k)
		k = ip->up[k] = ip->up[ip->up[k]];
	return k;
}

static bool same_elements(const ArTensor *a, const ArTensor *b)
{
	return a->bytes == b->bytes && ar_numel(a) == ar_numel(b) &&
	       ar_dtype_bits(a->dtype) == ar_dtype_bits(b->dtype);
}

/*
 * x may take the output y of node n (run at step s): x's whole group dies
 * at s, and no other input of n shares x's buffer at different bytes (an
 * elementwise kernel would read them after overwriting them).
 */
static bool can_overwrite(Inplace *ip, const ArNode *n, int s, int x,
			  int y)
{
	const ArGraph *g = ip->g;
	const ArPlan *p = ip->p;
	ArAliasMemo *m = &ip->roots;
	int k = group(ip, x);
	int64_t xoff, zoff;
	int xr;

	if (k < 0 || !same_elements(&g->tensors[x], &g->tensors[y]) ||
	    ip->gr.has_input[k] || ip->gr.has_output[k] || ip->gr.last[k] != s)
		return false;
	xr = ar_alias_root(p, m, x, &xoff);
	for (int j = 0; j < n->ninputs; j++) {
		int z = n->inputs[j];
		if (z < 0 || z == x || group(ip, z) != k)
			continue;
		if (ar_alias_root(p, m, z, &zoff) != xr || zoff != xoff ||
		    g->tensors[z].bytes != g->tensors[x].bytes)
			return false;
	}
	return true;
}

/* The first input n may overwrite, or -1. */
static int pick_input(Inplace *ip, const ArNode *n, unsigned which,
		      int s, int y)
{
	for (int j = 0; j < n->nexplicit; j++) {
		int x = n->inputs[j];
		if (j < 32 && (which >> j & 1) && x >= 0 &&
		    ip->p->slots[x].planned && can_overwrite(ip, n, s, x, y))
			return x;
	}
	return -1;
}

void ar_inplace(const ArGraph *g, ArPlan *p)
{
	Inplace ip = {g, p, {0}, {NULL, NULL}, NULL};
	bool *isout = ar_graph_output_flags(g);

	for (int t = 0; t < g->ntensors; t++)
		p->slots[t].inplace_of = -1;
	ar_groups_build(g, p, &ip.gr);
	ar_alias_memo_init(&ip.roots, p);
	ip.up = ar_xmalloc(((size_t)ip.gr.n + 1) * sizeof(int));
	for (int k = 0; k < ip.gr.n; k++)
		ip.up[k] = k;

	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		int y = n->noutputs > 0 ? n->outputs[0] : -1, x, kx, ky;
		unsigned which = ar_op_inplace_inputs(n);
		bool extra = false;
		for (int j = 1; j < n->noutputs; j++)
			if (n->outputs[j] >= 0 && p->slots[n->outputs[j]].planned)
				extra = true;
		if (y < 0 || extra || !which || isout[y] ||
		    !p->slots[y].planned || g->tensors[y].bytes <= 0 ||
		    p->slots[y].alias_of >= 0)
			continue;
		if ((x = pick_input(&ip, n, which, s, y)) < 0)
			continue;
		p->slots[y].inplace_of = x;
		/* y's group (y and its views) joins x's. */
		kx = group(&ip, x);
		ky = group(&ip, y);
		ip.up[ky] = kx;
		if (ip.gr.last[ky] > ip.gr.last[kx])
			ip.gr.last[kx] = ip.gr.last[ky];
		ip.gr.has_output[kx] |= ip.gr.has_output[ky];
	}
	free(ip.up);
	free(isout);
	ar_alias_memo_free(&ip.roots);
	ar_groups_free(&ip.gr);
}
