"""tally.py — the pass/fail count the Python suites print: check() one
verdict (its line, "ok" or "FAIL what: detail"), summary() the closing
line tests/run.sh reads and the exit status."""


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
