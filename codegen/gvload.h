/*
 * gvload.h — Graphviz, loaded only when a picture is asked for.
 *
 * Linking Graphviz pulled its eight libraries into every run of arenac,
 * and mapping and relocating them cost more than half a millisecond per
 * process (DenseNet-121's whole run is about twenty), though most runs
 * draw nothing.  So arenac is built against Graphviz's headers only, and
 * the picture writers load libgvc (by the soname found at build time,
 * AR_GVC_SONAME) the first time they run, through ar_gv_load; every
 * Graphviz function and object they use is reached through the table
 * ar_gv() returns.
 */
#ifndef ARENAC_GVLOAD_H
#define ARENAC_GVLOAD_H

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "graph.h"

/* The Graphviz functions the writers call. */
#define AR_GV_FUNCS(X) \
	X(agattr) X(agclose) X(agedge) X(agfstnode) X(agget) X(aghtmlstr) \
	X(agnode) X(agnxtnode) X(agopen) X(agsafeset) X(agseterrf) \
	X(agstrdup) X(agstrdup_html) X(agstrfree) X(agsubg) X(agwrite) \
	X(agxset) X(gvContext) X(gvFreeLayout) X(gvLayout) X(gvRender)

/* Members named as the symbols, typed by Graphviz's own declarations. */
typedef struct ArGvLib {
#define AR_GV_MEMBER(f) __typeof__(f) *f;
	AR_GV_FUNCS(AR_GV_MEMBER)
#undef AR_GV_MEMBER
	Agdesc_t Agdirected, Agundirected;
	Agiddisc_t AgIdDisc;        /* cgraph's default ID discipline */
} ArGvLib;

/*
 * Loads Graphviz once per process (it stays loaded).  Fails with exit 1
 * and a message naming path, the picture asked for, when the library or
 * one of the symbols is missing.
 */
int ar_gv_load(const char *path, ArError *err);

/* The table; only after ar_gv_load succeeded (asserted). */
const ArGvLib *ar_gv(void);

#endif
