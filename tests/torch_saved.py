#!/usr/bin/env python3
"""torch_saved.py - PyTorch as an oracle for what a training step keeps.

For a torch model, an input and a label, measure() runs the forward pass
and the cross-entropy loss with torch.autograd.graph.saved_tensors_hooks
installed and returns every tensor autograd saves for the backward pass,
one entry per storage: a view saves its whole storage, so entries are
keyed by storage data_ptr and sized by the storage (what really stays
alive), and two saved views of one buffer count once.  Parameters, module
buffers (BatchNorm running statistics, masks) and views of them are set
apart: they are weights, not activations; so are the 0-d tensors autograd
wraps Python numbers in (att * 0.125 saves a float64 0.125).

Each storage gets a category from the aten op that produced or last
overwrote it (seen through a TorchDispatchMode, below autograd):
  input               a graph input (the image, the token ids, the label)
  activation          any other forward result
  maxpool_indices     int64 argmax indices of max_pool*_with_indices
  batchnorm_stats     save_mean / save_invstd of native_batch_norm
  layernorm_stats     mean / rstd of native_layer_norm
  dropout_mask        the mask of dropout: on CPU torch 1.13 draws it
                      with bernoulli_ into a tensor of the input's dtype
                      (4 bytes per element in float32); native_dropout
                      (GPU) gives a bool mask
  loss_total_weight   nll_loss's 0-d total_weight
Which autograd node saved it (e.g. MaxPool2DWithIndicesBackward0.
_saved_result1) is kept for the report.

The models (same architecture as the ONNX files they are compared with):
lenet (testdata/gen_lenet.py), torchvision resnet18 and vgg11, a small
GPT (2 layers, LayerNorm, causal attention with dropout, GELU MLP) and a
2-layer nn.TransformerEncoder with a mean-pool head; build() gives each
with its input, label and export opset (14; 17 for the GPT, so LayerNorm
stays one LayerNormalization op).  VGG-11 is built with nn.init skipped
(values do not change what is saved; 123 M random draws take seconds).
export() writes the very graph torch ran with torch.onnx.export in
training mode, without constant folding, with the weights as external
data in a file that is never written (arenac never reads weight bytes;
VGG-11's 500 MB of classifier weights are never serialised).

Import it (tests/e2e_torch_oracle.py) or run it: `python3
tests/torch_saved.py [MODEL...]` prints the breakdown per model.
"""
import collections
import contextlib
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "testdata"))
import extdata  # noqa: E402  (testdata/extdata.py)

CATEGORIES = ("input", "activation", "maxpool_indices", "batchnorm_stats",
              "layernorm_stats", "dropout_mask", "loss_total_weight")


class Saved:
    """One saved storage."""

    def __init__(self, ptr, nbytes, dtype, shape, category, producers):
        self.ptr, self.nbytes, self.dtype = ptr, nbytes, dtype
        self.shape, self.category = shape, category
        self.producers = producers  # aten ops that wrote it, in order
        self.savers = []            # "Node._saved_attr" that hold it

    def __repr__(self):
        return "%s %s %s %d B (%s; %s)" % (
            self.category, str(self.dtype).replace("torch.", ""),
            list(self.shape), self.nbytes, ", ".join(self.producers) or "-",
            ", ".join(self.savers))


class Measurement:
    def __init__(self, saved, weights_bytes):
        self.saved = saved                  # list of Saved
        self.weights_bytes = weights_bytes  # parameters, buffers, numbers

    def total(self):
        return sum(s.nbytes for s in self.saved)

    def by_category(self):
        out = collections.OrderedDict((c, 0) for c in CATEGORIES)
        for s in self.saved:
            out[s.category] += s.nbytes
        return out


class _Producers(TorchDispatchMode):
    """Records, per storage, the aten ops (and output index) writing it."""

    def __init__(self):
        super().__init__()
        self.ops = collections.defaultdict(list)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        outs = out if isinstance(out, (tuple, list)) else [out]
        name = func.overloadpacket.__name__
        ins = {_ptr(a) for a in list(args) + list((kwargs or {}).values())
               if isinstance(a, torch.Tensor) and a.numel()}
        for i, o in enumerate(outs):
            if not isinstance(o, torch.Tensor) or not o.numel():
                continue
            p = _ptr(o)
            if p not in ins:       # a new storage (its address may be reused)
                self.ops[p] = [(name, i)]
            elif name.endswith("_"):  # written in place
                self.ops[p].append((name, i))
            # else a view of an input: not a producer
        return out


def _ptr(t):
    return t.storage().data_ptr()


def _category(ops):
    for name, i in ops:
        if name.startswith("max_pool") and name.endswith("with_indices") \
                and i == 1:
            return "maxpool_indices"
        if name == "native_batch_norm" and i in (1, 2):
            return "batchnorm_stats"
        if name == "native_layer_norm" and i in (1, 2):
            return "layernorm_stats"
        if name.startswith("bernoulli") or (name == "native_dropout"
                                            and i == 1):
            return "dropout_mask"
        if name == "nll_loss_forward" and i == 1:
            return "loss_total_weight"
    return "activation" if ops else "input"


def _is_constant(t, ops):
    """A Python number autograd wrapped into a 0-d tensor (x * 0.125)."""
    return not ops and t.dim() == 0


def _savers(fn, where, seen):
    """Walks the autograd graph from fn: storage ptr -> saver names."""
    stack = [fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        for attr in dir(fn):
            if not attr.startswith("_saved_"):
                continue
            try:
                v = getattr(fn, attr)
            except RuntimeError:  # freed or undefined
                continue
            for t in v if isinstance(v, (tuple, list)) else [v]:
                if isinstance(t, torch.Tensor) and t.numel():
                    where[_ptr(t)].append(type(fn).__name__ + "." + attr)
        stack.extend(n for n, _ in fn.next_functions)


def loss_of(logits, label):
    """arenac's loss: cross-entropy over the last axis of the output."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           label.reshape(-1))


def measure(model, inputs, label, context=None, upcast=False):
    """Saved-for-backward storages of loss_of(model(*inputs), label).

    context: a context manager to run the forward pass and the loss in
    (torch.autocast(...) for a mixed-precision step); None: none.
    upcast: the loss reads logits.float() (Megatron-LM's cross-entropy on
    16-bit logits; arenac's --loss-dtype fp32).  Under
    autocast, its 16-bit copies of the parameters are no parameters: they
    count as activations where autograd saves them."""
    model.train()
    keep = []
    weights = {_ptr(p) for p in model.parameters()}
    weights |= {_ptr(b) for b in model.buffers() if b.numel()}

    def pack(t):
        keep.append(t)
        return t

    rec = _Producers()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with rec, (context or contextlib.nullcontext()):
            out = model(*inputs)
            loss = loss_of(out.float() if upcast else out, label)
    where = collections.defaultdict(list)
    _savers(loss.grad_fn, where, set())
    saved, seen, wbytes = [], set(), 0
    for t in keep:
        p = _ptr(t)
        if not t.numel() or p in seen:
            continue
        seen.add(p)
        st = t.storage()
        ops = rec.ops.get(p, [])
        if p in weights or _is_constant(t, ops):
            wbytes += st.nbytes()
            continue
        s = Saved(p, st.nbytes(), t.dtype, tuple(t.shape), _category(ops),
                  ["%s[%d]" % o for o in ops])
        s.savers = sorted(set(where.get(p, [])))
        saved.append(s)
    return Measurement(saved, wbytes)


# ---------------------------------------------------------------- models

class LeNet(nn.Module):
    """testdata/gen_lenet.py's LeNet: conv 20 and 50, fc 500 and 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 20, 5)
        self.conv2 = nn.Conv2d(20, 50, 5)
        self.fc1 = nn.Linear(800, 500)
        self.fc2 = nn.Linear(500, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2, 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2, 2)
        x = F.relu(self.fc1(x.reshape(-1, 800)))
        return self.fc2(x)


class GPTBlock(nn.Module):
    def __init__(self, h, a, s, p):
        super().__init__()
        self.h, self.a, self.s, self.d = h, a, s, h // a
        self.ln1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.ln2 = nn.LayerNorm(h)
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)
        self.drop_attn = nn.Dropout(p)
        self.drop_proj = nn.Dropout(p)
        self.drop_mlp = nn.Dropout(p)
        self.register_buffer("causal", torch.tril(
            torch.ones(s, s, dtype=torch.bool)))

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).split(self.h, dim=2)
        shape = (-1, self.s, self.a, self.d)
        q = q.reshape(shape).transpose(1, 2)
        k = k.reshape(shape).transpose(1, 2)
        v = v.reshape(shape).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.d))
        att = att.masked_fill(~self.causal, float("-inf"))
        att = self.drop_attn(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).reshape(-1, self.s, self.h)
        x = x + self.drop_proj(self.proj(y))
        return x + self.drop_mlp(self.fc2(F.gelu(self.fc1(self.ln2(x)))))


class GPT(nn.Module):
    """A small GPT-2: token + position embeddings, blocks, final LN, head."""

    def __init__(self, layers=2, s=16, h=32, a=2, vocab=64, p=0.1):
        super().__init__()
        self.wte = nn.Embedding(vocab, h)
        self.wpe = nn.Embedding(s, h)
        self.drop = nn.Dropout(p)
        self.blocks = nn.ModuleList(GPTBlock(h, a, s, p)
                                    for _ in range(layers))
        self.lnf = nn.LayerNorm(h)
        self.head = nn.Linear(h, vocab, bias=False)
        self.register_buffer("pos", torch.arange(s))

    def forward(self, ids):
        x = self.drop(self.wte(ids) + self.wpe(self.pos))
        for b in self.blocks:
            x = b(x)
        return self.head(self.lnf(x))


class Encoder(nn.Module):
    """2-layer nn.TransformerEncoder, mean over the sequence, a classifier."""

    def __init__(self, d=32, heads=2, ff=64, classes=10, p=0.1):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, heads, ff, p, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        return self.head(self.enc(x).mean(dim=1))


@contextlib.contextmanager
def _no_init():
    """Skips nn.init during construction: VGG-11's 123 M random values
    would take seconds and only the sizes matter here."""
    names = ("kaiming_uniform_", "kaiming_normal_", "uniform_", "normal_",
             "constant_", "zeros_", "ones_")
    old = {n: getattr(nn.init, n) for n in names}
    try:
        for n in names:
            setattr(nn.init, n, lambda t, *a, **k: t)
        yield
    finally:
        for n, f in old.items():
            setattr(nn.init, n, f)


def build(name, batch=None):
    """(model, inputs, label, opset) for one of MODELS at its batch."""
    g = torch.Generator().manual_seed(0)
    if name == "lenet":
        b = batch or 64
        m, x, classes, opset = LeNet(), torch.rand(b, 1, 28, 28,
                                                   generator=g), 10, 14
    elif name == "resnet18":
        import torchvision
        b = batch or 8
        m = torchvision.models.resnet18()
        x, classes, opset = torch.rand(b, 3, 224, 224, generator=g), 1000, 14
    elif name == "vgg11":
        import torchvision
        b = batch or 2
        with _no_init():
            m = torchvision.models.vgg11()
        with torch.no_grad():
            for p in m.parameters():
                p.uniform_(-0.01, 0.01, generator=g) if p.numel() < 5e6 \
                    else p.zero_()
        x, classes, opset = torch.rand(b, 3, 224, 224, generator=g), 1000, 14
    elif name == "gpt":
        b = batch or 4
        m = GPT()
        x = torch.randint(0, 64, (b, 16), generator=g)
        label = torch.randint(0, 64, (b, 16), generator=g)
        return m, (x,), label, 17
    elif name == "encoder":
        b = batch or 4
        m = Encoder()
        x, classes, opset = torch.rand(b, 16, 32, generator=g), 10, 14
    else:
        raise KeyError(name)
    return m, (x,), torch.randint(0, classes, (b,), generator=g), opset


MODELS = ("lenet", "resnet18", "vgg11", "gpt", "encoder")


class WithLoss(nn.Module):
    """A model that computes its own loss (loss_of) from input and label:
    torch exports the loss op with it."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x, label):
        return loss_of(self.model(x), label)


def export(model, inputs, path, opset, names=("input",), output="logits"):
    """torch.onnx.export in training mode; weights as absent external data.

    The graph inputs are `names` ("input"), the output `output` ("logits").
    Parameters and buffers are exported as graph inputs
    (export_params=False) and turned into initializers whose bytes live in
    a file that is never written.  The model passes onnx's full check
    (extdata.check) before it is saved."""
    import warnings
    model.train()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, inputs, path, export_params=False,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, opset_version=opset,
                          input_names=list(names), output_names=[output])
    import onnx
    m = onnx.load(path)
    extdata.inputs_to_external(m, keep=list(names),
                               location=os.path.basename(path) + ".data")
    extdata.check(m)
    onnx.save(m, path)
    return m


def main(argv):
    torch.manual_seed(0)
    for name in argv or MODELS:
        m, inputs, label, _ = build(name)
        r = measure(m, inputs, label)
        print("%s: %d bytes saved (%s); weights held: %d bytes" % (
            name, r.total(), ", ".join("%s %d" % kv for kv in
                                       r.by_category().items() if kv[1]),
            r.weights_bytes))
        for s in r.saved:
            print("   ", s)


if __name__ == "__main__":
    main(sys.argv[1:])
