/*
 * params.c — what is trainable.
 *
 * A parameter is a float tensor of rank 1 or more that a step reads at an
 * input its op can differentiate, and that holds the model's weights: an
 * initializer, the value of a Constant node (or of a ConstantOfShape fill
 * of a stated shape, as models stripped of their weights have them), or a
 * constant folded from one by an op whose gradient only moves values (ar_grad_moves: Transpose,
 * Reshape, Gather, Concat, ...).  The last kind is the weight in another
 * layout: torch exports nn.Linear on 3-D input as MatMul(x, Transpose(W)),
 * which folding turns into one constant W^T, and that constant is what is
 * trained (its bytes are W's; W itself, read by no step, is neither stored
 * nor counted).  So a transform of a parameter costs no arena buffer and
 * nothing saved.  Scalars, integer and bool tensors and every other
 * folded constant (from shapes, comparisons, arithmetic: a causal mask's
 * additive bias, rotary tables computed from Range) never are parameters.
 *
 * Which parameters are trained: all of them, or with --trainable only
 * those one of its expressions matches (with --lora: the adapters, and
 * those --trainable matches); --freeze takes out those its
 * expressions match, and wins over --trainable.  An expression matches a
 * parameter when it matches its name or the name of a weight it is folded
 * from (so "qkv.weight" selects the folded W^T too).  Expressions are
 * POSIX extended, unanchored (use ^ and $); one that matches no parameter
 * is an error, as a typo would otherwise freeze or train the wrong set.
 *
 * --base-quant asks the same question before the model is built
 * (ar_train_left_frozen): it stores only the linears left frozen.
 *
 * Before those, the exporter's metadata (apply_meta) when present, and a
 * tie: a parameter folded by data movement from another parameter the
 * step also reads is that one (m->tied), counted once in the bill.
 */
#include "train.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ar_train_is_float(ArDType dt)
{
	return dt == AR_DT_FLOAT || dt == AR_DT_FLOAT16 ||
	       dt == AR_DT_BFLOAT16 || dt == AR_DT_DOUBLE;
}

enum { UNKNOWN, YES, NO };

/* Whether t is a value the model states: an initializer, or the output
 * of a Constant or ConstantOfShape (AR_OP_VALUE) whose inputs are stated
 * too; never one computed from a shape or by arithmetic. */
static bool stated(const ArGraph *g, int t, int depth)
{
	const ArTensor *x = &g->tensors[t];
	const ArNode *p;
	const ArOpDef *d;
	if (x->kind == AR_TK_WEIGHT)
		return true;
	if (x->kind != AR_TK_CONSTANT || x->producer < 0 || depth > 8)
		return x->kind == AR_TK_CONSTANT && x->producer < 0;
	p = &g->nodes[x->producer];
	d = ar_op_of(p);
	if (!d || !(d->flags & AR_OP_VALUE))
		return false;
	for (int j = 0; j < p->nexplicit; j++)
		if (p->inputs[j] >= 0 && !stated(g, p->inputs[j], depth + 1))
			return false;
	return true;
}

bool ar_train_holds_weights(const ArGraph *g, int t, char *memo)
{
	const ArTensor *x = &g->tensors[t];
	const ArNode *p;
	const ArGradRule *r;
	bool yes = false;

	if (memo[t] != UNKNOWN)
		return memo[t] == YES;
	memo[t] = NO;   /* a cycle cannot make it one */
	if (!ar_train_is_float(x->dtype) || x->rank < 1)
		return false;
	if (stated(g, t, 0))
		yes = true;
	else if (x->kind == AR_TK_CONSTANT) {
		p = &g->nodes[x->producer];
		r = ar_op_grad(p);
		for (int j = 0; !yes && j < p->nexplicit; j++)
			yes = p->inputs[j] >= 0 && ar_grad_moves(r, j) &&
			      ar_train_holds_weights(g, p->inputs[j], memo);
	}
	memo[t] = yes ? YES : NO;
	return yes;
}

/* A test of one name: a regular expression or a metadata list. */
typedef bool (*NameTest)(const char *name, const void *arg);

static bool regex_hit(const char *name, const void *re)
{
	return !regexec(re, name, 0, NULL, 0);
}

/* Whether name is one of the comma-separated names of list. */
static bool list_hit(const char *name, const void *list)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == n && !strncmp(p, name, n))
			return true;
		p += k + (e != NULL);
	}
	return false;
}

/* A test of one tensor of g. */
typedef bool (*TensorTest)(const ArGraph *g, int t, const void *arg);

/* Whether hit holds for a weight t is folded from, through ops that only
 * move values (memo: what ar_train_holds_weights found). */
static bool folded_from(const ArGraph *g, int t, TensorTest hit,
			const void *arg, const char *memo, int depth)
{
	const ArTensor *x = &g->tensors[t];
	const ArNode *p;
	if (x->kind != AR_TK_CONSTANT || x->producer < 0 || depth > 8)
		return false;
	p = &g->nodes[x->producer];
	for (int j = 0; j < p->nexplicit; j++) {
		int u = p->inputs[j];
		if (u >= 0 && memo[u] == YES && ar_grad_moves(ar_op_grad(p), j) &&
		    (hit(g, u, arg) ||
		     folded_from(g, u, hit, arg, memo, depth + 1)))
			return true;
	}
	return false;
}

typedef struct NameHit {
	NameTest hit;
	const void *arg;
} NameHit;

static bool name_hit(const ArGraph *g, int t, const void *arg)
{
	const NameHit *n = arg;
	return n->hit(g->tensors[t].name, n->arg);
}

/* Whether hit holds for t's name or that of a weight t is folded from. */
static bool matches(const ArGraph *g, int t, NameTest hit, const void *arg,
		    const char *memo)
{
	NameHit n = {hit, arg};
	return name_hit(g, t, &n) || folded_from(g, t, name_hit, &n, memo, 0);
}

/* The parameters: weights a step reads at a differentiable input. */
static void find_params(const ArTrainModel *m, char *memo, bool *is)
{
	const ArGraph *g = m->base;
	for (int i = 0; i <= m->nfwd; i++) {
		const ArNode *n = &g->nodes[i];
		const ArGradRule *r = ar_op_grad(n);
		if (!ar_is_step(g, i))
			continue;
		for (int j = 0; j < n->nexplicit; j++) {
			int t = n->inputs[j];
			if (t >= 0 && (!r || (j < 32 && (r->diff >> j & 1))) &&
			    ar_train_holds_weights(g, t, memo))
				is[t] = true;
		}
	}
}

/* Applies one option's expressions: selected[t] for the parameters any of
 * them matches; each must match one, but in a pipeline stage's graph,
 * which holds only some. */
static int select_by(const ArTrainModel *m, const char *opt,
		     const char *const *res, int n, const bool *is,
		     const char *memo, bool *selected, ArError *err)
{
	const ArGraph *g = m->base;
	for (int k = 0; k < n; k++) {
		regex_t re;
		char why[128];
		int rc = regcomp(&re, res[k], REG_EXTENDED | REG_NOSUB), hits = 0;
		if (rc) {
			regerror(rc, &re, why, sizeof why);
			regfree(&re);
			return ar_fail(err, AR_EXIT_USAGE, "%s '%s' is not a "
				       "regular expression: %s", opt, res[k],
				       why);
		}
		for (int t = 0; t < g->ntensors; t++)
			if (is[t] && matches(g, t, regex_hit, &re, memo)) {
				selected[t] = true;
				hits++;
			}
		regfree(&re);
		if (!hits && !m->spec.some_params)
			return ar_fail(err, AR_EXIT_USAGE, "%s '%s' matches no "
				       "parameter", opt, res[k]);
	}
	return AR_OK;
}

/* Every name of one metadata list must be a tensor of the graph (but in
 * a pipeline stage's graph, which holds only some). */
static int check_list(const ArTrainModel *m, const char *key,
		      const char *list, ArError *err)
{
	const ArGraph *g = m->base;
	for (const char *p = list; p && *p && !m->spec.some_params;) {
		const char *e = strchr(p, ',');
		int k = e ? (int)(e - p) : (int)strlen(p), t = 0;
		while (t < g->ntensors &&
		       (strncmp(g->tensors[t].name, p, (size_t)k) ||
			g->tensors[t].name[k]))
			t++;
		if (t == g->ntensors)
			return ar_fail(err, AR_EXIT_MODEL, "metadata %s names "
				       "'%.*s', which the graph lacks", key, k,
				       p);
		p += k + (e != NULL);
	}
	return AR_OK;
}

/*
 * The exporter's word (arenac.* metadata_props, scripts/torch_export.py)
 * when the model has it: a weight named in arenac.buffers, or in none of
 * arenac.trainable and arenac.frozen while those are stated, is no
 * parameter (a module buffer such as a rotary table or a causal mask);
 * one named in arenac.frozen is a frozen parameter (drop[t]).  A folded
 * weight answers for the weight it is folded from.
 */
static int apply_meta(const ArTrainModel *m, const char *memo, bool *is,
		      bool *drop, ArError *err)
{
	const ArGraph *g = m->base;
	const char *tr = g->meta_trainable, *fr = g->meta_frozen;
	const char *bu = g->meta_buffers;
	int rc;
	if ((rc = check_list(m, "arenac.trainable", tr, err)) ||
	    (rc = check_list(m, "arenac.frozen", fr, err)) ||
	    (rc = check_list(m, "arenac.buffers", bu, err)))
		return rc;
	for (int t = 0; t < g->ntensors; t++) {
		/* An adapter is --lora's, not the exporter's, to judge. */
		if (!is[t] || (m->spec.lora.rank && ar_lora_adapter(
						g->tensors[t].name)))
			continue;
		if ((bu && matches(g, t, list_hit, bu, memo)) ||
		    ((tr || fr) && !(tr && matches(g, t, list_hit, tr, memo)) &&
		     !(fr && matches(g, t, list_hit, fr, memo))))
			is[t] = false;
		else if (fr && matches(g, t, list_hit, fr, memo))
			drop[t] = true;
	}
	return AR_OK;
}

/* The tensor of g named by the k bytes at p, or -1. */
static int named(const ArGraph *g, const char *p, size_t k)
{
	for (int t = 0; t < g->ntensors; t++)
		if (!strncmp(g->tensors[t].name, p, k) && !g->tensors[t].name[k])
			return t;
	return -1;
}

/* "[4, 8]": t's dims. */
static const char *dims_of(const ArTensor *t, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "[");
	for (int i = 0; i < t->rank && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "",
				      (long long)t->dims[i]);
	if (n < cap)
		snprintf(buf + n, cap - n, "]");
	return buf;
}

/*
 * arenac.ties: groups of torch names sharing one Parameter (';' between
 * groups, ',' within), the first the graph's initializer.  The export
 * writes a tie once, so the other names are usually absent; one the graph
 * has as well (an exporter that wrote two copies) is that parameter again:
 * tie[t], counted once.  Two tensors of a group must hold the same
 * elements (a transposed copy does): otherwise they are no one Parameter,
 * AR_EXIT_MODEL.  The first name must be in the graph (but in a pipeline
 * stage's, which holds only some).
 */
static int apply_ties(const ArTrainModel *m, bool *tie, ArError *err)
{
	const ArGraph *g = m->base;
	for (const char *p = g->meta_ties; p && *p;) {
		const char *end = strchr(p, ';');
		size_t glen = end ? (size_t)(end - p) : strlen(p);
		int first = -1;
		for (const char *q = p; q < p + glen;) {
			const char *e = memchr(q, ',', (size_t)(p + glen - q));
			size_t k = e ? (size_t)(e - q) : (size_t)(p + glen - q);
			int t = named(g, q, k);
			char a[AR_MAX_RANK * 22], b[AR_MAX_RANK * 22];
			if (q == p && t < 0 && !m->spec.some_params)
				return ar_fail(err, AR_EXIT_MODEL, "metadata "
					       "arenac.ties names '%.*s', which "
					       "the graph lacks", (int)k, q);
			if (q == p)
				first = t;
			else if (t >= 0 && first >= 0 &&
				 ar_numel(&g->tensors[t]) !=
				 ar_numel(&g->tensors[first]))
				return ar_fail(err, AR_EXIT_MODEL, "metadata "
					       "arenac.ties ties '%s' %s to "
					       "'%s' %s: not the same number "
					       "of elements, so not one "
					       "Parameter", g->tensors[t].name,
					       dims_of(&g->tensors[t], a,
						       sizeof a),
					       g->tensors[first].name,
					       dims_of(&g->tensors[first], b,
						       sizeof b));
			else if (t >= 0 && first >= 0)
				tie[t] = true;
			q += k + (e != NULL);
		}
		p += glen + (end != NULL);
	}
	return AR_OK;
}

static bool is_buffer(const ArGraph *g, int t, const void *arg)
{
	const ArTrainModel *m = arg;
	return t < m->nbuffer && m->buffer[t];
}

/* A parameter of is[] (Same.is) of Same.numel elements. */
typedef struct Same {
	const bool *is;
	int64_t numel;
} Same;

static bool same_param(const ArGraph *g, int t, const void *arg)
{
	const Same *s = arg;
	return s->is[t] && ar_numel(&g->tensors[t]) == s->numel;
}

/* Whether one of the n expressions matches t (an expression that does
 * not compile matches nothing: ar_train_params reports it). */
static bool any_matches(const ArGraph *g, int t, const char *const *res,
			int n, const char *memo)
{
	bool hit = false;
	for (int k = 0; k < n && !hit; k++) {
		regex_t re;
		if (regcomp(&re, res[k], REG_EXTENDED | REG_NOSUB))
			continue;
		hit = matches(g, t, regex_hit, &re, memo);
		regfree(&re);
	}
	return hit;
}

bool ar_train_left_frozen(const ArTrainSpec *spec, const ArGraph *g, int t)
{
	char *memo = ar_xcalloc((size_t)g->ntensors + 1, 1);
	bool frozen;
	(void)ar_train_holds_weights(g, t, memo);
	frozen = (g->meta_frozen && matches(g, t, list_hit, g->meta_frozen,
					    memo)) ||
		 any_matches(g, t, spec->freeze, spec->nfreeze, memo) ||
		 ((spec->lora.rank || spec->ntrainable) &&
		  !any_matches(g, t, spec->trainable, spec->ntrainable, memo));
	free(memo);
	return frozen;
}

int ar_train_params(ArTrainModel *m, ArError *err)
{
	const ArGraph *g = m->base;
	size_t nt = (size_t)g->ntensors + 1;
	char *memo = ar_xcalloc(nt, 1);
	bool *is = ar_xcalloc(nt, sizeof *is);
	bool *keep = ar_xcalloc(nt, sizeof *keep);
	bool *drop = ar_xcalloc(nt, sizeof *drop);
	bool *tie = ar_xcalloc(nt, sizeof *tie);
	int rc;

	find_params(m, memo, is);
	rc = apply_meta(m, memo, is, drop, err);
	if (!rc)
		rc = apply_ties(m, tie, err);
	if (!rc)
		rc = select_by(m, "--trainable", m->spec.trainable,
		       m->spec.ntrainable, is, memo, keep, err);
	/* A buffer is no parameter, nor is what is folded from one, unless
	 * --trainable says it is. */
	for (int t = 0; t < g->ntensors && m->buffer; t++)
		if (is[t] && !keep[t] && (is_buffer(g, t, m) ||
		    folded_from(g, t, is_buffer, m, memo, 0)))
			is[t] = false;
	if (!rc)
		rc = select_by(m, "--freeze", m->spec.freeze, m->spec.nfreeze,
			       is, memo, drop, err);
	for (int t = 0; !rc && t < g->ntensors; t++) {
		/* With --lora the adapters are trained, and what --trainable
		 * adds; every other parameter is frozen. */
		bool chosen = m->spec.lora.rank ?
			      ar_lora_adapter(g->tensors[t].name) || keep[t] :
			      !m->spec.ntrainable || keep[t];
		bool trained = is[t] && !drop[t] && chosen;
		Same same = {is, ar_numel(&g->tensors[t])};
		m->param[t] = trained;
		m->frozen[t] = is[t] && !trained;
		m->tied[t] = is[t] && (tie[t] || folded_from(g, t, same_param,
							     &same, memo, 0));
	}
	/* The options, not the model, leave nothing to train: say so. */
	if (!rc && (m->spec.nfreeze || m->spec.ntrainable) &&
	    !m->spec.some_params) {
		int64_t any = 0, trained = 0;
		for (int t = 0; t < g->ntensors; t++)
			any += is[t], trained += m->param[t];
		if (any && !trained)
			rc = ar_fail(err, AR_EXIT_USAGE, "%s leave%s none of the "
				     "model's %lld parameters to train",
				     m->spec.nfreeze && m->spec.ntrainable ?
				     "--trainable and --freeze" :
				     m->spec.nfreeze ? "--freeze" : "--trainable",
				     m->spec.nfreeze && m->spec.ntrainable ? ""
									   : "s",
				     (long long)any);
	}
	free(memo);
	free(is);
	free(keep);
	free(drop);
	free(tie);
	return rc;
}
