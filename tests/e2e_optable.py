#!/usr/bin/env python3
"""e2e_optable.py — the op table (arenac --list-ops) against ONNX's own
operator changelog: every default-domain entry names an ONNX op, and its
input and output counts are the union over every version of that op
(min of the minimums, max of the maximums; "*" for variadic).  The
changelog is the copy in $ARENAC_SHARED/docs (ONNX's docs/Changelog.md,
newer than Debian's python3-onnx); without it the test skips."""
import os
import re
import subprocess
import sys

ARENAC = os.environ.get("ARENAC", "build/arenac")
SHARED = os.environ.get("ARENAC_SHARED") or "../shared"
CHANGELOG = os.path.join(SHARED, "docs", "onnx-Changelog.md")
VARIADIC = 2147483647
# Ops ONNX Runtime registers in the default domain though ONNX has none of
# that name: the table follows the runtime that emits them.
ORT_DEFAULT_DOMAIN = {"SimplifiedLayerNormalization"}


def changelog_counts(path):
    """{op: [min_in, max_in, min_out, max_out]} over the default domain."""
    text = open(path, encoding="utf-8").read()
    parts = re.split(r'\n### <a name="([^"]+)"></a>', text)
    counts = {}
    for name, body in zip(parts[1::2], parts[2::2]):
        m = re.match(r"(.*)-(\d+)$", name)
        # A deprecated version lists no inputs: it is no version to plan.
        if not m or "." in m.group(1) or \
                "(deprecated)" in body.split("\n", 1)[0]:
            continue

        def count(kind):
            mm = re.search(r"#### " + kind +
                           r"( \((\d+) - (\d+|&#8734;)\))?\n\n<dl>(.*?)</dl>",
                           body, re.S)
            if not mm:
                return 0, 0
            if mm.group(1):
                hi = mm.group(3)
                return int(mm.group(2)), int(hi) if hi.isdigit() else VARIADIC
            n = len(re.findall(r"<dt>", mm.group(4)))
            return n, n

        (ilo, ihi), (olo, ohi) = count("Inputs"), count("Outputs")
        e = counts.setdefault(m.group(1), [ilo, ihi, olo, ohi])
        e[0], e[1] = min(e[0], ilo), max(e[1], ihi)
        e[2], e[3] = min(e[2], olo), max(e[3], ohi)
    return counts


def parse_count(s):
    lo, hi = s.split("-")
    return int(lo), VARIADIC if hi == "*" else int(hi)


def main():
    if not os.path.exists(CHANGELOG):
        print("skipped: no ONNX changelog (%s)" % CHANGELOG)
        return 0
    onnx = changelog_counts(CHANGELOG)
    out = subprocess.run([ARENAC, "--list-ops"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    header, rows = out[0].split("\t"), [l.split("\t") for l in out[1:]]
    assert header[:5] == ["domain", "op", "since", "inputs", "outputs"], header
    passed = failed = 0
    for row in rows:
        domain, op, ins, outs = row[0], row[1], row[3], row[4]
        if domain or op in ORT_DEFAULT_DOMAIN:
            continue
        if op not in onnx:
            print("FAIL %s: not an op of ONNX's default domain" % op)
            failed += 1
            continue
        want = onnx[op]
        got = list(parse_count(ins) + parse_count(outs))
        if got != want:
            print("FAIL %s: table says inputs %s outputs %s, ONNX's versions "
                  "take %d-%s and %d-%s" % (op, ins, outs, want[0],
                  "*" if want[1] == VARIADIC else want[1], want[2],
                  "*" if want[3] == VARIADIC else want[3]))
            failed += 1
        else:
            passed += 1
    print("optable: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
