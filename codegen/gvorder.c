/*
 * gvorder.c — the dataflow picture's clusters in the order they are made.
 *
 * cgraph's default ID discipline gives a named object the address of its
 * interned name as its ID, and a graph lists its subgraphs in ID order:
 * the clusters of a --dot file (and their groups in an SVG) came out in
 * the order of heap addresses, the same bytes for the same binary but
 * reshuffled by any change in how arenac allocates.  Here named graphs
 * get the IDs 2, 4, 6, ... in the order they are made; every other object
 * keeps the default discipline (its anonymous IDs are odd, so the two
 * never meet).  The names are interned with agstrdup, as the default's
 * are: cgraph reads the flags in front of a name it is given (to tell an
 * HTML label), so a plain copy would be read past its start.
 */
#include "gvutil.h"

#include <stdlib.h>
#include <string.h>

typedef struct Ids {
	Agraph_t *root;
	void *dflt;                 /* the default discipline's state */
	char **names;               /* names[k]: the graph with ID 2 (k + 1) */
	size_t n;
} Ids;

static const Agiddisc_t *dflt(void)
{
	return &ar_gv()->AgIdDisc;
}

static bool ours(int objtype, IDTYPE id)
{
	return objtype == AGRAPH && id % 2 == 0;
}

static void *ids_open(Agraph_t *g, Agdisc_t *disc)
{
	Ids *s = ar_xcalloc(1, sizeof *s);
	s->root = g;
	s->dflt = dflt()->open(g, disc);
	return s;
}

static long ids_map(void *state, int objtype, char *str, IDTYPE *id,
		    int createflag)
{
	Ids *s = state;
	if (objtype != AGRAPH || !str)
		return dflt()->map(s->dflt, objtype, str, id, createflag);
	for (size_t k = 0; k < s->n; k++)
		if (!strcmp(s->names[k], str)) {
			*id = 2 * (k + 1);
			return 1;
		}
	if (!createflag)
		return 0;
	s->names = ar_xrealloc(s->names, (s->n + 1) * sizeof *s->names);
	s->names[s->n++] = ar_gv()->agstrdup(s->root, str);
	*id = 2 * s->n;
	return 1;
}

static long ids_alloc(void *state, int objtype, IDTYPE id)
{
	return dflt()->alloc(((Ids *)state)->dflt, objtype, id);
}

static void ids_free(void *state, int objtype, IDTYPE id)
{
	if (!ours(objtype, id))
		dflt()->free(((Ids *)state)->dflt, objtype, id);
}

static char *ids_print(void *state, int objtype, IDTYPE id)
{
	const Ids *s = state;
	if (!ours(objtype, id))
		return dflt()->print(s->dflt, objtype, id);
	return s->names[id / 2 - 1];
}

static void ids_close(void *state)
{
	Ids *s = state;
	/* Before cgraph closes its string dictionary (agclose). */
	for (size_t k = 0; k < s->n; k++)
		ar_gv()->agstrfree(s->root, s->names[k]);
	dflt()->close(s->dflt);
	free(s->names);
	free(s);
}

static void ids_register(void *state, int objtype, void *obj)
{
	dflt()->idregister(((Ids *)state)->dflt, objtype, obj);
}

Agdisc_t *ar_gv_ordered(void)
{
	static Agiddisc_t ids = {ids_open, ids_map, ids_alloc, ids_free,
				 ids_print, ids_close, ids_register};
	/* Null members: cgraph's default memory and I/O disciplines. */
	static Agdisc_t disc = {NULL, &ids, NULL};
	return &disc;
}
