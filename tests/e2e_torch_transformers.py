#!/usr/bin/env python3
"""e2e_torch_transformers.py - arenac's training bill of transformers
written in plain PyTorch against what torch's autograd keeps (issue 24).

Every model of tests/torch_transformers.py is exported in training mode
at opsets 14 and 17, twice: as torch.onnx.export writes it
(tests/torch_saved.export: nothing but the graph) and through
scripts/torch_export.py (the trainable/frozen/buffer/tie metadata).  On
each, `arenac --train --checkpoint none --json -` must report

  parameters   the trainable parameter count torch's parameters() gives
               (a tied weight once, buffers not at all), exactly;
  kept bytes   what the plan keeps for the backward pass
               (e2e_torch_oracle.arenac_side) within 1% of the storages
               torch saves (tests/torch_saved.measure), after two
               normalisations that make torch's CPU run the run a user
               has:
                 - dropout masks at 1 byte an element: on CPU torch 1.13
                   draws the mask into a float tensor (bernoulli_), on a
                   GPU native_dropout keeps a bool mask, as arenac does;
                 - a storage saved only by MeanBackward1._saved_self not
                   counted: torch 1.13's mean.dim backward saves its
                   whole input for the input's sizes (later releases
                   save the sizes alone, derivatives.yaml mean.dim).

A variant that does not match yet is listed in KNOWN with the reason; the
test fails if a listed variant starts to match (so the list shrinks as
arenac gets right) and if an unlisted one does not.  Skips when torch or
onnx is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import torch
    import onnx  # noqa: F401  (torch_saved.export checks with it)
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(0)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
sys.path.insert(0, HERE)
import torch_export  # noqa: E402
import torch_saved  # noqa: E402
import torch_transformers as tt  # noqa: E402
from e2e_torch_oracle import arenac_side  # noqa: E402

ARENAC = os.environ.get("ARENAC", "build/arenac")

# (model, opset, variant) -> why it does not match yet.  variant is
# "plain" (torch.onnx.export alone) or "meta" (scripts/torch_export.py).
# The ONNX of nn.LayerNorm below opset 17, nn.GELU(approximate='tanh') and
# F.silu is the ONNX of the same arithmetic written op by op; arenac bills
# the module (torch saves input, mean and 1/std; the input), the common
# case (ops/grad_patterns.c).  gpt2_pow, whose GELU is written by hand in
# another order, is billed op by op, as torch saves it.
# llama_ri plain: the export is not the model.  torch 1.13 lost layer 1's
# sizes and wrote its repeat_interleave in the Loop form
# (symbolic_opset13.repeat_interleave), which reshapes each [B, 1, r, T, d]
# piece with [0, -1, 0, 0]: by ONNX's Reshape the zeros copy dims 2 and 3
# of that rank-5 input, so the pieces are [B, d, r, T], not torch's
# [B, r, T, d], and the attention MatMul cannot run (by the ONNX spec;
# onnxruntime is not installed here to show it).  arenac unrolls the Loop
# (frontend/unroll.c) and refuses that MatMul.  scripts/torch_export.py
# writes repeat_interleave as later exporters do (Unsqueeze, Expand,
# Reshape), so the meta variants plan: torch 1.13 computes it as
# index_select (aten/src/ATen/native/Repeat.cpp, repeat_interleave) and
# keeps IndexSelectBackward's int64 index (32 B a call,
# 128 B here) beside what llama keeps; the Expand and Reshape keep nothing.
RI_EXPORT = ("torch 1.13's Loop form of repeat_interleave reshapes layer "
             "1's pieces with [0, -1, 0, 0] after an Unsqueeze: by ONNX "
             "they are [B, d, r, T], and the attention MatMul cannot run")
KNOWN = {('llama_ri', opset, 'plain'): RI_EXPORT for opset in (14, 17)}
# What a KNOWN model's refusal must say, so it stays refused for the
# reason given (the Loop unrolled, its MatMul refused), not another.
KNOWN_ERROR = {"llama_ri": "node '/layers.1/MatMul' (MatMul): inner dims "
                           "differ: 8 and 16"}

# Models torch 1.13 cannot export at an opset: LayerNorm without affine
# part at opset 17 gets an empty scale input, which onnx's checker
# refuses (torch/onnx/symbolic_opset17.layer_norm).
OPSETS = {"norms": (14,)}


def torch_kept(meas):
    """Saved bytes after the two normalisations of the module comment."""
    total = 0
    for s in meas.saved:
        if s.savers and all(v.startswith("MeanBackward1._saved_self")
                            for v in s.savers):
            continue
        if s.category == "dropout_mask":
            total += s.nbytes // torch.tensor([], dtype=s.dtype).element_size()
            continue
        total += s.nbytes
    return total


def run(path):
    p = subprocess.run([ARENAC, "-q", "--train", "--checkpoint", "none",
                        "--batch", str(tt.BATCH), "--json", "-", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode:
        return None, "exit %d: %s" % (p.returncode, p.stderr.strip()[:160])
    return json.loads(p.stdout), None


def check(name, opset, variant, model, inputs, names, want_params, want):
    path = os.path.join(TMP, "%s_%d_%s.onnx" % (name, opset, variant))
    if variant == "meta":
        torch_export.export(model, inputs, path, opset, names=names)
    else:
        torch_saved.export(model, inputs, path, opset, names=names)
    rep, err = run(path)
    if rep is None:
        return False, err
    params = rep["training"]["parameters"]
    kept = arenac_side(rep).total()
    ok = params == want_params and abs(kept - want) <= 0.01 * want
    return ok, "params %d (torch %d), kept %d (torch %d, %+.1f%%)" % (
        params, want_params, kept, want, 100.0 * (kept - want) / want)


def main():
    fails = 0
    for name in tt.MODELS:
        model, inputs, names, label = tt.build(name)
        want_params = tt.parameters(model)
        want = torch_kept(torch_saved.measure(model, inputs, label))
        for opset in OPSETS.get(name, (14, 17)):
            for variant in ("plain", "meta"):
                ok, what = check(name, opset, variant, model, inputs, names,
                                 want_params, want)
                known = KNOWN.get((name, opset, variant))
                if ok and known:
                    verdict, bad = "FIXED", True
                elif ok:
                    verdict, bad = "ok", False
                elif known and KNOWN_ERROR.get(name, "") not in what:
                    verdict, bad = "FAIL", True
                    what += " [known, for another reason: %s]" % known
                elif known:
                    verdict, bad = "known", False
                    what += " [%s]" % known
                else:
                    verdict, bad = "FAIL", True
                fails += bad
                print("%-5s %-9s opset %d %-5s %s" % (verdict, name, opset,
                                                    variant, what))
    print("%d failures" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    TMP = tempfile.mkdtemp()
    sys.exit(main())
