#!/usr/bin/env python3
"""gen_llama.py - Llama-style ONNX graphs (RMSNorm, rotary embeddings,
SwiGLU, no biases, grouped or full attention) up to the Llama-7B shape,
and a model of a given parameter count for the ZeRO paper's Figure 1.

  python3 testdata/gen_llama.py OUT.onnx [--preset llama-7b|zero-7.5b]
      [--layers L] [--seq s] [--batch b] [--dim d] [--heads a]
      [--kv-heads k] [--ffn f] [--vocab V] [--dtype float32|float16]
      [--rmsnorm div|reciprocal] [--rope computed|table]
      [--mask where|additive] [--scale mul|div] [--external] [--no-check]

Input "input_ids" int64 [b, s]; output "logits" [b, s, V]; opset 17, all
shapes static.  Per layer i (input h{i}, output h{i+1}):

  RMSNorm l{i}.attn_norm: Pow(x, 2) X.sq -> ReduceMean X.ms -> Add eps
    X.ms_eps -> Sqrt X.rms -> Div(x, rms) X.xn (--rmsnorm div) or
    Reciprocal X.inv and Mul(x, inv) X.xn (reciprocal: torch's rsqrt
    export) -> Mul by the weight X.w: X
  q, k, v: MatMul by l{i}.wq [d, a*hd], l{i}.wk / l{i}.wv [d, k*hd] (no
    biases) -> Reshape [b,s,heads,hd] -> Transpose l{i}.q.t [b,a,s,hd] ...
  rotary (q and k): Slice halves X.x1, X.x2 -> Neg X.neg -> Concat
    X.rot = [-x2, x1] -> Mul by rope.cos X.cos_term, Mul rot by rope.sin
    X.sin_term -> Add: l{i}.q, l{i}.k
  grouped attention (k < a): Unsqueeze, Expand, Reshape repeat k and v to
    a heads (l{i}.k.rep, l{i}.v.rep)
  attention: Transpose l{i}.kT, MatMul l{i}.scores, scale (Mul 1/sqrt(hd)
    or Div), causal mask (Where on bool "causal", or Add of
    l{i}.mask.bias), Softmax l{i}.probs, MatMul l{i}.ctx, Transpose,
    Reshape l{i}.ctx.flat, MatMul by l{i}.wo -> l{i}.attn_out; residual
    Add l{i}.res1
  RMSNorm l{i}.ffn_norm; SwiGLU: MatMul l{i}.w1 -> l{i}.gate, Sigmoid
    l{i}.gate.sig, Mul l{i}.gate.silu; MatMul l{i}.w3 -> l{i}.up; Mul
    l{i}.swiglu; MatMul l{i}.w2 -> l{i}.down; residual Add h{i+1}
Then RMSNorm "norm" and the head MatMul by "output" [d, V] (untied).

Rotary tables: --rope computed (default) builds rope.cos / rope.sin
[s, hd] in the graph from scalars only (Range of positions and of
frequency indices, Cast, Mul, Exp, Unsqueeze, Mul, Concat, Cos, Sin), so
no float initializer but the parameters has rank >= 1; --rope table makes
them initializers (inline or external) as HF's cached buffers are: they
then look like parameters to anything that counts float initializers
(arenac takes them for buffers: train/buffers.c).

Presets:
  llama-7b   32 layers, d 4096, 32 heads, FFN 11008, vocab 32000, seq
             2048, batch 1, float16, external: 6,738,415,616 parameters
  zero-7.5b  40 layers, d 3840, 30 heads (hd 128), FFN 10240 (8/3 d),
             vocab 54922, seq 1024, batch 1, float16, external: exactly
             7,500,000,000 parameters, the Psi of ZeRO's Figure 1 (a
             transformer's count is a multiple of d; 3840 divides 7.5e9
             and the vocabulary takes up the rest, see solve_vocab)
Every model passes onnx's full check and strict shape inference before it
is written (extdata.check); external weights go to OUT.onnx.data, a file
that is never written.
"""
import math
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extdata  # noqa: E402
import gen_gpt  # noqa: E402
from gen_gpt import DTYPES, count_initializer_params  # noqa: E402

PRESETS = {
    "llama-7b": dict(layers=32, seq=2048, batch=1, dim=4096, heads=32,
                     kv_heads=32, ffn=11008, vocab=32000, dtype="float16",
                     external=True),
    "zero-7.5b": dict(layers=40, seq=1024, batch=1, dim=3840, heads=30,
                      kv_heads=30, ffn=10240, vocab=54922, dtype="float16",
                      external=True),
}


class Config:
    def __init__(self, layers=2, seq=16, batch=2, dim=64, heads=4,
                 kv_heads=None, ffn=172, vocab=128, dtype="float32",
                 rmsnorm="div", rope="computed", mask="where", scale="mul",
                 external=False, theta=10000.0, seed=0):
        kv_heads = kv_heads or heads
        assert dim % heads == 0 and heads % kv_heads == 0
        assert (dim // heads) % 2 == 0, "rotary needs an even head dim"
        assert rmsnorm in ("div", "reciprocal") and rope in ("computed",
                                                             "table")
        assert mask in ("where", "additive") and scale in ("mul", "div")
        self.__dict__.update(locals())
        del self.__dict__["self"]


def param_count(c):
    d, hd = c.dim, c.dim // c.heads
    per_layer = 2 * d * d + 2 * d * c.kv_heads * hd + 3 * d * c.ffn + 2 * d
    return c.layers * per_layer + 2 * c.vocab * d + d


def solve_vocab(params, layers, dim, heads, ffn, kv_heads=None):
    """The vocabulary that makes an untied model exactly params; None if
    no integer one exists."""
    c = Config(layers=layers, dim=dim, heads=heads, kv_heads=kv_heads,
               ffn=ffn, vocab=0)
    rest = params - param_count(c)
    if rest <= 0 or rest % (2 * dim):
        return None
    return rest // (2 * dim)


class Builder(gen_gpt.Builder):
    def rmsnorm(self, x, out):
        w = self.w.add(out + ".w", [self.c.dim])
        self.op("Pow", [x, self.scalar("two", 2.0)], out + ".sq")
        self.op("ReduceMean", [out + ".sq"], out + ".ms", axes=[-1],
                keepdims=1)
        self.op("Add", [out + ".ms", self.scalar("rms_eps", 1e-5)],
                out + ".ms_eps")
        self.op("Sqrt", [out + ".ms_eps"], out + ".rms")
        if self.c.rmsnorm == "div":
            self.op("Div", [x, out + ".rms"], out + ".xn")
        else:
            self.op("Reciprocal", [out + ".rms"], out + ".inv")
            self.op("Mul", [x, out + ".inv"], out + ".xn")
        return self.op("Mul", [out + ".xn", w], out)

    def rope_tables(self):
        c = self.c
        s, hd = c.seq, c.dim // c.heads
        if c.rope == "table":
            pos = np.arange(s)[:, None] * c.theta ** (
                -np.arange(0, hd, 2) / hd)[None, :]
            emb = np.concatenate([pos, pos], axis=1)
            for name, f in (("rope.cos", np.cos), ("rope.sin", np.sin)):
                if self.w.location:
                    t, n = extdata.external(name, self.elem, [s, hd],
                                            self.w.location, self.w.offset)
                    self.w.offset += n
                    self.w.inits.append(t)
                else:
                    self.w.const(name, f(emb).astype(self.np))
            return
        i64 = lambda n, v: self.const(n, np.int64(v))  # noqa: E731
        f32 = lambda n, v: self.const(n, np.float32(v))  # noqa: E731
        self.op("Range", [i64("zero_i", 0), i64("seq_len", s),
                          i64("one_i", 1)], "rope.pos_i")
        self.op("Cast", ["rope.pos_i"], "rope.pos", to=TensorProto.FLOAT)
        self.op("Range", [i64("zero_i", 0), i64("half_hd", hd // 2),
                          i64("one_i", 1)], "rope.idx_i")
        self.op("Cast", ["rope.idx_i"], "rope.idx", to=TensorProto.FLOAT)
        self.op("Mul", ["rope.idx", f32("rope.log_scale",
                                        -2.0 * math.log(c.theta) / hd)],
                "rope.expo")
        self.op("Exp", ["rope.expo"], "rope.inv_freq")
        self.op("Unsqueeze", ["rope.pos", self.ints("axis1", [1])],
                "rope.pos_col")
        self.op("Unsqueeze", ["rope.inv_freq", self.ints("axis0", [0])],
                "rope.freq_row")
        self.op("Mul", ["rope.pos_col", "rope.freq_row"], "rope.freqs")
        self.op("Concat", ["rope.freqs", "rope.freqs"], "rope.emb", axis=-1)
        for f in ("cos", "sin"):
            out = "rope." + f if self.elem == TensorProto.FLOAT else \
                "rope.%s32" % f
            self.op(f.capitalize(), ["rope.emb"], out)
            if out != "rope." + f:
                self.op("Cast", [out], "rope." + f, to=self.elem)

    def rotary(self, x, out):
        hd = self.c.dim // self.c.heads
        half = self.ints("half", [hd // 2])
        self.op("Slice", [x, self.ints("start0", [0]), half,
                          self.ints("last_axis", [-1])], out + ".x1")
        self.op("Slice", [x, half, self.ints("hd_end", [hd]),
                          self.ints("last_axis", [-1])], out + ".x2")
        self.op("Neg", [out + ".x2"], out + ".neg")
        self.op("Concat", [out + ".neg", out + ".x1"], out + ".rot", axis=-1)
        self.op("Mul", [x, "rope.cos"], out + ".cos_term")
        self.op("Mul", [out + ".rot", "rope.sin"], out + ".sin_term")
        return self.op("Add", [out + ".cos_term", out + ".sin_term"], out)

    def heads(self, x, out, n):
        hd = self.c.dim // self.c.heads
        self.op("Reshape", [x, self.ints("heads%d" % n, [0, 0, n, hd])],
                out + ".heads")
        return self.op("Transpose", [out + ".heads"], out + ".t",
                       perm=[0, 2, 1, 3])

    def repeat_kv(self, x, out):
        c = self.c
        rep = c.heads // c.kv_heads
        if rep == 1:
            return x
        hd = c.dim // c.heads
        self.op("Unsqueeze", [x, self.ints("axis2", [2])], out + ".unsq")
        self.op("Expand", [out + ".unsq", self.ints("rep_shape",
                                                    [1, 1, rep, 1, 1])],
                out + ".exp")
        return self.op("Reshape", [out + ".exp", self.ints(
            "rep_merge", [0, c.heads, c.seq, hd])], out + ".rep")

    def attention(self, x, p):
        c = self.c
        d, a, kv = c.dim, c.heads, c.kv_heads
        hd = d // a
        for t, n in (("q", a), ("k", kv), ("v", kv)):
            w = self.w.add("%s.w%s" % (p, t), [d, n * hd])
            self.op("MatMul", [x, w], "%s.%s.flat" % (p, t))
            self.heads("%s.%s.flat" % (p, t), "%s.%s" % (p, t), n)
        q = self.rotary(p + ".q.t", p + ".q")
        k = self.repeat_kv(self.rotary(p + ".k.t", p + ".k"), p + ".k")
        v = self.repeat_kv(p + ".v.t", p + ".v")
        self.op("Transpose", [k], p + ".kT", perm=[0, 1, 3, 2])
        self.probs(q, p + ".kT", p, hd)
        self.op("MatMul", [p + ".probs", v], p + ".ctx")
        self.op("Transpose", [p + ".ctx"], p + ".ctx.t", perm=[0, 2, 1, 3])
        self.op("Reshape", [p + ".ctx.t", self.ints("merge", [0, 0, d])],
                p + ".ctx.flat")
        wo = self.w.add(p + ".wo", [d, d])
        return self.op("MatMul", [p + ".ctx.flat", wo], p + ".attn_out")

    def layer(self, i):
        c = self.c
        p, x = "l%d" % i, "h%d" % i
        attn = self.attention(self.rmsnorm(x, p + ".attn_norm"), p)
        self.op("Add", [x, attn], p + ".res1")
        n = self.rmsnorm(p + ".res1", p + ".ffn_norm")
        self.op("MatMul", [n, self.w.add(p + ".w1", [c.dim, c.ffn])],
                p + ".gate")
        self.op("Sigmoid", [p + ".gate"], p + ".gate.sig")
        self.op("Mul", [p + ".gate", p + ".gate.sig"], p + ".gate.silu")
        self.op("MatMul", [n, self.w.add(p + ".w3", [c.dim, c.ffn])],
                p + ".up")
        self.op("Mul", [p + ".gate.silu", p + ".up"], p + ".swiglu")
        self.op("MatMul", [p + ".swiglu",
                           self.w.add(p + ".w2", [c.ffn, c.dim])],
                p + ".down")
        return self.op("Add", [p + ".res1", p + ".down"], "h%d" % (i + 1))


def build(c):
    """The ModelProto for Config c (not yet checked)."""
    bld = Builder(c, "llama.onnx.data")
    s = c.seq
    bld.w.add("tok_embeddings", [c.vocab, c.dim])
    bld.causal()
    bld.rope_tables()
    bld.op("Gather", ["tok_embeddings", "input_ids"], "h0", axis=0)
    for i in range(c.layers):
        bld.layer(i)
    bld.rmsnorm("h%d" % c.layers, "norm")
    bld.op("MatMul", ["norm", bld.w.add("output", [c.dim, c.vocab])],
           "logits")
    return extdata.make_model(
        bld.nodes, "llama",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64,
                                       [c.batch, s])],
        [helper.make_tensor_value_info("logits", bld.elem,
                                       [c.batch, s, c.vocab])],
        bld.w.inits, 17)


def make(**kw):
    c = Config(**kw)
    return c, build(c)


def counts(c, model):
    """(float initializers of rank >= 1, param_count plus rotary tables)."""
    tables = 2 * c.seq * (c.dim // c.heads) if c.rope == "table" else 0
    return count_initializer_params(model), param_count(c) + tables


def main(argv):
    gen_gpt.run_cli(argv, __doc__, PRESETS,
                    ("layers", "seq", "batch", "dim", "heads", "kv-heads",
                     "ffn", "vocab"),
                    {"dtype": sorted(DTYPES), "rmsnorm": ("div",
                                                          "reciprocal"),
                     "rope": ("computed", "table"),
                     "mask": ("where", "additive"), "scale": ("mul", "div")},
                    {}, make, counts)


if __name__ == "__main__":
    main(sys.argv[1:])
