#!/usr/bin/env python3
"""e2e_attention_ops.py - training graphs that hold an attention op: ONNX's
Attention (opset 23) and com.microsoft's MultiHeadAttention.

Small hand-built graphs (x -> q, k, v projections -> the op -> output
projection), beside the same attention written out op by op as torch
exports it (Reshape, Transpose, MatMul, Mul, Softmax, MatMul, Transpose,
Reshape; grouped-query keys and values through repeat_kv's Unsqueeze,
Expand, Reshape):

- inference plans the ONNX op (it had no shape inference) with the
  schema's shapes (3-D and 4-D Y, qk_matmul_output over past + new keys);
- --train with the op plans what the op-by-op graph plans: the same arena,
  FLOPs forward and backward, the probabilities kept (math), and under
  --attention flash the same fused step (grouped-query k and v with their
  own heads) and bill;
- qk_matmul_output read: nothing fuses, flash warns; is_causal fuses;
- a KV cache or softcap: exit 2 naming the node;
- --checkpoint selective: warns that nothing is left to recompute only
  when every core is fused; with a core left op by op (its scores read)
  it recomputes that one and does not warn;
- the other policies over fused steps (testdata/gen_gpt.py, two layers,
  --attention flash): layer, sqrt and optimal plan and recompute the
  FlashAttention kernels themselves, optimal's arena the least of all.

Environment: ARENAC (default build/arenac).  Skipped when onnx is missing.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

from tally import ARENAC, Tally, need

np, onnx, gen_gpt = need("numpy", "onnx", "gen_gpt")
from onnx import helper, numpy_helper, TensorProto  # noqa: E402
T = Tally("e2e_attention_ops")
B, S, H, HEADS = 2, 16, 64, 4


class G:
    """Nodes, initializers and outputs of one graph."""

    def __init__(self):
        self.nodes, self.inits, self.outs = [], [], []
        self.rng = np.random.default_rng(0)

    def weight(self, name, shape):
        self.inits.append(numpy_helper.from_array(
            (self.rng.standard_normal(shape) * 0.02).astype(np.float32),
            name))
        return name

    def ints(self, name, vals):
        self.inits.append(numpy_helper.from_array(
            np.array(vals, dtype=np.int64), name))
        return name

    def node(self, op, ins, out, domain="", **attrs):
        self.nodes.append(helper.make_node(op, ins, [out], domain=domain,
                                           name=out, **attrs))
        return out

    def model(self, opsets):
        g = helper.make_graph(
            self.nodes, "attn",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                           [B, S, H])],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
             for o in ["y"] + self.outs], self.inits)
        m = helper.make_model(g, opset_imports=[
            helper.make_opsetid(d, v) for d, v in opsets])
        m.ir_version = 8
        return m


def projections(g, kv, fused=False):
    """q, k, v from x: three products, or (fused) one by (H, 3H) weights,
    its bias added, split in three (GPT-2's c_attn)."""
    d = H // HEADS
    if fused:
        qkv = g.node("MatMul", ["x", g.weight("Wqkv", (H, 3 * H))], "qkv")
        qkv = g.node("Add", [qkv, g.weight("bqkv", (3 * H,))], "qkv_b")
        g.nodes.append(helper.make_node(
            "Split", [qkv, g.ints("split", [H, H, H])], ["q", "k", "v"],
            name="split", axis=2))
        return
    g.node("MatMul", ["x", g.weight("Wq", (H, H))], "q")
    g.node("MatMul", ["x", g.weight("Wk", (H, kv * d))], "k")
    g.node("MatMul", ["x", g.weight("Wv", (H, kv * d))], "v")


def split(g, x, heads, perm, name):
    d = H // HEADS
    r = g.node("Reshape", [x, g.ints(name + ".shape", [B, S, heads, d])],
               name + ".heads")
    return g.node("Transpose", [r], name + ".t", perm=perm)


def op_by_op(kv=HEADS, causal=False, k4=False, fused=False):
    """The attention as torch exports it: what the ops should plan as
    (k4: K split into heads first, then transposed, as a 4-D K is)."""
    g = G()
    projections(g, kv, fused)
    d = H // HEADS
    q = split(g, "q", HEADS, [0, 2, 1, 3], "q")
    if kv == HEADS and not k4:
        kt = split(g, "k", kv, [0, 2, 3, 1], "k")
        v = split(g, "v", kv, [0, 2, 1, 3], "v")
    else:
        kv4 = {n: split(g, n, kv, [0, 2, 1, 3], n) for n in ("k", "v")}
        g.ints("axes", [2])
        for n in ("k", "v") if kv != HEADS else ():
            u = g.node("Unsqueeze", [kv4[n], "axes"], n + ".unsq")
            e = g.node("Expand", [u, g.ints(n + ".rep5", [
                B, kv, HEADS // kv, S, d])], n + ".exp")
            kv4[n] = g.node("Reshape", [e, g.ints(n + ".rep4", [
                B, HEADS, S, d])], n + ".rep")
        kt = g.node("Transpose", [kv4["k"]], "kT", perm=[0, 1, 3, 2])
        v = kv4["v"]
    s = g.node("MatMul", [q, kt], "scores")
    g.inits.append(numpy_helper.from_array(
        np.array(1 / math.sqrt(d), dtype=np.float32), "scale"))
    s = g.node("Mul", [s, "scale"], "scaled")
    if causal:
        g.inits.append(numpy_helper.from_array(
            np.tril(np.ones((S, S), dtype=bool)), "causal"))
        g.inits.append(numpy_helper.from_array(
            np.array(-np.inf, dtype=np.float32), "ninf"))
        s = g.node("Where", ["causal", s, "ninf"], "masked")
    p = g.node("Softmax", [s], "probs", axis=-1)
    y = g.node("MatMul", [p, v], "ctx4")
    y = g.node("Transpose", [y], "merged", perm=[0, 2, 1, 3])
    y = g.node("Reshape", [y, g.ints("out.shape", [B, S, H])], "ctx")
    g.node("MatMul", [y, g.weight("Wo", (H, H))], "y")
    return g.model([("", 17)])


def onnx_op(kv=HEADS, four_d=False, causal=False, qk=None, past=False,
            softcap=0.0, layers=1):
    """ONNX's Attention on the projections (3-D, or split to 4-D first)."""
    g = G()
    x = "x"
    for i in range(layers):
        pre = "l%d." % i if layers > 1 else ""
        g.node("MatMul", [x, g.weight(pre + "Wq", (H, H))], pre + "q")
        d = H // HEADS
        g.node("MatMul", [x, g.weight(pre + "Wk", (H, kv * d))], pre + "k")
        g.node("MatMul", [x, g.weight(pre + "Wv", (H, kv * d))], pre + "v")
        ins = [pre + "q", pre + "k", pre + "v"]
        if four_d:
            ins = [split(g, pre + "q", HEADS, [0, 2, 1, 3], pre + "q4"),
                   split(g, pre + "k", kv, [0, 2, 1, 3], pre + "k4"),
                   split(g, pre + "v", kv, [0, 2, 1, 3], pre + "v4")]
        if past:
            ins += ["", "past_k", "past_v"]
            for n in ("past_k", "past_v"):
                g.inits.append(numpy_helper.from_array(
                    np.zeros((B, kv, 4, d), dtype=np.float32), n))
        outs = [pre + "ctx"]
        attrs = dict(is_causal=int(causal))
        if not four_d:
            attrs.update(q_num_heads=HEADS, kv_num_heads=kv)
        if softcap:
            attrs["softcap"] = softcap
        if qk is not None and (layers == 1 or i == 0):
            outs += ["", "", pre + "qk"]
            attrs["qk_matmul_output_mode"] = qk
            g.outs.append(pre + "qk")
        g.nodes.append(helper.make_node("Attention", ins, outs,
                                        name=pre + "attn", **attrs))
        ctx = pre + "ctx"
        if four_d:
            ctx = g.node("Transpose", [ctx], pre + "merged",
                         perm=[0, 2, 1, 3])
            ctx = g.node("Reshape", [ctx, g.ints(pre + "out.shape",
                                                 [B, S, H])], pre + "ctx3")
        x = g.node("MatMul", [ctx, g.weight(pre + "Wo", (H, H))],
                   "y" if i == layers - 1 else pre + "out")
    return g.model([("", 23)])


def mha_op(causal=False):
    g = G()
    projections(g, HEADS)
    g.node("MultiHeadAttention", ["q", "k", "v"], "ctx",
           domain="com.microsoft", num_heads=HEADS,
           unidirectional=int(causal))
    g.node("MatMul", ["ctx", g.weight("Wo", (H, H))], "y")
    return g.model([("", 17), ("com.microsoft", 1)])


def ms_attention(causal=False, mask_index=False):
    """com.microsoft Attention: the projection inside the op."""
    g = G()
    ins = ["x", g.weight("Wqkv", (H, 3 * H)), g.weight("bqkv", (3 * H,))]
    if mask_index:
        ins.append(g.ints("mask_index", [S] * B))
    g.nodes.append(helper.make_node(
        "Attention", ins, ["ctx"], domain="com.microsoft", name="attn",
        num_heads=HEADS, unidirectional=int(causal)))
    g.node("MatMul", ["ctx", g.weight("Wo", (H, H))], "y")
    return g.model([("", 17), ("com.microsoft", 1)])


def gqa_contrib():
    g = G()
    projections(g, 2)
    g.nodes.append(helper.make_node(
        "GroupQueryAttention", ["q", "k", "v", "", "",
                                g.ints("seqlens_k", [S - 1] * B),
                                g.ints("total", [S])], ["ctx"],
        domain="com.microsoft", name="attn", num_heads=HEADS,
        kv_num_heads=2))
    g.node("MatMul", ["ctx", g.weight("Wo", (H, H))], "y")
    return g.model([("", 17), ("com.microsoft", 1)])


def run(tmp, name, model, *opts):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    p = subprocess.run([ARENAC, *opts, "--json", "-", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.returncode, (json.loads(p.stdout) if p.returncode == 0
                          else None), p.stderr


KEYS = ("arena_bytes", "forward_flops", "backward_flops", "recompute_flops",
        "parameter_bytes", "gradient_bytes")


def bill(r):
    return {k: r["training"][k] for k in KEYS}


def same_as_op_by_op(tmp, what, model, ref, attention):
    opts = ["--train", "--selfcheck", "--attention", attention]
    rc, r, err = run(tmp, "op", model, *opts)
    rc2, want, err2 = run(tmp, "ref", ref, *opts)
    if not T.check("%s --attention %s: trains" % (what, attention),
                   rc == 0 and rc2 == 0, (err, err2)):
        return None
    T.check("%s --attention %s: the op-by-op graph's arena and FLOPs" %
            (what, attention), bill(r) == bill(want), (bill(r), bill(want)))
    ops = sorted(s["op"] for s in r["steps"])
    T.check("%s --attention %s: the same steps" % (what, attention),
            ops == sorted(s["op"] for s in want["steps"]), ops)
    return r


def main():
    with tempfile.TemporaryDirectory(prefix="attention_ops") as tmp:
        d = H // HEADS
        for what, model, want in (
                ("3-D", onnx_op(), {"ctx": [B, S, H]}),
                ("4-D", onnx_op(four_d=True), {"ctx": [B, HEADS, S, d]}),
                ("GQA with a past of 4 and qk_matmul_output",
                 onnx_op(kv=2, past=True, qk=0),
                 {"ctx": [B, S, H], "qk": [B, HEADS, S, 4 + S]})):
            rc, r, err = run(tmp, "inf", model)
            got = {t["name"]: t["shape"] for t in r["tensors"]
                   if t["name"] in want} if r else err
            T.check("ONNX Attention %s: inference plans it, shapes %s" %
                    (what, want), got == want, got)
        cases = [("ONNX Attention 3-D", onnx_op(), op_by_op()),
                 ("ONNX Attention 4-D", onnx_op(four_d=True),
                  op_by_op(k4=True)),
                 ("ONNX Attention GQA kv 2", onnx_op(kv=2), op_by_op(kv=2)),
                 ("ONNX Attention causal", onnx_op(causal=True),
                  op_by_op(causal=True)),
                 ("MultiHeadAttention", mha_op(), op_by_op()),
                 ("MultiHeadAttention unidirectional", mha_op(causal=True),
                  op_by_op(causal=True)),
                 ("com.microsoft Attention", ms_attention(),
                  op_by_op(fused=True)),
                 ("com.microsoft Attention unidirectional",
                  ms_attention(causal=True),
                  op_by_op(causal=True, fused=True))]
        for what, model, ref in cases:
            r = same_as_op_by_op(tmp, what, model, ref, "math")
            if r:
                probs = [t for t in r["tensors"] if t["name"].endswith(
                    ".probs") and t["shape"] == [B, HEADS, S, S]]
                T.check(what + " math: the probabilities are planned",
                        len(probs) == 1, [t["name"] for t in probs])
            r = same_as_op_by_op(tmp, what, model, ref, "flash")
            if r:
                fused = [s for s in r["steps"]
                         if s["op"] == "FlashAttention"]
                T.check(what + " flash: one fused step, no probabilities",
                        len(fused) == 1 and not any(
                            t["name"].endswith(".probs")
                            for t in r["tensors"]), fused)
        # Grouped-query: flash reads k and v with their 2 heads, the
        # efficient kernel takes them expanded to the query's.
        for attention, want in (("flash", 2), ("efficient", HEADS)):
            rc, r, err = run(tmp, "gqa", onnx_op(kv=2), "--train",
                             "--attention", attention)
            if T.check("GQA %s: trains" % attention, rc == 0, err):
                t = {x["name"]: x for x in r["tensors"]}
                st = [s for s in r["steps"] if s["op"] == "FlashAttention"]
                heads = [t[i]["shape"][1] for i in st[0]["inputs"][1:3]] \
                    if st else None
                T.check("GQA %s: k and v with %d heads" % (attention, want),
                        heads == [want, want], heads)
        # qk_matmul_output read: the scores stay, nothing fuses.
        for mode in (0, 1, 3):
            rc, r, err = run(tmp, "qk", onnx_op(qk=mode), "--train",
                             "--attention", "flash")
            T.check("qk_matmul_output_mode %d read: flash warns, plans "
                    "op by op" % mode, rc == 0 and
                    "found no attention core to fuse" in err and
                    not any(s["op"] == "FlashAttention"
                            for s in r["steps"]), err)
        # Which step writes qk_matmul_output, per mode, with a mask.
        for mode, op in ((0, "Mul"), (1, "Identity"), (3, "Softmax")):
            rc, r, err = run(tmp, "qkc", onnx_op(qk=mode, causal=True),
                             "--train")
            who = [st["op"] for st in r["steps"] if "qk" in st["outputs"]] \
                if r else err
            T.check("qk_matmul_output_mode %d with is_causal: written by "
                    "%s" % (mode, op), who == [op], who)
        for what, model, word in (
                ("past_key", onnx_op(past=True), "KV cache"),
                ("softcap", onnx_op(softcap=30.0), "softcap"),
                ("Attention's mask_index", ms_attention(mask_index=True),
                 "mask_index"),
                ("GroupQueryAttention", gqa_contrib(), "decoding")):
            rc, _, err = run(tmp, "bad", model, "--train")
            T.check("%s: exit 2 naming the node and %s" % (what, word),
                    rc == 2 and "'attn'" in err and word in err, (rc, err))
        # Selective over fused cores: all fused -> says so; one left op by
        # op (layer 0 returns its scores) -> recomputes it, no warning.
        rc, r, err = run(tmp, "sel", onnx_op(layers=2), "--train",
                         "--attention", "flash", "--checkpoint",
                         "selective")
        T.check("selective, every core fused: says nothing is left",
                rc == 0 and "nothing is left to recompute" in err and
                r["training"]["recompute_flops"] == 0, (rc, err))
        rc, r, err = run(tmp, "sel", onnx_op(layers=2, qk=0), "--train",
                         "--attention", "flash", "--checkpoint",
                         "selective")
        T.check("selective, one core op by op: recomputes it, no warning",
                rc == 0 and "nothing is left" not in err and
                r["training"]["recompute_flops"] > 0 and
                sum(s["op"] == "FlashAttention" for s in r["steps"]) == 1,
                (rc, err, r and r["training"]["recompute_flops"]))
        policies(tmp)
    return T.summary()


def policies(tmp):
    c = gen_gpt.Config(layers=2, seq=40, batch=2, hidden=128, heads=4,
                       vocab=96)
    arena = {}
    for pol in ("none", "selective", "layer", "sqrt", "optimal"):
        rc, r, err = run(tmp, "gpt", gen_gpt.build(c), "--train",
                         "--selfcheck", "--attention", "flash",
                         "--checkpoint", pol)
        if not T.check("gpt flash --checkpoint %s: plans" % pol, rc == 0,
                       err):
            continue
        arena[pol] = r["training"]["arena_bytes"]
        redo = [s for s in r["steps"] if s["op"] == "FlashAttention" and
                s.get("phase") == "recompute"]
        rec = r["training"]["recompute_flops"]
        if pol in ("none", "selective"):
            T.check("gpt flash %s: recomputes nothing" % pol,
                    rec == 0 and not redo, (rec, len(redo)))
        else:
            T.check("gpt flash %s: recomputes both fused kernels" % pol,
                    rec > 0 and len(redo) == 2, (rec, len(redo)))
    if len(arena) == 5:
        T.check("gpt flash: optimal's arena the least", arena["optimal"] ==
                min(arena.values()), arena)


if __name__ == "__main__":
    sys.exit(main())
