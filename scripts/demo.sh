#!/bin/sh
# demo.sh — what `make demo` shows a newcomer: plan LeNet, write every
# output, print the summary.
set -eu
B=${1:-build}
D=$B/demo
mkdir -p "$D"
"$B/arenac" --dim N=1 testdata/lenet.onnx
"$B/arenac" --dim N=1 --json "$D/lenet.json" -o "$D/lenet_arena.h" \
	--dot "$D/lenet.svg" --timeline "$D/lenet_timeline.svg" testdata/lenet.onnx
echo
echo "wrote $D/lenet_arena.h (C header), $D/lenet.json (report),"
echo "      $D/lenet.svg (graph), $D/lenet_timeline.svg (memory timeline)"
