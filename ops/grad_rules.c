/*
 * grad_rules.c — what each op's gradient step reads and produces.
 *
 * The planner does not compute gradients; it needs only which forward
 * tensors a gradient step reads (they must be resident or recomputed by
 * then) and which inputs get a gradient.  The sets follow the standard
 * derivations: Relu's gradient masks by its output, a pooling maximum
 * needs input and output to find the argmax, a bilinear op's gradient of
 * one operand multiplies by the other, sums and reshapes need no values.
 *
 * Batch statistics of BatchNormalization are read through its mean and
 * variance inputs (channel-sized, persistent), so a batch-norm gradient
 * needs its input and scale from the arena.  Only output 0 of an op
 * carries a gradient (Dropout's mask and similar outputs do not).
 */
#include "train.h"

#include <string.h>

#define B(i) (1u << (i))
#define ALL 0xffffffffu

static const ArGradRule rules[] = {
	/* op                      diff            save_in        save_out cross */
	{"Conv",                   B(0)|B(1)|B(2), 0,             0,        true},
	{"ConvTranspose",          B(0)|B(1)|B(2), 0,             0,        true},
	{"Gemm",                   B(0)|B(1)|B(2), 0,             0,        true},
	{"MatMul",                 B(0)|B(1),      0,             0,        true},
	{"Mul",                    B(0)|B(1),      0,             0,        true},
	{"Add",                    B(0)|B(1),      0,             0,        false},
	{"Sub",                    B(0)|B(1),      0,             0,        false},
	{"Sum",                    ALL,            0,             0,        false},
	{"Concat",                 ALL,            0,             0,        false},
	{"Relu",                   B(0),           0,             B(0),     false},
	{"Sigmoid",                B(0),           0,             B(0),     false},
	{"Tanh",                   B(0),           0,             B(0),     false},
	{"LeakyRelu",              B(0),           B(0),          0,        false},
	{"Softmax",                B(0),           0,             B(0),     false},
	{"LogSoftmax",             B(0),           0,             B(0),     false},
	{"MaxPool",                B(0),           B(0),          B(0),     false},
	{"GlobalMaxPool",          B(0),           B(0),          B(0),     false},
	{"AveragePool",            B(0),           0,             0,        false},
	{"GlobalAveragePool",      B(0),           0,             0,        false},
	{"LRN",                    B(0),           B(0),          B(0),     false},
	{"BatchNormalization",     B(0)|B(1)|B(2), B(0)|B(1)|B(3)|B(4), 0, false},
	{"Dropout",                B(0),           0,             B(1),     false},
	{"Reshape",                B(0),           0,             0,        false},
	{"Flatten",                B(0),           0,             0,        false},
	{"Squeeze",                B(0),           0,             0,        false},
	{"Unsqueeze",              B(0),           0,             0,        false},
	{"Transpose",              B(0),           0,             0,        false},
	{"Identity",               B(0),           0,             0,        false},
};

const ArGradRule *ar_grad_rule(const char *op)
{
	for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
		if (!strcmp(rules[i].op, op))
			return &rules[i];
	return NULL;
}
