// test/browser/lib.mjs - what the control page's browser tests share
// (control.mjs, control_projects.mjs): the check counters, headless
// Debian Chromium through playwright-core, and the screenshots' pixels.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

// check(name, ok, detail) prints "ok - name" or "FAIL - name detail";
// step(name, fn) runs fn, a throw failing the step; done() prints the
// counts and exits, non-zero when a check failed.
export function checker() {
	let passed = 0, failed = 0;
	const check = (name, ok, detail = '') => {
		if (ok) { passed++; console.log(`ok - ${name}`); }
		else { failed++; console.log(`FAIL - ${name} ${detail}`); }
	};
	const step = async (name, fn) => {
		try { await fn(); } catch (e) { check(name, false, String(e && e.stack || e)); }
	};
	const done = () => {
		console.log(`${passed} passed, ${failed} failed`);
		process.exit(failed ? 1 : 0);
	};
	return { check, step, done };
}

// A fresh profile at 1200 x 900 and one page; consoleErrors collects the
// page's script errors and console errors but those matching `allowed`.
// close() ends the browser and removes the profile.
export async function launch(allowed) {
	const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctune-chromium-'));
	const ctx = await chromium.launchPersistentContext(userDir, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		viewport: { width: 1200, height: 900 },
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
			'--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
	});
	const page = await ctx.newPage();
	const consoleErrors = [];
	page.on('console', (m) => {
		if (m.type() === 'error' && !(allowed && allowed.test(m.text()))) consoleErrors.push(m.text());
	});
	page.on('pageerror', (e) => consoleErrors.push(String(e)));
	const close = async () => {
		await ctx.close();
		fs.rmSync(userDir, { recursive: true, force: true });
	};
	return { ctx, page, consoleErrors, close };
}

// A PNG screenshot as RGBA rows (8-bit RGB or RGBA, not interlaced: what
// Chromium writes), to look for the colours the page draws with.
export function decodePng(file) {
	const buf = fs.readFileSync(file);
	let pos = 8, w = 0, h = 0, type = 0;
	const idat = [];
	while (pos < buf.length) {
		const len = buf.readUInt32BE(pos), kind = buf.toString('latin1', pos + 4, pos + 8);
		const data = buf.subarray(pos + 8, pos + 8 + len);
		if (kind === 'IHDR') {
			w = data.readUInt32BE(0); h = data.readUInt32BE(4); type = data[9];
			if (data[8] !== 8 || data[12] !== 0 || (type !== 2 && type !== 6))
				throw new Error(`unexpected PNG format in ${file}`);
		} else if (kind === 'IDAT') idat.push(data);
		pos += 12 + len;
	}
	const bpp = type === 6 ? 4 : 3, stride = w * bpp, raw = zlib.inflateSync(Buffer.concat(idat));
	const px = Buffer.alloc(w * h * 4), prev = Buffer.alloc(stride), cur = Buffer.alloc(stride);
	for (let y = 0; y < h; y++) {
		const f = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
		for (let i = 0; i < stride; i++) {
			const a = i >= bpp ? cur[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
			const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
			const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][f];
			cur[i] = (line[i] + pred) & 255;
		}
		for (let x = 0; x < w; x++) {
			px[(y * w + x) * 4] = cur[x * bpp]; px[(y * w + x) * 4 + 1] = cur[x * bpp + 1];
			px[(y * w + x) * 4 + 2] = cur[x * bpp + 2];
		}
		cur.copy(prev);
	}
	return { w, h, px };
}
// Pixels within 12 of colour [r, g, b].
export function countColour(img, [r, g, b]) {
	let n = 0;
	for (let i = 0; i < img.w * img.h; i++)
		if (Math.abs(img.px[i * 4] - r) <= 12 && Math.abs(img.px[i * 4 + 1] - g) <= 12 &&
		    Math.abs(img.px[i * 4 + 2] - b) <= 12) n++;
	return n;
}
