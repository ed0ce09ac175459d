#!/usr/bin/env python3
"""Writes the synthetic graphs `make bench` (bench_scale.sh) measures the
planner's scaling on, with onnx.helper:

  gen_scale.py chain N OUT.onnx      N nodes, each a unary op on the last
  gen_scale.py residual N OUT.onnx   N nodes in residual blocks of four:
                                     r = Relu(x); s = Sigmoid(r);
                                     m = Mul(r, s); x' = Add(x, m)
  gen_scale.py train L OUT.onnx      L transformer-like layers for
                                     --train (tokens [8, 16]): attention
                                     a = Softmax(hWq (hWk)^T) hWv Wo,
                                     h' = h + a, then an MLP
                                     h'' = h' + Relu(h' W1) W2

Activations are small ([1, 64] floats) so the files stay a few bytes per
node and the time goes to the planner, not to the bytes.  The graphs are
deterministic: the same arguments write the same file.
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

WIDTH = 64
T, D = 8, 16    # the training graph's tokens and width


def vi(name):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, WIDTH])


def write(path, nodes, last, inits=()):
    g = helper.make_graph(nodes, "scale", [vi("x0")], [vi(last)], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    save(m, path)


def chain(n, path):
    ops = ("Relu", "Sigmoid", "Tanh")
    nodes = [helper.make_node(ops[i % 3], ["x%d" % i], ["x%d" % (i + 1)],
                              name="n%d" % i) for i in range(n)]
    write(path, nodes, "x%d" % n)


def residual(n, path):
    nodes, x = [], "x0"
    for b in range(n // 4):
        r, s, m, y = ("r%d" % b, "s%d" % b, "m%d" % b, "x%d" % (b + 1))
        nodes += [helper.make_node("Relu", [x], [r], name="relu%d" % b),
                  helper.make_node("Sigmoid", [r], [s], name="sig%d" % b),
                  helper.make_node("Mul", [r, s], [m], name="mul%d" % b),
                  helper.make_node("Add", [x, m], [y], name="add%d" % b)]
        x = y
    write(path, nodes, x)


def train(layers, path):
    rng = np.random.default_rng(7)
    nodes, inits, h = [], [], "x0"

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def weight(name):
        w = (rng.standard_normal((D, D)) / 4).astype(np.float32)
        inits.append(numpy_helper.from_array(w, name))
        return name

    for i in range(layers):
        p = "l%d_" % i
        q = node("MatMul", [h, weight(p + "wq")], p + "q")
        k = node("MatMul", [h, weight(p + "wk")], p + "k")
        v = node("MatMul", [h, weight(p + "wv")], p + "v")
        kt = node("Transpose", [k], p + "kt", perm=[1, 0])
        s = node("Softmax", [node("MatMul", [q, kt], p + "s")], p + "p",
                 axis=1)
        a = node("MatMul", [node("MatMul", [s, v], p + "av"),
                            weight(p + "wo")], p + "o")
        h = node("Add", [h, a], p + "h1")
        r = node("Relu", [node("MatMul", [h, weight(p + "w1")], p + "f")],
                 p + "r")
        h = node("Add", [h, node("MatMul", [r, weight(p + "w2")], p + "g")],
                 p + "h2")
    g = helper.make_graph(nodes, "scale",
                          [helper.make_tensor_value_info(
                              "x0", TensorProto.FLOAT, [T, D])],
                          [helper.make_tensor_value_info(
                              h, TensorProto.FLOAT, [T, D])], inits)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
         path)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("chain", "residual", "train"):
        sys.exit(__doc__)
    {"chain": chain, "residual": residual, "train": train}[sys.argv[1]](
        int(sys.argv[2]), sys.argv[3])
