/*
 * base_quant.c — --base-quant nf4|fp4|int8[:BLOCK] (QLoRA, Dettmers et
 * al. 2023): each frozen linear's weight stored as bitsandbytes stores it,
 * and dequantised for each use into a transient.
 *
 * The copy of the forward graph this pass makes has, in place of each
 * linear (ar_train_linear; the LM head excepted, as transformers' bnb
 * integration keeps it in 16 bits, and the adapters of --lora), an
 * arenac.QuantizedMatMul(x, Wq[, bias]) whose Wq is a byte tensor of the
 * stored size and whose kernel dequantises Wq into a weight of x's type
 * for its step alone, in the forward and again in the backward (the op's
 * workspace, ops/quant_matmul.c): bitsandbytes'
 * MatMul4Bit (bitsandbytes/autograd/_functions.py) runs forward as
 * dequantize_4bit then F.linear for training-sized inputs
 * (backends/cuda/ops.py, _gemm_4bit_impl) and backward as
 * matmul(grad_output, dequantize_4bit(B)); it saves no activation (only B,
 * the stored weight), and computes no gradient for B.
 *
 * Stored bytes (bitsandbytes/functional.py, quantize_4bit): nf4 and fp4
 * pack two weights a byte and keep an fp32 absmax per block (64 by
 * default), plus the 16-entry code of the format (fp32, one per tensor:
 * get_4bit_type); with --double-quant (compress_statistics) the absmax is
 * itself quantised to 8 bits in blocks of 256 (quantize_blockwise, one
 * fp32 absmax per 256 blocks, its dynamic code shared by all) and offset
 * by its fp32 mean: 4 + 32/64 = 4.5 bits a weight, or 4 + 8/64 +
 * 32/(64 x 256) = 4.127, the QLoRA paper's figures.  int8 is LLM.int8()'s
 * Int8Params: a byte a weight and an fp32 scale per output row (SCB).
 */
#include "train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"
#include "graph_copy.h"

static int64_t ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

int64_t ar_base_quant_bytes(const ArBaseQuant *q, int64_t in, int64_t out)
{
	int64_t n = in * out, blocks;
	if (q->format == AR_BQ_INT8)
		return n + 4 * out;
	blocks = ceil_div(n, q->block);
	if (!q->double_quant)
		return ceil_div(n, 2) + 4 * blocks + 16 * 4;
	return ceil_div(n, 2) + blocks + 4 * ceil_div(blocks, 256) + 4 +
	       16 * 4;
}

/* The linear whose output is graph output 0, through views: the head. */
static int head_node(const ArGraph *g)
{
	int t = g->noutputs ? g->outputs[0] : -1;
	for (int hops = 0; t >= 0 && hops < 8; hops++) {
		int p = g->tensors[t].producer;
		const ArOpDef *d;
		int64_t in, out;
		if (p < 0)
			return -1;
		if (ar_train_linear(g, &g->nodes[p], &in, &out))
			return p;
		d = ar_op_of(&g->nodes[p]);
		if (!d || d->alias != AR_ALIAS_VIEW || g->nodes[p].nexplicit < 1)
			return -1;
		t = g->nodes[p].inputs[0];
	}
	return -1;
}

const char *ar_base_quant_name(ArBqFormat f)
{
	static const char *const names[] = {
		[AR_BQ_NONE] = "none", [AR_BQ_NF4] = "nf4",
		[AR_BQ_FP4] = "fp4", [AR_BQ_INT8] = "int8"};
	return names[f];
}

/* Node n as QuantizedMatMul(x, Wq[, bias]) writing n's output. */
static void quantize(ArGraph *g, const ArNode *n, const ArBaseQuant *q,
		     int64_t in, int64_t out, int64_t *params)
{
	const ArTensor *w = &g->tensors[n->inputs[1]];
	int io[3], nin = 2, wq, id;
	char name[512];
	ArTensor *x;

	snprintf(name, sizeof name, "%s.%s", w->name,
		 ar_base_quant_name(q->format));
	wq = ar_graph_add_tensor(g, name);
	x = &g->tensors[wq];
	x->kind = AR_TK_WEIGHT;
	x->dtype = AR_DT_UINT8;
	x->rank = 1;
	x->dims[0] = ar_base_quant_bytes(q, in, out);
	ar_tensor_set_bytes(x, NULL);
	*params += in * out;
	io[0] = n->inputs[0];
	io[1] = wq;
	if (!strcmp(n->op, "Gemm") && n->nexplicit > 2 && n->inputs[2] >= 0)
		io[nin++] = n->inputs[2];
	snprintf(name, sizeof name, "%s.%s", n->name,
		 ar_base_quant_name(q->format));
	id = ar_graph_add_node(g, name, AR_QUANT_MATMUL, AR_FUSED_DOMAIN);
	ar_node_set_io(&g->nodes[id], io, nin, n->outputs, 1);
	g->nodes[id].opset = n->opset;
	g->nodes[id].phase = n->phase;
	g->tensors[n->outputs[0]].producer = id;
}

int ar_train_base_quant(const ArGraph *src, const ArTrainSpec *spec,
			ArGraph **out, int64_t *params, ArError *err)
{
	const ArBaseQuant *q = &spec->base_quant;
	int head = head_node(src), nq = 0, nstored = 0, nlinear = 0;
	int rc = AR_OK;
	ArGraph *g;

	*out = NULL;
	*params = 0;
	g = ar_copy_tensors(src);
	for (int i = 0; i < src->nnodes && !rc; i++) {
		const ArNode *n = &src->nodes[i];
		int64_t in, o;
		bool stored = !strcmp(n->op, AR_QUANT_MATMUL), linear;
		nstored += stored;
		linear = i != head && ar_is_step(src, i) && !stored &&
			 ar_train_linear(src, n, &in, &o) &&
			 !ar_lora_adapter(src->tensors[n->inputs[1]].name);
		nlinear += linear;
		/* A trained weight stays as it is: bitsandbytes' 4-bit and
		 * int8 weights take no gradient. */
		if (linear && ar_train_left_frozen(spec, src, n->inputs[1])) {
			quantize(g, n, q, in, o, params);
			nq++;
		} else if (ar_copy_node(g, n, n->inputs, n->outputs, err) < 0) {
			rc = err->code;
		}
	}
	if (!rc && !nq && nlinear)
		rc = ar_fail(err, AR_EXIT_MODEL, "--base-quant %s stores the "
			     "frozen base weights, and the options freeze no "
			     "linear's: all %d are trained (add --lora, or "
			     "--trainable / --freeze)",
			     ar_base_quant_name(q->format), nlinear);
	else if (!rc && !nq)
		rc = ar_fail(err, AR_EXIT_MODEL, "--base-quant %s: the model has "
			     "no linear to quantise (a MatMul or Gemm by a "
			     "weight, the head excepted)%s",
			     ar_base_quant_name(q->format), nstored ?
			     "; its linears are stored quantised already "
			     "(DequantizeLinear or MatMulNBits), and are "
			     "planned as such without --base-quant" : "");
	if (rc) {
		ar_graph_free(g);
		return rc;
	}
	*out = g;
	return AR_OK;
}
