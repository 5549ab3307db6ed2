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
import { isDeepStrictEqual } from 'node:util';
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
  'hunks.txt': 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n',
  'blame.txt': 'first\nsecond\nthird\n',
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

/**
 * One agent tool call: pre-tool capture, the write in the worktree, complete.
 * meanwhile, if given, runs between the capture and the write: the user's
 * own edit while the agent works.
 */
async function agentWrite(sess, toolCallId, rel, content, tool = 'Edit', meanwhile) {
  const file = path.join(sess.worktree_path, rel);
  await api('POST', `/sessions/${sess.id}/tool-calls`, {
    tool_call_id: toolCallId,
    tool_name: tool,
    agent_id: 'e2e-agent',
    cwd: sess.worktree_path,
    args: { file_path: file },
  });
  meanwhile?.();
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

const readIn = (root, rel) =>
  fs.existsSync(path.join(root, rel)) ? fs.readFileSync(path.join(root, rel), 'utf8') : null;
const readWs = (rel) => readIn(repo, rel);
const writeWs = (rel, content) => {
  fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
  fs.writeFileSync(path.join(repo, rel), content);
};

/** A new session through the API, as `prsm session start` does it. */
const startSession = (name, mode = 'auto') => api('POST', '/sessions', { name, agent_id: 'e2e-agent', mode });

/** The status of each record of sess, by id. */
async function statuses(sess) {
  const list = await api('GET', `/sessions/${sess.id}/file-changes`);
  return Object.fromEntries(list.map((r) => [r.id, r.status]));
}

/** The page's link to a session in the sidebar (names here are no prefix of another). */
const sessionLink = (name) => page.getByRole('link', { name: new RegExp(`^${name} `) });
/** One change by its record id. */
const record = (id) => page.locator(`article[data-record-id="${id}"]`);
/** A file's card, and the Accept/Reject of all its changes. */
const fileCard = (rel) => page.getByRole('region', { name: `File ${rel}` });
const fileButton = (rel, name) =>
  fileCard(rel).getByRole('group', { name: `All changes of ${rel}` }).getByRole('button', { name, exact: true });
/** The session header's Accept/Reject. */
const sessionButton = (name, button) =>
  page.getByRole('group', { name: `Session ${name}` }).getByRole('button', { name: button, exact: true });
/** The top bar's Accept/Reject of everything. */
const everythingButton = (name) =>
  page.getByRole('banner').getByRole('group', { name: 'Everything' }).getByRole('button', { name, exact: true });

/** test, with a full-page screenshot in ARTIFACTS when it fails; opts as node:test's (skip). */
function uiTest(name, fn, opts = {}) {
  test(name, opts, async (t) => {
    try {
      await fn(t);
    } catch (e) {
      if (page) {
        const file = path.join(ARTIFACTS, `failed-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}.png`);
        await page.screenshot({ path: file, fullPage: true, timeout: 5_000 }).then(
          () => console.error(`screenshot of the failure: ${file}`),
          () => {},
        );
      }
      throw e;
    }
  });
}
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

uiTest('the page opens through the one-time address of prsm ui --print-url', async () => {
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

uiTest('prsm ui opens a login file: no secret on the command line, logged in on the review page', async () => {
  // The browser opener is a script that records its arguments, as $BROWSER.
  const argvFile = path.join(work, 'opener-argv.txt');
  const opener = path.join(work, 'opener.sh');
  fs.writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$@" > '${argvFile}'\n`, { mode: 0o755 });
  const out = run(PRSM, ['ui'], { env: { ...env, BROWSER: opener } });
  assert.match(out, /^opened the review page in your browser \(http:\/\/127\.0\.0\.1:\d+\)$/m);
  const argv = fs.readFileSync(argvFile, 'utf8').trimEnd().split('\n');
  assert.equal(argv.length, 1, `one argument: ${argv}`);
  const [address] = argv;
  assert.match(address, /^file:\/\/\//, 'the opener got a file address');
  const file = fileURLToPath(address);
  assert.ok(file.startsWith(path.join(env.PRSM_HOME, 'projects') + path.sep), `${file} under PRSM_HOME`);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700);
  const code = fs.readFileSync(file, 'utf8').match(/name="code" value="([0-9a-f]{32})"/)?.[1];
  assert.ok(code, 'the login file holds a code');
  assert.ok(!address.includes(code) && !out.includes(code), 'no code on the command line or the terminal');

  // A fresh browser opens what the opener got and ends on the review page,
  // logged in.
  const ctx = await browser.newContext();
  const p = await ctx.newPage();
  p.on('pageerror', (e) => console.error('page error:', e.message));
  await p.goto(address);
  await p.waitForURL(`http://${info.addr}/**`);
  await p.getByRole('link', { name: /e2e auto/ }).click();
  await p.getByRole('region', { name: 'File b.txt' }).waitFor();
  assert.match(p.url(), new RegExp(`^http://${info.addr}/(#/s/[0-9a-f]+)?$`), 'the clean address');
  const [cookie] = await ctx.cookies();
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  // The page's live updates (EventSource, by the cookie) are connected.
  await p.locator('span.live', { hasText: 'Live' }).waitFor();
  assert.equal(fs.existsSync(file), false, 'the login file is gone once used');
  await ctx.close();
});

test('without a login the page is refused and says how to log in', async () => {
  const ctx = await browser.newContext();
  const p = await ctx.newPage();
  const res = await p.goto(`http://${info.addr}/`);
  assert.equal(res.status(), 401);
  assert.match(await p.textContent('body'), /prsm ui/);
  await ctx.close();
});

uiTest('Reject takes the change out of the workspace', async () => {
  assert.equal(readWs('a.txt'), 'alpha\nBETA by the agent\ngamma\n', 'auto mode applied the change');
  await change('a.txt').getByRole('button', { name: 'Reject', exact: true }).click();
  // The file is back on disk a moment before the reject's answer (and its record) is done.
  await eventually('a.txt rejected', async () => (await recordOf(auto, 'tc-a')).status === 'rejected');
  assert.equal(readWs('a.txt'), ORIGINAL['a.txt']);
  await change('a.txt').locator('.pill.rejected').waitFor();
  assert.equal(await change('a.txt').getByRole('button', { name: 'Reject', exact: true }).count(), 0);
});

uiTest('Accept marks the change accepted and keeps it', async () => {
  await change('b.txt').getByRole('button', { name: 'Accept', exact: true }).click();
  await eventually('b.txt accepted', async () => (await recordOf(auto, 'tc-b')).status === 'accepted');
  assert.equal(readWs('b.txt'), 'one\ntwo\nthree\nfour\n');
  await change('b.txt').locator('.pill.accepted').waitFor();
});

uiTest('a change made after the page loaded appears without a reload', async () => {
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

uiTest('keyboard: j moves to a change, a accepts it (review mode applies it)', async () => {
  await page.getByRole('link', { name: /e2e review/ }).click();
  await change('review.md').waitFor();
  await page.keyboard.press('j');
  await page.locator('article.selected[data-record-id="tc-r"]').waitFor();
  await page.keyboard.press('a');
  await eventually('review.md applied on accept', () => readWs('review.md') === '# Reviewed\n\nOnly on accept.\n');
  // The workspace file is written before the record is marked accepted.
  await eventually('tc-r accepted', async () => (await recordOf(review, 'tc-r')).status === 'accepted');
  await record('tc-r').locator('.pill.accepted').waitFor();
});

uiTest('screenshots in light and dark', async () => {
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

uiTest('rollback from the timeline: preview, confirm, files back on disk', async () => {
  await page.getByRole('tab', { name: /Timeline/ }).click();
  const cp = page.getByRole('listitem', { name: /turn 1: edit a and b/ });
  await cp.getByRole('button', { name: 'Preview rollback' }).click();
  const preview = cp.getByLabel('Rollback preview');
  await preview.locator('.ops code', { hasText: 'live/new.py' }).waitFor();
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: path.join(ARTIFACTS, 'timeline-dark.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });
  await preview.getByRole('button', { name: /Roll back to here/ }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Roll back', exact: true }).click();
  // The page offers to undo it once the rollback answered: every file is
  // written by then (they are written at once, in no particular order).
  await page.getByRole('button', { name: 'Undo' }).waitFor();
  assert.equal(readWs('b.txt'), ORIGINAL['b.txt'], 'b.txt rolled back');
  assert.equal(readWs('live/new.py'), null, 'live/new.py removed');
  assert.equal(readWs('lib/util.js'), ORIGINAL['lib/util.js'], 'lib/util.js rolled back');
  const recs = await api('GET', `/sessions/${auto.id}/file-changes`);
  assert.deepEqual(
    recs.map((r) => [r.id, r.status]),
    recs.map((r) => [r.id, 'rewound']),
    'every change after the checkpoint is rewound: set aside, not rejected',
  );
  assert.deepEqual(recs.map((r) => r.id).sort(), ['tc-a', 'tc-b', 'tc-live', 'tc-util'], 'no Rollback record');
});

// ---- a rewind restores the session as it was, decisions included --------------

uiTest('rollback to a named checkpoint restores the changes and their decisions of then; later ones are rewound; Undo brings them back', async (t) => {
  const BASE = 'early base\n';
  writeWs('rw/early.txt', BASE); // the user's file, part of the session's base
  const sess = await startSession('rewind');
  // Nothing of this session stays pending for the tests after it, whatever fails.
  t.after(() => api('POST', `/sessions/${sess.id}/file-changes/reject-all`).catch(() => {}));
  const EARLY = 'early base\nearly by the agent\n';
  await agentWrite(sess, 'tc-rw-early', 'rw/early.txt', EARLY);
  await agentWrite(sess, 'tc-rw-kept', 'rw/kept.txt', 'kept\n', 'Write');
  const cp = await api('POST', `/sessions/${sess.id}/checkpoints`, { name: 'rw-named', annotation: 'two changes in' });

  // After the checkpoint: a decision on a change made before it, and later
  // changes with one decided.
  await api('POST', `/sessions/${sess.id}/file-changes/tc-rw-early/reject`);
  assert.equal(readWs('rw/early.txt'), BASE, 'the reject took the change out');
  await agentWrite(sess, 'tc-rw-late', 'rw/late.txt', 'late\n', 'Write');
  // A shell command: its record is named by the command, not a changed line.
  const more = 'kept\nmore from a shell\n';
  const command = "printf 'more from a shell\\n' >> rw/kept.txt";
  await api('POST', `/sessions/${sess.id}/tool-calls`, {
    tool_call_id: 'tc-rw-bash',
    tool_name: 'Bash',
    agent_id: 'e2e-agent',
    cwd: sess.worktree_path,
    args: { command },
  });
  fs.writeFileSync(path.join(sess.worktree_path, 'rw/kept.txt'), more);
  await api('POST', `/sessions/${sess.id}/tool-calls/tc-rw-bash/complete`, { result: { ok: true } });
  await api('POST', `/sessions/${sess.id}/file-changes/tc-rw-late/accept`);
  const decided = await statuses(sess);
  assert.deepEqual(decided, { 'tc-rw-early': 'rejected', 'tc-rw-kept': 'pending', 'tc-rw-late': 'accepted', 'tc-rw-bash:0': 'pending' });
  const onDisk = () => ['rw/early.txt', 'rw/kept.txt', 'rw/late.txt'].map(readWs);
  const beforeDisk = onDisk();
  assert.deepEqual(beforeDisk, [BASE, more, 'late\n']);
  const plan = await api('GET', `/sessions/${sess.id}/checkpoints/${cp.id}/rewind/preview`);
  assert.ok(plan.summary.length > 0, 'the plan says in words what the rollback does');

  // Roll back through the page: the preview says it in words, first.
  await sessionLink('rewind').click();
  await record('tc-rw-bash:0').waitFor();
  await page.getByRole('tab', { name: /Timeline/ }).click();
  const item = page.getByRole('listitem', { name: 'Checkpoint rw-named' });
  await item.getByRole('button', { name: 'Preview rollback' }).click();
  const preview = item.getByLabel('Rollback preview');
  await preview.locator('.plan-summary p').first().waitFor();
  assert.deepEqual(await preview.locator('.plan-summary p').allInnerTexts(), plan.summary);
  const decisions = preview.getByRole('list', { name: 'Decisions the rollback changes' });
  const decision = async (id) => (await decisions.locator(`li[data-record-id="${id}"] .pill`).allInnerTexts()).join(' → ');
  await decisions.locator('li').first().waitFor();
  assert.equal(await decision('tc-rw-early'), 'rejected → pending', 'the reject after the checkpoint is undone');
  assert.equal(await decision('tc-rw-late'), 'accepted → rewound');
  assert.equal(await decision('tc-rw-bash:0'), 'pending → rewound');
  assert.equal(await decisions.locator('li[data-record-id="tc-rw-kept"]').count(), 0, 'a change whose status stays is not listed');
  await preview.getByRole('button', { name: /Roll back to here/ }).click();
  const dialog = page.getByRole('dialog', { name: 'Roll back to “rw-named”?' });
  await dialog.getByText(plan.summary[0], { exact: true }).waitFor();
  await dialog.getByRole('list', { name: 'Decisions the rollback changes' }).getByText('rw/early.txt (Edit): rejected → pending again').waitFor();
  await dialog.getByRole('button', { name: 'Roll back', exact: true }).click();
  const undo = page.getByRole('status').filter({ hasText: 'Rolled back to “rw-named”' }).getByRole('button', { name: 'Undo' });
  await undo.waitFor();

  // The session as it was at the checkpoint: its changes with their
  // statuses of then, the later ones rewound, no new record.
  const recs = await api('GET', `/sessions/${sess.id}/file-changes`);
  assert.deepEqual(
    Object.fromEntries(recs.map((r) => [r.id, r.status])),
    { 'tc-rw-early': 'pending', 'tc-rw-kept': 'pending', 'tc-rw-late': 'rewound', 'tc-rw-bash:0': 'rewound' },
    'statuses of then; the later changes rewound',
  );
  assert.deepEqual(recs.filter((r) => r.tool_name === 'Rollback').map((r) => r.id), [], 'no Rollback record');
  assert.deepEqual(onDisk(), [EARLY, 'kept\n', null], 'the files as at the checkpoint, the rejected change back');
  assert.equal((await api('GET', `/sessions/${sess.id}`)).pending_count, 2, 'rewound changes are not pending');
  // A rewound change cannot be decided.
  await assert.rejects(api('POST', `/sessions/${sess.id}/file-changes/tc-rw-late/accept`), / 409 /);

  // The page: the checkpoint's changes, pending again; the later ones in a
  // collapsed group of their own, with nothing to decide.
  await page.getByRole('tab', { name: /Changes/ }).click();
  await record('tc-rw-early').locator('.record-head .pill.pending').waitFor();
  await record('tc-rw-kept').locator('.record-head .pill.pending').waitFor();
  await page.locator('.session-head .summary', { hasText: '2 pending · 2 rewound' }).waitFor();
  const group = page.locator('details.rewound-group');
  await group.locator('summary', { hasText: 'Rewound' }).waitFor();
  assert.equal(await group.locator('summary .count').innerText(), '2');
  assert.equal(await group.evaluate((el) => el.open), false, 'the rewound group is collapsed');
  assert.equal(await page.locator('.files > section.file article[data-record-id="tc-rw-late"]').count(), 0);
  assert.equal(await fileCard('rw/late.txt').count(), 0, 'a file only rewound changes touched has no card');
  await group.locator('summary').click();
  await group.locator('article[data-record-id="tc-rw-late"] .pill.rewound').waitFor();
  await group.locator('article[data-record-id="tc-rw-bash:0"] .pill.rewound').waitFor();
  assert.equal(await group.getByRole('button', { name: /^(Accept|Reject)$/ }).count(), 0, 'no Accept or Reject on a rewound change');
  // A shell command's change is summed up by its command; the id stays whole.
  const bashRow = group.locator('article[data-record-id="tc-rw-bash:0"]');
  assert.deepEqual(
    (await bashRow.locator('.record-head > span, .record-head > code').allInnerTexts()).slice(0, 3),
    ['Bash', 'rw/kept.txt', command],
    'the tool, the file, the command',
  );
  assert.equal(await bashRow.locator('.record-meta code.tcid').innerText(), 'tc-rw-bash:0');
  // The header's pending counts skip them.
  await fileCard('rw/kept.txt').getByText('1 change, 1 pending').waitFor();
  await page.screenshot({ path: path.join(ARTIFACTS, 'rewound.png'), fullPage: true });

  // Undo: the later changes are back with their statuses, the files as before.
  await undo.click();
  await eventually('the rollback undone', async () => isDeepStrictEqual(await statuses(sess), decided));
  const back = await api('GET', `/sessions/${sess.id}/file-changes`);
  assert.deepEqual(back.filter((r) => r.tool_name === 'Rollback').map((r) => r.id), [], 'no Rollback record after the Undo');
  assert.deepEqual(onDisk(), beforeDisk, 'the files as before the rollback');
  await record('tc-rw-late').locator('.record-head .pill.accepted').waitFor();
  await record('tc-rw-early').locator('.record-head .pill.rejected').waitFor();
  await group.waitFor({ state: 'detached' });
});

// ---- conflicts --------------------------------------------------------------

const SETTINGS = '[server]\nhost = localhost\nport = 8080\n\n[log]\nlevel = info\n';
const NAMES = 'ada\ngrace\nlinus\n';

uiTest("a conflict shows both sides plainly and is resolved: Keep mine, Accept asks, Take agent's, Merge in editor", async () => {
  // The user's own files, not committed: part of the session's base.
  writeWs('settings.ini', SETTINGS);
  writeWs('names.txt', NAMES);
  const sess = await startSession('conflicts');
  assert.equal(readIn(sess.worktree_path, 'settings.ini'), SETTINGS, 'the worktree starts from the workspace');

  // While the agent edits a line, the user edits the same line in the workspace.
  const mine = SETTINGS.replace('port = 8080', 'port = 9090 # mine');
  const agents = SETTINGS.replace('port = 8080', 'port = 3000 # agent');
  const rs = await agentWrite(sess, 'tc-conf-settings', 'settings.ini', agents, 'Edit', () =>
    writeWs('settings.ini', mine),
  );
  assert.equal(rs.sync_state, 'conflict');
  assert.equal(readWs('settings.ini'), mine, "a conflict leaves the user's file as it is");
  const mineNames = NAMES.replace('grace', 'Grace Hopper (mine)');
  const agentNames = NAMES.replace('grace', 'grace h. (agent)');
  const rn = await agentWrite(sess, 'tc-conf-names', 'names.txt', agentNames, 'Edit', () =>
    writeWs('names.txt', mineNames),
  );
  assert.equal(rn.sync_state, 'conflict');
  assert.equal(readWs('names.txt'), mineNames);

  await sessionLink('conflicts').click();
  await page.locator('.session-head .summary', { hasText: '2 conflicts' }).waitFor();
  // Made after the page's clock last ticked, yet not "in 20 seconds".
  assert.equal(await page.locator('time', { hasText: /^in / }).count(), 0, 'no time in the future');
  await fileCard('settings.ini').locator('.file-head .pill.conflict').waitFor();
  const conf = record('tc-conf-settings');
  await conf.locator('.pill.sync-conflict').waitFor();
  await conf.getByRole('note').getByText(/left your file exactly as it is/).waitFor();

  // Both sides as text: the user's workspace version and the agent's.
  const sides = conf.locator('.conflict > .patch');
  await sides.getByText('Your workspace (left as it is)').waitFor();
  await sides.getByText("Agent's version (in its worktree)").waitFor();
  await sides.locator('.d2h-del', { hasText: 'port = 9090 # mine' }).waitFor();
  await sides.locator('.d2h-ins', { hasText: 'port = 3000 # agent' }).waitFor();
  await sides.locator('.d2h-cntx', { hasText: 'host = localhost' }).first().waitFor();
  // Side by side: yours on the left, the agent's on the right.
  await page.getByRole('button', { name: 'Side by side' }).click();
  const left = sides.locator('.d2h-file-side-diff').nth(0);
  const right = sides.locator('.d2h-file-side-diff').nth(1);
  await left.getByText('port = 9090 # mine').waitFor();
  await right.getByText('port = 3000 # agent').waitFor();
  assert.equal(await left.getByText('port = 3000 # agent').count(), 0, "the agent's line is not on your side");
  assert.equal(await right.getByText('port = 9090 # mine').count(), 0, 'your line is not on the agent side');
  await conf.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(ARTIFACTS, 'conflict-light.png'), fullPage: true });
  await page.getByRole('button', { name: 'Unified' }).click();
  await record('tc-conf-names').locator('.conflict .d2h-del', { hasText: 'Grace Hopper (mine)' }).waitFor();
  await record('tc-conf-names').locator('.conflict .d2h-ins', { hasText: 'grace h. (agent)' }).waitFor();

  // The user edits on; the page reads the workspace again when asked.
  const mine2 = mine.replace('level = info', 'level = debug');
  writeWs('settings.ini', mine2);
  await conf.getByRole('button', { name: 'Reload both sides' }).click();
  await sides.locator('.d2h-del', { hasText: 'level = debug' }).waitFor();

  // Keep mine drops the agent's change: out of its worktree; your file untouched.
  const bar = (r) => r.getByRole('group', { name: /^Resolve the conflict of / });
  assert.deepEqual(
    await bar(conf).getByRole('button').allTextContents(),
    ['Keep mine', "Take agent's", 'Merge in editor'],
    'a conflict offers the three ways out',
  );
  await bar(conf).getByRole('button', { name: 'Keep mine', exact: true }).click();
  await eventually('the conflicting change rejected', async () => (await recordOf(sess, 'tc-conf-settings')).status === 'rejected');
  assert.equal(readWs('settings.ini'), mine2, 'your file is left exactly as it is');
  assert.equal(readIn(sess.worktree_path, 'settings.ini'), SETTINGS, "the agent's change left its worktree");
  await conf.locator('.pill.rejected').waitFor();
  assert.equal(await conf.locator('.conflict').count(), 0, 'a rejected conflict is no longer shown as one');
  assert.equal(await bar(conf).count(), 0, 'nothing left to resolve');
  await fileCard('settings.ini').locator('.file-head .pill.conflict').waitFor({ state: 'detached' });

  // Accept on a conflict does not accept: it asks which version is meant.
  const cn = record('tc-conf-names');
  await cn.getByRole('button', { name: 'Accept', exact: true }).click();
  const ask = page.getByRole('dialog', { name: /names\.txt is in conflict/ });
  await ask.waitFor(); // the click opens it a moment later
  assert.deepEqual(
    await ask.getByRole('button').allTextContents(),
    ['Cancel', 'Keep mine', "Take agent's", 'Merge in editor'],
  );
  await ask.getByRole('button', { name: 'Cancel', exact: true }).click();
  await ask.waitFor({ state: 'hidden' });
  const rn2 = await recordOf(sess, 'tc-conf-names');
  assert.deepEqual([rn2.status, rn2.sync_state], ['pending', 'conflict'], 'Cancel changes nothing');
  assert.equal(readWs('names.txt'), mineNames);
  // Take agent's: your workspace file becomes the agent's version.
  await cn.getByRole('button', { name: 'Accept', exact: true }).click();
  await ask.getByRole('button', { name: "Take agent's", exact: true }).click();
  await eventually('the agent version taken', async () => {
    const r = await recordOf(sess, 'tc-conf-names');
    return r.status === 'accepted' && r.sync_state === 'synced';
  });
  assert.equal(readWs('names.txt'), agentNames, "your file is the agent's version");
  await cn.locator('.pill.accepted').waitFor();
  await cn.locator('.pill.sync-synced').waitFor();
  assert.equal(await cn.locator('.pill.sync-conflict').count(), 0, 'no longer a conflict');
  await page.locator('.session-head .summary strong', { hasText: /^0 pending$/ }).waitFor();
  assert.equal(await page.locator('.session-head .summary .conflict-text').count(), 0, 'no conflict counted');

  // Merge in editor: both versions between git's markers in your file; once
  // you remove them, prsm accepts the change and the page shows it live.
  const BASE3 = 'red\ngreen\nblue\n';
  writeWs('colors.txt', BASE3);
  const sess3 = await startSession('conflict markers');
  const mine3 = BASE3.replace('green', 'green (mine)');
  const agent3 = BASE3.replace('green', 'GREEN (agent)');
  const r3 = await agentWrite(sess3, 'tc-conf-colors', 'colors.txt', agent3, 'Edit', () => writeWs('colors.txt', mine3));
  assert.equal(r3.sync_state, 'conflict');
  await sessionLink('conflict markers').click();
  const cc = record('tc-conf-colors');
  await bar(cc).getByRole('button', { name: 'Merge in editor', exact: true }).click();
  await cc.getByRole('note').getByText('Merge in your editor.').waitFor();
  const marked = readWs('colors.txt');
  assert.match(
    marked,
    /^red\n<<<<<<< yours\ngreen \(mine\)\n=======\nGREEN \(agent\)\n>>>>>>> agent \(tc-conf-colors\)\nblue\n$/,
    'both versions between markers',
  );
  assert.equal(await bar(cc).count(), 0, 'no resolve buttons while the merge waits in the editor');
  // The a key does not ask again (that would write markers twice): it says what to do.
  await cc.getByRole('note').click();
  await page.locator('article.selected[data-record-id="tc-conf-colors"]').waitFor();
  await page.keyboard.press('a');
  await page.getByRole('status').filter({ hasText: 'Merge colors.txt in your editor' }).waitFor();
  assert.equal(await page.getByRole('dialog', { name: /is in conflict/ }).count(), 0, 'no question');
  assert.equal((await recordOf(sess3, 'tc-conf-colors')).status, 'pending');
  writeWs('colors.txt', 'red\ngreen and GREEN\nblue\n');
  await cc.locator('.pill.accepted').waitFor({ timeout: 15_000 });
  await cc.getByText('Conflict resolved in your editor.').waitFor();
  assert.equal(await cc.getByRole('note').count(), 0, 'the merge note is gone');
  const done3 = await recordOf(sess3, 'tc-conf-colors');
  assert.deepEqual([done3.status, done3.sync_state], ['accepted', 'synced']);
  assert.equal(readWs('colors.txt'), 'red\ngreen and GREEN\nblue\n', 'your merge is kept');
});

// ---- words and numbers --------------------------------------------------------

uiTest('words agree with their counts, and a binary file shows its size change', async () => {
  // A binary file of the user's, which the agent rewrites larger.
  const before = Buffer.alloc(1000, 0);
  const after = Buffer.alloc(5000, 0xff);
  before[0] = 0x89;
  fs.mkdirSync(path.join(repo, 'img'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'img/blob.bin'), before);
  const sess = await startSession('words');
  const rec = await agentWrite(sess, 'tc-bin', 'img/blob.bin', after, 'Write');
  assert.equal(rec.binary, true);
  await sessionLink('words').click();
  const head = fileCard('img/blob.bin').locator('.file-head');
  await head.getByText('1,000 bytes → 4.9 KiB').waitFor();
  assert.doesNotMatch(await head.innerText(), /\+0/, 'no "+0 −0" for a binary file');
  await record('tc-bin').locator('.record-head', { hasText: 'binary, 1,000 bytes → 4.9 KiB' }).waitFor();

  // One pending change: the verb agrees.
  await sessionButton('words', 'Reject').click();
  const dialog = page.getByRole('dialog', { name: 'Reject every pending change of “words”?' });
  await dialog.getByText('1 pending change leaves your workspace').waitFor();
  await dialog.getByRole('button', { name: 'Reject 1 change', exact: true }).waitFor();
  await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();

  // One file changes back in a rollback.
  await page.getByRole('tab', { name: /Timeline/ }).click();
  const cp = page.getByRole('listitem', { name: /^Checkpoint before Write/ }).first();
  await cp.getByRole('button', { name: 'Preview rollback' }).click();
  await cp.getByRole('button', { name: /Roll back to here/ }).click();
  const rb = page.getByRole('dialog', { name: /^Roll back to/ });
  await rb.getByText(/^1 file in the worktree changes back to this checkpoint/).waitFor();
  await rb.getByRole('button', { name: 'Cancel', exact: true }).click();
  await page.getByRole('tab', { name: /Changes/ }).click();
  await api('POST', `/sessions/${sess.id}/file-changes/reject-all`);
  assert.deepEqual(fs.readFileSync(path.join(repo, 'img/blob.bin')), before);
});

// ---- labels --------------------------------------------------------------------

uiTest('a row leads with the tool, the file and its first changed line; the id is whole and copyable; Watch is named plainly', async () => {
  const sess = await startSession('labels');
  const id = 'toolu_01E8LongToolCallIdOfAnAgent';
  await agentWrite(sess, id, 'src/app.py', '\nprint("hello from the agent")\nx = 1\n', 'Write');
  // A change no hook announced: a shell command's, seen by the watcher.
  fs.writeFileSync(path.join(sess.worktree_path, 'seen.txt'), 'made by a shell\n');
  const watched = await eventually('the watcher records seen.txt', async () =>
    (await api('GET', `/sessions/${sess.id}/file-changes`)).find((r) => r.rel_path === 'seen.txt'),
  );
  assert.equal(watched.tool_name, 'Watch');
  await sessionLink('labels').click();
  const row = record(id).locator('.record-head');
  await row.waitFor();
  const lead = await row.locator('> span, > code').allInnerTexts();
  assert.deepEqual(lead.slice(0, 2), ['Write', 'src/app.py'], 'the tool and the file first');
  await row.locator('.summary-line', { hasText: 'print("hello from the agent")' }).waitFor();
  assert.equal(await row.getByText(id).count(), 0, 'no id in the lead');
  // The whole id, once, selectable and copyable.
  const meta = record(id).locator('.record-meta');
  assert.equal(await meta.locator('code.tcid').innerText(), id);
  assert.equal(await meta.locator('code.tcid').evaluate((el) => getComputedStyle(el).userSelect), 'all');
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: `http://${info.addr}` });
  await meta.getByRole('button', { name: 'Copy id' }).click();
  await meta.getByRole('button', { name: 'Copy id' }).getByText('Copied').waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), id);
  // Watch, as a user reads it.
  const w = record(watched.id).locator('.record-head');
  await w.locator('.tool', { hasText: 'seen by the watcher' }).waitFor();
  assert.equal(await w.locator('.tool', { hasText: /^Watch$/ }).count(), 0);
  await w.locator('.summary-line', { hasText: 'made by a shell' }).waitFor();
  await api('POST', `/sessions/${sess.id}/file-changes/reject-all`);
});

// ---- keyboard: the auto-advance, said and switchable ----------------------------

uiTest('keyboard: a moves on to the next change, ? says so, and a setting (kept) turns it off', async () => {
  const sess = await startSession('keys');
  for (const n of [1, 2, 3]) await agentWrite(sess, `tc-key-${n}`, `keys/k${n}.txt`, `k${n}\n`, 'Write');
  await sessionLink('keys').click();
  await record('tc-key-3').waitFor();
  await page.keyboard.press('?');
  const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await help.getByText('accept the selected change, then move to the next pending one').waitFor();
  await help.getByText('reject the selected change, then move to the next pending one').waitFor();
  const setting = help.getByRole('checkbox', { name: /move to the next pending change/ });
  assert.equal(await setting.isChecked(), true, 'on by default');
  await help.getByRole('button', { name: 'Close' }).click();
  await page.keyboard.press('j');
  await page.locator('article.selected[data-record-id="tc-key-1"]').waitFor();
  await page.keyboard.press('a');
  await eventually('tc-key-1 accepted', async () => (await recordOf(sess, 'tc-key-1')).status === 'accepted');
  await page.locator('article.selected[data-record-id="tc-key-2"]').waitFor();

  // Off: the selection stays on the change just decided.
  await page.keyboard.press('?');
  await setting.uncheck();
  await help.getByText(/^accept the selected change$/).waitFor();
  await page.keyboard.press('Escape');
  await page.keyboard.press('a');
  await eventually('tc-key-2 accepted', async () => (await recordOf(sess, 'tc-key-2')).status === 'accepted');
  await record('tc-key-2').locator('.pill.accepted').waitFor();
  await page.waitForTimeout(300);
  assert.equal(await page.locator('article.selected').getAttribute('data-record-id'), 'tc-key-2', 'the selection stays');
  // Kept for the next visit.
  await page.reload();
  await record('tc-key-3').waitFor();
  await page.keyboard.press('?');
  assert.equal(await setting.isChecked(), false, 'the setting is kept');
  await setting.check();
  await page.keyboard.press('Escape');
  await api('POST', `/sessions/${sess.id}/file-changes/reject-all`);
});

// ---- timeline: counts on the right entries; a diff to now names its files -------

uiTest('timeline: each entry counts the files changed after it; Diff to now names every file and comes into view', async () => {
  const sess = await startSession('timeline');
  await api('POST', `/sessions/${sess.id}/turns`, { message_index: 1, prompt: 'two tool calls' });
  await agentWrite(sess, 'tc-t1', 't/one.txt', 'one\n', 'Write');
  // One tool call that changes two files.
  await api('POST', `/sessions/${sess.id}/tool-calls`, {
    tool_call_id: 'tc-t2',
    tool_name: 'Bash',
    agent_id: 'e2e-agent',
    cwd: sess.worktree_path,
    args: { command: 'echo a > t/two-a.txt; echo b > t/two-b.txt' },
  });
  fs.writeFileSync(path.join(sess.worktree_path, 't/two-a.txt'), 'a\n');
  fs.writeFileSync(path.join(sess.worktree_path, 't/two-b.txt'), 'b\n');
  const ans = await api('POST', `/sessions/${sess.id}/tool-calls/tc-t2/complete`, { result: { ok: true } });
  assert.equal(ans.records.length, 2);
  const cps = await api('GET', `/sessions/${sess.id}/checkpoints`);
  assert.deepEqual(
    cps.map((c) => [c.tool_call_id, c.files_changed]),
    [['', cps[0].files_changed], ['tc-t1', 0], ['tc-t2', 1]],
    'files_changed counts the files that differ from the checkpoint before',
  );

  await sessionLink('timeline').click();
  await page.getByRole('tab', { name: /Timeline/ }).click();
  const entries = page.getByRole('list', { name: 'Checkpoints' }).getByRole('listitem', { name: /^Checkpoint / });
  await entries.nth(2).waitFor();
  // Newest first: before tc-t2 (two files after it), before tc-t1 (one), the turn (none).
  assert.deepEqual(await entries.locator('.changed-after').allInnerTexts(), [
    '2 files changed after it',
    '1 file changed after it',
    'no file changed after it',
  ]);

  // Diff to now from the turn, in a short window: its panel opens below the fold.
  const size = page.viewportSize();
  await page.setViewportSize({ width: 1440, height: 520 });
  try {
    await entries.nth(2).getByRole('button', { name: 'Diff to now' }).click();
    const panel = page.getByRole('region', { name: /^Diff from .* to now$/ });
    for (const f of ['t/one.txt', 't/two-a.txt', 't/two-b.txt']) {
      await panel.locator('.diff-files code', { hasText: f }).waitFor();
      await panel.locator('.d2h-file-name', { hasText: f }).waitFor({ state: 'visible' });
    }
    await eventually('the diff scrolled into view', () =>
      panel.evaluate((el) => {
        const r = el.getBoundingClientRect();
        return r.top >= 52 && r.top < innerHeight / 2;
      }),
    );
  } finally {
    await page.setViewportSize(size);
  }
  await page.getByRole('tab', { name: /Changes/ }).click();
  await api('POST', `/sessions/${sess.id}/file-changes/reject-all`);
});

// ---- Accept and Reject of a file, a session, everything ---------------------

uiTest('Accept and Reject of a whole file', async () => {
  const sess = await startSession('bulk-auto');
  await agentWrite(sess, 'tc-one-1', 'bulk/one.txt', 'one\n', 'Write');
  await agentWrite(sess, 'tc-one-2', 'bulk/one.txt', 'one\nmore\n');
  await agentWrite(sess, 'tc-two-1', 'bulk/two.txt', 'two\n', 'Write');
  await agentWrite(sess, 'tc-two-2', 'bulk/two.txt', 'two\nmore\n');
  await agentWrite(sess, 'tc-three', 'bulk/three.txt', 'three\n', 'Write');
  await agentWrite(sess, 'tc-bulk-a', 'a.txt', 'alpha\nbeta\ngamma\ndelta\n');
  assert.equal(readWs('bulk/one.txt'), 'one\nmore\n');

  await sessionLink('bulk-auto').click();
  await page.locator('.session-head .summary strong', { hasText: /^6 pending$/ }).waitFor();
  await fileCard('bulk/one.txt').getByText('2 changes, 2 pending').waitFor();

  // Reject of the file: both its changes, and the file it created is gone.
  await fileButton('bulk/one.txt', 'Reject').click();
  await eventually('bulk/one.txt removed', () => readWs('bulk/one.txt') === null);
  await eventually('both changes of bulk/one.txt rejected', async () => {
    const st = await statuses(sess);
    return st['tc-one-1'] === 'rejected' && st['tc-one-2'] === 'rejected';
  });
  let st = await statuses(sess);
  for (const id of ['tc-two-1', 'tc-two-2', 'tc-three', 'tc-bulk-a']) assert.equal(st[id], 'pending', `${id} untouched`);
  assert.equal(readWs('bulk/two.txt'), 'two\nmore\n');
  await record('tc-one-1').locator('.pill.rejected').waitFor();
  await record('tc-one-2').locator('.pill.rejected').waitFor();
  assert.equal(await fileButton('bulk/one.txt', 'Reject').isDisabled(), true, 'nothing left to reject in the file');

  // Accept of the file: both its changes, the file stays.
  await fileButton('bulk/two.txt', 'Accept').click();
  await eventually('both changes of bulk/two.txt accepted', async () => {
    const st = await statuses(sess);
    return st['tc-two-1'] === 'accepted' && st['tc-two-2'] === 'accepted';
  });
  assert.equal(readWs('bulk/two.txt'), 'two\nmore\n');
  st = await statuses(sess);
  assert.equal(st['tc-three'], 'pending');
  assert.equal(st['tc-bulk-a'], 'pending');
  await record('tc-two-2').locator('.pill.accepted').waitFor();
  await page.locator('.session-head .summary strong', { hasText: /^2 pending$/ }).waitFor();
  assert.equal(await fileButton('bulk/two.txt', 'Accept').isDisabled(), true);
});

uiTest('Accept and Reject of a whole session', async () => {
  // Reject of the session: what is pending leaves the workspace; what was
  // accepted stays.
  const sess = (await api('GET', '/sessions')).find((s) => s.name === 'bulk-auto');
  await sessionButton('bulk-auto', 'Reject').click();
  const dialog = page.getByRole('dialog', { name: 'Reject every pending change of “bulk-auto”?' });
  await dialog.getByRole('button', { name: 'Reject 2 changes', exact: true }).click();
  await eventually('bulk/three.txt removed and a.txt back', () => readWs('bulk/three.txt') === null && readWs('a.txt') === ORIGINAL['a.txt']);
  await eventually('the pending changes rejected', async () => {
    const st = await statuses(sess);
    return st['tc-three'] === 'rejected' && st['tc-bulk-a'] === 'rejected';
  });
  const st = await statuses(sess);
  assert.equal(st['tc-two-1'], 'accepted', 'accepted changes are not touched');
  assert.equal(st['tc-two-2'], 'accepted');
  assert.equal(readWs('bulk/two.txt'), 'two\nmore\n');
  await record('tc-bulk-a').locator('.pill.rejected').waitFor();
  await page.locator('.session-head .summary strong', { hasText: /^0 pending$/ }).waitFor();
  assert.equal(await sessionButton('bulk-auto', 'Reject').isDisabled(), true);
  assert.equal((await api('GET', `/sessions/${sess.id}`)).pending_count, 0);

  // Accept of a review-mode session applies every change, in order.
  const rv = await startSession('bulk-review', 'review');
  await agentWrite(rv, 'tc-rv-x1', 'rv/x.txt', 'x\n', 'Write');
  await agentWrite(rv, 'tc-rv-x2', 'rv/x.txt', 'x\ny\n');
  await agentWrite(rv, 'tc-rv-y', 'rv/y.txt', 'y\n', 'Write');
  assert.equal(readWs('rv/x.txt'), null, 'review mode waits for the accept');
  await sessionLink('bulk-review').click();
  await page.locator('.session-head .summary strong', { hasText: /^3 pending$/ }).waitFor();
  await sessionButton('bulk-review', 'Accept').click();
  await eventually('the session applied', () => readWs('rv/x.txt') === 'x\ny\n' && readWs('rv/y.txt') === 'y\n');
  await eventually('the session accepted', async () =>
    Object.values(await statuses(rv)).every((s) => s === 'accepted'),
  );
  assert.deepEqual(Object.keys(await statuses(rv)).sort(), ['tc-rv-x1', 'tc-rv-x2', 'tc-rv-y']);
  await record('tc-rv-y').locator('.pill.accepted').waitFor();
  await page.locator('.session-head .summary strong', { hasText: /^0 pending$/ }).waitFor();
  assert.equal(await sessionButton('bulk-review', 'Accept').isDisabled(), true);
});

uiTest('Accept and Reject of everything, across sessions', async () => {
  const pendingAll = async () => (await api('GET', '/sessions')).reduce((n, s) => n + s.pending_count, 0);
  const left = (await api('GET', '/sessions')).filter((s) => s.pending_count).map((s) => `${s.name}: ${s.pending_count}`);
  assert.deepEqual(left, [], 'nothing pending before this test');
  const au = await startSession('all-auto');
  const rv = await startSession('all-review', 'review');
  await agentWrite(au, 'tc-all-a1', 'all/auto.txt', 'auto\n', 'Write');
  await agentWrite(au, 'tc-all-b', 'b.txt', 'one\ntwo\nthree\nfrom all-auto\n');
  await agentWrite(rv, 'tc-all-r1', 'all/review.txt', 'review\n', 'Write');
  assert.equal(readWs('all/auto.txt'), 'auto\n');
  assert.equal(readWs('all/review.txt'), null);

  // Reject everything: after a confirmation, every pending change of every session.
  const everything = page.getByRole('banner').getByRole('group', { name: 'Everything' });
  await everything.getByText('3 pending in all sessions').waitFor();
  await everythingButton('Reject').click();
  const dialog = page.getByRole('dialog', { name: 'Reject every pending change of every session?' });
  await dialog.getByRole('button', { name: 'Reject 3 changes', exact: true }).click();
  await eventually('auto-mode changes out of the workspace', () => readWs('all/auto.txt') === null && readWs('b.txt') === ORIGINAL['b.txt']);
  await eventually('everything rejected', async () =>
    [...Object.values(await statuses(au)), ...Object.values(await statuses(rv))].every((s) => s === 'rejected'),
  );
  assert.equal(readWs('all/review.txt'), null);
  assert.equal(readWs('bulk/two.txt'), 'two\nmore\n', 'accepted changes of other sessions are not touched');
  await everything.getByText('0 pending in all sessions').waitFor();
  assert.equal(await everythingButton('Reject').isDisabled(), true);
  assert.equal(await everythingButton('Accept').isDisabled(), true);

  // Accept everything: no confirmation; review mode applies.
  await agentWrite(au, 'tc-all-a2', 'all/auto2.txt', 'auto 2\n', 'Write');
  await agentWrite(rv, 'tc-all-r2', 'all/review2.txt', 'review 2\n', 'Write');
  await everything.getByText('2 pending in all sessions').waitFor();
  await everythingButton('Accept').click();
  await eventually('the review-mode change applied', () => readWs('all/review2.txt') === 'review 2\n');
  await eventually('everything accepted', async () => {
    const [a, r] = [await statuses(au), await statuses(rv)];
    return a['tc-all-a2'] === 'accepted' && r['tc-all-r2'] === 'accepted';
  });
  assert.equal(readWs('all/auto2.txt'), 'auto 2\n');
  assert.equal((await statuses(au))['tc-all-a1'], 'rejected', 'a rejected change stays rejected');
  await everything.getByText('0 pending in all sessions').waitFor();
  assert.equal(await pendingAll(), 0);
  // The page shows it in each session.
  await sessionLink('all-auto').click();
  await record('tc-all-a2').locator('.pill.accepted').waitFor();
  await record('tc-all-a1').locator('.pill.rejected').waitFor();
  await sessionLink('all-review').click();
  await record('tc-all-r2').locator('.pill.accepted').waitFor();
  await record('tc-all-r1').locator('.pill.rejected').waitFor();
});

uiTest('Accept of a session leaves its conflict pending, and the toast names it and how to resolve it', async () => {
  // The user's own file, not committed: part of the session's base.
  const CONF = 'name = demo\nport = 8080\n';
  writeWs('bc/conf.ini', CONF);
  const sess = await startSession('bulk-conflict');
  await agentWrite(sess, 'tc-bc-clean', 'bc/clean.txt', 'clean\n', 'Write');
  // While the agent edits a line, the user edits the same line: a conflict.
  const mine = CONF.replace('port = 8080', 'port = 9090 # mine');
  const rc = await agentWrite(sess, 'tc-bc-conf', 'bc/conf.ini', CONF.replace('port = 8080', 'port = 3000 # agent'), 'Edit', () =>
    writeWs('bc/conf.ini', mine),
  );
  assert.equal(rc.sync_state, 'conflict');

  await sessionLink('bulk-conflict').click();
  await page.locator('.session-head .summary strong', { hasText: /^2 pending$/ }).waitFor();
  await record('tc-bc-conf').locator('.pill.sync-conflict').waitFor();
  await sessionButton('bulk-conflict', 'Accept').click();

  // The clean change is accepted; the conflict is not decided in bulk.
  await eventually('the clean change accepted', async () => (await statuses(sess))['tc-bc-clean'] === 'accepted');
  const r = await recordOf(sess, 'tc-bc-conf');
  assert.deepEqual([r.status, r.sync_state], ['pending', 'conflict'], 'the conflict is still pending');
  assert.equal(readWs('bc/conf.ini'), mine, "the user's file is left as it is");
  // The page says so: a toast names the conflict and the ways to resolve it.
  const toast = page.locator('.toast.error', { hasText: 'left pending' });
  await toast.waitFor();
  const said = (await toast.innerText()).replace(/\s+/g, ' ');
  assert.match(said, /1 change left pending/, said);
  assert.match(said, /bc\/conf\.ini/, `the toast names the conflicting file: ${said}`);
  assert.match(said, /Keep mine, Take agent's, or Merge in editor/, `the toast says how to resolve it: ${said}`);
  await record('tc-bc-clean').locator('.pill.accepted').waitFor();
  await record('tc-bc-conf').locator('.record-head .pill.pending').waitFor();
  await record('tc-bc-conf').getByRole('group', { name: 'Resolve the conflict of bc/conf.ini' }).waitFor();
  await page.locator('.session-head .summary strong', { hasText: /^1 pending$/ }).waitFor();
  await page.screenshot({ path: path.join(ARTIFACTS, 'bulk-left-conflict.png'), fullPage: true });

  // The way it names settles it: Keep mine.
  await toast.getByRole('button', { name: 'Dismiss' }).click();
  await record('tc-bc-conf').getByRole('button', { name: 'Keep mine', exact: true }).click();
  await eventually('the conflict resolved', async () => (await statuses(sess))['tc-bc-conf'] === 'rejected');
  assert.equal(readWs('bc/conf.ini'), mine);
});

uiTest('Reject hunk takes one hunk of an Edit out; the later change on its lines cascades; Accept hunk makes it partial', async () => {
  const hs = await startSession('e2e hunks');
  // One Edit with two hunks (lines 2 and 9), in one @@ block of the page's diff.
  const edited = ORIGINAL['hunks.txt'].replace('l2\n', 'L2 agent\n').replace('l9\n', 'L9 agent\n');
  const rec = await agentWrite(hs, 'tc-h1', 'hunks.txt', edited);
  assert.deepEqual(rec.hunks.map((h) => [h.old_start, h.old_lines, h.new_start, h.new_lines]), [[2, 1, 2, 1], [9, 1, 9, 1]]);
  // A later Edit on the first hunk's line: it is built on that hunk.
  await agentWrite(hs, 'tc-h2', 'hunks.txt', edited.replace('L2 agent\n', 'L2 twice\n'));
  await sessionLink('e2e hunks').click();
  const h1 = record('tc-h1');
  const hunk = (r, i) => r.locator(`[data-hunk="${i}"]`);
  await hunk(h1, 1).getByRole('button', { name: 'Reject hunk', exact: true }).waitFor();
  assert.equal(await h1.getByRole('button', { name: 'Reject hunk', exact: true }).count(), 2, 'one Reject hunk per hunk');
  assert.equal(await h1.getByRole('button', { name: 'Accept hunk', exact: true }).count(), 2, 'one Accept hunk per hunk');
  await hunk(h1, 0).locator('td.d2h-ins', { hasText: 'L2 agent' }).waitFor();
  await hunk(h1, 1).locator('td.d2h-ins', { hasText: 'L9 agent' }).waitFor();
  assert.equal(await hunk(h1, 0).locator('td', { hasText: 'L9 agent' }).count(), 0, 'each hunk shows its own lines');

  await hunk(h1, 0).getByRole('button', { name: 'Reject hunk', exact: true }).click();
  const want = ORIGINAL['hunks.txt'].replace('l9\n', 'L9 agent\n');
  await eventually('hunk 0 rejected', async () => (await recordOf(hs, 'tc-h1')).hunks[0].status === 'rejected');
  assert.equal(readWs('hunks.txt'), want, 'the workspace holds the other hunk, byte for byte');
  assert.equal(readIn(hs.worktree_path, 'hunks.txt'), want, 'and so does the worktree');
  let r1 = await recordOf(hs, 'tc-h1');
  assert.deepEqual(r1.hunks.map((h) => h.status), ['rejected', 'pending']);
  assert.equal(r1.status, 'pending');
  const r2 = await recordOf(hs, 'tc-h2');
  assert.equal(r2.hunks[0].status, 'rejected', 'the later hunk on the same line cascaded');
  // The page: the hunk's state, and a notice naming the cascaded hunk.
  await hunk(h1, 0).locator('.pill.rejected').waitFor();
  assert.equal(await hunk(h1, 0).getByRole('button', { name: 'Reject hunk', exact: true }).count(), 0);
  await h1.locator('.cascade-note', { hasText: 'tc-h2' }).waitFor();
  await record('tc-h2').locator('.pill.rejected').first().waitFor();
  await h1.screenshot({ path: path.join(ARTIFACTS, 'hunks.png') });

  // Keep the other hunk: the record is partial.
  await hunk(h1, 1).getByRole('button', { name: 'Accept hunk', exact: true }).click();
  await eventually('tc-h1 partial', async () => (await recordOf(hs, 'tc-h1')).status === 'partial');
  r1 = await recordOf(hs, 'tc-h1');
  assert.deepEqual(r1.hunks.map((h) => h.status), ['rejected', 'accepted']);
  await h1.locator('.record-head .pill.partial').waitFor();
  // Decided, it folds like any reviewed change; opened, it shows each hunk's state.
  if (!(await hunk(h1, 1).count())) await h1.getByRole('button', { name: 'Show diff' }).click();
  await hunk(h1, 1).locator('.pill.accepted').waitFor();
  await hunk(h1, 0).locator('.pill.rejected').waitFor();
  assert.equal(await h1.getByRole('button', { name: /hunk$/ }).count(), 0, 'no hunk left to decide');
  assert.equal(readWs('hunks.txt'), want);
});

uiTest('keyboard on hunks: a click focuses a hunk, n rejects it, focus moves on, y accepts the next', async () => {
  const hs = (await api('GET', '/sessions')).find((x) => x.name === 'e2e hunks');
  const base = readWs('hunks.txt');
  const edited = base.replace('l4\n', 'L4 by keys\n').replace('l7\n', 'L7 by keys\n');
  await agentWrite(hs, 'tc-h3', 'hunks.txt', edited);
  const h3 = record('tc-h3');
  const hunk = (i) => h3.locator(`[data-hunk="${i}"]`);
  await hunk(1).getByRole('button', { name: 'Reject hunk', exact: true }).waitFor();
  await hunk(0).locator('.hunk-title').click();
  await page.keyboard.press('n');
  await eventually('hunk 0 rejected by n', async () => (await recordOf(hs, 'tc-h3')).hunks[0].status === 'rejected');
  assert.equal(readWs('hunks.txt'), base.replace('l7\n', 'L7 by keys\n'));
  await hunk(0).locator('.pill.rejected').waitFor();
  // The next pending hunk has the focus now.
  await eventually('focus on hunk 1', () => hunk(1).evaluate((el) => el === document.activeElement));
  await page.keyboard.press('y');
  await eventually('tc-h3 partial', async () => (await recordOf(hs, 'tc-h3')).status === 'partial');
  assert.deepEqual((await recordOf(hs, 'tc-h3')).hunks.map((h) => h.status), ['rejected', 'accepted']);
  assert.equal(readWs('hunks.txt'), base.replace('l7\n', 'L7 by keys\n'));
  // ? lists the hunk keys.
  await page.keyboard.press('?');
  const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await help.getByText('reject the hunk in focus').waitFor();
  await page.keyboard.press('Escape');
});

uiTest('hunks decided elsewhere (the CLI, the editor) show on the page without a reload', async () => {
  const hs = (await api('GET', '/sessions')).find((x) => x.name === 'e2e hunks');
  const base = readWs('hunks.txt');
  const edited = base.replace('l1\n', 'L1 elsewhere\n').replace('l5\n', 'L5 elsewhere\n');
  await agentWrite(hs, 'tc-h4', 'hunks.txt', edited);
  const h4 = record('tc-h4');
  await h4.locator('[data-hunk="1"]').getByRole('button', { name: 'Accept hunk', exact: true }).waitFor();
  // Both at once, by the body form, as another surface would.
  await api('POST', `/sessions/${hs.id}/file-changes/tc-h4/hunks`, { accept: [1], reject: [0] });
  await h4.locator('.record-head .pill.partial').waitFor();
  if (!(await h4.locator('[data-hunk="1"]').count())) await h4.getByRole('button', { name: 'Show diff' }).click();
  await h4.locator('[data-hunk="0"] .pill.rejected').waitFor();
  await h4.locator('[data-hunk="1"] .pill.accepted').waitFor();
  assert.equal(await h4.getByRole('button', { name: /hunk$/ }).count(), 0, 'no stale hunk buttons');
  assert.equal(readWs('hunks.txt'), base.replace('l5\n', 'L5 elsewhere\n'));
});

uiTest('note on Reject: the note (and a comment on a hunk) is stored with the record and shown under the change, escaped', async () => {
  const ns = await startSession('e2e notes');
  const base = 'n1\nn2\nn3\nn4\nn5\nn6\nn7\nn8\nn9\nn10\n';
  await agentWrite(ns, 'tc-n1', 'notes.txt', base, 'Write');
  // Two hunks: lines 2 and 9.
  await agentWrite(ns, 'tc-n2', 'notes.txt', base.replace('n2\n', 'N2 agent\n').replace('n9\n', 'N9 agent\n'));
  await agentWrite(ns, 'tc-n3', 'notes-other.txt', 'other\n', 'Write');
  await sessionLink('e2e notes').click();
  const feedbackOf = (id) => api('GET', `/sessions/${ns.id}/file-changes/${id}/feedback`);

  // Reject of a whole change, with a note: HTML and a control byte stay text.
  const words = 'not this file <b>bold</b> \u001b[31m red';
  const n3 = record('tc-n3');
  await n3.getByRole('button', { name: 'Reject with note…', exact: true }).click();
  await n3.getByRole('textbox', { name: 'Note on rejecting notes-other.txt' }).fill(words);
  await n3.getByRole('button', { name: 'Reject with this note', exact: true }).click();
  await eventually('tc-n3 rejected', async () => (await recordOf(ns, 'tc-n3')).status === 'rejected');
  const [note] = await eventually('the note stored', async () => {
    const list = (await feedbackOf('tc-n3')).filter((f) => f.kind === 'note');
    return list.length ? list : null;
  });
  assert.equal(note.text, words, 'the words as typed, control byte too');
  assert.equal(note.author, 'page');
  assert.equal(note.record_id, 'tc-n3');
  assert.equal(note.state, 'queued');
  const item = n3.locator(`[data-feedback="${note.id}"]`);
  await item.waitFor();
  assert.equal(
    await item.locator('.feedback-text').textContent(),
    'not this file <b>bold</b> ^[[31m red',
    'shown as text, the control byte as an escape',
  );
  assert.equal(await item.locator('b').count(), 0, 'no HTML from the note');
  const head = await item.locator('.feedback-head').textContent();
  assert.match(head, /Note/);
  assert.match(head, /page/);
  assert.ok(note.why, 'the API says what the note waits for');
  assert.ok(head.includes(`queued: ${note.why}`), `delivery state as the API says it: ${head}`);

  // Reject of a hunk with a note, and a comment on the other hunk's lines.
  const n2 = record('tc-n2');
  const hunk = (i) => n2.locator(`[data-hunk="${i}"]`);
  await hunk(1).getByRole('button', { name: 'Comment…', exact: true }).click();
  const lines = hunk(1).getByRole('textbox', { name: 'Lines' });
  assert.equal(await lines.inputValue(), '9', "the hunk's line, by default");
  await hunk(1).getByRole('textbox', { name: 'Comment on hunk 2 of notes.txt' }).fill('why N9?');
  await hunk(1).getByRole('button', { name: 'Comment', exact: true }).click();
  await hunk(0).getByRole('button', { name: 'Reject hunk with note…', exact: true }).click();
  await hunk(0).getByRole('textbox', { name: 'Note on rejecting hunk 1 of notes.txt' }).fill('keep n2 as it was');
  await hunk(0).getByRole('button', { name: 'Reject hunk with this note', exact: true }).click();
  await eventually('hunk 0 rejected', async () => (await recordOf(ns, 'tc-n2')).hunks[0].status === 'rejected');
  const fb = await eventually('a comment and a note on tc-n2', async () => {
    const list = await feedbackOf('tc-n2');
    const comment = list.find((f) => f.kind === 'comment');
    const hnote = list.find((f) => f.kind === 'note');
    return comment && hnote ? { comment, hnote } : null;
  });
  assert.equal(fb.comment.text, 'why N9?');
  assert.equal(fb.comment.lines, '9');
  assert.equal(fb.hnote.text, 'keep n2 as it was');
  assert.equal((await recordOf(ns, 'tc-n2')).hunks[1].status, 'pending', 'a comment decides nothing');
  await n2.locator(`[data-feedback="${fb.comment.id}"] .feedback-text`, { hasText: 'why N9?' }).waitFor();
  await n2.locator(`[data-feedback="${fb.hnote.id}"] .feedback-text`, { hasText: 'keep n2 as it was' }).waitFor();
  assert.match(await n2.locator(`[data-feedback="${fb.comment.id}"]`).textContent(), /lines 9/);
});

uiTest("blame of a file: the agent's line is the agent's (tool, state, prompt), untouched lines are yours, all as text; live", async () => {
  // Its own page and login, so that it runs alone too (--test-name-pattern blame).
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' });
  const p = await ctx.newPage();
  p.on('pageerror', (e) => console.error('page error:', e.message));
  try {
    const bs = await startSession('e2e blame');
    const prompt = 'shout the <b>second</b> line';
    await api('POST', `/sessions/${bs.id}/turns`, { message_index: 1, prompt });
    const agentLine = 'SECOND <i>by the agent</i>';
    await agentWrite(bs, 'tc-blame', 'blame.txt', `first\n${agentLine}\nthird\n`);
    assert.equal(readWs('blame.txt'), `first\n${agentLine}\nthird\n`, 'auto mode applied the change');

    await p.goto(run(PRSM, ['ui', '--print-url']).trim());
    await p.getByRole('link', { name: /^e2e blame / }).click();
    await p.locator('article[data-record-id="tc-blame"]').getByRole('button', { name: 'Blame', exact: true }).click();
    const view = p.getByRole('region', { name: 'Blame of blame.txt' });
    await view.waitFor();
    const row = (n) => view.locator(`tr[data-line="${n}"]`);
    await row(2).waitFor();

    // The agent's line: its agent and tool, its review state, the prompt in the title.
    assert.equal(await row(2).getAttribute('data-who'), 'e2e-agent · Edit');
    const who = row(2).locator('td.blame-who');
    const said = await who.textContent();
    assert.match(said, /e2e-agent · Edit/);
    assert.match(said, /pending review/);
    assert.ok(said.includes(prompt), `the prompt beside the line, as text: ${said}`);
    const title = await who.getAttribute('title');
    assert.ok(title.includes(`Prompt: ${prompt}`), `the prompt in the title: ${title}`);
    assert.ok(title.includes('Tool call: Edit tc-blame'), `the tool call in the title: ${title}`);
    assert.equal(await row(2).locator('td.blame-text').textContent(), agentLine, "the file's line as text");
    assert.equal(await view.locator('i, b').count(), 0, 'no HTML from the file or the prompt');

    // The untouched lines are yours, each in a run of its own.
    for (const n of [1, 3]) {
      assert.equal(await row(n).getAttribute('data-who'), 'you', `line ${n}`);
      assert.equal((await row(n).locator('td.blame-who').textContent()).trim(), 'you', `line ${n} says you`);
    }
    assert.equal(await row(1).locator('td.blame-text').textContent(), 'first');
    assert.equal(await row(3).locator('td.blame-text').textContent(), 'third');

    // The same as the API says it.
    const b = await api('GET', `/blame?path=blame.txt`);
    assert.deepEqual(b.lines.map((l) => l.origin >= 0 ? b.origins[l.origin].tool_call_id : 'you'), ['you', 'tc-blame', 'you']);

    // Accepted through the API: the view follows the event without a reload.
    await api('POST', `/sessions/${bs.id}/file-changes/tc-blame/accept`);
    await row(2).locator('.pill.accepted', { hasText: 'accepted' }).waitFor({ timeout: 10_000 });
    await p.screenshot({ path: path.join(ARTIFACTS, 'blame.png'), fullPage: true });

    // Escape goes back to the changes.
    await p.keyboard.press('Escape');
    await view.waitFor({ state: 'detached' });
    await p.locator('article[data-record-id="tc-blame"]').waitFor();
  } finally {
    await ctx.close();
  }
});
