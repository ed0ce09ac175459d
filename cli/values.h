/*
 * values.h — reading option values (values.c) and the distance between
 * option names (suggest.c), for the option table in options.c.
 */
#ifndef ARENAC_VALUES_H
#define ARENAC_VALUES_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "options.h"

/*
 * A size: digits with an optional fraction (1.5G, rounded to the byte)
 * and suffix: K, M, G, T, KiB, MiB, GiB, TiB powers of 1024; KB, MB, GB,
 * TB powers of 1000; B bytes.  On failure *bad is the unknown suffix,
 * cli_size_too_large past 2^62, or NULL when the number itself is wrong.
 */
bool cli_parse_size(const char *s, int64_t *out, const char **bad);
/* *bad after cli_parse_size for a size past 2^62. */
extern const char cli_size_too_large[];
/* The message for a size cli_parse_size refused: names the bad suffix,
 * or says what opt wants.  AR_EXIT_USAGE. */
int cli_size_error(const char *opt, const char *what, const char *text,
		   const char *bad);

/* The options' own parsers (Option.parse): AR_OK or AR_EXIT_USAGE. */
int cli_parse_dim(Cli *c, char *arg);
int cli_parse_input_shape(Cli *c, char *arg);
int cli_parse_input_value(Cli *c, char *arg);
int cli_parse_memory(Cli *c, char *arg);
int cli_parse_reserve(Cli *c, char *arg);
int cli_parse_bound(Cli *c, char *arg);
int cli_parse_effort(Cli *c, char *arg);
int cli_parse_precision(Cli *c, char *arg);
int cli_parse_optimizer(Cli *c, char *arg);
int cli_parse_beta1(Cli *c, char *arg);
int cli_parse_trainable(Cli *c, char *arg);
int cli_parse_freeze(Cli *c, char *arg);
int cli_parse_lora(Cli *c, char *arg);
int cli_parse_base_quant(Cli *c, char *arg);
int cli_parse_fit_axis(Cli *c, char *arg);
/* The CliAxis named name (an option's name), or -1. */
int cli_fit_axis_named(const char *name);
int cli_parse_lora_target(Cli *c, char *arg);
int cli_parse_lora_dropout(Cli *c, char *arg);
int cli_parse_dot_focus(Cli *c, char *arg);
int cli_parse_timeline_other(Cli *c, char *arg);
int cli_parse_kernel_scratch(Cli *c, char *arg);
int cli_parse_offload(Cli *c, char *arg);
int cli_parse_fit(Cli *c, char *arg);
int cli_parse_loader(Cli *c, char *arg);        /* host.c */
int cli_parse_host_memory(Cli *c, char *arg);

/* Named devices (device_names.c).  The table's row called name, or
 * AR_EXIT_USAGE naming the nearest rows, for option opt's message. */
int cli_device_named(const char *opt, const char *name,
		     const ArDeviceInfo **out);
int cli_parse_device(Cli *c, char *arg);
/* Once every option is read: --device's memory first, its FLOP/s and
 * link, the --fit rates not given, the default --reserve unless given. */
int cli_apply_device(Cli *c, bool reserve_given);
/* "H100-SXM, HBM3 3.35 TB/s", for the summary's device line. */
void cli_device_about(const ArDeviceInfo *d, char *buf, size_t n);
/* "  device  H100-SXM: 80 GiB HBM3 at 3.35 TB/s, ..." under the tables
 * of the devices path and --fit. */
void cli_print_device(FILE *f, const ArDeviceInfo *d, int64_t reserve);
/* The training summary's last device line: the step's FLOPs at the
 * device's peak, and the activation traffic of its memory (p's first
 * region) at its bandwidth. */
void cli_print_step_rates(FILE *f, const ArDeviceInfo *d,
			  const ArTrainBill *b, const ArPlan *p);

/* Edits (insert, delete, replace, swap two neighbours) from a[0..la) to
 * b; 99 for strings of 40 characters or more. */
int cli_edit_distance(const char *a, size_t la, const char *b);

#endif
