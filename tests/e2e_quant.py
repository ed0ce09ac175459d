#!/usr/bin/env python3
"""e2e_quant.py - quantized and ORT-fused models through the whole tool.

The models of testdata/gen_quant_models.py are planned with --selfcheck
(the verifier and the poison executor) and their JSON reports checked:
element types and exact byte sizes (int4 and uint4 packed two per byte,
float8), the scale and zero point each quantized tensor carries (values
read back from the file, per tensor, per channel and per block), the
shapes of the transformer ops, and the KV caches: with --max-seq every
present output sits at its past input's offset, written in place, and
the arena is pinned against the growing cache's.  The header of each plan
must compile.

Environment: ARENAC (default build/arenac), CC (default cc).
Prints one line per check and "quant: N passed, N failed".
"""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
# CC may carry flags (make check passes the sanitizers' along).
CC = shlex.split(os.environ.get("CC") or "cc")
TD = os.path.join(ROOT, "testdata")
TMP = tempfile.mkdtemp(prefix="e2e_quant.")
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    print("%s %s%s" % ("ok  " if ok else "FAIL", name,
                       "" if ok else ": " + detail))
    passed += bool(ok)
    failed += not ok


def arenac(model, *opts, header=None):
    """(exit code, stderr, JSON report or None) of one --selfcheck plan."""
    cmd = [ARENAC, "-q", "--selfcheck", "--json", "-"] + list(opts)
    if header:
        cmd += ["-o", header]
    r = subprocess.run(cmd + [os.path.join(TD, model)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    rep = json.loads(r.stdout) if r.returncode == 0 else None
    return r.returncode, r.stderr, rep


def tensors(rep):
    return {t["name"]: t for t in rep["tensors"]}


def planned(model, *opts):
    """The report's tensors, after checking the plan and its header."""
    h = os.path.join(TMP, model + ".h")
    rc, err, rep = arenac(model + ".onnx", *opts, header=h)
    check("%s plans (%s)" % (model, " ".join(opts) or "no options"),
          rc == 0, err.strip())
    if rc:
        return None, None
    c = subprocess.run(CC + ["-std=c99", "-Wall", "-Werror", "-fsyntax-only",
                        "-x", "c", h], stderr=subprocess.PIPE,
                       universal_newlines=True)
    check("%s header compiles" % model, c.returncode == 0, c.stderr.strip())
    return rep, tensors(rep)


def same(name, got, want):
    check(name, got == want, "got %r, want %r" % (got, want))


def close(a, b):
    return a is not None and len(a) == len(b) and all(
        abs(x - y) <= 1e-7 * max(1, abs(y)) for x, y in zip(a, b))


def cnn_int8():
    rep, t = planned("quant_cnn_int8")
    if not t:
        return
    same("cnn: c1 is uint8 [1,8,32,32]", (t["c1"]["dtype"], t["c1"]["shape"]),
         ("uint8", [1, 8, 32, 32]))
    same("cnn: c2 strided [1,16,16,16]", t["c2"]["shape"], [1, 16, 16, 16])
    same("cnn: logits float [1,10]", (t["logits"]["dtype"],
                                      t["logits"]["shape"]),
         ("float32", [1, 10]))
    q = t["w1"]["quant"]
    check("cnn: w1 per output channel",
          q["scale_tensor"] == "w1_s" and q["axis"] == 0 and
          close(q["scale"], [k / 512 for k in range(1, 9)]) and
          q["zero_point"] == [0] * 8, repr(q))
    same("cnn: c1 per tensor", {k: t["c1"]["quant"][k] for k in
                                ("scale_tensor", "zero_point_tensor",
                                 "zero_point", "axis")},
         {"scale_tensor": "c1_s", "zero_point_tensor": "c1_z",
          "zero_point": [3], "axis": None})
    same("cnn: MaxPool output keeps c2's parameters (from its DQ)",
         t["pool"]["quant"]["scale_tensor"], "c2_s")
    same("cnn: fc per column", t["fc"]["quant"]["axis"], 1)
    check("cnn: float tensors carry no quant", "quant" not in t["pool_f"])


def int4_blocked():
    rep, t = planned("quant_int4_blocked")
    if not t:
        return
    same("int4: weights packed, 64 x 33 in 1056 bytes",
         [(t[w]["dtype"], t[w]["bytes"]) for w in ("w4", "wu4")],
         [("int4", 1056), ("uint4", 1056)])
    same("int4: 99 int4 values in 50 bytes", (t["y4"]["dtype"],
                                              t["y4"]["bytes"]),
         ("int4", 50))
    same("int4: float8 activation", (t["x8"]["dtype"], t["x8"]["bytes"]),
         ("float8e4m3fn", 192))
    q = t["w4"]["quant"]
    same("int4: blocks of 16 along axis 0", (q["scale_tensor"], q["axis"],
                                              q["block_size"],
                                              len(q["scale"])),
         ("w4_s", 0, 16, 132))
    q = t["wu4"]["quant"]
    same("int4: uint4 zero points from int32_data, unpacked",
         (q["zero_point_tensor"], q["zero_point"]), ("wu4_z", [8] * 132))
    same("int4: float8 zero point named, values not read",
         (t["x8"]["quant"]["zero_point_tensor"],
          t["x8"]["quant"]["zero_point"]), ("x8_z", None))
    check("int4: dequantized weights run at run time, in the arena",
          t["w"]["kind"] == "activation" and t["w"]["offset"] is not None)
    same("int4: weights stay quantized", rep["weights_bytes"], 3243)


def dynamic():
    rep, t = planned("quant_dynamic_matmul", "--dim", "batch=2")
    if not t:
        return
    q = t["x_q"]["quant"]
    same("dynamic: x_q's scale and zero point are computed",
         (q["scale_tensor"], q["scale"], q["zero_point_tensor"],
          q["zero_point"]), ("x_s", None, "x_z", None))
    check("dynamic: the run-time scale is in the arena",
          t["x_s"]["offset"] is not None and t["x_s"]["shape"] == [])
    same("dynamic: MatMulInteger is int32", (t["acc"]["dtype"],
                                            t["acc"]["shape"]),
         ("int32", [2, 16, 32]))
    same("dynamic: zero point only", (t["w"]["quant"]["scale_tensor"],
                                      t["w"]["quant"]["zero_point"]),
         (None, [0]))
    same("dynamic: DynamicQuantizeMatMul", (t["z"]["dtype"], t["z"]["shape"],
                                            t["w2"]["quant"]["axis"]),
         ("float32", [2, 16, 32], 1))
    same("dynamic: MatMulIntegerToFloat", (t["t"]["dtype"], t["t"]["shape"]),
         ("float32", [2, 16, 8]))


def cache_check(name, t, pairs):
    for past, present in pairs:
        check("%s: %s over %s" % (name, present, past),
              t[present]["offset"] == t[past]["offset"] and
              t[present]["inplace_of"] == past and
              t[present]["shape"] == t[past]["shape"],
              "%s at %s, %s at %s" % (past, t[past]["offset"], present,
                                      t[present]["offset"]))


def gpt2():
    dims = ["--dim", "batch=1", "--dim", "seq=1"]
    rep, t = planned("gpt2_fused", *(dims + ["--dim", "past_seq=15",
                                             "--dim", "total_seq=16"]))
    if not t:
        return
    same("gpt2: embedding", (t["ln1"]["shape"], t["emb_sum"]["shape"]),
         ([1, 1, 32], [1, 1, 32]))
    same("gpt2: a growing cache", t["present_0"]["shape"], [2, 1, 2, 16, 16])
    same("gpt2: logits", t["logits"]["shape"], [1, 1, 128])
    check("gpt2: growing: present apart from past",
          t["present_0"]["inplace_of"] is None)
    grow = rep["arena_bytes"]
    rep, t = planned("gpt2_fused", *(dims + ["--dim", "total_seq=32",
                                             "--max-seq", "32"]))
    if not t:
        return
    same("gpt2: --max-seq 32 sizes the cache", t["past_0"]["shape"],
         [2, 1, 2, 32, 16])
    cache_check("gpt2", t, [("past_0", "present_0")])
    same("gpt2: arenas (growing, static)", (grow, rep["arena_bytes"]),
         (8384, 8960))


def gqa():
    dims = ["--dim", "batch=1", "--dim", "seq=1", "--dim", "total_seq=64"]
    rep, t = planned("gqa_decoder", *(dims + ["--max-seq", "64"]))
    if not t:
        return
    pairs = [("past_key_values.%d.%s" % (i, kv), "present.%d.%s" % (i, kv))
             for i in range(2) for kv in ("key", "value")]
    same("gqa: static caches", [t[p]["shape"] for p, _ in pairs],
         [[1, 2, 64, 16]] * 4)
    cache_check("gqa", t, pairs)
    q = t["qkv_0"]["quant"]
    same("gqa: MatMulNBits packed weights", (t["qkv_0"]["dtype"],
                                             t["qkv_0"]["bytes"], q["axis"],
                                             q["block_size"]),
         ("uint8", 128 * 64 // 2, 1, 32))
    same("gqa: logits", t["logits"]["shape"], [1, 1, 256])
    static = rep["arena_bytes"]
    rep, t = planned("gqa_decoder", *(dims + ["--dim", "past_seq=63"]))
    if not t:
        return
    same("gqa: total_sequence_length 64 over 63 past (ORT: the larger)",
         t["present.0.key"]["shape"], [1, 2, 64, 16])
    check("gqa: growing: present apart from past",
          t["present.0.key"]["inplace_of"] is None)
    same("gqa: arenas (static, growing)", (static, rep["arena_bytes"]),
         (34320, 49936))
    rc, err, _ = arenac("gqa_decoder.onnx", *(dims + ["--max-seq", "32"]))
    check("gqa: a total past --max-seq is refused",
          rc == 2 and "total_sequence_length 64 exceeds --max-seq 32" in err,
          "exit %d: %s" % (rc, err.strip()))


def no_cache():
    """--max-seq on a model without KV caches says so."""
    r = subprocess.run([ARENAC, "--max-seq", "8", "--json", os.devnull,
                        os.path.join(TD, "quant_cnn_int8.onnx")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    check("--max-seq without a KV cache warns",
          r.returncode == 0 and "--max-seq 8: no graph input is an "
          "attention op's KV cache" in r.stderr, r.stderr.strip())


def fixed_past():
    """A fixed past dim that --max-seq contradicts is an error naming both."""
    try:
        import onnx
    except ImportError:
        print("skipped: onnx is not installed for", sys.executable)
        return
    m = onnx.load(os.path.join(TD, "gpt2_fused.onnx"))
    for vi in m.graph.input:
        if vi.name == "past_0":
            vi.type.tensor_type.shape.dim[3].dim_value = 16
    path = os.path.join(TMP, "gpt2_fixed.onnx")
    onnx.save(m, path)
    r = subprocess.run([ARENAC, "-q", "--dim", "batch=1", "--dim", "seq=1",
                        "--dim", "total_seq=17", "--max-seq", "32", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    check("--max-seq against a fixed past dim",
          r.returncode == 2 and "graph input 'past_0' has fixed dim 16 at "
          "axis 3, its KV cache's sequence axis, which --max-seq 32 "
          "contradicts" in r.stderr, "exit %d: %s" % (r.returncode,
                                                     r.stderr.strip()))


def main():
    if not os.access(ARENAC, os.X_OK):
        print("FAIL: %s is not built" % ARENAC)
        return 1
    try:
        for f in (cnn_int8, int4_blocked, dynamic, gpt2, gqa, no_cache,
                  fixed_past):
            f()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("quant: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
