#!/usr/bin/env python3
"""Generate extra golden-model cases (same families and JSON format as /work/shared/golden-models).

Run with Debian's PyTorch 1.13:  /usr/bin/python3 tooling/golden-models-gen/generate.py [--validate-only]

1. Validates this file's own nanoGPT-equivalent GPT (written here, not copied) and
   torch.nn.TransformerEncoderLayer against the public cases (logits, loss, greedy, train losses, output).
2. Writes the extra cases to packages/testkit/golden-models-extra/.
"""
import argparse
import collections
import json
import math
import os
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
PUBLIC = os.environ.get("GOLDEN_PUBLIC_DIR", "/work/shared/golden-models")
OUT = os.path.join(REPO, "packages", "testkit", "golden-models-extra")
TOL = {"abs": 1e-4, "rel": 1e-4}
NANOGPT_SOURCE = ("karpathy/nanoGPT model.py (3adf61e), GPT(GPTConfig(...)) in eval mode; "
                  "state_dict minus the .attn.bias mask buffers")
TRAIN_TEXT = ("AdamW lr 3e-3, betas (0.9, 0.95), eps 1e-8, weight_decay 0.1 on every parameter of rank >= 2 "
              "and 0 on the others, grad-norm clipping at 1.0 over all parameters, one step per batch")


# ----------------------------------------------------------------------------------------------- safetensors

def write_safetensors(path, tensors, metadata=None):
    """tensors: ordered (name, tensor) pairs; written in that order (as the public files are: state_dict
    order, data packed contiguously), header compact JSON padded with spaces to a multiple of 8."""
    header = collections.OrderedDict()
    blobs = []
    off = 0
    for name, t in tensors:
        t = t.detach().to(torch.float32).contiguous().cpu()
        b = t.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    if metadata is not None:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    import numpy as np
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n], object_pairs_hook=collections.OrderedDict)
    out = collections.OrderedDict()
    base = 8 + n
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", info
        s, e = info["data_offsets"]
        arr = np.frombuffer(data[base + s:base + e], dtype="<f4").copy().reshape(info["shape"])
        out[name] = torch.from_numpy(arr)
    return out


# ----------------------------------------------------------------------------------------------- GPT (nanoGPT-equivalent)

class LayerNorm(nn.Module):
    def __init__(self, n, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.bias = nn.Parameter(torch.zeros(n)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        E = cfg["n_embd"]
        self.n_head = cfg["n_head"]
        self.c_attn = nn.Linear(E, 3 * E, bias=cfg["bias"])
        self.c_proj = nn.Linear(E, E, bias=cfg["bias"])

    def forward(self, x):
        B, T, E = x.shape
        H = self.n_head
        q, k, v = self.c_attn(x).split(E, dim=2)
        q = q.view(B, T, H, E // H).transpose(1, 2)
        k = k.view(B, T, H, E // H).transpose(1, 2)
        v = v.view(B, T, H, E // H).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = att.masked_fill(~causal, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, E)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, cfg, gelu):
        super().__init__()
        E = cfg["n_embd"]
        self.c_fc = nn.Linear(E, 4 * E, bias=cfg["bias"])
        self.c_proj = nn.Linear(4 * E, E, bias=cfg["bias"])
        self.approximate = "tanh" if gelu == "tanh" else "none"

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate=self.approximate))


class Block(nn.Module):
    def __init__(self, cfg, gelu):
        super().__init__()
        self.ln_1 = LayerNorm(cfg["n_embd"], cfg["bias"])
        self.attn = SelfAttention(cfg)
        self.ln_2 = LayerNorm(cfg["n_embd"], cfg["bias"])
        self.mlp = MLP(cfg, gelu)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg, gelu="exact", tied=True):
        super().__init__()
        self.cfg = cfg
        E = cfg["n_embd"]
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(cfg["vocab_size"], E),
            wpe=nn.Embedding(cfg["block_size"], E),
            drop=nn.Dropout(cfg.get("dropout", 0.0)),
            h=nn.ModuleList([Block(cfg, gelu) for _ in range(cfg["n_layer"])]),
            ln_f=LayerNorm(E, cfg["bias"]),
        ))
        self.lm_head = nn.Linear(E, cfg["vocab_size"], bias=False)
        if tied:
            self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init)
        for n, p in self.named_parameters():
            if n.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg["n_layer"]))

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        assert T <= self.cfg["block_size"]
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(torch.arange(T)))
        for blk in self.transformer.h:
            x = blk(x)
        x = self.transformer.ln_f(x)
        if targets is None:
            return self.lm_head(x[:, [-1], :]), None
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    @torch.no_grad()
    def generate_greedy(self, idx, max_new_tokens):
        """nanoGPT generate(temperature=1.0, top_k=1): crop to block_size, argmax of the last logits."""
        for _ in range(max_new_tokens):
            cond = idx if idx.size(1) <= self.cfg["block_size"] else idx[:, -self.cfg["block_size"]:]
            logits, _ = self(cond)
            nxt = torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)
            idx = torch.cat((idx, nxt), dim=1)
        return idx


def configure_optimizer(model, weight_decay=0.1, lr=3e-3, betas=(0.9, 0.95)):
    params = {n: p for n, p in model.named_parameters() if p.requires_grad}
    decay = [p for p in params.values() if p.dim() >= 2]
    nodecay = [p for p in params.values() if p.dim() < 2]
    info = {
        "named_parameters": list(params.keys()),
        "decay": [n for n, p in params.items() if p.dim() >= 2],
        "nodecay": [n for n, p in params.items() if p.dim() < 2],
    }
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                             {"params": nodecay, "weight_decay": 0.0}], lr=lr, betas=betas, eps=1e-8)
    return opt, info


def train_losses(model, batches):
    """batches: LongTensor [steps, B, T+1]. Returns the loss of each step before its update."""
    opt, info = configure_optimizer(model)
    model.train()  # dropout is 0: same numbers as eval
    losses = []
    for s in range(batches.shape[0]):
        x, y = batches[s, :, :-1].contiguous(), batches[s, :, 1:].contiguous()
        _, loss = model(x, y)
        losses.append(loss.item())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    model.eval()
    return losses, info


# ----------------------------------------------------------------------------------------------- layouts

HF_CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def nanogpt_state(model):
    """state_dict as nanoGPT (PyTorch 2) saves it: lm_head.weight present (same tensor as wte if tied)."""
    return [(k, v) for k, v in model.state_dict().items()]


def hf_state(model, with_attn_bias=False):
    out = []
    T = model.cfg["block_size"]
    for k, v in model.state_dict().items():
        if k == "lm_head.weight":
            continue
        assert k.startswith("transformer.")
        k = k[len("transformer."):]
        if any(k.endswith(s) for s in HF_CONV1D):
            v = v.t().contiguous()
        out.append((k, v))
        if with_attn_bias and k.endswith(".ln_1.bias"):
            # older HF GPT-2 checkpoints carry the causal mask buffer h.N.attn.bias [1, 1, n_ctx, n_ctx]
            out.append((k[:-len("ln_1.bias")] + "attn.bias", torch.tril(torch.ones(T, T)).view(1, 1, T, T)))
    return out


def load_nanogpt(model, sd):
    sd = dict(sd)
    missing = model.load_state_dict(sd, strict=True)
    return missing


def load_hf(model, sd):
    new = {}
    for k, v in sd.items():
        if k.endswith(".attn.bias") or k.endswith(".attn.masked_bias"):
            continue
        if any(k.endswith(s) for s in HF_CONV1D):
            v = v.t().contiguous()
        new["transformer." + k] = v
    new["lm_head.weight"] = new["transformer.wte.weight"]
    model.load_state_dict(new, strict=True)


# ----------------------------------------------------------------------------------------------- helpers

def T_(t):
    t = t.detach()
    return {"shape": list(t.shape), "data": t.reshape(-1).tolist()}


def ints(t):
    return {"shape": list(t.shape), "data": [int(v) for v in t.reshape(-1).tolist()]}


def from_json(o, dtype):
    return torch.tensor(o["data"], dtype=dtype).view(*o["shape"])


def maxdiff(a, b):
    return (a - b).abs().max().item()


def dump(name, obj):
    os.makedirs(OUT, exist_ok=True)
    p = os.path.join(OUT, name + ".json")
    with open(p, "w") as f:
        json.dump(obj, f)
    return p


# ----------------------------------------------------------------------------------------------- validation

def validate():
    torch.set_grad_enabled(True)
    report = {}
    ok = True

    # nanogpt-bias-l2
    j = json.load(open(os.path.join(PUBLIC, "nanogpt-bias-l2.json")))
    sd = read_safetensors(os.path.join(PUBLIC, j["weights"]))
    report["nanogpt-bias-l2 lm_head==wte bitwise"] = bool(torch.equal(sd["lm_head.weight"], sd["transformer.wte.weight"]))
    m = GPT(j["config"]).eval()
    load_nanogpt(m, sd)
    idx = from_json(j["inputs"]["idx"], torch.long)
    tgt = from_json(j["inputs"]["targets"], torch.long)
    with torch.no_grad():
        logits, loss = m(idx, tgt)
    d1 = maxdiff(logits, from_json(j["expected"]["logits"], torch.float32))
    d2 = abs(loss.item() - j["expected"]["loss"])
    g = m.generate_greedy(from_json(j["generate"]["prompt"], torch.long), j["generate"]["max_new_tokens"])
    geq = g.reshape(-1).tolist() == j["generate"]["greedy"]["data"]
    batches = from_json(j["train"]["batches"], torch.long)
    losses, info = train_losses(m, batches)
    d3 = max(abs(a - b) for a, b in zip(losses, j["train"]["losses"]))
    report["nanogpt-bias-l2"] = {"logits_maxabs": d1, "loss_abs": d2, "greedy_equal": geq,
                                 "train_losses": losses, "train_maxabs": d3,
                                 "named_parameters": len(info["named_parameters"]),
                                 "decay": info["decay"], "nodecay_count": len(info["nodecay"]),
                                 "lm_head_in_named_parameters": "lm_head.weight" in info["named_parameters"]}
    ok &= d1 < 1e-5 and d2 < 1e-5 and geq and d3 < 1e-5

    # gpt2-hf-layout-l1
    j = json.load(open(os.path.join(PUBLIC, "gpt2-hf-layout-l1.json")))
    sd = read_safetensors(os.path.join(PUBLIC, j["weights"]))
    m = GPT(j["config"], gelu="tanh").eval()
    load_hf(m, sd)
    idx = from_json(j["inputs"]["idx"], torch.long)
    tgt = from_json(j["inputs"]["targets"], torch.long)
    with torch.no_grad():
        logits, loss = m(idx, tgt)
    d1 = maxdiff(logits, from_json(j["expected"]["logits"], torch.float32))
    d2 = abs(loss.item() - j["expected"]["loss"])
    g = m.generate_greedy(from_json(j["generate"]["prompt"], torch.long), j["generate"]["max_new_tokens"])
    geq = g.reshape(-1).tolist() == j["generate"]["greedy"]["data"]
    # also the exact-GELU variant, to show the tanh GELU is what the case needs
    m2 = GPT(j["config"], gelu="exact").eval()
    load_hf(m2, sd)
    with torch.no_grad():
        d_exact = maxdiff(m2(idx, tgt)[0], from_json(j["expected"]["logits"], torch.float32))
    report["gpt2-hf-layout-l1"] = {"logits_maxabs": d1, "loss_abs": d2, "greedy_equal": geq,
                                   "logits_maxabs_if_exact_gelu": d_exact}
    ok &= d1 < 1e-5 and d2 < 1e-5 and geq

    # nanogpt-onnx-l1 (only the logits in JSON)
    j = json.load(open(os.path.join(PUBLIC, "nanogpt-onnx-l1.json")))
    sd = read_safetensors(os.path.join(PUBLIC, j["weights"]))
    m = GPT(j["config"]).eval()
    load_nanogpt(m, sd)
    idx = from_json(j["inputs"]["idx"], torch.long)
    with torch.no_grad():
        logits, _ = m(idx, idx)  # all positions
    d1 = maxdiff(logits, from_json(j["expected"]["logits"], torch.float32))
    report["nanogpt-onnx-l1"] = {"logits_maxabs": d1}
    ok &= d1 < 1e-5

    # torch-encoder-layer-normfirst-gelu
    j = json.load(open(os.path.join(PUBLIC, "torch-encoder-layer-normfirst-gelu.json")))
    sd = read_safetensors(os.path.join(PUBLIC, j["weights"]))
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0, activation="gelu",
                                       batch_first=True, norm_first=True)
    layer.load_state_dict(sd, strict=True)
    layer.eval()
    src = from_json(j["inputs"]["src"], torch.float32)
    mask = from_json(j["inputs"]["src_mask_true_is_masked"], torch.long).bool()
    kpm = from_json(j["inputs"]["src_key_padding_mask_true_is_pad"], torch.long).bool()
    exp = from_json(j["expected"]["output"], torch.float32)
    with torch.no_grad():
        out_nograd = layer(src, src_mask=mask, src_key_padding_mask=kpm)
    out_grad = layer(src, src_mask=mask, src_key_padding_mask=kpm).detach()
    report["torch-encoder-layer-normfirst-gelu"] = {
        "output_maxabs_no_grad": maxdiff(out_nograd, exp),
        "output_maxabs_grad_enabled": maxdiff(out_grad, exp),
        "padded_rows_all_zero_in_expected": bool(all(
            exp[b, t].abs().max().item() == 0 for b in range(kpm.shape[0]) for t in range(kpm.shape[1]) if kpm[b, t])),
        "padding": kpm.int().tolist(),
    }
    ok &= min(maxdiff(out_nograd, exp), maxdiff(out_grad, exp)) < 1e-5
    return ok, report


# ----------------------------------------------------------------------------------------------- cases

def nanogpt_case(name, cfg, seed, B, T, prompt_len, max_new, train=None, hf=False, gelu="exact",
                 tied=True, with_attn_bias=False, source=None, perturb=False):
    torch.manual_seed(seed)
    m = GPT(cfg, gelu=gelu, tied=tied).eval()
    if perturb:
        perturb_params(m)
    V = cfg["vocab_size"]
    idx = torch.randint(0, V, (B, T))
    tgt = torch.randint(0, V, (B, T))
    with torch.no_grad():
        logits, loss = m(idx, tgt)
    prompt = idx[:1, :prompt_len].clone()
    greedy = m.generate_greedy(prompt, max_new)
    # ties: report the smallest top-2 gap seen during generation
    gaps = []
    with torch.no_grad():
        for i in range(prompt_len, greedy.shape[1]):
            cond = greedy[:, :i][:, -cfg["block_size"]:]
            lg = m(cond)[0][0, -1]
            top = torch.topk(lg, 2).values
            gaps.append((top[0] - top[1]).item())
    wname = name + ".safetensors"
    if hf:
        tensors = hf_state(m, with_attn_bias=with_attn_bias)
    else:
        tensors = nanogpt_state(m)
    write_safetensors(os.path.join(OUT, wname), tensors, {"format": "pt"})
    obj = collections.OrderedDict()
    obj["name"] = name
    obj["source"] = (source or NANOGPT_SOURCE) + (PERTURB_TEXT if perturb else "")
    obj["config"] = cfg
    obj["weights"] = wname
    obj["inputs"] = {"idx": ints(idx), "targets": ints(tgt)}
    obj["expected"] = {"logits": T_(logits), "loss": loss.item()}
    obj["generate"] = {"prompt": ints(prompt), "max_new_tokens": max_new, "greedy": ints(greedy)}
    obj["tolerance"] = dict(TOL)
    extra = {"min_top2_gap_in_generate": min(gaps)}
    if train is not None:
        steps, tb, tt = train
        batches = torch.randint(0, V, (steps, tb, tt + 1))
        with torch.enable_grad():
            losses, info = train_losses(m, batches)
        obj["train"] = {"optimizer": TRAIN_TEXT, "batches": ints(batches), "losses": losses}
        extra["decay_tensors"] = len(info["decay"])
        extra["nodecay_tensors"] = len(info["nodecay"])
        extra["losses"] = losses
    # reload check: weights written -> read -> same logits
    sd = read_safetensors(os.path.join(OUT, wname))
    m2 = GPT(cfg, gelu=gelu, tied=tied).eval()
    if hf:
        load_hf(m2, sd)
    else:
        m2.load_state_dict(dict(sd), strict=True)
    with torch.no_grad():
        extra["reload_logits_maxabs"] = maxdiff(m2(idx, tgt)[0], logits)
        # how much the other GELU would change the logits (is the case discriminating?)
        m3 = GPT(cfg, gelu="exact" if gelu == "tanh" else "tanh", tied=tied).eval()
        m3.load_state_dict(m2.state_dict(), strict=True)
        extra["logits_maxabs_with_other_gelu"] = maxdiff(m3(idx, tgt)[0], logits)
    p = dump(name, obj)
    extra["json_bytes"] = os.path.getsize(p)
    extra["safetensors_bytes"] = os.path.getsize(os.path.join(OUT, wname))
    return extra


PERTURB_TEXT = ("; after construction every parameter perturbed so that biases, LayerNorm affines and the GELU "
                "variant matter (rank >= 2: times 10; LayerNorm weights: + 0.2 * randn; 1-d others: + 0.1 * randn)")


def perturb_params(module):
    """Not how the public cases are made (they keep the default init, where every bias is 0 and every LayerNorm
    is the identity affine): makes a case that a loader dropping biases/LN affines or using the wrong GELU fails."""
    with torch.no_grad():
        seen = set()
        for n, p in module.named_parameters():
            if id(p) in seen:
                continue
            seen.add(id(p))
            if p.dim() >= 2:
                p.mul_(10.0)
            elif "ln" in n.split(".")[-2] or n.split(".")[-2].startswith("norm"):
                if n.endswith("weight"):
                    p.add_(0.2 * torch.randn_like(p))
                else:
                    p.add_(0.1 * torch.randn_like(p))
            else:
                p.add_(0.1 * torch.randn_like(p))


def encoder_case(name, ctor, ctor_src, seed, shape, masks, perturb=False, small_batch_row=None):
    """masks: dict of which masks to include: 'causal_bool', 'additive', 'kpm' (list of valid lengths)."""
    torch.manual_seed(seed)
    layer = nn.TransformerEncoderLayer(**ctor)
    if perturb:
        perturb_params(layer)
    layer.eval()
    src = torch.randn(*shape)
    if small_batch_row is not None:
        # one batch element at a tiny scale (std 0.005): its variance is comparable to layer_norm_eps, so a
        # loader using the wrong eps fails this case
        assert ctor.get("batch_first", False)
        src[small_batch_row] *= 0.005
    batch_first = ctor.get("batch_first", False)
    L = shape[1] if batch_first else shape[0]
    B = shape[0] if batch_first else shape[1]
    inputs = collections.OrderedDict()
    inputs["src"] = T_(src)
    kwargs = {}
    if "causal_bool" in masks:
        mb = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)
        inputs["src_mask_true_is_masked"] = ints(mb.long())
        kwargs["src_mask"] = mb
    if "additive" in masks:
        # float mask added to the attention scores: 0 = allowed, -1e9 = blocked (JSON cannot hold -inf);
        # a banded window: query i sees keys i-2..i+1
        ma = torch.zeros(L, L)
        for i in range(L):
            for k in range(L):
                if not (i - 2 <= k <= i + 1):
                    ma[i, k] = -1e9
        inputs["src_mask_additive"] = T_(ma)
        kwargs["src_mask"] = ma
    if "kpm" in masks:
        kpm = torch.zeros(B, L, dtype=torch.bool)
        for b, n in enumerate(masks["kpm"]):
            kpm[b, n:] = True
        inputs["src_key_padding_mask_true_is_pad"] = ints(kpm.long())
        kwargs["src_key_padding_mask"] = kpm
    with torch.no_grad():
        out = layer(src, **kwargs)
    with torch.enable_grad():
        out_slow = layer(src, **kwargs).detach()
    wname = name + ".safetensors"
    write_safetensors(os.path.join(OUT, wname), list(layer.state_dict().items()), None)
    obj = collections.OrderedDict()
    obj["name"] = name
    obj["source"] = ctor_src + ", eval" + (PERTURB_TEXT if perturb else "")
    obj["weights"] = wname
    obj["inputs"] = inputs
    obj["expected"] = {"output": T_(out)}
    obj["tolerance"] = dict(TOL)
    p = dump(name, obj)
    return {"fast_vs_slow_path_maxabs": maxdiff(out, out_slow), "has_nan": bool(torch.isnan(out).any()),
            "json_bytes": os.path.getsize(p), "state_dict": [(k, list(v.shape)) for k, v in layer.state_dict().items()]}


def generate_cases():
    res = {}
    res["nanogpt-nobias-l3"] = nanogpt_case(
        "nanogpt-nobias-l3",
        {"block_size": 12, "vocab_size": 37, "n_layer": 3, "n_head": 2, "n_embd": 24, "dropout": 0.0, "bias": False},
        seed=1301, B=2, T=10, prompt_len=3, max_new=8, train=(5, 3, 9))
    res["nanogpt-untied-l1"] = nanogpt_case(
        "nanogpt-untied-l1",
        {"block_size": 10, "vocab_size": 23, "n_layer": 1, "n_head": 2, "n_embd": 16, "dropout": 0.0, "bias": True,
         "lm_head_tied_to_wte": False},
        seed=1302, B=2, T=8, prompt_len=3, max_new=10, tied=False, train=(3, 2, 8),
        source=("karpathy/nanoGPT model.py (3adf61e) with the weight-tying line "
                "(transformer.wte.weight = lm_head.weight) removed, so lm_head.weight is its own tensor; "
                "GPT(GPTConfig(...)) in eval mode; state_dict minus the .attn.bias mask buffers; "
                "config key lm_head_tied_to_wte is not a GPTConfig field, it records the untying"))
    res["gpt2-hf-layout-l2"] = nanogpt_case(
        "gpt2-hf-layout-l2",
        {"block_size": 20, "vocab_size": 45, "n_layer": 2, "n_head": 4, "n_embd": 32, "dropout": 0.0, "bias": True},
        seed=1303, B=2, T=14, prompt_len=4, max_new=9, hf=True, gelu="tanh", with_attn_bias=True,
        source=("GPT-2 layout as Hugging Face transformers stores it (Conv1D weights [in, out], keys without "
                "'transformer.', lm_head tied to wte and absent, gelu_new = tanh GELU, and the causal-mask "
                "buffers h.N.attn.bias [1, 1, n_ctx, n_ctx] that older GPT-2 checkpoints carry), computed by "
                "karpathy/nanoGPT model.py with tanh GELU"))
    res["torch-encoder-layer-postnorm-relu"] = encoder_case(
        "torch-encoder-layer-postnorm-relu",
        dict(d_model=24, nhead=3, dim_feedforward=48, dropout=0, activation="relu", batch_first=False,
             norm_first=False),
        "torch.nn.TransformerEncoderLayer(d_model=24, nhead=3, dim_feedforward=48, dropout=0, activation='relu', "
        "batch_first=False, norm_first=False)",
        seed=1304, shape=(6, 3, 24), masks={"additive": True, "kpm": [6, 4, 5]})
    res["torch-encoder-layer-nomask"] = encoder_case(
        "torch-encoder-layer-nomask",
        dict(d_model=16, nhead=2, dim_feedforward=32, dropout=0, activation="gelu", batch_first=True,
             norm_first=True, layer_norm_eps=1e-6),
        "torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0, activation='gelu', "
        "batch_first=True, norm_first=True, layer_norm_eps=1e-6)",
        seed=1305, shape=(2, 5, 16), masks={}, small_batch_row=1)
    # stronger variants (not how the public cases are made; see perturb_params)
    res["nanogpt-bias-l2-perturbed"] = nanogpt_case(
        "nanogpt-bias-l2-perturbed",
        {"block_size": 16, "vocab_size": 50, "n_layer": 2, "n_head": 4, "n_embd": 32, "dropout": 0.0, "bias": True},
        seed=1306, B=2, T=12, prompt_len=4, max_new=8, train=(5, 2, 12), perturb=True)
    res["gpt2-hf-layout-l1-perturbed"] = nanogpt_case(
        "gpt2-hf-layout-l1-perturbed",
        {"block_size": 16, "vocab_size": 40, "n_layer": 1, "n_head": 2, "n_embd": 16, "dropout": 0.0, "bias": True},
        seed=1307, B=2, T=10, prompt_len=3, max_new=6, hf=True, gelu="tanh", perturb=True,
        source=("GPT-2 layout as Hugging Face transformers stores it (Conv1D weights [in, out], keys without "
                "'transformer.', lm_head tied to wte and absent, gelu_new = tanh GELU), computed by "
                "karpathy/nanoGPT model.py with tanh GELU"))
    res["torch-encoder-layer-postnorm-relu-perturbed"] = encoder_case(
        "torch-encoder-layer-postnorm-relu-perturbed",
        dict(d_model=24, nhead=3, dim_feedforward=48, dropout=0, activation="relu", batch_first=False,
             norm_first=False),
        "torch.nn.TransformerEncoderLayer(d_model=24, nhead=3, dim_feedforward=48, dropout=0, activation='relu', "
        "batch_first=False, norm_first=False)",
        seed=1308, shape=(6, 3, 24), masks={"causal_bool": True, "kpm": [6, 4, 5]}, perturb=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validate-only", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    ok, report = validate()
    print(json.dumps(report, indent=1))
    if not ok:
        print("VALIDATION FAILED", file=sys.stderr)
        sys.exit(1)
    print("validation ok")
    if args.validate_only:
        return
    res = generate_cases()
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
