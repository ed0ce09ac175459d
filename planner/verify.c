/*
 * verify.c — the plan verifier: an independent proof that a plan is safe.
 *
 * It shares no code with the allocators: it recomputes what every tensor's
 * lifetime must cover from the graph and the step order, then checks every
 * pair of tensors that are live at the same step for disjoint bytes (a
 * sweep over time with the live tensors in byte order, its own treap).
 * The only overlaps it accepts are the ones aliasing creates on purpose:
 *   - a tensor and an alias_of ancestor (a view, a concat slice in its
 *     output), or two aliases of one buffer with the very same bytes;
 *   - an in-place output and the input it overwrites, touching only at the
 *     step where the input dies and the output is born.
 * With memory tiers every region is an address space of its own: bytes
 * clash only within one region, and each region has its own bounds (its
 * used bytes, within its capacity, weights kept below its activations).
 * Workspaces and subgraphs are verify_sub.c's, for this plan and, through
 * it, each nested one.  A violation is an internal error (exit 4) naming
 * the tensors.
 */
#include "passes.h"
#include "sortkey.h"
#include "treap.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct {
	const ArGraph *g;
	const ArPlan *p;
	ArError *err;
} Ver;

static const char *tname(const Ver *v, int t)
{
	return v->g->tensors[t].name;
}

/* --io separate: graph inputs and outputs are the caller's buffers; a
 * subgraph's outer tensors are the enclosing graph's (verify_sub.c). */
static bool caller_owned(const Ver *v, int t)
{
	ArTensorKind k = v->g->tensors[t].kind;
	return (v->p->io_separate && (k == AR_TK_INPUT || k == AR_TK_OUTPUT)) ||
	       (v->p->outer && v->p->outer[t] >= 0);
}

/* Follows alias_of links only; -1 on a cycle. */
static int view_root(const ArPlan *p, int t, int64_t *off)
{
	int64_t o = 0;
	for (int hops = 0; p->slots[t].alias_of >= 0; hops++) {
		if (hops > p->ntensors)
			return -1;
		o += p->slots[t].alias_offset;
		t = p->slots[t].alias_of;
	}
	*off = o;
	return t;
}

static bool is_view_ancestor(const ArPlan *p, int anc, int t)
{
	for (int hops = 0; hops <= p->ntensors && t >= 0; hops++) {
		if (t == anc)
			return true;
		t = p->slots[t].alias_of;
	}
	return false;
}

static bool node_reads(const ArNode *n, int t)
{
	for (int i = 0; i < n->nexplicit; i++)
		if (n->inputs[i] == t)
			return true;
	return false;
}

/* b (born at the step where a dies) was declared to overwrite a's bytes. */
static bool inplace_pair(const Ver *v, int a, int b)
{
	const ArSlot *sa = &v->p->slots[a], *sb = &v->p->slots[b];
	const ArNode *n;
	if (sa->last != sb->first)
		return false;
	n = &v->g->nodes[v->p->steps[sb->first]];
	if (!node_reads(n, a) || v->g->tensors[b].producer != v->p->steps[sb->first])
		return false;
	/* The in-place link may sit on b's view chain, pointing into a's. */
	for (int x = b, hops = 0; x >= 0 && hops <= v->p->ntensors; hops++) {
		int y = v->p->slots[x].inplace_of;
		if (y >= 0 && (is_view_ancestor(v->p, y, a) ||
			       is_view_ancestor(v->p, a, y)))
			return true;
		x = v->p->slots[x].alias_of;
	}
	return false;
}

static bool overlap_allowed(const Ver *v, int a, int b)
{
	int64_t oa = 0, ob = 0;
	int ra, rb;
	if (is_view_ancestor(v->p, a, b) || is_view_ancestor(v->p, b, a))
		return true;
	ra = view_root(v->p, a, &oa);
	rb = view_root(v->p, b, &ob);
	if (ra >= 0 && ra == rb && oa == ob &&
	    v->g->tensors[a].bytes == v->g->tensors[b].bytes)
		return true;
	return inplace_pair(v, a, b) || inplace_pair(v, b, a);
}

static int check_order(const Ver *v)
{
	const ArGraph *g = v->g;
	const ArPlan *p = v->p;
	int *pos = ar_xmalloc((size_t)g->nnodes * sizeof(int) + 1);
	int rc = AR_OK, nstep = 0;

	for (int i = 0; i < g->nnodes; i++)
		pos[i] = -1;
	for (int s = 0; s < p->nsteps && !rc; s++) {
		int n = p->steps[s];
		if (n < 0 || n >= g->nnodes || pos[n] >= 0)
			rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: step %d "
				     "names node %d twice or out of range", s, n);
		else
			pos[n] = s;
	}
	for (int i = 0; i < g->nnodes && !rc; i++)
		if (ar_is_step(g, i)) {
			nstep++;
			if (pos[i] < 0)
				rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: "
					     "node '%s' never runs",
					     g->nodes[i].name);
		}
	if (!rc && nstep != p->nsteps)
		rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: %d steps for %d "
			     "nodes that run", p->nsteps, nstep);
	for (int s = 0; s < p->nsteps && !rc; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		for (int j = 0; j < n->ninputs && !rc; j++) {
			int t = n->inputs[j], pr;
			if (t < 0)
				continue;
			pr = g->tensors[t].producer;
			if (pr >= 0 && pos[pr] >= s)
				rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: "
					     "step %d '%s' reads '%s' before "
					     "it is produced", s, n->name,
					     tname(v, t));
		}
	}
	free(pos);
	return rc;
}

/* Lifetimes must cover the producer, every reader and the graph's ends. */
static int check_slots(const Ver *v)
{
	const ArGraph *g = v->g;
	const ArPlan *p = v->p;
	int *need_first = ar_xmalloc((size_t)g->ntensors * sizeof(int) + 1);
	int *need_last = ar_xmalloc((size_t)g->ntensors * sizeof(int) + 1);
	int last = p->nsteps ? p->nsteps - 1 : 0, rc = AR_OK;

	for (int t = 0; t < g->ntensors; t++) {
		need_first[t] = g->tensors[t].producer < 0 ? 0 : -1;
		need_last[t] = need_first[t];
	}
	for (int s = 0; s < p->nsteps; s++) {
		const ArNode *n = &g->nodes[p->steps[s]];
		for (int j = 0; j < n->noutputs; j++)
			if (n->outputs[j] >= 0)
				need_first[n->outputs[j]] =
					need_last[n->outputs[j]] = s;
		for (int j = 0; j < n->ninputs; j++)
			if (n->inputs[j] >= 0 && need_last[n->inputs[j]] < s)
				need_last[n->inputs[j]] = s;
	}
	for (int i = 0; i < g->noutputs; i++)
		need_last[g->outputs[i]] = last;

	for (int t = 0; t < g->ntensors && !rc; t++) {
		const ArSlot *s = &p->slots[t];
		int64_t padded;
		if (s->planned != (ar_in_arena(g, t) && !caller_owned(v, t))) {
			rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: tensor "
				     "'%s' %s the arena but should%s be",
				     tname(v, t), s->planned ? "is in" :
				     "is not in", s->planned ? " not" : "");
			break;
		}
		if (!s->planned)
			continue;
		if (s->first > need_first[t] || s->last < need_last[t] ||
		    s->first < 0 || s->last >= (p->nsteps ? p->nsteps : 1))
			rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: tensor "
				     "'%s' lives over steps [%d, %d] but is "
				     "needed over [%d, %d]", tname(v, t),
				     s->first, s->last, need_first[t],
				     need_last[t]);
		else if (s->region < 0 || s->region >= ar_plan_nregions(p))
			rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: tensor "
				     "'%s' is in region %d of %d", tname(v, t),
				     s->region, ar_plan_nregions(p));
		else if (g->tensors[t].bytes == 0)
			continue;
		else if (s->offset < 0 || s->offset % p->align)
			rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: tensor "
				     "'%s' has offset %lld, not a multiple of "
				     "the alignment %lld", tname(v, t),
				     (long long)s->offset, (long long)p->align);
		else if ((padded = ar_plan_padded(p, g->tensors[t].bytes)),
			 s->offset + padded > ar_plan_region_bytes(p, s->region))
			rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: tensor "
				     "'%s' at [%lld, %lld) ends past the arena "
				     "of %lld bytes", tname(v, t),
				     (long long)s->offset,
				     (long long)(s->offset + padded),
				     (long long)ar_plan_region_bytes(p,
								     s->region));
		else if (p->nregions > 0 &&
			 s->offset < p->regions[s->region].weights_bytes)
			rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: tensor "
				     "'%s' at %lld lies in the weights of "
				     "region '%s'", tname(v, t),
				     (long long)s->offset,
				     p->regions[s->region].name);
		else if ((s->alias_of >= 0 && s->alias_of < g->ntensors &&
			  p->slots[s->alias_of].region != s->region) ||
			 (s->inplace_of >= 0 && s->inplace_of < g->ntensors &&
			  p->slots[s->inplace_of].region != s->region))
			rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: tensor "
				     "'%s' shares bytes with a tensor of "
				     "another region", tname(v, t));
		else if (s->alias_of >= 0 &&
			 (s->alias_of >= g->ntensors ||
			  !p->slots[s->alias_of].planned ||
			  s->alias_offset < 0 ||
			  s->offset != p->slots[s->alias_of].offset +
				       s->alias_offset ||
			  s->alias_offset + g->tensors[t].bytes >
				  g->tensors[s->alias_of].bytes))
			rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: tensor "
				     "'%s' claims to alias '%s' at +%lld but "
				     "its bytes are not inside it",
				     tname(v, t), s->alias_of < g->ntensors ?
				     tname(v, s->alias_of) : "?",
				     (long long)s->alias_offset);
		else if (s->inplace_of >= 0 &&
			 (s->inplace_of >= g->ntensors ||
			  p->slots[s->inplace_of].offset != s->offset ||
			  p->slots[s->inplace_of].last != s->first ||
			  g->tensors[s->inplace_of].bytes < g->tensors[t].bytes))
			rc = ar_fail(v->err, AR_EXIT_INTERNAL, "plan: tensor "
				     "'%s' claims to overwrite '%s' in place, "
				     "but that input is not dead at its step "
				     "or not at its offset", tname(v, t),
				     s->inplace_of < g->ntensors ?
				     tname(v, s->inplace_of) : "?");
	}
	free(need_first), free(need_last);
	return rc;
}

/* The checked tensors (pos[0, n) ids, ascending) by their first step, or
 * their last, counting: stable, so ties stay in id order. */
static int *by_step(const ArPlan *p, const ArSortKey *pos, int n, bool last)
{
	int *start = ar_xcalloc((size_t)p->nsteps + 2, sizeof *start);
	int *out = ar_xmalloc((size_t)n * sizeof *out + 1);
	for (int i = 0; i < n; i++) {
		const ArSlot *s = &p->slots[pos[i].id];
		int k = last ? s->last : s->first;
		/* check_slots has put every lifetime inside the steps. */
		assert(k >= 0 && k <= p->nsteps);
		start[k + 1]++;
	}
	for (int s = 0; s <= p->nsteps; s++)
		start[s + 1] += start[s];
	for (int i = 0; i < n; i++) {
		const ArSlot *s = &p->slots[pos[i].id];
		out[start[last ? s->last : s->first]++] = pos[i].id;
	}
	free(start);
	return out;
}

/*
 * The live tensors in byte order: every checked tensor has a rank by
 * (region, offset, id), and the live ones form a treap keyed by rank (a
 * tensor's node is its rank) whose nodes know the furthest end in their
 * subtree, so the live tensors that reach past a given offset within a
 * range of ranks are found without looking at the others.  Only live
 * tensors are in it: its depth grows with their log, not with the
 * graph's (a residual stack of a million steps has three live at a time).
 * Priorities hash the rank (treap.h), the same on every run.
 */
typedef struct {
	const Ver *v;
	const ArSortKey *pos;   /* the tensors by rank, k3 their end */
	int n;
	int *left, *right;      /* children by rank, -1 where none */
	int64_t *max;           /* the furthest end in a rank's subtree */
	int root;
	int a;                  /* the tensor being checked */
	int rc;
} Live;

static void pull(Live *l, int t)
{
	int64_t m = l->pos[t].k3;
	if (l->left[t] >= 0 && l->max[l->left[t]] > m)
		m = l->max[l->left[t]];
	if (l->right[t] >= 0 && l->max[l->right[t]] > m)
		m = l->max[l->right[t]];
	l->max[t] = m;
}

/* Splits subtree t into the ranks below key (*lo) and the rest (*hi). */
static void split(Live *l, int t, int key, int *lo, int *hi)
{
	if (t < 0) {
		*lo = *hi = -1;
		return;
	}
	if (t < key) {
		split(l, l->right[t], key, &l->right[t], hi);
		*lo = t;
	} else {
		split(l, l->left[t], key, lo, &l->left[t]);
		*hi = t;
	}
	pull(l, t);
}

/* Joins subtrees a and b, every rank of a below every rank of b. */
static int join(Live *l, int a, int b)
{
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	if (ar_treap_priority(a) > ar_treap_priority(b)) {
		l->right[a] = join(l, l->right[a], b);
		pull(l, a);
		return a;
	}
	l->left[b] = join(l, a, l->left[b]);
	pull(l, b);
	return b;
}

/* Subtree t with rank x (not in it yet) added: down to where x's priority
 * puts it, which takes the ranks there split around it. */
static int live_add(Live *l, int t, int x)
{
	if (t < 0 || ar_treap_priority(x) > ar_treap_priority(t)) {
		split(l, t, x, &l->left[x], &l->right[x]);
		pull(l, x);
		return x;
	}
	if (x < t)
		l->left[t] = live_add(l, l->left[t], x);
	else
		l->right[t] = live_add(l, l->right[t], x);
	pull(l, t);
	return t;
}

/* Subtree t with rank x taken out: its children joined in its place. */
static int live_remove(Live *l, int t, int x)
{
	/* Whatever dies was born before: the sweep added it. */
	assert(t >= 0);
	if (t == x)
		return join(l, l->left[t], l->right[t]);
	if (x < t)
		l->left[t] = live_remove(l, l->left[t], x);
	else
		l->right[t] = live_remove(l, l->right[t], x);
	pull(l, t);
	return t;
}

static int clash(const Ver *v, int a, int b)
{
	const ArSlot *sa = &v->p->slots[a], *sb = &v->p->slots[b];
	return ar_fail(v->err, AR_EXIT_INTERNAL, "plan: tensors '%s' [%lld, "
		       "%lld) steps [%d, %d] and '%s' [%lld, %lld) steps [%d, "
		       "%d] overlap", tname(v, a), (long long)sa->offset,
		       (long long)(sa->offset + v->g->tensors[a].bytes),
		       sa->first, sa->last, tname(v, b), (long long)sb->offset,
		       (long long)(sb->offset + v->g->tensors[b].bytes),
		       sb->first, sb->last);
}

/* Rank r's position lies before (region, end). */
static bool before(const Live *l, int r, int64_t region, int64_t end)
{
	const ArSortKey *k = &l->pos[r];
	return k->k1 < region || (k->k1 == region && k->k2 < end);
}

/* Checks l->a, in rank order, against the live tensors of subtree t that
 * lie in region at offsets below end (offsets are not negative, so those
 * are the region's first ranks) and reach past off.  Whether ranks in
 * range lie left or right of t is read off t's neighbours in byte order. */
static void live_visit(Live *l, int t, int64_t region, int64_t end,
		       int64_t off)
{
	if (l->rc || t < 0 || l->max[t] <= off)
		return;
	if (t > 0 && l->pos[t - 1].k1 >= region)
		live_visit(l, l->left[t], region, end, off);
	if (!l->rc && l->pos[t].k1 >= region && before(l, t, region, end) &&
	    l->pos[t].k3 > off && !overlap_allowed(l->v, l->a, l->pos[t].id))
		l->rc = clash(l->v, l->a, l->pos[t].id);
	if (t + 1 < l->n && before(l, t + 1, region, end))
		live_visit(l, l->right[t], region, end, off);
}

/*
 * Sweep over tensors in birth order; each is checked against the tensors
 * still live when it is born whose bytes meet its own.  Two tensors
 * overlap in time iff the later-born one is born before the other dies, so
 * this sees every pair that shares a step and a byte, at a cost that grows
 * with those pairs, not with everything live beside each tensor.
 */
static int check_overlaps(const Ver *v)
{
	const ArGraph *g = v->g;
	const ArPlan *p = v->p;
	ArSortKey *pos = ar_xmalloc((size_t)g->ntensors * sizeof *pos + 1);
	int *rank = ar_xmalloc((size_t)g->ntensors * sizeof *rank + 1);
	int *birth, *death, n = 0;
	Live l = { v, pos, 0, NULL, NULL, NULL, -1, -1, AR_OK };

	for (int t = 0; t < g->ntensors; t++) {
		const ArSlot *s = &p->slots[t];
		if (!s->planned || g->tensors[t].bytes <= 0)
			continue;
		pos[n++] = (ArSortKey){ s->region, s->offset, 0, t };
	}
	/* Ids by step, 4 bytes each: the lists are the verifier's share of
	 * the peak memory of a million-node graph. */
	birth = by_step(p, pos, n, false);
	death = by_step(p, pos, n, true);
	ar_sort_keys(pos, n);
	l.n = n;
	l.left = ar_xmalloc((size_t)n * sizeof *l.left + 1);
	l.right = ar_xmalloc((size_t)n * sizeof *l.right + 1);
	l.max = ar_xmalloc((size_t)n * sizeof *l.max + 1);
	for (int i = 0; i < n; i++) {
		rank[pos[i].id] = i;
		pos[i].k3 = pos[i].k2 + g->tensors[pos[i].id].bytes;
	}
	for (int i = 0, d = 0; i < n && !l.rc; i++) {
		int a = birth[i];
		const ArSlot *sa = &p->slots[a];
		int64_t aend = sa->offset + g->tensors[a].bytes;
		/* Whatever died before a's first step was born before it. */
		for (; d < n && p->slots[death[d]].last < sa->first; d++)
			l.root = live_remove(&l, l.root, rank[death[d]]);
		l.a = a;
		live_visit(&l, l.root, sa->region, aend, sa->offset);
		l.root = live_add(&l, l.root, rank[a]);
	}
	free(birth), free(death), free(pos), free(rank);
	free(l.left), free(l.right), free(l.max);
	return l.rc;
}

int ar_verify(const ArGraph *g, const ArPlan *p, ArError *err)
{
	return ar_verify_at(g, p, 0, -1, err);
}

int ar_verify_at(const ArGraph *g, const ArPlan *p, int64_t base, int region,
		 ArError *err)
{
	Ver v = {g, p, err};
	int rc;
	if (p->ntensors != g->ntensors)
		return ar_fail(err, AR_EXIT_INTERNAL, "plan: %d slots for %d "
			       "tensors", p->ntensors, g->ntensors);
	for (int r = 0; r < p->nregions; r++)
		if (p->regions[r].used_bytes > p->regions[r].capacity)
			return ar_fail(err, AR_EXIT_INTERNAL, "plan: region "
				       "'%s' uses %lld bytes of %lld",
				       p->regions[r].name,
				       (long long)p->regions[r].used_bytes,
				       (long long)p->regions[r].capacity);
	if ((rc = check_order(&v)) || (rc = check_slots(&v)) ||
	    (rc = check_overlaps(&v)))
		return rc;
	return ar_verify_subs(g, p, base, region, err);
}
