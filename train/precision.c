/*
 * precision.c — number formats of a training step and the persistent part
 * of its memory bill.
 *
 * --precision converts every float tensor of the step to one format before
 * anything is sized (train.h, ArPrecision).  Mixed precision adds, per
 * trained parameter, an fp32 master copy and keeps the optimizer's state
 * in fp32 (Micikevicius et al. 2018; the ZeRO paper's 2 + 2 + 12 bytes per
 * parameter with Adam).  Tensors a kernel keeps in float32 whatever the
 * model (LayerNorm's statistics, BatchNorm's batch statistics: outputs
 * past the first of an op with training outputs) and masks stay as they
 * are.
 *
 * The loss: --loss-dtype (loss.c) says whether the cross-entropy reads
 * an fp32 copy of 16-bit logits; the bill names the log-probabilities it
 * keeps for the backward (loss_kept_bytes).
 *
 * The bill's persistent parts: trained parameters, their gradients (in
 * --grad-dtype, else the step's format), master weights (--master-dtype,
 * else fp32 in the mixed precisions), optimizer state (the tensors the
 * table of optimizers.c lists, on the device and, for a paged optimizer,
 * in host memory), frozen parameters and the other
 * constants the steps read.  Together they are exactly the weights of the
 * step graph that a step reads (plan.h's weights_bytes), so the bill's
 * total is weights plus arena.
 *
 * amp-* is torch.autocast (autocast.c writes its casts into the graph):
 * parameters, gradients and optimizer state stay fp32, no master copy;
 * the 16-bit copies autocast caches of the weights live in the arena,
 * named apart in the bill (autocast_copy_bytes).
 */
#include "optim.h"
#include "fuse.h"

#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	ArDType dt;
	bool mixed;
	bool amp;       /* torch.autocast: the graph is cast op by op */
} formats[] = {
	[AR_PREC_MODEL] = {"model", AR_DT_UNDEFINED, false},
	[AR_PREC_FP32] = {"fp32", AR_DT_FLOAT, false},
	[AR_PREC_FP16] = {"fp16", AR_DT_FLOAT16, false},
	[AR_PREC_BF16] = {"bf16", AR_DT_BFLOAT16, false},
	[AR_PREC_MIXED_FP16] = {"mixed-fp16", AR_DT_FLOAT16, true},
	[AR_PREC_MIXED_BF16] = {"mixed-bf16", AR_DT_BFLOAT16, true},
	[AR_PREC_AMP_FP16] = {"amp-fp16", AR_DT_FLOAT16, false, true},
	[AR_PREC_AMP_BF16] = {"amp-bf16", AR_DT_BFLOAT16, false, true},
};

#define NFORMATS ((int)(sizeof formats / sizeof *formats))

const char *ar_precision_name(ArPrecision p)
{
	return (unsigned)p < (unsigned)NFORMATS ? formats[p].name : "invalid";
}

bool ar_precision_parse(const char *s, ArPrecision *out)
{
	for (int p = AR_PREC_FP32; p < NFORMATS; p++)
		if (!strcmp(s, formats[p].name)) {
			*out = (ArPrecision)p;
			return true;
		}
	return false;
}

/* Output j of node n is a statistic its kernel keeps in its own type. */
static bool kept_type(const ArNode *n, int j)
{
	const ArOpDef *d = ar_op_of(n);
	return j > 0 && d && d->train_outputs;
}

/* Input j of n is a linear's weight stored quantised, or its scale, zero
 * point or g_idx (QuantizedMatMul's operands 1 and 3 on): the base's
 * stored bytes, in their own types. */
static bool stored_operand(const ArNode *n, int j)
{
	return (j == 1 || j >= 3) && !strcmp(n->op, AR_QUANT_MATMUL);
}

int ar_train_convert(ArTrainModel *m, ArError *err)
{
	ArGraph *g = m->base;
	ArDType to = formats[m->spec.precision].dt;
	bool *keep;
	int rc = AR_OK;

	if (to == AR_DT_UNDEFINED || formats[m->spec.precision].amp)
		return AR_OK;   /* amp: autocast.c typed the graph already */
	keep = ar_xcalloc((size_t)g->ntensors + 1, sizeof *keep);
	for (int i = 0; i < g->nnodes; i++) {
		for (int j = 0; j < g->nodes[i].noutputs; j++)
			if (g->nodes[i].outputs[j] >= 0 &&
			    kept_type(&g->nodes[i], j))
				keep[g->nodes[i].outputs[j]] = true;
		for (int j = 0; j < g->nodes[i].ninputs; j++)
			if (g->nodes[i].inputs[j] >= 0 &&
			    stored_operand(&g->nodes[i], j))
				keep[g->nodes[i].inputs[j]] = true;
	}
	keep[m->logits] |= m->loss_upcast;      /* loss.c's fp32 copy */
	for (int t = 0; t < g->ntensors && !rc; t++) {
		ArTensor *x = &g->tensors[t];
		if (keep[t] || !ar_train_is_float(x->dtype) || x->rank < 0 ||
		    x->dtype == to)
			continue;
		x->dtype = to;
		rc = ar_tensor_set_bytes(x, err);
	}
	free(keep);
	return rc;
}

ArDType ar_precision_autocast(ArPrecision p)
{
	return formats[p].amp ? formats[p].dt : AR_DT_UNDEFINED;
}

ArDType ar_precision_final(ArPrecision p, ArDType dt)
{
	ArDType to = formats[p].dt;
	return to == AR_DT_UNDEFINED || formats[p].amp ||
	       !ar_train_is_float(dt) ? dt : to;
}

/* fp32 where the stacks of each precision compute it: Megatron-LM's
 * vocab-parallel cross-entropy (cross_entropy.py, calculate_logits_max:
 * vocab_parallel_logits.float()) and torch.autocast's log_softmax and
 * nll_loss (autocast.c).  A model cast wholesale to 16 bits runs the
 * loss in its logits' format. */
ArDType ar_train_loss_format(const ArTrainSpec *spec, ArDType dt)
{
	ArLossDtype l = spec->loss_dtype;
	bool fp32 = l == AR_LOSS_FP32 ||
		    (l == AR_LOSS_AUTO && (formats[spec->precision].mixed ||
					   formats[spec->precision].amp));
	return fp32 && (dt == AR_DT_FLOAT16 || dt == AR_DT_BFLOAT16) ?
	       AR_DT_FLOAT : dt;
}

ArDType ar_train_master_dtype(const ArTrainModel *m, int param)
{
	ArFormat f = m->spec.master_format;
	ArDType dt = f == AR_FMT_AUTO ? (formats[m->spec.precision].mixed ?
					 AR_DT_FLOAT : AR_DT_UNDEFINED) :
		     f == AR_FMT_FP32 ? AR_DT_FLOAT :
		     f == AR_FMT_FP16 ? AR_DT_FLOAT16 :
		     f == AR_FMT_BF16 ? AR_DT_BFLOAT16 : AR_DT_UNDEFINED;
	/* A master copy in the parameter's own format is the parameter. */
	return dt == m->base->tensors[param].dtype ? AR_DT_UNDEFINED : dt;
}

/* Bytes of one tensor of t's elements in dtype dt. */
static int64_t bytes_as(const ArTensor *t, ArDType dt)
{
	int64_t n = ar_numel(t);
	return n < 0 ? INT64_MAX : ar_train_mul(n, (int64_t)ar_dtype_size(dt));
}

/* Bytes of t, or of the largest chunk of its rows with --loss-chunk. */
static int64_t per_chunk(const ArTrainModel *m, const ArTensor *t)
{
	int k = m->spec.loss_chunks;
	if (k > 1 && m->rows > 0)
		return ar_train_mul(ar_train_mul((m->rows + k - 1) / k,
						 m->classes),
				    (int64_t)ar_dtype_size(t->dtype));
	return t->bytes;
}

/* The logits the loss reads (or one chunk of them, the largest), their
 * gradient, and the log-probabilities the cross-entropy keeps for its
 * backward (train_outputs.c), in the loss's format. */
static void logits_bytes(ArTrainModel *m)
{
	const ArNode *loss = &m->base->nodes[m->nfwd];
	int lp = loss->noutputs > 1 ? loss->outputs[1] : -1;
	int64_t b = per_chunk(m, &m->base->tensors[m->logits]);
	m->mem.logits_bytes = b;
	m->mem.logits_grad_bytes = m->grad[m->logits] || m->head >= 0 ? b : 0;
	m->mem.loss_kept_bytes = lp >= 0 ? per_chunk(m, &m->base->tensors[lp])
					 : 0;
	m->mem.loss_dtype = lp >= 0 ? ar_dtype_name(m->base->tensors[lp].dtype)
				    : "none";
}

/* The optimizer's state tensors of one parameter (or its shared ones),
 * on the device and in host memory. */
static void add_states(ArTrainMemory *x, const ArStateTensor *s, int n)
{
	for (int k = 0; k < n; k++) {
		int64_t b = ar_train_mul(s[k].numel,
					 (int64_t)ar_dtype_size(s[k].dtype));
		int64_t *part = s[k].host ? &x->host_state_bytes
					  : &x->state_bytes;
		*part = ar_train_add(*part, b);
	}
}

/* The formats the bill names, those of the largest trained parameter. */
static void formats_of(ArTrainModel *m)
{
	ArTrainMemory *x = &m->mem;
	ArStateTensor st[AR_MAX_STATES];
	int big = -1;
	for (int t = 0; t < m->base->ntensors; t++)
		if (m->param[t] && (big < 0 || ar_numel(&m->base->tensors[t]) >
				    ar_numel(&m->base->tensors[big])))
			big = t;
	x->grad_dtype = x->master_dtype = x->state_dtype = "none";
	if (big < 0)
		return;
	x->grad_dtype = ar_dtype_name(ar_train_grad_dtype(m, big));
	if (ar_train_master_dtype(m, big) != AR_DT_UNDEFINED)
		x->master_dtype = ar_dtype_name(ar_train_master_dtype(m, big));
	if (ar_optim_states(m, big, st) > 0)
		x->state_dtype = ar_dtype_name(st[0].dtype);
}

/* amp: the bytes of autocast's cached 16-bit copies of parameters (a
 * Cast of a parameter, trained or frozen, in autocast's graph). */
static int64_t weight_copies(const ArTrainModel *m)
{
	const ArGraph *g = m->base;
	int64_t b = 0;
	if (!formats[m->spec.precision].amp)
		return 0;
	for (int i = 0; i < m->nfwd; i++) {
		const ArNode *n = &g->nodes[i];
		int w = n->ninputs ? n->inputs[0] : -1;
		if (!strcmp(n->op, "Cast") && w >= 0 &&
		    (m->param[w] || m->frozen[w]) && n->outputs[0] >= 0)
			b = ar_train_add(b, g->tensors[n->outputs[0]].bytes);
	}
	return b;
}

int ar_train_memory(ArTrainModel *m, ArError *err)
{
	const ArGraph *g = m->base;
	ArTrainMemory *x = &m->mem;
	ArStateTensor st[AR_MAX_STATES];
	int rc = ar_optim_check(&m->spec, err);
	bool *read, *quant;

	if (rc)
		return rc;
	read = ar_xcalloc((size_t)g->ntensors + 1, sizeof *read);
	quant = ar_xcalloc((size_t)g->ntensors + 1, sizeof *quant);
	for (int i = 0; i <= m->nfwd; i++)
		for (int j = 0; ar_is_step(g, i) && !m->in_loss[i] &&
		     j < g->nodes[i].nexplicit; j++)
			if (g->nodes[i].inputs[j] >= 0) {
				read[g->nodes[i].inputs[j]] = true;
				/* --base-quant's or the model's stored
				 * weights (quant_matmul.c) */
				quant[g->nodes[i].inputs[j]] |=
					stored_operand(&g->nodes[i], j);
			}
	for (int t = 0; t < g->ntensors; t++) {
		const ArTensor *p = &g->tensors[t];
		if (m->param[t] && m->tied[t])
			continue;   /* counted with the one it copies */
		if (m->param[t]) {
			ArDType mdt = ar_train_master_dtype(m, t);
			x->parameter_count = ar_train_add(x->parameter_count,
						     ar_numel(p));
			x->parameter_bytes = ar_train_add(x->parameter_bytes,
						     p->bytes);
			x->master_bytes = ar_train_add(x->master_bytes,
				mdt != AR_DT_UNDEFINED ? bytes_as(p, mdt) : 0);
			/* --optimizer-in-backward: gradients are transients of
			 * the arena, not persistent. */
			if (!m->spec.optim_in_backward)
				x->gradient_bytes = ar_train_add(
					x->gradient_bytes,
					bytes_as(p, ar_train_grad_dtype(m, t)));
			add_states(x, st, ar_optim_states(m, t, st));
		} else if (read[t] && p->bytes > 0 &&
			   (p->kind == AR_TK_WEIGHT ||
			    p->kind == AR_TK_CONSTANT)) {
			int64_t *part = m->frozen[t] ? &x->frozen_bytes :
					quant[t] ? &x->quant_base_bytes :
					&x->constant_bytes;
			*part = ar_train_add(*part, p->bytes);
			if (m->frozen[t] && !m->tied[t])
				x->frozen_count = ar_train_add(x->frozen_count,
							       ar_numel(p));
		}
	}
	free(read);
	free(quant);
	x->autocast_copy_bytes = weight_copies(m);
	add_states(x, st, ar_optim_shared(m, st));
	formats_of(m);
	logits_bytes(m);
	if (x->state_bytes == INT64_MAX || x->master_bytes == INT64_MAX ||
	    x->host_state_bytes == INT64_MAX ||
	    x->gradient_bytes == INT64_MAX)
		return ar_fail(err, AR_EXIT_MODEL, "--train: optimizer state "
			       "size overflows");
	return AR_OK;
}
