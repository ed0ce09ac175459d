/*
 * autocast.c — the forward graph as torch.autocast runs it
 * (--precision amp-bf16, amp-fp16).
 *
 * A model trained under torch.autocast keeps its parameters (and so their
 * gradients and the optimizer state) in fp32; autocast changes the type
 * each op computes in, op by op, by casting the op's inputs just before
 * it runs.  The casts are recorded by autograd, so what an op saves for
 * backward is its input in the type autocast gave it (autocast_mode.h:
 * "for lower_precision_fp ops, input tensors are saved for backward in
 * lower_precision_fp rather than fp32").  This pass writes those casts
 * into a copy of the forward graph as Cast nodes, and gives every float
 * tensor the type it has under autocast; the training stage then plans
 * the copy like any other graph (precision.c converts nothing more).
 *
 * The policy per op is the table below, PyTorch's CUDA lists (a user's
 * run is on a GPU): pytorch/pytorch aten/src/ATen/autocast_mode.h,
 * AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32,
 * AT_FORALL_FP32_SET_OPT_DTYPE, AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE,
 * registered for CUDA in autocast_mode.cpp, TORCH_LIBRARY_IMPL(aten,
 * Autocast, m), keyed here by the ONNX op torch.onnx exports each aten
 * op as.  The CPU lists (TORCH_LIBRARY_IMPL(aten, AutocastCPU, m)) differ:
 * softmax, log_softmax, layer_norm, group_norm, pow, exp, log,
 * reciprocal, sum, cumsum, norm and logsumexp are not on CPU's fp32 list
 * (they run in their input's type there), cat is on CPU's promote list;
 * tests/e2e_torch_autocast.py applies the CUDA policy to those ops when it
 * measures torch on the CPU.
 *
 *   lower     cast every float input to the 16-bit type; the output is
 *             16-bit.  A cast of an fp32 weight is made once and kept
 *             for the whole forward pass (cached_cast's weight cache,
 *             autocast_mode.cpp: fp32 leaves that require grad), so it
 *             is one Cast node shared by every reader, and the backward
 *             steps that read it keep it: the bill's autocast weight
 *             copies.  A cast of anything else is made per op.
 *   fp32      cast every 16-bit input to fp32; the output is fp32.
 *   explicit  the model's own Cast: its output keeps the type the model
 *             asked for (T5's .float() before a softmax, an RMSNorm in
 *             fp32).
 *   (others)  no cast: the op runs in its inputs' type, and an op of
 *             mixed float inputs in the widest of them, by torch's type
 *             promotion (c10/core/ScalarType.h promoteTypes; a 0-d
 *             tensor, as the exporter writes a Python number, does not
 *             widen a tensor with dimensions: att * 0.125 stays 16-bit),
 *             so the residual stream x + f(x) stays fp32.  The promote
 *             list proper (cat, index_put, ...) is this rule too; its
 *             casts are transient and saved by nobody.
 *
 * torch.onnx exports F.linear on an input of rank > 2 as MatMul and then
 * Add of the bias (symbolic_opset9.py, linear); torch runs both as one
 * lower-precision op, so an Add of a 1-D weight to a lower op's output
 * read by nothing else is the linear's bias, cast like the weight.
 *
 * The loss arenac attaches (torch's cross_entropy: log_softmax and
 * nll_loss, both fp32) reads an fp32 copy of 16-bit logits: loss.c makes
 * it, under amp and the mixed precisions alike (--loss-dtype).
 */
#include "train.h"

#include <stdlib.h>
#include <string.h>

#include "graph_copy.h"

typedef enum { AC_LOWER = 1, AC_FP32, AC_EXPLICIT } AcPolicy;

/* ONNX op -> autocast policy; the aten op(s) in the CUDA lists. */
static const struct {
	const char *op;
	AcPolicy policy;
} policies[] = {
	/* AT_FORALL_LOWER_PRECISION_FP */
	{"Conv", AC_LOWER},             /* conv1d, conv2d, conv3d */
	{"ConvTranspose", AC_LOWER},    /* conv_transpose1d/2d/3d */
	{"MatMul", AC_LOWER},           /* matmul, mm, bmm */
	{"Gemm", AC_LOWER},             /* addmm, linear */
	{"Einsum", AC_LOWER},           /* einsum */
	{"PRelu", AC_LOWER},            /* prelu */
	{"Attention", AC_LOWER},        /* scaled_dot_product_attention */
	/* AT_FORALL_FP32 */
	{"Acos", AC_FP32}, {"Asin", AC_FP32}, {"Cosh", AC_FP32},
	{"Sinh", AC_FP32}, {"Tan", AC_FP32},
	{"Exp", AC_FP32}, {"Log", AC_FP32},
	{"Reciprocal", AC_FP32},        /* reciprocal (rsqrt exports as
					 * Div(1, Sqrt): Div promotes) */
	{"Pow", AC_FP32},
	{"Softplus", AC_FP32},
	{"LayerNormalization", AC_FP32},/* layer_norm, native_layer_norm */
	{"GroupNormalization", AC_FP32},/* group_norm */
	{"NegativeLogLikelihoodLoss", AC_FP32},     /* nll_loss */
	{"ReduceLogSumExp", AC_FP32},   /* logsumexp */
	/* AT_FORALL_FP32_SET_OPT_DTYPE */
	{"Softmax", AC_FP32}, {"LogSoftmax", AC_FP32},
	{"SoftmaxCrossEntropyLoss", AC_FP32},       /* log_softmax+nll_loss */
	{"ReduceSum", AC_FP32},         /* sum */
	{"ReduceProd", AC_FP32},        /* prod */
	{"CumSum", AC_FP32},            /* cumsum */
	/* AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE: norm */
	{"ReduceL1", AC_FP32}, {"ReduceL2", AC_FP32},
	{"Cast", AC_EXPLICIT}, {"CastLike", AC_EXPLICIT},
};

static AcPolicy policy_of(const ArNode *n)
{
	if (n->domain[0])
		return 0;
	for (size_t i = 0; i < sizeof policies / sizeof *policies; i++)
		if (!strcmp(policies[i].op, n->op))
			return policies[i].policy;
	return 0;
}

/* Types autocast casts (is_eligible: floating, not double). */
static bool eligible(ArDType dt)
{
	return dt == AR_DT_FLOAT || dt == AR_DT_FLOAT16 ||
	       dt == AR_DT_BFLOAT16;
}

static int width(ArDType dt)
{
	return dt == AR_DT_DOUBLE ? 3 : dt == AR_DT_FLOAT ? 2 : 1;
}

typedef struct Ac {
	const ArGraph *src;
	ArGraph *g;
	ArDType low;
	int *wcopy;        /* src weight -> its cached 16-bit copy, or -1 */
	int *readers;      /* src tensor -> nodes reading it */
	ArError *err;
} Ac;

/* The input autocast hands a `policy` op for tensor s: s itself or a
 * cast copy; -1 on error.  (The copy keeps src's tensor ids.) */
static int cast_input(Ac *a, int s, AcPolicy policy)
{
	ArDType dt = a->g->tensors[s].dtype;
	ArDType want = policy == AC_LOWER ? a->low : AR_DT_FLOAT;

	if (!eligible(dt) || dt == want)
		return s;
	if (policy == AC_LOWER && a->src->tensors[s].kind == AR_TK_WEIGHT) {
		if (a->wcopy[s] < 0)
			a->wcopy[s] = ar_add_cast(a->g, s, want, "autocast",
						  a->err);
		return a->wcopy[s];
	}
	return ar_add_cast(a->g, s, want, "autocast", a->err);
}

/* Torch's promotion of the float inputs of node n (in g's types):
 * dimensioned tensors first, 0-d ones only if there are no others;
 * AR_DT_UNDEFINED for none. */
static ArDType promoted(const ArGraph *g, const int *in, int nin)
{
	ArDType best[2] = {AR_DT_UNDEFINED, AR_DT_UNDEFINED};
	for (int j = 0; j < nin; j++) {
		const ArTensor *t;
		int d;
		if (in[j] < 0)
			continue;
		t = &g->tensors[in[j]];
		if (!ar_train_is_float(t->dtype))
			continue;
		d = t->rank > 0;
		if (best[d] == AR_DT_UNDEFINED ||
		    width(t->dtype) > width(best[d]))
			best[d] = t->dtype;
	}
	return best[1] != AR_DT_UNDEFINED ? best[1] : best[0];
}

/* F.linear's bias exported as Add(bias, MatMul(...)) (module comment). */
static bool linear_bias(const Ac *a, const ArNode *n, AcPolicy *inner)
{
	if (strcmp(n->op, "Add") || n->domain[0] || n->ninputs != 2)
		return false;
	for (int j = 0; j < 2; j++) {
		int b = n->inputs[j], y = n->inputs[1 - j], p;
		if (b < 0 || y < 0)
			return false;
		p = a->src->tensors[y].producer;
		if (a->src->tensors[b].kind == AR_TK_WEIGHT &&
		    a->src->tensors[b].rank == 1 && p >= 0 &&
		    policy_of(&a->src->nodes[p]) == AC_LOWER &&
		    a->readers[y] == 1 && a->src->tensors[y].kind ==
		    AR_TK_ACTIVATION) {
			*inner = AC_LOWER;
			return true;
		}
	}
	return false;
}

/* Copies node n of src with autocast's casts before it and its float
 * outputs in autocast's types. */
static int copy_node(Ac *a, const ArNode *n)
{
	AcPolicy policy = policy_of(n);
	int *in = ar_xmalloc(((size_t)n->ninputs + 1) * sizeof *in);
	int rc = AR_OK;
	ArDType out;

	if (!policy)
		linear_bias(a, n, &policy);
	for (int j = 0; j < n->ninputs; j++) {
		in[j] = n->inputs[j];
		if (in[j] >= 0 && j < n->nexplicit &&
		    (policy == AC_LOWER || policy == AC_FP32) &&
		    (in[j] = cast_input(a, n->inputs[j], policy)) < 0) {
			free(in);
			return a->err->code ? a->err->code : AR_EXIT_MODEL;
		}
	}
	out = policy == AC_LOWER ? a->low : policy == AC_FP32 ? AR_DT_FLOAT :
	      promoted(a->g, in, n->nexplicit);
	if (ar_copy_node(a->g, n, in, n->outputs, a->err) < 0)
		rc = AR_EXIT_MODEL;
	for (int j = 0; !rc && j < n->noutputs; j++) {
		ArTensor *y = n->outputs[j] < 0 ? NULL :
			      &a->g->tensors[n->outputs[j]];
		/* Only outputs that follow their inputs' type change: a
		 * cast, a mask, a statistic kept in fp32 keep theirs. */
		const ArDType was = promoted(a->src, n->inputs, n->nexplicit);
		if (!y || policy == AC_EXPLICIT || out == AR_DT_UNDEFINED ||
		    !eligible(y->dtype) || (y->dtype != was && policy == 0) ||
		    y->dtype == out)
			continue;
		y->dtype = out;
		rc = ar_tensor_set_bytes(y, a->err);
	}
	free(in);
	return rc;
}

int ar_train_autocast(const ArGraph *src, ArDType low, ArGraph **out,
		      ArError *err)
{
	Ac a = {.src = src, .low = low, .err = err};
	bool any = false;
	int rc = AR_OK;

	*out = NULL;
	for (int t = 0; t < src->ntensors; t++)
		any = any || (src->tensors[t].kind == AR_TK_ACTIVATION &&
			      eligible(src->tensors[t].dtype));
	if (!any)
		return ar_fail(err, AR_EXIT_MODEL, "--precision %s: the model "
			       "computes no float tensor for autocast to "
			       "cast", low == AR_DT_FLOAT16 ? "amp-fp16"
							    : "amp-bf16");
	a.g = ar_copy_tensors(src);
	a.wcopy = ar_xmalloc(((size_t)src->ntensors + 1) * sizeof *a.wcopy);
	a.readers = ar_xcalloc((size_t)src->ntensors + 1, sizeof *a.readers);
	for (int t = 0; t < src->ntensors; t++)
		a.wcopy[t] = -1;
	for (int i = 0; i < src->nnodes; i++)
		for (int j = 0; j < src->nodes[i].ninputs; j++)
			if (src->nodes[i].inputs[j] >= 0)
				a.readers[src->nodes[i].inputs[j]]++;
	for (int i = 0; i < src->nnodes && !rc; i++)
		rc = ar_is_step(src, i) ?
		     copy_node(&a, &src->nodes[i]) :
		     (ar_copy_node(a.g, &src->nodes[i], src->nodes[i].inputs,
				   src->nodes[i].outputs, err) < 0 ?
		      AR_EXIT_MODEL : AR_OK);
	free(a.wcopy);
	free(a.readers);
	if (rc) {
		ar_graph_free(a.g);
		return rc;
	}
	*out = a.g;
	return AR_OK;
}
