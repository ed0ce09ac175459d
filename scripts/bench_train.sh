#!/bin/sh
# bench_train.sh — training-step memory: for lenet, VGG-19 and ResNet-50 at
# batch 1 and 32, the arena with no recompute, the smallest budget sqrt and
# optimal checkpointing fit (from --budget-sweep: the last budget that
# fits, at 10% steps), and the recompute overhead at 50% and 33% of the
# no-recompute arena.  Prints a table; fails on nothing but a crash.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
SHARED=${ARENAC_SHARED:-../shared}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# field NAME FILE: a number from a JSON report's training object
field() {
	"$PYTHON" -c "import json,sys; print(json.load(open(sys.argv[2]))['training'][sys.argv[1]])" "$1" "$2"
}

# at MODEL BATCH BUDGET POLICY: "arena extra%" or "no fit"
at() {
	if "$ARENAC" -q --train --batch "$2" --budget "$3" --checkpoint "$4" \
		--json "$tmp/a.json" "$1" 2>/dev/null; then
		a=$(field arena_bytes "$tmp/a.json")
		r=$(field recompute_flops "$tmp/a.json")
		f=$(field forward_flops "$tmp/a.json")
		"$PYTHON" -c "print('%d (+%.1f%%)' % ($a, 100.0 * $r / $f))"
	else
		echo "no fit"
	fi
}

printf '%-16s %5s %12s %12s %12s %26s %26s %8s\n' model batch none sqrt \
	min-optimal "optimal@50%" "optimal@33%" seconds
for m in testdata/lenet.onnx "$SHARED/models/light_vgg19.onnx" \
	 "$SHARED/models/light_resnet50.onnx"; do
	[ -f "$m" ] || { echo "skipped: $m"; continue; }
	for b in 1 32; do
		t0=$(date +%s.%N)
		if ! "$ARENAC" -q --train --batch $b --json "$tmp/n.json" "$m" \
			2>"$tmp/err"; then
			printf '%-16s %5s  %s\n' "$(basename "$m" .onnx)" $b \
				"$(head -c 100 "$tmp/err")"
			continue
		fi
		none=$(field arena_bytes "$tmp/n.json")
		"$ARENAC" -q --train --batch $b --checkpoint sqrt \
			--json "$tmp/s.json" "$m"
		sqrt=$(field arena_bytes "$tmp/s.json")
		mino=$("$ARENAC" --train --batch $b --budget-sweep "$m" |
		       awk '$2 ~ /^[0-9,]+$/ { v = $2 } END { gsub(",", "", v); print v }')
		h=$(at "$m" $b $((none / 2)) optimal)
		t=$(at "$m" $b $((none / 3)) optimal)
		t1=$(date +%s.%N)
		printf '%-16s %5s %12s %12s %12s %26s %26s %8.2f\n' \
			"$(basename "$m" .onnx)" $b "$none" "$sqrt" "$mino" \
			"$h" "$t" "$(echo "$t1 - $t0" | bc)"
	done
done
