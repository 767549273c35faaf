#!/bin/sh
# test/base_train.sh - compact frozen bases from the command line
# (doc/workunit.md §13): `ctune model import --base-format bf16` writes a
# compact base file; `ctune train --lora-rank R --base-format bf16` on the
# float32 checkpoint and `ctune train --lora-rank R` on that file end in
# the same state file bytes (adapters, moments, and the hash of the base
# as stored), on the C reference and on OpenCL (when a device is there);
# the float32 base trains to other adapters; and the options are refused
# where they make no sense. A BF16 safetensors directory (written here
# from the F32 export by a Python converter independent of crowdtune)
# imports exactly into a compact base, and LoRA on it ends in the bytes of
# LoRA on the float32 import of the same directory. (The adapter files
# differ in the base file's hash they carry, so the state files are what
# is compared.)
#
# Exit 0 = pass, 77 = skipped, anything else = failure.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
C=$top_builddir/ctune
[ -x "$C" ] || { echo "skip: $C not built"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ctune-base.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$C" model init-llama --layers 2 --heads 4 --kv-heads 2 --channels 32 --mlp 48 \
	--vocab 64 --max-seq 16 --tied --seed 5 --out "$T/m.ct" >/dev/null || fail "init-llama"
"$C" model export "$T/m.ct" --out "$T/hf" >/dev/null 2>&1 || fail "export"
"$C" model import "$T/hf" --out "$T/m.ctb" --base-format bf16 >/dev/null 2>"$T/imp.log" ||
	fail "import --base-format bf16: $(cat "$T/imp.log")"
grep -q "rounded" "$T/imp.log" || fail "an F32 import does not say it rounded"
head -c 6 "$T/m.ctb" | grep -q CTBASE || fail "not a compact base file"
python3 - "$T" <<'PY' || fail "compact file not ~half the size"
import os, sys
T = sys.argv[1]
a, b = os.path.getsize(T + "/m.ct"), os.path.getsize(T + "/m.ctb")
print("f32 %d bytes, bf16 %d bytes (%.2fx)" % (a, b, b / a))
sys.exit(0 if b < 0.6 * a else 1)
PY
python3 - "$T/tok.bin" <<'PY'
import struct, sys
n = 600
toks = [(i * 7 + i // 11) % 64 for i in range(n)]
h = [20240520, 1, n] + [0] * 253
open(sys.argv[1], "wb").write(struct.pack("<256i", *h) + struct.pack("<%dH" % n, *toks))
PY
train() {	# out model device [extra options]
	out=$1 model=$2 dev=$3
	shift 3
	"$C" train --model "$model" --data "$T/tok.bin" --steps 4 --batch 2 --seq 16 --lr 1e-2 \
		--lora-rank 4 --device "$dev" --out "$out" --state "$out.state" \
		--checkpoint-every 4 "$@" >"$T/train.log" 2>&1 ||
		fail "train $model on $dev $*: $(cat "$T/train.log")"
}
train "$T/a16.bin" "$T/m.ct" cpu --base-format bf16
train "$T/b16.bin" "$T/m.ctb" cpu
cmp -s "$T/a16.bin.state" "$T/b16.bin.state" || fail "converted in the WU != the compact file"
echo "ok - bf16 base: converted by train == imported compact (cpu)"
train "$T/a32.bin" "$T/m.ct" cpu
cmp -s "$T/a16.bin.state" "$T/a32.bin.state" && fail "the float32 base gave the bf16 adapters"
echo "ok - the float32 base trains to other adapters"
train "$T/q8.bin" "$T/m.ct" cpu --base-format q8
cmp -s "$T/a16.bin.state" "$T/q8.bin.state" && fail "q8 gave the bf16 state"
if "$C" devices 2>/dev/null | grep -qi "opencl"; then
	train "$T/o16.bin" "$T/m.ctb" opencl
	cmp -s "$T/b16.bin.state" "$T/o16.bin.state" || fail "bf16 base: cpu != opencl"
	echo "ok - bf16 base: cpu == opencl"
	train "$T/oq8.bin" "$T/m.ct" opencl --base-format q8
	cmp -s "$T/q8.bin.state" "$T/oq8.bin.state" || fail "q8 base: cpu != opencl"
	echo "ok - q8 base: cpu == opencl"
	train "$T/nf4.bin" "$T/m.ct" cpu --base-format nf4
	train "$T/onf4.bin" "$T/m.ct" opencl --base-format nf4
	cmp -s "$T/nf4.bin.state" "$T/onf4.bin.state" || fail "nf4 base: cpu != opencl"
	echo "ok - nf4 base: cpu == opencl"
else
	echo "skip - no OpenCL device: cpu only"
fi
# a BF16 checkpoint: exact, and its compact base trains as its f32 import
python3 - "$T/hf/model.safetensors" "$T/hf16/model.safetensors" <<'PY' || fail "bf16 converter"
import json, os, shutil, struct, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(os.path.dirname(dst), exist_ok=True)
shutil.copy(os.path.join(os.path.dirname(src), "config.json"), os.path.dirname(dst))
buf = open(src, "rb").read()
n = struct.unpack("<Q", buf[:8])[0]
hdr = json.loads(buf[8:8 + n])
data = buf[8 + n:]
out, pos, meta = bytearray(), 0, {}
for name, t in sorted(hdr.items(), key=lambda kv: kv[1]["data_offsets"][0] if kv[0] != "__metadata__" else -1):
    if name == "__metadata__":
        meta[name] = t
        continue
    a, b = t["data_offsets"]
    vals = struct.unpack("<%dI" % ((b - a) // 4), data[a:b])
    h = [((u + 0x7fff + ((u >> 16) & 1)) >> 16) & 0xffff for u in vals]
    raw = struct.pack("<%dH" % len(h), *h)
    meta[name] = {"dtype": "BF16", "shape": t["shape"], "data_offsets": [pos, pos + len(raw)]}
    out += raw
    pos += len(raw)
j = json.dumps(meta).encode()
j += b" " * ((8 - len(j) % 8) % 8)
open(dst, "wb").write(struct.pack("<Q", len(j)) + j + bytes(out))
PY
"$C" model import "$T/hf16" --out "$T/h.ct" >/dev/null 2>&1 || fail "import BF16"
"$C" model import "$T/hf16" --out "$T/h.q8" --base-format q8 >/dev/null 2>&1 &&
	fail "import --base-format q8 is not refused"
"$C" model import "$T/hf16" --out "$T/h.ctb" --base-format bf16 >/dev/null 2>"$T/imp.log" ||
	fail "import BF16 --base-format bf16: $(cat "$T/imp.log")"
grep -q "exact" "$T/imp.log" || fail "a BF16 import is not reported exact: $(cat "$T/imp.log")"
train "$T/h32.bin" "$T/h.ct" cpu --base-format f32
train "$T/h16.bin" "$T/h.ctb" cpu
cmp -s "$T/h32.bin.state" "$T/h16.bin.state" && fail "state files should differ in the format field"
python3 - "$T/h32.bin.state" "$T/h16.bin.state" <<'PY' || fail "bf16 checkpoint: compact LoRA != float32 LoRA"
import sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
# the adapters, their m and v (after the 256-byte header, before the digest)
sys.exit(0 if len(a) == len(b) and a[256:-32] == b[256:-32] else 1)
PY
echo "ok - a BF16 checkpoint: compact import exact, LoRA on it == LoRA on its f32 import"
"$C" train --model "$T/m.ct" --data "$T/tok.bin" --steps 1 --batch 2 --seq 16 --lr 1e-2 \
	--base-format bf16 --out "$T/x.bin" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--base-format without --lora-rank is not a usage error"
"$C" train --model "$T/m.ct" --data "$T/tok.bin" --steps 1 --batch 2 --seq 16 --lr 1e-2 \
	--lora-rank 2 --base-format q3 --out "$T/x.bin" >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown --base-format is not a usage error"
echo "ok - refusals"
exit 0
