#!/usr/bin/env python3
"""e2e_multi_device.py - a training step on many devices, end to end,
against the published numbers and the generators' own counts.

- Korthikanti et al.'s Table 2, every row, from gen_gpt graphs at several
  (s, b, h, a, t), and on one device 34sbh with selective and 2sbh with
  full recomputation: the tensors one device keeps for layer 1's backward
  pass are exactly the terms tests/korthikanti.py names for that row (each
  at its per-device bytes: split by t or not) plus the LayerNorm
  statistics (ln_stats, split along the sequence with sequence
  parallelism), and their bytes the row's formula: no parallelism, tensor
  parallel, tensor + sequence parallel, each with selective
  recomputation, and full recomputation (2sbh; 2sbh/t with sequence
  parallelism, the layer input being split too);
- ZeRO's Figure 1 from the zero-7.5b graph (exactly 7.5e9 parameters,
  external weights never read) on 64 devices, stages 0 to 3, to the byte
  of zero_paper.per_device (120,000,000,000 / 31,406,250,000 /
  16,640,625,000 / 1,875,000,000); every rank alike; stage 3's buffers the
  25 MiB bucket and the largest layer's weights (the embedding); the
  padded partition when the parameters do not divide;
- a 24-layer GPT on 4 pipeline stages with 8 microbatches, 1F1B and
  GPipe: each stage holds min(4 - i, 8) (1F1B) or 8 (GPipe) microbatches,
  its arena is its one-microbatch arena plus the others' stashes, a
  middle stage's stash is its layers' Korthikanti bytes and statistics,
  the split's largest device is no larger than the best split by layer
  count's, every stage's plan passes the poison executor, and the four
  stage headers compile together in one file;
- tensor parallelism on a Llama graph (no biases, SwiGLU, rotary): the
  column- and row-parallel linears found, the norms replicated; grouped
  attention's key-value heads split and repeated per device;
- --offload of the optimizer state, the parameters and the activations
  (bytes held, moved and their time at the memory's bandwidth), and
  exit 3 for a device or an offload memory too small;
- --fit: exit 3 naming the smallest device memory, which then fits; the
  configurations cheapest first, each within the memory; the first
  planned in full; the same bytes on a second run;
- the command line's refusals.

Environment: ARENAC (default build/arenac), CC.  Skipped without onnx.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_paper_oracles import ARENAC, check, gen_gpt, gen_llama, \
    layer_saved, onnx, results  # noqa: E402
import korthikanti  # noqa: E402
import zero_paper  # noqa: E402

# CC may carry flags (make check passes the sanitizers' along).
CC = os.environ.get("CC") or "cc"


def arenac(path, *opts, json_path=None):
    """(exit code, the JSON report or None, stderr) of arenac --train."""
    out = json_path or os.path.join(os.path.dirname(path), "r.json")
    cmd = [ARENAC, "-q", "--train", "--json", out] + [str(o) for o in opts]
    p = subprocess.run(cmd + [path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    rep = None
    if p.returncode == 0 and "%d" not in out:
        with open(out) as f:
            rep = json.load(f)
    return p.returncode, rep, p.stderr.strip()


def ok(name, rc, err):
    return check(name + ": exit 0", rc == 0, err)


def gpt(tmp, name, **kw):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(gen_gpt.build(gen_gpt.Config(**kw)), path)
    return path


def saved(report, layer):
    """What layer `layer` keeps from its forward pass for the backward
    pass (read by a backward or recompute step)."""
    return layer_saved(report, layer, ("backward", "recompute"))


TABLE2_CONFIGS = [(32, 2, 64, 4, 2), (16, 4, 128, 8, 4), (48, 1, 96, 3, 3)]


def table2_rows(t):
    """(row, arenac options, korthikanti.breakdown arguments)."""
    tp = ["--tp", t]
    sp = tp + ["--sequence-parallel"]
    return [
        ("no parallelism", [], dict()),
        ("tensor parallel", tp, dict(t=t)),
        ("tensor + sequence parallel", sp, dict(t=t, sp=True)),
        ("tensor parallel + selective", tp + ["--checkpoint", "selective"],
         dict(t=t, recompute="selective")),
        ("tensor + sequence parallel + selective",
         sp + ["--checkpoint", "selective"],
         dict(t=t, sp=True, recompute="selective")),
        ("full recompute", tp + ["--checkpoint", "layer"],
         dict(t=t, recompute="full")),
        # One device: 34sbh selective, 2sbh full (section 4.2).
        ("selective, one device", ["--checkpoint", "selective"],
         dict(recompute="selective")),
        ("full recompute, one device", ["--checkpoint", "layer"],
         dict(recompute="full")),
    ]


def table2(tmp):
    for s, b, h, a, t in TABLE2_CONFIGS:
        path = gpt(tmp, "gpt_t2", layers=3, seq=s, batch=b, hidden=h,
                   heads=a, vocab=96)
        paper = korthikanti.paper_table2(s, b, h, a, t)
        for row, opts, kw in table2_rows(t):
            name = "Table 2 (s %d, b %d, h %d, a %d, t %d) %s" % (
                s, b, h, a, t, row)
            rc, rep, err = arenac(path, "--precision", "mixed-fp16", *opts)
            if not ok(name, rc, err):
                continue
            names, size = saved(rep, 1)
            stats = {n for n in names if n.endswith((".mean", ".inv_std"))}
            terms = korthikanti.breakdown(s, b, h, a, layer=1, **kw)
            check(name + ": the terms", set(names) - stats ==
                  {x.tensor for x in terms}, (sorted(names), terms))
            for x in terms:
                got = size.get(names.get(x.tensor))
                check("%s: %s (%s)" % (name, x.tensor, x.label),
                      got == x.bytes, (got, x.bytes))
            row_bytes = sum(size[names[n]] for n in stats)
            got = sum(size.values()) - row_bytes
            want = paper[row] if row in paper else \
                korthikanti.formula(s, b, h, a, **kw)
            check(name + ": bytes", got == want, (got, want))
            want = 0 if kw.get("recompute") == "full" else \
                korthikanti.ln_stats(s, b, t=kw.get("t", 1),
                                     sp=kw.get("sp", False))
            check(name + ": LayerNorm statistics", row_bytes == want,
                  (row_bytes, want))
            if row in ("tensor parallel", "tensor + sequence parallel"):
                # Ring passes over a [b, s, h] 16-bit activation, each
                # sending (t - 1) / t of it: per layer 4 all-reduces
                # (2 passes each), or with sequence parallelism 4
                # all-gathers or reduce-scatters forward, 4 backward and
                # 2 all-gathers again; besides, the embedding's
                # all-reduce and the head's input (its gradient's
                # all-reduce; or its sequence split, all-gathered
                # forward, backward and again).
                passes = 8 * 3 + 4 if row == "tensor parallel" else \
                    10 * 3 + 6
                st = rep["parallel"]["stages"][0]
                check(name + ": bytes sent", st["comm_bytes_per_microbatch"]
                      == passes * 2 * s * b * h * (t - 1) // t,
                      st["comm_bytes_per_microbatch"])
        # Full recomputation with sequence parallelism: the layer input
        # itself is split.
        rc, rep, err = arenac(path, "--precision", "mixed-fp16", "--tp", t,
                              "--sequence-parallel", "--checkpoint", "layer")
        if ok("full recompute with sequence parallelism", rc, err):
            names, size = saved(rep, 1)
            check("full recompute, sequence parallel: h1 only, 2sbh/t",
                  list(names) == ["h1"] and
                  sum(size.values()) * t == 2 * s * b * h, (names, size))
    print("  Table 2: %d rows of %d configurations, exactly" % (
        len(table2_rows(2)), len(TABLE2_CONFIGS)))


def zero_figure1(tmp):
    kw = dict(gen_llama.PRESETS["zero-7.5b"])
    kw["external"] = "zero.onnx.data"
    c = gen_llama.Config(**kw)
    path = os.path.join(tmp, "zero.onnx")
    onnx.save(gen_llama.build(c), path)
    psi = gen_llama.param_count(c)
    embedding = 2 * c.vocab * c.dim
    layer = 2 * (4 * c.dim * c.dim + 3 * c.dim * c.ffn + 2 * c.dim)
    for stage, want in zero_paper.figure1().items():
        rc, rep, err = arenac(path, "--precision", "mixed-fp16",
                              "--optimizer", "adam", "--dp", 64, "--zero",
                              stage)
        if not ok("ZeRO stage %d" % stage, rc, err):
            continue
        devs = rep["devices"]
        per = zero_paper.per_device(psi, 64, stage)
        d = devs[0]
        check("ZeRO stage %d: 64 ranks alike" % stage, len(devs) == 64 and
              all(dict(x, rank=0, dp_rank=0) == d for x in devs))
        for part in ("parameters", "gradients", "optimizer_state"):
            check("ZeRO stage %d: %s" % (stage, part), d[part] == per[part],
                  (d[part], per[part]))
        got = d["parameters"] + d["gradients"] + d["optimizer_state"]
        check("ZeRO stage %d: Figure 1" % stage, got == want, (got, want))
        bucket = 25 << 20
        check("ZeRO stage %d: buffers" % stage, d["buffers"] == bucket +
              (max(embedding, layer) if stage == 3 else 0), d["buffers"])
        print("  zero-7.5b, 64 devices, stage %d: %d bytes of model states"
              " (Figure 1: %.1f GB)" % (stage, got, got / 1e9))
    # Padding: parameters not a multiple of the devices.
    small = gpt(tmp, "gpt_pad", layers=1, seq=8, batch=1, hidden=32,
                heads=2, vocab=33)
    psi = gen_gpt.param_count(gen_gpt.Config(layers=1, seq=8, batch=1,
                                             hidden=32, heads=2, vocab=33))
    for stage in range(4):
        rc, rep, err = arenac(small, "--precision", "mixed-fp16",
                              "--optimizer", "adam", "--dp", 7, "--zero",
                              stage)
        if ok("ZeRO padding stage %d" % stage, rc, err):
            d = rep["devices"][0]
            per = zero_paper.per_device(psi, 7, stage, exact=False)
            check("ZeRO padding stage %d (%d parameters on 7)" % (
                stage, psi), all(d[k] == per[k] for k in (
                    "parameters", "gradients", "optimizer_state")),
                (d, per))


def pipeline(tmp):
    s, b, h, a, layers = 32, 2, 64, 4, 24
    path = gpt(tmp, "gpt24", layers=layers, seq=s, batch=b, hidden=h,
               heads=a, vocab=96)
    per_layer = korthikanti.formula(s, b, h, a) + korthikanti.ln_stats(s, b)
    for sched in ("1f1b", "gpipe"):
        name = "pipeline %s" % sched
        out = os.path.join(tmp, "st%d.json")
        hdr = os.path.join(tmp, "st%d.h")
        rc, _, err = arenac(path, "--precision", "mixed-fp16", "--optimizer",
                            "adam", "--pp", 4, "--microbatches", 8,
                            "--schedule", sched, "--selfcheck", "-o", hdr,
                            json_path=out)
        if not ok(name + " (every stage through the poison executor)", rc,
                  err):
            continue
        reps = []
        for i in range(4):
            with open(out % i) as f:
                reps.append(json.load(f))
        par = reps[0]["parallel"]
        stages = par["stages"]
        split = par["split"]
        check(name + ": the split", split[0] == 0 and split[-1] == layers and
              all(x < y for x, y in zip(split, split[1:])), split)
        check(name + ": no worse than the best split by layer count",
              par["largest_bytes"] <= par["even_split_largest_bytes"],
              (par["largest_bytes"], par["even_split_largest_bytes"]))
        check(name + ": largest", par["largest_bytes"] == max(
            x["total"] for x in stages))
        for i, st in enumerate(stages):
            k = min(4 - i, 8) if sched == "1f1b" else 8
            check("%s: stage %d holds %d microbatches" % (name, i, k),
                  st["inflight_microbatches"] == k, st)
            check("%s: stage %d arena = one + %d stashes" % (name, i, k - 1),
                  st["activations_arena"] == st["arena_one_microbatch_bytes"]
                  + (k - 1) * st["stash_bytes"], st)
            rep = reps[i]
            check("%s: report %d is stage %d's plan" % (name, i, i),
                  rep["parallel"]["stage"] == i and
                  rep["arena_bytes"] == st["activations_arena"])
            blocks = [t for t in rep["tensors"]
                      if t["name"].startswith("inflight.mb")]
            check("%s: stage %d's %d stash blocks" % (name, i, k - 1),
                  len(blocks) == k - 1 and all(
                      t["bytes"] == st["stash_bytes"] for t in blocks))
            if 0 < i < 3:
                # Its layers' Korthikanti bytes and statistics, and the
                # token PipelineSend returns (2 bytes, padded to 16).
                check("%s: stage %d stash = %d layers' activations" % (
                    name, i, st["layers"]), st["stash_bytes"] ==
                    st["layers"] * per_layer + 16,
                    (st["stash_bytes"], st["layers"] * per_layer))
        check(name + ": 4 devices, rank = stage", [
            (d["rank"], d["stage"]) for d in reps[0]["devices"]] ==
            [(i, i) for i in range(4)])
        print("  24-layer GPT, 4 stages, 8 microbatches, %s: split %s, "
              "largest device %d bytes (by layer count %d)" % (
                  sched, split, par["largest_bytes"],
                  par["even_split_largest_bytes"]))
    # The four stage headers in one file: their prefixes differ.
    src = os.path.join(tmp, "stages.c")
    with open(src, "w") as f:
        for i in range(4):
            f.write('#include "st%d.h"\n' % i)
        f.write("int main(void) { return GPT24_STAGE3_NUM_STEPS > 0 ? 0 : "
                "1; }\n")
    p = subprocess.run(CC.split() + ["-std=c99", "-fsyntax-only", "-I", tmp,
                                     src],
                       stderr=subprocess.PIPE, universal_newlines=True)
    check("the stage headers compile together", p.returncode == 0,
          p.stderr[:300])


def llama_tp(tmp):
    c = gen_llama.Config(layers=2, seq=16, batch=2, dim=64, heads=4,
                         ffn=172, vocab=128)
    path = os.path.join(tmp, "llama.onnx")
    onnx.save(gen_llama.build(c), path)
    psi = gen_llama.param_count(c)
    norms = (2 * c.layers + 1) * c.dim
    for opts in ([], ["--sequence-parallel"], ["--checkpoint", "selective"],
                 ["--checkpoint", "layer"]):
        name = "llama --tp 2 %s" % " ".join(opts)
        rc, rep, err = arenac(path, "--precision", "mixed-bf16", "--tp", 2,
                              *opts)
        if not ok(name, rc, err):
            continue
        tp = rep["parallel"]["tensor_parallel"]
        check(name + ": linears found", tp == {
            "column": 5 * c.layers + 1, "row": 2 * c.layers,
            "embedding": 1}, tp)
        d = rep["devices"][0]
        want = 2 * ((psi - norms) // 2 + norms)
        check(name + ": weights split, norms whole",
              d["parameters"] == want, (d["parameters"], want))
    # Grouped attention: 2 key-value heads, one a device, repeated to the
    # device's 2 query heads (Unsqueeze, Expand, Reshape rewritten).
    c = gen_llama.Config(layers=2, seq=16, batch=2, dim=64, heads=4,
                         kv_heads=2, ffn=172, vocab=128)
    path = os.path.join(tmp, "gqa.onnx")
    onnx.save(gen_llama.build(c), path)
    rc, rep, err = arenac(path, "--tp", 2, "--sequence-parallel")
    if ok("llama GQA --tp 2", rc, err):
        shapes = {t["name"]: t["shape"] for t in rep["tensors"]}
        hd = c.dim // c.heads
        check("llama GQA --tp 2: keys repeated to the device's heads",
              shapes.get("l0.k.rep") == [c.batch, c.heads // 2, c.seq, hd]
              and shapes.get("l0.k.unsq") == [c.batch, 1, 1, c.seq, hd],
              (shapes.get("l0.k.rep"), shapes.get("l0.k.unsq")))


def offload(tmp):
    path = gpt(tmp, "gpt_off", layers=3, seq=32, batch=2, hidden=64,
               heads=4, vocab=96)
    mem = ["--memory", "hbm:1G:1T", "--memory", "ddr:4G:10G"]
    base = ["--precision", "mixed-fp16", "--optimizer", "adam", "--dp", 2,
            "--zero", 1] + mem
    rc, rep0, err = arenac(path, *base)
    if not ok("offload: without", rc, err):
        return
    d0 = rep0["devices"][0]
    psi = gen_gpt.param_count(gen_gpt.Config(layers=3, seq=32, batch=2,
                                             hidden=64, heads=4, vocab=96))
    rc, rep, err = arenac(path, *base, "--offload", "optimizer:ddr")
    if ok("offload optimizer", rc, err):
        d, o = rep["devices"][0], rep["parallel"]["offload"][0]
        part = 2 * -(-psi // 2)
        check("offload optimizer: state off the device",
              d["optimizer_state"] == 0 and
              d["offloaded"] == d0["optimizer_state"] ==
              o["bytes_per_device"], (d, o))
        check("offload optimizer: the partition's gradients and weights "
              "moved", o["moved_bytes_per_step"] == 2 * part and
              abs(o["seconds_per_step"] - 2 * part / 10e9) < 1e-15, o)
        check("offload optimizer: total", d["total"] == d0["total"] -
              d0["optimizer_state"])
    rc, rep, err = arenac(path, *base, "--offload", "parameters:ddr")
    if ok("offload parameters", rc, err):
        d, o = rep["devices"][0], rep["parallel"]["offload"][0]
        check("offload parameters: weights off the device, fetched twice",
              d["parameters"] == 0 and o["bytes_per_device"] ==
              d0["parameters"] and o["moved_bytes_per_step"] ==
              2 * d0["parameters"] and d["buffers"] > d0["buffers"], (d, o))
    rc, rep, err = arenac(path, *base, "--offload", "activations:ddr")
    if ok("offload activations", rc, err):
        d, o = rep["devices"][0], rep["parallel"]["offload"][0]
        tensors = {t["name"]: t for t in rep["tensors"]}
        fetched = sum(tensors[s["outputs"][0]]["bytes"] for s in rep["steps"]
                      if s["op"] == "Fetch")
        check("offload activations: fetched back, moved both ways",
              fetched > 0 and o["moved_bytes_per_step"] == 2 * fetched and
              o["bytes_per_device"] == fetched, (fetched, o))
        check("offload activations: a smaller arena",
              d["activations_arena"] < d0["activations_arena"],
              (d["activations_arena"], d0["activations_arena"]))
    rc, _, err = arenac(path, "--precision", "mixed-fp16", "--dp", 2,
                        "--memory", "hbm:64K")
    check("a device too small: exit 3", rc == 3 and
          "more than the 65,536 of memory 'hbm'" in err, err)
    rc, _, err = arenac(path, "--precision", "mixed-fp16", "--optimizer",
                        "adam", "--dp", 2, "--memory", "hbm:1G",
                        "--memory", "ddr:1K", "--offload", "optimizer:ddr")
    check("an offload memory too small: exit 3", rc == 3 and
          "offloaded to memory 'ddr'" in err, err)


def fit(tmp):
    path = gpt(tmp, "gpt_fit", layers=4, seq=32, batch=2, hidden=64,
               heads=4, vocab=96)
    opts = ["--precision", "mixed-fp16", "--optimizer", "adam"]
    rc, _, err = arenac(path, *opts, "--fit", "4x100K")
    m = re.search(r"smallest device memory that would is ([0-9,]+) bytes",
                  err)
    if not check("fit: nothing fits 100K: exit 3 naming the memory",
                 rc == 3 and m, err):
        return
    need = int(m.group(1).replace(",", ""))
    rc, rep, err = arenac(path, *opts, "--fit", "4x%d" % need)
    if not ok("fit: that memory fits", rc, err):
        return
    rows = rep["fit"]["configurations"]
    check("fit: a configuration at exactly that memory",
          min(r["largest_bytes"] for r in rows) == need, rows)
    rc, rep, err = arenac(path, *opts, "--fit", "4x4M")
    if not ok("fit 4x4M", rc, err):
        return
    rows = rep["fit"]["configurations"]
    check("fit: cheapest first", [r["step_seconds"] for r in rows] ==
          sorted(r["step_seconds"] for r in rows))
    check("fit: each within the memory", rows and all(
        r["largest_bytes"] <= 4 << 20 for r in rows))
    check("fit: every device of the first within the memory",
          all(d["total"] <= 4 << 20 for d in rep["devices"]))
    first = rows[0]
    check("fit: the report is the first's", all(
        rep["parallel"][k] == first[k] for k in ("dp", "zero", "tp", "pp",
                                                  "sequence_parallel",
                                                  "checkpoint_policy")))
    check("fit: 4 devices each", all(
        r["dp"] * r["tp"] * r["pp"] == 4 for r in rows))
    again = os.path.join(tmp, "again.json")
    rc2, _, _ = arenac(path, *opts, "--fit", "4x4M", json_path=again)
    with open(os.path.join(tmp, "r.json")) as f1, open(again) as f2:
        check("fit: the same bytes again", rc2 == 0 and f1.read() ==
              f2.read())
    print("  --fit 4 devices: %d configurations fit 4 MiB, the first dp %d"
          " tp %d pp %d %s" % (len(rows), first["dp"], first["tp"],
                               first["pp"], first["checkpoint_policy"]))


def refusals(tmp):
    path = gpt(tmp, "gpt_bad", layers=2)
    cases = [
        (["--tp", 5], 2, "does not divide"),
        (["--sequence-parallel"], 1, "--sequence-parallel needs --tp"),
        (["--fit", "4x1G", "--dp", 2], 1, "--fit searches"),
        (["--pp", 3], 1, "fewer than the stages"),
        (["--dp", 2, "--offload", "optimizer:ddr"], 1, "no --memory named"),
    ]
    for opts, code, text in cases:
        rc, _, err = arenac(path, *opts)
        check("refused: %s" % " ".join(map(str, opts)),
              rc == code and text in err, (rc, err))
    rc, _, err = arenac(path, "--pp", 2, json_path=os.path.join(
        tmp, "a%d%s.json"))
    check("refused: a second %", rc == 1 and "one %d" in err, err)


def main():
    with tempfile.TemporaryDirectory(prefix="multi_device") as tmp:
        table2(tmp)
        zero_figure1(tmp)
        pipeline(tmp)
        llama_tp(tmp)
        offload(tmp)
        fit(tmp)
        refusals(tmp)
    print("e2e_multi_device: %d passed, %d failed" % tuple(results))
    return 1 if results[1] else 0


if __name__ == "__main__":
    sys.exit(main())
