/*
 * gvutil.h — what the two Graphviz writers (dot.c, timeline.c) share:
 * output by file extension, attribute setting, colours and labels.
 */
#ifndef ARENAC_GVUTIL_H
#define ARENAC_GVUTIL_H

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "emit.h"
#include "graph.h"
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

/* The fill colour of arena tensor t: the hue follows its place, so one
 * part of the arena has one colour in both pictures. */
void ar_gv_color(char *buf, size_t n, const ArPlan *p, int t);

/* "1.5 MiB", "768 B": ar_fmt_size (numfmt.h) into a buffer of n. */
void ar_gv_bytes(char *buf, size_t n, int64_t bytes);

/* "float32[1,3,8,8]", or "?" for a tensor never computed. */
void ar_gv_shape(char *buf, size_t n, const ArTensor *t);

#endif
