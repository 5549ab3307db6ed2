// Small formatting helpers shared by the views.

import type { FileChangeRecord, LineRange, RecordStatus } from '../../extension/src/api.gen';

const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const dtf = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/**
 * "3 minutes ago"; now is passed in so a ticking clock re-renders it. The
 * clock ticks every 30 s, so a change newer than the last tick must not read
 * "in 20 seconds": nothing the page shows is in the future.
 */
export function ago(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.min(0, Math.round((t - Math.max(now, Date.now())) / 1000));
  const abs = Math.abs(s);
  if (abs < 10) return 'just now';
  if (abs < 60) return rtf.format(s, 'second');
  if (abs < 3600) return rtf.format(Math.round(s / 60), 'minute');
  if (abs < 86400) return rtf.format(Math.round(s / 3600), 'hour');
  return rtf.format(Math.round(s / 86400), 'day');
}

export function fullTime(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : dtf.format(t);
}

/**
 * The page's one pluralisation helper: a count and its noun, and the verb
 * that follows it, in the forms the count takes. plural(1, 'file') is
 * "1 file", plural(2, 'file') "2 files"; an irregular noun or a verb is
 * given as "one|many": plural(1, 'pending change', 'leaves|leave') is
 * "1 pending change leaves", plural(3, 'entry|entries') "3 entries".
 */
export function plural(n: number, noun: string, verb = ''): string {
  return `${n.toLocaleString('en')} ${agree(n, noun)}${verb ? ' ' + agree(n, verb) : ''}`;
}

/** The form of a word ("one|many", or a noun that takes an s) that the count n takes; plural's part. */
export function agree(n: number, word: string): string {
  const [one, many] = word.split('|');
  return n === 1 ? one : (many ?? one + 's');
}

/** The page's one human size: "1 byte", "812 bytes", "4.9 KiB", "1.2 MiB", "3.0 GiB". */
export function humanSize(n: number): string {
  if (n < 1024) return plural(n, 'byte');
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

/** A binary change's size change in words: "new, 4.9 KiB", "deleted, was 812 bytes", "812 bytes → 4.9 KiB". */
export function sizeChange(change: FileChangeRecord['change_type'], before: number, after: number): string {
  if (change === 'create') return `new, ${humanSize(after)}`;
  if (change === 'delete') return `deleted, was ${humanSize(before)}`;
  return `${humanSize(before)} → ${humanSize(after)}`;
}

export function lineCounts(r: FileChangeRecord): { added: number; removed: number } {
  const count = (rs: LineRange[]) => rs.reduce((n, x) => n + x.endLine - x.startLine + 1, 0);
  return { added: count(r.added_ranges), removed: count(r.removed_ranges) };
}

/** An id cut to 12 characters, keeping a multi-file tool call's ":N" suffix. */
export function shortId(id: string): string {
  const m = /^(.*?)(:\d+)?$/.exec(id);
  const base = m?.[1] ?? id;
  const suffix = m?.[2] ?? '';
  return (base.length > 12 ? base.slice(0, 12) + '…' : base) + suffix;
}

export function splitPath(p: string): { dir: string; base: string } {
  const i = p.lastIndexOf('/');
  return i < 0 ? { dir: '', base: p } : { dir: p.slice(0, i + 1), base: p.slice(i + 1) };
}

const imageTypes: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  ico: 'image/x-icon',
  avif: 'image/avif',
};

/** The image MIME type of a path, or '' when it is not an image we preview. */
export function imageType(path: string): string {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  return imageTypes[ext] ?? '';
}

export const changeVerb: Record<FileChangeRecord['change_type'], string> = {
  create: 'created',
  modify: 'modified',
  delete: 'deleted',
};

export const syncLabel: Record<FileChangeRecord['sync_state'], string> = {
  synced: 'in workspace',
  conflict: 'conflict',
  pending_review: 'awaiting review',
};

/** A mode change in words: "+x", "-x" or "". */
export function execBit(r: FileChangeRecord): string {
  if (r.change_type !== 'modify') return '';
  const before = (r.mode_before & 0o111) !== 0;
  const after = (r.mode_after & 0o111) !== 0;
  if (!before && after) return 'made executable';
  if (before && !after) return 'no longer executable';
  return '';
}

/** A record's status as the server sends it. */
export function statusOf(r: FileChangeRecord): RecordStatus {
  return r.status;
}

/**
 * Whether a rewind set the record aside: it was made after the checkpoint a
 * rewind went back to, so its change is out of the worktree and the
 * workspace. It is not pending and cannot be decided; a rewind to a later
 * checkpoint (the rollback's Undo) brings it back with its old status.
 */
export function isRewound(r: FileChangeRecord): boolean {
  return r.status === 'rewound';
}

/** The records of a session in two: the ones the page reviews, and the rewound ones (a group of their own). */
export function splitRewound(recs: FileChangeRecord[]): { live: FileChangeRecord[]; rewound: FileChangeRecord[] } {
  return { live: recs.filter((r) => !isRewound(r)), rewound: recs.filter(isRewound) };
}

/** A status in words, for a rewind's list of undone decisions. */
export const statusWord: Record<RecordStatus, string> = {
  pending: 'pending',
  accepted: 'accepted',
  rejected: 'rejected',
  partial: 'partly accepted',
  rewound: 'rewound',
};

/**
 * One decision a rewind changes, in words: "accepted → pending again",
 * "pending → rewound (made after the checkpoint)", "rewound → accepted
 * (comes back)".
 */
export function decisionWords(from: RecordStatus, to: RecordStatus): string {
  const f = statusWord[from] ?? from;
  const t = statusWord[to] ?? to;
  if (to === 'rewound') return `${f} → rewound (made after the checkpoint)`;
  if (from === 'rewound') return `rewound → ${t} (comes back)`;
  return `${f} → ${t} again`;
}

/** Whether the record's hunks can still be decided one by one. */
export function underReview(r: FileChangeRecord): boolean {
  const s = statusOf(r);
  return s === 'pending' || s === 'partial';
}

/** Whether the record waits for its conflict to be resolved (keep mine, take the agent's, merge). */
export function inConflict(r: FileChangeRecord): boolean {
  // A rewound change is out of the workspace: no conflict of its own to settle.
  return r.sync_state === 'conflict' && r.status !== 'rejected' && r.status !== 'rewound';
}

/** Whether the record's conflict waits in the workspace file between markers. */
export function mergingInEditor(r: FileChangeRecord): boolean {
  return inConflict(r) && (r.note ?? '').startsWith('merge in your editor');
}

/**
 * What the tool name means to a user: changes that prsm saw without a
 * hook (a shell command of `prsm run`, say) are named by how they were
 * found, not by the internal "Watch".
 */
export function toolLabel(r: Pick<FileChangeRecord, 'tool_name' | 'tool_call_id'>): { label: string; title: string } {
  if (r.tool_name === 'Watch' && r.tool_call_id.startsWith('reconcile-')) {
    return { label: 'found at server start', title: 'Changed while the prsm server was down; found when it started' };
  }
  if (r.tool_name === 'Watch') {
    return { label: 'seen by the watcher', title: 'prsm saw this change in the worktree without a hook: a shell command, say' };
  }
  if (r.tool_name === 'Rollback') return { label: 'rollback', title: 'Made by a rollback to a checkpoint' };
  return { label: r.tool_name || 'change', title: `Tool ${r.tool_name}` };
}

/**
 * A short summary of a change for its row: the server's summary (a shell
 * command, or the first changed line) when it sends one, else the first
 * changed line that is not blank (an added one, else a removed one, marked
 * "−"), or ''.
 */
export function summaryOf(r: FileChangeRecord): string {
  // The server's line when it sends one: a shell command's text, say,
  // which the change's content does not hold.
  if (r.summary) return cut(r.summary);
  if (r.binary) return '';
  const first = (content: string | null, ranges: LineRange[]) => {
    if (content == null) return '';
    const lines = content.split('\n');
    for (const x of ranges) {
      for (let i = x.startLine; i <= x.endLine && i <= lines.length; i++) {
        const l = lines[i - 1].trim();
        if (l) return l;
      }
    }
    return '';
  };
  const added = first(r.new_content, r.added_ranges);
  if (added) return cut(added);
  const removed = first(r.old_content ?? r.pre_tool_content, r.removed_ranges);
  return removed ? `− ${cut(removed)}` : '';
}

function cut(s: string, n = 120): string {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}
