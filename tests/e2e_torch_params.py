#!/usr/bin/env python3
"""e2e_torch_params.py - what arenac trains is what the PyTorch module
trains, read from scripts/torch_export.py's metadata.

Small plain-PyTorch modules, exported with scripts/torch_export.py at
opsets 14 and 17 in training mode (metadata written), and again with the
metadata stripped; `arenac --train --json -` must report:
  with metadata     parameters == sum of numel of model.parameters()
                    (torch's parameters() yields a tied Parameter once);
                    buffers (rotary cos/sin, causal mask) not billed;
  without metadata  every parameter trained; a tie found from the graph
                    (the folded transposed copy) counted once; module
                    buffers told apart by train/buffers.c's rule (the
                    rotary tables multiply q and k, the mask is added
                    to the scores), named in a warning; --trainable
                    naming one makes it a parameter again;
  bad metadata      a name the graph lacks: exit 2, the name in the
                    error.
Skips when torch or onnx is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import torch
    import torch.nn as nn
    import onnx
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(0)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import torch_export  # noqa: E402
sys.path.insert(0, HERE)
import torch_saved  # noqa: E402
from e2e_torch_oracle import arenac_side  # noqa: E402

ARENAC = os.environ.get("ARENAC", "build/arenac")
D, T, V = 16, 8, 32


class Rotary(nn.Module):
    """Attention with rotary cos/sin buffers and an additive causal
    mask buffer (0 and -1e4), a linear head."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.qkv = nn.Linear(D, 3 * D)
        self.head = nn.Linear(D, V)
        pos = torch.arange(T).float()[:, None]
        inv = 1.0 / (10000 ** (torch.arange(0, D, 2).float() / D))
        ang = torch.cat([pos * inv, pos * inv], -1)
        self.register_buffer("cos", ang.cos())
        self.register_buffer("sin", ang.sin())
        self.register_buffer("mask", torch.triu(torch.full((T, T), -1e4), 1))

    def forward(self, ids):
        x = self.emb(ids)
        q, k, v = self.qkv(x).chunk(3, -1)

        def rot(a):
            a1, a2 = a.chunk(2, -1)
            return a * self.cos + torch.cat([-a2, a1], -1) * self.sin
        att = (rot(q) @ rot(k).transpose(-1, -2)) * D ** -0.5 + self.mask
        return self.head(att.softmax(-1) @ v)


class TiedGPT(nn.Module):
    """GPT-2's tied embedding and LM head (lm_head.weight = wte.weight)."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(V, D)
        self.wpe = nn.Embedding(T, D)
        self.ln = nn.LayerNorm(D)
        self.fc = nn.Linear(D, D)
        self.lm_head = nn.Linear(D, V, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, ids):
        x = self.wte(ids) + self.wpe.weight
        return self.lm_head(self.ln(torch.relu(self.fc(x))))


class Frozen(TiedGPT):
    """TiedGPT with the position table frozen (requires_grad False)."""

    def __init__(self):
        super().__init__()
        self.wpe.weight.requires_grad_(False)


MODELS = [("rotary", Rotary), ("tied", TiedGPT), ("frozen", Frozen)]


def report(path):
    r = subprocess.run([ARENAC, path, "--train", "--checkpoint", "none",
                        "--json", "-"], capture_output=True, text=True)
    if r.returncode:
        return r.returncode, r.stderr.strip(), None
    return 0, r.stderr.strip(), json.loads(r.stdout)


def bill(path):
    rc, err, rep = report(path)
    return rc, err, rep and rep["training"]


def kept(name, model, ids, path):
    """Kept bytes of the opset-17 tied models against torch's
    saved_tensors_hooks (tests/torch_saved.py); the one difference is
    nll_loss's 0-d total_weight (4 bytes), which torch saves and the
    graph's loss does not.  (Rotary and opset 14 are not compared yet:
    the Slice/Concat views of qkv and the decomposed LayerNorm differ,
    issue 24 items 1 and 6.)"""
    label = torch.randint(0, V, (2, T))
    meas = torch_saved.measure(model, (ids,), label)
    _, _, rep = report(path)
    side = arenac_side(rep).total()
    want = meas.total() - meas.by_category()["loss_total_weight"]
    ok = side == want and abs(side - meas.total()) <= 0.01 * meas.total()
    print("%s %-6s kept bytes: torch %d (%d without total_weight), "
          "arenac %d" % ("ok  " if ok else "FAIL", name, meas.total(), want,
                         side))
    return ok


def strip(m, path):
    del m.metadata_props[:]
    onnx.save(m, path)


def buffer_warning(path, want):
    """The buffers the rule takes are named; --trainable overrules."""
    p = subprocess.run([ARENAC, "--train", "--batch", "2", "--json",
                        os.devnull, path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    ok = (p.returncode == 0 and "3 initializers taken for buffers" in
          p.stderr and "cos, sin, mask" in p.stderr)
    print("%s rotary: the warning names cos, sin, mask" %
          ("ok  " if ok else "FAIL"))
    p = subprocess.run([ARENAC, "-q", "--train", "--batch", "2",
                        "--trainable", "^mask$", "--trainable", "qkv|emb|head",
                        "--json", "-", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    got = json.loads(p.stdout)["training"]["parameters"] if \
        p.returncode == 0 else p.stderr
    ok2 = got == want + T * T
    print("%s rotary: --trainable ^mask$ trains the mask: %s params "
          "(%d + %d)" % ("ok  " if ok2 else "FAIL", got, want, T * T))
    return ok and ok2


def main():
    torch.manual_seed(0)
    fails = 0
    tmp = tempfile.mkdtemp()
    ids = torch.randint(0, V, (2, T))
    for name, cls in MODELS:
        model = cls()
        want = sum(p.numel() for p in model.parameters() if p.requires_grad)
        frozen = sum(p.numel() for p in model.parameters()
                     if not p.requires_grad)
        for opset in (14, 17):
            path = os.path.join(tmp, "%s%d.onnx" % (name, opset))
            m = torch_export.export(model, (ids,), path, opset)
            rc, err, b = bill(path)
            ok = not rc and b["parameters"] == want and \
                b["frozen_bytes"] == 4 * frozen
            print("%s %-6s opset %d metadata: torch %d trained %d frozen, "
                  "arenac %s" % ("ok  " if ok else "FAIL", name, opset,
                                 want, frozen,
                                 err if rc else "%d params, %d frozen bytes"
                                 % (b["parameters"], b["frozen_bytes"])))
            fails += not ok
            if opset == 17 and name != "rotary":
                fails += not kept(name, model, ids, path)
            strip(m, path)
            rc, err, b = bill(path)
            # Without metadata a tie is still found from the graph (the
            # head's folded W^T copies wte), the buffers by the rule.
            all_ = want + frozen
            ok = not rc and b["parameters"] == all_
            print("%s %-6s opset %d no metadata: torch %d, arenac %s" % (
                "ok  " if ok else "FAIL", name, opset, all_,
                err if rc else "%d params" % b["parameters"]))
            fails += not ok
            if name == "rotary":
                fails += not buffer_warning(path, all_)
    # Bad metadata: a name the graph lacks.
    path = os.path.join(tmp, "bad.onnx")
    m = torch_export.export(TiedGPT(), (ids,), path, 17)
    for e in m.metadata_props:
        if e.key == "arenac.buffers":
            e.value = "no_such_buffer"
    onnx.save(m, path)
    rc, err, _ = bill(path)
    ok = rc == 2 and "no_such_buffer" in err and "lacks" in err
    print("%s bad metadata: exit %d: %s" % ("ok  " if ok else "FAIL", rc,
                                             err))
    fails += not ok
    # A tie between tensors of different sizes is no one Parameter.
    m = torch_export.export(TiedGPT(), (ids,), path, 17)
    for e in m.metadata_props:
        if e.key == "arenac.ties":
            e.value = "wte.weight,ln.weight"
    onnx.save(m, path)
    rc, err, _ = bill(path)
    ok = rc == 2 and "ties 'ln.weight' [16] to 'wte.weight' [32, 16]" in err
    print("%s bad tie: exit %d: %s" % ("ok  " if ok else "FAIL", rc, err))
    fails += not ok
    print("%d failures" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
