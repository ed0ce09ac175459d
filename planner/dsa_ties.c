/*
 * dsa_ties.c — the labelling's ties (dsa_label.c): units that every
 * labelling at the bound must put in one layer, found from the bytes
 * they hand over.
 *
 * At a boundary between two spans the layers fill exactly (the load is
 * the sum of the heights there), each layer holds its height on both
 * sides, so in each layer the units ending at the boundary and those
 * starting there hand over the same bytes.  Of all the ways to split the
 * ends and starts in two that balance so, where every one keeps units u
 * and v on one side, u and v are tied: no labelling that keeps the
 * heights parts them.  Sound for any heights adding up to that load, so
 * they are found once for a component's units, whatever cut and heights
 * are tried; ties join in classes (union-find) and the search labels a
 * class at once (its first unit decides).
 *
 * Why: the search checks a label over the unit's own lifetime only, so a
 * wrong one in the holes' slack shows only where a later unit it must
 * hand over to cannot take the bytes, and the search backs up one label
 * at a time from there.  Where no hole lies, the ends and starts at a
 * boundary are mostly one column of a strip (sizes are random multiples
 * of 64, so few other subsets balance): on holes 2,000 seed 9's second
 * component (1,028 buffers over steps 3,852-8,000, three strips), 69 of
 * the 79 boundaries between exactly filled spans admit only the split
 * that keeps all their units together, and the ties leave 851 classes,
 * none holding buffers of two of the generator's strips (as soundness
 * requires).
 *
 * Level ties (level): the same at every boundary the load stays level
 * across, filled exactly or not.  There they are a presumption, not a
 * proof: the free space of a packing at the bound may move from one
 * layer to the other at such a boundary.  In a perfect packing with
 * holes it does not, since a hole is a fixed rectangle and starts or
 * ends only where the load steps (unless holes of equal bytes do both at
 * once), so each of its layers balances there.  With them the search
 * holds to such labellings, finds one at a strip's cut and height in a
 * fraction of the work (holes 2,000 seed 10's first component, 1,066
 * buffers: 0.5 M units, 26 buffers off the generator's strips, where
 * with exact ties it takes 32 M and is 338 off) and refutes other
 * heights outright (1.7-4.4 M units each), where the loads alone admit
 * labellings at any of them that pack no lower.
 *
 * A boundary with more than TIE_MAX units is left alone: its splits are
 * enumerated, 2^n of them, a unit of work each.
 */
#include "dsa_label.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define TIE_MAX 16

static int root(int *par, int i)
{
	while (par[i] != i)
		i = par[i] = par[par[i]];
	return i;
}

/*
 * Ties among u[0..ne) ending and u[ne..nu) starting at one boundary:
 * eq[j] ends up the set of units on j's side in every balanced split
 * (the split taking none balances, and so does the one taking all, since
 * the boundary hands over all its bytes).
 */
static void tie_boundary(const ArLabel *s, const int *u, int ne, int nu,
			 int *par)
{
	uint32_t eq[TIE_MAX], all = ((uint32_t)1 << nu) - 1, mask = 0;
	int64_t diff = 0;

	for (int j = 0; j < nu; j++)
		eq[j] = all;
	/* Gray code: one unit in or out per step. */
	for (uint32_t g = 1; g <= all; g++) {
		int j = __builtin_ctz(g);
		int64_t v = s->b[u[j]].size * (j < ne ? 1 : -1);
		mask ^= (uint32_t)1 << j;
		diff += mask >> j & 1 ? v : -v;
		if (diff)
			continue;
		for (int e = 0; e < nu; e++)
			eq[e] &= mask >> e & 1 ? mask : ~mask;
	}
	for (int j = 0; j < nu; j++)
		for (int e = j + 1; e < nu; e++)
			if (eq[j] >> e & 1)
				par[root(par, u[e])] = root(par, u[j]);
}

void ar_dsa_label_ties(ArLabel *s, int64_t target, bool level,
		       ArBudget *work)
{
	int n = s->n, m = s->m;
	int *par = ar_xmalloc((size_t)n * sizeof *par + 1);

	for (int i = 0; i < n; i++)
		par[i] = i;
	/* The lists read below are the tables' (units over each span,
	 * charged there): a unit of work per unit, twice, and per span. */
	ar_budget_spend(work, 2 * (int64_t)n + m);
	for (int x = 1; x < m; x++) {
		int u[TIE_MAX], ne = 0, nu = 0;
		if (s->load[x - 1] != s->load[x] ||
		    (!level && s->load[x] != target))
			continue;
		/* Those ending at x (over span x - 1), then those starting
		 * there (over span x). */
		for (int k = x - 1; k <= x && nu <= TIE_MAX; k++) {
			for (int e = s->sstart[k]; e < s->sstart[k + 1] &&
			     nu <= TIE_MAX; e++) {
				int i = s->spanned[e];
				if (!(k < x ? s->shi[i] == x : s->slo[i] == x))
					continue;
				if (nu < TIE_MAX)
					u[nu] = i;
				nu++;
			}
			if (k < x)
				ne = nu;
		}
		if (nu > TIE_MAX || !ar_budget_spend(work, (int64_t)1 << nu))
			continue;
		assert(ne > 0 && nu > ne);
		tie_boundary(s, u, ne, nu, par);
	}
	free(s->grp), free(s->glo), free(s->ghi);
	s->grp = ar_xmalloc((size_t)n * sizeof *s->grp + 1);
	s->glo = ar_xmalloc((size_t)n * sizeof *s->glo + 1);
	s->ghi = ar_xmalloc((size_t)n * sizeof *s->ghi + 1);
	for (int i = 0; i < n; i++) {
		s->grp[i] = root(par, i);
		s->glo[i] = m, s->ghi[i] = 0;
	}
	/* Each class's hull (span indices), kept at its root, then given
	 * to every member. */
	for (int i = 0; i < n; i++) {
		int r = s->grp[i];
		if (s->slo[i] < s->glo[r])
			s->glo[r] = s->slo[i];
		if (s->shi[i] > s->ghi[r])
			s->ghi[r] = s->shi[i];
	}
	for (int i = 0; i < n; i++)
		s->glo[i] = s->glo[s->grp[i]], s->ghi[i] = s->ghi[s->grp[i]];
	s->tied = target;
	free(par);
}
