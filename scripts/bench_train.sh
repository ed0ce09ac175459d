#!/bin/sh
# bench_train.sh — training-step memory and checkpointing: for lenet,
# VGG-19 and ResNet-50 at batch 1 and 32 (where the model allows a batch
# of 32; the light_* models hard-code batch 1 in a Reshape), the arena with
# no recompute (none), with sqrt, the smallest arena optimal reaches (from
# the exit-3 report of an impossible budget) and its recompute, and the
# recompute overhead of optimal at 50% and 33% of the no-recompute arena,
# in % of the forward FLOPs.  Times are medians of 3 runs of each optimal
# call.  Prints a table; fails on nothing but a crash.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
SHARED=${ARENAC_SHARED:-../shared}
exec "$PYTHON" - "$ARENAC" testdata/lenet.onnx \
	"$SHARED/models/light_vgg19.onnx" "$SHARED/models/light_resnet50.onnx" <<'PY'
import json, os, re, statistics, subprocess, sys, tempfile, time

arenac, models = sys.argv[1], sys.argv[2:]
tmp = tempfile.mkdtemp()
out = os.path.join(tmp, "r.json")

def run(model, batch, *opts):
    """(exit code, training object or None, stderr, seconds)"""
    t0 = time.monotonic()
    p = subprocess.run([arenac, "-q", "--train", "--batch", str(batch),
                        "--json", out, *opts, model],
                       capture_output=True, text=True)
    dt = time.monotonic() - t0
    t = json.load(open(out))["training"] if p.returncode == 0 else None
    return p.returncode, t, p.stderr, dt

def timed(model, batch, *opts):
    """run three times; the last result and the median time"""
    rs = [run(model, batch, *opts) for _ in range(3)]
    return rs[-1][:3], statistics.median(r[3] for r in rs)

def pct(t):
    return 100.0 * t["recompute_flops"] / t["forward_flops"]

def at(model, batch, budget):
    (rc, t, err), sec = timed(model, batch, "--budget", str(budget))
    if rc == 3:
        return "no fit", sec
    if rc:
        return "error %d" % rc, sec
    return "%d +%.1f%%" % (t["arena_bytes"], pct(t)), sec

print("%-16s %5s %11s %11s %22s %22s %22s  %s" % (
    "model", "batch", "none", "sqrt", "optimal min (+recomp)",
    "optimal@50%", "optimal@33%", "seconds min/50%/33%"))
for m in models:
    name = os.path.basename(m)[:-5]
    if not os.path.isfile(m):
        print("skipped: %s (no such file)" % m)
        continue
    for batch in (1, 32):
        t0 = time.monotonic()
        rc, none, err, _ = run(m, batch)
        if rc:
            note = re.search(r"Reshape '[^']*' hard-codes a batch of 1 in "
                             r"its target shape \[[^]]*\]", err)
            print("%-16s %5d  skipped: %s" % (name, batch, note.group(0)
                  if note else err.strip().splitlines()[-1][:100]))
            continue
        full = none["arena_bytes"]
        _, sq, _, _ = run(m, batch, "--checkpoint", "sqrt")
        (rc, _, err), tmin = timed(m, batch, "--budget", "1")
        mm = re.search(r"smallest reachable arena is (\d+) bytes, at "
                       r"(\d+) recompute FLOPs \(([\d.]+)%", err)
        mino = "%s +%s%%" % (mm.group(1), mm.group(3)) if mm else "?"
        h, t50 = at(m, batch, full // 2)
        t, t33 = at(m, batch, full // 3)
        print("%-16s %5d %11d %11d %22s %22s %22s  %.2f/%.2f/%.2f (row %.0f s)"
              % (name, batch, full, sq["arena_bytes"], mino, h, t, tmin,
                 t50, t33, time.monotonic() - t0))
        sys.stdout.flush()
PY
