#!/usr/bin/env python3
"""e2e_oracle.py - arenac's shape inference against onnx's, model by model.

For every shared model (and testdata/*.onnx) the graph inputs are bound to
the shapes of the reference input files, arenac writes its JSON report, and
each tensor's dtype and shape is compared with onnx.shape_inference
(data_prop=True) run on the same model with its inputs fixed to those
shapes.  Only tensors onnx gives a full static shape are compared: onnx
1.12 cannot fold some shape subgraphs that arenac does.  Models arenac must
refuse are listed in REFUSED with the reason; for those the test wants
exit code 2 and an "arenac: error:" line.

Environment: ARENAC (the binary, default build/arenac), ARENAC_SHARED.
Prints one line per model and "N passed, N failed"; exits 1 on failure.
"""
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import ARENAC, ROOT, need  # noqa: E402

onnx, = need("onnx")
from onnx import numpy_helper, shape_inference  # noqa: E402

# Models arenac refuses on purpose, by file name or onnx-small folder.
REFUSED = {
    "test_sequence_model8": "SplitToSequence by sizes that are a graph "
                            "input: a sequence known only at run time",
    "test_gradient_of_add": "Gradient is in a non-default domain",
    "test_strnorm_model_monday_casesensintive_upper":
        "string tensors have no fixed byte size",
    "test_expand_shape_model1":
        "Expand's target shape is a graph input: no bound without --bound",
    "range_runtime": "Range up to a graph input: no bound without --bound",
    "three_unbounded": "three sizes from run-time values: no bound without "
                       "--bound (tests/e2e_bounded.sh)",
}

# Models newer than the oracle (Debian's onnx 1.12): arenac must plan them;
# tests/e2e_quant.py checks their shapes and sizes instead.
NO_ORACLE = {
    "quant_int4_blocked": "opset 21 and int4 are newer than onnx 1.12",
}

# Dims not fixed by a reference input file.
FIXED_DIMS = {
    "lenet": {"N": 1},
    "quant_dynamic_matmul": {"batch": 1},
    "gpt2_fused": {"batch": 1, "seq": 1, "past_seq": 15, "total_seq": 16},
    "gqa_decoder": {"batch": 1, "seq": 1, "past_seq": 63, "total_seq": 64},
}

# Inputs fixed to their reference value (--input-value): silero_vad_v5's
# 8 kHz branch cannot take the reference 512-sample window (its LSTM cell
# would get a rank-4 input, in torch as in arenac), so the sample rate
# the reference ran at picks the branch.
FIXED_VALUES = {
    "silero_vad_v5": ["sr"],
}

DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16",
          6: "int32", 7: "int64", 8: "string", 9: "bool", 10: "float16",
          11: "float64", 12: "uint32", 13: "uint64", 14: "complex64",
          15: "complex128", 16: "bfloat16", 17: "float8e4m3fn",
          18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz",
          21: "uint4", 22: "int4", 23: "float4e2m1", 24: "float8e8m0",
          25: "uint2", 26: "int2"}


def model_key(path):
    """The REFUSED/FIXED_DIMS key: the onnx-small folder or the file stem."""
    if os.path.basename(path) == "model.onnx":
        return os.path.basename(os.path.dirname(path))
    return os.path.splitext(os.path.basename(path))[0]


def ref_files(path, role):
    """Reference input or output TensorProtos, in graph order."""
    if os.path.basename(path) == "model.onnx":
        pat = os.path.join(os.path.dirname(path), "test_data_set_0",
                           role + "_*.pb")
    else:
        pat = os.path.splitext(path)[0] + "_" + role + "_*.pb"
    files = glob.glob(pat)
    files.sort(key=lambda f: int(f.rsplit("_", 1)[1].split(".")[0]))
    return files


def real_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def bind(model, path):
    """{dim_param: value}, the concrete shape of each graph input, and
    the inputs whose shape needs --input-shape (a dim with neither a value
    nor a name)."""
    dims = dict(FIXED_DIMS.get(model_key(path), {}))
    shapes = {}
    unnamed = []
    refs = ref_files(path, "input")
    for k, vi in enumerate(real_inputs(model)):
        if not vi.type.HasField("tensor_type"):
            continue
        decl = vi.type.tensor_type.shape.dim
        ref = None
        if k < len(refs):
            t = onnx.TensorProto()
            with open(refs[k], "rb") as f:
                t.ParseFromString(f.read())
            ref = list(t.dims)
        shape = []
        for i, d in enumerate(decl):
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            elif ref is not None and i < len(ref):
                # --dim wants a positive value; an empty reference input
                # (test_sequence_model8) is bound to 1 on both sides.
                shape.append(max(ref[i], 1))
                if d.dim_param:
                    dims[d.dim_param] = shape[-1]
            else:
                shape.append(dims.get(d.dim_param, 1))
            if not d.HasField("dim_value") and not d.dim_param:
                unnamed.append(vi.name)
        shapes[vi.name] = shape
    return dims, shapes, sorted(set(unnamed))


def ref_values(model, path):
    """--input-value arguments for the FIXED_VALUES inputs."""
    out = []
    refs = ref_files(path, "input")
    for k, vi in enumerate(real_inputs(model)):
        if vi.name in FIXED_VALUES.get(model_key(path), []):
            t = onnx.TensorProto()
            with open(refs[k], "rb") as f:
                t.ParseFromString(f.read())
            v = onnx.numpy_helper.to_array(t).ravel()
            out += ["--input-value",
                    "%s=%s" % (vi.name, ",".join(str(x) for x in v))]
    return out


def ref_dims(path):
    """Shapes of the reference outputs: they check what onnx cannot."""
    out = {}
    for k, f in enumerate(ref_files(path, "output")):
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        out[k] = list(t.dims)
    return out


def onnx_shapes(model, shapes):
    """name -> (dtype, shape) for every tensor onnx knows statically."""
    for vi in real_inputs(model):
        if vi.name in shapes:
            dims = vi.type.tensor_type.shape.dim
            for d, v in zip(dims, shapes[vi.name]):
                d.Clear()
                d.dim_value = v
    inferred = shape_inference.infer_shapes(model, data_prop=True)
    out = {}
    g = inferred.graph
    for vi in list(g.value_info) + list(g.output) + list(g.input):
        if not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            continue
        if not all(d.HasField("dim_value") for d in tt.shape.dim):
            continue
        out[vi.name] = (DTYPES.get(tt.elem_type, "?"),
                        [d.dim_value for d in tt.shape.dim])
    return out


def run_arenac(path, dims, shapes, unnamed, values):
    cmd = [ARENAC, "--json", "-"] + values
    for name, v in sorted(dims.items()):
        cmd += ["--dim", "%s=%d" % (name, v)]
    for name in unnamed:
        cmd += ["--input-shape", "%s=%s" % (
            name, "x".join(str(v) for v in shapes[name]) or "scalar")]
    cmd.append(path)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=600)


def check(path):
    """(ok, message) for one model."""
    key = model_key(path)
    model = onnx.load(path)
    dims, shapes, unnamed = bind(model, path)
    r = run_arenac(path, dims, shapes, unnamed, ref_values(model, path))
    if key in REFUSED:
        if r.returncode == 2 and "arenac: error:" in r.stderr:
            return True, "refused as expected (%s)" % REFUSED[key]
        return False, "expected a refusal (%s), got exit %d" % (
            REFUSED[key], r.returncode)
    if r.returncode != 0:
        return False, "exit %d: %s" % (r.returncode, r.stderr.strip())
    if key in NO_ORACLE:
        return True, "planned; no onnx oracle (%s)" % NO_ORACLE[key]
    ours = {t["name"]: t for t in json.loads(r.stdout)["tensors"]}
    theirs = onnx_shapes(model, shapes)
    bad = []
    compared = 0
    for k, dims in ref_dims(path).items():
        t = ours.get(model.graph.output[k].name)
        compared += 1
        if t is None or t["shape"] != dims:
            bad.append("output %d: arenac %s, reference data %s" % (
                k, t and t["shape"], dims))
    for name, (dtype, shape) in theirs.items():
        t = ours.get(name)
        if t is None:
            continue
        compared += 1
        if t["dtype"] != dtype or t["shape"] != shape:
            bad.append("%s: arenac %s%s, onnx %s%s" % (
                name, t["dtype"], t["shape"], dtype, shape))
    if bad:
        return False, "%d of %d tensors differ: %s" % (
            len(bad), compared, "; ".join(bad[:5]))
    return True, "%d checks agree (%d tensors in the report)" % (compared,
                                                         len(ours))


def main():
    shared = os.environ.get("ARENAC_SHARED", "")
    models = sorted(glob.glob(os.path.join(ROOT, "testdata", "*.onnx")))
    if shared and os.path.isdir(os.path.join(shared, "models")):
        models += sorted(glob.glob(os.path.join(shared, "models", "*.onnx")))
        models += sorted(glob.glob(os.path.join(
            shared, "models", "onnx-small", "*", "model.onnx")))
    else:
        print("skipped: no shared models")
    if not os.access(ARENAC, os.X_OK):
        print("FAIL: %s is not built" % ARENAC)
        return 1
    passed = failed = 0
    for path in models:
        try:
            ok, msg = check(path)
        except Exception as e:  # a broken oracle run is a failure too
            ok, msg = False, "oracle error: %r" % e
        print("%s %s: %s" % ("ok  " if ok else "FAIL", model_key(path), msg))
        passed += ok
        failed += not ok
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
