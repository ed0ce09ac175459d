#!/bin/sh
# bench_published.sh — arenac's bill beside published peaks of real runs
# whose setup is stated in full: torchtune's README table "Memory and
# training speed" (Llama 3.1 8B, batch 2, sequence 2048 packed, bf16,
# activation checkpointing, one RTX 4090; the recipes' configs
# recipes/configs/llama3_1/8B_{lora,qlora,full}_single_device.yaml).
# The model is gen_llama.py at Llama 3.1 8B's shape (32 layers, d 4096,
# 32 heads, 8 kv heads, FFN 14336, vocab 128256: 8,030,261,248 parameters,
# weights external and never read).  For each recipe: the plan's device
# total (what max_memory_allocated shows for an ideal allocator), the
# caching allocator's allocated and reserved peaks, and the published
# figure.  Prints a table; fails on nothing but a crash.
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
"$PYTHON" - "$ARENAC" <<'PY' || exit 1
import json, os, subprocess, sys, tempfile

arenac = sys.argv[1]
tmp = tempfile.mkdtemp()
model = os.path.join(tmp, "llama31_8b.onnx")
subprocess.run([sys.executable, os.path.join("testdata", "gen_llama.py"),
                model, "--preset", "llama-7b", "--kv-heads", "8",
                "--ffn", "14336", "--vocab", "128256", "--seq", "2048",
                "--batch", "2"], check=True, capture_output=True)
# torchtune: dtype bf16 (weights, adapters, gradients and AdamW's state),
# enable_activation_checkpointing, SDPA (flash on an RTX 4090),
# CEWithChunkedOutputLoss (8 chunks, each upcast to fp32).
common = ["--train", "--precision", "bf16", "--checkpoint", "layer",
          "--attention", "flash", "--loss-chunk", "8", "--loss-dtype",
          "fp32", "--device", "RTX-4090", "--allocator", "caching"]
rows = [
    ("LoRA r8 q,v,o,mlp", 16.2,
     ["--optimizer", "adamw", "--lora", "8:16",
      "--lora-target", "wq|wv|wo|w1|w2|w3"]),
    ("QLoRA r8 q,k,v,o,mlp", 7.4,
     ["--optimizer", "adamw", "--lora", "8:16",
      "--lora-target", "wq|wk|wv|wo|w1|w2|w3", "--base-quant", "nf4",
      "--double-quant"]),
    ("full, paged 8-bit AdamW in bwd", 18.9,
     ["--optimizer", "paged-adamw8bit", "--optimizer-in-backward"]),
]
GIB = 1 << 30
print("%-32s %9s %11s %10s %10s" % ("recipe", "published", "plan", "allocated",
                                    "reserved"))
for name, published, opts in rows:
    out = os.path.join(tmp, "r.json")
    p = subprocess.run([arenac, "-q"] + common + opts + ["--json", out, model],
                       capture_output=True, text=True)
    if p.returncode:
        print("%-32s failed: %s" % (name, p.stderr.strip()))
        continue
    b = json.load(open(out))["training"]
    print("%-32s %6.1f GiB %7.2f GiB %6.2f GiB %6.2f GiB" % (
        name, published, b["total_bytes"] / GIB,
        b["allocator_allocated_bytes"] / GIB,
        b["allocator_reserved_bytes"] / GIB))
PY
