/*
 * gvload.c — loading Graphviz on first use (gvload.h).
 *
 * RTLD_GLOBAL because Graphviz's own plugins (layout engines, renderers),
 * which gvContext loads in turn, expect libgvc's and libcgraph's symbols
 * in the global scope, as when the program links them.  dlsym on libgvc's
 * handle also finds what its dependency libcgraph defines.  The handle is
 * never closed: Graphviz keeps state for the process (gvutil.h says why
 * its context is never freed).
 */
#include "gvload.h"

#include <assert.h>
#include <dlfcn.h>
#include <stddef.h>

_Static_assert(sizeof AR_GVC_SONAME > 1, "the Makefile found no soname "
	       "for libgvc (AR_GVC_SONAME)");

static ArGvLib lib;
static bool loaded;

/* The address of symbol name in handle h, or NULL with *missing set. */
static void *sym(void *h, const char *name, const char **missing)
{
	void *p = dlsym(h, name);
	if (!p && !*missing)
		*missing = name;
	return p;
}

int ar_gv_load(const char *path, ArError *err)
{
	const char *missing = NULL;
	const Agdesc_t *dir, *undir;
	const Agiddisc_t *ids;
	void *h;

	if (loaded)
		return AR_OK;
	h = dlopen(AR_GVC_SONAME, RTLD_NOW | RTLD_GLOBAL);
	if (!h)
		return ar_fail(err, AR_EXIT_USAGE, "%s: pictures need "
			       "Graphviz, which did not load: %s", path,
			       dlerror());
	/* POSIX's way to store dlsym's object pointer in a function
	 * pointer. */
#define AR_GV_LOAD(f) *(void **)&lib.f = sym(h, #f, &missing);
	AR_GV_FUNCS(AR_GV_LOAD)
#undef AR_GV_LOAD
	dir = sym(h, "Agdirected", &missing);
	undir = sym(h, "Agundirected", &missing);
	ids = sym(h, "AgIdDisc", &missing);
	if (missing)
		return ar_fail(err, AR_EXIT_USAGE, "%s: pictures need "
			       "Graphviz, and %s has no '%s'", path,
			       AR_GVC_SONAME, missing);
	lib.Agdirected = *dir;
	lib.Agundirected = *undir;
	lib.AgIdDisc = *ids;
	loaded = true;
	return AR_OK;
}

const ArGvLib *ar_gv(void)
{
	assert(loaded);
	return &lib;
}
