#!/usr/bin/env python3
"""Writes testdata/lenet.onnx: the tutorial LeNet with a symbolic batch N,
and testdata/lenet_output_0.pb: its logits for batch 1 and the input
convention of the shared light_* models (element i of the flattened input is
i/n), computed here with numpy, independently of arenac and its runtime.

Conv(1->20,5x5) Relu MaxPool2 Conv(20->50,5x5) Relu MaxPool2 Reshape(800)
Gemm(800->500) Relu Gemm(500->10); 431,080 float32 parameters.  Weights are
small deterministic values so the model also runs in a reference runtime.
"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def weight(name, shape, rng):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    w = rng.uniform(-1, 1, size=shape).astype(np.float32) / np.sqrt(fan_in)
    return numpy_helper.from_array(w, name)


def conv(x, w, b):
    n, c, h, wd = x.shape
    k = w.shape[2]
    cols = np.stack([x[:, :, i:i + h - k + 1, j:j + wd - k + 1]
                     for i in range(k) for j in range(k)], axis=2)
    # cols: n, c, k*k, oh, ow; w: m, c, k, k
    y = np.einsum("nckhw,mck->nmhw", cols, w.reshape(w.shape[0], c, k * k))
    return y + b[None, :, None, None]


def maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def forward(inits):
    p = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in inits}
    x = (np.arange(784, dtype=np.float32) / np.float32(784)).astype(np.float64)
    x = x.reshape(1, 1, 28, 28)
    y = maxpool2(np.maximum(conv(x, p["conv1_w"], p["conv1_b"]), 0))
    y = maxpool2(np.maximum(conv(y, p["conv2_w"], p["conv2_b"]), 0))
    y = np.maximum(y.reshape(1, 800) @ p["fc1_w"].T + p["fc1_b"], 0)
    return (y @ p["fc2_w"].T + p["fc2_b"]).astype(np.float32)


def main(path):
    rng = np.random.default_rng(2016)
    inits = [
        weight("conv1_w", [20, 1, 5, 5], rng), weight("conv1_b", [20], rng),
        weight("conv2_w", [50, 20, 5, 5], rng), weight("conv2_b", [50], rng),
        weight("fc1_w", [500, 800], rng), weight("fc1_b", [500], rng),
        weight("fc2_w", [10, 500], rng), weight("fc2_b", [10], rng),
        numpy_helper.from_array(np.array([-1, 800], dtype=np.int64), "flat_shape"),
    ]
    n = helper.make_node
    nodes = [
        n("Conv", ["input", "conv1_w", "conv1_b"], ["conv1"], name="conv1", kernel_shape=[5, 5]),
        n("Relu", ["conv1"], ["relu1"], name="relu1"),
        n("MaxPool", ["relu1"], ["pool1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["pool1", "conv2_w", "conv2_b"], ["conv2"], name="conv2", kernel_shape=[5, 5]),
        n("Relu", ["conv2"], ["relu2"], name="relu2"),
        n("MaxPool", ["relu2"], ["pool2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
        n("Reshape", ["pool2", "flat_shape"], ["flat"], name="flatten"),
        n("Gemm", ["flat", "fc1_w", "fc1_b"], ["fc1"], name="fc1", transB=1),
        n("Relu", ["fc1"], ["relu3"], name="relu3"),
        n("Gemm", ["relu3", "fc2_w", "fc2_b"], ["logits"], name="fc2", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "lenet",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 1, 28, 28])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
        inits)
    model = helper.make_model(graph, producer_name="arenac-testdata",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    params = sum(int(np.prod(t.dims)) for t in inits if t.data_type == TensorProto.FLOAT)
    assert params == 431080, params
    onnx.save(model, path)
    out = numpy_helper.from_array(forward(inits), "logits")
    with open(path.replace(".onnx", "_output_0.pb"), "wb") as f:
        f.write(out.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "testdata/lenet.onnx")
