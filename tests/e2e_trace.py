#!/usr/bin/env python3
"""e2e_trace.py — --trace writes the Trace Event Format, and its numbers
are the plan's.

A checker of the format as catapult's trace viewer and Perfetto read the
JSON object form: traceEvents a list; every event a name and a ph; M
(metadata) events name a process or thread; X (complete) events have
pid, tid, ts and dur >= 0, and the X events of one thread never overlap
(the viewers nest them, so an overlap would draw a wrong picture); C
(counter) events have pid, ts and numeric args, and come in time order.
Then against the --json report of the same plan:
  - the steps thread has one slice per step, in order, with its op;
  - every tensor owning arena bytes is one slice from its first to its
    last step, with its offset and size;
  - at every step the counters' arena kinds add up to the bytes live
    then (owned tensors live at that step, plus the step's workspace);
  - a training step's counters carry the bill's persistent parts;
  - --stats' top consumers at the peak (by layer or module scope) add up
    to the bytes live at the peak step, on LeNet where they are few.
On LeNet (inference), a GPT training step with sqrt recomputation, and
the stages of a two-stage pipeline (one trace each: --trace t%d.json).
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402

T = Tally('e2e_trace')
check = T.check

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")
ARENA_KINDS = ("activations", "inputs", "outputs", "workspace",
               "backward (gradients)", "recomputed")




def format_errors(tr):
    """What breaks the Trace Event Format, as a list of strings."""
    errs = []
    evs = tr.get("traceEvents")
    if not isinstance(evs, list):
        return ["traceEvents is not a list"]
    slices, last_ts = {}, {}
    for e in evs:
        ph, name = e.get("ph"), e.get("name")
        if not isinstance(name, str) or ph not in ("M", "X", "C"):
            errs.append("bad name or ph: %r" % e)
            continue
        if ph == "M":
            if name not in ("process_name", "thread_name") or \
                    "name" not in e.get("args", {}):
                errs.append("bad metadata: %r" % e)
            continue
        if not isinstance(e.get("pid"), int) or \
                not isinstance(e.get("ts"), (int, float)):
            errs.append("no pid/ts: %r" % e)
            continue
        if ph == "X":
            if not isinstance(e.get("tid"), int) or e.get("dur", -1) < 0:
                errs.append("bad slice: %r" % e)
                continue
            slices.setdefault((e["pid"], e["tid"]), []).append(
                (e["ts"], e["ts"] + e["dur"], name))
        else:
            args = e.get("args", {})
            if not args or not all(isinstance(v, (int, float))
                                   for v in args.values()):
                errs.append("counter args not numeric: %r" % e)
            key = (e["pid"], name)
            if e["ts"] < last_ts.get(key, -1):
                errs.append("counter %s goes back in time" % name)
            last_ts[key] = e["ts"]
    for key, ss in slices.items():
        ss.sort()
        for a, b in zip(ss, ss[1:]):
            if b[0] < a[1]:
                errs.append("slices %s and %s overlap on %s" % (
                    a[2], b[2], key))
                break
    return errs


def against_report(what, tr, rep):
    evs = tr["traceEvents"]
    us = tr["otherData"]["step_us"]
    steps = [e for e in evs if e["ph"] == "X" and e["tid"] == 1]
    check(what + ": one slice per step, in order, with its op",
          [(e["ts"] // us, e["args"]["op"]) for e in steps] ==
          [(i, s["op"]) for i, s in enumerate(rep["steps"])])
    tensors = {t["name"]: t for t in rep["tensors"]}

    def root(n):
        while tensors[n]["alias_of"] or tensors[n]["inplace_of"]:
            n = tensors[n]["alias_of"] or tensors[n]["inplace_of"]
        return n

    # A storage lives from its owner's first step to the last step of any
    # tensor sharing it (a view, an in-place output).
    span = {}
    for t in rep["tensors"]:
        if t["offset"] is not None and t["first_step"] is not None:
            r = root(t["name"])
            f, l = span.get(r, (t["first_step"], t["last_step"]))
            span[r] = (min(f, t["first_step"]), max(l, t["last_step"]))
    owned = [t for t in rep["tensors"] if t["name"] in span and
             not t["alias_of"] and not t["inplace_of"]]
    ts = {e["name"]: e for e in evs if e["ph"] == "X" and e["tid"] > 1}
    check(what + ": %d storages, each over its steps" % len(owned), all(
        t["name"] in ts and
        ts[t["name"]]["ts"] == us * span[t["name"]][0] and
        ts[t["name"]]["dur"] == us * (span[t["name"]][1] -
                                      span[t["name"]][0] + 1) and
        ts[t["name"]]["args"]["offset"] == t["offset"] and
        ts[t["name"]]["args"]["bytes"] == t["bytes"] for t in owned)
          and len(ts) == len(owned), "")
    counters = {e["ts"] // us: e["args"] for e in evs if e["ph"] == "C"}
    bad = []
    for i, st in enumerate(rep["steps"]):
        want = sum(t["bytes"] for t in owned
                   if span[t["name"]][0] <= i <= span[t["name"]][1])
        want += st.get("scratch_bytes") or 0
        got = sum(counters[i][k] for k in ARENA_KINDS)
        if got != want:
            bad.append((i, got, want))
    check(what + ": the counters are the live bytes at every step",
          not bad, bad[:3])
    return counters


def run(*args):
    r = subprocess.run([ARENAC, "-q"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    return r


def case(tmp, what, *args, stages=0):
    t = os.path.join(tmp, "t%d.json" if stages else "t.json")
    j = os.path.join(tmp, "r%d.json" if stages else "r.json")
    r = run("--trace", t, "--json", j, *args)
    if not check(what + ": arenac writes it", r.returncode == 0, r.stderr):
        return None
    out = []
    for k in range(max(stages, 1)):
        tr = json.load(open(t % k if stages else t))
        rep = json.load(open(j % k if stages else j))
        name = what + (" stage %d" % k if stages else "")
        errs = format_errors(tr)
        check(name + ": Trace Event Format", not errs, errs[:3])
        out.append((against_report(name, tr, rep), rep))
    return out


def main():
    with tempfile.TemporaryDirectory() as tmp:
        got = case(tmp, "lenet", "--dim", "N=1",
                   os.path.join(ROOT, "testdata", "lenet.onnx"))
        if got:
            counters, rep = got[0]
            r = subprocess.run([ARENAC, "-q", "--stats", "--dim", "N=1",
                                os.path.join(ROOT, "testdata", "lenet.onnx")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True)
            tops = [l for l in r.stderr.splitlines() if " at the peak: " in l]
            total = sum(int(l.split(": ")[2].split()[1].replace(",", ""))
                        for l in tops)
            peak = rep["peak_step"]
            want = sum(counters[peak][k] for k in ARENA_KINDS)
            check("lenet --stats: %d top consumers add up to the %d bytes "
                  "live at the peak (its lower bound)" % (len(tops), want),
                  tops and len(tops) < 10 and total == want ==
                  rep["lower_bound_bytes"], r.stderr)
        gpt = os.path.join(tmp, "gpt.onnx")
        subprocess.run([PYTHON, os.path.join(ROOT, "testdata", "gen_gpt.py"),
                        "--layers", "4", gpt], check=True,
                       stdout=subprocess.DEVNULL)
        got = case(tmp, "gpt train, sqrt", "--train", "--optimizer", "adam",
                   "--checkpoint", "sqrt", gpt)
        if got:
            counters, rep = got[0]
            b = rep["training"]
            check("gpt train: recomputed bytes and the bill's persistent "
                  "parts in the counters",
                  any(c["recomputed"] for c in counters.values()) and
                  counters[0]["parameters (persistent)"] ==
                  b["parameter_bytes"] and
                  counters[0]["optimizer state (persistent)"] ==
                  b["optimizer_state_bytes"], counters[0])
        case(tmp, "gpt pipeline", "--train", "--pp", "2", "--microbatches",
             "2", gpt, stages=2)
    print("skipped: loading the traces in Perfetto itself (its trace "
          "processor is no Debian package); the checker above reads the "
          "format as it does")
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
