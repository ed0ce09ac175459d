#!/usr/bin/env python3
"""e2e_nodesuite.py - arenac over ONNX's backend node tests (libonnx-testdata).

Each test of the Debian package's data/node folder is one small model with
its inputs and expected outputs.  arenac plans each model once (--json) and
every graph output's dtype and shape is compared with the expected
TensorProto (test_data_set_0/output_K.pb):

  - a static output must have exactly the expected dtype and shape, and
    bytes = elements x element size;
  - a bounded output ("bounded": true) must have the expected rank and
    dtype, the expected extent on every static axis (shape[i] != -1), at
    most max_shape[i] on every data-dependent one, and bytes covering the
    expected tensor.

A test arenac refuses (exit 2) must be listed in tests/nodesuite_refusals.txt
with its reason class and a substring of the message; a listed test that
plans, or is refused for another reason, fails until the list is updated.

Second pass, for each test refused for a size known only at run time or
planned with a bounded output:
  - "NAME@const": the small graph inputs (rank at most 1, at most 16
    values: the sizes, axes, scales and scalars that shapes depend on)
    become initializers holding the test's input values, so the shape
    functions meet real values too;
  - "NAME@bound": where the tensor without a bound is a graph output,
    --bound gives it the expected output's shape (the user who knows it),
    which must plan, static axes and all.
Their refusals are listed the same way.

Under the sanitizers (ARENAC_SANITIZE=1, make sanitize) the suite runs a
stable subset, SANITIZED_STRIDE below: every 4th test in name order and the
first test of each op not met yet (ops inside subgraphs too), so every op
the suite holds reaches the sanitized arenac at least once, through the
CLI and at the default effort, with its NAME@const and NAME@bound variants;
refusals listed for tests outside the subset are not looked for.  The
whole suite runs in the plain pass (make test), and the sanitized pipeline
meets every node model anyway: scripts/fuzz.sh seeds make fuzz's libFuzzer
run (ASan, UBSan, leaks) with each of them, and libFuzzer runs every seed
before it mutates (ReadAndExecuteSeedCorpora, compiler-rt
lib/fuzzer/FuzzerLoop.cpp; make fuzz FUZZ_SECONDS=1 runs all 1,016 seeds,
the 932 node models among them, in 3 s).  One sanitized arenac costs ~0.1 s of CPU,
most of it the sanitizers' start and leak scan at exit, so the whole suite
cost ~130 s of CPU there for little more than the subset finds.

Options: --update rewrites the refusal list from this run (classes from the
message, REASONS below); --counts prints the counts make bench reports.
Prints "nodesuite: N passed, N failed"; exits 1 on failure.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import ARENAC, ROOT, need  # noqa: E402

NODE = os.environ.get("ARENAC_NODE_TESTS",
                      "/usr/share/libonnx-testdata/data/node")
REFUSALS = os.path.join(ROOT, "tests", "nodesuite_refusals.txt")

# Reason classes, each with the message pattern --update recognises it by.
REASONS = [
    ("sequence", r"sequence and optional values|is not a tensor \(sequence"),
    ("string", r"string tensor|string constants"),
    ("unbounded", r"known only at run time .*no bound"),
    ("loop-state", r"loop-carried value \d+ changes"),
    ("op-missing", r"no shape inference for this op"),
]

LABELS = {"exact": "planned, exact shapes", "bounded": "planned, bounded",
          "wrong": "WRONG"}

DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16",
          6: "int32", 7: "int64", 8: "string", 9: "bool", 10: "float16",
          11: "float64", 12: "uint32", 13: "uint64", 14: "complex64",
          15: "complex128", 16: "bfloat16"}
SIZES = {"float32": 4, "uint8": 1, "int8": 1, "uint16": 2, "int16": 2,
         "int32": 4, "int64": 8, "bool": 1, "float16": 2, "float64": 8,
         "uint32": 4, "uint64": 8, "complex64": 8, "complex128": 16,
         "bfloat16": 2}


# make sanitize runs every SANITIZED_STRIDE-th test and each op's first.
SANITIZED_STRIDE = 4


def ops_of(graph, acc):
    """acc with the (domain, op) of every node of graph and its subgraphs."""
    for node in graph.node:
        acc.add((node.domain or "ai.onnx", node.op_type))
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                ops_of(g, acc)
    return acc


def sanitized_subset(names):
    """The tests make sanitize plans: every SANITIZED_STRIDE-th name, and
    each test holding an op no test before it in the subset holds."""
    keep, seen = [], set()
    for k, n in enumerate(names):
        ops = ops_of(onnx.load(os.path.join(NODE, n, "model.onnx")).graph,
                     set())
        if k % SANITIZED_STRIDE == 0 or not ops <= seen:
            keep.append(n)
            seen |= ops
    return keep


def reason_of(msg):
    for cls, pat in REASONS:
        if re.search(pat, msg):
            return cls
    return None


def load_refusals():
    """{name: (class, substring)}"""
    out = {}
    with open(REFUSALS) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            name, cls, sub = line.split("\t", 2)
            out[name] = (cls, sub)
    return out


def pb_files(folder, role):
    files = glob.glob(os.path.join(folder, "test_data_set_0", role + "_*.pb"))
    return sorted(files, key=lambda f: int(f.rsplit("_", 1)[1][:-3]))


def expected(folder):
    """[(dtype, dims)] of the expected outputs, in graph order."""
    out = []
    for f in pb_files(folder, "output"):
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        out.append((DTYPES.get(t.data_type, "?"), list(t.dims)))
    return out


def run(path, args):
    r = subprocess.run([ARENAC, "-q", "--json", "-"] + args + [path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    return r.returncode, r.stdout, r.stderr.strip().split("\n")[-1]


def compare(name, t, dtype, dims):
    """What is wrong with JSON tensor t against the expected output."""
    # numpy has no bfloat16: the suite stores those values as their uint16
    # bit patterns.
    if t["dtype"] == "bfloat16" and dtype == "uint16":
        dtype = "bfloat16"
    if t["dtype"] != dtype:
        return "%s: dtype %s, expected %s" % (name, t["dtype"], dtype)
    real = SIZES.get(dtype, 0)
    for d in dims:
        real *= d
    if not t.get("bounded"):
        if t["shape"] != dims or t["bytes"] != real:
            return "%s: shape %s (%s bytes), expected %s" % (
                name, t["shape"], t["bytes"], dims)
        return None
    shape, mx = t["shape"], t["max_shape"]
    ok = len(shape) == len(dims) and t["bytes"] >= real
    for s, m, d in zip(shape, mx, dims):
        ok = ok and (d <= m if s == -1 else s == d)
    if not ok:
        return "%s: shape %s at most %s (%s bytes), expected %s" % (
            name, shape, mx, t["bytes"], dims)
    return None


def check(item):
    """(name, status, detail): status 'exact', 'bounded', 'refused' or
    'wrong'."""
    name, path, folder, outputs, args = item
    rc, out, err = run(path, args)
    if rc == 2:
        return name, "refused", err.replace(path, "MODEL")
    if rc != 0:
        return name, "wrong", "exit %d: %s" % (rc, err)
    ours = {t["name"]: t for t in json.loads(out)["tensors"]}
    exp = expected(folder)
    if len(exp) != len(outputs):
        return name, "wrong", "%d expected outputs for %d graph outputs" % (
            len(exp), len(outputs))
    bounded = False
    for o, (dtype, dims) in zip(outputs, exp):
        t = ours.get(o)
        bad = "%s: missing from the report" % o if t is None else \
            compare(o, t, dtype, dims)
        if bad:
            return name, "wrong", bad
        bounded = bounded or bool(t.get("bounded"))
    return name, "bounded" if bounded else "exact", ""


def const_variant(folder, tmp, name):
    """The model with its small inputs made initializers, or None."""
    model = onnx.load(os.path.join(folder, "model.onnx"))
    inits = {i.name for i in model.graph.initializer}
    ins = [i for i in model.graph.input if i.name not in inits]
    made = 0
    for vi, f in zip(ins, pb_files(folder, "input")):
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        n = 1
        for d in t.dims:
            n *= d
        if len(t.dims) > 1 or n > 16 or t.data_type == 8:
            continue
        t.name = vi.name
        model.graph.initializer.append(t)
        made += 1
    if not made:
        return None
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    return path


def bound_args(folder, outputs, msg):
    """--bound OUTPUT=D0xD1x... from the expected output the message says
    has no bound, or None."""
    m = re.search(r"output '([^']*)' has a size known only at run time", msg)
    if not m or m.group(1) not in outputs:
        return None
    dims = expected(folder)[outputs.index(m.group(1))][1]
    if not dims:
        return None
    return ["--bound", "%s=%s" % (m.group(1), "x".join(map(str, dims)))]


def jobs(names, tmp=None, variant=None, msgs=None):
    out = []
    for n in names:
        folder = os.path.join(NODE, n)
        path = os.path.join(folder, "model.onnx")
        outputs = [o.name for o in onnx.load(path).graph.output]
        args = []
        if variant == "const":
            path = const_variant(folder, tmp, n)
        elif variant == "bound":
            args = bound_args(folder, outputs, msgs[n])
            path = path if args else None
        if path is None:
            continue
        out.append((n + ("@" + variant if variant else ""), path, folder,
                    outputs, args))
    return out


def main():
    update = "--update" in sys.argv
    counts = "--counts" in sys.argv
    if not os.path.isdir(NODE):
        print("skipped: libonnx-testdata is not installed (%s)" % NODE)
        return 0
    if not os.access(ARENAC, os.X_OK):
        print("FAIL: %s is not built" % ARENAC)
        return 1
    names = sorted(n for n in os.listdir(NODE)
                   if os.path.isfile(os.path.join(NODE, n, "model.onnx")))
    if os.environ.get("ARENAC_SANITIZE") and not update and not counts:
        every = len(names)
        names = sanitized_subset(names)
        print("under the sanitizers: %d of the %d tests (every %dth and "
              "each op's first; make test runs all)" %
              (len(names), every, SANITIZED_STRIDE))
    with ThreadPoolExecutor(2) as ex:
        results = list(ex.map(check, jobs(names)))
        unbounded = {n: msg for n, st, msg in results
                     if st == "refused" and reason_of(msg) == "unbounded"}
        again = [n for n, st, msg in results if st == "bounded" or
                 n in unbounded]
        with tempfile.TemporaryDirectory() as tmp:
            results += list(ex.map(check, jobs(again, tmp, "const")))
        results += list(ex.map(check, jobs(sorted(unbounded), None, "bound",
                                           unbounded)))
    if update:
        head = []
        if os.path.exists(REFUSALS):
            with open(REFUSALS) as f:
                head = [l for l in f if l.startswith("#")]
        with open(REFUSALS, "w") as f:
            f.writelines(head)
            for n, st, msg in results:
                if st == "refused":
                    sub = re.sub(r"^arenac: error: MODEL: ", "", msg)
                    f.write("%s\t%s\t%s\n" % (n, reason_of(msg) or "?", sub))
    listed = load_refusals()
    classes = {cls for cls, _ in REASONS}
    passed = failed = 0
    tally = {}
    for n, st, msg in results:
        why = None
        if st == "wrong":
            why = msg
        elif st == "refused" and n not in listed:
            why = "refused, and not in the list: %s" % msg
        elif st == "refused" and (listed[n][1] not in msg or
                                  listed[n][0] not in classes):
            why = "refused for another reason than the list's (%s): %s" % (
                listed[n][1], msg)
        elif st != "refused" and n in listed:
            why = "now plans (%s): remove it from the list" % st
        key = (n.partition("@")[2], LABELS.get(st) or "refused: " +
               (listed[n][0] if n in listed else "unlisted"))
        tally[key] = tally.get(key, 0) + 1
        if why:
            failed += 1
            print("FAIL %s: %s" % (n, why))
        else:
            passed += 1
    ran = set(names)
    stale = {n for n in listed if n.partition("@")[0] in ran} - \
        {n for n, _, _ in results}
    for n in sorted(stale):
        failed += 1
        print("FAIL %s: listed as refused, but no such test ran" % n)
    if counts:
        for var, title in (("", "node suite"),
                           ("const", "small inputs made constants"),
                           ("bound", "--bound from the expected output")):
            keys = sorted(k for k in tally if k[0] == var)
            print("%s: %d tests" % (title, sum(tally[k] for k in keys)))
            for k in keys:
                print("  %-26s %4d" % (k[1], tally[k]))
    print("nodesuite: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    onnx, = need("onnx")
    sys.exit(main())
