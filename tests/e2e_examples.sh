#!/bin/sh
# e2e_examples.sh — the programs in examples/ build with `make examples`
# and compute the right numbers.  examples/lenet.c runs LeNet through the
# reference runtime from its header's tables and macros alone, once with
# the input and output in the arena and once in buffers of its own
# (--io separate); both must print the logits numpy computed when it
# wrote the model (testdata/lenet_output_0.pb, rtol 1e-4, atol 1e-6), and
# the same bits as each other.  Under `make check` the make variables of
# the calling build (BUILD, SANFLAGS) reach `make examples` too.
set -u
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tally.sh"

make --no-print-directory -s examples BUILD="$BUILD" >"$tmp/make.log" 2>&1
rc=$?
[ $rc = 0 ] || tail -20 "$tmp/make.log"
check "make examples" $rc

for layout in arena io_separate; do
	bin=$BUILD/examples/$layout/lenet
	if [ -x "$bin" ] && "$bin" >"$tmp/$layout.out" 2>&1; then
		check "lenet ($layout) runs: $(tail -n 1 "$tmp/$layout.out")" 0
	else
		check "lenet ($layout) runs: $(tail -n 2 "$tmp/$layout.out" 2>/dev/null)" 1
		continue
	fi
	if ! "$PYTHON" -c 'import onnx, numpy' 2>/dev/null; then
		echo "skipped: no python3-onnx to read testdata/lenet_output_0.pb"
		continue
	fi
	"$PYTHON" - "$tmp/$layout.out" testdata/lenet_output_0.pb <<'EOF'
import re, sys
import numpy as np
from onnx import TensorProto, numpy_helper
got = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\S+)\[(\d+)\] = (\S+)$", line)
    if m:
        got.setdefault(m.group(1), []).append(float(m.group(3)))
t = TensorProto()
t.ParseFromString(open(sys.argv[2], "rb").read())
want = numpy_helper.to_array(t).reshape(-1)
y = np.array(got.get("logits", []))
if y.shape != want.shape or not np.allclose(y, want, rtol=1e-4, atol=1e-6):
    print("logits %s, want %s" % (y, want))
    sys.exit(1)
print("%d logits, max abs err %.3g" % (len(y), np.max(np.abs(y - want))))
EOF
	check "lenet ($layout) against numpy" $?
done
cmp -s "$tmp/arena.out" "$tmp/io_separate.out"
check "both layouts print the same bits" $?

echo "examples: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
