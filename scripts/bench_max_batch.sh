#!/bin/sh
# bench_max_batch.sh — how long --max-batch takes to answer, and its
# answer: GPT-2 small (gen_gpt.py --preset gpt2-small --batch 1, Adam in
# mixed bf16) for a 24 GiB card, and the Llama-7B shape (gen_llama.py
# --preset llama-7b --batch 1, 8-bit Adam in mixed bf16, --checkpoint
# layer) for an 80 GiB one.  Each search plans every batch it tries in
# full; the time is the median of 3 whole runs, with the number of plans.
# Prints a table; fails on nothing but a crash.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
"$PYTHON" - "$ARENAC" <<'PY' || exit 1
import json, os, statistics, subprocess, sys, tempfile, time

arenac = sys.argv[1]
tmp = tempfile.mkdtemp()
CASES = [
    ("GPT-2 small", "gen_gpt.py", "gpt2-small", "hbm:24G",
     ["--optimizer", "adam", "--precision", "mixed-bf16"]),
    ("Llama-7B shape", "gen_llama.py", "llama-7b", "hbm:80G",
     ["--optimizer", "adam8bit", "--precision", "mixed-bf16",
      "--checkpoint", "layer"]),
]
print("%-16s %-8s %9s %7s %12s" % ("model", "device", "max batch",
                                   "plans", "median (s)"))
for name, gen, preset, mem, step in CASES:
    model = os.path.join(tmp, preset + ".onnx")
    subprocess.run([sys.executable, os.path.join("testdata", gen), model,
                    "--preset", preset, "--batch", "1"], check=True,
                   capture_output=True)
    out = os.path.join(tmp, "r.json")
    times = []
    for _ in range(3):
        t0 = time.monotonic()
        p = subprocess.run([arenac, "--train", *step, "--memory", mem,
                            "--max-batch", "--json", out, model],
                           capture_output=True, text=True)
        times.append(time.monotonic() - t0)
    if p.returncode:
        print("%-16s %-8s failed: %s" % (name, mem, p.stderr.strip()))
        continue
    best = json.load(open(out))["training"]["max_batch"]
    plans = sum(1 for l in p.stderr.splitlines()
                if l.strip()[:1].isdigit()) + 1
    print("%-16s %-8s %9d %7d %12.2f" % (name, mem.split(":")[1], best,
                                         plans, statistics.median(times)))
PY
