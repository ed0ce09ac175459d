/*
 * gvutil.h — what the two Graphviz writers (dot.c, timeline.c) share:
 * output by file extension, attribute setting, colours and labels.
 */
#ifndef ARENAC_GVUTIL_H
#define ARENAC_GVUTIL_H

#include "emit.h"
#include "graph.h"
#include "gvload.h"
#include "plan.h"

/*
 * Writes g to path by its extension: .dot or .gv as DOT text, unlaid (a
 * graph with pinned positions carries layout=nop for "dot -Tsvg"), else
 * laid out with engine and rendered in that format (.svg, .png, .pdf).
 * Goes through ar_out_open, so a failure leaves no partial file; out gets
 * the finished file to publish, or with out NULL it is committed at once.
 */
int ar_gv_write(Agraph_t *g, const char *path, const char *engine,
		ArOutFile *out, ArError *err);

/*
 * The one Graphviz context of the process, never freed: Graphviz 2.42's
 * pango plugin remembers the last font name by pointer into a context's
 * font cache, so a label laid out after that context was freed compares
 * against freed memory (ASan: heap-use-after-free in textspan_size when
 * --dot and --timeline both render pictures).  Whoever lays out graphs
 * (tests too) must use this one.
 */
GVC_t *ar_gv_context(void);

/*
 * For agopen: named (sub)graphs numbered in the order they are made, so
 * that a graph's clusters are written in that order, not in the order of
 * their names' heap addresses (gvorder.c).
 */
Agdisc_t *ar_gv_ordered(void);

/* agsafeset with a printf format. */
void ar_gv_set(void *obj, const char *attr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Where tensor t sits in the pictures' one address space: its offset,
 * after the regions before its own when the plan has memory tiers (their
 * arenas are drawn stacked, fastest at the bottom).
 */
int64_t ar_gv_place(const ArPlan *p, int t);
/* Where region r starts in that address space. */
int64_t ar_gv_region_base(const ArPlan *p, int r);

/* Whether the plan is a training step: some step is not a forward one. */
bool ar_gv_training(const ArGraph *g, const ArPlan *p);

/*
 * What a tensor's fill colour says, the same in both pictures: in a
 * training step, the phase of the step that made it; in an inference
 * plan, the class of op that made it.  Graph inputs and outputs have
 * colours of their own in both.  (The place in the arena is the timeline's
 * y axis already, so colour shows something else.)
 */
typedef enum {
	AR_GV_INPUT, AR_GV_OUTPUT,
	AR_GV_CONV, AR_GV_NORM, AR_GV_ELEMWISE, AR_GV_POOL, AR_GV_DATA,
	AR_GV_OTHER,
	AR_GV_FORWARD, AR_GV_RECOMPUTE, AR_GV_GRADIENT, AR_GV_UPDATE,
	AR_GV_NKINDS
} ArGvKind;

ArGvKind ar_gv_kind(const ArGraph *g, bool training, int t);
/* The legend's words for a kind, and its fill ("#rrggbb"). */
const char *ar_gv_kind_label(ArGvKind k);
const char *ar_gv_kind_fill(ArGvKind k);
/* The background band of a training phase: a pale tint of its kind. */
const char *ar_gv_phase_fill(ArPhase ph);

/*
 * The pictures' font: DejaVu Sans, the widest common sans (textwidth.c),
 * measured and drawn where it is installed; elsewhere Helvetica or Arial,
 * narrower, or the viewer's own sans.  Graphviz writes the list into SVG's
 * font-family as it is, and its pango layout takes the first it has.
 */
#define AR_GV_FONT "DejaVu Sans,Helvetica,Arial,sans-serif"

/* Points taken by a line of text at a font size, in DejaVu Sans; and how
 * many of its first bytes fit in width points. */
double ar_gv_text_width(const char *s, double size);
int ar_gv_text_fit(const char *s, double size, double width);
/* The widest line of a Graphviz label ("\n", "\l" and "\r" end lines,
 * "\\" is one backslash). */
double ar_gv_label_width(const char *label, double size);

/* A path's last component: pictures name the model by its file name, so
 * they are the same bytes whatever folder arenac ran in. */
const char *ar_gv_basename(const char *path);

/* "118,352": a count with thousands separators. */
void ar_gv_count(char *buf, size_t n, int64_t v);

/* "1.5 MiB", "768 B": ar_fmt_size (numfmt.h) into a buffer of n. */
void ar_gv_bytes(char *buf, size_t n, int64_t bytes);

/* "float32[1,3,8,8]", or "?" for a tensor never computed. */
void ar_gv_shape(char *buf, size_t n, const ArTensor *t);

#endif
