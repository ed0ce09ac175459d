#!/usr/bin/env python3
"""e2e_node_runtime.py - the ONNX backend node suite through the runtime.

For every node test of Debian's libonnx-testdata (data/node/*/model.onnx
with test_data_set_*/input_K.pb and output_K.pb) that arenac plans, arenac
writes a header and a weights blob; all the headers are built into one
program (tests/rt_node.c) with the reference runtime, which runs each
test's data sets from a random-filled arena, and its outputs are compared
with the expected ones: floats within rtol 1e-3, atol 1e-5 (NaN matches
NaN), integers and bools exactly.

Counted: planned (arenac made a plan), run (the runtime has a kernel for
every op and ran every data set), matched, mismatched.  A planned test not
run is listed with why: an op with no kernel, a kernel that refuses the
test's variant for a reason in KERNEL_LIMITS, a plan with bounded
(data-dependent) shapes, which the runtime does not track, or test data
that contradict the model's declared input shape.  A mismatch, or a
runtime error not in KERNEL_LIMITS, is a failure, except the tests in
KNOWN_DIFFERENCES (one: bfloat16 rounding), whose mismatch is reported
and expected.

Tests arenac refuses are the planner's business, but the single-node ones
among them (and among the bounded ones) whose op has a kernel run as
one-step plans through tests/rt_cases.c (first data set, tolerance 1e-5 +
1e-4 |expected|), so the kernels are checked before the planner reaches
them; a failure there fails the test too.

Under the sanitizers (ARENAC_SANITIZE=1, make sanitize) every test still
plans and runs through the sanitized runtime, but the ~930 arenac runs
skip the leak scan at exit (ASAN_OPTIONS detect_leaks=0), half of each
run's CPU.  A failed arenac run reads as a refusal here, so the scan
asserted nothing; leaks in these plans are e2e_nodesuite's sanitized
subset's and make fuzz's business (its libFuzzer run takes every node
model as a seed, scripts/fuzz.sh).  The runner keeps every check.

Environment: ARENAC, BUILD, CC, NODE_DATA (default the Debian package's
folder).  Ends with "e2e_node_runtime: N passed, N failed".
"""
import collections
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError:
    print("skipped: onnx and numpy are not installed for", sys.executable)
    print("e2e_node_runtime: 0 passed, 0 failed")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", "build")
ARENAC = os.environ.get("ARENAC") or os.path.join(BUILD, "arenac")
CC = os.environ.get("CC", "cc")
DATA = os.environ.get("NODE_DATA",
                      "/usr/share/libonnx-testdata/data/node")
RT_LIB = os.path.join(BUILD, "libarenac_rt.a")
PB_OBJS = [os.path.join(BUILD, "obj", "tests", "pbread.o"),
           os.path.join(BUILD, "obj", "gen", "onnx.pb-c.o")]

# Variants the kernels refuse on purpose, by the start of their message:
# a test stopped by one of these is not run, with this reason; any other
# runtime error fails the test.
KERNEL_LIMITS = {
    "only 1-D and 2-D": "3-D convolution or pooling",
    "Dropout in training mode is random": "Dropout in training mode",
    "dilated average pooling is not supported": "dilated AveragePool",
    "antialiasing is not supported": "Resize with antialias",
    "the only type this kernel computes": "a float32-only kernel on "
                                          "another type",
}

# Tests whose expected data this runtime disagrees with on purpose.
KNOWN_DIFFERENCES = {
    "test_cast_FLOAT_to_BFLOAT16":
        "onnx 1.12's data truncates float32 to bfloat16; the runtime "
        "rounds to nearest even, as onnxruntime does (onnx/onnx#3876)",
}


def graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [v.name for v in model.graph.input if v.name not in inits]


def write_raw(path, array):
    """Elements as the runtime stores them (bool: one byte each)."""
    a = np.ascontiguousarray(array)
    if a.dtype == np.bool_:
        a = a.astype(np.uint8)
    with open(path, "wb") as f:
        f.write(a.tobytes())


def matches(got, want):
    if want.dtype.kind == "f":
        return np.allclose(got.astype(np.float64), want.astype(np.float64),
                           rtol=1e-3, atol=1e-5, equal_nan=True)
    return np.array_equal(got, want)


def limit_of(message):
    for start, reason in KERNEL_LIMITS.items():
        if start in message:
            return reason
    return None


def main():
    if not os.path.isdir(DATA):
        print("skipped: no ONNX node tests at %s (Debian package "
              "libonnx-testdata)" % DATA)
        print("e2e_node_runtime: 0 passed, 0 failed")
        return 0
    if not all(os.path.exists(f) for f in [RT_LIB, ARENAC] + PB_OBJS):
        print("skipped: %s, %s or %s not built" % (ARENAC, RT_LIB,
                                                   PB_OBJS[0]))
        print("e2e_node_runtime: 0 passed, 0 failed")
        return 0
    tmp = tempfile.mkdtemp(prefix="arenac_node_")
    try:
        return run_suite(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# arenac's environment: under the sanitizers, no leak scan (see above).
PLAN_ENV = dict(os.environ)
if os.environ.get("ARENAC_SANITIZE"):
    PLAN_ENV["ASAN_OPTIONS"] = ":".join(
        o for o in (os.environ.get("ASAN_OPTIONS"), "detect_leaks=0") if o)


def plan_one(tmp, name, p):
    """'planned', 'bounded' (a plan with data-dependent shapes planned
    for their upper bound), 'refused' (exit 2: malformed or unsupported)
    or 'crashed' (any other exit: under the sanitizers, a finding)."""
    js = os.path.join(tmp, p + ".json")
    r = subprocess.run([ARENAC, "-q", "--prefix", p, "-o",
                        os.path.join(tmp, p + ".h"), "--weights",
                        os.path.join(tmp, p + ".bin"), "--json", js,
                        os.path.join(DATA, name, "model.onnx")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=PLAN_ENV)
    if r.returncode:
        return "refused" if r.returncode == 2 else "crashed"
    with open(js) as f:
        return "bounded" if '"bounded": true' in f.read() else "planned"


def plan_all(tmp, tests):
    """arenac on every test (two at a time): the planned ones as (name,
    prefix) pairs in the suite's order, the names of those whose plan
    has bounded shapes (the runtime runs static shapes only), and of those
    arenac neither planned nor refused."""
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda k: plan_one(tmp, tests[k], "n%d" % k),
                            range(len(tests))))
    return ([(t, "n%d" % k) for k, t in enumerate(tests)
             if got[k] == "planned"],
            [t for k, t in enumerate(tests) if got[k] == "bounded"],
            [t for k, t in enumerate(tests) if got[k] == "crashed"])


def build_runner(tmp, planned):
    """rt_node linked with every planned header.  The headers' tables are
    data the runtime only reads, so their file is built without the
    sanitizers CC may carry: instrumenting 600 headers takes minutes and
    checks nothing of the runtime's."""
    with open(os.path.join(tmp, "node_models.c"), "w") as f:
        f.write('#include "arenac_rt.h"\n')
        for _, p in planned:
            f.write('#define %s_DEFINE_TABLES\n#include "%s.h"\n'
                    'ARENAC_RT_BIND(%s, %s)\n' % (p.upper(), p, p, p.upper()))
        f.write("const art_model *(*const node_models[])(void) = {\n")
        f.write(",\n".join("\t%s_rt_model" % p for _, p in planned))
        f.write("\n};\nconst int node_nmodels = %d;\n" % len(planned))
    cc = CC.split()
    plain = [a for a in cc if not a.startswith(("-fsanitize",
                                                "-fno-sanitize"))]
    exe = os.path.join(tmp, "rt_node")
    objs = os.path.join(tmp, "node_models.o")
    flags = ["-std=c11", "-O0", "-D_POSIX_C_SOURCE=200809L", "-Iruntime",
             "-Itests", "-I" + tmp]
    for cmd in (plain + flags + ["-c", "-o", objs,
                                 os.path.join(tmp, "node_models.c")],
                cc + flags + ["-o", exe, "tests/rt_node.c", objs] +
                PB_OBJS + [RT_LIB, "-lprotobuf-c", "-lm"]):
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if r.returncode:
            print("FAIL building the runner:", r.stderr[-2000:])
            return None
    return exe


def declared_shape(model, name):
    """The static shape the model declares for graph input name, or
    None where a dim is symbolic."""
    for v in model.graph.input:
        if v.name == name:
            dims = v.type.tensor_type.shape.dim
            if all(d.HasField("dim_value") for d in dims):
                return tuple(d.dim_value for d in dims)
    return None


def manifest(tmp, planned):
    """The runner's manifest; per run (test, expected outputs); and the
    tests whose data do not fit their model, with why."""
    lines, runs, unfit = [], [], {}
    for k, (name, p) in enumerate(planned):
        model = onnx.load(os.path.join(DATA, name, "model.onnx"))
        ins = graph_inputs(model)
        outs = [v.name for v in model.graph.output]
        for ds in sorted(glob.glob(os.path.join(DATA, name,
                                                "test_data_set_*"))):
            r = len(runs)
            block = ["run %d %s" % (k, os.path.join(tmp, p + ".bin"))]
            for j in range(len(ins)):
                pb = os.path.join(ds, "input_%d.pb" % j)
                if not os.path.exists(pb):
                    continue
                a = numpy_helper.to_array(onnx.load_tensor(pb))
                shape = declared_shape(model, ins[j])
                if shape is not None and shape != a.shape:
                    unfit[name] = ("test data contradict the model's "
                                   "declared input shape")
                raw = os.path.join(tmp, "r%d_in%d" % (r, j))
                write_raw(raw, a)
                block.append("in %s %s" % (ins[j], raw))
            if name in unfit:
                continue
            lines += block
            want = []
            for j, o in enumerate(outs):
                pb = os.path.join(ds, "output_%d.pb" % j)
                if not os.path.exists(pb):
                    continue
                raw = os.path.join(tmp, "r%d_out%d" % (r, j))
                lines.append("out %s %s" % (o, raw))
                want.append((o, raw, numpy_helper.to_array(
                    onnx.load_tensor(pb))))
            lines.append("end")
            runs.append((name, want))
    return "\n".join(lines) + "\n", runs, unfit


def compare(want):
    """None when every output matches, else what differs."""
    for o, raw, w in want:
        if not os.path.exists(raw):
            return "%s was not written" % o
        dt = np.uint8 if w.dtype == np.bool_ else w.dtype
        got = np.fromfile(raw, dtype=dt)
        if got.size != w.size:
            return "%s has %d values, expected %d" % (o, got.size, w.size)
        got = got.reshape(w.shape).astype(w.dtype)
        if not matches(got, w):
            bad = np.argwhere(~np.isclose(got.astype(np.float64),
                                          w.astype(np.float64), rtol=1e-3,
                                          atol=1e-5, equal_nan=True)
                              if w.dtype.kind == "f" else got != w)
            i = tuple(bad[0]) if len(bad) else ()
            return "%s%s: got %s, expected %s" % (
                o, list(i), got[i] if i else got, w[i] if i else w)
    return None


def attr_fits(v):
    """An attribute value the one-step harness can hold."""
    if isinstance(v, bytes):
        return len(v) < 32 and not any(c in v for c in b" \t\n")
    if isinstance(v, (int, float)):
        return True
    return isinstance(v, list) and len(v) <= 8 and (
        all(isinstance(e, int) for e in v) or
        all(isinstance(e, float) for e in v) or
        all(isinstance(e, bytes) and attr_fits(e) for e in v))


def one_step(tmp, refused, ops):
    """The single-node tests arenac refuses whose op has a kernel, as
    one-step cases; (matched, failures, not fitting the harness)."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import gen_rt_cases as g
    path = os.path.join(tmp, "one_step.txt")
    unfit = written = 0
    with open(path, "w") as g.out:
        for name in refused:
            model = onnx.load(os.path.join(DATA, name, "model.onnx"))
            if len(model.graph.node) != 1:
                continue
            node = model.graph.node[0]
            if node.domain not in ("", "ai.onnx") or node.op_type not in ops:
                continue
            ds = os.path.join(DATA, name, "test_data_set_0")
            try:
                ins = dict((v.name, numpy_helper.to_array(onnx.load_tensor(
                    os.path.join(ds, "input_%d.pb" % j))))
                    for j, v in enumerate(model.graph.input))
                outs = [numpy_helper.to_array(onnx.load_tensor(
                    os.path.join(ds, "output_%d.pb" % j)))
                    for j in range(len(model.graph.output))]
            except (OSError, ValueError):
                unfit += 1
                continue
            attrs = [(a.name, onnx.helper.get_attribute_value(a))
                     for a in node.attribute]
            args = [ins.get(i) for i in node.input]
            arrays = [a for a in args if a is not None] + outs
            if (not all(attr_fits(v) for _, v in attrs) or
                    len(node.input) + len(outs) > 12 or
                    any(a.dtype not in g.TYPES or a.size > 65536
                        for a in arrays)):
                unfit += 1
                continue
            opset = [o.version for o in model.opset_import
                     if o.domain in ("", "ai.onnx")]
            g.case(name, node.op_type,
                   [("in", a) if a is not None else ("none", None)
                    for a in args], outs, attrs, inplace=None,
                   opset=opset[0] if opset else 1, keep=True)
            written += 1
    exe = os.path.join(tmp, "rt_cases")
    r = subprocess.run(CC.split() + ["-std=c11", "-O0",
                                     "-D_POSIX_C_SOURCE=200809L",
                                     "-Iruntime", "-o", exe,
                                     "tests/rt_cases.c", RT_LIB, "-lm"],
                       cwd=ROOT, capture_output=True, text=True)
    if r.returncode:
        return 0, ["building rt_cases: " + r.stderr[-500:]], unfit
    r = subprocess.run([exe, path], capture_output=True, text=True)
    fails = [l[5:] for l in r.stdout.splitlines() if l.startswith("FAIL")]
    if r.returncode not in (0, 1) or (not fails and r.returncode):
        fails.append("rt_cases stopped: " + r.stdout[-300:])
    return written - len(fails), fails, unfit


def run_suite(tmp):
    tests = sorted(os.listdir(DATA))
    planned, bounded, crashed = plan_all(tmp, tests)
    exe = build_runner(tmp, planned)
    if not exe:
        print("e2e_node_runtime: 0 passed, 1 failed")
        return 1
    ops = set(l.split()[1] for l in subprocess.run(
        [exe, "--ops"], capture_output=True, text=True).stdout.splitlines()
        if l.startswith("- "))
    done = {name for name, _ in planned}
    matched1, fails1, unfit1 = one_step(
        tmp, [t for t in tests if t not in done], ops)
    text, runs, unfit = manifest(tmp, planned)
    r = subprocess.run([exe], input=text, capture_output=True, text=True)
    lines = r.stdout.splitlines()
    if r.returncode or len(lines) != len(runs):
        print("FAIL the runner stopped after %d of %d runs: %s" %
              (len(lines), len(runs), r.stderr[-500:]))
        print("e2e_node_runtime: 0 passed, 1 failed")
        return 1

    # Per test: the worst outcome over its data sets.
    outcome = {name: ("unfit", why) for name, why in unfit.items()}
    for name in bounded:
        outcome[name] = ("unfit", "bounded shapes (the runtime runs static "
                                  "shapes only)")
    for line, (name, want) in zip(lines, runs):
        kind, rest = line.split(" ", 1)
        rest = rest.split(" ", 1)[1] if " " in rest else ""
        if kind == "ok":
            diff = compare(want)
            result = ("mismatch", diff) if diff else ("match", "")
            if diff and name in KNOWN_DIFFERENCES:
                result = ("known", KNOWN_DIFFERENCES[name])
        elif kind == "nokernel":
            result = ("nokernel", "no kernel for " + rest)
        else:
            rest = re.sub(r"^step \d+ ", "", rest)
            reason = limit_of(rest)
            result = ("limit", reason) if reason else ("error", rest)
        order = ["match", "known", "nokernel", "limit", "mismatch", "error"]
        if name not in outcome or \
                order.index(result[0]) > order.index(outcome[name][0]):
            outcome[name] = result

    counts = collections.Counter(k for k, _ in outcome.values())
    why = collections.Counter(r for k, r in outcome.values()
                              if k in ("nokernel", "limit", "unfit"))
    for name, (kind, detail) in sorted(outcome.items()):
        if kind in ("mismatch", "error"):
            print("  FAIL %s: %s" % (name, detail))
        elif kind == "known":
            print("  known difference %s: %s" % (name, detail))
    ran = sum(counts[k] for k in ("match", "known", "mismatch", "error"))
    print("node tests: %d in the suite, %d planned by arenac, %d run, "
          "%d matched, %d mismatched (%d of them known), %d runtime errors"
          % (len(tests), len(planned) + len(bounded), ran, counts["match"],
             counts["mismatch"] + counts["known"], counts["known"],
             counts["error"]))
    print("not run: %d (%s)" % (
        sum(why.values()),
        "; ".join("%s: %d" % kv for kv in sorted(
            why.items(), key=lambda kv: (-kv[1], kv[0])))))
    for f in fails1:
        print("  FAIL (one step) %s" % f)
    for name in crashed:
        print("  FAIL arenac %s: neither a plan nor exit 2" % name)
    print("refused by arenac or bounded, single node, op with a kernel: "
          "%d run as "
          "one-step plans, %d matched, %d failed; %d do not fit the "
          "one-step harness" % (matched1 + len(fails1), matched1,
                                len(fails1), unfit1))
    failed = counts["mismatch"] + counts["error"] + len(fails1) + \
        len(crashed)
    print("e2e_node_runtime: %d passed, %d failed" % (
        counts["match"] + matched1, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
