#!/bin/sh
# bench_train.sh — training-step memory and checkpointing, two tables.
#
# CNNs: for lenet, VGG-19 and ResNet-50 at batch 1 and 32, the arena with
# no recompute (none), with sqrt, the smallest arena optimal reaches (from
# the exit-3 report of an impossible budget) and its recompute, and the
# recompute overhead of optimal at 50% and 33% of the no-recompute arena,
# in % of the forward FLOPs.  Times are medians of 3 runs of each optimal
# call.  The light_* models hard-code batch 1 in a Reshape's target shape,
# which arenac rightly refuses to run at batch 32; their batch-32 rows use
# a copy with that dim set to 0 ("copy the input's"), marked "*".
#
# Transformers (bench_train_llm, below): GPT-2 small (gen_gpt.py --preset
# gpt2-small: 12 layers, seq 1024, batch 8) and the Llama-7B shape
# (gen_llama.py --preset llama-7b: 32 layers, d 4096, seq 2048, batch 1,
# weights external and never read), Adam in mixed bf16: the bill, the
# arena without recompute, then per policy (sqrt, layer, selective,
# optimal) its arena and recompute at 75, 50 and 25%
# of that arena (a fixed policy: the same plan, "over" where it does not
# fit), and the planning time (median of 3 whole runs); then a stack of
# 1000 transformer-like layers (gen_scale.py train 1000) with optimal at
# 50%.  Prints tables; fails on nothing but a crash.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
SHARED=${ARENAC_SHARED:-../shared}
"$PYTHON" - "$ARENAC" <<'PY' || exit 1
import json, os, statistics, subprocess, sys, tempfile, time

arenac = sys.argv[1]
tmp = tempfile.mkdtemp()
out = os.path.join(tmp, "r.json")
TRAIN = ["--train", "--optimizer", "adam", "--precision", "mixed-bf16"]


def run(model, *opts):
    """(exit code, report or None, seconds) of one whole run"""
    t0 = time.monotonic()
    p = subprocess.run([arenac, "-q", "--json", out, *opts, model],
                       capture_output=True, text=True)
    dt = time.monotonic() - t0
    return p.returncode, json.load(open(out)) if p.returncode == 0 else None, dt


def timed(model, *opts):
    rs = [run(model, *opts) for _ in range(3)]
    return rs[-1][0], rs[-1][1], statistics.median(r[2] for r in rs)


def gb(b):
    return "%.2f GB" % (b / 1e9)


POLICIES = ("sqrt", "layer", "selective")


def generate(script, preset, name):
    path = os.path.join(tmp, name + ".onnx")
    subprocess.run([sys.executable, os.path.join("testdata", script), path,
                    "--preset", preset], check=True, capture_output=True)
    return path


print("%-11s %10s %9s  %-9s %19s %19s %19s  %s" % (
    "model", "bill", "arena", "policy", "at 75%", "at 50%", "at 25%",
    "seconds 75/50/25%"))
for name, script, preset in (("gpt2-small", "gen_gpt.py", "gpt2-small"),
                             ("llama-7b", "gen_llama.py", "llama-7b")):
    model = generate(script, preset, name)
    rc, r, _ = run(model, *TRAIN)
    if rc:
        print("%-11s skipped: exit %d" % (name, rc))
        continue
    t = r["training"]
    full = t["arena_bytes"]
    bill = t["total_bytes"] - full
    first = True
    for pol in POLICIES + ("optimal",):
        cells, secs = [], []
        for frac in (75, 50, 25):
            b = full * frac // 100
            opts = ["--checkpoint", pol]
            if pol == "optimal":
                opts += ["--arena-budget", str(b)]
            rc, r, sec = timed(model, *TRAIN, *opts)
            secs.append(sec)
            if rc or r is None:
                cells.append("no fit" if rc == 3 else "exit %d" % rc)
                continue
            x = r["training"]
            cells.append("%s%s +%.1f%%" % (
                gb(x["arena_bytes"]), "" if x["arena_bytes"] <= b else
                " over", 100.0 * x["recompute_flops"] / x["forward_flops"]))
        print("%-11s %10s %9s  %-9s %19s %19s %19s  %s" % (
            name if first else "", gb(bill) if first else "",
            gb(full) if first else "", pol, cells[0], cells[1],
            cells[2], "/".join("%.2f" % s for s in secs)))
        first = False
        sys.stdout.flush()
stack = os.path.join(tmp, "stack1000.onnx")
subprocess.run([sys.executable, "scripts/gen_scale.py", "train", "1000",
                stack], check=True)
rc, r, _ = run(stack, "--train")
if rc == 0:
    full = r["arena_bytes"]
    rc, r, sec = timed(stack, "--train", "--arena-budget", str(full // 2))
    if rc == 0:
        x = r["training"]
        print("stack of 1000 layers (%d candidates): arena %d, optimal at "
              "50%%: %d, +%.1f%%, %.2f s" % (
                  x["checkpoint_candidates"], full, x["arena_bytes"],
                  100.0 * x["recompute_flops"] / x["forward_flops"], sec))
PY
echo
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
    (rc, t, err), sec = timed(model, batch, "--arena-budget", str(budget))
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
        (rc, _, err), tmin = timed(mb, batch, "--arena-budget", "1")
        mm = re.search(r"smallest reachable arena is ([\d,]+) bytes, at "
                       r"([\d,]+) recompute FLOPs \(([\d.]+)%", err)
        mino = "%s +%s%%" % (mm.group(1).replace(",", ""),
                             mm.group(3)) if mm else "?"
        h, t50 = at(mb, batch, full // 2)
        t, t33 = at(mb, batch, full // 3)
        print("%-16s %5d %11d %11d %22s %22s %22s  %.2f/%.2f/%.2f (row %.0f s)"
              % (label, batch, full, sq["arena_bytes"], mino, h, t, tmin,
                 t50, t33, time.monotonic() - t0))
        sys.stdout.flush()
PY
