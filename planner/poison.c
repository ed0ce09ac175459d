/*
 * poison.c — the poison executor: runs a plan on real bytes without kernels.
 *
 * Every value gets a fill pattern derived from its identity and position.
 * Each step first checks that all its inputs still hold exactly the pattern
 * their producer wrote, then writes its outputs' patterns over the arena as
 * laid out by the plan.  Any two values that the plan lets overlap while
 * both are needed show up as a corrupted input, with no real kernel.
 *
 * A view or concat slice (alias_of) is the same value as the buffer it
 * lives in, so its pattern is that buffer's pattern at its offset; an
 * in-place output is a new value, with its own pattern.  A tiered plan
 * gets one byte array per region, each tensor living in its region's.
 *
 * A step whose node runs subgraphs runs each of them there, on the same
 * bytes: every branch of an If in turn, a loop body (Loop, Scan) for two
 * iterations.  A subgraph's tensors live at its workspace's base plus
 * their offsets, and those it shares with the enclosing graph (captures,
 * an If branch's outputs) are the enclosing tensors themselves, pattern
 * and all.  Each iteration's values get patterns of their own, and the
 * copies of the carried values between iterations are simulated in the
 * runtime's order (scan slices, then each carried output onto its input),
 * so a value overwritten by an earlier copy, or left over from the
 * previous iteration, shows up too.
 */
#include "ops.h"
#include "passes.h"

#include <stdlib.h>

#define POISON_MAX_ARENA ((int64_t)4 << 30)

static uint8_t pattern(uint32_t value, uint64_t pos)
{
	uint32_t x = value * 0x9E3779B1u ^ (uint32_t)pos ^
		     (uint32_t)(pos >> 32) * 0x85EBCA6Bu;
	x ^= x >> 15;
	x *= 0x2C1B3C6Du;
	x ^= x >> 12;
	x *= 0x297A2D39u;
	return (uint8_t)(x >> 24);
}

/* One plan being run: a subgraph's inside its enclosing plan's run. */
typedef struct Ctx {
	const ArGraph *g;
	const ArPlan *p;
	const ArSubPlan *sub;       /* NULL at the top */
	const struct Ctx *up;
	uint32_t id;                /* mixed into every value's pattern */
} Ctx;

typedef struct Run {
	uint8_t **arena;
	ArError *err;
	uint32_t ids;               /* contexts made so far */
} Run;

/* The value a tensor's bytes belong to, and where inside it they start. */
static int value_of(const ArPlan *p, int t, int64_t *pos)
{
	int64_t o = 0;
	for (int hops = 0; p->slots[t].alias_of >= 0 && hops <= p->ntensors;
	     hops++) {
		o += p->slots[t].alias_offset;
		t = p->slots[t].alias_of;
	}
	*pos = o;
	return t;
}

/*
 * Tensor t of c's plan as the arena holds it: its bytes at absolute
 * offset *at, the value's id and the byte of the value they start at;
 * NULL when it is not in the arena (a weight, a caller's buffer).
 */
static uint8_t *locate(const Run *r, const Ctx *c, int t, uint32_t *value,
		       int64_t *pos, int64_t *at)
{
	const ArSlot *s;
	while (c->p->outer && c->p->outer[t] >= 0) {
		t = c->p->outer[t];
		c = c->up;
	}
	s = &c->p->slots[t];
	if (!s->planned)
		return NULL;
	*value = (uint32_t)value_of(c->p, t, pos) + c->id * 0x01000193u;
	*at = (c->sub ? c->sub->base : 0) + s->offset;
	return r->arena[c->sub ? c->sub->region : s->region] + *at;
}

static void fill(const Run *r, const Ctx *c, int t)
{
	int64_t pos, at;
	uint32_t v;
	uint8_t *b = locate(r, c, t, &v, &pos, &at);
	for (int64_t i = 0; b && i < c->g->tensors[t].bytes; i++)
		b[i] = pattern(v, (uint64_t)(pos + i));
}

static int check(const Run *r, const Ctx *c, int t, int step)
{
	int64_t pos, at;
	uint32_t v;
	const uint8_t *b = locate(r, c, t, &v, &pos, &at);
	for (int64_t i = 0; b && i < c->g->tensors[t].bytes; i++)
		if (b[i] != pattern(v, (uint64_t)(pos + i)))
			return ar_fail(r->err, AR_EXIT_INTERNAL, "poison: step "
				       "%d '%s'%s%s%s reads '%s', whose byte "
				       "%lld (arena offset %lld) was "
				       "overwritten", step,
				       step < c->p->nsteps ?
				       c->g->nodes[c->p->steps[step]].name :
				       "(end)", c->sub ? " of subgraph '" : "",
				       c->sub ? c->g->name : "",
				       c->sub ? "'" : "", c->g->tensors[t].name,
				       (long long)i, (long long)(at + i));
	return AR_OK;
}

static int run_steps(Run *r, const Ctx *c);

static Ctx enter(Run *r, const Ctx *c, const ArSubPlan *sp)
{
	Ctx in = {sp->g, sp->plan, sp, c, ++r->ids};
	return in;
}

/* An If branch: its steps, then the outputs the runtime hands on. */
static int run_branch(Run *r, const Ctx *c, const ArSubPlan *sp)
{
	Ctx in = enter(r, c, sp);
	int rc = run_steps(r, &in);
	for (int o = 0; o < in.g->noutputs && !rc; o++)
		rc = check(r, &in, in.g->outputs[o], in.p->nsteps);
	return rc;
}

/*
 * A loop body for two iterations, with the copies between them: scan
 * slices out, then each carried output onto its input (ops/control.c),
 * in order; what no output feeds (the iteration number, scan input
 * slices) is written anew.
 */
static int run_loop(Run *r, const Ctx *c, const ArSubPlan *sp, ArControl ctl)
{
	const ArGraph *b = sp->g;
	const ArNode *n = &c->g->nodes[sp->node];
	bool *fed = ar_xcalloc((size_t)b->ninputs + 1, sizeof *fed);
	Ctx it = enter(r, c, sp), next;
	int rc = AR_OK, end = sp->plan->nsteps;

	for (int o = 0; o < b->noutputs; o++) {
		int d = ar_control_carried(n, ctl, o);
		if (d >= 0 && d < b->ninputs)
			fed[d] = true;
	}
	for (int i = 0; i < b->ninputs; i++)
		fill(r, &it, b->inputs[i]);
	for (int k = 0; k < 2 && !rc; k++, it = next) {
		rc = run_steps(r, &it);
		for (int o = 0; o < b->noutputs && !rc; o++)
			if (ar_control_carried(n, ctl, o) < 0)
				rc = check(r, &it, b->outputs[o], end);
		next = enter(r, c, sp);
		for (int o = 0; o < b->noutputs && !rc; o++) {
			int d = ar_control_carried(n, ctl, o);
			if (d < 0 || d >= b->ninputs)
				continue;
			rc = check(r, &it, b->outputs[o], end);
			fill(r, &next, b->inputs[d]);
		}
		for (int i = 0; i < b->ninputs; i++)
			if (!fed[i])
				fill(r, &next, b->inputs[i]);
	}
	/* The node's outputs are copied from the last carried inputs. */
	for (int i = 0; i < b->ninputs && !rc; i++)
		if (fed[i])
			rc = check(r, &it, b->inputs[i], end);
	free(fed);
	return rc;
}

static int run_steps(Run *r, const Ctx *c)
{
	int rc = AR_OK;
	for (int s = 0; s < c->p->nsteps && !rc; s++) {
		const ArNode *n = &c->g->nodes[c->p->steps[s]];
		for (int j = 0; j < n->ninputs && !rc; j++)
			if (n->inputs[j] >= 0)
				rc = check(r, c, n->inputs[j], s);
		for (int k = 0; k < c->p->nsubs && !rc; k++) {
			const ArSubPlan *sp = &c->p->subs[k];
			const ArOpDef *d = ar_op_of(n);
			if (sp->node != c->p->steps[s] || !sp->plan)
				continue;
			rc = sp->loop ? run_loop(r, c, sp, d->control) :
			     run_branch(r, c, sp);
		}
		for (int j = 0; j < n->noutputs && !rc; j++)
			if (n->outputs[j] >= 0)
				fill(r, c, n->outputs[j]);
	}
	return rc;
}

int ar_poison_run(const ArGraph *g, const ArPlan *p, ArError *err)
{
	int nr = ar_plan_nregions(p);
	Run r = {NULL, err, 0};
	Ctx top = {g, p, NULL, NULL, 0};
	int rc;

	if (p->arena_bytes > POISON_MAX_ARENA)
		return ar_fail(err, AR_EXIT_INTERNAL, "poison: arena of %lld "
			       "bytes is too large to simulate",
			       (long long)p->arena_bytes);
	r.arena = ar_xmalloc((size_t)nr * sizeof *r.arena);
	for (int k = 0; k < nr; k++)
		r.arena[k] = ar_xcalloc((size_t)ar_plan_region_bytes(p, k) + 1,
					1);
	for (int i = 0; i < g->ninputs; i++)
		fill(&r, &top, g->inputs[i]);
	rc = run_steps(&r, &top);
	for (int i = 0; i < g->noutputs && !rc; i++)
		rc = check(&r, &top, g->outputs[i], p->nsteps);
	for (int k = 0; k < nr; k++)
		free(r.arena[k]);
	free(r.arena);
	return rc;
}
