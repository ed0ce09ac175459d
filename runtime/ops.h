/*
 * ops.h — the op layer between the interpreter and the kernels.
 *
 * An op function reads one step's attributes and operands, checks what
 * the kernel relies on (types, ranks, index ranges), and calls kernels.
 * It returns 0, or -1 after ctx_fail has said what is wrong.  The table
 * that maps op names to these functions is interp.c's, the one list of
 * what the runtime can run.
 */
#ifndef ARENAC_RT_OPS_H
#define ARENAC_RT_OPS_H

#include <stdarg.h>
#include <stddef.h>

#include "kernels.h"

typedef struct Ctx {
	const art_model *m;
	const art_graph *g;         /* the graph whose steps run: the model's
				       or a subgraph's */
	const art_arena *arenas;    /* one per region (art_run_arenas) */
	const uint8_t *weights;
	void *const *io;            /* the caller's buffers, or NULL */
	art_error *err;
	int si;                     /* the step running */
	const art_step *s;          /* it (&step), or NULL between steps */
	art_step step;
	const struct Ctx *up;       /* the step running this subgraph, or NULL */
} Ctx;

typedef int (*OpFn)(Ctx *c);

/* The error codes: one per template of runtime/errors.def. */
enum {
	ART_E_NONE,
#define ART_E(name, template) ART_E_##name,
#include "errors.def"
#undef ART_E
	ART_E_COUNT
};

/* ctx_fail(c, ART_E_X, ART_S(name), ART_I(n), ...): records code X and
 * its details (at most ART_ERR_ARGS, in the template's order) in c->err
 * with the steps running; -1. */
#define ART_S(x) ((art_err_arg){.s = (x)})
#define ART_I(x) ((art_err_arg){.i = (long long)(x)})
#define ART_U(x) ((art_err_arg){.u = (unsigned long long)(x)})
#define ART_G(x) ((art_err_arg){.g = (double)(x)})
#define ART_NARGS_(code, a, b, c, d, n, ...) n
#define ctx_fail(c, ...) \
	ctx_fail_(c, ART_NARGS_(__VA_ARGS__, 4, 3, 2, 1, 0, ~), __VA_ARGS__)
int ctx_fail_(Ctx *c, int nargs, int code, ...);

/* format.c: snprintf's conversions %s %d %u %l.. %ll.. %zu %g, without
 * the C library (whose printf family allocates on newlib). */
int rt_vformat(char *buf, size_t size, const char *fmt, va_list ap);
int rt_format(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Tensor id of the graph running, decoded. */
art_tensor ctx_tensor(const Ctx *c, int id);
/* The step's workspace in its region's arena when the plan gave it at
 * least bytes (art_step.scratch_*), else NULL. */
void *ctx_scratch(const Ctx *c, size_t bytes);
void *ctx_ptr(const Ctx *c, int id);
int ctx_in(const Ctx *c, int j);        /* input j's tensor, -1 if none */
int ctx_out(const Ctx *c, int j);
/* The tensor whose buffer id's bytes belong to (views, in place). */
int ctx_root(const Ctx *c, int id);

/* The step's attribute, decoded into *buf, or NULL when it has none. */
const art_attr *ctx_attr(const Ctx *c, const char *name, art_attr *buf);
int64_t ctx_attr_int(const Ctx *c, const char *name, int64_t dflt);
/* A FLOAT or INT attribute as a double. */
double ctx_attr_num(const Ctx *c, const char *name, double dflt);
const char *ctx_attr_str(const Ctx *c, const char *name, const char *dflt);
/* An INTS attribute of at most max values into v; *n = -1 when absent. */
int ctx_attr_ints(Ctx *c, const char *name, int64_t *v, int max, int *n);

/* Input j of any element type; a->p NULL when an optional one is
 * omitted (a required one fails). */
int ctx_arg(Ctx *c, int j, int required, rt_arr *a);
int ctx_res(Ctx *c, int j, rt_arr *a);  /* output j */
/* Float32 input / output j. */
int ctx_fin(Ctx *c, int j, int required, const float **p, rt_shape *s);
int ctx_fout(Ctx *c, int j, float **p, rt_shape *s);
/* The values of integer input j, at most max; *n = -1 when omitted. */
int ctx_ints(Ctx *c, int j, int64_t *v, int max, int *n);
/* The first value of numeric input j as a double, dflt when omitted. */
int ctx_scalar(Ctx *c, int j, double dflt, double *v);
/* axis in [-rank, rank) made non-negative. */
int ctx_axis(Ctx *c, int64_t axis, int rank, int *out);
/* Fails unless idx is int32 or int64 with each value i in [-d, d) for
 * d = dims[i mod period] (period 1: one axis; k: k-tuples). */
int ctx_indices(Ctx *c, const rt_arr *idx, int64_t period,
		const int64_t *dims);
/* Fails unless every tensor of the step is float32. */
int ctx_float_only(Ctx *c);

/* ops_nn.c; the convolution geometry (leading pads from pads, auto_pad or
 * output_shape; the trailing ones follow from the plan's output shape)
 * serves the integer convolutions too, and 1-D runs as 2-D of height 1. */
int ctx_conv_geometry(Ctx *c, const rt_shape *xs, const rt_shape *ys,
		      const int64_t *kernel, int transposed, rt_conv *p,
		      int64_t *pads_end);
void ctx_as_2d(rt_shape *s);
/* group (an attribute, >= 1) divides the channels (extents) only when it
 * is at most them; W has cg input channels per group.  Inline: the int8
 * CNN's firmware stays 64 bytes smaller. */
static inline int ctx_group_channels(Ctx *c, const rt_conv *p, int64_t cg,
				     int64_t C, int64_t M)
{
	if (p->group > C || p->group > M || rt_mod(C, p->group) ||
	    rt_mod(M, p->group) || cg * p->group != C)
		return ctx_fail(c, ART_E_CHANNELS_MULTIPLE_GROUP);
	return 0;
}
/* Whether a channels-last variant's filter ws is in TFLite's layout
 * (kernels.h rt_filter_at) for C input and M output channels. */
int ctx_nhwc_filter(Ctx *c, const rt_conv *p, const rt_shape *ws, int64_t C,
		    int64_t M);
/* A shape of rank 3 or 4 stored channels-last ([N, spatial..., C],
 * --layout nhwc) listed [N, C, spatial...], the order the geometry and
 * kernels take shapes in. */
void ctx_channels_first(rt_shape *s);

int op_conv(Ctx *c);
int op_pool(Ctx *c);
int op_global_pool(Ctx *c);
int op_lrn(Ctx *c);
/* The channels-last variants (domain ART_NHWC_DOMAIN, --layout nhwc,
 * frontend/layout.c): input 0 and output 0 [N,H,W,C]. */
#define ART_NHWC_DOMAIN "com.ms.internal.nhwc"
int op_nhwc_conv(Ctx *c);
int op_nhwc_pool(Ctx *c);
int op_nhwc_global_pool(Ctx *c);
int op_nhwc_batchnorm(Ctx *c);
int op_batchnorm(Ctx *c);
int op_instancenorm(Ctx *c);
int op_layernorm(Ctx *c);
int op_mvn(Ctx *c);
int op_softmax(Ctx *c);
int op_gemm(Ctx *c);
int op_matmul(Ctx *c);

/* ops_loss.c */
int op_loss(Ctx *c);

/* ops_control.c; interp.c runs a graph's steps for it. */
int op_if(Ctx *c);
int rt_run_steps(Ctx *c);

/* ops_rnn.c */
int op_rnn(Ctx *c);

/* ops_elementwise.c */
int op_unary(Ctx *c);
int op_binary(Ctx *c);
int op_where(Ctx *c);
int op_cast(Ctx *c);

/* ops_reduce.c */
int op_reduce(Ctx *c);
int op_argreduce(Ctx *c);
int op_cumsum(Ctx *c);

/* ops_layout.c */
int op_copy(Ctx *c);
int op_dropout(Ctx *c);
int op_concat(Ctx *c);
int op_split(Ctx *c);
int op_transpose(Ctx *c);
int op_depth_space(Ctx *c);
int op_slice(Ctx *c);
int op_pad(Ctx *c);
int op_expand(Ctx *c);
int op_tile(Ctx *c);
int op_trilu(Ctx *c);
int op_gather(Ctx *c);
int op_resize(Ctx *c);

/* ops_scatter.c */
int op_scatter(Ctx *c);
int op_gather_nd(Ctx *c);
int op_reverse_sequence(Ctx *c);

/* ops_values.c */
int op_constant(Ctx *c);
int op_eyelike(Ctx *c);
int op_shape(Ctx *c);
int op_range(Ctx *c);

/* ops_quant.c */
int op_quantize(Ctx *c);
int op_dequantize(Ctx *c);
int op_dynamic_quantize(Ctx *c);
int op_conv_int(Ctx *c);
int op_nhwc_conv_int(Ctx *c);       /* QLinearConv channels-last */
int op_matmul_int(Ctx *c);

#endif
