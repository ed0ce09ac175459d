#!/bin/sh
# bench_attention.sh — --attention math against flash on the Llama-7B
# shape (gen_llama.py --preset llama-7b, weights external and never read)
# at sequence 2048 and 8192, bf16 weights with fp32 gradients
# (--precision mixed-bf16 --grad-dtype fp32), per optimizer: the arena,
# the device total (persistent state + arena) and the planning time,
# median of 3 whole runs.  Prints a table; fails on nothing but a crash.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
"$PYTHON" - "$ARENAC" <<'PY' || exit 1
import json, os, statistics, subprocess, sys, tempfile, time

arenac = sys.argv[1]
tmp = tempfile.mkdtemp()
out = os.path.join(tmp, "r.json")
print("%5s  %-9s %-10s %14s %14s %10s" % ("seq", "attention", "optimizer",
                                          "arena GB", "device GB",
                                          "median s"))
for seq in (2048, 8192):
    model = os.path.join(tmp, "llama_%d.onnx" % seq)
    subprocess.run([sys.executable, os.path.join("testdata", "gen_llama.py"),
                    model, "--preset", "llama-7b", "--seq", str(seq)],
                   check=True, capture_output=True)
    for attn in ("math", "flash"):
        for opt in ("adamw", "adamw8bit", "adam4bit", "adafactor"):
            times = []
            for _ in range(3):
                t0 = time.monotonic()
                p = subprocess.run(
                    [arenac, "-q", "--train", "--optimizer", opt,
                     "--precision", "mixed-bf16", "--grad-dtype", "fp32",
                     "--attention", attn, "--json", out, model],
                    capture_output=True, text=True)
                times.append(time.monotonic() - t0)
            if p.returncode:
                print("%5d  %-9s %-10s failed: %s" % (seq, attn, opt,
                                                      p.stderr.strip()))
                continue
            b = json.load(open(out))["training"]
            print("%5d  %-9s %-10s %14.2f %14.2f %10.2f" % (
                seq, attn, opt, b["arena_bytes"] / 1e9,
                b["device_total_bytes"] / 1e9, statistics.median(times)))
PY
