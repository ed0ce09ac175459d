#!/usr/bin/env python3
"""gen_bounded.py - models whose sizes depend on values known at run time.

testdata/nms_postprocess.onnx, a detector's post-processing: 200 candidate boxes with scores for 3
classes go through NonMaxSuppression (at most 10 boxes per class), the
selected box indices are sliced out of its [selected, 3] output, and the
chosen boxes gathered: arenac plans the selections for their upper bound
(3 classes x 10 boxes = 30 rows) and the README's "Bounded shapes" example
uses it.  testdata/range_runtime.onnx: Range up to a graph input, a size
with no bound arenac can compute (--bound gives one).
testdata/loop_until.onnx: a Loop of at most 5 trips whose body's condition
can stop it early, so its scan output has at most 5 slices.
testdata/three_unbounded.onnx: three sizes computed from run-time values,
one fed by each of NonZero, Unique and a TopK whose k is a graph input
(torch.arange(idx.shape[1]), F.one_hot(inverse, len(uniq)),
torch.zeros_like(topk_values)), each then used further: one run names
all three for --bound, and nothing downstream of them.
tests/e2e_bounded.sh plans them under several --bound options.
Run from the repository root: /usr/bin/python3 testdata/gen_bounded.py
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def save_model(g, name):
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="gen_bounded")
    m.ir_version = 8
    save(m, os.path.join(HERE, name + ".onnx"))


def nms_postprocess():
    n = helper.make_node
    nodes = [
        n("NonMaxSuppression", ["boxes", "scores", "max_per_class", "iou",
                                "min_score"], ["selected"]),
        n("Slice", ["selected", "col2", "col3", "axis1"], ["box_col"]),
        n("Reshape", ["box_col", "flat"], ["box_idx"]),
        n("Squeeze", ["boxes", "axis0"], ["all_boxes"]),
        n("Gather", ["all_boxes", "box_idx"], ["picked"], axis=0),
    ]
    inits = [
        const("max_per_class", [10]),
        const("iou", [0.5], np.float32),
        const("min_score", [0.3], np.float32),
        const("col2", [2]), const("col3", [3]), const("axis1", [1]),
        const("flat", [-1]), const("axis0", [0]),
    ]
    g = helper.make_graph(
        nodes, "nms_postprocess",
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT,
                                       [1, 200, 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT,
                                       [1, 3, 200])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64,
                                       ["n", 3]),
         helper.make_tensor_value_info("picked", TensorProto.FLOAT,
                                       ["n", 4])],
        inits)
    save_model(g, "nms_postprocess")


def range_runtime():
    n = helper.make_node
    g = helper.make_graph(
        [n("Range", ["zero", "limit", "one"], ["r"], name="range"),
         n("Cast", ["r"], ["out"], to=TensorProto.FLOAT)],
        "range_runtime",
        [helper.make_tensor_value_info("limit", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["n"])],
        [const("zero", 0), const("one", 1)])
    save_model(g, "range_runtime")


def loop_until():
    n = helper.make_node
    vi = helper.make_tensor_value_info
    body = helper.make_graph(
        [n("Less", ["i", "three"], ["cond_out"]),
         n("Add", ["acc_in", "x"], ["acc_out"]),
         n("Identity", ["acc_out"], ["slice"])],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
         vi("acc_in", TensorProto.FLOAT, [2])],
        [vi("cond_out", TensorProto.BOOL, []),
         vi("acc_out", TensorProto.FLOAT, [2]),
         vi("slice", TensorProto.FLOAT, [2])],
        [const("three", 3)])
    g = helper.make_graph(
        [n("Loop", ["trips", "", "x"], ["acc", "scans"], body=body)],
        "loop_until",
        [vi("x", TensorProto.FLOAT, [2])],
        [vi("acc", TensorProto.FLOAT, [2]),
         vi("scans", TensorProto.FLOAT, ["n", 2])],
        [const("trips", 5)])
    save_model(g, "loop_until")


def three_unbounded():
    n = helper.make_node
    vi = helper.make_tensor_value_info
    nodes = [
        # positions = arange(mask.nonzero().shape[1])
        n("NonZero", ["mask"], ["idx"], name="nonzero"),
        n("Shape", ["idx"], ["idx_shape"]),
        n("Gather", ["idx_shape", "one"], ["count"], axis=0),
        n("Range", ["zero", "count", "one"], ["positions"], name="arange"),
        n("Cast", ["positions"], ["pos_f"], to=TensorProto.FLOAT),
        n("Mul", ["pos_f", "half"], ["pos_scaled"]),
        # onehot = one_hot(inverse, num_classes=len(uniq))
        n("Unique", ["labels"], ["uniq", "first", "inverse", "counts"],
          name="unique"),
        n("Shape", ["uniq"], ["n_uniq"]),
        n("OneHot", ["inverse", "n_uniq", "off_on"], ["onehot"],
          name="one_hot"),
        n("ReduceSum", ["onehot", "axis0"], ["per_class"], keepdims=0),
        # zeros = zeros_like(top_values) + top_values
        n("TopK", ["scores", "k"], ["top_values", "top_idx"], name="topk"),
        n("Shape", ["top_values"], ["top_shape"]),
        n("ConstantOfShape", ["top_shape"], ["zeros"], name="zeros_like"),
        n("Add", ["zeros", "top_values"], ["top_out"]),
    ]
    inits = [
        const("zero", 0), const("one", 1), const("half", 0.5, np.float32),
        const("off_on", [0, 1], np.float32), const("axis0", [0]),
    ]
    g = helper.make_graph(
        nodes, "three_unbounded",
        [vi("mask", TensorProto.BOOL, [4, 8]),
         vi("labels", TensorProto.INT64, [32]),
         vi("scores", TensorProto.FLOAT, [2, 50]),
         vi("k", TensorProto.INT64, [1])],
        [vi("pos_scaled", TensorProto.FLOAT, ["n"]),
         vi("per_class", TensorProto.FLOAT, ["u"]),
         vi("top_out", TensorProto.FLOAT, [2, "k"])],
        inits)
    save_model(g, "three_unbounded")


if __name__ == "__main__":
    nms_postprocess()
    range_runtime()
    loop_until()
    three_unbounded()
