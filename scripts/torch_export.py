#!/usr/bin/env python3
"""torch_export.py - export an nn.Module for arenac with what it trains.

torch.onnx.export writes parameters and registered buffers alike as float
initializers, and a tied weight (GPT-2's wte and lm_head) once, under one
of its names: from the ONNX file alone nobody can tell a rotary cos table
from a weight.  export() runs the exporter in training mode at the newest
opset the installed torch supports (torch.onnx's own
_constants.ONNX_MAX_OPSET; 17 on torch 1.13) and writes into the model's
metadata_props what the module itself says:

  arenac.trainable  the ONNX initializers that are parameters with
                    requires_grad, comma separated
  arenac.frozen     parameters with requires_grad False
  arenac.buffers    initializers that are module buffers (named_buffers)
  arenac.ties       groups of torch names that share one Parameter
                    object, ';' between groups, ',' within one; the first
                    name of a group is the ONNX initializer's

Names: the export runs with export_params=False and
keep_initializers_as_inputs, so every parameter and buffer reaches the
graph as an input named by its state_dict key (torch names them so in
torch/onnx/utils.py _decide_input_format / _create_jit_graph); those
inputs are then made initializers whose bytes are external data in a file
never written (testdata/extdata.py), as arenac never reads weight bytes.
A parameter object the module reaches under two names (a tie) is one
graph input under the first name named_parameters() yields.

repeat_interleave: torch before 2.1 exports x.repeat_interleave(r, dim)
with an int r, when it has lost x's sizes (a later layer of a GQA Llama),
as SplitToSequence into a Loop whose body reshapes each piece with zeros
that, by ONNX's Reshape, copy the wrong dims
(symbolic_opset13.repeat_interleave: [B, 1, r, T, d] to [0, -1, 0, 0]
is [B, d, r, T]); the model then runs nowhere.  export() writes it as
torch's later exporters do (onnxscript's torch_lib
aten_repeat_interleave_self_int, pytorch PR #100575): x unsqueezed after
dim, expanded r times there, reshaped to x's sizes with dim's times r,
the sizes taken from Shape(x) at run time.

CLI:  torch_export.py MODULE:FACTORY OUT.onnx [--opset N]
FACTORY() returns (model, example_inputs_tuple).
"""
import importlib
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testdata"))
import extdata  # noqa: E402  (testdata/extdata.py)


def best_opset():
    """The newest opset the installed exporter writes."""
    try:
        from torch.onnx import _constants
        return _constants.ONNX_MAX_OPSET
    except (ImportError, AttributeError):
        from torch.onnx import symbolic_helper
        return symbolic_helper._onnx_main_opset


def tie_groups(model):
    """Torch names per Parameter object, in named_parameters() order; a
    group of two or more names is a tie.  Walks every module's own
    _parameters, as named_parameters() drops the repeats."""
    by_id, order = {}, []
    for mname, mod in model.named_modules(remove_duplicate=False):
        for pname, p in mod._parameters.items():
            if p is None:
                continue
            full = mname + "." + pname if mname else pname
            if id(p) not in by_id:
                by_id[id(p)] = (p, [])
                order.append(id(p))
            if full not in by_id[id(p)][1]:
                by_id[id(p)][1].append(full)
    first = {id(p): n for n, p in model.named_parameters()}
    groups = []
    for i in order:
        p, names = by_id[i]
        names.sort(key=lambda n: n != first[i])
        groups.append((p, names))
    return groups


def metadata(model, onnx_inputs):
    """The arenac.* entries for a model whose graph inputs (names) are
    onnx_inputs.  Raises ValueError when a parameter or buffer has no
    graph input (the exporter dropped or renamed it)."""
    have = set(onnx_inputs)
    trainable, frozen, ties = [], [], []
    for p, names in tie_groups(model):
        if names[0] not in have:
            # A parameter the forward pass never reads is not exported.
            continue
        (trainable if p.requires_grad else frozen).append(names[0])
        if len(names) > 1:
            ties.append(",".join(names))
    buffers = [n for n, _ in model.named_buffers() if n in have]
    return {"arenac.trainable": ",".join(trainable),
            "arenac.frozen": ",".join(frozen),
            "arenac.buffers": ",".join(buffers),
            "arenac.ties": ";".join(ties)}


def repeat_interleave(g, self, repeats, dim=None, output_size=None):
    """aten::repeat_interleave with an int repeat count along a given dim
    as Unsqueeze, Expand, Reshape (module comment); other forms as the
    installed exporter writes them."""
    from torch.onnx import symbolic_helper as sh
    from torch.onnx import symbolic_opset13
    r = sh._maybe_get_const(repeats, "i")
    rank = sh._get_tensor_rank(self)
    if sh._is_none(dim) or not isinstance(r, int) or rank is None:
        return symbolic_opset13.repeat_interleave(g, self, repeats, dim,
                                                  output_size)
    dim = sh._get_const(dim, "i", "dim") % rank

    def ints(*v):
        return g.op("Constant", value_t=torch.tensor(v, dtype=torch.long))

    shape = g.op("Shape", self)

    def sizes(lo, hi):
        return g.op("Slice", shape, ints(lo), ints(hi), ints(0))

    x = g.op("Unsqueeze", self, ints(dim + 1))
    x = g.op("Expand", x, g.op("Concat", sizes(0, dim + 1), ints(r),
                               sizes(dim + 1, rank), axis_i=0))
    return g.op("Reshape", x, g.op("Concat", sizes(0, dim), ints(-1),
                                   sizes(dim + 1, rank), axis_i=0))


def export(model, inputs, path, opset=None, names=None, output="logits"):
    """Export model(*inputs) to path in training mode with arenac.*
    metadata; returns the onnx ModelProto."""
    import onnx
    opset = opset or best_opset()
    if names is None:
        names = ["input%d" % i if i else "input" for i in range(len(inputs))]
    model.train()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.register_custom_op_symbolic("aten::repeat_interleave",
                                               repeat_interleave, 13)
        try:
            torch.onnx.export(model, tuple(inputs), path,
                              export_params=False,
                              keep_initializers_as_inputs=True,
                              training=torch.onnx.TrainingMode.TRAINING,
                              do_constant_folding=False, opset_version=opset,
                              input_names=list(names), output_names=[output])
        finally:
            torch.onnx.unregister_custom_op_symbolic(
                "aten::repeat_interleave", 13)
    m = onnx.load(path)
    meta = metadata(model, [i.name for i in m.graph.input])
    extdata.inputs_to_external(m, keep=list(names),
                               location=os.path.basename(path) + ".data")
    del m.metadata_props[:]
    for k, v in meta.items():
        e = m.metadata_props.add()
        e.key, e.value = k, v
    extdata.check(m)
    onnx.save(m, path)
    return m


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("factory", help="MODULE:FUNCTION returning "
                    "(model, example_inputs)")
    ap.add_argument("out")
    ap.add_argument("--opset", type=int, default=None)
    a = ap.parse_args(argv)
    modname, _, fn = a.factory.partition(":")
    if not fn:
        ap.error("factory must be MODULE:FUNCTION")
    model, inputs = getattr(importlib.import_module(modname), fn)()
    m = export(model, inputs, a.out, a.opset)
    for e in m.metadata_props:
        print("%s=%s" % (e.key, e.value))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
