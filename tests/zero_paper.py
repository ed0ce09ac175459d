#!/usr/bin/env python3
"""zero_paper.py - per-device model-state memory under ZeRO data
parallelism, as Rajbhandari et al. count it ("ZeRO: Memory Optimizations
Toward Training Trillion Parameter Models", SC 2020, section 3.1 and
Figure 1).

Mixed-precision training with Psi parameters keeps, per parameter, 2 bytes
of fp16 parameters, 2 bytes of fp16 gradients and K bytes of optimizer
state; for Adam K = 12 (fp32 master parameters, momentum and variance, 4
bytes each), so 16 Psi bytes in all.  With N_d-way data parallelism:

  stage 0 (baseline)  (2 + 2 + K) Psi
  stage 1 (P_os)      2 Psi + 2 Psi + K Psi / N_d
  stage 2 (P_os+g)    2 Psi + (2 + K) Psi / N_d
  stage 3 (P_os+g+p)  (2 + 2 + K) Psi / N_d

Figure 1 (Psi = 7.5 B, N_d = 64, K = 12): 120 GB, 31.4 GB, 16.6 GB,
1.9 GB (decimal GB, rounded to 0.1).  The exact values are 120,000,000,000,
31,406,250,000, 16,640,625,000 and 1,875,000,000 bytes: 7.5e9 / 64 =
117,187,500 is an integer, so no shard is padded.  When Psi is not a
multiple of N_d, a device holds ceil(Psi / N_d) elements of each sharded
state (the last shard padded, as DeepSpeed pads its flat partitions);
per_device() says which with exact=False.

SGD with momentum in mixed precision: K = 8 (master copy and momentum).

Run it to print Figure 1 and check it (exit 1 if a figure is off).
"""
import sys

FIGURE1 = {"psi": 7_500_000_000, "nd": 64, "k": 12,
           "gb": {0: 120.0, 1: 31.4, 2: 16.6, 3: 1.9}}


def shard(psi, nd, exact=True):
    """Elements of a state sharded N_d ways that one device holds."""
    if exact:
        assert psi % nd == 0, "Psi %d is not a multiple of N_d %d" % (psi,
                                                                      nd)
        return psi // nd
    return -(-psi // nd)


def per_device(psi, nd, stage, k=12, exact=True):
    """{parameters, gradients, optimizer_state, total} in bytes on one
    device (the fields of issue 14's per-device JSON bill)."""
    assert stage in (0, 1, 2, 3)
    part = shard(psi, nd, exact)
    params = 2 * (part if stage >= 3 else psi)
    grads = 2 * (part if stage >= 2 else psi)
    state = k * (part if stage >= 1 else psi)
    return {"parameters": params, "gradients": grads,
            "optimizer_state": state, "total": params + grads + state}


def figure1():
    """The four bars of Figure 1, exact bytes per stage."""
    f = FIGURE1
    return {st: per_device(f["psi"], f["nd"], st, f["k"])["total"]
            for st in range(4)}


def selfcheck(out=sys.stdout):
    bad = 0
    exact = {0: 120_000_000_000, 1: 31_406_250_000, 2: 16_640_625_000,
             3: 1_875_000_000}
    for st, b in figure1().items():
        ok = b == exact[st] and round(b / 1e9, 1) == FIGURE1["gb"][st]
        bad += not ok
        out.write("  stage %d: %d bytes = %.1f GB (paper %.1f GB) %s\n" % (
            st, b, b / 1e9, FIGURE1["gb"][st], "ok" if ok else "FAIL"))
    # Stage 0 is N_d-independent; stage 3 is stage 0 / N_d.
    for nd in (1, 2, 8, 64):
        s0 = per_device(1_000_000 * 64, nd, 0)["total"]
        s3 = per_device(1_000_000 * 64, nd, 3)["total"]
        bad += s0 != 16 * 64_000_000 or s3 * nd != s0
    # Padding: 10 parameters over 4 devices -> 3 each.
    bad += per_device(10, 4, 3, exact=False)["total"] != 16 * 3
    return bad


if __name__ == "__main__":
    n = selfcheck()
    print("zero_paper: %d failed" % n)
    sys.exit(1 if n else 0)
