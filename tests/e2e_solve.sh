#!/bin/sh
# e2e_solve.sh — `arenac solve` on MiniMalloc's instances: input.12.csv at
# capacity 12 and every challenging instance at capacity 1048576, each
# output re-checked by an independent checker (sort by start, sweep the
# live set) for rows, overlaps and capacity; a generated perfect packing
# minimised within a stated gap of its optimum.  Also the exit codes of a
# proved-infeasible capacity and of malformed input.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
DSA=${ARENAC_SHARED:-../shared}/dsa
if [ ! -d "$DSA" ]; then
	echo "skipped: no shared dsa instances"
	exit 0
fi
if [ ! -x "$ARENAC" ]; then
	echo "e2e_solve: no $ARENAC" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

check() {  # INPUT OUTPUT CAPACITY
	"$PYTHON" - "$1" "$2" "$3" <<'PY'
import csv, sys
inp, out, cap = sys.argv[1], sys.argv[2], int(sys.argv[3])
src = list(csv.DictReader(open(inp)))
rows = list(csv.DictReader(open(out)))
assert [r["id"] for r in rows] == [r["id"] for r in src], "rows differ"
for a, b in zip(src, rows):
    for k in ("lower", "upper", "size"):
        assert a[k] == b[k], "row %s changed %s" % (a["id"], k)
bufs = sorted((int(r["lower"]), int(r["upper"]), int(r["offset"]),
               int(r["size"]), r["id"]) for r in rows)
live = []
for lo, hi, off, size, name in bufs:
    assert off >= 0 and off + size <= cap, "%s outside [0, %d)" % (name, cap)
    live = [x for x in live if x[0] > lo]
    for h, o, s, other in live:
        assert off + size <= o or o + s <= off, "%s overlaps %s" % (name, other)
    live.append((hi, off, size, name))
PY
}

run() {  # INPUT CAPACITY
	name=$(basename "$1")
	if ! "$ARENAC" solve "$1" --capacity "$2" -o "$tmp/out.csv" \
		2>"$tmp/err"; then
		echo "FAIL $name: exit $?"; cat "$tmp/err"; fail=1
	elif ! check "$1" "$tmp/out.csv" "$2"; then
		echo "FAIL $name: bad solution"; fail=1
	else
		echo "ok   $name $(tr '\n' ' ' <"$tmp/err")"
	fi
}

run "$DSA/input.12.csv" 12

# Perfect packings with holes (scripts/gen_dsa.py), whose optimum, 1 MiB,
# is the lower bound by construction: minimised at EFFORT (3), checked, at
# most MAX, and the same placement each of RUNS (2) times.  The optimum
# is checked too: the generator's own packing of the strip passes the
# same checker at 1 MiB.
GEN=$(dirname "$0")/../scripts/gen_dsa.py
holes() {  # N SEED MAX [EFFORT [RUNS]]
	t="$tmp/holes$1.$2"
	"$PYTHON" "$GEN" holes "$1" "$2" "$t.csv" "$t.packed.csv"
	if ! check "$t.csv" "$t.packed.csv" 1048576; then
		echo "FAIL holes $1 $2: the generator's packing is not one of 1 MiB"
		fail=1
	fi
	k=1
	while [ "$k" -le "${5:-2}" ]; do
		"$ARENAC" solve "$t.csv" --effort "${4:-3}" -o "$t.$k.csv" \
			2>"$t.err" ||
			{ echo "FAIL holes $1 $2: exit $?"; fail=1; }
		k=$((k + 1))
	done
	h=$(sed -n 's/^height: //p' "$t.err")
	if ! grep -q "^lower bound: 1048576$" "$t.err" ||
	   ! check "$t.csv" "$t.1.csv" "$h" || [ "$h" -gt "$3" ] ||
	   { [ "${5:-2}" -ge 2 ] && ! cmp -s "$t.1.csv" "$t.2.csv"; }; then
		echo "FAIL holes $1 $2: height $h over $3"; cat "$t.err"; fail=1
	else
		echo "ok   holes $1 seed $2: height $h, optimum 1048576"
	fi
}
# 500 buffers within 2%, as issue 30 asks (at the optimum, by the blocks
# of planner/dsa_blocks.c; 12.4% above before them).
holes 500 1 $((1048576 * 102 / 100))
# 1,000 at the optimum, by the layer split (planner/dsa_layers.c): +8.4%
# without it, where the exact search does not separate the strips.
holes 1000 3 1048576
# Within 1% where the layers are solved from their buffers, the blocks
# only labelled: joins across the two layers hid the time cuts that split
# each layer again (+9.5% with layers of blocks).
holes 1000 1 $((1048576 * 101 / 100))
# Within 0.5% (+0.20%) where blocks are labelled loosened too, each
# outermost stack's members apart, a labelling of units relabelled on
# them first (+2.56% before, +1.13% after) and the labelling searched
# from the cut out (planner/dsa_label.c).
holes 1000 4 $((1048576 * 1005 / 1000))
# Within 0.6% (+0.57%) where a label that passes a height is blamed on
# what changed since a span the layers fill exactly (planner/
# dsa_label.c's blame_over()): +1.17% blamed on all of that layer live.
holes 1000 5 $((1048576 * 1006 / 1000))
# At the optimum where the labelling starts at the cut: by start, the
# subsets of the units at the first step that make a layer's height are
# too many to search (+7.4% so).
holes 1000 6 1048576
# At the optimum where the labelling ties units that must hand over to
# each other (planner/dsa_ties.c), first wherever the load stays level:
# +0.22% with no ties or only those the exactly filled spans force.
holes 1000 9 1048576
# 2,000 within 2%, as issue 30 asks, at the default effort (one run of
# about a minute each; +10.1% at effort 3): both layers of a stack kept
# off a cut, each layer's parts solved alone, stacks loosened, labelled
# from the cut out; seed 1 held to 0.5% (at the optimum; +0.16% before
# the labelling from the cut, +1.07% before loosened stacks).  Seed 9, a
# stack of three strips and one of two, held to 1% (+0.45%): +11.05%
# without ties (planner/dsa_ties.c), +3.97% with only the exact ones.
# Seed 16 to 2% (+1.13%), two strips whose heights no try names (holes
# at both edges of both cuts): +3.69% without the scan of heights.
if [ -n "${ARENAC_SANITIZE:-}" ]; then
	echo "skipped: holes 2000 at the default effort (minutes sanitized)"
else
	holes 2000 1 $((1048576 * 1005 / 1000)) 5 1
	holes 2000 9 $((1048576 * 101 / 100)) 5 1
	holes 2000 16 $((1048576 * 102 / 100)) 5 1
fi
for f in "$DSA"/challenging/*.csv; do
	[ -f "$f" ] && run "$f" 1048576
done

"$ARENAC" solve "$DSA/input.12.csv" --capacity 11 >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -ne 3 ] || ! grep -q "proved infeasible" "$tmp/err"; then
	echo "FAIL capacity 11: exit $rc"; cat "$tmp/err"; fail=1
fi
# --prove (planner/dsa_bound.c) on a 12-buffer instance of load 8 whose
# optimum is 9 (tests/test_dsa_bound.c proves it by hand): behind a greedy
# order it refutes 8 on a window, the gap is one byte; a capacity of 8 is
# then proved infeasible; with the exact search the gap closes.
printf 'id,lower,upper,size\n' >"$tmp/gadget.csv"
for r in 0,1,5 1,2,2 1,3,2 0,4,3 3,4,1 1,5,1 4,5,2 5,6,3 2,7,2 3,7,1 \
	4,7,2 6,7,3; do
	n=$((${n:-0} + 1))
	echo "b$n,$r" >>"$tmp/gadget.csv"
done
prove() {  # WANT EXIT, then solve's options
	want=$1
	shift
	"$ARENAC" solve "$tmp/gadget.csv" --prove "$@" -o /dev/null \
		2>"$tmp/err"
	rc=$?
	[ $rc -eq "$want" ] || { echo "FAIL --prove $*: exit $rc"; return 1; }
}
if prove 0 --algo greedy-size &&
   grep -q '^bound: 9 (window \[0, 7) of 12 buffers refuted below it; ' \
	"$tmp/err" && grep -q '^proven bound: 9$' "$tmp/err" &&
   grep -q '^gap: 1 bytes (11.11%)$' "$tmp/err" &&
   prove 3 --algo greedy-size --capacity 8 &&
   grep -q "proved infeasible" "$tmp/err" &&
   prove 0 && grep -q '^bound: 9 (exact search, ' "$tmp/err" &&
   grep -q '^gap: closed$' "$tmp/err"; then
	echo "ok   --prove gadget: bound 9 over load 8"
else
	echo "FAIL --prove gadget"; cat "$tmp/err"; fail=1
fi
printf 'id,lower,upper,size\na,0,3,4\na,1,2,4\n' >"$tmp/dup.csv"
printf 'id,lower,upper,size\na,3,3,4\n' >"$tmp/empty.csv"
printf 'id,lower,upper\na,0,3\n' >"$tmp/header.csv"
for f in dup empty header; do
	"$ARENAC" solve "$tmp/$f.csv" >/dev/null 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 2 ] || ! grep -q "^arenac: error: " "$tmp/err"; then
		echo "FAIL $f.csv: exit $rc"; cat "$tmp/err"; fail=1
	fi
done
exit $fail
