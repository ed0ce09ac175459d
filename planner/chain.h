/*
 * chain.h — the chain view of a training model, shared by the files that
 * build it (chain.c: points, units, block types; chain_options.c: the
 * interior options of each unit; chain_probe.c: the measured segments)
 * and the dynamic program over it (chain_dp.c).  checkpoint.h has the
 * part the rest of the planner and the tests use.
 *
 * Positions 0..L+1: 0 the graph inputs, 1..L the points (candidates that
 * alone cross the forward pass right after their producer), L+1 the end.
 * Unit u (1..L+1) is the run of forward nodes computing p_u from p_{u-1};
 * unit L+1 ends with the loss.  A unit's interior candidates are its
 * candidates other than its point.  A selection is: which points stay,
 * and per unit one of its options (which interior candidates stay).
 * Between two neighbouring resident points a and b lies a segment: the
 * points inside are freed, each unit of it runs one of its options.
 */
#ifndef ARENAC_CHAIN_H
#define ARENAC_CHAIN_H

#include "checkpoint.h"
#include "passes.h"

/* One measured way to run segment (a, b): its local peak, what it keeps
 * from its forward steps to its backward, its recompute FLOPs, and which
 * options its units run (combo: a mixed-radix index over the units'
 * options, first unit lowest; -1: every unit its `none` option). */
typedef struct ArSeg {
	int64_t peak, kept, cost;
	int combo;
} ArSeg;

struct ArChain {
	const ArTrainModel *m;
	int L;
	int *point;             /* per position 1..L: the tensor */
	int *unit;              /* per base node: its unit, 1..L+1 */
	int *owner;             /* per base tensor: its position, -1 none */
	int *inner, *inner_at;  /* unit u's interior candidates are
				 * inner[inner_at[u] .. inner_at[u+1]) */
	uint64_t *sig;          /* per unit (0: the inputs): its block type;
				 * units of one type match node for node */
	int *type_rep;          /* per unit: the first unit of its type */
	/* Options per unit: nopt[u] rows of ninner(u) flags (true: stays),
	 * row 0 keeps everything, row none_opt[u] nothing. */
	bool **opt;
	int *nopt, *none_opt;
	/* Measured segments (a, a+n), n = 1..D: seg_at[a * (D + 1) + n] is
	 * the first of that segment's entries, seg_at[... + 1] the end; the
	 * entries of (a, a+1) are its unit's options, of longer ones every
	 * combo (complete) or combo -1.  Longer segments, up to wmax, come
	 * from the increments (chain_probe.c) when extrapolate is set. */
	int D, wmax;
	int span;               /* the layout's longest segment */
	int *seg_at;
	ArSeg *segs;
	int nsegs;
	bool extrapolate;
	int64_t *inc_peak, *inc_cost;   /* prefix sums per position */
	/* Small enough that every unit lists all its subsets and every combo
	 * of every segment is measured: the entries cover every selection. */
	bool complete;
	int nprobes;
	/* The trade-off curve (chain_dp.c): per position, its front. */
	struct ArFront *front;
	int64_t top;            /* the model peak of keeping everything */
};

static inline int ar_chain_ninner(const ArChain *c, int u)
{
	return c->inner_at[u + 1] - c->inner_at[u];
}

/* Writes the selection of segment (a, b) run with combo into res: the
 * points inside freed, each unit's interior as its option says; the rest
 * of res is left as it is. */
void ar_chain_apply(const ArChain *c, int a, int b, int combo, bool *res);

/* The entries of segment (a, b), b - a <= D; *n gets their count. */
const ArSeg *ar_chain_segs(const ArChain *c, int a, int b, int *n);
/* The one entry of a longer segment (every unit `none`), from the
 * increments; false when (a, b) is longer than the chain measured. */
bool ar_chain_long_seg(const ArChain *c, int a, int b, ArSeg *out);

/* chain_options.c: each unit's options (the search inside a block), one
 * search per block type, copied to the units of that type; all subsets
 * when c->complete. */
void ar_chain_options(ArChain *c, ArBudget *work);
/* Whether a unit of n interior candidates lists them all (complete). */
bool ar_chain_all_subsets(int n);

/* chain_probe.c: measures the segments, within work (nodes of the probe
 * graphs).  AR_OK, a planner failure, or -1 when the work ran out first. */
int ar_chain_measure(ArChain *c, const ArPlanOptions *popt, ArBudget *work,
		     ArError *err);

/* chain_dp.c: the curve, from the measured segments; false when work ran
 * out first. */
bool ar_chain_curve(ArChain *c, ArBudget *work);
void ar_chain_curve_free(ArChain *c);
/* The model peak of curve point k (checkpoint.h: ar_chain_point). */
int64_t ar_chain_point_peak(const ArChain *c, int k);

#endif
