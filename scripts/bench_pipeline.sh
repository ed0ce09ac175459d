#!/bin/sh
# bench_pipeline.sh — the whole pipeline against onnx's own Python tools.
# For each model, medians of 11 runs of
#   arenac      the process, from file to finished header and JSON (load,
#               infer, order, plan, verify, write);
#   onnx_proc   a Python process that imports onnx and runs onnx.load and
#               onnx.shape_inference.infer_shapes on the file: what a user
#               who checks shapes with onnx's tools waits for;
#   onnx_call   the two calls alone, inside one warm Python process;
# and the ratios of both to arenac.  The light models carry their weights
# as ConstantOfShape fills, which arenac computes only for --weights.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
S=${ARENAC_SHARED:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Median wall milliseconds of 11 runs of the command.
median_ms() {
	for i in 1 2 3 4 5 6 7 8 9 10 11; do
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1
		e=$(date +%s%N)
		echo $(((e - s) / 1000))
	done | sort -n | sed -n 6p | awk '{printf "%.1f", $1 / 1000}'
}

ratio() {
	awk -v o="$1" -v a="$2" 'BEGIN { if (a > 0 && o + 0 > 0)
		printf "%.1fx", o / a; else print "n/a" }'
}

onnx_ms() {
	"$PYTHON" - "$1" <<'PY' 2>/dev/null || echo n/a
import sys, time
import onnx
t = []
for _ in range(11):
    a = time.perf_counter()
    m = onnx.load(sys.argv[1])
    onnx.shape_inference.infer_shapes(m)
    t.append(time.perf_counter() - a)
print("%.1f" % (sorted(t)[5] * 1000))
PY
}

printf '%-22s %10s %10s %10s %10s %10s\n' model arenac_ms onnx_proc \
	ratio onnx_call ratio
if [ -z "$S" ] || [ ! -d "$S/models" ]; then
	echo "skipped: no shared models"
	exit 0
fi
for m in light_densenet121 light_resnet50 light_inception_v2 light_vgg19; do
	f=$S/models/$m.onnx
	a=$(median_ms "$ARENAC" -q -o "$tmp/x.h" --json "$tmp/x.json" "$f")
	p=$(median_ms "$PYTHON" -c 'import sys, onnx
onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1]))' "$f")
	o=$(onnx_ms "$f")
	printf '%-22s %10s %10s %10s %10s %10s\n' "$m" "$a" "$p" \
		"$(ratio "$p" "$a")" "$o" "$(ratio "$o" "$a")"
done
