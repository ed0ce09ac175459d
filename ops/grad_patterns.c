/*
 * grad_patterns.c — op chains that stand for one op, for the backward
 * pass (ops.h, ArGradPattern).
 *
 * Exporters decompose GELU below opset 20: torch writes
 * x * (1 + erf(x / sqrt 2)) * 0.5 as Div, Erf, Add, Mul, Mul, and the tanh
 * approximation as eight ops.  Per-op gradient rules would keep erf's
 * input and 1 + erf (or tanh's output and 1 + tanh) beside x, two more
 * tensors of the MLP's widest size per layer, where GELU's own gradient
 * (and PyTorch's, and Korthikanti et al.'s accounting) needs only x.  The
 * forward pass still runs the ops as the model has them; only the
 * backward step is GELU's.
 */

#include "ops.h"

#define X {AR_PAT_X, 0}
#define PREV {AR_PAT_PREV, 0}
#define C(v) {AR_PAT_CONST, (v)}

static const ArGradPattern patterns[] = {
	{"GELU, erf form (torch.onnx)", "Gelu", 5, {
		{"Div", 2, {X, C(1.4142135623730951)}, false},
		{"Erf", 1, {PREV}, false},
		{"Add", 2, {PREV, C(1)}, true},
		{"Mul", 2, {X, PREV}, true},
		{"Mul", 2, {PREV, C(0.5)}, true}}},
	{"GELU, erf form scaled by 1/sqrt 2", "Gelu", 5, {
		{"Mul", 2, {X, C(0.7071067811865476)}, true},
		{"Erf", 1, {PREV}, false},
		{"Add", 2, {PREV, C(1)}, true},
		{"Mul", 2, {X, PREV}, true},
		{"Mul", 2, {PREV, C(0.5)}, true}}},
	{"GELU, tanh form", "Gelu", 8, {
		{"Pow", 2, {X, C(3)}, false},
		{"Mul", 2, {PREV, C(0.044715)}, true},
		{"Add", 2, {X, PREV}, true},
		{"Mul", 2, {PREV, C(0.7978845608028654)}, true},
		{"Tanh", 1, {PREV}, false},
		{"Add", 2, {PREV, C(1)}, true},
		{"Mul", 2, {X, PREV}, true},
		{"Mul", 2, {PREV, C(0.5)}, true}}},
};

const ArGradPattern *ar_grad_patterns(int *count)
{
	*count = (int)(sizeof patterns / sizeof patterns[0]);
	return patterns;
}
