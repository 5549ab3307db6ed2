// The end-to-end test: the packaged extension in a real VS Code
// (code-server), driven through Chromium, against a real prsm server that
// the test plays the agent for. It checks the file on disk and the record
// status over the API after every click.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { FileChangeRecord, Session } from '../../src/api.gen';
import { PrsmClient } from '../../src/client';
import { findServer } from '../../src/discovery';
import { lines, until } from '../helpers';
import { agentWrite, prsm, PRSM_BIN, scratchRepo, stopPrsm, type Scratch } from '../prsm';
import { CODE_SERVER_BIN, VSIX, Workbench } from './workbench';

const ARTIFACTS = process.env.PRSM_E2E_ARTIFACTS ?? path.join(process.env.PRSM_E2E_OUTER_TMP ?? os.tmpdir(), `prsm-e2e-artifacts-${Date.now()}`);

const A = lines('package main', '', 'func one() int {', '\treturn 1', '}', '', 'func two() int {', '\treturn 2', '}');
const B = lines('# notes', 'first', 'second', 'third');
const C = lines('config: 1', 'mode: fast');
const H = lines('l1', 'l2', 'l3', 'l4', 'l5', 'l6', 'l7', 'l8', 'l9', 'l10');
const D = lines('colour = red', 'size = 3', 'shape = round');

if (!PRSM_BIN || !CODE_SERVER_BIN) {
  throw new Error('PRSM_BIN and CODE_SERVER_BIN must be set: run `npm run test:e2e` (scripts/e2e.sh)');
}

// A watchdog: whatever hangs, the run ends and its processes with it.
const watchdog = setTimeout(() => {
  process.stderr.write('e2e watchdog: 8 minutes passed, giving up\n');
  void cleanup().finally(() => process.exit(1));
}, 8 * 60_000);
watchdog.unref();

let s: Scratch;
let wb: Workbench;
let client: PrsmClient | undefined;
let session: Session;
let failed = false;

async function cleanup(): Promise<void> {
  await wb?.close();
  client?.dispose();
  if (s) {
    await stopPrsm(s);
  }
}

const read = (rel: string) => fs.readFileSync(path.join(s.repo, rel), 'utf8');

async function record(id: string): Promise<FileChangeRecord> {
  const ans = await client!.getChange(session.id, id);
  return ans.records[0];
}

beforeAll(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  s = scratchRepo({ 'a.go': A, 'b.md': B, 'c.yaml': C, 'h.txt': H, 'd.txt': D, 'e.txt': D }, 'prsm-e2e-');
  wb = new Workbench({
    root: s.root,
    env: { PRSM_HOME: s.home },
    // Reject here rejects at once; feedback.test.ts answers the reason's question.
    settings: { 'prsm.binaryPath': PRSM_BIN, 'prsm.reject.askReason': false },
    artifacts: ARTIFACTS,
  });
  wb.installExtension(VSIX);
  await wb.start();
  await wb.open(s.repo);
});

afterEach(async (ctx) => {
  const name = ctx.task.name.replace(/\s+/g, '-').slice(0, 60);
  if (ctx.task.result?.state === 'fail') {
    failed = true;
    const shot = await wb.screenshot(`FAILED-${name}`);
    process.stderr.write(`e2e: screenshot of the failure: ${shot}\n`);
  } else {
    await wb.screenshot(`ok-${name}`);
  }
});

afterAll(async () => {
  wb?.saveLogs();
  await cleanup();
  clearTimeout(watchdog);
  if (s) {
    fs.rmSync(s.root, { recursive: true, force: true });
  }
  if (!failed && !process.env.PRSM_E2E_ARTIFACTS) {
    // Keep the artifacts of a green run only when asked to.
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    process.stderr.write('e2e: green; set PRSM_E2E_ARTIFACTS=dir to keep its screenshots and logs\n');
  } else {
    process.stderr.write(`e2e: artifacts (screenshots, code-server, browser and extension logs) in ${ARTIFACTS}\n`);
  }
});

describe('prsm extension in code-server', () => {
  it('shows "prsm is not running" with a button that starts the server', async () => {
    const p = wb.page;
    await p.locator('.activitybar .action-item a[aria-label^="prsm"]').first().click();
    const welcome = p.locator('.welcome-view-content', { hasText: 'prsm is not running in this workspace' }).first();
    await welcome.waitFor({ timeout: 30_000 });
    // The status bar item renders on its own schedule, after the view:
    // wait for it rather than look once.
    await p.locator('.statusbar-item', { hasText: 'prsm: not running' }).first().waitFor({ timeout: 10_000 });
    // No error popup for a missing server.
    expect(await p.locator('.notifications-toasts .notification-toast').count()).toBe(0);
    await welcome.getByRole('button', { name: 'Start prsm' }).click();
    const found = await until(() => findServer({ home: s.home, folders: [s.repo] }), 30_000, 'server.json after Start prsm');
    client = new PrsmClient(found.info);
    await client.healthz();
    await p.locator('.welcome-view-content', { hasText: 'No agent sessions yet' }).first().waitFor({ timeout: 20_000 });
    await p.locator('.statusbar-item', { hasText: 'prsm: 0 pending' }).first().waitFor();
  });

  it('shows an agent change live, with the CodeLens on the changed line; Reject restores the file', async () => {
    const p = wb.page;
    // Marks the page: a reload would lose the mark.
    await p.evaluate(() => ((globalThis as unknown as { __prsmMark: number }).__prsmMark = 42));
    session = await client!.startSession({ name: 'e2e-agent', agent_id: 'e2e' });
    const edited = A.replace('\treturn 2\n', '\treturn 2 // AGENT_EDIT_TWO\n');
    const [rec] = await agentWrite(client!, session, 'tc-reject', 'a.go', edited);
    expect(rec).toMatchObject({ status: 'pending', sync_state: 'synced' });
    expect(read('a.go')).toBe(edited);

    // The tree and the status bar update without a reload.
    await p.locator('.pane-body .monaco-list-row', { hasText: 'e2e-agent' }).first().waitFor({ timeout: 15_000 });
    await p.locator('.pane-body .monaco-list-row', { hasText: 'a.go' }).first().waitFor();
    await p.locator('.statusbar-item', { hasText: 'prsm: 1 pending' }).first().waitFor();

    await wb.openFile('a.go', 'AGENT_EDIT_TWO');
    await wb.lens('Reject').first().waitFor({ timeout: 15_000 });
    expect(await wb.lens('Accept').count()).toBe(1);
    expect(await wb.lens('Diff').count()).toBe(1);
    const { gap, lineHeight } = await wb.lensAboveLine('Reject', 'AGENT_EDIT_TWO');
    expect(gap).toBeGreaterThanOrEqual(-1);
    expect(gap).toBeLessThan(lineHeight); // right above the changed line, not elsewhere
    expect(await wb.decorated('AGENT_EDIT_TWO')).toBe(true); // the added-line decoration
    expect(await wb.decorated('func one')).toBe(false);
    await wb.screenshot('lens-on-changed-line');

    await wb.lens('Reject').first().click();
    await until(() => read('a.go') === A, 10_000, 'a.go restored on disk');
    await until(async () => (await record('tc-reject')).status === 'rejected', 10_000, 'record rejected');
    await wb.lens('Reject').first().waitFor({ state: 'detached', timeout: 10_000 });
    await wb.line('return 2').waitFor();
    expect(await wb.line('AGENT_EDIT_TWO').count()).toBe(0);
    await until(async () => !(await wb.decorated('return 2')), 5000, 'decoration gone');
    expect(await p.evaluate(() => (globalThis as unknown as { __prsmMark?: number }).__prsmMark)).toBe(42);
  });

  it('Accept on another change keeps it on disk and marks it accepted', async () => {
    const edited = B.replace('second\n', 'second\nAGENT_ADDED_LINE\n');
    await agentWrite(client!, session, 'tc-accept', 'b.md', edited);
    await wb.openFile('b.md', 'AGENT_ADDED_LINE');
    await wb.lens('Accept').first().waitFor({ timeout: 15_000 });
    const { gap, lineHeight } = await wb.lensAboveLine('Accept', 'AGENT_ADDED_LINE');
    expect(gap).toBeGreaterThanOrEqual(-1);
    expect(gap).toBeLessThan(lineHeight);
    await wb.lens('Accept').first().click();
    await until(async () => (await record('tc-accept')).status === 'accepted', 10_000, 'record accepted');
    await wb.lens('Accept').first().waitFor({ state: 'detached', timeout: 10_000 });
    expect(read('b.md')).toBe(edited);
    await wb.page.locator('.statusbar-item', { hasText: 'prsm: 0 pending' }).first().waitFor();
  });

  it('puts Accept | Reject above each hunk: Reject on one hunk takes out its lines only; ctrl+alt+y accepts the other', async () => {
    const p = wb.page;
    // One Edit with two hunks, lines 2 and 9.
    const edited = H.replace('l2\n', 'L2 agent\n').replace('l9\n', 'L9 agent\n');
    const [rec] = await agentWrite(client!, session, 'tc-hunks', 'h.txt', edited);
    expect(rec.hunks.map((h) => [h.old_start, h.new_start, h.status])).toEqual([
      [2, 2, 'pending'],
      [9, 9, 'pending'],
    ]);
    await wb.openFile('h.txt', 'L9 agent');
    // Exact titles: the first hunk's line also has "Reject Change".
    const lens = (title: string) =>
      p.locator('.editor-group-container.active .monaco-editor .codelens-decoration a', { hasText: new RegExp(`^${title}$`) });
    await until(async () => (await lens('Reject').count()) === 2, 15_000, 'a Reject lens per hunk');
    expect(await lens('Accept').count()).toBe(2);
    expect(await lens('Reject Change').count()).toBe(1);
    // The lower Reject is the one right above line 9.
    const ys = await lens('Reject').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().y));
    const second = lens('Reject').nth(ys[0] > ys[1] ? 0 : 1);
    const lensBox = (await second.locator('xpath=..').boundingBox())!;
    const lineBox = (await wb.line('L9 agent').boundingBox())!;
    expect(lineBox.y - (lensBox.y + lensBox.height)).toBeGreaterThanOrEqual(-1);
    expect(lineBox.y - (lensBox.y + lensBox.height)).toBeLessThan(lineBox.height);
    expect(await wb.decorated('L2 agent')).toBe(true);
    expect(await wb.decorated('L9 agent')).toBe(true);
    await wb.screenshot('hunk-lenses');

    await second.click();
    const want = H.replace('l2\n', 'L2 agent\n');
    await until(() => read('h.txt') === want, 10_000, 'h.txt without the second hunk on disk');
    expect(fs.readFileSync(path.join(session.worktree_path, 'h.txt'), 'utf8')).toBe(want);
    await until(async () => (await record('tc-hunks')).hunks[1].status === 'rejected', 10_000, 'hunk 1 rejected');
    let r = await record('tc-hunks');
    expect(r.hunks.map((h) => h.status)).toEqual(['pending', 'rejected']);
    expect(r.status).toBe('pending');
    // The editor follows: one pair of lenses left, above line 2, still decorated.
    await wb.line('l9').waitFor({ timeout: 10_000 });
    // (VS Code drops the lens of a line the reload replaced at once, and asks
    // for the new lenses a moment later.)
    await until(async () => (await lens('Reject Change').count()) === 0, 10_000, 'the whole-change lens gone once a hunk is decided');
    expect(await lens('Reject').count()).toBe(1);
    expect(await wb.decorated('L2 agent')).toBe(true);

    // The hunk under the cursor, by its default key.
    await wb.line('L2 agent').click();
    await p.keyboard.press('Control+Alt+y');
    await until(async () => ((await record('tc-hunks')).status as string) === 'partial', 10_000, 'record partial after ctrl+alt+y');
    r = await record('tc-hunks');
    expect(r.hunks.map((h) => h.status)).toEqual(['accepted', 'rejected']);
    expect(read('h.txt')).toBe(want);
    await until(async () => (await lens('Accept').count()) === 0, 10_000, 'no hunk lens left');
    await until(async () => !(await wb.decorated('L2 agent')), 5000, 'the accepted hunk loses the pending look');
  });

  it('shows a change made while the file is open, without a reload, and its diff', async () => {
    const p = wb.page;
    await wb.openFile('a.go', 'func one');
    const edited = A.replace('\treturn 1\n', '\treturn 100 // LIVE_EDIT\n');
    await agentWrite(client!, session, 'tc-live', 'a.go', edited);
    await wb.line('LIVE_EDIT').waitFor({ timeout: 15_000 });
    await wb.lens('Reject').first().waitFor({ timeout: 15_000 });
    const { gap, lineHeight } = await wb.lensAboveLine('Reject', 'LIVE_EDIT');
    expect(gap).toBeGreaterThanOrEqual(-1);
    expect(gap).toBeLessThan(lineHeight);
    expect(await p.evaluate(() => (globalThis as unknown as { __prsmMark?: number }).__prsmMark)).toBe(42);

    await wb.lens('Diff').first().click();
    const diff = p.locator('.monaco-diff-editor').first();
    await diff.waitFor({ timeout: 15_000 });
    await diff.locator('.editor.original .view-line', { hasText: 'return 1' }).first().waitFor({ timeout: 15_000 });
    await diff.locator('.editor.modified .view-line', { hasText: 'LIVE_EDIT' }).first().waitFor();
    await wb.screenshot('diff-of-live-change');
    expect((await record('tc-live')).status).toBe('pending');
  });

  it('accepts a file from the tree with its inline action', async () => {
    const p = wb.page;
    const row = p.locator('.pane-body .monaco-list-row', { hasText: 'a.go' }).first();
    await wb.clickInline(row, 'Accept All Changes in File');
    await until(async () => (await record('tc-live')).status === 'accepted', 10_000, 'file accepted from the tree');
    expect(read('a.go')).toContain('LIVE_EDIT');
  });

  /** The user edits rel's first line, then the agent edits the same line: a conflict. */
  async function conflict(rel: string, id: string): Promise<{ mine: string; agents: string }> {
    const mine = D.replace('colour = red', 'colour = USER_BLUE');
    const agents = D.replace('colour = red', 'colour = AGENT_GREEN');
    fs.writeFileSync(path.join(s.repo, rel), mine);
    const [rec] = await agentWrite(client!, session, id, rel, agents);
    expect(rec).toMatchObject({ status: 'pending', sync_state: 'conflict' });
    expect(read(rel)).toBe(mine);
    return { mine, agents };
  }

  it("resolves a conflict with Take agent's: the file on disk becomes the agent's version", async () => {
    const { agents } = await conflict('d.txt', 'tc-take');
    await wb.openFile('d.txt', 'USER_BLUE');
    await wb.lens("Take agent's").first().waitFor({ timeout: 15_000 });
    expect(await wb.lens('Keep mine').count()).toBe(1);
    expect(await wb.lens('Merge in editor').count()).toBe(1);
    await wb.screenshot('conflict-lenses');
    await wb.lens("Take agent's").first().click();
    await until(() => read('d.txt') === agents, 10_000, "d.txt is the agent's version on disk");
    await until(async () => (await record('tc-take')).status === 'accepted', 10_000, 'record accepted');
    expect((await record('tc-take')).sync_state).toBe('synced');
    await wb.line('AGENT_GREEN').waitFor({ timeout: 10_000 });
    await wb.lens("Take agent's").first().waitFor({ state: 'detached', timeout: 10_000 });
  });

  it('resolves a conflict with Merge in editor: markers in the file, accepted once they are gone', async () => {
    const { mine } = await conflict('e.txt', 'tc-merge');
    await wb.openFile('e.txt', 'USER_BLUE');
    await wb.lens('Merge in editor').first().waitFor({ timeout: 15_000 });
    await wb.lens('Merge in editor').first().click();
    await until(() => read('e.txt').includes('<<<<<<< yours'), 10_000, 'conflict markers on disk');
    const marked = read('e.txt');
    expect(marked).toContain('colour = USER_BLUE');
    expect(marked).toContain('colour = AGENT_GREEN');
    expect(marked).toMatch(/^=======$/m);
    expect(marked).toMatch(/^>>>>>>> agent/m);
    expect(marked.endsWith(mine.slice(mine.indexOf('size')))).toBe(true);
    // The editor shows the markers, with VS Code's own merge CodeLens on them.
    await wb.line('<<<<<<< yours').waitFor({ timeout: 10_000 });
    await wb.lens('Accept Incoming Change').first().waitFor({ timeout: 15_000 });
    // prsm's own lens says what it waits for, and offers no second set of markers.
    await wb.lens('Merging in editor').first().waitFor({ timeout: 10_000 });
    expect(await wb.lens('Keep mine').count()).toBe(0);
    await wb.screenshot('merge-markers');
    expect((await record('tc-merge')).status).toBe('pending');

    // The user merges by hand: both colours, no markers left.
    const merged = D.replace('colour = red', 'colour = USER_BLUE_AND_AGENT_GREEN');
    fs.writeFileSync(path.join(s.repo, 'e.txt'), merged);
    await until(async () => (await record('tc-merge')).status === 'accepted', 15_000, 'record accepted once the markers are gone');
    expect(read('e.txt')).toBe(merged);
    // The extension hears of it (file_change_status): no conflict lens left.
    await wb.line('USER_BLUE_AND_AGENT_GREEN').waitFor({ timeout: 10_000 });
    await wb.lens('Merging in editor').first().waitFor({ state: 'detached', timeout: 10_000 });
  });

  it('lists checkpoints, creates a named one, and rewinds to it', async () => {
    const p = wb.page;
    const list = await client!.listCheckpoints(session.id).catch((e: unknown) => e);
    if (!Array.isArray(list)) {
      throw new Error(`the server has no checkpoint routes: ${String(list)}`);
    }
    // Auto checkpoints were taken before each tool call and show in the view.
    const autos = list.filter((c) => c.kind === 'auto');
    expect(autos.length).toBeGreaterThan(0);
    const view = p.locator('.pane', { has: p.locator('.pane-header', { hasText: 'Checkpoints' }) });
    const header = view.locator('.pane-header').first();
    if ((await header.getAttribute('aria-expanded')) !== 'true') {
      await header.click();
    }
    await view.locator('.monaco-list-row').first().waitFor({ timeout: 15_000 });

    // Create a named checkpoint from the palette: name, then annotation.
    await wb.command('prsm: Create Named Checkpoint');
    const input = p.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill('e2e-point');
    await p.keyboard.press('Enter');
    await p.locator('.quick-input-widget', { hasText: 'Annotation' }).first().waitFor();
    await input.fill('before the last edit');
    await p.keyboard.press('Enter');
    const named = await until(async () => (await client!.listCheckpoints(session.id)).find((c) => c.name === 'e2e-point'), 10_000, 'named checkpoint');
    expect(named).toMatchObject({ kind: 'manual', annotation: 'before the last edit' });
    const row = view.locator('.monaco-list-row', { hasText: 'e2e-point' }).first();
    await row.waitFor({ timeout: 10_000 });

    // The agent changes c.yaml after the checkpoint; rewinding undoes it.
    const edited = C.replace('mode: fast', 'mode: REWIND_ME');
    const rowsBefore = await view.locator('.monaco-list-row').count();
    await agentWrite(client!, session, 'tc-rewind', 'c.yaml', edited);
    expect(read('c.yaml')).toBe(edited);
    // The auto checkpoint taken before that edit shows up live.
    await until(async () => (await view.locator('.monaco-list-row').count()) > rowsBefore, 10_000, 'auto checkpoint row');
    await wb.clickInline(row, 'Rewind to Here');
    // The preview: a quick pick of what the rewind does, the decision it
    // changes and the files; one file and no decision of the user's undone,
    // so no modal after it.
    const pick = p.locator('.quick-input-widget', { hasText: 'c.yaml' }).first();
    await pick.waitFor({ timeout: 10_000 });
    await pick.getByText('Edit: pending → rewound (made after the checkpoint)').first().waitFor();
    await wb.screenshot('rewind-preview');
    await p.keyboard.press('Enter');
    await until(() => read('c.yaml') === C, 10_000, 'c.yaml rewound on disk');
    // The change made after the checkpoint is set aside, not rejected: in
    // the Changes view under a collapsed "Rewound (1)", with no Accept.
    await until(async () => (await record('tc-rewind')).status === 'rewound', 10_000, 'the later record rewound');
    const changes = p.locator('.pane', { has: p.locator('.pane-header', { hasText: 'Changes' }) });
    const group = changes.locator('.monaco-list-row', { hasText: 'Rewound (1)' }).first();
    await group.waitFor({ timeout: 10_000 });
    expect(await group.getAttribute('aria-expanded')).toBe('false');
  });

  it('shows "not running" when the server stops, and reconnects when it is back', async () => {
    const p = wb.page;
    await stopPrsm(s);
    await p.locator('.statusbar-item', { hasText: 'prsm: not running' }).first().waitFor({ timeout: 20_000 });
    await p.locator('.welcome-view-content', { hasText: 'prsm is not running in this workspace' }).first().waitFor();
    expect(await p.locator('.notifications-toasts .notification-toast', { hasText: 'cannot' }).count()).toBe(0);
    // Started again from outside (a new port and token): the extension finds it.
    prsm(s, 'serve', '--detach');
    const info = await until(() => findServer({ home: s.home, folders: [s.repo] }), 20_000, 'server.json');
    client?.dispose();
    client = new PrsmClient(info.info);
    await p.locator('.pane-body .monaco-list-row', { hasText: 'e2e-agent' }).first().waitFor({ timeout: 20_000 });
    const pending = (await client.listChanges(session.id, { status: 'pending' })).length;
    await p.locator('.statusbar-item', { hasText: `prsm: ${pending} pending` }).first().waitFor();
    // And it is live again: a new change shows its lens.
    const edited = C.replace('config: 1', 'config: 2 // AFTER_RESTART');
    await agentWrite(client, session, 'tc-restart', 'c.yaml', edited);
    await wb.openFile('c.yaml', 'AFTER_RESTART');
    await wb.lens('Accept').first().waitFor({ timeout: 15_000 });
  });
});
