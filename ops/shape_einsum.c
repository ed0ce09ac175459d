/*
 * shape_einsum.c — Einsum: the equation's parser, the output shape and
 * the FLOP count (which needs the same parse, so it lives here rather
 * than in flops.c).
 *
 * The rules are numpy's, which ONNX's reference follows: a term is labels
 * (a-z, A-Z) with at most one "..." standing for the dims the labels do
 * not name; the same label has one size everywhere, except that a size 1
 * broadcasts; the "..." dims of all operands broadcast together (numpy
 * rules, right-aligned).  Without "->" the output is the "..." dims, then
 * the labels that occur once, in ASCII order (upper case first).  With an
 * explicit output, operands with "..." dims need "..." there too.
 * Spaces are ignored.
 */
#include <string.h>

#include "infer_ops.h"

#define NLABELS 52

typedef struct Term {
	int n;                      /* labels */
	int label[AR_MAX_RANK];     /* 0..51 */
	int ell;                    /* labels before "...", -1: no "..." */
} Term;

typedef struct Einsum {
	int nterms;                 /* inputs */
	Term in[AR_MAX_RANK], out;
	bool explicit_out;
	int64_t size[NLABELS];      /* -1: not seen */
	int count[NLABELS];         /* occurrences over the inputs */
	int ell_rank;
	int64_t ell_dims[AR_MAX_RANK];
} Einsum;

static int label_of(char ch)
{
	if (ch >= 'a' && ch <= 'z')
		return 26 + ch - 'a';
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	return -1;
}

/* Parses the term s[0, len) (spaces already gone). */
static int parse_term(InferCtx *c, const ArNode *n, const char *s, int len,
		      Term *t)
{
	t->n = 0;
	t->ell = -1;
	for (int i = 0; i < len; i++) {
		int l = label_of(s[i]);
		if (s[i] == '.') {
			if (t->ell >= 0 || i + 3 > len ||
			    strncmp(s + i, "...", 3))
				return ar_node_fail(c, n, "equation: a '.' "
						    "that is not the one '...' "
						    "of a term");
			t->ell = t->n;
			i += 2;
			continue;
		}
		if (l < 0)
			return ar_node_fail(c, n, "equation: unexpected '%c' "
					    "in a term", s[i]);
		if (t->n == AR_MAX_RANK)
			return ar_node_fail(c, n, "equation: a term names more "
					    "than %d axes", AR_MAX_RANK);
		t->label[t->n++] = l;
	}
	return AR_OK;
}

/* Equation without spaces, split into terms. */
static int parse(InferCtx *c, const ArNode *n, Einsum *e)
{
	const char *eq = ar_attr_str(n, "equation", NULL);
	char s[1024];
	int len = 0, start = 0, rc;
	const char *arrow;

	if (!eq)
		return ar_node_fail(c, n, "attribute 'equation' is missing");
	if (strlen(eq) >= sizeof s)
		return ar_node_fail(c, n, "equation longer than %zu characters",
				    sizeof s - 1);
	for (const char *p = eq; *p; p++)
		if (*p != ' ')
			s[len++] = *p;
	s[len] = 0;
	arrow = strstr(s, "->");
	e->explicit_out = arrow != NULL;
	if (arrow && (rc = parse_term(c, n, arrow + 2,
				      (int)strlen(arrow + 2), &e->out)))
		return rc;
	if (arrow)
		len = (int)(arrow - s);
	e->nterms = 0;
	for (int i = 0; i <= len; i++) {
		if (i < len && s[i] != ',')
			continue;
		if (e->nterms == AR_MAX_RANK)
			return ar_node_fail(c, n, "equation: more than %d "
					    "operands", AR_MAX_RANK);
		if ((rc = parse_term(c, n, s + start, i - start,
				     &e->in[e->nterms++])))
			return rc;
		start = i + 1;
	}
	if (e->nterms != n->nexplicit)
		return ar_node_fail(c, n, "equation has %d operands, the node "
				    "%d inputs", e->nterms, n->nexplicit);
	return AR_OK;
}

/* Label sizes and the broadcast "..." dims from the operands' shapes. */
static int bind(InferCtx *c, const ArNode *n, Einsum *e)
{
	int rc;

	for (int l = 0; l < NLABELS; l++)
		e->size[l] = -1, e->count[l] = 0;
	e->ell_rank = 0;
	for (int j = 0; j < e->nterms; j++) {
		const Term *t = &e->in[j];
		ArTensor *x;
		int extra;
		if ((rc = ar_need(c, n, j, &x)))
			return rc;
		extra = x->rank - t->n;
		if (extra < 0 || (t->ell < 0 && extra))
			return ar_node_fail(c, n, "term %d names %d axes, input "
					    "'%s' has rank %d", j, t->n,
					    x->name, x->rank);
		for (int k = 0; k < t->n; k++) {
			int l = t->label[k];
			int64_t d = x->dims[t->ell >= 0 && k >= t->ell ?
					    k + extra : k];
			e->count[l]++;
			if (e->size[l] < 0 || e->size[l] == 1)
				e->size[l] = d;
			else if (d != 1 && d != e->size[l])
				return ar_node_fail(c, n, "label '%c' is %lld "
						    "in '%s' but %lld before",
						    l < 26 ? 'A' + l :
						    'a' + l - 26, (long long)d,
						    x->name,
						    (long long)e->size[l]);
		}
		if (t->ell >= 0 &&
		    (rc = ar_broadcast2(c, n, e->ell_rank, e->ell_dims, extra,
					x->dims + t->ell, &e->ell_rank,
					e->ell_dims)))
			return rc;
	}
	return AR_OK;
}

/* The implicit output: "..." dims, then labels seen once, ASCII order. */
static void implicit_out(Einsum *e)
{
	Term *o = &e->out;
	o->n = 0;
	o->ell = e->ell_rank > 0 ? 0 : -1;
	for (int l = 0; l < NLABELS && o->n < AR_MAX_RANK; l++)
		if (e->count[l] == 1)
			o->label[o->n++] = l;
}

static int einsum(InferCtx *c, const ArNode *n, Einsum *e)
{
	int rc;
	bool seen[NLABELS] = {false};

	if ((rc = parse(c, n, e)) || (rc = bind(c, n, e)))
		return rc;
	if (!e->explicit_out) {
		implicit_out(e);
		return AR_OK;
	}
	for (int k = 0; k < e->out.n; k++) {
		int l = e->out.label[k];
		if (!e->count[l] || seen[l])
			return ar_node_fail(c, n, "output label '%c' is %s",
					    l < 26 ? 'A' + l : 'a' + l - 26,
					    seen[l] ? "repeated" :
					    "in no input");
		seen[l] = true;
	}
	if (e->ell_rank > 0 && e->out.ell < 0)
		return ar_node_fail(c, n, "the output needs '...' for the "
				    "%d broadcast axes", e->ell_rank);
	return AR_OK;
}

int ar_shape_einsum(InferCtx *c, ArNode *n)
{
	Einsum e;
	int64_t dims[AR_MAX_RANK];
	int rank = 0, rc = einsum(c, n, &e);
	const Term *o = &e.out;

	if (rc)
		return rc;
	if (o->n + (o->ell >= 0 ? e.ell_rank : 0) > AR_MAX_RANK)
		return ar_node_fail(c, n, "output rank above %d", AR_MAX_RANK);
	for (int k = 0; k <= o->n; k++) {
		if (k == o->ell)
			for (int i = 0; i < e.ell_rank; i++)
				dims[rank++] = e.ell_dims[i];
		if (k < o->n)
			dims[rank++] = e.size[o->label[k]];
	}
	ar_set_shape(ar_out(c, n, 0), ar_in(c, n, 0)->dtype, rank, dims);
	return AR_OK;
}

/*
 * Every combination of label values and "..." index is one term of the
 * sum: a product of the operands (nterms - 1 multiplies) and an add.
 */
int64_t ar_flops_einsum(const ArGraph *g, const ArNode *n)
{
	InferCtx c = {.g = (ArGraph *)g};
	ArError err;
	Einsum e;
	int64_t terms = 1, f;

	c.err = &err;
	if (einsum(&c, n, &e))
		return 0;
	for (int l = 0; l < NLABELS; l++)
		if (e.count[l] && !ar_mul64(terms, e.size[l], &terms))
			return INT64_MAX;
	for (int i = 0; i < e.ell_rank; i++)
		if (!ar_mul64(terms, e.ell_dims[i], &terms))
			return INT64_MAX;
	return ar_mul64(terms, e.nterms, &f) ? f : INT64_MAX;
}
