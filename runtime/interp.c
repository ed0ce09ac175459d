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
		const art_tensor *to;
		if (o < 0)
			continue;
		to = ctx_tensor(c, o);
		if (to->inplace_of >= 0) {
			int k = 0;
			while (k < c->s->ninputs && ctx_in(c, k) != to->inplace_of)
				k++;
			if (j != 0 || k == c->s->ninputs || ip == IP_NO ||
			    (ip == IP_YES && k != 0) ||
			    ctx_tensor(c, to->inplace_of)->bytes != to->bytes)
				return ctx_fail(c, "'%s' is planned in place over "
					    "'%s', which this kernel cannot "
					    "do", to->name,
					    ctx_tensor(c, to->inplace_of)->name);
		}
		for (int i = 0; i < c->s->ninputs; i++) {
			int x = ctx_in(c, i);
			if (x < 0 || x == to->inplace_of ||
			    !overlap(to, ctx_tensor(c, x)) || ctx_root(c, x) == ctx_root(c, o))
				continue;
			return ctx_fail(c, "output '%s' overlaps input '%s' in the "
				    "arena", to->name, ctx_tensor(c, x)->name);
		}
	}
	return 0;
}

/* A noop step must find its outputs where the plan says they already are. */
static int check_noop(Ctx *c)
{
	for (int j = 0; j < c->s->noutputs; j++) {
		int o = ctx_out(c, j);
		if (o >= 0 && ctx_tensor(c, o)->alias_of < 0) {
			for (int i = 0; i < c->s->ninputs; i++)
				if (ctx_in(c, i) >= 0 &&
				    ctx_tensor(c, ctx_in(c, i))->alias_of != o)
					return ctx_fail(c, "noop step whose "
						    "output '%s' is not in "
						    "place", ctx_tensor(c, o)->name);
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
 * Every tensor inside its buffer and as large as its shape says (kernels
 * index by shape), every alias where its target is.
 */
static int check_tables(Ctx *c, size_t arena_bytes, size_t weights_bytes)
{
	const art_model *m = c->m;
	for (int i = 0; i < m->ntensors; i++) {
		const art_tensor *t = ctx_tensor(c, i);
		if (t->rank > ART_MAX_RANK)
			return ctx_fail(c, "tensor '%s' has rank %d, above %d",
				    t->name, t->rank, ART_MAX_RANK);
		if (t->rank >= 0 && shape_bytes(t) > t->bytes)
			return ctx_fail(c, "tensor '%s' has %lu bytes, its shape "
					"needs %llu", t->name,
					(unsigned long)t->bytes,
					(unsigned long long)shape_bytes(t));
		if (in_arena(t) &&
		    (uint64_t)t->offset + t->bytes > arena_bytes)
			return ctx_fail(c, "tensor '%s' [%lu, +%lu) is past the "
				    "arena of %zu bytes", t->name,
				    (unsigned long)t->offset,
				    (unsigned long)t->bytes, arena_bytes);
		if (!in_arena(t) && t->weights_offset != ART_NOT_IN_ARENA &&
		    (uint64_t)t->weights_offset + t->bytes > weights_bytes)
			return ctx_fail(c, "tensor '%s' is past the weights blob "
				    "of %zu bytes", t->name, weights_bytes);
		if (t->alias_of >= 0 && (t->alias_of >= m->ntensors ||
		    ctx_tensor(c, t->alias_of)->offset + t->alias_offset != t->offset))
			return ctx_fail(c, "view '%s' is not at its offset inside "
				    "the tensor it aliases", t->name);
		if (t->io >= 0 && (in_arena(t) || t->io >= m->nio || !c->io ||
				   !c->io[t->io]))
			return ctx_fail(c, "'%s' lives in a buffer of the "
					"caller's (io %d of %d), which "
					"art_run_io did not get", t->name,
					(int)t->io, m->nio);
		if (t->inplace_of >= 0 && (t->inplace_of >= m->ntensors ||
		    ctx_tensor(c, t->inplace_of)->offset != t->offset))
			return ctx_fail(c, "in-place '%s' is not at the offset of "
				    "the tensor it overwrites", t->name);
	}
	for (c->si = 0; c->si < m->nsteps; c->si++) {
		c->s = &m->steps[c->si];
		for (int j = 0; j < c->s->ninputs + c->s->noutputs; j++) {
			int id = j < c->s->ninputs ? ctx_in(c, j) :
				 ctx_out(c, j - c->s->ninputs);
			const art_tensor *t;
			if (id < -1 || id >= m->ntensors)
				return ctx_fail(c, "tensor index %d out of range",
					    id);
			if (id < 0)
				continue;
			t = ctx_tensor(c, id);
			if (!in_arena(t) && t->io < 0 &&
			    t->weights_offset == ART_NOT_IN_ARENA &&
			    t->bytes > 0 && t->rank >= 0)
				return ctx_fail(c, "'%s' is neither in the arena "
					    "nor in the weights blob (compile "
					    "with --weights)", t->name);
			if (!in_arena(t) && t->io < 0 && j >= c->s->ninputs &&
			    t->rank >= 0)
				return ctx_fail(c, "output '%s' is not in the "
					    "arena", t->name);
		}
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
	Ctx c = {m, arena, weights, io, err, -1, NULL};

	err->step = -1;
	err->msg[0] = 0;
	if (arena_bytes < m->arena_size)
		return ctx_fail(&c, "arena of %zu bytes, the plan needs %llu",
			    arena_bytes, (unsigned long long)m->arena_size);
	if (weights_bytes < m->weights_size)
		return ctx_fail(&c, "weights blob of %zu bytes, the plan needs %llu",
			    weights_bytes, (unsigned long long)m->weights_size);
	if (check_tables(&c, arena_bytes, weights_bytes))
		return -1;
	/* Every kernel there before the first step runs. */
	for (c.si = 0; c.si < m->nsteps; c.si++) {
		c.s = &m->steps[c.si];
		if (!c.s->noop && find_op(c.s->domain, c.s->op) < 0)
			return ctx_fail(&c, "op %s%s%s has no kernel in this "
					"build of the runtime",
					default_domain(c.s->domain) ? "" :
					c.s->domain,
					default_domain(c.s->domain) ? "" : ".",
					c.s->op);
	}
	for (c.si = 0; c.si < m->nsteps; c.si++) {
		int k;
		c.s = &m->steps[c.si];
		k = find_op(c.s->domain, c.s->op);
		/* Views and concats check their own placement, and copy
		 * nothing when it is right; other noops are checked here. */
		if (c.s->noop && (k < 0 || (art_ops[k].fn != op_copy &&
					    art_ops[k].fn != op_concat))) {
			if (check_noop(&c))
				return -1;
			continue;
		}
		if (check_step(&c, art_ops[k].inplace) || art_ops[k].fn(&c))
			return -1;
	}
	return 0;
}
