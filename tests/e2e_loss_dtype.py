#!/usr/bin/env python3
"""e2e_loss_dtype.py - `--loss-dtype fp32|same` on a generated GPT-2-like
graph (testdata/gen_gpt.py), B batch, T sequence, V vocabulary.

The cross-entropy keeps its log-probabilities for the backward (what
PyTorch's cross_entropy keeps: log_softmax's result; Megatron-LM's
vocab-parallel cross-entropy: its fp32 softmax).  Checked from the plan
itself, not only the bill's figure:
  - the loss's kept bytes, the tensors its forward step writes that a
    backward step reads, are B*T*V*4 with fp32 (the default under
    mixed-bf16 and amp-bf16) and B*T*V*2 with same, and equal the JSON's
    loss_kept_bytes, in the JSON's loss_dtype;
  - with fp32 the fp32 upcast of the logits is a transient: it dies at the
    loss's forward step, and the 16-bit logits at the upcast;
  - with --loss-chunk N each chunk keeps B*T*V*4/N, and the loss's peak
    share (the most bytes of the logits' and the loss's tensors live at
    one step) drops by exactly N;
  - a model in float16 (no --precision) or cast wholesale (bf16) runs
    its loss in its 16-bit format by default, in fp32 when asked;
  - the text summary names the kept bytes.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tally import Tally  # noqa: E402

ROOT = os.path.dirname(HERE)
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")
B, T, V = 2, 16, 1000
t = Tally("loss_dtype")


def gen(tmp, name, *opts):
    path = os.path.join(tmp, name + ".onnx")
    p = subprocess.run([PYTHON, os.path.join(ROOT, "testdata", "gen_gpt.py"),
                        "--batch", str(B), "--seq", str(T), "--vocab",
                        str(V), *opts, path], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode:
        print("skipped: gen_gpt.py: %s" % p.stderr.strip()[-200:])
        sys.exit(0)
    return path


def plan(path, *opts):
    p = subprocess.run([ARENAC, "-q", "--train", "--json", "-", *opts, path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if not t.check("%s: exit 0" % " ".join(opts), p.returncode == 0,
                   p.stderr.strip()):
        return None
    return json.loads(p.stdout)


def loss_steps(r):
    return [s for s in r["steps"] if s["phase"] == "forward" and
            s["op"] in ("SoftmaxCrossEntropyLoss", "CrossEntropyChunk")]


def kept(r):
    """Bytes the loss's forward steps write that a backward step reads."""
    tensors = {x["name"]: x for x in r["tensors"]}
    read = {i for s in r["steps"] if s["phase"] == "backward"
            for i in s["inputs"]}
    out = []
    for s in loss_steps(r):
        out.append(sum(tensors[o]["bytes"] for o in s["outputs"]
                       if o in read))
    return out


def share(r):
    """The most bytes of the logits' and loss's tensors (not scalars)
    live at one step."""
    xs = [x for x in r["tensors"] if x["first_step"] is not None and
          x["shape"] and x["name"].split(".")[0] in ("logits", "loss")]
    return max(sum(x["bytes"] for x in xs
                   if x["first_step"] <= s <= x["last_step"])
               for s in range(len(r["steps"])))


def whole(path, precision, dtype, width, name):
    """The loss on the whole logits: `name` its format, width bytes."""
    opts = (["--precision", precision] if precision else []) + \
        (["--loss-dtype", dtype] if dtype else [])
    r = plan(path, *opts)
    if r is None:
        return None
    tr, what = r["training"], "%s, loss %s" % (precision or "model",
                                               dtype or "auto")
    want = B * T * V * width
    t.check(what + ": kept bytes %d = B*T*V*%d" % (want, width),
            kept(r) == [want], kept(r))
    t.check(what + ": the bill's loss_kept_bytes", tr["loss_kept_bytes"] ==
            want, tr["loss_kept_bytes"])
    t.check(what + ": loss_dtype " + name, tr["loss_dtype"] == name,
            tr["loss_dtype"])
    tensors = {x["name"]: x for x in r["tensors"]}
    step = loss_steps(r)[0]
    scores = tensors[step["inputs"][0]]
    t.check(what + ": the scores die at the loss's forward step",
            scores["last_step"] == step["index"], scores)
    if tensors["logits"]["dtype"] != scores["dtype"]:
        t.check(what + ": the scores are the fp32 upcast, the 16-bit "
                "logits die at it", scores["dtype"] == "float32" and
                tensors["logits"]["last_step"] == scores["first_step"],
                (scores, tensors["logits"]))
    return r


def chunked(path, dtype, width, full, n=4):
    r = plan(path, "--precision", "mixed-bf16", "--loss-dtype", dtype,
             "--loss-chunk", str(n))
    if r is None or full is None:
        return
    want = B * T * V * width // n
    t.check("--loss-chunk %d, loss %s: each chunk keeps %d" % (
        n, dtype, want), kept(r) == [want] * n, kept(r))
    t.check("--loss-chunk %d, loss %s: loss_kept_bytes per chunk" % (
        n, dtype), r["training"]["loss_kept_bytes"] == want,
        r["training"]["loss_kept_bytes"])
    t.check("--loss-chunk %d, loss %s: the loss's peak share drops by %d "
            "(%d -> %d)" % (n, dtype, n, share(full), share(r)),
            share(full) == n * share(r), (share(full), share(r)))


def main():
    with tempfile.TemporaryDirectory(prefix="loss_dtype") as tmp:
        gpt = gen(tmp, "gpt")
        fp32 = whole(gpt, "mixed-bf16", None, 4, "float32")
        same = whole(gpt, "mixed-bf16", "same", 2, "bfloat16")
        whole(gpt, "amp-bf16", None, 4, "float32")
        whole(gpt, "amp-bf16", "same", 2, "bfloat16")
        whole(gpt, "fp32", None, 4, "float32")
        whole(gpt, "bf16", None, 2, "bfloat16")
        whole(gpt, "bf16", "fp32", 4, "float32")
        if fp32 and same:
            t.check("mixed-bf16: fp32 keeps B*T*V*2 bytes more than same",
                    fp32["training"]["loss_kept_bytes"] -
                    same["training"]["loss_kept_bytes"] == B * T * V * 2)
        chunked(gpt, "fp32", 4, fp32)
        chunked(gpt, "same", 2, same)
        half = gen(tmp, "gpt16", "--dtype", "float16")
        whole(half, None, None, 2, "float16")
        whole(half, None, "fp32", 4, "float32")
        p = subprocess.run([ARENAC, "--train", "--precision", "mixed-bf16",
                            gpt], stdout=subprocess.PIPE,
                           universal_newlines=True)
        line = [x for x in p.stdout.splitlines() if "loss kept" in x]
        t.check("the summary names the loss's kept bytes",
                line and "{:,}".format(B * T * V * 4) in line[0] and
                "float32 log-probabilities" in line[0], line)
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())
