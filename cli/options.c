/*
 * options.c — the options of `arenac MODEL.onnx`, as one table.
 *
 * Each row says everything about one option: its name, its argument,
 * where the value goes and how it is read, whether it needs --train,
 * whether it shapes the plan (then it is echoed in the outputs'
 * "options" line, which the golden hashes pin), whether it names an
 * output file, and its help text.  The parser, --help, the checks after
 * parsing and the "did you mean" hint all read the table, so adding an
 * option is adding a row (and a Cli field; a parse function only when no
 * kind below fits).
 */
#include "options.h"
#include "numfmt.h"
#include "values.h"

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How an option's argument is read. */
typedef enum {
	FLAG,       /* no argument: stores .value */
	COUNT,      /* a positive integer (K, M, G: powers of 1024) <= .value
		     * when that is set */
	BYTES,      /* the same, in bytes */
	POW2,       /* a power of two */
	SECONDS,    /* a number >= 0 */
	TEXT,       /* kept as given (argv outlives the run) */
	CHOICE,     /* one of .choices "a|b|c": stores its index */
	CUSTOM      /* .parse reads it (no argument when .arg is NULL) */
} Kind;

enum {
	ECHO = 1,   /* shapes the plan: echoed in the outputs' "options" */
	TRAIN = 2,  /* only with --train */
	OUTPUT = 4, /* a file arenac writes: no two options may name one */
	MULTI = 8   /* plans many devices (devices.h) */
};

typedef enum {
	SHAPES, PLANNING, TRAINING, DEVICES, OUTPUTS, LIMITS, OTHER
} Section;

static const char *const section_title[] = {
	[SHAPES] = "Shapes:",
	[PLANNING] = "Planning:",
	[TRAINING] = ("Training (one step: forward, loss, backward, update "
		      "in one arena):"),
	[DEVICES] = ("Many devices (with --train; the model's batch is the "
		     "micro-batch;\n--memory then names each device's memory "
		     "first, then slower ones):"),
	[OUTPUTS] = "Outputs:",
	[LIMITS] = "Limits:",
	[OTHER] = "",
};

typedef struct Option {
	const char *name;           /* without the leading "--" */
	char short_name;            /* or 0 */
	Kind kind;
	const char *arg;            /* in --help; CHOICE: NULL shows .choices */
	size_t at, size;            /* the Cli field (size 0: none) */
	int64_t value;              /* FLAG: stored; COUNT: maximum or 0 */
	const char *choices;
	int (*parse)(Cli *c, char *arg);
	unsigned flags;
	Section section;
	const char *needs;          /* another option it is meaningless
				       without, or NULL */
	const char *help;           /* '\n' starts a continuation line */
} Option;

#define TO(field) offsetof(Cli, field), sizeof(((Cli *)0)->field)
#define NOWHERE 0, 0

static int show_help(Cli *c, char *arg);
static int show_version(Cli *c, char *arg);

static const Option options[] = {
	{"dim", 0, CUSTOM, "NAME=VALUE", NOWHERE, .parse = cli_parse_dim,
	 .flags = ECHO, .section = SHAPES,
	 .help = "bind a symbolic input dim (repeatable)"},
	{"dim-default", 0, COUNT, "VALUE", TO(load.dim_default), .flags = ECHO,
	 .section = SHAPES,
	 .help = "bind every symbolic dim not bound otherwise"},
	{"batch", 0, COUNT, "N", TO(load.batch), .flags = ECHO,
	 .section = SHAPES,
	 .help = "set axis 0 of every graph input to N where it is\n"
		 "symbolic or 1 (another fixed size stays, with a\n"
		 "warning)"},
	{"max-seq", 0, COUNT, "N", TO(load.max_seq), .flags = ECHO,
	 .section = SHAPES,
	 .help = "KV caches are static buffers of N positions: the\n"
		 "sequence axis of every attention cache input\n"
		 "(past_key, past_value, past) is N and the present\n"
		 "output is written over it in place"},
	{"input-shape", 0, CUSTOM, "NAME=DIMS", NOWHERE,
	 .parse = cli_parse_input_shape, .flags = ECHO, .section = SHAPES,
	 .help = "the whole shape of graph input NAME: 1x3x224x224,\n"
		 "or scalar for rank 0 (repeatable)"},
	{"input-value", 0, CUSTOM, "NAME=V[,V...]", NOWHERE,
	 .parse = cli_parse_input_value, .flags = ECHO, .section = SHAPES,
	 .help = "graph input NAME has this value at every run (a\n"
		 "sample rate, a flag): it becomes a constant, so the\n"
		 "shapes and If branches that depend on it fold and\n"
		 "the header no longer asks for it (repeatable)"},

	{"bound", 0, CUSTOM, "NAME=N", NOWHERE, .parse = cli_parse_bound,
	 .flags = ECHO, .section = SHAPES,
	 .help = "the largest extent of each data-dependent axis\n"
		 "of tensor NAME (NonZero, NonMaxSuppression, ...);\n"
		 "NAME=D0xD1x... bounds it axis by axis (repeatable);\n"
		 "one error lists every tensor that needs one"},
	{"align", 0, POW2, "N", TO(plan.align), .flags = ECHO,
	 .section = PLANNING,
	 .help = "offset and size alignment, a power of two (16)"},
	{"algo", 0, TEXT, "NAME", TO(plan.algo), .flags = ECHO,
	 .section = PLANNING,
	 .help = "auto, greedy-size, greedy-breadth, greedy-lifetime,\n"
		 "exact (auto: heuristics, then exact search)"},
	{"effort", 0, CUSTOM, "1-9", NOWHERE, .parse = cli_parse_effort,
	 .flags = ECHO, .section = PLANNING,
	 .help = "how much work each search may do (order, offsets,\n"
		 "tiers, checkpoints): 4x more per level (5); the\n"
		 "same model and options give the same plan on\n"
		 "every machine"},
	{"time-limit", 0, SECONDS, "SECONDS", TO(plan.time_limit),
	 .flags = ECHO, .section = PLANNING,
	 .help = "safety net: the searches stop SECONDS after the\n"
		 "run starts, and the run says so (off); plans cut\n"
		 "short by it depend on the machine's speed"},
	{"budget", 0, BYTES, "BYTES", TO(plan.budget), .flags = ECHO,
	 .section = PLANNING,
	 .help = "fail with exit 3 if the arena exceeds BYTES\n"
		 "(K, M, G, T, KiB..TiB: powers of 1024; KB, MB, GB,\n"
		 "TB: of 1000; 1.5G too); with --train,\n"
		 "if the whole device does: persistent state, arena\n"
		 "and --reserve"},
	{"arena-budget", 0, BYTES, "BYTES", TO(arena_budget), .flags = ECHO,
	 .section = PLANNING,
	 .help = "fail with exit 3 if the arena alone exceeds BYTES\n"
		 "(with --train: what --checkpoint optimal fits)"},
	{"order", 0, CHOICE, NULL, TO(plan.order), .choices = "file|memory",
	 .flags = ECHO, .section = PLANNING,
	 .help = "step order: the file's, or the one with the least\n"
		 "peak memory found (memory)"},
	{"no-views", 0, FLAG, NULL, TO(plan.views), .value = false,
	 .flags = ECHO, .section = PLANNING,
	 .help = "Reshape & co. copy instead of sharing their input"},
	{"inplace", 0, CHOICE, NULL, TO(plan.inplace),
	 .choices = "none|elementwise", .flags = ECHO, .section = PLANNING,
	 .help = "elementwise ops may overwrite a dying input of\n"
		 "their output's size (elementwise)"},
	{"concat", 0, CHOICE, NULL, TO(plan.concat_elide),
	 .choices = "copy|elide", .flags = ECHO, .section = PLANNING,
	 .help = "Concat inputs written straight into their slice\n"
		 "of the output where that is safe (elide)"},
	{"fuse", 0, CHOICE, NULL, TO(fuse), .choices = "none|preact",
	 .flags = ECHO, .section = PLANNING,
	 .help = "a Conv whose input is only a chain of per-channel\n"
		 "ops (BatchNormalization, Mul, Add, Relu) applies\n"
		 "them as it loads (arenac.PreactConv), so their\n"
		 "outputs are never stored; needs a runtime kernel\n"
		 "(none)"},
	{"layout", 0, CHOICE, NULL, TO(nhwc), .choices = "nchw|nhwc",
	 .flags = ECHO, .section = PLANNING,
	 .help = "4-D activations as the model has them, or\n"
		 "channels-last as CMSIS-NN and TFLite Micro\n"
		 "kernels use them, conv filters OHWI; the graph's\n"
		 "inputs and outputs keep the model's layout (nchw)"},
	{"io", 0, CHOICE, NULL, TO(plan.io_separate),
	 .choices = "arena|separate", .flags = ECHO, .section = PLANNING,
	 .help = "graph inputs and outputs in the arena, or in\n"
		 "buffers the caller owns and passes (arena)"},
	{"scratch", 0, CHOICE, NULL, TO(plan.kernel_scratch),
	 .choices = "none|kernels", .flags = ECHO, .section = PLANNING,
	 .help = "kernels: a step whose reference-runtime kernel\n"
		 "needs workspace (RNN, GRU, LSTM) gets it in the\n"
		 "arena, live for that step alone; none: for a\n"
		 "runtime with workspace of its own (kernels)"},
	{"kernel-scratch", 0, CUSTOM, "FILE", NOWHERE,
	 .parse = cli_parse_kernel_scratch, .flags = ECHO, .section = PLANNING,
	 .help = "a kernel library's workspace per op, planned at\n"
		 "its step: lines 'Op: EXPR' over N C_in H_in W_in\n"
		 "C_out H_out W_out kH kW group elem inJ[D] outJ[D]\n"
		 "(e.g. CMSIS-NN's im2col, QLinearConv: 4 * ((C_in\n"
		 "* kH * kW + 3) / 4 * 4)); replaces --scratch's"},
	{"memory", 0, CUSTOM, "NAME:SIZE[:BANDWIDTH]", NOWHERE,
	 .parse = cli_parse_memory, .flags = ECHO, .section = PLANNING,
	 .help = "a memory tier, fastest first (repeatable): each\n"
		 "gets its own arena, and each activation goes to\n"
		 "the tier that minimises the estimated traffic\n"
		 "time; SIZE in bytes (K, M, G: powers of 1024),\n"
		 "BANDWIDTH in bytes/s (K, M, G, T: powers of 1000);\n"
		 "a name from --list-devices brings its size and\n"
		 "bandwidth (H100-SXM), a host memory's with the\n"
		 "size given (DDR5-5600-8ch:512G)"},
	{"device", 0, CUSTOM, "NAME[:SIZE]", NOWHERE,
	 .parse = cli_parse_device, .flags = ECHO, .section = PLANNING,
	 .help = "a device from --list-devices: its memory is the\n"
		 "first --memory; its FLOP/s and link feed the\n"
		 "step-time estimate of --dp, --tp and --pp; with\n"
		 "--train its reserve is the default --reserve\n"
		 "(H100-SXM: 80 GiB HBM3 at 3.35 TB/s, 989.4\n"
		 "TFLOP/s, 266,076,160 bytes of CUDA context);\n"
		 "SIZE: the memory as the driver shows it (the\n"
		 "total of torch.cuda.mem_get_info()), below the\n"
		 "datasheet's by the driver's own share"},
	{"weights-in", 0, TEXT, "NAME", TO(plan.weights_in), .flags = ECHO,
	 .section = PLANNING,
	 .help = "place the weights at the start of memory NAME\n"
		 "(default: apart from the arenas, as without tiers)"},

	{"train", 0, FLAG, NULL, TO(train), .value = true, .flags = ECHO,
	 .section = TRAINING,
	 .help = "plan a training step instead of inference"},
	{"loss", 0, CHOICE, NULL, NOWHERE, .choices = "cross-entropy",
	 .flags = TRAIN, .section = TRAINING,
	 .help = "the loss on the first output (the only kind); a\n"
		 "model whose first output is the scalar of a\n"
		 "SoftmaxCrossEntropyLoss or\n"
		 "NegativeLogLikelihoodLoss is trained on it"},
	{"attention", 0, CHOICE, "KERNEL", TO(topt.spec.attention),
	 .choices = "math|flash|efficient", .flags = ECHO | TRAIN,
	 .section = TRAINING,
	 .help = "math: the attention core op by op (its score\n"
		 "matrices kept for the backward pass); flash: each\n"
		 "core one FlashAttention kernel keeping q, k, v, the\n"
		 "output and the fp32 log-sum-exp, its backward's\n"
		 "workspace in the arena; efficient: PyTorch's\n"
		 "memory-efficient kernel (the log-sum-exp padded to\n"
		 "32 rows, its backward's workspace as on an A100 or\n"
		 "H100) (math)"},
	{"grad-accum", 0, COUNT, "N", TO(topt.spec.grad_accum),
	 .value = 1000000, .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "N micro-batches a step: the plan is one micro-batch's\n"
		 "(--batch), the gradients persist across them, one\n"
		 "update; the step's FLOPs are N times (1)"},
	{"optimizer-in-backward", 0, FLAG, NULL,
	 TO(topt.spec.optim_in_backward), .value = true, .flags = ECHO | TRAIN,
	 .section = TRAINING,
	 .help = "each parameter updated as soon as its gradient is\n"
		 "whole, the gradient then freed (torchtune's\n"
		 "optimizer_in_bwd): no gradient is persistent"},
	{"allocator", 0, CHOICE, NULL, TO(topt.allocator_caching),
	 .choices = "static|caching", .flags = ECHO | TRAIN,
	 .section = TRAINING,
	 .help = "static: the device holds the plan (an arena);\n"
		 "caching: what PyTorch's CUDA caching allocator\n"
		 "reserves for the planned step (512-byte rounding,\n"
		 "2 and 20 MiB segments, fragmentation), simulated\n"
		 "(static)"},
	{"reserve", 0, CUSTOM, "BYTES", NOWHERE, .parse = cli_parse_reserve,
	 .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "bytes of the device held by what is not the step\n"
		 "(the CUDA context, 0.3-1 GiB, and the caching\n"
		 "allocator's slack), counted against --budget and\n"
		 "the first --memory (0; with --device, its reserve)"},
	{"loss-chunk", 0, COUNT, "N", TO(topt.spec.loss_chunks),
	 .value = 1000000, .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "compute the head (the MatMul or Gemm giving the\n"
		 "logits) and the cross-entropy in N chunks of the\n"
		 "tokens, one chunk's logits alive at a time (1)"},
	{"loss-dtype", 0, CHOICE, "FORMAT", TO(topt.spec.loss_dtype),
	 .choices = "auto|fp32|same", .flags = ECHO | TRAIN,
	 .section = TRAINING,
	 .help = "the cross-entropy's format: fp32 reads an fp32\n"
		 "copy of 16-bit logits and keeps fp32\n"
		 "log-probabilities for the backward (Megatron-LM,\n"
		 "torch.autocast); same: the logits' format; auto:\n"
		 "fp32 with mixed-* and amp-*, else same (auto)"},
	{"optimizer", 0, CUSTOM, "NAME", NOWHERE, .parse = cli_parse_optimizer,
	 .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "sgd, momentum, adam, adamw (torch.optim), adam8bit,\n"
		 "adamw8bit, lion8bit (bitsandbytes: uint8 moments,\n"
		 "an fp32 absmax per 256; fp32 under 4096\n"
		 "elements), paged-adam8bit, paged-adamw8bit,\n"
		 "paged-adamw (moments of 1e5 elements or more in\n"
		 "host memory), adam4bit, adamw4bit (torchao: 4-bit\n"
		 "moments, an fp32 scale per 128), adafactor\n"
		 "(factored second moment), lion (one moment) (sgd)"},
	{"grad-dtype", 0, CHOICE, "FORMAT", TO(topt.spec.grad_format),
	 .choices = "auto|fp32|fp16|bf16|int8|int4", .flags = ECHO | TRAIN,
	 .section = TRAINING,
	 .help = "the parameters' gradients (Megatron-LM's\n"
		 "main_grad: fp32 beside bf16 weights); auto: the\n"
		 "weights' format (auto)"},
	{"master-dtype", 0, CHOICE, "FORMAT", TO(topt.spec.master_format),
	 .choices = "auto|fp32|fp16|bf16|int8|int4|none",
	 .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "the optimizer's master copy of 16-bit weights, or\n"
		 "none; auto: fp32 with mixed-*, else none (auto)"},
	{"state-dtype", 0, CHOICE, "FORMAT", TO(topt.spec.state_format),
	 .choices = "auto|fp32|fp16|bf16|int8|int4", .flags = ECHO | TRAIN,
	 .section = TRAINING,
	 .help = "the optimizer's moments (Megatron-LM's\n"
		 "exp_avg_dtype); auto: the format of what it\n"
		 "updates, the master copy if any (auto)"},
	{"beta1", 0, CUSTOM, "B", NOWHERE, .parse = cli_parse_beta1,
	 .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "adafactor keeps a first moment (transformers'\n"
		 "beta1; default none)"},
	{"precision", 0, CUSTOM, "NAME", NOWHERE, .parse = cli_parse_precision,
	 .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "fp32, fp16, bf16: every float tensor in that\n"
		 "format; mixed-fp16, mixed-bf16: 16-bit weights,\n"
		 "activations and gradients, fp32 master weights\n"
		 "and optimizer state (a model cast wholesale, or\n"
		 "Megatron); amp-fp16, amp-bf16: torch.autocast,\n"
		 "fp32 parameters, gradients and state, matmuls\n"
		 "and convolutions 16-bit, softmax, norms and\n"
		 "losses fp32, the model's own casts kept\n"
		 "(default: the model's types)"},
	{"trainable", 0, CUSTOM, "REGEX", NOWHERE,
	 .parse = cli_parse_trainable, .flags = ECHO | TRAIN,
	 .section = TRAINING,
	 .help = "train only the parameters REGEX matches (POSIX\n"
		 "extended, on tensor names; repeatable)"},
	{"freeze", 0, CUSTOM, "REGEX", NOWHERE, .parse = cli_parse_freeze,
	 .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "do not train the parameters REGEX matches (no\n"
		 "gradient, no optimizer state; repeatable); wins\n"
		 "over --trainable where both match"},
	{"lora", 0, CUSTOM, "RANK[:ALPHA]", NOWHERE, .parse = cli_parse_lora,
	 .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "LoRA adapters of rank RANK beside each linear\n"
		 "--lora-target names: y = xW + (alpha/RANK)(xA)B,\n"
		 "only A and B trained (and what --trainable adds),\n"
		 "every base weight frozen (alpha: RANK)"},
	{"lora-target", 0, CUSTOM, "REGEX", NOWHERE,
	 .parse = cli_parse_lora_target, .flags = ECHO | TRAIN,
	 .section = TRAINING, .needs = "lora",
	 .help = "the linears to adapt, on the weight's or the node's\n"
		 "name (POSIX extended; repeatable; default: the\n"
		 "query and value projections, q|v|wq|wv|q_proj|\n"
		 "v_proj|query|value, and GPT-2's fused qkv|c_attn)"},
	{"lora-dropout", 0, CUSTOM, "P", NOWHERE,
	 .parse = cli_parse_lora_dropout, .flags = ECHO | TRAIN,
	 .section = TRAINING, .needs = "lora",
	 .help = "dropout on the adapter path's input: its mask and\n"
		 "dropped input are kept for A's gradient (0)"},
	{"base-quant", 0, CUSTOM, "FORMAT[:BLOCK]", NOWHERE,
	 .parse = cli_parse_base_quant, .flags = ECHO | TRAIN,
	 .section = TRAINING,
	 .help = "store every frozen linear's weight as bitsandbytes\n"
		 "does (the head and adapters excepted): nf4, fp4 (4\n"
		 "bits and an fp32 absmax per BLOCK, 64) or int8\n"
		 "(LLM.int8()); each use dequantises it into a\n"
		 "transient of its step (QLoRA with --lora)"},
	{"double-quant", 0, FLAG, NULL, TO(topt.spec.base_quant.double_quant),
	 .value = true, .flags = ECHO | TRAIN, .section = TRAINING,
	 .needs = "base-quant",
	 .help = "the 4-bit formats' absmax in 8 bits, an fp32 per 256\n"
		 "blocks (compress_statistics: 4.127 bits a weight)"},
	{"grad-fuse", 0, CHOICE, NULL, TO(topt.spec.grad_patterns),
	 .choices = "none|gelu", .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "the backward of the ops exporters decompose\n"
		 "(GELU's Erf and Tanh chains, SiLU, rsqrt,\n"
		 "LayerNorm below opset 17) keeps what the op's\n"
		 "own does, as torch does (gelu); none: per-op rules"},
	{"checkpoint", 0, CHOICE, "POLICY", TO(topt.policy),
	 .choices = "none|all|sqrt|optimal|layer|selective",
	 .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "which activations stay for the backward pass:\n"
		 "none (all stay), all (layer boundaries stay),\n"
		 "sqrt (Chen et al.), optimal (least recompute\n"
		 "that fits --budget or --arena-budget, never more\n"
		 "than a fixed policy; without either: the\n"
		 "smallest arena it reaches), layer (each layer's\n"
		 "input stays, the layer is recomputed: Megatron's full\n"
		 "recomputation), selective (only the attention\n"
		 "core is recomputed: QK^T, softmax, its dropout,\n"
		 "attention over V); default optimal with\n"
		 "--budget or --arena-budget, else none"},
	{"layer-boundary", 0, TEXT, "REGEX", TO(topt.layer_boundary),
	 .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "the layers' inputs, by a POSIX extended\n"
		 "expression on tensor names (in the order they are\n"
		 "computed; the last match ends the last layer);\n"
		 "default: the repeated blocks between the\n"
		 "activations that cut the forward pass"},
	{"max-batch", 0, FLAG, NULL, TO(max_batch), .value = true,
	 .flags = TRAIN, .section = TRAINING,
	 .help = "the largest --batch whose step fits the device\n"
		 "(--budget or the first --memory, --reserve too):\n"
		 "doubling, then bisecting, every batch tried planned\n"
		 "and verified; prints the tries, plans the answer"},
	{"max-dim", 0, TEXT, "NAME", TO(max_dim), .flags = TRAIN,
	 .section = TRAINING,
	 .help = "the same for the symbolic dim NAME (a sequence\n"
		 "length, as --dim NAME=V binds it): the largest V\n"
		 "whose step fits, or that the model takes"},
	{"budget-sweep", 0, FLAG, NULL, TO(sweep), .value = true,
	 .flags = TRAIN, .section = TRAINING,
	 .help = "print the budget / recompute trade-off from the\n"
		 "no-recompute arena down to --budget (default:\n"
		 "the smallest reachable arena) and exit"},

	{"loader", 0, CUSTOM, "WORKERS[:PREFETCH]", NOWHERE,
	 .parse = cli_parse_loader, .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "the host's bill counts a DataLoader per rank:\n"
		 "WORKERS x PREFETCH (2) batches of the inputs and\n"
		 "labels in the file's types, plus one pinned batch"},
	{"load-dtype", 0, CHOICE, "FORMAT", TO(load_dtype),
	 .choices = "fp32|fp16|bf16", .flags = ECHO | TRAIN,
	 .section = TRAINING,
	 .help = "fp32, fp16 or bf16: each rank loads the whole\n"
		 "model so before ZeRO-3 or --tp keeps its share,\n"
		 "the host's load peak (fp32, torch's default)"},
	{"gpus-per-node", 0, COUNT, "N", TO(host.gpus_per_node),
	 .value = 1 << 16, .flags = ECHO | TRAIN, .section = TRAINING,
	 .help = "the host's bill is per node of N ranks (default:\n"
		 "every rank on one)"},
	{"host-memory", 0, CUSTOM, "[NAME:]SIZE", NOWHERE,
	 .parse = cli_parse_host_memory, .flags = ECHO | TRAIN,
	 .section = TRAINING,
	 .help = "one node's host memory (NAME: a host memory of\n"
		 "--list-devices): exit 3 if the host's bill, the\n"
		 "larger of the load and the steps, exceeds it;\n"
		 "--fit and --max-batch refuse what does"},

	{"dp", 0, COUNT, "N", TO(dev.dp), .value = 1 << 20,
	 .flags = ECHO | TRAIN | MULTI, .section = DEVICES,
	 .help = "data parallelism: N devices, each on its own\n"
		 "micro-batches, gradients reduced in buckets"},
	{"zero", 0, CHOICE, "STAGE", TO(dev.zero), .choices = "0|1|2|3",
	 .flags = ECHO | TRAIN | MULTI, .section = DEVICES, .needs = "dp",
	 .help = "ZeRO over the --dp devices: 1 partitions the\n"
		 "optimizer state, 2 the gradients too, 3 the\n"
		 "weights too, gathered a layer at a time (0)"},
	{"zero-init", 0, FLAG, NULL, TO(host.zero_init), .value = true,
	 .flags = ECHO | TRAIN, .section = DEVICES, .needs = "zero",
	 .help = "ZeRO-3 builds the model partitioned\n"
		 "(deepspeed.zero.Init): a rank loads one module\n"
		 "whole at a time, not the model (the host's bill)"},
	{"bucket", 0, BYTES, "BYTES", TO(dev.bucket),
	 .flags = ECHO | TRAIN, .section = DEVICES,
	 .help = "gradient bucket of the data-parallel reduction\n"
		 "(25M)"},
	{"tp", 0, COUNT, "N", TO(dev.tp), .value = 1 << 16,
	 .flags = ECHO | TRAIN | MULTI, .section = DEVICES,
	 .help = "Megatron tensor parallelism over N devices: the\n"
		 "column- and row-parallel linears of attention\n"
		 "and MLP, found in the graph, split with the\n"
		 "activations between them"},
	{"sequence-parallel", 0, FLAG, NULL, TO(dev.sp), .value = true,
	 .flags = ECHO | TRAIN | MULTI, .section = DEVICES, .needs = "tp",
	 .help = "the rest of each layer (norms, dropouts,\n"
		 "residuals) split along the sequence too"},
	{"pp", 0, COUNT, "N", TO(dev.pp), .value = 1 << 16,
	 .flags = ECHO | TRAIN | MULTI, .section = DEVICES,
	 .help = "pipeline parallelism: the layers in N stages,\n"
		 "split to balance the devices' memory"},
	{"microbatches", 0, COUNT, "M", TO(dev.microbatches),
	 .value = 1 << 20, .flags = ECHO | TRAIN, .section = DEVICES,
	 .help = "micro-batches per step and pipeline (1); with\n"
		 "--fit, in all (one per device)"},
	{"schedule", 0, CHOICE, NULL, TO(dev.schedule),
	 .choices = "1f1b|gpipe", .flags = ECHO | TRAIN, .section = DEVICES,
	 .help = "pipeline schedule: 1f1b (stage i holds min(N-i,\n"
		 "M) micro-batches) or gpipe (all M) (1f1b)"},
	{"offload", 0, CUSTOM, "WHAT:MEMORY", NOWHERE,
	 .parse = cli_parse_offload, .flags = ECHO | TRAIN | MULTI,
	 .section = DEVICES,
	 .help = "keep optimizer (fp32 state), parameters or\n"
		 "activations (those kept for the backward pass)\n"
		 "in --memory MEMORY, moved each step (repeatable)"},
	{"fit", 0, CUSTOM, "NxSIZE[:FLOPS[:LINK]]", NOWHERE,
	 .parse = cli_parse_fit, .flags = ECHO | TRAIN, .section = DEVICES,
	 .help = "the configurations of N devices of SIZE bytes\n"
		 "(dp, zero, tp, pp, checkpoint) that fit, cheapest\n"
		 "first; FLOPS per device and LINK bytes/s for the\n"
		 "estimate (312T, 300G); exit 3 if none fits; SIZE\n"
		 "may name a device (8xH100-SXM: its memory, FLOP/s,\n"
		 "link and reserve)"},

	{"fit-axis", 0, CUSTOM, "NAME=V[,V...]", NOWHERE,
	 .parse = cli_parse_fit_axis, .flags = ECHO | TRAIN,
	 .section = DEVICES, .needs = "fit",
	 .help = "--fit also searches option NAME over these values\n"
		 "(repeatable, every combination planned):\n"
		 "attention=math,flash,efficient; lora=0,8,64 (0:\n"
		 "no adapters); base-quant=none,nf4,int8; batch=1,2,4\n"
		 "(the micro-batch, the global batch kept: --batch\n"
		 "times --microbatches or the devices; not a batch\n"
		 "fixed in the file)"},

	{"json", 0, TEXT, "FILE", TO(json), .flags = OUTPUT,
	 .section = OUTPUTS, .help = "JSON plan report ('-' for stdout)"},
	{"header", 'o', TEXT, "FILE", TO(header), .flags = OUTPUT,
	 .section = OUTPUTS,
	 .help = "C header with the arena layout ('-' for stdout);\n"
		 "with --pp a name holding %d (stage%d.h), like a\n"
		 "--json, --dot or --timeline name, is written\n"
		 "once per stage"},
	{"prefix", 0, TEXT, "NAME", TO(prefix), .section = OUTPUTS,
	 .help = "identifier prefix in the header (from the file name)"},
	{"strip-names", 0, FLAG, NULL, TO(strip_names), .value = true,
	 .section = OUTPUTS, .needs = "header",
	 .help = "leave tensor (but the graph inputs' and outputs'),\n"
		 "step and graph names out of the header's tables\n"
		 "(0), saving their flash"},
	{"dot", 0, TEXT, "FILE", TO(dot), .flags = OUTPUT, .section = OUTPUTS,
	 .help = "dataflow graph (.dot, .svg, .png, .pdf)"},
	{"dot-expand", 0, FLAG, NULL, TO(dot_expand), .value = true,
	 .section = OUTPUTS, .needs = "dot",
	 .help = "draw every step of a large graph (by default a\n"
		 "graph of over 80 steps has its repeated blocks\n"
		 "collapsed and its chains of ops folded)"},
	{"dot-focus", 0, CUSTOM, "STEP[:RADIUS]", NOWHERE,
	 .parse = cli_parse_dot_focus, .section = OUTPUTS, .needs = "dot",
	 .help = "draw only the steps within RADIUS (3) tensors\n"
		 "of step STEP, in full"},
	{"dot-weights", 0, FLAG, NULL, TO(dot_weights), .value = true,
	 .section = OUTPUTS, .help = "show weights and constants in --dot"},
	{"trace", 0, TEXT, "FILE.json", TO(trace), .flags = OUTPUT,
	 .section = OUTPUTS,
	 .help = "the plan in the Trace Event Format, for Perfetto\n"
		 "(ui.perfetto.dev) and chrome://tracing: memory\n"
		 "counters per kind, steps and tensors as slices"},
	{"timeline", 0, TEXT, "FILE", TO(timeline), .flags = OUTPUT,
	 .section = OUTPUTS,
	 .help = "memory timeline picture (.svg, .png, .dot)"},
	{"timeline-compare", 0, TEXT, "REPORT.json", TO(compare),
	 .section = OUTPUTS, .needs = "timeline",
	 .help = "draw the plan of an earlier --json report below\n"
		 "this one, on the same scale"},
	{"timeline-other", 0, CUSTOM, "BYTES", NOWHERE,
	 .parse = cli_parse_timeline_other, .section = OUTPUTS,
	 .needs = "timeline",
	 .help = "draw tensors under BYTES merged into grey bands\n"
		 "(default: those under two points tall; 0: none)"},
	{"weights", 0, TEXT, "FILE", TO(weights), .flags = OUTPUT,
	 .section = OUTPUTS,
	 .help = "weights and constants as one aligned blob: raw\n"
		 "(.bin) or a C array (.c); offsets in the header"},
	{"stats", 0, FLAG, NULL, TO(stats), .value = true, .section = OUTPUTS,
	 .help = "print planning statistics on stderr"},
	{"selfcheck", 0, FLAG, NULL, TO(selfcheck), .value = true,
	 .section = OUTPUTS,
	 .help = "also run the plan on poisoned bytes (slow)"},
	{"quiet", 'q', FLAG, NULL, TO(quiet), .value = true,
	 .section = OUTPUTS, .help = "no summary and no warnings"},

	{"max-model-bytes", 0, BYTES, "N", TO(load.max_model_bytes),
	 .section = LIMITS, .help = "refuse larger files (2G)"},
	{"max-nodes", 0, COUNT, "N", TO(load.max_nodes), .value = 100000000,
	 .section = LIMITS,
	 .help = "refuse models with more nodes (1000000)"},

	{"list-ops", 0, CUSTOM, NULL, NOWHERE, .parse = cli_list_ops,
	 .section = OTHER,
	 .help = "print the ops arenac knows, one version a line:\n"
		 "counts, shape, fold, alias, gradient, runtime"},
	{"list-devices", 0, CUSTOM, NULL, NOWHERE, .parse = cli_list_devices,
	 .section = OTHER,
	 .help = "print the named devices: memory, kind, bandwidth,\n"
		 "FLOP/s, link and reserve, each with its source in\n"
		 "planner/device_table.c"},
	{"help", 'h', CUSTOM, NULL, NOWHERE, .parse = show_help,
	 .section = OTHER, .help = "this text"},
	{"version", 'V', CUSTOM, NULL, NOWHERE, .parse = show_version,
	 .section = OTHER, .help = "the version"},
};

#define NOPTIONS ((int)(sizeof options / sizeof *options))
_Static_assert(sizeof options / sizeof *options <= CLI_MAX_OPTIONS,
	       "Cli.given has a slot per option");

static const char usage_intro[] =
"usage: arenac [options] MODEL.onnx\n"
"       arenac solve INPUT.csv [--capacity N] [-o OUTPUT.csv]\n"
"\n"
"Plans every activation of an ONNX model into one static arena and writes\n"
"the layout as a C header, a JSON report and Graphviz pictures.  Without\n"
"output options it prints a summary of the plan.\n";

static const char usage_outro[] =
"\n"
"Exit codes: 0 ok, 1 usage or file error (an unreadable model, an\n"
"unwritable output), 2 bad or unsupported model, 3 the plan does not fit\n"
"the budget or the --memory tiers (a device's memory; --fit: nothing\n"
"fits) or --host-memory, 4 internal error (a plan failed verification,\n"
"out of memory).\n";

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("arenac: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(run 'arenac --help' for the options)\n", stderr);
	return AR_EXIT_USAGE;
}

static bool has_arg(const Option *o)
{
	return o->kind != FLAG && (o->kind != CUSTOM || o->arg);
}

/* "file|memory" for --help, from the choices when there is no .arg. */
static const char *arg_text(const Option *o)
{
	return o->arg ? o->arg : o->choices;
}

/* "-o, --header FILE" */
static void option_label(const Option *o, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s%s--%s%s%s", o->short_name ? "-" : "",
		 o->short_name ? (char[2]){o->short_name, 0} : "",
		 o->short_name ? ", " : "", o->name, has_arg(o) ? " " : "",
		 has_arg(o) ? arg_text(o) : "");
}

/* The help text: intro, one entry per row by section, exit codes. */
static void print_help(FILE *f)
{
	fputs(usage_intro, f);
	for (int i = 0; i < NOPTIONS; i++) {
		const Option *o = &options[i];
		char label[64];
		if (i == 0 || o->section != options[i - 1].section)
			fprintf(f, "\n%s%s", section_title[o->section],
				*section_title[o->section] ? "\n" : "");
		option_label(o, label, sizeof label);
		/* The text starts at column 24, below a long label. */
		if (strlen(label) <= 20)
			fprintf(f, "  %-22s", label);
		else
			fprintf(f, "  %s\n%24s", label, "");
		for (const char *h = o->help; *h; h++) {
			fputc(*h, f);
			if (*h == '\n')
				fprintf(f, "%24s", "");
		}
		fputc('\n', f);
	}
	fputs(usage_outro, f);
}

static int show_help(Cli *c, char *arg)
{
	(void)c, (void)arg;
	print_help(stdout);
	return CLI_DONE;
}

static int show_version(Cli *c, char *arg)
{
	(void)c, (void)arg;
	puts("arenac " ARENAC_VERSION);
	return CLI_DONE;
}

/* Stores v in the row's field, whatever its integer type. */
static void store_int(Cli *c, const Option *o, int64_t v)
{
	char *p = (char *)c + o->at;
	int i = (int)v;
	switch (o->size) {
	case 0:
		break;
	case sizeof(bool):
		*(bool *)p = v != 0;
		break;
	case sizeof(int):       /* int and the enums */
		memcpy(p, &i, sizeof i);
		break;
	case sizeof(int64_t):
		memcpy(p, &v, sizeof v);
		break;
	default:
		assert(!"an option's field has no integer size");
	}
}

/* "file or memory", "sgd, momentum or adam" */
static void choice_list(const char *choices, char *buf, size_t n)
{
	const char *last = strrchr(choices, '|');
	size_t k = 0;
	for (const char *s = choices; *s && k + 5 < n; s++) {
		if (*s != '|')
			buf[k++] = *s;
		else if (s == last)
			k += (size_t)snprintf(buf + k, n - k, " or ");
		else
			k += (size_t)snprintf(buf + k, n - k, ", ");
	}
	buf[k] = 0;
}

static int parse_choice(Cli *c, const Option *o, const char *arg)
{
	const char *s = o->choices;
	char list[128];
	for (int i = 0; *s; i++) {
		size_t len = strcspn(s, "|");
		if (strlen(arg) == len && !strncmp(s, arg, len)) {
			store_int(c, o, i);
			return AR_OK;
		}
		s += len + (s[len] == '|');
	}
	choice_list(o->choices, list, sizeof list);
	return cli_usage_error("--%s wants %s, not '%s'", o->name, list, arg);
}

/* A numeric argument, checked against its kind. */
static int parse_number(Cli *c, const Option *o, const char *arg)
{
	char opt[64], most[AR_NUMFMT_LEN];
	const char *bad;
	int64_t v;
	double d;
	char *end;

	snprintf(opt, sizeof opt, "--%s", o->name);
	if (o->kind == SECONDS) {
		errno = 0;
		d = strtod(arg, &end);
		if (errno || end == arg || *end || !(d >= 0))
			return cli_usage_error("%s wants seconds, not '%s'",
					       opt, arg);
		assert(o->size == sizeof(double));
		memcpy((char *)c + o->at, &d, sizeof d);
		return AR_OK;
	}
	if (!cli_parse_size(arg, &v, &bad) || v == 0)
		return cli_size_error(opt, o->kind == BYTES ? "bytes above 0" :
				  o->kind == POW2 ? "a power of two" :
				  "a positive number", arg, bad);
	if (o->kind == POW2 && (v & (v - 1)))
		return cli_usage_error("%s wants a power of two, not '%s'",
				       opt, arg);
	if (o->value && v > o->value)
		return cli_usage_error("%s wants a number up to %s, not '%s'",
				       opt, ar_fmt_count(most, o->value), arg);
	assert(o->size == sizeof(int64_t) || o->value);
	store_int(c, o, v);
	return AR_OK;
}

static void echo_option(Cli *c, const Option *o, const char *arg)
{
	size_t n = strlen(c->options);
	snprintf(c->options + n, sizeof c->options - n, "%s--%s%s%s",
		 n ? " " : "", o->name, arg ? " " : "", arg ? arg : "");
}

static int apply(Cli *c, const Option *o, char *arg)
{
	c->given[o - options] = true;
	if (o->flags & ECHO)
		echo_option(c, o, has_arg(o) ? arg : NULL);
	switch (o->kind) {
	case FLAG:
		store_int(c, o, o->value);
		return AR_OK;
	case TEXT:
		assert(o->size == sizeof(const char *));
		memcpy((char *)c + o->at, &arg, sizeof arg);
		return AR_OK;
	case CHOICE:
		return parse_choice(c, o, arg);
	case CUSTOM:
		return o->parse(c, arg);
	default:
		return parse_number(c, o, arg);
	}
}

/* The error for an option getopt did not know: unknown or ambiguous. */
static int unknown_option(const char *text)
{
	const char *name = text + strspn(text, "-");
	size_t len = strcspn(name, "=");
	const Option *best = NULL, *prefix[2] = {NULL, NULL};
	int nprefix = 0, bestd = 99;

	for (int i = 0; i < NOPTIONS; i++) {
		const Option *o = &options[i];
		int d = cli_edit_distance(name, len, o->name);
		if (!strncmp(o->name, name, len) && len) {
			if (nprefix < 2)
				prefix[nprefix] = o;
			nprefix++;
		}
		if (d < bestd)
			bestd = d, best = o;
	}
	if (nprefix > 1 && text[1] == '-')
		return cli_usage_error("option '%s' is ambiguous: --%s, --%s%s",
				       text, prefix[0]->name, prefix[1]->name,
				       nprefix > 2 ? ", ..." : "");
	/* Close enough to be a slip: a third of the name, at least 2. */
	if (best && len > 1 && bestd <= (len > 6 ? (int)len / 3 : 2))
		return cli_usage_error("unknown option '%s'; did you mean "
				       "'--%s'?", text, best->name);
	return cli_usage_error("unknown option '%s'", text);
}

static const Option *by_name(const char *name)
{
	for (int i = 0; i < NOPTIONS; i++)
		if (!strcmp(options[i].name, name))
			return &options[i];
	return NULL;
}

static const Option *by_short(int ch)
{
	for (int i = 0; i < NOPTIONS; i++)
		if (options[i].short_name == ch)
			return &options[i];
	return NULL;
}

/* "-o/--header" or "--json", for messages about a row. */
static const char *display_name(const Option *o, char *buf, size_t n)
{
	if (o->short_name)
		snprintf(buf, n, "-%c/--%s", o->short_name, o->name);
	else
		snprintf(buf, n, "--%s", o->name);
	return buf;
}

/* What the options say together, once all are read. */
static int check_combinations(const Cli *c)
{
	const Option *train_only = NULL;
	char a[40], b[40];

	for (int i = 0; i < NOPTIONS && !train_only; i++)
		if ((options[i].flags & TRAIN) && c->given[i])
			train_only = &options[i];
	/* The list of them all is --help's Training section: naming thirty
	 * options in one line helps nobody. */
	if (train_only && !c->train)
		return cli_usage_error("--%s needs --train (as every option of "
				       "the Training section of --help does)",
				       train_only->name);
	/* An option --fit-axis searches counts as given. */
	for (int i = 0; i < NOPTIONS; i++)
		if (c->given[i] && options[i].needs &&
		    !c->given[by_name(options[i].needs) - options] &&
		    !(cli_fit_axis_named(options[i].needs) >= 0 &&
		      c->axes.n[cli_fit_axis_named(options[i].needs)]))
			return cli_usage_error("--%s needs --%s",
					       options[i].name,
					       options[i].needs);
	if (c->train && c->weights)
		return cli_usage_error("--weights is not available with "
				       "--train");
	if (c->nhwc && c->train)
		return cli_usage_error("--layout nhwc is for inference plans: "
				       "a training step's kernels and "
				       "gradients read the model's layout");
	if (c->nhwc && c->fuse)
		return cli_usage_error("--layout nhwc: --fuse preact's "
				       "convolution has no channels-last "
				       "kernel");
	if (c->train && c->fuse)
		return cli_usage_error("--fuse is for inference plans: a "
				       "training step keeps the prologue's "
				       "outputs for the backward pass");
	for (int i = 0; i < NOPTIONS; i++)
		if (c->given[i] && (options[i].flags & MULTI) && c->fitting)
			return cli_usage_error("--fit searches the devices' "
					       "configurations itself; give "
					       "--%s without it",
					       options[i].name);
	if (c->topt.spec.optim_in_backward && c->topt.spec.grad_accum > 1)
		return cli_usage_error("--optimizer-in-backward frees each "
				       "gradient at its update: no gradient is "
				       "left to accumulate (--grad-accum)");
	if (c->topt.spec.optim_in_backward && (c->multi || c->fitting))
		return cli_usage_error("--optimizer-in-backward plans one "
				       "device's step; give it without --dp, "
				       "--tp, --pp and --fit (ZeRO shards the "
				       "gradients it frees)");
	if (c->host.zero_init && c->dev.zero != 3)
		return cli_usage_error("--zero-init partitions each module as "
				       "it is built: ZeRO-3 only (--zero 3)");
	if (c->max_batch && c->max_dim)
		return cli_usage_error("--max-batch and --max-dim: one search "
				       "at a time (fix the other with --batch "
				       "or --dim)");
	if ((c->max_batch || c->max_dim) &&
	    (c->multi || c->fitting || c->sweep))
		return cli_usage_error("--max-%s plans one device's step; "
				       "give it without --dp, --tp, --pp, "
				       "--fit and --budget-sweep",
				       c->max_batch ? "batch" : "dim");
	if ((c->multi || c->fitting) && c->sweep)
		return cli_usage_error("--budget-sweep plans one device");
	/* Two outputs into one file would leave one of them, or on stdout
	 * both run together. */
	for (int i = 0; i < NOPTIONS; i++)
		for (int j = i + 1; j < NOPTIONS; j++) {
			const Option *x = &options[i], *y = &options[j];
			const char *p, *q;
			if (!(x->flags & y->flags & OUTPUT) || !c->given[i] ||
			    !c->given[j])
				continue;
			memcpy(&p, (const char *)c + x->at, sizeof p);
			memcpy(&q, (const char *)c + y->at, sizeof q);
			if (strcmp(p, q))
				continue;
			return cli_usage_error("%s and %s both write %s; give "
					       "each output its own file",
					       display_name(x, a, sizeof a),
					       display_name(y, b, sizeof b),
					       strcmp(p, "-") ? p :
					       "to standard output ('-')");
		}
	return AR_OK;
}

int cli_parse_args(Cli *c, int argc, char **argv)
{
	struct option longs[CLI_MAX_OPTIONS + 1];
	char shorts[2 * CLI_MAX_OPTIONS + 2] = ":";
	size_t ns = 1;
	int opt, rc;

	c->load.dim_default = -1;
	c->load.batch = -1;
	c->load.dims = c->dims;
	c->load.shapes = c->shapes;
	c->load.values = c->values;
	ar_plan_options_default(&c->plan);
	c->topt.spec.grad_patterns = true;
	c->topt.spec.diag = c->load.diag;
	c->topt.spec.freeze = c->freeze;
	c->topt.spec.trainable = c->trainable;
	c->topt.spec.lora.targets = c->lora_targets;
	ar_devices_spec_default(&c->dev);
	c->dev.microbatches = 0;        /* not given (devices.c) */
	for (int i = 0; i < NOPTIONS; i++) {
		const Option *o = &options[i];
		longs[i] = (struct option){o->name, has_arg(o) ?
					   required_argument : no_argument,
					   NULL, 256 + i};
		if (o->short_name) {
			shorts[ns++] = o->short_name;
			if (has_arg(o))
				shorts[ns++] = ':';
		}
	}
	memset(&longs[NOPTIONS], 0, sizeof longs[NOPTIONS]);
	shorts[ns] = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const Option *o = opt >= 256 ? &options[opt - 256] :
				  by_short(opt);
		if (opt == ':') {
			const Option *m = optopt >= 256 ?
				&options[optopt - 256] : by_short(optopt);
			char name[40];
			return cli_usage_error("option '%s' needs a value (%s)",
					       display_name(m, name,
							    sizeof name),
					       arg_text(m));
		}
		if (opt == '?')
			return optopt >= 256 ?
			       cli_usage_error("option '--%s' takes no value",
					       options[optopt - 256].name) :
			       optopt ? cli_usage_error("unknown option '-%c'",
							optopt) :
			       unknown_option(argv[optind - 1]);
		if ((rc = apply(c, o, optarg)))
			return rc;
	}
	if (optind != argc - 1)
		return optind < argc ?
		       cli_usage_error("expected one model file, got more "
				       "(%s ...)", argv[optind + 1]) :
		       cli_usage_error("no model file given");
	c->model = argv[optind];
	if ((rc = cli_apply_device(c, c->given[by_name("reserve") - options])))
		return rc;
	for (int i = 0; i < NOPTIONS; i++)
		c->multi = c->multi || (c->given[i] &&
					(options[i].flags & MULTI));
	if ((rc = check_combinations(c)))
		return rc;
	c->plan.diag = c->load.diag;    /* the caller's, set before */
	/* With --train, --budget and the first --memory bound the whole
	 * device (ar_train_plan); --arena-budget the arena alone, as --budget
	 * does for inference. */
	c->topt.budget = c->arena_budget;
	c->topt.device_bytes = c->plan.budget ? c->plan.budget :
			       c->plan.nmemories ? c->plan.memories[0].capacity :
			       0;
	c->topt.device_name = c->plan.budget ? NULL :
			      c->plan.nmemories ? c->plan.memories[0].name :
			      NULL;
	if (!c->train) {
		c->topt.device_bytes = 0;
		c->topt.device_name = NULL;
	}
	if (c->topt.reserve && c->topt.device_bytes &&
	    c->topt.reserve >= c->topt.device_bytes)
		return cli_usage_error("--reserve %lld is not below the "
				       "device's %lld bytes (%s)",
				       (long long)c->topt.reserve,
				       (long long)c->topt.device_bytes,
				       c->topt.device_name ? "the first --memory"
							   : "--budget");
	if (c->topt.reserve && !c->topt.device_bytes && !c->fitting)
		return cli_usage_error("--reserve needs a device to hold it: "
				       "--budget or --memory");
	if (!c->train && c->arena_budget &&
	    (!c->plan.budget || c->arena_budget < c->plan.budget))
		c->plan.budget = c->arena_budget;
	c->topt.plan = c->plan;
	c->topt.plan.budget = 0;
	c->host.load_dtype = (const ArDType[]){AR_DT_FLOAT, AR_DT_FLOAT16,
					       AR_DT_BFLOAT16}[c->load_dtype];
	/* optimal by default where a budget bounds the arena: --budget on
	 * one device (its room for the arena), --arena-budget anywhere. */
	if (!c->given[by_name("checkpoint") - options])
		c->topt.policy = c->arena_budget ||
				 (c->plan.budget && !c->multi && !c->fitting) ?
				 AR_CKPT_OPTIMAL : AR_CKPT_NONE;
	return AR_OK;
}
