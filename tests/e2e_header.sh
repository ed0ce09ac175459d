#!/bin/sh
# e2e_header.sh — the C header end to end: arenac writes a header and a
# JSON report for lenet and several shared models; tests/header_check.c is
# compiled against each header with gcc, clang (C99, -pedantic) and g++
# (C++11), all at -Werror, and a one-macro translation unit must build
# too.  At run time header_check prints the header's tables, which must
# agree with the JSON report, and re-checks from the header alone that no
# two tensors live at one step share bytes unless alias_of/inplace_of link
# them, and that a run of the steps never reads overwritten bytes.
# Tiered plans (--memory sram:... --memory dram:...) the same, per region:
# header_check -DTIERED also checks each region's macros and arena, and
# that a step never writes over the weights' reserved bytes; a section
# hook given on the command line must place the sram arena.  An --io
# separate header runs with a buffer of its own per input and output, and
# the checks reach the columns and macros a runtime reads besides the
# layout: element counts, typed pointers, the input and output lists,
# caller-buffer slots, phases, and JSON's noop against the header's.
# Then: the tables are defined once (a second file sees extern
# declarations), the --weights C file's array matches the header's extern
# declaration and its section hook places it, the header is the same
# whatever folder the model was given from, the README's example builds
# as C and C++, and a model whose numbers overflow a narrow field (a
# Concat of 66,000 inputs) is refused.
set -u
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
SHARED=${ARENAC_SHARED:-../shared}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# name, model, arenac options
cases="lenet testdata/lenet.onnx --dim N=1
lenet_io testdata/lenet.onnx --dim N=1 --io separate
lenet_train testdata/lenet.onnx --train --batch 2 --optimizer momentum
lenet_tiers testdata/lenet.onnx --dim N=1 --memory sram:16K --memory dram:8M
lenet_tiers_io testdata/lenet.onnx --dim N=1 --memory sram:16K --memory dram:8M --io separate
lenet_weights_in testdata/lenet.onnx --dim N=1 --memory sram:16K:50G --memory dram:8M:2G --weights-in dram
quant_cnn_int8 testdata/quant_cnn_int8.onnx --dim-default 1
quant_int4_blocked testdata/quant_int4_blocked.onnx --dim-default 1
nms_postprocess testdata/nms_postprocess.onnx --dim-default 1"
if [ -d "$SHARED/models" ]; then
	m=light_squeezenet
	[ -f "$SHARED/models/$m.onnx" ] && cases="$cases
${m}_tiers $SHARED/models/$m.onnx --dim-default 1 --memory sram:256K --memory dram:8M
${m}_io $SHARED/models/$m.onnx --dim-default 1 --io separate"
	for m in light_squeezenet light_inception_v1 light_densenet121 \
		ch_PP-OCRv4_det_infer; do
		[ -f "$SHARED/models/$m.onnx" ] && cases="$cases
$m $SHARED/models/$m.onnx --dim-default 1"
	done
else
	echo "skipped: shared models (no $SHARED/models)"
fi

C99="-std=c99 -Wall -Wextra -Werror -pedantic"
CXX11="-std=c++11 -Wall -Wextra -Werror"

# compile NAME CC FLAGS... : header_check against $tmp/NAME.h, linked
# with a second file that reads one macro (its tables unused) and must not
# define the arena again; prints the binary's path.  $tiered says which
# header it is.
compile() {
	name=$1 cc=$2
	shift 2
	few=HC_ARENA_SIZE
	if [ $tiered = 1 ]; then
		few="HC_ARENA_SRAM_SIZE + HC_ARENA_DRAM_SIZE"
		set -- "$@" -DTIERED "-DREGIONS=R(SRAM, sram) R(DRAM, dram)" \
			'-DHC_ARENA_SRAM_SECTION=__attribute__((section("hc_sram")))'
	fi
	# The second file reads the tables through their extern
	# declarations: linking proves they are defined once.
	printf '#undef HC_DEFINE_ARENA\n#undef HC_DEFINE_TABLES\n#include "%s.h"\n%s\n' \
		"$name" "int few(void); int few(void) { return (int)($few +
		hc_tensors[0].bytes + hc_steps[0].ninputs +
		sizeof hc_tensors / sizeof hc_tensors[0]); }" \
		> "$tmp/few_$name.c"
	"$cc" "$@" -I"$tmp" "-DARENAC_HEADER=\"$name.h\"" -DLO=hc -DUP=HC \
		-DHC_DEFINE_ARENA -DHC_DEFINE_TABLES tests/header_check.c \
		"$tmp/few_$name.c" -o "$tmp/$name.$cc" >&2 || return 1
	echo "$tmp/$name.$cc"
}

echo "$cases" | while read -r name model opts; do
	if ! $ARENAC -q $opts --prefix hc -o "$tmp/$name.h" \
		--json "$tmp/$name.json" "$model"; then
		echo "FAIL $name: arenac failed"
		continue
	fi
	ok=1
	case "$opts" in *--memory*) tiered=1 ;; *) tiered=0 ;; esac
	for spec in "gcc $C99" "clang $C99" "g++ $CXX11"; do
		set -- $spec
		command -v "$1" >/dev/null || { echo "skipped: $1"; continue; }
		bin=$(compile "$name" "$@") || { echo "FAIL $name: $1"; ok=0; continue; }
		if [ $tiered = 1 ] && command -v objdump >/dev/null &&
			! objdump -t "$bin" | grep -q 'hc_sram.*hc_arena_sram$'; then
			echo "FAIL $name: $1: the section hook did not place the sram arena"
			ok=0
		fi
		"$bin" > "$tmp/$name.$1.out" || {
			echo "FAIL $name: $1 build's check:"; tail -3 "$tmp/$name.$1.out"
			ok=0; continue; }
		if [ -f "$tmp/$name.out" ]; then
			cmp -s "$tmp/$name.out" "$tmp/$name.$1.out" ||
				{ echo "FAIL $name: $1 reads other tables"; ok=0; }
		else
			cp "$tmp/$name.$1.out" "$tmp/$name.out"
		fi
	done
	[ -f "$tmp/$name.out" ] &&
		"$PYTHON" - "$tmp/$name.json" "$tmp/$name.out" <<'EOF' || ok=0
# The lines header_check must print, from the JSON report.
import json, sys
rep = json.load(open(sys.argv[1]))
got = [l for l in open(sys.argv[2]).read().splitlines()
       if not l.startswith("attr ")]
dtypes = ["undefined", "float32", "uint8", "int8", "uint16", "int16",
          "int32", "int64", "string", "bool", "float16", "float64", "uint32",
          "uint64", "complex64", "complex128", "bfloat16", "float8e4m3fn",
          "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4", "int4",
          "float4e2m1", "float8e8m0", "uint2", "int2"]
kinds = ["input", "output", "activation", "weight", "constant"]
ts = rep["tensors"]
index = {t["name"]: i for i, t in enumerate(ts)}
ix = lambda n: -1 if n is None else index[n]
hx = lambda s: s.encode().hex() if s else "-"
ids = lambda v: ",".join(str(x) for x in v) if v else "-"
nn = lambda v, d: d if v is None else v
want = ["arena %d %d %d %d %d" % (rep["arena_bytes"], rep["alignment"],
        rep["lower_bound_bytes"], rep["weights_bytes"], rep["peak_step"])]
# Tiers: a line per region, and each tensor's region after its offset.
regions = rep.get("regions", [])
rindex = {r["name"]: i for i, r in enumerate(regions)}
for i, r in enumerate(regions):
    want.append("region %d %s %d %d" % (i, hx(r["name"]), r["used_bytes"],
                                        r["weights_bytes"]))
for i, t in enumerate(ts):
    shape = t["shape"]
    where = "-" if t["offset"] is None else str(t["offset"])
    if regions:
        where += " " + ("-" if t["offset"] is None else
                        str(rindex[t["region"]]))
    # A bounded tensor's table holds its bounds, -1 in the JSON's shape.
    bounded = 0
    if t.get("bounded"):
        bounded = sum(1 << a for a, d in enumerate(shape) if d == -1)
        shape = t["max_shape"]
    numel = 0
    if shape is not None:
        numel = 1
        for d in shape:
            numel *= d
    q = t.get("quant")
    quant = "-" if q is None else "%d,%d,%d,%d" % (
        ix(q["scale_tensor"]), ix(q["zero_point_tensor"]),
        nn(q["axis"], -1), nn(q["block_size"], 0))
    want.append("tensor %d %s %d %d %d %s %d %s %d %d %d %d %d %d %d %d %s" % (
        i, hx(t["name"]), dtypes.index(t["dtype"]), kinds.index(t["kind"]),
        -1 if shape is None else len(shape), ids(shape), nn(t["bytes"], 0),
        where, nn(t["first_step"], -1), nn(t["last_step"], -1),
        ix(t["alias_of"]), t.get("alias_offset", 0), ix(t["inplace_of"]),
        numel, t.get("io", -1), bounded, quant))
# --io separate: each input and output the arena would hold is in a
# buffer of the caller's instead, inputs first (an output that is also an
# input keeps the input's).
sep = "--io separate" in rep["options"]
ins = [index[n] for n in rep["inputs"]]
outs = [index[n] for n in rep["outputs"]]
slot = {}
for k, n in enumerate(rep["inputs"] + rep["outputs"]):
    slot.setdefault(n, k)
for t in ts:
    io = slot[t["name"]] if (sep and t["name"] in slot and
                             t["kind"] in ("input", "output") and
                             t["shape"] is not None) else None
    if t.get("io") != io or (io is not None and t["offset"] is not None):
        print("tensor %s: io %s, offset %s; want io %s, no offset" % (
            t["name"], t.get("io"), t["offset"], io))
        sys.exit(1)
want.append("io %d %s %s" % (sep, ids(ins), ids(outs)))
phases = ["forward", "recompute", "backward", "update"]
def aroot(i):
    while ts[i]["alias_of"] is not None:
        i = index[ts[i]["alias_of"]]
    return i
def view(o, i):  # o only names bytes inside input i
    a, b = ts[o], ts[i]
    return (a["alias_of"] is not None and b["offset"] is not None and
            aroot(o) == aroot(i) and a["offset"] >= b["offset"] and
            a["offset"] + a["bytes"] <= b["offset"] + b["bytes"])
for s in rep["steps"]:
    ins = [ix(n) for n in s["inputs"]]
    outs = [ix(n) for n in s["outputs"]]
    views = all(o >= 0 and any(i >= 0 and view(o, i) for i in ins)
                for o in outs)
    slices = len(outs) == 1 and ins and all(
        i >= 0 and ts[i]["alias_of"] == s["outputs"][0] for i in ins)
    noop = bool(outs) and (views or bool(slices))
    if noop != s["noop"]:
        print("step %d: JSON says noop %s, the links say %s" % (
            s["index"], s["noop"], noop))
        sys.exit(1)
    want.append("step %d %s %s %s %s %s %d %d" % (
        s["index"], hx(s["op"]), hx(s.get("domain", "")), hx(s["name"]),
        ids(ins), ids(outs), noop, phases.index(s["phase"])))
bad = [(w, g) for w, g in zip(want, got) if w != g]
if bad or len(want) != len(got):
    print("header and JSON disagree (%d vs %d lines), first: %s" % (
        len(got), len(want), bad[:1]))
    sys.exit(1)
EOF
	if [ $ok = 1 ]; then
		echo "ok $name: $(grep -c '^tensor' "$tmp/$name.out") tensors, $(grep -c '^step' "$tmp/$name.out") steps"
	else
		echo "FAIL $name"
	fi
done | tee "$tmp/log"
. "$(dirname "$0")/tally.sh"
pass=$(grep -c '^ok ' "$tmp/log")
fail=$(grep -c '^FAIL ' "$tmp/log")
abs=$ARENAC
case $abs in /*) ;; *) abs=$(pwd)/$abs ;; esac

# The same header and weights file whatever folder the model is named from.
mkdir -p "$tmp/dir/sub"
cp testdata/lenet.onnx "$tmp/dir/sub/"
(cd "$tmp/dir" && "$abs" -q --dim N=1 -o a.h --weights a.c sub/lenet.onnx) &&
(cd "$tmp/dir/sub" && "$abs" -q --dim N=1 -o ../b.h --weights ../b.c \
	lenet.onnx) && cmp -s "$tmp/dir/a.h" "$tmp/dir/b.h" &&
	cmp -s "$tmp/dir/a.c" "$tmp/dir/b.c"
check "header and weights file independent of the model's folder" $?

# The --weights C array matches the header's extern declaration (one file
# sees both), and its section hook places it.
$ARENAC -q --dim N=1 --prefix hc -o "$tmp/w.h" --weights "$tmp/w.c" \
	testdata/lenet.onnx &&
	printf '#include "w.h"\n#include "w.c"\n' >"$tmp/both.c" &&
	gcc $C99 -I"$tmp" -c "$tmp/both.c" -o "$tmp/both.o" &&
	gcc $C99 '-DHC_WEIGHTS_SECTION=__attribute__((section("hc_flash")))' \
		-c "$tmp/w.c" -o "$tmp/w.o" &&
	{ ! command -v objdump >/dev/null ||
	  objdump -t "$tmp/w.o" | grep -q 'hc_flash.*hc_weights$'; }
check "weights array: extern declaration and section hook" $?

# The README's example, as C99 and as C++11.
sed -n '/^### Using the header/,/^```$/p' README.md | sed '1,/^```c$/d;$d' \
	>"$tmp/readme.c"
printf '%s\n' '#include <stdint.h>' \
	'void my_kernel(const char *op, const void *attrs, int nattrs,' \
	'	const int32_t *in, int nin, const int32_t *out, int nout);' \
	>"$tmp/kernel.h"
$ARENAC -q --dim N=1 -o "$tmp/lenet_arena.h" testdata/lenet.onnx &&
	[ -s "$tmp/readme.c" ] &&
	gcc $C99 -I"$tmp" -include "$tmp/kernel.h" -c "$tmp/readme.c" \
		-o "$tmp/readme.o" &&
	g++ $CXX11 -I"$tmp" -include "$tmp/kernel.h" -x c++ -c "$tmp/readme.c" \
		-o "$tmp/readme.o"
check "the README's example builds as C99 and C++11" $?

# A Concat of 66,000 inputs: ninputs is 16 bits, so no header, exit 1, the
# field named; the JSON report has no such limit.
if "$PYTHON" -c 'import onnx' 2>/dev/null; then
	"$PYTHON" - "$tmp/wide.onnx" <<'PY'
import sys
from onnx import TensorProto, helper, save
n = 66000
g = helper.make_graph(
    [helper.make_node("Concat", ["x"] * n, ["y"], name="wide", axis=0)],
    "wide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
     sys.argv[1])
PY
	"$ARENAC" -q -o "$tmp/wide.h" "$tmp/wide.onnx" 2>"$tmp/wide.err"
	rc=$?
	grep -q "step 'wide' has 66000 inputs, past the header's limit of 65535" \
		"$tmp/wide.err" && [ $rc = 1 ] && [ ! -e "$tmp/wide.h" ] &&
		"$ARENAC" -q --json "$tmp/wide.json" "$tmp/wide.onnx"
	check "a 66,000-input Concat is refused (exit $rc: $(cat "$tmp/wide.err"))" $?
else
	echo "skipped: no python3-onnx for the 66,000-input Concat"
fi

echo "header: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
