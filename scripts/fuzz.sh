#!/bin/sh
# fuzz.sh — `make fuzz`: runs the libFuzzer pipeline target for a bounded
# time and reports what it did.
#
#   sh scripts/fuzz.sh FUZZER SECONDS
#
# The corpus starts from every model the project knows (testdata, the bad
# catalogue, the shared onnx-small graphs, ONNX's node tests) and grows in FUZZER's folder
# between runs.  Any crash, leak, timeout or out-of-memory stops the run,
# leaves the input as crash-*/leak-*/timeout-*/oom-* there and fails with
# exit 1: commit such an input to testdata/bad/ once the bug is fixed.
set -u
FUZZER=$1
SECONDS_=${2:-60}
DIR=$(dirname "$FUZZER")
CORPUS=$DIR/corpus
SEEDS=$DIR/seeds
LOG=$DIR/fuzz.log
if [ -z "${ARENAC_SHARED:-}" ] && [ -d ../shared/models ]; then
	ARENAC_SHARED=../shared
fi
mkdir -p "$CORPUS" "$SEEDS" "$DIR/artifacts"
rm -f "$SEEDS"/*
for f in testdata/*.onnx testdata/bad/*.onnx; do
	[ -f "$f" ] && cp "$f" "$SEEDS/$(echo "$f" | tr / _)"
done
if [ -d "${ARENAC_SHARED:-/nonexistent}/models/onnx-small" ]; then
	for f in "$ARENAC_SHARED"/models/onnx-small/*/model.onnx; do
		cp "$f" "$SEEDS/$(basename "$(dirname "$f")").onnx"
	done
else
	echo "fuzz: skipped onnx-small seeds: no shared models"
fi
# ONNX's node tests: one small model per op and form (libonnx-testdata).
for f in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
	[ -f "$f" ] && cp "$f" "$SEEDS/node_$(basename "$(dirname "$f")").onnx"
done
# lenet.onnx (1.7 MB) is the largest seed; mutations may grow past it a bit.
start=$(date +%s)
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
"$FUZZER" -max_total_time="$SECONDS_" -timeout=10 -rss_limit_mb=2048 \
	-max_len=2097152 -print_final_stats=1 \
	-artifact_prefix="$DIR/artifacts/" "$CORPUS" "$SEEDS" >"$LOG" 2>&1
rc=$?
took=$(($(date +%s) - start))
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$LOG" | tail -1)
cov=$(grep -o 'cov: [0-9]*' "$LOG" | tail -1)
found=$(ls "$DIR/artifacts" | grep -c -E '^(crash|leak|timeout|oom|slow-unit)-')
echo "fuzz: ${execs:-0} executions in ${took} s (${rate:-0}/s), ${cov:-cov: ?}," \
	"corpus $(ls "$CORPUS" | wc -l) inputs, $found finding(s) kept in $DIR/artifacts"
if [ "$rc" -ne 0 ]; then
	grep -E 'ERROR|SUMMARY|Test unit written' "$LOG" | head -20
	echo "fuzz: FAILED (exit $rc); full log in $LOG"
	exit 1
fi
echo "fuzz: no crash, leak, timeout or out-of-memory"
