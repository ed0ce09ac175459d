#!/bin/sh
# run.sh — runs every test program and end-to-end script, then prints one
# closing line "N passed, N failed".  Exits non-zero if anything failed.
# Each cmocka binary tests/test_* and each tests/e2e_*.sh / tests/e2e_*.py
# counts as one suite; cmocka prints its own per-test summary lines.
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
export BUILD PYTHON
export ARENAC="${ARENAC:-$BUILD/arenac}"
if [ -z "${ARENAC_SHARED:-}" ] && [ -d ../shared/models ]; then
	ARENAC_SHARED=../shared
fi
export ARENAC_SHARED="${ARENAC_SHARED:-}"
[ -d "${ARENAC_SHARED:-/nonexistent}/models" ] ||
	echo "skipped: no shared models (set ARENAC_SHARED or put shared/ beside the repository)"
pass=0
fail=0
failed=""
# Each suite's wall time goes to the log (never into a verdict), so a slow
# suite shows where make check's minutes go.
run() {
	name=$1
	shift
	echo "== $name"
	t0=$(date +%s)
	if "$@"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $name"
	fi
	echo "== $name: $(($(date +%s) - t0)) s"
}
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run "$(basename "$t")" "$t"
done
for t in tests/e2e_*.sh; do
	[ -f "$t" ] || continue
	run "$(basename "$t")" sh "$t"
done
for t in tests/e2e_*.py; do
	[ -f "$t" ] || continue
	run "$(basename "$t")" "$PYTHON" "$t"
done
[ -n "$failed" ] && echo "failed suites:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
