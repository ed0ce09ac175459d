#!/usr/bin/env python3
"""korthikanti.py - activation memory of a transformer layer as Korthikanti
et al. 2022 count it ("Reducing Activation Recomputation in Large
Transformer Models", section 4.1 and Table 2), as closed formulas and
itemised per tensor of testdata/gen_gpt.py's graph.

Notation: s sequence, b micro-batch, h hidden, a heads, t tensor-parallel
size.  The paper stores activations in 16 bits (2 bytes) and dropout masks
in 1 byte; here both widths are parameters (act, mask) so float32 graphs
(act=4) are covered too; with act=2, mask=1 every result is the paper's.

Per layer, no parallelism, no recomputation (section 4.1):
    s*b*h*(34 + 5*a*s/h)
Table 2:
    tensor parallel                      s*b*h*(10 + 24/t + 5*a*s/(h*t))
    tensor + sequence parallel           s*b*h/t*(34 + 5*a*s/h)
    tensor parallel + selective          s*b*h*(10 + 24/t)
    tensor + sequence par. + selective   s*b*h*34/t
    full recomputation                   2*s*b*h
(selective recomputation = recompute the attention core: QK^T, softmax,
softmax dropout, attention over V; full = keep only the layer input.)

breakdown() lists the terms one by one, each with the tensor of the graph
that holds it (gen_gpt.py names; "root" is the buffer when the tensor is a
view: l{i}.ctx.flat is a Reshape of l{i}.ctx.t), its element count, and
whether tensor parallelism (t) and sequence parallelism split it:

  term                        tensor            elements   bytes (act=2)
  LN1 input                   h{i}              sbh        2sbh
  QKV matmul input            l{i}.ln1          sbh        2sbh
  Q (QK^T operand)            l{i}.q            sbh        2sbh
  K (QK^T operand)            l{i}.kT           sbh        2sbh
  softmax output              l{i}.probs        as^2b      2as^2b
  softmax dropout mask        l{i}.probs.mask   as^2b      as^2b
  softmax dropout output      l{i}.probs.drop   as^2b      2as^2b
  V (attention over V)        l{i}.v            sbh        2sbh
  output projection input     l{i}.ctx.flat     sbh        2sbh
  attention dropout mask      l{i}.proj.mask    sbh        sbh
  LN2 input                   l{i}.res1         sbh        2sbh
  MLP h->4h input             l{i}.ln2          sbh        2sbh
  GELU input                  l{i}.fc1          4sbh       8sbh
  MLP 4h->h input             l{i}.gelu         4sbh       8sbh
  MLP dropout mask            l{i}.fc2.mask     sbh        sbh
  sum                                                      34sbh + 5as^2b

Not in the formula ("exactly apart from"): the per-row statistics of the two
LayerNorms, mean and 1/std as float32 (ln_stats(): 2 x 2 x s*b x 4 bytes),
and what a decomposed GELU or LayerNorm keeps beyond its input
(decomposition_extras()).  Without dropout (dropout=False) the three masks
go and the attention over V reads the softmax output itself:
s*b*h*(32 + 2*a*s/h) at act=2.

Run it to check that every breakdown sums to its formula (exit 1 if not).
"""
from fractions import Fraction
import sys

# (label, tensor template, elements: "sbh" | "4sbh" | "as2b", is a mask,
#  split by tensor parallelism without sequence parallelism, attention core)
TERMS = (
    ("LN1 input", "h{n}", "sbh", False, False, False),
    ("QKV matmul input", "l{i}.ln1", "sbh", False, False, False),
    ("Q (QK^T operand)", "l{i}.q", "sbh", False, True, False),
    ("K (QK^T operand)", "l{i}.kT", "sbh", False, True, False),
    ("softmax output", "l{i}.probs", "as2b", False, True, True),
    ("softmax dropout mask", "l{i}.probs.mask", "as2b", True, True, True),
    ("softmax dropout output", "l{i}.probs.drop", "as2b", False, True, True),
    ("V (attention over V)", "l{i}.v", "sbh", False, True, False),
    ("output projection input", "l{i}.ctx.flat", "sbh", False, True, False),
    ("attention dropout mask", "l{i}.proj.mask", "sbh", True, False, False),
    ("LN2 input", "l{i}.res1", "sbh", False, False, False),
    ("MLP h->4h input", "l{i}.ln2", "sbh", False, False, False),
    ("GELU input", "l{i}.fc1", "4sbh", False, True, False),
    ("MLP 4h->h input", "l{i}.gelu", "4sbh", False, True, False),
    ("MLP dropout mask", "l{i}.fc2.mask", "sbh", True, False, False),
)

# Views in gen_gpt.py's graph: tensor -> the buffer that holds it.
ROOTS = {"l{i}.ctx.flat": "l{i}.ctx.t"}


class Term:
    """One term: the tensor that holds it, its buffer (root), elements and
    bytes per device, whether it is a mask, and split: the divisor the
    parallelism applies to it (1: replicated on every device)."""

    def __init__(self, label, tensor, root, elements, bytes_, mask, split):
        self.label, self.tensor, self.root = label, tensor, root
        self.elements, self.bytes, self.mask = elements, bytes_, mask
        self.split = split

    def __repr__(self):
        return "%-26s %-16s %s bytes" % (self.label, self.tensor, self.bytes)


def _elements(kind, s, b, h, a):
    return {"sbh": s * b * h, "4sbh": 4 * s * b * h, "as2b": a * s * s * b}[
        kind]


def breakdown(s, b, h, a, layer=0, t=1, sp=False, recompute=None,
              dropout=True, act=2, mask=1):
    """The terms of one layer (layer: gen_gpt's index i), per device.

    t, sp: tensor parallelism and sequence parallelism; recompute: None,
    "selective" or "full".  Bytes are Fractions (exact; s*b*h/t need not be
    an integer)."""
    assert recompute in (None, "selective", "full")
    out = []
    for label, tmpl, kind, is_mask, tp_split, core in TERMS:
        if is_mask and not dropout:
            continue
        if label == "softmax dropout output" and not dropout:
            continue  # attention over V reads the softmax output itself
        if recompute == "selective" and core:
            continue
        if recompute == "full" and label != "LN1 input":
            continue
        tensor = tmpl.format(i=layer, n=layer)
        root = ROOTS.get(tmpl, tmpl).format(i=layer, n=layer)
        n = _elements(kind, s, b, h, a)
        split = t if (tp_split or sp) and recompute != "full" else 1
        out.append(Term(label, tensor, root, Fraction(n, split),
                        Fraction(n * (mask if is_mask else act), split),
                        is_mask, split))
    return out


def formula(s, b, h, a, t=1, sp=False, recompute=None, dropout=True, act=2,
            mask=1):
    """Per-layer activation bytes in closed form (the paper's, generalised
    to act/mask widths: s*b*h*(16 act + 2 mask) + a*s^2*b*(2 act + mask))."""
    sbh, as2b = Fraction(s * b * h), Fraction(a * s * s * b)
    if recompute == "full":
        return sbh * act  # the layer input only
    # Elements per term: replicated under TP (no SP) vs split by t.
    rep_act, rep_mask = 4, 2    # LN1, QKV, LN2, fc1 inputs; two masks
    split_act, core_act, core_mask = 12, 2, 1  # Q K V proj gelu fc2; core
    if not dropout:
        rep_mask, core_act, core_mask = 0, 1, 0
    if recompute == "selective":
        core_act = core_mask = 0
    rep = sbh * (rep_act * act + rep_mask * mask)
    split = sbh * split_act * act + as2b * (core_act * act + core_mask * mask)
    return rep / (t if sp else 1) + split / t


def paper_table2(s, b, h, a, t):
    """Table 2's rows exactly as printed (16-bit activations, byte masks)."""
    F = Fraction
    sbh = F(s * b * h)
    return {
        "no parallelism": sbh * (34 + F(5 * a * s, h)),
        "tensor parallel": sbh * (10 + F(24, t) + F(5 * a * s, h * t)),
        "tensor + sequence parallel": sbh / t * (34 + F(5 * a * s, h)),
        "tensor parallel + selective": sbh * (10 + F(24, t)),
        "tensor + sequence parallel + selective": sbh * 34 / t,
        "full recompute": 2 * sbh,
    }


TABLE2_ARGS = {
    "no parallelism": dict(t=1),
    "tensor parallel": dict(),
    "tensor + sequence parallel": dict(sp=True),
    "tensor parallel + selective": dict(recompute="selective"),
    "tensor + sequence parallel + selective": dict(sp=True,
                                                   recompute="selective"),
    "full recompute": dict(recompute="full"),
}


def ln_stats(s, b, width=4, t=1, sp=False):
    """Per-row mean and 1/std of the layer's two LayerNorms (not in the
    formula): 2 LNs x 2 statistics x s*b rows x width bytes."""
    return Fraction(2 * 2 * s * b * width, t if sp else 1)


def decomposition_extras(s, b, h, layer=0, gelu="erf", layernorm="op",
                         act=2, stats=4):
    """What per-op gradient rules keep beyond the paper's terms when GELU or
    LayerNorm is decomposed (gen_gpt.py --gelu / --layernorm decomposed):
    {tensor: bytes}.  A planner that recognises the patterns (or a fused
    op) keeps none of it but X.std, which a recognised LayerNorm reads as
    its 1/std, a statistic (float32, ln_stats()).

    GELU, erf form y = x (1 + erf(x/sqrt2)) / 2: Erf's gradient reads its
    input (X.div) and the Mul x * (1 + erf) reads both factors: X.erf1.
    tanh form: Pow(x, 3) reads x; Tanh's gradient reads its output X.tanh;
    Mul x * (1 + tanh) reads X.tanh1.  (x itself is the GELU-input term.)
    LayerNorm decomposed (per LN): Pow reads X.xc, Div reads X.xc and X.std
    (rows), Mul by the scale reads X.xn; the LN input, the formula's term,
    is then read by nobody (Sub needs no values)."""
    i = "l%d" % layer
    n4 = 4 * s * b * h * act
    out = {}
    if gelu == "erf":
        out[i + ".gelu.div"] = n4
        out[i + ".gelu.erf1"] = n4
    elif gelu == "tanh":
        out[i + ".gelu.tanh"] = n4
        out[i + ".gelu.tanh1"] = n4
    if layernorm == "decomposed":
        for ln in (".ln1", ".ln2"):
            out[i + ln + ".xc"] = s * b * h * act
            out[i + ln + ".xn"] = s * b * h * act
            out[i + ln + ".std"] = s * b * stats
    return out


CONFIGS = [  # (s, b, h, a, t): small, GPT-2-small-like, GPT-3 / Megatron
    (16, 2, 64, 4, 2), (1024, 8, 768, 12, 1), (2048, 1, 12288, 96, 8),
    (2048, 4, 4096, 32, 4), (512, 3, 1024, 16, 2), (128, 1, 96, 3, 3),
]


def selfcheck(out=sys.stdout):
    """Every breakdown sums to its closed form and to Table 2's row."""
    bad = 0
    for s, b, h, a, t in CONFIGS:
        table = paper_table2(s, b, h, a, t)
        for row, args in TABLE2_ARGS.items():
            kw = dict(t=t)
            kw.update(args)
            parts = sum(x.bytes for x in breakdown(s, b, h, a, **kw))
            want = table[row]
            f = formula(s, b, h, a, **kw)
            if not parts == f == want:
                bad += 1
                out.write("FAIL %s %s: breakdown %s, formula %s, paper %s\n"
                          % ((s, b, h, a, t), row, parts, f, want))
        for act, mask in ((2, 1), (4, 1), (2, 2)):
            for dropout in (True, False):
                parts = sum(x.bytes for x in breakdown(
                    s, b, h, a, act=act, mask=mask, dropout=dropout))
                f = formula(s, b, h, a, act=act, mask=mask, dropout=dropout)
                if parts != f:
                    bad += 1
                    out.write("FAIL %s act %d mask %d dropout %s: %s != %s\n"
                              % ((s, b, h, a), act, mask, dropout, parts, f))
        if sum(x.bytes for x in breakdown(s, b, h, a, dropout=False)) != \
                s * b * h * (32 + Fraction(2 * a * s, h)):
            bad += 1
            out.write("FAIL %s: no-dropout form\n" % ((s, b, h, a),))
    return bad


if __name__ == "__main__":
    n = selfcheck()
    print("korthikanti: %d configurations x %d rows, %d failed" % (
        len(CONFIGS), len(TABLE2_ARGS) + 7, n))
    sys.exit(1 if n else 0)
