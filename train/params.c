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
 * those one of its expressions matches; --freeze takes out those its
 * expressions match, and wins over --trainable.  An expression matches a
 * parameter when it matches its name or the name of a weight it is folded
 * from (so "qkv.weight" selects the folded W^T too).  Expressions are
 * POSIX extended, unanchored (use ^ and $); one that matches no parameter
 * is an error, as a typo would otherwise freeze or train the wrong set.
 */
#include "train.h"

#include <regex.h>
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

/* Whether tensor t holds weights (memo per tensor). */
static bool weights_of(const ArGraph *g, int t, char *memo)
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
			      weights_of(g, p->inputs[j], memo);
	}
	memo[t] = yes ? YES : NO;
	return yes;
}

/* Whether re matches t's name or that of a weight t is folded from. */
static bool matches(const ArGraph *g, int t, const regex_t *re,
		    const char *memo)
{
	const ArTensor *x = &g->tensors[t];
	const ArNode *p;
	if (!regexec(re, x->name, 0, NULL, 0))
		return true;
	if (x->kind != AR_TK_CONSTANT || x->producer < 0)
		return false;
	p = &g->nodes[x->producer];
	for (int j = 0; j < p->nexplicit; j++)
		if (p->inputs[j] >= 0 && memo[p->inputs[j]] == YES &&
		    ar_grad_moves(ar_op_grad(p), j) &&
		    matches(g, p->inputs[j], re, memo))
			return true;
	return false;
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
			    weights_of(g, t, memo))
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
			if (is[t] && matches(g, t, &re, memo)) {
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

int ar_train_params(ArTrainModel *m, ArError *err)
{
	const ArGraph *g = m->base;
	size_t nt = (size_t)g->ntensors + 1;
	char *memo = ar_xcalloc(nt, 1);
	bool *is = ar_xcalloc(nt, sizeof *is);
	bool *keep = ar_xcalloc(nt, sizeof *keep);
	bool *drop = ar_xcalloc(nt, sizeof *drop);
	int rc;

	find_params(m, memo, is);
	rc = select_by(m, "--trainable", m->spec.trainable,
		       m->spec.ntrainable, is, memo, keep, err);
	if (!rc)
		rc = select_by(m, "--freeze", m->spec.freeze, m->spec.nfreeze,
			       is, memo, drop, err);
	for (int t = 0; !rc && t < g->ntensors; t++) {
		bool trained = is[t] && !drop[t] &&
			       (!m->spec.ntrainable || keep[t]);
		m->param[t] = trained;
		m->frozen[t] = is[t] && !trained;
	}
	free(memo);
	free(is);
	free(keep);
	free(drop);
	return rc;
}
