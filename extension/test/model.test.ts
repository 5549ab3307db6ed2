import { describe, expect, it } from 'vitest';

import type { Checkpoint, FileChangeRecord, Session } from '../src/api.gen';
import { PrsmApiError } from '../src/client';
import { mergeRecord, Model, type ModelChange, type ModelClient } from '../src/model';
import { checkpoint, rec, session, until } from './helpers';

/** A fake client: a struct of functions over fixed data. */
function fakeClient(data: { sessions: Session[]; records: FileChangeRecord[]; checkpoints?: Checkpoint[] | 'unsupported' }): ModelClient & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    listSessions: async () => {
      calls.push('listSessions');
      return data.sessions;
    },
    listChanges: async (sid: string) => {
      calls.push(`listChanges ${sid}`);
      return data.records.filter((r) => r.session_id === sid);
    },
    getChange: async (sid: string, id: string) => {
      calls.push(`getChange ${sid} ${id}`);
      return { records: data.records.filter((r) => r.session_id === sid && r.id === id) };
    },
    listCheckpoints: async (sid: string) => {
      calls.push(`listCheckpoints ${sid}`);
      if (data.checkpoints === 'unsupported') {
        throw new PrsmApiError('Not Found', 404, 'not_found');
      }
      return (data.checkpoints ?? []).filter((c) => c.session_id === sid);
    },
  };
}

describe('Model', () => {
  it('loads sessions, records and checkpoints', async () => {
    const m = new Model();
    const changes: ModelChange[] = [];
    m.onChange((c) => changes.push(c));
    const r1 = rec({ old: 'a\n', new: 'b\n' });
    const r2 = rec({ old: 'x\n', new: 'y\n', file_path: '/ws/b.txt', rel_path: 'b.txt', status: 'accepted' });
    await m.refresh(fakeClient({ sessions: [session()], records: [r1, r2], checkpoints: [checkpoint()] }));
    expect(m.sessions.map((s) => s.id)).toEqual(['s1']);
    expect(m.records).toHaveLength(2);
    expect(m.pendingCount).toBe(1);
    expect(m.recordsOfFile('/ws/a.txt').map((r) => r.id)).toEqual([r1.id]);
    expect(m.checkpoints('s1').map((c) => c.id)).toEqual(['cp1']);
    expect(m.checkpointsSupported).toBe(true);
    expect([...changes[0].files].sort()).toEqual(['/ws/a.txt', '/ws/b.txt']);
  });

  it('knows when the server has no checkpoint routes', async () => {
    const m = new Model();
    await m.refresh(fakeClient({ sessions: [session()], records: [], checkpoints: 'unsupported' }));
    expect(m.checkpointsSupported).toBe(false);
  });

  it('applies file_changed and fetches the contents the event lacks', async () => {
    const full = rec({ id: 'tc7', old: 'a\n', new: 'b\n' });
    const client = fakeClient({ sessions: [session()], records: [full] });
    const m = new Model();
    const ev = { ...full, old_content: null, new_content: null, pre_tool_content: null };
    const change = m.apply({ type: 'file_changed', data: ev }, client);
    expect(change.files).toEqual(new Set(['/ws/a.txt']));
    expect(m.record('s1', 'tc7')?.new_content).toBeNull();
    await until(() => m.record('s1', 'tc7')?.new_content === 'b\n', 2000, 'content fetched');
    expect(client.calls).toEqual(['getChange s1 tc7']);
  });

  it('applies file_change_status to a known record and fetches an unknown one', async () => {
    const r = rec({ id: 'tc1' });
    const other = rec({ id: 'tc2', status: 'rejected' });
    const client = fakeClient({ sessions: [session()], records: [r, other] });
    const m = new Model();
    await m.refresh(fakeClient({ sessions: [session()], records: [r] }));
    m.apply({ type: 'file_change_status', data: { session_id: 's1', id: 'tc1', tool_call_id: 'tc1', rel_path: 'a.txt', file_path: '/ws/a.txt', status: 'rejected', sync_state: 'synced' } }, client);
    expect(m.record('s1', 'tc1')?.status).toBe('rejected');
    expect(m.record('s1', 'tc1')?.new_content).toBe(r.new_content);
    expect(m.pendingCount).toBe(0);
    m.apply({ type: 'file_change_status', data: { session_id: 's1', id: 'tc2', tool_call_id: 'tc2', rel_path: 'a.txt', file_path: '/ws/a.txt', status: 'rejected', sync_state: 'synced' } }, client);
    await until(() => m.record('s1', 'tc2')?.status === 'rejected', 2000, 'fetched');
  });

  it('fetches a record that became partial: the event does not carry its hunks', async () => {
    const hunk = (index: number, status: string) => ({ index, old_start: index + 1, old_lines: 1, new_start: index + 1, new_lines: 1, status });
    const before = rec({ id: 'tc1', hunks: [hunk(0, 'pending'), hunk(1, 'pending')] });
    const after = { ...before, status: 'partial' as never, hunks: [hunk(0, 'accepted'), hunk(1, 'rejected')] };
    const m = new Model();
    await m.refresh(fakeClient({ sessions: [session()], records: [before] }));
    const client = fakeClient({ sessions: [session()], records: [after] });
    m.apply({ type: 'file_change_status', data: { session_id: 's1', id: 'tc1', tool_call_id: 'tc1', rel_path: 'a.txt', file_path: '/ws/a.txt', status: 'partial' as never, sync_state: 'synced' } }, client);
    await until(() => m.record('s1', 'tc1')?.hunks[1].status === 'rejected', 2000, 'hunks fetched');
    expect(m.record('s1', 'tc1')?.hunks.map((h) => h.status)).toEqual(['accepted', 'rejected']);
    expect(client.calls).toEqual(['getChange s1 tc1']);
  });

  it('fetches a record whose note may have changed with its status (a conflict merged in the editor)', async () => {
    const note = 'merge in your editor: both versions are in the workspace file between conflict markers';
    const before = rec({ id: 'tc1', sync_state: 'conflict', note });
    const after = { ...before, status: 'accepted' as const, sync_state: 'synced' as const, note: 'resolved in your editor' };
    const m = new Model();
    await m.refresh(fakeClient({ sessions: [session()], records: [before] }));
    const client = fakeClient({ sessions: [session()], records: [after] });
    m.apply({ type: 'file_change_status', data: { session_id: 's1', id: 'tc1', tool_call_id: 'tc1', rel_path: 'a.txt', file_path: '/ws/a.txt', status: 'accepted', sync_state: 'synced' } }, client);
    expect(m.record('s1', 'tc1')?.status).toBe('accepted');
    await until(() => m.record('s1', 'tc1')?.note === 'resolved in your editor', 2000, 'note fetched');
    expect(client.calls).toEqual(['getChange s1 tc1']);
  });

  it('reads everything again when a bulk job ends: it announced no status per change', async () => {
    const r = rec({ id: 'tc1' });
    const m = new Model();
    await m.refresh(fakeClient({ sessions: [session()], records: [r] }));
    const client = fakeClient({ sessions: [session()], records: [{ ...r, status: 'rejected' }] });
    const job = { id: 'j1', kind: 'reject_all' as const, session_id: 's1', total: 900, done: 300, conflicts: 0, left: 0, started_at: '2026-01-01T00:00:00Z' };
    m.apply({ type: 'job_progress', data: { ...job, state: 'running' } }, client);
    expect(client.calls).toEqual([]);
    m.apply({ type: 'job_progress', data: { ...job, state: 'done', done: 900 } }, client);
    await until(() => m.record('s1', 'tc1')?.status === 'rejected', 2000, 'read again');
    expect(client.calls).toContain('listSessions');
  });

  it('applies session_updated and checkpoint_created without duplicates', () => {
    const m = new Model();
    m.apply({ type: 'session_updated', data: session({ pending_count: 1 }) });
    m.apply({ type: 'session_updated', data: session({ pending_count: 3 }) });
    expect(m.sessions).toHaveLength(1);
    expect(m.session('s1')?.pending_count).toBe(3);
    const c = m.apply({ type: 'checkpoint_created', data: checkpoint({ id: 'b', created_at: '2026-01-02T00:00:00Z' }) });
    m.apply({ type: 'checkpoint_created', data: checkpoint({ id: 'a', created_at: '2026-01-01T00:00:00Z' }) });
    m.apply({ type: 'checkpoint_created', data: checkpoint({ id: 'b', created_at: '2026-01-02T00:00:00Z' }) });
    expect(c.checkpoints).toBe(true);
    expect(m.checkpoints('s1').map((x) => x.id)).toEqual(['a', 'b']);
  });

  it('replays events that arrive during a load over the loaded state', async () => {
    const r = rec({ id: 'tc1' });
    let release!: () => void;
    const gate = new Promise<void>((res) => (release = res));
    const client = fakeClient({ sessions: [session()], records: [r] });
    const slow: ModelClient = {
      ...client,
      listChanges: async (sid) => {
        const list = await client.listChanges(sid);
        await gate;
        return list; // a snapshot taken before the event below
      },
    };
    const m = new Model();
    const loading = m.refresh(slow);
    await until(() => client.calls.includes('listChanges s1'), 2000, 'load started');
    m.apply({ type: 'file_change_status', data: { session_id: 's1', id: 'tc1', tool_call_id: 'tc1', rel_path: 'a.txt', file_path: '/ws/a.txt', status: 'accepted', sync_state: 'synced' } });
    release();
    await loading;
    expect(m.record('s1', 'tc1')?.status).toBe('accepted');
  });

  it('upserts answers of actions and clears when the server goes', () => {
    const m = new Model();
    const r = rec({ id: 'tc1' });
    m.upsertRecords([r]);
    m.upsertRecords([{ ...r, status: 'accepted', new_content: null }]);
    expect(m.record('s1', 'tc1')).toMatchObject({ status: 'accepted', new_content: r.new_content });
    m.clear();
    expect(m.records).toEqual([]);
  });
});

describe('mergeRecord', () => {
  it('keeps known contents and takes everything else from the newer copy', () => {
    const old = rec({ old: 'a\n', new: 'b\n' });
    const newer = { ...old, status: 'rejected' as const, old_content: null, new_content: null, pre_tool_content: null };
    expect(mergeRecord(old, newer)).toEqual({ ...old, status: 'rejected' });
    expect(mergeRecord(undefined, newer)).toBe(newer);
  });

  it("keeps a read's summary line when an event's copy comes without one", () => {
    const old = rec({ old: 'a\n', new: 'b\n', tool_name: 'Bash', summary: 'make build' });
    const { summary: _s, ...event } = { ...old, status: 'accepted' as const };
    expect(mergeRecord(old, event)).toEqual({ ...old, status: 'accepted' });
    expect(mergeRecord(old, { ...event, summary: 'make test' }).summary).toBe('make test');
  });
  it('lists the pending conflicts apart, oldest first, among the pending ones', () => {
    const m = new Model();
    m.upsertRecords([
      rec({ id: 'c2', sync_state: 'conflict', timestamp: '2026-01-02T00:00:00Z' }),
      rec({ id: 'c1', sync_state: 'conflict', timestamp: '2026-01-01T00:00:00Z' }),
      rec({ id: 'done', sync_state: 'conflict', status: 'rejected' }),
      rec({ id: 'plain' }),
    ]);
    expect(m.conflicts.map((r) => r.id)).toEqual(['c1', 'c2']);
    expect(m.pendingCount).toBe(3);
  });
});
