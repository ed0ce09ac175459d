#!/bin/sh
# e2e_firmware.sh — the header and the runtime on a real Cortex-M4 core:
# models are planned, cross-compiled with the weights as a C array in
# flash, linked with newlib-nano and no system calls, run in QEMU's
# mps2-an386 (Cortex-M4F) with semihosting (scripts/firmware.sh), and
# their outputs compared with the reference:
#
#   lenet            testdata's LeNet, numpy's logits; again planned in
#                    two memories, its arenas in the board's block RAM
#                    and PSRAM, also with its weights copied to PSRAM
#   quant_cnn_int8   an int8 CNN (QLinearConv, uint8 MaxPool,
#                    QLinearMatMul; 1.8 KB of weights) against the same
#                    program built for this machine (its logits are
#                    dequantised floats: compared within the tolerance)
#   PaddleOCR cls    real weights, onnxruntime's output
#   Magika           real weights, onnxruntime's output (2.6 MB arena)
#   Silero VAD v5    16 kHz (--input-value sr=16000: its Ifs fold and
#                    are inlined), an LSTM whose workspace is the plan's,
#                    onnxruntime's speech probability and new state; and
#                    with the sample rate a run-time input, the If kernel
#                    running the branch in its planned workspace (also
#                    in two memories: the workspace in PSRAM)
#
# the int8 CNN's flash less its weights is under 20,000 bytes, with no
# soft-float double or 64-bit division linked; and every
# firmware is checked with arm-none-eabi-nm: no malloc, free,
# printf family or _sbrk linked (the runtime never allocates or prints),
# nor the runtime's message formatter (its errors are a code and a
# record; only host tools format them: art_error_message);
# its arena is in the linker script's .arena section, placed there by
# the header's PREFIX_ARENA_SECTION hook; and its tables are in flash,
# nothing but the arena (and newlib's reentrancy data) in RAM.
# Skips when gcc-arm-none-eabi, newlib or qemu-system-arm is missing, and
# under the sanitizers (make sanitize: nothing of the target is
# instrumented).  Ends with "N passed, N failed".
BUILD=${BUILD:-build}
M=${ARENAC_SHARED:-../shared}/models
. "$(dirname "$0")/tally.sh"
if [ -n "${ARENAC_SANITIZE:-}" ]; then
	echo "skipped: firmware under the sanitizers (the target build is not instrumented)"
	exit 0
fi
for tool in arm-none-eabi-gcc arm-none-eabi-nm qemu-system-arm; do
	if ! command -v $tool >/dev/null; then
		echo "skipped: no $tool (Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)"
		exit 0
	fi
done
if ! echo 'int main(void){return 0;}' | arm-none-eabi-gcc -x c -mcpu=cortex-m4 \
	-mthumb --specs=nano.specs -nostartfiles -Wl,-e,main -o /dev/null - \
	2>/dev/null; then
	echo "skipped: no newlib for arm-none-eabi (Debian: libnewlib-arm-none-eabi)"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make --no-print-directory BUILD="$BUILD" runtime CROSS=arm-none-eabi- \
	CPU=cortex-m4 >"$tmp/make.log" 2>&1
rc=$?
[ $rc = 0 ] || tail -20 "$tmp/make.log"
check "make runtime CROSS=arm-none-eabi- CPU=cortex-m4, warning-free" \
	$(( rc || $(grep -c 'warning:' "$tmp/make.log") ))

# NAME MODEL FLAGS INPUTS OUTPUTS: build, run, compare, check the link.
fw() {
	sh scripts/firmware.sh "$BUILD" "$2" "$3" "$4" "$5" >"$tmp/$1.out" 2>&1
	rc=$?
	sed 's/^/     /' "$tmp/$1.out"
	check "$1 runs on the Cortex-M4 and matches" $rc
	name=$(basename "$2" .onnx | tr -c 'A-Za-z0-9_\n' _)
	elf=$BUILD/firmware/$name/$name.elf
	bad=$(arm-none-eabi-nm "$elf" 2>/dev/null | awk '$3 ~ /^(_?malloc|_malloc_r|_?free|_free_r|_?realloc|_?calloc|_sbrk|_sbrk_r|_?printf|_?v?s?n?printf|_vfprintf_r|_svfprintf_r|_write|_write_r|puts|fputs|rt_vformat|rt_format|art_error_message)$/ {print $3}' | tr '\n' ' ')
	[ -f "$elf" ] && [ -z "$bad" ]
	check "$1 links no heap, stdio or formatter${bad:+: $bad}" $?
	# The header's tables used where they are, in flash (ARENAC_RT_BIND
	# copies nothing): the only symbols in RAM (0x20000000 up) are the
	# arena, the linker script's marks and newlib's reentrancy data.
	inram=$(arm-none-eabi-nm "$elf" 2>/dev/null | awk '$1 >= "20000000" &&
		$3 !~ /^(net_arena(_[a-z0-9_]+)?|fw_[a-z_]*|_impure_ptr|impure_data|__fdlib_version)$/ {
		print $3 }' | tr '\n' ' ')
	tab=$(arm-none-eabi-nm "$elf" 2>/dev/null | awk '$3 == "net_tensors" {print $1}')
	[ -n "$tab" ] && [ "$tab" \< 20000000 ] && [ -z "$inram" ]
	check "$1's tables in flash at 0x$tab, nothing else in RAM${inram:+: $inram}" $?
	# The arena where the header's section hook put it, whole (a plan
	# of several memories: each memory's, in .arena.NAME).
	want=$(awk '/^#define NET_ARENA_[A-Z0-9_]*SIZE [0-9]*u$/ {
		n[$2 == "NET_ARENA_SIZE"] += $3 } /^#define NET_NUM_REGIONS/ {
		r = 1 } END { print r ? n[0] : n[1] }' "$BUILD/firmware/$name/net.h")
	got=$(arm-none-eabi-size -A "$elf" 2>/dev/null |
		awk '$1 ~ /^\.arena/ {n += $2} END {print n}')
	[ -n "$want" ] && [ "$got" -ge "$want" ] && [ "$got" -lt $((want + 16)) ]
	check "$1's arena in .arena through NET_ARENA_SECTION ($got of $want bytes)" $?
}

fw lenet testdata/lenet.onnx "--dim N=1" "" testdata/lenet_output_0.pb
# Two memories of the board (QEMU's mps2-an386 map, hw/arm/mps2.c
# mps2_common_init): the fast one in the 16 KiB of block RAM at
# 0x01000000, the other in the 16 MiB of PSRAM at 0x21000000, each arena
# placed by its section hook (firmware/mps2_an386.ld), neither in the
# RAM of the stack.
# Again with the weights copied from flash to the start of the PSRAM
# arena (--weights-in) and read there.
for w in "" " --weights-in psram"; do
	fw "lenet (two memories$w)" testdata/lenet.onnx \
		"--dim N=1 --memory blockram:16K --memory psram:16M$w" "" \
		testdata/lenet_output_0.pb
	at=$(arm-none-eabi-nm "$BUILD/firmware/lenet/lenet.elf" 2>/dev/null | awk '
		$3 == "net_arena_blockram" && $1 >= "01000000" && $1 < "01004000" ||
		$3 == "net_arena_psram" && $1 >= "21000000" && $1 < "22000000" {
			printf "%s at 0x%s ", $3, $1 }')
	[ "$(echo "$at" | wc -w)" = 6 ]
	check "lenet's two arenas in block RAM and PSRAM$w: $at" $?
done
fw quant_cnn_int8 testdata/quant_cnn_int8.onnx "--dim-default 1" "" host
# Its flash (text + data, arm-none-eabi-size) less its weights' bytes:
# what the runtime, the kernels it runs, the tables and newlib take.
# Issue 29 asks for 20 KB; 19,648 bytes since the requantisation, the
# pools and the quantizers compute without double and index division is
# 32-bit (23,000 before), so the bound is 20,000 bytes.
q=$BUILD/firmware/quant_cnn_int8
wbytes=$(sed -n 's/^#define NET_WEIGHTS_SIZE \([0-9]*\)u$/\1/p' "$q/net.h")
code=$(arm-none-eabi-size "$q/quant_cnn_int8.elf" 2>/dev/null |
	awk -v w="$wbytes" 'NR == 2 && w != "" {print $1 + $2 - w}')
[ -n "$code" ] && [ "$code" -lt 20000 ]
check "quant_cnn_int8's flash less its $wbytes bytes of weights: $code bytes, under 20,000" $?
# Nor soft-float double nor 64-bit division: an FPv4-SP core's int8
# model computes in integers and float32 only.
# (The pattern on the line of its ~: mawk, Debian's awk, takes no
# newline there, and a syntax error left the list empty, the check
# passed whatever was linked.)
soft=$(arm-none-eabi-nm "$q/quant_cnn_int8.elf" 2>/dev/null | awk '
	$3 ~ /^(__aeabi_(d[a-z0-9]*|[a-z]*2d|u?l2f|f2u?lz|u?ldivmod)|__udivmoddi4)$/ {
		print $3 }' | tr '\n' ' ')
[ -f "$q/quant_cnn_int8.elf" ] && [ -z "$soft" ]
check "quant_cnn_int8 links no soft-float double or 64-bit division${soft:+: $soft}" $?
# The same model planned channels-last (--layout nhwc, the Transposes
# at its NCHW input and output included) runs on the target as on the
# host; tests/e2e_nhwc.py shows the host's run equals the NCHW plan's.
cp testdata/quant_cnn_int8.onnx "$tmp/quant_cnn_int8_nhwc.onnx"
fw quant_cnn_int8_nhwc "$tmp/quant_cnn_int8_nhwc.onnx" \
	"--dim-default 1 --layout nhwc" "" host
cls=$M/ch_ppocr_mobile_v2.0_cls_infer
mg=$M/magika_standard_v3_3
if [ -f "$cls.onnx" ]; then
	fw paddleocr_cls "$cls.onnx" "--dim-default 1 --input-shape x=1x3x48x192" \
		"${cls}_input_0.pb" "${cls}_output_0.pb"
	fw magika "$mg.onnx" "--dim-default 1" "${mg}_input_0.pb" \
		"${mg}_output_0.pb"
else
	echo "skipped: no shared models (PaddleOCR cls, Magika)"
fi
vad=$M/silero_vad_v5
if [ -f "$vad.onnx" ]; then
	fw silero_vad_v5 "$vad.onnx" "--input-shape input=1x512 --input-shape state=2x1x128 --input-value sr=16000" \
		"${vad}_input_0.pb ${vad}_input_1.pb" \
		"${vad}_output_0.pb ${vad}_output_1.pb"
	fw "silero_vad_v5 (run-time If)" "$vad.onnx" \
		"--input-shape input=1x512 --input-shape state=2x1x128" \
		"${vad}_input_0.pb ${vad}_input_1.pb ${vad}_input_2.pb" \
		"${vad}_output_0.pb ${vad}_output_1.pb"
	# In two memories: the If's branches run in its workspace in PSRAM.
	fw "silero_vad_v5 (run-time If, two memories)" "$vad.onnx" \
		"--input-shape input=1x512 --input-shape state=2x1x128 --memory blockram:4K --memory psram:16M" \
		"${vad}_input_0.pb ${vad}_input_1.pb ${vad}_input_2.pb" \
		"${vad}_output_0.pb ${vad}_output_1.pb"
else
	echo "skipped: no shared silero_vad_v5.onnx"
fi

echo "firmware: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
