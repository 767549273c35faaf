// test/browser/control.mjs - the client's local control page (client/cl_web.c)
// in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core),
// JavaScript on, against a real `ctune run --web` computing a real WU, started
// by test/client_web_browser.sh.
//
//   node test/browser/control.mjs PAGE_URL ARTIFACT_DIR CTUNE STATE_DIR PROJECT_URL
//
// PAGE_URL is what `ctune web` printed (with the token). The checks: the
// token becomes an HttpOnly SameSite=Strict cookie and leaves the address;
// status, the running task, the project and the loss chart appear; Suspend
// makes `ctune status` say "suspended by user" and Resume undoes it; the
// preferences form shows what the command line forces as such, and saving
// run hours that exclude the present (UTC) makes `ctune status` say
// "outside run hours"; a form on another origin cannot suspend the client;
// at 390 px the page fits and its tables scroll. Each screenshot is decoded
// and must hold the loss line's colour (and, suspended, the badge's).
//
// Prints one line per check and "N passed, M failed"; exits non-zero when a
// check failed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { checker, launch, decodePng, countColour } from './lib.mjs';

const [pageUrl, artDir, ctune, stateDir, projectUrl] = process.argv.slice(2);
if (!pageUrl || !artDir || !ctune || !stateDir || !projectUrl) {
	console.error('usage: node control.mjs PAGE_URL ARTIFACT_DIR CTUNE STATE_DIR PROJECT_URL');
	process.exit(2);
}
const base = new URL(pageUrl).origin;
const port = new URL(pageUrl).port;
fs.mkdirSync(artDir, { recursive: true });

const { check, step, done } = checker();
function status() {
	return execFileSync(ctune, ['--dir', stateDir, 'status'], { encoding: 'utf8' });
}
async function until(what, fn, seconds = 30) {
	const end = Date.now() + seconds * 1000;
	for (;;) {
		if (await fn()) return true;
		if (Date.now() > end) { check(what, false, 'timed out'); return false; }
		await new Promise((r) => setTimeout(r, 200));
	}
}

const LOSS_LINE = [0xe4, 0x57, 0x2e], BADGE_SUSPENDED = [0xb9, 0x77, 0x0e];

// the refused preference below answers 400, which the console reports too
const { ctx, page, consoleErrors, close } = await launch(/status of 400 \(Bad Request\)/);
page.setDefaultTimeout(20000);

async function shot(name, colours) {
	const file = path.join(artDir, name);
	await page.screenshot({ path: file, fullPage: true });
	const img = decodePng(file);
	for (const [what, c, min] of colours)
		check(`${name} shows ${what}`, countColour(img, c) >= min, `${countColour(img, c)} pixels`);
	return img;
}
const ready = () => page.waitForSelector('body[data-ready="1"]');

await step('the page with its token', async () => {
	const resp = await page.goto(pageUrl);
	check('the address with the token opens the page', resp.status() === 200, resp.status());
	check('the token leaves the address bar', page.url() === base + '/', page.url());
	const cookies = await ctx.cookies(base);
	const c = cookies.find((k) => k.name === `ctune_${port}`);
	check('the token is kept as an HttpOnly, SameSite=Strict cookie',
		c && c.httpOnly && c.sameSite === 'Strict' && pageUrl.endsWith(c.value), JSON.stringify(cookies));
	await ready();
});

await step('status, tasks, projects, chart', async () => {
	await until('the activity badge says computing',
		async () => /computing/.test(await page.locator('#activity').textContent()));
	const dl = await page.locator('#status').textContent();
	check('the status lists the device', /Device\s*cpu, C reference/.test(dl), dl);
	check('the status names the running task', /Running\s*wu/.test(dl) || /Running\s*\S+/.test(dl), dl);
	const running = page.locator('#tasks tbody tr', { hasText: 'running' });
	check('the tasks table has the running task', (await running.count()) === 1, await page.locator('#tasks').textContent());
	check('the task row names its project', (await running.textContent()).includes(projectUrl));
	check('the task row has a progress bar', (await running.locator('progress').count()) === 1);
	const proj = page.locator('#projects tbody tr', { hasText: projectUrl });
	check('the projects table has the project', (await proj.count()) === 1, await page.locator('#projects').textContent());
	check('the project row names its user', (await proj.textContent()).includes('user1'));
	await until('the loss chart draws a line of several steps', async () =>
		(await page.locator('#loss-line').count()) === 1 &&
		(await page.locator('#loss-line').getAttribute('points')).split(' ').length >= 3);
	check('the chart draws the trend over the step losses', (await page.locator('#loss-trend').count()) === 1);
	const note = await page.locator('#loss-note').textContent();
	check('the chart says how many steps and the loss now', /^The last \d+ steps of .*loss now \d/.test(note), note);
	await shot('control.png', [['the loss line', LOSS_LINE, 40]]);
});

await step('suspend and resume', async () => {
	check('Resume is off while computing', await page.locator('#resume').isDisabled());
	await page.click('#suspend');
	await until('ctune status says suspended by user', () => /suspended by user/.test(status()));
	await until('the badge says suspended', async () =>
		/suspended: suspended by user/.test(await page.locator('#activity').textContent()));
	check('Suspend is off while suspended', await page.locator('#suspend').isDisabled());
	await shot('suspended.png', [['the loss line', LOSS_LINE, 40], ['the suspended badge', BADGE_SUSPENDED, 100]]);
	await page.click('#resume');
	await until('ctune status says computing again', () => /activity: computing/.test(status()));
	await until('the badge says computing again',
		async () => /^computing$/.test(await page.locator('#activity').textContent()));
});

await step('a form on another origin cannot suspend the client', async () => {
	const other = await ctx.newPage();
	await other.setContent(`<form id="f" method="post" action="${base}/api/suspend">` +
		'<input name="x" value="1"></form>');
	const [resp] = await Promise.all([other.waitForNavigation(), other.evaluate(() => document.getElementById('f').submit())]);
	check('the cross-origin POST is refused', resp && resp.status() === 403, resp && resp.status());
	await other.close();
	await new Promise((r) => setTimeout(r, 1500));
	check('the client still computes', /activity: computing/.test(status()), status());
});

await step('preferences', async () => {
	check('the form shows always as set by the command line',
		await page.locator('#pref-always').isDisabled() &&
		(await page.locator('label[for="pref-always"]').textContent()).includes('set by the command line'));
	check('the form shows the idle minutes in force', (await page.locator('#pref-idle_minutes').inputValue()) === '3');
	const h = new Date().getUTCHours();
	const win = `${String((h + 2) % 24).padStart(2, '0')}:00-${String((h + 3) % 24).padStart(2, '0')}:00`;
	await page.fill('#pref-run_hours', win);
	await page.fill('#pref-idle_minutes', '9');
	await page.click('#prefs-save');
	await until('the form says saved', async () => /^Saved: /.test(await page.locator('#prefs-msg').textContent()));
	const conf = fs.readFileSync(path.join(stateDir, 'prefs.conf'), 'utf8');
	check('prefs.conf has the run hours and idle minutes', conf.includes(`run_hours = ${win}\n`) &&
		conf.includes('idle_minutes = 9\n'), conf);
	check('prefs.conf has only what changed', !/always|max_cpu_percent/.test(conf), conf);
	await until('ctune status says outside run hours', () => /outside run hours/.test(status()));
	await page.reload();
	await ready();
	check('the reloaded form shows the saved run hours',
		(await page.locator('#pref-run_hours').inputValue()) === win, await page.locator('#pref-run_hours').inputValue());
	await page.fill('#pref-max_cpu_percent', '400');
	await page.click('#prefs-save');
	await until('a refused value is reported', async () =>
		/^Not saved: prefs\.conf:\d+: max_cpu_percent: '400' is out of range/.test(await page.locator('#prefs-msg').textContent()));
	check('a refused value changes nothing',
		fs.readFileSync(path.join(stateDir, 'prefs.conf'), 'utf8') === conf);
	await shot('prefs.png', [['the loss line', LOSS_LINE, 40]]);
});

await step('phone width', async () => {
	await page.setViewportSize({ width: 390, height: 844 });
	await page.reload();
	await ready();
	const widths = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth,
		tasks: document.querySelector('#tasks').parentElement.scrollWidth,
		box: document.querySelector('#tasks').parentElement.clientWidth,
		overflow: getComputedStyle(document.querySelector('#tasks').parentElement).overflowX }));
	check('the page fits 390 px', widths.doc <= 390, JSON.stringify(widths));
	check('the tasks table scrolls inside its box', widths.overflow === 'auto' && widths.tasks > widths.box,
		JSON.stringify(widths));
	await until('the chart draws at 390 px', async () => (await page.locator('#loss-line').count()) === 1);
	const img = await shot('phone.png', [['the loss line', LOSS_LINE, 20]]);
	check('the phone screenshot is 390 px wide', img.w === 390, img.w);
});

check('no script errors on the page', consoleErrors.length === 0, JSON.stringify(consoleErrors));
await close();
done();
