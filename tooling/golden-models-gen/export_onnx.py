#!/usr/bin/env python3
"""Extra ONNX cases of the `nanogpt-onnx-l1` kind (see /work/shared/golden-models/FORMAT.md): a nanoGPT model
exported by torch.onnx.export (dynamic batch and length), its weights as nanoGPT's state_dict, the logits of every
position. Written here (not copied): nanoGPT's model.py at 3adf61e without flash attention (PyTorch 1.13 has none),
so attention is the masked_fill of the registered tril buffer, as the public file shows.

Run with Debian's PyTorch 1.13:  /usr/bin/python3 tooling/golden-models-gen/export_onnx.py
It first exports the public case's own weights the same way and checks the op types and logits against
nanogpt-onnx-l1 (logits equal within 1e-6), then writes the extra cases to packages/testkit/golden-models-extra/
(one of them exported with targets: the logits and nanoGPT's cross-entropy loss as outputs).
"""
import collections
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate import OUT, PUBLIC, TOL, T_, ints, from_json, maxdiff, read_safetensors, write_safetensors, perturb_params  # noqa: E402


def new_gelu(x):
    # nanoGPT's NewGELU (the GPT-2 / BERT tanh form) before it switched to nn.GELU
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"], bias=c["bias"])
        self.c_proj = nn.Linear(c["n_embd"], c["n_embd"], bias=c["bias"])
        self.attn_dropout = nn.Dropout(c["dropout"])
        self.resid_dropout = nn.Dropout(c["dropout"])
        self.n_head = c["n_head"]
        self.n_embd = c["n_embd"]
        bs = c["block_size"]
        self.register_buffer("bias", torch.tril(torch.ones(bs, bs)).view(1, 1, bs, bs))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, c, tanh):
        super().__init__()
        self.c_fc = nn.Linear(c["n_embd"], 4 * c["n_embd"], bias=c["bias"])
        self.gelu = new_gelu if tanh else nn.GELU()
        self.c_proj = nn.Linear(4 * c["n_embd"], c["n_embd"], bias=c["bias"])
        self.dropout = nn.Dropout(c["dropout"])

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, c, tanh):
        super().__init__()
        self.ln_1 = LayerNorm(c["n_embd"], c["bias"])
        self.attn = CausalSelfAttention(c)
        self.ln_2 = LayerNorm(c["n_embd"], c["bias"])
        self.mlp = MLP(c, tanh)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c, tanh=False):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocab_size"], c["n_embd"]),
            wpe=nn.Embedding(c["block_size"], c["n_embd"]),
            drop=nn.Dropout(c["dropout"]),
            h=nn.ModuleList([Block(c, tanh) for _ in range(c["n_layer"])]),
            ln_f=LayerNorm(c["n_embd"], c["bias"]),
        ))
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c["n_layer"]))

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))  # every position's logits


class Wrapped(nn.Module):
    """What the public file's initializer names (m.transformer.…) show: the model held as `m`."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, idx):
        return self.m(idx)


class WithLoss(Wrapped):
    """nanoGPT's forward with targets: the logits and F.cross_entropy(logits.view(-1, V), targets.view(-1), ignore_index=-1)."""

    def forward(self, idx, targets):
        logits = self.m(idx)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


def export(model, path, opset, example, loss=False):
    if loss:
        torch.onnx.export(WithLoss(model), (example, example), path, input_names=["idx", "targets"], output_names=["logits", "loss"],
                          dynamic_axes={"idx": {0: "batch", 1: "T"}, "targets": {0: "batch", 1: "T"}, "logits": {0: "batch", 1: "T"}},
                          opset_version=opset, do_constant_folding=True)
        return
    torch.onnx.export(Wrapped(model), (example,), path, input_names=["idx"], output_names=["logits"],
                      dynamic_axes={"idx": {0: "batch", 1: "T"}, "logits": {0: "batch", 1: "T"}},
                      opset_version=opset, do_constant_folding=True)


def state_dict(m):
    return [(k, v.detach().contiguous()) for k, v in m.state_dict().items() if not k.endswith(".attn.bias")]


def check_public():
    j = json.load(open(os.path.join(PUBLIC, "nanogpt-onnx-l1.json")))
    m = GPT(j["config"]).eval()
    sd = read_safetensors(os.path.join(PUBLIC, j["weights"]))
    m.load_state_dict(dict(sd), strict=False)
    idx = from_json(j["inputs"]["idx"], torch.long)
    with torch.no_grad():
        d = maxdiff(m(idx), from_json(j["expected"]["logits"], torch.float32))
    path = os.path.join(OUT, "_check.onnx")
    export(m, path, 17, idx)
    size = os.path.getsize(path)
    os.remove(path)
    print(json.dumps({"public_logits_maxabs": d, "public_file_bytes": os.path.getsize(os.path.join(PUBLIC, j["onnx"])), "our_export_bytes": size}))
    return d < 1e-6


def case(name, c, seed, B, T, opset=17, tanh=False, perturb=False, note="", loss=False):
    torch.manual_seed(seed)
    m = GPT(c, tanh=tanh).eval()
    if perturb:
        perturb_params(m)
    idx = torch.randint(0, c["vocab_size"], (B, T))
    targets = torch.randint(0, c["vocab_size"], (B, T))
    if loss:
        targets[0, 1] = -1  # one position ignored (nanoGPT's ignore_index)
    with torch.no_grad():
        logits = m(idx)
        ce = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
    export(m, os.path.join(OUT, name + ".onnx"), opset, torch.randint(0, c["vocab_size"], (1, 3)), loss=loss)
    write_safetensors(os.path.join(OUT, name + ".safetensors"), state_dict(m), {"format": "pt"})
    obj = collections.OrderedDict()
    obj["name"] = name
    obj["source"] = (f"nanoGPT GPT (model.py 3adf61e, no flash attention{', NewGELU tanh form' if tanh else ''}) exported by "
                     f"torch.onnx.export (opset {opset}, dynamic batch and T), traced at [1, 3]{note}")
    obj["onnx"] = name + ".onnx"
    obj["weights"] = name + ".safetensors"
    # The loaders read the GELU form from the config, under Hugging Face's name, as they read every other field.
    obj["config"] = {**c, "activation_function": "gelu_new"} if tanh else c
    obj["inputs"] = {"idx": ints(idx), "targets": ints(targets)} if loss else {"idx": ints(idx)}
    obj["expected"] = {"logits": T_(logits), "loss": ce.item()} if loss else {"logits": T_(logits)}
    obj["tolerance"] = dict(TOL)
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(obj, f)
    return {"logits_absmax": logits.abs().max().item()}


def main():
    torch.set_num_threads(1)
    if not check_public():
        print("the public case does not reproduce", file=sys.stderr)
        sys.exit(1)
    base = {"block_size": 16, "vocab_size": 40, "dropout": 0.0}
    res = {}
    res["nanogpt-onnx-nobias-l2"] = case("nanogpt-onnx-nobias-l2", {**base, "n_layer": 2, "n_head": 4, "n_embd": 32, "bias": False}, 2901, B=2, T=9)
    res["nanogpt-onnx-opset14-l2"] = case("nanogpt-onnx-opset14-l2", {**base, "n_layer": 2, "n_head": 2, "n_embd": 16, "bias": True}, 2902, B=1, T=11, opset=14,
                                          note=" (opset 14: LayerNorm decomposed into ReduceMean, Sub, Pow, Sqrt, Div)")
    res["nanogpt-onnx-tanh-l1-perturbed"] = case("nanogpt-onnx-tanh-l1-perturbed", {**base, "n_layer": 1, "n_head": 2, "n_embd": 16, "bias": True}, 2903, B=2, T=16,
                                                 tanh=True, perturb=True, note="; every parameter perturbed after init (see generate.py) so biases, affines and the GELU form matter")
    res["nanogpt-onnx-loss-l2"] = case("nanogpt-onnx-loss-l2", {**base, "n_layer": 2, "n_head": 2, "n_embd": 16, "bias": True}, 2904, B=2, T=7, loss=True,
                                       note="; exported with targets: logits and F.cross_entropy(ignore_index=-1) as outputs, one target -1")
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
