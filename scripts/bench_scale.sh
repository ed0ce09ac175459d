#!/bin/sh
# bench_scale.sh — how arenac's time grows with the graph: synthetic chains
# and residual stacks of 1k, 10k, 100k and 1M nodes planned for inference,
# and transformer-like training steps of 250, 500, 1000 and 2000 layers
# (--train, no budget), all with default options.  Per row, over 3 whole
# runs (load, infer, plan, verify, JSON written): the median wall time, the
# median CPU time (user + system: what a quiet machine's wall time would
# be), the median plan time from --stats (order, aliases, offsets; not
# loading or verifying) and the largest resident memory.  The graphs come
# from scripts/gen_scale.py and are kept in $SCALE_CACHE (default
# /tmp/arenac-scale-$USER) so that a second run skips writing them.
#
#   ARENAC=build/arenac sh scripts/bench_scale.sh
#   SCALE_SIZES="1000 10000" SCALE_LAYERS="250" sh scripts/bench_scale.sh
ARENAC=${ARENAC:-build/arenac}
PYTHON=${PYTHON:-/usr/bin/python3}
CACHE=${SCALE_CACHE:-/tmp/arenac-scale-$(id -un)}
mkdir -p "$CACHE" || exit 1
exec "$PYTHON" - "$ARENAC" "$CACHE" "${SCALE_SIZES:-1000 10000 100000 1000000}" \
	"${SCALE_LAYERS:-250 500 1000 2000}" <<'PY'
import os, re, statistics, subprocess, sys, time

arenac, cache, sizes, layers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
gen = os.path.join(os.getcwd(), "scripts", "gen_scale.py")


def graph(kind, n):
    path = os.path.join(cache, "%s_%d.onnx" % (kind, n))
    if not os.path.exists(path):
        tmp = path + ".tmp"
        subprocess.run([sys.executable, gen, kind, str(n), tmp], check=True)
        os.rename(tmp, path)
    return path


def run(path, *opts):
    """(wall s, plan ms, max RSS MB, CPU s) of one run, or None."""
    t0 = time.monotonic()
    p = subprocess.Popen([arenac, "-q", "--stats", "--json", os.devnull,
                          *opts, path], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    m = re.search(r"plan time ([\d.]+) ms", err)
    if status or not m:
        print("  failed: %s" % err.strip().splitlines()[-1:])
        return None
    return (wall, float(m.group(1)), usage.ru_maxrss / 1024.0,
            usage.ru_utime + usage.ru_stime)


def row(label, nodes, path, *opts):
    rs = [run(path, *opts) for _ in range(3)]
    if None in rs:
        return
    print("%-22s %9d %9.3f %9.3f %9.3f %8.0f" % (
        label, nodes, statistics.median(r[0] for r in rs),
        statistics.median(r[3] for r in rs),
        statistics.median(r[1] for r in rs) / 1e3, max(r[2] for r in rs)))
    sys.stdout.flush()


print("%-22s %9s %9s %9s %9s %8s" % ("graph", "nodes", "run_s", "cpu_s",
                                     "plan_s", "max_MB"))
for kind in ("chain", "residual"):
    for n in map(int, sizes.split()):
        row("%s %d" % (kind, n), n, graph(kind, n))
for n in map(int, layers.split()):
    # 13 forward nodes per layer (gen_scale.py).
    row("train %d layers" % n, 13 * n, graph("train", n), "--train")
PY
