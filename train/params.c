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
 * Before those, the exporter's metadata (apply_meta) when present, and a
 * tie: a parameter folded by data movement from another parameter the
 * step also reads is that one (m->tied), counted once in the bill.
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

/* Whether hit holds for t's name or that of a weight t is folded from. */
static bool matches(const ArGraph *g, int t, NameTest hit, const void *arg,
		    const char *memo)
{
	const ArTensor *x = &g->tensors[t];
	const ArNode *p;
	if (hit(x->name, arg))
		return true;
	if (x->kind != AR_TK_CONSTANT || x->producer < 0)
		return false;
	p = &g->nodes[x->producer];
	for (int j = 0; j < p->nexplicit; j++)
		if (p->inputs[j] >= 0 && memo[p->inputs[j]] == YES &&
		    ar_grad_moves(ar_op_grad(p), j) &&
		    matches(g, p->inputs[j], hit, arg, memo))
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

/* Whether t is folded, through ops that only move values, from a
 * parameter other than itself (is[] over the weights found). */
static bool copies_param(const ArGraph *g, int t, const bool *is,
			 const char *memo, int depth)
{
	const ArTensor *x = &g->tensors[t];
	const ArNode *p;
	if (x->kind != AR_TK_CONSTANT || x->producer < 0 || depth > 8)
		return false;
	p = &g->nodes[x->producer];
	for (int j = 0; j < p->nexplicit; j++) {
		int u = p->inputs[j];
		if (u >= 0 && memo[u] == YES && ar_grad_moves(ar_op_grad(p), j) &&
		    ((is[u] && ar_numel(&g->tensors[u]) == ar_numel(x)) ||
		     copies_param(g, u, is, memo, depth + 1)))
			return true;
	}
	return false;
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
	rc = apply_meta(m, memo, is, drop, err);
	if (!rc)
		rc = select_by(m, "--trainable", m->spec.trainable,
		       m->spec.ntrainable, is, memo, keep, err);
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
		m->param[t] = trained;
		m->frozen[t] = is[t] && !trained;
		m->tied[t] = is[t] && copies_param(g, t, is, memo, 0);
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
	return rc;
}
