#!/bin/sh
# e2e_bounded.sh — bounded dynamic shapes end to end, on the models of
# testdata/gen_bounded.py: a detector's NonMaxSuppression post-processing is
# planned for its bound (3 classes x 10 boxes = 30 rows), marked bounded in
# the JSON report with its max_shape, the bound carried through Slice,
# Reshape and Gather, tightened by --bound (also axis by axis), checked by
# the verifier and the poison executor, and its header compiles; a Range up
# to a graph input has no bound until --bound gives one; a Loop that may
# stop early stacks at most its trip count; wrong --bound options are usage
# errors.  A model with three sizes computed from run-time values (fed by
# NonZero, Unique and a TopK with k from an input) names all three in one
# error, nothing downstream of them, and plans with exactly the bounds it
# asks for.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
NMS=testdata/nms_postprocess.onnx
RANGE=testdata/range_runtime.onnx
LOOP=testdata/loop_until.onnx
THREE=testdata/three_unbounded.onnx
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# MODEL EXPECT [ARENAC OPTIONS...]: EXPECT is "NAME SHAPE MAX_SHAPE BYTES;..."
# for the tensors to check, SHAPE with -1 on the data-dependent axes.
plans() {
	m=$1 want=$2
	shift 2
	if "$ARENAC" -q --selfcheck --json "$tmp/r.json" "$@" "$m" \
		2>"$tmp/err" &&
	   "$PYTHON" - "$tmp/r.json" "$want" <<'PY'
import json, sys
r = {t["name"]: t for t in json.load(open(sys.argv[1]))["tensors"]}
for item in sys.argv[2].split(";"):
    name, shape, mx, size = item.split()
    t = r[name]
    got = (json.dumps(t["shape"]).replace(" ", ""),
           json.dumps(t.get("max_shape")).replace(" ", ""), str(t["bytes"]))
    if got != (shape, mx, size) or bool(t.get("bounded")) != (mx != "null"):
        sys.exit("%s: %s, expected %s" % (name, got, (shape, mx, size)))
PY
	then ok; else bad "$m $*: $(cat "$tmp/err")"; fi
}

# EXIT TEXT ARENAC ARGS...: fails with EXIT and a message containing TEXT.
refused() {
	code=$1 text=$2
	shift 2
	"$ARENAC" -q "$@" >/dev/null 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$code" ] && grep -qF -- "$text" "$tmp/err"; then ok
	else bad "$* exited $rc: $(cat "$tmp/err")"; fi
}

# WARNING ARENAC ARGS...: plans, warning with WARNING.
warns() {
	text=$1
	shift
	if "$ARENAC" "$@" >/dev/null 2>"$tmp/err" &&
	   grep -qF -- "$text" "$tmp/err"; then ok
	else bad "$*: no warning '$text': $(cat "$tmp/err")"; fi
}

if [ ! -f "$NMS" ] || [ ! -f "$RANGE" ] || [ ! -f "$LOOP" ] ||
   [ ! -f "$THREE" ]; then
	echo "FAIL testdata/gen_bounded.py's models are missing"
	exit 1
fi

# The bound: 1 batch x 3 classes x min(10, 200 boxes) rows.
plans "$NMS" "selected [-1,3] [30,3] 720;box_idx [-1] [30] 240;
picked [-1,4] [30,4] 480;all_boxes [200,4] null 3200"
# The whole arena, pinned: boxes, scores and the bounded selections.
if [ "$("$ARENAC" -q --json - "$NMS" | "$PYTHON" -c '
import json, sys; print(json.load(sys.stdin)["arena_bytes"])')" = 6320 ]
then ok; else bad "$NMS: arena is not 6320 bytes"; fi
plans "$NMS" "selected [-1,3] [8,3] 192;picked [-1,4] [8,4] 128" \
	--bound selected=8
plans "$NMS" "selected [-1,3] [8,3] 192;picked [-1,4] [5,4] 80" \
	--bound selected=8x3 --bound picked=5
warns "--bound selected: 100 is above the bound of axis 0 that node" \
	--bound selected=100 "$NMS"
warns "--bound boxes: 'boxes' has a static shape; the bound is not used" \
	--bound boxes=3 "$NMS"
refused 1 "--bound selected: axis 1 has the static extent 3, the bound says 4" \
	--bound selected=8x4 "$NMS"
refused 1 "--bound nope: the model has no tensor 'nope'" --bound nope=3 "$NMS"
for arg in selected selected= =3 selected=-1 selected=3x selected=x3 \
	selected=1x2x3x4x5x6x7x8x9x10x11x12x13x14x15x16x17; do
	refused 1 "--bound wants" --bound "$arg" "$NMS"
done

# The summary says which tensors are bounds; the header compiles.
if "$ARENAC" "$NMS" | grep -q "bounded      4 tensors, each planned" &&
   "$ARENAC" -q -o "$tmp/nms.h" "$NMS" &&
   $CC -std=c99 -Wall -Werror -fsyntax-only -x c "$tmp/nms.h"; then ok
else bad "$NMS: summary or header"; fi

refused 2 "node 'range' (Range): output 'r' has a size known only at run time (axis 0) and no bound arenac can compute; give its largest size with --bound r=N" \
	"$RANGE"
plans "$RANGE" "r [-1] [16] 128;out [-1] [16] 64" --bound r=16
# The body's condition may end the loop before its 5 trips.
plans "$LOOP" "scans [-1,2] [5,2] 40;acc [2] null 8"

# One run names every missing bound, in the model's order, each with the
# option to add, and nothing computed from them; each option, filled in,
# is what the model needs to plan.
"$ARENAC" -q "$THREE" >/dev/null 2>"$tmp/err"
rc=$?
grep -o -- "--bound [^ ]*" "$tmp/err" >"$tmp/asked"
if [ "$rc" -eq 2 ] &&
   grep -qF "3 tensors have a size known only at run time" "$tmp/err" &&
   printf '%s\n' "--bound positions=N" "--bound onehot=N" \
	"--bound zeros=D0xD1" | cmp -s - "$tmp/asked" &&
   grep -qF "(node 'zeros_like' (ConstantOfShape), axes 0, 1)" "$tmp/err"
then ok; else bad "$THREE exited $rc: $(cat "$tmp/err")"; fi
set -- $(sed 's/=N$/=32/; s/=D0xD1$/=2x50/' "$tmp/asked")
plans "$THREE" "positions [-1] [32] 256;onehot [32,-1] [32,32] 4096;
zeros [-1,-1] [2,50] 400;top_out [-1,-1] [2,50] 400" "$@"
# Two given, the third alone is named, as one tensor is.
refused 2 "node 'zeros_like' (ConstantOfShape): output 'zeros' has a size known only at run time (axes 0, 1) and no bound arenac can compute; give its largest size with --bound zeros=D0xD1" \
	--bound positions=32 --bound onehot=32 "$THREE"
# A misspelt --bound is the likelier mistake: said first.
refused 1 "--bound onehto: the model has no tensor 'onehto'" \
	--bound onehto=32 "$THREE"

# The same idioms as torch.onnx.export writes them (python3-torch, a
# test-time oracle): arange over nonzero's count, one_hot over unique's.
if "$PYTHON" - "$tmp/torch.onnx" >/dev/null 2>&1 <<'PY'
import sys
import torch
import torch.nn.functional as F

class M(torch.nn.Module):
    def forward(self, mask, labels):
        pos = torch.arange(mask.nonzero().shape[0]).float() * 0.5
        uniq, inv = torch.unique(labels, return_inverse=True)
        return pos, F.one_hot(inv, num_classes=uniq.shape[0]).sum(0)

torch.onnx.export(M(), (torch.rand(4, 8) > 0.5, torch.randint(0, 5, (32,))),
                  sys.argv[1], opset_version=14)
PY
then
	"$ARENAC" -q "$tmp/torch.onnx" >/dev/null 2>"$tmp/err"
	rc=$?
	grep -o -- "--bound [^ ]*" "$tmp/err" >"$tmp/asked"
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/asked")" -eq 2 ] &&
	   grep -q "(node '/Range' (Range), axis 0)" "$tmp/err" &&
	   grep -q "(node '/OneHot' (OneHot), axis 1)" "$tmp/err" &&
	   "$ARENAC" -q --selfcheck $(sed 's/=N$/=32/' "$tmp/asked") \
		-o /dev/null "$tmp/torch.onnx"
	then ok; else bad "torch export exited $rc: $(cat "$tmp/err")"; fi
else
	echo "skipped: torch export of nonzero/unique (no python3-torch)"
fi

echo "bounded: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
