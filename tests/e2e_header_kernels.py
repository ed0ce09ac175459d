#!/usr/bin/env python3
"""e2e_header_kernels.py - the header as a kernel library reads it (issue
29 item 5), each new macro and column compiled into a C program that
prints what it reads, checked against outside truth:

- the op enum: every step's op_code names its op, one value per op, the
  values 0 .. NUM_OPS-1;
- attributes: every one the header has and the model's node lacks is
  ONNX's default, from onnx.defs' schema for the node's opset (lists: one
  stride and dilation per spatial axis, two pads, W's kernel shape); the
  Conv, pool and Gemm steps get every default their schema has;
- positional I/O macros (PREFIX_INPUT_0_DTYPE, _RANK, _SHAPE, _BYTES,
  _SCALE, _ZERO_POINT) against the ONNX model's inputs and outputs and
  the quantisation its Q/DQ nodes state;
- requantisation: each QLinearConv, QLinearMatMul and (com.microsoft)
  QLinearMul's multipliers and shifts against a Python reimplementation
  of TFLite Micro's QuantizeMultiplier
  (tensorflow/lite/kernels/internal/quantization_util.cc) on the float
  scales of the model, QLinearAdd's three pairs against its add_common.cc
  CalculateOpDataAdd (PREFIX_REQUANT_ADD_LEFT_SHIFT 20); ConvInteger's dynamic scales have
  none (YOLOv8n int8);
- --strip-names: no names in the tables but the graph inputs' and
  outputs', the flash it saves by arm-none-eabi-size on the tables of a
  shared model, and the int8 CNN so planned (with --kernel-scratch too)
  running on the emulated Cortex-M4;
- --kernel-scratch: CMSIS-NN's arm_convolve_s8_get_buffer_size as a table
  line plans exactly that workspace at each QLinearConv; bad tables exit 1,
  a line a node cannot evaluate exit 2;
- PREFIX_ARENA_SIZE in a one-memory tiered header (ARENAC_RT_BIND builds
  against it), none with two memories.
"""
import atexit
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from onnx import TensorProto, defs, helper, load, numpy_helper, save
except ImportError:
    print("skipped: no python3-onnx (the schemas and models it reads)")
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402

ARENAC = os.environ.get("ARENAC", "build/arenac")
SHARED = os.environ.get("ARENAC_SHARED", "../shared")
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)
T = Tally("header_kernels")


def quantize_multiplier(m):
    """TFLite Micro's QuantizeMultiplier, TFLITE_SINGLE_ROUNDING off."""
    if m == 0.0:
        return 0, 0
    q, shift = math.frexp(m)
    fixed = int(math.floor(abs(q) * 2**31 + 0.5)) * (1 if q > 0 else -1)
    assert fixed <= 2**31
    if fixed == 2**31:
        fixed //= 2
        shift += 1
    if shift < -31:
        shift, fixed = 0, 0
    return fixed, shift


READER = r'''
#include <stdio.h>
#include <string.h>
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define L(x) CAT(hc, x)
#include "m.h"
static void io(const char *w, int k, int idx, int dt, int rank,
               const int *shape, int n, unsigned long bytes, int q,
               double scale, long zp)
{
    printf("io %s %d %d %d %d", w, k, idx, dt, rank);
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? "," : " ", shape[i]);
    if (!n)
        printf(" -");
    printf(" %lu", bytes);
    if (q)
        printf(" %.9g %ld", scale, zp);
    printf("\n");
}
#define IO(w, P) do { \
    static const int shape[] = P##_SHAPE; \
    io(w, K, P##_INDEX, P##_DTYPE, P##_RANK, shape, \
       (int)(sizeof shape / sizeof shape[0]), P##_BYTES, QUANT(P)); \
} while (0)
int main(void)
{
    int codes[HC_NUM_OPS + 1];
    for (int i = 0; i <= HC_NUM_OPS; i++)
        codes[i] = -1;
    for (int s = 0; s < HC_NUM_STEPS; s++) {
        const hc_step *st = &hc_steps[s];
        printf("step %d %s %d %s %u\n", s, st->op, st->op_code,
               st->name ? st->name : "-", (unsigned)HC_STEP_SCRATCH_BYTES(st));
        if (st->op_code >= HC_NUM_OPS)
            return printf("error: op_code past HC_NUM_OPS\n"), 1;
        /* One value per op: the first step of an op sets it. */
        for (int t = 0; t < s; t++)
            if ((strcmp(hc_steps[t].op, st->op) == 0) !=
                (hc_steps[t].op_code == st->op_code) &&
                strcmp(hc_steps[t].domain, st->domain) == 0)
                return printf("error: op_code of step %d\n", s), 1;
        codes[st->op_code] = s;
        for (int a = 0; a < st->nattrs; a++) {
            const hc_attr *at = &st->attrs[a];
            printf("attr %d %s %d", s, at->name, at->type);
            for (int v = 0; v < at->count; v++) {
                if (at->type == HC_ATTR_STRING)
                    printf(" %s", at->strings[v]);
                else if (at->type == HC_ATTR_FLOAT ||
                         at->type == HC_ATTR_FLOATS)
                    printf(" %.9g", (double)at->floats[v]);
                else if (at->type == HC_ATTR_INT || at->type == HC_ATTR_INTS)
                    printf(" %lld", (long long)at->ints[v]);
            }
            printf("\n");
        }
        printf("rq %d %u", s, (unsigned)HC_STEP_REQUANT_COUNT(st));
#ifdef HC_HAS_REQUANT
        for (int c = 0; c < st->nrequant; c++)
            printf(" %ld,%ld", (long)st->requant_multiplier[c],
                   (long)st->requant_shift[c]);
#endif
        printf("\n");
    }
    for (int i = 0; i < HC_NUM_OPS; i++)
        if (codes[i] < 0)
            return printf("error: op value %d unused\n", i), 1;
    for (int i = 0; i < HC_NUM_TENSORS; i++)
        if (hc_tensors[i].name)
            printf("named %d\n", hc_tensors[i].kind);
#ifdef HC_HAS_REQUANT
    printf("has_requant\n");
    printf("add_left_shift %d\n", HC_REQUANT_ADD_LEFT_SHIFT);
#endif
#ifdef HC_ARENA_SIZE
    printf("arena_size %lu\n", (unsigned long)HC_ARENA_SIZE);
#endif
IOS
    return 0;
}
'''


def run(args, want=0):
    r = subprocess.run([ARENAC, "-q"] + args, capture_output=True, text=True)
    return r.returncode, r.stderr


def read(model, opts, name):
    """Plans model, compiles the reader against its header; (lines, JSON)."""
    h = os.path.join(tmp, "m.h")
    js = os.path.join(tmp, name + ".json")
    rc, err = run(opts + ["--prefix", "hc", "-o", h, "--json", js, model])
    if rc:
        return None, err
    m = load(model)
    ios = []
    for w, vals in (("in", [i for i in m.graph.input if i.name not in
                            {x.name for x in m.graph.initializer}]),
                    ("out", m.graph.output)):
        for k in range(len(vals)):
            p = "HC_%sPUT_%d" % ("IN" if w == "in" else "OUT", k)
            ios.append("#define K %d\n#ifdef %s_SCALE\n#define QUANT(P) 1, "
                       "P##_SCALE, P##_ZERO_POINT\n#else\n#define QUANT(P) "
                       "0, 0.0, 0L\n#endif\n    IO(\"%s\", %s);\n#undef K\n"
                       "#undef QUANT" % (k, p, w, p))
    src = os.path.join(tmp, "reader.c")
    with open(src, "w") as f:
        f.write(READER.replace("IOS", "\n".join(ios)))
    exe = os.path.join(tmp, "reader")
    r = subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-I", tmp,
                        "-DHC_DEFINE_TABLES", src, "-o", exe],
                       capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr[-600:]
    out = subprocess.run([exe], capture_output=True, text=True)
    if out.returncode:
        return None, out.stdout[-300:]
    return out.stdout.splitlines(), json.load(open(js))


def attr_value(a):
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode()
    return v


def schema_default(node, opset, name, shapes):
    """ONNX's default of attribute name of node, or None when it has none
    the header could write."""
    try:
        s = defs.get_schema(node.op_type, opset, node.domain)
    except Exception:
        return None
    if name not in s.attributes:
        # An opset past onnx 1.12's (17): the spec's own text.
        if opset > defs.onnx_opset_version():
            return doc_default(node.op_type, name)
        return "not in schema"
    d = s.attributes[name].default_value
    if d.type:
        return attr_value(d)
    spatial = len(shapes[node.input[0]]) - 2
    if name in ("strides", "dilations"):
        return [1] * spatial
    if name == "pads":
        return [0] * 2 * spatial
    if name == "output_padding":
        return [0] * spatial
    if name == "kernel_shape":
        w = 3 if node.op_type == "QLinearConv" else 1
        return list(shapes[node.input[w]][2:])
    return None


def doc_default(op, name):
    """The "(default is X)" of op's attribute in ONNX's Operators.md."""
    path = os.path.join(SHARED, "docs", "onnx-Operators.md")
    if not os.path.exists(path):
        return "no docs"
    text = open(path).read()
    at = text.find('<a name="%s"></a><a name="%s">' % (op, op.lower()))
    m = re.search(r"<dt><tt>%s</tt> : (\w+) \(default is ([^)]*)\)" % name,
                  text[at:text.find("#### Inputs", at)])
    if not m:
        return "not in the docs"
    return {"int": int, "float": float}.get(m.group(1), str)(m.group(2))


def parse_attr(fields, typ):
    vals = fields
    if typ in (1, 6):
        vals = [float(x) for x in vals]
    elif typ in (2, 7):
        vals = [int(x) for x in vals]
    elif typ == 3:
        vals = " ".join(vals)
    return vals[0] if typ in (1, 2) else vals


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return np.float32(a) == np.float32(b)
    if isinstance(a, list) and a and isinstance(a[0], float):
        return list(np.float32(a)) == list(np.float32(b))
    return a == b


def check_model(label, model, opts, full=("Conv", "MaxPool", "AveragePool",
                                          "Gemm", "QLinearConv")):
    lines, rep = read(model, opts, label)
    if not T.check(label + ": header read back", lines is not None, rep):
        return None
    m = load(model)
    opset = {o.domain: o.version for o in m.opset_import}
    shapes = {t["name"]: t["shape"] for t in rep["tensors"]}
    byname = {}
    for i, n in enumerate(m.graph.node):
        byname[n.name or "%s_%d" % (n.op_type, i)] = n
    steps = {}
    attrs = {}
    for l in lines:
        f = l.split()
        if f[0] == "step":
            steps[int(f[1])] = (f[2], int(f[3]), f[4])
        elif f[0] == "attr":
            attrs.setdefault(int(f[1]), {})[f[2]] = parse_attr(f[4:],
                                                              int(f[3]))
    # Defaults: every header attribute the node lacks is ONNX's default.
    bad, checked, missing = [], 0, []
    for s, (op, code, name) in steps.items():
        n = byname.get(name)
        if n is None:
            continue
        given = {a.name for a in n.attribute}
        o = opset.get(n.domain, opset.get("ai.onnx", 0))
        for a, v in attrs.get(s, {}).items():
            if a in given:
                continue
            d = schema_default(n, o, a, shapes)
            checked += 1
            if d is None or not same(v, d):
                bad.append((n.name, a, v, d))
        if n.op_type in full:
            sch = defs.get_schema(n.op_type, o, n.domain)
            for a in sch.attributes:
                if a not in given and a not in attrs.get(s, {}) and \
                        schema_default(n, o, a, shapes) is not None and \
                        not (a == "pads" and "auto_pad" in given):
                    missing.append((n.name, a))
    T.check("%s: %d defaulted attributes equal onnx.defs' defaults"
            % (label, checked), not bad, bad[:3])
    T.check("%s: Conv, pool and Gemm steps have every default" % label,
            not missing, missing[:3])
    return lines, rep, m


def initializer(m, name):
    for t in m.graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t)
    return None


def check_requant(label, lines, m, expect_any):
    rq = {}
    for l in lines:
        f = l.split()
        if f[0] == "rq":
            rq[int(f[1])] = [tuple(map(int, x.split(","))) for x in f[3:]]
            if int(f[2]) != len(rq[int(f[1])]) and "has_requant" in lines:
                T.check(label + ": nrequant", False, l)
    steps = [l.split() for l in lines if l.startswith("step ")]
    nodes = {n.name or "%s_%d" % (n.op_type, i): n
             for i, n in enumerate(m.graph.node)}
    bad, n_ch = [], 0
    for f in steps:
        s, op, name = int(f[1]), f[2], f[4]
        want = []
        if op in ("QLinearConv", "QLinearMatMul", "QLinearMul",
                  "QLinearAdd"):
            n = nodes[name]
            xs, ws, ys = (initializer(m, n.input[j]) for j in (1, 4, 6))
            if xs is None or ws is None or ys is None:
                pass
            elif op == "QLinearAdd":
                # TFLite Micro's add_common.cc CalculateOpDataAdd.
                sa, sb, sy = (float(np.float32(v)) for v in (xs, ws, ys))
                twice = 2 * max(sa, sb)
                want = [quantize_multiplier(v) for v in
                        (sa / twice, sb / twice, twice / (2**20 * sy))]
            else:
                for w in np.atleast_1d(ws).astype(np.float32):
                    eff = float(np.float32(xs)) * float(w) / \
                        float(np.float32(ys))
                    want.append(quantize_multiplier(eff))
        n_ch += len(want)
        if rq.get(s, []) != want:
            bad.append((name, rq.get(s), want))
    T.check("%s: %d multipliers and shifts equal QuantizeMultiplier's"
            % (label, n_ch), not bad and (n_ch > 0) == expect_any, bad[:2])
    T.check("%s: PREFIX_HAS_REQUANT %s" % (label, expect_any),
            ("has_requant" in lines) == expect_any and
            ("add_left_shift 20" in lines) == expect_any)


def check_io(label, lines, m, rep, quant):
    inits = {x.name for x in m.graph.initializer}
    ins = [i for i in m.graph.input if i.name not in inits]
    got = [l.split()[1:] for l in lines if l.startswith("io ")]
    want = []
    for w, vals in (("in", ins), ("out", m.graph.output)):
        for k, v in enumerate(vals):
            t = next(x for x in rep["tensors"] if x["name"] == v.name)
            dims = t["shape"]
            row = [w, str(k), str(rep["tensors"].index(t)),
                   str(v.type.tensor_type.elem_type), str(len(dims)),
                   ",".join(map(str, dims)) or "-", str(t["bytes"])]
            if v.name in quant:
                s, z = quant[v.name]
                row += ["%.9g" % np.float32(s), str(z)]
            want.append(row)
    T.check("%s: positional I/O macros" % label, got == want,
            (got[:2], want[:2]))


# The int8 CNN: QLinearConv per channel, QLinearMatMul, defaults.
cnn = "testdata/quant_cnn_int8.onnx"
r = check_model("quant_cnn_int8", cnn, ["--dim-default", "1"])
if r:
    check_requant("quant_cnn_int8", r[0], r[2], True)
    check_io("quant_cnn_int8", r[0], r[2], r[1], {})

# Quantised graph input and output, a per-tensor weight scale.
n = helper.make_node
qio = os.path.join(tmp, "qio.onnx")
g = helper.make_graph(
    [n("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"],
       name="conv", strides=[2, 2]),
     n("DequantizeLinear", ["y", "ys", "yz"], ["yf"], name="dq"),
     n("Relu", ["yf"], ["r"], name="relu"),
     n("QuantizeLinear", ["r", "os", "oz"], ["o"], name="q")], "qio",
    [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4, 9, 9])],
    [helper.make_tensor_value_info("o", TensorProto.INT8, [1, 6, 4, 4])],
    [numpy_helper.from_array(np.array(v, dt), nm) for nm, v, dt in [
        ("xs", 0.0123, np.float32), ("xz", 128, np.uint8),
        ("w", np.arange(6 * 4 * 3 * 3).reshape(6, 4, 3, 3) % 7 - 3, np.int8),
        ("ws", 0.0071, np.float32), ("wz", 0, np.int8),
        ("ys", 0.0457, np.float32), ("yz", 7, np.uint8),
        ("os", 0.01, np.float32), ("oz", -3, np.int8)]])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), qio)
r = check_model("qio", qio, [])
if r:
    check_requant("qio", r[0], r[2], True)
    check_io("qio", r[0], r[2], r[1], {"x": (0.0123, 128), "o": (0.01, -3)})

# com.microsoft's QLinearAdd (three pairs) and QLinearMul (one), as
# onnxruntime's quantizer writes them.
qam = os.path.join(tmp, "qaddmul.onnx")
g = helper.make_graph(
    [n("QLinearAdd", ["x", "xs", "xz", "b", "bs", "bz", "ys", "yz"], ["y"],
       name="add", domain="com.microsoft"),
     n("QLinearMul", ["y", "ys", "yz", "c", "cs", "cz", "os", "oz"], ["o"],
       name="mul", domain="com.microsoft")], "qaddmul",
    [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4, 5, 5])],
    [helper.make_tensor_value_info("o", TensorProto.UINT8, [1, 4, 5, 5])],
    [numpy_helper.from_array(np.array(v, dt), nm) for nm, v, dt in [
        ("xs", 0.0123, np.float32), ("xz", 128, np.uint8),
        ("b", np.arange(100).reshape(1, 4, 5, 5) % 251, np.uint8),
        ("bs", 0.0371, np.float32), ("bz", 3, np.uint8),
        ("ys", 0.0457, np.float32), ("yz", 7, np.uint8),
        ("c", np.arange(100).reshape(1, 4, 5, 5) % 13, np.uint8),
        ("cs", 0.0029, np.float32), ("cz", 5, np.uint8),
        ("os", 0.01, np.float32), ("oz", 9, np.uint8)]])
save(helper.make_model(g, opset_imports=[
    helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]),
    qam)
r = check_model("qlinear add, mul", qam, [])
if r:
    check_requant("qlinear add, mul", r[0], r[2], True)

models = os.path.join(SHARED, "models")
if os.path.isdir(models):
    for stem, opts in [("ch_ppocr_mobile_v2.0_cls_infer", ["--dim-default",
                                                          "1", "--input-shape",
                                                          "x=1x3x48x192"]),
                       ("light_inception_v1", ["--dim-default", "1"]),
                       ("ch_PP-OCRv4_det_infer", ["--input-shape",
                                                  "x=1x3x96x160"]),
                       ("yolox_nano", []),
                       ("magika_standard_v3_3", ["--dim-default", "1"]),
                       ("yolov8n_int8", [])]:
        path = os.path.join(models, stem + ".onnx")
        r = check_model(stem, path, opts)
        if r and stem == "yolov8n_int8":
            # ConvInteger after DynamicQuantizeLinear: the input's scale
            # is computed at run time, so there is nothing to precompute.
            check_requant(stem, r[0], r[2], False)
        if r:
            check_io(stem, r[0], r[2], r[1], {})
else:
    print("skipped: shared models (no %s)" % models)

# --kernel-scratch: CMSIS-NN's im2col buffer, 2 * align4(C_in kH kW)
# int16s (arm_convolve_s8_get_buffer_size without MVE).
ks = os.path.join(tmp, "cmsis.txt")
with open(ks, "w") as f:
    f.write("# CMSIS-NN arm_convolve_s8_get_buffer_size\n"
            "QLinearConv: 4 * ((C_in * kH * kW + 3) / 4 * 4)\n")
lines, rep = read(cnn, ["--dim-default", "1", "--kernel-scratch", ks], "ks")
if T.check("--kernel-scratch plans", lines is not None, rep):
    m = load(cnn)
    want, got = [], []
    for st in rep["steps"]:
        if st["op"] == "QLinearConv":
            w = initializer(m, next(x for x in m.graph.node
                                    if (x.name or "") == "" and
                                    x.output[0] == st["outputs"][0]).input[3])
            cols = w.shape[1] * w.shape[2] * w.shape[3]
            want.append(2 * ((cols + 3) // 4 * 4) * 2)
            got.append(st.get("scratch_bytes"))
    hdr = [int(l.split()[5]) for l in lines if l.startswith("step ") and
           l.split()[2] == "QLinearConv"]
    T.check("--kernel-scratch: QLinearConv workspaces %s are CMSIS-NN's %s"
            % (got, want), got == want == hdr and want, hdr)
    # Planned channels-last, the same line covers the QLinearConv variant
    # (CMSIS-NN's kernels are channels-last) and C_in, kH, kW are read
    # from [N, H, W, C] and the OHWI filter: the same workspaces.
    js = os.path.join(tmp, "ks_nhwc.json")
    rc, err = run(["--dim-default", "1", "--layout", "nhwc",
                   "--kernel-scratch", ks, "--json", js, "-o",
                   os.path.join(tmp, "ks_nhwc.h"), cnn])
    cl = []
    if rc == 0:
        with open(js) as f:
            cl = [st.get("scratch_bytes") for st in json.load(f)["steps"]
                  if st["op"] == "QLinearConv"]
    T.check("--kernel-scratch with --layout nhwc: workspaces %s, as NCHW's"
            % cl, rc == 0 and cl == want, err)
for text, code, what in [("Conv 12\n", 1, "no colon"),
                         ("Conv: C_in * nope\n", 1, "unknown name"),
                         ("QLinearMatMul: H_in * 2\n", 2, "a dim it lacks")]:
    with open(ks, "w") as f:
        f.write(text)
    rc, err = run(["--dim-default", "1", "--kernel-scratch", ks, "-o",
                   os.path.join(tmp, "x.h"), cnn])
    T.check("--kernel-scratch %s: exit %d" % (what, code),
            rc == code and "error: " in err and "line 1" in err, (rc, err))

# --strip-names: no name in the tables; the flash it saves on the target.
lines, rep = read(cnn, ["--dim-default", "1", "--strip-names"], "strip")
# The graph's inputs and outputs keep theirs (kinds 0 and 1).
T.check("--strip-names: tables without names but the graph's inputs' and "
        "outputs'", lines is not None and
        sorted(l for l in lines if l.startswith("named")) ==
        ["named 0", "named 1"] and
        all(l.split()[4] == "-" for l in lines if l.startswith("step ")),
        rep)
armcc = subprocess.run(["sh", "-c", "command -v arm-none-eabi-gcc"],
                       capture_output=True).returncode == 0
big = os.path.join(models, "ch_PP-OCRv4_det_infer.onnx")
if armcc and os.path.exists(big):
    sizes = []
    for extra in ([], ["--strip-names"]):
        h = os.path.join(tmp, "t.h")
        run(["--input-shape", "x=1x3x96x160", "--prefix", "hc", "-o", h,
             big] + extra)
        c = os.path.join(tmp, "t.c")
        with open(c, "w") as f:
            f.write('#define HC_DEFINE_TABLES\n#include "t.h"\n')
        o = os.path.join(tmp, "t.o")
        subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb",
                        "-Os", "-c", c, "-o", o], check=True)
        out = subprocess.run(["arm-none-eabi-size", o], capture_output=True,
                             text=True).stdout.splitlines()[1].split()
        sizes.append(int(out[0]) + int(out[1]))
    T.check("--strip-names: PP-OCRv4 det's tables %d -> %d bytes of flash "
            "(arm-none-eabi-size), %d saved" % (sizes[0], sizes[1],
                                               sizes[0] - sizes[1]),
            sizes[1] < sizes[0])
else:
    print("skipped: --strip-names flash (no arm-none-eabi-gcc or shared "
          "model)")

# On the Cortex-M4 (scripts/firmware.sh, as e2e_firmware): the int8 CNN
# planned with both, tables without names and CMSIS-NN's workspaces, runs
# and matches the host runtime.  Its own name keeps its build folder
# apart from e2e_firmware's.
tools = all(subprocess.run(["sh", "-c", "command -v " + t],
                           capture_output=True).returncode == 0
            for t in ("arm-none-eabi-gcc", "qemu-system-arm"))
build = os.environ.get("BUILD", "build")
if os.environ.get("ARENAC_SANITIZE"):
    # As e2e_firmware: the target build is not instrumented.
    print("skipped: the Cortex-M4 run under the sanitizers")
elif tools and os.path.exists(os.path.join(build, "host_io")):
    with open(ks, "w") as f:
        f.write("QLinearConv: 4 * ((C_in * kH * kW + 3) / 4 * 4)\n")
    m = os.path.join(tmp, "qcnn_kernels.onnx")
    shutil.copy(cnn, m)
    r = subprocess.run(["sh", "scripts/firmware.sh", build, m,
                        "--dim-default 1 --strip-names --kernel-scratch " + ks,
                        "", "host"], capture_output=True, text=True)
    T.check("the int8 CNN with --strip-names --kernel-scratch runs on the "
            "Cortex-M4 and matches", r.returncode == 0,
            (r.stdout + r.stderr)[-400:])
else:
    print("skipped: the Cortex-M4 run (no arm-none-eabi-gcc, "
          "qemu-system-arm or %s/host_io)" % build)

# PREFIX_ARENA_SIZE with one memory, bindable; none with two.
lenet = "testdata/lenet.onnx"
lines, rep = read(lenet, ["--dim", "N=1", "--memory", "sram:384K"], "one")
ok = lines is not None and ("arena_size %d" % rep["regions"][0]["used_bytes"]
                            ) in lines
bind = os.path.join(tmp, "bind.c")
with open(bind, "w") as f:
    f.write('#define HC_DEFINE_TABLES\n#include "m.h"\n'
            '#include "arenac_rt.h"\nARENAC_RT_BIND(hc, HC)\n'
            'const art_model *get(void);\n'
            'const art_model *get(void) { return hc_rt_model(); }\n')
r = subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-I", tmp,
                    "-I", "runtime", "-c", bind, "-o", bind + ".o"],
                   capture_output=True, text=True)
T.check("--memory sram:384K: PREFIX_ARENA_SIZE is the region's, "
        "ARENAC_RT_BIND builds", ok and r.returncode == 0, r.stderr[-300:])
lines, rep = read(lenet, ["--dim", "N=1", "--memory", "sram:16K",
                          "--memory", "dram:8M"], "two")
T.check("two memories: no one PREFIX_ARENA_SIZE", lines is not None and
        not any(l.startswith("arena_size") for l in lines), rep)

sys.exit(T.summary())
