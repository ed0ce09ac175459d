/*
 * optimizers.c — the table of optimizers: per optimizer, the moments it
 * keeps for each trained parameter, their number format and where they
 * live, from the sources of the libraries that implement them.
 *
 *   sgd, momentum, adam, adamw, lion: torch.optim's and lion-pytorch's
 *     full-size moments (torch.zeros_like(p): the format of what the
 *     optimizer updates, the master copy when there is one, unless
 *     --state-dtype says otherwise).  AdamW differs from Adam in its
 *     update only.
 *   adam8bit, adamw8bit, lion8bit (bitsandbytes, bitsandbytes/optim/
 *     optimizer.py, Optimizer2State.init_state and Optimizer1State.
 *     init_state): a parameter of at least min_8bit_size = 4096 elements
 *     keeps each moment as uint8 codes (one per element) and an fp32
 *     absmax per block of 256 (blocks = n // 256 + bool(n % 256)); a
 *     smaller one keeps fp32 moments.  The two 256-entry fp32 maps
 *     (Optimizer8bit.fill_qmap: create_dynamic_map signed and unsigned)
 *     exist once per optimizer, on the device.
 *   paged-* (bitsandbytes is_paged=True): get_state_buffer puts a
 *     moment of at least 1e5 elements in paged (unified) memory, which
 *     the driver moves between host and device per step; smaller ones
 *     and the absmax tensors stay on the device.  Billed to the host.
 *   adam4bit, adamw4bit (torchao, torchao/optim/adam.py
 *     _AdamBase._new_buffer and subclass_4bit.py OptimState4bit.zeros):
 *     a parameter of at least 4096 elements, a multiple of block_size =
 *     128, keeps each moment as packed 4-bit codes (n // 2 uint8), an
 *     fp32 scale per block (n // 128) and its own 16-entry fp32 map;
 *     any other parameter torch.zeros_like(p), in the format of what the
 *     optimizer updates.
 *   adafactor (Shazeer and Stern 2018; torch.optim.Adafactor's row_var
 *     and col_var, transformers' Adafactor exp_avg_sq_row and
 *     exp_avg_sq_col): a parameter of rank >= 2 keeps the second moment
 *     factored, one statistic per row (the product of all dims but the
 *     last) and per column (all dims but the second to last); a vector
 *     keeps it whole.  A first moment, full size, only with --beta1
 *     (transformers' beta1 not None).
 */
#include "optim.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

/* How a moment is stored. */
typedef enum { FULL, FACTORED, BNB8, AO4 } Storage;

typedef struct OptimDef {
	const char *name;
	const char *update_op;
	int nmoments;
	const char *moment[2];  /* their names, as the libraries call them */
	Storage storage[2];
	bool optional_first;    /* moment 0 only with --beta1 */
	/* bitsandbytes: its moments that are not quantised are fp32
	 * (optim_bits 32), whatever the parameter. */
	bool bnb;
	bool paged;
} OptimDef;

static const OptimDef optimizers[AR_OPTIM_COUNT] = {
	[AR_OPTIM_SGD] = {"sgd", "SgdUpdate", 0, {NULL}, {FULL}},
	[AR_OPTIM_MOMENTUM] = {"momentum", "MomentumUpdate", 1,
			       {".momentum"}, {FULL}},
	[AR_OPTIM_ADAM] = {"adam", "AdamUpdate", 2, {".adam_m", ".adam_v"},
			   {FULL, FULL}},
	[AR_OPTIM_ADAMW] = {"adamw", "AdamWUpdate", 2,
			    {".adam_m", ".adam_v"}, {FULL, FULL}},
	[AR_OPTIM_ADAM8BIT] = {"adam8bit", "Adam8bitUpdate", 2,
			       {".state1", ".state2"}, {BNB8, BNB8}, .bnb = true},
	[AR_OPTIM_ADAMW8BIT] = {"adamw8bit", "AdamW8bitUpdate", 2,
				{".state1", ".state2"}, {BNB8, BNB8}, .bnb = true},
	[AR_OPTIM_PAGED_ADAM8BIT] = {"paged-adam8bit", "Adam8bitUpdate", 2,
				     {".state1", ".state2"}, {BNB8, BNB8},
				     .bnb = true, .paged = true},
	[AR_OPTIM_PAGED_ADAMW8BIT] = {"paged-adamw8bit", "AdamW8bitUpdate", 2,
				      {".state1", ".state2"}, {BNB8, BNB8},
				      .bnb = true, .paged = true},
	[AR_OPTIM_PAGED_ADAMW] = {"paged-adamw", "AdamWUpdate", 2,
				  {".state1", ".state2"}, {FULL, FULL},
				  .bnb = true, .paged = true},
	[AR_OPTIM_ADAM4BIT] = {"adam4bit", "Adam4bitUpdate", 2,
			       {".exp_avg", ".exp_avg_sq"}, {AO4, AO4}},
	[AR_OPTIM_ADAMW4BIT] = {"adamw4bit", "AdamW4bitUpdate", 2,
				{".exp_avg", ".exp_avg_sq"}, {AO4, AO4}},
	[AR_OPTIM_ADAFACTOR] = {"adafactor", "AdafactorUpdate", 2,
				{".exp_avg", ".exp_avg_sq"}, {FULL, FACTORED},
				.optional_first = true},
	[AR_OPTIM_LION] = {"lion", "LionUpdate", 1, {".exp_avg"}, {FULL}},
	[AR_OPTIM_LION8BIT] = {"lion8bit", "Lion8bitUpdate", 1, {".state1"},
			       {BNB8}, .bnb = true},
};

/* The quantised formats: bitsandbytes' blockwise 8-bit and torchao's
 * 4-bit (see the header comment for where each number comes from). */
static const struct {
	int bits;               /* per code */
	int64_t block;          /* elements per fp32 scale */
	int64_t min_numel;      /* smaller tensors keep full moments */
	bool whole_blocks;      /* only n % block == 0 is quantised */
	const char *scale;      /* the scale tensor's name */
	int64_t qmap;           /* entries of a per-moment fp32 map */
} quant[] = {
	[BNB8] = {8, 256, 4096, false, ".absmax", 0},
	[AO4] = {4, 128, 4096, true, ".scale", 16},
};

/* bitsandbytes' shared maps: create_dynamic_map(signed) and (unsigned),
 * 256 fp32 entries each. */
#define BNB_QMAP_ENTRIES 256
/* bitsandbytes get_state_buffer: paged only from 1e5 elements. */
#define BNB_PAGED_MIN 100000

static const struct {
	const char *name;
	ArDType dt;
} formats[] = {
	[AR_FMT_AUTO] = {"auto", AR_DT_UNDEFINED},
	[AR_FMT_FP32] = {"fp32", AR_DT_FLOAT},
	[AR_FMT_FP16] = {"fp16", AR_DT_FLOAT16},
	[AR_FMT_BF16] = {"bf16", AR_DT_BFLOAT16},
	[AR_FMT_INT8] = {"int8", AR_DT_INT8},
	[AR_FMT_INT4] = {"int4", AR_DT_INT4},
	[AR_FMT_NONE] = {"none", AR_DT_UNDEFINED},
};

const char *ar_optimizer_name(ArOptimizer o)
{
	return (unsigned)o < AR_OPTIM_COUNT ? optimizers[o].name : "invalid";
}

bool ar_optimizer_parse(const char *s, ArOptimizer *out)
{
	for (int o = 0; o < AR_OPTIM_COUNT; o++)
		if (!strcmp(s, optimizers[o].name)) {
			*out = (ArOptimizer)o;
			return true;
		}
	return false;
}

const char *ar_format_name(ArFormat f)
{
	return (unsigned)f <= AR_FMT_NONE ? formats[f].name : "invalid";
}

const char *ar_optim_update_op(ArOptimizer o)
{
	return optimizers[o].update_op;
}

/* The format f asks for, or dflt for auto. */
static ArDType format_or(ArFormat f, ArDType dflt)
{
	return f == AR_FMT_AUTO ? dflt : formats[f].dt;
}

ArDType ar_train_grad_dtype(const ArTrainModel *m, int param)
{
	return format_or(m->spec.grad_format, m->base->tensors[param].dtype);
}

ArDType ar_train_opt_dtype(const ArTrainModel *m, int param)
{
	ArDType dt = ar_train_master_dtype(m, param);
	return dt != AR_DT_UNDEFINED ? dt : m->base->tensors[param].dtype;
}

static bool is_float_format(ArFormat f)
{
	return f == AR_FMT_FP32 || f == AR_FMT_FP16 || f == AR_FMT_BF16;
}

int ar_optim_check(const ArTrainSpec *s, ArError *err)
{
	const OptimDef *d = &optimizers[s->optimizer];
	bool quantised = d->bnb;
	if (s->master_format != AR_FMT_AUTO && s->master_format != AR_FMT_NONE &&
	    !is_float_format(s->master_format))
		return ar_fail(err, AR_EXIT_MODEL, "--master-dtype %s: a master "
			       "copy keeps the weights the updates accumulate "
			       "into, which %s cannot hold (fp32, fp16, bf16 "
			       "or none)", formats[s->master_format].name,
			       formats[s->master_format].name);
	if (s->grad_format != AR_FMT_AUTO && !is_float_format(s->grad_format))
		return ar_fail(err, AR_EXIT_MODEL, "--grad-dtype %s: gradients "
			       "are accumulated in a float format (fp32, fp16 "
			       "or bf16)", formats[s->grad_format].name);
	for (int k = 0; k < d->nmoments; k++)
		quantised = quantised || d->storage[k] == BNB8 ||
			    d->storage[k] == AO4;
	if (s->state_format != AR_FMT_AUTO && quantised)
		return ar_fail(err, AR_EXIT_MODEL, "--state-dtype: %s keeps its "
			       "moments in its own format (%s; adam or adamw "
			       "take a float format)", d->name, d->bnb ?
			       "bitsandbytes: uint8 codes, fp32 when small" :
			       "torchao: 4-bit codes");
	if (s->state_format != AR_FMT_AUTO && !is_float_format(s->state_format))
		return ar_fail(err, AR_EXIT_MODEL, "--state-dtype %s: a float "
			       "format (fp32, fp16, bf16) or a quantised "
			       "optimizer (adam8bit, adam4bit)",
			       formats[s->state_format].name);
	if (s->beta1 && s->optimizer != AR_OPTIM_ADAFACTOR)
		return ar_fail(err, AR_EXIT_USAGE, "--beta1 applies to adafactor "
			       "only (%s's moments are fixed)", d->name);
	return AR_OK;
}

static ArStateTensor *add(ArStateTensor *out, int *n, const char *name,
			  const char *part, ArDType dt, int64_t numel)
{
	ArStateTensor *s = &out[(*n)++];
	assert(*n <= AR_MAX_STATES);
	snprintf(s->suffix, sizeof s->suffix, "%s%s", name, part);
	s->dtype = dt;
	s->numel = numel;
	s->like_param = false;
	s->host = false;
	return s;
}

/* Adafactor's row and column statistics of a tensor of rank >= 2. */
static void factored(const ArTensor *p, ArStateTensor *out, int *n,
		     const char *name, ArDType dt)
{
	int64_t rows = 1, cols = p->dims[p->rank - 1];
	for (int i = 0; i < p->rank - 1; i++)
		rows = ar_train_mul(rows, p->dims[i]);
	for (int i = 0; i < p->rank - 2; i++)
		cols = ar_train_mul(cols, p->dims[i]);
	add(out, n, name, "_row", dt, rows);
	add(out, n, name, "_col", dt, cols);
}

int ar_optim_states(const ArTrainModel *m, int param, ArStateTensor *out)
{
	const OptimDef *d = &optimizers[m->spec.optimizer];
	const ArTensor *p = &m->base->tensors[param];
	int64_t numel = ar_numel(p);
	ArDType full = format_or(m->spec.state_format, ar_train_opt_dtype(m,
								      param));
	int n = 0;

	for (int k = 0; k < d->nmoments; k++) {
		Storage st = d->storage[k];
		const char *name = d->moment[k];
		ArStateTensor *s;
		if (k == 0 && d->optional_first && !m->spec.beta1)
			continue;
		if (st == FACTORED && p->rank >= 2) {
			factored(p, out, &n, name, full);
			continue;
		}
		if ((st == BNB8 || st == AO4) && numel >= quant[st].min_numel &&
		    (!quant[st].whole_blocks || numel % quant[st].block == 0)) {
			int64_t b = quant[st].block;
			s = add(out, &n, name, "", AR_DT_UINT8,
				numel * quant[st].bits / 8);
			s->like_param = quant[st].bits == 8;
			s->host = d->paged && numel >= BNB_PAGED_MIN;
			add(out, &n, name, quant[st].scale, AR_DT_FLOAT,
			    numel / b + (numel % b != 0));
			if (quant[st].qmap)
				add(out, &n, name, ".qmap", AR_DT_FLOAT,
				    quant[st].qmap);
			continue;
		}
		s = add(out, &n, name, "", d->bnb ? AR_DT_FLOAT : full, numel);
		s->like_param = true;
		s->host = d->paged && numel >= BNB_PAGED_MIN;
	}
	return n;
}

int ar_optim_shared(const ArTrainModel *m, ArStateTensor *out)
{
	const OptimDef *d = &optimizers[m->spec.optimizer];
	int n = 0;
	if (d->storage[0] != BNB8)
		return 0;
	for (int t = 0; t < m->base->ntensors; t++)
		if (m->param[t] && !m->tied[t] &&
		    ar_numel(&m->base->tensors[t]) >= quant[BNB8].min_numel) {
			add(out, &n, "optimizer.qmap1", "", AR_DT_FLOAT,
			    BNB_QMAP_ENTRIES);
			add(out, &n, "optimizer.qmap2", "", AR_DT_FLOAT,
			    BNB_QMAP_ENTRIES);
			break;
		}
	return n;
}
