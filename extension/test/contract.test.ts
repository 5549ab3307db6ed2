// The client against a real prsm server (PRSM_BIN; ci.sh builds it): the
// JSON of every answer has exactly the fields of the client's types, the
// events arrive, and the line placement puts lenses on the lines the agent
// changed. Skipped, loudly, when PRSM_BIN is not set.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Blame, BlameLine, BlameOrigin, Checkpoint, FileChangeRecord, Plan, PrsmEvent, ServerInfo, Session, StatusEvent } from '../src/api.gen';
import type { PrsmClient } from '../src/client';
import { PrsmApiError } from '../src/client';
import { placeRecords, splitLines } from '../src/ranges';
import { lines, until } from './helpers';
import { agentWrite, PRSM_BIN, scratchRepo, serverInfo, startPrsm, stopPrsm, type Scratch } from './prsm';

// Every field of each type, checked complete by the compiler (satisfies).
const keys = <T>(o: Record<keyof T, true>) => Object.keys(o).sort();
const SESSION = keys<Session>({
  id: true, name: true, agent_id: true, mode: true, status: true, worktree_path: true, branch: true, base_commit: true,
  created_at: true, ended_at: true, pending_count: true, note: true,
}).filter((k) => k !== 'note'); // only on a session prsm has something to say about
const RECORD = keys<FileChangeRecord>({
  id: true, session_id: true, file_path: true, rel_path: true, agent_id: true, change_type: true, tool_call_id: true,
  tool_name: true, message_index: true, old_content: true, new_content: true, pre_tool_content: true, added_ranges: true,
  removed_ranges: true, timestamp: true, status: true, sync_state: true, binary: true, mode_before: true, mode_after: true,
  size_before: true, size_after: true, note: true, hunks: true, summary: true, commit: true,
}).filter((k) => k !== 'note' && k !== 'commit'); // note: only on a record with something to say (a side too large to keep); commit: only once prsm commit made one; summary is on every record with a line to show, as these have
const STATUS_EVENT = keys<StatusEvent>({
  session_id: true, id: true, tool_call_id: true, rel_path: true, file_path: true, status: true, sync_state: true, hunks: true,
  note: true,
}).filter((k) => k !== 'note'); // hunks: only on a record with hunks (tc-b, below, has them); note: on a record with one
const BLAME = keys<Blame>({ path: true, lines: true, origins: true, warnings: true }).filter((k) => k !== 'warnings'); // warnings: only when blame skipped something
const BLAME_LINE = keys<BlameLine>({ line: true, text: true, origin: true });
const BLAME_ORIGIN = keys<BlameOrigin>({
  source: true, session_id: true, agent_id: true, record_id: true, tool_name: true, tool_call_id: true, turn: true, prompt: true,
  time: true, status: true, commit: true, model_id: true,
}).filter((k) => k !== 'commit' && k !== 'model_id'); // commit: once committed; model_id: when the agent named its model
const SERVER_INFO = keys<ServerInfo>({ pid: true, addr: true, token: true, workspace: true, version: true });
const CHECKPOINT = keys<Checkpoint>({
  id: true, session_id: true, kind: true, name: true, annotation: true, message_index: true, tool_call_id: true, tree: true, created_at: true,
  files_changed: true,
});
const PLAN_REQUIRED = ['affected_files', 'checkpoint_id', 'conflicts', 'decisions', 'dry_run', 'operations', 'summary', 'warnings'];
const PLAN_ALL = keys<Plan>({
  checkpoint_id: true, operations: true, affected_files: true, conflicts: true, warnings: true, dry_run: true, safety_checkpoint_id: true,
  decisions: true, summary: true,
});

const BASE = lines('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta');

describe.skipIf(!PRSM_BIN)('contract with a real prsm server', () => {
  let s: Scratch;
  let client: PrsmClient;
  let sess: Session;
  const events: PrsmEvent[] = [];
  let closeEvents: () => void = () => undefined;

  beforeAll(async () => {
    s = scratchRepo({ 'a.txt': BASE, 'b.txt': BASE, 'd.txt': BASE, 'gone.txt': 'bye\n', 'img.bin': '\u0000\u0001', 'm.txt': lines('0', '2', '2', '1', '0', '1', '0', '1') });
    client = await startPrsm(s);
    let open = false;
    const stream = client.events({ onOpen: () => (open = true), onEvent: (e) => events.push(e) });
    closeEvents = () => stream.close();
    await until(() => open, 5000, 'event stream');
    sess = await client.startSession({ name: 'contract', agent_id: 'test-agent' });
  }, 60_000);

  afterAll(async () => {
    closeEvents();
    client?.dispose();
    if (s) {
      await stopPrsm(s);
      fs.rmSync(s.root, { recursive: true, force: true });
    }
  });

  it('writes server.json and sessions with exactly the SPEC fields', async () => {
    const raw = JSON.parse(fs.readFileSync(path.join(s.home, 'projects', fs.readdirSync(path.join(s.home, 'projects'))[0], 'server.json'), 'utf8'));
    expect(Object.keys(raw).sort()).toEqual(SERVER_INFO);
    expect((await serverInfo(s)).workspace).toBe(s.repo);
    expect(Object.keys(sess).sort()).toEqual(SESSION);
    const listed = await client.listSessions();
    expect(listed.map((x) => x.id)).toEqual([sess.id]);
    expect(Object.keys(listed[0]).sort()).toEqual(SESSION);
  });

  it('answers complete with records of exactly the SPEC fields, and places the lens on the new line', async () => {
    const after = lines('alpha', 'beta', 'GAMMA', 'gamma.5', 'delta', 'epsilon', 'zeta');
    const recs = await agentWrite(client, sess, 'tc-a', 'a.txt', after);
    expect(recs).toHaveLength(1);
    const r = recs[0];
    expect(Object.keys(r).sort()).toEqual(RECORD);
    expect(r.summary).toBe('GAMMA'); // the first changed line
    expect(r).toMatchObject({ id: 'tc-a', rel_path: 'a.txt', file_path: path.join(s.repo, 'a.txt'), status: 'pending', sync_state: 'synced', change_type: 'modify', pre_tool_content: BASE, new_content: after });
    const disk = fs.readFileSync(path.join(s.repo, 'a.txt'), 'utf8');
    expect(disk).toBe(after);
    const [p] = placeRecords(recs, { text: disk, lineCount: splitLines(disk).length + 1, maxLines: 1000 });
    expect(splitLines(disk)[p.lensLine]).toBe('GAMMA');
    expect(p.added.map((x) => splitLines(disk).slice(x.start, x.end + 1))).toEqual([['GAMMA', 'gamma.5']]);
  });

  it('streams file_changed, session_updated and file_change_status with the same fields', async () => {
    await until(() => events.some((e) => e.type === 'file_changed' && e.data.id === 'tc-a'), 5000, 'file_changed');
    const fc = events.find((e) => e.type === 'file_changed')!;
    // The event's record carries its summary, as a read's does.
    expect(Object.keys(fc.data).sort()).toEqual(RECORD);
    const su = events.find((e) => e.type === 'session_updated')!;
    expect(Object.keys(su.data).sort()).toEqual(SESSION);
    await agentWrite(client, sess, 'tc-b', 'b.txt', lines('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'));
    await client.accept(sess.id, 'tc-b');
    await until(() => events.some((e) => e.type === 'file_change_status' && e.data.id === 'tc-b'), 5000, 'file_change_status');
    const st = events.find((e) => e.type === 'file_change_status' && e.data.id === 'tc-b')!;
    expect(Object.keys(st.data).sort()).toEqual(STATUS_EVENT);
    expect(st.data).toMatchObject({ status: 'accepted', rel_path: 'b.txt' });
  });

  it('blames a file with exactly the Blame fields: the agent\'s lines to its record, the rest to you; -L; absolute paths too', async () => {
    const b = await client.blame('a.txt');
    expect(Object.keys(b).sort()).toEqual(BLAME);
    expect(Object.keys(b.lines![0]).sort()).toEqual(BLAME_LINE);
    expect(b.origins).toHaveLength(1);
    expect(Object.keys(b.origins![0]).sort()).toEqual(BLAME_ORIGIN);
    expect(b.origins![0]).toMatchObject({ source: 'record', session_id: sess.id, record_id: 'tc-a', tool_call_id: 'tc-a', tool_name: 'Edit', status: 'pending' });
    const who = (x: Blame) => x.lines!.map((l) => `${l.line} ${l.text} ${l.origin < 0 ? 'you' : x.origins![l.origin].record_id}`);
    expect(who(b)).toEqual(['1 alpha you', '2 beta you', '3 GAMMA tc-a', '4 gamma.5 tc-a', '5 delta you', '6 epsilon you', '7 zeta you']);
    expect(who(await client.blame(path.join(s.repo, 'a.txt'), { start: 3, end: 4 }))).toEqual(['3 GAMMA tc-a', '4 gamma.5 tc-a']);
    await expect(client.blame('no-such.txt')).rejects.toMatchObject({ status: 404 });
  });

  it('places a pure deletion at the removed range and rejects it back onto disk', async () => {
    const second = lines('alpha', 'beta', 'GAMMA', 'gamma.5', 'epsilon', 'zeta'); // delta removed
    const [r] = await agentWrite(client, sess, 'tc-del', 'a.txt', second);
    expect(r.added_ranges).toEqual([]);
    const all = await client.listChanges(sess.id, { file: 'a.txt' });
    expect(all.map((x) => x.id)).toEqual(['tc-a', 'tc-del']);
    const ps = placeRecords(all, { text: second, lineCount: 7, maxLines: 1000 });
    expect(ps.map((p) => [p.record.id, splitLines(second)[p.lensLine]])).toEqual([
      ['tc-a', 'GAMMA'],
      ['tc-del', 'epsilon'],
    ]);
    const ans = await client.reject(sess.id, 'tc-del');
    expect(ans.records.map((x) => [x.id, x.status])).toEqual([['tc-del', 'rejected']]);
    expect(fs.readFileSync(path.join(s.repo, 'a.txt'), 'utf8')).toBe(lines('alpha', 'beta', 'GAMMA', 'gamma.5', 'delta', 'epsilon', 'zeta'));
    await expect(client.accept(sess.id, 'tc-del')).rejects.toMatchObject({ status: 409, code: 'already_rejected' });
    // Repeating a reject is a no-op, not an error.
    await client.reject(sess.id, 'tc-del');
  });

  it("places an ambiguous edit on the lines of the server's diff (git's), not on a diff of its own", async () => {
    // Two minimal diffs exist; git's (the server's one diff, the one its
    // merges use) replaces line 2 and adds line 6, another Myers replaces
    // line 3 and adds line 5.
    const after = lines('0', 'N', '2', '1', '0', '0', '1', '0', '1');
    const [r] = await agentWrite(client, sess, 'tc-amb', 'm.txt', after);
    expect(r.removed_ranges).toEqual([{ startLine: 2, endLine: 2 }]);
    expect(r.added_ranges).toEqual([{ startLine: 2, endLine: 2 }, { startLine: 6, endLine: 6 }]);
    const [p] = placeRecords([r], { text: after, lineCount: 10, maxLines: 1000 });
    expect(p.added).toEqual([{ start: 1, end: 1 }, { start: 5, end: 5 }]);
    expect(p.removed).toMatchObject([{ line: 1, count: 1, oldStart: 1 }]);
  });

  it('serves both sides of a record, the diff, and nothing for an absent side', async () => {
    const [created] = await agentWrite(client, sess, 'tc-new', 'dir/new.txt', 'hello\n', 'Write');
    expect(created).toMatchObject({ change_type: 'create', added_ranges: [{ startLine: 1, endLine: 1 }] });
    expect(await client.changeContent(sess.id, 'tc-new', 'before')).toBeUndefined();
    expect((await client.changeContent(sess.id, 'tc-new', 'after'))?.toString()).toBe('hello\n');
    expect((await client.changeContent(sess.id, 'tc-a', 'before'))?.toString()).toBe(BASE);
    expect(await client.changeDiff(sess.id, 'tc-a')).toContain('+GAMMA');
    const [gone] = await agentWrite(client, sess, 'tc-gone', 'gone.txt', null, 'Bash');
    expect(gone).toMatchObject({ change_type: 'delete', new_content: null });
    expect(await client.changeContent(sess.id, gone.id, 'after')).toBeUndefined();
    const got = await client.getChange(sess.id, 'tc-new');
    expect(got.records.map((x) => x.id)).toEqual(['tc-new']);
  });

  it('marks binary records and carries no inline content for them', async () => {
    const [bin] = await agentWrite(client, sess, 'tc-bin', 'img.bin', '\u0000\u0002\u0003');
    expect(bin).toMatchObject({ binary: true, old_content: null, new_content: null, added_ranges: [], removed_ranges: [] });
    expect([...(await client.changeContent(sess.id, 'tc-bin', 'after'))!]).toEqual([0, 2, 3]);
  });

  it('accepts a whole file and everything, with {records} answers', async () => {
    const ans = await client.acceptAll(sess.id, 'a.txt');
    expect(ans.records.map((x) => [x.id, x.status])).toEqual([['tc-a', 'accepted']]);
    const all = await client.acceptEverything();
    expect(all.records.every((x) => x.status === 'accepted')).toBe(true);
    expect((await client.listChanges(sess.id, { status: 'pending' })).length).toBe(0);
  });

  it('gives errors as {error, code}', async () => {
    const err = await client.getChange(sess.id, 'no-such').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PrsmApiError);
    expect(err).toMatchObject({ status: 404, code: 'record_not_found' });
  });

  it('takes ids escaped as encodeURIComponent escapes them (a shell record\'s ":" as %3A)', async () => {
    const recs = await agentWrite(client, sess, 'sh1', 'shell.txt', 'by a shell\n', 'Bash');
    expect(recs.map((x) => x.id)).toEqual(['sh1:0']);
    const plain = await client.request('GET', `/sessions/${sess.id}/file-changes/sh1:0`);
    const escaped = await client.request('GET', `/sessions/${encodeURIComponent(sess.id)}/file-changes/${encodeURIComponent('sh1:0')}`);
    expect(escaped.toString('utf8')).toBe(plain.toString('utf8'));
    const accepted = JSON.parse((await client.request('POST', `/sessions/${sess.id}/file-changes/sh1%3A0/accept`)).toString('utf8'));
    expect(accepted.records.map((x: FileChangeRecord) => [x.id, x.status])).toEqual([['sh1:0', 'accepted']]);
  });

  it('leaves a conflicting change out of the workspace, and "Keep mine" (reject) keeps the user\'s file', async () => {
    const mine = BASE.replace('alpha', 'USER');
    fs.writeFileSync(path.join(s.repo, 'd.txt'), mine);
    const [r] = await agentWrite(client, sess, 'tc-conflict', 'd.txt', BASE.replace('alpha', 'AGENT'));
    expect(r).toMatchObject({ status: 'pending', sync_state: 'conflict' });
    expect(fs.readFileSync(path.join(s.repo, 'd.txt'), 'utf8')).toBe(mine);
    const [p] = placeRecords([r], { text: mine, lineCount: 7, maxLines: 1000 });
    expect(p).toMatchObject({ lensLine: 0, inDocument: false, added: [] });
    const ans = await client.reject(sess.id, 'tc-conflict');
    expect(ans.records[0].status).toBe('rejected');
    expect(fs.readFileSync(path.join(s.repo, 'd.txt'), 'utf8')).toBe(mine);
    expect(fs.readFileSync(path.join(sess.worktree_path, 'd.txt'), 'utf8')).toBe(BASE);
  });

  it('speaks the checkpoint routes of SPEC.md (when this server has them)', async (ctx) => {
    let list: Checkpoint[];
    try {
      list = await client.listCheckpoints(sess.id);
    } catch (err) {
      if (err instanceof PrsmApiError && err.status === 404 && err.code === 'not_found') {
        ctx.skip('this prsm server has no checkpoint routes yet');
      }
      throw err;
    }
    expect(Array.isArray(list)).toBe(true);
    const checkKeys = (c: Checkpoint) => {
      // SPEC's fields, and files_changed, which this server adds.
      expect(Object.keys(c).sort()).toEqual(CHECKPOINT);
    };
    list.forEach(checkKeys);
    const named = await client.createCheckpoint(sess.id, { name: 'contract-point', annotation: 'before x' });
    checkKeys(named);
    expect(named).toMatchObject({ kind: 'manual', name: 'contract-point', annotation: 'before x' });
    const annotated = await client.annotateCheckpoint(sess.id, named.id, 'renamed note');
    expect(annotated.annotation).toBe('renamed note');
    await agentWrite(client, sess, 'tc-after-cp', 'b.txt', lines('after', 'checkpoint'));
    await until(() => events.some((e) => e.type === 'checkpoint_created'), 5000, 'checkpoint_created');
    const plan = await client.rewindPreview(sess.id, named.id);
    for (const k of PLAN_REQUIRED) {
      expect(plan).toHaveProperty(k);
    }
    for (const k of Object.keys(plan)) {
      expect(PLAN_ALL).toContain(k);
    }
    expect(plan.operations.map((o) => [o.type, o.path])).toEqual([['restore', 'b.txt']]);
    const before = fs.readFileSync(path.join(s.repo, 'b.txt'), 'utf8');
    expect(before).toBe(lines('after', 'checkpoint'));
    const done = await client.rewind(sess.id, named.id);
    expect(done.safety_checkpoint_id).toBeTruthy();
    expect(fs.readFileSync(path.join(s.repo, 'b.txt'), 'utf8')).toBe(lines('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'));
    // Made after the checkpoint: set aside as rewound, not rejected; no new record.
    expect((await client.getChange(sess.id, 'tc-after-cp')).records[0].status).toBe('rewound');
    expect(done.decisions).toEqual([{ record_id: 'tc-after-cp', rel_path: 'b.txt', tool_name: 'Edit', from: 'pending', to: 'rewound' }]);
    expect(done.summary.length).toBeGreaterThan(0);
    expect((await client.listChanges(sess.id)).filter((r) => r.tool_name === 'Rollback')).toEqual([]);
  });

  it('asks before a review-mode accept applies earlier changes: needs_earlier, dry_run, with_earlier', async () => {
    const rv = await client.startSession({ name: 'contract review', mode: 'review' });
    await agentWrite(client, rv, 'tc-r1', 'r.txt', lines('one'), 'Write');
    await agentWrite(client, rv, 'tc-r2', 'r.txt', lines('one', 'two'));
    const ws = () => (fs.existsSync(path.join(s.repo, 'r.txt')) ? fs.readFileSync(path.join(s.repo, 'r.txt'), 'utf8') : null);
    await expect(client.accept(rv.id, 'tc-r2')).rejects.toMatchObject({ status: 409, code: 'needs_earlier' });
    await expect(client.decideHunk(rv.id, 'tc-r2', 0, true)).rejects.toMatchObject({ status: 409, code: 'needs_earlier' });
    const preview = await client.accept(rv.id, 'tc-r2', { dry_run: true });
    expect(preview.records.map((x) => [x.id, x.status])).toEqual([['tc-r2', 'pending']]);
    expect((preview.earlier ?? []).map((x) => [x.id, x.status])).toEqual([['tc-r1', 'pending']]);
    expect(ws()).toBeNull();
    const ans = await client.accept(rv.id, 'tc-r2', { with_earlier: true });
    expect(ans.records.map((x) => [x.id, x.status])).toEqual([['tc-r1', 'accepted'], ['tc-r2', 'accepted']]);
    expect((ans.earlier ?? []).map((x) => x.id)).toEqual(['tc-r1']);
    expect(ws()).toBe(lines('one', 'two'));
  });
});
