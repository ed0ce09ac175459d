#!/usr/bin/env python3
"""saved_rules.py - what a backward pass keeps under per-op gradient rules,
computed from an ONNX graph alone: an executable reading of the rule list
of issue 13, independent of arenac's C code.

saved(model) takes a model with static shapes and returns the buffers the
backward pass reads, as arenac counts them: tensors a forward op produced
(or graph inputs) that some op's gradient reads, views (Reshape, Flatten,
Squeeze, Unsqueeze, Identity) followed to the buffer they share, the
cross-entropy loss on the first output with its int64 label included.

Rules (a gradient step reads nothing when no input of its op needs a
gradient; a tensor needs one when it is, or depends on, a parameter: a
float initializer of rank >= 1):
  MatMul, Gemm, Conv, Mul   the gradient of one operand reads the other
  Div a/b                   a's gradient reads b; b's reads a and b
  Pow x^c                   x
  Erf                       its input
  Relu, Sigmoid, Tanh, Softmax, LogSoftmax, Exp, Sqrt, Reciprocal
                            their output
  MaxPool                   input and output (arenac re-finds the argmax;
                            torch keeps int64 indices instead)
  BatchNormalization        input (and scale and the running statistics,
                            which are weights)
  LayerNormalization        input (and scale) plus the per-row mean and
                            1/std, float32, 2 x rows x 4 bytes
  Dropout                   its bool mask
  Where                     its condition
  Gather                    the indices (the table's gradient scatters)
  Add, Sub, Neg, Sum, Concat, Split, Slice, Transpose, Expand, Cast,
  ReduceMean, ReduceSum, AveragePool, GlobalAveragePool, views: nothing
  the loss                  the logits and the label
An op without a float output (Shape, Equal, ...) passes no gradient.  Any
other op on the gradient path raises KeyError (a rule to add).
"""
import collections

import numpy as np
from onnx import TensorProto, shape_inference

FLOATS = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16,
          TensorProto.DOUBLE)
ITEMSIZE = {TensorProto.FLOAT: 4, TensorProto.FLOAT16: 2,
            TensorProto.BFLOAT16: 2, TensorProto.DOUBLE: 8,
            TensorProto.INT64: 8, TensorProto.INT32: 4, TensorProto.BOOL: 1,
            TensorProto.UINT8: 1, TensorProto.INT8: 1}
VIEWS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity")
NOTHING = ("Add", "Sub", "Neg", "Sum", "Concat", "Split", "Slice",
           "Transpose", "Expand", "Cast", "ReduceMean", "ReduceSum",
           "AveragePool", "GlobalAveragePool") + VIEWS
OUTPUT = ("Relu", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Exp", "Sqrt",
          "Reciprocal")
CROSS = ("MatMul", "Gemm", "Conv", "Mul")


class Graph:
    """Types, shapes and producers of a model with static shapes."""

    def __init__(self, model):
        inferred = shape_inference.infer_shapes(model, strict_mode=True,
                                                data_prop=True)
        g = inferred.graph
        self.nodes = list(g.node)
        self.type = {}
        for vi in list(g.value_info) + list(g.input) + list(g.output):
            tt = vi.type.tensor_type
            self.type[vi.name] = (tt.elem_type, [
                d.dim_value if d.HasField("dim_value") else -1
                for d in tt.shape.dim])
        self.init = {t.name for t in g.initializer}
        for t in g.initializer:
            self.type[t.name] = (t.data_type, list(t.dims))
        self.inputs = [i.name for i in g.input if i.name not in self.init]
        self.outputs = [o.name for o in g.output]
        self.producer = {o: n for n in self.nodes for o in n.output}

    def nbytes(self, name):
        return self.numel(name) * ITEMSIZE[self.type[name][0]]

    def numel(self, name):
        et, dims = self.type[name]
        assert et and all(d > 0 for d in dims), \
            "%s: no static shape (%s)" % (name, dims)
        return int(np.prod(dims, dtype=np.int64))

    def is_param(self, name):
        et, dims = self.type.get(name, (None, []))
        return name in self.init and et in FLOATS and len(dims) >= 1

    def root(self, name):
        while name in self.producer and \
                self.producer[name].op_type in VIEWS:
            name = self.producer[name].input[0]
        return name


def _reads(n, ng):
    """Tensors the gradient step of node n reads; ng: per input, needs a
    gradient.  Row statistics of LayerNormalization come separately."""
    op, i, o = n.op_type, list(n.input), list(n.output)
    if not any(ng):
        return []
    if op in NOTHING:
        return []
    if op in CROSS:
        return ([i[1]] if ng[0] else []) + ([i[0]] if ng[1] else [])
    if op == "Div":
        return ([i[1]] if ng[0] else []) + (i[:2] if ng[1] else [])
    if op == "Pow":
        assert not ng[1], "Pow with a trained exponent"
        return [i[0]]
    if op == "Erf":
        return [i[0]]
    if op in OUTPUT:
        return [o[0]]
    if op == "MaxPool":
        return [i[0], o[0]]
    if op in ("BatchNormalization", "LayerNormalization"):
        return [i[0]]
    if op == "Dropout":
        return [o[1]]
    if op == "Where":
        return [i[0]]
    if op == "Gather":
        return [i[1]]
    raise KeyError("no rule for op %s (node %s)" % (op, n.name))


def saved(model):
    """{buffer root: (bytes, category, elements)} and the Graph; category
    input, activation,
    dropout_mask or layernorm_stats (one pseudo-buffer NODE.stats per
    LayerNormalization)."""
    g = Graph(model)
    grad = {t for t in g.type if g.is_param(t)}
    reads = []
    out = collections.OrderedDict()
    for n in g.nodes:
        # No float output (Shape, comparisons): no gradient flows through.
        ng = [x in grad for x in n.input] if any(
            g.type.get(o, (None,))[0] in FLOATS for o in n.output) else []
        for x in _reads(n, ng):
            reads.append((x, "dropout_mask" if n.op_type == "Dropout" and
                          x == n.output[1] else None))
        if n.op_type == "LayerNormalization" and any(ng):
            rows = g.numel(n.input[0]) // g.type[n.input[0]][1][-1]
            out[n.output[0] + ".stats"] = (2 * rows * 4, "layernorm_stats",
                                           2 * rows)
        if any(ng):
            grad.update(o for o in n.output
                        if g.type.get(o, (None,))[0] in FLOATS)
    label = g.outputs[0] + ".label"
    reads.append((g.outputs[0], None))
    for x, cat in reads:
        if x in g.init or (x in g.producer and
                           g.producer[x].op_type == "Constant"):
            continue
        r = g.root(x)
        if r in g.init:
            continue
        cat = cat or ("input" if r in g.inputs else "activation")
        out.setdefault(r, (g.nbytes(r), cat, g.numel(r)))
    shape = g.type[g.outputs[0]][1][:-1]
    n = int(np.prod(shape, dtype=np.int64))
    out[label] = (8 * n, "input", n)
    return out, g
