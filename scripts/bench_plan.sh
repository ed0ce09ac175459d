#!/bin/sh
# bench_plan.sh — the planner on every model: arena against the proven lower
# bound, the method that got there, and the planning time (median of 3,
# from --stats; loading and shape inference are not included).
ARENAC=${ARENAC:-build/arenac}
S=${ARENAC_SHARED:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

row() {
	name=$1
	shift
	for i in 1 2 3; do
		"$ARENAC" -q --stats --json "$tmp/r.json" "$@" 2>"$tmp/s$i" || {
			printf '%-42s failed: %s\n' "$name" "$(tail -1 "$tmp/s$i")"
			return
		}
	done
	ms=$(for i in 1 2 3; do sed -n 's/^stats: plan time \([0-9.]*\) ms/\1/p' "$tmp/s$i"; done |
		sort -n | sed -n 2p)
	${PYTHON:-/usr/bin/python3} - "$tmp/r.json" "$name" "$ms" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a, lb = r["arena_bytes"], r["lower_bound_bytes"]
print("%-42s %12d %12d %7.4f  %-14s %-6s %9s" % (sys.argv[2], a, lb,
      a / lb if lb else 1.0, r["algorithm"], "yes" if r["optimal"] else "no",
      sys.argv[3]))
PY
}

printf '%-42s %12s %12s %7s  %-14s %-6s %9s\n' model arena lower_bound ratio \
	algorithm proven plan_ms
row lenet testdata/lenet.onnx --dim N=1
row lenet_b64 testdata/lenet.onnx --dim N=64
if [ -z "$S" ] || [ ! -d "$S/models" ]; then
	echo "skipped: no shared models"
	exit 0
fi
for m in "$S"/models/light_*.onnx; do
	row "$(basename "$m" .onnx)" "$m"
	row "$(basename "$m" .onnx) (file order, no alias)" "$m" --order file \
		--no-views --inplace=none --concat=copy
done
P=p2o.DynamicDimension
row ch_ppocr_mobile_v2.0_cls "$S/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" \
	--dim $P.0=1 --dim $P.1=48 --dim $P.2=192
row ch_PP-OCRv4_det "$S/models/ch_PP-OCRv4_det_infer.onnx" \
	--dim $P.0=1 --dim $P.1=96 --dim $P.2=160
row silero_vad_legacy "$S/models/silero_vad_legacy.onnx" --dim batch=1 --dim sequence=512
