/*
 * options.h — the command line of `arenac MODEL.onnx`, parsed from one
 * table of options (options.c): each row names an option, its argument,
 * where the value goes, whether it needs --train, whether it shapes the
 * plan (echoed in the outputs' "options"), and its help text.
 */
#ifndef ARENAC_OPTIONS_H
#define ARENAC_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include "checkpoint.h"
#include "devices.h"
#include "host.h"
#include "device_table.h"
#include "infer.h"
#include "planjson.h"
#include "load.h"
#include "plan.h"

#define CLI_MAX_OPTIONS 96
#define CLI_MAX_DIMS 64
#define CLI_MAX_SHAPES 64
#define CLI_MAX_BOUNDS 64
#define CLI_MAX_VALUES 16
#define CLI_MAX_REGEX 64

/* --fit-axis NAME=V,...: the training options --fit searches besides
 * the devices' configurations, each named for the option it varies. */
typedef enum {
	CLI_AXIS_ATTENTION, CLI_AXIS_LORA, CLI_AXIS_BASE_QUANT, CLI_AXIS_BATCH,
	CLI_AXES
} CliAxis;
#define CLI_MAX_AXIS_VALUES 8
/* Setups --fit plans at most: the product of the axes' value counts. */
#define CLI_MAX_SETUPS 64
typedef struct CliFitAxes {
	int n[CLI_AXES];        /* values of each axis, 0: not searched */
	ArAttention attention[CLI_MAX_AXIS_VALUES];
	ArLoraSpec lora[CLI_MAX_AXIS_VALUES];      /* rank 0: no adapters */
	ArBaseQuant quant[CLI_MAX_AXIS_VALUES];
	int64_t batch[CLI_MAX_AXIS_VALUES];        /* the micro-batch */
} CliFitAxes;

/* parse_args's result when the run is already complete (--help). */
#define CLI_DONE (-1)

typedef struct Cli {
	const char *model;
	ArLoadOptions load;
	ArDimBinding dims[CLI_MAX_DIMS];
	ArInputShape shapes[CLI_MAX_SHAPES];
	ArInputValue values[CLI_MAX_VALUES];   /* --input-value */
	ArBound bounds[CLI_MAX_BOUNDS];   /* --bound */
	int nbounds;
	ArPlanOptions plan;
	int64_t arena_budget;             /* --arena-budget, 0: none */
	ArMemory memories[AR_MAX_TIERS];
	const char *json, *header, *prefix, *dot, *timeline, *weights, *trace;
	bool dot_weights, stats, selfcheck, quiet;
	bool strip_names;           /* --strip-names */
	struct ArKernelScratch *kernel_scratch;  /* --kernel-scratch, owned */
	/* Pictures (see ArEmitInfo): --dot-expand, --dot-focus,
	 * --timeline-compare (read into report), --timeline-other. */
	bool dot_expand, dot_focus_set, timeline_other_set;
	int dot_focus, dot_radius;
	int64_t timeline_other;
	const char *compare;
	ArPlanReport report;
	bool train, sweep, fuse;
	bool nhwc;                  /* --layout nhwc */
	/* --max-batch, --max-dim NAME, and the value found (0: not
	 * searched). */
	bool max_batch;
	const char *max_dim;
	int64_t max_found;
	ArTrainOptions topt;
	const char *freeze[CLI_MAX_REGEX], *trainable[CLI_MAX_REGEX];
	const char *lora_targets[CLI_MAX_REGEX];
	/* Many devices (devices.h): --dp, --tp, --pp, ... (multi), --fit
	 * (fitting); --offload's memories by name until resolved; what the
	 * outputs report (devices.c). */
	bool multi, fitting;
	ArDevicesSpec dev;
	ArFitSpec fit;
	CliFitAxes axes;
	const char *offload_to[AR_OFF_KINDS];
	/* --device and --fit NxNAME: their rows of the device table;
	 * --device NAME:SIZE's size (0: the table's). */
	const ArDeviceInfo *device, *fit_device;
	int64_t device_memory;
	const ArDevicesResult *devices;
	const ArFitResult *fit_result;
	/* --loader, --load-dtype (its choice), --gpus-per-node, --host-memory,
	 * and the host's bill once made (host.c). */
	ArHostSpec host;
	int load_dtype;
	ArHostBill host_bill;
	bool host_done;
	int stage;
	bool given[CLI_MAX_OPTIONS];    /* by table row */
	char options[1024];     /* the planning options, echoed in outputs */
} Cli;

/*
 * Fills c from argv: AR_OK, CLI_DONE after --help or --version, or
 * AR_EXIT_USAGE after printing the one-line error.
 */
int cli_parse_args(Cli *c, int argc, char **argv);

/* Writes the outputs the options name for graph g planned as p
 * (arenac.c); no_outputs: none named, and not quiet. */
int cli_write_outputs(const Cli *c, ArGraph *g, const ArPlan *p,
		      const ArTrainBill *bill, ArError *err);
bool cli_no_outputs(const Cli *c);

/* --dp, --tp, --pp, --offload and --fit (devices.c): plans, prints and
 * writes every device's step. */
int cli_run_devices(Cli *c, const ArGraph *g, ArError *err);

/* The host's bill (host.c) of the step r or b (model m) planned from g
 * under spec, into c->host_bill; AR_EXIT_BUDGET over --host-memory.  m
 * NULL: built from g.  r NULL: one device. */
int cli_host_bill(Cli *c, const ArGraph *g, const ArTrainSpec *spec,
		  const ArTrainModel *m, const ArTrainBill *b,
		  const ArDevicesResult *r, ArError *err);
void cli_print_host(FILE *f, const ArHostBill *h);

/* --list-ops (listops.c): prints the op table; CLI_DONE. */
int cli_list_ops(Cli *c, char *arg);
/* --list-devices (device_names.c): prints the device table; CLI_DONE. */
int cli_list_devices(Cli *c, char *arg);

/* Prints "arenac: error: ...\n(run 'arenac --help' ...)"; AR_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif
