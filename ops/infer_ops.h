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
	/* --bound options (infer.h), shared with subgraphs; used[k] once
	 * bound k has been applied. */
	const struct ArBound *bounds;
	int nbounds;
	bool *bound_used;
	/* Sequence values of the top graph, as lists of its tensors
	 * (frontend/unroll.c); NULL until one is met. */
	struct ArSeqs *seqs;
	/*
	 * Data-dependent axes still without a bound (frontend/bounds.c),
	 * shared with subgraphs.  unsized[id] (nunsized entries, per
	 * tensor of g) marks a tensor sized with a placeholder for such an
	 * axis, or computed from one: its size means nothing and its
	 * errors are not reported.
	 */
	struct ArMissing *missing;
	bool *unsized;
	int nunsized;
} InferCtx;

/*
 * Bounded dynamic shapes (graph.h's ArTensor.bounded).  A shape function
 * whose output extent depends on values known only at run time sets the
 * shape with the axis's upper bound and marks it with ar_bound_axis, or
 * with AR_NO_BOUND when no bound is computable (the driver then applies
 * the user's --bound or fails naming it).  Outputs of a node reading a
 * bounded tensor are bounded on every axis unless the shape function
 * marks them itself: shape functions are monotone in their input dims, so
 * evaluated at the bounds they give bounds.
 */
#define AR_NO_BOUND (-1)
void ar_bound_axis(ArTensor *t, int axis, int64_t max);
/* Sets the data-dependent axes of a shaped output (t may be NULL); bit
 * i of t's input x is x->bounded >> i & 1. */
void ar_set_bounded(ArTensor *t, uint32_t axes);
#define AR_BOUNDED(x, i) ((x)->bounded >> (i) & 1u)
/* Input j is present but its values are known only at run time. */
bool ar_runtime_input(InferCtx *c, const ArNode *n, int j);
/* The driver's part (frontend/bounds.c): after node n's shape function,
 * propagate bounds to its outputs and apply --bound; then, once the graph
 * is inferred, check every --bound was used. */
int ar_settle_bounds(InferCtx *c, const ArNode *n, const ArOpDef *d);
int ar_check_bounds_used(InferCtx *c);
/* Inference goes on past a missing bound so that one error names them
 * all (bounds.c): whether tensor id is unsized, whether node n reads an
 * unsized tensor, marking n's outputs unsized (with unknown shapes when
 * its shape function failed), and once the graph is inferred the one
 * error naming every missing bound, in the model's order. */
bool ar_unsized(const InferCtx *c, int id);
bool ar_reads_unsized(const InferCtx *c, const ArNode *n);
void ar_unsize_outputs(InferCtx *c, const ArNode *n, bool failed);
void ar_missing_start(InferCtx *c);
int ar_missing_count(const InferCtx *c);
int ar_missing_error(InferCtx *c);
void ar_missing_free(InferCtx *c);
/*
 * The driver's part of sequence values (frontend/unroll.c): before the
 * top graph's node i is inferred, a sequence op or a Loop over sequences
 * is replaced by tensor ops (*rewrote: node i is now the first of them,
 * or the node after); once every node is, the unrolled Loops' conditions
 * are checked and the sequences' tensors dropped.  ar_seq_free frees
 * what an error left.
 */
int ar_seq_rewrite(InferCtx *c, int i, bool *rewrote);
int ar_seq_finish(InferCtx *c);
void ar_seq_free(InferCtx *c);

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
bool ar_fold_split(InferCtx *c, ArNode *n, int oj, ArTensor *out, int arg);
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
/* The channels-last variants (AR_NHWC_DOMAIN): shape_nhwc.c. */
int ar_shape_nhwc(InferCtx *c, ArNode *n);
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
/* The collectives of a per-device graph (shape_parallel.c). */
int ar_shape_allgather(InferCtx *c, ArNode *n);
int ar_shape_scatter(InferCtx *c, ArNode *n);
int ar_shape_send(InferCtx *c, ArNode *n);
int ar_shape_space_to_depth(InferCtx *c, ArNode *n);

/*
 * The window and product rules for ops whose operands sit at other input
 * positions (shape_conv.c): output 0 as Conv (MatMul) of inputs xi and wi
 * (ai and bi), of type dt (AR_DT_UNDEFINED: the first operand's); the
 * *_dims forms take the operands themselves and only compute dims.
 */
int ar_conv_out(InferCtx *c, ArNode *n, int xi, int wi, ArDType dt);
int ar_matmul_out(InferCtx *c, ArNode *n, int ai, int bi, ArDType dt);
int ar_pool_dims(InferCtx *c, const ArNode *n, const ArTensor *x,
		 int64_t *dims);
int ar_gemm_dims(InferCtx *c, const ArNode *n, const ArTensor *a,
		 const ArTensor *b, int64_t *dims);
int ar_matmul_dims(InferCtx *c, const ArNode *n, const ArTensor *a,
		   const ArTensor *b, int *rank, int64_t *dims);

/* The quantized ops; they also record ArTensor.quant (shape_quant.c). */
int ar_shape_quantize(InferCtx *c, ArNode *n);
int ar_shape_dequantize(InferCtx *c, ArNode *n);
int ar_shape_dynamic_quantize(InferCtx *c, ArNode *n);
int ar_shape_qlinearconv(InferCtx *c, ArNode *n);
int ar_shape_qlinearmatmul(InferCtx *c, ArNode *n);
int ar_shape_matmulinteger(InferCtx *c, ArNode *n);
int ar_shape_convinteger(InferCtx *c, ArNode *n);
int ar_shape_qlinear_binary(InferCtx *c, ArNode *n);
int ar_shape_qlinear_unary(InferCtx *c, ArNode *n);
int ar_shape_qlinear_pool(InferCtx *c, ArNode *n);
int ar_shape_qlinear_globalpool(InferCtx *c, ArNode *n);
int ar_shape_qlinearconcat(InferCtx *c, ArNode *n);
int ar_shape_qgemm(InferCtx *c, ArNode *n);
int ar_shape_dynamic_quantize_matmul(InferCtx *c, ArNode *n);
int ar_shape_matmul_integer_to_float(InferCtx *c, ArNode *n);
int ar_shape_matmulnbits(InferCtx *c, ArNode *n);

/* com.microsoft's transformer ops (shape_contrib.c) and Einsum
 * (shape_einsum.c). */
int ar_shape_attention(InferCtx *c, ArNode *n);
int ar_shape_mha(InferCtx *c, ArNode *n);
int ar_shape_gqa(InferCtx *c, ArNode *n);
int ar_shape_skiplayernorm(InferCtx *c, ArNode *n);
int ar_shape_embedlayernorm(InferCtx *c, ArNode *n);
int ar_shape_bias_split_gelu(InferCtx *c, ArNode *n);
int ar_shape_fusedmatmul(InferCtx *c, ArNode *n);
int ar_shape_einsum(InferCtx *c, ArNode *n);

int ar_shape_rnn(InferCtx *c, ArNode *n);
int ar_shape_if(InferCtx *c, ArNode *n);
int ar_shape_loop(InferCtx *c, ArNode *n);
int ar_shape_scan(InferCtx *c, ArNode *n);

int ar_shape_det(InferCtx *c, ArNode *n);
int ar_shape_col2im(InferCtx *c, ArNode *n);
int ar_shape_centercroppad(InferCtx *c, ArNode *n);
int ar_shape_optimizer(InferCtx *c, ArNode *n);
int ar_shape_loss(InferCtx *c, ArNode *n);
int ar_shape_gridsample(InferCtx *c, ArNode *n);
int ar_shape_roialign(InferCtx *c, ArNode *n);
int ar_shape_maxunpool(InferCtx *c, ArNode *n);
int ar_shape_gathernd(InferCtx *c, ArNode *n);
int ar_shape_onehot(InferCtx *c, ArNode *n);
int ar_shape_tfidf(InferCtx *c, ArNode *n);
int ar_shape_like(InferCtx *c, ArNode *n);
int ar_shape_eyelike(InferCtx *c, ArNode *n);
int ar_shape_random(InferCtx *c, ArNode *n);
int ar_shape_multinomial(InferCtx *c, ArNode *n);
int ar_shape_window(InferCtx *c, ArNode *n);
int ar_shape_melweight(InferCtx *c, ArNode *n);
int ar_shape_dft(InferCtx *c, ArNode *n);
int ar_shape_stft(InferCtx *c, ArNode *n);

/* Ops whose output size depends on values (shape_dynamic.c). */
int ar_shape_nonzero(InferCtx *c, ArNode *n);
int ar_shape_nms(InferCtx *c, ArNode *n);
int ar_shape_unique(InferCtx *c, ArNode *n);
int ar_shape_compress(InferCtx *c, ArNode *n);

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
