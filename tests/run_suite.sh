#!/bin/sh
# run_suite.sh RESULTS SUITE — one suite of tests/run.sh: a cmocka binary,
# an e2e_*.sh or an e2e_*.py.  Its output is held until it ends and then
# printed whole, under a lock, so that suites running side by side never
# interleave their lines; its verdict goes to RESULTS/NAME.rc and its wall
# and CPU time to the log (never into a verdict).
res=$1
t=$2
name=$(basename "$t")
case $t in
*.sh) set -- sh "$t" ;;
*.py) set -- "$PYTHON" "$t" ;;
*) set -- "$t" ;;
esac
t0=$(date +%s)
"$@" >"$res/$name.out" 2>&1
echo $? >"$res/$name.rc"
# The CPU seconds of the suite and all it ran (times' second line, user
# and system) are what tests/suite_costs.txt records.
times >"$res/$name.times"
cpu=$(awk 'NR == 2 { for (i = 1; i <= NF; i++) {
	split($i, a, "m"); s += a[1] * 60 + a[2] } printf "%.1f", s }' \
	"$res/$name.times")
echo "== $name: $(($(date +%s) - t0)) s, $cpu s CPU" >>"$res/$name.out"
flock "$res/lock" sh -c 'echo "== $1"; cat "$2"' sh "$name" "$res/$name.out"
