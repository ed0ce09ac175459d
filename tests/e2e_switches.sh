#!/bin/sh
# e2e_switches.sh — every shared model under the scheduling and aliasing
# switches (--order, --no-views, --inplace, --concat), each plan through the
# verifier and the poison executor (--selfcheck).  Small models get all 16
# combinations; the large ones a covering subset: all off, all on, and each
# switch flipped alone from the defaults.
set -u
ARENAC=${ARENAC:-build/arenac}
SHARED=${ARENAC_SHARED:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

run() {
	if "$ARENAC" -q --selfcheck --json "$tmp/r.json" "$@" 2>"$tmp/err"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $*: $(cat "$tmp/err")"
	fi
}

all16() {
	for o in file memory; do
		for v in "" --no-views; do
			for i in none elementwise; do
				for c in copy elide; do
					run --order $o $v --inplace $i \
						--concat $c "$@"
				done
			done
		done
	done
}

covering() {
	run --order file --no-views --inplace none --concat copy "$@"
	run "$@"
	run --order file "$@"
	run --no-views "$@"
	run --inplace none "$@"
	run --concat copy "$@"
}

all16 testdata/lenet.onnx --dim N=1
if [ -n "$SHARED" ] && [ -d "$SHARED/models" ]; then
	M=$SHARED/models
	for m in light_squeezenet light_inception_v1; do
		all16 "$M/$m.onnx"
	done
	for m in light_bvlc_alexnet light_zfnet512 light_vgg19 \
		light_resnet50 light_shufflenet light_inception_v2 \
		light_densenet121; do
		covering "$M/$m.onnx"
	done
	covering "$M/ch_ppocr_mobile_v2.0_cls_infer.onnx" \
		--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=48 \
		--dim p2o.DynamicDimension.2=192
	covering "$M/ch_PP-OCRv4_det_infer.onnx" \
		--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=96 \
		--dim p2o.DynamicDimension.2=160
	covering "$M/silero_vad_legacy.onnx" --dim batch=1 --dim sequence=512
	for d in "$M"/onnx-small/*/; do
		[ -f "$d/model.onnx" ] || continue
		# Models arenac refuses on purpose (sequences, strings) are
		# e2e_bad's business; plan the rest.
		"$ARENAC" -q "$d/model.onnx" --dim-default 2 >/dev/null 2>&1 ||
			continue
		covering "$d/model.onnx" --dim-default 2
	done
else
	echo "skipped: no shared models"
fi
echo "switches: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
