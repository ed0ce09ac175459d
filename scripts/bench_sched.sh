#!/bin/sh
# bench_sched.sh — what the step order and each aliasing switch save, per
# shared model.  Columns (bytes): the file order without aliasing (the
# reference), the memory-aware order without aliasing, then with views,
# with in-place added, with concat elision added (the defaults), and the
# final arena; then the saving against the reference and the time the
# memory-aware scheduler adds to planning (median of 3, the defaults'
# plan time minus the file order's); last the arena and saving with
# --fuse preact (opt-in: the runtime needs its fused kernel).  Targets: arena <= reference on every
# model, >= 20% saving on DenseNet-121, Inception v1/v2 and SqueezeNet,
# scheduling under 1 s on DenseNet-121.
set -u
ARENAC=${ARENAC:-build/arenac}
M=${ARENAC_SHARED:-../shared}/models
if [ ! -d "$M" ]; then
	echo "skipped: no shared models"
	exit 0
fi

# stat NAME ARGS...: the number on arenac's "stats: NAME" line
stat() {
	name=$1
	shift
	"$ARENAC" -q --stats "$@" 2>&1 >/dev/null |
		sed -n "s/^stats: $name \([0-9,.]*\).*/\1/p" | tr -d ,
}

median3() {
	printf '%s\n%s\n%s\n' "$1" "$2" "$3" | sort -g | sed -n 2p
}

plan_ms() {
	median3 "$(stat 'plan time' "$@")" "$(stat 'plan time' "$@")" \
		"$(stat 'plan time' "$@")"
}

printf '%-32s %11s %11s %11s %11s %11s %11s %7s %8s %11s %7s\n' model \
	file-order memory +views +inplace +elide arena saving sched-ms \
	+fuse saving
for m in light_bvlc_alexnet light_zfnet512 light_vgg19 light_resnet50 \
	light_shufflenet light_squeezenet light_inception_v1 \
	light_inception_v2 light_densenet121 ch_ppocr_mobile_v2.0_cls_infer \
	ch_PP-OCRv4_det_infer silero_vad_legacy; do
	[ -f "$M/$m.onnx" ] || continue
	case $m in
	ch_ppocr*) dims="--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=48 --dim p2o.DynamicDimension.2=192" ;;
	ch_PP-OCR*) dims="--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=96 --dim p2o.DynamicDimension.2=160" ;;
	silero*) dims="--dim batch=1 --dim sequence=512" ;;
	*) dims="" ;;
	esac
	f="$M/$m.onnx $dims"
	ref=$(stat file_order_peak_bytes $f)
	mem=$(stat lower_bound_bytes --no-views --inplace none --concat copy $f)
	vw=$(stat lower_bound_bytes --inplace none --concat copy $f)
	ip=$(stat lower_bound_bytes --concat copy $f)
	el=$(stat lower_bound_bytes $f)
	ar=$(stat arena_bytes $f)
	fu=$(stat arena_bytes --fuse preact $f)
	t=$(awk -v a="$(plan_ms $f)" -v b="$(plan_ms --order file $f)" \
		'BEGIN { printf "%.1f", a - b }')
	awk -v m="$m" -v ref="$ref" -v mem="$mem" -v vw="$vw" -v ip="$ip" \
		-v el="$el" -v ar="$ar" -v t="$t" -v fu="$fu" 'BEGIN {
		s = ref > 0 ? 100 * (1 - ar / ref) : 0
		fs = ref > 0 ? 100 * (1 - fu / ref) : 0
		note = ar > ref ? "  ABOVE REFERENCE" : ""
		if (m ~ /densenet|inception|squeezenet/ && s < 20)
			note = note (fs >= 20 ? "  20% only with --fuse" : "  below the 20% target")
		if (m ~ /densenet/ && t > 1000)
			note = note "  scheduling over 1 s"
		printf "%-32s %11d %11d %11d %11d %11d %11d %6.1f%% %8s " \
			"%11d %6.1f%%%s\n", m, ref, mem, vw, ip, el, ar, s, t,
			fu, fs, note
	}'
done
