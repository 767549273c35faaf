// hf_ref.mjs - the reference side of test/tokenizer_hf.sh and
// bench/bench_tokenizer.sh: Hugging Face's tokenizers in JavaScript (npm
// @lenml/tokenizers, the tokenizer code of transformers.js), loaded from
// the same tokenizer.json that ctune reads. Text is encoded without
// special tokens around it (add_special_tokens: false); added tokens
// written in the text are recognised, as in ctune.
//
//   node hf_ref.mjs compare DIR EOT TOKENS.bin FILE...
//       DIR holds tokenizer.json and tokenizer_config.json; TOKENS.bin
//       (version 1 or 2 token file) must hold, for each FILE in turn, the
//       id EOT (unless EOT is -1) then FILE's ids; prints the first
//       difference.
//   node hf_ref.mjs bench DIR FILE ROUNDS
//       prints "hf MB/s" of encoding FILE (best of ROUNDS).
//   node hf_ref.mjs synth OUT
//       writes the hand-made stress text of the test: the corners of the
//       Llama 3 / Qwen2 pre-tokenisers and added tokens in the text. It
//       leaves out the few characters where this JavaScript port differs
//       from Hugging Face's Rust library (U+0085 and U+FEFF, which
//       JavaScript's \s classes differently, and U+017F, which Rust's
//       case-insensitive contractions match): ctune follows the Rust one.
import { TokenizerLoader } from "@lenml/tokenizers";
import fs from "node:fs";
import { benchEncode, compareDocs } from "./token_ref.mjs";

const [cmd, ...args] = process.argv.slice(2);

function load(dir) {
	const json = (f) => JSON.parse(fs.readFileSync(`${dir}/${f}`, "utf8"));
	return TokenizerLoader.fromPreTrained({
		tokenizerJSON: json("tokenizer.json"),
		tokenizerConfig: json("tokenizer_config.json"),
	});
}

function compare(dir, eot, binPath, files) {
	const tk = load(dir);
	const show = (ids) => `[${Array.from(ids).join(" ")}] ${JSON.stringify(tk.decode(Array.from(ids)))}`;
	compareDocs(binPath, files, eot, (t) => tk.encode(t, { add_special_tokens: false }), show, "hf");
}

function bench(dir, file, rounds) {
	const tk = load(dir);
	benchEncode("hf", file, rounds, (t) => tk.encode(t, { add_special_tokens: false }));
}

function synth(out) {
	let seed = 4242;
	const rnd = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
	const parts = [
		"It's we're they've I'm you'll he'd 'S 'LL 'Re 'VE 'M 'D 'T ''s '' ' s don't",
		"Numbers 1 12 123 1234 12345 123456 1234567 3.14159 2026-11-24 0x1F ٣٤٥٦ ½ Ⅻ ²³",
		"crlf\r\nend\r\n\r\n  \r\n\t\r\n \n \n\n   x\n\n\ny\r\rz \r\n",
		"space before newline   \n   \n\tafter tab\n.\n\n...\n!!\r\n(paren)word \"quoted\"",
		"punct+newlines:\n\n\n;;;\r\n\r\n ?!\n---\n   ---   \n",
		"emoji 😀😀 👍🏽 🇩🇪 👨‍👩‍👧 family ✓✓",
		"Ünïcödé façade naïve Ελληνικά русский 中文字符 日本語のテキスト 한국어 עברית العربية",
		"combining e\u0301 a\u0308 \u200d\u200c zero width, nbsp\u00a0x\u3000y\u2028z",
		"added: <|begin_of_text|>hi<|end_of_text|> <|eot_id|>\n<|im_start|>user\nhello<|im_end|>",
		"<think>\nreason</think> <|endoftext|><|endoftext|> almost: <|begin_of_tex <|im_sta <|",
		"<|start_header_id|>assistant<|end_header_id|>\n\n<tool_call>{}</tool_call>",
		"a".repeat(3000), " ".repeat(2000) + "x", "\n".repeat(500), "1".repeat(1000),
		"!".repeat(700), "-".repeat(300) + "=".repeat(300), "😀".repeat(200),
		" \t \u3000 ".repeat(100) + "end", "ab".repeat(800), "\u00e9".repeat(500),
		" \n".repeat(300) + "tail", "\r\n".repeat(200) + " \r\n  ".repeat(50),
	];
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZäöüßéèçñ日本語中文";
	const seps = [" ", "  ", ", ", ".\n", "'s ", " 42 ", "\t", "!? ", "\n\n", " \r\n", "1234",
		"'LL ", " (", ") ", "\n  ", "<|im_end|>", "...\n"];
	let s = parts.join("\n") + "\n";
	for (let w = 0; w < 6000; w++) {
		let word = "";
		const n = 1 + rnd(12);
		for (let k = 0; k < n; k++)
			word += letters[rnd(letters.length)];
		s += word + seps[rnd(seps.length)];
	}
	let long = "";
	for (let k = 0; k < 5000; k++)
		long += letters[rnd(52)];
	s += long + "\n";
	fs.writeFileSync(out, s);
}

if (cmd === "compare")
	compare(args[0], Number(args[1]), args[2], args.slice(3));
else if (cmd === "bench")
	bench(args[0], args[1], Number(args[2] || 5));
else if (cmd === "synth")
	synth(args[0]);
else {
	console.error("usage: node hf_ref.mjs compare DIR EOT BIN FILE... | bench DIR FILE N | synth OUT");
	process.exit(2);
}
