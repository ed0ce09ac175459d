#!/usr/bin/env python3
"""e2e_nhwc.py - --layout nhwc (issue 29 item 5): 4-D activations planned
channels-last, as CMSIS-NN and TFLite Micro kernels keep them, run in the
reference runtime and compared with outside truth:

- lenet (numpy's logits), PaddleOCR's classifier and text detector (real
  weights, onnxruntime's outputs, rtol 1e-3 atol 1e-5; the detector's
  Resize steps channels-last, its scales permuted, its ConvTranspose
  steps in the model's layout), YOLOX-nano (onnxruntime's output, atol
  1e-4 as the models' README says) and light_squeezenet (the ONNX suite's output),
  each from an arena of random bytes; the int8 CNN's output equal byte
  for byte to its NCHW plan's (integer sums, the same float pooling
  order);
- the plan: Conv and the pools in the channels-last domain, their
  outputs [N,H,W,C] in the JSON and in the header's dims table, the
  graph's inputs and outputs as the model declares them (PREFIX_INPUT_0
  _SHAPE), PREFIX_LAYOUT_NHWC and JSON "layout" only with the option;
- a generated model (python3-onnx): Add and Mul by per-channel constants
  of distinct values permuted and kept channels-last, a 4-D graph
  output, both outputs equal to the NCHW plan's; its channel concat of
  8x8 maps copied in NHWC, the one of 1x1 maps elided in both layouts;
- filters: every channels-last convolution's filter in TFLite's layout
  (OHWI, depthwise [1,kH,kW,M]) in the JSON and header, one filter per
  model in the weights file equal to the ONNX initializer transposed by
  numpy; a generated model's filter shared by two convolutions (permuted
  once), a depthwise one with a multiplier, one also read channels-first
  (a permuted copy), its outputs equal to the NCHW plan's;
- concats: squeezenet's fire modules concatenate channels of 13x13 to
  55x55 maps, contiguous slices in NCHW (all 8 elided) and not in NHWC
  (all 8 copies, the output still right);
- (the int8 CNN planned channels-last on the emulated Cortex-M4 is in
  e2e_firmware.sh, which builds the target runtime first);
- bad input: --layout foo and --layout nhwc with --train or --fuse preact
  exit 1; a model without 4-D activations plans as without the option,
  with one warning.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from tally import ARENAC, ROOT, SHARED, Tally

BUILD = os.environ.get("BUILD") or os.path.join(ROOT, "build")
CC = shlex.split(os.environ.get("CC") or "cc")
RT_LIB = os.path.join(BUILD, "libarenac_rt.a")
PB_OBJS = [os.path.join(BUILD, "obj", "tests", "pbread.o"),
           os.path.join(BUILD, "obj", "gen", "onnx.pb-c.o")]
M = os.path.join(SHARED, "models")
NHWC = "com.ms.internal.nhwc"

t = Tally("e2e_nhwc")
if not all(os.path.exists(p) for p in [RT_LIB] + PB_OBJS):
    print("skipped: %s not built (run make test-runtime)" % RT_LIB)
    sys.exit(t.summary())
tmp = tempfile.mkdtemp()


def arenac(*args):
    return subprocess.run([ARENAC] + list(args), capture_output=True,
                          text=True)


def build(name, model, opts):
    """Plans model into name.h, name.bin, name.json and builds its
    runner; the JSON report, or None after a FAIL line."""
    base = os.path.join(tmp, name)
    r = arenac("-q", "--prefix", name, "-o", base + ".h", "--weights",
               base + ".bin", "--json", base + ".json", *opts, model)
    if r.returncode:
        t.check("%s: plans" % name, False, r.stderr.strip()[:400])
        return None
    up = name.upper()
    cmd = CC + ["-std=c11", "-O1", "-D_POSIX_C_SOURCE=200809L",
           "-I" + os.path.join(ROOT, "runtime"),
           "-I" + os.path.join(ROOT, "tests"),
           "-I" + os.path.join(BUILD, "gen"), "-I" + tmp,
           '-DARENAC_HEADER="%s.h"' % name, "-DLO=" + name, "-DUP=" + up,
           "-D%s_DEFINE_ARENA" % up, "-D%s_DEFINE_TABLES" % up,
           "-o", base + ".rt", os.path.join(ROOT, "tests", "rt_run.c")]
    cmd += PB_OBJS + [RT_LIB, "-lprotobuf-c", "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        t.check("%s: runner builds" % name, False, r.stderr[:400])
        return None
    return json.load(open(base + ".json"))


def header_dims(name):
    """Each tensor's dims as the header's tables list them."""
    h = open(os.path.join(tmp, name + ".h")).read()
    m = re.search(r"%s_dims\[\] = \{([^}]*)\}" % name, h)
    dims = [int(v) for v in m.group(1).replace("\n", " ").split(",")
            if v.strip()] if m else []
    out = {}
    for nm, rank, off in re.findall(
            r'/\* \d+ \*/ \{"([^"]*)", \w+, \w+, (\d+), %s_dims \+ (\d+)'
            % name, h):
        out[nm] = dims[int(off):int(off) + int(rank)]
    return out


def check_plan(name, j, ref_json):
    """Channels-last steps, NHWC shapes in JSON and header, the model's
    I/O, the layout stated."""
    tensors = {x["name"]: x for x in j["tensors"]}
    convs = [s for s in j["steps"]
             if s.get("domain") == NHWC and s["op"] in ("Conv",
                                                        "QLinearConv")]
    wi = 3 if convs and convs[0]["op"] == "QLinearConv" else 1
    t.check("%s: %d convolutions channels-last" % (name, len(convs)),
            convs and not any(s["op"] in ("Conv", "QLinearConv") and
                              "domain" not in s for s in j["steps"]))
    hd = header_dims(name)
    # Each filter in TFLite's layout: the NCHW plan's [M,C/g,kH,kW] as
    # OHWI [M,kH,kW,C/g], or [1,kH,kW,M] when depthwise (C/g 1, C > 1).
    ref = {x["name"]: x["shape"] for x in ref_json["tensors"]}
    wrong, filters = [], []
    for s in convs:
        w, c = s["inputs"][wi], tensors[s["inputs"][0]]["shape"][3]
        # An initializer keeps its name; a Constant node's value
        # (paddle2onnx's weights) is a new constant.
        o = ref.get(re.sub("_tflite$", "", w))
        want = None if o is None else \
            [1, o[2], o[3], o[0]] if o[1] == 1 and c > 1 else \
            [o[0], o[2], o[3], o[1]]
        filters.append((w, o, tensors[w]["shape"]))
        if tensors[w]["shape"] != want or \
                tensors[s["outputs"][0]]["shape"][3] != o[0]:
            wrong.append((w, o, tensors[w]["shape"], want))
    t.check("%s: each filter as TFLite reads it, [M,kH,kW,C/g] (%d) or "
            "depthwise [1,kH,kW,M] (%d), and folded (the model's "
            "initializer, no Transpose step)" %
            (name, sum(f[2][0] != 1 or f[1][0] == 1 for f in filters),
             sum(f[2][0] == 1 and f[1][0] != 1 for f in filters)),
            convs and not wrong and
            not any(s["op"] == "Transpose" and
                    s["inputs"][0] in ref and
                    ref_kind(ref_json, s["inputs"][0]) in ("weight",
                                                           "constant")
                    for s in j["steps"]), wrong[:3])
    differ = [n for n, x in tensors.items()
              if n in hd and x.get("shape") is not None and
              hd[n] != x["shape"]]
    t.check("%s: the header's dims are the JSON's (%d tensors)" %
            (name, len(hd)), hd and not differ, differ[:3])
    for k in ("inputs", "outputs"):
        mine = [(x, tensors[x]["shape"]) for x in j[k]]
        ref = {x["name"]: x["shape"] for x in ref_json["tensors"]}
        theirs = [(x, ref[x]) for x in ref_json[k]]
        t.check("%s: graph %s as the model declares them" % (name, k),
                mine == theirs, "%s against %s" % (mine, theirs))
    h = open(os.path.join(tmp, name + ".h")).read()
    shape = re.search(r"#define %s_INPUT_0_SHAPE \{([^}]*)\}" %
                      name.upper(), h)
    decl = [x["shape"] for x in ref_json["tensors"]
            if x["name"] == ref_json["inputs"][0]][0]
    t.check("%s: %s_INPUT_0_SHAPE is the declared %s" %
            (name, name.upper(), decl),
            shape and [int(v) for v in shape.group(1).split(",")] == decl,
            shape.group(0) if shape else "no macro")
    t.check("%s: %s_LAYOUT_NHWC 1, %s_WEIGHTS_LAYOUT_OHWI 1 and JSON "
            "layout nhwc, weights_layout ohwi" %
            (name, name.upper(), name.upper()),
            "#define %s_LAYOUT_NHWC 1" % name.upper() in h and
            "#define %s_WEIGHTS_LAYOUT_OHWI 1" % name.upper() in h and
            j.get("layout") == "nhwc" and j.get("weights_layout") == "ohwi")
    check_filter_bytes(name, filters)


def ref_kind(ref_json, n):
    return [x["kind"] for x in ref_json["tensors"] if x["name"] == n][0]


def weights_offsets(name):
    """Each tensor's weights_offset as the header's table gives it."""
    h = open(os.path.join(tmp, name + ".h")).read()
    return {m[0]: int(m[1]) for m in re.findall(
        r'/\* \d+ \*/ \{"([^"]*)",(?: [^,]+,){11} (\d+)u, \d+u', h)}


def check_filter_bytes(name, filters):
    """The last filter (and the first depthwise one) in the weights file
    at the header's offset: the ONNX initializer's bytes permuted by
    numpy as TFLite's layout is."""
    try:
        import numpy as np
        import onnx
        from onnx import numpy_helper
    except ImportError:
        print("skipped: python3-onnx or numpy missing (filter bytes)")
        return
    model = onnx.load(MODELS[name])
    inits = {i.name: numpy_helper.to_array(i)
             for i in model.graph.initializer}
    inits.update({n.output[0] + "_tflite": numpy_helper.to_array(a.t)
                  for n in model.graph.node if n.op_type == "Constant"
                  for a in n.attribute if a.name == "value"})
    offs = weights_offsets(name)
    blob = open(os.path.join(tmp, name + ".bin"), "rb").read()
    # light_squeezenet's filters are ConstantOfShape fills, no values.
    filters = [f for f in filters if f[0] in inits]
    if not filters:
        print("  %s: no filter values to compare (ConstantOfShape fills)"
              % name)
        return
    picks = filters[-1:] + [f for f in filters if f[2][0] == 1 and
                            f[1][0] != 1 and f != filters[-1]][:1]
    for w, onnx_shape, shape in picks:
        if onnx_shape is None or w not in offs:
            t.check("%s: filter %s in the model and the header" % (name, w),
                    False, "initializer %s, offset %s" %
                    (w in inits, offs.get(w)))
            continue
        a = inits[w]
        a = a.transpose(1, 2, 3, 0) if shape[0] == 1 and a.shape[0] != 1 \
            else a.transpose(0, 2, 3, 1)
        want = np.ascontiguousarray(a).tobytes()
        got = blob[offs[w]:offs[w] + len(want)]
        t.check("%s: filter %s %s in the weights file is the initializer "
                "%s transposed by numpy (%d bytes)" %
                (name, w, shape, list(onnx_shape), len(want)),
                got == want and list(a.shape) == shape)


MODELS = {}


def model_case(name, model, opts):
    """name (NHWC) and name + "c" (the model's layout) planned and built;
    their JSON reports, after the plan checks."""
    MODELS[name] = model
    ref_json = build(name + "c", model, opts)
    j = build(name, model, opts + ["--layout", "nhwc"])
    if not j or not ref_json:
        return None, None
    h = open(os.path.join(tmp, name + "c.h")).read()
    t.check("%s: no layout macro nor JSON layout without the option" %
            name, "LAYOUT_NHWC" not in h and "layout" not in ref_json)
    check_plan(name, j, ref_json)
    return j, ref_json


def compare(name, ref, runargs):
    """The NHWC plan's run against a reference output file."""
    base = os.path.join(tmp, name)
    r = subprocess.run([base + ".rt", "--fill", "random"] + runargs +
                       [base + ".bin", ref], capture_output=True, text=True)
    lines = (r.stdout + r.stderr).strip().splitlines()
    t.check("%s: runs channels-last, outputs match (%s)" %
            (name, lines[-1] if lines else ""), r.returncode == 0,
            "\n".join(lines[-3:]))


def dump(name):
    base = os.path.join(tmp, name)
    r = subprocess.run([base + ".rt", "--fill", "random", "--dump",
                        base + ".out", base + ".bin"], capture_output=True,
                       text=True)
    return open(base + ".out", "rb").read() if not r.returncode else None


def ocr_dims(pb):
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    try:
        import onnx
    except ImportError:
        return None
    x = onnx.TensorProto()
    x.ParseFromString(open(pb, "rb").read())
    d = [x.dims[0], x.dims[2], x.dims[3]]
    return sum([["--dim", "p2o.DynamicDimension.%d=%d" % (i, v)]
                for i, v in enumerate(d)], [])


print("lenet")
j, rj = model_case("lenet", os.path.join(ROOT, "testdata", "lenet.onnx"),
                   ["--dim", "N=1"])
if j:
    compare("lenet", os.path.join(ROOT, "testdata", "lenet_output_0.pb"),
            ["--rtol", "1e-4", "--atol", "1e-6"])
    # A one-channel image: its move to channels-last is a view.
    first = j["steps"][0]
    t.check("lenet: the 1-channel input is made channels-last by a "
            "Reshape view, not a copy", first["op"] == "Reshape" and
            first["noop"], first)

print("quant_cnn_int8")
q = os.path.join(ROOT, "testdata", "quant_cnn_int8.onnx")
j, rj = model_case("qcnn", q, ["--dim-default", "1"])
if j:
    ops = {(s["op"], s.get("domain", "")) for s in j["steps"]}
    t.check("qcnn: QLinearConv, MaxPool, GlobalAveragePool channels-last",
            {("QLinearConv", NHWC), ("MaxPool", NHWC),
             ("GlobalAveragePool", NHWC)} <= ops, sorted(ops))
    a, b = dump("qcnnc"), dump("qcnn")
    t.check("qcnn: NHWC logits equal the NCHW plan's, byte for byte",
            a is not None and a == b, "%r / %r" % (a, b))

for stem, note in (("ch_ppocr_mobile_v2.0_cls_infer", "classifier"),
                   ("ch_PP-OCRv4_det_infer", "detector")):
    path = os.path.join(M, stem)
    print("PaddleOCR %s" % note)
    if not os.path.exists(path + ".onnx"):
        print("skipped: no %s.onnx" % path)
        continue
    dims = ocr_dims(path + "_input_0.pb")
    if dims is None:
        print("skipped: python3-onnx missing (the input's dims)")
        continue
    name = "cls" if note == "classifier" else "det"
    j, rj = model_case(name, path + ".onnx", dims)
    if j:
        compare(name, path + "_output_0.pb",
                ["--input", path + "_input_0.pb", "--rtol", "1e-3",
                 "--atol", "1e-5"])
    if j and name == "det":
        # Resize follows its input channels-last, its scales permuted:
        # no Transpose around the FPN's upsampling.
        tens = {x["name"]: x for x in j["tensors"]}
        rs = [(tens[s["inputs"][0]]["shape"], tens[s["outputs"][0]]["shape"])
              for s in j["steps"] if s["op"] == "Resize"]
        t.check("det: its %d Resize steps channels-last ([N,H,W,C] to "
                "[N,kH,kW,C])" % len(rs), rs and all(
                    o[3] == i[3] and o[1] > i[1] and
                    o[1] * i[2] == o[2] * i[1] for i, o in rs), rs)
        t.check("det: NHWC arena %d bytes, NCHW %d" % (j["arena_bytes"],
                                                       rj["arena_bytes"]),
                j["arena_bytes"] <= rj["arena_bytes"] * 11 // 10)

print("YOLOX-nano (real weights: SiLU, Resize, Slice, Concat)")
yx = os.path.join(M, "yolox_nano")
if os.path.exists(yx + ".onnx"):
    j, rj = model_case("yx", yx + ".onnx", [])
    if j:
        compare("yx", yx + "_output_0.pb",
                ["--input", yx + "_input_0.pb", "--rtol", "1e-3",
                 "--atol", "1e-4"])
else:
    print("skipped: no %s.onnx" % yx)

print("light_squeezenet (fire modules: channel concats)")
sq = os.path.join(M, "light_squeezenet.onnx")
if os.path.exists(sq):
    j, rj = model_case("sq", sq, [])
    if j:
        compare("sq", os.path.join(M, "light_squeezenet_output_0.pb"), [])

        def concats(x):
            c = [s for s in x["steps"] if s["op"] == "Concat"]
            return len(c), sum(s["noop"] for s in c)
        t.check("sq: NCHW elides its 8 channel concats (contiguous "
                "slices)", concats(rj) == (8, 8), concats(rj))
        t.check("sq: NHWC copies them (a channel slice of a 13x13 or "
                "larger map is strided)", concats(j) == (8, 0), concats(j))
        tens = {x["name"]: x for x in j["tensors"]}
        cat = [s for s in j["steps"] if s["op"] == "Concat"][0]
        t.check("sq: the concats join along the last axis",
                all(tens[i]["shape"][:3] == tens[cat["outputs"][0]]
                    ["shape"][:3] for i in cat["inputs"]),
                [tens[i]["shape"] for i in cat["inputs"]])
        print("  arena: NCHW %d bytes, NHWC %d bytes" %
              (rj["arena_bytes"], j["arena_bytes"]))
else:
    print("skipped: no %s" % sq)

print("mixed: permuted constants, both kinds of concat, a 4-D output")


def same_outputs(name, count, atol):
    """Outputs 0 .. count-1 of NAME's NHWC plan equal its NCHW plan's
    (NAME + "c"), both runs from the same random arena fill."""
    import numpy as np
    for k in range(count):
        outs = []
        for nm in (name + "c", name):
            base = os.path.join(tmp, nm)
            r = subprocess.run([base + ".rt", "--fill", "random",
                                "--output", str(k), "--dump",
                                base + ".out", base + ".bin"],
                               capture_output=True, text=True)
            outs.append(np.fromfile(base + ".out", np.float32)
                        if not r.returncode else None)
        a, b = outs
        t.check("%s: output %d of the NHWC plan is the NCHW plan's"
                % (name, k), a is not None and b is not None and
                a.shape == b.shape and a.size > 0 and
                np.allclose(a, b, rtol=1e-5, atol=atol),
                "%r / %r" % (a, b))


def mixed_model(path):
    """Conv, Add by a [C,1,1] and Mul by a [1,C,1,1] constant of
    distinct values, Relu, a channel Concat of 8x8 maps (strided in
    NHWC) and one of 1x1 maps (contiguous), each slice 64 bytes or more
    (the plan's alignment), Flatten; a 4-D graph output too.  False without python3-onnx or numpy."""
    try:
        import numpy as np
        from onnx import TensorProto, helper, numpy_helper, save
    except ImportError:
        return False
    rng = np.random.default_rng(29)

    def w(name, *shape):
        return numpy_helper.from_array(
            rng.standard_normal(shape).astype(np.float32), name)
    n = helper.make_node
    nodes = [n("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
             n("Add", ["a", "b"], ["ab"]), n("Mul", ["ab", "s"], ["m"]),
             n("Relu", ["m"], ["r"]), n("Conv", ["r", "w2"], ["c"]),
             n("Concat", ["r", "c"], ["cat"], axis=1),
             n("GlobalAveragePool", ["cat"], ["g"]),
             n("GlobalMaxPool", ["r"], ["g2"]),
             n("Concat", ["g", "g2"], ["gg"], axis=-3),
             n("Flatten", ["gg"], ["y"]),
             n("MaxPool", ["cat"], ["y2"], kernel_shape=[2, 2],
               strides=[2, 2])]
    g = helper.make_graph(
        nodes, "mixed",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 20]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT,
                                       [1, 16, 4, 4])],
        [w("w1", 4, 3, 3, 3), w("b", 4, 1, 1), w("s", 1, 4, 1, 1),
         w("w2", 12, 4, 1, 1)])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
         path)
    return True


mixed = os.path.join(tmp, "mixed.onnx")
if not mixed_model(mixed):
    print("skipped: python3-onnx or numpy missing")
else:
    j, rj = model_case("mixed", mixed, [])
    if j:
        same_outputs("mixed", 2, 1e-6)
        cats = [s for s in j["steps"] if s["op"] == "Concat"]
        tens = {x["name"]: x for x in j["tensors"]}
        rcats = [s["noop"] for s in rj["steps"] if s["op"] == "Concat"]
        t.check("mixed: both channel concats elided in NCHW", rcats ==
                [True, True], rcats)
        t.check("mixed: in NHWC the 8x8 channel concat is a copy, the "
                "1x1 one elided (contiguous channels-last)",
                [s["noop"] for s in cats] == [False, True],
                [(s["outputs"], s["noop"]) for s in cats])
        adds = [s for s in j["steps"] if s["op"] in ("Add", "Mul")]
        t.check("mixed: Add and Mul by per-channel constants stay "
                "channels-last, the constants [1,1,1,4]",
                len(adds) == 2 and all(tens[s["outputs"][0]]["shape"] ==
                                       [1, 8, 8, 4] for s in adds),
                [(s["inputs"], tens[s["outputs"][0]]["shape"])
                 for s in adds])

print("filters: shared, depthwise with a multiplier, read channels-first")


def filters_model(path):
    """w read by two Convs (one filter, permuted once), wd depthwise with
    two outputs per channel ([1,kH,kW,8]), ws read by a Conv and by a Mul
    that reads it as the model has it (a Transpose for the Conv), wdq
    dequantized per channel (a computed filter)."""
    try:
        import numpy as np
        from onnx import TensorProto, helper, numpy_helper, save
    except ImportError:
        return False
    rng = np.random.default_rng(5)

    def w(name, *shape):
        return numpy_helper.from_array(
            rng.standard_normal(shape).astype(np.float32), name)
    n = helper.make_node
    p1 = [1, 1, 1, 1]
    nodes = [n("Conv", ["x", "w"], ["a"], pads=p1),
             n("Conv", ["a", "w"], ["b"], pads=p1),
             n("Conv", ["b", "wd"], ["y"], pads=p1, group=4),
             n("DequantizeLinear", ["wq", "wqs"], ["wdq"]),
             n("Conv", ["a", "ws"], ["y2a"], pads=p1),
             n("Conv", ["a", "wdq"], ["y2b"], pads=p1),
             n("Add", ["y2a", "y2b"], ["y2"]),
             n("Mul", ["ws", "ws"], ["sq"]),
             n("ReduceSum", ["sq"], ["y3"], keepdims=0)]
    f = TensorProto.FLOAT
    g = helper.make_graph(
        nodes, "filters",
        [helper.make_tensor_value_info("x", f, [1, 4, 6, 6])],
        [helper.make_tensor_value_info("y", f, [1, 8, 6, 6]),
         helper.make_tensor_value_info("y2", f, [1, 4, 6, 6]),
         helper.make_tensor_value_info("y3", f, [])],
        [w("w", 4, 4, 3, 3), w("wd", 8, 1, 3, 3), w("ws", 4, 4, 3, 3),
         numpy_helper.from_array(rng.integers(-127, 128, (4, 4, 3, 3))
                                 .astype(np.int8), "wq"),
         numpy_helper.from_array(np.array([0.01, 0.02, 0.03, 0.04],
                                          np.float32), "wqs")])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
         path)
    return True


fm = os.path.join(tmp, "filters.onnx")
if not filters_model(fm):
    print("skipped: python3-onnx or numpy missing")
else:
    j, rj = model_case("filt", fm, [])
    if j:
        same_outputs("filt", 3, 1e-5)
        tens = {x["name"]: x["shape"] for x in j["tensors"]}
        convs = [s["inputs"][1] for s in j["steps"] if s["op"] == "Conv"
                 and s["inputs"][1] != "wdq_tflite"]
        t.check("filt: w permuted once in place for its two readers, wd "
                "[1,3,3,8], ws kept [4,4,3,3] for the Mul and its "
                "permuted copy [4,3,3,4] for the Conv",
                sorted(convs) == ["w", "w", "wd", "ws_tflite"] and
                tens["w"] == [4, 3, 3, 4] and tens["wd"] == [1, 3, 3, 8]
                and tens["ws"] == [4, 4, 3, 3] and
                tens["ws_tflite"] == [4, 3, 3, 4], (convs, tens))
        moved = [(s["inputs"][0], s["outputs"][0]) for s in j["steps"]
                 if s["op"] == "Transpose"]
        t.check("filt: the dequantized filter is moved by a Transpose "
                "step to [4,3,3,4] (output 1 above reads it)",
                ("wdq", "wdq_tflite") in moved and
                tens["wdq_tflite"] == [4, 3, 3, 4], (moved, tens))

print("bad input")
lenet = os.path.join(ROOT, "testdata", "lenet.onnx")
for args, what in ((["--layout", "foo"], "--layout foo"),
                   (["--layout", "nhwc", "--train"], "--layout nhwc --train"),
                   (["--layout", "nhwc", "--fuse", "preact"],
                    "--layout nhwc --fuse preact")):
    r = arenac("--dim", "N=1", *args, lenet)
    t.check("%s: exit 1 with one error line" % what,
            r.returncode == 1 and r.stderr.startswith("arenac: error:") and
            not r.stdout, "%d %r" % (r.returncode, r.stderr))
mlp = os.path.join(ROOT, "testdata", "quant_dynamic_matmul.onnx")
a = arenac("--dim-default", "1", "--json", os.path.join(tmp, "m0.json"),
           mlp)
b = arenac("--dim-default", "1", "--layout", "nhwc", "--json",
           os.path.join(tmp, "m1.json"), mlp)
same = False
if a.returncode == 0 and b.returncode == 0:
    ja, jb = (json.load(open(os.path.join(tmp, f)))
              for f in ("m0.json", "m1.json"))
    same = [s["op"] for s in ja["steps"]] == [s["op"] for s in jb["steps"]] \
        and ja["arena_bytes"] == jb["arena_bytes"]
t.check("no 4-D activations: exit 0, one warning, the same plan",
        same and "--layout nhwc: no 4-D" in b.stderr,
        "%d %r" % (b.returncode, b.stderr))

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(t.summary())
