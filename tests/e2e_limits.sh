#!/bin/sh
# e2e_limits.sh — each resource limit, just inside and just past it, on
# models generated here: model bytes, node count, rank, tensor size
# (inputs and shapes computed by inference) and subgraph depth (the
# searches' work budgets are e2e_effort.sh's).  Inside a limit the model
# plans (exit 0); past it arenac refuses it with exit 2 and a message
# naming the limit, never a crash or a wrapped-around size.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$PYTHON" - "$tmp" <<'PY' || exit 1
import sys

from onnx import TensorProto, helper

out = sys.argv[1]


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def save(name, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with open(f"{out}/{name}.onnx", "wb") as f:
        f.write(m.SerializeToString())


def relu_chain(name, n):
    nodes = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}")
             for i in range(n)]
    save(name, nodes, [vi("t0", [1, 8])], [vi(f"t{n}", [1, 8])])


def one(name, op, shape, dtype=TensorProto.FLOAT, inits=(), extra=(), **kw):
    ins = ["x"] + [i.name for i in inits] + list(extra)
    save(name, [helper.make_node(op, ins, ["y"], name="op", **kw)],
         [vi("x", shape, dtype)], [vi("y", None, dtype)], inits)


def int64s(name, vals):
    return helper.make_tensor(name, TensorProto.INT64, [len(vals)], vals)


def nested_if(name, depth):
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["o"])],
                             "leaf", [], [vi("o", [4])])
    body = leaf
    for d in range(depth):
        node = helper.make_node("If", ["c"], ["o"], name=f"if{d}",
                                then_branch=body, else_branch=leaf)
        body = helper.make_graph([node], f"g{d}", [], [vi("o", [4])])
    save(name, list(body.node), [vi("c", [], TensorProto.BOOL),
                                 vi("x", [4])], [vi("o", [4])])


relu_chain("nodes_100", 100)
one("rank_16", "Relu", [1] * 16)
one("rank_17", "Relu", [1] * 17)
# 2^62 - 1 bytes is the largest size; 2^62 elements of 1 byte is past it.
# Input and output together: the activations' total is bounded by 2^62
# too, so that no sum of sizes can overflow.
one("bytes_max", "Relu", [(1 << 61) - 16], TensorProto.UINT8)
one("total_over", "Relu", [(1 << 61) + 16], TensorProto.UINT8)
one("bytes_over", "Relu", [1 << 31, 1 << 31])
one("bytes_wrap", "Relu", [1 << 32, 1 << 32, 1 << 32], TensorProto.UINT8)
one("expand_max", "Expand", [1, 1], TensorProto.UINT8,
    [int64s("s", [1 << 30, (1 << 31) - 1])])
one("expand_over", "Expand", [1, 1], inits=[int64s("s", [1 << 31, 1 << 31])])
one("tile_over", "Tile", [2, 2], TensorProto.UINT8,
    [int64s("r", [1 << 31, 1 << 30])])
save("resize_over", [helper.make_node("Resize", ["x", "", "", "s"], ["y"],
                                      mode="nearest", name="op")],
     [vi("x", [1, 1, 2, 2])], [vi("y", None)],
     [int64s("s", [1, 1, 1 << 31, 1 << 31])])
save("cos_over", [helper.make_node("ConstantOfShape", ["s"], ["c"], name="c"),
                  helper.make_node("Add", ["x", "c"], ["y"], name="op")],
     [vi("x", [1])], [vi("y", None)], [int64s("s", [1 << 32, 1 << 30])])
nested_if("depth_16", 16)
nested_if("depth_17", 17)
PY

# NAME EXIT MESSAGE [OPTIONS...]: MESSAGE "-" for exit 0.
check() {
	name=$1 code=$2 expect=$3
	shift 3
	out=$("$ARENAC" -q "$@" "$tmp/$name.onnx" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq "$code" ] &&
	   { [ "$code" -eq 0 ] || printf '%s' "$out" | grep -qF -- "$expect"; }; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $name $*: exit $rc, wanted $code and '$expect'; got: $out"
	fi
}

size=$(wc -c < "$tmp/nodes_100.onnx")
# Byte counts in messages have thousands separators.
grouped=$(printf '%d' $((size - 1)) | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')
check nodes_100 0 - --max-model-bytes "$size"
check nodes_100 2 "above the limit of $grouped (--max-model-bytes)" \
	--max-model-bytes $((size - 1))
check nodes_100 0 - --max-nodes 100
check nodes_100 2 "more than 99 nodes" --max-nodes 99
check rank_16 0 -
check rank_17 2 "rank 17, above the limit of 16"
check bytes_max 0 -
check total_over 2 "activations total more than 2^62 bytes"
check bytes_over 2 "overflows 2^62"
check bytes_wrap 2 "overflows 2^62"
check expand_max 0 -
check expand_over 2 "overflows 2^62"
check tile_over 2 "overflows 2^62"
check resize_over 2 "overflows 2^62"
check cos_over 2 "overflows 2^62"
check depth_16 0 -
check depth_17 2 "subgraphs nested deeper than 16"

echo "limits: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
