#!/bin/sh
# run.sh — runs every test program and end-to-end script, then prints one
# closing line "N passed, N failed".  Exits non-zero if anything failed.
# Each cmocka binary tests/test_* and each tests/e2e_*.sh / tests/e2e_*.py
# counts as one suite (tests/run_suite.sh runs one); cmocka prints its own
# per-test summary lines.
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
# Suites run JOBS at a time (default: one per CPU), each in a folder of
# its own, so no suite depends on another's files or on the machine's
# speed; their output comes out whole, one suite at a time.
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 1)}
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT
: >"$res/lock"
# Longest first, so that the last suites to start are short ones and no
# core waits long on a single tail: the order comes from the CPU seconds
# recorded in tests/suite_costs.txt (the sanitized column under
# ARENAC_SANITIZE), never from a clock at run time, and changes only
# when the suites start, never what they check.  A suite not in the table
# yet starts first.
col=2
[ -n "${ARENAC_SANITIZE:-}" ] && col=3
for t in "$BUILD"/tests/test_* tests/e2e_*.sh tests/e2e_*.py; do
	case $t in
	*/test_*) [ -x "$t" ] && echo "$t" ;;
	*) [ -f "$t" ] && echo "$t" ;;
	esac
done | awk -v col=$col 'NR == FNR { if ($1 !~ /^#/) cost[$1] = $col; next }
	{ n = $0; sub(/.*\//, "", n); print (n in cost ? cost[n] : 1e9), $0 }' \
	tests/suite_costs.txt - | sort -k1,1gr -k2,2 | cut -d" " -f2- >"$res/suites"
xargs -P "$JOBS" -n 1 sh tests/run_suite.sh "$res" <"$res/suites"
pass=0
fail=0
failed=""
while read -r t; do
	# A suite that left no verdict failed too.
	if [ "$(cat "$res/$(basename "$t").rc" 2>/dev/null)" = 0 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $(basename "$t")"
	fi
done <"$res/suites"
[ -n "$failed" ] && echo "failed suites:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
