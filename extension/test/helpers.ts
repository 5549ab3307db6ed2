// Shared test helpers: record and session builders, and a line-range
// computation like the server's (tracker.LineRanges), so the placement tests
// can build realistic records from two texts. It is a minimal diff but not
// git's: where several minimal diffs exist it may pick other lines than the
// server, so tests that depend on that choice run against the real server
// (contract.test.ts).

import type { Checkpoint, FileChangeRecord, Session } from '../src/api.gen';
import { diffLines, splitLines } from '../src/ranges';

export function rangesOf(oldText: string, newText: string): Pick<FileChangeRecord, 'added_ranges' | 'removed_ranges'> {
  const hunks = diffLines(splitLines(oldText), splitLines(newText), 100_000) ?? [];
  return {
    added_ranges: hunks.filter((h) => h.newCount > 0).map((h) => ({ startLine: h.newStart + 1, endLine: h.newStart + h.newCount })),
    removed_ranges: hunks.filter((h) => h.oldCount > 0).map((h) => ({ startLine: h.oldStart + 1, endLine: h.oldStart + h.oldCount })),
  };
}

let seq = 0;

export function rec(p: Partial<FileChangeRecord> & { old?: string; new?: string } = {}): FileChangeRecord {
  seq++;
  const oldText = p.old ?? p.old_content ?? '';
  const newText = p.new ?? p.new_content ?? '';
  const ranges = p.added_ranges || p.removed_ranges ? {} : rangesOf(oldText, newText);
  const { old: _o, new: _n, ...rest } = p;
  return {
    id: `tc${seq}`,
    session_id: 's1',
    file_path: '/ws/a.txt',
    rel_path: 'a.txt',
    agent_id: 'agent',
    change_type: 'modify',
    tool_call_id: `tc${seq}`,
    tool_name: 'Edit',
    message_index: 0,
    old_content: oldText,
    new_content: newText,
    pre_tool_content: oldText,
    added_ranges: [],
    removed_ranges: [],
    timestamp: `2026-01-01T00:00:${String(seq % 60).padStart(2, '0')}.${String(seq).padStart(6, '0')}Z`,
    status: 'pending',
    sync_state: 'synced',
    binary: false,
    mode_before: 0o100644,
    mode_after: 0o100644,
    size_before: oldText.length,
    size_after: newText.length,
    hunks: [], // none: placements rebuild them from the ranges, as for a binary record
    ...ranges,
    ...rest,
  };
}

export function session(p: Partial<Session> = {}): Session {
  return {
    id: 's1',
    name: 'session-1',
    agent_id: 'agent',
    mode: 'auto',
    status: 'active',
    worktree_path: '/home/.prsm/projects/x/worktrees/s1',
    branch: 'prsm/s1',
    base_commit: 'abc',
    created_at: '2026-01-01T00:00:00Z',
    ended_at: null,
    pending_count: 0,
    ...p,
  };
}

export function checkpoint(p: Partial<Checkpoint> = {}): Checkpoint {
  return {
    id: 'cp1',
    session_id: 's1',
    kind: 'auto',
    name: '',
    annotation: '',
    message_index: 0,
    tool_call_id: '',
    tree: 'deadbeef',
    created_at: '2026-01-01T00:00:00Z',
    files_changed: 0,
    ...p,
  };
}

export function lines(...ls: string[]): string {
  return ls.map((l) => `${l}\n`).join('');
}

/** Polls until fn returns truthy, or fails after ms. */
export async function until<T>(fn: () => T | Promise<T>, ms = 5000, what = 'condition'): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) {
        return v as NonNullable<T>;
      }
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) {
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
