#!/usr/bin/python3
"""gen_rt_cases.py -- one-node cases for the reference runtime's kernels.

Writes, on stdout, small random cases with numpy-computed expected outputs
in the text format tests/rt_cases.c reads:

    case NAME OP INPLACE        OP: [DOMAIN.]OP; INPLACE: ok (elementwise:
                                must also run with the output on input 0),
                                ok:K (on input K), refused (an in-place
                                plan must be an error) or untested
    opset N                     the op's opset
    attr NAME i V | f V | s TEXT | ints N V... | floats N V... |
         strs N TEXT...
    tensor ROLE TYPE RANK DIMS...   ROLE: in (arena), w (weights blob),
    VALUES...                       none (omitted), out (an expected
                                    output, after the inputs); TYPE: f32
                                    f64 f16 bf16 i64 i32 i16 i8 u8 u16 u32
                                    u64 bool (float16 and bfloat16 as
                                    their bit patterns)

The references are written independently of the C kernels (numpy slicing,
np.pad, np.repeat, einsum), in float64, rounded to float32 at the end.
"""
import math
import sys

import numpy as np

rng = np.random.default_rng(1234)
out = sys.stdout


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


TYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
         np.dtype(np.float16): "f16", np.dtype(np.int64): "i64",
         np.dtype(np.int32): "i32", np.dtype(np.int16): "i16",
         np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8",
         np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32",
         np.dtype(np.uint64): "u64", np.dtype(np.bool_): "bool"}


class Bf16:
    """float32 values rounded to bfloat16 (8 significant bits, halves to
    even), held as their bit patterns: numpy has no bfloat16."""

    def __init__(self, a):
        bits = []
        for v in np.asarray(a, np.float64).ravel():
            m, e = math.frexp(v)                # v = m 2^e, 0.5 <= |m| < 1
            r = np.float32(math.ldexp(round(m * 256), e - 8))
            bits.append(int(r.view(np.uint32)) >> 16)
        self.bits = np.array(bits, np.uint16).reshape(np.shape(a))


def put_tensor(role, a):
    if a is None:
        out.write("tensor none f32 0\n\n")
        return
    if isinstance(a, Bf16):
        out.write("tensor %s bf16 %d %s\n" % (role, a.bits.ndim, " ".join(
            str(d) for d in a.bits.shape)))
        out.write(" ".join(str(int(v)) for v in a.bits.ravel()) + "\n")
        return
    a = np.asarray(a)
    out.write("tensor %s %s %d %s\n" % (role, TYPES[a.dtype], a.ndim,
                                        " ".join(str(d) for d in a.shape)))
    if a.dtype == np.float16:
        a = a.view(np.uint16)
    if a.dtype.kind in "iub":
        out.write(" ".join(str(int(v)) for v in a.ravel()) + "\n")
    else:
        out.write(" ".join(repr(float(v)) for v in a.ravel()) + "\n")


def case(name, op, inputs, y, attrs=(), inplace=False, opset=13,
         keep=False):
    """inputs: list of (role, array or None); y: the expected output or a
    list of them, float64 ones written as float32 unless keep; inplace
    True, False, None (untested) or K (in place over input K works)."""
    mode = {True: "ok", False: "refused", None: "untested"}.get(
        inplace, "ok:%s" % inplace)
    out.write("case %s %s %s\nopset %d\n" % (name, op, mode, opset))
    for k, v in attrs:
        if isinstance(v, bytes):
            v = v.decode()
        if isinstance(v, str):
            out.write("attr %s s %s\n" % (k, v))
        elif isinstance(v, float):
            out.write("attr %s f %r\n" % (k, v))
        elif isinstance(v, int):
            out.write("attr %s i %d\n" % (k, v))
        elif v and all(isinstance(e, (str, bytes)) for e in v):
            out.write("attr %s strs %d %s\n" % (k, len(v), " ".join(
                e.decode() if isinstance(e, bytes) else e for e in v)))
        elif all(isinstance(e, int) for e in v):
            out.write("attr %s ints %d %s\n" % (k, len(v),
                                                " ".join(map(str, v))))
        else:
            out.write("attr %s floats %d %s\n" % (k, len(v), " ".join(
                repr(float(e)) for e in v)))
    for role, a in inputs:
        put_tensor(role, a)
    for a in (y if isinstance(y, list) else [y]):
        if isinstance(a, Bf16):
            put_tensor("out", a)
            continue
        a = np.asarray(a)
        if a.dtype == np.float64 and not keep:
            a = a.astype(np.float32)
        put_tensor("out", a)


def conv_ref(x, w, b, group, pads, strides, dil):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64),
                ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) // strides[1] + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for o in range(m):
        g = o // mg
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * dil[0]:i * dil[0] + (oh - 1) * strides[0] + 1:
                           strides[0],
                           j * dil[1]:j * dil[1] + (ow - 1) * strides[1] + 1:
                           strides[1]]
                y[:, o] += np.einsum("nchw,c->nhw", patch, w[o, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def convt_ref(x, w, b, group, pads, strides, outpad):
    n, c, h, wd = x.shape
    _, mg, kh, kw = w.shape
    m = mg * group
    fh = (h - 1) * strides[0] + kh + outpad[0]
    fw = (wd - 1) * strides[1] + kw + outpad[1]
    y = np.zeros((n, m, fh, fw))
    cg = c // group
    for ci in range(c):
        g = ci // cg
        for ml in range(mg):
            for i in range(kh):
                for j in range(kw):
                    y[:, g * mg + ml, i:i + (h - 1) * strides[0] + 1:strides[0],
                      j:j + (wd - 1) * strides[1] + 1:strides[1]] += \
                        x[:, ci] * w[ci, ml, i, j]
    y = y[:, :, pads[0]:fh - pads[2], pads[1]:fw - pads[3]]
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y


def pool_ref(x, kind, k, pads, strides, include_pad=False):
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]),
                                       (pads[1], pads[3])),
                constant_values=fill)
    ones = np.pad(np.ones(x.shape[2:]), ((pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - k[0]) // strides[0] + 1
    ow = (xp.shape[3] - k[1]) // strides[1] + 1
    y = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * strides[0]:i * strides[0] + k[0],
                     j * strides[1]:j * strides[1] + k[1]]
            if kind == "max":
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                cnt = k[0] * k[1] if include_pad else ones[
                    i * strides[0]:i * strides[0] + k[0],
                    j * strides[1]:j * strides[1] + k[1]].sum()
                y[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return y


def main():
    # Convolutions: groups, pads, strides, dilations, 1-D.
    for name, c, m, g, k, pads, st, dil in [
            ("conv_plain", 3, 4, 1, (3, 3), (1, 1, 1, 1), (1, 1), (1, 1)),
            ("conv_group", 4, 6, 2, (3, 3), (0, 1, 2, 1), (1, 1), (1, 1)),
            ("conv_depthwise_s2", 5, 5, 5, (3, 3), (1, 1, 1, 1), (2, 2), (1, 1)),
            ("conv_dilated", 2, 3, 1, (3, 2), (2, 0, 1, 1), (1, 2), (2, 1)),
            ("conv_1x1", 8, 4, 1, (1, 1), (0, 0, 0, 0), (1, 1), (1, 1))]:
        x, w, b = rand(1, c, 9, 8), rand(m, c // g, *k), rand(m)
        case(name, "Conv", [("in", x), ("w", w), ("w", b)],
             conv_ref(x, w, b, g, pads, st, dil),
             [("group", g), ("kernel_shape", list(k)), ("pads", list(pads)),
              ("strides", list(st)), ("dilations", list(dil))])
    x, w = rand(2, 2, 7), rand(3, 2, 3)
    case("conv_1d_nobias", "Conv", [("in", x), ("w", w)],
         conv_ref(x[:, :, None, :], w[:, :, None, :], None, 1, (0, 1, 0, 1),
                  (1, 2), (1, 1))[:, :, 0, :],
         [("pads", [1, 1]), ("strides", [2])])
    # arenac.PreactConv: the per-channel prologue maps the input, the zero
    # padding pads the prologue's output.  Codes: 1 BatchNormalization
    # (scale, bias, mean, var), 2 Mul, 3 Add, 4 Relu.
    x, w, b = rand(1, 4, 9, 8), rand(6, 2, 3, 3), rand(6)
    sc, bi, mu = rand(4), rand(4), rand(4)
    var = (np.abs(rand(4)) + 0.1).astype(np.float32)
    k, c0 = rand(4, 1, 1), rand(1)
    x64 = x.astype(np.float64)
    bn = ((x64 - mu.reshape(1, 4, 1, 1)) /
          np.sqrt(var.astype(np.float64).reshape(1, 4, 1, 1) + 1e-3) *
          sc.reshape(1, 4, 1, 1) + bi.reshape(1, 4, 1, 1))
    pre = np.maximum(bn * k + c0, 0.0)
    case("preact_bn_mul_add_relu", "arenac.PreactConv",
         [("in", x), ("w", w), ("w", b), ("w", sc), ("w", bi), ("w", mu),
          ("w", var), ("w", k), ("w", c0)],
         conv_ref(pre, w, b, 2, (1, 1, 1, 1), (2, 1), (1, 1)),
         [("group", 2), ("kernel_shape", [3, 3]), ("pads", [1, 1, 1, 1]),
          ("strides", [2, 1]), ("prologue", [1, 2, 3, 4]),
          ("prologue_epsilon", [1e-3])])
    # Relu first, then an affine map: the stages split at the Relu.
    w = rand(3, 4, 2, 3)
    pre = np.maximum(x64, 0.0) * k + c0
    case("preact_relu_mul_add_nobias", "arenac.PreactConv",
         [("in", x), ("w", w), ("none", None), ("w", k), ("w", c0)],
         conv_ref(pre, w, None, 1, (0, 1, 1, 2), (1, 1), (1, 1)),
         [("kernel_shape", [2, 3]), ("pads", [0, 1, 1, 2]),
          ("prologue", [4, 2, 3])])
    x, w, b = rand(1, 4, 5, 5), rand(3, 4, 3, 3), rand(3)
    case("conv_same_upper", "Conv", [("in", x), ("w", w), ("w", b)],
         conv_ref(x, w, b, 1, (0, 0, 1, 1), (2, 2), (1, 1)),
         [("auto_pad", "SAME_UPPER"), ("strides", [2, 2])])
    for name, c, m, g, k, pads, st, op in [
            ("convt_s2", 4, 3, 1, (2, 2), (0, 0, 0, 0), (2, 2), (0, 0)),
            ("convt_pads_group", 4, 4, 2, (3, 3), (1, 0, 1, 1), (2, 1), (1, 0))]:
        x, w, b = rand(1, c, 4, 5), rand(c, m // g, *k), rand(m)
        case(name, "ConvTranspose", [("in", x), ("w", w), ("w", b)],
             convt_ref(x, w, b, g, pads, st, op),
             [("group", g), ("kernel_shape", list(k)), ("pads", list(pads)),
              ("strides", list(st)), ("output_padding", list(op))])

    # Pools and LRN.
    x = rand(1, 3, 7, 8)
    case("maxpool_pad", "MaxPool", [("in", x)],
         pool_ref(x, "max", (3, 3), (1, 1, 1, 1), (2, 2)),
         [("kernel_shape", [3, 3]), ("pads", [1, 1, 1, 1]),
          ("strides", [2, 2])])
    case("avgpool_exclude", "AveragePool", [("in", x)],
         pool_ref(x, "avg", (3, 3), (0, 0, 1, 1), (1, 1)),
         [("kernel_shape", [3, 3]), ("pads", [0, 0, 1, 1])])
    case("avgpool_include", "AveragePool", [("in", x)],
         pool_ref(x, "avg", (3, 2), (1, 1, 1, 0), (2, 1), True),
         [("kernel_shape", [3, 2]), ("pads", [1, 1, 1, 0]),
          ("strides", [2, 1]), ("count_include_pad", 1)])
    case("globalavgpool", "GlobalAveragePool", [("in", x)],
         x.astype(np.float64).mean(axis=(2, 3), keepdims=True))
    x = rand(1, 7, 3, 4)
    sq = np.pad(x.astype(np.float64) ** 2, ((0, 0), (2, 2), (0, 0), (0, 0)))
    ssum = sum(sq[:, i:i + 7] for i in range(5))
    case("lrn", "LRN", [("in", x)], x / (2.0 + 1e-3 / 5 * ssum) ** 0.75,
         [("size", 5), ("alpha", 1e-3), ("beta", 0.75), ("bias", 2.0)])

    # Elementwise and normalisation: these must also run in place.
    x = rand(2, 3, 4, 5)
    x64 = x.astype(np.float64)
    case("relu", "Relu", [("in", x)], np.maximum(x64, 0), inplace=True)
    case("sigmoid", "Sigmoid", [("in", x)], 1 / (1 + np.exp(-x64)),
         inplace=True)
    case("hardsigmoid", "HardSigmoid", [("in", x)],
         np.clip(0.3 * x64 + 0.4, 0, 1), [("alpha", 0.3), ("beta", 0.4)],
         inplace=True)
    case("hardswish", "HardSwish", [("in", x)],
         x64 * np.clip(x64 / 6 + 0.5, 0, 1), inplace=True)
    case("clip_attrs", "Clip", [("in", x)], np.clip(x64, -0.5, 0.7),
         [("min", -0.5), ("max", 0.7)], inplace=True)
    case("clip_inputs", "Clip",
         [("in", x), ("w", np.float32(0.0)), ("w", np.float32(6.0))],
         np.clip(x64, 0, 6), inplace=True)
    case("softmax", "Softmax", [("in", x)],
         np.exp(x64) / np.exp(x64).sum(axis=-1, keepdims=True),
         [("axis", 3)], inplace=True)
    rows = x64.reshape(2, 60)
    case("softmax_opset9_flattens", "Softmax", [("in", x)],
         (np.exp(rows) / np.exp(rows).sum(axis=1, keepdims=True)).reshape(
             x.shape), inplace=True, opset=9)
    a, b = rand(2, 3, 4, 5), rand(3, 1, 1)
    for op, f in [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply),
                  ("Div", np.divide)]:
        case("%s_bcast" % op.lower(), op, [("in", a), ("w", b)],
             f(a.astype(np.float64), b), inplace=True)
    c = rand(3, 4, 5)
    l, r = rand(1, 5) + 3, rand(4, 1)
    case("sub_outer", "Sub", [("in", l), ("in", r)],
         l.astype(np.float64) - r)
    s1, s2, s3 = rand(2, 3, 4, 5), rand(2, 3, 4, 5), rand(4, 1)
    case("sum3", "Sum", [("in", s1), ("in", s2), ("in", s3)],
         s1.astype(np.float64) + s2 + s3, inplace=True)
    # In place over a later operand: the fold starts there.
    case("max3_in_place_over_last", "Max", [("in", s3), ("in", s2),
                                            ("in", s1)],
         np.maximum(np.maximum(s3, s2), s1), inplace=2)
    case("sub_in_place_over_b", "Sub", [("in", s3), ("in", s1)],
         s3.astype(np.float64) - s1, inplace=1)
    case("mul_bcast_in_arena", "Mul", [("in", a), ("in", c)],
         a.astype(np.float64) * c, inplace=True)
    sc, bi, mu, var = rand(3), rand(3), rand(3), np.abs(rand(3)) + 0.5
    xb = rand(2, 3, 4, 4)
    case("batchnorm", "BatchNormalization",
         [("in", xb), ("w", sc), ("w", bi), ("w", mu), ("w", var)],
         (xb.astype(np.float64) - mu.reshape(1, 3, 1, 1)) /
         np.sqrt(var.reshape(1, 3, 1, 1).astype(np.float64) + 1e-3) *
         sc.reshape(1, 3, 1, 1) + bi.reshape(1, 3, 1, 1),
         [("epsilon", 1e-3)], inplace=True)

    # Matrix products.
    A, B, C = rand(3, 5), rand(4, 5), rand(4)
    case("gemm_transb", "Gemm", [("in", A), ("w", B), ("w", C)],
         A.astype(np.float64) @ B.T.astype(np.float64) + C,
         [("transB", 1)])
    A2, B2, C2 = rand(5, 3), rand(5, 4), rand(3, 1)
    case("gemm_transa_alpha_beta", "Gemm", [("in", A2), ("w", B2), ("w", C2)],
         0.5 * (A2.T.astype(np.float64) @ B2) + 2.0 * C2,
         [("transA", 1), ("alpha", 0.5), ("beta", 2.0)])
    M1, M2 = rand(2, 1, 3, 4), rand(3, 4, 2)
    case("matmul_batched", "MatMul", [("in", M1), ("w", M2)],
         np.matmul(M1.astype(np.float64), M2))
    v1, v2 = rand(1, 6), rand(6, 3)
    case("matmul_2d", "MatMul", [("in", v1), ("w", v2)],
         v1.astype(np.float64) @ v2)

    # Data movement.
    p1, p2 = rand(1, 2, 3, 2), rand(1, 3, 3, 2)
    case("concat_axis1", "Concat", [("in", p1), ("in", p2)],
         np.concatenate([p1, p2], axis=1), [("axis", 1)])
    q1, q2 = rand(2, 3, 2), rand(2, 3, 4)
    case("concat_axis_last", "Concat", [("in", q1), ("w", q2)],
         np.concatenate([q1, q2], axis=-1), [("axis", -1)])
    t = rand(1, 2, 3, 4, 5)
    case("transpose", "Transpose", [("in", t)],
         np.transpose(t, (0, 2, 1, 3, 4)), [("perm", [0, 2, 1, 3, 4])])
    t3 = rand(2, 3, 4)
    case("transpose_default", "Transpose", [("in", t3)], t3.T)
    rs = rand(2, 3, 4)
    case("reshape", "Reshape", [("in", rs), ("w", np.array([4, 6]))],
         rs.reshape(4, 6), inplace=True)
    case("flatten", "Flatten", [("in", rs)], rs.reshape(2, 12),
         inplace=True)
    case("dropout", "Dropout", [("in", rs)], rs, [("ratio", 0.5)],
         inplace=True)
    z = rand(1, 2, 3, 4)
    case("resize_asymmetric_floor", "Resize",
         [("in", z), ("w", np.zeros(0, np.float32)),
          ("w", np.array([1, 1, 2, 2], np.float32))],
         z.repeat(2, axis=2).repeat(2, axis=3),
         [("mode", "nearest"), ("coordinate_transformation_mode", "asymmetric"),
          ("nearest_mode", "floor")])
    case("resize_sizes_half_pixel", "Resize",
         [("in", z), ("w", np.zeros(0, np.float32)),
          ("w", np.zeros(0, np.float32)), ("w", np.array([1, 2, 6, 2]))],
         z.repeat(2, axis=2)[:, :, :, ::2], [("mode", "nearest")])
    case("upsample_opset9", "Upsample",
         [("in", z), ("w", np.array([1, 1, 2, 3], np.float32))],
         z.repeat(2, axis=2).repeat(3, axis=3), [("mode", "nearest")],
         opset=9)
    pz = rand(1, 2, 4, 5)
    for mode in ["constant", "reflect", "edge"]:
        kw = {"constant_values": 1.5} if mode == "constant" else {}
        case("pad_" + mode, "Pad",
             [("in", pz), ("w", np.array([0, 0, 1, 2, 0, 0, 3, 1])),
              ("w", np.float32(1.5))],
             np.pad(pz, ((0, 0), (0, 0), (1, 3), (2, 1)), mode=mode, **kw),
             [("mode", mode)])
    case("pad_attrs_crop", "Pad", [("in", pz)],
         np.pad(pz, ((0, 0), (0, 0), (0, 0), (2, 0)))[:, :, 1:, :],
         [("pads", [0, 0, -1, 2, 0, 0, 0, 0])])


def ints(*shape, lo=-5, hi=6, dtype=np.int64):
    return rng.integers(lo, hi, size=shape).astype(dtype)


def elementwise_cases():
    """Unary ops on floats and ints, binary ops and their n-ary forms with
    broadcasting, comparisons and logic into bool, Where, Cast, Expand."""
    x = rand(2, 3, 5)
    x64 = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    for op, y, attrs in [
            ("Erf", erf(x64), []),
            ("Log", np.log(np.abs(x64) + 0.1), []),
            ("Reciprocal", 1 / x64, []),
            ("Softplus", np.log1p(np.exp(x64)), []),
            ("Softsign", x64 / (1 + np.abs(x64)), []),
            ("Elu", np.where(x64 >= 0, x64, 0.7 * np.expm1(x64)),
             [("alpha", 0.7)]),
            ("Selu", 1.05070102214813232421875 * np.where(
                x64 > 0, x64, 1.67326319217681884765625 * np.expm1(x64)),
             []),
            ("Celu", np.maximum(0, x64) + np.minimum(
                0, 1.5 * np.expm1(x64 / 1.5)), [("alpha", 1.5)]),
            ("ThresholdedRelu", np.where(x64 > 0.3, x64, 0),
             [("alpha", 0.3)]),
            ("Shrink", np.where(x64 < -0.4, x64 + 0.1,
                                np.where(x64 > 0.4, x64 - 0.1, 0)),
             [("bias", 0.1), ("lambd", 0.4)]),
            ("Mish", x64 * np.tanh(np.log1p(np.exp(x64))), []),
            ("Atan", np.arctan(x64), []), ("Cosh", np.cosh(x64), []),
            ("Floor", np.floor(x64 * 3), []), ("Ceil", np.ceil(x64 * 3), []),
            ("Sign", np.sign(x64), []),
            ("Gelu", 0.5 * x64 * (1 + erf(x64 / np.sqrt(2))), []),
            ("Gelu", 0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (
                x64 + 0.044715 * x64 ** 3))), [("approximate", "tanh")])]:
        xin = x
        if op == "Log":
            xin = (np.abs(x) + np.float32(0.1)).astype(np.float32)
            y = np.log(xin.astype(np.float64))
        elif op in ("Floor", "Ceil"):
            xin = (x * np.float32(3)).astype(np.float32)
            y = (np.floor if op == "Floor" else np.ceil)(xin)
        name = op.lower() + ("_tanh" if attrs == [("approximate", "tanh")]
                             else "")
        case(name, op, [("in", xin)], y, attrs, inplace=True,
             opset=20 if op == "Gelu" else 13)
    # Round halves to even; IsNaN / IsInf on specials into bool.
    r = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.2, -0.7], np.float32)
    case("round_half_even", "Round", [("in", r)], np.round(r), inplace=True)
    sp = np.array([1.0, np.inf, -np.inf, np.nan, -0.0, 3.0], np.float32)
    case("isnan", "IsNaN", [("in", sp)], np.isnan(sp))
    case("isinf_positive_only", "IsInf", [("in", sp)],
         np.isposinf(sp), [("detect_negative", 0)])
    # Integer unary ops.
    i32 = ints(3, 4, dtype=np.int32)
    case("neg_int32", "Neg", [("in", i32)], -i32, inplace=True)
    i64 = ints(7)
    case("abs_int64", "Abs", [("in", i64)], np.abs(i64), inplace=True)
    bl = rng.random((2, 5)) < 0.5
    case("not", "Not", [("in", bl)], ~bl, inplace=True)
    case("relu_int32", "Relu", [("in", i32)], np.maximum(i32, 0),
         inplace=True, opset=14)
    case("clip_int64_inputs", "Clip",
         [("in", i64), ("w", np.int64(-2)), ("w", np.int64(3))],
         np.clip(i64, -2, 3), inplace=True)

    # Binary arithmetic with broadcasting, float and integer.
    a, b = rand(2, 1, 4), rand(3, 1)
    case("pow_bcast", "Pow", [("in", np.abs(a) + 0.5), ("w", b)],
         (np.abs(a) + np.float32(0.5)).astype(np.float64) ** b)
    case("pow_float_int_exponent", "Pow",
         [("in", a), ("w", np.array([0, 1, 2, 3], np.int64))],
         a.astype(np.float64) ** np.array([0, 1, 2, 3]), inplace=True,
         opset=15)
    base = np.array([[2, -3, 5], [0, 1, -1]], np.int64)
    case("pow_int", "Pow", [("in", base), ("w", np.array([3, 2, 0], np.int64))],
         base ** np.array([3, 2, 0]), inplace=True)
    m1 = np.array([-7, -6, 5, 7, 0, -1], np.int32)
    m2 = np.array([3, -4, -3, 2, 5, 4], np.int32)
    case("mod_int_sign_of_divisor", "Mod", [("in", m1), ("in", m2)],
         np.mod(m1, m2), inplace=True)
    case("mod_fmod", "Mod", [("in", m1.astype(np.float32) + 0.5),
                             ("in", m2.astype(np.float32))],
         np.fmod(m1 + 0.5, m2.astype(np.float64)), [("fmod", 1)],
         inplace=True)
    case("div_int_truncates", "Div", [("in", m1), ("in", m2)],
         (np.trunc(m1 / m2)).astype(np.int32), inplace=True)
    d1, d2 = rng.standard_normal((2, 3)), rng.standard_normal(3)
    case("add_double", "Add", [("in", d1), ("in", d2)], d1 + d2, keep=True,
         inplace=True)
    u1 = rng.integers(0, 256, (4, 3)).astype(np.uint8)
    u2 = rng.integers(0, 256, 3).astype(np.uint8)
    case("mul_uint8_wraps", "Mul", [("in", u1), ("w", u2)], u1 * u2,
         inplace=True)
    s1, s2 = ints(2, 3, 4), ints(4)
    case("sub_int64_bcast", "Sub", [("in", s1), ("w", s2)], s1 - s2,
         inplace=True)
    n1, n2, n3 = rand(2, 3, 1), rand(1, 4), rand(3, 1)
    case("max3_bcast", "Max", [("in", n1), ("in", n2), ("in", n3)],
         np.maximum(np.maximum(n1, n2), n3))
    case("min3_bcast", "Min", [("in", n1), ("in", n2), ("in", n3)],
         np.minimum(np.minimum(n1, n2), n3))
    e1, e2, e3 = rand(3, 4), rand(3, 4), rand(4)
    case("mean3", "Mean", [("in", e1), ("in", e2), ("in", e3)],
         (e1.astype(np.float64) + e2 + e3) / 3, inplace=True)
    sl = rand(3, 1, 1)
    xp = rand(2, 3, 2, 2)
    case("prelu_per_channel", "PRelu", [("in", xp), ("w", sl)],
         np.where(xp < 0, xp.astype(np.float64) * sl, xp), inplace=True)
    sh = np.array([1, 2, 3, 200], np.uint8)
    case("bitshift_left_uint8", "BitShift",
         [("in", sh), ("w", np.array([1, 2, 7, 1], np.uint8))],
         sh << np.array([1, 2, 7, 1], np.uint8), [("direction", "LEFT")],
         inplace=True)
    sh32 = np.array([16, 4, 1], np.uint32)
    case("bitshift_right_uint32", "BitShift",
         [("in", sh32), ("w", np.array([1, 2, 3], np.uint32))],
         sh32 >> np.array([1, 2, 3], np.uint32), [("direction", "RIGHT")],
         inplace=True)

    # Comparisons and logic into bool.
    c1, c2 = ints(3, 4, lo=0, hi=3), ints(4, lo=0, hi=3)
    case("equal_int64_bcast", "Equal", [("in", c1), ("w", c2)], c1 == c2)
    f1, f2 = rand(2, 3, 4), rand(3, 1)
    case("less_bcast", "Less", [("in", f1), ("in", f2)], f1 < f2)
    case("greater_or_equal", "GreaterOrEqual", [("in", f1), ("in", f2)],
         f1 >= f2, opset=16)
    case("less_or_equal_int32", "LessOrEqual",
         [("in", i32), ("w", np.int32(1))], i32 <= 1, opset=16)
    b1, b2 = rng.random((2, 3, 4)) < 0.5, rng.random((3, 4)) < 0.5
    case("and_bcast", "And", [("in", b1), ("in", b2)], b1 & b2,
         inplace=True)
    case("or_bcast", "Or", [("in", b1), ("in", b2)], b1 | b2, inplace=True)
    case("xor_bcast", "Xor", [("in", b1), ("in", b2)], b1 ^ b2,
         inplace=True)

    # Where with three-way broadcasting, float and int64.
    cond = rng.random((3, 1)) < 0.5
    wx, wy = rand(1, 4), np.float32(-1.0)
    case("where_bcast", "Where", [("in", cond), ("in", wx), ("w", wy)],
         np.where(cond, wx, wy))
    wc, wa, wb = rng.random((2, 3)) < 0.5, ints(2, 3), ints(3)
    case("where_int64", "Where", [("in", wc), ("in", wa), ("in", wb)],
         np.where(wc, wa, wb))

    # Cast: truncation toward zero, float16 rounding, bool, wrapping.
    cf = np.array([-2.7, -0.5, 0.0, 0.5, 1.9, 100.25, 65519.0, 1e-6],
                  np.float32)
    case("cast_float_int32", "Cast", [("in", cf)], cf.astype(np.int32),
         [("to", 6)], inplace=True)
    case("cast_float_float16", "Cast", [("in", cf)], cf.astype(np.float16),
         [("to", 10)])
    h = (rand(7) * 100).astype(np.float16)
    case("cast_float16_float", "Cast", [("in", h)], h.astype(np.float32),
         [("to", 1)])
    case("cast_float_bfloat16", "Cast", [("in", cf)], Bf16(cf), [("to", 16)])
    case("cast_float_bool", "Cast", [("in", cf)], cf != 0, [("to", 9)])
    case("cast_bool_float", "Cast", [("in", bl)], bl.astype(np.float32),
         [("to", 1)])
    case("cast_int64_float", "Cast", [("in", i64)], i64.astype(np.float32),
         [("to", 1)])
    i16 = np.array([200, -200, 127, -129], np.int16)
    case("cast_int16_int8_wraps", "Cast", [("in", i16)], i16.astype(np.int8),
         [("to", 3)])
    case("castlike_double", "CastLike", [("in", x), ("w", np.zeros(1))],
         x.astype(np.float64), keep=True, opset=15)

    # Expand, float and bool.
    ex = rand(3, 1)
    case("expand", "Expand", [("in", ex), ("w", np.array([2, 3, 4]))],
         np.broadcast_to(ex, (2, 3, 4)))
    eb = rng.random((1, 4)) < 0.5
    case("expand_bool", "Expand", [("in", eb), ("w", np.array([3, 1]))],
         np.broadcast_to(eb, (3, 4)))


def reduce_cases():
    """Reduce* with axes as attribute or input, keepdims either way, empty
    axes, negative axes; ArgMax/ArgMin; CumSum."""
    x = rand(3, 4, 5)
    x64 = x.astype(np.float64)
    case("reducemean_attr_keepdims", "ReduceMean", [("in", x)],
         x64.mean(axis=(0, 2), keepdims=True), [("axes", [0, 2])],
         opset=13)
    case("reducesum_input_negative_axis", "ReduceSum",
         [("in", x), ("w", np.array([-1]))], x64.sum(axis=-1),
         [("keepdims", 0)])
    case("reducesum_all_when_axes_empty", "ReduceSum",
         [("in", x), ("w", np.zeros(0, np.int64))], x64.sum(keepdims=True))
    case("reducesum_noop_with_empty_axes", "ReduceSum", [("in", x)], x64,
         [("noop_with_empty_axes", 1)])
    i = ints(3, 4, lo=-100, hi=100)
    case("reducemax_int64_all", "ReduceMax", [("in", i)],
         i.max(keepdims=True), opset=13)
    case("reducemin_opset18_input", "ReduceMin",
         [("in", x), ("w", np.array([1]))], x64.min(axis=1, keepdims=True),
         opset=18)
    case("reducel1", "ReduceL1", [("in", x)],
         np.abs(x64).sum(axis=(1,), keepdims=True), [("axes", [1])])
    case("reducel2", "ReduceL2", [("in", x)],
         np.sqrt((x64 ** 2).sum(axis=(0, 1))), [("axes", [0, 1]),
                                                 ("keepdims", 0)])
    case("reducelogsum", "ReduceLogSum", [("in", np.abs(x) + 1)],
         np.log((np.abs(x) + np.float32(1)).astype(np.float64).sum(
             axis=2, keepdims=True)), [("axes", [2])])
    case("reducelogsumexp", "ReduceLogSumExp", [("in", x * 20)],
         np.log(np.exp((x * np.float32(20)).astype(np.float64)).sum(
             axis=1, keepdims=True)), [("axes", [1])])
    case("reduceprod", "ReduceProd", [("in", x)],
         x64.prod(axis=0, keepdims=True), [("axes", [0])])
    case("reducesumsquare", "ReduceSumSquare", [("in", x)],
         (x64 ** 2).sum(axis=(-1, 0)), [("axes", [-1, 0]), ("keepdims", 0)])
    t = np.array([[1, 3, 3, 0], [2, 2, 1, 2], [0, 5, 5, 5]], np.float32)
    case("argmax_first", "ArgMax", [("in", t)], t.argmax(axis=1)[:, None],
         [("axis", 1)])
    case("argmax_select_last", "ArgMax", [("in", t)],
         3 - t[:, ::-1].argmax(axis=1)[:, None],
         [("axis", 1), ("select_last_index", 1)])
    case("argmin_negative_axis", "ArgMin", [("in", t)], t.argmin(axis=0),
         [("axis", -2), ("keepdims", 0)])
    cs = ints(2, 5, dtype=np.int32)
    case("cumsum_int32", "CumSum", [("in", cs), ("w", np.array(1))],
         np.cumsum(cs, axis=1).astype(np.int32), inplace=True, opset=14)
    rev = np.flip(np.cumsum(np.flip(x64, 1), axis=1), 1)
    case("cumsum_exclusive_reverse", "CumSum",
         [("in", x), ("w", np.array(-2, np.int32))], rev - x64,
         [("exclusive", 1), ("reverse", 1)], inplace=True, opset=14)


def norm_cases():
    """Softmax family on any axis and both opset forms; LayerNormalization
    with broadcast scale and bias and its statistics outputs;
    InstanceNormalization; MeanVarianceNormalization."""
    x = rand(2, 3, 4)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    case("softmax_inner_axis", "Softmax", [("in", x)],
         e / e.sum(axis=1, keepdims=True), [("axis", 1)], inplace=True)
    e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
    case("logsoftmax_last", "LogSoftmax", [("in", x)],
         np.log(e / e.sum(axis=-1, keepdims=True)), inplace=True)
    rows = x64.reshape(2, 12)
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    case("logsoftmax_opset11_flattens", "LogSoftmax", [("in", x)],
         np.log(e / e.sum(axis=1, keepdims=True)).reshape(x.shape),
         inplace=True, opset=11)
    hm = np.array([[1, 4, 4], [3, 0, 2]], np.float32).reshape(2, 3, 1)
    hy = np.zeros_like(hm)
    am = hm.argmax(axis=0)
    for j in range(3):
        hy[am[j, 0], j, 0] = 1
    case("hardmax_axis0_ties_first", "Hardmax", [("in", hm)], hy,
         [("axis", 0)], inplace=True)

    xl = rand(2, 3, 4, 5)
    sc, bi = rand(4, 5), rand(5)
    xr = xl.astype(np.float64).reshape(6, 20)
    mu = xr.mean(axis=1, keepdims=True)
    inv = 1 / np.sqrt(((xr - mu) ** 2).mean(axis=1, keepdims=True) + 1e-3)
    y = ((xr - mu) * inv).reshape(xl.shape) * sc + bi
    case("layernorm_axis_minus2", "LayerNormalization",
         [("in", xl), ("w", sc), ("w", bi)],
         [y, mu.reshape(2, 3, 1, 1), inv.reshape(2, 3, 1, 1)],
         [("axis", -2), ("epsilon", 1e-3)], inplace=True, opset=17)
    xr = xl.astype(np.float64).reshape(24, 5)
    mu = xr.mean(axis=1, keepdims=True)
    inv = 1 / np.sqrt(((xr - mu) ** 2).mean(axis=1, keepdims=True) + 1e-5)
    case("layernorm_no_bias", "LayerNormalization",
         [("in", xl), ("w", bi)], ((xr - mu) * inv * bi).reshape(xl.shape),
         inplace=True, opset=17)
    xi = rand(2, 3, 4, 5)
    sc, bi = rand(3), rand(3)
    v = xi.astype(np.float64)
    m = v.mean(axis=(2, 3), keepdims=True)
    sd = np.sqrt(v.var(axis=(2, 3), keepdims=True) + 1e-5)
    case("instancenorm", "InstanceNormalization",
         [("in", xi), ("w", sc), ("w", bi)],
         (v - m) / sd * sc.reshape(1, 3, 1, 1) + bi.reshape(1, 3, 1, 1),
         inplace=True)
    m = v.mean(axis=(0, 2, 3), keepdims=True)
    sd = np.sqrt((v ** 2).mean(axis=(0, 2, 3), keepdims=True) - m ** 2)
    case("mvn_default_axes", "MeanVarianceNormalization", [("in", xi)],
         (v - m) / (sd + 1e-9), inplace=True)


def matmul_cases():
    """MatMul with 1-D operands and broadcast batch dims at odd sizes;
    Gemm with a scalar C and both transposes."""
    v, m3 = rand(4), rand(2, 4, 3)
    case("matmul_1d_3d", "MatMul", [("in", v), ("w", m3)],
         np.matmul(v.astype(np.float64), m3))
    m3b, v3 = rand(2, 3, 5), rand(5)
    case("matmul_3d_1d", "MatMul", [("in", m3b), ("in", v3)],
         np.matmul(m3b.astype(np.float64), v3))
    va, vb = rand(7), rand(7)
    case("matmul_1d_1d", "MatMul", [("in", va), ("in", vb)],
         np.matmul(va.astype(np.float64), vb))
    p, q = rand(2, 1, 3, 5), rand(3, 5, 7)
    case("matmul_bcast_odd", "MatMul", [("in", p), ("in", q)],
         np.matmul(p.astype(np.float64), q))
    A, B = rand(5, 3), rand(4, 5)
    case("gemm_scalar_c_both_transposed", "Gemm",
         [("in", A), ("w", B), ("w", np.float32(0.75))],
         A.T.astype(np.float64) @ B.T + 0.5 * 0.75,
         [("transA", 1), ("transB", 1), ("beta", 0.5)])


def layout_cases():
    """Gather, GatherElements, Slice in every form, Split in every form,
    Concat of ints, Transpose of small types, DepthToSpace, SpaceToDepth,
    Pad wrap and axes, Tile, Trilu, Range, Shape, Size."""
    x = rand(3, 5, 2)
    idx = np.array([[-1, 0], [2, -5]], np.int32)
    case("gather_axis1_negative_int32", "Gather", [("in", x), ("w", idx)],
         np.take(x, idx, axis=1), [("axis", 1)])
    case("gather_last_axis", "Gather", [("in", x), ("w", np.array([1, 1, 0]))],
         np.take(x, [1, 1, 0], axis=-1), [("axis", -1)])
    case("gather_scalar_index", "Gather", [("in", x), ("w", np.array(-2))],
         x[-2])
    ge = np.array([[[0, 1]], [[-1, 2]]], np.int64)
    gy = np.array([[[x[ge[i, j, k], j, k] for k in range(2)]
                    for j in range(1)] for i in range(2)])
    case("gatherelements_axis0", "GatherElements", [("in", x), ("w", ge)],
         gy, [("axis", 0)])

    s = rand(4, 6, 5)
    case("slice_negative_step", "Slice",
         [("in", s), ("w", np.array([-1, 100])),
          ("w", np.array([-2**63, 0])), ("w", np.array([0, -2])),
          ("w", np.array([-1, -2]))], s[::-1, 100:0:-2], opset=13)
    case("slice_steps_no_axes", "Slice",
         [("in", s), ("w", np.array([1, 0, -3])),
          ("w", np.array([2**63 - 1, 5, 100])), ("none", None),
          ("w", np.array([2, 3, 1]))], s[1::2, 0:5:3, -3:])
    case("slice_int32_bounds", "Slice",
         [("in", s), ("w", np.array([2], np.int32)),
          ("w", np.array([-1], np.int32)), ("w", np.array([-1], np.int32))],
         s[:, :, 2:-1])
    case("slice_opset9_attrs", "Slice", [("in", s)], s[1:3, :, :],
         [("starts", [1]), ("ends", [3]), ("axes", [0])], opset=9)
    case("slice_empty", "Slice",
         [("in", s), ("w", np.array([3])), ("w", np.array([1])),
          ("w", np.array([1]))], s[:, 3:1, :])

    sp = ints(2, 7, 3, dtype=np.int32)
    case("split_input_form", "Split", [("in", sp), ("w", np.array([2, 5]))],
         [sp[:, :2], sp[:, 2:]], [("axis", 1)])
    case("split_attr_form", "Split", [("in", sp)],
         [sp[:, :3], sp[:, 3:4], sp[:, 4:]], [("axis", -2),
                                             ("split", [3, 1, 3])], opset=11)
    case("split_num_outputs_uneven", "Split", [("in", sp)],
         [sp[:, :3], sp[:, 3:6], sp[:, 6:]],
         [("axis", 1), ("num_outputs", 3)], opset=18)
    case("split_equal", "Split", [("in", sp)], [sp[:1], sp[1:]])

    c1, c2 = ints(2, 1, 3), ints(2, 2, 3)
    case("concat_int64_negative_axis", "Concat", [("in", c1), ("w", c2)],
         np.concatenate([c1, c2], axis=-2), [("axis", -2)])
    t8 = ints(2, 3, 4, dtype=np.int8)
    case("transpose_int8", "Transpose", [("in", t8)],
         t8.transpose(2, 0, 1), [("perm", [2, 0, 1])])
    tb = rng.random((3, 2)) < 0.5
    case("transpose_bool", "Transpose", [("in", tb)], tb.T)

    d = rand(1, 8, 2, 3)
    b, c, hh, w = d.shape
    dcr = d.reshape(b, 2, 2, c // 4, hh, w).transpose(0, 3, 4, 1, 5, 2)
    case("depthtospace_dcr", "DepthToSpace", [("in", d)],
         dcr.reshape(b, c // 4, hh * 2, w * 2), [("blocksize", 2)])
    crd = d.reshape(b, c // 4, 2, 2, hh, w).transpose(0, 1, 4, 2, 5, 3)
    case("depthtospace_crd", "DepthToSpace", [("in", d)],
         crd.reshape(b, c // 4, hh * 2, w * 2),
         [("blocksize", 2), ("mode", "CRD")])
    sd = rand(2, 3, 4, 6)
    t = sd.reshape(2, 3, 2, 2, 3, 2).transpose(0, 3, 5, 1, 2, 4)
    case("spacetodepth", "SpaceToDepth", [("in", sd)],
         t.reshape(2, 12, 2, 3), [("blocksize", 2)])

    pw = rand(2, 3, 4)
    case("pad_wrap", "Pad", [("in", pw), ("w", np.array([0, 2, 1, 0, 1, 3]))],
         np.pad(pw, ((0, 0), (2, 1), (1, 3)), mode="wrap"),
         [("mode", "wrap")], opset=19)
    pi = ints(3, 4)
    case("pad_axes_int64", "Pad",
         [("in", pi), ("w", np.array([1, 0, 2, 1])), ("w", np.int64(7)),
          ("w", np.array([-1, 0]))],
         np.pad(pi, ((0, 1), (1, 2)), constant_values=7), opset=18)
    tl = ints(2, 3, dtype=np.int32)
    case("tile", "Tile", [("in", tl), ("w", np.array([2, 3]))],
         np.tile(tl, (2, 3)))
    tr = rand(2, 3, 5)
    case("trilu_upper_k1", "Trilu", [("in", tr), ("w", np.int64(1))],
         np.triu(tr, 1), inplace=True, opset=14)
    tri = ints(4, 3)
    case("trilu_lower_k_minus1", "Trilu", [("in", tri), ("w", np.int64(-1))],
         np.tril(tri, -1), [("upper", 0)], inplace=True, opset=14)
    case("range_float", "Range",
         [("in", np.float32(1.5)), ("in", np.float32(-2)),
          ("in", np.float32(-0.75))], np.arange(1.5, -2, -0.75),
         opset=11)
    case("range_int32", "Range",
         [("in", np.int32(3)), ("in", np.int32(20)), ("in", np.int32(4))],
         np.arange(3, 20, 4, dtype=np.int32), opset=11)
    case("shape_start_end", "Shape", [("in", s)], np.array([6]),
         [("start", -2), ("end", -1)], opset=15)
    case("size", "Size", [("in", s)], np.array(s.size))


def resize_1d(data, scale, out_len, mode, coord, nearest, a, exclude, roi,
              extrap):
    """One axis of Resize, written from the spec's reference algorithm:
    the n positions nearest the source coordinate, edge-padded."""
    n_in = len(data)
    res = []
    length = scale * n_in       # fractional when a scale was given
    for x in range(out_len):
        if coord == "asymmetric":
            xo = x / scale
        elif coord == "pytorch_half_pixel":
            xo = (x + 0.5) / scale - 0.5 if length > 1 else 0.0
        elif coord == "align_corners":
            xo = 0.0 if length == 1 else x * (n_in - 1) / (length - 1)
        elif coord == "tf_crop_and_resize":
            xo = (roi[0] * (n_in - 1) + x * (roi[1] - roi[0]) * (n_in - 1) /
                  (length - 1) if length > 1 else
                  0.5 * (roi[0] + roi[1]) * (n_in - 1))
        else:
            xo = (x + 0.5) / scale - 0.5
        if coord == "tf_crop_and_resize" and (xo < 0 or xo > n_in - 1):
            res.append(np.full(data.shape[1:], extrap))
            continue
        if mode == "nearest":
            i = {"round_prefer_floor": math.ceil(xo - 0.5),
                 "round_prefer_ceil": math.floor(xo + 0.5),
                 "floor": math.floor(xo), "ceil": math.ceil(xo)}[nearest]
            res.append(data[min(max(i, 0), n_in - 1)])
            continue
        xi = math.floor(xo)
        t = 1.0 if xo == xi else xo - xi
        if mode == "linear":
            w = [1 - t, t]
        else:
            u = 1 - t
            w = [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
                 ((a + 2) * t - (a + 3)) * t * t + 1,
                 ((a + 2) * u - (a + 3)) * u * u + 1,
                 ((a * (u + 1) - 5 * a) * (u + 1) + 8 * a) * (u + 1) - 4 * a]
        n = len(w)
        near = sorted(sorted(range(xi - n, xi + n + 1),
                             key=lambda i: (abs(xo - i), i))[:n])
        w = np.array(w)
        if exclude:
            w = np.array([wk if 0 <= i < n_in else 0.0
                          for wk, i in zip(w, near)])
            w = w / w.sum()
        res.append(sum(wk * data[min(max(i, 0), n_in - 1)]
                       for wk, i in zip(w, near)))
    return np.array(res)


def resize_ref(x, scales, out_shape, mode, coord="half_pixel",
               nearest="round_prefer_floor", a=-0.75, exclude=False,
               roi=None, extrap=0.0):
    y = x.astype(np.float64)
    for ax in range(x.ndim):
        y = np.moveaxis(y, ax, 0)
        r = (roi[ax], roi[x.ndim + ax]) if roi is not None else (0, 1)
        y = resize_1d(y, scales[ax], out_shape[ax], mode, coord, nearest, a,
                      exclude, r, extrap)
        y = np.moveaxis(y, 0, ax)
    return y


def resize_cases():
    """Resize: linear, cubic and nearest with the coordinate modes, scales
    or sizes, roi and extrapolation."""
    x = rand(1, 2, 4, 5)
    none = ("w", np.zeros(0, np.float32))

    def sc(*v):
        return np.array(v, np.float32)

    for name, scales, shape, attrs, kw in [
            ("resize_linear_half_pixel_up", (1, 1, 2, 1.5), (1, 2, 8, 7),
             [("mode", "linear")], {"mode": "linear"}),
            ("resize_linear_align_corners_down", (1, 1, 0.6, 0.6),
             (1, 2, 2, 3), [("mode", "linear"),
                            ("coordinate_transformation_mode",
                             "align_corners")],
             {"mode": "linear", "coord": "align_corners"}),
            ("resize_cubic_asymmetric", (1, 1, 1.5, 2), (1, 2, 6, 10),
             [("mode", "cubic"),
              ("coordinate_transformation_mode", "asymmetric")],
             {"mode": "cubic", "coord": "asymmetric"}),
            ("resize_cubic_exclude_outside", (1, 1, 2, 2), (1, 2, 8, 10),
             [("mode", "cubic"), ("cubic_coeff_a", -0.5),
              ("exclude_outside", 1)],
             {"mode": "cubic", "a": -0.5, "exclude": True}),
            ("resize_linear_pytorch_half_pixel", (1, 1, 0.5, 1.4),
             (1, 2, 2, 7), [("mode", "linear"),
                            ("coordinate_transformation_mode",
                             "pytorch_half_pixel")],
             {"mode": "linear", "coord": "pytorch_half_pixel"}),
            ("resize_nearest_prefer_ceil", (1, 1, 1.5, 0.8), (1, 2, 6, 4),
             [("nearest_mode", "round_prefer_ceil")],
             {"mode": "nearest", "nearest": "round_prefer_ceil"}),
            ("resize_nearest_ceil_half_pixel", (1, 1, 2.5, 1), (1, 2, 10, 5),
             [("nearest_mode", "ceil")],
             {"mode": "nearest", "nearest": "ceil"})]:
        case(name, "Resize", [("in", x), none, ("w", sc(*scales))],
             resize_ref(x, [float(np.float32(s)) for s in scales], shape,
                        **kw), attrs)
    # sizes: the scale is output over input
    case("resize_linear_sizes", "Resize",
         [("in", x), none, none, ("w", np.array([1, 2, 3, 8]))],
         resize_ref(x, [1, 1, 3 / 4, 8 / 5], (1, 2, 3, 8), "linear"),
         [("mode", "linear")])
    roi = np.array([0, 0, 0.2, -0.1, 1, 1, 0.9, 1.2], np.float32)
    case("resize_tf_crop_and_resize", "Resize",
         [("in", x), ("w", roi), none, ("w", np.array([1, 2, 3, 6]))],
         resize_ref(x, [1, 1, 0.75, 1.2], (1, 2, 3, 6), "linear",
                    coord="tf_crop_and_resize", roi=roi.astype(np.float64),
                    extrap=2.5),
         [("mode", "linear"),
          ("coordinate_transformation_mode", "tf_crop_and_resize"),
          ("extrapolation_value", 2.5)])


def quant_cases():
    """QuantizeLinear per tensor (ties to even, saturation) and per axis,
    DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul,
    ConvInteger, QLinearConv."""
    x = np.array([-300, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, 300, 0.25],
                 np.float32)
    s, z = np.float32(1.0), np.uint8(128)

    def quant(v, scale, zp, lo, hi, dtype):
        q = np.rint(v.astype(np.float32) / scale) + zp
        return np.clip(q, lo, hi).astype(dtype)

    case("quantize_uint8_ties_saturate", "QuantizeLinear",
         [("in", x), ("w", s), ("w", z)], quant(x, s, 128, 0, 255, np.uint8))
    case("quantize_no_zero_point", "QuantizeLinear",
         [("in", x), ("w", np.float32(0.5))],
         quant(x, np.float32(0.5), 0, 0, 255, np.uint8))
    xa = rand(2, 3, 4) * 4
    sa = np.array([0.02, 0.05, 0.1], np.float32)
    za = np.array([-3, 0, 10], np.int8)
    case("quantize_int8_per_axis", "QuantizeLinear",
         [("in", xa), ("w", sa), ("w", za)],
         quant(xa, sa.reshape(1, 3, 1), za.reshape(1, 3, 1), -128, 127,
               np.int8), opset=13)
    q = rng.integers(0, 256, (2, 3, 4)).astype(np.uint8)
    zq = np.array([[1], [128], [255]], np.uint8).reshape(3)
    case("dequantize_per_axis_negative", "DequantizeLinear",
         [("in", q), ("w", sa), ("w", zq)],
         (q.astype(np.float32) - zq.reshape(1, 3, 1).astype(np.float32)) *
         sa.reshape(1, 3, 1), [("axis", -2)], opset=13)
    qi = ints(5, lo=-1000, hi=1000, dtype=np.int32)
    case("dequantize_int32", "DequantizeLinear",
         [("in", qi), ("w", np.float32(0.125))], qi * 0.125, inplace=True)
    xd = rand(3, 4) * 3
    lo, hi = min(xd.min(), 0), max(xd.max(), 0)
    ds = np.float32((hi - lo) / np.float32(255))
    dz = np.uint8(np.clip(np.rint(0 - lo / ds), 0, 255))
    case("dynamicquantize", "DynamicQuantizeLinear", [("in", xd)],
         [quant(xd, ds, dz, 0, 255, np.uint8), ds, dz], opset=11)

    a = rng.integers(0, 256, (2, 3, 5)).astype(np.uint8)
    b = rng.integers(-128, 128, (5, 4)).astype(np.int8)
    az, bz = np.uint8(12), np.array([1, -2, 0, 3], np.int8)
    acc = np.matmul(a.astype(np.int32) - 12, b.astype(np.int32) - bz)
    case("matmulinteger_zero_points", "MatMulInteger",
         [("in", a), ("w", b), ("w", az), ("w", bz)], acc.astype(np.int32),
         opset=10)
    asc, bsc, ysc = np.float32(0.02), np.float32(0.03), np.float32(0.04)
    yz = np.uint8(100)
    case("qlinearmatmul", "QLinearMatMul",
         [("in", a), ("w", asc), ("w", az), ("w", b), ("w", bsc),
          ("w", np.int8(0)), ("w", ysc), ("w", yz)],
         np.clip(np.rint(np.matmul(a.astype(np.int32) - 12, b.astype(
             np.int32)) * np.float64(asc * bsc / ysc)) + 100, 0,
             255).astype(np.uint8), opset=10)

    xc = rng.integers(0, 256, (1, 2, 5, 4)).astype(np.uint8)
    wc = rng.integers(-128, 128, (3, 2, 3, 3)).astype(np.int8)
    xz = np.uint8(7)
    wz = np.array([0, 5, -5], np.int8)
    xi = xc.astype(np.int64) - 7
    wi = wc.astype(np.int64) - wz.reshape(3, 1, 1, 1)
    acc = np.rint(conv_ref(xi.astype(np.float64), wi.astype(np.float64), None,
                           1, (1, 0, 1, 1), (1, 1), (1, 1))).astype(np.int64)
    case("convinteger_pads_zero_points", "ConvInteger",
         [("in", xc), ("w", wc), ("w", xz), ("w", wz)],
         acc.astype(np.int32), [("pads", [1, 0, 1, 1])], opset=10)
    wsc = np.array([0.01, 0.02, 0.03], np.float32)
    bias = np.array([100, -200, 50], np.int32)
    mult = (np.float32(0.05) * wsc / np.float32(0.5)).astype(np.float32)
    yq = np.rint((acc + bias.reshape(1, 3, 1, 1)) *
                 mult.astype(np.float64).reshape(1, 3, 1, 1)) - 3
    case("qlinearconv_per_channel", "QLinearConv",
         [("in", xc), ("w", np.float32(0.05)), ("w", xz), ("w", wc),
          ("w", wsc), ("w", wz), ("w", np.float32(0.5)), ("w", np.int8(-3)),
          ("w", bias)], np.clip(yq, -128, 127).astype(np.int8),
         [("pads", [1, 0, 1, 1])], opset=10)


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def rnn_ref(kind, x, w, r, b, h0, c0, p, lens, dirs, acts, clip=None,
            lbr=0):
    """RNN / GRU / LSTM in float64 straight from the spec's equations,
    one direction and one batch element at a time; returns Y, Y_h, Y_c."""
    seq, batch, _ = x.shape
    hid = r.shape[-1]
    y = np.zeros((seq, dirs, batch, hid))
    yh, yc = np.zeros((dirs, batch, hid)), np.zeros((dirs, batch, hid))

    def f(k, v):
        if clip is not None:
            v = np.clip(v, -clip, clip)
        return acts[k](v)
    for d in range(dirs):
        for bi in range(batch):
            n = seq if lens is None else int(lens[bi])
            h = h0[d, bi].astype(np.float64) if h0 is not None else \
                np.zeros(hid)
            c = c0[d, bi].astype(np.float64) if c0 is not None else \
                np.zeros(hid)
            steps = range(n - 1, -1, -1) if d == 1 else range(n)
            wb = b[d, :b.shape[1] // 2] if b is not None else 0
            rb = b[d, b.shape[1] // 2:] if b is not None else 0
            for t in steps:
                xt = x[t, bi].astype(np.float64)
                gx = w[d] @ xt + wb
                if kind == "RNN":
                    h = f(0, gx + r[d] @ h + rb)
                elif kind == "GRU":
                    gh = r[d] @ h + rb
                    z = f(0, gx[:hid] + gh[:hid])
                    rr = f(0, gx[hid:2 * hid] + gh[hid:2 * hid])
                    rbh = rb[2 * hid:] if b is not None else 0
                    if lbr:
                        hh = f(1, gx[2 * hid:] + rr * gh[2 * hid:])
                    else:
                        hh = f(1, gx[2 * hid:] + r[d][2 * hid:] @ (rr * h) +
                               rbh)
                    h = (1 - z) * hh + z * h
                else:
                    g = gx + r[d] @ h + rb
                    pi, po, pf = (p[d, :hid], p[d, hid:2 * hid],
                                  p[d, 2 * hid:]) if p is not None else (
                        0, 0, 0)
                    i = f(0, g[:hid] + pi * c)
                    fg = f(0, g[2 * hid:3 * hid] + pf * c)
                    c = fg * c + i * f(1, g[3 * hid:])
                    o = f(0, g[hid:2 * hid] + po * c)
                    h = o * f(2, c)
                y[t, d, bi] = h
            yh[d, bi], yc[d, bi] = h, c
    return y, yh, yc


def rnn_cases():
    """LSTM bidirectional with peepholes, clip, sequence lengths, initial
    states; GRU reverse with linear_before_reset; RNN with Relu in the
    batch-first layout."""
    seq, batch, inp, hid = 4, 3, 5, 6
    x = rand(seq, batch, inp)
    lens = np.array([4, 2, 3], np.int32)
    w, r = rand(2, 4 * hid, inp) * 0.5, rand(2, 4 * hid, hid) * 0.5
    b, p = rand(2, 8 * hid) * 0.5, rand(2, 3 * hid) * 0.5
    h0, c0 = rand(2, batch, hid), rand(2, batch, hid)
    y, yh, yc = rnn_ref("LSTM", x, w, r, b, h0, c0, p, lens, 2,
                        [sigmoid, np.tanh, np.tanh], clip=2.0)
    case("lstm_bidirectional_peepholes", "LSTM",
         [("in", x), ("w", w), ("w", r), ("w", b), ("w", lens), ("w", h0),
          ("w", c0), ("w", p)], [y, yh, yc],
         [("hidden_size", hid), ("direction", "bidirectional"),
          ("clip", 2.0)], opset=14)
    w, r, b = rand(1, 3 * hid, inp), rand(1, 3 * hid, hid), rand(1, 6 * hid)
    y, yh, _ = rnn_ref("GRU", x[::-1], w, r, b, None, None, None, None, 1,
                       [sigmoid, np.tanh], lbr=1)
    case("gru_reverse_linear_before_reset", "GRU",
         [("in", x), ("w", w), ("w", r), ("w", b)], [y[::-1], yh],
         [("hidden_size", hid), ("direction", "reverse"),
          ("linear_before_reset", 1)], opset=14)
    y, yh, _ = rnn_ref("GRU", x, w, r, b, None, None, None, None, 1,
                       [sigmoid, np.tanh])
    case("gru_default", "GRU", [("in", x), ("w", w), ("w", r), ("w", b)],
         [y, yh], [("hidden_size", hid)], opset=14)
    w, r = rand(1, hid, inp), rand(1, hid, hid) * 0.5
    y, yh, _ = rnn_ref("RNN", x, w, r, None, None, None, None, None, 1,
                       [lambda v: np.maximum(v, 0)])
    case("rnn_relu_batch_first", "RNN",
         [("in", x.transpose(1, 0, 2).copy()), ("w", w), ("w", r)],
         [y.transpose(2, 0, 1, 3), yh.transpose(1, 0, 2)],
         [("hidden_size", hid), ("activations", ["Relu"]), ("layout", 1)],
         opset=14)


def pool_and_batchnorm_cases():
    """MaxPool's Indices (both storage orders); BatchNormalization in
    training mode with its running statistics."""
    x = rand(1, 2, 5, 4)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)),
                constant_values=-np.inf)
    y = np.zeros((1, 2, 3, 2))
    ir, ic = np.zeros(y.shape, np.int64), np.zeros(y.shape, np.int64)
    for ch in range(2):
        for i in range(3):
            for j in range(2):
                win = xp[0, ch, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
                a, b = np.unravel_index(np.argmax(win), win.shape)
                h, w = 2 * i + a - 1, 2 * j + b - 1
                y[0, ch, i, j] = win[a, b]
                ir[0, ch, i, j] = ch * 20 + h * 4 + w
                ic[0, ch, i, j] = ch * 20 + w * 5 + h
    for name, order, idx in [("maxpool_indices", 0, ir),
                             ("maxpool_indices_column_major", 1, ic)]:
        case(name, "MaxPool", [("in", x)], [y, idx],
             [("kernel_shape", [3, 3]), ("pads", [1, 1, 1, 1]),
              ("strides", [2, 2]), ("storage_order", order)], opset=12)
    xb = rand(2, 3, 4)
    sc, bi, mu, var = rand(3), rand(3), rand(3), np.abs(rand(3)) + 0.5
    v = xb.astype(np.float64)
    m = v.mean(axis=(0, 2))
    s2 = v.var(axis=(0, 2))
    yb = (v - m.reshape(1, 3, 1)) / np.sqrt(s2.reshape(1, 3, 1) + 1e-3) * \
        sc.reshape(1, 3, 1) + bi.reshape(1, 3, 1)
    case("batchnorm_training", "BatchNormalization",
         [("in", xb), ("w", sc), ("w", bi), ("w", mu), ("w", var)],
         [yb, mu * 0.8 + m * 0.2, var * 0.8 + s2 * 0.2],
         [("epsilon", 1e-3), ("momentum", 0.8), ("training_mode", 1)],
         inplace=True, opset=15)


def loss_cases():
    """NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss with class
    weights, a negative ignore_index and each reduction."""
    x, w = rand(3, 4, 2, 2), np.abs(rand(4)) + 0.1
    t = rng.integers(0, 4, (3, 2, 2))
    t[0, 1, 0] = -1
    lp = x.astype(np.float64) - x.max(axis=1, keepdims=True)
    lp = lp - np.log(np.exp(lp).sum(axis=1, keepdims=True))
    tc = np.where(t < 0, 0, t)
    wt = np.where(t < 0, 0, w[tc])
    picked = np.take_along_axis(lp, tc[:, None], axis=1)[:, 0]
    loss = -picked * wt
    case("sce_weights_ignore_mean", "SoftmaxCrossEntropyLoss",
         [("in", x), ("w", t), ("w", w)], [loss.sum() / wt.sum(), lp],
         [("ignore_index", -1)])
    xl = lp.astype(np.float32)
    picked = np.take_along_axis(xl.astype(np.float64), tc[:, None],
                                axis=1)[:, 0]
    case("nll_none_ignore", "NegativeLogLikelihoodLoss",
         [("in", xl), ("w", t.astype(np.int32))],
         np.where(t < 0, 0, -picked), [("reduction", "none"),
                                        ("ignore_index", -1)])
    case("nll_sum_weights", "NegativeLogLikelihoodLoss",
         [("in", xl), ("w", tc), ("w", w)],
         -(picked * w[tc]).sum(), [("reduction", "sum")])


def scatter_cases():
    """ScatterElements with a reduction and negative indices, ScatterND
    on slices, GatherND with batch dims, EyeLike off the diagonal,
    ReverseSequence both ways round."""
    x = rand(3, 4)
    idx = np.array([[1, -1], [0, 0], [2, 3]])
    upd = rand(3, 2)
    y = x.astype(np.float64).copy()
    for i in range(3):
        for j in range(2):
            y[i, idx[i, j] % 4] += upd[i, j]
    case("scatterelements_add_axis1", "ScatterElements",
         [("in", x), ("w", idx), ("w", upd)], y,
         [("axis", 1), ("reduction", "add")], opset=16)
    d = ints(4, 3, 2)
    ind = np.array([[2], [-4]])
    u = ints(2, 3, 2)
    yn = d.copy()
    yn[2], yn[0] = u[0], u[1]
    case("scatternd_slices", "ScatterND", [("in", d), ("w", ind), ("w", u)],
         yn)
    g = rand(2, 3, 4)
    gi = np.array([[[1, 3], [0, -1]], [[2, 0], [1, 1]]], np.int32)
    gy = np.array([[g[b, gi[b, t, 0], gi[b, t, 1]] for t in range(2)]
                   for b in range(2)])
    case("gathernd_batch_dims", "GatherND", [("in", g), ("w", gi)], gy,
         [("batch_dims", 1)])
    case("eyelike_k", "EyeLike", [("in", rand(3, 5))],
         np.eye(3, 5, k=-1, dtype=np.int32), [("k", -1), ("dtype", 6)])
    r = ints(5, 3, 2)
    lens = np.array([5, 1, 3])
    ry = r.copy()
    for b in range(3):
        ry[:lens[b], b] = r[:lens[b], b][::-1]
    case("reversesequence_time_first", "ReverseSequence",
         [("in", r), ("w", lens)], ry, [("time_axis", 0),
                                         ("batch_axis", 1)], opset=10)
    rb = r.transpose(1, 0, 2).copy()
    case("reversesequence_batch_first", "ReverseSequence",
         [("in", rb), ("w", lens)], ry.transpose(1, 0, 2),
         [("time_axis", 1), ("batch_axis", 0)], opset=10)


if __name__ == "__main__":
    main()
    elementwise_cases()
    reduce_cases()
    norm_cases()
    matmul_cases()
    layout_cases()
    resize_cases()
    quant_cases()
    rnn_cases()
    pool_and_batchnorm_cases()
    loss_cases()
    scatter_cases()
