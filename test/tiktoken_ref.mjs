// tiktoken_ref.mjs - the reference side of test/tokenizer_gpt2.sh and
// bench/bench_tokenizer.sh: OpenAI's tokenizer (npm tiktoken, encoding
// "gpt2", ordinary encoding: special tokens are plain text).
//
//   node tiktoken_ref.mjs compare TOKENS.bin FILE...
//       TOKENS.bin (llm.c format) must hold, for each FILE in turn,
//       <|endoftext|> then FILE's ids; prints the first difference.
//   node tiktoken_ref.mjs bench FILE ROUNDS
//       prints "tiktoken MB/s" of encoding FILE (best of ROUNDS).
//   node tiktoken_ref.mjs synth OUT
//       writes the hand-made stress text the test adds to its corpus.
import { get_encoding } from "tiktoken";
import fs from "node:fs";
import { benchEncode, compareDocs } from "./token_ref.mjs";

const EOT = 50256;
const enc = get_encoding("gpt2");
const [cmd, ...args] = process.argv.slice(2);

function show(ids) {
	const text = new TextDecoder().decode(enc.decode(Uint32Array.from(ids)));
	return `[${Array.from(ids).join(" ")}] ${JSON.stringify(text)}`;
}

function compare(binPath, files) {
	compareDocs(binPath, files, EOT, (t) => enc.encode_ordinary(t), show, "tiktoken");
}

function bench(file, rounds) {
	benchEncode("tiktoken", file, rounds, (t) => enc.encode_ordinary(t));
}

// Deterministic stress text: the corners of GPT-2's pre-tokeniser and long
// pieces (which ctune merges with a heap instead of a scan).
function synth(out) {
	let seed = 12345;
	const rnd = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
	const parts = [
		"It's we're they've I'm you'll he'd 'S 'LL 'Re ''s '' ' s", "don't  ' t",
		"emoji 😀😀 👍🏽 🇩🇪 👨‍👩‍👧 family", "numbers 1234567890 ٣٤٥ ½ Ⅻ 3.14e-10 0x1F",
		"tabs\t\tand\t spaces  \n\n\n  \r\n\r\n end   ", "nbsp\u00a0x\u3000y\u2028z\u0085w",
		"Ünïcödé façade naïve Ελληνικά русский 中文字符 日本語のテキスト 한국어",
		"combining e\u0301 a\u0308 \u200d\u200c zero width", "<|endoftext|> is text here",
		"a".repeat(3000), " ".repeat(2000) + "x", "\n".repeat(500), "1".repeat(1000),
		"!".repeat(700), "-".repeat(300) + "=".repeat(300), "😀".repeat(200),
		" \t \u3000 ".repeat(100) + "end", "ab".repeat(800), "\u00e9".repeat(500),
	];
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZäöüßéèçñ日本語中文";
	let s = parts.join("\n") + "\n";
	for (let w = 0; w < 4000; w++) {
		let word = "";
		const n = 1 + rnd(12);
		for (let k = 0; k < n; k++)
			word += letters[rnd(letters.length)];
		s += word + [" ", "  ", ", ", ".\n", "'s ", " 42 ", "\t", "!? "][rnd(8)];
	}
	let long = "";
	for (let k = 0; k < 5000; k++)
		long += letters[rnd(52)];
	s += long + "\n";
	fs.writeFileSync(out, s);
}

if (cmd === "compare")
	compare(args[0], args.slice(1));
else if (cmd === "bench")
	bench(args[0], Number(args[1] || 5));
else if (cmd === "synth")
	synth(args[0]);
else {
	console.error("usage: node tiktoken_ref.mjs compare BIN FILE... | bench FILE N | synth OUT");
	process.exit(2);
}
