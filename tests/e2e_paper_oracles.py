#!/usr/bin/env python3
"""e2e_paper_oracles.py - the transformer test models and the published
formulas the training planner is checked against, checked themselves.

- tests/korthikanti.py: every itemised breakdown sums to its closed form
  and to Korthikanti et al.'s Table 2 row, for several (s, b, h, a, t);
- tests/zero_paper.py: ZeRO's Figure 1 to the byte (120, 31.4, 16.6 and
  1.9 GB for 7.5 B parameters on 64 devices);
- testdata/gen_gpt.py, every option: the model passes onnx's full check
  and strict shape inference; each tensor the breakdown names exists with
  the element count and width the term says (float16 2 bytes, float32 4,
  masks bool), so the mapping from paper terms to tensor names is true of
  the graph; the decomposition extras too; parameters counted from the
  initializers equal param_count(); external weights are all external and
  their file is never written; arenac plans the inference graph;
- testdata/gen_llama.py, every option and the presets: checks as above;
  llama-7b has 6,738,415,616 parameters, zero-7.5b exactly 7.5e9, and
  the ZeRO figures computed from the count read off its initializers are
  Figure 1's;
- arenac's training plan of a GPT layer with --precision mixed-fp16
  against Korthikanti's formula, for several (s, b, h, a): the tensors
  the backward pass keeps are exactly the paper's terms (names from
  korthikanti.breakdown) plus the LayerNorm statistics (float32 mean and
  1/std per row, which the formula leaves out: ln_stats()), and their
  bytes s*b*h*(34 + 5*a*s/h) exactly; with --grad-fuse none the Erf GELU
  chain's two extra tensors (decomposition_extras) besides; the same
  exactly with LayerNorm and the tanh GELU decomposed as torch exports
  them below opset 17 (the decomposition's mean and std the statistics).

Environment: ARENAC (default build/arenac).  Skipped when onnx is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "testdata"))
try:
    import onnx
    from onnx import TensorProto
    import extdata
    import gen_gpt
    import gen_llama
except ImportError as e:
    print("skipped: onnx is not importable for %s (%s)" % (sys.executable,
                                                           e))
    sys.exit(0)
import korthikanti
import zero_paper

ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
WIDTH = {TensorProto.FLOAT: 4, TensorProto.FLOAT16: 2, TensorProto.BOOL: 1}

results = [0, 0]


def check(what, ok, detail=""):
    results[0 if ok else 1] += 1
    if not ok:
        print("FAIL %s %s" % (what, detail))
    return ok


def numel(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def save_and_plan(model, tmp, name):
    """Writes the model (never its external data) and plans inference."""
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    p = subprocess.run([ARENAC, "-q", "--json", "-", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    check("%s: arenac plans inference" % name, p.returncode == 0,
          p.stderr.strip())
    written = [f for f in os.listdir(tmp) if f.endswith(".data")]
    check("%s: no external data file written" % name, not written, written)
    return path


def external_ok(model):
    floats = (TensorProto.FLOAT, TensorProto.FLOAT16)
    return all(t.data_location == TensorProto.EXTERNAL
               for t in model.graph.initializer
               if t.data_type in floats and len(t.dims) >= 1)


GPT_VARIANTS = [
    dict(),
    dict(dtype="float16"),
    dict(dropout=False, layernorm="decomposed", gelu="tanh",
         mask="additive", scale="div", tied=True),
    dict(dtype="float16", layernorm="decomposed", external="gpt.onnx.data",
         seq=32, batch=3, hidden=96, heads=3, layers=3),
]


def variants(gen, kws, params):
    """Each variant of a generator, fully checked by onnx: (name, config,
    model, inferred shapes), its parameter count and external weights
    checked on the way (params(c, m) -> (counted, expected))."""
    for i, kw in enumerate(kws):
        name = "%s%d" % (gen.__name__.replace("gen_", ""), i)
        c, m = gen.make(**kw)
        shapes = extdata.value_shapes(extdata.check(m))
        counted, expected = params(c, m)
        check(name + ": parameters", counted == expected, (counted,
                                                           expected))
        if c.external:
            check(name + ": weights external", external_ok(m))
        yield name, c, m, shapes


def gpt_checks(tmp):
    for name, c, m, shapes in variants(
            gen_gpt, GPT_VARIANTS, lambda c, m: (
                gen_gpt.count_initializer_params(m),
                gen_gpt.param_count(c))):
        act = 2 if c.dtype == "float16" else 4
        s, b, h, a = c.seq, c.batch, c.hidden, c.heads
        for layer in range(c.layers):
            terms = korthikanti.breakdown(s, b, h, a, layer=layer, act=act,
                                          dropout=c.dropout)
            for t in terms:
                for tensor in (t.tensor, t.root):
                    et, dims = shapes.get(tensor, (None, None))
                    check("%s: %s (%s)" % (name, tensor, t.label),
                          dims is not None and numel(dims) == t.elements and
                          WIDTH[et] == (1 if t.mask else act),
                          "shape %s type %s, term %s elements" % (
                              dims, et, t.elements))
            extras = korthikanti.decomposition_extras(
                s, b, h, layer, c.gelu, c.layernorm, act=act, stats=act)
            for tensor, nbytes in extras.items():
                et, dims = shapes.get(tensor, (None, None))
                check("%s: extra %s" % (name, tensor), dims is not None and
                      numel(dims) * WIDTH[et] == nbytes, (dims, nbytes))
        save_and_plan(m, tmp, name)
        os.remove(os.path.join(tmp, name + ".onnx"))


LLAMA_VARIANTS = [
    dict(),
    dict(dtype="float16", kv_heads=2, rmsnorm="reciprocal", rope="table",
         mask="additive", scale="div"),
    dict(kv_heads=1, external="llama.onnx.data", dtype="float16"),
]


def llama_checks(tmp):
    for name, c, m, shapes in variants(gen_llama, LLAMA_VARIANTS,
                                       gen_llama.counts):
        hd = c.dim // c.heads
        want = {"l0.q": [c.batch, c.heads, c.seq, hd],
                "l0.kT": [c.batch, c.heads, hd, c.seq],
                "l0.probs": [c.batch, c.heads, c.seq, c.seq],
                "l0.swiglu": [c.batch, c.seq, c.ffn],
                "rope.cos": [c.seq, hd], "logits": [c.batch, c.seq, c.vocab]}
        for tensor, dims in want.items():
            check("%s: %s shape" % (name, tensor),
                  shapes.get(tensor, (0, None))[1] == dims,
                  shapes.get(tensor))
        save_and_plan(m, tmp, name)
        os.remove(os.path.join(tmp, name + ".onnx"))
    for preset, count in (("llama-7b", 6_738_415_616),
                          ("zero-7.5b", 7_500_000_000)):
        kw = dict(gen_llama.PRESETS[preset])
        kw["external"] = preset + ".onnx.data"
        c = gen_llama.Config(**kw)
        m = gen_llama.build(c)
        extdata.check(m)
        psi = gen_gpt.count_initializer_params(m)
        check(preset + ": parameters", psi == count == gen_llama.param_count(
            c), psi)
        check(preset + ": weights external", external_ok(m))
        check(preset + ": model file small", m.ByteSize() < 400_000,
              m.ByteSize())
        if preset == "zero-7.5b":
            got = {st: zero_paper.per_device(psi, 64, st)["total"]
                   for st in range(4)}
            check("zero-7.5b: Figure 1", got == zero_paper.figure1(), got)
            print("  zero-7.5b: %d parameters; per device on 64: %s GB" % (
                psi, ", ".join("%.1f" % (v / 1e9) for v in got.values())))
        if preset == "llama-7b":
            save_and_plan(m, tmp, preset)


def layer_saved(report, layer, readers=("backward",)):
    """What gen_gpt layer `layer` keeps for the backward pass: the tensors
    named l{i}.* or h{i} that a forward step produced and a step of a
    phase in `readers` reads, {name: its buffer (through alias_of and
    inplace_of)}, and the buffers' bytes, {buffer: bytes}."""
    tensors = {t["name"]: t for t in report["tensors"]}
    phase = {o: s["phase"] for s in report["steps"] for o in s["outputs"]}
    read = {i for s in report["steps"] if s["phase"] in readers
            for i in s["inputs"]}
    names, size = {}, {}
    for n in read:
        if not (n.startswith("l%d." % layer) or n == "h%d" % layer):
            continue
        if phase.get(n) != "forward":
            continue
        r = n
        while tensors[r]["alias_of"] or tensors[r]["inplace_of"]:
            r = tensors[r]["alias_of"] or tensors[r]["inplace_of"]
        names[n] = r
        size[r] = tensors[r]["bytes"]
    return names, size


KORTHIKANTI_CONFIGS = [  # (s, b, h, a): the paper's formula holds for any
    (32, 2, 64, 4), (64, 1, 96, 3), (16, 4, 128, 8), (128, 2, 64, 2)]


def korthikanti_layer(tmp, s, b, h, a, fuse, layernorm="op", gelu="erf"):
    """Layer 1 of a 3-layer gen_gpt GPT (LN op or decomposed, Erf or tanh
    GELU, dropout) trained with --precision mixed-fp16: the tensors arenac
    keeps are exactly the paper's terms plus the LayerNorm statistics
    (float32, per row: mean and 1/std, or the decomposition's mean and
    std), and their bytes s*b*h*(34 + 5*a*s/h) exactly; with --grad-fuse
    none the Erf chain's two extras besides."""
    c = gen_gpt.Config(layers=3, seq=s, batch=b, hidden=h, heads=a,
                       vocab=96, layernorm=layernorm, gelu=gelu)
    path = os.path.join(tmp, "gpt_k.onnx")
    onnx.save(gen_gpt.build(c), path)
    p = subprocess.run([ARENAC, "-q", "--train", "--checkpoint", "none",
                        "--precision", "mixed-fp16", "--grad-fuse", fuse,
                        "--json", "-", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    name = "korthikanti (s %d, b %d, h %d, a %d, LN %s, GELU %s, " \
        "--grad-fuse %s)" % (s, b, h, a, layernorm, gelu, fuse)
    if not check(name + ": arenac trains it", p.returncode == 0,
                 p.stderr.strip()):
        return
    names, size = layer_saved(json.loads(p.stdout), 1)
    stats = {n for n in names if n.endswith((".mean", ".inv_std",
                                             ".std"))}
    extras = korthikanti.decomposition_extras(s, b, h, 1) \
        if fuse == "none" else {}
    terms = {t.tensor for t in korthikanti.breakdown(s, b, h, a, layer=1)}
    check(name + ": the paper's terms", set(names) - stats ==
          terms | set(extras), "missing %s, beyond %s" % (
              sorted(terms | set(extras) - set(names)),
              sorted(set(names) - stats - terms - set(extras))))
    row_bytes = sum(size[names[n]] for n in stats)
    got = sum(size.values()) - row_bytes
    want = korthikanti.formula(s, b, h, a) + sum(extras.values())
    check(name + ": bytes", got == want, (got, want))
    check(name + ": LayerNorm statistics", row_bytes ==
          korthikanti.ln_stats(s, b), (row_bytes, korthikanti.ln_stats(s, b)))
    print("  GPT layer 1 (LN %s, GELU %s), mixed-fp16, s %d b %d h %d a "
          "%d, --grad-fuse %s: arenac keeps %d bytes, formula %s%s, + %d "
          "bytes of LayerNorm statistics" % (layernorm, gelu, s, b, h, a,
                                             fuse, got,
                                    korthikanti.formula(s, b, h, a),
                                    " + extras %d" % sum(extras.values())
                                    if extras else "", row_bytes))


def round_up(x, m):
    return (x + m - 1) // m * m


def korthikanti_flash(tmp, s, b, h, a):
    """The same layer with --attention flash: Table 2's row without the
    5as^2b of the score matrices, plus the fp32 log-sum-exp (4abs), plus
    the kernel's output O [b, a, s, d] (2sbh).  Megatron's kernel writes O
    in the layout its projection reads, so the paper counts it once; the
    exported graph (as nanoGPT's y.transpose(1, 2).contiguous()) copies it
    before the projection, and torch keeps both: SDPA's flash backward
    takes out, and the Linear its own input.  No score matrix (scores,
    scaled, masked, probs) is in the arena at any step; FlashAttentionGrad has FlashAttention-2's mha_bwd workspace
    (dq_accum and softmax_d, fp32, s rounded to 128, d to 32)."""
    c = gen_gpt.Config(layers=3, seq=s, batch=b, hidden=h, heads=a,
                       vocab=96)
    path = os.path.join(tmp, "gpt_f.onnx")
    onnx.save(gen_gpt.build(c), path)
    p = subprocess.run([ARENAC, "-q", "--train", "--checkpoint", "none",
                        "--precision", "mixed-fp16", "--attention", "flash",
                        "--json", "-", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    name = "flash (s %d, b %d, h %d, a %d)" % (s, b, h, a)
    if not check(name + ": arenac trains it", p.returncode == 0,
                 p.stderr.strip()):
        return
    rep = json.loads(p.stdout)
    names, size = layer_saved(rep, 1)
    stats = {n for n in names if n.endswith((".mean", ".inv_std"))}
    got = sum(size.values()) - sum(size[names[n]] for n in stats)
    want = (korthikanti.formula(s, b, h, a) - 5 * a * s * s * b +
            4 * a * s * b + 2 * s * b * h)
    check(name + ": bytes", got == want, (got, want))
    check(name + ": kept lse and O, not the scores",
          {"l1.ctx", "l1.ctx.lse"} <= set(names) and
          not {"l1.probs", "l1.probs.drop", "l1.probs.mask"} & set(names),
          sorted(names))
    check(name + ": no score matrix in the arena",
          not [t["name"] for t in rep["tensors"] if t["offset"] is not
               None and t["name"].split(".")[1:2] in (
                   ["scores"], ["scaled"], ["masked"], ["probs"])], "")
    d = h // a
    ws = {st["scratch_bytes"] for st in rep["steps"]
          if st["op"] == "FlashAttentionGrad"}
    check(name + ": mha_bwd's workspace", ws == {
        b * a * round_up(s, 128) * (round_up(d, 32) + 1) * 4}, ws)
    print("  GPT layer 1, mixed-fp16, --attention flash, s %d b %d h %d "
          "a %d: arenac keeps %d bytes = 34sbh + 4abs + 2sbh" % (
              s, b, h, a, got))


GQA_CONFIGS = [  # (s, b, dim, heads, kv heads)
    (16, 2, 64, 8, 2), (32, 1, 96, 6, 3), (16, 3, 64, 4, 1)]


def flash_plan(tmp, name, c):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(gen_llama.build(c), path)
    p = subprocess.run([ARENAC, "-q", "--train", "--checkpoint", "none",
                        "--precision", "mixed-fp16", "--attention", "flash",
                        "--selfcheck", "--json", "-", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if not check(name + ": arenac trains it", p.returncode == 0,
                 p.stderr.strip()):
        return None
    return json.loads(p.stdout)


def llama_gqa_flash(tmp, s, b, dim, a, kv):
    """Grouped-query attention under --attention flash: the kernel takes k
    and v with their kv heads (FlashAttention-2's q (b, s, h, d), k and v
    (b, s, h_kv, d)), so gen_llama's repeat_kv (Unsqueeze, Expand, Reshape)
    and the transposed copy of the expanded keys leave the graph: layer 1
    keeps 2 b (a - kv) s d x 2 bytes less than the same layer with a kv
    heads (where k and v have a heads of their own), and its backward's
    workspace gains mha_bwd's dk_expanded and dv_expanded, 2 b a s d x 2
    bytes beside dq_accum and softmax_d."""
    name = "llama GQA flash (s %d, b %d, dim %d, a %d, kv %d)" % (
        s, b, dim, a, kv)
    d = dim // a
    cfg = dict(layers=3, seq=s, batch=b, dim=dim, heads=a, vocab=96)
    gqa = flash_plan(tmp, "gqa", gen_llama.Config(kv_heads=kv, **cfg))
    mha = flash_plan(tmp, "mha", gen_llama.Config(kv_heads=a, **cfg))
    if gqa is None or mha is None:
        return
    kept = [sum(layer_saved(r, 1)[1].values()) for r in (gqa, mha)]
    want = 2 * b * (a - kv) * s * d * 2
    check(name + ": the layer keeps the kv heads, %d bytes less" % want,
          kept[1] - kept[0] == want, (kept, want))
    tensors = {t["name"]: t for t in gqa["tensors"]}
    gone = [n for n in tensors if n.startswith("l1.") and
            n.split(".")[-1] in ("unsq", "exp", "rep", "kT")]
    check(name + ": no expansion copy in the plan", not gone, gone)
    fused = [st for st in gqa["steps"] if st["op"] == "FlashAttention" and
             st["name"].startswith("l1.")]
    heads = [tensors[i]["shape"][1] for i in fused[0]["inputs"][1:3]] \
        if fused else None
    check(name + ": the kernel reads k and v with %d heads" % kv,
          heads == [kv, kv], heads)
    ws = {st["scratch_bytes"] for st in gqa["steps"]
          if st["op"] == "FlashAttentionGrad"}
    base = b * a * round_up(s, 128) * (round_up(d, 32) + 1) * 4
    check(name + ": mha_bwd's workspace with dk, dv expanded",
          ws == {base + 2 * b * a * s * d * 2}, (ws, base))


def korthikanti_vs_arenac(tmp):
    for cfg in KORTHIKANTI_CONFIGS:
        korthikanti_layer(tmp, *cfg, fuse="gelu")
        korthikanti_flash(tmp, *cfg)
    for cfg in GQA_CONFIGS:
        llama_gqa_flash(tmp, *cfg)
    korthikanti_layer(tmp, *KORTHIKANTI_CONFIGS[0], fuse="none")
    # torch's opset-14 export of the same layer: the patterns give it
    # LayerNorm's and GELU's gradients, so it keeps the same bytes.
    for cfg in KORTHIKANTI_CONFIGS[:2]:
        korthikanti_layer(tmp, *cfg, fuse="gelu", layernorm="decomposed",
                          gelu="tanh")


def main():
    check("korthikanti.selfcheck", korthikanti.selfcheck() == 0)
    check("zero_paper.selfcheck", zero_paper.selfcheck() == 0)
    with tempfile.TemporaryDirectory(prefix="paper_oracles") as tmp:
        gpt_checks(tmp)
        llama_checks(tmp)
        korthikanti_vs_arenac(tmp)
    print("e2e_paper_oracles: %d passed, %d failed" % tuple(results))
    return 1 if results[1] else 0


if __name__ == "__main__":
    sys.exit(main())
