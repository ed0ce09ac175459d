/*
 * grad_patterns.c — op chains that stand for one op, for the backward
 * pass (ops.h, ArGradPattern).  The forward pass still runs the ops as the
 * model has them; only the backward step is the fused op's, and it keeps
 * what PyTorch's autograd keeps for the module the export came from.
 *
 * What torch 1.13's exporter writes (torch/onnx/symbolic_opset9.py):
 *   - gelu(): approximate='none' as Div, Erf, Add, Mul, Mul; 'tanh' as
 *     mul(half, mul(x, add(one, Tanh(mul(beta, add(x, mul(kappa,
 *     mul(x, mul(x, x))))))))), the cube as Mul(x, Mul(x, x));
 *   - silu(): Mul(x, Sigmoid(x)) (nn.SiLU, F.silu);
 *   - rsqrt(): Div(1, Sqrt(x));
 *   - native_layer_norm() (layer_norm below opset 17): ReduceMean, Sub,
 *     Pow 2, ReduceMean, Add eps, Sqrt, Div, then Mul by the weight and
 *     Add the bias when the module has them.
 * What torch's autograd keeps for those ops (tools/autograd/
 * derivatives.yaml): gelu: gelu_backward(grad, self, approximate) and
 * silu: silu_backward(grad, self) read the input alone; rsqrt: -0.5 *
 * grad * result.pow(3) the result alone;
 * native_layer_norm: native_layer_norm_backward(grad, input, ..., result1,
 * result2, weight, bias) reads the input, the per-row mean and 1/std
 * (result1, result2) and the parameters.  Per-op rules would keep
 * erf's or tanh's operands, x^2, 1 + tanh, the sigmoid, x - mean and the
 * normalised x besides: one to three more tensors of the layer's width
 * (for rsqrt, the square root: one value per row).
 *
 * The ONNX of these modules is the same as that of the same arithmetic
 * written op by op in Python, which torch saves op by op.  The table
 * takes the module, by far the common case (nn.LayerNorm, nn.GELU, F.silu
 * in GPT-2, BERT, ViT, nn.TransformerEncoder, Llama's MLP); code that
 * writes the formula out in another order (Hugging Face's NewGELU,
 * 0.5 * x first) matches no entry and gets per-op rules, which is what
 * torch keeps for it.  A hand RMSNorm (Llama's x * torch.rsqrt(
 * x.pow(2).mean(-1) + eps) * w) is not fused in torch either: each op
 * keeps its own operands, and only its rsqrt is an entry here.
 *
 * A decomposed LayerNorm's backward reads its Sqrt output (std, one value
 * per row) where torch reads 1/std: the same bytes.  The other
 * LayerNorm forms (eps after the square root, a product by the
 * reciprocal: other exporters' and hand-written ones) are billed as the
 * module too.
 */

#include "fuse.h"
#include "ops.h"

#define X {AR_PAT_X, 0, 0}
#define PREV {AR_PAT_PREV, 0, 0}
#define STEP(k) {AR_PAT_STEP, 0, (k)}
#define C(v) {AR_PAT_CONST, (v), 0}
#define EPS {AR_PAT_SCALAR, 0, 0}
#define ARG(j) {AR_PAT_ARG, 0, (j)}

/* A decomposed LayerNorm, steps 0-3: the mean, x - mean, its square, the
 * variance; then std (+ eps before or after the square root) and x - mean
 * divided by it or times its reciprocal; then, optional, the weight and
 * the bias. */
#define LN_VARIANCE \
	{"ReduceMean", 1, {X}, false, true}, \
	{"Sub", 2, {X, PREV}, false, false}, \
	{"Pow", 2, {PREV, C(2)}, false, false}, \
	{"ReduceMean", 1, {PREV}, false, true}
#define LN_EPS {"Add", 2, {PREV, EPS}, true, false}
#define LN_SQRT {"Sqrt", 1, {PREV}, false, false}
#define LN_DIV {"Div", 2, {STEP(1), PREV}, false, false}
#define LN_RECIPROCAL {"Reciprocal", 1, {PREV}, false, false}, \
	{"Mul", 2, {STEP(1), PREV}, true, false}
#define LN_AFFINE \
	{"Mul", 2, {PREV, ARG(1)}, true, false}, \
	{"Add", 2, {PREV, ARG(2)}, true, false}

static const ArGradPattern patterns[] = {
	{"GELU, erf form (torch.onnx)", "Gelu", 5, {
		{"Div", 2, {X, C(1.4142135623730951)}, false, false},
		{"Erf", 1, {PREV}, false, false},
		{"Add", 2, {PREV, C(1)}, true, false},
		{"Mul", 2, {X, PREV}, true, false},
		{"Mul", 2, {PREV, C(0.5)}, true, false}}, 0, {0}, NULL, 0, AR_DT_UNDEFINED},
	{"GELU, erf form scaled by 1/sqrt 2", "Gelu", 5, {
		{"Mul", 2, {X, C(0.7071067811865476)}, true, false},
		{"Erf", 1, {PREV}, false, false},
		{"Add", 2, {PREV, C(1)}, true, false},
		{"Mul", 2, {X, PREV}, true, false},
		{"Mul", 2, {PREV, C(0.5)}, true, false}}, 0, {0}, NULL, 0, AR_DT_UNDEFINED},
	{"GELU, tanh form, the cube as Pow", "Gelu", 8, {
		{"Pow", 2, {X, C(3)}, false, false},
		{"Mul", 2, {PREV, C(0.044715)}, true, false},
		{"Add", 2, {X, PREV}, true, false},
		{"Mul", 2, {PREV, C(0.7978845608028654)}, true, false},
		{"Tanh", 1, {PREV}, false, false},
		{"Add", 2, {PREV, C(1)}, true, false},
		{"Mul", 2, {X, PREV}, true, false},
		{"Mul", 2, {PREV, C(0.5)}, true, false}}, 0, {0}, NULL, 0, AR_DT_UNDEFINED},
	{"GELU, tanh form (torch.onnx, nn.GELU(approximate='tanh'))", "Gelu",
	 9, {
		{"Mul", 2, {X, X}, false, false},
		{"Mul", 2, {X, PREV}, true, false},
		{"Mul", 2, {PREV, C(0.044715)}, true, false},
		{"Add", 2, {X, PREV}, true, false},
		{"Mul", 2, {PREV, C(0.7978845608028654)}, true, false},
		{"Tanh", 1, {PREV}, false, false},
		{"Add", 2, {PREV, C(1)}, true, false},
		{"Mul", 2, {X, PREV}, true, false},
		{"Mul", 2, {PREV, C(0.5)}, true, false}}, 0, {0}, NULL, 0, AR_DT_UNDEFINED},
	/* ONNX's Swish (alpha 1) is SiLU. */
	{"SiLU (torch.onnx, nn.SiLU, F.silu)", "Swish", 2, {
		{"Sigmoid", 1, {X}, false, false},
		{"Mul", 2, {X, PREV}, true, false}}, 0, {0}, NULL, 0, AR_DT_UNDEFINED},
	/* torch.rsqrt (symbolic_opset9.rsqrt): a hand RMSNorm's 1/rms.
	 * Torch's RsqrtBackward0 keeps the result; per op, Sqrt's output
	 * too.  1 / torch.sqrt(v) is Reciprocal(Sqrt) in the export and
	 * keeps both in torch (Sqrt's and Reciprocal's results): no entry. */
	{"rsqrt (torch.onnx)", "Rsqrt", 2, {
		{"Sqrt", 1, {X}, false, false},
		{"Div", 2, {C(1), PREV}, false, false}}, 0, {0},
	 AR_FUSED_DOMAIN, 0, AR_DT_UNDEFINED},
	/* Outputs: Y (the last step's), the mean (step 0) and std (or
	 * std + eps, or their reciprocal: one value per row), in float at
	 * least, as LayerNormalization's own; inputs x, the weight and the
	 * bias where the chain has them. */
	{"LayerNorm (torch.onnx below opset 17)", "LayerNormalization", 9, {
		LN_VARIANCE, LN_EPS, LN_SQRT, LN_DIV, LN_AFFINE},
	 3, {0, 0, 5}, NULL, 7, AR_DT_FLOAT},
	{"LayerNorm, eps after the square root", "LayerNormalization", 9, {
		LN_VARIANCE, LN_SQRT, LN_EPS, LN_DIV, LN_AFFINE},
	 3, {0, 0, 5}, NULL, 7, AR_DT_FLOAT},
	{"LayerNorm times the reciprocal of std", "LayerNormalization", 10, {
		LN_VARIANCE, LN_EPS, LN_SQRT, LN_RECIPROCAL, LN_AFFINE},
	 3, {0, 0, 6}, NULL, 8, AR_DT_FLOAT},
	{"LayerNorm, eps after the square root, times its reciprocal",
	 "LayerNormalization", 10, {
		LN_VARIANCE, LN_SQRT, LN_EPS, LN_RECIPROCAL, LN_AFFINE},
	 3, {0, 0, 6}, NULL, 8, AR_DT_FLOAT},
};

const ArGradPattern *ar_grad_patterns(int *count)
{
	*count = (int)(sizeof patterns / sizeof patterns[0]);
	return patterns;
}
