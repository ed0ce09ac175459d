#!/usr/bin/env python3
"""gen_shape_models.py - small models for the shape inference oracle.

Each model exercises ops and opset-dependent forms the shared models do not
(tests/e2e_oracle.py compares arenac's shapes with onnx's on them).  Weights
are tiny; every graph input is static, so no --dim is needed.
Run from the repository root: /usr/bin/python3 testdata/gen_shape_models.py
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def write(name, nodes, inputs, outputs, inits, opset):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="gen_shape_models")
    m.ir_version = 8
    save(m, os.path.join(HERE, name + ".onnx"))


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def tensor_ops_13():
    """Input forms of opset 13: Slice steps, Split sizes, Unsqueeze axes,
    Pad pads, ReduceSum axes, Resize sizes, Tile, Expand, a folded shape
    subgraph (Shape -> Gather -> Concat -> Reshape), Range and TopK."""
    n = helper.make_node
    nodes = [
        n("Slice", ["x", "st", "en", "ax", "sp"], ["sl"]),
        n("Split", ["x", "sizes"], ["s0", "s1"], axis=1),
        n("Unsqueeze", ["s0", "uax"], ["us"]),
        n("Pad", ["x", "pads"], ["pd"], mode="constant"),
        n("ReduceSum", ["x", "rax"], ["rs"], keepdims=0),
        n("Resize", ["x", "", "", "sizes4"], ["rz"], mode="nearest"),
        n("Tile", ["x", "reps"], ["tl"]),
        n("Expand", ["bias", "eshape"], ["ex"]),
        n("Shape", ["x"], ["shp"]),
        n("Gather", ["shp", "i0"], ["d0"], axis=0),
        n("Concat", ["d0", "minus1"], ["tgt"], axis=0),
        n("Reshape", ["x", "tgt"], ["flat"]),
        n("Range", ["r0", "r1", "r2"], ["rg"]),
        n("TopK", ["flat", "k"], ["tv", "ti"], axis=-1),
        n("Where", ["cond", "x", "bias"], ["wh"]),
        n("Transpose", ["x"], ["tr"], perm=[0, 2, 3, 1]),
        n("Flatten", ["x"], ["fl"], axis=-1),
    ]
    inits = [
        const("st", [-1, 4]), const("en", [-100, 1]), const("ax", [2, 3]),
        const("sp", [-2, -1]), const("sizes", [1, 3]), const("uax", [0, -1]),
        const("pads", [0, 0, 1, 2, 0, 0, 3, 0]), const("rax", [1, -1]),
        const("sizes4", [2, 4, 10, 13]), const("reps", [1, 2, 1, 3]),
        const("bias", np.zeros((1, 1, 1, 6)), np.float32),
        const("eshape", [2, 1, 5, 1]), const("i0", [0]),
        const("minus1", [-1]), const("r0", 3), const("r1", 17),
        const("r2", 4), const("k", [5]),
        const("cond", np.ones((5, 6), bool), bool),
    ]
    outs = ["sl", "s1", "us", "pd", "rs", "rz", "tl", "ex", "rg", "tv", "ti",
            "wh", "tr", "fl"]
    write("shape_tensor_ops13", nodes, [vi("x", [2, 4, 5, 6])],
          [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
           for o in outs], inits, 13)


def windows_9():
    """Pooling and convolution windows: ceil_mode, SAME_LOWER/UPPER,
    dilations, ConvTranspose output_padding, Gemm transB, MatMul batch
    broadcast, LSTM all outputs, opset 9 attribute forms."""
    n = helper.make_node
    w = np.full((4, 3, 3, 3), 0.1, np.float32)
    wt = np.full((4, 2, 3, 3), 0.1, np.float32)
    nodes = [
        n("MaxPool", ["x"], ["mp"], kernel_shape=[3, 3], strides=[2, 2],
          ceil_mode=1),
        n("AveragePool", ["x"], ["ap"], kernel_shape=[3, 2], strides=[2, 3],
          auto_pad="SAME_LOWER"),
        n("Conv", ["x", "w"], ["cv"], strides=[2, 1], dilations=[2, 2],
          pads=[1, 0, 2, 1]),
        n("Conv", ["x", "w"], ["cs"], strides=[3, 2], auto_pad="SAME_UPPER"),
        n("ConvTranspose", ["cv", "wt"], ["ct"], strides=[2, 3],
          output_padding=[1, 2], pads=[1, 1, 0, 0]),
        n("GlobalMaxPool", ["x"], ["gp"]),
        n("Flatten", ["gp"], ["gf"]),
        n("Gemm", ["gf", "fc"], ["gm"], transB=1),
        n("MatMul", ["bm", "x"], ["mm"]),
        n("LSTM", ["seq", "lw", "lr"], ["y", "yh", "yc"], hidden_size=5,
          direction="bidirectional"),
        n("Slice", ["x"], ["sa"], starts=[1, -3], ends=[1000, -1],
          axes=[1, 3]),
        n("Unsqueeze", ["gm"], ["ua"], axes=[1]),
        n("Squeeze", ["ua"], ["sq"]),
        n("Split", ["x"], ["p0", "p1"], axis=3, split=[2, 7]),
        n("Pad", ["x"], ["pa"], pads=[0, 0, 1, 1, 0, 0, 2, 0]),
        n("Upsample", ["x", "scales"], ["up"], mode="nearest"),
    ]
    inits = [
        const("w", w, np.float32), const("wt", wt, np.float32),
        const("fc", np.zeros((7, 3)), np.float32),
        const("bm", np.zeros((2, 1, 4, 10)), np.float32),
        const("lw", np.zeros((2, 20, 6)), np.float32),
        const("lr", np.zeros((2, 20, 5)), np.float32),
        const("scales", [1, 1, 2, 1.5], np.float32),
    ]
    outs = ["mp", "ap", "ct", "cs", "mm", "y", "yh", "yc", "sa", "sq", "p0",
            "p1", "pa", "up"]
    write("shape_windows9", nodes, [vi("x", [1, 3, 10, 9]),
                                    vi("seq", [4, 2, 6])],
          [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
           for o in outs], inits, 9)


def split_18():
    """Opset 18: Split num_outputs with a smaller last chunk, ReduceMean
    axes input, Pad axes input, LayerNormalization extra outputs."""
    n = helper.make_node
    nodes = [
        n("Split", ["x"], ["a", "b", "c"], axis=-1, num_outputs=3),
        n("ReduceMean", ["x", "rax"], ["rm"], keepdims=1),
        n("Pad", ["x", "pads", "", "pax"], ["pd"]),
        n("LayerNormalization", ["x", "sc"], ["ln", "mu", "isd"], axis=1),
    ]
    inits = [const("rax", [0, 2]), const("pads", [1, 2, 3, 4]),
             const("pax", [0, -1]), const("sc", np.ones((5, 7)), np.float32)]
    outs = ["a", "b", "c", "rm", "pd", "ln", "mu", "isd"]
    write("shape_opset18", nodes, [vi("x", [3, 5, 7])],
          [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
           for o in outs], inits, 18)


def loop_if_13():
    """Loop with a constant trip count (carried value and scan output) and
    an If on a runtime condition whose branches agree."""
    n = helper.make_node
    body = helper.make_graph(
        [n("Add", ["acc_in", "x"], ["acc_out"]),
         n("Identity", ["cond_in"], ["cond_out"]),
         n("Mul", ["acc_out", "x"], ["scan"])],
        "body",
        [vi("i", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL),
         vi("acc_in", [2, 3])],
        [vi("cond_out", [], TensorProto.BOOL), vi("acc_out", [2, 3]),
         vi("scan", [2, 3])])
    then = helper.make_graph([n("Relu", ["x"], ["t"])], "then", [],
                             [vi("t", [2, 3])])
    other = helper.make_graph([n("Neg", ["x"], ["e"])], "else", [],
                              [vi("e", [2, 3])])
    nodes = [
        n("Loop", ["trips", "", "x"], ["acc", "scans"], body=body),
        n("If", ["flag"], ["pick"], then_branch=then, else_branch=other),
    ]
    write("shape_loop_if13", nodes,
          [vi("x", [2, 3]), vi("flag", [], TensorProto.BOOL)],
          [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
           for o in ["acc", "scans", "pick"]], [const("trips", 4)], 13)


if __name__ == "__main__":
    tensor_ops_13()
    windows_9()
    split_18()
    loop_if_13()
