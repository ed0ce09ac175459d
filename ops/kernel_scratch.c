/*
 * kernel_scratch.c — a kernel library's own workspace per op, read from
 * a small table (--kernel-scratch FILE), so that the planner gives each
 * such step those bytes of the arena for its step alone, as it does for
 * the reference runtime's kernels (ops/scratch.c; planner/workspace.c).
 *
 * One line per op, `Op: EXPR`, the op after its domain when that is not
 * ONNX's (com.microsoft.QGemm); # starts a comment.  EXPR is integer
 * arithmetic (+ - * / % and parentheses, / and % truncating) over the
 * node's shapes:
 *
 *   N C_in H_in W_in      input 0's dims 0..3
 *   C_out H_out W_out     output 0's dims 1..3
 *                         (a channels-last step of --layout nhwc, in
 *                         AR_NHWC_DOMAIN: the same names, C at dim 3
 *                         and H, W at 1, 2)
 *   kH kW                 kernel_shape (given, or W's dims: its default)
 *   group                 group (default 1)
 *   inJ[D] outJ[D]        dim D of input or output J
 *   elem                  bytes of one element of input 0
 *
 * CMSIS-NN's arm_convolve_s8_get_buffer_size (Source/ConvolutionFunctions/
 * arm_convolve_get_buffer_sizes_s8.c, without MVE) is
 * 2 * align4(C_in * kH * kW) int16s: `QLinearConv: 4 * ((C_in * kH * kW +
 * 3) / 4 * 4)`.  The table's value replaces the op table's own for that
 * op: the library's kernel runs there, not the reference runtime's.  A
 * line for the ONNX op also covers its channels-last variant (CMSIS-NN's
 * kernels are channels-last ones); a line naming the variant
 * (com.ms.internal.nhwc.QLinearConv) covers it alone.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

typedef struct Entry {
	char *domain, *op, *expr;
	int line;
} Entry;

struct ArKernelScratch {
	char *path;
	Entry *v;
	int n;
};

/* The parser's state; n NULL checks syntax and names only. */
typedef struct Eval {
	const char *s, *err;
	const ArGraph *g;
	const ArNode *n;
	char what[96];          /* what failed, for the message */
} Eval;

static void skip(Eval *e)
{
	while (*e->s == ' ' || *e->s == '\t')
		e->s++;
}

static bool fail(Eval *e, const char *why)
{
	if (!e->err)
		e->err = why;
	return false;
}

static bool dim(Eval *e, bool out, int j, int d, int64_t *v)
{
	const ArTensor *t;
	int id;

	if (!e->n)
		return *v = 1, true;
	id = out ? (j < e->n->noutputs ? e->n->outputs[j] : -1) :
	     (j < e->n->nexplicit ? e->n->inputs[j] : -1);
	snprintf(e->what, sizeof e->what, "%s %d dim %d", out ? "output" :
		 "input", j, d);
	if (id < 0)
		return fail(e, "the node has no such operand");
	t = &e->g->tensors[id];
	if (t->rank <= d || t->dims[d] < 0)
		return fail(e, "the operand has no such dim known");
	*v = t->dims[d];
	return true;
}

/* kernel_shape[k], given or its default, or group. */
static bool attr(Eval *e, const char *name, int k, int64_t *v)
{
	const ArAttr *a;
	ArAttr *d = NULL;
	int nd = 0;
	bool ok = false;

	if (!e->n)
		return *v = 1, true;
	snprintf(e->what, sizeof e->what, "%s", name);
	a = ar_attr(e->n, name);
	if (!a) {
		nd = ar_attr_defaults(e->g, e->n, &d);
		for (int i = 0; i < nd && !a; i++)
			if (!strcmp(d[i].name, name))
				a = &d[i];
	}
	if (a && a->type == AR_ATTR_INT && k == 0) {
		*v = a->i;
		ok = true;
	} else if (a && a->type == AR_ATTR_INTS && k < a->nints) {
		*v = a->ints[k];
		ok = true;
	}
	for (int i = 0; i < nd; i++) {
		free(d[i].s);
		free(d[i].ints);
	}
	free(d);
	return ok || fail(e, "the node has no such attribute value");
}

static bool var(Eval *e, int64_t *v)
{
	static const struct {
		const char *name;
		bool out;
		int d;
	} dims[] = {{"N", false, 0}, {"C_in", false, 1}, {"H_in", false, 2},
		    {"W_in", false, 3}, {"C_out", true, 1}, {"H_out", true, 2},
		    {"W_out", true, 3}};
	/* [N, C, H, W] index to [N, H, W, C]'s. */
	static const int last[4] = {0, 3, 1, 2};
	bool cl = e->n && !strcmp(e->n->domain, AR_NHWC_DOMAIN);
	char name[32];
	size_t len = 0;

	while ((isalnum((unsigned char)*e->s) || *e->s == '_') &&
	       len + 1 < sizeof name)
		name[len++] = *e->s++;
	name[len] = 0;
	for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
		if (!strcmp(name, dims[i].name))
			return dim(e, dims[i].out, 0,
				   cl ? last[dims[i].d] : dims[i].d, v);
	if (!strcmp(name, "kH") || !strcmp(name, "kW"))
		return attr(e, "kernel_shape", name[1] == 'W', v);
	if (!strcmp(name, "group")) {
		if (!e->n || ar_attr(e->n, "group"))
			return attr(e, "group", 0, v);
		return *v = 1, true;
	}
	if (!strcmp(name, "elem")) {
		if (e->n && (e->n->nexplicit < 1 || e->n->inputs[0] < 0))
			return fail(e, "the node has no input 0");
		*v = e->n ? (int64_t)ar_dtype_size(
			e->g->tensors[e->n->inputs[0]].dtype) : 1;
		return true;
	}
	if ((!strncmp(name, "in", 2) || !strncmp(name, "out", 3)) &&
	    *e->s == '[') {
		bool out = name[0] == 'o';
		char *end;
		long j = strtol(name + (out ? 3 : 2), &end, 10), d;
		if (*end || end == name + (out ? 3 : 2) || j < 0 || j > 1000) {
			snprintf(e->what, sizeof e->what, "%s", name);
			return fail(e, "unknown name");
		}
		d = strtol(e->s + 1, &end, 10);
		if (end == e->s + 1 || *end != ']' || d < 0 || d >= AR_MAX_RANK)
			return fail(e, "a dim is inJ[D] or outJ[D], D a number");
		e->s = end + 1;
		return dim(e, out, (int)j, (int)d, v);
	}
	snprintf(e->what, sizeof e->what, "%s", name);
	return fail(e, "unknown name");
}

static bool sum(Eval *e, int64_t *v);

static bool primary(Eval *e, int64_t *v)
{
	skip(e);
	if (*e->s == '(') {
		e->s++;
		if (!sum(e, v))
			return false;
		skip(e);
		if (*e->s != ')')
			return fail(e, "')' expected");
		e->s++;
		return true;
	}
	if (isdigit((unsigned char)*e->s)) {
		char *end;
		long long x = strtoll(e->s, &end, 10);
		if (x > INT32_MAX)
			return fail(e, "a number past 2^31");
		*v = x;
		e->s = end;
		return true;
	}
	if (isalpha((unsigned char)*e->s) || *e->s == '_')
		return var(e, v);
	return fail(e, "a number, a name or '(' expected");
}

/* *v op r, the product checked; false with the reason when it fails. */
static bool apply(Eval *e, char op, int64_t *v, int64_t r)
{
	if (op == '*')
		return ar_mul64(*v, r, v) || fail(e, "the bytes overflow");
	if (op == '+' || op == '-') {
		if (r > INT64_MAX / 4 || r < -INT64_MAX / 4 ||
		    *v > INT64_MAX / 4 || *v < -INT64_MAX / 4)
			return fail(e, "the bytes overflow");
		*v = op == '+' ? *v + r : *v - r;
		return true;
	}
	if (r == 0)     /* a check of the syntax has every name 1 */
		return e->n ? fail(e, "division by zero") : true;
	*v = op == '/' ? *v / r : *v % r;
	return true;
}

/* Level 0 is a sum of level-1 terms, level 1 a product of primaries. */
static bool level(Eval *e, int64_t *v, int lv)
{
	static const char *const ops[] = {"+-", "*/%"};

	if (!(lv ? primary(e, v) : level(e, v, 1)))
		return false;
	for (;;) {
		int64_t r;
		char op;
		skip(e);
		op = *e->s;
		if (!op || !strchr(ops[lv], op))
			return true;
		e->s++;
		if (!(lv ? primary(e, &r) : level(e, &r, 1)) ||
		    !apply(e, op, v, r))
			return false;
	}
}

static bool sum(Eval *e, int64_t *v)
{
	return level(e, v, 0);
}

static bool evaluate(Eval *e, int64_t *v)
{
	if (!sum(e, v))
		return false;
	skip(e);
	return *e->s ? fail(e, "unexpected text after the expression") :
	       true;
}

static char *trim(char *s)
{
	char *end;
	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = 0;
	return s;
}

void ar_kernel_scratch_free(ArKernelScratch *k)
{
	if (!k)
		return;
	for (int i = 0; i < k->n; i++) {
		free(k->v[i].domain);
		free(k->v[i].op);
		free(k->v[i].expr);
	}
	free(k->v);
	free(k->path);
	free(k);
}

int ar_kernel_scratch_load(const char *path, ArKernelScratch **out,
			   ArError *err)
{
	FILE *f = fopen(path, "r");
	ArKernelScratch *k;
	char buf[1024];
	int line = 0;

	*out = NULL;
	if (!f)
		return ar_fail(err, AR_EXIT_USAGE, "%s: cannot read it", path);
	k = ar_xcalloc(1, sizeof *k);
	k->path = ar_xstrdup(path);
	while (fgets(buf, sizeof buf, f)) {
		char *hash = strchr(buf, '#'), *colon, *op, *dot;
		Eval e = {0};
		int64_t v;
		Entry *x;

		line++;
		if (hash)
			*hash = 0;
		op = trim(buf);
		if (!*op)
			continue;
		colon = strchr(op, ':');
		if (!colon) {
			fclose(f);
			ar_kernel_scratch_free(k);
			return ar_fail(err, AR_EXIT_USAGE, "%s: line %d: want "
				       "'Op: EXPR'", path, line);
		}
		*colon = 0;
		e.s = trim(colon + 1);
		if (!evaluate(&e, &v) || !*trim(op)) {
			fclose(f);
			ar_kernel_scratch_free(k);
			return ar_fail(err, AR_EXIT_USAGE, "%s: line %d: %s%s%s",
				       path, line, e.what, e.what[0] ? ": " : "",
				       e.err ? e.err : "no op named");
		}
		k->v = ar_xrealloc(k->v, (size_t)(k->n + 1) * sizeof *k->v);
		x = &k->v[k->n++];
		op = trim(op);
		dot = strrchr(op, '.');
		x->op = ar_xstrdup(dot ? dot + 1 : op);
		if (dot)
			*dot = 0;
		x->domain = ar_xstrdup(dot ? op : "");
		x->expr = ar_xstrdup(trim(colon + 1));
		x->line = line;
	}
	fclose(f);
	*out = k;
	return AR_OK;
}

int ar_kernel_scratch_bytes(const ArKernelScratch *k, const ArGraph *g,
			    const ArNode *n, int64_t *bytes, ArError *err)
{
	const char *d = ar_default_domain(n->domain) ? "" : n->domain;
	bool cl = !strcmp(n->domain, AR_NHWC_DOMAIN);

	*bytes = -1;
	for (int i = k->n - 1; i >= 0; i--) {
		const Entry *x = &k->v[i];
		Eval e = {x->expr, NULL, g, n, ""};
		if (strcmp(x->op, n->op) ||
		    (strcmp(x->domain, d) && !(cl && !x->domain[0])))
			continue;
		if (!evaluate(&e, bytes) || *bytes < 0)
			return ar_fail(err, AR_EXIT_MODEL, "%s: line %d: %s at "
				       "node '%s': %s%s%s", k->path, x->line,
				       x->op, n->name, e.what,
				       e.what[0] ? ": " : "",
				       e.err ? e.err : "the bytes are below 0");
		return AR_OK;
	}
	return AR_OK;
}
