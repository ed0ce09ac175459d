"""tally.py — what the Python suites share: the pass/fail count they print
(check() one verdict, its line "ok" or "FAIL what: detail"; summary() the
closing line tests/run.sh reads and the exit status), where arenac and
the shared models are, and need(), the one skipped: line of a suite whose
test-time modules are missing."""
import importlib
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
SHARED = os.environ.get("ARENAC_SHARED") or os.path.join(ROOT, "..",
                                                          "shared")


def need(*names):
    """The modules named (testdata/'s generators among them), in order;
    where one cannot be imported, prints the suite's skipped: line and
    exits 0."""
    sys.path.insert(0, os.path.join(ROOT, "testdata"))
    mods = []
    for name in names:
        try:
            mods.append(importlib.import_module(name))
        except ImportError as e:
            print("skipped: %s is not importable for %s (%s)" %
                  (name, sys.executable, e))
            sys.exit(0)
    return mods


class Tally:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, what, ok, detail=""):
        ok = bool(ok)
        self.passed += ok
        self.failed += not ok
        print("%s %s%s" % ("ok  " if ok else "FAIL", what,
                           "" if ok else ": %s" % (detail,)))
        return ok

    def summary(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed,
                                            self.failed))
        return 1 if self.failed else 0
