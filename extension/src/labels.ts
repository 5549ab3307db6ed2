// What a change is called where a user reads it: the tool in words a user
// knows, the file, and a short summary of what changed. Raw tool-call ids
// (toolu_01E8...) say nothing to a user, so they come second: whole, in the
// tooltip, and copyable. No vscode here.

import * as path from 'node:path';

import type { FileChangeRecord } from './api.gen';
import { size } from './words';

/**
 * Whether a conflict waits in the workspace file between conflict markers
 * (resolved with "markers"): the server's note says so until it sees the
 * markers gone and accepts the change.
 */
export function mergingInEditor(r: FileChangeRecord): boolean {
  return r.status === 'pending' && r.sync_state === 'conflict' && (r.note ?? '').startsWith('merge in your editor');
}

/** The longest summary shown; longer lines end in "…". */
export const SUMMARY_MAX = 60;

/** Whether prsm found the change at a start, made while it was not running. */
function reconciled(r: Pick<FileChangeRecord, 'tool_call_id'>): boolean {
  return r.tool_call_id.startsWith('reconcile-');
}

/**
 * The tool of a record in a user's words. Watch records are changes that no
 * tool call announced: ones `prsm run`'s watcher saw, or ones found at a
 * start (reconcile).
 */
export function toolLabel(r: Pick<FileChangeRecord, 'tool_name' | 'tool_call_id'>): string {
  if (r.tool_name === 'Watch') {
    return reconciled(r) ? 'changed while prsm was not running' : 'seen by the watcher';
  }
  return r.tool_name || 'change';
}

/** A record's row label: the tool and the file, e.g. "Edit a.go", "a.go, seen by the watcher". */
export function changeLabel(r: FileChangeRecord): string {
  const file = path.posix.basename(r.rel_path);
  return r.tool_name === 'Watch' ? `${file}, ${toolLabel(r)}` : `${toolLabel(r)} ${file}`;
}

function shorten(s: string): string {
  const t = s.trim().replace(/\s+/g, ' ');
  return t.length > SUMMARY_MAX ? `${t.slice(0, SUMMARY_MAX - 1)}…` : t;
}

/** The first non-blank line of content within ranges (1-based, inclusive). */
function firstLine(content: string | null, ranges: FileChangeRecord['added_ranges']): string | undefined {
  if (content === null || content === undefined) {
    return undefined;
  }
  const lines = content.split('\n');
  for (const r of [...ranges].sort((a, b) => a.startLine - b.startLine)) {
    for (let i = r.startLine; i <= r.endLine && i <= lines.length; i++) {
      const l = lines[i - 1].trim();
      if (l) {
        return shorten(l);
      }
    }
  }
  return undefined;
}

/**
 * A short summary of what a record changed: the server's summary (a shell
 * command, or the first changed line) when it sends one, else its first
 * added line (an Edit's first changed line), else "removed: " and its first removed line;
 * a binary file's size change; a deletion or a mode change in words. Empty
 * when the content is not known (over the inline size limit).
 */
export function changeSummary(r: FileChangeRecord): string {
  // The server's line when it sends one: a shell command's text, which the
  // change's content does not hold.
  if (r.summary) {
    return shorten(r.summary);
  }
  if (r.binary) {
    switch (r.change_type) {
      case 'create':
        return `binary, ${size(r.size_after)}`;
      case 'delete':
        return `binary, ${size(r.size_before)} deleted`;
      default:
        return `binary, ${size(r.size_before)} → ${size(r.size_after)}`;
    }
  }
  if (r.change_type === 'delete') {
    return 'file deleted';
  }
  const added = firstLine(r.new_content, r.added_ranges);
  if (added) {
    return added;
  }
  const removed = firstLine(r.old_content, r.removed_ranges);
  if (removed) {
    return `removed: ${removed}`;
  }
  if (r.mode_before !== r.mode_after && r.change_type === 'modify') {
    return (r.mode_after & 0o111) !== 0 ? 'made executable' : 'no longer executable';
  }
  return r.change_type === 'create' ? 'empty file' : '';
}
