/*
 * dsa.h — dynamic storage allocation: the offset assignment problem.
 *
 * Given buffers with a size and a half-open lifetime [lo, hi), give each an
 * offset so that buffers whose lifetimes intersect never share a byte, with
 * the height (max offset + size) as small as possible.  This is the core
 * every arena plan reduces to, and the format of MiniMalloc's benchmarks.
 */
#ifndef ARENAC_DSA_H
#define ARENAC_DSA_H

#include <stdbool.h>
#include <stdint.h>

#include "budget.h"

/*
 * Work units of the exact search at the default effort (exact.c: buffers
 * and sections visited, about half a billion a second on a 2020s core):
 * an arena plan's offsets (about two seconds, as the time limit before
 * budgets), and `arenac solve` (about ten, as its time limit was).
 */
#define AR_DSA_WORK ((int64_t)1 << 30)
#define AR_SOLVE_WORK ((int64_t)1 << 33)

typedef struct ArBuf {
	int64_t lo, hi;     /* live over [lo, hi); hi > lo */
	int64_t size;       /* bytes, > 0 */
	int64_t offset;     /* output */
} ArBuf;

typedef struct ArDsaResult {
	int64_t height;         /* max offset + size of the solution */
	int64_t lower_bound;    /* max over time of live bytes */
	int64_t bound;          /* proven: no placement is lower (>= the
				   lower bound; = height when optimal) */
	bool optimal;           /* height proven minimal (or = capacity bound met) */
	bool infeasible;        /* with a capacity: proven that none fits */
	bool stopped;           /* the exact search ran out of work units */
	bool timed_out;         /* the run's time limit stopped it */
	const char *algorithm;  /* name of the method that produced the result */
	int64_t nodes;          /* search nodes explored, 0 for heuristics */
} ArDsaResult;

/* Max over time of the sum of live sizes; *at gets a time where it peaks. */
int64_t ar_dsa_lower_bound(const ArBuf *b, int n, int64_t *at);

/*
 * Solves in place.  algo: "auto", "greedy-size", "greedy-breadth",
 * "greedy-lifetime", "exact" (the names ar_dsa_algorithms lists).
 * capacity 0 minimises the height; capacity > 0 asks for any solution
 * with height <= capacity (the exact search stops at the first one).
 * The exact search spends units of work (a budget of ar_effort_units of
 * AR_DSA_WORK, say), and stops when it is spent or its watch fires.
 * "auto", minimising, then spends up to half as much again (a budget of
 * its own, on the same watch) on local search when the exact search ends
 * without a proof (after auto on the blocks the buffers join into, with
 * a quarter as much, where they join: dsa_blocks.c), and as much again
 * on probes of the heights below its best; from 4,096 buffers it first
 * spends half as much on window repair.  With a capacity, the blocks'
 * exact search gets a first try with a 32nd as much.
 * With a capacity the exact search misses, auto then spends half as much
 * on window repair, or from 4,096 buffers as much on probes of the
 * heights between its best and the capacity, each one repaired.
 * Returns 0, or -1 for an unknown algorithm name.
 */
int ar_dsa_solve(ArBuf *b, int n, const char *algo, int64_t capacity,
		 ArBudget *work, ArDsaResult *res);

/* NULL-terminated list of algorithm names, for --help and validation. */
extern const char *const ar_dsa_algorithms[];

#endif
