#!/usr/bin/env python3
"""torch_transformers.py - small transformers written the way people write
them in plain PyTorch, for the tests that compare arenac's training bill
with what torch's autograd keeps (tests/e2e_torch_transformers.py).

Each model uses the idioms torch.onnx.export turns into patterns arenac
must recognise (tests/torch_saved.py measures what autograd keeps):

  gpt2        GPT-2: learned positions, LayerNorm, erf GELU (F.gelu),
              causal mask computed with torch.tril in forward, dropout,
              the LM head tied to the token embedding
  gpt2_tanh   the same with nn.GELU(approximate='tanh') (the cube exports
              as Mul(x, Mul(x, x)))
  gpt2_pow    the same with Hugging Face's NewGELUActivation written out
              (the cube as torch.pow(x, 3.0))
  llama       Llama: hand RMSNorm (x.pow(2).mean, torch.rsqrt), SwiGLU
              (F.silu), rotary cos/sin tables and an additive causal mask
              as registered buffers, grouped-query attention with the keys
              and values expanded (expand + reshape), untied head
  llama_ri    the same with the keys and values repeated by
              repeat_interleave
  bert        BERT: word, position and type embeddings, post-norm encoder,
              dropout, erf GELU, the pooler (tanh of the first token) and
              a classifier
  vit         ViT: patch Conv2d, a class token expanded to the batch, a
              position table longer than the sequence (sliced), pre-norm
              blocks, head on the class token
  tenc_post   nn.TransformerEncoder, post-norm, mean pooling
  tenc_pre    nn.TransformerEncoder, pre-norm (norm_first=True)
  einsum      attention written with torch.einsum
  encdec      a T5-like encoder-decoder: RMSNorm, causal self attention,
              cross attention to the encoder, ReLU FFN, the head tied to
              the shared embedding
  norms       MLP blocks with nn.LayerNorm(elementwise_affine=False),
              nn.SiLU and an RMSNorm written with 1 / torch.sqrt

build(name) gives (model, inputs, input_names, label); every model has a
fixed batch (BATCH) and sequence, so an export has no symbolic dims.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
SEQ = 16
VOCAB = 64
H = 32


def _attend(q, k, v, mask_add=None, causal_bool=None, drop=None):
    """softmax(q k^T / sqrt(d) + mask) v, as models write it by hand."""
    att = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal_bool is not None:
        att = att.masked_fill(causal_bool, float("-inf"))
    if mask_add is not None:
        att = att + mask_add
    att = F.softmax(att, dim=-1)
    if drop is not None:
        att = drop(att)
    return att @ v


def _heads(x, n):
    b, t, c = x.shape
    return x.view(b, t, n, c // n).transpose(1, 2)


def _merge(x):
    b, n, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, n * d)


# ------------------------------------------------------------------ GPT-2

class NewGELU(nn.Module):
    """Hugging Face's NewGELUActivation (transformers/activations.py)."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (
            x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Block(nn.Module):
    def __init__(self, act, p):
        super().__init__()
        self.ln_1 = nn.LayerNorm(H)
        self.c_attn = nn.Linear(H, 3 * H)
        self.c_proj = nn.Linear(H, H)
        self.ln_2 = nn.LayerNorm(H)
        self.c_fc = nn.Linear(H, 4 * H)
        self.mlp_proj = nn.Linear(4 * H, H)
        self.act = act
        self.attn_drop = nn.Dropout(p)
        self.resid_drop = nn.Dropout(p)
        self.n = 4

    def forward(self, x):
        t = x.shape[1]
        q, k, v = self.c_attn(self.ln_1(x)).split(H, dim=2)
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool)) == 0
        y = _attend(_heads(q, self.n), _heads(k, self.n), _heads(v, self.n),
                    causal_bool=causal, drop=self.attn_drop)
        x = x + self.resid_drop(self.c_proj(_merge(y)))
        return x + self.resid_drop(self.mlp_proj(self.act(
            self.c_fc(self.ln_2(x)))))


class GPT2(nn.Module):
    def __init__(self, act, layers=2, p=0.1):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, H)
        self.wpe = nn.Embedding(SEQ, H)
        self.drop = nn.Dropout(p)
        self.h = nn.ModuleList(GPT2Block(act, p) for _ in range(layers))
        self.ln_f = nn.LayerNorm(H)
        self.lm_head = nn.Linear(H, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, ids):
        pos = torch.arange(0, ids.shape[1], dtype=torch.long)
        x = self.drop(self.wte(ids) + self.wpe(pos))
        for b in self.h:
            x = b(x)
        return self.lm_head(self.ln_f(x))


# ------------------------------------------------------------------ Llama

class RMSNorm(nn.Module):
    """As transformers' LlamaRMSNorm writes it."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def _rotate_half(x):
    x1, x2 = x[..., :x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, heads, kv_heads, ffn, repeat):
        super().__init__()
        self.n, self.kv, self.d = heads, kv_heads, H // heads
        self.repeat = repeat
        self.input_layernorm = RMSNorm(H)
        self.q_proj = nn.Linear(H, H, bias=False)
        self.k_proj = nn.Linear(H, kv_heads * self.d, bias=False)
        self.v_proj = nn.Linear(H, kv_heads * self.d, bias=False)
        self.o_proj = nn.Linear(H, H, bias=False)
        self.post_attention_layernorm = RMSNorm(H)
        self.gate_proj = nn.Linear(H, ffn, bias=False)
        self.up_proj = nn.Linear(H, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, H, bias=False)

    def _kv(self, x):
        rep = self.n // self.kv
        if self.repeat:
            return x.repeat_interleave(rep, dim=1)
        b, kv, t, d = x.shape
        return x[:, :, None, :, :].expand(b, kv, rep, t, d).reshape(
            b, kv * rep, t, d)

    def forward(self, x, cos, sin, mask):
        h = self.input_layernorm(x)
        q = _heads(self.q_proj(h), self.n)
        k = _heads(self.k_proj(h), self.kv)
        v = _heads(self.v_proj(h), self.kv)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        y = _attend(q, self._kv(k), self._kv(v), mask_add=mask)
        x = x + self.o_proj(_merge(y))
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) *
                                  self.up_proj(h))


class Llama(nn.Module):
    def __init__(self, repeat, layers=2, heads=4, kv_heads=2, ffn=88,
                 max_seq=2 * SEQ):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, H)
        self.layers = nn.ModuleList(LlamaBlock(heads, kv_heads, ffn, repeat)
                                    for _ in range(layers))
        self.norm = RMSNorm(H)
        self.lm_head = nn.Linear(H, VOCAB, bias=False)
        d = H // heads
        inv_freq = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        freqs = torch.outer(torch.arange(max_seq).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())
        self.register_buffer("causal_mask", torch.full(
            (max_seq, max_seq), torch.finfo(torch.float32).min).triu(1))

    def forward(self, ids):
        t = ids.shape[1]
        cos, sin = self.cos_cached[:t], self.sin_cached[:t]
        mask = self.causal_mask[:t, :t]
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.lm_head(self.norm(x))


# ------------------------------------------------------------------- BERT

class BertLayer(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.qkv = nn.Linear(H, 3 * H)
        self.out = nn.Linear(H, H)
        self.ln1 = nn.LayerNorm(H, eps=1e-12)
        self.inter = nn.Linear(H, 4 * H)
        self.output = nn.Linear(4 * H, H)
        self.ln2 = nn.LayerNorm(H, eps=1e-12)
        self.drop = nn.Dropout(p)
        self.attn_drop = nn.Dropout(p)

    def forward(self, x):
        q, k, v = self.qkv(x).split(H, dim=2)
        y = _attend(_heads(q, 4), _heads(k, 4), _heads(v, 4),
                    drop=self.attn_drop)
        x = self.ln1(x + self.drop(self.out(_merge(y))))
        return self.ln2(x + self.drop(self.output(F.gelu(self.inter(x)))))


class Bert(nn.Module):
    def __init__(self, layers=2, classes=3, p=0.1):
        super().__init__()
        self.word = nn.Embedding(VOCAB, H)
        self.position = nn.Embedding(4 * SEQ, H)
        self.token_type = nn.Embedding(2, H)
        self.ln = nn.LayerNorm(H, eps=1e-12)
        self.drop = nn.Dropout(p)
        self.layers = nn.ModuleList(BertLayer(p) for _ in range(layers))
        self.pooler = nn.Linear(H, H)
        self.classifier = nn.Linear(H, classes)
        self.register_buffer("position_ids",
                             torch.arange(4 * SEQ).expand((1, -1)))

    def forward(self, ids):
        t = ids.shape[1]
        pos = self.position_ids[:, :t]
        types = torch.zeros_like(ids)
        x = self.drop(self.ln(self.word(ids) + self.position(pos) +
                              self.token_type(types)))
        for layer in self.layers:
            x = layer(x)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return self.classifier(self.drop(pooled))


# -------------------------------------------------------------------- ViT

class ViTBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(H, eps=1e-6)
        self.qkv = nn.Linear(H, 3 * H)
        self.proj = nn.Linear(H, H)
        self.norm2 = nn.LayerNorm(H, eps=1e-6)
        self.fc1 = nn.Linear(H, 4 * H)
        self.fc2 = nn.Linear(4 * H, H)

    def forward(self, x):
        b, t, _ = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(b, t, 3, 4, H // 4)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        x = x + self.proj(_merge(_attend(q, k, v)))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class ViT(nn.Module):
    def __init__(self, layers=2, classes=10, image=16, patch=4):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, H, patch, patch)
        tokens = (image // patch) ** 2 + 1
        self.cls_token = nn.Parameter(torch.zeros(1, 1, H))
        self.pos_embed = nn.Parameter(torch.randn(1, tokens + 8, H) * .02)
        self.blocks = nn.ModuleList(ViTBlock() for _ in range(layers))
        self.norm = nn.LayerNorm(H, eps=1e-6)
        self.head = nn.Linear(H, classes)

    def forward(self, img):
        x = self.patch_embed(img).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
        x = x + self.pos_embed[:, :x.shape[1]]
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x)[:, 0])


# ---------------------------------------------- nn.TransformerEncoder

class TorchEncoder(nn.Module):
    def __init__(self, norm_first, layers=2, classes=10, p=0.1):
        super().__init__()
        layer = nn.TransformerEncoderLayer(H, 4, 2 * H, p, batch_first=True,
                                           norm_first=norm_first)
        self.enc = nn.TransformerEncoder(layer, layers,
                                         enable_nested_tensor=False)
        self.head = nn.Linear(H, classes)

    def forward(self, x):
        return self.head(self.enc(x).mean(dim=1))


# ----------------------------------------------------------------- einsum

class EinsumAttention(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, H)
        self.qkv = nn.ModuleList(nn.Linear(H, 3 * H) for _ in range(layers))
        self.o = nn.ModuleList(nn.Linear(H, H) for _ in range(layers))
        self.ln = nn.ModuleList(nn.LayerNorm(H) for _ in range(layers))
        self.head = nn.Linear(H, VOCAB)

    def forward(self, ids):
        x = self.emb(ids)
        for qkv, o, ln in zip(self.qkv, self.o, self.ln):
            b, t, _ = x.shape
            q, k, v = qkv(ln(x)).reshape(b, t, 3, 4, H // 4).unbind(2)
            s = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(H // 4)
            p = F.softmax(s, dim=-1)
            y = torch.einsum("bhqk,bkhd->bqhd", p, v).reshape(b, t, H)
            x = x + o(y)
        return self.head(x)


# ------------------------------------------------------ encoder-decoder

class T5Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(H, H, bias=False)
        self.k = nn.Linear(H, H, bias=False)
        self.v = nn.Linear(H, H, bias=False)
        self.o = nn.Linear(H, H, bias=False)

    def forward(self, x, mem, mask=None):
        y = _attend(_heads(self.q(x), 4), _heads(self.k(mem), 4),
                    _heads(self.v(mem), 4), mask_add=mask)
        return self.o(_merge(y))


class T5FF(nn.Module):
    def __init__(self):
        super().__init__()
        self.wi = nn.Linear(H, 2 * H, bias=False)
        self.wo = nn.Linear(2 * H, H, bias=False)

    def forward(self, x):
        return self.wo(F.relu(self.wi(x)))


class EncDec(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.shared = nn.Embedding(VOCAB, H)
        self.enc_sa = nn.ModuleList(T5Attention() for _ in range(layers))
        self.enc_ff = nn.ModuleList(T5FF() for _ in range(layers))
        self.enc_ln = nn.ModuleList(RMSNorm(H) for _ in range(2 * layers))
        self.enc_final = RMSNorm(H)
        self.dec_sa = nn.ModuleList(T5Attention() for _ in range(layers))
        self.dec_ca = nn.ModuleList(T5Attention() for _ in range(layers))
        self.dec_ff = nn.ModuleList(T5FF() for _ in range(layers))
        self.dec_ln = nn.ModuleList(RMSNorm(H) for _ in range(3 * layers))
        self.dec_final = RMSNorm(H)
        self.lm_head = nn.Linear(H, VOCAB, bias=False)
        self.lm_head.weight = self.shared.weight  # tied, as in T5

    def forward(self, src, tgt):
        x = self.shared(src)
        for i, (sa, ff) in enumerate(zip(self.enc_sa, self.enc_ff)):
            h = self.enc_ln[2 * i](x)
            x = x + sa(h, h)
            x = x + ff(self.enc_ln[2 * i + 1](x))
        mem = self.enc_final(x)
        t = tgt.shape[1]
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        y = self.shared(tgt)
        for i, (sa, ca, ff) in enumerate(zip(self.dec_sa, self.dec_ca,
                                             self.dec_ff)):
            h = self.dec_ln[3 * i](y)
            y = y + sa(h, h, mask)
            y = y + ca(self.dec_ln[3 * i + 1](y), mem)
            y = y + ff(self.dec_ln[3 * i + 2](y))
        return self.lm_head(self.dec_final(y) * (H ** -0.5))


# ------------------------------------------------------------------ norms

class NormsBlock(nn.Module):
    """A pre-norm MLP block and a hand RMSNorm in the forms no other model
    here writes: nn.LayerNorm without affine part, nn.SiLU, and the RMSNorm
    with 1 / torch.sqrt (exported as Reciprocal(Sqrt); torch keeps both
    results, unlike torch.rsqrt's one, and the product by 1 its 1 / t
    computes as reciprocal(t) * 1 besides: one value per row, the
    export has no such Mul)."""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(H, elementwise_affine=False)
        self.fc1 = nn.Linear(H, 4 * H)
        self.act = nn.SiLU()
        self.fc2 = nn.Linear(4 * H, H)
        self.weight = nn.Parameter(torch.ones(H))

    def forward(self, x):
        x = x + self.fc2(self.act(self.fc1(self.ln(x))))
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * (1 / torch.sqrt(variance + 1e-6)))


class Norms(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, H)
        self.layers = nn.ModuleList(NormsBlock() for _ in range(layers))
        self.head = nn.Linear(H, VOCAB, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


MODELS = ("gpt2", "gpt2_tanh", "gpt2_pow", "llama", "llama_ri", "bert",
          "vit", "tenc_post", "tenc_pre", "einsum", "encdec", "norms")


def build(name):
    """(model, inputs, input_names, label) for one of MODELS."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
    lm_label = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
    cls_label = torch.randint(0, 3, (BATCH,), generator=g)
    if name == "gpt2":
        return GPT2(nn.GELU()), (ids,), ("input",), lm_label
    if name == "norms":
        return Norms(), (ids,), ("input",), lm_label
    if name == "gpt2_tanh":
        return GPT2(nn.GELU(approximate="tanh")), (ids,), ("input",), \
            lm_label
    if name == "gpt2_pow":
        return GPT2(NewGELU()), (ids,), ("input",), lm_label
    if name in ("llama", "llama_ri"):
        return Llama(repeat=name == "llama_ri"), (ids,), ("input",), \
            lm_label
    if name == "bert":
        return Bert(), (ids,), ("input",), cls_label
    if name == "vit":
        img = torch.rand(BATCH, 3, 16, 16, generator=g)
        return ViT(), (img,), ("input",), cls_label
    if name in ("tenc_post", "tenc_pre"):
        x = torch.rand(BATCH, SEQ, H, generator=g)
        return TorchEncoder(norm_first=name == "tenc_pre"), (x,), \
            ("input",), cls_label
    if name == "einsum":
        return EinsumAttention(), (ids,), ("input",), lm_label
    if name == "encdec":
        tgt = torch.randint(0, VOCAB, (BATCH, SEQ // 2), generator=g)
        label = torch.randint(0, VOCAB, (BATCH, SEQ // 2), generator=g)
        return EncDec(), (ids, tgt), ("src", "tgt"), label
    raise KeyError(name)


def parameters(model):
    """Trainable parameters as torch counts them (a tied weight once)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
