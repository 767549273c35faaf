// test/browser/chat.mjs - a chat job's page in headless Chromium
// (JavaScript disabled), from test/chat_job_e2e.sh once real clients have
// computed the job: the conversation of --sample-chat is shown message by
// message as its text (markup in it is text, not markup), and the replies
// of the base model and of every round are shown in order, each the JSON
// API's text for that round.
//
//   node test/browser/chat.mjs BASE_URL JOB_ID CONV.json SCREENSHOT.png
//
// Prints one line per check and exits non-zero when one failed.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [base, job, convPath, shot] = process.argv.slice(2);
const conv = JSON.parse(fs.readFileSync(convPath, 'utf8'));
let failed = 0;
function check(name, ok, detail) {
	console.log(`${ok ? 'ok' : 'FAIL'}: ${name}${ok ? '' : ` (${detail})`}`);
	if (!ok) failed++;
}

const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctune-chromium-'));
const ctx = await chromium.launchPersistentContext(userDir, {
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	javaScriptEnabled: false,
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
		'--disable-component-update', '--no-first-run', '--disable-sync'],
});
try {
	const page = await ctx.newPage();
	page.setDefaultTimeout(15000);
	const resp = await page.goto(`${base}/job/${job}`);
	await page.screenshot({ path: shot, fullPage: true });
	check('the job page answers 200', resp.status() === 200, resp.status());
	const api = await (await page.request.get(`${base}/api/v1/job/${job}`)).json();
	const turns = page.locator('#sample-chat .chat-turn');
	const roles = await turns.evaluateAll((ts) => ts.map((t) => t.dataset.role));
	const texts = await page.locator('#sample-chat .chat-turn pre').allTextContents();
	check('the conversation is shown message by message',
		JSON.stringify(roles) === JSON.stringify(conv.messages.map((m) => m.role)) &&
		JSON.stringify(texts) === JSON.stringify(conv.messages.map((m) => m.content)),
		JSON.stringify({ roles, texts }));
	check('markup in the conversation is text', (await page.locator('#sample-chat b').count()) ===
		conv.messages.length, await page.locator('#sample-chat b').count());
	check('the conversation is visible', await turns.first().isVisible());
	const rows = page.locator('table#samples tr.sample');
	const rounds = await rows.evaluateAll((rs) => rs.map((r) => Number(r.dataset.round)));
	const replies = await page.locator('table#samples pre.sample').allTextContents();
	check('a reply for the base model and every round, in order',
		rounds.length === api.rounds.length + 1 && rounds.every((r, i) => r === i),
		`${JSON.stringify(rounds)} for ${api.rounds.length} rounds`);
	check('each reply is the API\'s text of its round',
		replies.length === api.samples.length &&
		replies.every((t, i) => t === api.samples[i].text && api.samples[i].round === i),
		JSON.stringify(replies));
	check('the table says Reply', (await page.locator('table#samples th', { hasText: 'Reply' }).count()) === 1);
} finally {
	await ctx.close();
	fs.rmSync(userDir, { recursive: true, force: true });
}
console.log(`${failed ? 'FAIL' : 'ok'}: ${failed} failed`);
process.exit(failed ? 1 : 0);
