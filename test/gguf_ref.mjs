// The reference side of test/gguf_export.sh: npm @huggingface/gguf (the
// GGUF parser of huggingface.js) reads a GGUF file ctune wrote, and this
// script holds it to the Hugging Face export of the same model (its
// config.json, model.safetensors and tokenizer files), computing on its
// own what llama.cpp expects: the metadata, the tokenizer, each tensor's
// name, shape, type and offset, and the values.
//
//   node gguf_ref.mjs FILE.gguf HF_DIR DTYPE   (DTYPE: f32 f16 bf16 q8_0)
//
// f32, f16 and bf16 tensors must be the safetensors export's bytes
// (exported with the same dtype; llama's attn_q / attn_k rows in
// llama.cpp's adjacent-pair order); q8_0 ones, dequantised, within half a
// step of the float32 export (plus the float16 scale's rounding). Prints
// "ok N tensors" or the first difference, and exits 1.
import { gguf } from "@huggingface/gguf";
import fs from "node:fs";

const [file, dir, dtype] = process.argv.slice(2);
const fail = (m) => { console.log("FAIL: " + m); process.exit(1); };
const T = { f32: 0, f16: 1, q8_0: 8, bf16: 30 };
const FILE_TYPE = { f32: 0, f16: 1, q8_0: 7, bf16: 32 };

const cfg = JSON.parse(fs.readFileSync(`${dir}/config.json`, "utf8"));
const st = (() => {
	const buf = fs.readFileSync(`${dir}/model.safetensors`);
	const n = Number(buf.readBigUInt64LE(0));
	const head = JSON.parse(buf.subarray(8, 8 + n).toString("utf8"));
	return { buf, head, base: 8 + n };
})();
const r = await gguf(file, { allowLocalFile: true, typedMetadata: true });
const md = r.metadata, typed = r.typedMetadata;
const raw = fs.readFileSync(file);

const arch = cfg.model_type === "gpt2" ? "gpt2" : cfg.model_type;
const eq = (k, v) => {
	if (md[k] !== v) fail(`${k} is ${md[k]}, want ${v}`);
};
const close = (k, v) => {
	if (Math.abs(md[k] - v) > Math.abs(v) * 1e-6) fail(`${k} is ${md[k]}, want ${v}`);
};

// ---- metadata ---------------------------------------------------------
eq("version", 3);
eq("general.architecture", arch);
eq("general.file_type", FILE_TYPE[dtype]);
eq("general.alignment", 32);
if (dtype === "q8_0") eq("general.quantization_version", 2);
const gpt2 = arch === "gpt2";
const C = gpt2 ? cfg.n_embd : cfg.hidden_size;
const L = gpt2 ? cfg.n_layer : cfg.num_hidden_layers;
const NH = gpt2 ? cfg.n_head : cfg.num_attention_heads;
const V = cfg.vocab_size;
eq(`${arch}.context_length`, gpt2 ? cfg.n_positions : cfg.max_position_embeddings);
eq(`${arch}.embedding_length`, C);
eq(`${arch}.block_count`, L);
eq(`${arch}.attention.head_count`, NH);
eq(`${arch}.vocab_size`, V);
let hd = C / NH;
if (gpt2) {
	eq(`${arch}.feed_forward_length`, 4 * C);
	close(`${arch}.attention.layer_norm_epsilon`, cfg.layer_norm_epsilon);
} else {
	hd = cfg.head_dim || C / NH;
	eq(`${arch}.feed_forward_length`, cfg.intermediate_size);
	eq(`${arch}.attention.head_count_kv`, cfg.num_key_value_heads);
	eq(`${arch}.rope.dimension_count`, hd);
	eq(`${arch}.attention.key_length`, hd);
	close(`${arch}.rope.freq_base`, cfg.rope_theta);
	close(`${arch}.attention.layer_norm_rms_epsilon`, cfg.rms_norm_eps);
	if (typed[`${arch}.rope.freq_base`].type !== 6) fail("rope.freq_base is not a float32");
}

// ---- tokenizer --------------------------------------------------------
if (fs.existsSync(`${dir}/tokenizer.json`)) {
	const tj = JSON.parse(fs.readFileSync(`${dir}/tokenizer.json`, "utf8"));
	const tokens = new Array(V).fill(null), types = new Array(V).fill(5);
	for (const [s, id] of Object.entries(tj.model.vocab)) { tokens[id] = s; types[id] = 1; }
	for (const a of tj.added_tokens) { tokens[a.id] = a.content; types[a.id] = a.special ? 3 : 4; }
	for (let i = 0; i < V; i++) if (tokens[i] === null) tokens[i] = `[PAD${i}]`;
	eq("tokenizer.ggml.model", "gpt2");
	const got = md["tokenizer.ggml.tokens"], gt = md["tokenizer.ggml.token_type"];
	if (got.length !== V || gt.length !== V) fail(`${got.length} tokens, want ${V}`);
	for (let i = 0; i < V; i++) {
		if (got[i] !== tokens[i]) fail(`token ${i} is ${JSON.stringify(got[i])}, want ${JSON.stringify(tokens[i])}`);
		if (gt[i] !== types[i]) fail(`token ${i}'s type is ${gt[i]}, want ${types[i]}`);
	}
	const merges = tj.model.merges.map((m) => (Array.isArray(m) ? m.join(" ") : m));
	const gm = md["tokenizer.ggml.merges"];
	if (gm.length !== merges.length || gm.some((m, i) => m !== merges[i])) fail("merges differ");
	const tc = JSON.parse(fs.readFileSync(`${dir}/tokenizer_config.json`, "utf8"));
	const text = (t) => (t && typeof t === "object" ? t.content : t);
	const idOf = (t) => tokens.indexOf(t);
	for (const [k, g] of [["bos_token", "bos_token_id"], ["eos_token", "eos_token_id"],
		["pad_token", "padding_token_id"], ["unk_token", "unknown_token_id"]]) {
		const t = text(tc[k]);
		const want = t != null && idOf(t) >= 0 ? idOf(t) : undefined;
		eq(`tokenizer.ggml.${g}`, want);
	}
	eq("tokenizer.chat_template", tc.chat_template);
	const pre = md["tokenizer.ggml.pre"];
	const re = JSON.stringify(tj.pre_tokenizer);
	const want = re.includes("\\\\p{N}{1,3}") ? "llama-bpe" : re.includes("\\\\p{N}|") ? "qwen2" : pre;
	if (pre !== want) fail(`tokenizer.ggml.pre is ${pre}, want ${want}`);
}

// ---- tensors ------------------------------------------------------------
// [gguf name, HF name, transpose (GPT-2's Conv1D), row permutation]
const names = [];
const permute = (n) => (rows) => {
	// llama.cpp's llama RoPE pairs (2i, 2i+1): row 2i+e of a head is HF row e*hd/2+i
	const out = new Array(rows);
	for (let h = 0; h < n; h++)
		for (let i = 0; i < hd / 2; i++)
			for (let e = 0; e < 2; e++) out[h * hd + 2 * i + e] = h * hd + e * (hd / 2) + i;
	return out;
};
if (gpt2) {
	names.push(["token_embd.weight", "wte.weight"], ["position_embd.weight", "wpe.weight"]);
	for (let l = 0; l < L; l++) {
		const b = `blk.${l}.`, h = `h.${l}.`;
		for (const [g, n, tr] of [["attn_norm", "ln_1"], ["attn_qkv", "attn.c_attn", 1],
			["attn_output", "attn.c_proj", 1], ["ffn_norm", "ln_2"], ["ffn_up", "mlp.c_fc", 1],
			["ffn_down", "mlp.c_proj", 1]]) {
			names.push([`${b}${g}.weight`, `${h}${n}.weight`, tr], [`${b}${g}.bias`, `${h}${n}.bias`]);
		}
	}
	names.push(["output_norm.weight", "ln_f.weight"], ["output_norm.bias", "ln_f.bias"],
		["output.weight", "wte.weight"]);
} else {
	const perm = arch === "llama";
	names.push(["token_embd.weight", "model.embed_tokens.weight"]);
	for (let l = 0; l < L; l++) {
		const b = `blk.${l}.`, m = `model.layers.${l}.`;
		names.push([`${b}attn_norm.weight`, `${m}input_layernorm.weight`],
			[`${b}attn_q.weight`, `${m}self_attn.q_proj.weight`, 0, perm && permute(NH)],
			[`${b}attn_k.weight`, `${m}self_attn.k_proj.weight`, 0, perm && permute(cfg.num_key_value_heads)],
			[`${b}attn_v.weight`, `${m}self_attn.v_proj.weight`]);
		if (arch === "qwen2")
			for (const p of ["q", "k", "v"]) names.push([`${b}attn_${p}.bias`, `${m}self_attn.${p}_proj.bias`]);
		if (arch === "qwen3")
			for (const p of ["q", "k"]) names.push([`${b}attn_${p}_norm.weight`, `${m}self_attn.${p}_norm.weight`]);
		names.push([`${b}attn_output.weight`, `${m}self_attn.o_proj.weight`],
			[`${b}ffn_norm.weight`, `${m}post_attention_layernorm.weight`],
			[`${b}ffn_gate.weight`, `${m}mlp.gate_proj.weight`],
			[`${b}ffn_up.weight`, `${m}mlp.up_proj.weight`],
			[`${b}ffn_down.weight`, `${m}mlp.down_proj.weight`]);
	}
	names.push(["output_norm.weight", "model.norm.weight"]);
	if (!cfg.tie_word_embeddings) names.push(["output.weight", "lm_head.weight"]);
}
if (cfg.rope_scaling) names.push(["rope_freqs.weight", null]);
if (r.tensorInfos.length !== names.length)
	fail(`${r.tensorInfos.length} tensors, want ${names.length}: ${r.tensorInfos.map((t) => t.name)}`);
if (r.tensorDataOffset % 32n !== 0n) fail("the tensor data is not aligned to 32");

const f16 = (h) => {
	const s = h >> 15 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
	return e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
};
const elem = { F32: 4, F16: 2, BF16: 2 };
for (let k = 0; k < names.length; k++) {
	const [gname, hname, tr, perm] = names[k];
	const ti = r.tensorInfos[k];
	if (ti.name !== gname) fail(`tensor ${k} is ${ti.name}, want ${gname}`);
	if (ti.offset % 32n !== 0n) fail(`${gname}: offset ${ti.offset} not aligned`);
	const off = Number(r.tensorDataOffset + ti.offset);
	const shape = ti.shape.map(Number);
	if (hname === null) {	// Llama 3 scaling factors: one per frequency, >= 1
		if (shape.length !== 1 || shape[0] !== hd / 2 || ti.dtype !== 0) fail(`${gname}: bad shape`);
		for (let i = 0; i < hd / 2; i++) if (!(raw.readFloatLE(off + 4 * i) >= 1)) fail(`${gname}[${i}] < 1`);
		continue;
	}
	const h = st.head[hname];
	if (!h) fail(`${hname} missing from the safetensors export`);
	const hs = h.shape;
	const rows = hs.length === 2 ? (tr ? hs[1] : hs[0]) : 1;
	const cols = hs.length === 2 ? (tr ? hs[0] : hs[1]) : hs[0];
	let V2 = rows;
	if (gname === "token_embd.weight" || gname === "output.weight") V2 = V;	// padding rows dropped
	const want = hs.length === 2 ? [cols, V2] : [cols];
	if (JSON.stringify(shape) !== JSON.stringify(want)) fail(`${gname}: shape ${shape}, want ${want}`);
	const vec = hs.length === 1;
	const wt = vec ? 0 : dtype === "q8_0" && cols % 32 ? 1 : T[dtype];
	if (ti.dtype !== wt) fail(`${gname}: type ${ti.dtype}, want ${wt}`);
	const sdt = h.dtype, es = elem[sdt];
	const src = (rr, c) => st.base + h.data_offsets[0] + es * (tr ? c * hs[1] + rr : rr * hs[1 - 0] + c);
	const srcv = (c) => st.base + h.data_offsets[0] + es * c;
	const map = perm ? perm(V2) : null;
	if (wt !== 8) {	// the same bytes, element by element
		const ge = wt === 0 ? 4 : 2;
		if (es !== ge && !vec) fail(`${gname}: export ${sdt} against ${ge}-byte elements`);
		for (let rr = 0; rr < V2; rr++)
			for (let c = 0; c < cols; c++) {
				const g = off + ge * (rr * cols + c);
				const s = vec ? srcv(c) : src(map ? map[rr] : rr, c);
				let a, b;
				if (ge === es) { a = raw.readUIntLE(g, ge); b = st.buf.readUIntLE(s, es); }
				else { a = raw.readFloatLE(g); b = sdt === "F16" ? f16(st.buf.readUInt16LE(s)) : new Float32Array(new Uint32Array([st.buf.readUInt16LE(s) << 16]).buffer)[0]; }
				if (a !== b) fail(`${gname}[${rr}][${c}]: ${a} in the GGUF, ${b} in the safetensors`);
			}
		continue;
	}
	if (sdt !== "F32") fail(`${gname}: compare q8_0 with a float32 export`);
	for (let rr = 0; rr < V2; rr++)
		for (let b0 = 0; b0 < cols; b0 += 32) {
			const blk = off + 34 * ((rr * cols + b0) / 32);
			const d = f16(raw.readUInt16LE(blk));
			let amax = 0;
			const x = [];
			for (let i = 0; i < 32; i++) {
				x.push(st.buf.readFloatLE(src(map ? map[rr] : rr, b0 + i)));
				amax = Math.max(amax, Math.abs(x[i]));
			}
			const tol = (amax / 127) * 0.5 + amax * 2 ** -10 + 1e-30;
			for (let i = 0; i < 32; i++) {
				const y = raw.readInt8(blk + 2 + i) * d;
				if (!(Math.abs(y - x[i]) <= tol)) fail(`${gname}[${rr}][${b0 + i}]: ${y} for ${x[i]}`);
			}
		}
}
console.log(`ok ${names.length} tensors`);
