/*
 * operands.c — what every op function needs from its step: errors,
 * attributes, and its tensors as typed, shaped pointers.
 *
 * The plan's tables were checked against the arena and the weights blob
 * before the first step ran (interp.c), so a tensor's pointer is always
 * inside its buffer; what is checked here is what the kernels assume:
 * element types, counts, axes.
 */
#include <stdarg.h>
#include <string.h>

#include "ops.h"

/* The step running and those whose subgraphs it is in, outermost
 * first, into e->where; the rows written. */
static int where(const Ctx *c, art_error *e)
{
	int n = c->up ? where(c->up, e) : 0;
	if (!c->s || n == ART_ERR_DEPTH)
		return n;
	e->where[n].step = c->si;
	e->where[n].op = c->s->op;
	e->where[n].name = c->s->name;
	return n + 1;
}

int ctx_fail_(Ctx *c, int nargs, int code, ...)
{
	va_list ap;
	const Ctx *top = c;
	art_error *e = c->err;

	while (top->up)
		top = top->up;
	e->code = code;
	e->step = top->s ? top->si : -1;
	e->depth = where(c, e);
	va_start(ap, code);
	for (int i = 0; i < nargs; i++)
		e->arg[i] = va_arg(ap, art_err_arg);
	va_end(ap);
	return -1;
}

art_tensor ctx_tensor(const Ctx *c, int id)
{
	art_tensor t;
	c->m->tensor(c->g->tensors, id, &t);
	return t;
}

void *ctx_scratch(const Ctx *c, size_t bytes)
{
	const art_step *s = c->s;
	if (s->scratch_offset == ART_NOT_IN_ARENA || s->scratch_bytes < bytes)
		return NULL;
	/* interp.c checked the workspace inside its region's arena. */
	return (uint8_t *)c->arenas[s->scratch_region].base +
	       s->scratch_offset;
}

void *ctx_ptr(const Ctx *c, int id)
{
	art_tensor t = ctx_tensor(c, id);
	if (t.offset != ART_NOT_IN_ARENA)
		return (uint8_t *)c->arenas[t.region].base + t.offset;
	if (t.io >= 0)
		return c->io[t.io];
	return (void *)(c->weights + t.weights_offset);
}

int ctx_in(const Ctx *c, int j)
{
	return j < c->s->ninputs ? c->s->inputs[j] : -1;
}

int ctx_out(const Ctx *c, int j)
{
	return j < c->s->noutputs ? c->s->outputs[j] : -1;
}

int ctx_root(const Ctx *c, int t)
{
	for (int hops = 0; hops < c->g->ntensors; hops++) {
		art_tensor x = ctx_tensor(c, t);
		if (x.alias_of >= 0)
			t = x.alias_of;
		else if (x.inplace_of >= 0)
			t = x.inplace_of;
		else
			break;
	}
	return t;
}

/* ---- attributes ---- */

const art_attr *ctx_attr(const Ctx *c, const char *name, art_attr *buf)
{
	for (int i = 0; i < c->s->nattrs; i++) {
		c->m->attr(c->s->attrs, i, buf);
		if (buf->name && !strcmp(buf->name, name))
			return buf;
	}
	return NULL;
}

int64_t ctx_attr_int(const Ctx *c, const char *name, int64_t dflt)
{
	art_attr a;
	return ctx_attr(c, name, &a) && a.type == ART_ATTR_INT ? a.ints[0] :
	       dflt;
}

double ctx_attr_num(const Ctx *c, const char *name, double dflt)
{
	art_attr a;
	if (!ctx_attr(c, name, &a))
		return dflt;
	if (a.type == ART_ATTR_FLOAT)
		return a.floats[0];
	if (a.type == ART_ATTR_INT)
		return (double)a.ints[0];
	return dflt;
}

const char *ctx_attr_str(const Ctx *c, const char *name, const char *dflt)
{
	art_attr a;
	return ctx_attr(c, name, &a) && a.type == ART_ATTR_STRING ?
	       a.strings[0] : dflt;
}

int ctx_attr_ints(Ctx *c, const char *name, int64_t *v, int max, int *n)
{
	art_attr a;
	*n = -1;
	if (!ctx_attr(c, name, &a))
		return 0;
	if (a.type != ART_ATTR_INTS || a.count > max)
		return ctx_fail(c, ART_E_ATTRIBUTE_WANTS_MOST_INTS, ART_S(name),
				ART_I(max));
	memcpy(v, a.ints, (size_t)a.count * sizeof *v);
	*n = a.count;
	return 0;
}

/* ---- operands ---- */

static int typed(Ctx *c, int id, rt_arr *a)
{
	art_tensor t = ctx_tensor(c, id);
	if (!art_dtype_size(t.dtype))
		return ctx_fail(c, ART_E_ELEMENT_TYPE_KERNELS_DO, ART_S(t.name),
		    ART_I(t.dtype));
	a->p = ctx_ptr(c, id);
	a->dt = t.dtype;
	a->s.rank = t.rank;
	for (int i = 0; i < t.rank; i++)
		a->s.d[i] = t.dims[i];
	return 0;
}

int ctx_arg(Ctx *c, int j, int required, rt_arr *a)
{
	int id = ctx_in(c, j);
	a->p = NULL;
	a->dt = 0;
	a->s.rank = 0;
	if (id < 0)
		return required ? ctx_fail(c, ART_E_INPUT_MISSING,
		    ART_I(j)) : 0;
	return typed(c, id, a);
}

int ctx_res(Ctx *c, int j, rt_arr *a)
{
	int id = ctx_out(c, j);
	if (id < 0)
		return ctx_fail(c, ART_E_OUTPUT_MISSING, ART_I(j));
	return typed(c, id, a);
}

int ctx_fin(Ctx *c, int j, int required, const float **p, rt_shape *s)
{
	rt_arr a;
	*p = NULL;
	if (ctx_arg(c, j, required, &a))
		return -1;
	if (a.p && a.dt != ART_DT_FLOAT)
		return ctx_fail(c, ART_E_INPUT_FLOAT32_ONLY_TYPE,
				ART_S(ctx_tensor(c, ctx_in(c, j)).name));
	*p = a.p;
	if (s)
		*s = a.s;
	return 0;
}

int ctx_fout(Ctx *c, int j, float **p, rt_shape *s)
{
	rt_arr a;
	if (ctx_res(c, j, &a))
		return -1;
	if (a.dt != ART_DT_FLOAT)
		return ctx_fail(c, ART_E_OUTPUT_FLOAT32,
				ART_S(ctx_tensor(c, ctx_out(c, j)).name));
	*p = a.p;
	*s = a.s;
	return 0;
}

int ctx_ints(Ctx *c, int j, int64_t *v, int max, int *n)
{
	rt_arr a;
	int64_t cnt;

	*n = -1;
	if (ctx_arg(c, j, 0, &a))
		return -1;
	if (!a.p)
		return 0;
	if (rt_is_float(a.dt))
		return ctx_fail(c, ART_E_INPUT_INTEGER_TENSOR, ART_I(j));
	cnt = rt_numel(&a.s);
	if (cnt > max)
		return ctx_fail(c, ART_E_INPUT_VALUES_MORE, ART_I(j),
				ART_I((long long)cnt), ART_I(max));
	for (int64_t i = 0; i < cnt; i++)
		v[i] = rt_get_i(a.dt, a.p, i);
	*n = (int)cnt;
	return 0;
}

int ctx_scalar(Ctx *c, int j, double dflt, double *v)
{
	rt_arr a;
	if (ctx_arg(c, j, 0, &a))
		return -1;
	*v = a.p && rt_numel(&a.s) >= 1 ? rt_get_f(a.dt, a.p, 0) : dflt;
	return 0;
}

int ctx_axis(Ctx *c, int64_t axis, int rank, int *out)
{
	if (axis < -rank || axis >= rank || (rank == 0 && axis != 0))
		return ctx_fail(c, ART_E_AXIS_OUT_RANGE_RANK,
				ART_I((long long)axis), ART_I(rank));
	*out = (int)(axis < 0 ? axis + rank : axis);
	return 0;
}

int ctx_float_only(Ctx *c)
{
	for (int j = 0; j < c->s->ninputs + c->s->noutputs; j++) {
		int id = j < c->s->ninputs ? ctx_in(c, j) :
			 ctx_out(c, j - c->s->ninputs);
		art_tensor t;
		if (id < 0)
			continue;
		t = ctx_tensor(c, id);
		if (t.rank >= 0 && t.dtype != ART_DT_FLOAT)
			return ctx_fail(c, ART_E_FLOAT32_ONLY_TYPE_THIS,
			    ART_S(t.name));
	}
	return 0;
}

int ctx_indices(Ctx *c, const rt_arr *idx, int64_t period,
		const int64_t *dims)
{
	int64_t n = rt_numel(&idx->s);
	if (idx->dt != ART_DT_INT64 && idx->dt != ART_DT_INT32)
		return ctx_fail(c, ART_E_INDICES_INT32_INT64);
	for (int64_t i = 0; i < n; i++) {
		int64_t v = rt_get_i(idx->dt, idx->p, i), d = dims[i % period];
		if (v < -d || v >= d)
			return ctx_fail(c, ART_E_INDEX_OUT_RANGE_AXIS,
			    ART_I((long long)v),
					ART_I((long long)d));
	}
	return 0;
}
