#!/bin/sh
# bench_tiers.sh — two-tier placement of the shared CNNs: an SRAM-like fast
# tier (50 GB/s) of a quarter and of half the model's activation peak, a
# DRAM-like slow tier (2 GB/s) big enough for everything.  Per row: the
# fast tier's hit ratio by bytes (its share of the estimated traffic), the
# estimated traffic time against all activations in the slow tier, and
# the median wall time of three runs.  Fails on nothing but a crash.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
SHARED=${ARENAC_SHARED:-../shared}
FAST_BW=50G
SLOW_BW=2G
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%-20s %6s %12s %12s %7s %12s %12s %7s %-18s %8s\n' model fast \
	capacity used hit tiered_us all_slow_us speedup placement seconds
for m in testdata/lenet.onnx "$SHARED"/models/light_*.onnx; do
	[ -f "$m" ] || { echo "skipped: $m"; continue; }
	d=""
	[ "$m" = testdata/lenet.onnx ] && d="--dim N=1"
	lb=$("$ARENAC" -q $d --json - "$m" | "$PYTHON" -c \
		'import json, sys; print(json.load(sys.stdin)["lower_bound_bytes"])')
	for frac in 4 2; do
		cap=$((lb / frac))
		for run in 1 2 3; do
			t0=$(date +%s.%N)
			"$ARENAC" -q $d --json "$tmp/r.json" \
				--memory "sram:$cap:$FAST_BW" \
				--memory "dram:$((lb * 2)):$SLOW_BW" "$m" \
				2>"$tmp/err" || break
			t1=$(date +%s.%N)
			echo "$t0 $t1" >>"$tmp/times"
		done
		if [ ! -s "$tmp/times" ] || [ "$(wc -l <"$tmp/times")" -lt 3 ]; then
			printf '%-20s %6s  %s\n' "$(basename "$m" .onnx)" "1/$frac" \
				"failed: $(cat "$tmp/err")"
			rm -f "$tmp/times"
			continue
		fi
		"$PYTHON" - "$tmp/r.json" "$tmp/times" "1/$frac" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
times = sorted(float(b) - float(a) for a, b in
               (l.split() for l in open(sys.argv[2])))
fast, slow = r["regions"]
total = fast["traffic_bytes"] + slow["traffic_bytes"]
tiered = fast["traffic_seconds"] + slow["traffic_seconds"]
all_slow = total / slow["bandwidth_bytes_per_s"]
name = r["model"].rsplit(".", 1)[0].replace("light_", "")
print("%-20s %6s %12d %12d %7.3f %12.1f %12.1f %7.2f %-18s %8.3f" % (
    name, sys.argv[3], fast["capacity_bytes"], fast["used_bytes"],
    fast["traffic_bytes"] / max(1, total), tiered * 1e6, all_slow * 1e6,
    all_slow / tiered if tiered else 0,
    r["algorithm"] + (" optimal" if r["placement_optimal"] else ""),
    times[len(times) // 2]))
PY
		rm -f "$tmp/times"
	done
done
