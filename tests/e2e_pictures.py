#!/usr/bin/env python3
"""e2e_pictures.py - the pictures through the command line, read back as SVG
and checked against the JSON report of the same run.

Timeline: every arena tensor has a rectangle whose <title> gives its bytes,
offsets and lifetime as the report does; the phase bands cover the report's
runs of phases; each step is in one hover column with the bytes in use the
report implies; tensors under the "other" size are merged, the rest drawn;
a comparison's title states both arenas and the difference; a 2,500-step
training plan stays 1,800 points wide with at most 60 names.  Dataflow:
DenseNet-121 condensed into its four dense blocks (6, 12, 24 and 16 layers,
as the paper has them) and PP-OCR det both render to PNGs of a readable
size at scale 1, the focus view draws the steps around one.  Graphviz
prints nothing on stderr in any run.

Environment: ARENAC (the binary), ARENAC_SHARED (the shared models).
Prints one line per failed check and "pictures: N passed, N failed".
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
if not os.path.isabs(ARENAC):
    ARENAC = os.path.join(ROOT, ARENAC)
SHARED = os.environ.get("ARENAC_SHARED", "")
LENET = os.path.join(ROOT, "testdata", "lenet.onnx")
SVG = "{http://www.w3.org/2000/svg}"
TMP = tempfile.mkdtemp(prefix="arenac_pictures")
counts = [0, 0]


def check(what, ok, detail=""):
    counts[0 if ok else 1] += 1
    if not ok:
        print("FAIL", what, detail)
    return ok


# Under `make sanitize`, LeakSanitizer lists the suppressions it used (in
# system libraries) on stderr; real leaks still print and fail the run.
ENV = dict(os.environ)
if "LSAN_OPTIONS" in ENV:
    ENV["LSAN_OPTIONS"] += ":print_suppressions=0"


def arenac(*args, rc=0):
    """Runs arenac; checks its exit code and, on success, a silent stderr."""
    p = subprocess.run([ARENAC, *args], capture_output=True, text=True, env=ENV)
    check("exit %d: arenac %s" % (rc, " ".join(args)), p.returncode == rc,
          p.stderr.strip())
    if rc == 0:
        check("nothing on stderr: arenac %s" % " ".join(args), p.stderr == "",
              p.stderr[:300])
    return p


def path(name):
    return os.path.join(TMP, name)


def shapes(svg, cls):
    """(title, g element) of every node of a class in an SVG."""
    out = []
    for g in ET.parse(svg).getroot().iter(SVG + "g"):
        if g.get("class") == "node " + cls:
            out.append((g.find(SVG + "title").text or "", g))
    return out


def texts(svg):
    return [t.text or "" for t in ET.parse(svg).getroot().iter(SVG + "text")]


def num(n):
    return "{:,}".format(n)


def arena_tensors(report):
    return [t for t in report["tensors"] if t["offset"] is not None and t["bytes"]]


def in_use(report):
    """Bytes in use per step: the union of padded ranges of live tensors."""
    align = report["alignment"]
    used = []
    for s in range(len(report["steps"])):
        ranges = sorted((t["offset"], t["offset"] + -(-t["bytes"] // align) * align)
                        for t in arena_tensors(report)
                        if t["first_step"] <= s <= t["last_step"])
        total, lo, hi = 0, None, None
        for a, b in ranges:
            if hi is None or a > hi:
                total += (hi - lo) if hi is not None else 0
                lo, hi = a, b
            else:
                hi = max(hi, b)
        used.append(total + ((hi - lo) if hi is not None else 0))
    return used


def phase_runs(report):
    runs, steps = [], report["steps"]
    for s, st in enumerate(steps):
        if runs and runs[-1][0] == st["phase"]:
            runs[-1][2] = s
        else:
            runs.append([st["phase"], s, s])
    return runs


def tensor_title(t):
    return "%s\n%s, %s B\narena [%s, %s), steps %d to %d" % (
        t["name"], t["dtype"] + str(t["shape"]).replace(" ", ""),
        num(t["bytes"]), num(t["offset"]), num(t["offset"] + t["bytes"]),
        t["first_step"], t["last_step"])


def timeline_matches_report(svg, report, tag, all_drawn):
    rects = {title.split("\n")[0]: title for title, _ in shapes(svg, "tensor")}
    others = " ".join(title for title, _ in shapes(svg, "other"))
    m = re.search(r"under ([\d,]+) B each", others)
    below = int(m.group(1).replace(",", "")) if m else 0
    check(tag + ": merged only when asked", all_drawn == (below == 0))
    for t in arena_tensors(report):
        if t["bytes"] < below:
            check(tag + ": %s merged" % t["name"],
                  t["name"] not in rects and t["name"] in others or
                  "more" in others)
            continue
        title = rects.get(t["name"], "")
        check(tag + ": %s drawn as the report has it" % t["name"],
              title.startswith(tensor_title(t)), repr(title[:160]))
    check(tag + ": no other rectangles",
          len(rects) == len([t for t in arena_tensors(report) if t["bytes"] >= below]))
    bands = sorted(title for title, _ in shapes(svg, "band"))
    want = sorted("%s phase: steps %d to %d" % (p, a, b) for p, a, b in phase_runs(report))
    check(tag + ": one band per run of a phase", len(bands) == len(want) and all(
        b.startswith(w) for b, w in zip(bands, want)), "%s vs %s" % (bands, want))
    used, seen = in_use(report), {}
    for title, _ in shapes(svg, "step"):
        for m in re.finditer(r"step (\d+): .* \((\w+)\), ([\d,]+) B in use", title):
            seen[int(m.group(1))] = (m.group(2), int(m.group(3).replace(",", "")))
    check(tag + ": every step in a column, with its phase and bytes in use",
          seen == {s: (st["phase"], used[s]) for s, st in enumerate(report["steps"])})


def lenet_training():
    arenac("--train", "--dim", "N=1", "--json", path("lt.json"), "--timeline",
           path("lt.svg"), "--timeline-other", "0", LENET)
    report = json.load(open(path("lt.json")))
    timeline_matches_report(path("lt.svg"), report, "lenet --train", True)
    update = [t for t, _ in shapes(path("lt.svg"), "band") if t.startswith("update")]
    check("lenet --train: the update band says it uses no arena",
          len(update) == 1 and "no step reads or writes the arena" in update[0])
    check("lenet --train: titled by the file name",
          any(x.startswith("lenet.onnx: arena 116 KiB (118,352 B)")
              for x in texts(path("lt.svg"))))
    # The default: tensors under two points tall are merged.
    arenac("--train", "--dim", "N=1", "--timeline", path("lt2.svg"), LENET)
    timeline_matches_report(path("lt2.svg"), report, "lenet --train, default", False)


def comparison():
    arenac("--train", "--dim", "N=1", "--json", path("none.json"), LENET)
    arenac("--train", "--dim", "N=1", "--order", "file", "--inplace", "none",
           "--json", path("file.json"), "--timeline", path("cmp.svg"),
           "--timeline-compare", path("none.json"), LENET)
    a, b = json.load(open(path("file.json"))), json.load(open(path("none.json")))
    d = a["arena_bytes"] - b["arena_bytes"]
    words = texts(path("cmp.svg"))
    title = [x for x in words if "in this plan" in x]
    check("comparison: both arenas and the difference in the title",
          len(title) == 1 and "(%s B) in this plan" % num(a["arena_bytes"]) in title[0]
          and "(%s B) in none.json" % num(b["arena_bytes"]) in title[0]
          and ("more (+%.1f%%)" % (100.0 * d / b["arena_bytes"])) in title[0],
          title)
    peaks = [x for x in words if x.startswith("peak ")]
    check("comparison: both peaks marked",
          sorted(peaks) == sorted("peak %s at step %d" % (kib(r["lower_bound_bytes"]),
                                                         r["peak_step"]) for r in (a, b)),
          peaks)
    check("comparison: this plan's tensors and the other's, apart",
          len([t for t, _ in shapes(path("cmp.svg"), "tensor")
               if t.endswith("(below: none.json)")]) ==
          len([t for t, _ in shapes(path("cmp.svg"), "tensor")]) // 2)
    p = arenac("--train", "--dim", "N=1", "--timeline-compare", path("none.json"),
               LENET, rc=1)
    check("--timeline-compare needs --timeline", "needs --timeline" in p.stderr)
    with open(path("junk.json"), "w") as f:
        f.write('{"steps": [}')
    p = arenac("--timeline", path("x.svg"), "--timeline-compare", path("junk.json"),
               LENET, rc=1)
    check("a report that is not JSON is refused",
          "junk.json: not JSON: expected a value at byte 11" in p.stderr, p.stderr)
    p = arenac("--timeline", path("x.svg"), "--timeline-compare", TMP, LENET, rc=1)
    check("a folder is not a report", "is a directory" in p.stderr, p.stderr)


def kib(n):
    return "%.3g KiB" % (n / 1024) if n < 100 * 1024 else "%.0f KiB" % (n / 1024)


def deep_training():
    try:
        import onnx  # noqa: F401 (the generator needs it)
    except ImportError:
        print("skipped: onnx is not installed for", sys.executable)
        return
    model = path("deep.onnx")
    subprocess.run([sys.executable, os.path.join(ROOT, "testdata", "gen_deep_mlp.py"),
                    model, "150"], check=True)
    arenac("--train", "--dim", "N=64", "--checkpoint", "sqrt", "--json",
           path("deep.json"), "--timeline", path("deep.svg"), model)
    report = json.load(open(path("deep.json")))
    check("deep: thousands of steps", len(report["steps"]) > 2500, len(report["steps"]))
    timeline_matches_report(path("deep.svg"), report, "deep --train", False)
    root = ET.parse(path("deep.svg")).getroot()
    check("deep: the picture's width bounded",
          float(root.get("width").rstrip("pt")) < 2000, root.get("width"))
    labelled = [g for _, g in shapes(path("deep.svg"), "tensor") if g.find(SVG + "text") is not None]
    check("deep: names on 60 rectangles at most", 0 < len(labelled) <= 60, len(labelled))
    check("deep: recompute bands", any(t.startswith("recompute phase")
                                        for t, _ in shapes(path("deep.svg"), "band")))
    arenac("--train", "--dim", "N=64", "--checkpoint", "sqrt", "--timeline",
           path("deep.png"), "--dot", path("deep_dot.png"), model)


def png_size(name):
    with open(name, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24])


def dataflow(model, dims, tag, blocks):
    """Condensed dataflow as SVG and PNG: PNG at scale 1, under 8,000 px."""
    arenac(*dims, "--dot", path(tag + ".svg"), model)
    arenac(*dims, "--dot", path(tag + ".png"), model)
    root = ET.parse(path(tag + ".svg")).getroot()
    w, h = (float(root.get(k).rstrip("pt")) for k in ("width", "height"))
    pw, ph = png_size(path(tag + ".png"))
    check(tag + ": PNG at scale 1, readable size",
          abs(pw - w * 4 / 3) < 3 and abs(ph - h * 4 / 3) < 3 and ph < 8000 and pw < 8000,
          (w, h, pw, ph))
    labels = [g.find(SVG + "text").text for g in root.iter(SVG + "g")
              if g.get("class") == "cluster block"]
    counts_seen = sorted(int(re.match("\u00d7(\\d+)", x).group(1)) for x in labels)
    check(tag + ": repeated blocks", counts_seen == sorted(blocks), counts_seen)
    # In the order they are made, whatever the heap did (gvorder.c).
    titles = [g.find(SVG + "title").text for g in root.iter(SVG + "g")
              if g.get("class") == "cluster block"]
    check(tag + ": clusters in order",
          titles == ["cluster_b%d" % i for i in range(len(titles))], titles)


def shared_models():
    models = os.path.join(SHARED, "models")
    if not SHARED or not os.path.isdir(models):
        print("skipped: no shared models")
        return
    densenet = os.path.join(models, "light_densenet121.onnx")
    # The four dense blocks, as the paper has them; the first's layers
    # hold the peak.
    dataflow(densenet, ["--dim-default", "1"], "densenet", [6, 12, 24, 16])
    ocr = os.path.join(models, "ch_PP-OCRv4_det_infer.onnx")
    dataflow(ocr, ["--dim", "p2o.DynamicDimension.0=1", "--dim",
                   "p2o.DynamicDimension.1=96", "--dim", "p2o.DynamicDimension.2=160"],
             "ocr", [3, 8, 2, 3, 4, 3, 2, 4, 2])
    # Every step: too large for a bitmap, scaled down without a word.
    arenac("--dim-default", "1", "--dot", path("full.png"), "--dot-expand", densenet)
    check("densenet --dot-expand: under cairo's limit",
          max(png_size(path("full.png"))) < 32767, png_size(path("full.png")))
    arenac("--dim-default", "1", "--dot", path("focus.svg"), "--dot-focus", "65:2",
           densenet)
    ops = [t for t, _ in shapes(path("focus.svg"), "op")]
    check("densenet --dot-focus 65:2: the steps near 65",
          "s65" in ops and 3 <= len(ops) <= 20, ops)
    arenac("--dim-default", "1", "--dot", path("x.svg"), "--dot-focus", "668",
           densenet, rc=1)
    arenac("--dim-default", "1", "--dot", path("x.svg"), "--dot-focus", "x", densenet,
           rc=1)


lenet_training()
comparison()
deep_training()
shared_models()
subprocess.run(["rm", "-rf", TMP])
print("pictures: %d passed, %d failed" % tuple(counts))
sys.exit(1 if counts[1] else 0)
