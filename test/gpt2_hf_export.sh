#!/bin/sh
# test/gpt2_hf_export.sh - `ctune model export` of a GPT-2 checkpoint writes
# a Hugging Face directory in transformers' GPT2LMHeadModel layout:
# config.json (model_type gpt2, the dimensions, gelu_new, tied embeddings;
# bos/eos_token_id 50256 only for GPT-2's own vocabulary) and a
# model.safetensors whose names, shapes and values a Python reader (json +
# struct, independent of crowdtune) checks against the llm.c checkpoint:
# Conv1D matrices (c_attn, attn.c_proj, c_fc, mlp.c_proj) transposed to
# (in, out), every other tensor as is, wte without llm.c's padding rows;
# with --dtype bf16 / f16 every value the nearest-even rounding of the f32
# export's (test/hf_check.py).
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
C=$top_builddir/ctune
[ -x "$C" ] || { echo "skip: $C not built"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-gpt2hf.XXXXXX")
trap 'rm -rf "$T"' EXIT

# V = 250 padded to 256: the export must drop llm.c's 6 padding rows
"$C" model init --config 2,4,32,48,250,256 --seed 3 --out "$T/m.bin" >/dev/null || exit 1
"$C" model export "$T/m.bin" --out "$T/hf" >"$T/export.log" 2>&1 ||
	{ echo "FAIL: export: $(cat "$T/export.log")"; exit 1; }
"$C" model init --config 1,2,16,16,50257,50304 --seed 3 --out "$T/g.bin" >/dev/null || exit 1
"$C" model export "$T/g.bin" --out "$T/hf50257" >"$T/export.log" 2>&1 ||
	{ echo "FAIL: export: $(cat "$T/export.log")"; exit 1; }
# --dtype bf16 / f16: the same tensors, each the nearest-even rounding
for d in bf16 f16; do
	"$C" model export "$T/m.bin" --out "$T/hf_$d" --dtype $d >"$T/export.log" 2>&1 ||
		{ echo "FAIL: export --dtype $d: $(cat "$T/export.log")"; exit 1; }
	python3 "$(dirname "$0")/hf_check.py" dtype "$T/hf" "$T/hf_$d" $d || exit 1
done
exec python3 - "$T" <<'PY'
import json, struct, sys
T = sys.argv[1]
fails = []
def check(what, ok):
    print(("ok - " if ok else "FAIL: ") + what)
    if not ok:
        fails.append(what)

def llmc(path):
    buf = open(path, "rb").read()
    h = struct.unpack("<256i", buf[:1024])
    maxT, V, L, NH, C, Vp = h[2:8]
    n = (len(buf) - 1024) // 4
    p = struct.unpack("<%df" % n, buf[1024:])
    sizes = [Vp * C, maxT * C, L * C, L * C, L * 3 * C * C, L * 3 * C, L * C * C, L * C,
             L * C, L * C, L * 4 * C * C, L * 4 * C, L * C * 4 * C, L * C, C, C]
    t, off = [], 0
    for s in sizes:
        t.append(p[off:off + s]); off += s
    return (maxT, V, L, NH, C, Vp), t

def st(path):
    buf = open(path, "rb").read()
    (hl,) = struct.unpack("<Q", buf[:8])
    hdr = json.loads(buf[8:8 + hl])
    out = {}
    for n, e in hdr.items():
        if n == "__metadata__":
            continue
        a, b = e["data_offsets"]
        out[n] = (e["dtype"], e["shape"], struct.unpack("<%df" % ((b - a) // 4), buf[8 + hl + a:8 + hl + b]))
    return out

(maxT, V, L, NH, C, Vp), t = llmc(T + "/m.bin")
cfg = json.load(open(T + "/hf/config.json"))
check("config.json: GPT2LMHeadModel, model_type gpt2",
      cfg["architectures"] == ["GPT2LMHeadModel"] and cfg["model_type"] == "gpt2")
check("config.json: dimensions", (cfg["vocab_size"], cfg["n_positions"], cfg["n_layer"],
      cfg["n_head"], cfg["n_embd"]) == (V, maxT, L, NH, C))
check("config.json: gelu_new, eps 1e-5, tied", cfg["activation_function"] == "gelu_new"
      and cfg["layer_norm_epsilon"] == 1e-5 and cfg["tie_word_embeddings"] is True)
check("config.json: no GPT-2 special ids for a vocabulary of %d" % V, "bos_token_id" not in cfg)
g = json.load(open(T + "/hf50257/config.json"))
check("config.json of a V=50257 model: bos/eos_token_id 50256",
      g.get("bos_token_id") == 50256 and g.get("eos_token_id") == 50256)

w = st(T + "/hf/model.safetensors")
per = [("ln_1.weight", 2, None), ("ln_1.bias", 3, None), ("attn.c_attn.weight", 4, (3 * C, C)),
       ("attn.c_attn.bias", 5, None), ("attn.c_proj.weight", 6, (C, C)),
       ("attn.c_proj.bias", 7, None), ("ln_2.weight", 8, None), ("ln_2.bias", 9, None),
       ("mlp.c_fc.weight", 10, (4 * C, C)), ("mlp.c_fc.bias", 11, None),
       ("mlp.c_proj.weight", 12, (C, 4 * C)), ("mlp.c_proj.bias", 13, None)]
want = {"wte.weight": ([V, C], t[0][:V * C]), "wpe.weight": ([maxT, C], t[1]),
        "ln_f.weight": ([C], t[14]), "ln_f.bias": ([C], t[15])}
for name, i, oi in per:
    n = len(t[i]) // L
    for l in range(L):
        src = t[i][l * n:(l + 1) * n]
        if oi is None:
            want["h.%d.%s" % (l, name)] = ([n], src)
        else:	# llm.c (out, in) -> Conv1D (in, out)
            o, k = oi
            want["h.%d.%s" % (l, name)] = ([k, o], tuple(src[r * k + c] for c in range(k) for r in range(o)))
check("the tensor names are GPT-2's (%d)" % len(want), sorted(w) == sorted(want))
bad = [n for n in want if n in w and (w[n][0] != "F32" or w[n][1] != want[n][0] or w[n][2] != want[n][1])]
check("every tensor's dtype, shape and values (Conv1D transposed, wte unpadded)%s"
      % (": " + ", ".join(bad[:4]) if bad else ""), not bad)
sys.exit(1 if fails else 0)
PY
