#!/usr/bin/env python3
"""e2e_unroll.py - sequence values and the Loops over them, unrolled
(frontend/unroll.c), end to end.

  - A graph built here the way torch.onnx.export writes repeat_interleave
    with a run-time count (symbolic_opset13.repeat_interleave):
    SplitToSequence of x along axis 1, a Loop whose trip count is x's
    extent there (Shape, Gather: folded), whose body takes piece i
    (SequenceAt), repeats it (Concat) and SequenceInserts it, besides a
    carried sum and two scan outputs (named as arenac names its own
    tensors); then ConcatFromSequence.  The plan
    (--selfcheck) has the shapes numpy gives for the same arithmetic,
    steps that are tensor ops only (one Split, the iterations' Concats,
    the scan output's stacking) and no Loop or sequence op; at opset 11
    (attribute forms of Split/Unsqueeze) the same.  A training step
    plans through it (Split, Concat and Identity have gradient rules).
  - SplitToSequence into 70 pieces (a Slice each, past a Split's 64
    outputs), keepdims=0, SequenceLength, ConcatFromSequence with
    new_axis=1.
  - The ONNX zoo test test_sequence_model1 (shared onnx-small; inserts
    at a position, SequenceAt): its reference output by execution.
  - torch 1.13 itself: x.repeat_interleave(2, dim=-1) exported with a
    dynamic axes at opsets 14 and 17 (the export writes the
    SplitToSequence/Loop form), planned at the sizes torch ran: the
    output shape torch computed.  Along axis 1 with dynamic trailing dims
    the export's Reshape is wrong by ONNX (llama_ri's case): the plan has
    the ONNX shape, [4, 16, 2, 16] for torch's [4, 4, 16, 8].
  - By execution (when `make test-runtime` has built the reference
    runtime): each unrolled plan runs in runtime/ from a random-filled
    arena and its output matches numpy's (y, acc, scan in turn, each the
    model's only output) and torch's own output, rtol 1e-6.
  - Bad input, exit 2 and the Loop named: a trip count known only at run
    time, a condition that may stop the Loop early, a Loop too large to
    unroll; and a sequence in an If branch (only the top graph's are
    rewritten), the op named.

Prints "e2e_unroll: N passed, N failed"; exits 1 on failure.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
TMP = tempfile.mkdtemp(prefix="arenac_unroll")
T = Tally("e2e_unroll")
SKIPPED = []
vi = helper.make_tensor_value_info

SEQ_OPS = {"SequenceEmpty", "SequenceConstruct", "SequenceInsert",
           "SequenceErase", "SequenceAt", "SequenceLength",
           "SplitToSequence", "ConcatFromSequence", "Loop"}


def arenac(*args):
    return subprocess.run([ARENAC] + list(args), capture_output=True,
                          text=True)


def const(name, value, dtype=TensorProto.INT64):
    arr = np.array(value)
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name + "_v", dtype, arr.shape, arr.flatten().tolist()))


def repeat_model(opset, trip=None, cond_out=None, shape=(2, 3, 4),
                 only=None):
    """x = x_in @ w, [2, 3, 4]: y = x repeated twice along axis 1 through a Loop over
    a sequence, acc = sum of x's pieces, scan = the pieces stacked.
    trip: a graph input's name or a constant for the trip count (else
    Shape/Gather of x);
    cond_out: a body node list writing 'c_out' (else Identity(c_in));
    only: the one graph output (rt_run compares the first one)."""
    nodes = [helper.make_node("MatMul", ["x_in", "w"], ["x"]),
             helper.make_node("Shape", ["x"], ["shape"]),
             const("one", 1),
             helper.make_node("Gather", ["shape", "one"], ["m"], axis=0),
             helper.make_node("SplitToSequence", ["x"], ["pieces"], axis=1),
             helper.make_node("SequenceEmpty", [], ["empty"],
                              dtype=TensorProto.FLOAT),
             const("zeros", np.zeros((shape[0], 1, shape[2])).tolist(),
                   TensorProto.FLOAT)]
    body_nodes = [helper.make_node("SequenceAt", ["pieces", "i"], ["p"]),
                  helper.make_node("Concat", ["p", "p"], ["r"], axis=1),
                  helper.make_node("SequenceInsert", ["s_in", "r"],
                                   ["s_out"]),
                  helper.make_node("Add", ["acc_in", "p"], ["acc_out"]),
                  # Names arenac's own could take (LOOP#iteration0, ...).
                  helper.make_node("Identity", ["p"], ["iteration0"]),
                  helper.make_node("Neg", ["p"], ["axes"])]
    body_nodes += cond_out or [helper.make_node("Identity", ["c_in"],
                                                ["c_out"])]
    body = helper.make_graph(
        body_nodes, "body",
        [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("s_in", TensorProto.FLOAT,
                                                None),
         vi("acc_in", TensorProto.FLOAT, None)],
        [vi("c_out", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("s_out", TensorProto.FLOAT,
                                                None),
         vi("acc_out", TensorProto.FLOAT, None),
         vi("iteration0", TensorProto.FLOAT, None),
         vi("axes", TensorProto.FLOAT, None)])
    if isinstance(trip, int):
        nodes.append(const("m_const", trip))
    nodes += [helper.make_node("Loop", [{None: "m", str: trip, int: "m_const"}
                                        .get(trip if trip is None
                                             else type(trip)), "", "empty",
                                        "zeros"],
                               ["seq", "acc", "scan", "scan2"], body=body,
                               name="repeat_loop"),
              helper.make_node("ConcatFromSequence", ["seq"], ["y"],
                               axis=1)]
    inputs = [vi("x_in", TensorProto.FLOAT, list(shape))]
    w = helper.make_tensor("w", TensorProto.FLOAT, [shape[2], shape[2]],
                           np.eye(shape[2]).flatten().tolist())
    if isinstance(trip, str):
        inputs.append(vi(trip, TensorProto.INT64, []))
    outs = [only] if only else ["y", "acc", "scan", "scan2"]
    g = helper.make_graph(nodes, "repeat", inputs,
                          [vi(o, TensorProto.FLOAT, None) for o in outs],
                          [w])
    return helper.make_model(g, opset_imports=[
        helper.make_opsetid("", opset)])


def save(model, name):
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(model, path)
    return path


def runs(what, path, inputs, want, *opts):
    """Runs path's plan in the reference runtime (tests/rt_run.c) on
    inputs {name: array}; its first output against want."""
    build = os.environ.get("BUILD", os.path.join(ROOT, "build"))
    lib = os.path.join(build, "libarenac_rt.a")
    pb = [os.path.join(build, "obj", "tests", "pbread.o"),
          os.path.join(build, "obj", "gen", "onnx.pb-c.o")]
    if not all(os.path.exists(f) for f in [lib] + pb):
        if not SKIPPED:
            print("skipped: runs by execution: the runtime is not built "
                  "(make test-runtime)")
        SKIPPED.append(what)
        return
    base = os.path.join(TMP, "rt_%d" % abs(hash(what)))
    r = arenac("-q", "--prefix", "m", "-o", base + ".h", "--weights",
               base + ".bin", *opts, path)
    if not T.check(what + ": header written", r.returncode == 0, r.stderr):
        return
    cc = subprocess.run(
        shlex.split(os.environ.get("CC") or "cc") + ["-std=c11", "-O0",
         "-D_POSIX_C_SOURCE=200809L", "-I" + os.path.join(ROOT, "runtime"),
         "-I" + os.path.join(ROOT, "tests"), "-I" + os.path.join(build, "gen"),
         "-I" + TMP, '-DARENAC_HEADER="%s.h"' % os.path.basename(base),
         "-DLO=m", "-DUP=M", "-DM_DEFINE_ARENA", "-DM_DEFINE_TABLES", "-o",
         base, os.path.join(ROOT, "tests", "rt_run.c")] + pb +
        [lib, "-lprotobuf-c", "-lm"], capture_output=True, text=True)
    if not T.check(what + ": runner builds", cc.returncode == 0,
                   cc.stderr[-600:]):
        return
    args = [base, "--fill", "random", "--rtol", "1e-6", "--atol", "1e-6"]
    for name, value in inputs.items():
        f = "%s_%s.pb" % (base, name)
        with open(f, "wb") as out:
            out.write(numpy_helper.from_array(value, name)
                      .SerializeToString())
        args += ["--input", f]
    with open(base + "_want.pb", "wb") as out:
        out.write(numpy_helper.from_array(want, "want").SerializeToString())
    r = subprocess.run(args + [base + ".bin", base + "_want.pb"],
                       capture_output=True, text=True)
    T.check(what + ": runs and matches", r.returncode == 0,
            (r.stdout + r.stderr)[-400:])


def plan(path, *opts):
    r = arenac("-q", "--selfcheck", "--json", "-", *opts, path)
    if r.returncode:
        return None, r
    return json.loads(r.stdout), r


def hand_built():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    want = {"y": np.repeat(x, 2, axis=1).shape,
            "acc": x.sum(axis=1, keepdims=True).shape,
            "scan": np.stack(np.split(x, 3, axis=1)).shape,
            "scan2": np.stack(np.split(x, 3, axis=1)).shape}
    for opset in (11, 13, 17):
        what = "hand-built, opset %d" % opset
        path = save(repeat_model(opset), "repeat%d" % opset)
        rep, r = plan(path)
        if not T.check(what + ": plans", rep is not None, r.stderr):
            continue
        shapes = {t["name"]: tuple(t["shape"]) for t in rep["tensors"]}
        for name, shape in want.items():
            T.check("%s: %s is %s" % (what, name, list(shape)),
                    shapes.get(name) == shape, shapes.get(name))
        ops = [s["op"] for s in rep["steps"]]
        T.check(what + ": no Loop or sequence step",
                not SEQ_OPS & set(ops), ops)
        # One Split of x; per iteration the repeat's Concat and the scan
        # pieces' Unsqueezes; y's Concat and the scans' stacking Concats.
        T.check(what + ": one Split, 3 + 3 Concats, 6 Unsqueezes",
                ops.count("Split") == 1 and ops.count("Concat") == 6 and
                ops.count("Unsqueeze") == 6, ops)
        T.check(what + ": tensors named by iteration",
                any(n.startswith("repeat_loop[2]/") for n in shapes),
                sorted(shapes)[:8])
    pieces = np.split(x, 3, axis=1)
    values = {"y": np.repeat(x, 2, axis=1), "acc": sum(pieces),
              "scan": np.stack(pieces), "scan2": -np.stack(pieces)}
    for name, value in values.items():
        path = save(repeat_model(13, only=name), "repeat_" + name)
        runs("hand-built, %s by execution" % name, path, {"x_in": x}, value)
    path = save(repeat_model(13), "repeat_train")
    r = arenac("-q", "--train", "--json", "-", path)
    ok = T.check("hand-built: a training step plans", r.returncode == 0,
                 r.stderr)
    if ok:
        ops = [s["op"] for s in json.loads(r.stdout)["steps"]]
        T.check("hand-built: the training step has no Loop",
                "Loop" not in ops, ops)


def many_pieces():
    """SplitToSequence into 70 pieces (more than a Split's 64 outputs:
    a Slice each), squeezed (keepdims=0), and stacked back."""
    x = np.random.RandomState(0).rand(2, 70, 3).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1,
                          keepdims=0),
         helper.make_node("SequenceLength", ["s"], ["len"]),
         helper.make_node("Cast", ["len"], ["len_f"], to=TensorProto.FLOAT),
         helper.make_node("ConcatFromSequence", ["s"], ["stacked"], axis=1,
                          new_axis=1),
         helper.make_node("Mul", ["stacked", "len_f"], ["y"])],
        "pieces", [vi("x", TensorProto.FLOAT, list(x.shape))],
        [vi("y", TensorProto.FLOAT, None)])
    path = save(helper.make_model(g, opset_imports=[
        helper.make_opsetid("", 13)]), "pieces")
    rep, r = plan(path)
    if not T.check("70 pieces: plans", rep is not None, r.stderr):
        return
    ops = [s["op"] for s in rep["steps"]]
    shapes = {t["name"]: t["shape"] for t in rep["tensors"]}
    T.check("70 pieces: y is [2, 70, 3]", shapes.get("y") == [2, 70, 3],
            shapes.get("y"))
    T.check("70 pieces: 70 Slices, 70 Squeezes, 70 Unsqueezes",
            ops.count("Slice") == ops.count("Squeeze") ==
            ops.count("Unsqueeze") == 70, ops[:8])
    runs("70 pieces by execution", path, {"x": x}, x * 70)


def torch_exports():
    try:
        import torch
        import warnings
    except ImportError as e:
        print("skipped: %s" % e)
        return

    class Repeat(torch.nn.Module):
        def forward(self, x):
            return (x * 2).repeat_interleave(2, dim=-1)

    x = torch.rand(3, 4, 5)
    want = list(Repeat()(x).shape)
    for opset in (14, 17):
        path = os.path.join(TMP, "torch_ri%d.onnx" % opset)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(Repeat(), (x,), path, opset_version=opset,
                              input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "b", 1: "n", 2: "d"}})
        ops = {n.op_type for n in onnx.load(path).graph.node}
        T.check("torch %d: the export has the Loop" % opset,
                "Loop" in ops and "SplitToSequence" in ops, ops)
        rep, r = plan(path, "--dim", "b=3", "--dim", "n=4", "--dim", "d=5")
        if not T.check("torch %d: plans" % opset, rep is not None,
                       r.stderr):
            continue
        got = {t["name"]: t["shape"] for t in rep["tensors"]}.get("y")
        T.check("torch %d: y is torch's %s" % (opset, want), got == want,
                got)
        runs("torch %d by execution" % opset, path, {"x": x.numpy()},
             Repeat()(x).numpy(), "--dim", "b=3", "--dim", "n=4", "--dim",
             "d=5")

    # Along axis 1 of [4, 2, 16, 8] with every dim dynamic (llama_ri's
    # layer 1 in e2e_torch_transformers): the Loop body reshapes each
    # Unsqueezed piece [4, 1, 2, 16, 8] with [0, -1, 0, 0], and by ONNX's
    # Reshape the zeros copy dims 2 and 3 of that input, so the export
    # computes [4, 16, 2, 16] where torch computes [4, 4, 16, 8]
    # (symbolic_opset13.repeat_interleave's output_sizes).  arenac plans
    # the ONNX, not the module.
    class Heads(torch.nn.Module):
        def forward(self, x):
            return (x * 2).repeat_interleave(2, dim=1)

    x = torch.rand(4, 2, 16, 8)
    path = os.path.join(TMP, "torch_heads.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Heads(), (x,), path, opset_version=14,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "b", 1: "h", 2: "t",
                                              3: "d"}})
    rep, r = plan(path, "--dim", "b=4", "--dim", "h=2", "--dim", "t=16",
                  "--dim", "d=8")
    got = rep and {t["name"]: t["shape"] for t in rep["tensors"]}.get("y")
    T.check("torch, heads: the export's y is [4, 16, 2, 16] by ONNX "
            "(torch's is %s)" % list(Heads()(x).shape),
            got == [4, 16, 2, 16], got or r.stderr)


def onnx_suite():
    """The ONNX model zoo test test_sequence_model1 (shared onnx-small):
    SequenceEmpty, three SequenceInserts (one at a position), SequenceAt;
    its reference output by execution."""
    shared = os.environ.get("ARENAC_SHARED") or os.path.join(ROOT, "..",
                                                             "shared")
    d = os.path.join(shared, "models", "onnx-small", "test_sequence_model1")
    if not os.path.isdir(d):
        print("skipped: no shared onnx-small models (ARENAC_SHARED)")
        return
    data = os.path.join(d, "test_data_set_0")
    inputs = {}
    for k in range(3):
        t = onnx.TensorProto()
        with open(os.path.join(data, "input_%d.pb" % k), "rb") as f:
            t.ParseFromString(f.read())
        inputs[t.name] = numpy_helper.to_array(t)
    t = onnx.TensorProto()
    with open(os.path.join(data, "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    runs("test_sequence_model1 by execution", os.path.join(d, "model.onnx"),
         inputs, numpy_helper.to_array(t))


def branch_model():
    """A sequence built in an If branch whose condition is an input: not
    the top graph's, so not rewritten."""
    then = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x"], ["s"], name="make"),
         helper.make_node("SequenceAt", ["s", "z"], ["t"])], "then", [],
        [vi("t", TensorProto.FLOAT, [2])],
        [helper.make_tensor("z", TensorProto.INT64, [], [0])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])],
                              "else", [], [vi("e", TensorProto.FLOAT, [2])])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=then,
                          else_branch=other, name="pick")], "branch",
        [vi("x", TensorProto.FLOAT, [2]), vi("c", TensorProto.BOOL, [])],
        [vi("y", TensorProto.FLOAT, [2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def refusals():
    body_less = [const("lim", 1),
                 helper.make_node("Less", ["i", "lim"], ["c_out"])]
    cases = [
        ("trip count at run time", repeat_model(13, trip="n"),
         "node 'repeat_loop' (Loop): trip count 'n' is known only at run "
         "time"),
        ("condition that may stop early", repeat_model(13,
                                                      cond_out=body_less),
         "node 'repeat_loop' (Loop): stops after iteration 1"),
        ("too large to unroll", repeat_model(13, trip=20000),
         "node 'repeat_loop' (Loop): runs 20000 times over a body of"),
    ]
    for what, model, text in cases:
        path = save(model, what.replace(" ", "_"))
        r = arenac("-q", path)
        T.check("refused, %s: exit 2" % what, r.returncode == 2,
                (r.returncode, r.stderr))
        T.check("refused, %s: says why" % what, text in r.stderr and
                r.stderr.startswith("arenac: error: " + path), r.stderr)
    # A branch the condition picks at run time is planned without the one
    # that cannot be (subplan.c): a warning naming why, and a run taking
    # it fails in the runtime's If kernel.
    path = save(branch_model(), "a_sequence_in_a_branch")
    r = arenac("--json", os.devnull, path)
    T.check("a sequence in a branch: planned without that branch",
            r.returncode == 0, (r.returncode, r.stderr))
    T.check("a sequence in a branch: the warning says why",
            "subgraph 'then_branch' of node 'pick' (If) is not planned: "
            "node 'make' (SequenceConstruct): sequence and optional values "
            "are not supported" in r.stderr, r.stderr)


hand_built()
many_pieces()
onnx_suite()
torch_exports()
refusals()
sys.exit(T.summary())
