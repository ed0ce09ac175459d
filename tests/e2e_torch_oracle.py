#!/usr/bin/env python3
"""e2e_torch_oracle.py - the bytes arenac keeps for the backward pass
against the bytes PyTorch saves, model by model.

Each model of tests/torch_saved.py (LeNet batch 64, ResNet-18 batch 8,
VGG-11 batch 2, a small GPT, a TransformerEncoder) runs once in torch
(forward and cross-entropy loss under saved_tensors_hooks: the saved
storages by category) and is exported from that very module with
torch.onnx.export in training mode.  Two accounts of the exported graph
are compared with torch's:

  rules   tests/saved_rules.py: per-op gradient rules applied to the ONNX
          graph in Python (no arenac); runs for every model and proves the
          named differences below complete;
  arenac  `arenac --train --checkpoint none --batch B --json -`: from the
          JSON report, independently of arenac's own totals, the distinct
          buffers (views followed through alias_of, in-place outputs
          through inplace_of, to their root) of the tensors that a
          forward-phase step produced, or that are graph inputs, and that
          some backward-phase step reads.

Torch and the graph accounts differ by known, named amounts, each
computed here from the exported graph's inferred shapes; "both" differences
hold for either account, the others for one of them:
  maxpool_indices      (both) torch keeps int64 argmax indices per max-pool
                       output element; the graph's MaxPoolGrad re-finds the
                       argmax from the pool's input and output instead
  batchnorm_stats      (rules) torch keeps the batch mean and 1/std (2 x C
                       floats per BatchNorm); so does arenac, which
                       materialises them in training mode, while the rules
                       read the running statistics, weights
  dropout_mask         (both) torch 1.13 on the CPU draws the mask into a
                       tensor of the activation's dtype (4 bytes per element
                       in float32); the graph keeps Dropout's bool mask (1)
  loss_total_weight    (both) nll_loss keeps a 0-d float (4 bytes)
  weight_transpose     (rules) torch exports nn.Linear on 3-d input as
                       MatMul(x, Transpose(W)): the rules' MatMul gradient
                       keeps W^T, a copy; torch reads W through a view, and
                       arenac folds the Transpose: W^T is the parameter
  gelu_erf_decomposed  (rules) GELU exported as x (1 + erf(x/sqrt2)) / 2:
                       per-op rules keep erf's input and 1 + erf beside x;
                       torch's fused gelu keeps x only, and so does arenac,
                       which gives the chain GELU's gradient (--grad-fuse)
  layernorm_decomposed (both) LayerNorm exported at opset 14 (ReduceMean,
                       Sub, Pow, ..., Div): per-op rules keep x - mean, the
                       normalised x and std; torch keeps x, mean and 1/std
                       (float32 statistics), and so does arenac, which
                       gives the chain LayerNorm's gradient (the mean and
                       std in x's dtype, activations)
  mean_keeps_input     (both) torch 1.13's mean() keeps its whole input for
                       the backward (which needs only its sizes)
  condition_folded     (arenac) masked_fill(~causal): torch computes the
                       bool ~causal in every forward and keeps it for the
                       backward; arenac folds Not(causal) (all constants)
                       into a constant, outside the arena
(The loss keeps the log-probabilities in torch and the logits in the
graph: the same bytes.  Python numbers autograd wraps in 0-d tensors are
constants, not activations.)  The test asserts, per category and in
total, torch == account + differences, exactly; on a mismatch it prints
both sides buffer by buffer and what is left unmatched.

Every model must train with arenac (MUST_TRAIN); LeNet exported with its
own loss (torch's SoftmaxCrossEntropyLoss) keeps the same bytes as LeNet
with the loss arenac attaches.  The whole test is skipped when torch or
onnx is not importable.

Environment: ARENAC (the binary, default build/arenac).
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
try:
    import torch  # noqa: F401
    import onnx  # noqa: F401
    import torch_saved
    import saved_rules
except ImportError as e:
    print("skipped: torch or onnx is not importable for %s (%s)" % (
        sys.executable, e))
    sys.exit(0)

ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")

# Models whose plan must equal torch's saved bytes (plus the named
# differences).
MUST_TRAIN = ("lenet", "resnet18", "vgg11", "gpt", "encoder")


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Side:
    """Saved buffers of one account: {root: (bytes, category, elements)}."""

    def __init__(self, label, buffers):
        self.label, self.buffers = label, buffers

    def total(self):
        return sum(b for b, _, _ in self.buffers.values())

    def by_category(self):
        out = collections.OrderedDict(
            (c, 0) for c in torch_saved.CATEGORIES)
        for b, c, _ in self.buffers.values():
            out[c] += b
        return out


def arenac_side(report):
    """What arenac's plan keeps, from its JSON report alone: roots (through
    alias_of and inplace_of) of the tensors that a forward step produced,
    or that are graph inputs, and that a backward step reads, or a step
    recomputing for one (a view torch takes, x[:, 0], made again from
    the x torch's saved view holds)."""
    tensors = {t["name"]: t for t in report["tensors"]}
    phase, stats, bnstats, masks = {}, set(), set(), set()
    for st in report["steps"]:
        for o in st["outputs"]:
            phase[o] = st["phase"]
        if st["op"] == "Dropout" and len(st["outputs"]) > 1:
            masks.add(st["outputs"][1])
        if st["op"] == "LayerNormalization":
            stats.update(st["outputs"][1:])
        if st["op"] == "BatchNormalization":
            bnstats.update(st["outputs"][3:])
    read = {i for st in report["steps"]
            if st["phase"] in ("backward", "recompute")
            for i in st["inputs"] if i is not None}   # null: omitted
    buffers = collections.OrderedDict()
    for name in sorted(read):
        t = tensors[name]
        if not (t["kind"] == "input" or phase.get(name) == "forward"):
            continue
        r, seen = name, set()
        while tensors[r]["alias_of"] or tensors[r]["inplace_of"]:
            assert r not in seen, "alias cycle at " + r
            seen.add(r)
            r = tensors[r]["alias_of"] or tensors[r]["inplace_of"]
        cat = ("input" if tensors[r]["kind"] == "input" else
               "dropout_mask" if name in masks else
               "layernorm_stats" if name in stats else
               "batchnorm_stats" if name in bnstats else "activation")
        buffers.setdefault(r, (tensors[r]["bytes"], cat,
                               numel(tensors[r]["shape"])))
    return Side("arenac", buffers)


def rules_side(model):
    """The per-op rule account of tests/saved_rules.py."""
    buffers, g = saved_rules.saved(model)
    return Side("rules", buffers), g


class Diff:
    """A named difference: torch keeps torch_bytes (in torch_cat) where the
    graph's account keeps other_bytes (in other_cat)."""

    def __init__(self, name, torch_cat, torch_bytes, other_cat,
                 other_bytes):
        self.name, self.torch_cat, self.torch_bytes = name, torch_cat, \
            torch_bytes
        self.other_cat, self.other_bytes = other_cat, other_bytes


def _consumers(g, name):
    return [n for n in g.nodes if name in n.input]


def _in_layernorm(g, n):
    """A ReduceMean of a decomposed LayerNorm: the mean that a Sub takes
    off, or the variance (the mean of a Pow)."""
    src = g.producer.get(n.input[0])
    return (src is not None and src.op_type == "Pow") or any(
        c.op_type == "Sub" for c in _consumers(g, n.output[0]))


def _folded(g, name):
    """Whether name is computed from initializers alone (arenac folds it)."""
    if name in g.init:
        return True
    n = g.producer.get(name)
    return n is not None and all(_folded(g, i) for i in n.input if i)


def differences(g, rules, account):
    """The known differences between torch's saved storages and an account
    ("rules" or "arenac") of the exported graph, each from the graph's
    shapes (the rules' saved buffers say what the graph keeps)."""
    out = []
    arenac = account == "arenac"
    add = lambda *a: out.append(Diff(*a))  # noqa: E731
    saved_roots = set(rules.buffers)
    for n in g.nodes:
        op, i, o = n.op_type, list(n.input), list(n.output)
        if op == "MaxPool":
            # torch: int64 argmax per output element.
            add("maxpool_indices", "maxpool_indices", 8 * g.numel(o[0]),
                "activation", 0)
        elif op == "BatchNormalization" and not arenac:
            # torch: batch mean and 1/std, float32 per channel.
            add("batchnorm_stats", "batchnorm_stats",
                2 * 4 * g.type[i[0]][1][1], "activation", 0)
        elif op == "Dropout":
            # torch CPU: a mask of the activation's dtype; ONNX: bool.
            add("dropout_mask", "dropout_mask", g.nbytes(o[0]),
                "dropout_mask", g.numel(o[1]))
        elif op == "Transpose" and g.is_param(i[0]) and \
                o[0] in saved_roots and not arenac:
            # torch reads W through a view; the graph keeps W^T, a copy.
            add("weight_transpose", "activation", 0, "activation",
                g.nbytes(o[0]))
        elif op == "Where" and arenac and i[0] in g.producer and \
                _folded(g, i[0]):
            # torch keeps ~causal, computed at run time; arenac folds it.
            add("condition_folded", "activation", g.nbytes(i[0]),
                "activation", 0)
        elif op == "Erf" and not arenac:
            # GELU as x * (1 + erf(x / sqrt2)) / 2: torch keeps x (so do
            # the rules); the rules also keep erf's input and 1 + erf.
            div, add1 = g.producer[i[0]], _consumers(g, o[0])[0]
            add("gelu_erf_decomposed", "activation", 0, "activation",
                g.nbytes(div.output[0]) + g.nbytes(add1.output[0]))
        elif op == "Div" and i[0] in g.producer and i[1] in g.producer \
                and g.producer[i[0]].op_type == "Sub" \
                and g.producer[i[1]].op_type == "Sqrt":
            # LayerNorm decomposed (torch's opset-14 export): torch's
            # native_layer_norm keeps x, mean and 1/std; the rules keep
            # x - mean, (x - mean) / std and std (in x's dtype).
            # arenac gives the chain LayerNorm's gradient
            # (ops/grad_patterns.c): x, the mean and std, the statistics
            # in x's dtype.
            x, mean = g.producer[i[0]].input[0], g.producer[i[0]].input[1]
            rows = g.numel(i[1])
            add("layernorm_decomposed", "layernorm_stats", 2 * rows * 4,
                "activation", g.nbytes(mean) + g.nbytes(i[1])
                if arenac else 0)
            if not arenac:
                add("layernorm_decomposed", "activation",
                    0 if g.root(x) in saved_roots else g.nbytes(x),
                    "activation", g.nbytes(i[0]) + g.nbytes(o[0]) +
                    g.nbytes(i[1]))
        elif op == "ReduceMean" and not _in_layernorm(g, n) and \
                any(x in g.producer or x in g.inputs for x in i[:1]):
            # torch 1.13's MeanBackward1 keeps mean()'s whole input (it
            # needs only its sizes).
            add("mean_keeps_input", "activation",
                0 if g.root(i[0]) in saved_roots else g.nbytes(i[0]),
                "activation", 0)
    # nll_loss's 0-d total_weight.
    add("loss_total_weight", "loss_total_weight", 4, "activation", 0)
    return out


def explain(meas, side):
    """Both sides buffer by buffer, matched by category and element count
    (a mask is 4 bytes an element in torch, 1 in ONNX; a flattened view
    has another shape); what is left on either side is the discrepancy."""
    left = collections.defaultdict(list)
    for s in meas.saved:
        left[(s.category, numel(s.shape))].append(s)
    print("    %s buffers read by the backward pass:" % side.label)
    for r, (b, cat, n) in side.buffers.items():
        hit = left[(cat, n)].pop() if left.get((cat, n)) else None
        print("      %-15s %s %d B: %s" % (
            cat, r, b, "torch %s %d B" % (list(hit.shape), hit.nbytes)
            if hit else "NO TORCH STORAGE of this category and size"))
    print("    torch storages left without a %s buffer:" % side.label)
    for v in left.values():
        for s in v:
            print("      ", s)


def compare(name, meas, side, diffs):
    """torch == side + differences, per category and in total."""
    tc, sc = meas.by_category(), side.by_category()
    expect = collections.OrderedDict(sc)
    for d in diffs:
        expect[d.torch_cat] += d.torch_bytes
        expect[d.other_cat] -= d.other_bytes
    ok = meas.total() == sum(expect.values())
    lines = []
    for c in tc:
        if tc[c] or sc[c] or expect[c]:
            same = tc[c] == expect[c]
            ok &= same
            lines.append("    %-17s torch %11d  %s %11d  expected torch "
                         "%11d %s" % (c, tc[c], side.label, sc[c], expect[c],
                                      "ok" if same else "MISMATCH by %+d" %
                                      (tc[c] - expect[c])))
    print("  %s: torch %d bytes, %s %d + differences %+d: %s" % (
        name, meas.total(), side.label, side.total(),
        sum(expect.values()) - side.total(), "ok" if ok else "MISMATCH"))
    if not ok:
        print("\n".join(lines))
        explain(meas, side)
    return ok


def summarize(diffs):
    agg = collections.OrderedDict()
    for d in diffs:
        t, o = agg.get(d.name, (0, 0))
        agg[d.name] = (t + d.torch_bytes, o + d.other_bytes)
    return ", ".join("%s torch %d / graph %d" % (k, t, o)
                     for k, (t, o) in agg.items())


def run_arenac(path, batch):
    p = subprocess.run([ARENAC, "-q", "--train", "--checkpoint", "none",
                        "--batch", str(batch), "--json", "-", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.returncode, p.stdout, p.stderr.strip()


def check_model(name, tmp, results):
    model, inputs, label, opset = torch_saved.build(name)
    batch = inputs[0].shape[0]
    meas = torch_saved.measure(model, inputs, label)
    path = os.path.join(tmp, name + ".onnx")
    exported = torch_saved.export(model, inputs, path, opset)
    rules, g = rules_side(exported)
    diffs = differences(g, rules, "rules")
    print("%s (batch %d): torch saves %d bytes (%s)" % (
        name, batch, meas.total(), ", ".join(
            "%s %d" % kv for kv in meas.by_category().items() if kv[1])))
    print("  differences (rules): " + summarize(diffs))
    # The per-op rules account: validates the differences on every model.
    ok = compare(name, meas, rules, diffs)
    results[0 if ok else 1] += 1
    rc, out, err = run_arenac(path, batch)
    if rc != 0:
        if name in MUST_TRAIN:
            print("FAIL %s: arenac exit %d: %s" % (name, rc, err))
            results[1] += 1
        else:
            print("skipped: arenac does not train %s: %s" % (name, err))
        return None
    side = arenac_side(json.loads(out))
    diffs = differences(g, rules, "arenac")
    print("  differences (arenac): " + summarize(diffs))
    ok = compare(name, meas, side, diffs)
    results[0 if ok else 1] += 1
    return side


def own_loss(tmp, attached, results):
    """LeNet exported with its loss (torch writes SoftmaxCrossEntropyLoss):
    arenac trains it on that loss, adds no label of its own, and keeps
    the same bytes as with the loss it attaches."""
    model, inputs, label, opset = torch_saved.build("lenet")
    path = os.path.join(tmp, "lenet_loss.onnx")
    torch_saved.export(torch_saved.WithLoss(model), (inputs[0], label),
                       path, opset, names=("input", "label"), output="loss")
    rc, out, err = run_arenac(path, inputs[0].shape[0])
    ok = rc == 0
    if ok:
        r = json.loads(out)
        ops = [(s["op"], s["phase"]) for s in r["steps"]]
        ok = ("SoftmaxCrossEntropyLoss", "forward") in ops and \
            [t["name"] for t in r["tensors"] if t["kind"] == "input"] == \
            ["input", "label"] and \
            arenac_side(r).total() == attached.total()
    print("  lenet with its own loss keeps the same bytes: %s" % (
        "ok" if ok else "NO (%s)" % (err or rc)))
    results[0 if ok else 1] += 1


def main():
    results = [0, 0]
    with tempfile.TemporaryDirectory(prefix="torch_oracle") as tmp:
        for name in torch_saved.MODELS:
            side = check_model(name, tmp, results)
            if name == "lenet" and side is not None:
                # The committed testdata/lenet.onnx (Reshape, Gemm, opset
                # 13) keeps the same bytes as the torch export.
                rc, out, err = run_arenac(
                    os.path.join(ROOT, "testdata", "lenet.onnx"), 64)
                same = rc == 0 and arenac_side(json.loads(out)).total() == \
                    side.total()
                print("  testdata/lenet.onnx keeps the same bytes: %s" % (
                    "ok" if same else "NO (%s)" % (err or rc)))
                results[0 if same else 1] += 1
                own_loss(tmp, side, results)
    print("e2e_torch_oracle: %d passed, %d failed" % tuple(results))
    return 1 if results[1] else 0


if __name__ == "__main__":
    sys.exit(main())
