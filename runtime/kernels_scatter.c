/*
 * kernels_scatter.c — ScatterElements, ScatterND and GatherND, for every
 * element type and int32 or int64 indices.
 *
 * The scatters update the output in place (it holds a copy of the data),
 * one element at a time: a plain copy, or the reduction in the element's
 * domain (kernels_dtype.c), applied in index order.
 */
#include <string.h>

#include "kernels.h"

static int64_t index_at(const rt_arr *idx, int64_t i, int64_t d)
{
	int64_t v = rt_get_i(idx->dt, idx->p, i);
	return v < 0 ? v + d : v;
}

/* y[yi] = upd[ui], or y[yi] red upd[ui]. */
static void update(rt_arr *y, int64_t yi, const rt_arr *upd, int64_t ui,
		   int red)
{
	size_t es = art_dtype_size(y->dt);
	if (red < 0)
		memcpy((char *)y->p + yi * (int64_t)es,
		       (const char *)upd->p + ui * (int64_t)es, es);
	else if (rt_is_float(y->dt))
		rt_set_f(y->dt, y->p, yi, rt_binary_fvalue((rt_binary)red,
			 rt_get_f(y->dt, y->p, yi),
			 rt_get_f(upd->dt, upd->p, ui)));
	else
		rt_set_i(y->dt, y->p, yi, rt_binary_ivalue((rt_binary)red,
			 rt_get_i(y->dt, y->p, yi),
			 rt_get_i(upd->dt, upd->p, ui)));
}

static void strides(const rt_shape *s, int64_t *st)
{
	int64_t k = 1;
	for (int i = s->rank - 1; i >= 0; i--)
		st[i] = k, k *= s->d[i];
}

void rt_scatter_elements(rt_arr *y, int axis, const rt_arr *idx,
			 const rt_arr *upd, int red)
{
	int64_t yst[ART_MAX_RANK], ist[ART_MAX_RANK];
	int64_t n = rt_numel(&idx->s);

	strides(&y->s, yst);
	strides(&idx->s, ist);
	for (int64_t k = 0; k < n; k++) {
		int64_t yi = 0;
		for (int i = 0; i < y->s.rank; i++) {
			int64_t c = k / ist[i] % idx->s.d[i];
			if (i == axis)
				c = index_at(idx, k, y->s.d[axis]);
			yi += c * yst[i];
		}
		update(y, yi, upd, k, red);
	}
}

/* Element offset in a (strides st) of the index tuple starting at
 * idx element i, k long, for a's dims from `from` on. */
static int64_t tuple_offset(const rt_arr *a, const int64_t *st, int from,
			    const rt_arr *idx, int64_t i, int64_t k)
{
	int64_t off = 0;
	for (int64_t j = 0; j < k; j++)
		off += index_at(idx, i + j, a->s.d[from + j]) * st[from + j];
	return off;
}

void rt_scatter_nd(rt_arr *y, const rt_arr *idx, const rt_arr *upd, int red)
{
	int64_t st[ART_MAX_RANK], k = idx->s.d[idx->s.rank - 1], slice = 1;
	int64_t tuples = k ? rt_numel(&idx->s) / k : 0;

	strides(&y->s, st);
	for (int i = (int)k; i < y->s.rank; i++)
		slice *= y->s.d[i];
	for (int64_t t = 0; t < tuples; t++) {
		int64_t base = tuple_offset(y, st, 0, idx, t * k, k);
		for (int64_t e = 0; e < slice; e++)
			update(y, base + e, upd, t * slice + e, red);
	}
}

void rt_gather_nd(const rt_arr *x, const rt_arr *idx, int batch_dims,
		  rt_arr *y)
{
	int64_t st[ART_MAX_RANK], k = idx->s.d[idx->s.rank - 1];
	int64_t batches = 1, per = 1, slice = 1, o = 0;
	size_t es = art_dtype_size(y->dt);

	strides(&x->s, st);
	for (int i = 0; i < batch_dims; i++)
		batches *= x->s.d[i];
	for (int i = batch_dims; i < idx->s.rank - 1; i++)
		per *= idx->s.d[i];
	for (int i = batch_dims + (int)k; i < x->s.rank; i++)
		slice *= x->s.d[i];
	for (int64_t b = 0; b < batches; b++)
		for (int64_t t = 0; t < per; t++, o += slice) {
			int64_t src = (batch_dims ? b * st[batch_dims - 1] : 0) +
				tuple_offset(x, st, batch_dims, idx,
					     (b * per + t) * k, k);
			memcpy((char *)y->p + o * (int64_t)es,
			       (const char *)x->p + src * (int64_t)es,
			       (size_t)slice * es);
		}
}
