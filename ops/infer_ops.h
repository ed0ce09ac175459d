/*
 * infer_ops.h — what the inference and folding drivers (frontend/infer.c,
 * frontend/fold.c) share with the per-op functions the op table names:
 * shape functions (shape_*.c) and folders (fold_eval.c).
 *
 * A shape function sets dtype, rank and dims of each output of one node;
 * the driver checks inputs before and sizes, folds and cross-checks the
 * outputs after, so shape functions stay about shapes only.
 */
#ifndef ARENAC_INFER_OPS_H
#define ARENAC_INFER_OPS_H

#include "ops.h"

typedef struct InferCtx {
	ArGraph *g;
	const ArDiag *diag;
	ArError *err;
	/*
	 * Per tensor of g: a subgraph capture standing for an outer constant.
	 * Captures keep kind INPUT for the planner, yet fold like constants.
	 */
	bool *capconst;
} InferCtx;

/* Values computed for a shape that needs them stay below this many
 * elements (frontend/fold.c). */
#define AR_FOLD_MAX_ELEMS ((int64_t)1 << 20)
/* Outputs of one node at most. */
#define AR_MAX_OUTPUTS 64

/* Fails with "node 'NAME' (OP): <message>" and AR_EXIT_MODEL. */
int ar_node_fail(InferCtx *c, const ArNode *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Explicit input j, or NULL when omitted or past the node's inputs. */
ArTensor *ar_in(InferCtx *c, const ArNode *n, int j);
/* Output j, or NULL when omitted. */
ArTensor *ar_out(InferCtx *c, const ArNode *n, int j);
/* Input j that the op requires; fails naming it when omitted. */
int ar_need(InferCtx *c, const ArNode *n, int j, ArTensor **t);

bool ar_is_const(const InferCtx *c, int id);

/* Sets dtype and shape of an output; a NULL t (omitted) is ignored. */
void ar_set_shape(ArTensor *t, ArDType dt, int rank, const int64_t *dims);
/* Output j gets input's dtype and shape. */
void ar_same_as(InferCtx *c, const ArNode *n, int j, const ArTensor *in);

/* Maps axis in [-rank, rank) to [0, rank), failing otherwise. */
int ar_axis(InferCtx *c, const ArNode *n, int64_t axis, int rank, int *out);

/*
 * The int values of input j: *vals is malloc'd (free it), NULL with
 * *count -1 when the input is omitted.  Fails naming the input when it is
 * present but not a compile-time constant with known values.
 */
int ar_const_ints(InferCtx *c, const ArNode *n, int j, int64_t **vals,
		  int64_t *count);
/* The same for float inputs (Resize scales). */
int ar_const_floats(InferCtx *c, const ArNode *n, int j, double **vals,
		    int64_t *count);
/* Attribute ints as a malloc'd copy, or NULL with *count -1 if absent. */
void ar_attr_ints(const ArNode *n, const char *name, int64_t **vals,
		  int64_t *count);

/* Multidirectional (numpy) broadcast of a and b into dims/rank. */
int ar_broadcast2(InferCtx *c, const ArNode *n, int ra, const int64_t *da,
		  int rb, const int64_t *db, int *rank, int64_t *dims);
int64_t ar_prod(const int64_t *dims, int from, int to);

/* Value access used by folding and by shape functions alike. */
int64_t ar_get_int(const ArTensor *t, int64_t k);
double ar_get_float(const ArTensor *t, int64_t k);
bool ar_dtype_is_int(ArDType dt);
bool ar_dtype_is_float(ArDType dt);

/* Infers a subgraph after binding its captures to the enclosing graph. */
int ar_infer_subgraph(InferCtx *outer, ArGraph *sub);

/* Evaluates a node on constant inputs where its values are small; leaves
 * data NULL otherwise, or when it cannot (frontend/fold.c). */
void ar_fold(InferCtx *c, ArNode *n);
/*
 * Computes constant tensor t's value on demand, with the constants it is
 * computed from, none above limit elements (-1: any).  When made is not
 * NULL, appends every tensor given a value (room for all of g's).  False
 * when t's value cannot be computed.
 */
bool ar_fold_value(InferCtx *c, int t, int64_t limit, int *made,
		   int *nmade);

/* The arithmetic of an elementwise or reducing folder (fold_arg). */
typedef enum {
	AR_E_ADD = 1, AR_E_SUB, AR_E_MUL, AR_E_DIV, AR_E_POW, AR_E_MOD,
	AR_E_MIN, AR_E_MAX, AR_E_SUM, AR_E_MEAN, AR_E_EQ, AR_E_LT, AR_E_GT,
	AR_E_LE, AR_E_GE, AR_E_AND, AR_E_OR, AR_E_XOR, AR_E_NEG, AR_E_ABS,
	AR_E_NOT, AR_E_SQRT, AR_E_EXP, AR_E_LOG, AR_E_FLOOR, AR_E_CEIL,
	AR_E_RELU, AR_E_SIGN, AR_E_RECIP
} ArArith;

/* Folders (ArFoldFn), grouped by what they do (fold_eval.c). */
bool ar_fold_arith(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg);
bool ar_fold_copy(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg);
bool ar_fold_expand(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg);
bool ar_fold_where(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg);
bool ar_fold_constant(InferCtx *c, ArNode *n, int oj, ArTensor *out,
		      int arg);
bool ar_fold_gather(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg);
bool ar_fold_slice(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg);
bool ar_fold_concat(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg);
bool ar_fold_transpose(InferCtx *c, ArNode *n, int oj, ArTensor *out,
		       int arg);
bool ar_fold_range(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg);
bool ar_fold_reduce(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg);
bool ar_fold_shape(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg);
bool ar_fold_size(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg);
bool ar_fold_constantofshape(InferCtx *c, ArNode *n, int oj, ArTensor *out,
			     int arg);

/* Shape functions, grouped by family. */
int ar_shape_unary(InferCtx *c, ArNode *n);
int ar_shape_cast(InferCtx *c, ArNode *n);
int ar_shape_castlike(InferCtx *c, ArNode *n);
int ar_shape_tobool(InferCtx *c, ArNode *n);
int ar_shape_dropout(InferCtx *c, ArNode *n);
int ar_shape_broadcast(InferCtx *c, ArNode *n);
int ar_shape_compare(InferCtx *c, ArNode *n);
int ar_shape_where(InferCtx *c, ArNode *n);
int ar_shape_batchnorm(InferCtx *c, ArNode *n);
int ar_shape_layernorm(InferCtx *c, ArNode *n);
int ar_shape_loss(InferCtx *c, ArNode *n);

int ar_shape_conv(InferCtx *c, ArNode *n);
int ar_shape_convtranspose(InferCtx *c, ArNode *n);
int ar_shape_pool(InferCtx *c, ArNode *n);
int ar_shape_globalpool(InferCtx *c, ArNode *n);
int ar_shape_gemm(InferCtx *c, ArNode *n);
int ar_shape_matmul(InferCtx *c, ArNode *n);

int ar_shape_constant(InferCtx *c, ArNode *n);
int ar_shape_constantofshape(InferCtx *c, ArNode *n);
int ar_shape_shape(InferCtx *c, ArNode *n);
int ar_shape_size(InferCtx *c, ArNode *n);
int ar_shape_reshape(InferCtx *c, ArNode *n);
int ar_shape_flatten(InferCtx *c, ArNode *n);
int ar_shape_transpose(InferCtx *c, ArNode *n);
int ar_shape_concat(InferCtx *c, ArNode *n);
int ar_shape_split(InferCtx *c, ArNode *n);
int ar_shape_slice(InferCtx *c, ArNode *n);
int ar_shape_squeeze(InferCtx *c, ArNode *n);
int ar_shape_unsqueeze(InferCtx *c, ArNode *n);
int ar_shape_gather(InferCtx *c, ArNode *n);
int ar_shape_gather_elements(InferCtx *c, ArNode *n);
int ar_shape_pad(InferCtx *c, ArNode *n);
int ar_shape_resize(InferCtx *c, ArNode *n);
int ar_shape_expand(InferCtx *c, ArNode *n);
int ar_shape_tile(InferCtx *c, ArNode *n);
int ar_shape_range(InferCtx *c, ArNode *n);
int ar_shape_reduce(InferCtx *c, ArNode *n);
int ar_shape_argreduce(InferCtx *c, ArNode *n);
int ar_shape_topk(InferCtx *c, ArNode *n);
int ar_shape_depth_to_space(InferCtx *c, ArNode *n);
int ar_shape_space_to_depth(InferCtx *c, ArNode *n);

int ar_shape_rnn(InferCtx *c, ArNode *n);
int ar_shape_if(InferCtx *c, ArNode *n);
int ar_shape_loop(InferCtx *c, ArNode *n);

/* Helpers the folder shares with the shape functions. */
void ar_shape_range_of(const ArNode *n, int rank, int *start, int *end);
int ar_slice_params(InferCtx *c, const ArNode *n, const ArTensor *x,
		    int64_t *first, int64_t *step, int64_t *len);
int ar_reduce_axes(InferCtx *c, const ArNode *n, const ArTensor *x,
		   bool *mark);
/* Slice bounds after the spec's negative-index and clamping rules. */
void ar_slice_bounds(int64_t dim, int64_t start, int64_t end, int64_t step,
		     int64_t *first, int64_t *len);

#endif
