/*
 * interp.c — runs a plan's step table on one arena and one weights blob.
 *
 * Before any step runs the tables are checked against the two buffers, so
 * a kernel never reads or writes outside them.  Each step then finds its
 * tensors where the plan put them and calls a kernel.  The plan's sharing
 * decisions are taken literally: a noop step must find its outputs already
 * in place, an in-place output must be its input's bytes and its kernel
 * must be one that can overwrite its input, and an output that overlaps a
 * live input for any other reason is a broken plan.  None of these ever
 * turns into a quiet copy, since a copy would hide the very mistake the
 * runtime is there to expose.
 *
 * A planned subgraph (an If's branches) is a graph of its own, with tables
 * of the same types: it is checked with the model before anything runs,
 * inside the workspace of the step that runs it, and its steps run here
 * when that step's kernel (ops_control.c) asks.
 *
 * A plan of several memories (arenac --memory) has one arena per region:
 * every offset, a tensor's or a workspace's, is checked against its own
 * region's arena, and two tensors overlap only within one region.
 */
#include <string.h>

#include "optable.h"


/* ---- the kernel table (optable.h, optable.c) ---- */


static int default_domain(const char *d)
{
	return !d || !*d || !strcmp(d, "ai.onnx");
}

/* The table entry of (domain, op), or -1 (also for an op this build
 * left out: optable.c). */
static int find_op(const char *domain, const char *op)
{
	for (int k = 0; k < art_nops; k++)
		if (art_ops[k].fn && !strcmp(art_ops[k].op, op) &&
		    (default_domain(domain) ? !*art_ops[k].domain :
		     !strcmp(art_ops[k].domain, domain)))
			return k;
	return -1;
}

int art_has_kernel(const char *domain, const char *op)
{
	return op && find_op(domain, op) >= 0;
}

const char *art_kernel_op(int i, const char **domain)
{
	for (int k = 0; k < art_nops; k++)
		if (art_ops[k].fn && !i--) {
			if (domain)
				*domain = art_ops[k].domain;
			return art_ops[k].op;
		}
	return NULL;
}

/* ---- checking the plan ---- */

static int in_arena(const art_tensor *t)
{
	return t->offset != ART_NOT_IN_ARENA;
}

static int overlap(const art_tensor *a, const art_tensor *b)
{
	return in_arena(a) && in_arena(b) && a->region == b->region &&
	       a->bytes && b->bytes &&
	       a->offset < b->offset + b->bytes &&
	       b->offset < a->offset + a->bytes;
}

/*
 * The plan's sharing rules for one step: an output overlaps an input only
 * when it is that input in place or both belong to one buffer by design.
 */
static int check_step(Ctx *c, InPlace ip)
{
	for (int j = 0; j < c->s->noutputs; j++) {
		int o = ctx_out(c, j);
		art_tensor to, over;
		if (o < 0)
			continue;
		to = ctx_tensor(c, o);
		if (to.inplace_of >= 0) {
			int k = 0;
			over = ctx_tensor(c, to.inplace_of);
			while (k < c->s->ninputs && ctx_in(c, k) != to.inplace_of)
				k++;
			if (j != 0 || k == c->s->ninputs || ip == IP_NO ||
			    (ip == IP_YES && k != 0) || over.bytes != to.bytes)
				return ctx_fail(c,
				    ART_E_PLANNED_PLACE_OVER_THIS,
				    ART_S(to.name), ART_S(over.name));
		}
		for (int i = 0; i < c->s->ninputs; i++) {
			int x = ctx_in(c, i);
			art_tensor tx;
			if (x < 0 || x == to.inplace_of)
				continue;
			tx = ctx_tensor(c, x);
			if (!overlap(&to, &tx) || ctx_root(c, x) == ctx_root(c, o))
				continue;
			return ctx_fail(c, ART_E_OUTPUT_OVERLAPS_INPUT_ARENA,
			    ART_S(to.name), ART_S(tx.name));
		}
	}
	return 0;
}

/* A noop step must find its outputs where the plan says they already are. */
static int check_noop(Ctx *c)
{
	for (int j = 0; j < c->s->noutputs; j++) {
		int o = ctx_out(c, j);
		if (o >= 0 && ctx_tensor(c, o).alias_of < 0) {
			for (int i = 0; i < c->s->ninputs; i++)
				if (ctx_in(c, i) >= 0 &&
				    ctx_tensor(c, ctx_in(c, i)).alias_of != o)
					return ctx_fail(c,
					    ART_E_NOOP_STEP_WHOSE_OUTPUT,
					    ART_S(ctx_tensor(c, o).name));
		}
	}
	return 0;
}

/* The bytes a tensor's shape and type need, or 0 when its type has no
 * fixed element size. */
static uint64_t shape_bytes(const art_tensor *t)
{
	uint64_t n = art_dtype_size(t->dtype);
	for (int i = 0; i < t->rank && n; i++)
		n *= t->dims[i] < 0 ? 0 : (uint64_t)t->dims[i];
	return n;
}

/* The regions of m's plan: one arena each (one for a plan without). */
static int num_regions(const art_model *m)
{
	return m->nregions > 0 ? m->nregions : 1;
}

/* Whether [offset, +bytes) lies inside the arena of region r. */
static int in_region(const Ctx *c, int r, uint32_t offset, uint64_t bytes)
{
	return r >= 0 && r < num_regions(c->m) &&
	       offset + bytes <= c->arenas[r].bytes;
}

/* Tensor id, which an alias or an in-place output names, at offset in
 * region r. */
static int at(const Ctx *c, int id, uint64_t offset, int r)
{
	art_tensor t;
	if (id >= c->g->ntensors)
		return 0;
	t = ctx_tensor(c, id);
	return t.offset == offset && t.region == r;
}

/*
 * Every tensor of c's graph inside its buffer and as large as its shape
 * says (kernels index by shape), every alias where its target is; every
 * step's operands in range and somewhere, its workspace inside its
 * arena, its kernel there, and the subgraphs it runs its own (gid: the
 * graph's id, -1 the model's).
 */
static int check_graph(Ctx *c, int gid, size_t weights_bytes)
{
	const art_model *m = c->m;
	for (int i = 0; i < c->g->ntensors; i++) {
		art_tensor t = ctx_tensor(c, i);
		if (t.rank > ART_MAX_RANK)
			return ctx_fail(c, ART_E_TENSOR_RANK_ABOVE,
				    ART_S(t.name), ART_I(t.rank),
				        ART_I(ART_MAX_RANK));
		if (t.rank >= 0 && shape_bytes(&t) > t.bytes)
			return ctx_fail(c, ART_E_TENSOR_BYTES_SHAPE_NEEDS,
			    ART_S(t.name),
					ART_U((unsigned long)t.bytes),
					ART_U((unsigned long long)shape_bytes(&t)));
		if (in_arena(&t) && !in_region(c, t.region, t.offset, t.bytes))
			return ctx_fail(c, ART_E_TENSOR_PAST_ARENA_BYTES,
			    ART_S(t.name),
				    ART_U((unsigned long)t.offset),
				    ART_U((unsigned long)t.bytes),
				    ART_I(t.region));
		if (!in_arena(&t) && t.weights_offset != ART_NOT_IN_ARENA &&
		    (uint64_t)t.weights_offset + t.bytes > weights_bytes)
			return ctx_fail(c, ART_E_TENSOR_PAST_WEIGHTS_BLOB,
			    ART_S(t.name), ART_U(weights_bytes));
		if (t.alias_of >= 0 &&
		    !at(c, t.alias_of, (uint64_t)t.offset - t.alias_offset,
			t.region))
			return ctx_fail(c, ART_E_VIEW_OFFSET_INSIDE_TENSOR,
			    ART_S(t.name));
		if (t.io >= 0 && (in_arena(&t) || t.io >= m->nio || !c->io ||
				   !c->io[t.io]))
			return ctx_fail(c, ART_E_LIVES_BUFFER_CALLER_S,
			    ART_S(t.name),
					ART_I((int)t.io), ART_I(m->nio));
		if (t.inplace_of >= 0 && !at(c, t.inplace_of, t.offset, t.region))
			return ctx_fail(c, ART_E_PLACE_OFFSET_TENSOR_OVERWRITES,
			    ART_S(t.name));
	}
	for (c->si = 0; c->si < c->g->nsteps; c->si++) {
		const art_step s = (m->step(c->g->steps, c->si, &c->step),
				    c->step);
		c->s = &c->step;
		for (int j = 0; j < s.ninputs + s.noutputs; j++) {
			int id = j < s.ninputs ? ctx_in(c, j) :
				 ctx_out(c, j - s.ninputs);
			art_tensor t;
			if (id < -1 || id >= c->g->ntensors)
				return ctx_fail(c, ART_E_TENSOR_INDEX_OUT_RANGE,
					    ART_I(id));
			if (id < 0)
				continue;
			t = ctx_tensor(c, id);
			if (!in_arena(&t) && t.io < 0 &&
			    t.weights_offset == ART_NOT_IN_ARENA &&
			    t.bytes > 0 && t.rank >= 0)
				return ctx_fail(c,
				    ART_E_NEITHER_ARENA_NOR_WEIGHTS,
				    ART_S(t.name));
			if (!in_arena(&t) && t.io < 0 && j >= s.ninputs &&
			    t.rank >= 0)
				return ctx_fail(c, ART_E_OUTPUT_ARENA,
				    ART_S(t.name));
		}
		if (s.scratch_offset != ART_NOT_IN_ARENA &&
		    !in_region(c, s.scratch_region, s.scratch_offset,
			       s.scratch_bytes))
			return ctx_fail(c, ART_E_STEP_WORKSPACE_PAST_ARENA,
			    ART_U((unsigned long)s.scratch_offset),
			    ART_U((unsigned long)s.scratch_bytes),
			    ART_I(s.scratch_region));
		if (!s.noop && find_op(s.domain, s.op) < 0)
			return ctx_fail(c, ART_E_OP_NO_KERNEL_THIS,
					ART_S(default_domain(s.domain) ? "" :
					s.domain),
					ART_S(default_domain(s.domain) ? "" : "."),
					ART_S(s.op));
		for (int k = 0; k < s.nsubgraphs; k++) {
			art_subgraph sg;
			int id = s.subgraphs[k];
			if (id < 0 || id >= m->nsubgraphs || !m->subgraph)
				return ctx_fail(c, ART_E_SUBGRAPH_OUT_RANGE,
				    ART_I(id));
			m->subgraph(m->subgraphs, id, &sg);
			if (sg.parent != gid || sg.step != c->si)
				return ctx_fail(c, ART_E_SUBGRAPH_THIS_STEP_S,
				    ART_I(id));
		}
	}
	c->s = NULL;
	return 0;
}

/*
 * Each planned subgraph: run by a step of its parent (which comes before
 * it, so the nesting is a tree), its own tensors inside that step's
 * workspace, then its tables as the model's.
 */
static int check_subgraphs(Ctx *c, size_t weights_bytes)
{
	const art_model *m = c->m;
	for (int k = 0; k < m->nsubgraphs; k++) {
		art_subgraph sg, up;
		art_step s;
		Ctx sub = *c;
		if (!m->subgraph)
			return ctx_fail(c, ART_E_MODEL_SUBGRAPHS_NO_DECODER);
		m->subgraph(m->subgraphs, k, &sg);
		if (!sg.planned)
			continue;
		if (sg.parent >= k || sg.parent < -1)
			return ctx_fail(c, ART_E_SUBGRAPH_PARENT, ART_I(k),
					ART_I(sg.parent));
		if (sg.parent >= 0)
			m->subgraph(m->subgraphs, sg.parent, &up);
		else
			up.g = m->g;
		if (sg.parent >= 0 && !up.planned)
			return ctx_fail(c, ART_E_SUBGRAPH_PLANNED_INSIDE_ONE,
			    ART_I(k));
		if (sg.step < 0 || sg.step >= up.g.nsteps)
			return ctx_fail(c, ART_E_SUBGRAPH_STEP_OUT_RANGE,
			    ART_I(k), ART_I(sg.step));
		m->step(up.g.steps, sg.step, &s);
		if (sg.arena_bytes && (s.scratch_offset == ART_NOT_IN_ARENA ||
		    sg.arena_bytes > s.scratch_bytes ||
		    !in_region(c, s.scratch_region, s.scratch_offset,
			       s.scratch_bytes)))
			return ctx_fail(c, ART_E_SUBGRAPH_NEEDS_BYTES_STEP,
			    ART_I(k),
					ART_U((unsigned long)sg.arena_bytes),
					ART_U((unsigned long)s.scratch_bytes));
		sub.g = &sg.g;
		for (int i = 0; i < sg.g.ntensors; i++) {
			art_tensor t = ctx_tensor(&sub, i);
			if (t.first >= 0 && in_arena(&t) && t.bytes &&
			    (s.scratch_offset == ART_NOT_IN_ARENA ||
			     t.region != s.scratch_region ||
			     t.offset < s.scratch_offset ||
			     t.offset + (uint64_t)t.bytes >
			     (uint64_t)s.scratch_offset + s.scratch_bytes))
				return ctx_fail(c,
				    ART_E_SUBGRAPH_S_TENSOR_OUTSIDE,
						ART_I(k), ART_S(t.name));
		}
		if (check_graph(&sub, k, weights_bytes))
			return -1;
	}
	return 0;
}

int rt_run_steps(Ctx *c)
{
	for (c->si = 0; c->si < c->g->nsteps; c->si++) {
		int k;
		c->m->step(c->g->steps, c->si, &c->step);
		c->s = &c->step;
		k = find_op(c->s->domain, c->s->op);
		/* Views and concats check their own placement, and copy
		 * nothing when it is right; other noops are checked here. */
		if (c->s->noop && (k < 0 || !art_ops[k].places_itself)) {
			if (check_noop(c))
				return -1;
			continue;
		}
		if (check_step(c, art_ops[k].inplace) || art_ops[k].fn(c))
			return -1;
	}
	c->s = NULL;
	return 0;
}

int art_run(const art_model *m, void *arena, size_t arena_bytes,
	    const void *weights, size_t weights_bytes, art_error *err)
{
	return art_run_io(m, arena, arena_bytes, weights, weights_bytes, NULL,
			  err);
}

int art_run_io(const art_model *m, void *arena, size_t arena_bytes,
	       const void *weights, size_t weights_bytes, void *const *io,
	       art_error *err)
{
	art_arena one = {arena, arena_bytes};
	return art_run_arenas(m, &one, 1, weights, weights_bytes, io, err);
}

/* Whether [a, +na) and [b, +nb) share a byte (addresses compared as
 * integers: the buffers are distinct objects). */
static int spans_meet(const void *a, size_t na, const void *b, size_t nb)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
	return na && nb && x < y + nb && y < x + na;
}

/*
 * The caller's arenas against the plan's memories: one per region, each
 * large enough, no two sharing a byte, and the weights blob inside none
 * but where --weights-in reserved it (the start of its region's arena).
 */
static int check_arenas(Ctx *c, int n, const void *weights,
			size_t weights_bytes)
{
	const art_model *m = c->m;
	if (n != num_regions(m))
		return ctx_fail(c, ART_E_ARENAS_PLAN_MEMORIES, ART_I(n),
				ART_I(num_regions(m)));
	for (int r = 0; r < n; r++) {
		const art_arena *a = &c->arenas[r];
		/* A plan of one arena has no region table; its arena is
		 * below 4 GiB (the header's offsets are 32-bit). */
		art_region reg = {"", (uint32_t)m->arena_size, 0};
		if (m->nregions)
			m->region(m->regions, r, &reg);
		if (a->bytes < reg.bytes)
			return ctx_fail(c, ART_E_ARENA_BYTES_PLAN_NEEDS,
			    ART_I(r), ART_U(a->bytes),
			    ART_U((unsigned long)reg.bytes));
		for (int q = 0; q < r; q++)
			if (spans_meet(a->base, a->bytes, c->arenas[q].base,
				       c->arenas[q].bytes))
				return ctx_fail(c, ART_E_ARENAS_OVERLAP,
						ART_I(q), ART_I(r));
		if (spans_meet(weights, weights_bytes, a->base, a->bytes) &&
		    (weights != a->base || weights_bytes > reg.weights_bytes))
			return ctx_fail(c, ART_E_WEIGHTS_OVERLAP_ARENA,
			    ART_I(r), ART_U((unsigned long)reg.weights_bytes));
	}
	return 0;
}

int art_run_arenas(const art_model *m, const art_arena *arenas, int n,
		   const void *weights, size_t weights_bytes, void *const *io,
		   art_error *err)
{
	Ctx c = {m, &m->g, arenas, weights, io, err, -1, NULL, {0}, NULL};

	err->code = ART_E_NONE;
	err->step = -1;
	err->depth = 0;
	if (check_arenas(&c, n, weights, weights_bytes))
		return -1;
	if (weights_bytes < m->weights_size)
		return ctx_fail(&c, ART_E_WEIGHTS_BLOB_BYTES_PLAN,
			    ART_U(weights_bytes),
			        ART_U((unsigned long long)m->weights_size));
	/* Every table checked and every kernel there before the first step
	 * runs. */
	if (check_graph(&c, -1, weights_bytes) ||
	    check_subgraphs(&c, weights_bytes))
		return -1;
	return rt_run_steps(&c);
}

art_tensor art_model_tensor(const art_model *m, int i)
{
	art_tensor t;
	m->tensor(m->g.tensors, i, &t);
	return t;
}

art_step art_model_step(const art_model *m, int i)
{
	art_step s;
	m->step(m->g.steps, i, &s);
	return s;
}
