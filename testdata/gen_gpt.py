#!/usr/bin/env python3
"""gen_gpt.py - GPT (GPT-2 / Megatron style) ONNX graphs for the training
planner's transformer tests, built with onnx.helper.

  python3 testdata/gen_gpt.py OUT.onnx [--layers L] [--seq s] [--batch b]
      [--hidden h] [--heads a] [--vocab V] [--dtype float32|float16]
      [--no-dropout] [--layernorm op|decomposed] [--gelu erf|tanh]
      [--mask where|additive] [--scale mul|div] [--tied]
      [--external] [--preset gpt2-small] [--no-check]

Input "input_ids" int64 [b, s]; output "logits" [b, s, V] (arenac's
cross-entropy puts its label, int64 [b, s], beside it).  Opset 17, every
shape static.  The layer is the one Korthikanti et al. 2022 account for
in section 4.1 (tests/korthikanti.py maps each term of their formula onto
the tensor names below):

  h{i} -> LN -> l{i}.ln1 -> MatMul+Add l{i}.qkv [b,s,3h] -> Split ->
  Reshape [b,s,a,d] -> Transpose: l{i}.q [b,a,s,d], l{i}.kT [b,a,d,s],
  l{i}.v [b,a,s,d] -> MatMul l{i}.scores [b,a,s,s] -> scale (Mul by the
  constant 1/sqrt(d), or Div by sqrt(d)) l{i}.scaled -> causal mask
  (Where on the bool [s,s] "causal", or Add of a bias made from it)
  l{i}.masked -> Softmax l{i}.probs -> Dropout l{i}.probs.drop (mask
  l{i}.probs.mask) -> MatMul with V l{i}.ctx -> Transpose l{i}.ctx.t ->
  Reshape l{i}.ctx.flat [b,s,h] -> MatMul+Add l{i}.proj -> Dropout
  l{i}.proj.drop (l{i}.proj.mask) -> residual Add l{i}.res1 -> LN l{i}.ln2
  -> MatMul+Add l{i}.fc1 [b,s,4h] -> GELU l{i}.gelu -> MatMul+Add l{i}.fc2
  -> Dropout l{i}.fc2.drop (l{i}.fc2.mask) -> residual Add h{i+1}

Embeddings: Gather of "wte" [V,h] by the ids plus Gather of "wpe" [s,h] by
the constant positions "pos_ids", then (with dropout) a Dropout: h0.
After the layers: LN "lnf", then the LM head: MatMul by "lm_head" [h,V],
or with --tied Gemm(transB) by "wte" itself on the flattened [b*s,h].

Options:
  dropout     training-mode Dropout (ratio input "dropout_ratio", mode
              input "training_mode" true, bool mask output) after the
              embeddings, on the attention probabilities, after the output
              projection and after the MLP; --no-dropout drops all four.
  layernorm   op: LayerNormalization (opset 17, output only Y, as torch
              exports it); decomposed: ReduceMean, Sub, Pow, ReduceMean,
              Add eps, Sqrt, Div, Mul by the scale, Add the bias (torch's
              opset-14 export), intermediates named X.mean, X.xc, X.sq,
              X.var, X.var_eps, X.std, X.xn, X.scaled for an LN output X.
  gelu        erf: x * (1 + erf(x / sqrt 2)) * 0.5 (Div, Erf, Add, Mul,
              Mul: torch's export); tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x +
              0.044715 x^3))) (Pow, Mul, Add, Mul, Tanh, Add, Mul, Mul).
  mask        where: Where(causal, scores, -max); additive: Add of
              l{i}.mask.bias = Where(causal, 0, -max) computed in the graph
              (so no float [s,s] initializer looks like a parameter).
  scale       mul: Mul by the 0-d constant 1/sqrt(d); div: Div by sqrt(d).
  dtype       float32 or float16 for weights and activations (Softmax and
              LayerNormalization in that dtype too; masks are bool).
  weights     inline: small random values (N(0, 0.02)); --external: every
              parameter and the causal mask as external data in
              OUT.onnx.data, a file that is never written (arenac never
              reads weight bytes; see extdata.py).

Parameters (float initializers of rank >= 1; scalars, "pos_ids" and
"causal" are not): per layer 12 h^2 + 13 h, plus V h + s h (embeddings),
2 h (final LN) and, untied, V h (head).  param_count() gives the figure.
Every model is checked with onnx's full checker and strict shape
inference before it is written (extdata.check).
"""
import argparse
import math
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extdata  # noqa: E402

DTYPES = {"float32": (TensorProto.FLOAT, np.float32),
          "float16": (TensorProto.FLOAT16, np.float16)}

PRESETS = {
    # GPT-2 small as issue 13's benchmark sizes it.
    "gpt2-small": dict(layers=12, seq=1024, batch=8, hidden=768, heads=12,
                       vocab=50257, tied=True, external=True),
}


class Config:
    def __init__(self, layers=2, seq=16, batch=2, hidden=64, heads=4,
                 vocab=128, dtype="float32", dropout=True, ratio=0.1,
                 layernorm="op", gelu="erf", mask="where", scale="mul",
                 tied=False, external=False, seed=0):
        assert hidden % heads == 0, "hidden must be a multiple of heads"
        assert dtype in DTYPES and layernorm in ("op", "decomposed")
        assert gelu in ("erf", "tanh") and mask in ("where", "additive")
        assert scale in ("mul", "div")
        self.__dict__.update(locals())
        del self.__dict__["self"]


def param_count(c):
    h = c.hidden
    n = c.layers * (12 * h * h + 13 * h) + c.vocab * h + c.seq * h + 2 * h
    return n + (0 if c.tied else c.vocab * h)


class Builder:
    """Nodes and constants of one graph; every value gets a chosen name.
    gen_llama.py's builder extends it."""

    def __init__(self, c, default_file):
        """Weights inline, or with c.external in the file it names (True:
        default_file)."""
        self.c = c
        location = None
        if c.external:
            location = c.external if isinstance(c.external, str) else \
                default_file
        self.elem, self.np = DTYPES[c.dtype]
        self.w = extdata.Weights(self.elem, location, seed=c.seed)
        self.nodes = []
        self.consts = set()

    def op(self, op_type, inputs, output, **attrs):
        outs = output if isinstance(output, list) else [output]
        self.nodes.append(helper.make_node(op_type, inputs, outs,
                                           name=outs[0], **attrs))
        return output

    def const(self, name, array):
        """A constant (shapes, axes, scalars), inline, added once."""
        if name not in self.consts:
            self.consts.add(name)
            self.w.const(name, array)
        return name

    def scalar(self, name, value):
        """A 0-d constant in the model dtype (never a parameter)."""
        return self.const(name, self.np(value))

    def ints(self, name, values):
        return self.const(name, np.array(values, dtype=np.int64))

    def causal(self):
        """The bool [s, s] lower-triangular mask "causal": external data
        with external weights (s = 2048 makes it 4 MB), else inline."""
        s = self.c.seq
        if self.w.location:
            t, n = extdata.external("causal", TensorProto.BOOL, [s, s],
                                    self.w.location, self.w.offset)
            self.w.offset += n
            self.w.inits.append(t)
        else:
            self.w.const("causal", np.tril(np.ones((s, s), dtype=np.bool_)))

    def probs(self, q, kT, p, d):
        """Attention probabilities p.probs from q and k^T: MatMul p.scores,
        scale p.scaled, causal mask p.masked, Softmax."""
        c = self.c
        self.op("MatMul", [q, kT], p + ".scores")
        if c.scale == "mul":
            self.op("Mul", [p + ".scores",
                            self.scalar("inv_sqrt_d", 1 / math.sqrt(d))],
                    p + ".scaled")
        else:
            self.op("Div", [p + ".scores",
                            self.scalar("sqrt_d", math.sqrt(d))],
                    p + ".scaled")
        neg = self.scalar("mask_value", -float(np.finfo(self.np).max))
        if c.mask == "where":
            self.op("Where", ["causal", p + ".scaled", neg], p + ".masked")
        else:
            self.op("Where", ["causal", self.scalar("zero", 0.0), neg],
                    p + ".mask.bias")
            self.op("Add", [p + ".scaled", p + ".mask.bias"], p + ".masked")
        return self.op("Softmax", [p + ".masked"], p + ".probs", axis=-1)

    def linear(self, x, prefix, n_in, n_out):
        w = self.w.add(prefix + ".w", [n_in, n_out])
        b = self.w.add(prefix + ".b", [n_out])
        self.op("MatMul", [x, w], prefix + ".mm")
        return self.op("Add", [prefix + ".mm", b], prefix)

    def dropout(self, x, out):
        """Training-mode Dropout: out, out-less-.drop + '.mask'."""
        if not self.c.dropout:
            return x
        self.const("dropout_ratio", np.float32(self.c.ratio))
        self.const("training_mode", np.bool_(True))
        mask = (out[:-len(".drop")] if out.endswith(".drop") else out) \
            + ".mask"
        self.op("Dropout", [x, "dropout_ratio", "training_mode"],
                [out, mask])
        return out

    def layernorm(self, x, out):
        h = self.c.hidden
        g = self.w.add(out + ".g", [h], value=None)
        b = self.w.add(out + ".b", [h], value=None)
        if self.c.layernorm == "op":
            return self.op("LayerNormalization", [x, g, b], out, axis=-1,
                           epsilon=1e-5)
        self.op("ReduceMean", [x], out + ".mean", axes=[-1], keepdims=1)
        self.op("Sub", [x, out + ".mean"], out + ".xc")
        self.op("Pow", [out + ".xc", self.scalar("two", 2.0)], out + ".sq")
        self.op("ReduceMean", [out + ".sq"], out + ".var", axes=[-1],
                keepdims=1)
        self.op("Add", [out + ".var", self.scalar("ln_eps", 1e-5)],
                out + ".var_eps")
        self.op("Sqrt", [out + ".var_eps"], out + ".std")
        self.op("Div", [out + ".xc", out + ".std"], out + ".xn")
        self.op("Mul", [out + ".xn", g], out + ".scaled")
        return self.op("Add", [out + ".scaled", b], out)

    def gelu(self, x, out):
        if self.c.gelu == "erf":
            self.op("Div", [x, self.scalar("sqrt2", math.sqrt(2.0))],
                    out + ".div")
            self.op("Erf", [out + ".div"], out + ".erf")
            self.op("Add", [out + ".erf", self.scalar("one", 1.0)],
                    out + ".erf1")
            self.op("Mul", [x, out + ".erf1"], out + ".xe")
            return self.op("Mul", [out + ".xe", self.scalar("half", 0.5)],
                           out)
        self.op("Pow", [x, self.scalar("three", 3.0)], out + ".cube")
        self.op("Mul", [out + ".cube", self.scalar("gelu_c", 0.044715)],
                out + ".cube_c")
        self.op("Add", [x, out + ".cube_c"], out + ".inner")
        self.op("Mul", [out + ".inner",
                        self.scalar("sqrt_2_pi", math.sqrt(2 / math.pi))],
                out + ".inner_c")
        self.op("Tanh", [out + ".inner_c"], out + ".tanh")
        self.op("Add", [out + ".tanh", self.scalar("one", 1.0)],
                out + ".tanh1")
        self.op("Mul", [x, out + ".tanh1"], out + ".xt")
        return self.op("Mul", [out + ".xt", self.scalar("half", 0.5)], out)

    def attention(self, x, p):
        c = self.c
        h, a = c.hidden, c.heads
        d = h // a
        qkv = self.linear(x, p + ".qkv", h, 3 * h)
        self.op("Split", [qkv], [p + ".q.flat", p + ".k.flat",
                                 p + ".v.flat"], axis=2)
        heads = self.ints("heads_shape", [0, 0, a, d])
        for t in "qkv":
            self.op("Reshape", [p + ".%s.flat" % t, heads],
                    p + ".%s.heads" % t)
        self.op("Transpose", [p + ".q.heads"], p + ".q", perm=[0, 2, 1, 3])
        self.op("Transpose", [p + ".k.heads"], p + ".kT", perm=[0, 2, 3, 1])
        self.op("Transpose", [p + ".v.heads"], p + ".v", perm=[0, 2, 1, 3])
        self.probs(p + ".q", p + ".kT", p, d)
        probs = self.dropout(p + ".probs", p + ".probs.drop")
        self.op("MatMul", [probs, p + ".v"], p + ".ctx")
        self.op("Transpose", [p + ".ctx"], p + ".ctx.t", perm=[0, 2, 1, 3])
        self.op("Reshape", [p + ".ctx.t", self.ints("merge_shape",
                                                    [0, 0, h])],
                p + ".ctx.flat")
        proj = self.linear(p + ".ctx.flat", p + ".proj", h, h)
        return self.dropout(proj, p + ".proj.drop")

    def layer(self, i):
        h = self.c.hidden
        p, x = "l%d" % i, "h%d" % i
        ln1 = self.layernorm(x, p + ".ln1")
        attn = self.attention(ln1, p)
        self.op("Add", [x, attn], p + ".res1")
        ln2 = self.layernorm(p + ".res1", p + ".ln2")
        fc1 = self.linear(ln2, p + ".fc1", h, 4 * h)
        gelu = self.gelu(fc1, p + ".gelu")
        fc2 = self.linear(gelu, p + ".fc2", 4 * h, h)
        mlp = self.dropout(fc2, p + ".fc2.drop")
        return self.op("Add", [p + ".res1", mlp], "h%d" % (i + 1))


def build(c):
    """The ModelProto for Config c (not yet checked)."""
    bld = Builder(c, "gpt.onnx.data")
    h, s, V = c.hidden, c.seq, c.vocab
    bld.w.add("wte", [V, h])
    bld.w.add("wpe", [s, h])
    bld.ints("pos_ids", list(range(s)))
    bld.causal()
    bld.op("Gather", ["wte", "input_ids"], "tok", axis=0)
    bld.op("Gather", ["wpe", "pos_ids"], "pos", axis=0)
    bld.op("Add", ["tok", "pos"], "emb")
    x = bld.dropout("emb", "h0")
    if x != "h0":
        bld.op("Identity", [x], "h0")
    for i in range(c.layers):
        bld.layer(i)
    bld.layernorm("h%d" % c.layers, "lnf")
    if c.tied:
        bld.op("Reshape", ["lnf", bld.ints("flat_shape", [-1, h])],
               "lnf.flat")
        bld.op("Gemm", ["lnf.flat", "wte"], "logits.flat", transB=1)
        bld.op("Reshape", ["logits.flat", bld.ints("logits_shape",
                                                   [-1, s, V])], "logits")
    else:
        bld.w.add("lm_head", [h, V])
        bld.op("MatMul", ["lnf", "lm_head"], "logits")
    elem = bld.elem
    model = extdata.make_model(
        bld.nodes, "gpt",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64,
                                       [c.batch, s])],
        [helper.make_tensor_value_info("logits", elem, [c.batch, s, V])],
        bld.w.inits, 17)
    return model


def count_initializer_params(model):
    """Float initializers of rank >= 1: what the tests call parameters."""
    floats = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16,
              TensorProto.DOUBLE)
    return sum(int(np.prod(t.dims, dtype=np.int64))
               for t in model.graph.initializer
               if t.data_type in floats and len(t.dims) >= 1)


def run_cli(argv, doc, presets, ints, choices, flags, make, params):
    """The command line of both generators: OUT.onnx, --preset, overrides
    (ints: integer options; choices: {option: values}; flags: {option:
    (dest, value)}), --external, --no-check; builds with make(**kw),
    checks the parameter count (params(config, model) -> (counted,
    expected)), runs the full onnx check and saves."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--preset", choices=sorted(presets))
    for k in ints:
        ap.add_argument("--" + k, type=int)
    for k, values in choices.items():
        ap.add_argument("--" + k, choices=values)
    for k, (dest, value) in flags.items():
        ap.add_argument("--" + k, dest=dest, action="store_const",
                        const=value, default=None)
    ap.add_argument("--external", action="store_true", default=None)
    ap.add_argument("--no-check", dest="check", action="store_false")
    a = ap.parse_args(argv)
    kw = dict(presets.get(a.preset, {}))
    names = [k.replace("-", "_") for k in list(ints) + list(choices)]
    for k in names + [d for d, _ in flags.values()] + ["external"]:
        if getattr(a, k) is not None:
            kw[k] = getattr(a, k)
    if kw.get("external"):
        kw["external"] = os.path.basename(a.out) + ".data"
    c, model = make(**kw)
    counted, expected = params(c, model)
    assert counted == expected, (counted, expected)
    if a.check:
        extdata.check(model)
    import onnx
    onnx.save(model, a.out)
    print("%s: %d layers, %d parameters, %s" % (
        a.out, c.layers, counted, "weights external (never written)"
        if c.external else "weights inline"))


def make(**kw):
    c = Config(**kw)
    return c, build(c)


def main(argv):
    run_cli(argv, __doc__, PRESETS,
            ("layers", "seq", "batch", "hidden", "heads", "vocab"),
            {"dtype": sorted(DTYPES), "layernorm": ("op", "decomposed"),
             "gelu": ("erf", "tanh"), "mask": ("where", "additive"),
             "scale": ("mul", "div")},
            {"no-dropout": ("dropout", False), "tied": ("tied", True)},
            make, lambda c, m: (count_initializer_params(m),
                                param_count(c)))


if __name__ == "__main__":
    main(sys.argv[1:])
