#!/usr/bin/python3
"""gen_rt_cases.py -- one-node cases for the reference runtime's kernels.

Writes, on stdout, small random cases with numpy-computed expected outputs
in the text format tests/rt_cases.c reads:

    case NAME OP INPLACE        INPLACE: ok (elementwise: must also run with
                                the output on input 0) or refused (an
                                in-place plan must be an error)
    opset N                     the op's opset
    attr NAME i V | f V | s TEXT | ints N V... | floats N V...
    tensor ROLE TYPE RANK DIMS...   ROLE: in (arena), w (weights blob),
    VALUES...                       none (omitted), out (an expected
                                    output, after the inputs); TYPE: f32
                                    f64 f16 i64 i32 i16 i8 u8 u16 u32 u64
                                    bool (float16 as its bit patterns)

The references are written independently of the C kernels (numpy slicing,
np.pad, np.repeat, einsum), in float64, rounded to float32 at the end.
"""
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


def put_tensor(role, a):
    if a is None:
        out.write("tensor none f32 0\n\n")
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
    list of them, float64 ones written as float32 unless keep."""
    out.write("case %s %s %s\nopset %d\n" % (name, op,
                                              "ok" if inplace else "refused",
                                              opset))
    for k, v in attrs:
        if isinstance(v, str):
            out.write("attr %s s %s\n" % (k, v))
        elif isinstance(v, float):
            out.write("attr %s f %r\n" % (k, v))
        elif isinstance(v, int):
            out.write("attr %s i %d\n" % (k, v))
        elif all(isinstance(e, int) for e in v):
            out.write("attr %s ints %d %s\n" % (k, len(v),
                                                " ".join(map(str, v))))
        else:
            out.write("attr %s floats %d %s\n" % (k, len(v), " ".join(
                repr(float(e)) for e in v)))
    for role, a in inputs:
        put_tensor(role, a)
    for a in (y if isinstance(y, list) else [y]):
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


main()
