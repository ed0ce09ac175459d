#!/bin/sh
# bench_nodesuite.sh — the ONNX backend node tests (libonnx-testdata):
# how many arenac plans with exact shapes, how many for a bound (sizes
# known only at run time), and how many it refuses, by reason; then the
# same for the tests rerun with their small inputs made constants and
# with --bound from the expected output (tests/e2e_nodesuite.py checks
# every result against the expected outputs), and the suite's wall time.
set -eu
PYTHON=${PYTHON:-/usr/bin/python3}
if [ ! -d /usr/share/libonnx-testdata/data/node ]; then
	echo "skipped: libonnx-testdata is not installed"
	exit 0
fi
start=$(date +%s.%N)
"$PYTHON" tests/e2e_nodesuite.py --counts | grep -v "^FAIL"
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" \
	'BEGIN { printf "wall time: %.1f s (2 jobs)\n", e - s }'
