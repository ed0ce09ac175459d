#!/usr/bin/env python3
"""Writes offset-assignment instances in MiniMalloc's CSV format
(id,lower,upper,size; half-open lifetimes) for `make bench`
(bench_dsa.sh) and tests/e2e_solve.sh:

  gen_dsa.py random N SEED OUT.csv   N buffers over 2N steps: a start
                                     uniform over the steps, a lifetime
                                     uniform in 1..200 steps, a size
                                     log-uniform from 64 B to 64 KiB
  gen_dsa.py holes N SEED OUT.csv [PACKED.csv]
                                     a perfect packing with holes: a
                                     strip of 4N steps by 1 MiB cut
                                     guillotine-wise (the largest piece
                                     first, across its longer side, at
                                     25-75%) into about N / 0.95 pieces,
                                     then 5% of them removed, never one
                                     live at the middle step; PACKED.csv
                                     gets the strip's own packing (the
                                     rows with their offset, as `arenac
                                     solve` writes them)

The holes' strip stays full at its middle step, so the peak-live lower
bound is 1 MiB and the strip is a packing of that height: the optimum is
1 MiB by construction (tests/e2e_solve.sh checks PACKED.csv as it checks
arenac's output).  Byte cuts fall on multiples of 64.  The same
arguments write the same file (one random.Random(SEED), integers only
where the layout depends on it).
"""
import heapq
import math
import random
import sys

STRIP = 1 << 20     # bytes of the holes' strip
MIN_SIZE, MAX_SIZE = 64, 64 << 10
MAX_LIFE = 200


def random_rows(n, rng):
    steps = 2 * n
    lo_log, hi_log = math.log(MIN_SIZE), math.log(MAX_SIZE)
    for i in range(n):
        lo = rng.randrange(steps)
        hi = lo + rng.randint(1, MAX_LIFE)
        size = int(round(math.exp(rng.uniform(lo_log, hi_log))))
        yield (i, lo, hi, min(max(size, MIN_SIZE), MAX_SIZE), None)


def holes_rows(n, rng):
    steps = 4 * n
    pieces = int(math.ceil(n / 0.95))
    # Max-heap by area (ties: creation order): (-area, seq, t0, t1, y0, y1).
    heap = [(-steps * STRIP, 0, 0, steps, 0, STRIP)]
    seq = 1
    while len(heap) < pieces:
        _, _, t0, t1, y0, y1 = heapq.heappop(heap)
        w, h = t1 - t0, (y1 - y0) // 64
        # Across the longer side, measured against the strip's own shape.
        by_time = w * STRIP // steps >= h * 64 if w > 1 else False
        if not by_time and h < 2:
            by_time = True
        if by_time:
            c = t0 + max(1, min(w - 1, int(w * rng.uniform(0.25, 0.75))))
            halves = [(t0, c, y0, y1), (c, t1, y0, y1)]
        else:
            c = y0 + 64 * max(1, min(h - 1, int(h * rng.uniform(0.25, 0.75))))
            halves = [(t0, t1, y0, c), (t0, t1, c, y1)]
        for a, b, c0, c1 in halves:
            heapq.heappush(heap, (-(b - a) * (c1 - c0), seq, a, b, c0, c1))
            seq += 1
    rects = sorted((t0, t1, y0, y1) for _, _, t0, t1, y0, y1 in heap)
    mid = steps // 2
    removable = [i for i, r in enumerate(rects) if not r[0] <= mid < r[1]]
    drop = set(rng.sample(removable, min(len(removable), len(rects) - n)))
    k = 0
    for i, (t0, t1, y0, y1) in enumerate(rects):
        if i not in drop:
            yield (k, t0, t1, y1 - y0, y0)
            k += 1


def main():
    kind = sys.argv[1] if len(sys.argv) > 1 else None
    if not (kind == "random" and len(sys.argv) == 5 or
            kind == "holes" and len(sys.argv) in (5, 6)):
        sys.exit("usage: gen_dsa.py random N SEED OUT.csv\n"
                 "       gen_dsa.py holes N SEED OUT.csv [PACKED.csv]")
    n, rng = int(sys.argv[2]), random.Random(int(sys.argv[3]))
    rows = list(random_rows(n, rng) if kind == "random" else
                holes_rows(n, rng))
    with open(sys.argv[4], "w") as f:
        f.write("id,lower,upper,size\n")
        for i, lo, hi, size, _ in rows:
            f.write("b%d,%d,%d,%d\n" % (i, lo, hi, size))
    if len(sys.argv) == 6:
        with open(sys.argv[5], "w") as f:
            f.write("id,lower,upper,size,offset\n")
            for i, lo, hi, size, y in rows:
                f.write("b%d,%d,%d,%d,%d\n" % (i, lo, hi, size, y))


if __name__ == "__main__":
    main()
