// chat_mask_ref.mjs - the reference side of test/chat_tokens.sh: ctune
// tokens encode --chat against npm @huggingface/jinja + @lenml/tokenizers.
//
//   node chat_mask_ref.mjs MODEL CONVERSATIONS.jsonl RENDERED DECODED TOKENIZER_DIR
//
// RENDERED is chat_ref.mjs render's output for the conversations (the
// reference text and ids), DECODED is `ctune tokens decode --json` of the
// file encode --chat wrote from them. Every line's ids must be the
// reference's, and each run of trained tokens, decoded by the reference
// tokenizer, must be the text of one assistant reply as MODEL's template
// writes it, closed by its end-of-turn token, in order: Llama 3 trims the
// content and closes it with <|eot_id|>; Qwen3 closes it with <|im_end|>
// and opens the last reply after the last user message with an empty
// <think> block. Prints "ok N" or the first difference (exit 1).
import { TokenizerLoader } from "@lenml/tokenizers";
import fs from "node:fs";

const [model, convFile, renderedFile, decodedFile, tokDir] = process.argv.slice(2);
const lines = (p) => fs.readFileSync(p, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
const readJson = (p) => JSON.parse(fs.readFileSync(p, "utf8"));
const tk = TokenizerLoader.fromPreTrained({
	tokenizerJSON: readJson(`${tokDir}/tokenizer.json`),
	tokenizerConfig: readJson(`${tokDir}/tokenizer_config.json`),
});
const convs = lines(convFile), ref = lines(renderedFile), got = lines(decodedFile);

function expected(msgs) {
	const lastUser = msgs.map((m) => m.role).lastIndexOf("user");
	const want = [];
	msgs.forEach((m, i) => {
		if (m.role !== "assistant")
			return;
		if (model === "llama3")
			want.push(m.content.trim() + "<|eot_id|>");
		else if (model === "qwen3")
			want.push((i > lastUser ? "<think>\n\n</think>\n\n" : "") + m.content + "<|im_end|>");
		else
			throw new Error(`no rule for ${model}`);
	});
	return want;
}

function fail(i, what) {
	console.log(`line ${i + 1}: ${what}`);
	process.exit(1);
}

if (convs.length !== ref.length || ref.length !== got.length)
	fail(0, `${convs.length} conversations, ${ref.length} reference lines, ${got.length} decoded`);
let ntrained = 0;
got.forEach((g, i) => {
	if (JSON.stringify(g.ids) !== JSON.stringify(ref[i].ids))
		fail(i, `ids differ: ${JSON.stringify(g.ids)} vs ${JSON.stringify(ref[i].ids)}`);
	if (g.train.length !== g.ids.length || g.train[0] !== 0)
		fail(i, "train is not one 0|1 per id starting with 0");
	const runs = [];
	let cur = null;
	g.ids.forEach((id, k) => {
		if (g.train[k] === 1) {
			if (cur === null)
				runs.push((cur = []));
			cur.push(id);
			ntrained++;
		} else {
			cur = null;
		}
	});
	const text = runs.map((r) => tk.decode(r, { skip_special_tokens: false, clean_up_tokenization_spaces: false }));
	const want = expected(convs[i].messages);
	if (JSON.stringify(text) !== JSON.stringify(want))
		fail(i, `trained ${JSON.stringify(text)}, want ${JSON.stringify(want)}`);
});
console.log(`ok ${got.length} conversations, ${ntrained} trained tokens`);
