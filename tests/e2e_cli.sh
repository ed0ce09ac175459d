#!/bin/sh
# e2e_cli.sh — what a user meets at the command line.
#
# Input shapes: --batch changes only symbolic or size-1 leading dims (a
# recurrent state [2,batch,64] keeps its 2, with a warning), --input-shape
# gives an input its whole shape (named dims or not) and contradictions
# are errors naming both sides, every unbound dim is named at once, a
# --dim the model has no use for is an error.  Messages: "did you mean",
# the bad suffix named, byte counts with separators, one size format in
# the summary and the pictures.  File errors exit 1: a directory or a
# missing file as the model, a directory as an output, a failed write.
# On failure -q prints nothing but the error and --stats no made-up
# arena; a training step's bill is printed once; two outputs in one file
# are refused.  External weights are read from where the loader recorded
# them; out of memory is one line and exit 4.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
SHARED=${ARENAC_SHARED:-}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lenet=testdata/lenet.onnx

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# expect NAME CODE FRAGMENT ARGS...: exit CODE and FRAGMENT on stderr
# (an empty FRAGMENT: nothing on stderr).
expect() {
	e_name=$1 e_code=$2 e_frag=$3
	shift 3
	"$ARENAC" "$@" >"$tmp/out" 2>"$tmp/err"
	e_rc=$?
	if [ -z "$e_frag" ]; then
		[ ! -s "$tmp/err" ]
	else
		grep -qF -- "$e_frag" "$tmp/err"
	fi
	if [ $? -eq 0 ] && [ "$e_rc" -eq "$e_code" ]; then
		ok
	else
		bad "$e_name: exit $e_rc (want $e_code), stderr: $(cat "$tmp/err")"
	fi
}

# shape JSON TENSOR: the tensor's shape as "[a, b]".
shape() {
	"$PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1]))
print([t["shape"] for t in r["tensors"] if t["name"] == sys.argv[2]][0])' "$1" "$2"
}

"$PYTHON" - "$tmp" <<'PY' || exit 1
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save_model

out = sys.argv[1]


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def save(name, nodes, inputs, outputs, inits=(), **kw):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    save_model(m, f"{out}/{name}.onnx", **kw)


def relus(pairs):
    return [helper.make_node("Relu", [a], [b], name=f"relu_{b}")
            for a, b in pairs]


# A recurrent cell's shapes: x [batch, 8], state h [2, batch, 4].
save("state", relus([("x", "y"), ("h", "hn")]),
     [vi("x", ["batch", 8]), vi("h", [2, "batch", 4])],
     [vi("y", ["batch", 8]), vi("hn", [2, "batch", 4])])
# Three symbolic dims on one input, like the PaddleOCR detector.
save("open3", relus([("x", "y")]), [vi("x", ["N", 3, "H", "W"])],
     [vi("y", None)])
# Dims with no name, which only --input-shape or --dim-default bind.
save("unnamed", relus([("x", "y"), ("z", "w")]),
     [vi("x", [None, None]), vi("z", [2, None, 128])],
     [vi("y", None), vi("w", None)])
# Two configurations in one model, as Silero VAD's sample rate picks its
# branch: mode 1 takes Relu(x); the other branch reshapes x [2, 6] to
# [5, 5], which no x of 12 elements can take.
lt = helper.make_tensor_value_info
then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then",
                           [], [vi("t", None)])
shape55 = helper.make_node("Constant", [], ["s55"], value=helper.make_tensor(
    "s55v", TensorProto.INT64, [2], [5, 5]))
else_g = helper.make_graph([shape55, helper.make_node("Reshape",
                            ["x", "s55"], ["e"])], "else", [],
                           [vi("e", None)])
one = helper.make_node("Constant", [], ["one"], value=helper.make_tensor(
    "onev", TensorProto.INT64, [], [1]))
save("branchy", [one, helper.make_node("Equal", ["mode", "one"], ["c"]),
                 helper.make_node("If", ["c"], ["y"], then_branch=then_g,
                                  else_branch=else_g)],
     [vi("x", [2, 6]), lt("mode", TensorProto.INT64, [])], [vi("y", None)])
# Both branches reshape x to [5, 5]: neither can run.
save("branchless", [one, helper.make_node("Equal", ["mode", "one"], ["c"]),
                    helper.make_node("If", ["c"], ["y"],
                                     then_branch=else_g,
                                     else_branch=else_g)],
     [vi("x", [2, 6]), lt("mode", TensorProto.INT64, [])], [vi("y", None)])
# 1 GiB in and out: an arena of 2 GiB with --inplace none.
save("big", relus([("x", "y")]), [vi("x", [1, 1 << 28])], [vi("y", None)])
# A weight stored beside the model, at an offset inside its data file.
w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4),
                            "w")
save("ext", [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
     [vi("x", [3, 4])], [vi("y", None)], [w], save_as_external_data=True,
     all_tensors_to_one_file=True, location="ext.data", size_threshold=0)
PY

# --- --batch and --input-shape -------------------------------------------

# 1. --batch on a fixed axis 0 of 2: it stays (outputs agree), a warning.
expect "batch state" 0 "graph input 'h' has a fixed size of 2 at axis 0" \
	--batch 4 --json "$tmp/s.json" "$tmp/state.onnx"
[ "$(shape "$tmp/s.json" h)" = "[2, 4, 4]" ] &&
[ "$(shape "$tmp/s.json" x)" = "[4, 8]" ] &&
[ "$(shape "$tmp/s.json" hn)" = "[2, 4, 4]" ] && ok ||
	bad "--batch 4: h $(shape "$tmp/s.json" h), x $(shape "$tmp/s.json" x)"
"$ARENAC" -q --batch 4 --json "$tmp/s.json" "$tmp/state.onnx" 2>"$tmp/err"
[ ! -s "$tmp/err" ] && ok || bad "-q still warns: $(cat "$tmp/err")"
if [ -n "$SHARED" ] && [ -f "$SHARED/models/silero_vad_legacy.onnx" ]; then
	expect "batch silero" 0 "graph input 'c' has a fixed size of 2" \
		--batch 4 --dim batch=4 --dim sequence=512 --json "$tmp/v.json" \
		"$SHARED/models/silero_vad_legacy.onnx"
	for t in h c hn cn; do
		[ "$(shape "$tmp/v.json" $t)" = "[2, 4, 64]" ] && ok ||
			bad "silero --batch 4: $t is $(shape "$tmp/v.json" $t)"
	done
	expect "silero scalar" 0 "" -q --dim batch=1 --dim sequence=512 \
		--input-shape sr=scalar "$SHARED/models/silero_vad_legacy.onnx"
else
	echo "skipped: no shared silero_vad_legacy.onnx (generated model only)"
fi
expect "batch and dim disagree" 1 "--dim N=2 and --batch 3 disagree" \
	--batch 3 --dim N=2 $lenet

# --input-shape: whole shapes, named dims or not.
expect "input-shape" 0 "" -q --input-shape input=2x1x28x28 \
	--json "$tmp/l.json" $lenet
[ "$(shape "$tmp/l.json" input)" = "[2, 1, 28, 28]" ] &&
	grep -q '"options": "--input-shape input=2x1x28x28"' "$tmp/l.json" && ok ||
	bad "--input-shape input=2x1x28x28: $(shape "$tmp/l.json" input)"
expect "input-shape unnamed" 0 "" -q --input-shape x=3x5 \
	--input-shape z=2x7x128 --json "$tmp/u.json" "$tmp/unnamed.onnx"
[ "$(shape "$tmp/u.json" x)" = "[3, 5]" ] &&
[ "$(shape "$tmp/u.json" w)" = "[2, 7, 128]" ] && ok ||
	bad "unnamed dims: x $(shape "$tmp/u.json" x), w $(shape "$tmp/u.json" w)"
expect "input-shape against a fixed dim" 1 \
	"--input-shape z=3x7x128 gives axis 0 the size 3, but graph input 'z' fixes it at 2" \
	--input-shape x=3x5 --input-shape z=3x7x128 "$tmp/unnamed.onnx"
expect "input-shape against --dim" 1 \
	"--dim N=1 and --input-shape input=2x1x28x28 disagree on the size of dim 'N'" \
	--dim N=1 --input-shape input=2x1x28x28 $lenet
expect "input-shape no such input" 1 \
	"the model has no graph input 'inpt' (its inputs: 'input')" \
	--input-shape inpt=1x1x28x28 $lenet
expect "input-shape rank" 1 "gives 3 dims, but graph input 'input' has rank 4" \
	--input-shape input=1x1x28 $lenet
expect "input-shape syntax" 1 "--input-shape wants NAME=DIMS" \
	--input-shape input=1x-1 $lenet

# A branch that cannot run with these shapes, the condition known only at
# run time: left unplanned and said (a run that takes it fails); both
# branches so: the error says which input would pick one.
expect "unrunnable branch" 0 "subgraph 'else_branch' of node 'If_2' (If) is not planned: node 'Reshape_1' (Reshape): cannot reshape 12 elements into 25; its tensors have no place in the arena, and a run that takes it fails" \
	"$tmp/branchy.onnx"
expect "input-value needed" 2 "cannot reshape 12 elements into 25 (in the else branch of If 'If_2', whose condition is not a compile-time constant; if that branch cannot run, fix the input it depends on with --input-value mode=V)" \
	"$tmp/branchless.onnx"
# --input-value: an input fixed to one value folds the branch it picks,
# which then replaces the If (frontend/inline_if.c).
expect "input-value" 0 "" -q --input-value mode=1 --json "$tmp/b.json" \
	"$tmp/branchy.onnx"
"$PYTHON" - "$tmp/b.json" <<'PY' && ok || bad "--input-value mode=1: report"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["inputs"] == ["x"], r["inputs"]
# The If's condition folds, so the branch it takes is inlined: one Relu
# step, no If and no subgraph left.
assert "subgraphs" not in r, r.get("subgraphs")
assert [s["op"] for s in r["steps"]] == ["Relu"], r["steps"]
PY
expect "input-value type" 1 \
	"--input-value mode=1.5: input 'mode' is int64 with 1 element; a value does not fit that type" \
	--input-value mode=1.5 "$tmp/branchy.onnx"
expect "input-value count" 1 "more values than that" \
	--input-value mode=1,2 "$tmp/branchy.onnx"
expect "input-value floats" 1 \
	"--input-value x=1,2: input 'x' has 12 elements, the option gives 2" \
	--input-value x=1,2 --input-value mode=1 "$tmp/branchy.onnx"
expect "input-value no such input" 1 "the model has no graph input 'rate'" \
	--input-value rate=1 "$tmp/branchy.onnx"
expect "input-value twice" 1 "input 'mode' is given a value twice" \
	--input-value mode=1 --input-value mode=1 "$tmp/branchy.onnx"
expect "input-value syntax" 1 "--input-value wants NAME=V" \
	--input-value mode= "$tmp/branchy.onnx"

# Sizes: fractions, binary and decimal suffixes; LeNet's arena is 57,600
# bytes, so each budget below fits exactly or misses by a few bytes.
for b in 57600 57600B 57.6KB 56.25KiB 56.25K 0.0576MB; do
	expect "budget $b" 0 "" -q --dim N=1 --budget $b $lenet
done
for b in 57599 57.5KB 56.24KiB; do
	expect "budget $b" 3 "does not fit the budget" -q --dim N=1 --budget $b $lenet
done
expect "budget too large" 1 \
	"--budget: '99999999999999999999999' is too large (at most 2^62 bytes)" \
	--budget 99999999999999999999999 $lenet
expect "input-shape rank limit" 1 "(each dim above 0, at most 16 dims)" \
	--input-shape input=1x0 $lenet
expect "freeze everything" 1 \
	"--freeze leaves none of the model's 8 parameters to train" \
	--train --freeze '.*' --dim N=1 $lenet
expect "header limit, formatted" 1 \
	"--header: the arena of 6,442,450,944 bytes does not fit" \
	--batch 3 --inplace none -o "$tmp/big.h" "$tmp/big.onnx"

# Every unbound dim in one message; a --dim for a dim that is not there.
expect "unbound, all at once" 2 \
	"3 unbound dims: 'N' (input 'x', axis 0), 'H' (input 'x', axis 2), 'W' (input 'x', axis 3)" \
	"$tmp/open3.onnx"
if [ -n "$SHARED" ] && [ -f "$SHARED/models/ch_PP-OCRv4_det_infer.onnx" ]; then
	expect "unbound, PP-OCR det" 2 \
		"3 unbound dims: 'p2o.DynamicDimension.0' (input 'x', axis 0), 'p2o.DynamicDimension.1' (input 'x', axis 2), 'p2o.DynamicDimension.2' (input 'x', axis 3)" \
		"$SHARED/models/ch_PP-OCRv4_det_infer.onnx"
fi
expect "unbound names --batch for axis 0" 2 \
	"bind them with --dim NAME=VALUE, --input-shape INPUT=DIMS, --batch N or --dim-default VALUE" \
	"$tmp/open3.onnx"
expect "unbound unnamed" 2 \
	"unnamed (input 'x', axis 0), unnamed (input 'x', axis 1), unnamed (input 'z', axis 1)" \
	"$tmp/unnamed.onnx"
expect "--dim matches nothing" 1 \
	"--dim n=1: the model has no dim named 'n'; its graph inputs have 'N' (input 'input', axis 0)" \
	--dim n=1 $lenet

# --- messages ------------------------------------------------------------

expect "did you mean" 1 "unknown option '--bugdet'; did you mean '--budget'?" \
	--bugdet 1M $lenet
expect "ambiguous" 1 "option '--di' is ambiguous: --dim, --dim-default" \
	--di 1 $lenet
expect "bad suffix" 1 "'16Q' has an unknown suffix 'Q'" \
	--memory sram:16Q $lenet
expect "separators" 3 \
	"does not fit the budget of 51,200 bytes: the arena needs 57,600 bytes" \
	--dim N=1 --budget 50K $lenet
# The summary and the graph picture write one size the same way.
"$ARENAC" --dim N=64 $lenet >"$tmp/sum" 2>&1
size=$(sed -n 's/^  arena .*(\(.*\))$/\1/p' "$tmp/sum")
"$ARENAC" -q --dim N=64 --dot "$tmp/g.dot" $lenet
[ "$size" = "3.52 MiB" ] && grep -qF "arena $size" "$tmp/g.dot" && ok ||
	bad "one size format: summary '$size', picture $(grep -o 'arena [^,]*' "$tmp/g.dot")"

# --- file errors, exit 1 -------------------------------------------------

expect "model is a directory" 1 "testdata: is a directory, not a model file" \
	testdata
expect "model missing" 1 "cannot open: No such file or directory" \
	"$tmp/missing.onnx"
mkdir "$tmp/outdir"
expect "output is a directory" 1 "$tmp/outdir is a directory" \
	-q --dim N=1 -o "$tmp/outdir" $lenet
"$ARENAC" -q --dim N=1 -o - $lenet >/dev/full 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && ok || bad "header write failure: exit $rc, $(cat "$tmp/err")"
expect "two outputs on stdout" 1 \
	"--json and -o/--header both write to standard output" \
	--dim N=1 --json - -o - $lenet
expect "two outputs in one file" 1 "--json and --dot both write $tmp/x" \
	--dim N=1 --json "$tmp/x" --dot "$tmp/x" $lenet

# --- what failures and --stats print -------------------------------------

"$ARENAC" -q --dim N=1 --budget 50K $lenet 2>"$tmp/err"
[ $? -eq 3 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && ! grep -q stats: "$tmp/err" &&
	ok || bad "-q on a budget failure printed: $(cat "$tmp/err")"
"$ARENAC" --stats --dim N=1 --memory sram:1K $lenet 2>"$tmp/err"
[ $? -eq 3 ] && grep -q "stats: lower_bound_bytes 57,600" "$tmp/err" &&
	! grep -qE "arena_bytes|efficiency|algorithm none" "$tmp/err" && ok ||
	bad "tier failure with --stats: $(cat "$tmp/err")"
n=$("$ARENAC" --train --batch 8 --stats $lenet 2>&1 | grep -c "^training step")
[ "$n" -eq 1 ] && ok || bad "--train --stats printed the bill $n times"
n=$("$ARENAC" --train --batch 8 --stats -o "$tmp/t.h" $lenet 2>&1 |
	grep -c "^training step")
[ "$n" -eq 1 ] && ok || bad "--train --stats -o printed the bill $n times"

# --- external weights, from where the loader recorded them --------------

if "$ARENAC" -q --weights "$tmp/w.bin" -o "$tmp/e.h" "$tmp/ext.onnx" \
	2>"$tmp/err" && "$PYTHON" - "$tmp" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
blob = np.fromfile(f"{d}/w.bin", dtype=np.float32)
assert (blob[:12] == np.arange(12, dtype=np.float32)).all(), blob[:12]
PY
then ok; else bad "external weights: $(cat "$tmp/err")"; fi
expect "external outside the folder" 2 "not a file beside the model" \
	-q --weights "$tmp/w2.bin" testdata/bad/external_outside.onnx

# --- an autocast precision asked of a model with no float tensor ------------

"$PYTHON" - "$tmp/intmm.onnx" <<'PY' || exit 1
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save_model

w = numpy_helper.from_array(np.ones((4, 4), dtype=np.int32), "w")
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.INT32,
                                                     [2, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.INT32,
                                                     [2, 4])], [w])
save_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
           sys.argv[1])
PY
expect "amp of a model with no float tensor" 2 \
	"--precision amp-bf16: the model computes no float tensor" \
	-q --train --precision amp-bf16 "$tmp/intmm.onnx"

# --- out of memory: the library calls the CLI's handler ------------------

if [ -n "${ARENAC_SANITIZE:-}" ]; then
	echo "skipped: out of memory under ulimit -v (the sanitizers reserve more)"
else
	(ulimit -v 1000000 && exec "$ARENAC" -q --inplace none --selfcheck \
		"$tmp/big.onnx") 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 4 ] && grep -q "big.onnx: out of memory" "$tmp/err" &&
		[ "$(wc -l <"$tmp/err")" -eq 1 ] && ok ||
		bad "out of memory: exit $rc, $(cat "$tmp/err")"
fi

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
