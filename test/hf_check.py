#!/usr/bin/env python3
"""hf_check.py - checks of crowdtune's Hugging Face exports that share no
code with them: safetensors files are read by hand (struct + json; no
numpy, no torch), the roundings and the adapter products are recomputed
here in plain Python.

  hf_check.py dtype REF_DIR DIR DTYPE
      DIR (job export --hf --dtype DTYPE, DTYPE bf16 or f16) holds the
      tensors of REF_DIR (the same model exported as f32) each rounded to
      nearest, ties to even: bf16 chosen here as the nearer of the two
      bfloat16 neighbours of the float32 value (exact arithmetic), f16 by
      Python's struct 'e' (IEEE binary16, round-half-even); names, shapes
      and config.json the same but torch_dtype; the tensor data exactly
      half of REF_DIR's, the file under 0.51 of its size.

  hf_check.py peft ADAPTER_DIR BASE_DIR MODEL_DIR ARCH RANK TARGETS
      ADAPTER_DIR (job export --adapter) is a PEFT LoRA directory:
      adapter_config.json (peft_type LORA, task_type CAUSAL_LM, r = RANK,
      lora_alpha, target_modules for TARGETS (crowdtune's words
      qkv,proj,fc,fcproj), fan_in_fan_out for GPT-2's Conv1D,
      base_model_name_or_path present) and adapter_model.safetensors whose
      tensors are exactly base_model.model.<module>.lora_A.weight (RANK, in)
      and .lora_B.weight (out, RANK) of every target module of every
      layer; and for each module BASE + (lora_alpha / r) B A equals
      MODEL_DIR's weight (the merged export, job export --hf) within float
      rounding: error <= 1e-5 of the largest |MODEL - BASE| of the module
      plus 4 float32 ulps of the weight, and the module did change.
      ARCH is llama or gpt2; BASE_DIR and MODEL_DIR are float32 exports.
Exit 0 when everything holds, 1 with one line per failure.
"""
import json
import math
import os
import struct
import sys

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg)


def read_st(path):
    """{name: (dtype, shape, raw bytes)}, the data section's size, the file's."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    hdr = json.loads(data[8:8 + n].decode("utf-8"))
    out = {}
    for k, v in hdr.items():
        if k == "__metadata__":
            continue
        b, e = v["data_offsets"]
        out[k] = (v["dtype"], v["shape"], data[8 + n + b:8 + n + e])
    return out, len(data) - 8 - n, len(data)


def floats(dtype, raw):
    if dtype == "F32":
        return list(struct.unpack("<%df" % (len(raw) // 4), raw))
    if dtype == "F16":
        return list(struct.unpack("<%de" % (len(raw) // 2), raw))
    if dtype == "BF16":
        hs = struct.unpack("<%dH" % (len(raw) // 2), raw)
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in hs]
    raise ValueError("dtype " + dtype)


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bits_f32(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


def bf16_ref(x):
    """bfloat16 bits nearest to float32 x, ties to the even one."""
    u = f32_bits(x)
    if (u & 0x7fffffff) > 0x7f800000:
        return None  # NaN: only NaN-ness is compared
    sign, mag = u & 0x80000000, u & 0x7fffffff
    lo = mag & 0xffff0000
    hi = lo + 0x10000
    if lo == mag:
        return (sign | lo) >> 16
    ax = abs(x)
    vlo = bits_f32(lo)
    # past the largest finite bfloat16 the upper neighbour is inf; it counts
    # as 2^128 when measuring (where the next exponent would start)
    vhi = 2.0 ** 128 if hi >= 0x7f800000 else bits_f32(hi)
    dlo, dhi = ax - vlo, vhi - ax
    if dlo < dhi or (dlo == dhi and (lo >> 16) & 1 == 0):
        return (sign | lo) >> 16
    return (sign | min(hi, 0x7f800000)) >> 16


def f16_ref(x):
    if math.isnan(x):
        return None
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:  # struct refuses to round to inf; IEEE does
        return 0xfc00 if x < 0 else 0x7c00


def check_dtype(ref_dir, d, dtype):
    want = {"bf16": ("BF16", "bfloat16", bf16_ref), "f16": ("F16", "float16", f16_ref)}
    if dtype not in want:
        fail("dtype must be bf16 or f16")
        return
    stname, torch, ref = want[dtype]
    rc = json.load(open(os.path.join(ref_dir, "config.json")))
    c = json.load(open(os.path.join(d, "config.json")))
    if c.get("torch_dtype") != torch:
        fail("config.json torch_dtype %r, want %r" % (c.get("torch_dtype"), torch))
    rc.pop("torch_dtype", None)
    c.pop("torch_dtype", None)
    if rc != c:
        fail("config.json differs from the f32 export's beyond torch_dtype")
    a, adata, asize = read_st(os.path.join(ref_dir, "model.safetensors"))
    b, bdata, bsize = read_st(os.path.join(d, "model.safetensors"))
    if sorted(a) != sorted(b):
        fail("tensor names differ")
        return
    n = bad = 0
    for name in sorted(a):
        (da, sa, ra), (db, sb, rb) = a[name], b[name]
        if da != "F32" or db != stname or sa != sb:
            fail("%s: %s %s vs %s %s" % (name, da, sa, db, sb))
            continue
        xs = floats("F32", ra)
        hs = struct.unpack("<%dH" % (len(rb) // 2), rb)
        for x, h in zip(xs, hs):
            r = ref(x)
            n += 1
            if r is None:
                ok = (h & 0x7fff) > (0x7f80 if stname == "BF16" else 0x7c00)
            else:
                ok = h == r
            if not ok:
                bad += 1
                if bad <= 5:
                    fail("%s: %r stored as 0x%04x, nearest-even is %s" %
                         (name, x, h, "NaN" if r is None else "0x%04x" % r))
    if 2 * bdata != adata:
        fail("tensor data %d bytes, not half of f32's %d" % (bdata, adata))
    if bsize > asize // 2 + 8192:
        fail("file %d bytes, not about half of f32's %d" % (bsize, asize))
    print("%s: %d values, %d not the nearest-even rounding; model.safetensors %d bytes "
          "(f32 %d, ratio %.4f)" % (dtype, n, bad, bsize, asize, bsize / asize))


# crowdtune's target words -> (PEFT target_modules words, module paths of
# layer N under the model); GPT-2's names as transformers' GPT2LMHeadModel.
LLAMA = {
    "qkv": [("q_proj", "model.layers.%d.self_attn.q_proj"),
            ("k_proj", "model.layers.%d.self_attn.k_proj"),
            ("v_proj", "model.layers.%d.self_attn.v_proj")],
    "proj": [("o_proj", "model.layers.%d.self_attn.o_proj")],
    "fc": [("gate_proj", "model.layers.%d.mlp.gate_proj"),
           ("up_proj", "model.layers.%d.mlp.up_proj")],
    "fcproj": [("down_proj", "model.layers.%d.mlp.down_proj")],
}
GPT2 = {
    "qkv": [("c_attn", "transformer.h.%d.attn.c_attn")],
    "proj": [("attn.c_proj", "transformer.h.%d.attn.c_proj")],
    "fc": [("c_fc", "transformer.h.%d.mlp.c_fc")],
    "fcproj": [("mlp.c_proj", "transformer.h.%d.mlp.c_proj")],
}


def weight(st, module, gpt2):
    """The module's weight as rows (out) of in floats, and (out, in)."""
    name = module + ".weight"
    if gpt2:
        name = name[len("transformer."):]  # the export's GPT-2 names
    dt, shape, raw = st[name]
    v = floats(dt, raw)
    r, c = shape
    if not gpt2:
        return [v[i * c:(i + 1) * c] for i in range(r)], (r, c)
    # Conv1D stores (in, out): transpose to (out, in)
    return [[v[i * c + o] for i in range(r)] for o in range(c)], (c, r)


def ulp32(x):
    x = abs(x)
    if x == 0.0:
        return 2.0 ** -149
    e = math.frexp(x)[1]
    return 2.0 ** (e - 24)


def check_peft(adir, base_dir, model_dir, arch, rank, targets):
    gpt2 = arch == "gpt2"
    table = GPT2 if gpt2 else LLAMA
    cfg = json.load(open(os.path.join(adir, "adapter_config.json")))
    for k, v in (("peft_type", "LORA"), ("task_type", "CAUSAL_LM"), ("r", rank),
                 ("fan_in_fan_out", gpt2), ("bias", "none")):
        if cfg.get(k) != v:
            fail("adapter_config.json %s = %r, want %r" % (k, cfg.get(k), v))
    if "base_model_name_or_path" not in cfg or "lora_alpha" not in cfg:
        fail("adapter_config.json lacks base_model_name_or_path or lora_alpha")
        return
    words = [w for t in targets for w, _ in table[t]]
    if sorted(cfg.get("target_modules") or []) != sorted(words):
        fail("target_modules %r, want %r" % (cfg.get("target_modules"), words))
    scale = cfg["lora_alpha"] / cfg["r"]
    ad, _, _ = read_st(os.path.join(adir, "adapter_model.safetensors"))
    base, _, _ = read_st(os.path.join(base_dir, "model.safetensors"))
    model, _, _ = read_st(os.path.join(model_dir, "model.safetensors"))
    mc = json.load(open(os.path.join(model_dir, "config.json")))
    layers = mc["n_layer"] if gpt2 else mc["num_hidden_layers"]
    want = set()
    worst = 0.0
    for layer in range(layers):
        for t in targets:
            for _, path in table[t]:
                mod = path % layer
                an = "base_model.model.%s.lora_A.weight" % mod
                bn = "base_model.model.%s.lora_B.weight" % mod
                want |= {an, bn}
                if an not in ad or bn not in ad:
                    fail("no %s / %s" % (an, bn))
                    continue
                w0, (out, inn) = weight(base, mod, gpt2)
                w1, _ = weight(model, mod, gpt2)
                (da, sa, ra), (db, sb, rb) = ad[an], ad[bn]
                if sa != [rank, inn] or sb != [out, rank]:
                    fail("%s: A %s B %s, want [%d, %d] and [%d, %d]" %
                         (mod, sa, sb, rank, inn, out, rank))
                    continue
                av, bv = floats(da, ra), floats(db, rb)
                arows = [av[j * inn:(j + 1) * inn] for j in range(rank)]
                dmax = max(abs(x1 - x0) for r0, r1 in zip(w0, w1) for x0, x1 in zip(r0, r1))
                bound = 1e-5 * dmax  # plus 4 float32 ulps of the weight
                e_abs = 0.0
                for o in range(out):
                    acc = [0.0] * inn
                    for j in range(rank):
                        b = bv[o * rank + j]
                        if b != 0.0:
                            acc = [x + b * y for x, y in zip(acc, arows[j])]
                    for i in range(inn):
                        e = abs(w0[o][i] + scale * acc[i] - w1[o][i])
                        if e > bound + 4.0 * ulp32(w1[o][i]):
                            e_abs = max(e_abs, e)
                        if dmax > 0:
                            worst = max(worst, e / dmax)
                if dmax == 0.0:
                    fail("%s: the model equals the base here (nothing to check)" % mod)
                elif e_abs > 0.0:
                    fail("%s: base + B A is %g off the merged weight (largest change %g)" %
                         (mod, e_abs, dmax))
    extra = set(ad) - want
    if extra:
        fail("tensors PEFT would not load: %s" % sorted(extra)[:4])
    print("peft: %d tensors (rank %d, alpha %s) over %d layers; base + B A off the merged "
          "export by at most %.3g of a module's largest change" %
          (len(ad), rank, cfg["lora_alpha"], layers, worst))


def main(argv):
    if len(argv) == 5 and argv[1] == "dtype":
        check_dtype(argv[2], argv[3], argv[4])
    elif len(argv) == 8 and argv[1] == "peft":
        check_peft(argv[2], argv[3], argv[4], argv[5], int(argv[6]), argv[7].split(","))
    else:
        print(__doc__)
        return 2
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
