#!/bin/sh
# e2e_golden.sh — plans pinned byte for byte.  For each shared model (and
# LeNet) under the default, all-switches-off, fused, tiered and training
# option sets, the JSON report and the C header are hashed and compared
# with tests/golden/sums.txt.  A refactor must leave every line alone; a
# change that means to alter plans regenerates the file with
#   sh tests/e2e_golden.sh --update
# and says in its commit message which lines moved and why.
#
# Models are planned from their own folder under their base name, so the
# hashes do not depend on where the repository or shared/ sit.
set -u
ARENAC=${ARENAC:-build/arenac}
case $ARENAC in /*) ;; *) ARENAC=$(pwd)/$ARENAC ;; esac
SHARED=${ARENAC_SHARED:-}
[ -z "$SHARED" ] && [ -d ../shared/models ] && SHARED=../shared
case $SHARED in /*|'') ;; *) SHARED=$(pwd)/$SHARED ;; esac
SUMS=$(pwd)/tests/golden/sums.txt
update=0
[ "${1:-}" = --update ] && update=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/now"

# NAME DIR MODEL OPTIONS...: one line "NAME json-sha header-sha" (or the
# exit code when arenac fails).
plan() {
	p_name=$1 p_dir=$2 p_model=$3
	shift 3
	if (cd "$p_dir" && "$ARENAC" -q --json "$tmp/r.json" -o "$tmp/r.h" \
		"$@" "$p_model") 2>"$tmp/err"; then
		echo "$p_name $(sha256sum <"$tmp/r.json" | cut -c1-16)" \
			"$(sha256sum <"$tmp/r.h" | cut -c1-16)" >>"$tmp/now"
	else
		echo "$p_name exit $?" >>"$tmp/now"
	fi
}

# Option sets: defaults; every aliasing switch off; tiers; training.
sets() {
	name=$1 dir=$2 model=$3
	shift 3
	plan "$name/default" "$dir" "$model" "$@"
	plan "$name/off" "$dir" "$model" --order file --no-views \
		--inplace none --concat copy "$@"
	plan "$name/fuse" "$dir" "$model" --fuse preact "$@"
}

tiers() {
	name=$1 dir=$2 model=$3 fast=$4
	shift 4
	plan "$name/tiers" "$dir" "$model" --memory "sram:$fast:50G" \
		--memory dram:1G:2G "$@"
}

train() {
	name=$1 dir=$2 model=$3
	shift 3
	plan "$name/train" "$dir" "$model" --train "$@"
	plan "$name/train-adam-all" "$dir" "$model" --train --optimizer adam \
		--checkpoint all "$@"
	plan "$name/train-sqrt" "$dir" "$model" --train --optimizer momentum \
		--checkpoint sqrt "$@"
}

sets lenet testdata lenet.onnx --dim N=1
tiers lenet testdata lenet.onnx 16K --dim N=1
train lenet testdata lenet.onnx --batch 8
if [ -n "$SHARED" ] && [ -d "$SHARED/models" ]; then
	M=$SHARED/models
	for m in light_bvlc_alexnet light_zfnet512 light_vgg19 light_resnet50 \
		light_shufflenet light_squeezenet light_inception_v1 \
		light_inception_v2 light_densenet121; do
		sets "$m" "$M" "$m.onnx"
	done
	for m in light_squeezenet light_resnet50 light_inception_v1; do
		tiers "$m" "$M" "$m.onnx" 1M
	done
	for m in light_bvlc_alexnet light_squeezenet light_resnet50; do
		train "$m" "$M" "$m.onnx"
	done
	sets ppocr_cls "$M" ch_ppocr_mobile_v2.0_cls_infer.onnx \
		--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=48 \
		--dim p2o.DynamicDimension.2=192
	sets ppocr_det "$M" ch_PP-OCRv4_det_infer.onnx \
		--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=96 \
		--dim p2o.DynamicDimension.2=160
	sets silero "$M" silero_vad_legacy.onnx --dim batch=1 \
		--dim sequence=512
	sets magika "$M" magika_standard_v3_3.onnx --dim-default 1
	sets yolox "$M" yolox_nano.onnx --dim-default 1
else
	echo "skipped: no shared models (only LeNet's lines checked)"
fi

if [ $update -eq 1 ]; then
	cp "$tmp/now" "$SUMS"
	echo "golden: wrote $(wc -l <"$SUMS") lines to tests/golden/sums.txt"
	exit 0
fi
pass=0
fail=0
while read -r name rest; do
	want=$(grep "^$name " "$SUMS" | cut -d' ' -f2-)
	if [ "$want" = "$rest" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $name: now '$rest', pinned '${want:-(none)}'"
	fi
done <"$tmp/now"
echo "golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
