#!/bin/sh
# demo.sh — what `make demo` shows a newcomer: plan LeNet, write every
# output, print the summary.
set -eu
B=${1:-build}
D=$B/demo
mkdir -p "$D"
"$B/arenac" --dim N=1 testdata/lenet.onnx
"$B/arenac" --dim N=1 --json "$D/lenet.json" -o "$D/lenet_arena.h" \
	--dot "$D/lenet.svg" --timeline "$D/lenet_timeline.svg" \
	--weights "$D/lenet_weights.bin" testdata/lenet.onnx
echo
echo "LeNet run by the reference runtime from the header alone (input i/n),"
echo "checked against the logits numpy computed (testdata/lenet_output_0.pb):"
${CC:-cc} -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -Iruntime -Itests -I"$B/gen" \
	-I"$D" -DARENAC_HEADER='"lenet_arena.h"' -DLO=lenet -DUP=LENET \
	-DLENET_DEFINE_ARENA -DLENET_DEFINE_TABLES -o "$D/lenet_run" tests/rt_run.c \
	"$B/obj/tests/pbread.o" "$B/obj/gen/onnx.pb-c.o" "$B/libarenac_rt.a" \
	-lprotobuf-c -lm
"$D/lenet_run" --print "$D/lenet_weights.bin" testdata/lenet_output_0.pb
echo
echo "wrote $D/lenet_arena.h (C header), $D/lenet.json (report),"
echo "      $D/lenet.svg (graph), $D/lenet_timeline.svg (memory timeline)"
