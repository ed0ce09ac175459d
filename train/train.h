/*
 * train.h — the training stage: one training step (forward, loss,
 * backward, update) as a graph.
 *
 * The stage sits between the frontend and the planner.  It reads the
 * inferred forward graph and builds, through the IR alone, the graph of a
 * training step for a given selection of resident activations, so the
 * ordinary pipeline (ar_plan: lifetimes, offsets, verifier; ar_poison_run)
 * plans and checks it unchanged.  Which selection to build is the
 * planner's choice (planner/checkpoint.h).  What lives where:
 *   - in the arena (planned): graph inputs, the label, activations,
 *     activation gradients, recomputed activations, partial gradients,
 *     the statistics and masks a training step materialises;
 *   - persistent, outside the arena (kind AR_TK_WEIGHT, reported in the
 *     bill): parameters, frozen parameters and constants the steps read,
 *     the parameters' gradients, fp32 master weights (mixed precision),
 *     optimizer state, and the updated parameters ("W.next", W rewritten
 *     in place by the update step: the planner makes it share W's bytes).
 *
 * Checkpointing: a forward activation that some backward step reads
 * ("saved") either stays resident from the forward pass (a checkpoint) or
 * is freed after its last forward use and recomputed, from the nearest
 * resident tensors, right before the first backward step that needs it.
 */
#ifndef ARENAC_TRAIN_H
#define ARENAC_TRAIN_H

#include "graph.h"
#include "ops.h"

/* The optimizers of train/optimizers.c's table, in its order. */
typedef enum {
	AR_OPTIM_SGD, AR_OPTIM_MOMENTUM, AR_OPTIM_ADAM, AR_OPTIM_ADAMW,
	AR_OPTIM_ADAM8BIT, AR_OPTIM_ADAMW8BIT, AR_OPTIM_PAGED_ADAM8BIT,
	AR_OPTIM_PAGED_ADAMW8BIT, AR_OPTIM_PAGED_ADAMW, AR_OPTIM_ADAM4BIT,
	AR_OPTIM_ADAMW4BIT, AR_OPTIM_ADAFACTOR, AR_OPTIM_LION,
	AR_OPTIM_LION8BIT, AR_OPTIM_COUNT
} ArOptimizer;

/*
 * The number format a part of the optimizer's memory is asked to take
 * (--grad-dtype, --master-dtype, --state-dtype; Megatron-LM's
 * main_grads_dtype, main_params_dtype, exp_avg_dtype).  AUTO: what the
 * precision gives.  INT8 and INT4 exist to be refused where they cannot
 * hold the value (a master copy, a gradient; optimizers.c), NONE only for
 * the master copy.
 */
typedef enum {
	AR_FMT_AUTO, AR_FMT_FP32, AR_FMT_FP16, AR_FMT_BF16, AR_FMT_INT8,
	AR_FMT_INT4, AR_FMT_NONE
} ArFormat;

/*
 * Number formats (precision.c).  MODEL keeps the model's float types and
 * has no master weights.  fp32, fp16, bf16: every float tensor of the step
 * (weights, activations, gradients, optimizer state) in that format.
 * mixed-*: weights, activations and gradients 16-bit, while the optimizer
 * keeps fp32 master weights and fp32 state (the ZeRO paper's accounting:
 * Adam 2 + 2 + 4 + 4 + 4 = 16 bytes per parameter).  Statistics a kernel
 * keeps in float32 (LayerNorm's stash_type, BatchNorm's batch statistics)
 * stay float32, masks bool.  amp-*: torch.autocast (autocast.c): the
 * model's parameters, gradients and optimizer state fp32, each op in the
 * type autocast's lists give it, with the casts as Cast nodes.
 */
typedef enum {
	AR_PREC_MODEL, AR_PREC_FP32, AR_PREC_FP16, AR_PREC_BF16,
	AR_PREC_MIXED_FP16, AR_PREC_MIXED_BF16,
	AR_PREC_AMP_FP16, AR_PREC_AMP_BF16
} ArPrecision;

/* What to train and how: the choices a user makes. */
/* --lora (lora.c): rank, alpha (s = alpha / rank), the adapter path's
 * dropout, and the linears to adapt (POSIX extended expressions on the
 * weight's or the node's name; none: AR_LORA_DEFAULT_TARGET). */
#define AR_LORA_MAX_TARGETS 64
#define AR_LORA_A_SUFFIX ".lora_A"
#define AR_LORA_B_SUFFIX ".lora_B"
typedef struct ArLoraSpec {
	int64_t rank;           /* 0: no adapters */
	double alpha;
	double dropout;
	const char *const *targets;
	int ntargets;
} ArLoraSpec;
typedef struct ArLoraInfo {
	int adapted_linears;
	int64_t adapter_parameters;
} ArLoraInfo;

/* --base-quant (base_quant.c): how frozen linear weights are stored. */
typedef enum { AR_BQ_NONE, AR_BQ_NF4, AR_BQ_FP4, AR_BQ_INT8 } ArBqFormat;
typedef struct ArBaseQuant {
	ArBqFormat format;
	int64_t block;          /* 4-bit formats: weights per absmax (64) */
	bool double_quant;      /* the absmax in 8 bits, per 256 an fp32 */
} ArBaseQuant;

/* --attention: the op-by-op core (math), or one fused kernel: FlashAttention
 * (flash) or PyTorch's memory-efficient kernel (efficient). */
typedef enum { AR_ATTN_MATH, AR_ATTN_FLASH, AR_ATTN_EFFICIENT } ArAttention;

/* --loss-dtype: the format the cross-entropy computes in and keeps its
 * log-probabilities in (loss.c); auto: fp32 in the mixed and amp
 * precisions, else the logits' own. */
typedef enum { AR_LOSS_AUTO, AR_LOSS_FP32, AR_LOSS_SAME } ArLossDtype;

typedef struct ArTrainSpec {
	ArOptimizer optimizer;
	ArPrecision precision;
	/* POSIX extended regular expressions on tensor names (params.c):
	 * with any `trainable`, only parameters one matches are trained;
	 * a parameter a `freeze` matches is frozen, whatever `trainable`
	 * says. */
	const char *const *freeze;
	int nfreeze;
	const char *const *trainable;
	int ntrainable;
	/* Plan the attached cross-entropy over this many chunks of the
	 * tokens (step.c); 0 or 1: in one piece. */
	int loss_chunks;
	/* Recognise the subgraphs of ops/grad_patterns.c (GELU, SiLU,
	 * rsqrt, LayerNorm as exporters decompose them) and give each one
	 * backward step (patterns.c). */
	bool grad_patterns;
	/* Float graph inputs get gradients too: a pipeline stage's received
	 * activation, whose gradient it sends back (stage.h). */
	bool input_grads;
	/* The graph holds some of the model's parameters (a pipeline
	 * stage): a --trainable or --freeze expression need not match one
	 * here. */
	bool some_params;
	/* Resident activations live in a slower memory between their last
	 * forward use and the backward pass, and are fetched back before
	 * it (--offload activations; step.c). */
	bool offload_activations;
	/* Formats of the gradients, the master copy and the optimizer's
	 * full-size state (ArFormat; optimizers.c). */
	ArFormat grad_format, master_format, state_format;
	ArLossDtype loss_dtype;
	/* Adafactor keeps a first moment (transformers' beta1 not None). */
	bool beta1;
	ArAttention attention;
	/* torchtune's optimizer_in_bwd: each update right after its
	 * gradient, no gradient persistent (step.c). */
	bool optim_in_backward;
	/* --grad-accum: micro-batches a step (0 or 1: one); the plan is one
	 * micro-batch's, the gradients persist across them. */
	int grad_accum;
	ArLoraSpec lora;
	ArBaseQuant base_quant;
	/* Where the training stage's warnings go (a kernel asked for with no
	 * attention core to run it on). */
	ArDiag diag;
} ArTrainSpec;

/* The persistent part of a step's memory, per kind (precision.c). */
typedef struct ArTrainMemory {
	int64_t parameter_count;        /* trained parameters (elements) */
	int64_t parameter_bytes;        /* trained parameters */
	int64_t frozen_bytes;           /* frozen parameters */
	int64_t frozen_count;           /* their elements */
	int64_t constant_bytes;         /* other constants the steps read */
	int64_t quant_base_bytes;       /* --base-quant's stored weights */
	int64_t gradient_bytes;         /* = parameters, in their format */
	int64_t master_bytes;           /* fp32 copies (mixed precision) */
	int64_t state_bytes;            /* on the device: momentum 1x, Adam
					 * 2x, quantised codes and scales */
	int64_t host_state_bytes;       /* paged state in host memory */
	/* The formats of the largest trained parameter's gradient, master
	 * copy ("none") and first optimizer state tensor ("none"). */
	const char *grad_dtype, *master_dtype, *state_dtype;
	/* In the arena, amp only: autocast's 16-bit copies of parameters,
	 * kept from their first use to the backward steps that read them. */
	int64_t autocast_copy_bytes;
	/* In the arena: the logits the loss reads and their gradient (per
	 * chunk with loss_chunks). */
	int64_t logits_bytes, logits_grad_bytes;
	/* In the arena: what the cross-entropy keeps for its backward, its
	 * log-probabilities in the loss's format (per chunk), and that
	 * format's name ("none": a loss that keeps none of its own). */
	int64_t loss_kept_bytes;
	const char *loss_dtype;
} ArTrainMemory;

/* The fused backward of a recognised subgraph (patterns.c): its last node
 * gets the gradient of op (a table entry, e.g. Gelu, LayerNormalization)
 * from inputs in (the chain's input first; -1 for one the chain lacks) to
 * outputs out; the other nodes of the subgraph get no backward step. */
typedef struct ArFusedGrad {
	const ArOpDef *op;
	int in[AR_PAT_MAX_IO], out[AR_PAT_MAX_IO];
	int nin, nout;
	int64_t flops;          /* the subgraph's forward FLOPs */
} ArFusedGrad;

/*
 * The forward graph prepared for training (train.c): the loss (attached
 * to the first output, or the model's own) as node nfwd, the outputs a
 * training step materialises, the chosen precision, and per tensor what
 * the backward pass needs.  Tensor ids are the forward graph's (new ones
 * follow); node ids too, except that a model's own loss node moves to
 * nfwd.
 */
typedef struct ArTrainModel {
	ArGraph *base;          /* forward + loss, no attributes */
	ArTrainSpec spec;
	int nfwd;               /* forward nodes of base (the loss excluded) */
	int logits;             /* the loss's scores (its input 0) */
	bool own_loss;          /* the model computes its loss itself */
	/* The loss reads an fp32 copy of 16-bit scores (--loss-dtype,
	 * loss.c): logits is that copy, which ar_train_convert leaves. */
	bool loss_upcast;
	const ArGradRule **rule;/* per base node with a backward step, else NULL */
	ArFusedGrad *fused;     /* per base node; op NULL: none */
	bool *in_pattern;       /* per base node: inside a fused subgraph */
	bool *param;            /* per tensor: a trained parameter */
	bool *frozen;           /* per tensor: a parameter not trained */
	/* per tensor: a parameter that is a moved copy (Transpose, Reshape,
	 * ... folded) of another parameter the step also reads, as a tied
	 * LM head W^T of the embedding W: one Parameter in torch, so its
	 * elements, state and master copy are counted once, with W's */
	bool *tied;
	bool *grad;             /* per tensor: its gradient is computed */
	bool *saved;            /* per tensor: a backward step reads it */
	int *ncontrib;          /* per tensor: gradient contributions to sum */
	/* Checkpoint candidates, in production order: a node's first output
	 * a backward step needs, or needs to recompute from.  Its other such
	 * outputs (LayerNorm's mean and 1/std, BatchNorm's batch statistics,
	 * Dropout's mask) are tied to it: resident exactly when it is, so a
	 * selection is a choice per candidate, and no policy counts a node's
	 * statistics as activations of their own. */
	int *cand;
	int ncand;
	int *lead;              /* per tensor: the candidate it is or is tied
				 * to, -1 for none */
	int64_t *flops;         /* per base node */
	int64_t forward_flops, backward_flops;
	ArTrainMemory mem;
	/* The chunked loss (step.c): the node computing the logits (MatMul
	 * or Gemm by a parameter, views after it), the nodes that run inside
	 * the loss's chunks instead (the head and those views), the logits'
	 * tokens and classes. */
	int head;
	bool *in_loss;          /* per base node */
	int64_t rows, classes;
	ArLoraInfo lora;        /* --lora: what the adapters added */
	int64_t quant_params;   /* --base-quant: the weights stored quantised */
	/* per tensor of the model's graph (nbuffer of them), NULL for none:
	 * a module's buffer, never a parameter (buffers.c) */
	bool *buffer;
	int nbuffer;
} ArTrainModel;

/*
 * What the backward step of base node `node` differentiates: a fused
 * chain's op from its input to its output (patterns.c), or the node's own
 * op and tensors; false for the other nodes of a chain, which have none.
 * rule NULL: the op has no gradient rule.  loss: a loss op, whose
 * gradient starts the backward pass (nothing flows into it).
 */
typedef struct ArGradView {
	const char *op;
	const ArGradRule *rule;
	const int *in, *out;
	int nin, nout;
	bool loss;
} ArGradView;

bool ar_train_grad_view(const ArTrainModel *m, int node, ArGradView *v);
/* The outputs of a view whose gradient flows in (the rule's dout). */
uint32_t ar_train_grad_outputs(const ArGradView *v);

int ar_train_model(const ArGraph *fwd, const ArTrainSpec *spec,
		   ArTrainModel **out, ArError *err);
void ar_train_model_free(ArTrainModel *m);

/*
 * resident: per base tensor, true for activations that stay resident (NULL:
 * all of them); read at the candidates only, a tied output following its
 * lead.  The FLOPs of the forward nodes the graph below re-runs.
 */
int64_t ar_train_recompute_flops(const ArTrainModel *m, const bool *resident);
/* The training-step graph for that selection (step.c); its node order is
 * the step order to plan it in (AR_ORDER_FILE). */
ArGraph *ar_train_graph(const ArTrainModel *m, const bool *resident);
/* The same graph, traced for the checkpoint search: *node_src gets per node
 * the base node it stems from (a recompute: the node it re-runs; a
 * backward step or gradient sum: the node whose gradient it is; the loss
 * and its chunks: the loss node; an update: -1), *tensor_src per tensor
 * the base tensor it is, copies, or is the gradient or optimizer state
 * of.  The caller frees both. */
ArGraph *ar_train_graph_traced(const ArTrainModel *m, const bool *resident,
			       int **node_src, int **tensor_src);

/* The base graph with its loss node at nfwd, the model's own or attached
 * (loss.c); *order maps base nodes to fwd's (the caller frees it). */
int ar_train_loss(ArTrainModel *m, const ArGraph *fwd, int **order,
		  ArError *err);
/* --loss-chunk: the head and the loss as LinearCrossEntropy (loss.c). */
int ar_train_chunk_loss(ArTrainModel *m, ArError *err);

/* Which stored tensors are parameters, which of them are trained
 * (params.c); AR_EXIT_USAGE for a regular expression that does not
 * compile. */
int ar_train_params(ArTrainModel *m, ArError *err);
/* Whether t is a float tensor (float32, float16, bfloat16, double). */
bool ar_train_is_float(ArDType dt);

/* Converts the base graph's float tensors to the spec's format
 * (precision.c), before the training outputs are materialised. */
int ar_train_convert(ArTrainModel *m, ArError *err);
/* The persistent bill parts, once parameters and gradients are known. */
int ar_train_memory(ArTrainModel *m, ArError *err);
/* amp-*: the 16-bit type autocast computes in; AR_DT_UNDEFINED for the
 * other precisions. */
ArDType ar_precision_autocast(ArPrecision p);
/* The format --precision gives a float tensor of format dt. */
ArDType ar_precision_final(ArPrecision p, ArDType dt);
/* The format the cross-entropy computes in for scores in format dt. */
ArDType ar_train_loss_format(const ArTrainSpec *spec, ArDType dt);
/* The forward graph as torch.autocast runs it in 16-bit type low
 * (autocast.c): Cast nodes before the ops autocast casts the inputs of,
 * every float tensor in its autocast type.  AR_EXIT_MODEL for a model
 * without float activations. */
int ar_train_autocast(const ArGraph *src, ArDType low, ArGraph **out,
		      ArError *err);

extern const char *const AR_LORA_DEFAULT_TARGET;
/* A copy of src with the adapter path beside each targeted linear;
 * AR_EXIT_MODEL when no linear matches or the rank is above a weight's
 * smaller side, AR_EXIT_USAGE for an expression that does not compile. */
int ar_train_lora(const ArGraph *src, const ArLoraSpec *s, ArGraph **out,
		  ArLoraInfo *info, ArError *err);
/* Whether node n of g is a linear: a MatMul or Gemm (no transA) by a 2-D
 * float weight (input 1, not computed), or a QuantizedMatMul (a frozen
 * linear stored quantised); its in and out sizes (lora.c). */
bool ar_train_linear(const ArGraph *g, const ArNode *n, int64_t *in,
		     int64_t *out);
/* The stored bytes of an in x out weight in format q (base_quant.c). */
int64_t ar_base_quant_bytes(const ArBaseQuant *q, int64_t in, int64_t out);
/* A copy of src with every linear whose weight the options leave frozen
 * (the head and the adapters excepted) as an arenac.QuantizedMatMul by
 * its stored weight in spec's --base-quant format; *params their weights
 * (the stored bytes are the bill's, precision.c).  AR_EXIT_MODEL when
 * there is no linear, or when the options freeze none (full
 * fine-tuning). */
int ar_train_base_quant(const ArGraph *src, const ArTrainSpec *spec,
			ArGraph **out, int64_t *params, ArError *err);
/* A copy of src with each linear the model stores quantised itself
 * (DequantizeLinear, QDQ, MatMulNBits) as an arenac.QuantizedMatMul of
 * its stored tensors (prequant.c); *out NULL when there is none, *params
 * the weights they stand for. */
int ar_train_prequant(const ArGraph *src, ArGraph **out, int64_t *params,
		      ArError *err);
/* Whether the options leave weight t of g (a forward graph) frozen, as
 * ar_train_params will decide: named by --freeze or the exporter's
 * arenac.frozen, or, with --lora or --trainable, not named by --trainable
 * (params.c). */
bool ar_train_left_frozen(const ArTrainSpec *spec, const ArGraph *g, int t);
/* Whether a tensor name is an adapter's (W.lora_A, W.lora_B). */
bool ar_lora_adapter(const char *name);

/* One attention core (attention.c): its two products and the steps
 * between them, in order. */
#define AR_ATTN_MAX_CHAIN 16
typedef struct ArAttnCore {
	int first, last;
	int chain[AR_ATTN_MAX_CHAIN];
	int nchain;
} ArAttnCore;
/*
 * The attention cores among g's first nnodes nodes: core[] marks every
 * node of one; the first `max` of those whose chain feeds the second
 * product's first operand (softmax(..) v) go to cores[].  param: per
 * tensor, what stops a chain (a weight read inside it).  Returns how many
 * cores there are.
 */
int ar_attention_cores(const ArGraph *g, int nnodes, const bool *param,
		       bool *core, ArAttnCore *cores, int max);
/*
 * ONNX's Attention and com.microsoft's MultiHeadAttention in src written
 * as the attention core they compute (attention_ops.c) into *out, or
 * *out NULL when src has none; AR_EXIT_MODEL naming the node for a form
 * a training step cannot take (a KV cache, softcap, ...).
 */
int ar_train_attention_ops(const ArGraph *src, ArGraph **out, ArError *err);
/* A copy of src with each attention core nothing else reads into as one
 * arenac.FlashAttention node of the kernel (flash or efficient); *out
 * NULL when none could be. */
int ar_train_flash(const ArGraph *src, ArAttention kernel, ArGraph **out,
		   ArError *err);
/* The dtype of a parameter's master copy, AR_DT_UNDEFINED for none; of
 * its gradient; of what the optimizer updates (the master copy, else the
 * parameter itself). */
ArDType ar_train_master_dtype(const ArTrainModel *m, int param);
ArDType ar_train_grad_dtype(const ArTrainModel *m, int param);
ArDType ar_train_opt_dtype(const ArTrainModel *m, int param);

/* Whether tensor t of g holds weights: a float tensor of rank 1 or more
 * the model states (an initializer, a Constant), or a constant folded
 * from one by an op whose gradient only moves values (params.c).  memo:
 * per tensor, zeroed before the first call, kept between calls on g. */
bool ar_train_holds_weights(const ArGraph *g, int t, char *memo);
/* Per tensor of g, the float initializers that are a module's buffers:
 * the exporter's metadata, else the rule of buffers.c (warned); NULL
 * when there are none. */
bool *ar_train_buffers(const ArGraph *g, const ArTrainSpec *spec);
/* A copy of src in which each weight but the buffers (NULL: none)
 * reaches compute in its own shape (unfold.c); *out NULL when src has
 * none folded to another size. */
int ar_train_unfold(const ArGraph *src, const bool *buffer, ArGraph **out,
		    ArError *err);

/* Tensors (without data) and nodes (without attributes) of src, the
 * nodes in the order `order` gives (node k is src's order[k]; NULL: as
 * they are), producers renumbered accordingly (train.c). */
ArGraph *ar_train_copy(const ArGraph *src, const int *order);

/* Whether activation t stays resident under the selection (its lead's
 * entry; NULL: everything stays).  What the loss keeps always stays: its
 * backward runs right after it (its log-probabilities, train_outputs.c). */
static inline bool ar_train_resident(const ArTrainModel *m,
				     const bool *resident, int t)
{
	return !resident || m->base->tensors[t].producer == m->nfwd ||
	       resident[m->lead[t] >= 0 ? m->lead[t] : t];
}

/* Sums and products of sizes and FLOPs, saturating at INT64_MAX. */
static inline int64_t ar_train_add(int64_t a, int64_t b)
{
	int64_t r;
	return ar_add64(a, b, &r) ? r : INT64_MAX;
}

static inline int64_t ar_train_mul(int64_t a, int64_t b)
{
	int64_t r;
	return ar_mul64(a, b, &r) ? r : INT64_MAX;
}

/* Fused gradient subgraphs of the base graph (patterns.c); fwd gives
 * the constants' values. */
void ar_train_patterns(ArTrainModel *m, const ArGraph *fwd);

const char *ar_optimizer_name(ArOptimizer o);
/* The optimizer named s; false if none (optimizers.c). */
bool ar_optimizer_parse(const char *s, ArOptimizer *out);
/* The names of the formats ArFormat lists, "auto" first. */
const char *ar_format_name(ArFormat f);
const char *ar_precision_name(ArPrecision p);
const char *ar_attention_name(ArAttention a);   /* "math", "flash", ... */
const char *ar_base_quant_name(ArBqFormat f);   /* "none", "nf4", ... */
/* The precision named s (fp32, ..., mixed-bf16, amp-bf16); false if
 * none. */
bool ar_precision_parse(const char *s, ArPrecision *out);

#endif
