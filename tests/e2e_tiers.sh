#!/bin/sh
# e2e_tiers.sh — memory tiers end to end: every shared model planned with
# two tiers whose fast one holds a quarter of the model's peak, with the
# verifier and the poison executor (--selfcheck) run per region; the JSON
# report checked region by region.  Also: one tier is the plain arena, a
# model that fits no tier exits 3 naming the tier and the step, and
# --weights-in reserves the weights at the start of their memory.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# The untiered plan's lower bound and arena: "LB ARENA".
untiered() {
	"$ARENAC" -q --json - "$@" | "$PYTHON" -c '
import json, sys
r = json.load(sys.stdin)
print(r["lower_bound_bytes"], r["arena_bytes"])'
}

# MODEL [ARENAC OPTIONS...]
two_tiers() {
	m=$1
	shift
	set -- "$m" "$@"
	read lb arena <<EOF
$(untiered "$@")
EOF
	fast=$((lb / 4))
	if "$ARENAC" -q --selfcheck --effort 4 --json "$tmp/r.json" \
		--memory "sram:$fast:50G" --memory "dram:$((lb * 2)):2G" "$@" \
		2>"$tmp/err" &&
	   "$PYTHON" - "$tmp/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
regs = {x["name"]: x for x in r["regions"]}
assert [x["name"] for x in r["regions"]] == ["sram", "dram"], r["regions"]
fast = regs["sram"]
assert fast["capacity_bytes"] < r["lower_bound_bytes"], fast
assert sum(x["used_bytes"] for x in r["regions"]) == r["arena_bytes"]
for x in r["regions"]:
    assert x["used_bytes"] <= x["capacity_bytes"], x
    assert x["lower_bound_bytes"] <= x["used_bytes"] - x["weights_bytes"], x
    assert abs(x["traffic_seconds"] - x["traffic_bytes"] /
               x["bandwidth_bytes_per_s"]) <= 1e-9 * max(1, x["traffic_seconds"])
hits = 0
for t in r["tensors"]:
    if t["offset"] is None:
        assert "region" not in t, t
        continue
    reg = regs[t["region"]]
    assert t["offset"] % r["alignment"] == 0, t
    assert t["offset"] + t["bytes"] <= reg["used_bytes"], t
    hits += t["region"] == "sram" and t["bytes"] > 0
assert hits > 0, "nothing in the fast tier"
total = sum(x["traffic_bytes"] for x in r["regions"])
print("  %-40s sram %10d/%-10d dram %10d  hit %.3f  %s%s" % (
    r["model"], fast["used_bytes"], fast["capacity_bytes"],
    regs["dram"]["used_bytes"], fast["traffic_bytes"] / max(1, total),
    r["algorithm"], " optimal" if r["placement_optimal"] else ""))
PY
	then
		ok
	else
		bad "$*: $(cat "$tmp/err")"
	fi
}

L="testdata/lenet.onnx --dim N=1"
two_tiers $L
two_tiers testdata/lenet.onnx --dim N=64 --align 64

# One memory is the plain arena.
read lb arena <<EOF
$(untiered $L)
EOF
one=$("$ARENAC" -q --selfcheck --json - --memory "ram:$((arena * 2))" $L |
      "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["arena_bytes"])')
[ "$one" = "$arena" ] && ok || bad "one tier: arena $one, untiered $arena"

# Too small everywhere: exit 3, the tier and the peak step named.
"$ARENAC" -q --memory "sram:1K" --memory "dram:$((lb / 2))" $L 2>"$tmp/err"
rc=$?
if [ $rc -eq 3 ] && grep -q "'dram'" "$tmp/err" && grep -q "peak at step" "$tmp/err"; then
	ok
else
	bad "does-not-fit: exit $rc: $(cat "$tmp/err")"
fi

# Weights at the start of sram, activations above them.
if "$ARENAC" -q --selfcheck --json "$tmp/w.json" --memory "sram:4M" \
	--memory "dram:4M" --weights-in sram $L 2>"$tmp/err" &&
   "$PYTHON" - "$tmp/w.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["regions"][0]
assert s["weights_bytes"] >= r["weights_bytes"] > 0, s
for t in r["tensors"]:
    if t.get("region") == "sram" and t["bytes"]:
        assert t["offset"] >= s["weights_bytes"], t
PY
then
	ok
else
	bad "--weights-in: $(cat "$tmp/err")"
fi

# Usage errors: --weights-in naming no memory, half the bandwidths given.
"$ARENAC" -q --memory "sram:1M" --weights-in flash $L 2>/dev/null
[ $? -eq 1 ] && ok || bad "--weights-in flash without --memory flash"
"$ARENAC" -q --memory "sram:1M:1G" --memory "dram:1G" $L 2>/dev/null
[ $? -eq 1 ] && ok || bad "bandwidth on one memory only"

if [ -n "${ARENAC_SHARED:-}" ] && [ -d "$ARENAC_SHARED/models" ]; then
	for m in "$ARENAC_SHARED"/models/light_*.onnx; do
		case "$m" in
		*densenet121*|*resnet50*|*vgg19*)
			[ -n "${ARENAC_SANITIZE:-}" ] && continue ;;
		esac
		two_tiers "$m"
	done
	two_tiers "$ARENAC_SHARED/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" \
		--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=48 --dim p2o.DynamicDimension.2=192
	two_tiers "$ARENAC_SHARED/models/ch_PP-OCRv4_det_infer.onnx" \
		--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=96 --dim p2o.DynamicDimension.2=160
	two_tiers "$ARENAC_SHARED/models/silero_vad_legacy.onnx" --dim batch=1 --dim sequence=512
else
	echo "skipped: no shared models"
fi
echo "tiers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
