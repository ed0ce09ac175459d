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
 *
 * The same list, upper-cased, is the op enum (PREFIX_OP_CONV = 0, ...,
 * PREFIX_NUM_OPS), numbered densely in name order so that a kernel
 * library dispatches through an array of PREFIX_NUM_OPS functions, as
 * TFLite Micro's registrations are indexed; each step's op_code names
 * its value.  The numbers are the model's own: another model's header
 * numbers its ops afresh.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "header_parts.h"
#include "sanitize.h"

typedef struct {
	char **v;
	int n, cap;
} Names;

/* The op's name as an identifier, domain first unless ONNX's (malloc'd). */
static char *op_ident(const ArNode *n)
{
	const char *d = n->domain;
	char *full, *id;

	if (!d || !*d || !strcmp(d, "ai.onnx"))
		d = "";
	full = ar_xmalloc(strlen(d) + strlen(n->op) + 2);
	strcpy(full, d);
	if (*d)
		strcat(full, ".");
	strcat(full, n->op);
	id = ar_c_ident(full);
	free(full);
	return id;
}

static void add_steps(const Hdr *h, void *ctx)
{
	Names *u = ctx;
	for (int s = 0; s < h->p->nsteps; s++) {
		char *id = op_ident(hdr_step_node(h, s));
		int seen = 0;
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

void hdr_collect_ops(Hdr *h)
{
	Names u = {0};

	add_steps(h, &u);
	hdr_each_sub(h, add_steps, &u);
	if (u.n)        /* a plan of no steps has no list to sort */
		qsort(u.v, (size_t)u.n, sizeof *u.v, by_name);
	h->ops = u.v;
	h->nops = u.n;
}

void hdr_op_code(const Hdr *h, ArText *out, const ArNode *n)
{
	char *id = op_ident(n);
	char **at = bsearch(&id, h->ops, (size_t)h->nops, sizeof *h->ops,
			    by_name);

	assert(at);     /* every step's op was collected */
	hdr_macro(h, out, "OP_");
	ar_text_upper(out, *at);
	free(id);
}

void hdr_write_uses(const Hdr *h)
{
	hdr_tmpl(h, "/* The ops the plan runs (runtime/optable.c keeps only "
		 "their kernels). */\n");
	for (int i = 0; i < h->nops; i++)
		fprintf(h->f, "#define %s_USES_%s 1\n", h->up, h->ops[i]);
	hdr_tmpl(h, "/* The same ops numbered, for a kernel library's "
		 "dispatch (steps' op_code). */\ntypedef enum @_op {\n");
	for (int i = 0; i < h->nops; i++) {
		ArText out = ar_text_on(h->f);
		ar_text_puts(&out, "\t");
		hdr_macro(h, &out, "OP_");
		ar_text_upper(&out, h->ops[i]);
		ar_text_printf(&out, " = %d,\n", i);
		ar_text_close(&out);
	}
	fprintf(h->f, "\t%s_NUM_OPS = %d\n", h->up, h->nops);
	hdr_tmpl(h, "} @_op;\n\n");
}
