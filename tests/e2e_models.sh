#!/bin/sh
# e2e_models.sh — plans every model in testdata/ and $ARENAC_SHARED/models
# end to end, with the poison executor (--selfcheck) on top of the
# verifier, and checks the JSON report's arena against its lower bound.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# MODEL [ARENAC OPTIONS...]
plan() {
	m=$1
	shift
	if "$ARENAC" -q --selfcheck --json "$tmp/r.json" "$@" "$m" 2>"$tmp/err" &&
	   "$PYTHON" - "$tmp/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["arena_bytes"] >= r["lower_bound_bytes"] > 0 or r["arena_bytes"] == 0, r["arena_bytes"]
for t in r["tensors"]:
    if t["offset"] is not None:
        assert t["offset"] % r["alignment"] == 0, t
        assert t["offset"] + t["bytes"] <= r["arena_bytes"], t
print("  %-40s arena %12d  lower bound %12d  ratio %.4f  %s%s" % (
    r["model"], r["arena_bytes"], r["lower_bound_bytes"],
    r["arena_bytes"] / max(1, r["lower_bound_bytes"]), r["algorithm"],
    " optimal" if r["optimal"] else ""))
PY
	then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $m $*: $(cat "$tmp/err")"
	fi
}

plan testdata/lenet.onnx --dim N=1
plan testdata/lenet.onnx --dim N=64 --align 64
if [ -n "${ARENAC_SHARED:-}" ] && [ -d "$ARENAC_SHARED/models" ]; then
	for m in "$ARENAC_SHARED"/models/light_*.onnx; do
		plan "$m"
	done
	plan "$ARENAC_SHARED/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" \
		--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=48 --dim p2o.DynamicDimension.2=192
	plan "$ARENAC_SHARED/models/ch_PP-OCRv4_det_infer.onnx" \
		--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=96 --dim p2o.DynamicDimension.2=160
	plan "$ARENAC_SHARED/models/silero_vad_legacy.onnx" --dim batch=1 --dim sequence=512
else
	echo "skipped: no shared models"
fi
echo "models: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
