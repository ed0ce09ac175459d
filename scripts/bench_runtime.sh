#!/bin/sh
# bench_runtime.sh — the reference runtime on each shared light_* model:
# wall time of one inference (mean of 3, random arena), and the arena the
# plan uses beside the arena of a naive run that gives every tensor its
# own buffer; DenseNet-121 again with --fuse preact; the transformer-style
# Magika, the YOLOX-nano detector, PaddleOCR's classifier and detector,
# Silero VAD (its If run at run time) and the dynamically quantised
# YOLOv8n on their reference inputs; last the
# ONNX node suite's counts (tests/e2e_node_runtime.py).  Needs the runtime
# library (make bench and make test-runtime build it).
set -eu
BUILD=${BUILD:-build}
ARENAC=${ARENAC:-$BUILD/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
M=${ARENAC_SHARED:-../shared}/models
if [ ! -f "$BUILD/libarenac_rt.a" ] || [ ! -d "$M" ]; then
	echo "skipped: needs $BUILD/libarenac_rt.a and $M"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf "%-22s %10s %14s %14s %7s\n" model "ms/run" "arena" "naive arena" "saved"
# row LABEL MODEL [--input X.pb ...] [ARENAC OPTIONS...]
row() {
	label=$1 model=$2 input=
	shift 2
	while [ "${1:-}" = --input ]; do
		input="$input --input $2"
		shift 2
	done
	stem=$(basename "$model" .onnx)
	"$ARENAC" -q --prefix m -o "$tmp/m.h" --weights "$tmp/m.bin" "$@" \
		"$model"
	$CC -std=c11 -O0 -D_POSIX_C_SOURCE=200809L -Iruntime -Itests \
		-I"$BUILD/gen" -I"$tmp" -DARENAC_HEADER='"m.h"' -DLO=m -DUP=M \
		-DM_DEFINE_ARENA -DM_DEFINE_TABLES -o "$tmp/rt" tests/rt_run.c \
		"$BUILD/obj/tests/pbread.o" "$BUILD/obj/gen/onnx.pb-c.o" \
		"$BUILD/libarenac_rt.a" -lprotobuf-c -lm
	# Matching is the tests' business (e2e_runtime.sh): figures only.
	"$tmp/rt" --repeat 3 --fill random $input "$tmp/m.bin" \
		"$M/${stem}_output_0.pb" 2>/dev/null |
		sed -n 's/.*; \([0-9.]*\) ms; arena \([0-9]*\), one buffer per tensor \([0-9]*\)/\1 \2 \3/p' |
		awk -v m="$label" '{ printf "%-22s %10s %14s %14s %6.1f%%\n", m, $1, $2, $3, 100 * (1 - $2 / $3) }'
	rm -f "$tmp/m.bin"
}

for model in "$M"/light_*.onnx; do
	row "$(basename "$model" .onnx)" "$model"
done
row "densenet121 +fuse" "$M/light_densenet121.onnx" --fuse preact
row magika_standard_v3_3 "$M/magika_standard_v3_3.onnx" \
	--input "$M/magika_standard_v3_3_input_0.pb" --dim unk__214=1
row yolox_nano "$M/yolox_nano.onnx" --input "$M/yolox_nano_input_0.pb"
for stem in ch_ppocr_mobile_v2.0_cls_infer ch_PP-OCRv4_det_infer; do
	row "$(echo "$stem" | cut -c1-22)" "$M/$stem.onnx" \
		--input "$M/${stem}_input_0.pb" --dim-default 1 \
		--input-shape x=$("$PYTHON" -c "
import onnx, sys
t = onnx.load_tensor(sys.argv[1])
print('x'.join(map(str, t.dims)))" "$M/${stem}_input_0.pb")
done
# Silero with the sample rate a run-time input: the If kernel's branch.
v=$M/silero_vad_legacy
row "silero_vad_legacy (If)" "$v.onnx" --input "${v}_input_0.pb" \
	--input "${v}_input_1.pb" --input "${v}_input_2.pb" \
	--input "${v}_input_3.pb" --dim batch=1 --dim sequence=512
v=$M/silero_vad_v5
row "silero_vad_v5 (If)" "$v.onnx" --input "${v}_input_0.pb" \
	--input "${v}_input_1.pb" --input "${v}_input_2.pb" \
	--input-shape input=1x512 --input-shape state=2x1x128
row yolov8n_int8 "$M/yolov8n_int8.onnx" --input "$M/yolov8n_int8_input_0.pb"

echo
echo "ONNX node suite through the runtime (tests/e2e_node_runtime.py):"
BUILD=$BUILD ARENAC=$ARENAC CC=$CC "$PYTHON" tests/e2e_node_runtime.py |
	grep -E '^(node tests|not run|skipped)' || true
