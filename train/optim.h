/*
 * optim.h — what an optimizer keeps per trained parameter, from the one
 * table of optimizers (optimizers.c): the tensors of its state, each with
 * its format, its element count and the memory it lives in.  The bill
 * (precision.c) sums them and the update step (step.c) reads them, so the
 * two cannot disagree.
 */
#ifndef ARENAC_OPTIM_H
#define ARENAC_OPTIM_H

#include "train.h"

/* At most: two moments, each with its codes, scales and map. */
#define AR_MAX_STATES 6

typedef struct ArStateTensor {
	char suffix[32];        /* appended to the parameter's name */
	ArDType dtype;
	int64_t numel;
	/* The parameter's shape (a full moment), else rank 1 [numel]. */
	bool like_param;
	/* In host memory (a paged optimizer's large buffers), not on the
	 * device. */
	bool host;
} ArStateTensor;

/* The state tensors of trained parameter `param`; their count. */
int ar_optim_states(const ArTrainModel *m, int param, ArStateTensor *out);

/* Tensors the optimizer keeps once, whatever the parameters (the
 * quantisation maps of bitsandbytes' 8-bit optimizers), when any
 * parameter's state is quantised; their count. */
int ar_optim_shared(const ArTrainModel *m, ArStateTensor *out);

/* The update step's op (a training-domain op of ops/table.c). */
const char *ar_optim_update_op(ArOptimizer o);

/* AR_EXIT_MODEL, naming the option, for a format that cannot hold what
 * it is asked to (a 4-bit master copy, 8-bit gradients, a --state-dtype
 * for an optimizer whose state has its own format); AR_OK otherwise. */
int ar_optim_check(const ArTrainSpec *spec, ArError *err);

#endif
