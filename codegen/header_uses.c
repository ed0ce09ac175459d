/*
 * header_uses.c — the ops a plan runs, as one macro each:
 *
 *     #define PREFIX_USES_Conv 1
 *     #define PREFIX_USES_com_microsoft_Gelu 1
 *
 * for the steps of the model and of every planned subgraph, noop steps
 * included (the runtime checks their op too).  The runtime's resolver
 * (runtime/optable.c built with this header) keeps only these ops'
 * kernels, so that a firmware links what its model needs and no more,
 * as TFLite Micro's MicroMutableOpResolver does by hand.  The name is the
 * op's, after its domain when that is not ONNX's own, made an identifier
 * (ar_c_ident): the names runtime/optable.h gives its entries.
 */
#include <stdlib.h>
#include <string.h>

#include "header_parts.h"
#include "sanitize.h"

typedef struct {
	char **v;
	int n, cap;
} Names;

static void add_steps(const Hdr *h, void *ctx)
{
	Names *u = ctx;
	for (int s = 0; s < h->p->nsteps; s++) {
		const ArNode *n = hdr_step_node(h, s);
		const char *d = n->domain;
		char *full, *id;
		int seen = 0;
		if (!d || !*d || !strcmp(d, "ai.onnx"))
			d = "";
		full = ar_xmalloc(strlen(d) + strlen(n->op) + 2);
		strcpy(full, d);
		if (*d)
			strcat(full, ".");
		strcat(full, n->op);
		id = ar_c_ident(full);
		free(full);
		for (int i = 0; i < u->n && !seen; i++)
			seen = !strcmp(u->v[i], id);
		if (seen) {
			free(id);
			continue;
		}
		if (u->n == u->cap) {
			u->cap = u->cap ? 2 * u->cap : 16;
			u->v = ar_xrealloc(u->v, (size_t)u->cap * sizeof *u->v);
		}
		u->v[u->n++] = id;
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void hdr_write_uses(const Hdr *h)
{
	Names u = {0};

	add_steps(h, &u);
	hdr_each_sub(h, add_steps, &u);
	if (u.n)        /* a plan of no steps has no list to sort */
		qsort(u.v, (size_t)u.n, sizeof *u.v, by_name);
	hdr_tmpl(h, "/* The ops the plan runs (runtime/optable.c keeps only "
		 "their kernels). */\n");
	for (int i = 0; i < u.n; i++)
		fprintf(h->f, "#define %s_USES_%s 1\n", h->up, u.v[i]);
	fputc('\n', h->f);
	ar_strv_free(u.v, u.n);
}
