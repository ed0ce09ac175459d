#!/usr/bin/env python3
"""e2e_checkpoint.py - `--checkpoint optimal` against its promises, and
what arenac says about checkpointing (issue 18, item 7).

On a GPT proxy (testdata/gen_gpt.py, 4 layers) and, when the shared
models are there, ResNet-50 and VGG-19:
  - monotone: `--budget-sweep` from the no-recompute arena down to the
    smallest reachable one, the recompute never rising as the budget
    grows, and every row planned again on its own (`--arena-budget` of the
    row, the step verified, and through the poison executor on the
    proxy) with the same arena and recompute;
  - never worse than any fixed policy (none, all, sqrt, and layer and
    selective where the model has them) at 90, 70, 50 and 35% of the
    no-recompute arena: where the policy fits, optimal fits with no more
    recompute;
  - pinned figures: the proxy's recompute at half its arena and its
    smallest arena, ResNet-50's smallest arena and its least recompute.
The messages:
  - `--checkpoint sqrt --arena-budget B` over sqrt's arena names what sqrt
    needs and, separately, what optimal does there; below the smallest
    reachable arena it says nothing fits; byte counts have separators;
  - the recompute quoted for the smallest reachable arena is the same
    whatever budget was asked for;
  - `--checkpoint none` is not labelled the least recompute, proven;
  - `--checkpoint optimal` without a budget plans the smallest reachable
    arena, at the recompute the exit-3 message quotes for it;
  - `--budget-sweep` honours `--arena-budget` (the lowest row is the budget) and
    ends, below the smallest reachable arena, with that arena.

Environment: ARENAC (default build/arenac), ARENAC_SHARED (../shared);
ARENAC_SANITIZE set: the shared models are skipped (time only).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
SHARED = os.environ.get("ARENAC_SHARED") or os.path.join(ROOT, "..",
                                                           "shared")
results = [0, 0]


def check(what, ok, detail=""):
    results[0 if ok else 1] += 1
    if not ok:
        print("FAIL %s %s" % (what, detail))
    return ok


def arenac(*args):
    p = subprocess.run([ARENAC] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


def train(model, *opts):
    """(exit code, training object or None, stderr)"""
    rc, out, err = arenac("-q", "--train", "--json", "-", *opts, model)
    return rc, json.loads(out)["training"] if rc == 0 else None, err


def pct(t):
    return 100.0 * t["recompute_flops"] / t["forward_flops"]


def sweep(model, *opts):
    """Rows (budget, arena, checkpoints, extra %, smallest) of the sweep."""
    rc, out, err = arenac("--train", "--budget-sweep", *opts, model)
    if not check("%s sweep %s: exit 0" % (model, opts), rc == 0, err):
        return []
    rows = []
    for line in out.splitlines()[2:]:
        m = re.match(r"\s*([\d,]+)\s+([\d,]+)\s+(\d+)\s+([\d.]+)%(.*)$",
                     line)
        check("sweep row parses: %r" % line, m is not None)
        if m:
            rows.append((int(m.group(1).replace(",", "")),
                         int(m.group(2).replace(",", "")),
                         int(m.group(3)), float(m.group(4)),
                         "smallest reachable" in m.group(5)))
    return rows


FIXED = ("none", "all", "sqrt", "layer", "selective")


def monotone(name, model, selfcheck):
    rows = sweep(model)
    if not rows:
        return
    rc, none, err = train(model, "--checkpoint", "none")
    check("%s: first row is the no-recompute arena" % name,
          rows[0][0] == none["arena_bytes"] and rows[0][3] == 0.0, rows[0])
    check("%s: last row is the smallest reachable arena" % name,
          rows[-1][4] and rows[-1][0] == rows[-1][1], rows[-1])
    for hi, lo in zip(rows, rows[1:]):
        check("%s: budgets fall down the sweep" % name, lo[0] < hi[0],
              (hi, lo))
        check("%s: recompute never rises with the budget (%d: %.2f%%, "
              "%d: %.2f%%)" % (name, lo[0], lo[3], hi[0], hi[3]),
              hi[3] <= lo[3])
    for b, arena, _, extra, _ in rows:
        opts = ["--arena-budget", str(b)] + (["--selfcheck"] if selfcheck else [])
        rc, t, err = train(model, *opts)
        if check("%s at %d: exit 0" % (name, b), rc == 0, err):
            check("%s at %d: the row's plan (arena %d, %.2f%%), alone: "
                  "%d, %.2f%%" % (name, b, arena, extra, t["arena_bytes"],
                                  pct(t)),
                  t["arena_bytes"] == arena and
                  "%.2f" % pct(t) == "%.2f" % extra and arena <= b)
    print("  %s: %d budgets, %.2f%% to %.2f%% recompute" % (
        name, len(rows), rows[0][3], rows[-1][3]))


def never_worse(name, model):
    rc, none, _ = train(model, "--checkpoint", "none")
    full = none["arena_bytes"]
    fixed = {}
    for p in FIXED:
        rc, t, err = train(model, "--checkpoint", p)
        if p in ("layer", "selective") and rc == 2:
            # A model without layers (or attention) has no such policy.
            check("%s --checkpoint %s: exit 2 says why" % (name, p),
                  ("--checkpoint %s: found no" % p) in err, err)
        elif check("%s --checkpoint %s plans" % (name, p), rc == 0, err):
            fixed[p] = t
    for frac in (90, 70, 50, 35):
        b = full * frac // 100
        rc, o, err = train(model, "--arena-budget", str(b))
        for p, t in sorted(fixed.items()):
            if t["arena_bytes"] > b:
                continue
            check("%s at %d%%: optimal fits where %s does" % (name, frac, p),
                  rc == 0, err)
            if rc == 0:
                check("%s at %d%%: optimal %.2f%% <= %s %.2f%%" % (
                    name, frac, pct(o), p, pct(t)),
                    o["recompute_flops"] <= t["recompute_flops"] and
                    o["arena_bytes"] <= b)


def smallest(model, budget):
    """(arena, recompute FLOPs) the exit-3 message names for budget."""
    rc, _, err = arenac("-q", "--train", "--arena-budget", str(budget), model)
    m = re.search(r"the smallest reachable arena is ([\d,]+) bytes, at "
                  r"([\d,]+) recompute FLOPs", err)
    if not check("budget %d: exit 3 names the smallest arena" % budget,
                 rc == 3 and m is not None, err):
        return None
    return (int(m.group(1).replace(",", "")),
            int(m.group(2).replace(",", "")))


def messages(model):
    rc, sq, _ = train(model, "--checkpoint", "sqrt")
    small = smallest(model, 1)
    if sq is None or small is None:
        return
    m_arena, m_cost = small
    # The same arena, the same recompute, whatever the budget asked for.
    check("smallest arena and recompute do not depend on the budget",
          smallest(model, m_arena - 1) == small)
    # sqrt over the budget, optimal under it.
    b = (m_arena + sq["arena_bytes"]) // 2
    rc, _, err = arenac("-q", "--train", "--checkpoint", "sqrt",
                        "--arena-budget", str(b), model)
    check("sqrt over the budget: exit 3 with sqrt's own arena and "
          "optimal's fit", rc == 3 and
          ("--checkpoint sqrt needs an arena of {:,} bytes".format(
              sq["arena_bytes"]) in err) and
          ("above the budget of {:,} bytes".format(b) in err) and
          "--checkpoint optimal fits it" in err and
          "smallest reachable arena is" not in err, err)
    rc, _, err = arenac("-q", "--train", "--checkpoint", "sqrt",
                        "--arena-budget", str(m_arena - 1), model)
    check("sqrt under the smallest arena: nothing fits, said apart, with "
          "the figures optimal quotes", rc == 3 and "no selection fits it: "
          "the smallest arena any reaches is {:,} bytes, at {:,} recompute "
          "FLOPs".format(m_arena, m_cost) in err, err)
    # none is no search.
    rc, out, err = arenac("--train", "--checkpoint", "none", model)
    check("--checkpoint none: no recompute, not 'least recompute, proven'",
          rc == 0 and "(nothing recomputed)" in out and
          "least recompute" not in out, out)
    # optimal alone: the smallest arena, at its least recompute.
    rc, t, err = train(model, "--checkpoint", "optimal")
    check("--checkpoint optimal without a budget plans the smallest "
          "arena", rc == 0 and t["arena_bytes"] == m_arena and
          t["recompute_flops"] == m_cost, (t and t["arena_bytes"], small))
    # The sweep's range.
    rows = sweep(model, "--arena-budget", str(b))
    check("--budget-sweep --budget B ends at B",
          rows and rows[-1][0] == b and all(r[0] >= b for r in rows),
          rows[-1:])
    rows = sweep(model, "--arena-budget", "1")
    check("--budget-sweep below the smallest arena ends with it",
          rows and rows[-1][4] and rows[-1][1] == m_arena and
          "%.2f" % rows[-1][3] == "%.2f" % (100.0 * m_cost / sq[
              "forward_flops"]), rows[-1:])


def pins(name, model, want):
    """want: {"half": recompute FLOPs at half the arena,
    "smallest": (arena, recompute)}"""
    rc, none, _ = train(model, "--checkpoint", "none")
    half = none["arena_bytes"] // 2
    if "half" in want:
        rc, t, err = train(model, "--arena-budget", str(half))
        check("%s at half its arena: %s recompute FLOPs, pinned %d" % (
            name, t and t["recompute_flops"], want["half"]),
            rc == 0 and t["recompute_flops"] == want["half"] and
            t["arena_bytes"] <= half, err)
    if "smallest" in want:
        got = smallest(model, 1)
        check("%s smallest arena %s, pinned %s" % (name, got,
                                                    want["smallest"]),
              got == want["smallest"])


def main():
    tmp = tempfile.mkdtemp()
    gpt = os.path.join(tmp, "gpt.onnx")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "testdata",
                                                     "gen_gpt.py"), gpt,
                        "--layers", "4", "--seq", "32", "--hidden", "64",
                        "--heads", "4", "--batch", "2"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode:
        print("skipped: the GPT proxy (%s)" % p.stderr.strip()[-100:])
    else:
        monotone("gpt proxy", gpt, True)
        never_worse("gpt proxy", gpt)
        messages(gpt)
        pins("gpt proxy", gpt, {"half": 4427776,
                                "smallest": (344592, 23711744)})
    models = os.path.join(SHARED, "models")
    r50 = os.path.join(models, "light_resnet50.onnx")
    vgg = os.path.join(models, "light_vgg19.onnx")
    if os.environ.get("ARENAC_SANITIZE"):
        # For time only: the searches stop at the same work there.
        print("skipped: resnet50, vgg19 (sanitizer build: too slow)")
    elif os.path.isfile(r50) and os.path.isfile(vgg):
        monotone("resnet50", r50, False)
        never_worse("resnet50", r50)
        pins("resnet50", r50, {"half": 1487894016,
                               "smallest": (23908368, 7325470208)})
        never_worse("vgg19", vgg)
        messages(vgg)
    else:
        print("skipped: resnet50, vgg19 (no shared models)")
    print("e2e_checkpoint: %d passed, %d failed" % tuple(results))
    return 1 if results[1] else 0


if __name__ == "__main__":
    sys.exit(main())
