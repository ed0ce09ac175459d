#!/bin/sh
# doc_pictures.sh — regenerates the README's pictures in doc/: LeNet's
# memory timeline, a VGG-19 training step under --arena-budget (phase bands,
# recomputed tensors), and ResNet-50's training step under --arena-budget set
# against the same step without checkpoints (--timeline-compare).  The
# last two need the shared models ($ARENAC_SHARED/models).
set -eu
B=${1:-build}
S=${ARENAC_SHARED:-../shared}/models
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$B/arenac" -q --dim N=1 --timeline doc/lenet_timeline.png testdata/lenet.onnx
if [ ! -d "$S" ]; then
	echo "skipped: no shared models in $S (only doc/lenet_timeline.png)"
	exit 0
fi
"$B/arenac" -q --train --dim-default 1 --arena-budget 45M \
	--timeline doc/vgg19_train_timeline.png "$S/light_vgg19.onnx"
"$B/arenac" -q --train --dim-default 1 --json "$T/no_checkpoints.json" \
	"$S/light_resnet50.onnx"
"$B/arenac" -q --train --dim-default 1 --arena-budget 40M \
	--timeline doc/resnet50_budget_compare.png \
	--timeline-compare "$T/no_checkpoints.json" "$S/light_resnet50.onnx"
echo "wrote doc/lenet_timeline.png doc/vgg19_train_timeline.png" \
	"doc/resnet50_budget_compare.png"
