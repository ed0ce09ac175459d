#!/bin/sh
# bench_dsa.sh — the offset solvers on MiniMalloc's instances, first at
# their capacity and then minimising, and on a synthetic 100,000-buffer
# DAG (mostly short lifetimes, some long skip edges) with the heuristics.
# Per row: the load lower bound, the proven bound (no placement is lower:
# the load bound, or more where the exact search proved heights
# infeasible; min-prove rows: or where --prove refuted a sub-instance), the height found, the method that found it ("improve": the
# local search after an unproven exact search; "descend": a probe below
# the best; "repair": window repair), whether it is proven optimal, the
# solver's own time (stderr "time:", median of RUNS runs, 3) and the
# first run's resident memory (KB).  Heights and bounds depend on
# --effort only (EFFORT, default arenac's), never on the machine.
#
# Then generated instances (scripts/gen_dsa.py): random ones of SIZES
# buffers (4k to 64k), seeds 1 to 3, at capacity = their lower bound
# (the height column is the best found when that fails), and perfect
# packings with holes of 500 and 2,000 (seeds HOLES_SEEDS, 1 to 3;
# optimum = the lower bound) minimised.
#
#   ARENAC=build/arenac ARENAC_SHARED=../shared sh scripts/bench_dsa.sh
#   EFFORT=7 sh scripts/bench_dsa.sh   # 16 times the work per search
#   MINIMALLOC=/path/to/minimalloc sh scripts/bench_dsa.sh
# With MINIMALLOC (a MiniMalloc binary built outside this repository) each
# row at a capacity gets MiniMalloc's row below it: one run, unlimited
# stack, --timeout MMTIMEOUT seconds (180), its "Elapsed time", its
# validated height ("none" when it found no packing), its resident memory.
ARENAC=${ARENAC:-build/arenac}
DSA=${ARENAC_SHARED:-../shared}/dsa
RUNS=${RUNS:-3}
SIZES=${SIZES:-4096 16384 32768 65536}
HOLES_SEEDS=${HOLES_SEEDS:-1 2 3}
GEN="/usr/bin/python3 $(dirname "$0")/gen_dsa.py"
EFFORT=${EFFORT:+--effort $EFFORT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

field() {  # NAME FILE
	sed -n "s/^$1: //p" "$2" | sed 's/ s$//'
}

# MiniMalloc's row for the instance of the row above: NAME CSV CAPACITY.
mm() {
	[ -n "$MINIMALLOC" ] || return 0
	(ulimit -s unlimited
	/usr/bin/time -o "$tmp/mm.rss" -f 'rss: %M' "$MINIMALLOC" \
		--input="$2" --capacity="$3" --output="$tmp/mm.csv" --validate=true \
		--timeout="${MMTIMEOUT:-180}s" >/dev/null 2>"$tmp/mm.err")
	h=$(sed -n 's/.*Validation PASS, height \([0-9]*\).*/\1/p' "$tmp/mm.err")
	printf '%-14s %-15s %7d %9s %9s %9s %7s %-16s %-6s %8s %8s\n' \
		"$1" minimalloc "$n" "$lb" - "${h:-none}" \
		"$(awk -v h="$h" -v l="$lb" \
			'BEGIN{if (h == "") print "-"; else printf "%.4f", l ? h / l : 1}')" \
		minimalloc - \
		"$(sed -n 's/.*Elapsed time \([0-9.]*\)s.*/\1/p' "$tmp/mm.err")" \
		"$(field rss "$tmp/mm.rss")"
}

# One table row: instance, mode, then the solve options.
row() {
	name=$1 mode=$2 csv=$3
	shift 3
	i=0
	while [ $i -lt "$RUNS" ]; do
		i=$((i + 1))
		/usr/bin/time -f 'rss: %M' "$ARENAC" solve "$csv" "$@" \
			-o /dev/null 2>"$tmp/err.$i"
		field time "$tmp/err.$i"
	done | sort -n | sed -n "$(((RUNS + 1) / 2))p" >"$tmp/median"
	e=$tmp/err.1
	n=$(($(wc -l <"$csv") - 1))
	lb=$(field "lower bound" "$e")
	pb=$(field "proven bound" "$e")
	h=$(field height "$e")
	printf '%-14s %-15s %7d %9s %9s %9s %7s %-16s %-6s %8s %8s\n' \
		"$name" "$mode" "$n" "$lb" "$pb" "$h" \
		"$(awk -v h="$h" -v l="$lb" 'BEGIN{printf "%.4f", l ? h / l : 1}')" \
		"$(field algorithm "$e")" "$(field optimal "$e")" \
		"$(cat "$tmp/median")" "$(field rss "$e")"
}

printf '%-14s %-15s %7s %9s %9s %9s %7s %-16s %-6s %8s %8s\n' instance \
	mode buffers lower proven height ratio algorithm optimal time_s rss_kb
if [ -d "$DSA" ]; then
	[ -f "$DSA/input.12.csv" ] &&
		row input.12 cap "$DSA/input.12.csv" --capacity 12 $EFFORT
	for f in "$DSA"/challenging/*.csv; do
		[ -f "$f" ] && row "$(basename "$f" .csv)" cap "$f" \
			--capacity 1048576 $EFFORT &&
			mm "$(basename "$f" .csv)" "$f" 1048576
	done
	for f in "$DSA"/challenging/*.csv; do
		[ -f "$f" ] && row "$(basename "$f" .csv)" min "$f" $EFFORT
	done
	# The two left unproven, with --prove's sub-instance searches.
	for f in "$DSA"/challenging/D.*.csv "$DSA"/challenging/J.*.csv; do
		[ -f "$f" ] && row "$(basename "$f" .csv)" min-prove "$f" \
			--prove $EFFORT
	done
else
	echo "skipped: no shared dsa instances"
fi

awk 'BEGIN {
	srand(11)
	print "id,lower,upper,size"
	for (i = 0; i < 100000; i++) {
		len = rand() < 0.9 ? 1 + int(rand() * 3) : 1 + int(rand() * 200)
		print "t" i "," i "," i + len "," 64 * (1 + int(rand() * 256))
	}
}' >"$tmp/dag.csv"
for a in greedy-size greedy-breadth greedy-lifetime; do
	row dag-100k "$a" "$tmp/dag.csv" --algo "$a"
done
row dag-100k auto "$tmp/dag.csv" $EFFORT

for seed in 1 2 3; do
	for n in $SIZES; do
		f=$tmp/r$n.$seed.csv
		$GEN random "$n" "$seed" "$f"
		"$ARENAC" solve "$f" --algo greedy-size -o /dev/null 2>"$tmp/lb"
		c=$(field "lower bound" "$tmp/lb")
		row "random-$n.$seed" cap-at-bound "$f" --capacity "$c" $EFFORT
		mm "random-$n.$seed" "$f" "$c"
	done
done
for seed in $HOLES_SEEDS; do
	for n in 500 2000; do
		f=$tmp/h$n.$seed.csv
		$GEN holes "$n" "$seed" "$f"
		row "holes-$n.$seed" min "$f" $EFFORT
	done
done
