#!/bin/sh
# bench_multi.sh — a training step on many devices: per-device bills of
# GPT-2 small (12 layers, seq 1024, batch 8) and the Llama-7B shape (32
# layers, d 4096, seq 2048, batch 1), both generated with external weights
# that are never written, trained with Adam in mixed bf16, at a few
# configurations of 8 devices (data parallel with ZeRO, tensor and
# sequence parallel, pipelined, offloaded; GPT-2 small's 12 heads do not
# split over 8, which arenac refuses, saying so); then `--fit 8x80G` for
# the 7B shape.  Each row: the largest device's total, each part of it, and the
# planning time, the median of 3 runs.  Fails on nothing but a crash.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
exec "$PYTHON" - "$ARENAC" <<'PY'
import json, os, statistics, subprocess, sys, tempfile, time

arenac = sys.argv[1]
tmp = tempfile.mkdtemp()
models = {}
for gen, preset in (("gen_gpt.py", "gpt2-small"), ("gen_llama.py",
                                                    "llama-7b")):
    path = os.path.join(tmp, preset + ".onnx")
    subprocess.run([sys.executable, os.path.join("testdata", gen),
                    "--preset", preset, "--no-check", path], check=True,
                   stdout=subprocess.DEVNULL)
    models[preset] = path

COMMON = ["--train", "--optimizer", "adam", "--precision", "mixed-bf16"]
CONFIGS = [
    ("dp 8, ZeRO 1", ["--dp", "8", "--zero", "1"]),
    ("dp 8, ZeRO 3", ["--dp", "8", "--zero", "3"]),
    # GPT-2 small's 12 heads split over 4 devices, not 8: dp 2 beside.
    ("tp 8 + SP, selective", ["--tp", "8", "--sequence-parallel",
                              "--checkpoint", "selective"]),
    ("dp 2, tp 4 + SP, selective", ["--dp", "2", "--tp", "4",
                                    "--sequence-parallel", "--checkpoint",
                                    "selective"]),
    ("dp 2 Z2, tp 4 + SP", ["--dp", "2", "--zero", "2", "--tp", "4",
                            "--sequence-parallel"]),
    ("tp 2, pp 4, 8 mb 1f1b", ["--tp", "2", "--pp", "4", "--microbatches",
                               "8"]),
    ("pp 8, 16 mb gpipe, layer", ["--pp", "8", "--microbatches", "16",
                                  "--schedule", "gpipe", "--checkpoint",
                                  "layer"]),
    ("dp 8 Z2, optimizer offload", ["--dp", "8", "--zero", "2", "--memory",
                                    "hbm:80G:3.3T", "--memory",
                                    "ddr:1024G:25G", "--offload",
                                    "optimizer:ddr"]),
]


def run(model, opts):
    out = os.path.join(tmp, "r.json")
    times = []
    for _ in range(3):
        t0 = time.monotonic()
        p = subprocess.run([arenac, "-q", "--json", out] + COMMON + opts +
                           [model], stderr=subprocess.PIPE,
                           universal_newlines=True)
        times.append(time.monotonic() - t0)
    if p.returncode:
        return None, p.stderr.strip().splitlines()[-1][:90], 0
    with open(out) as f:
        return json.load(f), None, statistics.median(times)


def gb(v):
    return "%.2f" % (v / 2**30)


print("Per-device memory (GiB) of the largest device; 8 devices each")
print("%-11s %-27s %8s %8s %8s %8s %8s %8s %8s  %s" % (
    "model", "configuration", "params", "grads", "optim", "activ",
    "buffers", "total", "step(s)", "plan (s)"))
for name, path in models.items():
    for label, opts in CONFIGS:
        r, err, sec = run(path, opts)
        if not r:
            print("%-11s %-27s  %s" % (name, label, err))
            continue
        big = max(r["devices"], key=lambda d: d["total"])
        est = r["parallel"]["estimate"]
        print("%-11s %-27s %8s %8s %8s %8s %8s %8s %8.3f  %.2f" % (
            name, label, gb(big["parameters"]), gb(big["gradients"]),
            gb(big["optimizer_state"]), gb(big["activations_arena"]),
            gb(big["buffers"]), gb(big["total"]), est["step_seconds"], sec))
        sys.stdout.flush()

print()
print("--fit 8x80G, Llama-7B shape (the first rows):")
t0 = time.monotonic()
times = []
for _ in range(3):
    t0 = time.monotonic()
    p = subprocess.run([arenac] + COMMON + ["--fit", "8x80G",
                                            models["llama-7b"]],
                       stdout=subprocess.PIPE, universal_newlines=True)
    times.append(time.monotonic() - t0)
for line in p.stdout.splitlines()[:12]:
    print("  " + line)
print("  ... search and full plan of the first: %.1f s (median of 3)" %
      statistics.median(times))
PY
