/*
 * kernels_gather.c — Gather and GatherElements, for every element type
 * and int32 or int64 indices.
 *
 * The caller has checked that every index lies in [-d, d) for the axis
 * length d; a negative one counts from the end.
 */
#include <string.h>

#include "kernels.h"

static int64_t index_at(const rt_arr *idx, int64_t i, int64_t d)
{
	int64_t v = rt_get_i(idx->dt, idx->p, i);
	return v < 0 ? v + d : v;
}

/* y = x[outer, idx..., inner]: every index picks a block of inner. */
void rt_gather(const rt_arr *x, int axis, const rt_arr *idx, rt_arr *y)
{
	int64_t outer = 1, inner = 1, d = x->s.d[axis];
	int64_t ni = rt_numel(&idx->s);
	size_t es = art_dtype_size(y->dt);

	for (int i = 0; i < axis; i++)
		outer *= x->s.d[i];
	for (int i = axis + 1; i < x->s.rank; i++)
		inner *= x->s.d[i];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < ni; j++)
			memcpy((char *)y->p + (size_t)((o * ni + j) * inner) * es,
			       (const char *)x->p +
			       (size_t)((o * d + index_at(idx, j, d)) * inner) * es,
			       (size_t)inner * es);
}

/* y[i...] = x[i... with axis replaced by idx[i...]]; y has idx's shape. */
void rt_gather_elements(const rt_arr *x, int axis, const rt_arr *idx,
			rt_arr *y)
{
	int64_t xst[ART_MAX_RANK], yst[ART_MAX_RANK], s = 1, t = 1;
	int64_t n = rt_numel(&y->s);
	size_t es = art_dtype_size(y->dt);
	int r = x->s.rank;

	for (int i = r - 1; i >= 0; i--) {
		xst[i] = s, s *= x->s.d[i];
		yst[i] = t, t *= y->s.d[i];
	}
	for (int64_t k = 0; k < n; k++) {
		int64_t src = 0;
		for (int i = 0; i < r; i++) {
			int64_t c = k / yst[i] % y->s.d[i];
			if (i == axis)
				c = index_at(idx, k, x->s.d[axis]);
			src += c * xst[i];
		}
		memcpy((char *)y->p + k * (int64_t)es,
		       (const char *)x->p + src * (int64_t)es, es);
	}
}
