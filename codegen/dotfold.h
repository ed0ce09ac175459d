/*
 * dotfold.h — which steps the dataflow picture draws, and as which box.
 *
 * A large graph drawn one node per step is a strip tens of thousands of
 * pixels long (DenseNet-121: 668 steps).  Its structure is repetition: the
 * condensed view draws a run of repeated blocks of steps (the same ops,
 * wired alike, k times in a row) as one instance inside a cluster marked
 * "x k", and a chain of steps each feeding only the next as one box; when
 * that still leaves too many boxes, runs of steps of one phase become one
 * box each.  The focus view draws only the steps near one step, each as
 * its own box.
 */
#ifndef ARENAC_DOTFOLD_H
#define ARENAC_DOTFOLD_H

#include "graph.h"
#include "plan.h"

typedef enum { AR_DOT_FULL, AR_DOT_CONDENSED, AR_DOT_FOCUS } ArDotMode;

/* A condensed picture with more boxes than this draws segments. */
#define AR_DOT_MAX_BOXES 120

/* Steps [first, first + period * count): count repeats of period steps. */
typedef struct ArDotBlock {
	int first, period, count;
} ArDotBlock;

typedef struct ArDotView {
	int nsteps;
	/* Condensed, but still more than AR_DOT_MAX_BOXES boxes (a training
	 * step of a deep model): each box is a segment, a run of consecutive
	 * steps of one phase, with all its steps; blocks are not drawn. */
	bool segments;
	int *box;               /* per step: its box, -1 when not drawn */
	int *repeat;            /* per step: which repeat of its block, else 0 */
	int *block;             /* per step: its block, or -1 */
	int nboxes;
	/* Per box: its steps (the first repeat's, in step order; a
	 * segment's all) are steps[start[b] .. start[b + 1]), and its block
	 * or -1. */
	int *start, *steps;
	int *box_block;
	int nblocks;
	ArDotBlock *blocks;
	/* What the view was built from: per node its step (-1 for none),
	 * per tensor t the steps reading it, readers[rstart[t] ..
	 * rstart[t + 1]). */
	int *step_of;
	int *rstart, *readers;
} ArDotView;

/*
 * The view of p's steps in mode: FULL (a box per step), CONDENSED, or
 * FOCUS (a box per step within radius tensors of step focus, which must
 * be a step of p; others not drawn).
 */
void ar_dot_view(const ArGraph *g, const ArPlan *p, ArDotMode mode,
		 int focus, int radius, ArDotView *v);
void ar_dot_view_free(ArDotView *v);

#endif
