/*
 * max_batch.h — --max-batch (max_batch.c).
 */
#ifndef ARENAC_MAX_BATCH_H
#define ARENAC_MAX_BATCH_H

#include "options.h"

/*
 * The largest --batch whose training step fits c's device, each batch
 * tried planned in full; prints the table of the tries (unless quiet).
 * AR_EXIT_BUDGET with err naming why when even a batch of 1 does not
 * fit; AR_EXIT_USAGE without a device, or when no input takes --batch.
 */
int cli_max_batch(const Cli *c, int64_t *best, ArError *err);

#endif
