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
	return in_arena(a) && in_arena(b) && a->bytes && b->bytes &&
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

/*
 * Every tensor of c's graph inside its buffer and as large as its shape
 * says (kernels index by shape), every alias where its target is; every
 * step's operands in range and somewhere, its kernel there, and the
 * subgraphs it runs its own (gid: the graph's id, -1 the model's).
 */
static int check_graph(Ctx *c, int gid, size_t arena_bytes,
		       size_t weights_bytes)
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
		if (in_arena(&t) &&
		    (uint64_t)t.offset + t.bytes > arena_bytes)
			return ctx_fail(c, ART_E_TENSOR_PAST_ARENA_BYTES,
			    ART_S(t.name),
				    ART_U((unsigned long)t.offset),
				    ART_U((unsigned long)t.bytes),
				        ART_U(arena_bytes));
		if (!in_arena(&t) && t.weights_offset != ART_NOT_IN_ARENA &&
		    (uint64_t)t.weights_offset + t.bytes > weights_bytes)
			return ctx_fail(c, ART_E_TENSOR_PAST_WEIGHTS_BLOB,
			    ART_S(t.name), ART_U(weights_bytes));
		if (t.alias_of >= 0 && (t.alias_of >= c->g->ntensors ||
		    ctx_tensor(c, t.alias_of).offset + t.alias_offset != t.offset))
			return ctx_fail(c, ART_E_VIEW_OFFSET_INSIDE_TENSOR,
			    ART_S(t.name));
		if (t.io >= 0 && (in_arena(&t) || t.io >= m->nio || !c->io ||
				   !c->io[t.io]))
			return ctx_fail(c, ART_E_LIVES_BUFFER_CALLER_S,
			    ART_S(t.name),
					ART_I((int)t.io), ART_I(m->nio));
		if (t.inplace_of >= 0 && (t.inplace_of >= c->g->ntensors ||
		    ctx_tensor(c, t.inplace_of).offset != t.offset))
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
static int check_subgraphs(Ctx *c, size_t arena_bytes, size_t weights_bytes)
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
		    (uint64_t)s.scratch_offset + s.scratch_bytes > arena_bytes))
			return ctx_fail(c, ART_E_SUBGRAPH_NEEDS_BYTES_STEP,
			    ART_I(k),
					ART_U((unsigned long)sg.arena_bytes),
					ART_U((unsigned long)s.scratch_bytes));
		sub.g = &sg.g;
		for (int i = 0; i < sg.g.ntensors; i++) {
			art_tensor t = ctx_tensor(&sub, i);
			if (t.first >= 0 && in_arena(&t) && t.bytes &&
			    (s.scratch_offset == ART_NOT_IN_ARENA ||
			     t.offset < s.scratch_offset ||
			     t.offset + (uint64_t)t.bytes >
			     (uint64_t)s.scratch_offset + s.scratch_bytes))
				return ctx_fail(c,
				    ART_E_SUBGRAPH_S_TENSOR_OUTSIDE,
						ART_I(k), ART_S(t.name));
		}
		if (check_graph(&sub, k, arena_bytes, weights_bytes))
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
	Ctx c = {m, &m->g, arena, weights, io, err, -1, NULL, {0}, NULL};

	err->code = ART_E_NONE;
	err->step = -1;
	err->depth = 0;
	if (arena_bytes < m->arena_size)
		return ctx_fail(&c, ART_E_ARENA_BYTES_PLAN_NEEDS,
			    ART_U(arena_bytes),
			        ART_U((unsigned long long)m->arena_size));
	if (weights_bytes < m->weights_size)
		return ctx_fail(&c, ART_E_WEIGHTS_BLOB_BYTES_PLAN,
			    ART_U(weights_bytes),
			        ART_U((unsigned long long)m->weights_size));
	/* Every table checked and every kernel there before the first step
	 * runs. */
	if (check_graph(&c, -1, arena_bytes, weights_bytes) ||
	    check_subgraphs(&c, arena_bytes, weights_bytes))
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
