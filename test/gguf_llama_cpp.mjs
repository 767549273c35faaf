// Optional side of test/gguf_export.sh: llama.cpp itself (npm
// node-llama-cpp, its prebuilt CPU library; not in test/package.json, it
// is 700 MB) loads a GGUF file ctune wrote, tokenizes PROMPT with the
// file's tokenizer and prints PROMPT, the text of the N tokens it picks
// greedily after it, and a newline (what `ctune sample --temperature 0`
// prints).
//
//   node gguf_llama_cpp.mjs FILE.gguf PROMPT N
import { getLlama } from "node-llama-cpp";

const [file, prompt, n] = process.argv.slice(2);
const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const model = await llama.loadModel({ modelPath: file });
const ids = Array.from(model.tokenize(prompt));
const ctx = await model.createContext({ contextSize: 64 });
const out = [];
for await (const t of ctx.getSequence().evaluate(ids, { temperature: 0 })) {
	out.push(t);
	if (out.length >= Number(n)) break;
}
process.stdout.write(prompt + model.detokenize(out) + "\n");
