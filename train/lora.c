/*
 * lora.c — --lora RANK[:ALPHA]: LoRA adapters written into a copy of the
 * forward graph, beside each linear --lora-target names (Hu et al. 2021;
 * PEFT's LoraLayer and torchtune's LoRALinear compute the same thing).
 *
 * A linear is a MatMul or Gemm whose second operand is a weight (an
 * initializer, or a constant folded from one: torch's MatMul(x, W^T)):
 * y = x W.  Its adapter path is y = x W + s (dropout(x) A) B, A [in, r],
 * B [r, out], s = alpha / r, as the graph's own ops:
 *
 *   x -> [Dropout(p)] -> MatMul A -> MatMul B -> Mul s -> Add(x W, .)
 *
 * so the training stage differentiates it like any other op and keeps
 * what the adapter's backward needs and nothing else: dropout(x) (or x)
 * for A's gradient, x A for B's, the mask when p > 0; the base weight is
 * frozen (params.c trains only the adapters, and what --trainable adds),
 * so x W keeps nothing for W's gradient.  A and B are named after the
 * weight (W.lora_A, W.lora_B), in its type.  A Gemm with transB reads
 * W [out, in]; its bias stays the base's.  torch.onnx exports a Linear on
 * a 3-D input as MatMul with the weight transposed and folded, and a
 * Linear on 2-D input as Gemm(transB=1): both are found.  So is a linear
 * the model stores quantised (prequant.c's QuantizedMatMul, before
 * --base-quant makes its own): its adapters take the compute format, and
 * the targets match its stored weight's name or its node's (the linear's).
 *
 * The default target is the attention's query and value projections,
 * PEFT's default for Llama-like models and torchtune's lora_attn_modules
 * default ['q_proj', 'v_proj'], and GPT-2's fused c_attn / qkv; an
 * expression is POSIX extended, unanchored, on the weight's name or the
 * name of the node reading it.
 */
#include "train.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "graph_copy.h"

const char *const AR_LORA_DEFAULT_TARGET =
	"(^|[^A-Za-z0-9])(q|v|wq|wv|q_proj|v_proj|query|value|qkv|c_attn)"
	"([^A-Za-z0-9]|$)";

bool ar_train_linear(const ArGraph *g, const ArNode *n, int64_t *in,
		     int64_t *out)
{
	const ArTensor *w;
	bool gemm = !strcmp(n->op, "Gemm");
	if (!strcmp(n->op, AR_QUANT_MATMUL) && !strcmp(n->domain,
						      AR_FUSED_DOMAIN)) {
		const ArTensor *x = &g->tensors[n->inputs[0]];
		const ArTensor *y = &g->tensors[n->outputs[0]];
		*in = x->dims[x->rank - 1];
		*out = y->dims[y->rank - 1];
		return true;
	}
	if ((!gemm && strcmp(n->op, "MatMul")) || !ar_default_domain(n->domain)
	    || n->nexplicit < 2 || n->inputs[0] < 0 || n->inputs[1] < 0 ||
	    ar_in_arena(g, n->inputs[1]) || !ar_in_arena(g, n->inputs[0]))
		return false;
	w = &g->tensors[n->inputs[1]];
	if (w->rank != 2 || !ar_train_is_float(w->dtype) ||
	    (gemm && ar_attr_int(n, "transA", 0)))
		return false;
	*in = w->dims[gemm && ar_attr_int(n, "transB", 0) ? 1 : 0];
	*out = w->dims[gemm && ar_attr_int(n, "transB", 0) ? 0 : 1];
	return true;
}

/* Whether any expression matches the weight's or the node's name. */
static bool targeted(const regex_t *re, int nre, const char *w,
		     const char *node)
{
	for (int k = 0; k < nre; k++)
		if (!regexec(&re[k], w, 0, NULL, 0) ||
		    !regexec(&re[k], node, 0, NULL, 0))
			return true;
	return false;
}

/* A new activation shaped like `like` with last dim `last`. */
static int act_like(ArGraph *g, int like, const char *suffix, int64_t last,
		    ArDType dt)
{
	char name[512];
	int t;
	ArTensor *x;
	snprintf(name, sizeof name, "%s%s", g->tensors[like].name, suffix);
	t = ar_graph_add_tensor(g, name);
	x = &g->tensors[t];
	x->dtype = dt;
	x->rank = g->tensors[like].rank;
	memcpy(x->dims, g->tensors[like].dims, sizeof x->dims);
	if (x->rank > 0)
		x->dims[x->rank - 1] = last;
	ar_tensor_set_bytes(x, NULL);
	return t;
}

/* A weight of the given shape, without values (nothing reads them). */
static int weight(ArGraph *g, const char *name, ArDType dt,
		  const int64_t dims[2])
{
	int t = ar_graph_add_tensor(g, name);
	ArTensor *x = &g->tensors[t];
	x->kind = AR_TK_WEIGHT;
	x->dtype = dt;
	x->rank = 2;
	x->dims[0] = dims[0];
	x->dims[1] = dims[1];
	ar_tensor_set_bytes(x, NULL);
	return t;
}

/* A float scalar constant with its value. */
static int scalar(ArGraph *g, const char *base, const char *suffix,
		  double value)
{
	char name[512];
	int t;
	ArTensor *x;
	snprintf(name, sizeof name, "%s%s", base, suffix);
	t = ar_graph_add_tensor(g, name);
	x = &g->tensors[t];
	x->kind = AR_TK_CONSTANT;
	x->dtype = AR_DT_FLOAT;
	x->rank = 0;
	x->data = ar_xcalloc(1, sizeof(float));
	*(float *)x->data = (float)value;
	ar_tensor_set_bytes(x, NULL);
	return t;
}

static int node(ArGraph *g, const char *base, const char *suffix,
		const char *op, const int *in, int nin, const int *out,
		int nout, int opset)
{
	char name[512];
	int id;
	snprintf(name, sizeof name, "%s%s", base, suffix);
	id = ar_graph_add_node(g, name, op, "");
	ar_node_set_io(&g->nodes[id], in, nin, out, nout);
	g->nodes[id].opset = opset;
	for (int j = 0; j < nout; j++)
		if (out[j] >= 0)
			g->tensors[out[j]].producer = id;
	return id;
}

/* The base linear (writing a new y0) and its adapter path into y. */
static void adapt(ArGraph *g, const ArNode *n, const ArLoraSpec *s,
		  int64_t in, int64_t out, ArLoraInfo *info)
{
	int x = n->inputs[0], y = n->outputs[0], w = n->inputs[1];
	int opset = n->opset;
	int64_t ad[2] = {in, s->rank}, bd[2] = {s->rank, out};
	int y0, xd = x, xa, xb, xs, a, b, sc, io[2];
	char name[512];
	ArDType dt = g->tensors[y].dtype, wdt = g->tensors[w].dtype;
	/* A weight stored quantised (prequant.c): adapters in the compute
	 * format, as PEFT's on a bitsandbytes or GPTQ layer. */
	if (!ar_train_is_float(wdt))
		wdt = dt;
	const char *base = n->name;

	snprintf(name, sizeof name, "%s" AR_LORA_A_SUFFIX, g->tensors[w].name);
	a = weight(g, name, wdt, ad);
	snprintf(name, sizeof name, "%s" AR_LORA_B_SUFFIX, g->tensors[w].name);
	b = weight(g, name, wdt, bd);
	y0 = act_like(g, y, ".base", g->tensors[y].dims[g->tensors[y].rank -
			1], dt);
	ar_copy_node(g, n, n->inputs, &y0, NULL);
	if (s->dropout > 0) {
		io[0] = x;
		io[1] = scalar(g, base, ".lora_drop.ratio", s->dropout);
		xd = act_like(g, x, ".lora_drop", g->tensors[x].dims[
				g->tensors[x].rank - 1], g->tensors[x].dtype);
		node(g, base, ".lora_dropout", "Dropout", io, 2, &xd, 1, opset);
	}
	xa = act_like(g, y, ".lora_xa", s->rank, dt);
	io[0] = xd, io[1] = a;
	node(g, base, ".lora_A", "MatMul", io, 2, &xa, 1, opset);
	xb = act_like(g, y, ".lora_xb", out, dt);
	io[0] = xa, io[1] = b;
	node(g, base, ".lora_B", "MatMul", io, 2, &xb, 1, opset);
	sc = scalar(g, base, ".lora_scale", s->alpha / (double)s->rank);
	xs = act_like(g, y, ".lora_scaled", out, dt);
	io[0] = xb, io[1] = sc;
	node(g, base, ".lora_mul", "Mul", io, 2, &xs, 1, opset);
	io[0] = y0, io[1] = xs;
	node(g, base, ".lora_add", "Add", io, 2, &y, 1, opset);
	info->adapted_linears++;
	info->adapter_parameters += s->rank * (in + out);
}

int ar_train_lora(const ArGraph *src, const ArLoraSpec *s, ArGraph **out,
		  ArLoraInfo *info, ArError *err)
{
	regex_t re[AR_LORA_MAX_TARGETS];
	int nre = 0, rc = AR_OK;
	const char *def = AR_LORA_DEFAULT_TARGET;
	const char *const *tg = s->ntargets ? s->targets : &def;
	int ntg = s->ntargets ? s->ntargets : 1;
	int64_t small = INT64_MAX;
	const char *small_w = NULL;
	ArGraph *g;

	memset(info, 0, sizeof *info);
	*out = NULL;
	for (; nre < ntg && nre < AR_LORA_MAX_TARGETS; nre++) {
		char why[128];
		int e = regcomp(&re[nre], tg[nre], REG_EXTENDED | REG_NOSUB);
		if (e) {
			regerror(e, &re[nre], why, sizeof why);
			regfree(&re[nre]);
			rc = ar_fail(err, AR_EXIT_USAGE, "--lora-target '%s' is "
				     "not a regular expression: %s", tg[nre],
				     why);
			goto out;
		}
	}
	g = ar_copy_tensors(src);
	for (int i = 0; i < src->nnodes && !rc; i++) {
		const ArNode *n = &src->nodes[i];
		int64_t in, o;
		if (ar_is_step(src, i) && ar_train_linear(src, n, &in, &o) &&
		    targeted(re, nre, src->tensors[n->inputs[1]].name,
			     n->name)) {
			if (in < small || o < small) {
				small = in < o ? in : o;
				small_w = src->tensors[n->inputs[1]].name;
			}
			adapt(g, n, s, in, o, info);
		} else if (ar_copy_node(g, n, n->inputs, n->outputs, err) < 0) {
			rc = err->code;
		}
	}
	if (!rc && !info->adapted_linears)
		rc = ar_fail(err, AR_EXIT_MODEL, "--lora: --lora-target %s%s%s "
			     "matches no linear (a MatMul or Gemm by a "
			     "weight; on its weight's name or its node's)",
			     s->ntargets ? "'" : "(default) '", tg[0],
			     ntg > 1 ? "' and the others" : "'");
	else if (!rc && s->rank > small)
		rc = ar_fail(err, AR_EXIT_MODEL, "--lora %lld: the rank is above "
			     "the smaller side (%lld) of weight '%s'",
			     (long long)s->rank, (long long)small, small_w);
	if (rc)
		ar_graph_free(g);
	else
		*out = g;
out:
	for (int k = 0; k < nre; k++)
		regfree(&re[k]);
	return rc;
}

bool ar_lora_adapter(const char *name)
{
	size_t n = strlen(name), a = strlen(AR_LORA_A_SUFFIX);
	return n > a && (!strcmp(name + n - a, AR_LORA_A_SUFFIX) ||
			 !strcmp(name + n - a, AR_LORA_B_SUFFIX));
}
