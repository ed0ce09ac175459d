/*
 * timeline.h — the parts of the memory timeline picture: timeline.c lays
 * out the page (scales, title, legend, one block per plan), tlpanel.c
 * draws one plan's block (phase bands, tensors, bytes in use, axes),
 * tlmerge.c gathers the tensors too small to draw into "other" bands and
 * tlinuse.c measures the bytes in use at each step, tlsteps.c places
 * the steps across.
 *
 * A page holds one plan, or two on one scale for --timeline-compare.  A
 * timeline per device or pipeline stage would be one more block per
 * device: ar_tl_block draws any (graph, plan) pair at any height.
 */
#ifndef ARENAC_TIMELINE_H
#define ARENAC_TIMELINE_H

#include "gvutil.h"

/* The page: one coordinate system (points, y up) for all its blocks. */
typedef struct ArTlPage {
	Agraph_t *gv;
	int nshapes;            /* decorations drawn, for their node names */
	double x0;              /* left edge of the plots */
	double sx;              /* points per step that uses the arena */
	double sy;              /* points per byte in the arena panels */
	double psy;             /* points per byte in the bytes-in-use charts */
	int64_t other_below;    /* tensors under this size go into "other" */
	int max_labels;         /* names written on the largest rectangles */
	bool training;          /* some plan has training phases */
	/* The block being drawn, for the titles of two plans: "(above: ...)",
	 * or NULL.  Names must differ between blocks: a node's name is its
	 * identity in Graphviz. */
	const char *tag;
	/* What the blocks drew, for the legend. */
	bool kind_used[AR_GV_NKINDS];
	bool phase_used[4];
	bool other_used, alias_used;
	/* A training run's device memory, under its arena's bytes in use
	 * (device false: an inference plan, or a comparison, whose other
	 * plan's report has no bill): the persistent parts held besides
	 * the arena, the device's total, its size (0: not given) and its
	 * name.  With --dp/--tp/--pp, the first device of the stage. */
	bool device;
	int nparts;
	struct ArTlPart {
		const char *name, *fill;
		int64_t bytes;
	} part[12];
	int64_t device_total, device_limit;
	const char *limit_name;
} ArTlPage;

/* The bottom chart's arena in use, and the lines of the device's total
 * and limit. */
#define AR_TL_IN_USE_FILL "#7a9cc6"
#define AR_TL_TOTAL_COLOR "#333333"
#define AR_TL_LIMIT_COLOR "#000000"

/*
 * A pinned box from (x, y) to (x + w, y + h), drawn in creation order,
 * later ones on top.  name is the node's name, which SVG shows as the
 * shape's <title> (its tooltip), followed by the page's tag on a line of
 * its own; NULL for a plain decoration.
 */
Agnode_t *ar_tl_box(ArTlPage *pg, const char *name, const char *cls,
		    double x, double y, double w, double h);
/* Text centred on (x, y), or starting (align < 0) or ending (align > 0)
 * there, in a box as wide as DejaVu Sans draws it (textwidth.c). */
Agnode_t *ar_tl_text(ArTlPage *pg, double x, double y, const char *s,
		     double size, int align);
/* Round tick spacings: 1, 2 or 5 times a power of ten steps; a power of
 * two bytes (ticks on whole KiB and MiB). */
int64_t ar_tl_nice_step(double min);
int64_t ar_tl_pow2_step(double min);

/*
 * Steps across (tlsteps.c): x[s] is step s's left edge, x[nsteps] the
 * plot's right one (x may be NULL); a step that reads or writes no arena
 * tensor (ar_tl_busy false) gets an eighth of sx.  Returns the width.
 */
bool ar_tl_busy(const ArGraph *g, const ArPlan *p, int s);
double ar_tl_step_edges(const ArGraph *g, const ArPlan *p, double x0,
			double sx, double *x);
/* Hover columns: runs of steps at least a point wide; first[c] is column
 * c's first step (first[n] = nsteps), of[s] step s's column. */
typedef struct ArTlCols {
	int n;
	int *first, *of;
} ArTlCols;
void ar_tl_columns(const double *x, int nsteps, ArTlCols *c);
void ar_tl_columns_free(ArTlCols *c);

/*
 * Draws one plan with its lowest edge at y: the bytes-in-use chart, the
 * arena panel above it with the phase bands behind, and heading (one
 * line, already label text) above that.  Returns the top edge.
 */
double ar_tl_block(ArTlPage *pg, const ArGraph *g, const ArPlan *p,
		   const char *heading, double y);

/*
 * The "other" bands: the tensors picked (drawn ones only), merged at the
 * picture's resolution, rows of `snap` bytes by the hover columns:
 * in each column the runs of rows they live in (gaps of one row closed),
 * and the same run over consecutive columns as one rectangle.  Each tensor
 * counts once in each rectangle it touches.
 */
typedef struct ArTlOther {
	int first, last;        /* steps, inclusive: whole columns */
	int64_t lo, hi;         /* bytes of the pictures' address space */
	int ntensors;
	int64_t bytes;          /* their sizes, summed */
	int sample[4];          /* the first tensors met, -1 past ntensors */
} ArTlOther;

/* Bytes of the arena in use at each step: the union of the padded ranges
 * of the tensors live there, so views and in-place pairs count once. */
void ar_tl_in_use(const ArGraph *g, const ArPlan *p, int64_t *used);

/* Whether tensor t is drawn as a rectangle of its own or not at all. */
bool ar_tl_drawn(const ArGraph *g, const ArPlan *p, int t);
/* The bands, sorted by first step then offset; returns how many. */
int ar_tl_merge(const ArGraph *g, const ArPlan *p, const bool *pick,
		int64_t snap, const ArTlCols *cols, ArTlOther **out);

#endif
