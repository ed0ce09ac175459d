/*
 * dsa_label.h — the labelling search of the layer split (dsa_label.c),
 * shared with dsa_layers.c only.  Private to planner/.
 */
#ifndef ARENAC_DSA_LABEL_H
#define ARENAC_DSA_LABEL_H

#include <stdbool.h>
#include <stddef.h>

#include "dsa_impl.h"

/* Units (blocks or buffers) to label 1, bottom, or 2, top: the tables
 * (ar_dsa_label_tables()), then the search's state. */
typedef struct {
	int n, m;               /* units (blocks or buffers), spans */
	const ArBuf *b;
	int *slo, *shi;         /* spans of each unit */
	int *order;             /* from the pivot out (ar_dsa_label_pivot()) */
	int64_t *load;          /* bytes live over each span */
	int64_t *lb, *lt;       /* of them, labelled bottom / top */
	uint64_t *zob;          /* a random key per unit */
	int *live, *lstart;     /* the units labelled before depth q that
				   key its state: live[lstart[q] ..
				   lstart[q + 1]) (ar_dsa_label_pivot()) */
	int *pos;               /* pos[order[q]] = q */
	int pivot;              /* the span ending at the cut */
	int *below, *above;     /* during a search: the last span at or
				   before each span, the first at or after
				   it, that the layers fill exactly (-1, m:
				   none) */
	uint64_t *why[2];       /* during a search: two blame sets */
	char *keyed;            /* depth q keys a state (see
				   ar_dsa_label_pivot()) */
	int *spanned, *sstart;  /* units live over span k:
				   spanned[sstart[k] .. sstart[k + 1]) */
	char *lab;              /* 0 none, 1 bottom, 2 top */
	uint64_t *memo;         /* open addressing, 0: empty */
	size_t nmemo, slots;    /* used, and a power of two */
	int64_t *es, *ee;       /* bytes starting, ending at each boundary */
	int64_t *t;             /* the time of each boundary */
	int64_t cap[3];         /* the heights of [1] bottom, [2] top */
	const ArBuf *mb;        /* the buffers the units are made of */
	const int *mof;         /* mb[j] is part of unit mof[j] (NULL: j) */
	int nmb;
	char *bar;              /* per unit: 1 no bottom, 2 no top label */
	const char *phase;      /* each unit's label to try first (or NULL) */
	int *grp;               /* the class of each unit's ties, its hull
				   glo..ghi (spans; ar_dsa_label_ties(); NULL:
				   none, each unit alone) */
	int *glo, *ghi;
	int64_t tied;           /* the load the ties were found at */
	int *lead;              /* the first unit of each one's class in
				   the order: it labels the class */
	int *mem, *mstart;      /* the class of lead i: mem[mstart[i] ..
				   mstart[i + 1]) (empty for the others) */
	ArBudget *work;
} ArLabel;

/* The tables for the units u[0..nu) made of the buffers mb[0..nmb). */
void ar_dsa_label_tables(ArLabel *s, const ArBuf *u, int nu,
			 const ArBuf *mb, const int *mof, int nmb,
			 ArBudget *work);
void ar_dsa_label_free(ArLabel *s);

/* Ties units that every labelling whose heights add up to target keeps
 * in one layer, or (level) that a perfect packing with holes does
 * (dsa_ties.c); the search then labels them at once.  Due after the
 * tables, before ar_dsa_label_pivot(); s->cap[1] + s->cap[2] must be
 * target in every search after it. */
void ar_dsa_label_ties(ArLabel *s, int64_t target, bool level,
		       ArBudget *work);

/* Bars units from the bottom layer across time cut, from the top one
 * across top[0..ntop). */
void ar_dsa_label_bar(ArLabel *s, int64_t cut, const int64_t *top,
		      int ntop, ArBudget *work);

/* Orders the units from time cut (a boundary of their spans) out; due
 * before each ar_dsa_label(). */
void ar_dsa_label_pivot(ArLabel *s, int64_t cut, ArBudget *work);

/* Labels every unit within s->cap, first label first (or s->phase);
 * true when it did, within s->work. */
bool ar_dsa_label(ArLabel *s, int first);

#endif
