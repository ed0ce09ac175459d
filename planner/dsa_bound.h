/*
 * dsa_bound.h — lower bounds on the optimum height of offset assignment
 * above the load (peak-live): what `arenac solve --prove` reports.
 */
#ifndef ARENAC_DSA_BOUND_H
#define ARENAC_DSA_BOUND_H

#include "dsa.h"

typedef struct ArDsaBound {
	int64_t bound;          /* no placement of the instance is lower */
	int nspan;              /* spans kept by the sub-instance whose
				   search raised it; 0: none did */
	int64_t t0, t1;         /* its times, when those spans are a window;
				   t0 == t1 when they are the most loaded */
	int nbuf;               /* buffers live in them */
	int searched;           /* sub-instances searched */
	bool stopped;           /* the work ran out on some of them: more
				   might raise it */
} ArDsaBound;

/*
 * A bound on b's optimum of at least the load and floor (a bound already
 * proven, such as ArDsaResult.bound), raised by exhaustive searches of
 * sub-instances (dsa_bound.c); it stops once it reaches target (a height
 * found; 0: none).  b is not changed.  Spends work.
 */
void ar_dsa_prove(const ArBuf *b, int n, int64_t floor, int64_t target,
		  ArBudget *work, ArDsaBound *out);

#endif
