#!/usr/bin/env python3
"""gen_quant_models.py - quantized and ONNX Runtime-fused models for
tests/e2e_quant.sh.

- quant_cnn_int8: a small int8 CNN in ONNX's own ops (QuantizeLinear,
  QLinearConv with per-channel weight scales, MaxPool on uint8,
  DequantizeLinear, QLinearMatMul), checked with onnx's checker;
- quant_int4_blocked (opset 21): int4 and uint4 weights dequantized per
  block of 16 (one stored raw, one in int32_data), a float8e4m3fn round
  trip and an int4 activation, for exact sub-byte sizes;
- quant_dynamic_matmul: what dynamic quantization makes of MatMuls
  (DynamicQuantizeLinear + MatMulInteger, com.microsoft's
  DynamicQuantizeMatMul and MatMulIntegerToFloat);
- gpt2_fused: one GPT-2 block as ORT's transformer optimizer fuses it
  (EmbedLayerNormalization, Attention with past/present,
  SkipLayerNormalization, FastGelu);
- gqa_decoder: a two-layer LLaMA-style decoder step as ORT GenAI builds it
  (SimplifiedLayerNormalization, MatMulNBits with 4-bit weights,
  GroupQueryAttention with rotary embedding and past/present KV caches,
  SkipSimplifiedLayerNormalization).

onnx 1.12 (Debian) knows neither opset 21 nor the new element types nor
com.microsoft's ops, so only the first model goes through the checker; the
others are written as built, with type codes set as ints.  Weights come
from a fixed seed: the files are the same on every run.
Run from the repository root: /usr/bin/python3 testdata/gen_quant_models.py
"""
import os

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT
MS = "com.microsoft"
# onnx.proto codes newer than onnx 1.12.
FLOAT8E4M3FN, UINT4, INT4 = 17, 21, 22
rng = np.random.RandomState(20261203)
n = helper.make_node


def arr(name, values, dtype):
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


def rand(name, shape, dtype=np.float32, lo=-1.0, hi=1.0):
    if np.issubdtype(dtype, np.integer):
        return arr(name, rng.randint(int(lo), int(hi), shape), dtype)
    return arr(name, rng.uniform(lo, hi, shape), dtype)


def raw_tensor(name, code, dims, data, raw=True):
    """A tensor of any type code: bytes in raw_data, or one byte per
    int32_data entry (the form onnx.proto gives sub-byte and float8)."""
    t = TensorProto()
    t.name = name
    t.data_type = code
    t.dims.extend(dims)
    if raw:
        t.raw_data = bytes(data)
    else:
        t.int32_data.extend(int(b) for b in data)
    return t


def packed(name, code, dims, nibbles, raw=True):
    """A 4-bit tensor: two values a byte, the first in the low bits."""
    v = np.asarray(nibbles, np.uint8).ravel() & 0xF
    if v.size % 2:
        v = np.append(v, 0)
    return raw_tensor(name, code, dims, (v[0::2] | (v[1::2] << 4)), raw)


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def write(name, nodes, inputs, outputs, inits, opsets, check=False):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v)
                                            for d, v in opsets],
                          producer_name="gen_quant_models")
    m.ir_version = 10 if any(v >= 21 for _, v in opsets) else 8
    if check:
        checker.check_model(m)
    save(m, os.path.join(HERE, name + ".onnx"))


def cnn_int8():
    nodes = [
        n("QuantizeLinear", ["image", "in_s", "in_z"], ["image_q"]),
        n("QLinearConv", ["image_q", "in_s", "in_z", "w1", "w1_s", "w1_z",
                          "c1_s", "c1_z", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        n("QLinearConv", ["c1", "c1_s", "c1_z", "w2", "w2_s", "w2_z",
                          "c2_s", "c2_z", "b2"], ["c2"], pads=[1, 1, 1, 1],
          strides=[2, 2]),
        n("MaxPool", ["c2"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        n("DequantizeLinear", ["pool", "c2_s", "c2_z"], ["pool_f"]),
        n("GlobalAveragePool", ["pool_f"], ["gap"]),
        n("Flatten", ["gap"], ["flat"]),
        n("QuantizeLinear", ["flat", "f_s", "f_z"], ["flat_q"]),
        n("QLinearMatMul", ["flat_q", "f_s", "f_z", "fc", "fc_s", "fc_z",
                            "out_s", "out_z"], ["logits_q"]),
        n("DequantizeLinear", ["logits_q", "out_s", "out_z"], ["logits"]),
    ]
    inits = [
        arr("in_s", 1 / 255, np.float32), arr("in_z", 0, np.uint8),
        rand("w1", (8, 3, 3, 3), np.int8, -127, 128),
        arr("w1_s", np.arange(1, 9) / 512, np.float32),
        arr("w1_z", np.zeros(8), np.int8),
        arr("c1_s", 0.05, np.float32), arr("c1_z", 3, np.uint8),
        rand("b1", (8,), np.int32, -1000, 1000),
        rand("w2", (16, 8, 3, 3), np.int8, -127, 128),
        arr("w2_s", np.linspace(0.001, 0.004, 16), np.float32),
        arr("w2_z", np.zeros(16), np.int8),
        arr("c2_s", 0.1, np.float32), arr("c2_z", 5, np.uint8),
        rand("b2", (16,), np.int32, -1000, 1000),
        arr("f_s", 0.02, np.float32), arr("f_z", 128, np.uint8),
        rand("fc", (16, 10), np.int8, -127, 128),
        arr("fc_s", np.full(10, 0.01), np.float32),
        arr("fc_z", np.zeros(10), np.int8),
        arr("out_s", 0.25, np.float32), arr("out_z", 128, np.uint8),
    ]
    write("quant_cnn_int8", nodes, [vi("image", [1, 3, 32, 32])],
          [vi("logits", [1, 10])], inits, [("", 13)], check=True)


def int4_blocked():
    nodes = [
        n("DequantizeLinear", ["w4", "w4_s"], ["w"], axis=0, block_size=16),
        n("DequantizeLinear", ["wu4", "wu4_s", "wu4_z"], ["wu"], axis=0,
          block_size=16),
        n("QuantizeLinear", ["x", "x8_s", "x8_z"], ["x8"]),
        n("DequantizeLinear", ["x8", "x8_s", "x8_z"], ["xf"]),
        n("MatMul", ["xf", "w"], ["y"]),
        n("MatMul", ["x", "wu"], ["yu"]),
        n("QuantizeLinear", ["y", "y_s"], ["y4"], output_dtype=INT4),
        n("DequantizeLinear", ["y4", "y_s"], ["y_out"]),
    ]
    inits = [
        packed("w4", INT4, [64, 33], rng.randint(0, 16, 64 * 33)),
        rand("w4_s", (4, 33), np.float32, 0.01, 0.1),
        packed("wu4", UINT4, [64, 33], rng.randint(0, 16, 64 * 33),
               raw=False),
        rand("wu4_s", (4, 33), np.float32, 0.01, 0.1),
        packed("wu4_z", UINT4, [4, 33], np.full(4 * 33, 8), raw=False),
        arr("x8_s", 0.5, np.float32),
        raw_tensor("x8_z", FLOAT8E4M3FN, [], b"\x00"),
        arr("y_s", 0.125, np.float32),
    ]
    write("quant_int4_blocked", nodes, [vi("x", [3, 64])],
          [vi("y_out", [3, 33]), vi("yu", [3, 33]), vi("y4", [3, 33], INT4)],
          inits, [("", 21)])


def dynamic_matmul():
    nodes = [
        n("DynamicQuantizeLinear", ["x"], ["x_q", "x_s", "x_z"]),
        n("MatMulInteger", ["x_q", "w", "x_z", "w_z"], ["acc"]),
        n("Cast", ["acc"], ["acc_f"], to=F),
        n("Mul", ["x_s", "w_s"], ["scale"]),
        n("Mul", ["acc_f", "scale"], ["mm"]),
        n("Add", ["mm", "bias"], ["h"]),
        n("DynamicQuantizeMatMul", ["h", "w2", "w2_s", "w2_z", "b2"], ["z"],
          domain=MS),
        n("MatMulIntegerToFloat", ["x_q", "w3", "x_s", "w3_s", "x_z",
                                   "w3_z"], ["t"], domain=MS),
    ]
    inits = [
        rand("w", (64, 32), np.int8, -127, 128), arr("w_z", 0, np.int8),
        arr("w_s", 0.003, np.float32), rand("bias", (32,)),
        rand("w2", (32, 32), np.int8, -127, 128),
        arr("w2_s", np.full(32, 0.004), np.float32),
        arr("w2_z", np.zeros(32), np.int8), rand("b2", (32,)),
        rand("w3", (64, 8), np.uint8, 0, 256),
        arr("w3_s", 0.002, np.float32), arr("w3_z", 128, np.uint8),
    ]
    write("quant_dynamic_matmul", nodes, [vi("x", ["batch", 16, 64])],
          [vi("z", ["batch", 16, 32]), vi("t", ["batch", 16, 8])], inits,
          [("", 13), (MS, 1)])


def gpt2_fused():
    hid, heads, vocab = 32, 2, 128
    nodes = [
        n("EmbedLayerNormalization", ["input_ids", "", "wte", "wpe", "",
                                      "ln0_g", "ln0_b", "", "position_ids"],
          ["ln1", "", "emb_sum"], domain=MS, epsilon=1e-5),
        n("Attention", ["ln1", "attn_w", "attn_b", "attention_mask",
                        "past_0"], ["attn", "present_0"], domain=MS,
          num_heads=heads, unidirectional=1),
        n("MatMul", ["attn", "proj_w"], ["proj"]),
        n("SkipLayerNormalization", ["proj", "emb_sum", "ln2_g", "ln2_b",
                                     "proj_b"], ["ln2", "", "", "res1"],
          domain=MS, epsilon=1e-5),
        n("MatMul", ["ln2", "fc_w"], ["fc"]),
        n("FastGelu", ["fc", "fc_b"], ["gelu"], domain=MS),
        n("MatMul", ["gelu", "fc2_w"], ["fc2"]),
        n("SkipLayerNormalization", ["fc2", "res1", "lnf_g", "lnf_b",
                                     "fc2_b"], ["lnf"], domain=MS,
          epsilon=1e-5),
        n("MatMul", ["lnf", "lm_w"], ["logits"]),
    ]
    inits = [
        rand("wte", (vocab, hid)), rand("wpe", (128, hid)),
        arr("ln0_g", np.ones(hid), np.float32),
        arr("ln0_b", np.zeros(hid), np.float32),
        rand("attn_w", (hid, 3 * hid)), rand("attn_b", (3 * hid,)),
        rand("proj_w", (hid, hid)), rand("proj_b", (hid,)),
        arr("ln2_g", np.ones(hid), np.float32),
        arr("ln2_b", np.zeros(hid), np.float32),
        rand("fc_w", (hid, 4 * hid)), rand("fc_b", (4 * hid,)),
        rand("fc2_w", (4 * hid, hid)), rand("fc2_b", (hid,)),
        arr("lnf_g", np.ones(hid), np.float32),
        arr("lnf_b", np.zeros(hid), np.float32),
        rand("lm_w", (hid, vocab)),
    ]
    i32 = TensorProto.INT32
    write("gpt2_fused", nodes,
          [vi("input_ids", ["batch", "seq"], i32),
           vi("position_ids", ["batch", "seq"], i32),
           vi("attention_mask", ["batch", "total_seq"], i32),
           vi("past_0", [2, "batch", heads, "past_seq", hid // heads])],
          [vi("logits", ["batch", "seq", vocab]),
           vi("present_0", [2, "batch", heads, "total_seq", hid // heads])],
          inits, [("", 13), (MS, 1)])


def nbits(name, k, nn, block=32):
    """MatMulNBits weights: N x K in 4 bits, [N, K / block, block / 2]."""
    return [rand(name, (nn, k // block, block // 2), np.uint8, 0, 256),
            rand(name + "_s", (nn * (k // block),), np.float32, 0.01, 0.1)]


def gqa_decoder():
    hid, heads, kvh, head, inter, vocab, layers = 64, 4, 2, 16, 128, 256, 2
    qkv = (heads + 2 * kvh) * head
    i64 = TensorProto.INT64

    def mm4(x, w, out, k, nn):
        return n("MatMulNBits", [x, w, w + "_s"], [out], domain=MS, K=k,
                 N=nn, bits=4, block_size=32)

    nodes = [
        n("Gather", ["embed", "input_ids"], ["h0"]),
        n("ReduceSum", ["attention_mask", "ax1"], ["mask_sum"], keepdims=0),
        n("Sub", ["mask_sum", "one"], ["seqlens64"]),
        n("Cast", ["seqlens64"], ["seqlens_k"], to=TensorProto.INT32),
        n("Shape", ["attention_mask"], ["mask_shape"]),
        n("Gather", ["mask_shape", "one"], ["total64"], axis=0),
        n("Cast", ["total64"], ["total_seq_len"], to=TensorProto.INT32),
        n("SimplifiedLayerNormalization", ["h0", "ln_0"], ["n1_0"],
          epsilon=1e-6),
    ]
    inits = [rand("embed", (vocab, hid)), arr("ax1", [1], np.int64),
             arr("one", 1, np.int64),
             rand("cos_cache", (128, head // 2)),
             rand("sin_cache", (128, head // 2)),
             rand("lm_head", (hid, vocab))]
    inputs = [vi("input_ids", ["batch", "seq"], i64),
              vi("attention_mask", ["batch", "total_seq"], i64)]
    outputs = [vi("logits", ["batch", "seq", vocab])]
    res = "h0"
    for i in range(layers):
        pk, pv = "past_key_values.%d.key" % i, "past_key_values.%d.value" % i
        ck, cv = "present.%d.key" % i, "present.%d.value" % i
        nxt = "ln_%d" % (i + 1) if i + 1 < layers else "ln_final"
        last = "n1_%d" % (i + 1) if i + 1 < layers else "final"
        nodes += [
            mm4("n1_%d" % i, "qkv_%d" % i, "qkv_out_%d" % i, hid, qkv),
            n("GroupQueryAttention", ["qkv_out_%d" % i, "", "", pk, pv,
                                      "seqlens_k", "total_seq_len",
                                      "cos_cache", "sin_cache"],
              ["attn_%d" % i, ck, cv], domain=MS, num_heads=heads,
              kv_num_heads=kvh, do_rotary=1),
            mm4("attn_%d" % i, "o_%d" % i, "o_out_%d" % i, hid, hid),
            n("SkipSimplifiedLayerNormalization",
              ["o_out_%d" % i, res, "post_%d" % i],
              ["n2_%d" % i, "", "", "res_%d" % i], domain=MS, epsilon=1e-6),
            mm4("n2_%d" % i, "gate_%d" % i, "g_%d" % i, hid, inter),
            n("Sigmoid", ["g_%d" % i], ["gs_%d" % i]),
            n("Mul", ["g_%d" % i, "gs_%d" % i], ["silu_%d" % i]),
            mm4("n2_%d" % i, "up_%d" % i, "u_%d" % i, hid, inter),
            n("Mul", ["silu_%d" % i, "u_%d" % i], ["act_%d" % i]),
            mm4("act_%d" % i, "down_%d" % i, "d_%d" % i, inter, hid),
            n("SkipSimplifiedLayerNormalization",
              ["d_%d" % i, "res_%d" % i, nxt], [last, "", "",
                                                "res2_%d" % i],
              domain=MS, epsilon=1e-6),
        ]
        inits += ([arr("ln_%d" % i, np.ones(hid), np.float32),
                   arr("post_%d" % i, np.ones(hid), np.float32)] +
                  nbits("qkv_%d" % i, hid, qkv) + nbits("o_%d" % i, hid, hid) +
                  nbits("gate_%d" % i, hid, inter) +
                  nbits("up_%d" % i, hid, inter) +
                  nbits("down_%d" % i, inter, hid))
        inputs += [vi(pk, ["batch", kvh, "past_seq", head]),
                   vi(pv, ["batch", kvh, "past_seq", head])]
        outputs += [vi(ck, ["batch", kvh, "total_seq", head]),
                    vi(cv, ["batch", kvh, "total_seq", head])]
        res = "res2_%d" % i
    nodes.append(n("MatMul", ["final", "lm_head"], ["logits"]))
    inits.append(arr("ln_final", np.ones(hid), np.float32))
    write("gqa_decoder", nodes, inputs, outputs, inits,
          [("", 14), (MS, 1)])


if __name__ == "__main__":
    cnn_int8()
    int4_blocked()
    dynamic_matmul()
    gpt2_fused()
    gqa_decoder()
