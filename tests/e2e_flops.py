#!/usr/bin/env python3
"""e2e_flops.py — a training step's FLOPs follow the gradients it computes.

A backward step costs what it computes: a MatMul or Gemm one product per
operand gradient (dX, dW), so a frozen weight's dW costs nothing and an
input with nothing trained behind it gets no dX.  The check is the usual
accounting (Kaplan et al.; Narayanan et al. 2021, eq. 1): a matmul
weight of N parameters costs 2N FLOPs a token forward, 2N more for dX and
2N for dW; the attention core 4 b s^2 h a layer forward (QK^T and PV), 8
backward.  N counts the weights of the matmuls (the head included, the
position table and the norms not); what is left is the elementwise ops,
under 1%:

  - GPT-2 small (gen_gpt.py --preset gpt2-small), full training:
    6 N T + 3 att;
  - the same with only layer 0's LayerNorm scale trained: every weight
    frozen, dX through every layer: 4 N T + 3 att (was 6 N T + 3 att:
    each op's backward was costed whatever gradients it computed);
  - the Llama-7B shape (gen_llama.py --preset llama-7b), full training,
    and with only wq and wv trained (a LoRA-like split):
    4 N T + 2 N_qv T + 3 att;
  - --grad-accum 4: the plan (arena, bill) is the micro-batch's, the
    step's FLOPs four times its forward, backward and recompute;
  - --attention flash: the backward recomputes the scores, one of the
    core's two products: 6 N T + 3.5 att.  Asking for it on a model with
    no attention core (LeNet) warns and plans op by op; --checkpoint
    selective over fused cores warns that nothing is left to recompute.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")
passed = failed = 0


def check(what, got, want, tol=0.01):
    global passed, failed
    ok = abs(got / want - 1) < tol
    passed += ok
    failed += not ok
    print("%s %s: %.4e FLOPs, formula %.4e (%+.2f%%)" % (
        "ok  " if ok else "FAIL", what, got, want, 100 * (got / want - 1)))


def warns(what, args, text):
    global passed, failed
    r = subprocess.run([ARENAC, "--train", "--json", "-"] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    ok = r.returncode == 0 and text in r.stderr
    passed += ok
    failed += not ok
    print("%s %s" % ("ok  " if ok else "FAIL", what) +
          ("" if ok else ": exit %d, %s" % (r.returncode, r.stderr)))


def bill(tmp, model, *opts):
    out = os.path.join(tmp, "r.json")
    subprocess.run([ARENAC, "-q", "--train", "--optimizer", "adam",
                    "--precision", "mixed-bf16", "--json", out, *opts,
                    model], check=True)
    b = json.load(open(out))["training"]
    return b["forward_flops"], b["forward_flops"] + b["backward_flops"]


def gen(tmp, script, preset):
    path = os.path.join(tmp, preset + ".onnx")
    subprocess.run([PYTHON, os.path.join(ROOT, "testdata", script),
                    "--preset", preset, path], check=True,
                   stdout=subprocess.DEVNULL)
    return path


def main():
    with tempfile.TemporaryDirectory() as tmp:
        h, V, s, b, L = 768, 50257, 1024, 8, 12
        T = s * b
        n = L * 12 * h * h + V * h
        att = L * 4 * b * s * s * h
        gpt = gen(tmp, "gen_gpt.py", "gpt2-small")
        fwd, tot = bill(tmp, gpt)
        check("gpt2 forward (2 N T + att)", fwd, 2 * n * T + att)
        check("gpt2 full step (6 N T + 3 att)", tot, 6 * n * T + 3 * att)
        out = os.path.join(tmp, "ga.json")
        for opts in ((), ("--grad-accum", "4")):
            subprocess.run([ARENAC, "-q", "--train", "--optimizer", "adam",
                            "--json", out, *opts, gpt], check=True)
            b = json.load(open(out))["training"]
            if not opts:
                one = b
        check("gpt2 --grad-accum 4: the step's FLOPs", b["step_flops"],
              4 * (one["forward_flops"] + one["backward_flops"] +
                   one["recompute_flops"]), tol=1e-9)
        check("gpt2 --grad-accum 4: the micro-batch's bill",
              b["total_bytes"], one["total_bytes"], tol=1e-12)
        _, tot = bill(tmp, gpt, "--attention", "flash")
        check("gpt2 --attention flash (6 N T + 3.5 att)", tot,
              6 * n * T + 3.5 * att)
        warns("--attention flash on a model without attention",
              ["--attention", "flash", "--batch", "2",
               os.path.join(ROOT, "testdata", "lenet.onnx")],
              "--attention flash: found no attention core to fuse")
        warns("--checkpoint selective over fused cores",
              ["--attention", "flash", "--checkpoint", "selective", gpt],
              "nothing is left to recompute")
        _, tot = bill(tmp, gpt, "--trainable", r"^l0\.ln1\.")
        check("gpt2 all matmul weights frozen (4 N T + 3 att)", tot,
              4 * n * T + 3 * att)

        d, f, V, s, b, L = 4096, 11008, 32000, 2048, 1, 32
        T = s * b
        n = L * (4 * d * d + 3 * d * f) + V * d
        att = L * 4 * b * s * s * d
        qv = L * 2 * d * d
        llama = gen(tmp, "gen_llama.py", "llama-7b")
        fwd, tot = bill(tmp, llama)
        check("llama-7b forward", fwd, 2 * n * T + att)
        check("llama-7b full step", tot, 6 * n * T + 3 * att)
        _, tot = bill(tmp, llama, "--trainable", r"\.w[qv]$")
        check("llama-7b wq, wv trained (4 N T + 2 N_qv T + 3 att)", tot,
              4 * n * T + 2 * qv * T + 3 * att)
    print("e2e_flops: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
