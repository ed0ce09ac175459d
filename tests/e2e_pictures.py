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

Text, measured in DejaVu Sans (the widest common sans, what rsvg and
browsers without Helvetica draw with; tests/ttf_widths.py reads the
font's own advances): no two texts overlap, none crosses an edge of its own
node's shapes (a legend cell, a tensor's rectangle, an op's box) or a
legend swatch, none leaves the canvas.  A training timeline's update phase,
which touches no arena tensor, takes a few percent of the width; its
bottom chart is the device's memory: the bill's persistent parts, byte for
byte, under the arena in use, and the device's total and limit as lines.

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
sys.path.insert(0, os.path.join(ROOT, "tests"))
import ttf_widths  # noqa: E402
FONT = ttf_widths.Font(ttf_widths.DEJAVU_SANS) \
    if os.path.exists(ttf_widths.DEJAVU_SANS) else None
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
    spans = [(t["first_step"], t["last_step"], t["offset"],
              t["offset"] + -(-t["bytes"] // align) * align)
             for t in arena_tensors(report)]
    used = []
    for s in range(len(report["steps"])):
        ranges = sorted((a, b) for first, last, a, b in spans
                        if first <= s <= last)
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


def outline(el):
    """(x0, y0, x1, y1) of a polygon or path."""
    nums = [float(v) for v in re.findall(r"-?[\d.]+", el.get("points") or el.get("d"))]
    xs, ys = nums[0::2], nums[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def text_box(t):
    """A text element's extent in DejaVu Sans: its advances across, cap
    height above the baseline and descenders below."""
    size = float(t.get("font-size"))
    w = FONT.width(t.text or "", size)
    x, y = float(t.get("x")), float(t.get("y"))
    anchor = t.get("text-anchor")
    x0 = x if anchor == "start" else x - w if anchor == "end" else x - w / 2
    return x0, y - 0.73 * size, x0 + w, y + 0.24 * size


def meet(a, b, tol=0.3):
    return a[0] < b[2] - tol and b[0] < a[2] - tol and a[1] < b[3] - tol and b[1] < a[3] - tol


def inside(a, b, tol=0.3):
    return a[0] >= b[0] - tol and a[2] <= b[2] + tol and a[1] >= b[1] - tol and a[3] <= b[3] + tol


def text_fits(svg, tag):
    """Every text, in DejaVu Sans, clear of the others, inside or clear of
    each shape of its own node, clear of the legend's swatches, on the
    canvas; returns how many texts."""
    if FONT is None:
        print("skipped: %s: no DejaVu Sans (fonts-dejavu-core) to measure with" % tag)
        return 0
    root = ET.parse(svg).getroot()
    m = re.search(r"translate\(([-\d.]+) ([-\d.]+)\)", root.find(SVG + "g").get("transform"))
    dx = float(m.group(1))
    width = float(root.get("viewBox").split()[2])
    texts, swatches, bad = [], [], []
    for g in root.iter(SVG + "g"):
        mine = [(text_box(t), t.text) for t in g.findall(SVG + "text")]
        shapes = [outline(e) for e in g.findall(SVG + "polygon") + g.findall(SVG + "path")]
        if g.get("class") == "node legend" and not mine:
            swatches += shapes
        if g.get("class") == "graph":
            shapes = []   # the canvas
        for box, words in mine:
            for s in shapes:
                if meet(box, s) and not inside(box, s):
                    bad.append("%r crosses an edge of its node's %s" % (words, s))
        texts += mine
    for i, (a, wa) in enumerate(texts):
        if a[0] + dx < -0.3 or a[2] + dx > width + 0.3:
            bad.append("%r leaves the canvas" % wa)
        for b, wb in texts[i + 1:]:
            if meet(a, b):
                bad.append("%r and %r overlap" % (wa, wb))
        for s in swatches:
            if meet(a, s):
                bad.append("%r covers a legend swatch" % wa)
    check(tag + ": text fits in DejaVu Sans", not bad and texts, bad[:4])
    return len(texts)


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


BILL_KEYS = {"parameters": "parameter_bytes", "gradients": "gradient_bytes",
             "master weights": "master_weight_bytes",
             "optimizer state": "optimizer_state_bytes",
             "frozen parameters": "frozen_bytes",
             "quantized base": "quantized_base_bytes",
             "constants": "constant_bytes", "reserve": "reserve_bytes"}


def update_share(svg, tag, most=0.06):
    """The update phase's band, whose steps touch no arena tensor, is
    narrow: at most `most` of the plot's width."""
    bands = [(t, outline(g.find(SVG + "polygon"))) for t, g in shapes(svg, "band")]
    x0, x1 = min(b[0] for _, b in bands), max(b[2] for _, b in bands)
    update = [b for t, b in bands if t.startswith("update phase")]
    share = sum(b[2] - b[0] for b in update) / (x1 - x0)
    check(tag + ": the update band is narrow", update and share <= most,
          "%.1f%% of the width" % (100 * share))
    return share


def device_chart(svg, report, tag, limit=None):
    """The bottom chart: the bill's persistent parts (with --dp/--tp/--pp,
    the stage's first device's), each a band of its bytes stacked from the
    chart's floor on one scale, named in the legend; the device total's
    line where the bill has it, the limit's with a device."""
    bill = report["training"]
    want = [(k, bill[v]) for k, v in BILL_KEYS.items() if bill[v]]
    sizes = {"device_total_bytes": bill["device_total_bytes"],
             "device_bytes": bill["device_bytes"]}
    if "devices" in report:
        d = [x for x in report["devices"] if x["stage"] == report["parallel"]["stage"]][0]
        want = [(k, d[v]) for k, v in (("parameters", "parameters"),
                                        ("gradients", "gradients"),
                                        ("optimizer state", "optimizer_state"),
                                        ("communication buffers", "buffers"),
                                        ("constants", "constants")) if d[v]]
        sizes = {"device_total_bytes": d["total"], "device_bytes": limit}
    bands = []
    for title, g in shapes(svg, "persistent"):
        m = re.match(r"(.+?): ([\d,]+) B, ", title)
        bands.append((m.group(1), int(m.group(2).replace(",", "")),
                      outline(g.find(SVG + "polygon"))))
    check(tag + ": the persistent parts are the bill's, byte for byte",
          [(n, b) for n, b, _ in bands] == want, ([(n, b) for n, b, _ in bands], want))
    if not bands:
        return
    # The scale: the device's limit, else its total, a line drawn at its
    # bytes over the chart's floor (points are whole: a point's error).
    floor = bands[0][2][3]
    lines = {cls: [outline(g.find(SVG + "polygon")) for _, g in shapes(svg, cls)]
             for cls in ("device-total", "device-limit")}
    key = "device_bytes" if sizes["device_bytes"] else "device_total_bytes"
    ref = lines["device-limit" if sizes["device_bytes"] else "device-total"]
    scale = (floor - ref[0][1]) / sizes[key] if ref else 0
    at, ok = floor, bool(ref)
    for _, b, o in bands:
        ok = ok and abs(o[3] - at) < 1.01 and abs((o[3] - o[1]) - b * scale) < 1.01
        at = o[1]
    check(tag + ": the parts stacked on the chart's scale", ok, (bands, scale))
    words = texts(svg)
    check(tag + ": each part named in the legend with its size",
          all(any(w.startswith(n + " ") and w[len(n) + 1:][:1].isdigit() for w in words)
              for n, _, _ in bands), words[:40])
    for cls, key in (("device-total", "device_total_bytes"), ("device-limit", "device_bytes")):
        if sizes[key] is None:
            check(tag + ": no %s line without a device" % cls, not lines[cls], lines[cls])
            continue
        check(tag + ": the %s line at its bytes" % cls, len(lines[cls]) == 1 and
              abs(floor - lines[cls][0][1] - sizes[key] * scale) < 1.01,
              (lines[cls], sizes[key] * scale))


def lenet_training():
    arenac("--train", "--dim", "N=1", "--json", path("lt.json"), "--timeline",
           path("lt.svg"), "--timeline-other", "0", LENET)
    report = json.load(open(path("lt.json")))
    timeline_matches_report(path("lt.svg"), report, "lenet --train", True)
    text_fits(path("lt.svg"), "lenet --train")
    update_share(path("lt.svg"), "lenet --train")
    device_chart(path("lt.svg"), report, "lenet --train")
    # A device: its limit a line; Adam's state and a reserve are parts.
    arenac("--train", "--dim", "N=1", "--optimizer", "adam", "--memory", "sram:8M",
           "--reserve", "1M", "--json", path("lm.json"), "--timeline", path("lm.svg"),
           LENET)
    lm = json.load(open(path("lm.json")))
    device_chart(path("lm.svg"), lm, "lenet --train --memory")
    check("lenet --train --memory: Adam's state and the reserve drawn",
          {"optimizer state", "reserve"} <= {t.split(":")[0] for t, _ in
                                             shapes(path("lm.svg"), "persistent")})
    text_fits(path("lm.svg"), "lenet --train --memory")
    # Two data-parallel devices under ZeRO-1: a device's own bill (the
    # optimizer state halved, the gradient bucket), not the whole model's.
    arenac("--train", "--dim", "N=2", "--dp", "2", "--zero", "1", "--optimizer", "adam",
           "--memory", "hbm:8M", "--json", path("dp.json"), "--timeline", path("dp.svg"),
           LENET)
    dp = json.load(open(path("dp.json")))
    device_chart(path("dp.svg"), dp, "lenet --dp 2 --zero 1", limit=8 << 20)
    check("lenet --dp 2 --zero 1: the optimizer state a device holds",
          any(t.startswith("optimizer state: %s B" % num(dp["training"]["optimizer_state_bytes"] // 2))
              for t, _ in shapes(path("dp.svg"), "persistent")))
    text_fits(path("dp.svg"), "lenet --dp 2 --zero 1")
    # Inference: no device chart, the bytes in use alone.
    arenac("--dim", "N=1", "--timeline", path("li.svg"), "--dot", path("ld.svg"), LENET)
    check("lenet: no persistent bands without a bill",
          not shapes(path("li.svg"), "persistent"))
    text_fits(path("li.svg"), "lenet timeline")
    text_fits(path("ld.svg"), "lenet dataflow")
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
    text_fits(path("cmp.svg"), "comparison")
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


def generated(name, script, *args):
    """A model testdata's generator writes, or None without onnx."""
    try:
        import onnx  # noqa: F401 (the generators need it)
    except ImportError:
        print("skipped: onnx is not installed for", sys.executable)
        return None
    subprocess.run([sys.executable, os.path.join(ROOT, "testdata", script), path(name),
                    *args], check=True, capture_output=True)
    return path(name)


def deep_training():
    model = generated("deep.onnx", "gen_deep_mlp.py", "150")
    if not model:
        return
    arenac("--train", "--dim", "N=64", "--checkpoint", "sqrt", "--json",
           path("deep.json"), "--timeline", path("deep.svg"), model)
    report = json.load(open(path("deep.json")))
    check("deep: thousands of steps", len(report["steps"]) > 2500, len(report["steps"]))
    timeline_matches_report(path("deep.svg"), report, "deep --train", False)
    root = ET.parse(path("deep.svg")).getroot()
    # 1,800 points of plot, the offsets' margin and the device lines'
    # names at the right.
    check("deep: the picture's width bounded",
          float(root.get("width").rstrip("pt")) < 2100, root.get("width"))
    labelled = [g for _, g in shapes(path("deep.svg"), "tensor") if g.find(SVG + "text") is not None]
    check("deep: names on 60 rectangles at most", 0 < len(labelled) <= 60, len(labelled))
    check("deep: recompute bands", any(t.startswith("recompute phase")
                                        for t, _ in shapes(path("deep.svg"), "band")))
    text_fits(path("deep.svg"), "deep --train")
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
    text_fits(path(tag + ".svg"), tag)
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


def gpt2_training():
    """GPT-2 small's step (testdata/gen_gpt.py, the README's) on an RTX
    4090: the update band narrow, the device's memory under the arena."""
    model = generated("gpt2.onnx", "gen_gpt.py", "--preset", "gpt2-small")
    if not model:
        return
    arenac("--train", "--optimizer", "adam", "--precision", "mixed-bf16", "--device",
           "RTX-4090", "--json", path("gpt2.json"), "--timeline", path("gpt2.svg"), model)
    report = json.load(open(path("gpt2.json")))
    text_fits(path("gpt2.svg"), "gpt2 --train")
    update_share(path("gpt2.svg"), "gpt2 --train")
    device_chart(path("gpt2.svg"), report, "gpt2 --train --device RTX-4090")


def shared_models():
    models = os.path.join(SHARED, "models")
    if not SHARED or not os.path.isdir(models):
        print("skipped: no shared models")
        return
    densenet = os.path.join(models, "light_densenet121.onnx")
    arenac("--train", "--dim-default", "1", "--json", path("dn.json"), "--timeline",
           path("dn.svg"), densenet)
    report = json.load(open(path("dn.json")))
    text_fits(path("dn.svg"), "densenet --train")
    update_share(path("dn.svg"), "densenet --train")
    device_chart(path("dn.svg"), report, "densenet --train")
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
gpt2_training()
shared_models()
subprocess.run(["rm", "-rf", TMP])
print("pictures: %d passed, %d failed" % tuple(counts))
sys.exit(1 if counts[1] else 0)
