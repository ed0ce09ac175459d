"""extdata.py - weights as ONNX external data whose file is never written,
and the full onnx check of such models.

arenac never reads weight bytes, so a 7-billion-parameter graph needs only
the initializers' names, types and shapes: each is a TensorProto with
data_location EXTERNAL and external_data entries location / offset /
length pointing into a file that does not exist.  The model file stays a
few hundred KB.

onnx 1.12 accepts such a model everywhere except in the checker: both
check_model(ModelProto) and check_model(path) insist that the external
file exists (resolved against the current folder for a proto, the model's
folder for a path); they do not read it.  check() therefore saves the model
in a temporary folder beside a sparse placeholder of the right length (no
disk blocks written), runs the full check (check_model with full_check,
then strict shape inference with data propagation) and removes both.
"""
import os
import shutil
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, mapping, numpy_helper

# ONNX dtype -> bytes per element (bool: 1).
ITEMSIZE = {TensorProto.FLOAT: 4, TensorProto.FLOAT16: 2,
            TensorProto.BFLOAT16: 2, TensorProto.DOUBLE: 8,
            TensorProto.INT64: 8, TensorProto.INT32: 4, TensorProto.INT8: 1,
            TensorProto.UINT8: 1, TensorProto.BOOL: 1}


def external(name, elem_type, dims, location, offset):
    """An initializer whose bytes are at offset in location (never written).

    Returns (TensorProto, length in bytes)."""
    t = TensorProto()
    t.name = name
    t.data_type = elem_type
    t.dims.extend(int(d) for d in dims)
    t.data_location = TensorProto.EXTERNAL
    length = int(np.prod(dims, dtype=np.int64)) * ITEMSIZE[elem_type]
    for k, v in (("location", location), ("offset", str(offset)),
                 ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t, length


class Weights:
    """Initializers of one model: inline random values (small models) or
    external data never written (large ones), offsets laid out in order."""

    def __init__(self, elem_type, external_file=None, seed=0, scale=0.02):
        self.elem_type = elem_type
        self.location = external_file
        self.offset = 0
        self.rng = np.random.default_rng(seed)
        self.scale = scale
        self.inits = []

    def add(self, name, dims, value=None):
        """A parameter: random normal * scale, or the constant value."""
        if self.location is not None and value is None:
            t, n = external(name, self.elem_type, dims, self.location,
                            self.offset)
            self.offset += n
        else:
            np_type = mapping.TENSOR_TYPE_TO_NP_TYPE[self.elem_type]
            a = (self.rng.standard_normal(dims) * self.scale
                 if value is None else np.full(dims, value))
            t = numpy_helper.from_array(np.asarray(a, dtype=np_type), name)
        self.inits.append(t)
        return name

    def const(self, name, array):
        """A constant of any dtype (shapes, axes, ratios), always inline."""
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name


def inputs_to_external(model, keep, location):
    """Graph inputs other than keep become external initializers (torch
    export with export_params=False lists parameters as inputs)."""
    g = model.graph
    offset, stay = 0, []
    for vi in g.input:
        if vi.name in keep:
            stay.append(vi)
            continue
        tt = vi.type.tensor_type
        t, n = external(vi.name, tt.elem_type,
                        [d.dim_value for d in tt.shape.dim], location,
                        offset)
        offset += n
        g.initializer.append(t)
    del g.input[:]
    g.input.extend(stay)
    return offset


def external_bytes(model):
    """{location: bytes the external initializers span}."""
    end = {}
    for t in model.graph.initializer:
        if t.data_location == TensorProto.EXTERNAL:
            kv = {e.key: e.value for e in t.external_data}
            end[kv["location"]] = max(end.get(kv["location"], 0),
                                      int(kv["offset"]) + int(kv["length"]))
    return end


def check(model):
    """check_model(full_check=True) and strict shape inference with data
    propagation; returns the inferred model.  Raises on any error."""
    tmp = tempfile.mkdtemp(prefix="extdata")
    try:
        path = os.path.join(tmp, "model.onnx")
        onnx.save(model, path)
        for loc, n in external_bytes(model).items():
            assert os.path.basename(loc) == loc, loc
            with open(os.path.join(tmp, loc), "wb") as f:
                f.truncate(n)  # sparse: no data blocks
        onnx.checker.check_model(path, full_check=True)
    finally:
        shutil.rmtree(tmp)
    return onnx.shape_inference.infer_shapes(model, check_type=True,
                                             strict_mode=True,
                                             data_prop=True)


def value_shapes(inferred):
    """{tensor name: (elem_type, dims)} of an inferred model: value_info,
    inputs, outputs and initializers; dims as ints (or dim_param names)."""
    out = {}
    g = inferred.graph
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        tt = vi.type.tensor_type
        out[vi.name] = (tt.elem_type, [d.dim_value if d.HasField(
            "dim_value") else d.dim_param for d in tt.shape.dim])
    for t in g.initializer:
        out[t.name] = (t.data_type, list(t.dims))
    return out


def make_model(nodes, name, inputs, outputs, inits, opset):
    """A model with ir_version 8 (what onnx 1.12 writes for opset 17)."""
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(graph, producer_name="arenac-testdata",
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m
