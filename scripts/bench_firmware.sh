#!/bin/sh
# bench_firmware.sh — flash and RAM of the Cortex-M4 firmware of each
# model (scripts/firmware.sh, arm-none-eabi-size; Silero VAD v5 both
# with its If inlined and run at run time), with the kernels cut to
# the model's ops and, for comparison, with every kernel linked.  Prints
# a skipped line without the Arm toolchain.
set -u
BUILD=${BUILD:-build}
M=${ARENAC_SHARED:-../shared}/models
command -v arm-none-eabi-gcc >/dev/null || {
	echo "skipped: no arm-none-eabi-gcc (Debian: gcc-arm-none-eabi)"
	exit 0
}
make --no-print-directory BUILD="$BUILD" runtime CROSS=arm-none-eabi- \
	CPU=cortex-m4 "$BUILD/host_io" >/dev/null || exit 1
printf '%-16s %12s %12s %10s %12s\n' model flash RAM arena "flash (all)"
row() {
	name=$1 model=$2 flags=$3
	[ -f "$model" ] || return 0
	line=$(sh scripts/firmware.sh "$BUILD" "$model" "$flags" "" "" |
		grep '^firmware ')
	id=$(basename "$model" .onnx | tr -c 'A-Za-z0-9_\n' _)
	out=$BUILD/firmware/$id
	# The same link with the library's whole op table.
	all=$(arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard \
		-mfpu=fpv4-sp-d16 -nostartfiles --specs=nano.specs \
		-Wl,--gc-sections -T firmware/mps2_an386.ld -o "$out/all.elf" \
		"$out/main.o" "$out/semihost.o" "$out/strcmp.o" "$out/inputs.o" \
		"$out/weights.o" "$BUILD/rt-arm-none-eabi-cortex-m4/libarenac_rt.a" \
		-lm && arm-none-eabi-size "$out/all.elf" |
		awk 'NR == 2 {print $1 + $2}')
	arena=$(sed -n 's/^#define NET_ARENA_SIZE \([0-9]*\)u$/\1/p' "$out/net.h")
	echo "$line" | awk -v n="$name" -v a="$arena" -v all="$all" '{
		printf "%-16s %12d %12d %10d %12d\n", n, $4, $12, a, all }'
}
row lenet testdata/lenet.onnx "--dim N=1"
row quant_cnn_int8 testdata/quant_cnn_int8.onnx "--dim-default 1"
row paddleocr_cls "$M/ch_ppocr_mobile_v2.0_cls_infer.onnx" \
	"--dim-default 1 --input-shape x=1x3x48x192"
row magika "$M/magika_standard_v3_3.onnx" "--dim-default 1"
row silero_v5_16k "$M/silero_vad_v5.onnx" \
	"--input-shape input=1x512 --input-shape state=2x1x128 --input-value sr=16000"
# The sample rate a run-time input: the If kernel and both branches' tables.
row silero_v5_if "$M/silero_vad_v5.onnx" \
	"--input-shape input=1x512 --input-shape state=2x1x128"
# The tables without names (--strip-names): the flash they held.
row paddleocr_strip "$M/ch_ppocr_mobile_v2.0_cls_infer.onnx" \
	"--dim-default 1 --input-shape x=1x3x48x192 --strip-names"
