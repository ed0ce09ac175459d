#!/usr/bin/env python3
"""e2e_dynquant.py - the dynamically quantised YOLOv8n (shared/models/
yolov8n_int8.onnx: 59 DynamicQuantizeLinear, 64 ConvInteger, Cast, Mul,
SiLU as Sigmoid * x, a DFL head with Softmax) in the reference runtime,
against the ONNX specification and against onnxruntime.

Why two references.  The runtime's output differs from onnxruntime's
reference output by up to 17 in the box rows (24,078 of 705,600 values
outside rtol 1e-3): issue 29 took that for an error in how the chain
composes.  It is not one.  Written out in numpy straight from the
operator specs (below: DynamicQuantizeLinear's min/max with 0, scale
(max - min) / 255, zero point and values rounded half to even and
saturated; ConvInteger exact in integers; float32 everywhere else), the
model gives the runtime's output bit for bit.  And the model is
discontinuous by construction: every DynamicQuantizeLinear rounds, so a
change of one unit in the last place of any float upstream can move an
activation by one quantisation step, and the next layer's scale with it.
Computing each Sigmoid one ulp up or down (a legitimate float32 result:
onnxruntime's MLAS uses an approximation of the logistic function)
moves the output as far from the spec's as onnxruntime is.

So the test asserts:
  spec     runtime == numpy spec evaluation, within 1e-6 of the output's
           scale (bit-exact today);
  ort      the runtime's distance to onnxruntime's output (its 99.9th
           percentile and the count of values outside rtol 1e-3 / atol
           1e-3 within 1.25x, its largest difference within 1.5x) is no
           more than the spec's own spread: the largest distance among
           the spec evaluation and the two with every Sigmoid one ulp up
           and one ulp down (today 3.28 against 3.58, 24,078 against
           24,261, 17.2 against 15.4); the class-score rows agree within
           1e-3 throughout, only the DFL box rows move.
A composition error breaks the first: rounding half away from zero in
the runtime's quantiser (roundf for rintf, kernels_quant.c) moves the
output by 18.5 from the spec's, while onnxruntime's distance stays
inside the spread (17.8, 24,008 outside): onnxruntime's output cannot
tell a wrong runtime from a right one here, the spec can.

Skips when numpy/onnx or the shared model is missing, and under the
sanitizers (the 8.7 G integer operations take minutes there).
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(0)

ARENAC = os.environ.get("ARENAC", "build/arenac")
BUILD = os.environ.get("BUILD", "build")
CC = os.environ.get("CC", "cc").split()
M = os.path.join(os.environ.get("ARENAC_SHARED") or "../shared", "models")
STEM = os.path.join(M, "yolov8n_int8")


def tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def dql(x):
    """DynamicQuantizeLinear as its spec writes it, in float32."""
    x = x.astype(np.float32)
    lo = np.float32(min(0.0, x.min()))
    hi = np.float32(max(0.0, x.max()))
    s = np.float32((hi - lo) / np.float32(255))
    zp = np.float32(np.clip(np.round(np.float32(0) - lo / s), 0, 255))
    q = np.clip(np.round(x / s) + zp, 0, 255).astype(np.uint8)
    return q, np.array(s, np.float32), np.array(zp, np.uint8)


def conv_integer(x, w, xz, wz, a):
    """ConvInteger, exact: the int32 sums held in float64 (below 2^53)."""
    x = x.astype(np.float64) - float(xz)
    wz = np.asarray(wz, np.float64)
    w = w.astype(np.float64) - (wz.reshape(-1, 1, 1, 1) if wz.ndim else wz)
    n, _, _, _ = x.shape
    o, cg, kh, kw = w.shape
    g = a.get("group", 1)
    p = a.get("pads", [0, 0, 0, 0])
    s = a.get("strides", [1, 1])
    d = a.get("dilations", [1, 1])
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    oh = (x.shape[2] - (d[0] * (kh - 1) + 1)) // s[0] + 1
    ow = (x.shape[3] - (d[1] * (kw - 1) + 1)) // s[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // g
    for gi in range(g):
        xs = x[:, gi * cg:(gi + 1) * cg]
        cols = np.empty((n, cg, kh, kw, oh, ow))
        for i in range(kh):
            for j in range(kw):
                cols[:, :, i, j] = xs[:, :, i * d[0]:i * d[0] + s[0] * oh:s[0],
                                      j * d[1]:j * d[1] + s[1] * ow:s[1]]
        wg = w[gi * og:(gi + 1) * og].reshape(og, -1)
        out[:, gi * og:(gi + 1) * og] = np.einsum(
            "ok,nkhw->nohw", wg, cols.reshape(n, -1, oh, ow))
    return out.astype(np.int32)


def max_pool(x, a):
    k, p, s = a["kernel_shape"], a.get("pads", [0] * 4), a.get("strides",
                                                            [1, 1])
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])),
               constant_values=-np.inf)
    oh = (x.shape[2] - k[0]) // s[0] + 1
    ow = (x.shape[3] - k[1]) // s[1] + 1
    y = np.full(x.shape[:2] + (oh, ow), -np.inf, np.float32)
    for u in range(k[0]):
        for v in range(k[1]):
            y = np.maximum(y, x[:, :, u:u + s[0] * oh:s[0],
                                v:v + s[1] * ow:s[1]])
    return y


def evaluate(model, image, ulp=0):
    """The model's output as the operator specs define it; ulp moves
    every Sigmoid's float32 result that many units in the last place."""
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env["images"] = image
    for n in model.graph.node:
        a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        i = [env.get(x) if x else None for x in n.input]
        op = n.op_type
        if op == "DynamicQuantizeLinear":
            o = dql(i[0])
        elif op in ("Mul", "Add", "Sub", "Div"):
            f = {"Mul": np.multiply, "Add": np.add, "Sub": np.subtract,
                 "Div": np.divide}[op]
            o = (f(i[0], i[1]),)
        elif op == "Reshape":
            o = (i[0].reshape([d if d else i[0].shape[k]
                               for k, d in enumerate(i[1])]),)
        elif op == "ConvInteger":
            o = (conv_integer(i[0], i[1], i[2], i[3], a),)
        elif op == "Cast":
            assert a["to"] == onnx.TensorProto.FLOAT
            o = (i[0].astype(np.float32),)
        elif op == "Sigmoid":
            y = (1 / (1 + np.exp(-i[0].astype(np.float64)))).astype(
                np.float32)
            if ulp:
                y = np.nextafter(y, np.float32(np.inf if ulp > 0 else
                                               -np.inf))
            o = (y,)
        elif op == "Concat":
            o = (np.concatenate(i, axis=a["axis"]),)
        elif op == "Split":
            o = tuple(np.split(i[0], np.cumsum(i[1])[:-1], axis=a["axis"]))
        elif op == "MaxPool":
            o = (max_pool(i[0], a),)
        elif op == "Resize":
            # nearest, asymmetric, floor, integer scales: a repeat
            assert a["mode"] == b"nearest" and \
                a["coordinate_transformation_mode"] == b"asymmetric"
            sc = i[2].astype(int)
            o = (i[0].repeat(sc[2], axis=2).repeat(sc[3], axis=3),)
        elif op == "Slice":
            sl = [slice(None)] * i[0].ndim
            for b, e, x in zip(i[1], i[2], i[3]):
                sl[x] = slice(b, e)
            o = (i[0][tuple(sl)],)
        elif op == "Transpose":
            o = (np.transpose(i[0], a["perm"]),)
        elif op == "Softmax":
            x = i[0].astype(np.float64)
            x = np.exp(x - x.max(axis=a["axis"], keepdims=True))
            o = ((x / x.sum(axis=a["axis"], keepdims=True)).astype(
                np.float32),)
        else:
            raise KeyError("no numpy rule for " + op)
        for name, v in zip(n.output, o):
            env[name] = v
    return env[model.graph.output[0].name].astype(np.float64)


def runtime(tmp, model_path):
    h = os.path.join(tmp, "y.h")
    w = os.path.join(tmp, "y.bin")
    exe = os.path.join(tmp, "rt_y")
    out = os.path.join(tmp, "y.out")
    subprocess.run([ARENAC, "-q", "--prefix", "y", "-o", h, "--weights", w,
                    model_path], check=True)
    subprocess.run(CC + ["-std=c11", "-O2", "-D_POSIX_C_SOURCE=200809L",
                         "-Iruntime", "-Itests", "-I" + BUILD + "/gen",
                         "-I" + tmp, '-DARENAC_HEADER="y.h"', "-DLO=y",
                         "-DUP=Y", "-DY_DEFINE_ARENA", "-DY_DEFINE_TABLES",
                         "-o", exe, "tests/rt_run.c",
                         BUILD + "/obj/tests/pbread.o",
                         BUILD + "/obj/gen/onnx.pb-c.o",
                         BUILD + "/libarenac_rt.a", "-lprotobuf-c", "-lm"],
                   check=True)
    subprocess.run([exe, "--input", STEM + "_input_0.pb", "--dump", out, w],
                   check=True, stdout=subprocess.DEVNULL)
    return np.fromfile(out, np.float32).astype(np.float64)


def distance(a, b):
    """Largest difference, 99.9th percentile, values outside rtol 1e-3 /
    atol 1e-3."""
    d = np.abs(a - b)
    return (d.max(), np.percentile(d, 99.9),
            int((d > 1e-3 * np.abs(b) + 1e-3).sum()))


def main():
    if os.environ.get("ARENAC_SANITIZE"):
        print("skipped: the dynamically quantised YOLOv8n under the "
              "sanitizers (minutes)")
        return 0
    if not os.path.exists(STEM + ".onnx"):
        print("skipped: no shared model yolov8n_int8.onnx")
        return 0
    fails = 0
    model = onnx.load(STEM + ".onnx")
    image = tensor(STEM + "_input_0.pb")
    ort = tensor(STEM + "_output_0.pb").reshape(-1).astype(np.float64)
    spec = evaluate(model, image).reshape(-1)
    with tempfile.TemporaryDirectory() as tmp:
        got = runtime(tmp, STEM + ".onnx")
    scale = np.abs(spec).max()
    d_spec = np.abs(got - spec).max()
    ok = got.shape == spec.shape and d_spec <= 1e-6 * scale
    fails += not ok
    print("%s spec: runtime against the numpy spec evaluation: max abs "
          "diff %.3g (scale %.3g)" % ("ok  " if ok else "FAIL", d_spec,
                                      scale))
    up = evaluate(model, image, 1).reshape(-1)
    down = evaluate(model, image, -1).reshape(-1)
    env = np.max([distance(spec, up), distance(spec, down),
                  distance(up, down)], axis=0)
    dist = distance(got, ort)
    ok = dist[0] <= 1.5 * env[0] and dist[1] <= 1.25 * env[1] and \
        dist[2] <= 1.25 * env[2]
    fails += not ok
    print("%s ort: runtime against onnxruntime: max abs diff %.3g, 99.9th "
          "percentile %.3g, %d of %d outside; the spec's own spread (spec, "
          "Sigmoid one ulp up, one down): %.3g, %.3g, %d" % (
              "ok  " if ok else "FAIL", dist[0], dist[1], dist[2], len(ort),
              env[0], env[1], env[2]))
    rows = got.reshape(84, -1)
    d_scores = np.abs(rows[4:] - ort.reshape(84, -1)[4:]).max()
    ok = d_scores <= 1e-3
    fails += not ok
    print("%s ort: class scores (rows 4-83) within 1e-3: max abs diff %.3g"
          % ("ok  " if ok else "FAIL", d_scores))
    print("%d failures" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
