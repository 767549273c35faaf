#!/usr/bin/env python3
"""bench/torch_train.py - the PyTorch side of `bench_train --compare`.

Loads an llm.c-format GPT-2 checkpoint (the one bench_train wrote) and an
llm.c token file, builds GPT-2 in eager fp32 PyTorch with those weights and
runs the same kind of training step as crowdtune (forward, cross-entropy,
backward, gradient clipping at 1.0, AdamW lr 1e-4 without weight decay) on
the same batches: batch s is tokens[s*B*T .. +B*T] with targets shifted by
one. Prints one line: `torch ms/step <mean over steps after one warm-up>
loss <last> threads <n> blas <OpenBLAS core> cpu_ms <process CPU time a step>`.
Needs python3-torch; never used by the build or the tests.

Uses as many threads as the CPUs it may run on (Debian's torch 1.13 starts
with one per physical core; crowdtune uses every CPU), or $TORCH_THREADS.

usage: torch_train.py CHECKPOINT TOKENS B T STEPS [DEVICE]
"""
import ctypes
import os
import struct
import sys
import time

import torch
import torch.nn.functional as F


PER_LAYER = ("ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
             "ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb")


def load_checkpoint(path):
    with open(path, "rb") as f:
        hdr = struct.unpack("<256i", f.read(1024))
        if hdr[0] != 20240326 or hdr[1] != 3:
            sys.exit("not an llm.c version-3 checkpoint: " + path)
        maxT, V, L, NH, C, Vp = hdr[2], hdr[3], hdr[4], hdr[5], hdr[6], hdr[7]
        shapes = [("wte", (Vp, C)), ("wpe", (maxT, C)),
                  ("ln1w", (L, C)), ("ln1b", (L, C)),
                  ("qkvw", (L, 3 * C, C)), ("qkvb", (L, 3 * C)),
                  ("attprojw", (L, C, C)), ("attprojb", (L, C)),
                  ("ln2w", (L, C)), ("ln2b", (L, C)),
                  ("fcw", (L, 4 * C, C)), ("fcb", (L, 4 * C)),
                  ("fcprojw", (L, C, 4 * C)), ("fcprojb", (L, C)),
                  ("lnfw", (C,)), ("lnfb", (C,))]
        p = {}
        for name, shape in shapes:
            n = 1
            for d in shape:
                n *= d
            t = torch.frombuffer(bytearray(f.read(4 * n)), dtype=torch.float32)
            t = t.reshape(shape)
            if name in PER_LAYER:
                # one leaf per layer, as nn.Module keeps them: indexing a
                # stacked (L, ...) leaf makes every layer's backward fill and
                # add a gradient the size of all L layers (O(L^2) traffic)
                p[name] = [t[l].clone().requires_grad_(True) for l in range(L)]
            else:
                p[name] = t.clone().requires_grad_(True)
    return (maxT, V, L, NH, C, Vp), p


def leaves(p):
    """Every parameter tensor, in checkpoint order."""
    out = []
    for v in p.values():
        out.extend(v if isinstance(v, list) else [v])
    return out


def load_tokens(path):
    with open(path, "rb") as f:
        hdr = struct.unpack("<256i", f.read(1024))
        n = hdr[2]
        data = f.read(2 * n)
    return torch.frombuffer(bytearray(data), dtype=torch.int16).to(torch.int64) & 0xFFFF


def forward(cfg, p, idx, tgt):
    maxT, V, L, NH, C, Vp = cfg
    B, T = idx.shape
    hs = C // NH
    x = p["wte"][idx] + p["wpe"][:T]
    mask = torch.ones(T, T, dtype=torch.bool, device=idx.device).tril()
    for l in range(L):
        h = F.layer_norm(x, (C,), p["ln1w"][l], p["ln1b"][l], 1e-5)
        qkv = h @ p["qkvw"][l].t() + p["qkvb"][l]
        q, k, v = qkv.split(C, dim=2)
        q = q.view(B, T, NH, hs).transpose(1, 2)
        k = k.view(B, T, NH, hs).transpose(1, 2)
        v = v.view(B, T, NH, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / hs ** 0.5)
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + y @ p["attprojw"][l].t() + p["attprojb"][l]
        h = F.layer_norm(x, (C,), p["ln2w"][l], p["ln2b"][l], 1e-5)
        h = F.gelu(h @ p["fcw"][l].t() + p["fcb"][l], approximate="tanh")
        x = x + h @ p["fcprojw"][l].t() + p["fcprojb"][l]
    x = F.layer_norm(x, (C,), p["lnfw"], p["lnfb"], 1e-5)
    logits = (x @ p["wte"].t())[:, :, :V]
    return F.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1))


def blas_core():
    """OpenBLAS's kernel set (openblas_get_corename: "Haswell", "Zen",
    "SkylakeX", ... as $OPENBLAS_CORETYPE forces), "-" for another BLAS."""
    try:
        f = ctypes.CDLL("libblas.so.3").openblas_get_corename
    except (OSError, AttributeError):
        return "-"
    f.restype = ctypes.c_char_p
    return f().decode()


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    ckpt, tokf, B, T, steps = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
    dev = sys.argv[6] if len(sys.argv) > 6 else "cpu"
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", 0))
                          or len(os.sched_getaffinity(0)))
    cfg, p = load_checkpoint(ckpt)
    tok = load_tokens(tokf)
    if dev != "cpu":
        def move(v):
            return v.detach().to(dev).requires_grad_(True)
        p = {k: [move(x) for x in v] if isinstance(v, list) else move(v)
             for k, v in p.items()}
    opt = torch.optim.AdamW(leaves(p), lr=1e-4, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.0)
    t0, c0, loss = None, None, None
    for s in range(steps + 1):
        if s == 1:
            if dev != "cpu":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            c0 = time.process_time()
        chunk = tok[s * B * T: s * B * T + B * T + 1]
        idx = chunk[:-1].view(B, T).to(dev)
        tgt = chunk[1:].view(B, T).to(dev)
        opt.zero_grad(set_to_none=True)
        loss = forward(cfg, p, idx, tgt)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(leaves(p), 1.0)
        opt.step()
    if dev != "cpu":
        torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / steps
    dc = (time.process_time() - c0) / steps
    print("torch ms/step %.1f loss %.4f threads %d blas %s cpu_ms %.1f" % (
        dt * 1e3, loss.item(), torch.get_num_threads(), blas_core(), dc * 1e3))


if __name__ == "__main__":
    main()
