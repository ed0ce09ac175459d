#!/usr/bin/env python3
"""e2e_mem_eff.py - --attention efficient against PyTorch's memory-efficient
SDPA backward as it allocates on CUDA sm80/sm90 (A100, H100).

A second account of the same source, written here from it and not from
arenac's C code (ops/flash.c):

- aten/src/ATen/native/transformers/cuda/mem_eff_attention/kernels/
  cutlassB.h: dispatch_cutlassB sends 80 <= cc < 100 to the Sm80 lists
  below, copied entry by entry (AttentionBackwardKernel<Arch, scalar_t,
  kIsAligned, kApplyDropout, kPreload, kBlockSizeI, kBlockSizeJ, kMaxK,
  kKeysQueriesAlignedToBlockSize>), cc 80 (A100) and 90 (H100);
- cuda/attention_backward.cu, _efficient_attention_backward's
  launchKernel: the first kernel in list order with kMaxK >= max(K, Kv),
  dropout if the step drops, seq-aligned only when M % I == N % J == 0;
  delta at::empty {B, nH, M} fp32 when kKernelComputesDelta, else
  (grad_out.float() * out.float()).sum(-1).transpose(-2, -1).contiguous()
  whose temporaries die before the workspace is allocated; num_splits_key's
  heuristic; the workspace of p.workspace_size() bytes;
- mem_eff_attention/kernel_backward.h: kIsHalf, kOutputInRF,
  kKernelComputesDelta, kEnableSplitKeys, kNeedsAccumGradQ/K/V,
  GradQTempStorage, workspace_elements_gk/gv/gq, workspace_strideBH,
  workspace_size.

For several (s, b, h, a) and formats each FlashAttentionGrad step's
scratch_bytes in arenac's JSON equals it; the log-sum-exp is padded to 32
rows (kAlignLSE); grouped-query keys and values reach the kernel with q's
heads (the kernel's TORCH_CHECK(query.size(2) == key.size(2))).

Environment: ARENAC (default build/arenac).  Skipped when onnx is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

from tally import ARENAC, Tally, need

onnx, gen_gpt, gen_llama = need("onnx", "gen_gpt", "gen_llama")
T = Tally("e2e_mem_eff")


def K(aligned, dropout, preload, bi, bj, maxk, seqaligned=False, cc=None):
    return dict(aligned=aligned, dropout=dropout, preload=preload, I=bi,
                J=bj, max_k=maxk, seqaligned=seqaligned, cc=cc)


# dispatch_cutlassB_bf16_sm80 and dispatch_cutlassB_f16_sm80 (the same
# list), then dispatch_cutlassB_f32_sm80, in cutlassB.h's order.
HALF_SM80 = [
    K(1, 0, 1, 64, 64, 32, True), K(1, 0, 1, 64, 64, 32),
    K(1, 0, 1, 64, 64, 64, True), K(1, 0, 1, 64, 64, 64),
    K(1, 0, 1, 128, 64, 96, cc=(86, 89)),
    K(1, 0, 1, 128, 128, 128, True), K(1, 0, 1, 128, 128, 128),
    K(1, 0, 0, 64, 64, 128, True), K(1, 0, 0, 64, 64, 128),
    K(1, 0, 0, 128, 64, 65536), K(1, 0, 0, 64, 64, 65536),
    K(1, 1, 1, 64, 64, 32), K(1, 1, 1, 64, 64, 64),
    K(1, 1, 1, 128, 128, 128), K(1, 1, 0, 64, 64, 128),
    K(1, 1, 0, 128, 64, 65536), K(1, 1, 0, 64, 64, 65536)]
F32_SM80 = [
    K(1, 0, 0, 64, 64, 32), K(1, 0, 0, 64, 64, 64),
    K(1, 0, 0, 128, 64, 128), K(1, 0, 0, 64, 64, 128),
    K(1, 0, 0, 128, 64, 65536), K(1, 0, 0, 64, 64, 65536),
    K(1, 1, 0, 64, 64, 32), K(1, 1, 0, 64, 64, 64),
    K(1, 1, 0, 128, 64, 128), K(1, 1, 0, 64, 64, 128),
    K(1, 1, 0, 128, 64, 65536), K(1, 1, 0, 64, 64, 65536)]


def ceil_div(a, b):
    return -(-a // b)


def align_up(a, b):
    return ceil_div(a, b) * b


def pick(half, cc, M, N, Kq, Kv, dropout):
    """launchKernel's filters over the list, first match."""
    for k in HALF_SM80 if half else F32_SM80:
        if k["cc"] and cc not in k["cc"]:
            continue
        if k["max_k"] < max(Kq, Kv):
            continue
        if dropout and not k["dropout"]:
            continue
        if k["seqaligned"] and (M % k["I"] or N % k["J"]):
            continue
        return k
    raise AssertionError("cutlassB: no kernel found to launch!")


def backward_bytes(half, B, nH, M, N, Kq, Kv, dropout, cc=80):
    """What _efficient_attention_backward allocates besides grad_q, grad_k
    and grad_v, at its peak: delta (and its temporaries) or delta and the
    workspace."""
    k = pick(half, cc, M, N, Kq, Kv, dropout)
    I, J = k["I"], k["J"]
    output_in_rf = half and k["max_k"] <= I              # kOutputInRF
    computes_delta = half and (output_in_rf or cc != 70)
    enable_split_keys = True                             # kMinSm >= 70
    needs_q = enable_split_keys or not half   # output_accum_t float
    needs_kv = not output_in_rf and half      # output_t is not float
    # num_splits_key's heuristic, grid (1, nH, B) before it.
    splits = ceil_div(N, J)
    if B * nH >= 256 and N <= 2 * J:
        splits = 1
    if needs_kv:
        splits = min(splits, 200 // (B * nH))
    if splits < 1:
        splits = 1
    gk = splits * J * align_up(Kq, I) if needs_kv else 0
    gv = splits * J * align_up(Kv, I) if needs_kv else 0
    # GradQTempStorage: int32 lock, counter, pad[2], then MatmulGradQ's
    # AccumTileGmem::kElementsStored floats = kNumThreads x FragmentC
    # elements = (I J / 1024 warps x 32 threads) x (32 x 32 / 32) = I J.
    grad_q_temp = 4 * 4 + 4 * I * J
    gq = ceil_div(M, I) * ceil_div(Kq, J) * grad_q_temp // 4 \
        if needs_q else 0
    stride_bh = align_up(gk + gv + gq, 4)
    workspace = B * nH * stride_bh * 4
    delta = B * nH * M * 4
    if computes_delta:
        return delta + workspace
    product = B * M * nH * Kv * 4
    summed = B * M * nH * 4
    copy = delta if nH > 1 and M > 1 else 0   # transposed, contiguous()
    return max(product + summed + copy, delta + workspace)


def plan(tmp, name, model, precision, attention="efficient"):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    p = subprocess.run([ARENAC, "-q", "--train", "--checkpoint", "none",
                        "--precision", precision, "--attention", attention,
                        "--selfcheck", "--json", "-", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if not T.check(name + ": arenac trains it", p.returncode == 0,
                   p.stderr.strip()):
        return None
    return json.loads(p.stdout)


# (s, b, h, a, precision): head dims 32, 64, 96, 128, 160 (each of the
# kernels' max_k rows), 16-bit and float, splits clamped by 200 / (B nH),
# one head (delta needs no transposed copy), and float where the delta
# temporaries outweigh the workspace (d 128, s 128).
GPT_CONFIGS = [
    (40, 2, 128, 4, "mixed-fp16"), (64, 2, 128, 2, "mixed-bf16"),
    (48, 1, 192, 2, "mixed-bf16"), (72, 2, 320, 2, "mixed-fp16"),
    (16, 104, 320, 2, "bf16"), (130, 1, 256, 1, "mixed-fp16"),
    (40, 2, 128, 4, "fp32"), (128, 1, 256, 2, "fp32"),
    (100, 2, 320, 2, "fp32"), (128, 1, 128, 1, "fp32")]


def gpt_case(tmp, s, b, h, a, precision):
    d = h // a
    name = "gpt %s s %d b %d h %d a %d (d %d)" % (precision, s, b, h, a, d)
    c = gen_gpt.Config(layers=2, seq=s, batch=b, hidden=h, heads=a,
                       vocab=96)
    r = plan(tmp, "gpt", gen_gpt.build(c), precision)
    if r is None:
        return
    half = precision != "fp32"
    want = backward_bytes(half, b, a, s, s, d, d, dropout=c.dropout)
    got = {st["scratch_bytes"] for st in r["steps"]
           if st["op"] == "FlashAttentionGrad"}
    T.check(name + ": backward workspace %d bytes" % want, got == {want},
            got)
    lse = [t["shape"] for t in r["tensors"] if t["name"] == "l1.ctx.lse"]
    T.check(name + ": log-sum-exp padded to 32 rows",
            lse == [[b, a, align_up(s, 32)]], lse)
    flash = plan(tmp, "gpt_fa2", gen_gpt.build(c), precision, "flash")
    if flash:
        fa2 = {st["scratch_bytes"] for st in flash["steps"]
               if st["op"] == "FlashAttentionGrad"}
        fa2_want = b * a * align_up(s, 128) * (
            align_up(d, 32 if d <= 128 else 64) + 1) * 4
        T.check(name + ": --attention flash keeps mha_bwd's",
                fa2 == {fa2_want}, (fa2, fa2_want))


def gqa_case(tmp, s, b, dim, a, kv):
    """The kernel takes k and v with q's heads: the fused node reads the
    expanded copies, and the workspace is that of a heads."""
    d = dim // a
    name = "llama GQA efficient s %d b %d a %d kv %d" % (s, b, a, kv)
    c = gen_llama.Config(layers=2, seq=s, batch=b, dim=dim, heads=a,
                         kv_heads=kv, vocab=96)
    r = plan(tmp, "llama", gen_llama.build(c), "mixed-bf16")
    if r is None:
        return
    tensors = {t["name"]: t for t in r["tensors"]}
    fused = [st for st in r["steps"] if st["op"] == "FlashAttention"]
    heads = {tensors[i]["shape"][1] for st in fused
             for i in st["inputs"][1:3]}
    T.check(name + ": k and v reach the kernel with %d heads" % a,
            fused and heads == {a}, heads)
    got = {st["scratch_bytes"] for st in r["steps"]
           if st["op"] == "FlashAttentionGrad"}
    want = backward_bytes(True, b, a, s, s, d, d, dropout=False)
    T.check(name + ": backward workspace %d bytes" % want, got == {want},
            got)


def selfcheck():
    """The account by itself, on kernels the source names: d 64 bf16 on
    an A100 takes fmha_cutlassB_bf16_aligned_64x64_k64(_seqaligned)_sm80,
    d 96 the 128x128 k128 one (the 128x64 k96 kernel is for cc 86, 89),
    d 256 the 128x64 k65536 one, whose dK/dV go through gmem."""
    T.check("account: d 64 bf16 -> 64x64 k64 seqaligned",
            pick(True, 80, 128, 128, 64, 64, False) ==
            K(1, 0, 1, 64, 64, 64, True))
    T.check("account: d 96 on cc 80 -> 128x128 k128",
            pick(True, 80, 100, 100, 96, 96, False)["I"] == 128)
    T.check("account: d 96 on cc 86 -> 128x64 k96",
            pick(True, 86, 100, 100, 96, 96, False)["max_k"] == 96)
    T.check("account: d 256 with dropout -> 128x64 k65536 dropout",
            pick(True, 90, 64, 64, 256, 256, True) ==
            K(1, 1, 0, 128, 64, 65536))


def main():
    selfcheck()
    with tempfile.TemporaryDirectory(prefix="mem_eff") as tmp:
        for cfg in GPT_CONFIGS:
            gpt_case(tmp, *cfg)
        gqa_case(tmp, 16, 2, 64, 8, 2)
        gqa_case(tmp, 32, 1, 96, 6, 3)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
