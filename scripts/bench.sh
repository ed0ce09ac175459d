#!/bin/sh
# bench.sh — `make bench`: runs every scripts/bench_*.sh in name order.
# Benchmarks print tables with medians; none of them fails on a number.
set -eu
BUILD=${BUILD:-build}
export BUILD ARENAC="${ARENAC:-$BUILD/arenac}"
if [ -z "${ARENAC_SHARED:-}" ] && [ -d ../shared/models ]; then
	ARENAC_SHARED=../shared
fi
export ARENAC_SHARED="${ARENAC_SHARED:-}"
for b in scripts/bench_*.sh; do
	[ -f "$b" ] || continue
	echo "== $(basename "$b")"
	sh "$b"
done
