/*
 * devices_int.h — what the multi-device planner's files share
 * (devices.c: the planner and the pipeline; devices_stage.c: one
 * stage planned and billed).
 */
#ifndef ARENAC_DEVICES_INT_H
#define ARENAC_DEVICES_INT_H

#include "devices.h"
#include "layers.h"
#include "parallel.h"

/* What one microbatch's plan of a stage gives the bills and the
 * estimate: the training bill's numbers, the largest layer's weights
 * (ZeRO-3 gathers them), the arena, the stash, the bytes fetched back
 * (offloaded activations), FLOPs and bytes sent. */
typedef struct ArStageNumbers {
	ArTrainBill bill;       /* numbers only: no checkpoint names */
	int64_t gathered, arena, stash, fetched, flops, comm, again;
} ArStageNumbers;

/* The kinds of pipeline stage, by what they run besides layers. */
enum { AR_KIND_FIRST, AR_KIND_MIDDLE, AR_KIND_LAST, AR_KINDS };

struct ArDevicePlanner {
	const ArTrainOptions *o;
	ArDevicesSpec s;        /* tp and sp; the rest per call */
	ArTpGraph tg;
	const ArGraph *d;       /* one device's forward graph */
	const ArTpComm *comm;   /* per node of d, or NULL without --tp */
	ArLayers l;             /* d's layers; n 0 when none were found */
	ArError *err;
	int rc;                 /* a probe's failure */
	ArStageNumbers probe[AR_KINDS][2], whole;
	bool probed[AR_KINDS][2], have_whole;
};


/* A stage's device bill and figures from its numbers under s; the arena
 * with the microbatches in flight estimated as one's plus the others'
 * stashes (what ar_inflight_plan plans). */
void ar_stage_apply(const ArDevicesSpec *s, const ArStageNumbers *n,
		    int stage, ArStage *st);
/*
 * Plans layers [a, b) of the device graph as stage `stage` of s (staged:
 * as a graph of its own, else the whole device graph); full: with the
 * microbatches in flight, else one microbatch's step only (a probe).
 * *n gets its numbers.
 */
int ar_stage_plan(ArDevicePlanner *c, const ArDevicesSpec *s, int a, int b,
		  int stage, bool staged, bool full, ArStage *st,
		  ArStageNumbers *n);

#endif
