// test/browser/control_projects.mjs - the projects part of the client's
// local control page (client/cl_web.c) in headless Chromium, against a real
// `ctune run --web` attached to no project and a real ctune-server with a
// job of three long WUs, both started by test/client_web_projects.sh.
//
//   node test/browser/control_projects.mjs PAGE_URL ARTIFACT_DIR CTUNE STATE_DIR
//        PROJECT_URL EMAIL PASSWORD KEY
//
// Desktop (1200 px): attaching with a wrong key is refused with the
// project's word for it; attaching with the account's e-mail address and
// password attaches (the project row names the user) and the client then
// fetches a task from the server and computes it (`ctune status` and the
// tasks table say so); the project's Suspend parks its task and `ctune
// status` marks the project suspended, Resume computes it again; a form on
// another origin cannot detach it; Detach (confirmed) drops the project.
// Phone (390 px): the page and its attach form fit; attaching with the
// account key attaches again and the client fetches another task. Each
// screenshot is decoded and must hold the badge's colour.
//
// Prints one line per check and "N passed, M failed"; exits non-zero when a
// check failed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { checker, launch, decodePng, countColour } from './lib.mjs';

const [pageUrl, artDir, ctune, stateDir, projectUrl, email, password, key] = process.argv.slice(2);
if (!key) {
	console.error('usage: node control_projects.mjs PAGE_URL ARTIFACT_DIR CTUNE STATE_DIR ' +
		'PROJECT_URL EMAIL PASSWORD KEY');
	process.exit(2);
}
const base = new URL(pageUrl).origin;
fs.mkdirSync(artDir, { recursive: true });

const { check, step, done } = checker();
function status() {
	return execFileSync(ctune, ['--dir', stateDir, 'status'], { encoding: 'utf8' });
}
async function until(what, fn, seconds = 60) {
	const end = Date.now() + seconds * 1000;
	for (;;) {
		if (await fn()) { check(what, true); return true; }
		if (Date.now() > end) { check(what, false, 'timed out'); return false; }
		await new Promise((r) => setTimeout(r, 250));
	}
}
const BADGE_COMPUTING = [0x1d, 0x83, 0x48], BADGE_IDLE = [0x6b, 0x77, 0x85];

// the refused attach answers 400, which the console reports too
const { ctx, page, consoleErrors, close } = await launch(/status of 400 \(Bad Request\)/);
page.setDefaultTimeout(30000);
page.on('dialog', (d) => d.accept());	// Detach asks first

async function shot(name, colours) {
	const file = path.join(artDir, name);
	await page.screenshot({ path: file, fullPage: true });
	const img = decodePng(file);
	for (const [what, c, min] of colours)
		check(`${name} shows ${what}`, countColour(img, c) >= min, `${countColour(img, c)} pixels`);
	return img;
}
const ready = () => page.waitForSelector('body[data-ready="1"]');
const projectRow = () => page.locator('#projects tbody tr', { hasText: projectUrl });
const taskRows = () => page.locator('#tasks tbody tr', { hasText: projectUrl });
async function attach(fields) {
	for (const id of ['attach-url', 'attach-key', 'attach-email', 'attach-password'])
		await page.fill('#' + id, fields[id] || '');
	await page.click('#attach-go');
	await page.waitForFunction(() => !/Asking/.test(document.getElementById('attach-msg').textContent),
		null, { timeout: 90000 });
	return page.locator('#attach-msg').textContent();
}

await step('the page, attached to nothing', async () => {
	await page.goto(pageUrl);
	await ready();
	const t = await page.locator('#projects').textContent();
	check('the projects table says nothing is attached', /not attached to any project/.test(t), t);
	check('the attach form asks for a URL, a key or an e-mail and password',
		(await page.locator('#attach-url').count()) === 1 && (await page.locator('#attach-key').count()) === 1 &&
		(await page.locator('#attach-email').count()) === 1 &&
		(await page.locator('#attach-password').getAttribute('type')) === 'password');
});

await step('a wrong key is refused', async () => {
	const msg = await attach({ 'attach-url': projectUrl, 'attach-key': '0123456789abcdef0123456789abcdef' });
	check('the page says the project does not know the key',
		/^Not attached: .*does not know this account key/.test(msg), msg);
	check('nothing is attached', /not attached to any project/.test(status()), status());
});

await step('attach with e-mail and password, then work comes', async () => {
	const msg = await attach({ 'attach-url': projectUrl, 'attach-email': email, 'attach-password': password });
	check('the page says attached', msg === `Attached to ${projectUrl}.`, msg);
	check('the password field is cleared', (await page.locator('#attach-password').inputValue()) === '');
	await until('the projects table lists the project with its user', async () =>
		(await projectRow().count()) === 1 && (await projectRow().textContent()).includes('user1'));
	await until('ctune status lists the project', () => status().includes(`project ${projectUrl}`));
	await until('the client fetches a task from the project and computes it',
		() => /activity: computing/.test(status()), 120);
	await until('the tasks table shows the project\'s task running', async () =>
		(await page.locator('#tasks tbody tr.running', { hasText: projectUrl }).count()) === 1);
	await until('the badge says computing', async () =>
		/^computing$/.test(await page.locator('#activity').textContent()));
	await shot('projects.png', [['the computing badge', BADGE_COMPUTING, 100]]);
});

await step('suspend and resume the project', async () => {
	await projectRow().locator('button.project_suspend').click();
	await until('ctune status marks the project suspended', () => /\(suspended\)/.test(status()));
	await until('its task is parked: the client computes nothing',
		() => /activity: idle, no work/.test(status()));
	await until('the project row says suspended and offers Resume', async () =>
		(await projectRow().textContent()).includes('(suspended)') &&
		(await projectRow().locator('button.project_resume').count()) === 1);
	check('the state file keeps it', fs.readFileSync(path.join(stateDir, 'client_state.xml'), 'utf8')
		.includes('<suspended>1</suspended>'));
	await until('the badge says idle', async () =>
		/^idle, no work$/.test(await page.locator('#activity').textContent()));
	const img = await shot('project-suspended.png', [['the idle badge', BADGE_IDLE, 100]]);
	check('project-suspended.png has no computing badge', countColour(img, BADGE_COMPUTING) < 20,
		countColour(img, BADGE_COMPUTING));
	await projectRow().locator('button.project_resume').click();
	await until('the client computes the task again', () =>
		/activity: computing/.test(status()) && !/\(suspended\)/.test(status()));
});

await step('a form on another origin cannot detach', async () => {
	const other = await ctx.newPage();
	await other.setContent(`<form id="f" method="post" action="${base}/api/detach">` +
		`<input name="url" value="${projectUrl}"></form>`);
	const [resp] = await Promise.all([other.waitForNavigation(),
		other.evaluate(() => document.getElementById('f').submit())]);
	check('the cross-origin POST is refused', resp && resp.status() === 403, resp && resp.status());
	await other.close();
	check('the project is still attached', status().includes(`project ${projectUrl}`), status());
});

await step('detach', async () => {
	await projectRow().locator('button.detach').click();
	await until('ctune status says attached to nothing', () => /not attached to any project/.test(status()));
	await until('the projects table is empty again', async () => (await projectRow().count()) === 0);
	check('the state file no longer has it', !fs.readFileSync(path.join(stateDir, 'client_state.xml'), 'utf8')
		.includes(projectUrl));
});

await step('phone width: attach with the account key', async () => {
	await page.setViewportSize({ width: 390, height: 844 });
	await page.reload();
	await ready();
	const widths = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth,
		form: document.getElementById('attach').getBoundingClientRect().right,
		input: document.getElementById('attach-url').getBoundingClientRect().right }));
	check('the page and the attach form fit 390 px', widths.doc <= 390 && widths.form <= 390 &&
		widths.input <= 390, JSON.stringify(widths));
	const msg = await attach({ 'attach-url': projectUrl, 'attach-key': key });
	check('the page says attached', msg === `Attached to ${projectUrl}.`, msg);
	await until('the client fetches another task and computes it',
		() => /activity: computing/.test(status()), 120);
	await until('the tasks table shows it', async () => (await taskRows().count()) >= 1);
	await until('the badge says computing', async () =>
		/^computing$/.test(await page.locator('#activity').textContent()));
	const form = await page.evaluate(() => {
		const u = document.getElementById('attach-url').getBoundingClientRect();
		const l = document.querySelector('label[for=attach-url]').getBoundingClientRect();
		return { label: l.bottom, input: u.top, width: u.width };
	});
	check('at 390 px the URL field is under its label, full width', form.input >= form.label - 1 &&
		form.width > 300, JSON.stringify(form));
	const img = await shot('projects-phone.png', [['the computing badge', BADGE_COMPUTING, 100]]);
	check('the phone screenshot is 390 px wide', img.w === 390, img.w);
});

check('no script errors on the page', consoleErrors.length === 0, JSON.stringify(consoleErrors));
await close();
done();
