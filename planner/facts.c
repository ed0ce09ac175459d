/*
 * facts.c — what a finished plan implies, derived once for every writer.
 *
 * The header, the JSON report and the tools that read them need three
 * things the alias passes decide only implicitly: which tensor owns the
 * buffer a tensor lives in (its root, at which byte offset), which caller
 * buffer an input or output of an --io separate plan lives in, and which
 * steps have nothing to compute because their outputs are already in
 * place; and for tools that follow storages rather than tensors, each
 * storage's steps (ar_plan_storage_spans).  Deriving them here, from the links and offsets the planner
 * made, keeps every writer from re-deriving planner knowledge on its own.
 */
#include "passes.h"

#include <assert.h>
#include <stdlib.h>

/* Output o only names bytes of input i (a Reshape, a Split slice): an
 * alias in i's buffer lying inside i.  A Concat input written in place
 * aliases too, but into a later buffer, and is not a view. */
static bool is_view(const ArGraph *g, const ArPlan *p, int o, int i)
{
	const ArSlot *so = &p->slots[o], *si = &p->slots[i];
	return so->alias_of >= 0 && si->planned && so->root == si->root &&
	       so->root_offset >= si->root_offset &&
	       so->root_offset + g->tensors[o].bytes <=
	       si->root_offset + g->tensors[i].bytes;
}

static bool step_noop(const ArGraph *g, const ArPlan *p, const ArNode *n)
{
	bool views = true, slices = n->noutputs == 1 && n->nexplicit > 0;

	/* Every output a view of an input ... */
	for (int j = 0; j < n->noutputs; j++) {
		bool any = false;
		for (int k = 0; n->outputs[j] >= 0 && k < n->nexplicit; k++)
			any |= n->inputs[k] >= 0 &&
			       is_view(g, p, n->outputs[j], n->inputs[k]);
		views &= any;
	}
	/* ... or every input already written where the one output wants it
	 * (an elided Concat). */
	for (int j = 0; slices && j < n->nexplicit; j++)
		if (n->inputs[j] < 0 ||
		    p->slots[n->inputs[j]].alias_of != n->outputs[0])
			slices = false;
	return n->noutputs > 0 && (views || slices);
}

/* An input or output the arena leaves to the caller (--io separate). */
static void set_io(const ArGraph *g, ArPlan *p, int t, int slot)
{
	ArSlot *s = &p->slots[t];
	if (p->io_separate && !s->planned && s->io < 0 && ar_in_arena(g, t))
		s->io = slot;
}

void ar_plan_facts(const ArGraph *g, ArPlan *p)
{
	ArAliasMemo m;

	ar_alias_memo_init(&m, p);
	for (int t = 0; t < p->ntensors; t++) {
		ArSlot *s = &p->slots[t];
		s->root = s->planned ? ar_alias_root(p, &m, t, &s->root_offset) :
			  -1;
		if (!s->planned)
			s->root_offset = 0;
		s->io = -1;
		/* One buffer: the root's offset plus the member's. */
		assert(!s->planned || g->tensors[t].bytes <= 0 ||
		       s->offset == p->slots[s->root].offset + s->root_offset);
	}
	ar_alias_memo_free(&m);
	for (int k = 0; k < g->ninputs; k++)
		set_io(g, p, g->inputs[k], k);
	for (int k = 0; k < g->noutputs; k++)
		set_io(g, p, g->outputs[k], g->ninputs + k);
	/* Whatever the arena leaves out of its own tensors is the caller's,
	 * or an enclosing graph's. */
	for (int t = 0; t < p->ntensors; t++)
		assert(p->slots[t].planned || !ar_in_arena(g, t) ||
		       p->slots[t].io >= 0 || (p->outer && p->outer[t] >= 0));
	free(p->noop);
	p->noop = ar_xcalloc((size_t)p->nsteps + 1, sizeof *p->noop);
	for (int s = 0; s < p->nsteps; s++)
		p->noop[s] = step_noop(g, p, &g->nodes[p->steps[s]]);
}

void ar_plan_storage_spans(const ArGraph *g, const ArPlan *p, int *first,
			   int *last)
{
	for (int t = 0; t < g->ntensors; t++)
		first[t] = last[t] = -1;
	for (int t = 0; t < g->ntensors; t++) {
		const ArSlot *s = &p->slots[t];
		int r = s->root;
		if (!s->planned || r < 0 || s->first < 0)
			continue;
		if (first[r] < 0 || s->first < first[r])
			first[r] = s->first;
		if (s->last > last[r])
			last[r] = s->last;
	}
}
