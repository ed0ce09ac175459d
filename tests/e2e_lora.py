#!/usr/bin/env python3
"""e2e_lora.py — --lora against a count, PyTorch and torchtune.

  - counts: r (in + out) per adapted linear; the Llama-7B shape
    (testdata/gen_llama.py --preset llama-7b) with wq and wv adapted at
    r = 8 trains 4,194,304 parameters, torchtune's LoRA tutorial's figure
    for Llama-2-7B; GPT-2 small's fused qkv by default, 12 x 8 x (768 +
    2304); the base weights all frozen, --trainable adding the final norm;
  - PyTorch as the oracle: the zoo's GPT-2 (tests/torch_transformers.py)
    with LoRA written in plain PyTorch around its c_attn nn.Linear (base
    frozen, A and B trained, dropout on the adapter path, torchtune's
    LoRALinear / PEFT's Linear), trained one step under
    saved_tensors_hooks (tests/torch_saved.measure); arenac on the export
    without adapters plus --lora keeps the same bytes within 1% and trains
    the same count, at dropout 0 and 0.1 (measured: -0.19%, -516 bytes:
    torch saves the causal mask it computes in forward for
    masked_fill's backward, 2 x 16 x 16 bools, where arenac folds it to a
    constant, and nll_loss's 0-d total_weight, as e2e_torch_oracle names
    them);
  - --base-quant (QLoRA): each stored weight to the byte of bitsandbytes'
    quantize_4bit (n/2 + an fp32 absmax per 64 + the 16-entry code; with
    --double-quant the absmax in 8 bits, an fp32 per 256 blocks and the
    offset), 4.5 and 4.127 bits a weight over the Llama-7B shape (the
    QLoRA paper), the head kept in 16 bits; the activations kept are
    exactly LoRA's (bitsandbytes' MatMul4Bit saves none), and each
    QuantizedMatMul step and its gradient hold the dequantised weight as
    workspace for that step alone;
  - bad input: a target matching no linear and a rank above a weight's
    smaller side are exit 2; a rank of 0 is exit 1.
Skips the PyTorch part when torch is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402

T = Tally('e2e_lora')
check = T.check

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")




def arenac(*args):
    return subprocess.run([ARENAC] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)


def bill(*args):
    r = arenac("-q", "--train", "--json", "-", *args)
    return (json.loads(r.stdout) if r.returncode == 0 else None), r


def counts(tmp):
    llama = os.path.join(tmp, "llama.onnx")
    subprocess.run([PYTHON, os.path.join(ROOT, "testdata", "gen_llama.py"),
                    "--preset", "llama-7b", llama], check=True,
                   stdout=subprocess.DEVNULL)
    rep, r = bill("--optimizer", "adam", "--checkpoint", "layer", "--lora",
                  "8", llama)
    t = rep and rep["training"]
    check("llama-7b q, v at r 8: 4,194,304 trained (torchtune)",
          t and t["trainable_parameters"] == 4194304 and
          t["lora"]["adapted_linears"] == 64 and
          t["frozen_parameters"] == 6738415616, t or r.stderr)
    gpt = os.path.join(tmp, "gpt.onnx")
    subprocess.run([PYTHON, os.path.join(ROOT, "testdata", "gen_gpt.py"),
                    "--preset", "gpt2-small", gpt], check=True,
                   stdout=subprocess.DEVNULL)
    rep, r = bill("--lora", "8:16", "--trainable", "^lnf", gpt)
    t = rep and rep["training"]
    want = 12 * 8 * (768 + 3 * 768) + 2 * 768
    check("gpt2 small qkv at r 8, and the final norm", t and
          t["trainable_parameters"] == want and
          t["lora"] == {"rank": 8, "alpha": 16, "adapted_linears": 12,
                        "adapter_parameters": want - 2 * 768},
          t or r.stderr)
    rep, r = bill("--lora", "4", "--lora-target", r"\.fc[12]\.w$", gpt)
    t = rep and rep["training"]
    check("gpt2 small MLP at r 4", t and t["trainable_parameters"] ==
          12 * 4 * 2 * (768 + 3072), t or r.stderr)
    r = arenac("--train", "--lora", "4", "--lora-target", "nothing", gpt)
    check("a target matching no linear: exit 2", r.returncode == 2 and
          "matches no linear" in r.stderr, r.stderr)
    r = arenac("--train", "--lora", "1000", gpt)
    check("a rank above the weight's side: exit 2", r.returncode == 2 and
          "above the smaller side (768)" in r.stderr, r.stderr)
    r = arenac("--train", "--lora", "0", gpt)
    check("rank 0: exit 1", r.returncode == 1, r.stderr)


def qlora(tmp):
    sys.path.insert(0, HERE)
    from e2e_torch_oracle import arenac_side
    llama = os.path.join(tmp, "llama.onnx")
    step = ["--optimizer", "adamw8bit", "--precision", "bf16",
            "--checkpoint", "layer", "--lora", "16"]
    lora, r = bill(*step, llama)
    n = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008)   # the head excepted
    blocks = n // 64
    for dq, want in ((False, n // 2 + 4 * blocks + 224 * 64),
                     (True, n // 2 + blocks + 4 * (blocks // 256) +
                      224 * (4 + 64))):
        opts = step + ["--base-quant", "nf4"] + (["--double-quant"]
                                                 if dq else [])
        rep, r = bill(*opts, llama)
        if not check("qlora nf4%s plans" % (" double" if dq else ""),
                     rep is not None, r.stderr):
            continue
        t = rep["training"]
        bits = 8.0 * t["quantized_base_bytes"] / n
        check("qlora nf4%s: %d stored bytes (bitsandbytes %d), %.3f bits "
              "a weight" % (" double" if dq else "",
                            t["quantized_base_bytes"], want, bits),
              t["quantized_base_bytes"] == want and
              abs(bits - (4.127 if dq else 4.5)) < 0.001, t)
        check("qlora: the head and embeddings stay 16-bit, frozen",
              t["frozen_bytes"] == 2 * 2 * 32000 * 4096 + 65 * 4096 * 2 and
              t["frozen_parameters"] == 6738415616, t)
        check("qlora keeps LoRA's activations exactly",
              arenac_side(rep).total() == arenac_side(lora).total(),
              (arenac_side(rep).total(), arenac_side(lora).total()))
        ws = [(st["op"], st.get("scratch_bytes")) for st in rep["steps"]
              if st["op"] in ("QuantizedMatMul", "QuantizedMatMulGrad")]
        sizes = {4096 * 4096 * 2, 4096 * 11008 * 2}
        check("qlora: %d quantised steps, each holding its dequantised "
              "weight" % len(ws), len(ws) > 2 * 224 and
              all(b in sizes for _, b in ws), ws[:4])
    r = arenac("--train", "--base-quant", "nf4:100", llama)
    check("--base-quant nf4:100: exit 1", r.returncode == 1, r.stderr)


def torch_oracle(tmp):
    try:
        import torch
        import torch.nn as nn
    except ImportError as e:
        print("skipped: %s" % e)
        return
    sys.path.insert(0, HERE)
    import torch_saved
    import torch_transformers as tt
    from e2e_torch_oracle import arenac_side
    from e2e_torch_transformers import torch_kept

    class LoRALinear(nn.Module):
        """torchtune's LoRALinear: base(x) + (alpha / r) B(A(drop(x)))."""

        def __init__(self, base, r, alpha, p):
            super().__init__()
            self.base = base
            self.lora_a = nn.Linear(base.in_features, r, bias=False)
            self.lora_b = nn.Linear(r, base.out_features, bias=False)
            self.drop = nn.Dropout(p)
            self.s = alpha / r

        def forward(self, x):
            return self.base(x) + self.s * self.lora_b(self.lora_a(
                self.drop(x)))

    r, alpha = 4, 8
    for p in (0.0, 0.1):
        model, inputs, names, label = tt.build("gpt2")
        path = os.path.join(tmp, "gpt2_%g.onnx" % p)
        torch_saved.export(model, inputs, path, 17, names=names)
        for q in model.parameters():
            q.requires_grad_(False)
        for blk in model.h:
            blk.c_attn = LoRALinear(blk.c_attn, r, alpha, p)
        trained = sum(q.numel() for q in model.parameters()
                      if q.requires_grad)
        want = torch_kept(torch_saved.measure(model, inputs, label))
        opts = ["--checkpoint", "none", "--batch", str(tt.BATCH), "--lora",
                "%d:%d" % (r, alpha), "--lora-target", "c_attn"]
        if p:
            opts += ["--lora-dropout", str(p)]
        rep, res = bill(*opts, path)
        if not check("torch gpt2 c_attn LoRA, dropout %g: arenac plans" % p,
                     rep is not None, res.stderr):
            continue
        got = arenac_side(rep).total()
        check("torch gpt2 c_attn LoRA, dropout %g: %d trained (torch %d), "
              "kept %d (torch %d, %+.2f%%)" % (
                  p, rep["training"]["trainable_parameters"], trained, got,
                  want, 100.0 * (got - want) / want),
              rep["training"]["trainable_parameters"] == trained and
              abs(got - want) <= 0.01 * want)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        counts(tmp)
        qlora(tmp)
        torch_oracle(tmp)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
