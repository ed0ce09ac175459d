#!/usr/bin/env python3
"""e2e_torch_oracle.py - the bytes arenac keeps for the backward pass
against the bytes PyTorch saves, model by model.

Each model of tests/torch_saved.py runs once in torch (forward and
cross-entropy loss under saved_tensors_hooks: the saved storages by
category) and is exported from that very module with torch.onnx.export in
training mode; arenac plans its training step with
`--train --checkpoint none --batch B --json -`.  From the JSON report,
independently of arenac's own totals, the resident saved bytes are the
distinct buffers (views followed through alias_of, in-place outputs
through inplace_of, to their root) of the tensors that a forward-phase
step produced, or that are graph inputs, and that some backward-phase
step reads.

The two differ by known, named amounts, each computed here from the
shapes in the report:
  maxpool_indices   torch keeps int64 argmax indices per max-pool output
                    element; arenac's MaxPoolGrad re-finds the argmax from
                    the pool's input and output instead
  batchnorm_stats   torch keeps the batch mean and 1/std (2 x C floats per
                    BatchNorm); arenac's BatchNormalizationGrad reads the
                    running mean and variance, which are weights
  dropout_mask      torch 1.13 on the CPU draws the mask into a tensor of
                    the activation's dtype (4 bytes per element in
                    float32); arenac keeps Dropout's bool mask (1 byte)
  loss_total_weight nll_loss keeps a 0-d float (4 bytes)
(The loss keeps the log-probabilities in torch and the logits in arenac:
the same bytes.)  The test asserts, per category and in total,
torch == arenac + differences, exactly.  On a mismatch it prints both
sides tensor by tensor, matched by dtype and shape, and what is left.

GPT and the TransformerEncoder need gradient rules arenac lacks today:
while arenac exits 2 on them the test prints one `skipped:` line per model
and still checks the others; once arenac trains them the comparison runs
with the same differences.  The whole test is skipped when torch or onnx
is not importable.

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
except ImportError as e:
    print("skipped: torch or onnx is not importable for %s (%s)" % (
        sys.executable, e))
    sys.exit(0)

ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8,
            "int64": 8, "int32": 4, "bool": 1, "uint8": 1, "int8": 1}

# Models whose plan must equal torch's saved bytes (plus the named
# differences) today; the others are compared once arenac trains them.
MUST_TRAIN = ("lenet", "resnet18", "vgg11")


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Plan:
    """What a training plan keeps for the backward pass, from its report."""

    def __init__(self, report):
        self.tensors = {t["name"]: t for t in report["tensors"]}
        self.steps = report["steps"]
        self.phase = {}
        for s in self.steps:
            for o in s["outputs"]:
                self.phase[o] = s["phase"]
        self.readers = collections.defaultdict(list)
        for s in self.steps:
            if s["phase"] == "backward":
                for i in s["inputs"]:
                    self.readers[i].append(s)
        self.masks = {s["outputs"][1] for s in self.steps
                      if s["op"] == "Dropout" and len(s["outputs"]) > 1}
        self.buffers = {}  # root name -> (bytes, category, member names)
        for name in self.readers:
            t = self.tensors[name]
            if not (t["kind"] == "input" or self.phase.get(name) ==
                    "forward"):
                continue
            r = self.root(name)
            cat = ("input" if self.tensors[r]["kind"] == "input" else
                   "dropout_mask" if name in self.masks else "activation")
            _, _, members = self.buffers.setdefault(
                r, (self.tensors[r]["bytes"], cat, []))
            members.append(name)

    def root(self, name):
        seen = set()
        while True:
            assert name not in seen, "alias cycle at " + name
            seen.add(name)
            t = self.tensors[name]
            nxt = t["alias_of"] or t["inplace_of"]
            if not nxt:
                return name
            name = nxt

    def total(self):
        return sum(b for b, _, _ in self.buffers.values())

    def by_category(self):
        out = collections.OrderedDict(
            (c, 0) for c in torch_saved.CATEGORIES)
        for b, c, _ in self.buffers.values():
            out[c] += b
        return out

    def fwd_steps(self, op):
        return [s for s in self.steps if s["op"] == op
                and s["phase"] == "forward"]


def differences(plan):
    """The named differences torch - arenac, per torch category, in bytes,
    computed from the report's shapes: {category: (torch, arenac)}."""
    d = collections.OrderedDict()
    pools = plan.fwd_steps("MaxPool")
    d["maxpool_indices"] = (sum(8 * numel(plan.tensors[s["outputs"][0]]
                                          ["shape"]) for s in pools), 0)
    stats = 0
    for s in plan.fwd_steps("BatchNormalization"):
        x = plan.tensors[s["inputs"][0]]
        width = 8 if x["dtype"] == "float64" else 4
        stats += 2 * x["shape"][1] * width
    d["batchnorm_stats"] = (stats, 0)
    torch_mask = arenac_mask = 0
    for s in plan.fwd_steps("Dropout"):
        y = plan.tensors[s["outputs"][0]]
        torch_mask += numel(y["shape"]) * ITEMSIZE[y["dtype"]]
        if len(s["outputs"]) > 1 and s["outputs"][1] in plan.readers:
            arenac_mask += plan.tensors[s["outputs"][1]]["bytes"]
    d["dropout_mask"] = (torch_mask, arenac_mask)
    d["loss_total_weight"] = (4, 0)
    return d


def explain(name, meas, plan):
    """Both sides buffer by buffer, matched by category and element count
    (a mask is 4 bytes an element in torch, 1 in arenac; a flattened view
    has another shape); what is left on either side is the discrepancy."""
    left = collections.defaultdict(list)
    for s in meas.saved:
        left[(s.category, numel(s.shape))].append(s)
    print("  %s: arenac buffers read by the backward pass:" % name)
    for r, (b, cat, members) in plan.buffers.items():
        t = plan.tensors[r]
        key = (cat, numel(t["shape"]))
        hit = left[key].pop() if left.get(key) else None
        print("    %-12s %s %s %s %d B: %s" % (
            cat, r, t["dtype"], t["shape"], b,
            "torch %s %d B" % (list(hit.shape), hit.nbytes) if hit else
            "NO TORCH STORAGE of this category and size"))
    print("  %s: torch storages without an arenac buffer:" % name)
    for v in left.values():
        for s in v:
            print("    ", s)


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
    torch_saved.export(model, inputs, path, opset)
    rc, out, err = run_arenac(path, batch)
    if rc != 0:
        if name in MUST_TRAIN:
            print("FAIL %s: arenac exit %d: %s" % (name, rc, err))
            results[1] += 1
        else:
            print("skipped: arenac cannot train %s yet: %s" % (name, err))
        return None
    plan = Plan(json.loads(out))
    diffs = differences(plan)
    tc, ac = meas.by_category(), plan.by_category()
    ok = True
    print("%s (batch %d): torch saves %d bytes, arenac keeps %d" % (
        name, batch, meas.total(), plan.total()))
    # Per category: torch = arenac + what torch keeps - what arenac keeps.
    expect = collections.OrderedDict((c, ac[c]) for c in tc)
    for c, (t_only, a_only) in diffs.items():
        expect[c] += t_only - a_only
    for c in tc:
        if tc[c] or expect[c]:
            same = tc[c] == expect[c]
            ok &= same
            print("  %-18s torch %11d  arenac %11d  expected torch %11d %s"
                  % (c, tc[c], ac[c], expect[c], "ok" if same else
                     "MISMATCH by %+d" % (tc[c] - expect[c])))
    for c, (t_only, a_only) in diffs.items():
        if t_only or a_only:
            print("    difference %-18s torch-only %d, arenac-only %d" % (
                c, t_only, a_only))
    total = plan.total() + sum(t - a for t, a in diffs.values())
    ok &= meas.total() == total
    if not ok:
        explain(name, meas, plan)
        print("FAIL %s: torch %d != arenac %d + differences %d" % (
            name, meas.total(), plan.total(), total - plan.total()))
    results[0 if ok else 1] += 1
    return plan


def main():
    results = [0, 0]
    with tempfile.TemporaryDirectory(prefix="torch_oracle") as tmp:
        for name in torch_saved.MODELS:
            plan = check_model(name, tmp, results)
            if name == "lenet" and plan is not None:
                # The committed testdata/lenet.onnx (Reshape, Gemm, opset
                # 13) keeps the same bytes as the torch export.
                rc, out, err = run_arenac(
                    os.path.join(ROOT, "testdata", "lenet.onnx"), 64)
                same = rc == 0 and Plan(json.loads(out)).total() == \
                    plan.total()
                print("  testdata/lenet.onnx keeps the same bytes: %s" % (
                    "ok" if same else "NO (%s)" % (err or rc)))
                results[0 if same else 1] += 1
    print("e2e_torch_oracle: %d passed, %d failed" % tuple(results))
    return 1 if results[1] else 0


if __name__ == "__main__":
    sys.exit(main())
