#!/bin/sh
# firmware.sh — one model to a running Cortex-M4 firmware (make firmware).
#
#   sh scripts/firmware.sh BUILD MODEL.onnx "ARENAC OPTIONS" "IN.pb ..." \
#       "OUT.pb ..."
#
# Plans MODEL with arenac (the header and the weights as a C array),
# writes the inputs as a C array (firmware/host_io carray), builds
# BUILD/firmware/NAME.elf for Arm's MPS2 AN386 board (a Cortex-M4F:
# firmware/mps2_an386.ld) from firmware/main.c, the board code
# (firmware/semihost.c), a small strcmp (firmware/strcmp.c) and the
# runtime built for the target
# (make runtime CROSS=arm-none-eabi- CPU=cortex-m4) with only the kernels
# the model uses (runtime/optable.c cut by the header), linked with
# newlib-nano and no system calls: a runtime that allocated or printed
# would not link (no _sbrk, no write).  Prints flash and RAM (text +
# data, data + bss) from arm-none-eabi-size.  With inputs or outputs it
# runs the firmware under qemu-system-arm -M mps2-an386 with semihosting
# and prints its outputs, and with OUTPUTS compares them
# (firmware/host_io compare: rtol 1e-3, atol 1e-5 of the output's scale,
# integers exactly), exiting 1 on a mismatch.  OUTPUTS may also be "host":
# the same program built for this machine is the reference.
#
# Exit: 0 built (and ran, and agreed), 1 mismatch or failed run,
# 2 missing tool or bad arguments.
set -eu
BUILD=$1 MODEL=$2 FLAGS=${3:-} INPUTS=${4:-} OUTPUTS=${5:-}
ARENAC=$BUILD/arenac
CROSS=arm-none-eabi-
CPU_FLAGS="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
CFLAGS="-std=c11 -Os -g -Wall -Wextra -Wconversion -Wno-unused-parameter"
CFLAGS="$CFLAGS -Werror -ffunction-sections -fdata-sections"
RTX=$BUILD/rt-arm-none-eabi-cortex-m4/libarenac_rt.a
for tool in ${CROSS}gcc ${CROSS}size; do
	command -v $tool >/dev/null || {
		echo "firmware: $tool not found (Debian: gcc-arm-none-eabi" \
			"libnewlib-arm-none-eabi)" >&2
		exit 2
	}
done
[ -f "$MODEL" ] || { echo "firmware: $MODEL: no such model" >&2; exit 2; }
name=$(basename "$MODEL" .onnx | tr -c 'A-Za-z0-9_\n' _)
out=$BUILD/firmware/$name
mkdir -p "$out"

# The plan: header, weights in flash.  FLAGS unquoted on purpose: it is
# a list of options.
# shellcheck disable=SC2086
"$ARENAC" -q $FLAGS --prefix net -o "$out/net.h" --weights "$out/weights.c" \
	"$MODEL"
# shellcheck disable=SC2086
"$BUILD/host_io" carray $INPUTS >"$out/inputs.c"

cc_target() {
	# shellcheck disable=SC2086
	${CROSS}gcc $CPU_FLAGS $CFLAGS -Iruntime -Ifirmware -I"$out" "$@"
}
# A plan of several memories (--memory NAME:SIZE ...): each arena in
# section .arena.NAME, which firmware/mps2_an386.ld puts in the board's
# memory of that name (blockram, psram; any other in RAM).
set --
for r in $(sed -n 's/^#define NET_REGION_\([A-Z0-9_]*\) [0-9]*$/\1/p' \
	"$out/net.h"); do
	set -- "$@" "-DNET_ARENA_${r}_SECTION=__attribute__((section(\".arena.$(echo "$r" | tr A-Z a-z)\")))"
done
cc_target -DARENAC_HEADER='"net.h"' -DLO=net -DUP=NET \
	-DNET_DEFINE_TABLES -DNET_DEFINE_ARENA \
	'-DNET_ARENA_SECTION=__attribute__((section(".arena")))' "$@" \
	-c firmware/main.c \
	-o "$out/main.o"
# The op table cut to the model's ops (runtime/optable.c): the kernels of
# the others are never linked.
cc_target -DARENAC_HEADER='"net.h"' -DARENAC_UP=NET -c runtime/optable.c \
	-o "$out/optable.o"
cc_target -c firmware/semihost.c -o "$out/semihost.o"
cc_target -c firmware/strcmp.c -o "$out/strcmp.o"
cc_target -c "$out/inputs.c" -o "$out/inputs.o"
# The weights as the generated file leaves them: no -Werror rules of ours.
${CROSS}gcc $CPU_FLAGS -std=c11 -Os -fdata-sections \
	'-DNET_WEIGHTS_SECTION=__attribute__((section(".rodata.weights")))' \
	-c "$out/weights.c" -o "$out/weights.o"
# shellcheck disable=SC2086
${CROSS}gcc $CPU_FLAGS -nostartfiles --specs=nano.specs -Wl,--gc-sections \
	-Wl,-Map="$out/$name.map" -T firmware/mps2_an386.ld -o "$out/$name.elf" \
	"$out/main.o" "$out/optable.o" "$out/semihost.o" "$out/strcmp.o" \
	"$out/inputs.o" "$out/weights.o" "$RTX" -lm
${CROSS}size "$out/$name.elf" | awk -v n="$name" 'NR == 2 {
	printf "firmware %s: flash %d bytes (code %d + data %d), RAM %d bytes " \
	       "(data %d + bss %d, the arena and the stack included)\n",
	       n, $1 + $2, $1, $2, $2 + $3, $2, $3 }'
[ -n "$INPUTS$OUTPUTS" ] || exit 0

command -v qemu-system-arm >/dev/null || {
	echo "firmware: qemu-system-arm not found (Debian: qemu-system-arm)" >&2
	exit 2
}
# The emulator never ends a hung firmware by itself; 20 minutes is far
# beyond any run here and only guards against a hang.
rc=0
timeout 1200 qemu-system-arm -M mps2-an386 -nographic -monitor none \
	-serial none -semihosting-config enable=on,target=native \
	-kernel "$out/$name.elf" >"$out/run.log" 2>&1 || rc=$?
grep -v '^[0-9a-f]*$' "$out/run.log" || true
[ "$rc" -eq 0 ] || { echo "firmware: the run failed (exit $rc)" >&2; exit 1; }
[ -n "$OUTPUTS" ] || exit 0
if [ "$OUTPUTS" = host ]; then
	cc -std=c11 -O2 -Iruntime -Ifirmware -I"$out" -DARENAC_HEADER='"net.h"' \
		-DLO=net -DUP=NET -DNET_DEFINE_TABLES -DNET_DEFINE_ARENA \
		-o "$out/host" firmware/main.c firmware/host.c \
		"$out/inputs.c" "$out/weights.c" "$BUILD/libarenac_rt.a" -lm
	"$out/host" >"$out/host.log"
	OUTPUTS=$out/host.log
fi
# shellcheck disable=SC2086
"$BUILD/host_io" compare "$out/run.log" $OUTPUTS
