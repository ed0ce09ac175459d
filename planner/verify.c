/*
 * verify.c — the plan verifier: an independent proof that a plan is safe.
 *
 * It shares no code with the allocators: it recomputes what every tensor's
 * lifetime must cover from the graph and the step order, then checks every
 * pair of tensors that are live at the same step for disjoint bytes.  The
 * only overlaps it accepts are the ones aliasing creates on purpose:
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

#include <stdlib.h>
#include <string.h>

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

static int by_first(const void *a, const void *b, void *ctx)
{
	const ArPlan *p = ctx;
	int x = *(const int *)a, y = *(const int *)b;
	if (p->slots[x].first != p->slots[y].first)
		return p->slots[x].first < p->slots[y].first ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* A portable stand-in for qsort_r: insertion into runs + merge sort. */
static void sort_ids(int *ids, int n, const ArPlan *p)
{
	int *tmp;
	if (n < 2)
		return;
	tmp = ar_xmalloc((size_t)n * sizeof(int));
	for (int w = 1; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = lo + w < n ? lo + w : n;
			int hi = lo + 2 * w < n ? lo + 2 * w : n;
			int i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = by_first(&ids[j], &ids[i],
						    (void *)p) < 0 ? ids[j++] :
								      ids[i++];
			while (i < mid)
				tmp[k++] = ids[i++];
			while (j < hi)
				tmp[k++] = ids[j++];
		}
		memcpy(ids, tmp, (size_t)n * sizeof(int));
	}
	free(tmp);
}

/*
 * Sweep over steps in birth order; each tensor is checked against the
 * tensors still live when it is born.  Two tensors overlap in time iff the
 * later-born one is born before the other dies, so this sees every pair.
 */
static int check_overlaps(const Ver *v)
{
	const ArGraph *g = v->g;
	const ArPlan *p = v->p;
	int *ids = ar_xmalloc((size_t)g->ntensors * sizeof(int) + 1);
	int *live = ar_xmalloc((size_t)g->ntensors * sizeof(int) + 1);
	int n = 0, nlive = 0, rc = AR_OK;

	for (int t = 0; t < g->ntensors; t++)
		if (p->slots[t].planned && g->tensors[t].bytes > 0)
			ids[n++] = t;
	sort_ids(ids, n, p);
	for (int i = 0; i < n && !rc; i++) {
		int a = ids[i], k = 0;
		const ArSlot *sa = &p->slots[a];
		int64_t aend = sa->offset + g->tensors[a].bytes;
		for (int j = 0; j < nlive; j++)
			if (p->slots[live[j]].last >= sa->first)
				live[k++] = live[j];
		nlive = k;
		for (int j = 0; j < nlive && !rc; j++) {
			int b = live[j];
			const ArSlot *sb = &p->slots[b];
			int64_t bend = sb->offset + g->tensors[b].bytes;
			if (sa->region == sb->region &&
			    sa->offset < bend && sb->offset < aend &&
			    !overlap_allowed(v, a, b))
				rc = ar_fail(v->err, AR_EXIT_INTERNAL,
					     "plan: tensors '%s' [%lld, %lld) "
					     "steps [%d, %d] and '%s' [%lld, "
					     "%lld) steps [%d, %d] overlap",
					     tname(v, a), (long long)sa->offset,
					     (long long)aend, sa->first,
					     sa->last, tname(v, b),
					     (long long)sb->offset,
					     (long long)bend, sb->first,
					     sb->last);
		}
		live[nlive++] = a;
	}
	free(ids), free(live);
	return rc;
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
