#!/usr/bin/env python3
"""e2e_fits.py — "does this training step fit my device?" has one answer.

With --train, --budget and the first --memory bound the whole device: the
persistent state (parameters, gradients, master weights, optimizer state,
frozen parameters, constants), the arena and --reserve together.  Before,
both bounded the arena alone and a GPT-2 small step of 11.4 GiB "fitted"
an 11 GiB card.  Checked on the models the issue names:

  - GPT-2 small (mixed bf16, Adam): 11 GiB is exit 3 naming the memory and
    how far over; 13 GiB fits, and the JSON's device_total_bytes is the sum
    of the bill's parts, headroom_bytes what is left, fits true;
  - --budget at exactly that total fits with no recompute; a byte less
    needs recompute (checkpoint optimal, by default with --budget) and
    still fits the budget; 1 GiB is exit 3 before any plan, naming the
    largest persistent part (optimizer state);
  - the one-device path (--dp 1) gives the same total and the same verdict;
  - the Llama-7B shape fine-tuned on wq and wv with layer checkpointing:
    frozen weights count, 24 GiB fits, 20 GiB with --reserve 1G does not;
  - --reserve not below the device, or without one, is a usage error;
  - --optimizer-in-backward (torchtune's optimizer_in_bwd): no persistent
    gradient, each parameter's update right after its gradient is whole,
    which dies there; the device total drops by the gradients less what
    they add to the arena's peak;
  - inference keeps --budget for the arena (its weights are in flash);
  - --max-batch: GPT-2 small (batch axis 1) on 24 GiB and the Llama-7B
    shape with layer checkpointing and 8-bit Adam on 80 GiB: the batch it
    names fits when planned on its own and the next one does not; the JSON
    reports max_batch; a model whose batch is fixed, or no device, is a
    usage error;
  - --max-dim seq on a one-head attention model whose sequence axis is
    symbolic (scores grow as seq^2): the length it names fits, the next
    does not, the JSON reports max_seq and max_seq_dim; a position table
    read by Gather bounds the search at its rows, the table saying why;
    an unknown dim is a usage error.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402

T = Tally('e2e_fits')
check = T.check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")

G = 1 << 30




def arenac(*args):
    return subprocess.run([ARENAC] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=600)


def train_json(tmp, model, *opts):
    path = os.path.join(tmp, "r.json")
    if os.path.exists(path):
        os.remove(path)
    r = arenac("-q", "--train", "--json", path, *opts, model)
    bill = json.load(open(path))["training"] if r.returncode == 0 else None
    return r, bill


def parts(b):
    return (b["parameter_bytes"] + b["gradient_bytes"] +
            b["master_weight_bytes"] + b["optimizer_state_bytes"] +
            b["frozen_bytes"] + b["constant_bytes"])


def gpt2(tmp):
    model = os.path.join(tmp, "gpt2.onnx")
    subprocess.run([PYTHON, os.path.join(ROOT, "testdata", "gen_gpt.py"),
                    "--preset", "gpt2-small", model], check=True,
                   stdout=subprocess.DEVNULL)
    step = ["--optimizer", "adam", "--precision", "mixed-bf16"]

    r = arenac("-q", "--train", *step, "--memory", "hbm:11G", model)
    check("gpt2 11 GiB: exit 3", r.returncode == 3, r.stderr)
    check("gpt2 11 GiB: names the memory, what is left and the excess",
          "'hbm' (11,811,160,064 bytes, 9,819,074,451 for activations "
          "after the training step's persistent state and --reserve)" in
          r.stderr and "would need 11,933,581,328 bytes, 2,114,506,877 over"
          in r.stderr, r.stderr)
    # The arena is 10,286,759,952 bytes with the loss in bf16: the fp32
    # loss (--loss-dtype's default under mixed-*) adds B.T.V.4 bytes.
    check("gpt2: the fp32 loss adds 8 x 1024 x 50257 x 4 bytes",
          11933581328 - 10286759952 == 8 * 1024 * 50257 * 4, "")

    r, b = train_json(tmp, model, *step, "--memory", "hbm:13G")
    check("gpt2 13 GiB fits", b is not None, r.stderr)
    if b is None:
        return
    total = b["device_total_bytes"]
    check("gpt2: device total = persistent parts + arena",
          total == parts(b) + b["arena_bytes"] == b["total_bytes"],
          (total, parts(b), b["arena_bytes"]))
    check("gpt2: headroom and fits", b["fits"] is True and
          b["device_bytes"] == 13 * G and
          b["headroom_bytes"] == 13 * G - total, b)

    r, e = train_json(tmp, model, *step, "--budget", str(total))
    check("gpt2 --budget at the total: fits, nothing recomputed",
          e is not None and e["recompute_flops"] == 0 and
          e["headroom_bytes"] == 0, r.stderr)
    r, e = train_json(tmp, model, *step, "--budget", str(total - 1))
    check("gpt2 --budget a byte less: recompute, within the budget",
          e is not None and e["recompute_flops"] > 0 and
          e["device_total_bytes"] <= total - 1 and e["fits"] is True,
          r.stderr)

    r = arenac("-q", "--train", *step, "--budget", "1G", model)
    check("gpt2 --budget 1G: exit 3 before any plan, the largest part",
          r.returncode == 3 and "the persistent state alone takes "
          "1,992,085,613 bytes (the largest part: optimizer state, "
          "995,518,464 bytes)" in r.stderr, r.stderr)

    # The one-device table of the devices path bills the same step.
    r = arenac("--train", *step, "--memory", "hbm:11G", "--dp", "1", model)
    check("gpt2 --dp 1 11 GiB: exit 3 too", r.returncode == 3, r.stderr)
    r = arenac("--train", *step, "--memory", "hbm:13G", "--dp", "1", model)
    row = [l.split() for l in r.stdout.splitlines()
           if l.strip().startswith("0 ")]
    check("gpt2 --dp 1 13 GiB: the same total", r.returncode == 0 and
          row and int(row[0][-1].replace(",", "")) == total, r.stdout)
    r = arenac("-q", "--train", *step, "--memory", "hbm:13G", "--dp", "1",
               "--reserve", "2G", model)
    check("gpt2 --dp 1 with --reserve 2G: over", r.returncode == 3 and
          "--reserve 2,147,483,648 more" in r.stderr, r.stderr)


def llama(tmp):
    model = os.path.join(tmp, "llama7b.onnx")
    subprocess.run([PYTHON, os.path.join(ROOT, "testdata", "gen_llama.py"),
                    "--preset", "llama-7b", model], check=True,
                   stdout=subprocess.DEVNULL)
    step = ["--optimizer", "adam", "--checkpoint", "layer",
            "--trainable", r"\.w[qv]$"]
    r, b = train_json(tmp, model, *step, "--memory", "hbm:24G")
    check("llama-7b wq/wv fine-tune fits 24 GiB", b is not None, r.stderr)
    if b is None:
        return
    check("llama-7b: frozen weights are on the device",
          b["frozen_bytes"] > 10 * G and
          b["device_total_bytes"] == parts(b) + b["arena_bytes"], b)
    r, c = train_json(tmp, model, *step, "--memory", "hbm:24G",
                      "--reserve", "1G")
    check("llama-7b: --reserve is on the device", c is not None and
          c["reserve_bytes"] == G and
          c["device_total_bytes"] == b["device_total_bytes"] + G and
          c["headroom_bytes"] == b["headroom_bytes"] - G, r.stderr)
    need = b["device_total_bytes"] + G
    r = arenac("-q", "--train", *step, "--memory", "hbm:%d" % (need - 1),
               "--reserve", "1G", model)
    check("llama-7b: a byte short with the reserve is exit 3",
          r.returncode == 3, r.stderr)


def in_backward(tmp):
    gpt = os.path.join(tmp, "gpt2.onnx")
    step = ["--optimizer", "adamw", "--precision", "bf16"]
    r, a = train_json(tmp, gpt, *step)
    path = os.path.join(tmp, "oib.json")
    p = arenac("-q", "--train", "--json", path, *step,
               "--optimizer-in-backward", gpt)
    if not check("gpt2 --optimizer-in-backward plans",
                 p.returncode == 0 and a is not None, p.stderr):
        return
    rep = json.load(open(path))
    b = rep["training"]
    check("no persistent gradient; the total drops by them, less the "
          "arena's growth", b["gradient_bytes"] == 0 and
          b["total_bytes"] == a["total_bytes"] - a["gradient_bytes"] +
          b["arena_bytes"] - a["arena_bytes"] and
          b["total_bytes"] < a["total_bytes"], (a, b))
    steps = rep["steps"]
    tensors = {t["name"]: t for t in rep["tensors"]}
    upd = [i for i, st in enumerate(steps) if st["phase"] == "update"]
    late = [i for i, st in enumerate(steps) if st["phase"] == "backward"
            and i > upd[0]]
    ok = True
    for i in upd:
        g = steps[i]["inputs"][1]
        t = tensors[g]
        ok = ok and t["kind"] == "activation" and t["last_step"] == i
    check("%d updates among the backward steps (%d after the first), each "
          "its gradient's last reader" % (len(upd), len(late)),
          ok and late, "")


def max_batch(tmp, gen, preset, step, memory, want):
    """--max-batch finds want; want fits and want + 1 does not, each
    planned on its own."""
    model = os.path.join(tmp, preset + ".onnx")
    subprocess.run([PYTHON, os.path.join(ROOT, "testdata", gen),
                    "--preset", preset, "--batch", "1", model], check=True,
                   stdout=subprocess.DEVNULL)
    r, b = train_json(tmp, model, *step, "--memory", memory, "--max-batch")
    check("%s --max-batch on %s: batch %d" % (preset, memory, want),
          b is not None and b["max_batch"] == want, r.stderr)
    r, b = train_json(tmp, model, *step, "--memory", memory,
                      "--batch", str(want))
    check("%s: batch %d fits on its own" % (preset, want),
          b is not None and b["fits"] is True and b["max_batch"] is None,
          r.stderr)
    r = arenac("-q", "--train", *step, "--memory", memory,
               "--batch", str(want + 1), model)
    check("%s: batch %d does not" % (preset, want + 1), r.returncode == 3,
          r.stderr)
    return model


def attention_model(path, table=0):
    """ids [1, seq] -> embedding, one attention head, head: logits
    [1, seq, V].  table: a position table of that many rows, read by
    Gather at Range(0, seq), added to the embedding."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    d, V = 64, 256
    rng = np.random.default_rng(0)

    def w(name, *shape):
        return numpy_helper.from_array(
            rng.standard_normal(shape).astype(np.float32), name)
    inits = [w("emb", V, d), w("wq", d, d), w("wk", d, d), w("wv", d, d),
             w("wo", d, d), w("head", d, V)]
    nodes = [helper.make_node("Gather", ["emb", "ids"], ["x0"])]
    if table:
        inits += [w("pos", table, d),
                  numpy_helper.from_array(np.array([1], np.int64), "one"),
                  numpy_helper.from_array(np.array(0, np.int64), "zero"),
                  numpy_helper.from_array(np.array(1, np.int64), "step")]
        nodes += [helper.make_node("Shape", ["ids"], ["shp"]),
                  helper.make_node("Gather", ["shp", "one"], ["len1"]),
                  helper.make_node("Squeeze", ["len1"], ["len"]),
                  helper.make_node("Range", ["zero", "len", "step"],
                                   ["positions"]),
                  helper.make_node("Gather", ["pos", "positions"], ["p"]),
                  helper.make_node("Add", ["x0", "p"], ["x"])]
    else:
        nodes.append(helper.make_node("Identity", ["x0"], ["x"]))
    nodes += [helper.make_node("MatMul", ["x", "wq"], ["q"]),
              helper.make_node("MatMul", ["x", "wk"], ["k"]),
              helper.make_node("MatMul", ["x", "wv"], ["v"]),
              helper.make_node("Transpose", ["k"], ["kT"], perm=[0, 2, 1]),
              helper.make_node("MatMul", ["q", "kT"], ["scores"]),
              helper.make_node("Softmax", ["scores"], ["probs"], axis=-1),
              helper.make_node("MatMul", ["probs", "v"], ["a"]),
              helper.make_node("MatMul", ["a", "wo"], ["o"]),
              helper.make_node("MatMul", ["o", "head"], ["logits"])]
    g = helper.make_graph(
        nodes, "attn",
        [helper.make_tensor_value_info("ids", TensorProto.INT64,
                                       [1, "seq"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       [1, "seq", V])], inits)
    import onnx
    onnx.save(helper.make_model(g, opset_imports=[
        helper.make_opsetid("", 17)]), path)


def max_dim(tmp):
    """--max-dim seq: the answer fits, one more does not."""
    model = os.path.join(tmp, "attn.onnx")
    attention_model(model)
    step = ["--optimizer", "adam", "--memory", "hbm:64M"]
    r, b = train_json(tmp, model, *step, "--max-dim", "seq")
    want = b["max_seq"] if b else None
    check("--max-dim seq on 64 MiB: seq %s, JSON max_seq_dim seq" % want,
          b is not None and want and want > 256 and
          b["max_seq_dim"] == "seq" and b["max_batch"] is None and
          b["fits"] is True, r.stderr)
    if not want:
        return
    r, b = train_json(tmp, model, *step, "--dim", "seq=%d" % want)
    check("seq %d fits on its own" % want,
          b is not None and b["fits"] is True and b["max_seq"] is None,
          r.stderr)
    r = arenac("-q", "--train", *step, "--dim", "seq=%d" % (want + 1), model)
    check("seq %d does not" % (want + 1), r.returncode == 3, r.stderr)
    # --dim seq=... given too: --max-dim's value wins, the table says so.
    r = arenac("--train", *step, "--dim", "seq=8", "--max-dim", "seq",
               model)
    check("--max-dim over a --dim of the same name: seq %d" % want,
          r.returncode == 0 and "--max-dim seq for memory 'hbm'" in
          r.stdout and ": seq %d\n" % want in r.stdout, r.stdout + r.stderr)
    r = arenac("-q", "--train", *step, "--max-dim", "len", model)
    check("--max-dim of a dim the model lacks: exit 1",
          r.returncode == 1 and "no dim named 'len'" in r.stderr, r.stderr)
    r = arenac("-q", "--train", *step, "--max-dim", "seq", "--max-batch",
               model)
    check("--max-dim with --max-batch: exit 1", r.returncode == 1 and
          "one search at a time" in r.stderr, r.stderr)
    # A position table of 300 rows: the model takes no longer sequence.
    model = os.path.join(tmp, "attn_pos.onnx")
    attention_model(model, table=300)
    r = arenac("--train", *step, "--max-dim", "seq", model)
    check("a 300-row position table bounds --max-dim at 300",
          r.returncode == 0 and ": seq 300\n" in r.stdout and
          "the model cannot take it" in r.stdout, r.stdout + r.stderr)


def usage(tmp):
    lenet = os.path.join(ROOT, "testdata", "lenet.onnx")
    r = arenac("--train", "--memory", "hbm:1M", "--reserve", "2M", lenet)
    check("--reserve above the device: exit 1", r.returncode == 1 and
          "--reserve 2097152 is not below the device's 1048576 bytes" in
          r.stderr, r.stderr)
    r = arenac("--train", "--reserve", "2M", lenet)
    check("--reserve without a device: exit 1", r.returncode == 1 and
          "--reserve needs a device" in r.stderr, r.stderr)
    r = arenac("--train", "--max-batch", lenet)
    check("--max-batch without a device: exit 1", r.returncode == 1 and
          "--max-batch needs a device" in r.stderr, r.stderr)
    fixed = os.path.join(tmp, "gpt2.onnx")   # batch 8, fixed
    r = arenac("-q", "--train", "--memory", "hbm:24G", "--max-batch", fixed)
    check("--max-batch on a fixed batch: exit 1", r.returncode == 1 and
          "no graph input takes --batch" in r.stderr, r.stderr)
    # Inference: --budget is the arena's (the weights live in flash).
    # LeNet: a 57,600-byte arena and 1.7 MB of weights.
    r = arenac("-q", "--dim", "N=1", "--budget", "57600", lenet)
    check("inference --budget bounds the arena alone", r.returncode == 0,
          r.stderr)
    r = arenac("-q", "--dim", "N=1", "--budget", "57599", lenet)
    check("inference --budget a byte below the arena: exit 3",
          r.returncode == 3, r.stderr)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        gpt2(tmp)
        llama(tmp)
        in_backward(tmp)
        max_batch(tmp, "gen_gpt.py", "gpt2-small",
                  ["--optimizer", "adam", "--precision", "mixed-bf16"],
                  "hbm:24G", 15)
        max_batch(tmp, "gen_llama.py", "llama-7b",
                  ["--optimizer", "adam8bit", "--precision", "mixed-bf16",
                   "--checkpoint", "layer"], "hbm:80G", 12)
        max_dim(tmp)
        usage(tmp)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
