/*
 * fuse.h — graph rewrites that remove tensors a kernel can compute on the
 * fly (--fuse).
 */
#ifndef ARENAC_FUSE_H
#define ARENAC_FUSE_H

#include "graph.h"

/* The fused node: a Conv that maps its input through a prologue. */
#define AR_PREACT_CONV "PreactConv"
/* An attention core as one kernel (train/attention.c, ops/flash.c). */
#define AR_FLASH_ATTENTION "FlashAttention"
/* A linear by a quantised frozen weight (train/base_quant.c). */
#define AR_QUANT_MATMUL "QuantizedMatMul"
#define AR_FUSED_DOMAIN "arenac"
#define AR_PREACT_MAX 8         /* prologue ops at most */

/* Prologue op codes, the fused node's "prologue" INTS attribute. */
enum {
	AR_PRE_BATCHNORM = 1,   /* 4 inputs: scale, bias, mean, var */
	AR_PRE_MUL = 2,         /* 1 input: per-channel or scalar factor */
	AR_PRE_ADD = 3,         /* 1 input: per-channel or scalar term */
	AR_PRE_RELU = 4         /* no input */
};

/*
 * Replaces every chain of per-channel ops (inference BatchNormalization,
 * Mul or Add by a per-channel constant, Relu) that feeds only a Conv, and
 * whose intermediate tensors nothing else reads, with one node
 * arenac.PreactConv(X, W, B, prologue inputs...): the Conv's attributes
 * plus "prologue" (the op codes, in order) and "prologue_epsilon" (each
 * BatchNormalization's epsilon).  B is -1 when the Conv has no bias.
 * Needs the shapes (run after ar_infer).  Returns the chains fused.
 */
int ar_fuse_preact(ArGraph *g);

#endif
