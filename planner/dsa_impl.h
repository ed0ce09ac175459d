/*
 * dsa_impl.h — what the offset solvers behind dsa.h share: the heuristic
 * orders, the exact search entry and small helpers.  Private to planner/.
 */
#ifndef ARENAC_DSA_IMPL_H
#define ARENAC_DSA_IMPL_H

#include "dsa.h"

typedef enum {
	AR_GREEDY_SIZE,         /* size desc, first fit (TFLite Micro) */
	AR_GREEDY_BREADTH,      /* busiest time first, best fit (Pisarchyk) */
	AR_GREEDY_LIFETIME,     /* longest lifetime first, first fit */
	AR_GREEDY_COUNT
} ArGreedyOrder;

extern const char *const ar_greedy_names[AR_GREEDY_COUNT];

/* Places every buffer in the order's sequence; returns the height. */
int64_t ar_dsa_greedy(ArBuf *b, int n, ArGreedyOrder order);

/*
 * Improves the valid solution in b (offsets set, height seed_height) with
 * the branch and bound.  capacity > 0: any solution within it; 0: the
 * minimum height.  Spends work.  Fills height, optimal, infeasible,
 * stopped, timed_out and nodes.
 */
void ar_dsa_exact(ArBuf *b, int n, int64_t seed_height, int64_t lower_bound,
		  int64_t capacity, ArBudget *work, ArDsaResult *res);

/*
 * The exact search in capacity mode with b[nfree..n) pinned at their
 * offsets (each top within cap): 1 when it placed b[0..nfree) within cap
 * around them, 0 when it proved that impossible, -1 when the work ran out
 * (b unchanged then).  Adds its nodes to *nodes.
 */
int ar_dsa_exact_pinned(ArBuf *b, int n, int nfree, int64_t cap,
			ArBudget *work, int64_t *nodes);

/*
 * Lowers the height of the valid placement in b by local search over
 * first-fit orders (dsa_improve.c), never below lower_bound, keeping b
 * valid; returns its height.  Spends work.
 */
int64_t ar_dsa_improve(ArBuf *b, int n, int64_t lower_bound, ArBudget *work);

/* The same with b[nfree..n) pinned at their offsets, every one's top at
 * most lower_bound. */
int64_t ar_dsa_improve_pinned(ArBuf *b, int n, int nfree,
			      int64_t lower_bound, ArBudget *work);

/*
 * Lowers the height of the valid placement in b towards target by window
 * repair (dsa_repair.c): the buffers live where the skyline passes target
 * re-placed by the local search around their pinned neighbours.  Keeps b
 * valid; returns its height, never higher than before.  Spends work.
 */
int64_t ar_dsa_repair(ArBuf *b, int n, int64_t target, ArBudget *work);

/* From this many buffers the local search's square cost is too much, and
 * window repair takes its place (dsa.c, dsa_descend.c). */
#define AR_DSA_REPAIR_MIN 4096

/* At a capacity window repair runs before the exact search from fewer:
 * its exact search on windows packs random instances of 1,024 and 2,048
 * buffers at the bound in 0.1-3 s, where the whole instance's exact
 * search may spend its whole budget (45-55 s) first.  Minimising keeps
 * AR_DSA_REPAIR_MIN: there the whole search's proofs count. */
#define AR_DSA_REPAIR_CAP_MIN 1024

/*
 * Probes heights below that of the valid placement in b, down to the
 * proven bound *lo (raised where a probe proves a height infeasible), with
 * the exact search in capacity mode and the local search from each
 * solution (dsa_descend.c); keeps b valid and returns its height, never
 * higher than before.  Spends work; adds the search's nodes to *nodes.
 */
int64_t ar_dsa_descend(ArBuf *b, int n, int64_t *lo, ArBudget *work,
		       int64_t *nodes);

/*
 * Solves the blocks the buffers of b join into (same lifetime stacked,
 * same size handed over end to start: dsa_blocks.c) by ar_dsa_solve
 * with the work given (auto minimising, the exact search with a
 * capacity), and takes their placement when it is lower than b's;
 * returns b's height; adds the search's nodes to *nodes.  Does nothing
 * where few buffers join.
 */
int64_t ar_dsa_blocks(ArBuf *b, int n, int64_t capacity, ArBudget *work,
		      int64_t *nodes);

/*
 * The blocks b's buffers join into, as ar_dsa_blocks makes them (work
 * charged alike): block[0..m) (offsets 0; room for n) and of[i], the
 * block buffer i is part of; returns m.  Loose: each outermost block
 * that is a stack (blocks of one lifetime) gives its members instead.
 */
int ar_dsa_block_of(const ArBuf *b, int n, bool loose, ArBudget *work,
		    ArBuf *block, int *of);

/*
 * Lowers the components of the valid placement in b that are above
 * target by layer split (dsa_layers.c): each cut by bytes into a bottom
 * and a top layer where buffers hand over a strip's bytes, the layers
 * solved by ar_dsa_solve with the capacities of the cut and stacked.
 * Keeps b valid; returns its height, never higher than before.  Spends
 * work; adds the searches' nodes to *nodes.
 */
int64_t ar_dsa_layers(ArBuf *b, int n, int64_t target, ArBudget *work,
		      int64_t *nodes);

/* The spans between consecutive distinct times of b: buffer i is live
 * over spans [slo[i], shi[i]); returns how many (arrays malloc'd). */
int ar_dsa_spans(const ArBuf *b, int n, int **slo, int **shi);

/* Buffers by component: lifetimes that never meet, directly or through
 * others, split apart, each placed on its own from offset 0.  Component
 * c is ids[start[c] .. start[c + 1]), by start, then index. */
typedef struct {
	int *ids;
	int *start;
	int nc;
} ArComponents;

void ar_dsa_components(const ArBuf *b, int n, ArComponents *cc);

int64_t ar_dsa_height(const ArBuf *b, int n);
int64_t ar_dsa_gcd(int64_t a, int64_t b);

#endif
