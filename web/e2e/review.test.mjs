// End-to-end test of the review page in a real browser: Debian's Chromium,
// driven by playwright-core, against a real prsm server on a scratch git
// repository. The agent is played through the same HTTP API a real agent's
// hooks use. Run by ../ci.sh, which sets PRSM_BIN (and CHROMIUM_BIN).
//
// Screenshots (light and dark) go to $PRSM_E2E_ARTIFACTS, default
// web/e2e/artifacts/.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const PRSM = process.env.PRSM_BIN;
const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
const ARTIFACTS = process.env.PRSM_E2E_ARTIFACTS || path.join(here, 'artifacts');
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// The whole file must end in two minutes, whatever hangs.
const watchdog = setTimeout(() => {
  console.error('e2e: watchdog: still running after 120s');
  cleanup();
  process.exit(1);
}, 120_000);
watchdog.unref();

let work; // scratch dir: HOME, PRSM_HOME, the repository
let env; // environment for prsm, git and Chromium
let repo; // the workspace
let info; // server.json
let browser;
let page;
let auto; // session in auto mode
let review; // session in review mode

const ORIGINAL = {
  'a.txt': 'alpha\nbeta\ngamma\n',
  'b.txt': 'one\ntwo\nthree\n',
  'lib/util.js': 'export function add(a, b) {\n  return a + b;\n}\n',
};

function run(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { cwd: repo, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
}

function git(...args) {
  return run('git', args);
}

async function api(method, p, body) {
  const res = await fetch(`http://${info.addr}${p}`, {
    method,
    headers: { Authorization: `Bearer ${info.token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** One agent tool call: pre-tool capture, the write in the worktree, complete. */
async function agentWrite(sess, toolCallId, rel, content, tool = 'Edit') {
  const file = path.join(sess.worktree_path, rel);
  await api('POST', `/sessions/${sess.id}/tool-calls`, {
    tool_call_id: toolCallId,
    tool_name: tool,
    agent_id: 'e2e-agent',
    cwd: sess.worktree_path,
    args: { file_path: file },
  });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  const ans = await api('POST', `/sessions/${sess.id}/tool-calls/${toolCallId}/complete`, { result: { ok: true } });
  assert.equal(ans.records.length, 1, `records of ${toolCallId}`);
  return ans.records[0];
}

async function recordOf(sess, id) {
  const list = await api('GET', `/sessions/${sess.id}/file-changes`);
  const r = list.find((x) => x.id === id);
  assert.ok(r, `record ${id} listed`);
  return r;
}

async function eventually(what, f, ms = 10_000) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const v = await f();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const readWs = (rel) => (fs.existsSync(path.join(repo, rel)) ? fs.readFileSync(path.join(repo, rel), 'utf8') : null);
const change = (rel) => page.getByRole('article', { name: new RegExp(`${rel.replace('.', '\\.')}$`) });

function cleanup() {
  try {
    if (repo && info) run(PRSM, ['stop', '--workspace', repo], { timeout: 20_000 });
  } catch {
    // already gone
  }
  if (work && !process.env.PRSM_E2E_KEEP) fs.rmSync(work, { recursive: true, force: true });
}

before(async () => {
  assert.ok(PRSM && fs.existsSync(PRSM), 'PRSM_BIN names the prsm binary (web/ci.sh builds it)');
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} exists (apt-get install chromium)`);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'prsm-web-e2e-'));
  const home = path.join(work, 'home');
  for (const d of ['home', 'xdg/config', 'xdg/data', 'xdg/cache', 'xdg/runtime', 'tmp', 'prsm']) {
    fs.mkdirSync(path.join(work, d), { recursive: true, mode: 0o700 });
  }
  const gitconfig = path.join(home, '.gitconfig');
  fs.writeFileSync(gitconfig, '[user]\n\tname = E2E\n\temail = e2e@example.com\n[init]\n\tdefaultBranch = main\n');
  env = {
    PATH: process.env.PATH,
    HOME: home,
    PRSM_HOME: path.join(work, 'prsm'),
    GIT_CONFIG_GLOBAL: gitconfig,
    GIT_CONFIG_NOSYSTEM: '1',
    XDG_CONFIG_HOME: path.join(work, 'xdg/config'),
    XDG_DATA_HOME: path.join(work, 'xdg/data'),
    XDG_CACHE_HOME: path.join(work, 'xdg/cache'),
    XDG_RUNTIME_DIR: path.join(work, 'xdg/runtime'),
    TMPDIR: path.join(work, 'tmp'),
    BROWSER: 'false', // prsm ui must never open a real browser here
  };
  repo = path.join(work, 'repo');
  for (const [rel, content] of Object.entries(ORIGINAL)) {
    fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
    fs.writeFileSync(path.join(repo, rel), content);
  }
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'first');

  // The CLI starts the server in the background, as for a user.
  auto = JSON.parse(run(PRSM, ['session', 'start', '--name', 'e2e auto', '--agent', 'e2e-agent', '--json']));
  review = JSON.parse(
    run(PRSM, ['session', 'start', '--name', 'e2e review', '--agent', 'e2e-agent', '--mode', 'review', '--json']),
  );
  const projects = path.join(env.PRSM_HOME, 'projects');
  const [project] = fs.readdirSync(projects);
  info = JSON.parse(fs.readFileSync(path.join(projects, project, 'server.json'), 'utf8'));

  await api('POST', `/sessions/${auto.id}/turns`, { message_index: 1, prompt: 'edit a and b' });
  await agentWrite(auto, 'tc-a', 'a.txt', 'alpha\nBETA by the agent\ngamma\n');
  await agentWrite(auto, 'tc-b', 'b.txt', 'one\ntwo\nthree\nfour\n');
  await agentWrite(auto, 'tc-util', 'lib/util.js', 'export function add(a, b) {\n  return a + b; // sum\n}\n');
  await agentWrite(review, 'tc-r', 'review.md', '# Reviewed\n\nOnly on accept.\n', 'Write');
  assert.equal(readWs('review.md'), null, 'review mode keeps the workspace as it is');

  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, env, timeout: 30_000 });
});

after(async () => {
  await browser?.close();
  cleanup();
});

test('the page opens through the one-time address of prsm ui --print-url', async () => {
  const url = run(PRSM, ['ui', '--print-url']).trim();
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/login\?code=[0-9a-f]{32}$/);
  // Reduced motion: no transitions, so a screenshot right after a theme
  // switch shows the new theme.
  const ctx = await browser.newContext({
    viewport: { width: 1440, height: 960 },
    colorScheme: 'light',
    reducedMotion: 'reduce',
  });
  page = await ctx.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  const res = await page.goto(url);
  assert.equal(res.status(), 200);
  assert.match(page.url(), new RegExp(`^http://${info.addr}/(#/s/[0-9a-f]+)?$`), 'redirected to the clean address');
  await page.getByRole('link', { name: /e2e auto/ }).click();
  const [cookie] = await ctx.cookies();
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  await change('a.txt').waitFor();
  await change('b.txt').waitFor();
  assert.equal(await page.getByRole('region', { name: 'File a.txt' }).count(), 1);

  // The address worked once: another browser cannot use it again.
  const other = await browser.newContext();
  const again = await (await other.newPage()).goto(url);
  assert.equal(again.status(), 403);
  await other.close();
});

test('without a login the page is refused and says how to log in', async () => {
  const ctx = await browser.newContext();
  const p = await ctx.newPage();
  const res = await p.goto(`http://${info.addr}/`);
  assert.equal(res.status(), 401);
  assert.match(await p.textContent('body'), /prsm ui/);
  await ctx.close();
});

test('Reject takes the change out of the workspace', async () => {
  assert.equal(readWs('a.txt'), 'alpha\nBETA by the agent\ngamma\n', 'auto mode applied the change');
  await change('a.txt').getByRole('button', { name: 'Reject', exact: true }).click();
  await eventually('a.txt back on disk', () => readWs('a.txt') === ORIGINAL['a.txt']);
  assert.equal((await recordOf(auto, 'tc-a')).status, 'rejected');
  await change('a.txt').locator('.pill.rejected').waitFor();
  assert.equal(await change('a.txt').getByRole('button', { name: 'Reject', exact: true }).count(), 0);
});

test('Accept marks the change accepted and keeps it', async () => {
  await change('b.txt').getByRole('button', { name: 'Accept', exact: true }).click();
  await eventually('b.txt accepted', async () => (await recordOf(auto, 'tc-b')).status === 'accepted');
  assert.equal(readWs('b.txt'), 'one\ntwo\nthree\nfour\n');
  await change('b.txt').locator('.pill.accepted').waitFor();
});

test('a change made after the page loaded appears without a reload', async () => {
  await page.evaluate(() => {
    window.__prsmMarker = 'same page';
  });
  await agentWrite(auto, 'tc-live', 'live/new.py', 'def hello():\n    return "live"\n', 'Write');
  await change('live/new.py').waitFor({ timeout: 10_000 });
  assert.equal(await page.evaluate(() => window.__prsmMarker), 'same page', 'the page was not reloaded');
  // The diff is drawn and highlighted.
  await change('live/new.py').locator('.d2h-ins').first().waitFor();
  assert.ok((await change('live/new.py').locator('.hljs-keyword').count()) > 0, 'syntax highlighting');
});

test('keyboard: j moves to a change, a accepts it (review mode applies it)', async () => {
  await page.getByRole('link', { name: /e2e review/ }).click();
  await change('review.md').waitFor();
  await page.keyboard.press('j');
  await page.locator('article.selected[data-record-id="tc-r"]').waitFor();
  await page.keyboard.press('a');
  await eventually('review.md applied on accept', () => readWs('review.md') === '# Reviewed\n\nOnly on accept.\n');
  assert.equal((await recordOf(review, 'tc-r')).status, 'accepted');
});

test('screenshots in light and dark', async () => {
  await page.getByRole('link', { name: /e2e auto/ }).click();
  await change('live/new.py').waitFor();
  await page.getByRole('button', { name: 'Side by side' }).click();
  await page.locator('.d2h-file-side-diff').first().waitFor();
  await page.getByRole('button', { name: 'Unified' }).click();
  await page.mouse.move(0, 0);
  const dismiss = page.getByRole('button', { name: 'Dismiss' });
  while ((await dismiss.count()) > 0) await dismiss.first().click();
  await page.emulateMedia({ colorScheme: 'light' });
  await page.screenshot({ path: path.join(ARTIFACTS, 'review-light.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  assert.equal(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), true);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(13, 17, 23)', 'dark theme follows the system');
  await page.screenshot({ path: path.join(ARTIFACTS, 'review-dark.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });
  console.log(`screenshots: ${ARTIFACTS}/review-light.png, review-dark.png`);
});

test('rollback from the timeline: preview, confirm, files back on disk', async () => {
  await page.getByRole('tab', { name: /Timeline/ }).click();
  const cp = page.getByRole('listitem', { name: /turn 1: edit a and b/ });
  await cp.getByRole('button', { name: 'Preview rollback' }).click();
  const preview = cp.getByLabel('Rollback preview');
  await preview.getByText('live/new.py').waitFor();
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: path.join(ARTIFACTS, 'timeline-dark.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });
  await preview.getByRole('button', { name: /Roll back to here/ }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Roll back', exact: true }).click();
  await eventually('b.txt rolled back', () => readWs('b.txt') === ORIGINAL['b.txt']);
  await eventually('live/new.py removed', () => readWs('live/new.py') === null);
  assert.equal(readWs('lib/util.js'), ORIGINAL['lib/util.js']);
  const recs = await api('GET', `/sessions/${auto.id}/file-changes`);
  const undone = recs.filter((r) => r.tool_name !== 'Rollback');
  assert.deepEqual(
    undone.map((r) => [r.id, r.status]),
    undone.map((r) => [r.id, 'rejected']),
    'every change after the checkpoint is rejected',
  );
  // The page offers to undo it.
  await page.getByRole('button', { name: 'Undo' }).waitFor();
});
