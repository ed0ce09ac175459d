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
- arenac's training plan of a float16 GPT layer against Korthikanti's
  formula (plus the named decomposition extras, apart from the per-row
  LayerNorm statistics), once arenac trains GPT graphs: until then one
  `skipped:` line with arenac's error.

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


def layer_saved(report, layer):
    """Resident saved buffers of gen_gpt layer `layer`: roots of tensors
    named l{i}.* or h{i} that a forward step produced and a backward step
    reads.  {root: bytes}."""
    tensors = {t["name"]: t for t in report["tensors"]}
    phase = {o: s["phase"] for s in report["steps"] for o in s["outputs"]}
    read = {i for s in report["steps"] if s["phase"] == "backward"
            for i in s["inputs"]}
    out = {}
    for n in read:
        if not (n.startswith("l%d." % layer) or n == "h%d" % layer):
            continue
        if phase.get(n) != "forward":
            continue
        r = n
        while tensors[r]["alias_of"] or tensors[r]["inplace_of"]:
            r = tensors[r]["alias_of"] or tensors[r]["inplace_of"]
        out[r] = tensors[r]["bytes"]
    return out


def korthikanti_vs_arenac(tmp):
    """A float16 GPT (LN op, Erf GELU, dropout), layer 1 of 3."""
    c = gen_gpt.Config(layers=3, seq=32, batch=2, hidden=64, heads=4,
                       vocab=96, dtype="float16")
    path = os.path.join(tmp, "gpt_fp16.onnx")
    onnx.save(gen_gpt.build(c), path)
    p = subprocess.run([ARENAC, "-q", "--train", "--checkpoint", "none",
                        "--json", "-", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        print("skipped: arenac cannot train gen_gpt.py's GPT yet: %s" %
              p.stderr.strip())
        return
    s, b, h, a = c.seq, c.batch, c.hidden, c.heads
    saved = layer_saved(json.loads(p.stdout), 1)
    rows = {r: n for r, n in saved.items() if n <= s * b * 4}
    want = korthikanti.formula(s, b, h, a) + sum(
        korthikanti.decomposition_extras(s, b, h, 1).values())
    got = sum(saved.values()) - sum(rows.values())
    terms = {t.root for t in korthikanti.breakdown(s, b, h, a, layer=1)}
    print("  GPT fp16 layer 1: arenac keeps %d bytes (+%d in row-sized "
          "tensors %s; float32 LayerNorm statistics would be %s), "
          "Korthikanti + extras %s" % (got, sum(rows.values()), sorted(rows),
                                       korthikanti.ln_stats(s, b), want))
    check("korthikanti layer bytes", got == want,
          "missing %s, beyond the terms %s" % (
              sorted(terms - set(saved)),
              sorted(set(saved) - terms - set(rows))))


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
