#!/bin/sh
# bench_train.sh — training-step memory and checkpointing: for lenet,
# VGG-19 and ResNet-50 at batch 1 and 32, the arena with
# no recompute (none), with sqrt, the smallest arena optimal reaches (from
# the exit-3 report of an impossible budget) and its recompute, and the
# recompute overhead of optimal at 50% and 33% of the no-recompute arena,
# in % of the forward FLOPs.  Times are medians of 3 runs of each optimal
# call.  The light_* models hard-code batch 1 in a Reshape's target shape,
# which arenac rightly refuses to run at batch 32; their batch-32 rows use
# a copy with that dim set to 0 ("copy the input's"), marked "*".  Prints
# a table; fails on nothing but a crash.
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

def batch_free(model):
    """A copy of model whose Reshapes keep the input's batch (shape[0]=0)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(model)
    inits = {t.name: t for t in m.graph.initializer}
    for n in m.graph.node:
        t = inits.get(n.input[1]) if n.op_type == "Reshape" else None
        if t is not None:
            v = numpy_helper.to_array(t).copy()
            if v.size and v[0] == 1:
                v[0] = 0
                t.CopyFrom(numpy_helper.from_array(v, t.name))
    path = os.path.join(tmp, "b_" + os.path.basename(model))
    onnx.save(m, path)
    return path

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
        mb, label = m, name
        rc, none, err, _ = run(mb, batch)
        if rc and "hard-codes a batch of 1" in err:
            mb, label = batch_free(m), name + "*"
            rc, none, err, _ = run(mb, batch)
        if rc:
            print("%-16s %5d  skipped: %s" % (label, batch,
                  err.strip().splitlines()[-1][:100]))
            continue
        full = none["arena_bytes"]
        _, sq, _, _ = run(mb, batch, "--checkpoint", "sqrt")
        (rc, _, err), tmin = timed(mb, batch, "--budget", "1")
        mm = re.search(r"smallest reachable arena is (\d+) bytes, at "
                       r"(\d+) recompute FLOPs \(([\d.]+)%", err)
        mino = "%s +%s%%" % (mm.group(1), mm.group(3)) if mm else "?"
        h, t50 = at(mb, batch, full // 2)
        t, t33 = at(mb, batch, full // 3)
        print("%-16s %5d %11d %11d %22s %22s %22s  %.2f/%.2f/%.2f (row %.0f s)"
              % (label, batch, full, sq["arena_bytes"], mino, h, t, tmin,
                 t50, t33, time.monotonic() - t0))
        sys.stdout.flush()
PY
