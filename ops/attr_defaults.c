/*
 * attr_defaults.c — the ONNX defaults of the attributes a node leaves
 * out, as attributes: the op table's .defaults (table.c, ops.h
 * ArAttrDefault) made values for this node's version and shapes.
 *
 * The header writes them beside the node's own (codegen/header_ops.c),
 * as TFLite Micro's flatbuffer gives every builtin option a value, so
 * that a kernel library reads strides or epsilon without knowing ONNX's
 * defaults.  Names are the table's literals, which live as long as the
 * program.
 */
#include <stdlib.h>
#include <string.h>

#include "ops.h"

/* The default of d's name that n's opset takes: the last of that name
 * whose since is at most the opset (every one when it is unknown). */
static bool applies(const ArAttrDefault *d, int64_t opset)
{
	if (opset > 0 && d->since > opset)
		return false;
	for (const ArAttrDefault *e = d + 1; e->name; e++)
		if (!strcmp(e->name, d->name) &&
		    (opset <= 0 || e->since <= opset))
			return false;
	return true;
}

static bool given(const ArNode *n, const char *name)
{
	const ArAttr *a = ar_attr(n, name);
	return a && !(a->type == AR_ATTR_STRING && a->s &&
		      !strcmp(a->s, "NOTSET"));
}

/* An INTS default's values; false while the shapes are unknown. */
static bool ints_of(const ArGraph *g, const ArNode *n, const ArAttrDefault *d,
		    ArAttr *a)
{
	const ArTensor *t;
	int src = d->from > 0 ? d->from : 0;

	if (src >= n->nexplicit || n->inputs[src] < 0)
		return false;
	t = &g->tensors[n->inputs[src]];
	if (t->rank < 3)
		return false;
	a->nints = d->from > 0 ? t->rank - 2 : d->per_axis * (t->rank - 2);
	a->ints = ar_xmalloc((size_t)a->nints * sizeof *a->ints);
	for (int i = 0; i < a->nints; i++)
		a->ints[i] = d->from > 0 ? t->dims[2 + i] : (int64_t)d->v;
	for (int i = 0; i < a->nints; i++)
		if (a->ints[i] < 0) {   /* a dim not known */
			free(a->ints);
			a->ints = NULL;
			return false;
		}
	return true;
}

int ar_attr_defaults(const ArGraph *g, const ArNode *n, ArAttr **out)
{
	const ArOpDef *def = ar_op_of(n);
	const ArAttrDefault *list = def ? def->defaults : NULL;
	int k = 0, cap = 0;

	*out = NULL;
	for (const ArAttrDefault *d = list; d && d->name; d++)
		cap++;
	if (!cap)
		return 0;
	*out = ar_xcalloc((size_t)cap, sizeof **out);
	for (const ArAttrDefault *d = list; d->name; d++) {
		ArAttr *a = &(*out)[k];
		memset(a, 0, sizeof *a);
		if (ar_attr(n, d->name) || !applies(d, n->opset) ||
		    (d->unless && given(n, d->unless)))
			continue;
		a->name = d->name;
		a->type = d->type;
		switch (d->type) {
		case AR_ATTR_INT: a->i = (int64_t)d->v; break;
		case AR_ATTR_FLOAT: a->f = (float)d->v; break;
		case AR_ATTR_STRING: a->s = ar_xstrdup(d->s); break;
		default:
			if (!ints_of(g, n, d, a))
				continue;
		}
		k++;
	}
	if (!k) {
		free(*out);
		*out = NULL;
	}
	return k;
}
