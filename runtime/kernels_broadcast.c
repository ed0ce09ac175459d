/*
 * kernels_broadcast.c — numpy broadcasting of up to RT_MAX_OPERANDS
 * operands into an output, one contiguous run of output elements at a
 * time.
 *
 * The walk works on a coalesced shape: neighbouring axes on which every
 * operand broadcasts the same way merge into one, so a per-channel Mul on
 * NCHW becomes a loop over channels around one contiguous inner run, and
 * two same-shape operands become a single run.  In the innermost axis an
 * operand either advances with the output (stride 1) or stays on one
 * element (stride 0), which is all a row function has to know.
 */
#include "kernels.h"

void rt_broadcast(int nops, const rt_arr *const *a, rt_row_fn row, void *ctx)
{
	const rt_shape *ys = &a[0]->s;
	int64_t dims[ART_MAX_RANK], str[RT_MAX_OPERANDS][ART_MAX_RANK];
	int64_t idx[ART_MAX_RANK] = {0}, el[RT_MAX_OPERANDS], st[RT_MAX_OPERANDS];
	int has[RT_MAX_OPERANDS][ART_MAX_RANK];
	size_t es[RT_MAX_OPERANDS];
	int r = 0;
	int64_t outer = 1, n;

	if (rt_numel(ys) == 0)
		return;
	for (int k = 0; k < nops; k++)
		es[k] = art_dtype_size(a[k]->dt);
	/* Which operands have each output axis (size > 1), merged. */
	for (int i = 0; i < ys->rank; i++) {
		int same = r > 0;
		if (ys->d[i] == 1)
			continue;
		for (int k = 0; k < nops; k++) {
			const rt_shape *s = &a[k]->s;
			int j = i - (ys->rank - s->rank);
			int h = j >= 0 && s->d[j] != 1;
			same = same && has[k][r - 1] == h;
			has[k][r] = h;
		}
		if (same) {
			dims[r - 1] *= ys->d[i];
			continue;
		}
		dims[r++] = ys->d[i];
	}
	if (r == 0) {
		dims[0] = 1, r = 1;
		for (int k = 0; k < nops; k++)
			has[k][0] = 0;
	}
	/* Element strides of each operand on the coalesced axes. */
	for (int k = 0; k < nops; k++) {
		el[k] = 1;
		for (int i = r - 1; i >= 0; i--) {
			str[k][i] = has[k][i] ? el[k] : 0;
			el[k] *= has[k][i] ? dims[i] : 1;
		}
		st[k] = str[k][r - 1] ? 1 : 0;
	}
	n = dims[r - 1];
	for (int i = 0; i < r - 1; i++)
		outer *= dims[i];
	for (int64_t o = 0; o < outer; o++) {
		char *p[RT_MAX_OPERANDS];
		for (int k = 0; k < nops; k++) {
			int64_t off = 0;
			for (int i = 0; i < r - 1; i++)
				off += idx[i] * str[k][i];
			p[k] = (char *)a[k]->p + off * (int64_t)es[k];
		}
		row(ctx, p, st, n);
		for (int i = r - 2; i >= 0 && ++idx[i] == dims[i]; i--)
			idx[i] = 0;
	}
}
