/*
 * header_requant.c — the requantisation of int8 steps, precomputed: per
 * output channel the Q31 multiplier and the shift that TFLite Micro's
 * QuantizeMultiplier gives for input_scale * weight_scale / output_scale
 * (ops/requant.c), in two pools each step points into.
 *
 * A kernel library calls CMSIS-NN's arm_convolve_s8 or
 * arm_fully_connected_s8 with cmsis_nn_per_channel_quant_params
 * {requant_multiplier, requant_shift} straight from the step, as TFLite
 * Micro's Prepare fills OpData.per_channel_output_multiplier and _shift;
 * a QLinearMul step has one pair, a QLinearAdd step three (its inputs',
 * its output's: arm_elementwise_add_s8's, with $_REQUANT_ADD_LEFT_SHIFT).
 * Only a plan with such a step has the columns ($_HAS_REQUANT), so that a
 * float model's header stays as it was; $_STEP_REQUANT_COUNT(s) reads
 * either layout.
 */
#include <stdio.h>
#include <stdlib.h>

#include "header_parts.h"
#include "ops.h"

static int set_requant(const Hdr *h)
{
	for (int s = 0; s < h->p->nsteps; s++) {
		int32_t *m, *sh;
		int n = ar_requant(h->g, hdr_step_node(h, s), &m, &sh);
		free(m), free(sh);
		if (n)
			return 1;
	}
	return 0;
}

bool hdr_any_requant(const Hdr *h)
{
	return hdr_any_set(h, set_requant);
}

void hdr_write_requant_macros(const Hdr *h)
{
	if (!h->requant) {
		hdr_tmpl(h, "#define $_STEP_REQUANT_COUNT(s) 0u\n");
		return;
	}
	hdr_tmpl(h, "#define $_HAS_REQUANT 1\n"
		 "#define $_STEP_REQUANT_COUNT(s) ((s)->nrequant)\n");
	hdr_tmpl(h, "/* QLinearAdd's requant: input A's, input B's, the output's "
		 "pair, its\n   inputs shifted left by this first (TFLite "
		 "Micro's add_common.cc) */\n");
	fprintf(h->f, "#define %s_REQUANT_ADD_LEFT_SHIFT %d\n", h->up,
		AR_REQUANT_ADD_SHIFT);
}

void hdr_write_requant_fields(const Hdr *h)
{
	if (h->requant)
		hdr_tmpl(h, "\tconst int32_t *requant_multiplier; /* int8 step: "
			 "per output channel (or one;\n"
			 "\t                             QLinearAdd: three, "
			 "$_REQUANT_ADD_LEFT_SHIFT),\n"
			 "\t                             Q31, TFLite's "
			 "QuantizeMultiplier of in * w / out scale */\n"
			 "\tconst int32_t *requant_shift; /* > 0: left shift */\n"
			 "\tuint32_t nrequant;        /* values behind each; 0: "
			 "none */\n");
}

/* The multiplier pool, or with shifts the shift pool. */
static void write_pool(const Hdr *h, ArText *out, bool shifts)
{
	int k = 0;

	hdr_open_pool(h, out, "int32_t", shifts ? "requant_shift" :
		      "requant_multiplier");
	for (int s = 0; s < h->p->nsteps; s++) {
		int32_t *m, *sh;
		int n = ar_requant(h->g, hdr_step_node(h, s), &m, &sh);
		for (int c = 0; c < n; c++) {
			hdr_pool_sep(out, &k);
			hdr_num(out, shifts ? sh[c] : m[c], ",");
		}
		free(m), free(sh);
	}
	hdr_pool_sep(out, &k);
	ar_text_puts(out, "0\n};\n\n");
}

void hdr_write_requant_pools(const Hdr *h, ArText *out)
{
	if (!h->requant)
		return;
	write_pool(h, out, false);
	write_pool(h, out, true);
}

void hdr_write_step_requant(const Hdr *h, ArText *out, int s, int *at)
{
	int32_t *m, *sh;
	int n;

	if (!h->requant)
		return;
	n = ar_requant(h->g, hdr_step_node(h, s), &m, &sh);
	free(m), free(sh);
	ar_text_puts(out, ", ");
	hdr_pool_ref(h, out, "_requant_multiplier + ", *at);
	hdr_pool_ref(h, out, "_requant_shift + ", *at);
	ar_text_dec(out, n);
	*at += n;
}
