#!/usr/bin/env python3
"""e2e_prequant.py — a model quantised in its graph is a frozen quantised
base (train/prequant.c), as --base-quant's (issue 26 item 2).

The generated GPT and Llama (testdata/gen_gpt.py, gen_llama.py) are
rewritten by testdata/quantize_linears.py into what quantised exports
hold: int8 per-channel DequantizeLinear (the weights' nodes in place, and
all first, before the layers), the QDQ pair on the float weight, opset
21's blocked int4 DequantizeLinear, and com.microsoft's MatMulNBits.  For
each, against the float model with the same options:

  - --lora keeps exactly the float model's activations for the backward
    (tensor by tensor, tests/e2e_torch_oracle.arenac_side), trains exactly
    the adapters (r (in + out) per adapted linear, the float model's
    count), and freezes the same parameter count;
  - quantized_base_bytes is the bytes of the quantised initializers,
    scales and zero points the script wrote, to the byte, and no step
    reads a dequantised weight: each QuantizedMatMul step and its gradient
    hold it as workspace (in x in out x 4 bytes, float32 here), so the
    arena is the float one's plus at most the largest such weight (the
    peak step's workspace, the one named difference);
  - --checkpoint layer finds the float model's layers and keeps the same
    checkpoints; selective and optimal plan;
  - --base-quant on it says its linears are stored quantised already;
    --base-quant stores only the linears the options freeze, and with
    none frozen, a --lora-target matching no linear and a rank above a
    weight's smaller side are exit 2 each.
Then the Llama-7B shape (gen_llama.py --preset llama-7b), LoRA r 16 in
bf16 with layer checkpointing on an RTX 4090, as the README's QLoRA
example: the model in int8 per channel and in int4 (block 64, fp16 scales
and int4 zero points; DequantizeLinear and MatMulNBits) against
--base-quant int8 and nf4 on the float model: the same arena and kept
bytes, and the quantised bases differ by what the formats store
differently (int8: a zero point per column; int4: fp16 scales and 4-bit
zero points for nf4's fp32 absmax and 16-entry code), each to the byte.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402
from e2e_torch_oracle import arenac_side  # noqa: E402

T = Tally('e2e_prequant')
check = T.check

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")
QUANTIZE = os.path.join(ROOT, "testdata", "quantize_linears.py")


def arenac(*args):
    return subprocess.run([ARENAC] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)


def bill(*args):
    r = arenac("-q", "--train", "--json", "-", *args)
    return (json.loads(r.stdout) if r.returncode == 0 else None), r


def gen(tmp, script, name, *opts):
    path = os.path.join(tmp, name + ".onnx")
    subprocess.run([PYTHON, os.path.join(ROOT, "testdata", script),
                    path] + list(opts), check=True,
                   stdout=subprocess.DEVNULL)
    return path


def quantise(src, form, *opts):
    """(the quantised model, the bytes it stores for its linears)."""
    out = src[:-5] + "_%s%s.onnx" % (form, "".join(opts).replace("-", "_"))
    r = subprocess.run([PYTHON, QUANTIZE, src, out, "--form", form] +
                       list(opts), check=True, stdout=subprocess.PIPE,
                       universal_newlines=True)
    return out, int(re.search(r"(\d+) stored bytes", r.stdout).group(1))


def kept(rep):
    """Name -> bytes of what the plan keeps for the backward pass."""
    return {k: v[0] for k, v in arenac_side(rep).buffers.items()}


def widest(rep):
    """Bytes of the largest dequantised weight a step holds."""
    return max([s.get("scratch_bytes") or 0 for s in rep["steps"]
                if s["op"].startswith("QuantizedMatMul")] or [0])


def small(tmp, name, script, opts):
    base = gen(tmp, script, name, *opts)
    lora = ["--lora", "4:8", "--checkpoint", "none"]
    fl, r = bill(*lora, base)
    if not check("%s float: plans" % name, fl, r.stderr):
        return
    ft = fl["training"]
    for form, extra in (("int8", ()), ("int8", ("--dq-first",)),
                        ("qdq", ()), ("int4", ()), ("nbits", ())):
        what = "%s %s%s" % (name, form, "".join(" " + e for e in extra))
        path, stored = quantise(base, form, *extra)
        rep, r = bill(*lora, path)
        if not check("%s: --lora plans" % what, rep, r.stderr):
            continue
        t = rep["training"]
        check("%s: quantized_base_bytes %d = the stored tensors' %d"
              % (what, t["quantized_base_bytes"], stored),
              t["quantized_base_bytes"] == stored)
        check("%s: trains the adapters alone, %d = the float model's %d"
              % (what, t["trainable_parameters"],
                 ft["trainable_parameters"]),
              t["trainable_parameters"] == ft["trainable_parameters"] ==
              t["lora"]["adapter_parameters"] and
              t["lora"] == ft["lora"], (t["lora"], ft["lora"]))
        check("%s: frozen parameters %d (float %d)"
              % (what, t["frozen_parameters"], ft["frozen_parameters"]),
              t["frozen_parameters"] == ft["frozen_parameters"])
        check("%s: frozen float bytes %d = the float model's %d less the "
              "linears'; gradients and optimizer state the same"
              % (what, t["frozen_bytes"], ft["frozen_bytes"]),
              ft["frozen_bytes"] - t["frozen_bytes"] ==
              sum(s["scratch_bytes"] for s in rep["steps"]
                  if s["op"] == "QuantizedMatMul") and
              t["gradient_bytes"] == ft["gradient_bytes"] and
              t["optimizer_state_bytes"] == ft["optimizer_state_bytes"])
        kq, kf = kept(rep), kept(fl)
        check("%s: keeps the float model's activations exactly (%d "
              "bytes, %d tensors)" % (what, sum(kq.values()), len(kq)),
              kq == kf, sorted(set(kq.items()) ^ set(kf.items()))[:6])
        dq = [x for s in rep["steps"] for x in s["inputs"] + s["outputs"]
              if x and x.endswith("_DequantizeLinear_Output")]
        w = widest(rep)
        check("%s: no dequantised weight in the arena; arena %d = float "
              "%d + at most the widest step's dequantised weight %d"
              % (what, t["arena_bytes"], ft["arena_bytes"], w),
              not dq and w > 0 and
              0 <= t["arena_bytes"] - ft["arena_bytes"] <= w, dq[:3])
        layers(what, path, base)
    rep, r = bill("--lora", "4", "--base-quant", "nf4", "--checkpoint",
                  "layer", base)
    fl, _ = bill("--lora", "4", "--checkpoint", "layer", base)
    check("%s: --base-quant nf4 keeps the float model's layer checkpoints"
          % name, rep and fl and rep["training"]["checkpoints"] ==
          fl["training"]["checkpoints"], r.stderr)
    path, _ = quantise(base, "int8")
    r = arenac("--train", "--lora", "4", "--base-quant", "nf4", path)
    check("%s int8 --base-quant nf4: exit 2, stored quantised already"
          % name, r.returncode == 2 and "stored quantised already" in
          r.stderr, r.stderr)
    r = arenac("--train", "--lora", "4", "--lora-target", "nothing", path)
    check("%s int8 --lora-target matching no linear: exit 2" % name,
          r.returncode == 2 and "matches no linear" in r.stderr, r.stderr)
    r = arenac("--train", "--lora", "65", path)
    check("%s int8 --lora 65: exit 2, above the weight's smaller side"
          % name, r.returncode == 2 and "smaller side (64)" in r.stderr,
          r.stderr)
    r = arenac("--train", "--base-quant", "nf4", base)
    check("%s --base-quant with nothing frozen: exit 2" % name,
          r.returncode == 2 and "freeze no linear" in r.stderr, r.stderr)
    rep, r = bill("--optimizer", "adam", "--fit", "1x24G", "--fit-axis",
                  "lora=0,4", "--fit-axis", "base-quant=none,nf4", base)
    check("%s --fit over lora=0,4 and base-quant=none,nf4: no nf4 row "
          "without adapters (full fine-tuning has no frozen base)" % name,
          rep and sorted({(x["lora_rank"], x["base_quant"]) for x in
                          rep["fit"]["configurations"]}) ==
          [(0, "none"), (4, "nf4"), (4, "none")], r.stderr)
    # --freeze l0: layer 0's linears stored in nf4, layer 1's trained.
    rep, r = bill("--base-quant", "int8", "--freeze", "^l0[.]", base)
    full, _ = bill(base)
    q = [s for s in (rep or {}).get("steps", [])
         if s["op"] == "QuantizedMatMul"]
    check("%s --base-quant int8 --freeze l0: only layer 0's linears "
          "stored quantised, the others trained" % name, rep and full and
          q and all(s["name"].startswith("l0.") for s in q) and
          rep["training"]["trainable_parameters"] ==
          full["training"]["trainable_parameters"] -
          rep["training"]["frozen_parameters"], r.stderr)
    rep, r = bill("--checkpoint", "layer", path)
    check("%s int8 without --lora: trains the rest, the linears frozen, "
          "layers found" % name, rep and
          rep["training"]["quantized_base_bytes"] > 0 and
          rep["training"]["trainable_parameters"] > 0, r.stderr)


def layers(what, path, base):
    for pol in ("layer", "selective", "optimal"):
        opts = ["--lora", "4", "--checkpoint", pol]
        rep, r = bill(*opts, path)
        fl, _ = bill(*opts, base)
        if pol == "layer":
            check("%s: --checkpoint layer keeps the float model's "
                  "checkpoints" % what, rep and fl and
                  rep["training"]["checkpoints"] ==
                  fl["training"]["checkpoints"], r.stderr)
        else:
            check("%s: --checkpoint %s plans" % (what, pol), rep, r.stderr)


def llama7b(tmp):
    base = gen(tmp, "gen_llama.py", "llama7b", "--preset", "llama-7b")
    step = ["--checkpoint", "layer", "--optimizer", "adamw", "--precision",
            "bf16", "--lora", "16", "--device", "RTX-4090"]
    # 224 linears, the head excepted; out: the columns, over 32 layers.
    n = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008)
    cols = 32 * (4 * 4096 + 2 * 11008 + 4096)
    cases = [
        ("int8", ("int8",), "int8",
         n + 4 * cols + cols, n + 4 * cols,
         "the int8 zero point per column, %d bytes" % cols),
        ("int4 DequantizeLinear", ("int4", "--block", "64"), "nf4",
         n // 2 + 2 * (n // 64) + n // 128, n // 2 + 4 * (n // 64) +
         224 * 16 * 4, "fp16 scales and int4 zero points per 64 against "
         "fp32 absmax and the 16-entry code"),
        ("int4 MatMulNBits", ("nbits", "--block", "64"), "nf4",
         n // 2 + 2 * (n // 64) + n // 128, n // 2 + 4 * (n // 64) +
         224 * 16 * 4, "as DequantizeLinear's"),
    ]
    for what, qopts, bq, want, want_bq, why in cases:
        path, stored = quantise(base, *qopts)
        rep, r = bill(*step, path)
        ref, r2 = bill(*step, "--base-quant", bq, base)
        if not check("7B %s and --base-quant %s plan" % (what, bq),
                     rep and ref, (r.stderr, r2.stderr)):
            continue
        t, u = rep["training"], ref["training"]
        check("7B %s: quantized base %d = stored %d = formula %d; "
              "--base-quant %s %d (%d); apart by %s"
              % (what, t["quantized_base_bytes"], stored, want, bq,
                 u["quantized_base_bytes"], want_bq, why),
              t["quantized_base_bytes"] == stored == want and
              u["quantized_base_bytes"] == want_bq)
        check("7B %s: arena %d and kept bytes as --base-quant %s's; "
              "trained %d" % (what, t["arena_bytes"], bq,
                              t["trainable_parameters"]),
              t["arena_bytes"] == u["arena_bytes"] and
              arenac_side(rep).total() == arenac_side(ref).total() and
              t["trainable_parameters"] == u["trainable_parameters"] ==
              8388608 and t["frozen_bytes"] == u["frozen_bytes"] and
              t["frozen_parameters"] == u["frozen_parameters"])
        # Opset 21's reduce ops read their axes: 65 norms' int64 [1].
        extra = 65 * 8 if qopts[0] == "int4" else 0
        check("7B %s: device total %d, --base-quant %s's %d: the bases' "
              "difference%s" % (what, t["device_total_bytes"], bq,
                                u["device_total_bytes"],
                                " and opset 21's axes inputs" if extra
                                else ""),
              t["device_total_bytes"] - u["device_total_bytes"] ==
              want - want_bq + extra)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        small(tmp, "gpt", "gen_gpt.py", ())
        small(tmp, "llama", "gen_llama.py", ())
        llama7b(tmp)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
