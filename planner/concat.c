/*
 * concat.c — concat elision: producers write straight into their slice.
 *
 * When every input of a Concat is a contiguous slice of its output (all
 * output dims before the axis are 1, e.g. channels of a batch-1 NCHW
 * tensor), each input can live inside the output's buffer at its slice's
 * byte offset, alias_of the output; the Concat then copies nothing.  The
 * group is born with its first slice and lives as long as any member.
 *
 * Nesting falls out of the order: in DenseNet each concat's output is the
 * first input of the next, so visiting concats in node order links C1 into
 * C2 into C3 ..., with offsets adding up along the chain, and the whole
 * dense block is written once into the last concat's buffer.
 *
 * An input is placed only when that is plainly safe, else the Concat stays
 * a copy (all or nothing, so a runtime sees either a no-op or a copy):
 *   - it is produced by a step of this graph (not a graph input, constant
 *     or weight) and is not a graph output, whose bytes the caller reads;
 *   - it has no alias_of yet: a view shares its input's bytes, and a
 *     tensor already placed in another concat cannot sit in two places;
 *   - it appears once among the inputs;
 *   - its slice offset is a multiple of the plan's alignment;
 *   - neither it nor the output has a bounded shape: their real extents,
 *     hence the slices' offsets, are known only at run time.
 *
 * One more condition needs the order, so ar_concat_refine checks it first:
 * a slice that outlives the Concat must not be live together with a view
 * of the output (or of a concat the output is nested in), as the two share
 * bytes without one containing the other.  Inference graphs rarely read a
 * concat input again; training graphs do (a backward step reads a Relu
 * output that fed Concat -> Dropout).
 *
 * Elision is not free: the output's buffer is reserved whole from its first
 * slice on, so its later slices sit empty while earlier work peaks (the
 * last concat of DenseNet's first block does exactly this).  Once the order
 * is known, ar_concat_refine turns back into copies the elisions that keep
 * the peak higher than a copy would, and if need be all of them.
 */
#include "ops.h"
#include "passes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Ops of the concat class in the op table (Concat). */
static bool is_concat(const ArNode *n)
{
	const ArOpDef *d = ar_op_of(n);
	return d && d->alias == AR_ALIAS_CONCAT;
}

/* Every input's slice is contiguous: output dims before axis are all 1. */
static bool slices_contiguous(const ArGraph *g, const ArNode *n, int out)
{
	const ArTensor *y = &g->tensors[out];
	int64_t axis = ar_attr_int(n, "axis", 0);
	if (axis < 0)
		axis += y->rank;
	if (axis < 0 || axis >= y->rank)
		return false;
	for (int d = 0; d < axis; d++)
		if (y->dims[d] != 1)
			return false;
	return true;
}

/* seen: all false, per tensor, for finding an input given twice. */
static bool elidable(const ArGraph *g, const ArPlan *p, const bool *isout,
		     const ArNode *n, bool *seen)
{
	int y = n->outputs[0];
	int64_t off = 0;
	bool ok;

	ok = n->noutputs == 1 && y >= 0 && p->slots[y].planned &&
	     g->tensors[y].bytes > 0 && p->slots[y].inplace_of < 0 &&
	     !g->tensors[y].bounded &&
	     slices_contiguous(g, n, y);
	for (int j = 0; ok && j < n->nexplicit; j++) {
		int x = n->inputs[j];
		int pr = x >= 0 ? g->tensors[x].producer : -1;
		ok = x >= 0 && !seen[x] && p->slots[x].planned && pr >= 0 &&
		     ar_is_step(g, pr) && !isout[x] &&
		     p->slots[x].alias_of < 0 && p->slots[x].inplace_of < 0 &&
		     g->tensors[x].dtype == g->tensors[y].dtype &&
		     !g->tensors[x].bounded &&
		     off % p->align == 0 &&
		     ar_add64(off, g->tensors[x].bytes, &off);
		if (x >= 0)
			seen[x] = true;
	}
	for (int j = 0; j < n->nexplicit; j++)
		if (n->inputs[j] >= 0)
			seen[n->inputs[j]] = false;
	return ok && off == g->tensors[y].bytes;
}

void ar_concat_elide(const ArGraph *g, ArPlan *p)
{
	bool *isout = ar_graph_output_flags(g);
	bool *seen = ar_xcalloc((size_t)g->ntensors + 1, sizeof(bool));

	for (int i = 0; i < g->nnodes; i++) {
		const ArNode *n = &g->nodes[i];
		int64_t off = 0;
		if (!ar_is_step(g, i) || !is_concat(n) ||
		    !elidable(g, p, isout, n, seen))
			continue;
		for (int j = 0; j < n->nexplicit; j++) {
			ArSlot *s = &p->slots[n->inputs[j]];
			s->alias_of = n->outputs[0];
			s->alias_offset = off;
			off += g->tensors[n->inputs[j]].bytes;
		}
	}
	free(isout), free(seen);
}

/* Cheap, so it is asked before is_concat (an op table lookup): a node of
 * another class never has its first input alias_of its output. */
static bool is_elided(const ArPlan *p, const ArNode *n)
{
	return n->nexplicit > 0 && n->noutputs > 0 && n->inputs[0] >= 0 &&
	       p->slots[n->inputs[0]].alias_of == n->outputs[0];
}

/* The planner's peak for p's order with the current links plus in-place. */
static int64_t peak_with_inplace(const ArGraph *g, const ArPlanOptions *opt,
				 ArPlan *p, int *peak_step)
{
	if (opt->inplace == AR_INPLACE_ELEMENTWISE)
		ar_inplace(g, p);
	return ar_live_peak(g, p, peak_step);
}

/*
 * The steps each buffer is live over, by the tensor owning it (root[t]:
 * t's owner, through alias and in-place links).  Undoing an elision
 * changes live bytes only within its buffer's span: its slices, the output
 * and whatever shares their bytes are all members, and no link outside
 * forms or breaks (the slices die at the Concat, which writes nothing in
 * place).  So an elision whose buffer is not live at a peak step cannot
 * lower the peak, and need not be tried.
 */
static void buffer_spans(const ArPlan *p, int *root, int *lo, int *hi)
{
	ArAliasMemo m;
	ar_alias_memo_init(&m, p);
	for (int t = 0; t < p->ntensors; t++)
		lo[t] = INT32_MAX, hi[t] = -1;
	for (int t = 0; t < p->ntensors; t++) {
		int r;
		root[t] = -1;
		if (!p->slots[t].planned)
			continue;
		r = root[t] = ar_alias_root(p, &m, t, NULL);
		if (p->slots[t].first < lo[r])
			lo[r] = p->slots[t].first;
		if (p->slots[t].last > hi[r])
			hi[r] = p->slots[t].last;
	}
	ar_alias_memo_free(&m);
}

/* Turns elided concat n back into a copy. */
static void undo(ArPlan *p, const ArNode *n)
{
	for (int j = 0; j < n->nexplicit; j++) {
		p->slots[n->inputs[j]].alias_of = -1;
		p->slots[n->inputs[j]].alias_offset = 0;
	}
}

static bool link_ancestor(const ArPlan *p, int anc, int t)
{
	for (int hops = 0; t >= 0 && hops <= p->ntensors; hops++) {
		if (t == anc)
			return true;
		t = p->slots[t].alias_of;
	}
	return false;
}

/* The slice of elided concat n holding t (the index of the input t is or
 * sits inside), else -1; pos gives n's input index per tensor, else -1. */
static int slice_of(const ArPlan *p, const ArNode *n, const int *pos, int t)
{
	int y = n->outputs[0];
	for (int hops = 0; t >= 0 && hops <= p->ntensors; hops++) {
		int up = p->slots[t].alias_of;
		if (up == y)
			return pos[t];
		t = up;
	}
	return -1;
}

/* t and u, members of one buffer, are live together on shared bytes that
 * neither's alias chain explains. */
static bool pair_clashes(const ArGraph *g, const ArPlan *p,
			 const int64_t *off, int t, int u)
{
	const ArSlot *a = &p->slots[t], *b = &p->slots[u];
	int64_t bt = g->tensors[t].bytes, bu = g->tensors[u].bytes;
	return u != t && b->last >= a->first && a->last >= b->first &&
	       off[u] < off[t] + bt && off[t] < off[u] + bu &&
	       (off[t] != off[u] || bt != bu) &&
	       !link_ancestor(p, t, u) && !link_ancestor(p, u, t);
}

/*
 * Members of one buffer may share bytes while both live only if one is
 * the other's alias ancestor, or both are the very same bytes (the plan's
 * invariant, which the verifier checks).  Elision breaks that when a slice
 * outlives the Concat while a view of the output, or of a concat the output
 * is nested in, is live: a Relu output that a backward step reads again
 * after Concat -> Dropout, or Concat -> Reshape with a slice read later.
 *
 * Slices are disjoint, so a member of one slice can only clash with members
 * of the same slice or with members outside every slice that share the
 * output's bytes (the output, its views, the concats it is nested in):
 * bucketing by slice keeps a 50,000-input Concat linear.
 */
static bool slice_clashes(const ArGraph *g, const ArPlan *p, const ArNode *n,
			  const int *root, const int64_t *off,
			  const int *mstart, const int *mlist, int *pos)
{
	int y = n->outputs[0], r = root[y], ne = n->nexplicit, nm = 0;
	int nr = mstart[r + 1] - mstart[r];
	int64_t ylo = off[y], yhi = off[y] + g->tensors[y].bytes;
	int *cand = ar_xmalloc(((size_t)nr + 1) * sizeof(int));
	int *key = ar_xmalloc(((size_t)nr + 1) * sizeof(int));
	int *mem = ar_xmalloc(((size_t)nr + 1) * sizeof(int));
	int *start = ar_xcalloc((size_t)ne + 3, sizeof(int));
	bool clash = false;

	for (int j = 0; j < ne; j++)
		pos[n->inputs[j]] = j;
	/* Bucket 0 holds the members outside n's slices, bucket j+1 slice j. */
	for (int i = mstart[r]; i < mstart[r + 1]; i++) {
		int t = mlist[i];
		if (g->tensors[t].bytes > 0 && off[t] < yhi &&
		    ylo < off[t] + g->tensors[t].bytes) {
			key[nm] = slice_of(p, n, pos, t) + 1;
			start[key[nm] + 1]++;
			cand[nm++] = t;
		}
	}
	for (int k = 0; k <= ne; k++)
		start[k + 1] += start[k];
	for (int i = 0; i < nm; i++)
		mem[start[key[i]]++] = cand[i];
	for (int k = ne + 1; k > 0; k--)
		start[k] = start[k - 1];
	start[0] = 0;
	for (int k = 1; k <= ne && !clash; k++)
		for (int i = start[k]; i < start[k + 1] && !clash; i++) {
			for (int j = start[k]; j < start[k + 1] && !clash; j++)
				clash = pair_clashes(g, p, off, mem[i], mem[j]);
			for (int j = start[0]; j < start[1] && !clash; j++)
				clash = pair_clashes(g, p, off, mem[i], mem[j]);
		}
	for (int j = 0; j < ne; j++)
		pos[n->inputs[j]] = -1;
	free(cand), free(key), free(mem), free(start);
	return clash;
}

/* Tensors by owner (root[t], -1: none), in increasing id: a counting
 * sort into mlist, owner r's from mstart[r] to mstart[r + 1]. */
static void group_members(const int *root, int nt, int *mstart, int *mlist)
{
	memset(mstart, 0, ((size_t)nt + 2) * sizeof *mstart);
	for (int t = 0; t < nt; t++)
		if (root[t] >= 0)
			mstart[root[t] + 2]++;
	for (int r = 0; r < nt; r++)
		mstart[r + 2] += mstart[r + 1];
	for (int t = 0; t < nt; t++)
		if (root[t] >= 0)
			mlist[mstart[root[t] + 1]++] = t;
}

/* Copies, in step order, the elisions the final order makes unsafe; an
 * inner concat goes first, which keeps the outer one's slices in place.
 * No in-place link exists yet, so roots are those of alias_of alone. */
static void undo_clashes(const ArGraph *g, ArPlan *p)
{
	int *root = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	int64_t *off = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int64_t));
	int *pos = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	/* The members of each buffer, by owner: mlist[mstart[r] ..
	 * mstart[r + 1]), so that each concat looks at its buffer's alone. */
	int *mstart = ar_xmalloc(((size_t)g->ntensors + 2) * sizeof(int));
	int *mlist = ar_xmalloc(((size_t)g->ntensors + 1) * sizeof(int));
	bool stale = true;

	for (int t = 0; t < g->ntensors; t++)
		pos[t] = -1;
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		if (!is_elided(p, n) || !is_concat(n))
			continue;
		if (stale) {
			ArAliasMemo m;
			ar_alias_memo_init(&m, p);
			for (int t = 0; t < g->ntensors; t++)
				root[t] = p->slots[t].planned ?
					  ar_alias_root(p, &m, t, &off[t]) : -1;
			ar_alias_memo_free(&m);
			group_members(root, g->ntensors, mstart, mlist);
		}
		stale = slice_clashes(g, p, n, root, off, mstart, mlist, pos);
		if (stale)
			undo(p, n);
	}
	free(root), free(off), free(pos), free(mstart), free(mlist);
}

/* The next tensor up t's chain of alias and in-place links, or -1. */
static int link_up(const ArPlan *p, int t)
{
	const ArSlot *s = &p->slots[t];
	return s->alias_of >= 0 ? s->alias_of : s->inplace_of;
}

/* Per try of refine_in_order: which tensors sit in the tried concat's
 * slices (in[t], known where seen[t] == stamp). */
typedef struct {
	int *pos;               /* n's input index per tensor, else -1 */
	int *seen, stamp;
	bool *in;
} Slices;

/*
 * t sits in a slice of elided concat n: its chain reaches n's output
 * through one of n's inputs.  Answers are kept for every tensor on the way,
 * so a try walks each chain link once, however deep the nesting.
 */
static bool in_slice(const ArPlan *p, const ArNode *n, Slices *sl, int t)
{
	int y = n->outputs[0], u = t, up;
	bool in = false, done = false;

	for (int hops = 0; u >= 0 && hops <= p->ntensors; hops++, u = up) {
		if (sl->seen[u] == sl->stamp) {
			in = sl->in[u];
			break;
		}
		up = link_up(p, u);
		if (up == y) {
			in = sl->pos[u] >= 0;
			done = true;
			break;
		}
	}
	for (int v = t; v >= 0 && (v != u || done); v = link_up(p, v)) {
		sl->seen[v] = sl->stamp;
		sl->in[v] = in;
		if (v == u)
			break;
	}
	return in;
}

/*
 * Undoing elided concat n leaves the bytes live at step `at` as they are
 * when every member of its slices (root: buffer owners, as in
 * buffer_spans) died before `at`, is neither a graph input, constant nor
 * graph output, and is not read by a step whose output took over a dying
 * input's buffer (taken: set by readers_taken).
 *
 * Why: n's buffer keeps its root, so its size, and its last step and flags,
 * as no slice member is last or flagged; the in-place pass, run afresh,
 * then decides as before from `at` on.  The slices' own buffers, now free,
 * die before `at`.  The pass may link onto them anew, but only an output
 * that took nothing before (so its buffer grows, if anything), or a slice
 * over a buffer that died unlinked where the slice is made: no link that
 * made a buffer live at `at` breaks, and none forms across `at`.  So such a
 * try cannot lower a peak at `at` and is skipped without recomputing the
 * links and the peak (most of DenseNet's tries).
 */
static bool keeps_peak(const ArGraph *g, const ArPlan *p, const ArNode *n,
		       const int *root, const int *mstart, const int *mlist,
		       const bool *isout, const bool *taken, int at,
		       Slices *sl)
{
	int r = root[n->outputs[0]];
	bool keeps = true;
	sl->stamp++;
	for (int j = 0; j < n->nexplicit; j++)
		sl->pos[n->inputs[j]] = j;
	for (int i = mstart[r]; i < mstart[r + 1] && keeps; i++) {
		int t = mlist[i];
		if (in_slice(p, n, sl, t))
			keeps = p->slots[t].last < at && !isout[t] &&
				g->tensors[t].producer >= 0 && !taken[t];
	}
	for (int j = 0; j < n->nexplicit; j++)
		sl->pos[n->inputs[j]] = -1;
	return keeps;
}

/* taken[t]: t is read by a step whose output is in place of an input. */
static void readers_taken(const ArGraph *g, const ArPlan *p, bool *taken)
{
	memset(taken, 0, (size_t)p->ntensors * sizeof *taken);
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		if (n->noutputs < 1 || n->outputs[0] < 0 ||
		    p->slots[n->outputs[0]].inplace_of < 0)
			continue;
		for (int j = 0; j < n->ninputs; j++)
			if (n->inputs[j] >= 0)
				taken[n->inputs[j]] = true;
	}
}

/* Copies where one elision alone keeps the peak up, in p's order. */
static int64_t refine_in_order(const ArGraph *g, const ArPlanOptions *opt,
			       ArPlan *p)
{
	size_t nt = (size_t)p->ntensors + 1;
	int at, *root = ar_xmalloc(nt * sizeof(int));
	int *lo = ar_xmalloc(nt * sizeof(int)), *hi = ar_xmalloc(nt * sizeof(int));
	bool *isout = ar_graph_output_flags(g);
	bool *taken = ar_xmalloc(nt * sizeof(bool));
	/* Each buffer's members, by owner (as in undo_clashes), so that a
	 * try looks at its own buffer's alone. */
	int *mstart = ar_xmalloc((nt + 1) * sizeof(int));
	int *mlist = ar_xmalloc(nt * sizeof(int));
	Slices sl = {ar_xmalloc(nt * sizeof(int)), ar_xmalloc(nt * sizeof(int)),
		     0, ar_xmalloc(nt * sizeof(bool))};
	int64_t cur = peak_with_inplace(g, opt, p, &at);
	ArSlot *keep = ar_xmalloc(nt * sizeof *keep);

	for (int t = 0; t < p->ntensors; t++)
		sl.pos[t] = sl.seen[t] = -1;
	buffer_spans(p, root, lo, hi);
	group_members(root, p->ntensors, mstart, mlist);
	readers_taken(g, p, taken);
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		int64_t pk;
		int r, pat;
		if (!is_elided(p, n) || !is_concat(n))
			continue;
		r = root[n->outputs[0]];
		if (r < 0 || at < lo[r] || at > hi[r])
			continue;
		if (keeps_peak(g, p, n, root, mstart, mlist, isout, taken, at,
			       &sl))
			continue;
		memcpy(keep, p->slots, (size_t)p->ntensors * sizeof *keep);
		undo(p, n);
		pk = peak_with_inplace(g, opt, p, &pat);
		if (pk < cur) {
			cur = pk;
			at = pat;
			buffer_spans(p, root, lo, hi);
			group_members(root, p->ntensors, mstart, mlist);
			readers_taken(g, p, taken);
		} else {
			memcpy(p->slots, keep, (size_t)p->ntensors * sizeof *keep);
		}
	}
	free(keep), free(root), free(lo), free(hi), free(isout), free(taken);
	free(mstart), free(mlist);
	free(sl.pos), free(sl.seen), free(sl.in);
	return cur;
}

/* Some step is an elided concat. */
static bool any_elided(const ArGraph *g, const ArPlan *p)
{
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		if (is_elided(p, n) && is_concat(n))
			return true;
	}
	return false;
}

/*
 * Several elided concats can hold the peak together (ShuffleNet), where
 * undoing any one alone changes nothing; and the order was chosen for the
 * elided buffers.  So the plan with every concat a copy, scheduled afresh,
 * competes too, and the better one stays (ties keep the elisions).
 */
void ar_concat_refine(const ArGraph *g, const ArPlanOptions *opt, ArPlan *p)
{
	/* No elision, nothing to try: only the in-place links remain to do
	 * (a graph without Concat, or a million-step chain). */
	if (!any_elided(g, p)) {
		if (opt->inplace == AR_INPLACE_ELEMENTWISE)
			ar_inplace(g, p);
		return;
	}
	size_t nsl = (size_t)p->ntensors * sizeof(ArSlot);
	size_t nst = (size_t)p->nsteps * sizeof(int);
	ArSlot *slots = ar_xmalloc(nsl + 1);
	int *steps = ar_xmalloc(nst + 1);
	int64_t elided;

	bool any = false;

	undo_clashes(g, p);
	elided = refine_in_order(g, opt, p);

	memcpy(slots, p->slots, nsl);
	memcpy(steps, p->steps, nst);
	for (int i = 0; i < g->nnodes; i++)
		if (ar_is_step(g, i) && is_elided(p, &g->nodes[i]) &&
		    is_concat(&g->nodes[i])) {
			undo(p, &g->nodes[i]);
			any = true;
		}
	/* Nothing undone: scheduling afresh would find the same order. */
	if (!any) {
		free(slots), free(steps);
		return;
	}
	ar_schedule(g, opt, p, p->steps);
	ar_lifetimes(g, p);
	if (peak_with_inplace(g, opt, p, NULL) >= elided) {
		memcpy(p->slots, slots, nsl);
		memcpy(p->steps, steps, nst);
	}
	free(slots), free(steps);
}
