#!/usr/bin/env python3
"""e2e_optimizers.py - every optimizer's state, to the byte, against the
allocation rules of the libraries that implement it, written out here
from their sources (not from arenac's table):

  bitsandbytes, bitsandbytes/optim/optimizer.py Optimizer2State.init_state
    / Optimizer1State.init_state: numel < min_8bit_size (4096) -> fp32
    moments; else uint8 moments (zeros_like(p, uint8)) and an fp32 absmax
    of n // 256 + bool(n % 256) blocks each; Optimizer8bit.fill_qmap: two
    256-entry fp32 maps once; get_state_buffer: paged (host) only for
    numel >= 1e5, the absmax never.
  torchao, torchao/optim/adam.py _AdamBase._new_buffer and
    subclass_4bit.py OptimState4bit.zeros: numel >= 4096 and numel % 128
    == 0 -> n // 2 uint8 codes, n // 128 fp32 scales, a 16-entry fp32
    qmap per moment; else zeros_like(p).
  torch.optim.Adafactor (row_var, col_var) / transformers' Adafactor:
    rank >= 2 -> prod(shape[:-1]) + prod(shape[:-2]) * shape[-1]; else
    full; the first moment only with beta1.
  torch.optim Adam / AdamW / SGD(momentum), lion-pytorch: zeros_like of
    what the optimizer updates (the master copy if any).

Per tensor on generated GPT and Llama graphs (a Llama FFN width that is
no multiple of 128, so torchao's fallback and bitsandbytes' partial block
both occur) and by hand on a three-tensor MLP.  Megatron-LM's
distributed-optimizer table (docs/user-guide/features/dist_optimizer.md:
bf16 params + fp32 grads 18 and 6 + 12/d, fp32/fp32 16 and 8 + 8/d bytes
per parameter) on the GPT graph, with --dp d --zero 1 for the
distributed optimizer.  Transformer Math 101 (EleutherAI): AdamW 12,
8-bit 6 (+ the absmax it leaves out), momentum 8 bytes of optimizer
memory per parameter in mixed precision.  Bad formats: exit 2 naming the
option.

Environment: ARENAC (default build/arenac).  Skipped when onnx is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_paper_oracles import ARENAC, check, gen_gpt, gen_llama, onnx, \
    results  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

SIZE = {TensorProto.FLOAT: 4, TensorProto.FLOAT16: 2,
        TensorProto.BFLOAT16: 2}
FMT = {"fp32": 4, "fp16": 2, "bf16": 2}


def run(path, *opts):
    cmd = [ARENAC, "-q", "--train", "--json", "-"] + [str(o) for o in opts]
    p = subprocess.run(cmd + [path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, (json.loads(p.stdout) if p.returncode == 0
                          else None), p.stderr.strip()


def numel(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def params_of(model, rep):
    """(name, dims) of the parameters arenac updates: those with a
    NAME.next in the plan (which ones are trained is not what this test
    checks).  Shapes from the ONNX file; a parameter folded from one (the
    GPT's position table gathered by constant indices, "pos") has the
    plan's shape."""
    dims = {i.name: list(i.dims) for i in model.graph.initializer}
    return [(t["name"][:-5], dims.get(t["name"][:-5], t["shape"]))
            for t in rep["tensors"] if t["name"].endswith(".next")]


def bnb8(n, moments, paged):
    """(device, host) bytes of bitsandbytes' state for n elements."""
    if n < 4096:
        b = moments * 4 * n
        return (0, b) if paged and n >= 100000 else (b, 0)
    codes = moments * n
    absmax = moments * 4 * (n // 256 + bool(n % 256))
    return (absmax, codes) if paged and n >= 100000 else (codes + absmax, 0)


def ao4(n, width):
    if n >= 4096 and n % 128 == 0:
        return 2 * (n // 2 + 4 * (n // 128) + 4 * 16)
    return 2 * width * n


def adafactor(dims, width, beta1):
    n = numel(dims)
    first = width * n if beta1 else 0
    if len(dims) >= 2:
        return first + width * (numel(dims[:-1]) +
                                numel(dims[:-2]) * dims[-1])
    return first + width * n


def expected(opt, ps, width, beta1=False):
    """(device, host) optimizer-state bytes; width: bytes of an element
    of what the optimizer updates (master copy, else the parameter)."""
    dev = host = 0
    quantised = False
    for _, dims in ps:
        n = numel(dims)
        if opt in ("adam", "adamw"):
            dev += 2 * width * n
        elif opt in ("momentum", "lion"):
            dev += width * n
        elif opt in ("adam8bit", "adamw8bit", "paged-adam8bit",
                     "paged-adamw8bit", "lion8bit"):
            d, h = bnb8(n, 1 if opt == "lion8bit" else 2,
                        opt.startswith("paged"))
            dev, host = dev + d, host + h
            quantised = quantised or n >= 4096
        elif opt == "paged-adamw":
            h = 2 * 4 * n
            if n >= 100000:
                host += h
            else:
                dev += h
        elif opt in ("adam4bit", "adamw4bit"):
            dev += ao4(n, width)
        elif opt == "adafactor":
            dev += adafactor(dims, width, beta1)
    if quantised:
        dev += 2 * 256 * 4
    return dev, host


OPTIMIZERS = ["sgd", "momentum", "adam", "adamw", "adam8bit", "adamw8bit",
              "paged-adam8bit", "paged-adamw8bit", "paged-adamw", "adam4bit",
              "adamw4bit", "adafactor", "lion", "lion8bit"]


def per_model(name, path, model):
    for prec, width in (("model", None), ("mixed-bf16", 4), ("bf16", 2)):
        for opt in OPTIMIZERS:
            opts = ["--optimizer", opt]
            if prec != "model":
                opts += ["--precision", prec]
            rc, r, err = run(path, *opts)
            what = "%s %s %s" % (name, prec, opt)
            if not check(what + ": exit 0", rc == 0, err):
                continue
            t = r["training"]
            ps = params_of(model, r)
            w = width or SIZE[model.graph.initializer[0].data_type]
            want = expected(opt, ps, w)
            got = (t["optimizer_state_bytes"], t["host_state_bytes"])
            check(what + ": state bytes", got == want, (got, want))
            # The plan's tensors are what the bill counts.
            check(what + ": weights are the persistent parts",
                  r["weights_bytes"] == t["parameter_bytes"] +
                  t["gradient_bytes"] + t["master_weight_bytes"] +
                  t["optimizer_state_bytes"] + t["host_state_bytes"] +
                  t["frozen_bytes"] + t["constant_bytes"],
                  (r["weights_bytes"], t))
            if prec == "mixed-bf16" and opt == "adam":
                print("  %s: %d parameters, mixed-bf16 adam %d bytes of "
                      "state" % (name, t["parameters"], got[0]))
    for beta1 in (False, True):
        rc, r, err = run(path, "--optimizer", "adafactor",
                         *(["--beta1", "0.9"] if beta1 else []))
        if check(name + " adafactor beta1 %s: exit 0" % beta1, rc == 0,
                 err):
            want = expected("adafactor", params_of(model, r),
                            SIZE[model.graph.initializer[0].data_type],
                            beta1)
            check(name + " adafactor beta1 %s: state" % beta1,
                  r["training"]["optimizer_state_bytes"] == want[0],
                  (r["training"]["optimizer_state_bytes"], want))


def megatron(path):
    """Megatron-LM's table: bytes per parameter, not distributed and with
    the distributed optimizer over d ranks (ZeRO-1)."""
    rows = [("bf16 params, fp32 grads", ["--precision", "bf16",
                                         "--grad-dtype", "fp32",
                                         "--master-dtype", "fp32"], 18,
             (6, 12)),
            ("fp32 params, fp32 grads", ["--precision", "fp32"], 16,
             (8, 8))]
    for what, opts, per, (rep, part) in rows:
        rc, r, err = run(path, "--optimizer", "adam", *opts)
        if not check("megatron %s: exit 0" % what, rc == 0, err):
            continue
        t = r["training"]
        psi = t["parameters"]
        got = (t["parameter_bytes"] + t["gradient_bytes"] +
               t["master_weight_bytes"] + t["optimizer_state_bytes"])
        check("megatron %s: %d bytes per parameter" % (what, per),
              got == per * psi, (got, per * psi))
        for d in (2, 4, 8):
            rc, r, err = run(path, "--optimizer", "adam", *opts, "--dp", d,
                             "--zero", 1)
            if not check("megatron %s d=%d: exit 0" % (what, d), rc == 0,
                         err):
                continue
            dev = r["devices"][0]
            got = dev["parameters"] + dev["gradients"] + \
                dev["optimizer_state"]
            want = rep * psi + part * -(-psi // d)
            check("megatron %s: %d + %d/d at d=%d" % (what, rep, part, d),
                  got == want, (got, want))
        print("  Megatron-LM %s: %d bytes per parameter, %d + %d/d "
              "distributed" % (what, per, rep, part))


def math101(path):
    """Transformer Math 101's optimizer memory per parameter (mixed
    precision): master copy plus moments; the 8-bit figure without the
    absmax, which is 2 * 4 / 256 bytes per parameter of a tensor that is
    a multiple of 256."""
    for opt, per in (("adamw", 12), ("momentum", 8), ("adamw8bit", 6)):
        rc, r, err = run(path, "--optimizer", opt, "--precision",
                         "mixed-bf16", "--trainable", "^wte$")
        if not check("math101 %s: exit 0" % opt, rc == 0, err):
            continue
        t = r["training"]
        psi = t["parameters"]
        extra = 2 * 4 * psi // 256 + 2048 if opt == "adamw8bit" else 0
        got = t["master_weight_bytes"] + t["optimizer_state_bytes"]
        check("math101 %s: %d bytes per parameter" % (opt, per),
              psi % 256 == 0 and got == per * psi + extra,
              (got, per * psi + extra))


def by_hand(tmp):
    """A three-tensor MLP counted by hand: W1 16x300 (4800 elements:
    8-bit, 19 absmax blocks, not a multiple of 128), b1 300 and W2 300x10
    (3000 elements: below 4096)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 10])
    inits = [helper.make_tensor(n, TensorProto.FLOAT, d, [0.0] * numel(d))
             for n, d in (("W1", [16, 300]), ("b1", [300]),
                          ("W2", [300, 10]))]
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h"]),
             helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]),
             helper.make_node("MatMul", ["r", "W2"], ["y"])]
    g = helper.make_graph(nodes, "mlp", [x], [y], inits)
    path = os.path.join(tmp, "mlp.onnx")
    onnx.save(helper.make_model(g, opset_imports=[
        helper.make_opsetid("", 17)]), path)
    hand = {
        "adam": 2 * 4 * (4800 + 300 + 3000),
        "adam8bit": 2 * (4800 + 4 * 19) + 2 * 4 * 300 + 2 * 4 * 3000 +
        2 * 256 * 4,
        "lion8bit": 4800 + 4 * 19 + 4 * 300 + 4 * 3000 + 2 * 256 * 4,
        # torchao: no tensor qualifies (4800 % 128 = 64), all fp32.
        "adam4bit": 2 * 4 * (4800 + 300 + 3000),
        # rows + columns of the matrices, b1 whole.
        "adafactor": 4 * (16 + 300) + 4 * 300 + 4 * (300 + 10),
        "lion": 4 * 8100,
        "sgd": 0,
    }
    for opt, want in hand.items():
        rc, r, err = run(path, "--optimizer", opt, "--selfcheck")
        if check("mlp %s: exit 0" % opt, rc == 0, err):
            got = r["training"]["optimizer_state_bytes"]
            check("mlp %s: %d bytes by hand" % (opt, want), got == want,
                  (got, want))
    rc, r, err = run(path, "--optimizer", "adam8bit")
    if r:
        names = {t["name"]: t for t in r["tensors"]}
        check("mlp adam8bit: W1's codes and absmax",
              names.get("W1.state1", {}).get("dtype") == "uint8" and
              names.get("W1.state1.absmax", {}).get("shape") == [19] and
              names.get("W2.state1", {}).get("dtype") == "float32",
              sorted(n for n in names if "state" in n))
    # Bad formats: exit 2, the option named.
    for opts, opt in ((["--master-dtype", "int4"], "--master-dtype"),
                      (["--grad-dtype", "int8"], "--grad-dtype"),
                      (["--optimizer", "adam8bit", "--state-dtype", "bf16"],
                       "--state-dtype")):
        rc, _, err = run(path, "--precision", "mixed-bf16", *opts)
        check("mlp %s: exit 2 naming %s" % (" ".join(opts), opt),
              rc == 2 and opt in err, (rc, err))
    rc, _, err = run(path, "--optimizer", "adam", "--beta1", "0.9")
    check("--beta1 with adam: usage error", rc == 1 and "--beta1" in err,
          (rc, err))
    rc, _, err = run(path, "--optimizer", "adam9bit")
    check("unknown optimizer: usage error naming the choices",
          rc == 1 and "adam8bit" in err, (rc, err))
    # --state-dtype bf16 under mixed-bf16: Megatron's exp_avg_dtype.
    rc, r, err = run(path, "--optimizer", "adam", "--precision",
                     "mixed-bf16", "--state-dtype", "bf16")
    if check("mlp --state-dtype bf16: exit 0", rc == 0, err):
        t = r["training"]
        check("mlp --state-dtype bf16: 2 + 2 + 4 + 4 bytes",
              (t["parameter_bytes"], t["gradient_bytes"],
               t["master_weight_bytes"], t["optimizer_state_bytes"],
               t["state_dtype"]) == (2 * 8100, 2 * 8100, 4 * 8100,
                                     4 * 8100, "bfloat16"), t)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        c, m = gen_gpt.make(layers=2, seq=64, hidden=128, heads=4,
                            vocab=1000)
        gpt = os.path.join(tmp, "gpt.onnx")
        onnx.save(m, gpt)
        per_model("gpt", gpt, m)
        megatron(gpt)
        math101(gpt)
        c, m = gen_llama.make(layers=2, dim=64, heads=4, kv_heads=2,
                              ffn=171, vocab=256)
        llama = os.path.join(tmp, "llama.onnx")
        onnx.save(m, llama)
        per_model("llama", llama, m)
        by_hand(tmp)
    print("e2e_optimizers: %d passed, %d failed" % tuple(results))
    return 1 if results[1] else 0


if __name__ == "__main__":
    sys.exit(main())
