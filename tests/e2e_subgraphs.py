#!/usr/bin/env python3
"""e2e_subgraphs.py - If branches, Loop bodies and kernel scratch, end to end.

  - Silero VAD (shared model; batch 1, 512 samples): both 88-node branches
    of its top If and their nested Ifs planned, the arena pinned, no
    warning, the summary saying what is planned and what never runs; the
    JSON report checked by a second account written here (every workspace
    clear of the tensors live at its step, every subgraph's tensors
    inside its region and apart from each other while both live, outer
    tensors at the enclosing tensor's offset); the header compiled as C99
    and C++11 and its subgraph tables walked by a C program, against the
    JSON; the weights blob holding each subgraph's initializers, byte for
    byte as the model has them.
  - testdata/shape_loop_if13.onnx: a Loop and an If planned, pinned, the
    same checks.
  - A Loop body whose carried outputs permute its inputs, built here: not
    planned, and said on stderr, in the summary, the header and the JSON.
  - Kernel scratch: testdata/shape_windows9.onnx's LSTM gets its
    workspace with --scratch kernels and not with none; the onnx-small
    models (no op with scratch, no subgraph) plan byte for byte the same
    either way and their outputs carry neither.
Every plan also runs on the poison executor (--selfcheck).

Environment: ARENAC, ARENAC_SHARED.  Prints "e2e_subgraphs: N passed, N
failed"; exits 1 on failure.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import ARENAC, ROOT, SHARED, need  # noqa: E402

onnx, = need("onnx")
from onnx import helper, numpy_helper, TensorProto  # noqa: E402
TMP = tempfile.mkdtemp(prefix="arenac_sub")
passed = failed = 0

# Silero VAD at batch 1, 512 samples: the top If's region is 17,024 bytes
# (both branches' arenas), beside input, h, c and the outputs.
SILERO_ARENA = 21152
SILERO_DIMS = ["--dim", "batch=1", "--dim", "sequence=512"]


def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL", what, detail)


def arenac(*args):
    return subprocess.run([ARENAC] + list(args), capture_output=True,
                          text=True)


def plan(model, *opts, name="m"):
    """JSON report, header, weights and stderr of one --selfcheck run."""
    j, h, w = (os.path.join(TMP, name + ext) for ext in (".json", ".h",
                                                           ".bin"))
    r = arenac("-q", "--selfcheck", "--json", j, "-o", h, "--weights", w,
               *opts, model)
    if r.returncode:
        return None, None, None, r
    with open(j) as f:
        rep = json.load(f)
    with open(h) as f:
        hdr = f.read()
    with open(w, "rb") as f:
        blob = f.read()
    return rep, hdr, blob, r


def overlaps(a0, a1, b0, b1):
    return a0 < b1 and b0 < a1


def root(by_name, t):
    """Follows alias_of and inplace_of links to the buffer's owner."""
    seen = 0
    while seen < 100000:
        up = t.get("alias_of") or t.get("inplace_of")
        if not up:
            return t["name"]
        t = by_name[up]
        seen += 1
    return None


def live_at(t, s):
    return t["first_step"] is not None and t["first_step"] <= s <= \
        t["last_step"]


def check_scratch(what, steps, tensors, lo=None, hi=None):
    """Each step's workspace inside [lo, hi) and clear of what is live."""
    for st in steps:
        if "scratch_bytes" not in st:
            continue
        s0, s1 = st["scratch_offset"], st["scratch_offset"] + \
            st["scratch_bytes"]
        if lo is not None:
            check(what + ": workspace of " + st["name"] + " in region",
                  lo <= s0 and s1 <= hi, (s0, s1, lo, hi))
        for t in tensors:
            if live_at(t, st["index"]) and t["bytes"] and \
                    t["offset"] is not None:
                check(what + ": workspace of " + st["name"] + " clear of " +
                      t["name"], not overlaps(s0, s1, t["offset"],
                                              t["offset"] + t["bytes"]))


def check_pairs(what, tensors):
    """Tensors live at once share no byte unless one buffer by design."""
    by_name = {t["name"]: t for t in tensors}
    mine = [t for t in tensors if t["first_step"] is not None and
            t["bytes"] and t["offset"] is not None]
    for i, a in enumerate(mine):
        for b in mine[i + 1:]:
            if a["last_step"] < b["first_step"] or \
                    b["last_step"] < a["first_step"]:
                continue
            if overlaps(a["offset"], a["offset"] + a["bytes"], b["offset"],
                        b["offset"] + b["bytes"]) and \
                    root(by_name, a) != root(by_name, b):
                check(what + ": " + a["name"] + " and " + b["name"] +
                      " overlap", False)


def check_report(what, rep):
    """The second account of a report with subgraphs."""
    check_scratch(what, rep["steps"], rep["tensors"])
    check_pairs(what, rep["tensors"])
    subs = {s["id"]: s for s in rep.get("subgraphs", [])}
    for s in subs.values():
        if not s["planned"]:
            check(what + ": unplanned subgraph says why", s.get("reason"))
            continue
        up = subs[s["parent"]] if s["parent"] is not None else rep
        step = up["steps"][s["step"]]
        lo, hi = s["region_offset"], s["region_offset"] + s["arena_bytes"]
        if s["arena_bytes"]:
            check(what + ": region of subgraph %d in its step's "
                  "workspace" % s["id"],
                  step.get("scratch_offset", -1) <= lo and
                  hi <= step["scratch_offset"] + step["scratch_bytes"])
        check(what + ": step %s runs subgraph %d" % (step["name"], s["id"]),
              s["id"] in step.get("subgraphs", []))
        outer = {t["name"]: t for t in up["tensors"]}
        for t in s["tensors"]:
            if "outer" in t:
                check(what + ": outer " + t["name"] + " at its place",
                      t["offset"] == outer[t["outer"]]["offset"],
                      (t, outer[t["outer"]]))
            elif t["first_step"] is not None and t["bytes"]:
                check(what + ": " + t["name"] + " inside its region",
                      lo <= t["offset"] and t["offset"] + t["bytes"] <= hi,
                      (t["offset"], lo, hi))
        check_scratch(what + " sg%d" % s["id"], s["steps"], s["tensors"],
                      lo, hi)
        check_pairs(what + " sg%d" % s["id"], s["tensors"])
        if s["kind"] == "loop_body":
            last = len(s["steps"]) - 1
            for name in s["inputs"]:
                t = next(x for x in s["tensors"] if x["name"] == name)
                check(what + ": body input " + name + " lives to the end",
                      t["last_step"] == last)


WALKER = r'''
#include <stdio.h>
#define @U@_DEFINE_TABLES
#include HEADER
int main(void)
{
	for (int k = 0; k < @U@_NUM_SUBGRAPHS; k++) {
		const @L@_subgraph *s = &@L@_subgraphs[k];
		printf("sg %d %d %d %d %u %d %d\n", k, s->parent, s->step,
		       s->planned, (unsigned)s->arena_bytes, s->ntensors,
		       s->nsteps);
		for (int i = 0; i < s->ntensors; i++)
			printf("t %d %s %lld %d %d %lld\n", k, s->tensors[i].name,
			       s->tensors[i].offset == @U@_NOT_IN_ARENA ? -1LL :
			       (long long)s->tensors[i].offset,
			       s->tensors[i].first, s->tensors[i].last,
			       s->tensors[i].weights_offset == @U@_NOT_IN_ARENA ?
			       -1LL : (long long)s->tensors[i].weights_offset);
		for (int i = 0; i < s->nsteps; i++)
			printf("s %d %s %lld %u %d\n", k, s->steps[i].name,
			       s->steps[i].scratch_offset == @U@_NOT_IN_ARENA ?
			       -1LL : (long long)s->steps[i].scratch_offset,
			       (unsigned)s->steps[i].scratch_bytes,
			       s->steps[i].nsubgraphs);
	}
	return 0;
}
'''


def walk_header(what, hdr_path, prefix):
    """Compiles the header as C99 and C++11; the C walker's lines."""
    src = os.path.join(TMP, prefix + "_walk.c")
    with open(src, "w") as f:
        f.write(WALKER.replace("@U@", prefix.upper())
                .replace("@L@", prefix)
                .replace("HEADER", '"%s"' % hdr_path))
    exe = os.path.join(TMP, prefix + "_walk")
    for cc, std in (("cc", "-std=c99"), ("c++", "-std=c++11")):
        r = subprocess.run([cc, std, "-Wall", "-Wextra", "-Werror", "-x",
                            "c" if cc == "cc" else "c++", src, "-o", exe],
                           capture_output=True, text=True)
        check(what + ": header compiles with " + std, r.returncode == 0,
              r.stderr[-2000:])
    if not os.path.exists(exe):
        return []
    r = subprocess.run([exe], capture_output=True, text=True)
    return r.stdout.splitlines()


def check_header(what, rep, lines):
    subs = {s["id"]: s for s in rep["subgraphs"]}
    seen = 0
    for ln in lines:
        f = ln.split()
        s = subs[int(f[1])]
        if f[0] == "sg":
            seen += 1
            parent = -1 if s["parent"] is None else s["parent"]
            check(what + ": header subgraph " + f[1],
                  [int(x) for x in f[2:5]] ==
                  [parent, s["step"], int(s["planned"])])
            if s["planned"]:
                check(what + ": header subgraph %s sizes" % f[1],
                      [int(x) for x in f[5:]] ==
                      [s["arena_bytes"], len(s["tensors"]),
                       len(s["steps"])])
        elif f[0] == "t":
            t = next(x for x in s["tensors"] if x["name"] == f[2])
            off = -1 if t["offset"] is None else t["offset"]
            first = -1 if t["first_step"] is None else t["first_step"]
            check(what + ": header tensor " + f[2], [int(f[3]), int(f[4])]
                  == [off, first], (f, t))
        elif f[0] == "s":
            st = next(x for x in s["steps"] if x["name"] == f[2])
            check(what + ": header step " + f[2],
                  [int(f[3]), int(f[4]), int(f[5])] ==
                  [st.get("scratch_offset", -1), st.get("scratch_bytes", 0),
                   len(st.get("subgraphs", []))])
    check(what + ": every subgraph in the header", seen == len(subs))


def onnx_graph_of(model, rep, sid):
    """The onnx GraphProto of subgraph sid and those enclosing it."""
    subs = {s["id"]: s for s in rep["subgraphs"]}
    chain = []
    while sid is not None:
        chain.append(subs[sid])
        sid = subs[sid]["parent"]
    g, graphs = model.graph, [model.graph]
    for s in reversed(chain):
        node = next(n for n in g.node if n.name == s["node"])
        g = next(a.g for a in node.attribute if a.name == s["attribute"])
        graphs.append(g)
    return graphs


def check_weights(what, model, rep, lines, blob):
    """Each planned subgraph's weights in the blob, as the model has them."""
    n = 0
    for ln in lines:
        f = ln.split()
        if f[0] != "t" or int(f[6]) < 0:
            continue
        graphs = onnx_graph_of(model, rep, int(f[1]))
        init = None
        for g in reversed(graphs):          # the nearest scope first
            init = next((i for i in g.initializer if i.name == f[2]), None)
            if init is not None:
                break
        if init is None:
            continue                        # a folded constant
        raw = numpy_helper.to_array(init).tobytes()
        off = int(f[6])
        n += 1
        check(what + ": weights of " + f[2], blob[off:off + len(raw)] ==
              raw)
    check(what + ": some subgraph weights compared", n > 0)


def catches(what, rep):
    """The second account must object to a report broken on purpose:
    a subgraph tensor moved onto another live at the same step."""
    global passed, failed
    import copy
    bad = copy.deepcopy(rep)
    for s in bad["subgraphs"]:
        mine = [t for t in s.get("tensors", []) if t["first_step"] is not
                None and t["bytes"] and not t.get("alias_of") and
                not t.get("inplace_of")]
        pair = next(((a, b) for a in mine for b in mine if a is not b and
                     a["first_step"] <= b["last_step"] and
                     b["first_step"] <= a["last_step"]), None)
        if pair:
            pair[0]["offset"] = pair[1]["offset"]
            break
    saved = passed, failed
    silent = sys.stdout
    sys.stdout = open(os.devnull, "w")
    check_report(what, bad)
    sys.stdout.close()
    sys.stdout = silent
    objected = failed > saved[1]
    passed, failed = saved
    check(what + ": the second account catches an overlap", objected)


def silero():
    path = os.path.join(SHARED, "models", "silero_vad_legacy.onnx")
    if not os.path.exists(path):
        print("skipped: no shared silero_vad_legacy.onnx")
        return
    rep, hdr, blob, r = plan(path, *SILERO_DIMS, name="silero_vad_legacy")
    check("silero plans with --selfcheck", rep is not None, r.stderr)
    if rep is None:
        return
    check("silero: no warning", r.stderr == "", r.stderr)
    check("silero: arena pinned", rep["arena_bytes"] == SILERO_ARENA,
          rep["arena_bytes"])
    subs = rep["subgraphs"]
    check("silero: 18 subgraphs, 10 planned, 8 never run",
          (len(subs), sum(s["planned"] for s in subs),
           sum("never runs" in s.get("reason", "") for s in subs)) ==
          (18, 10, 8))
    top = [s for s in subs if s["parent"] is None]
    check("silero: both 88-node branches planned", len(top) == 2 and
          all(s["planned"] and s["nodes"] == 88 for s in top))
    check("silero: the If's workspace is the larger branch's arena",
          rep["steps"][1]["scratch_bytes"] ==
          max(s["arena_bytes"] for s in top))
    check("silero: LSTM steps have kernel scratch", any(
        st["op"] == "LSTM" and st.get("scratch_bytes") == 6 * 64 * 4
        for s in subs if s["planned"] for st in s["steps"]))
    check_report("silero", rep)
    catches("silero", rep)
    lines = walk_header("silero", os.path.join(TMP, "silero_vad_legacy.h"),
                        "silero_vad_legacy")
    check_header("silero", rep, lines)
    check_weights("silero", onnx.load(path), rep, lines, blob)
    summary = arenac(*SILERO_DIMS, path).stdout
    check("silero: summary counts subgraphs",
          "subgraphs    18: 10 planned" in summary and
          "8 never run" in summary, summary)
    check("silero: header comment counts subgraphs",
          "subgraphs:   18 (silero_vad_legacy_subgraphs), 10 planned" in hdr)


def loop_if():
    path = os.path.join(ROOT, "testdata", "shape_loop_if13.onnx")
    rep, hdr, blob, r = plan(path, name="shape_loop_if13")
    check("shape_loop_if13 plans", rep is not None, r.stderr)
    if rep is None:
        return
    # Loop step: scans, x, acc and the body's 144 bytes; the If's branches
    # write straight into pick.
    check("shape_loop_if13: arena pinned", rep["arena_bytes"] == 320,
          rep["arena_bytes"])
    body = rep["subgraphs"][0]
    check("shape_loop_if13: body planned, reused",
          body["kind"] == "loop_body" and body["arena_bytes"] == 144 and
          rep["steps"][0]["scratch_bytes"] == 144)
    for s in rep["subgraphs"][1:]:
        out = next(t for t in s["tensors"] if t["name"] in s["outputs"])
        check("shape_loop_if13: branch output is the If's",
              out.get("outer") == "pick")
    check_report("shape_loop_if13", rep)
    lines = walk_header("shape_loop_if13",
                        os.path.join(TMP, "shape_loop_if13.h"),
                        "shape_loop_if13")
    check_header("shape_loop_if13", rep, lines)


def permuted_loop():
    """Loop whose body swaps its two carried values: left unplanned."""
    vi = helper.make_tensor_value_info
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Add", ["a_in", "b_in"], ["s"])],
        "body",
        [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []),
         vi("a_in", TensorProto.FLOAT, [4]),
         vi("b_in", TensorProto.FLOAT, [4])],
        [vi("c_out", TensorProto.BOOL, []),
         vi("b_in", TensorProto.FLOAT, [4]),
         vi("a_in", TensorProto.FLOAT, [4]),
         vi("s", TensorProto.FLOAT, [4])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "a", "b"], ["ra", "rb", "ss"],
                          body=body)],
        "swap", [vi("a", TensorProto.FLOAT, [4]),
                 vi("b", TensorProto.FLOAT, [4])],
        [vi("ra", TensorProto.FLOAT, [4]), vi("rb", TensorProto.FLOAT, [4]),
         vi("ss", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor("n", TensorProto.INT64, [], [3])])
    path = os.path.join(TMP, "swap.onnx")
    onnx.save(helper.make_model(g, opset_imports=[
        helper.make_opsetid("", 13)]), path)
    j, h = os.path.join(TMP, "swap.json"), os.path.join(TMP, "swap.h")
    r = arenac("--selfcheck", "--json", j, "-o", h, path)
    check("swap: plans (exit 0)", r.returncode == 0, r.stderr)
    if r.returncode:
        return
    check("swap: warned on stderr", "warning" in r.stderr and
          "not planned" in r.stderr and "permutation" in r.stderr, r.stderr)
    s = json.load(open(j))["subgraphs"][0]
    check("swap: JSON says not planned, and why", not s["planned"] and
          "permutation" in s["reason"])
    check("swap: header says NOT PLANNED", "NOT PLANNED" in open(h).read())
    summary = arenac(path).stdout
    check("swap: summary says NOT planned", "1 NOT planned" in summary,
          summary)


def constant_branch():
    """An If whose else branch outputs an initializer of its own: the
    blob holds it, for the runtime to copy into the If's output."""
    vi = helper.make_tensor_value_info
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])],
                             "then", [], [vi("t", TensorProto.FLOAT, [4])])
    other = helper.make_graph([], "else", [],
                              [vi("k", TensorProto.FLOAT, [4])],
                              [helper.make_tensor("k", TensorProto.FLOAT,
                                                  [4], [1, 2, 3, 4])])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="pick",
                          then_branch=then, else_branch=other)],
        "constbranch", [vi("x", TensorProto.FLOAT, [4]),
                        vi("c", TensorProto.BOOL, [])],
        [vi("y", TensorProto.FLOAT, [4])])
    path = os.path.join(TMP, "constbranch.onnx")
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("",
                                                                    13)])
    onnx.save(model, path)
    rep, hdr, blob, r = plan(path, name="constbranch")
    check("constbranch plans", rep is not None, r.stderr)
    if rep is None:
        return
    check_report("constbranch", rep)
    lines = walk_header("constbranch", os.path.join(TMP, "constbranch.h"),
                        "constbranch")
    check_header("constbranch", rep, lines)
    check_weights("constbranch", model, rep, lines, blob)


def scratch():
    path = os.path.join(ROOT, "testdata", "shape_windows9.onnx")
    on, hon, _, r1 = plan(path, name="win_on")
    off, hoff, _, r2 = plan(path, "--scratch", "none", name="win_off")
    check("windows9 plans both ways", on and off, r1.stderr + r2.stderr)
    if not (on and off):
        return
    lstm = next(s for s in on["steps"] if s["op"] == "LSTM")
    # LSTM hidden 5: (4 gates + 2) x 5 floats, padded to 128 on top.
    check("windows9: LSTM scratch", lstm.get("scratch_bytes") == 120, lstm)
    check("windows9: the scratch is in the arena",
          on["arena_bytes"] == off["arena_bytes"] + 128,
          (on["arena_bytes"], off["arena_bytes"]))
    check("windows9: --scratch none has none", not any(
        "scratch_bytes" in s for s in off["steps"]))
    check("windows9: header has the scratch columns",
          "_HAS_SCRATCH 1" in hon and "_HAS_SCRATCH" not in hoff)
    check_scratch("windows9", on["steps"], on["tensors"])
    for m in sorted(glob.glob(os.path.join(SHARED, "models", "onnx-small",
                                           "*", "model.onnx"))):
        name = os.path.basename(os.path.dirname(m))
        a = plan(m, name=name + "_a")
        b = plan(m, "--scratch", "none", name=name + "_b")
        if a[0] is None:
            check(name + ": refused either way",
                  a[3].returncode == b[3].returncode == 2)
            continue
        a[0]["options"] = b[0]["options"] = ""
        check(name + ": same plan either way", a[0] == b[0])
        check(name + ": no subgraph or scratch fields",
              "subgraphs" not in a[0] and
              not any("scratch_bytes" in s for s in a[0]["steps"]) and
              "_HAS_SCRATCH" not in a[1])


silero()
loop_if()
permuted_loop()
constant_branch()
scratch()
print("e2e_subgraphs: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
