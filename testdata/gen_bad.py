#!/usr/bin/env python3
"""Writes the bad-input catalogue testdata/bad/*.onnx.

Each file is broken in exactly one way; tests/e2e_bad.sh expects exit code 2
and a message naming the problem (the expected text is in EXPECT below and
in testdata/bad/expect.txt, which this script writes too).
"""
import os
import random
import sys

import onnx
from onnx import TensorProto, helper

OUT = sys.argv[1] if len(sys.argv) > 1 else "testdata/bad"


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, inits=(), opset=13, ir=8):
    g = helper.make_graph(nodes, "bad", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def relu(i, o, name=None):
    return helper.make_node("Relu", [i], [o], name=name or o)


def good():
    return model([relu("x", "y")], [vi("x", [1, 4])], [vi("y", [1, 4])])


CASES = {}


def case(name, expect):
    def deco(fn):
        CASES[name] = (fn, expect)
        return fn
    return deco


@case("empty", "empty file")
def _():
    return b""


@case("truncated", "truncated or malformed")
def _():
    return good().SerializeToString()[:-7]


@case("random_bytes", "truncated or malformed")
def _():
    rnd = random.Random(7)
    return bytes(rnd.randrange(256) for _ in range(512))


@case("wrong_wire_type", "truncated or malformed")
def _():
    # Field 7 (graph) announced as a varint instead of a length-delimited
    # message, followed by junk.
    return bytes([0x08, 0x08, 0x38, 0x96, 0x01, 0x3A, 0x7F, 0x01])


@case("cycle", "cycle")
def _():
    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="n1"),
             helper.make_node("Relu", ["a"], ["b"], name="n2"),
             relu("a", "y")]
    return model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])])


@case("dangling_input", "reads tensor 'ghost', which nothing produces")
def _():
    nodes = [helper.make_node("Add", ["x", "ghost"], ["y"], name="add")]
    return model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])])


@case("duplicate_output", "produced twice")
def _():
    nodes = [relu("x", "y", "r1"), relu("x", "y", "r2")]
    return model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])])


@case("duplicate_input", "duplicate name 'x'")
def _():
    return model([relu("x", "y")], [vi("x", [1, 4]), vi("x", [1, 4])],
                 [vi("y", [1, 4])])


@case("absurd_dims", "overflows 2^62")
def _():
    return model([relu("x", "y")], [vi("x", [1 << 31, 1 << 31, 4])],
                 [vi("y", [1, 4])])


@case("negative_dims", "negative dim")
def _():
    return model([relu("x", "y")], [vi("x", [1, -4])], [vi("y", [1, 4])])


@case("unknown_dtype", "unknown element type")
def _():
    m = good()
    m.graph.input[0].type.tensor_type.elem_type = 99
    return m


@case("missing_opset", "no opset of the default ONNX domain")
def _():
    m = good()
    del m.opset_import[:]
    return m


@case("unbound_dim", "unbound symbolic dim 'batch' at axis 0")
def _():
    return model([relu("x", "y")], [vi("x", ["batch", 4])],
                 [vi("y", ["batch", 4])])


@case("initializer_size_mismatch", "holds 3 values but its dims say 4")
def _():
    w = helper.make_tensor("w", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    w.dims[0] = 4
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    return model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])], [w])


@case("no_graph", "no graph")
def _():
    m = onnx.ModelProto()
    m.ir_version = 8
    m.opset_import.add().version = 13
    return m


@case("old_ir", "unsupported IR version 2")
def _():
    m = good()
    m.ir_version = 2
    return m


@case("output_never_produced", "graph output 'nowhere' is never produced")
def _():
    return model([relu("x", "y")], [vi("x", [1, 4])],
                 [vi("y", [1, 4]), vi("nowhere", [1])])


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "expect.txt"), "w") as ex:
        for name, (fn, expect) in sorted(CASES.items()):
            data = fn()
            if not isinstance(data, bytes):
                data = data.SerializeToString()
            with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
                f.write(data)
            ex.write(f"{name}.onnx\t{expect}\n")


if __name__ == "__main__":
    main()
