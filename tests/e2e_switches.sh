#!/bin/sh
# e2e_switches.sh — every shared model under the scheduling and aliasing
# switches (--order, --no-views, --inplace, --concat), each plan through the
# verifier and the poison executor (--selfcheck).  Small models get all 16
# combinations; the large ones a covering subset: all off, all on, and each
# switch flipped alone from the defaults; --fuse preact on three models
# with chains to fuse, with the aliasing on and off.  Training steps
# (--train) of LeNet and five CNNs go through the same checks, with and
# without a budget.  Under the sanitizers only LeNet gets all 16, and every
# other model all off and the defaults.
set -u
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
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
		return 1
	fi
}

all16() {
	if [ -n "${ARENAC_SANITIZE:-}" ] && [ "$1" != testdata/lenet.onnx ]; then
		covering "$@"
		return
	fi
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

# A training step with no recompute, then sqrt checkpoints under 70% of
# its arena.  sqrt is a fixed selection: where its arena stays above that
# (the peak at the first layers' gradients, which no recompute lowers),
# exit 3 naming the budget ("above the budget of") is the right answer;
# any other failure is not.
train() {
	run --train "$@" || return
	full=$("$PYTHON" -c 'import json, sys
print(json.load(open(sys.argv[1]))["arena_bytes"])' "$tmp/r.json")
	"$ARENAC" -q --selfcheck --json /dev/null --train --checkpoint sqrt \
		--arena-budget $((full * 7 / 10)) "$@" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 0 ] ||
	   { [ $rc -eq 3 ] && grep -q "above the budget of" "$tmp/err"; }; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL --train --checkpoint sqrt (70%) $*: $(cat "$tmp/err")"
	fi
}

# Under the sanitizers (ARENAC_SANITIZE, 5-20 times slower) the plain
# run's coverage stands, and each model gets all-off and the defaults.
covering() {
	run --order file --no-views --inplace none --concat copy "$@"
	run "$@"
	[ -n "${ARENAC_SANITIZE:-}" ] && return
	run --order file "$@"
	run --no-views "$@"
	run --inplace none "$@"
	run --concat copy "$@"
}

all16 testdata/lenet.onnx --dim N=1
train testdata/lenet.onnx --batch 8
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
	# Prologues fused into convolutions, with and without the aliasing.
	for m in light_densenet121 light_inception_v2 light_resnet50; do
		run --fuse preact "$M/$m.onnx"
		run --fuse preact --order file --no-views --inplace none \
			--concat copy "$M/$m.onnx"
	done
	# Dropout after Relu (alexnet), Concat -> Dropout (squeezenet,
	# inception_v1), channel shuffles (shufflenet), batch-norm gradients
	# and residual sums (resnet50): about 10 s of the 35 s all nine take.
	for m in light_bvlc_alexnet light_squeezenet light_inception_v1 \
		light_shufflenet light_resnet50; do
		train "$M/$m.onnx"
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
