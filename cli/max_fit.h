/*
 * max_fit.h — --max-batch and --max-dim (max_fit.c).
 */
#ifndef ARENAC_MAX_FIT_H
#define ARENAC_MAX_FIT_H

#include "options.h"

/*
 * The largest --batch (c->max_batch) or value of the symbolic dim
 * c->max_dim whose training step fits c's device, each value tried
 * planned in full; prints the table of the tries (unless quiet).
 * AR_EXIT_BUDGET with err naming why when even 1 does not fit;
 * AR_EXIT_USAGE without a device, or when no input takes --batch
 * (cli_check_batch).
 */
int cli_max_fit(const Cli *c, int64_t *best, ArError *err);

/*
 * Whether --batch b reached g, loaded with it: AR_OK when some graph
 * input's axis 0 is b, else AR_EXIT_USAGE with err saying, after what
 * (the option asking for b), the batch the file fixes (bind.c leaves a
 * fixed axis 0 other than 1, warning).
 */
int cli_check_batch(const ArGraph *g, int64_t b, const char *what,
		    ArError *err);

/*
 * lo with the searched quantity set to v: --batch, or --dim NAME=v in
 * place of any binding of NAME the command line gave (dims: room for
 * c->load.ndims + 1, outliving lo's use).
 */
void cli_max_fit_set(const Cli *c, int64_t v, ArLoadOptions *lo,
		     ArDimBinding *dims);

#endif
