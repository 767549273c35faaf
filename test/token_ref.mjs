// token_ref.mjs - what the reference scripts of the tokenizer tests share
// (tiktoken_ref.mjs, hf_ref.mjs): reading a token file of either version,
// comparing it with the reference's ids document by document, and timing
// an encoder.
import fs from "node:fs";

// The ids of an llm.c token file: version 1 (uint16) or 2 (uint32).
export function readTokens(path) {
	const b = fs.readFileSync(path);
	const hdr = new Int32Array(b.buffer, b.byteOffset, 256);
	const width = hdr[1] === 2 ? 4 : 2;
	if (hdr[0] !== 20240520 || (hdr[1] !== 1 && hdr[1] !== 2))
		throw new Error(`${path}: not a token file`);
	if (b.length !== 1024 + width * hdr[2])
		throw new Error(`${path}: size does not match the count`);
	const body = b.buffer.slice(b.byteOffset + 1024, b.byteOffset + b.length);
	return width === 4 ? new Uint32Array(body) : new Uint16Array(body);
}

// binPath must hold, for each file in turn, eot (unless < 0) then
// encode(text of the file); show(ids) describes ids for a mismatch. Exits
// 1 on the first difference.
export function compareDocs(binPath, files, eot, encode, show, name) {
	const got = readTokens(binPath);
	let at = 0, total = 0;
	for (const f of files) {
		const ids = encode(fs.readFileSync(f, "utf8"));
		const want = eot >= 0 ? [eot, ...ids] : Array.from(ids);
		for (let i = 0; i < want.length; i++, at++) {
			if (got[at] !== want[i]) {
				const a = Math.max(0, i - 5);
				console.log(`MISMATCH in ${f}, token ${i} (file position ${at}):\n` +
					`  ${name}: ${show(want.slice(a, i + 5))}\n` +
					`  ctune:    ${show(got.slice(at - (i - a), at + 5))}`);
				process.exit(1);
			}
		}
		total += want.length;
	}
	if (got.length !== total) {
		console.log(`MISMATCH: ctune wrote ${got.length} tokens, ${name} makes ${total}`);
		process.exit(1);
	}
	console.log(`identical: ${total} tokens from ${files.length} files`);
}

// "NAME MB/s" of encode(text of file), the best of rounds.
export function benchEncode(name, file, rounds, encode) {
	const text = fs.readFileSync(file, "utf8");
	const mb = Buffer.byteLength(text) / 1e6;
	let best = Infinity;
	for (let r = 0; r < rounds; r++) {
		const t0 = process.hrtime.bigint();
		encode(text);
		best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
	}
	console.log(`${name} ${(mb / best).toFixed(2)}`);
}
