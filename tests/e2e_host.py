#!/usr/bin/env python3
"""e2e_host.py — the host's bill (issue 27 item 5): what each node's host
memory holds for a training run, checked against DeepSpeed and against
the models' own files.

  (a) DeepSpeed's CPU- and GPU-side estimators, estimate_zero2_model_
      states_mem_needs (deepspeed/runtime/zero/stage_1_and_2.py) and
      estimate_zero3_model_states_mem_needs (stage3.py), copied below from
      deepspeedai/DeepSpeed@edaa7221, reproduce the JSON's host.deepspeed
      figures to the byte for several (gpus per node, nodes, stage,
      offload, zero_init) on a generated GPT whose parameter count gen_gpt
      knows; and
      arenac's own parts, built from mechanisms, give DeepSpeed's figure
      once its additional_buffer_factor of 1.5 is applied: the node's
      larger moment of (ranks x a full fp32 copy) and (offloaded master
      weights, moments, fp32 gradients and 16-bit weights; --zero-init:
      the largest parameter in place of the full copy).  ZeRO-2 with
      offload over several nodes is the exception DeepSpeed's formula
      makes itself (it bills 16 bytes a parameter of the whole model and 4
      per GPU of the whole cluster on every node): arenac's per-node
      figure is below it.  The pinned staging buffers DeepSpeed allocates
      besides (param_buffer_of_bit16_for_cpu_offload_groups,
      temp_grad_buffer_for_cpu_offload; stage 3's grad_partitions_flat_
      buffer) are billed apart, to the byte;
  (b) the loader: workers x prefetch x one micro-batch's inputs and labels
      in the file's types (onnx reads them), plus one pinned batch, on
      GPT-2 small's shape and the ONNX zoo's SqueezeNet (a float input,
      billed as fp32 whatever --precision the step runs in);
  (c) the load peak: each rank's full copy in --load-dtype before ZeRO-3
      or --tp keeps its share, summed over --gpus-per-node ranks; LoRA's
      adapters are not loaded; --host-memory at the total fits (headroom
      0), a byte less is exit 3 naming the moment and the largest part; a
      paged optimizer's state is the host's;
  (d) bad input: exit 1 with a message naming the option;
  (e) DeepSpeed's model_to_params on torch modules (the zoo's GPT-2, Llama
      and BERT) gives the total and largest-module counts arenac finds in
      their exports (a module: the parameters sharing a module path);
  (f) the searches use the same "fits": --max-batch's answer is the
      largest batch whose device and host both fit (the loader's batches
      grow with it), the next one planned and refused for the host; --fit
      refuses a configuration whose devices fit but whose host does not
      (ZeRO-0 replicas each holding a paged optimizer's whole state), and
      every row's host bill is the one a direct run of it gives.
"""
import json
import os
import subprocess
import sys
import tempfile

from tally import ARENAC, ROOT, SHARED, Tally, need

T = Tally('e2e_host')
check = T.check
onnx, gen_gpt = need("onnx", "gen_gpt")

# deepspeed/runtime/zero/stage_1_and_2.py, as it is.
def estimate_zero2_model_states_mem_needs(total_params,
                                          num_gpus_per_node=1,
                                          num_nodes=1,
                                          cpu_offload=True,
                                          additional_buffer_factor=1.5):

    total_gpus = num_nodes * num_gpus_per_node

    if cpu_offload:
        gpu_mem = 2 * total_params
        cpu_mem = total_params * max(4 * total_gpus, 16) * \
            additional_buffer_factor
    else:
        gpu_mem = 2 * total_params + int(18 * total_params / total_gpus)
        cpu_mem = total_params * 4 * num_gpus_per_node * \
            additional_buffer_factor

    return int(cpu_mem), int(gpu_mem)


# deepspeed/runtime/zero/stage3.py, as it is.
def estimate_zero3_model_states_mem_needs(total_params,
                                          largest_layer_params,
                                          num_gpus_per_node=1,
                                          num_nodes=1,
                                          cpu_offload=True,
                                          cpu_offload_params=True,
                                          zero_init=True,
                                          additional_buffer_factor=1.5):

    total_gpus = num_nodes * num_gpus_per_node
    gpus_factor = 1 / num_nodes
    largest_layer_memory = (4 * largest_layer_params)

    if cpu_offload:
        if cpu_offload_params:
            gpu_mem = largest_layer_memory

            if zero_init:
                cpu_mem = total_params * 18 * gpus_factor * \
                    additional_buffer_factor
            else:
                cpu_mem = total_params * max(4 * num_gpus_per_node,
                                             18 * gpus_factor) * \
                    additional_buffer_factor

        else:
            gpu_mem = largest_layer_memory + int(2 * total_params /
                                                 total_gpus)

            if zero_init:
                cpu_mem = total_params * 16 * gpus_factor * \
                    additional_buffer_factor
            else:
                cpu_mem = total_params * max(4 * num_gpus_per_node,
                                             16 * gpus_factor) * \
                    additional_buffer_factor
    else:
        gpu_mem = largest_layer_memory + int(18 * total_params / total_gpus)
        if zero_init:
            cpu_mem = largest_layer_params * 4 * num_gpus_per_node * \
                additional_buffer_factor
        else:
            cpu_mem = total_params * 4 * num_gpus_per_node * \
                additional_buffer_factor

    return int(cpu_mem), int(gpu_mem), largest_layer_memory


def arenac(*args):
    return subprocess.run([ARENAC] + [str(a) for a in args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=600)


def report(tmp, model, *opts):
    """The JSON report of a --train run, or None (then r says why)."""
    path = os.path.join(tmp, "r.json")
    if os.path.exists(path):
        os.remove(path)
    r = arenac("-q", "--train", "--json", path, *opts, model)
    rep = json.load(open(path)) if r.returncode == 0 else None
    return r, rep


def ceil_div(a, b):
    return -(-a // b)


def deepspeed(tmp):
    c = gen_gpt.Config(layers=3, seq=32, batch=2, hidden=64, heads=4,
                       vocab=96)
    path = os.path.join(tmp, "gpt.onnx")
    onnx.save(gen_gpt.build(c), path)
    psi = gen_gpt.param_count(c)
    h = c.hidden
    # The largest parameter: the MLP's [h, 4h] weights, the token table
    # [V, h] or the position table [seq, h]; the largest module (its
    # parameters sharing a module path, l0.fc1.w and l0.fc1.b): the MLP's
    # first linear with its bias, or a table.
    largest_param = max(4 * h * h, c.vocab * h, c.seq * h)
    largest = max(4 * h * h + 4 * h, c.vocab * h, c.seq * h)
    mem = ["--memory", "hbm:1G", "--memory", "ddr:1T"]
    step = ["--precision", "mixed-fp16", "--optimizer", "adam"]
    # (gpus per node, nodes, ZeRO stage, offload optimizer, offload
    # params); psi = 2^6 x 2569: every world here divides it, so the
    # partitions are even, as DeepSpeed's formulas assume.
    for gpn, nodes, zero, off, offp, init in [
            (1, 1, 2, False, False, False), (1, 1, 2, True, False, False),
            (2, 1, 2, False, False, False), (4, 1, 2, True, False, False),
            (4, 2, 2, False, False, False), (4, 2, 2, True, False, False),
            (2, 1, 3, False, False, False), (4, 2, 3, False, False, False),
            (4, 1, 3, True, False, False), (4, 2, 3, True, False, False),
            (2, 4, 3, True, True, False), (8, 1, 3, True, True, False),
            (4, 4, 3, True, True, False),
            (2, 1, 3, False, False, True), (8, 2, 3, False, False, True),
            (4, 2, 3, True, False, True), (4, 2, 3, True, True, True),
            (8, 1, 3, True, True, True)]:
        world = gpn * nodes
        assert psi % world == 0
        name = "gpn %d, nodes %d, ZeRO %d%s, offload %s" % (
            gpn, nodes, zero, " zero_init" if init else "",
            "params+optimizer" if offp else "optimizer" if off else "none")
        opts = step + mem + ["--dp", world, "--zero", zero,
                             "--gpus-per-node", gpn, "--load-dtype", "fp32"]
        if off:
            opts += ["--offload", "optimizer:ddr"]
        if offp:
            opts += ["--offload", "parameters:ddr"]
        if init:
            opts += ["--zero-init"]
        r, rep = report(tmp, path, *opts)
        if not check(name + ": plans", rep is not None, r.stderr):
            continue
        x = rep["host"]
        ds = x["deepspeed"]
        check(name + ": DeepSpeed's total_params is the model's",
              ds["total_params"] == psi and x["total_params"] == psi,
              (ds["total_params"], psi))
        check(name + ": its largest layer, the largest module",
              ds["largest_layer_params"] == largest and
              x["largest_param"] == largest_param,
              (ds["largest_layer_params"], largest))
        check(name + ": nodes and GPUs", ds["num_gpus_per_node"] == gpn and
              ds["num_nodes"] == nodes and x["ranks"] == gpn, x)
        if zero == 2:
            cpu, gpu = estimate_zero2_model_states_mem_needs(
                psi, gpn, nodes, cpu_offload=off)
        else:
            cpu, gpu, _ = estimate_zero3_model_states_mem_needs(
                psi, largest, gpn, nodes, cpu_offload=off,
                cpu_offload_params=offp, zero_init=init)
        check(name + ": the estimator's options", ds["zero_init"] == init
              and ds["cpu_offload"] == off and
              ds["cpu_offload_params"] == offp, ds)
        check(name + ": DeepSpeed's CPU and GPU figures to the byte",
              (ds["cpu_bytes"], ds["gpu_bytes"]) == (cpu, gpu),
              ((ds["cpu_bytes"], ds["gpu_bytes"]), (cpu, gpu)))
        # arenac's mechanisms against DeepSpeed's per-parameter bytes.
        load = x["load_copy_bytes"]
        states = (x["offloaded_optimizer_bytes"] +
                  x["offloaded_gradients_bytes"] +
                  x["offloaded_parameters_bytes"])
        per = 16 + (2 if offp else 0) if off else 0
        check(name + ": %s per rank, the offloaded states %d bytes a "
              "parameter over the node's share" % (
                  "the largest module in fp32" if init else
                  "a full fp32 copy", per),
              load == gpn * (largest if init else psi) * 4 and
              states == gpn * per * (psi // world), (load, states))
        if zero == 2 and off and nodes > 1:
            check(name + ": below DeepSpeed's, which bills the cluster "
                  "on every node", max(load, states) * 1.5 < cpu,
                  (max(load, states), cpu))
        else:
            check(name + ": x 1.5 (additional_buffer_factor) is "
                  "DeepSpeed's figure", int(max(load, states) * 1.5) == cpu,
                  (max(load, states), cpu))
        check(name + ": the node's total is the larger moment",
              x["peak_bytes"] == max(x["load_bytes"], x["step_bytes"]) and
              x["load_bytes"] == load, x)
        part = psi // world
        staging = 0
        if off:
            staging = gpn * (part * 2 if zero == 3 else
                             part * 2 + largest_param * 2)
        check(name + ": DeepSpeed's pinned buffers billed apart",
              x["pinned_staging_bytes"] == staging and
              x["pinned_bytes"] == x["step_bytes"],
              (x["pinned_staging_bytes"], staging))


# deepspeed/runtime/zero/stage3.py, as it is.
def model_to_params(model):
    # shared params calculated only once
    total_params = sum(dict((p.data_ptr(), p.numel())
                            for p in model.parameters()).values())

    largest_layer_params = 0
    for m in model.modules():
        # assuming no shared params within a single layer
        layer_params = sum(p.numel() for p in m.parameters(recurse=False))
        largest_layer_params = max(largest_layer_params, layer_params)

    return total_params, largest_layer_params


def torch_modules(tmp):
    """DeepSpeed's own count on the torch modules (model_to_params, what
    estimate_zero3_model_states_mem_needs_all_live passes on) against
    arenac's on their exports: the zoo's GPT-2 (tied head), Llama and
    BERT, whose largest modules are linears with a bias or not."""
    try:
        import torch  # noqa: F401
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        import torch_export
        import torch_transformers as tt
    except ImportError as e:
        print("skipped: torch modules (%s)" % e)
        return
    for name in ("gpt2", "llama", "bert"):
        model, inputs, names, _ = tt.build(name)
        total, ll = model_to_params(model)
        path = os.path.join(tmp, "torch_%s.onnx" % name)
        torch_export.export(model, inputs, path, 17, names=names)
        r, rep = report(tmp, path, "--batch", tt.BATCH, "--dp", 4,
                        "--zero", 3, "--gpus-per-node", 2)
        if not check("torch %s: plans" % name, rep is not None, r.stderr):
            continue
        ds = rep["host"]["deepspeed"]
        cpu, gpu, _ = estimate_zero3_model_states_mem_needs(
            total, ll, 2, 2, cpu_offload=False, cpu_offload_params=False,
            zero_init=False)
        check("torch %s: model_to_params (%d, %d) as DeepSpeed counts the "
              "module" % (name, total, ll),
              (ds["total_params"], ds["largest_layer_params"]) == (total, ll)
              and (ds["cpu_bytes"], ds["gpu_bytes"]) == (cpu, gpu),
              (ds, total, ll))


def input_bytes(path):
    """One batch of the graph's inputs, by the file's types and shapes."""
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    size = {onnx.TensorProto.FLOAT: 4, onnx.TensorProto.INT64: 8,
            onnx.TensorProto.FLOAT16: 2, onnx.TensorProto.INT32: 4}
    total = 0
    for i in m.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        n = 1
        for d in t.shape.dim:
            n *= d.dim_value
        total += n * size[t.elem_type]
    return total


def label_bytes(rep):
    return sum(t["bytes"] for t in rep["tensors"]
               if t["name"] in ("label", "label.train"))


def loader(tmp, gpt2):
    sq = os.path.join(SHARED, "models", "light_squeezenet.onnx")
    for model, name, prec in [(gpt2, "GPT-2 small", "mixed-bf16"),
                              (sq, "SqueezeNet", "fp32"),
                              (sq, "SqueezeNet", "bf16")]:
        if not os.path.exists(model):
            print("skipped: %s not found" % model)
            continue
        for w, p in [(4, 2), (8, 4), (1, 1)]:
            what = "%s (%s), --loader %d:%d" % (name, prec, w, p)
            r, rep = report(tmp, model, "--precision", prec, "--loader",
                            "%d:%d" % (w, p))
            if not check(what + ": plans", rep is not None, r.stderr):
                continue
            x = rep["host"]
            batch = input_bytes(model) + label_bytes(rep)
            check(what + ": workers x prefetch x the batch's inputs and "
                  "labels, in the file's types",
                  x["batch_input_bytes"] == batch and
                  x["loader_bytes"] == w * p * batch, (x, batch))
            check(what + ": one pinned batch", x["loader_pinned_bytes"] ==
                  batch and x["pinned_bytes"] == batch, x)
            check(what + ": the steps' moment", x["step_bytes"] ==
                  (w * p + 1) * batch, x)
    r, rep = report(tmp, gpt2, "--loader", "4")
    check("--loader 4: torch's prefetch_factor 2", rep is not None and
          rep["host"]["loader_prefetch"] == 2 and
          rep["host"]["loader_bytes"] ==
          8 * rep["host"]["batch_input_bytes"], r.stderr)
    r, rep = report(tmp, gpt2, "--loader", "0")
    check("--loader 0: the main process loads one batch", rep is not None
          and rep["host"]["loader_bytes"] ==
          rep["host"]["batch_input_bytes"], r.stderr)
    r, rep = report(tmp, gpt2)
    check("no --loader: none billed", rep is not None and
          rep["host"]["loader_bytes"] == 0 and
          rep["host"]["loader_workers"] is None, r.stderr)


def load_peak(tmp, gpt2, psi):
    step = ["--precision", "mixed-bf16", "--optimizer", "adam"]
    for dtype, size in [("fp32", 4), ("bf16", 2), ("fp16", 2)]:
        r, rep = report(tmp, gpt2, *step, "--dp", 8, "--zero", 3,
                        "--gpus-per-node", 4, "--load-dtype", dtype)
        if not check("ZeRO-3 --load-dtype %s: plans" % dtype,
                     rep is not None, r.stderr):
            continue
        x, d = rep["host"], rep["devices"][0]
        check("ZeRO-3 --load-dtype %s: 4 ranks' full copies on a node, "
              "8 times the share each keeps" % dtype,
              x["nodes"] == 2 and x["ranks"] == 4 and
              x["load_copy_bytes"] == 4 * psi * size and
              d["parameters"] == ceil_div(psi, 8) * 2,
              (x["load_copy_bytes"], d["parameters"]))
        check("ZeRO-3 --load-dtype %s: the load is the node's peak" % dtype,
              x["peak_bytes"] == x["load_bytes"] == x["load_copy_bytes"], x)
    r, rep = report(tmp, gpt2, *step, "--dp", 2, "--tp", 2,
                    "--gpus-per-node", 2)
    if check("--tp 2 --dp 2: plans", rep is not None, r.stderr):
        x = rep["host"]
        check("--tp 2: each rank loads the whole model before keeping its "
              "share", x["nodes"] == 2 and
              x["load_copy_bytes"] == 2 * psi * 4 and
              rep["devices"][0]["parameters"] < psi * 2, x)
    r, rep = report(tmp, gpt2, *step, "--lora", 8)
    if check("--lora 8: plans", rep is not None, r.stderr):
        x, b = rep["host"], rep["training"]
        check("--lora 8: the adapters are made, not loaded",
              x["total_params"] == psi + b["lora"]["adapter_parameters"]
              and x["loaded_params"] == psi and
              x["load_copy_bytes"] == psi * 4, (x, b["lora"]))
    r, rep = report(tmp, gpt2, "--optimizer", "paged-adamw", "--precision",
                    "bf16")
    if check("paged-adamw: plans", rep is not None, r.stderr):
        x, b = rep["host"], rep["training"]
        check("paged-adamw: its state is the host's, unpinned",
              b["host_state_bytes"] > 0 and
              x["paged_optimizer_bytes"] == b["host_state_bytes"] and
              x["pinned_bytes"] == 0, (x, b["host_state_bytes"]))
    # One total for the verdict, in the summary, the JSON and the exit.
    r, rep = report(tmp, gpt2, *step, "--loader", "4:2")
    if not check("one device: plans", rep is not None, r.stderr):
        return
    peak = rep["host"]["peak_bytes"]
    r, rep = report(tmp, gpt2, *step, "--loader", "4:2", "--host-memory",
                    peak)
    check("--host-memory at the total: fits, no headroom", rep is not None
          and rep["host"]["fits"] is True and
          rep["host"]["headroom_bytes"] == 0 and
          rep["host"]["memory_bytes"] == peak, r.stderr)
    r = arenac("--train", *step, "--loader", "4:2", "--host-memory",
               "DDR5-5600-8ch:%d" % peak, gpt2)
    check("the summary's host block says it fits",
          r.returncode == 0 and "fits the host's %s, headroom 0" %
          format(peak, ",") in r.stdout and "host memory 'DDR5-5600-8ch'"
          in r.stdout,
          r.stdout[-800:] + r.stderr)
    r = arenac("--train", *step, "--loader", "4:2", "--host-memory",
               peak - 1, gpt2)
    check("a byte less: exit 3 naming the moment and the largest part",
          r.returncode == 3 and "needs %s bytes while the ranks load the "
          "model, 1 more than --host-memory" % format(peak, ",") in r.stderr
          and "the largest part: load_copy" in r.stderr, r.stderr)
    r = arenac("--train", *step, "--dp", 8, "--zero", 2, "--memory",
               "hbm:80G", "--memory", "ddr:1T", "--offload", "optimizer:ddr",
               "--gpus-per-node", 8, "--load-dtype", "bf16", "--host-memory",
               "1G", gpt2)
    check("ZeRO-2 offload on a 1 GiB host: exit 3 during the steps",
          r.returncode == 3 and "during the steps" in r.stderr and
          "the largest part: offloaded_optimizer" in r.stderr, r.stderr)


def offload_memory(tmp):
    """The memory --offload names is each node's host memory: its
    offloaded state is checked per node, and it bounds the host's bill
    unless --host-memory gives another."""
    c = gen_gpt.Config(layers=3, seq=32, batch=2, hidden=64, heads=4,
                       vocab=96)
    path = os.path.join(tmp, "gpt.onnx")
    psi = gen_gpt.param_count(c)
    step = ["--precision", "mixed-fp16", "--optimizer", "adam", "--dp", 4,
            "--zero", 2, "--gpus-per-node", 2, "--memory", "hbm:1G",
            "--offload", "optimizer:ddr"]
    node_state = 2 * 12 * (psi // 4)        # two ranks' master and moments
    r, rep = report(tmp, path, *step, "--memory", "ddr:1T")
    if not check("offload to ddr, 2 nodes: plans", rep is not None,
                 r.stderr):
        return
    peak = rep["host"]["peak_bytes"]
    check("offload: ddr is the host's bound", rep["host"]["memory_bytes"] ==
          1 << 40 and rep["host"]["fits"] is True, rep["host"])
    r, rep = report(tmp, path, *step, "--memory", "ddr:%d" % peak)
    check("offload: a node's state fits a node's ddr (all four ranks' "
          "would not)", rep is not None and 4 * 12 * (psi // 4) > peak and
          rep["host"]["headroom_bytes"] == 0, r.stderr)
    r = arenac("--train", *step, "--memory", "ddr:%d" % (peak - 1), path)
    check("offload: a byte less, exit 3 naming the host memory 'ddr'",
          r.returncode == 3 and "1 more than host memory 'ddr'" in r.stderr
          and "the largest part: offloaded_optimizer" in r.stderr, r.stderr)
    r = arenac("--train", *step, "--memory", "ddr:%d" % (node_state - 1),
               path)
    check("offload: the state alone over a node's ddr, exit 3 per node",
          r.returncode == 3 and "over the 2 devices of node 0" in r.stderr,
          r.stderr)
    r, rep = report(tmp, path, *step, "--memory", "ddr:%d" % (peak - 1),
                    "--host-memory", peak)
    check("offload: --host-memory overrides the bound", rep is not None and
          rep["host"]["memory_bytes"] == peak, r.stderr)


def pipeline_nodes(tmp):
    """Pipeline stages on their own nodes hold different state: every
    node's total is reported, the largest billed part by part."""
    path = os.path.join(tmp, "gpt.onnx")
    r, rep = report(tmp, path, "--precision", "mixed-fp16", "--optimizer",
                    "adam", "--pp", 2, "--dp", 2, "--microbatches", 4,
                    "--gpus-per-node", 2, "--memory", "hbm:1G", "--memory",
                    "ddr:1G", "--offload", "optimizer:ddr", "--load-dtype",
                    "bf16")
    if not check("--pp 2 --dp 2, a stage a node: plans", rep is not None,
                 r.stderr):
        return
    x = rep["host"]
    peaks = x["node_peak_bytes"]
    ranks = [d for d in rep["devices"] if d["rank"] // 2 == x["node"]]
    check("pp: every node's total, the largest billed",
          len(peaks) == x["nodes"] == 2 and peaks[0] != peaks[1] and
          x["peak_bytes"] == max(peaks) == peaks[x["node"]], x)
    check("pp: the billed node's offloaded state is its ranks'",
          x["offloaded_optimizer_bytes"] ==
          sum(d["offloaded"] for d in ranks), (x, ranks))


def small_gpt(tmp, name, batch):
    c = gen_gpt.Config(layers=2, seq=32, batch=batch, hidden=256, heads=4,
                       vocab=512)
    path = os.path.join(tmp, name)
    onnx.save(gen_gpt.build(c), path)
    return path


def max_batch_host(tmp):
    """--max-batch on a device that takes 309 samples, a host that takes
    fewer once 64 workers prefetch 16 batches each."""
    path = small_gpt(tmp, "b1.onnx", 1)
    step = ["--optimizer", "adam", "--precision", "mixed-bf16", "--memory",
            "hbm:256M", "--loader", "64:16"]
    want = 24
    r, rep = report(tmp, path, *step, "--batch", want)
    if not check("--batch %d: plans" % want, rep is not None, r.stderr):
        return
    x = rep["host"]
    bound = x["peak_bytes"]
    check("--batch %d: the loader's batches are the host's peak" % want,
          x["step_bytes"] == bound > x["load_bytes"], x)
    r, rep = report(tmp, path, *step, "--max-batch")
    device = rep["training"]["max_batch"] if rep else 0
    check("--max-batch without a host bound: the device's answer is "
          "larger", device > want + 1, r.stderr)
    r, rep = report(tmp, path, *step, "--max-batch", "--host-memory", bound)
    check("--max-batch with --host-memory: batch %d, the host's" % want,
          rep is not None and rep["training"]["max_batch"] == want and
          rep["host"]["fits"] is True and rep["host"]["headroom_bytes"] == 0,
          (r.returncode, r.stderr[-400:]))
    r = arenac("--train", *step, "--max-batch", "--host-memory", bound, path)
    row = [ln for ln in r.stdout.splitlines()
           if ln.split()[:1] == [str(want + 1)]]
    check("--max-batch's table: batch %d planned, refused for the host"
          % (want + 1), len(row) == 1 and "does not fit the host: over "
          "--host-memory %s" % format(bound, ",") in row[0], r.stdout[:1500])
    r = arenac("-q", "--train", *step, "--batch", want + 1, "--host-memory",
               bound, path)
    check("--batch %d on its own: exit 3, the host" % (want + 1),
          r.returncode == 3 and "the host of node 0" in r.stderr, r.stderr)
    r = arenac("-q", "--train", *step, "--max-batch", "--host-memory",
               x["load_bytes"] - 1, path)
    check("--max-batch, a host below the load: exit 3 naming the host",
          r.returncode == 3 and "the host of node 0" in r.stderr and
          "not even a batch of 1 fits" in r.stderr, r.stderr)


def fit_host(tmp):
    """--fit 4 devices, paged-adamw: ZeRO-0 over 4 replicas holds the
    paged state 4 times on the host, every other configuration less than
    the load's 4 fp32 copies."""
    path = small_gpt(tmp, "b2.onnx", 2)
    step = ["--optimizer", "paged-adamw", "--precision", "bf16", "--fit",
            "4x1G"]
    r, rep = report(tmp, path, *step)
    if not check("--fit, paged-adamw: plans", rep is not None, r.stderr):
        return
    rows = rep["fit"]["configurations"]
    hosts = sorted({c.get("host_bytes") or 0 for c in rows})
    check("--fit: every row has its host bill", len(hosts) >= 2 and
          all(c.get("host_bytes", 0) > 0 and c.get("host_fits", 1) is None
              for c in rows), hosts)
    if len(hosts) < 2:
        return
    bound = hosts[-2]
    over = [c for c in rows if c["host_bytes"] > bound]
    check("--fit: the configurations over are ZeRO-0 over 4 replicas",
          over and all(c["dp"] == 4 and c["zero"] == 0 for c in over), over)
    c = over[0]
    r2, one = report(tmp, path, "--optimizer", "paged-adamw", "--precision",
                     "bf16", "--dp", 4, "--checkpoint", c["checkpoint_policy"])
    check("--fit: a row's host bill is a direct run's (--dp 4)",
          one is not None and one["host"]["peak_bytes"] == c["host_bytes"],
          (r2.stderr, c))
    r, rep = report(tmp, path, *step, "--host-memory", bound)
    if not check("--fit --host-memory: plans", rep is not None, r.stderr):
        return
    f = rep["fit"]
    refused = f.get("host_refused", [])
    check("--fit --host-memory: the rows over the host are refused, not "
          "ranked", len(f["configurations"]) == len(rows) - len(over) and
          all(x["host_bytes"] <= bound and x["host_fits"] is True
              for x in f["configurations"]) and
          len(refused) == len(over) and
          all(x["host_bytes"] > bound and x["host_fits"] is False
              for x in refused), (len(rows), len(over), refused))
    check("--fit --host-memory: the planned configuration's host fits",
          rep["host"]["fits"] is True and
          rep["host"]["peak_bytes"] == f["configurations"][0]["host_bytes"],
          rep["host"])
    r = arenac("--train", *step, "--host-memory", bound, path)
    check("--fit's table names the host of the refused",
          r.returncode == 0 and "refused: %d whose devices fit but whose "
          "host needs more than --host-memory %s" % (len(over),
                                                     format(bound, ","))
          in r.stdout, r.stdout[:3000])
    r = arenac("-q", "--train", *step, "--host-memory", hosts[0] - 1, path)
    check("--fit, no host fits: exit 3 naming the least host a node needs",
          r.returncode == 3 and "but not the host: the least a node's "
          "host memory needs is %s bytes" % format(hosts[0], ",")
          in r.stderr, r.stderr)


def bad_input(gpt2):
    for opts, what in [
            (["--loader", "x"], "--loader wants WORKERS[:PREFETCH]"),
            (["--loader", "4:0"], "PREFETCH wants batches per worker"),
            (["--loader", "4:"], "PREFETCH wants batches per worker"),
            (["--loader", "-1"], "--loader wants WORKERS[:PREFETCH]"),
            (["--loader", "0:2"], "PREFETCH needs workers"),
            (["--load-dtype", "int8"], "--load-dtype wants fp32, fp16 or "
             "bf16"),
            (["--gpus-per-node", "0"], "--gpus-per-node"),
            (["--host-memory", "0"], "--host-memory"),
            (["--host-memory", "lots"], "--host-memory"),
            (["--host-memory", "H100-SXM:1T"], "a device that computes"),
            (["--host-memory", "DDR6:1T"], "DDR"),
            (["--dp", "2", "--zero", "2", "--zero-init"], "ZeRO-3 only"),
            (["--zero-init"], "--zero-init needs --zero")]:
        r = arenac("--train", *opts, gpt2)
        check("bad %s: exit 1, says so" % " ".join(opts),
              r.returncode == 1 and "arenac: error:" in r.stderr and
              what in r.stderr, (r.returncode, r.stderr))
    r = arenac("--loader", "4:2", gpt2)
    check("--loader without --train: exit 1", r.returncode == 1 and
          "--loader needs --train" in r.stderr, r.stderr)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        deepspeed(tmp)
        offload_memory(tmp)
        pipeline_nodes(tmp)
        torch_modules(tmp)
        max_batch_host(tmp)
        fit_host(tmp)
        gpt2 = os.path.join(tmp, "gpt2.onnx")
        subprocess.run([sys.executable, os.path.join(ROOT, "testdata",
                                                     "gen_gpt.py"),
                        "--preset", "gpt2-small", "--batch", "1", "--seq",
                        "128", gpt2], check=True, stdout=subprocess.DEVNULL)
        psi = gen_gpt.param_count(gen_gpt.Config(**dict(
            gen_gpt.PRESETS["gpt2-small"], batch=1, seq=128)))
        loader(tmp, gpt2)
        load_peak(tmp, gpt2, psi)
        bad_input(gpt2)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
