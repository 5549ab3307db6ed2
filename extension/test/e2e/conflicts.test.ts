// End-to-end: a bulk accept in a real VS Code (code-server, driven through
// Chromium) against a real prsm server leaves a conflict pending, says so,
// and the status bar names the conflict apart and leads to resolving it.
// The state is checked over the server's API after every step.
// And Reject with a reason: the CodeLens Reject asks why; Escape keeps the
// change; the words typed reach the server as the reject's note. And the
// Comment… lens of a hunk: the words typed reach the server as a comment on
// exactly that hunk's lines; Escape posts nothing.
// And line blame (issue 47): the hover and the cursor line's annotation name
// the agent, its tool call, the prompt and the review state, or you.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { FileChangeRecord, Session } from '../../src/api.gen';
import type { PrsmClient } from '../../src/client';
import { lines, until } from '../helpers';
import { agentWrite, PRSM_BIN, scratchRepo, startPrsm, stopPrsm, type Scratch } from '../prsm';
import { CODE_SERVER_BIN, VSIX, Workbench } from './workbench';

const ARTIFACTS =
  process.env.PRSM_E2E_ARTIFACTS ?? path.join(process.env.PRSM_E2E_OUTER_TMP ?? os.tmpdir(), `prsm-e2e-conflicts-${Date.now()}`);

const CONF = lines('name = demo', 'port = 8080', 'level = info');
const W = lines('alpha', 'beta', 'gamma');
const CM = lines('c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9', 'c10');

if (!PRSM_BIN || !CODE_SERVER_BIN) {
  throw new Error('PRSM_BIN and CODE_SERVER_BIN must be set: run `npm run test:e2e` (scripts/e2e.sh)');
}

const watchdog = setTimeout(() => {
  process.stderr.write('e2e watchdog: 5 minutes passed, giving up\n');
  void cleanup().finally(() => process.exit(1));
}, 5 * 60_000);
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
  return (await client!.getChange(session.id, id)).records[0];
}

beforeAll(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  s = scratchRepo({ 'conf.ini': CONF, 'w.txt': W, 'cm.txt': CM }, 'prsm-e2e-conflicts-');
  // The server runs before VS Code opens: the extension connects at once.
  client = await startPrsm(s);
  wb = new Workbench({ root: s.root, env: { PRSM_HOME: s.home }, settings: { 'prsm.binaryPath': PRSM_BIN }, artifacts: ARTIFACTS });
  wb.installExtension(VSIX);
  await wb.start();
  await wb.open(s.repo);
});

afterEach(async (ctx) => {
  const name = ctx.task.name.replace(/\s+/g, '-').slice(0, 60);
  if (ctx.task.result?.state === 'fail') {
    failed = true;
    process.stderr.write(`e2e: screenshot of the failure: ${await wb.screenshot(`FAILED-${name}`)}\n`);
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
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
  } else {
    process.stderr.write(`e2e: artifacts (screenshots, code-server, browser and extension logs) in ${ARTIFACTS}\n`);
  }
});

describe('a bulk accept in code-server', () => {
  it('Accept Everything accepts the clean change, leaves the conflict pending and says so; the status bar names the conflict and resolves it', async () => {
    const p = wb.page;
    const bar = (text: string) => p.locator('.statusbar-item', { hasText: text }).first();
    await bar('prsm: 0 pending').waitFor({ timeout: 30_000 });

    // One clean change, and one the user's edit to the same line puts in conflict.
    session = await client!.startSession({ name: 'bulk-conflict', agent_id: 'e2e' });
    const [clean] = await agentWrite(client!, session, 'tc-clean', 'clean.txt', lines('clean'), 'Write');
    expect(clean).toMatchObject({ status: 'pending', sync_state: 'synced' });
    const mine = CONF.replace('port = 8080', 'port = 9090 # USER');
    fs.writeFileSync(path.join(s.repo, 'conf.ini'), mine);
    const [conflict] = await agentWrite(client!, session, 'tc-conflict', 'conf.ini', CONF.replace('port = 8080', 'port = 3000 # AGENT'));
    expect(conflict).toMatchObject({ status: 'pending', sync_state: 'conflict' });

    // The status bar names the conflict apart from the pending changes.
    await bar('prsm: 2 pending · 1 conflict').waitFor({ timeout: 15_000 });

    await wb.command('prsm: Accept Everything');
    const warning = p.locator('.notifications-toasts .notification-toast', { hasText: 'left pending' }).first();
    await warning.waitFor({ timeout: 15_000 });
    const said = (await warning.locator('.notification-list-item-message').innerText()).replace(/\s+/g, ' ').trim();
    expect(said).toBe(
      "prsm: 1 change left pending: conf.ini is in conflict with your edits. A conflict is resolved, never accepted in bulk: Conflict: Keep My Version, Take Agent's Version, or Merge in Editor.",
    );
    await warning.locator('.monaco-button', { hasText: 'Resolve Conflicts' }).first().waitFor();
    await wb.screenshot('bulk-accept-left-a-conflict');

    // The server: the clean change accepted, the conflict still pending, the user's file as it was.
    await until(async () => (await record('tc-clean')).status === 'accepted', 10_000, 'the clean change accepted');
    expect(await record('tc-conflict')).toMatchObject({ status: 'pending', sync_state: 'conflict' });
    expect(read('conf.ini')).toBe(mine);
    expect(read('clean.txt')).toBe(lines('clean'));
    await bar('prsm: 1 pending · 1 conflict').waitFor({ timeout: 10_000 });

    // A click on the status bar leads to resolving it: the file opens and
    // the three ways out are offered.
    await bar('prsm: 1 pending · 1 conflict').click();
    const pick = p.locator('.quick-input-widget', { hasText: 'Keep mine' }).first();
    await pick.waitFor({ timeout: 10_000 });
    await p.locator('.tabs-container .tab.active', { hasText: 'conf.ini' }).waitFor({ timeout: 10_000 });
    await p.locator('.quick-input-list .monaco-list-row', { hasText: 'Keep mine' }).first().click();
    await until(async () => (await record('tc-conflict')).status === 'rejected', 10_000, 'the conflict resolved: keep mine');
    expect(read('conf.ini')).toBe(mine);
    await bar('prsm: 0 pending').waitFor({ timeout: 10_000 });
    expect(await p.locator('.statusbar-item', { hasText: 'conflict' }).count()).toBe(0);
  });
});

describe('review talks back, in code-server', () => {
  it('Reject with a reason: Escape keeps the change; the reason typed reaches the server as the note', async () => {
    const p = wb.page;
    const reasons: Session = await client!.startSession({ name: 'reasons', agent_id: 'e2e' });
    const edited = W.replace('beta\n', 'beta WHY_EDIT\n');
    await agentWrite(client!, reasons, 'tc-why', 'w.txt', edited);
    const status = async () => (await client!.getChange(reasons.id, 'tc-why')).records[0].status;
    const question = p.locator('.quick-input-widget', { hasText: 'Why?' }).first();
    const input = question.locator('input');

    await wb.openFile('w.txt', 'WHY_EDIT');
    await wb.lens('Reject').first().waitFor({ timeout: 15_000 });
    // Escape: no reject.
    await wb.lens('Reject').first().click();
    await input.waitFor({ timeout: 10_000 });
    await p.keyboard.press('Escape');
    await question.waitFor({ state: 'hidden', timeout: 10_000 });
    expect(await status()).toBe('pending');
    expect(fs.readFileSync(path.join(s.repo, 'w.txt'), 'utf8')).toBe(edited);

    // A reason: the reject goes with it as its note.
    await wb.lens('Reject').first().click();
    await input.waitFor({ timeout: 10_000 });
    await input.fill('keep beta as it was');
    await p.keyboard.press('Enter');
    await until(async () => (await status()) === 'rejected', 10_000, 'tc-why rejected');
    expect(fs.readFileSync(path.join(s.repo, 'w.txt'), 'utf8')).toBe(W);
    const notes = (await client!.changeFeedback(reasons.id, 'tc-why')).filter((f) => f.kind === 'note');
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ record_id: 'tc-why', decision: expect.stringContaining('reject'), text: 'keep beta as it was', author: 'extension', state: 'queued' });
  });
  it("Comment… on a hunk: Escape posts nothing; the words typed reach the server as a comment on that hunk's lines", async () => {
    const p = wb.page;
    const cs: Session = await client!.startSession({ name: 'comments', agent_id: 'e2e' });
    // One Edit with two hunks: line 2, and lines 7-8 replaced by new lines 7-9.
    const edited = CM.replace('c2\n', 'C2 agent\n').replace('c7\nc8\n', 'C7 agent\nC7b agent\nC8 agent\n');
    const [r] = await agentWrite(client!, cs, 'tc-cm', 'cm.txt', edited);
    expect(r.hunks.map((h) => [h.new_start, h.new_lines])).toEqual([
      [2, 1],
      [7, 3],
    ]);
    const comments = async () => (await client!.changeFeedback(cs.id, 'tc-cm')).filter((f) => f.kind === 'comment');
    const box = p.locator('.quick-input-widget', { hasText: 'for the agent' }).first();
    const input = box.locator('input');

    await wb.openFile('cm.txt', 'C8 agent');
    const lens = (title: string) =>
      p.locator('.editor-group-container.active .monaco-editor .codelens-decoration a', { hasText: new RegExp(`^${title}$`) });
    await until(async () => (await lens('Comment…').count()) === 2, 15_000, 'a Comment… lens per hunk');
    // The lower one is the second hunk's, above "C7 agent".
    const ys = await lens('Comment…').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().y));
    const second = lens('Comment…').nth(ys[0] > ys[1] ? 0 : 1);
    await wb.screenshot('comment-lenses');

    // Escape: nothing posted.
    await second.click();
    await input.waitFor({ timeout: 10_000 });
    expect((await box.innerText()).replace(/\s+/g, ' ')).toContain('Comment on cm.txt lines 7-9 for the agent');
    await p.keyboard.press('Escape');
    await box.waitFor({ state: 'hidden', timeout: 10_000 });
    expect(await comments()).toEqual([]);

    // Words: a comment on lines 7-9, queued; nothing decided.
    await second.click();
    await input.waitFor({ timeout: 10_000 });
    await input.fill('why three lines for two?');
    await p.keyboard.press('Enter');
    const got = await until(async () => {
      const list = await comments();
      return list.length ? list : undefined;
    }, 10_000, 'the comment on the server');
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ record_id: 'tc-cm', lines: '7-9', text: 'why three lines for two?', author: 'extension', state: 'queued' });
    await p.locator('.notifications-toasts', { hasText: 'prsm: comment on cm.txt lines 7-9 queued for the agent.' }).first().waitFor({ timeout: 10_000 });
    const after = (await client!.getChange(cs.id, 'tc-cm')).records[0];
    expect(after.status).toBe('pending');
    expect(after.hunks.map((h) => h.status)).toEqual(['pending', 'pending']);
    expect(read('cm.txt')).toBe(edited);
    await wb.screenshot('comment-queued');
    await client!.accept(cs.id, 'tc-cm'); // leaves no pending change for the tests after
  });
});

describe('line blame, in code-server', () => {
  it("the hover and the cursor line's annotation name the agent of its line, and you for an untouched one; accept shows", async () => {
    const p = wb.page;
    const bs: Session = await client!.startSession({ name: 'blame', agent_id: 'e2e' });
    await client!.startTurn(bs.id, { message_index: 1, prompt: 'make gamma loud' });
    const edited = W.replace('gamma\n', 'gamma BLAME_AGENT\n');
    await agentWrite(client!, bs, 'tc-blame', 'w.txt', edited);
    expect(read('w.txt')).toBe(edited);

    await wb.openFile('w.txt', 'BLAME_AGENT');
    // The annotation after the cursor's line: a click puts the cursor there.
    await wb.line('BLAME_AGENT').click();
    const annotation = await until(async () => {
      const t = await wb.afterText('BLAME_AGENT');
      return t.includes('e2e · Edit') ? t : undefined;
    }, 15_000, "the annotation of the agent's line");
    expect(annotation).toMatch(/^e2e · Edit, (just now|\dm ago), pending review · "make gamma loud"$/);

    // The hover of the agent's line: agent, tool call, prompt, review state.
    await p.mouse.move(0, 0);
    // Over the text: past a line's end VS Code asks no hover provider.
    await wb.line('BLAME_AGENT').hover({ position: { x: 10, y: 5 } });
    const hover = wb.hover('prsm blame');
    await hover.waitFor({ timeout: 15_000 });
    const said = (await hover.innerText()).replace(/\s+/g, ' ');
    expect(said).toContain('prsm blame: e2e · Edit');
    expect(said).toContain('Tool call: Edit tc-blame');
    expect(said).toContain('Prompt: make gamma loud');
    expect(said).toContain('Review: pending review');
    await wb.screenshot('blame-hover-agent');

    // An untouched line is yours, in the hover and in the annotation.
    await p.keyboard.press('Escape');
    await p.mouse.move(0, 0);
    await wb.line('alpha').hover({ position: { x: 10, y: 5 } });
    await wb.hover('you wrote this line').waitFor({ timeout: 15_000 });
    await p.keyboard.press('Escape');
    await wb.line('alpha').click();
    await until(async () => (await wb.afterText('alpha')).includes('You'), 10_000, "the annotation of the user's line");
    expect(await wb.afterText('BLAME_AGENT')).toBe('');

    // Accepted elsewhere: the event refreshes the blame.
    await client!.accept(bs.id, 'tc-blame');
    await wb.line('BLAME_AGENT').click();
    await until(async () => (await wb.afterText('BLAME_AGENT')).includes('accepted'), 15_000, 'the annotation says accepted');

    // Toggle Line Blame: no annotation, no hover; again: back.
    await wb.command('prsm: Toggle Line Blame');
    await until(async () => (await wb.afterText('BLAME_AGENT')) === '', 10_000, 'the annotation gone');
    await wb.command('prsm: Toggle Line Blame');
    await wb.line('BLAME_AGENT').click();
    await until(async () => (await wb.afterText('BLAME_AGENT')).includes('e2e · Edit'), 10_000, 'the annotation back');
  });
});
