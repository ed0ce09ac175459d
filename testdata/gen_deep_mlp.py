#!/usr/bin/env python3
"""Writes a deep residual MLP for testing pictures at scale:
gen_deep_mlp.py OUT.onnx [BLOCKS].

Each block is x + W2 Relu(W1 x + b1) + b2 (MatMul, Add, Relu, MatMul, Add,
Add) on a [N, 16] activation with a 64-wide hidden layer, so that one
training step (--train) has thousands of steps and tensors of three sizes
(the hidden layer, the residual stream, the biases' gradients): what a
transformer's memory timeline looks like, without its op set.  The input
has a symbolic batch N; weights are zeros (their values do not matter to a
plan), so the file compresses to nothing but is not committed: tests write
it to a temporary folder.
"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WIDTH = 16
HIDDEN = 64


def zeros(name, shape):
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def main(path, blocks):
    n = helper.make_node
    nodes, inits = [], []
    x = "input"
    for b in range(blocks):
        p = "b%d_" % b
        inits += [zeros(p + "w1", [WIDTH, HIDDEN]), zeros(p + "b1", [HIDDEN]),
                  zeros(p + "w2", [HIDDEN, WIDTH]), zeros(p + "b2", [WIDTH])]
        nodes += [
            n("MatMul", [x, p + "w1"], [p + "mm1"], name=p + "mm1"),
            n("Add", [p + "mm1", p + "b1"], [p + "h"], name=p + "bias1"),
            n("Relu", [p + "h"], [p + "act"], name=p + "relu"),
            n("MatMul", [p + "act", p + "w2"], [p + "mm2"], name=p + "mm2"),
            n("Add", [p + "mm2", p + "b2"], [p + "y"], name=p + "bias2"),
            n("Add", [x, p + "y"], [p + "out"], name=p + "residual"),
        ]
        x = p + "out"
    nodes.append(n("Identity", [x], ["logits"], name="head"))
    graph = helper.make_graph(
        nodes, "deep_mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", WIDTH])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", WIDTH])],
        inits)
    model = helper.make_model(graph, producer_name="arenac gen_deep_mlp.py",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300)
