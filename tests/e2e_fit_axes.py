#!/usr/bin/env python3
"""e2e_fit_axes.py — --fit over the training options, not just devices.

--fit-axis NAME=V,... makes --fit search option NAME (attention, lora,
base-quant, batch) besides dp, ZeRO, tp, pp and the checkpoint policy;
every combination of the values given is a setup, each setup's
configurations are ranked with the others'.  Checked:

  - GPT-2 small on one 24 GiB device, --attention math and flash, the
    micro-batch 2, 4 or 8 of a global batch of 8: every row names its
    setup, and a row of micro-batch b runs 8 / b micro-batches; the plan
    written is the first row's, and planning that row's options directly
    (--dp 1 --microbatches --batch --attention) gives the same device
    total; fused cores get no selective row (nothing left to recompute);
  - the Llama-7B shape fine-tuned with LoRA rank 8 or 64 and the base in
    bf16 or nf4: each setup's best row again planned directly gives its
    bytes, and the nf4 rows hold the bf16 ones less the base's
    difference; the quantised base is in the multi-device bill (--dp 1
    bills what the one-device run does: it was left out before);
  - the model's own batch without --batch: a batch fixed at 1 in the file
    (what --batch binds) is the micro-batch the axis varies, the global
    batch 1 x 4 devices (it was -1 x 4: --batch's "not given" value read
    as the batch, "out of range"); a batch fixed at 4 (--batch leaves
    it, as bind.c says) cannot be varied: exit 1 naming the value asked
    and the fixed 4 (it said "the global batch -2"), while batch=4 itself
    plans what --fit does without the axis; --max-batch on a batch fixed
    at 2 likewise (it "fit" every batch up to 524,288, planning 2); a
    first input whose axis 0 is no batch is not read as the batch;
  - bad input: no --fit, an unknown axis or value, an axis given twice, a
    micro-batch not dividing the global batch, more setups than --fit
    plans, a setup that cannot be planned (a LoRA rank above a weight's
    side) naming the setup.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402

T = Tally('e2e_fit_axes')
check = T.check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")


def arenac(*args):
    return subprocess.run([ARENAC] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=900)


def report(tmp, model, *opts):
    path = os.path.join(tmp, "r.json")
    if os.path.exists(path):
        os.remove(path)
    r = arenac("-q", "--train", "--json", path, *opts, model)
    return r, (json.load(open(path)) if r.returncode == 0 else None)


def gen(tmp, script, preset, name):
    path = os.path.join(tmp, name)
    subprocess.run([PYTHON, os.path.join(ROOT, "testdata", script),
                    "--preset", preset, "--batch", "1", path], check=True,
                   stdout=subprocess.DEVNULL)
    return path


def direct(tmp, model, step, row):
    """The device total of row planned as one configuration."""
    opts = step + ["--dp", str(row["dp"]), "--microbatches",
                   str(row["microbatches"]), "--checkpoint",
                   row["checkpoint_policy"], "--attention", row["attention"]]
    if row["batch"]:
        opts += ["--batch", str(row["batch"])]
    if row["lora_rank"]:
        opts += ["--lora", str(row["lora_rank"])]
    if row["base_quant"] != "none":
        opts += ["--base-quant", row["base_quant"]]
    r, rep = report(tmp, model, *opts)
    return rep["parallel"]["largest_bytes"] if rep else r.stderr


def gpt2(tmp):
    model = gen(tmp, "gen_gpt.py", "gpt2-small", "gpt2.onnx")
    step = ["--optimizer", "adam", "--precision", "mixed-bf16"]
    r, rep = report(tmp, model, *step, "--batch", "8", "--fit", "1x24G",
                    "--fit-axis", "attention=math,flash",
                    "--fit-axis", "batch=2,4,8")
    if not check("gpt2: --fit over attention and micro-batch", rep,
                 r.stderr):
        return
    rows = rep["fit"]["configurations"]
    setups = {(x["attention"], x["batch"]) for x in rows}
    check("gpt2: rows of all 6 setups", len(setups) == 6, setups)
    check("gpt2: micro-batch b runs 8/b micro-batches",
          all(x["microbatches"] * x["batch"] == 8 for x in rows), rows[:3])
    check("gpt2: fused cores get no selective row",
          not any(x["attention"] == "flash" and
                  x["checkpoint_policy"] == "selective" for x in rows), "")
    check("gpt2: cheapest first",
          [x["step_seconds"] for x in rows] ==
          sorted(x["step_seconds"] for x in rows), "")
    first = rows[0]
    check("gpt2: the plan written is the first row's (%s, batch %d)" %
          (first["attention"], first["batch"]),
          rep["parallel"]["largest_bytes"] == first["largest_bytes"] and
          rep["parallel"]["microbatches"] == first["microbatches"], first)
    for att in ("math", "flash"):
        row = next(x for x in rows if x["attention"] == att and
                   x["batch"] == 8 and x["checkpoint_policy"] == "none")
        got = direct(tmp, model, step, row)
        check("gpt2 %s batch 8: the row's bytes are a direct plan's "
              "(%s)" % (att, got), got == row["largest_bytes"],
              (got, row))
    # The setups differ where they should: flash holds no score matrix.
    m = next(x for x in rows if x["attention"] == "math" and
             x["batch"] == 8 and x["checkpoint_policy"] == "none")
    f = next(x for x in rows if x["attention"] == "flash" and
             x["batch"] == 8 and x["checkpoint_policy"] == "none")
    check("gpt2: flash below math at batch 8 (%d < %d)" %
          (f["largest_bytes"], m["largest_bytes"]),
          f["largest_bytes"] < m["largest_bytes"], "")
    return model


def llama(tmp):
    model = gen(tmp, "gen_llama.py", "llama-7b", "llama.onnx")
    step = ["--optimizer", "adamw", "--precision", "bf16"]
    # The quantised base is on the device in the multi-device bill too.
    r1, one = report(tmp, model, *step, "--lora", "8", "--base-quant", "nf4")
    r2, dp1 = report(tmp, model, *step, "--lora", "8", "--base-quant", "nf4",
                     "--dp", "1")
    check("qlora: --dp 1 bills the one-device total (quantised base "
          "included)", one and dp1 and
          dp1["parallel"]["largest_bytes"] ==
          one["training"]["device_total_bytes"] and
          one["training"]["quantized_base_bytes"] > 3 << 30,
          (r1.stderr, r2.stderr))
    r, rep = report(tmp, model, *step, "--fit", "1x24G",
                    "--fit-axis", "lora=8,64",
                    "--fit-axis", "base-quant=none,nf4")
    if not check("llama: --fit over LoRA rank and base format", rep,
                 r.stderr):
        return
    rows = rep["fit"]["configurations"]
    check("llama: rows of all 4 setups",
          {(x["lora_rank"], x["base_quant"]) for x in rows} ==
          {(8, "none"), (8, "nf4"), (64, "none"), (64, "nf4")}, rows[:2])
    pol = "layer"
    by = {(x["lora_rank"], x["base_quant"]): x for x in rows
          if x["checkpoint_policy"] == pol}
    for key in ((8, "nf4"), (64, "none")):
        if key in by:
            got = direct(tmp, model, step, by[key])
            check("llama lora %d %s, %s: the row's bytes are a direct "
                  "plan's (%s)" % (key[0], key[1], pol, got),
                  got == by[key]["largest_bytes"], (got, by[key]))
        else:
            check("llama lora %d %s: a %s row" % (key[0], key[1], pol),
                  False, sorted(by))
    if (8, "none") in by and (8, "nf4") in by:
        # 6,476,005,376 linear weights: 2 bytes each in bf16, the nf4
        # store in quantized_base_bytes of a direct run.
        _, q = report(tmp, model, *step, "--lora", "8", "--base-quant",
                      "nf4", "--checkpoint", pol)
        saved = 2 * 6476005376 - q["training"]["quantized_base_bytes"]
        diff = by[(8, "none")]["largest_bytes"] - by[(8, "nf4")][
            "largest_bytes"]
        check("llama: nf4 saves the base's bytes (%d)" % saved,
              diff == saved, (diff, saved))


def small_gpt(tmp, batch):
    path = os.path.join(tmp, "gpt_b%d.onnx" % batch)
    subprocess.run([PYTHON, os.path.join(ROOT, "testdata", "gen_gpt.py"),
                    "--layers", "2", "--hidden", "128", "--seq", "32",
                    "--batch", str(batch), path], check=True,
                   stdout=subprocess.DEVNULL)
    return path


def state_first(tmp):
    """y = x @ W + mean(h): h [2, 1, 8] (axis 0 fixed, no batch), x [1, 8]
    (batch 1: what --batch binds)."""
    import numpy
    from onnx import TensorProto, helper, numpy_helper, save
    w = numpy_helper.from_array(numpy.ones((8, 4), numpy.float32), "W")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["xw"]),
             helper.make_node("ReduceMean", ["h"], ["hm"], keepdims=0),
             helper.make_node("Add", ["xw", "hm"], ["y"])]
    g = helper.make_graph(nodes, "state_first", [
        helper.make_tensor_value_info("h", TensorProto.FLOAT, [2, 1, 8]),
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    path = os.path.join(tmp, "state_first.onnx")
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
         path)
    return path


def fixed_batch(tmp):
    step = ["--optimizer", "adam"]
    # Batch 1 in the file is a batch axis: no --batch, the global batch
    # is 1 a device.
    one = small_gpt(tmp, 1)
    r, rep = report(tmp, one, *step, "--fit", "4x1G",
                    "--fit-axis", "batch=1,2,4")
    if check("batch 1 in the file, no --batch: --fit-axis batch=1,2,4 "
             "plans", rep, r.stderr):
        rows = rep["fit"]["configurations"]
        check("batch 1 in the file: every row a global batch of 4",
              {x["batch"] for x in rows} == {1, 2, 4} and
              all(x["batch"] * x["microbatches"] * x["dp"] == 4
                  for x in rows), rows[:3])
        key = lambda x: (x["dp"], x["zero"], x["tp"],  # noqa: E731
                         x["sequence_parallel"], x["checkpoint_policy"])
        b1 = {key(x): x["largest_bytes"] for x in rows
              if x["batch"] == 1 and x["pp"] == 1}
        b2 = {key(x): x["largest_bytes"] for x in rows
              if x["batch"] == 2 and x["pp"] == 1}
        common = set(b1) & set(b2)
        check("batch 1 in the file: micro-batch 2 holds more than 1 "
              "(%d configurations)" % len(common), common and
              all(b2[k] > b1[k] for k in common), (b1, b2))
    # A first input whose axis 0 is no batch (a state's 2 layers): the
    # batch is x's 1, the global batch 1 x 2 devices (not 2 x 2).
    state = state_first(tmp)
    r, rep = report(tmp, state, "--fit", "2x1G", "--fit-axis", "batch=1,2")
    check("state [2,1,8] before x [1,8]: the global batch is x's 1 x 2",
          rep and {(x["batch"], x["batch"] * x["microbatches"] * x["dp"])
                   for x in rep["fit"]["configurations"]} ==
          {(1, 2), (2, 2)}, rep and rep["fit"]["configurations"][:2] or
          r.stderr)
    # Batch 4 in the file: --batch cannot reach it, nor the axis.
    four = small_gpt(tmp, 4)
    r = arenac("-q", "--train", *step, "--fit", "4x1G",
               "--fit-axis", "batch=1,2,4", four)
    check("batch fixed at 4: --fit-axis batch=1,2,4: exit 1 naming 1 "
          "and the fixed 4", r.returncode == 1 and
          "--fit-axis batch=1: no graph input takes --batch 1: the "
          "model's batch is fixed at 4 (graph input 'input_ids', axis 0"
          in r.stderr and "batch -" not in r.stderr, r.stderr)
    r, rep = report(tmp, four, *step, "--fit", "2x1G",
                    "--fit-axis", "batch=4")
    _, plain = report(tmp, four, *step, "--fit", "2x1G")
    if check("batch fixed at 4: --fit-axis batch=4 plans", rep and plain,
             r.stderr):
        rows = rep["fit"]["configurations"]   # one setup: no "batch"
        check("batch fixed at 4: batch=4 is --fit without the axis "
              "(global batch 8)",
              all(4 * x["microbatches"] * x["dp"] == 8
                  for x in rows) and
              [x["largest_bytes"] for x in rows] ==
              [x["largest_bytes"] for x in plain["fit"]["configurations"]],
              rows[:2])
    r = arenac("-q", "--train", *step, "--budget", "1G", "--max-batch",
               small_gpt(tmp, 2))
    check("batch fixed at 2: --max-batch: exit 1 naming the fixed 2",
          r.returncode == 1 and "--max-batch: no graph input takes "
          "--batch 1: the model's batch is fixed at 2" in r.stderr,
          r.stdout[-300:] + r.stderr)


def usage(tmp, model):
    fit = ["--optimizer", "adam", "--fit", "1x24G"]
    cases = [
        (["--optimizer", "adam", "--fit-axis", "attention=flash"], 1,
         "--fit-axis needs --fit"),
        (fit + ["--fit-axis", "optimizer=adam"], 1, "NAME attention, lora"),
        (fit + ["--fit-axis", "attention=fast"], 1,
         "wants math, flash or efficient, not 'fast'"),
        (fit + ["--fit-axis", "lora=8", "--fit-axis", "lora=16"], 1,
         "given twice"),
        (fit + ["--fit-axis", "base-quant=nf3"], 1, "wants nf4, fp4 or int8"),
        (fit + ["--batch", "8", "--fit-axis", "batch=3"], 1,
         "the global batch 8 is not a multiple of it"),
        (fit + ["--fit-axis", "batch=1,2,4,8", "--fit-axis",
                "attention=math,flash,efficient", "--fit-axis",
                "lora=0,4,8,16,32,64"], 1, "72 setups, more than the 64"),
        (fit + ["--fit-axis", "lora=8,100000"], 2,
         "--fit (attention math, lora 100000, base none)"),
    ]
    for opts, rc, want in cases:
        r = arenac("-q", "--train", *opts, model)
        check("bad: %s: exit %d" % (" ".join(opts[2:]), rc),
              r.returncode == rc and want in r.stderr, r.stderr)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        model = gpt2(tmp)
        llama(tmp)
        fixed_batch(tmp)
        if model:
            usage(tmp, model)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
