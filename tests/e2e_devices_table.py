#!/usr/bin/env python3
"""e2e_devices_table.py — named devices (planner/device_table.c).

  - --list-devices prints every device the issue names and the host
    memories, with the table's numbers (H100-SXM: 80 GiB HBM3 at
    3.35 TB/s, 989.4 TFLOP/s, 450 GB/s NVLink, the CUDA context reserve);
  - --device H100-SXM on the GPT-2 small step (testdata/gen_gpt.py,
    mixed bf16 Adam) fits 80 GiB with the default reserve of 266,076,160
    bytes, and the summary names the device, its kind and bandwidth;
  - --memory with the explicit numbers (name:80G:3.35T and that
    --reserve) bills the same device_total_bytes; --memory H100-SXM is
    the same device without the reserve;
  - --device with an explicit --reserve uses the explicit one (0 too);
    --device NAME:SIZE the size the driver shows;
  - the summary's last line: the step's FLOPs at the device's peak and
    its activation traffic at the memory's bandwidth;
  - --fit 8xH100-SXM searches 80 GiB less the reserve per device;
  - --device H100-SXM with --dp 2 takes the table's FLOP/s for the
    step-time estimate (the same step as 2 devices at 989.4T by --fit's
    numbers would be);
  - a typo (--device H100-SMX) is exit 1 naming H100-SXM; a host memory
    as --device, or as --memory without a size, is exit 1.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import Tally  # noqa: E402

T = Tally('e2e_devices_table')
check = T.check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARENAC = os.environ.get("ARENAC") or os.path.join(ROOT, "build", "arenac")
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")

G = 1 << 30
CUDA_CONTEXT = 266076160
STEP = ["--optimizer", "adam", "--precision", "mixed-bf16"]

# Every device the issue names, and the host memories.
NAMES = ["A100-SXM-40GB", "A100-SXM-80GB", "A100-PCIe-80GB", "H100-PCIe",
         "H100-SXM", "H200", "B200", "L4", "L40S", "RTX-3090", "RTX-4090",
         "RTX-5090", "MI300X", "Jetson-AGX-Orin-64GB", "Jetson-Orin-Nano-8GB",
         "DDR4-3200-2ch", "DDR4-3200-8ch", "DDR5-4800-8ch", "DDR5-4800-12ch",
         "DDR5-5600-8ch", "LPDDR5X-8533-128bit"]




def arenac(*args):
    return subprocess.run([ARENAC] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=600)


def train_json(tmp, model, *opts):
    path = os.path.join(tmp, "r.json")
    if os.path.exists(path):
        os.remove(path)
    r = arenac("-q", "--train", "--json", path, *STEP, *opts, model)
    rep = json.load(open(path)) if r.returncode == 0 else None
    return r, rep


def listing():
    r = arenac("--list-devices")
    rows = {l.split()[0]: l.split() for l in r.stdout.splitlines()[1:]
            if l.strip() and not l.startswith(("memory:", "bandwidth", "reserve"))}
    check("--list-devices: exit 0", r.returncode == 0, r.stderr)
    missing = [n for n in NAMES if n not in rows]
    check("--list-devices: every device", not missing, missing)
    h = rows.get("H100-SXM", [])
    check("--list-devices: H100-SXM's row",
          h == ["H100-SXM", "80", "GiB", "HBM3", "3.35", "TB/s", "989.4",
                "TFLOP/s", "450", "GB/s", "NVLink", "4", "266,076,160"], h)
    lower = [n.lower() for n in rows]
    check("--list-devices: names unique, case aside",
          len(set(lower)) == len(lower), lower)
    # An accelerator has every fact; a host memory only its kind and
    # bandwidth (its size is the user's, it computes nothing).
    bad = [r for r in rows.values()
           if not (r[1] != "-" and r[5].endswith("B/s") and
                   r[7].endswith("FLOP/s") and r[9].endswith("B/s") and
                   int(r[-1].replace(",", "")) > 0 or
                   r[1] == "-" and r[4].endswith("B/s") and
                   r[5:8] == ["-", "-", "-"] and r[-1] == "0")]
    check("--list-devices: every row complete for its kind", not bad, bad)
    d = rows.get("DDR5-5600-8ch", [])
    check("--list-devices: a host memory has no size, FLOP/s or reserve",
          d[:5] == ["DDR5-5600-8ch", "-", "DDR5", "358.4", "GB/s"] and
          d[-1] == "0", d)


def gpt2(tmp):
    model = os.path.join(tmp, "gpt2.onnx")
    subprocess.run([PYTHON, os.path.join(ROOT, "testdata", "gen_gpt.py"),
                    "--preset", "gpt2-small", model], check=True,
                   stdout=subprocess.DEVNULL)

    r, dev = train_json(tmp, model, "--device", "H100-SXM")
    check("gpt2 --device H100-SXM fits", dev is not None, r.stderr)
    if dev is None:
        return
    b = dev["training"]
    check("gpt2 --device H100-SXM: the table's size and reserve",
          b["device_bytes"] == 80 * G and b["reserve_bytes"] == CUDA_CONTEXT
          and b["fits"] is True and b["device_total_bytes"] ==
          b["total_bytes"] + CUDA_CONTEXT and b["headroom_bytes"] ==
          80 * G - b["device_total_bytes"], b)
    reg = (dev.get("regions") or [{}])[0]
    check("gpt2 --device H100-SXM: the first memory is the device's",
          reg.get("name") == "H100-SXM" and reg.get("capacity_bytes") ==
          80 * G and reg.get("bandwidth_bytes_per_s") == 3.35e12 and
          "--device H100-SXM" in dev["options"], reg)

    r, exp = train_json(tmp, model, "--memory", "h100:80G:3.35T",
                        "--reserve", str(CUDA_CONTEXT))
    check("gpt2 --memory of the explicit numbers: the same total",
          exp is not None and exp["training"]["device_total_bytes"] ==
          b["device_total_bytes"] and exp["training"]["device_bytes"] ==
          80 * G, r.stderr)
    r, named = train_json(tmp, model, "--memory", "H100-SXM")
    check("gpt2 --memory H100-SXM: the table's size, no reserve",
          named is not None and named["training"]["device_bytes"] == 80 * G
          and named["training"]["reserve_bytes"] == 0 and
          named["training"]["device_total_bytes"] ==
          b["device_total_bytes"] - CUDA_CONTEXT, r.stderr)

    r, own = train_json(tmp, model, "--device", "H100-SXM", "--reserve", "1G")
    check("gpt2 --device with --reserve 1G: the explicit one",
          own is not None and own["training"]["reserve_bytes"] == G and
          own["training"]["device_total_bytes"] ==
          b["device_total_bytes"] - CUDA_CONTEXT + G, r.stderr)

    r = arenac("--train", *STEP, "--device", "H100-SXM", model)
    line = [l for l in r.stdout.splitlines()
            if l.startswith("  on the device")]
    check("gpt2 summary names the device",
          r.returncode == 0 and line and
          "of 80 GiB (H100-SXM, HBM3 3.35 TB/s): fits, headroom" in line[0],
          line or r.stderr)
    # The step at the device's peak rates: its FLOPs at 989.4 TFLOP/s,
    # the activation traffic of its memory at 3.35 TB/s.
    rates = [l for l in r.stdout.splitlines()
             if l.startswith("  at peak rates")]
    flops = b["forward_flops"] + b["backward_flops"] + b["recompute_flops"]
    traffic = reg.get("traffic_bytes", 0)
    want = ("  at peak rates    compute %.3g ms at 989.4 TFLOP/s; activation "
            "traffic %s bytes, %.3g ms at 3.35 TB/s (op by op, weights not "
            "counted)" % (flops / 989.4e12 * 1e3, format(traffic, ","),
                          traffic / 3.35e12 * 1e3))
    check("gpt2 summary: the step at the device's peak rates",
          rates == [want] and traffic > 0, (rates, want))

    r, vis = train_json(tmp, model, "--device", "H100-SXM:81559M")
    check("gpt2 --device H100-SXM:81559M: the driver's total, the reserve",
          vis is not None and vis["training"]["device_bytes"] ==
          81559 << 20 and vis["training"]["device_total_bytes"] ==
          b["device_total_bytes"] and vis["regions"][0]["name"] ==
          "H100-SXM", r.stderr)

    r, zero = train_json(tmp, model, "--device", "H100-SXM", "--reserve", "0")
    check("gpt2 --device with --reserve 0: none held",
          zero is not None and zero["training"]["reserve_bytes"] == 0 and
          zero["training"]["device_total_bytes"] ==
          b["device_total_bytes"] - CUDA_CONTEXT, r.stderr)

    # A card the step does not fit: 11.7 GiB on a 12 GiB-less-reserve
    # device is exit 3 naming it.
    r = arenac("-q", "--train", *STEP, "--memory", "RTX-3090:11G", model)
    check("gpt2 --memory RTX-3090:11G: exit 3 naming it",
          r.returncode == 3 and "'RTX-3090'" in r.stderr, r.stderr)

    r, fit = train_json(tmp, model, "--fit", "8xH100-SXM")
    rows = fit["fit"]["configurations"] if fit else []
    check("gpt2 --fit 8xH100-SXM", fit is not None and rows and all(
        c["largest_bytes"] <= 80 * G - CUDA_CONTEXT for c in rows),
          r.stderr if fit is None else rows[:1])
    par = fit["parallel"] if fit else {}
    check("gpt2 --fit 8xH100-SXM: the JSON names the rates assumed",
          par.get("device_flops_per_s") == 989.4e12 and
          par.get("link_bytes_per_s") == 450e9, par)
    r = arenac("--train", *STEP, "--fit", "8xH100-SXM", model)
    check("gpt2 --fit 8xH100-SXM: each device less the reserve",
          r.returncode == 0 and "8 devices of %s bytes" %
          format(80 * G - CUDA_CONTEXT, ",") in r.stdout, r.stdout[:300])
    r2 = arenac("--train", *STEP, "--fit",
                "8x%d:989.4T:450G" % (80 * G), "--reserve",
                str(CUDA_CONTEXT), model)
    named = [l for l in r.stdout.splitlines()
             if not l.startswith("  device ")]
    check("gpt2 --fit 8xH100-SXM = 8x80G:989.4T:450G with the reserve",
          r2.returncode == 0 and r2.stdout.splitlines() == named,
          r2.stdout[:300])
    check("gpt2 --fit 8xH100-SXM: names the device under the table",
          "  device         H100-SXM: 80 GiB HBM3 at 3.35 TB/s, 989.4 "
          "TFLOP/s, NVLink 4 450 GB/s one way; --reserve 266,076,160 bytes"
          in r.stdout.splitlines(), r.stdout[-400:])

    # The devices path's estimate: the table's FLOP/s and link.
    r = arenac("--train", *STEP, "--device", "H100-SXM", "--dp", "2", model)
    est = [l for l in r.stdout.splitlines() if "step estimate" in l]
    r2 = arenac("--train", *STEP, "--device", "A100-SXM-80GB", "--dp", "2",
                model)
    est2 = [l for l in r2.stdout.splitlines() if "step estimate" in l]
    ok = r.returncode == 0 and r2.returncode == 0 and est and est2
    if ok:
        # compute = FLOPs / device FLOP/s: the A100's is 989.4/312 longer.
        c1 = float(est[0].split("compute ")[1].split(",")[0])
        c2 = float(est2[0].split("compute ")[1].split(",")[0])
        ok = abs(c2 / c1 - 989.4 / 312) < 1e-3
    check("--device with --dp: the table's FLOP/s in the estimate", ok,
          (est, est2, r.stderr, r2.stderr))


def usage():
    lenet = os.path.join(ROOT, "testdata", "lenet.onnx")
    r = arenac("--train", "--device", "H100-SMX", lenet)
    check("--device H100-SMX: exit 1 naming H100-SXM",
          r.returncode == 1 and "no device named 'H100-SMX'; the nearest: "
          "H100-SXM" in r.stderr, r.stderr)
    r = arenac("--train", "--fit", "8xH100-SMX", lenet)
    check("--fit 8xH100-SMX: exit 1 naming H100-SXM",
          r.returncode == 1 and "the nearest: H100-SXM" in r.stderr,
          r.stderr)
    r = arenac("--device", "DDR5-5600-8ch", lenet)
    check("--device of a host memory: exit 1", r.returncode == 1 and
          "a host memory" in r.stderr, r.stderr)
    r = arenac("--memory", "DDR5-5600-8ch", lenet)
    check("--memory of a host memory without a size: exit 1",
          r.returncode == 1 and "--memory DDR5-5600-8ch:SIZE" in r.stderr,
          r.stderr)
    r = arenac("--memory", "H100-SXM:40G:1T", lenet)
    check("--memory of a table name with a bandwidth: exit 1",
          r.returncode == 1 and "gives its bandwidth" in r.stderr, r.stderr)
    r = arenac("-q", "--train", "--device", "h100-sxm", "--json", "-",
               "--dim", "N=1", lenet)
    check("--device names ignore case", r.returncode == 0 and
          json.loads(r.stdout)["regions"][0]["name"] == "H100-SXM",
          r.stderr)
    r = arenac("--device", "L4", "--device", "L4", lenet)
    check("--device twice: exit 1", r.returncode == 1, r.stderr)
    # A host memory with its size, as an inference tier.
    r = arenac("-q", "--dim", "N=1", "--memory", "sram:64K:100G",
               "--memory", "DDR5-5600-2ch:16G", lenet)
    check("--memory DDR5-5600-2ch:16G is a tier", r.returncode == 0,
          r.stderr)


def main():
    listing()
    usage()
    with tempfile.TemporaryDirectory() as tmp:
        gpt2(tmp)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
