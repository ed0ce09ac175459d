#!/usr/bin/env python3
"""quantize_linears.py - a float ONNX model with its linears stored as an
already-quantised model stores them, for tests/e2e_prequant.py.

  python3 testdata/quantize_linears.py IN.onnx OUT.onnx --form FORM
      [--block B] [--symmetric] [--head]

Each MatMul whose second operand is a float initializer W [K, N] (the LM
head, the MatMul writing the first graph output, left float unless
--head) becomes, by FORM:

  int8   DequantizeLinear(Wq int8 [K, N], scale float32 [N], zero point
         int8 [N], axis=1) -> MatMul: the per-channel QDQ weight of ORT's
         quantize_static (opset 13 semantics, any opset >= 13).  A float16
         model gets a Cast to float16 after it (opset 13's scale is float32).
  int4   DequantizeLinear(Wq int4 [K, N], scale [K/B, N] in the model's
         type, zero point int4 [K/B, N], axis=0, block_size=B) -> MatMul:
         opset 21's blocked form; the model's opset is raised to 21 (reduce
         ops' axes become an input, as opset 18 wants).
  qdq    QuantizeLinear(W, scale, zero point) -> DequantizeLinear(., scale,
         zero point) -> MatMul: W stays the float initializer (QAT exports,
         TensorRT's explicit quantization), int8 per channel; float32
         models only.
  nbits  com.microsoft MatMulNBits(x, Wq uint8 [N, K/B, B/2], scales
         [N * K/B] in the model's type, zero points uint8 [N * ceil(K/B /
         2)], K, N, bits=4, block_size=B) in place of the MatMul: what
         ORT's MatMul4BitsQuantizer (quantization/matmul_4bits_quantizer.py)
         and ORT GenAI's builder write.
The new tensors are named W_quantized, W_scale, W_zero_point (and
W_DequantizeLinear_Output), as ORT's quantizers name them.

--block: weights a block in int4 and nbits (32, ORT's default).
--symmetric: no zero points.
--dq-first: the weights' QuantizeLinear, DequantizeLinear and Cast nodes
first in the graph, before the layers (a converter emitting each
initializer's dequantisation beside it): every dequantised weight is then
open across the layers before its own.

Inline weights are quantised for real (absmax / 2^(bits-1) - 1 scales);
external ones (the 7B presets: data never written, extdata.py) stay
external with the quantised byte lengths.  onnx 1.12 knows neither int4
nor opset 21 nor com.microsoft, so only int8 and qdq models go through
its checker.  Prints one line per form: linears quantised and their
stored bytes (quantised weights, scales, zero points), which the test
compares with arenac's quantized_base_bytes.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extdata  # noqa: E402

INT4 = 22       # onnx.proto's code, newer than onnx 1.12
MS = "com.microsoft"
FLOATS = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16}
# The names ORT's quantizers give (quantization/base_quantizer.py,
# matmul_4bits_quantizer.py).
Q, SCALE, ZP, DQ = ("_quantized", "_scale", "_zero_point",
                    "_DequantizeLinear_Output")
WEIGHT_OPS = ("QuantizeLinear", "DequantizeLinear", "Cast")
REDUCE = ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
          "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
          "ReduceSumSquare")


class Store:
    """New initializers: real bytes, or external ones of the right length
    when the model's weights are external (never written)."""

    def __init__(self, location):
        self.location = location
        self.offset = 0
        self.inits = []
        self.bytes = 0

    def add(self, name, code, dims, array, nbytes):
        if self.location is None:
            t = TensorProto()
            t.name = name
            t.data_type = code
            t.dims.extend(int(d) for d in dims)
            t.raw_data = np.ascontiguousarray(array).tobytes()
            assert len(t.raw_data) == nbytes, (name, len(t.raw_data))
        else:
            t = TensorProto()
            t.name = name
            t.data_type = code
            t.dims.extend(int(d) for d in dims)
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", self.location),
                         ("offset", str(self.offset)),
                         ("length", str(nbytes))):
                e = t.external_data.add()
                e.key, e.value = k, v
            self.offset += nbytes
        self.inits.append(t)
        self.bytes += nbytes
        return name


def pack4(nibbles):
    """Two 4-bit values a byte, the first in the low bits (onnx.proto)."""
    v = np.asarray(nibbles, np.uint8).ravel() & 0xF
    if v.size % 2:
        v = np.append(v, np.uint8(0))
    return (v[0::2] | (v[1::2] << 4)).astype(np.uint8)


def quantise(w, bits, axis_blocks):
    """w [K, N] in blocks along K of axis_blocks rows (K: per column):
    (q as ints, scale [K/B, N], zero point [K/B, N]), asymmetric."""
    k, n = w.shape
    nb = -(-k // axis_blocks)
    pad = np.zeros((nb * axis_blocks, n), np.float32)
    pad[:k] = w
    blk = pad.reshape(nb, axis_blocks, n)
    lo, hi = blk.min(axis=1), blk.max(axis=1)
    qmax = 2 ** (bits - 1) - 1
    scale = np.maximum((hi - lo) / (2 * qmax + 1), 1e-8)
    zp = np.clip(np.round(-qmax - 1 - lo / scale), -qmax - 1, qmax)
    q = np.clip(np.round(blk / scale[:, None]) + zp[:, None], -qmax - 1,
                qmax).reshape(nb * axis_blocks, n)[:k]
    return q.astype(np.int64), scale, zp.astype(np.int64)


def weights_of(model):
    inits = {t.name: t for t in model.graph.initializer}
    return inits


def head_node(model):
    out = model.graph.output[0].name
    for n in model.graph.node:
        if out in n.output:
            return n.name or id(n)
    return None


def raise_opset(model, to):
    """The default domain at opset `to`; reduce ops' axes as an input."""
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx") and o.version < to:
            o.version = to
    extra = []
    for n in model.graph.node:
        if n.op_type not in REDUCE:
            continue
        axes = [a for a in n.attribute if a.name == "axes"]
        if axes:
            name = (n.name or n.output[0]) + ".axes"
            extra.append(numpy_helper.from_array(
                np.asarray(list(axes[0].ints), np.int64), name))
            n.attribute.remove(axes[0])
            n.input.append(name)
    model.graph.initializer.extend(extra)
    model.ir_version = max(model.ir_version, 10)


def rewrite(model, form, block, symmetric, head, first=False):
    inits = weights_of(model)
    ext = any(t.data_location == TensorProto.EXTERNAL
              for t in model.graph.initializer)
    location = None
    if ext:
        location = os.path.basename(next(
            e.value for t in model.graph.initializer
            for e in t.external_data if e.key == "location"))
        location = os.path.splitext(location)[0] + "." + form + ".data"
    st = Store(location)
    last = model.graph.output[0].name
    nodes, dropped, quantised, count = [], set(), set(), 0
    for n in model.graph.node:
        w = n.input[1] if n.op_type == "MatMul" and len(n.input) == 2 \
            else None
        t = inits.get(w)
        if (t is None or t.data_type not in FLOATS or len(t.dims) != 2 or
                (last in n.output and not head)):
            nodes.append(n)
            continue
        count += 1
        quantised.add(w)
        k, nn = t.dims
        ftype = t.data_type
        fsize = np.dtype(FLOATS[ftype]).itemsize
        wf = (None if t.data_location == TensorProto.EXTERNAL else
              numpy_helper.to_array(t).astype(np.float32))
        x, y = n.input[0], n.output[0]
        if form in ("int8", "qdq"):
            q, s, z = quantise(wf, 8, k) if wf is not None else (
                None, np.ones((1, nn)), np.zeros((1, nn)))
            deq = w + DQ
            st.add(w + SCALE, TensorProto.FLOAT, [nn],
                   s[0].astype(np.float32), 4 * nn)
            zpi = []
            if not symmetric:
                st.add(w + ZP, TensorProto.INT8, [nn],
                       z[0].astype(np.int8), nn)
                zpi = [w + ZP]
            if form == "qdq":
                assert ftype == TensorProto.FLOAT, "qdq: float32 models"
                nodes.append(helper.make_node(
                    "QuantizeLinear", [w, w + SCALE] + zpi, [w + Q],
                    name=w + ".quantize", axis=1))
                # What a runtime folds the QuantizeLinear into.
                st.bytes += k * nn
            else:
                st.add(w + Q, TensorProto.INT8, [k, nn],
                       q is not None and q.astype(np.int8), k * nn)
                dropped.add(w)
            nodes.append(helper.make_node(
                "DequantizeLinear", [w + Q, w + SCALE] + zpi,
                [deq], name=w + ".dequantize", axis=1))
            if ftype != TensorProto.FLOAT:
                nodes.append(helper.make_node("Cast", [deq], [deq + ".cast"],
                                              name=w + ".cast", to=ftype))
                deq += ".cast"
            nodes.append(helper.make_node("MatMul", [x, deq], [y],
                                          name=n.name))
        elif form == "int4":
            nb = -(-k // block)
            q, s, z = quantise(wf, 4, block) if wf is not None else (
                None, np.ones((nb, nn)), np.zeros((nb, nn)))
            st.add(w + Q, INT4, [k, nn], q is not None and pack4(q),
                   -(-k * nn // 2))
            st.add(w + SCALE, ftype, [nb, nn], s.astype(FLOATS[ftype]),
                   nb * nn * fsize)
            zpi = []
            if not symmetric:
                st.add(w + ZP, INT4, [nb, nn], pack4(z),
                       -(-nb * nn // 2))
                zpi = [w + ZP]
            nodes.append(helper.make_node(
                "DequantizeLinear", [w + Q, w + SCALE] + zpi,
                [w + DQ], name=w + ".dequantize", axis=0,
                block_size=block))
            nodes.append(helper.make_node("MatMul", [x, w + DQ], [y],
                                          name=n.name))
            dropped.add(w)
        else:  # nbits: B is W^T [N, K] in blocks of K
            nb = -(-k // block)
            q, s, z = quantise(wf, 4, block) if wf is not None else (
                None, np.ones((nb, nn)), np.zeros((nb, nn)))
            packed = None
            if q is not None:
                # uint4: value + 8; per column n, block b, block/2 bytes.
                qt = np.zeros((nn, nb * block), np.int64)
                qt[:, :k] = (q + 8).T
                packed = pack4(qt.reshape(-1)).reshape(nn, nb, block // 2)
            st.add(w + Q, TensorProto.UINT8, [nn, nb, block // 2],
                   packed, nn * nb * (block // 2))
            st.add(w + SCALE, ftype, [nn * nb],
                   s.T.reshape(-1).astype(FLOATS[ftype]), nn * nb * fsize)
            ins = [x, w + Q, w + SCALE]
            if not symmetric:
                zb = -(-nb // 2)
                zz = np.zeros((nn, 2 * zb), np.int64)
                zz[:, :nb] = (z + 8).T
                st.add(w + ZP, TensorProto.UINT8, [nn * zb],
                       pack4(zz.reshape(-1)), nn * zb)
                ins.append(w + ZP)
            nodes.append(helper.make_node(
                "MatMulNBits", ins, [y], name=n.name or y, domain=MS, K=k,
                N=nn, bits=4, block_size=block))
            dropped.add(w)
    if first:
        # The weights' nodes first, as converters that emit each
        # initializer's dequantisation beside it write them.
        mine = [n for n in nodes if n.op_type in WEIGHT_OPS and
                n.name.startswith(tuple(dropped | quantised))]
        nodes = mine + [n for n in nodes if n not in mine]
    keep = [t for t in model.graph.initializer if t.name not in dropped]
    del model.graph.initializer[:]
    model.graph.initializer.extend(keep + st.inits)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    if form == "int4":
        raise_opset(model, 21)
    if form == "nbits" and not any(o.domain == MS
                                   for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS, 1))
    return count, st.bytes


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--form", required=True,
                    choices=("int8", "int4", "qdq", "nbits"))
    ap.add_argument("--block", type=int, default=32)
    ap.add_argument("--symmetric", action="store_true")
    ap.add_argument("--head", action="store_true")
    ap.add_argument("--dq-first", action="store_true")
    a = ap.parse_args(argv)
    model = onnx.load(a.input, load_external_data=False)
    del model.graph.value_info[:]
    count, nbytes = rewrite(model, a.form, a.block, a.symmetric, a.head,
                           a.dq_first)
    if a.form in ("int8", "qdq"):
        extdata.check(model)
    onnx.save(model, a.output)
    print("%s: %d linears, %d stored bytes" % (a.form, count, nbytes))


if __name__ == "__main__":
    main(sys.argv[1:])
