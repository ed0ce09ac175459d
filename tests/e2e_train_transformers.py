#!/usr/bin/env python3
"""e2e_train_transformers.py - `arenac --train` on the generated
transformers (testdata/gen_gpt.py, testdata/gen_llama.py), end to end.

For every generator variant (LayerNorm op or decomposed, Erf or tanh GELU,
Where or additive mask, Mul or Div scale, tied head, float16, RMSNorm
with Div or Reciprocal, rotary computed or as tables, grouped attention):
  - the step plans and passes the poison executor (--selfcheck) with
    mixed-bf16 Adam and with the loss in chunks;
  - the bill counts exactly the generator's parameters (rotary tables,
    float initializers, taken for buffers by train/buffers.c's rule), at
    2 + 2 + 4 + 8 = 16 bytes per parameter under mixed-bf16 Adam (ZeRO's accounting),
    and the persistent parts add up to the report's weights_bytes;
  - --loss-chunk 4 keeps a quarter of the logits (rounded up) at a time,
    shows its chunks in the JSON steps and the header's step table, and
    plans a smaller arena (where the loss is the peak; never larger);
  - --trainable on one layer trains only its parameters and bills the
    rest as frozen.
Then the presets: GPT-2 small and Llama-7B (external weights, never read):
their parameter counts and the mixed-bf16 Adam bill (ZeRO's 16 bytes per
parameter), the constants Llama-7B keeps (the bool causal mask and the
two bf16 rotary tables, a few scalars and shapes, nothing folded on the
way to them: 4.75 MB of folded rotary intermediates were once counted).

Environment: ARENAC (default build/arenac).  Skipped when onnx is missing.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The paper oracles' setup: the generators, ARENAC, check() and its
# tally (it prints the skip line and exits when onnx is missing).
from e2e_paper_oracles import ARENAC, check, gen_gpt, gen_llama, onnx, \
    results  # noqa: E402


def train(path, *opts, header=None):
    """The JSON report of `arenac --train OPTS path`, or None."""
    cmd = [ARENAC, "-q", "--train", "--json", "-"] + list(opts)
    if header:
        cmd += ["-o", header]
    p = subprocess.run(cmd + [path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if not check("%s %s: exit 0" % (os.path.basename(path), " ".join(opts)),
                 p.returncode == 0, p.stderr.strip()):
        return None
    return json.loads(p.stdout)


def persistent(t):
    return sum(t[k] for k in ("parameter_bytes", "gradient_bytes",
                              "master_weight_bytes", "optimizer_state_bytes",
                              "frozen_bytes", "constant_bytes"))


def bill_checks(name, r, params):
    """mixed-bf16 Adam: 2 + 2 + 4 + 8 bytes per parameter."""
    t = r["training"]
    check(name + ": parameters", t["parameters"] == params,
          (t["parameters"], params))
    want = (2 * params, 2 * params, 4 * params, 8 * params)
    got = (t["parameter_bytes"], t["gradient_bytes"],
           t["master_weight_bytes"], t["optimizer_state_bytes"])
    check(name + ": 16 bytes per parameter", got == want, (got, want))
    check(name + ": weights are the persistent parts",
          r["weights_bytes"] == persistent(t) ==
          t["total_bytes"] - t["arena_bytes"], (r["weights_bytes"], t))


def chunk_checks(name, path, whole, c, tmp):
    header = os.path.join(tmp, "chunks.h")
    r = train(path, "--loss-chunk", "4", "--selfcheck", header=header)
    if r is None:
        return
    t = r["training"]
    rows, width = c.batch * c.seq, 2 if c.dtype == "float16" else 4
    want = -(-rows // 4) * c.vocab * width
    check(name + ": a chunk's logits", t["logits_bytes"] ==
          t["logits_grad_bytes"] == want and t["loss_chunks"] == 4,
          (t["logits_bytes"], want))
    ops = [s["op"] for s in r["steps"]]
    check(name + ": chunk steps", ops.count("LogitsChunk") == 4 and
          ops.count("CrossEntropyChunkGrad") == 4 and "logits" not in
          {x["name"] for x in r["tensors"]}, ops[-40:])
    text = open(header).read()
    check(name + ": chunks in the header's step table",
          len(re.findall(r'"logits\.chunk\d"', text)) >= 4)
    # Chunks lower the arena where the whole loss is the peak; where the
    # peak is another step (a decomposed LayerNorm keeping only its
    # statistics, the MLP's backward is), they never raise it.
    peak = whole["steps"][whole["peak_step"]]["name"]
    if peak.split(".")[0] in ("logits", "loss"):
        check(name + ": smaller arena", r["arena_bytes"] <
              whole["arena_bytes"], (r["arena_bytes"], whole["arena_bytes"]))
    else:
        check(name + ": no larger arena (peak at %s)" % peak,
              r["arena_bytes"] <= whole["arena_bytes"],
              (r["arena_bytes"], whole["arena_bytes"]))
    check(name + ": chunked, weights are the persistent parts",
          r["weights_bytes"] == persistent(t), (r["weights_bytes"], t))


def variant(gen, name, kw, params, tmp):
    c, m = gen.make(**kw)
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(m, path)
    r = train(path, "--optimizer", "adam", "--precision", "mixed-bf16",
              "--selfcheck")
    if r is None:
        return
    bill_checks(name, r, params(c))
    whole = train(path)
    if whole is not None:
        chunk_checks(name, path, whole, c, tmp)
    return c, path


GPT = [
    ("gpt_op", dict()),
    ("gpt_fp16", dict(dtype="float16")),
    ("gpt_decomposed", dict(dropout=False, layernorm="decomposed",
                            gelu="tanh", mask="additive", scale="div",
                            tied=True)),
    ("gpt_wide", dict(dtype="float16", layernorm="decomposed", seq=32,
                      batch=3, hidden=96, heads=3, layers=3)),
]

LLAMA = [
    ("llama", dict()),
    ("llama_gqa", dict(dtype="float16", kv_heads=2, rmsnorm="reciprocal",
                       rope="table", mask="additive", scale="div")),
    ("llama_mqa", dict(kv_heads=1, dtype="float16")),
]


def finetune(path, c, tmp):
    """Only the last layer trains: its 12 h^2 + 13 h parameters."""
    h = c.hidden
    r = train(path, "--trainable", r"^l%d\." % (c.layers - 1),
              "--optimizer", "adam")
    if r is None:
        return
    t = r["training"]
    layer = 12 * h * h + 13 * h
    check("fine-tune the last layer: parameters", t["parameters"] == layer,
          t["parameters"])
    check("fine-tune: frozen bytes", t["frozen_bytes"] ==
          4 * (gen_gpt.param_count(c) - layer), t["frozen_bytes"])
    check("fine-tune: Adam state for the layer only",
          t["optimizer_state_bytes"] == 8 * layer)


PRESETS = [  # generator, preset, parameters
    (gen_gpt, "gpt2-small", 124_439_808),
    (gen_llama, "llama-7b", 6_738_415_616),
]


def presets(tmp):
    for gen, preset, count in PRESETS:
        kw = dict(gen.PRESETS[preset], external=preset + ".onnx.data")
        c = gen.Config(**kw)
        path = os.path.join(tmp, preset + ".onnx")
        onnx.save(gen.build(c), path)
        r = train(path, "--optimizer", "adam", "--precision", "mixed-bf16")
        if r is None:
            continue
        bill_checks(preset, r, count)
        t = r["training"]
        print("  %s, mixed-bf16 Adam: arena %d, logits %d, total %d "
              "bytes" % (preset, r["arena_bytes"], t["logits_bytes"],
                         t["total_bytes"]))
        if gen is gen_llama:
            # The mask and the tables, besides scalars and Reshape
            # targets (96 bytes).
            hd = c.dim // c.heads
            want = c.seq * c.seq + 2 * c.seq * hd * 2
            check(preset + ": constants are the mask and the rotary "
                  "tables", want <= t["constant_bytes"] < want + 128,
                  (t["constant_bytes"], want))


def main():
    with tempfile.TemporaryDirectory(prefix="train_tf") as tmp:
        last = None
        for name, kw in GPT:
            v = variant(gen_gpt, name, kw, gen_gpt.param_count, tmp)
            last = v if name == "gpt_op" else last
        for name, kw in LLAMA:
            variant(gen_llama, name, kw, gen_llama.param_count, tmp)
        if last:
            finetune(last[1], last[0], tmp)
        presets(tmp)
    print("e2e_train_transformers: %d passed, %d failed" % tuple(results))
    return 1 if results[1] else 0


if __name__ == "__main__":
    sys.exit(main())
