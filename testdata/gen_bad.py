#!/usr/bin/env python3
"""Writes the bad-input catalogue testdata/bad/*.onnx.

Each file is hostile in exactly one way.  Most are broken: tests/e2e_bad.sh
expects exit code 2 and a message naming the problem.  Some are valid but
extreme (10,000 nodes deep, 50,000 wide, external data pointing outside
the model's folder): those must plan with exit code 0, in seconds.
testdata/bad/expect.txt, which this script writes too, has one line per
file: name, exit code, expected message fragment ("-" for none) and, for
the few that take more than a few seconds, "slow" (the sanitizer run skips
those).  Files named fuzz_* are inputs the fuzzer found crashing; they are
kept byte for byte, and the commit that added each names its bug.
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


def case(name, expect, code=2, slow=False):
    def deco(fn):
        CASES[name] = (fn, expect, code, slow)
        return fn
    return deco


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if not n:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def field(num, payload):
    """A length-delimited protobuf field."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


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


def nested_types(k):
    # k sequence types inside each other under the top graph's input: the
    # innermost TypeProto is 3 + 2k messages deep.
    t = b""
    for _ in range(k):
        t = field(4, field(1, t))
    graph = field(11, field(1, b"x") + field(2, t)) + field(2, b"g")
    return varint(1 << 3) + varint(8) + field(8, varint(2 << 3) + varint(13)) \
        + field(7, graph)


@case("deep_nesting", "nested deeper than 256 levels")
def _():
    # 1000 sequence types inside each other (6 KB): protobuf-c's recursive
    # unpack would overflow the stack at about 100,000 of them.
    return nested_types(1000)


# At the limit, with the fewest bytes a level can take (a key and a
# length): 255 levels pass the nesting check (and the input is refused
# next), 257 do not.
@case("nesting_255", "graph input 'x' is not a tensor")
def _():
    return nested_types(126)


@case("nesting_257", "nested deeper than 256 levels")
def _():
    return nested_types(127)


@case("chain_10000", "-", code=0)
def _():
    n = 10000
    nodes = [relu(f"t{i}", f"t{i + 1}", f"n{i}") for i in range(n)]
    return model(nodes, [vi("t0", [1, 64])], [vi(f"t{n}", [1, 64])])


@case("fanout_50000", "-", code=0)
def _():
    # One tensor read by 50,000 nodes, whose outputs meet in one Concat.
    w = 50000
    nodes = [relu("x", f"r{i}", f"r{i}") for i in range(w)]
    nodes.append(helper.make_node("Concat", [f"r{i}" for i in range(w)],
                                  ["y"], axis=0, name="cat"))
    return model(nodes, [vi("x", [1, 16])], [vi("y", [w, 16])])


@case("string_input", "string tensor")
def _():
    return model([helper.make_node("Identity", ["x"], ["y"], name="id")],
                 [vi("x", [2], TensorProto.STRING)],
                 [vi("y", [2], TensorProto.STRING)])


@case("string_initializer", "is a string tensor")
def _():
    w = helper.make_tensor("w", TensorProto.STRING, [2], [b"a", b"b"])
    nodes = [helper.make_node("Identity", ["w"], ["y"], name="id")]
    return model(nodes, [], [vi("y", [2], TensorProto.STRING)], [w])


@case("sequence_input", "is not a tensor (sequence")
def _():
    s = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2])
    nodes = [helper.make_node("SequenceAt", ["s", "i"], ["y"], name="at")]
    i = helper.make_tensor("i", TensorProto.INT64, [], [0])
    return model(nodes, [s], [vi("y", [2])], [i])


@case("sequence_op", "node 'at' (SequenceAt): position 1 is outside the "
      "sequence of 1")
def _():
    # A sequence is a list of tensors (frontend/unroll.c): one element,
    # no element 1.
    nodes = [helper.make_node("SequenceEmpty", [], ["s"], name="empty"),
             helper.make_node("SequenceInsert", ["s", "x"], ["s2"], name="ins"),
             helper.make_node("SequenceAt", ["s2", "i"], ["y"], name="at")]
    i = helper.make_tensor("i", TensorProto.INT64, [], [1])
    return model(nodes, [vi("x", [2])], [vi("y", [2])], [i])


@case("external_outside", "-", code=0)
def _():
    # Planning needs sizes only: arenac must never open ../../etc/passwd.
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1, 4],
                    data_location=TensorProto.EXTERNAL)
    for k, v in (("location", "../../../../etc/passwd"), ("offset", "0"),
                 ("length", "16")):
        e = w.external_data.add()
        e.key, e.value = k, v
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    return model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])], [w])


@case("activations_overflow", "activations total more than 2^62 bytes")
def _():
    e = 1 << 59      # three float tensors of 2^61 bytes each, all live
    nodes = [relu("a", "r1"), relu("b", "r2"),
             helper.make_node("Add", ["r1", "r2"], ["s"], name="s"),
             helper.make_node("Add", ["s", "c"], ["y"], name="y")]
    return model(nodes, [vi("a", [e]), vi("b", [e]), vi("c", [e])],
                 [vi("y", [e])])


@case("weights_overflow", "weights and constants total more than 2^62")
def _():
    ws = [TensorProto(name=n, data_type=TensorProto.FLOAT, dims=[1 << 60],
                      data_location=TensorProto.EXTERNAL) for n in "uv"]
    for w in ws:
        e = w.external_data.add()
        e.key, e.value = "location", "w.bin"
    nodes = [helper.make_node("Add", ["x", "u"], ["s"], name="s"),
             helper.make_node("Add", ["s", "v"], ["y"], name="y")]
    return model(nodes, [vi("x", [1])], [vi("y", [1 << 60])], ws)


def int64s(name, vals):
    return helper.make_tensor(name, TensorProto.INT64, [len(vals)], vals)


@case("expand_huge", "overflows 2^62")
def _():
    nodes = [helper.make_node("Expand", ["x", "s"], ["y"], name="ex")]
    return model(nodes, [vi("x", [1, 1])], [vi("y", None)],
                 [int64s("s", [1 << 31, 1 << 31])])


@case("tile_huge", "overflows 2^62")
def _():
    nodes = [helper.make_node("Tile", ["x", "r"], ["y"], name="tile")]
    return model(nodes, [vi("x", [2, 2])], [vi("y", None)],
                 [int64s("r", [1 << 40, 1 << 30])])


@case("constantofshape_huge", "overflows 2^62")
def _():
    nodes = [helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos"),
             helper.make_node("Add", ["x", "c"], ["y"], name="add")]
    return model(nodes, [vi("x", [1])], [vi("y", None)],
                 [int64s("s", [1 << 40, 1 << 40, 4])])


@case("resize_huge", "overflows 2^62")
def _():
    nodes = [helper.make_node("Resize", ["x", "", "", "s"], ["y"],
                              mode="nearest", name="rs")]
    return model(nodes, [vi("x", [1, 1, 4, 4])], [vi("y", None)],
                 [int64s("s", [1, 1, 1 << 40, 1 << 40])])


@case("resize_nan_scale", "output dim at axis 2 is invalid")
def _():
    sc = helper.make_tensor("sc", TensorProto.FLOAT, [4],
                            [1, 1, float("nan"), float("inf")])
    nodes = [helper.make_node("Resize", ["x", "", "sc"], ["y"],
                              mode="nearest", name="rs")]
    return model(nodes, [vi("x", [1, 1, 4, 4])], [vi("y", None)], [sc])


@case("rank_17", "rank 17, above the limit of 16")
def _():
    return model([relu("x", "y")], [vi("x", [1] * 17)], [vi("y", None)])


@case("subgraph_depth", "subgraphs nested deeper than 16")
def _():
    # If inside If, 20 deep in the then branches; x passes through.
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["o"])],
                             "leaf", [], [vi("o", [1])])
    body = leaf
    for d in range(20):
        node = helper.make_node("If", ["c"], ["o"], name=f"if{d}",
                                then_branch=body, else_branch=leaf)
        body = helper.make_graph([node], f"g{d}", [], [vi("o", [1])])
    return model(list(body.node), [vi("c", [], TensorProto.BOOL),
                                   vi("x", [1])], [vi("o", [1])])


@case("unknown_op", "no shape inference for this op")
def _():
    nodes = [helper.make_node("FrobnicateTensor", ["x"], ["y"], name="f")]
    return model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])])


@case("unimported_domain", "which the model does not import")
def _():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r",
                              domain="com.example")]
    return model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])])


# An unnamed node is called OP_INDEX, cut to 31 characters: here the 12
# of its index loses its 2.
@case("unnamed_node_long_op", "node 'CustomOperatorOfTwentyNineCha_1' "
      "(CustomOperatorOfTwentyNineCha) is in domain 'com.example'")
def _():
    nodes = [helper.make_node("Relu", ["x" if i == 0 else "t%d" % i],
                              ["t%d" % (i + 1)]) for i in range(12)]
    nodes.append(helper.make_node("CustomOperatorOfTwentyNineCha", ["t12"],
                                  ["y"], domain="com.example"))
    return model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])])


@case("where_two_inputs", "has 2 inputs; the op takes 3")
def _():
    c = helper.make_tensor("c", TensorProto.BOOL, [4], [1, 0, 1, 0])
    b = helper.make_tensor("b", TensorProto.FLOAT, [4], [1, 2, 3, 4])
    nodes = [helper.make_node("Where", ["c", "b"], ["y"], name="w")]
    return model(nodes, [], [vi("y", [4])], [c, b])


@case("unsorted_omitted_output", "-", code=0)
def _():
    # Nodes out of order, one with an omitted optional output: the loader's
    # topological sort once indexed its user table with that -1.
    nodes = [relu("d", "y"),
             helper.make_node("Split", ["x"], ["d", ""], axis=1, name="split")]
    return model(nodes, [vi("x", [1, 4])], [vi("y", [1, 2])])


@case("unary_extra_input", "node 'exp' (Exp): has 2 inputs; the op takes 1")
def _():
    # Exp given a second, smaller constant input: shape inference read
    # only input 0, and the constant folder once broadcast both, reading
    # the second past its end.  The op table's input counts now refuse it.
    a = helper.make_tensor("a", TensorProto.FLOAT, [64], [1.0] * 64)
    b = helper.make_tensor("b", TensorProto.FLOAT, [2], [0.0, 1.0])
    nodes = [helper.make_node("Exp", ["a", "b"], ["e"], name="exp"),
             helper.make_node("Add", ["x", "e"], ["y"], name="add")]
    return model(nodes, [vi("x", [64])], [vi("y", [64])], [a, b])


def main():
    os.makedirs(OUT, exist_ok=True)
    lines = []
    for name, (fn, expect, code, slow) in sorted(CASES.items()):
        data = fn()
        if not isinstance(data, bytes):
            data = data.SerializeToString()
        with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
            f.write(data)
        lines.append(f"{name}.onnx\t{code}\t{expect}" +
                     ("\tslow" if slow else ""))
    # Regression inputs from the fuzzer are not generated: keep their lines.
    path = os.path.join(OUT, "expect.txt")
    if os.path.exists(path):
        with open(path) as ex:
            lines += [l.rstrip("\n") for l in ex if l.startswith("fuzz_")]
    with open(path, "w") as ex:
        ex.write("".join(l + "\n" for l in sorted(lines)))


if __name__ == "__main__":
    main()
