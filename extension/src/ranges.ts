// Line arithmetic: where a record's lines are in the document as it is now.
// A record's added_ranges are in its own new-file lines and its
// removed_ranges in its old-file lines. Later records of the same session and
// file, and edits that are not the session's (the user's, other sessions'),
// move them; this module maps them through both. Pure: no vscode.
//
// A record's own hunks are the ones the server sent (recordHunks; rebuilt
// from its ranges by hunksFromRanges for a server without them), never
// diffed here: they come from the server's one line
// diff, git's, the same one its merges and unified diffs use, so a lens and
// its decorations sit on exactly the lines the applied change touched. The
// only diff run here (diffLines) maps from the session's latest content to
// the document as the editor holds it, unsaved edits included, which the
// server never sees; it only moves positions, so which of several minimal
// diffs it picks does not change what a record shows.

import type { ApiHunk, FileChangeRecord, LineRange } from './client';

/**
 * One contiguous change block, 0-based and half-open: old lines
 * [oldStart, oldStart+oldCount) became new lines [newStart, newStart+newCount).
 * An empty side marks the position where the other side's lines were.
 */
export interface Hunk {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
}

/**
 * Rebuilds a record's hunks from its ranges: an added and a removed range
 * that start at the same aligned position are one block (a modification),
 * the others are pure insertions or deletions.
 */
export function hunksFromRanges(added: readonly LineRange[], removed: readonly LineRange[]): Hunk[] {
  const a = [...added].sort((x, y) => x.startLine - y.startLine);
  const r = [...removed].sort((x, y) => x.startLine - y.startLine);
  const out: Hunk[] = [];
  let delta = 0; // new index minus old index before the next block
  let i = 0;
  let j = 0;
  while (i < a.length || j < r.length) {
    const ar = a[i];
    const rr = r[j];
    const aStart = ar ? ar.startLine - 1 : 0;
    const aCount = ar ? ar.endLine - ar.startLine + 1 : 0;
    const rStart = rr ? rr.startLine - 1 : 0;
    const rCount = rr ? rr.endLine - rr.startLine + 1 : 0;
    if (ar && rr && rStart + delta === aStart) {
      out.push({ oldStart: rStart, oldCount: rCount, newStart: aStart, newCount: aCount });
      delta += aCount - rCount;
      i++;
      j++;
    } else if (rr && (!ar || rStart + delta < aStart)) {
      out.push({ oldStart: rStart, oldCount: rCount, newStart: rStart + delta, newCount: 0 });
      delta -= rCount;
      j++;
    } else {
      out.push({ oldStart: aStart - delta, oldCount: 0, newStart: aStart, newCount: aCount });
      delta += aCount;
      i++;
    }
  }
  return out;
}

/**
 * A hunk of the server (1-based, a side of 0 lines naming the line before
 * it, as `git diff -U0` numbers them) in this module's 0-based half-open
 * form.
 */
export function fromApiHunk(h: ApiHunk): Hunk {
  return {
    oldStart: h.old_lines > 0 ? h.old_start - 1 : h.old_start,
    oldCount: h.old_lines,
    newStart: h.new_lines > 0 ? h.new_start - 1 : h.new_start,
    newCount: h.new_lines,
  };
}

/**
 * A record's hunks: the server's, in its order (so position k is hunk index
 * k of the hunk routes); rebuilt from the ranges when the record has none
 * (binary, mode-only, or a server from before hunks).
 */
export function recordHunks(r: FileChangeRecord): Hunk[] {
  if (r.hunks?.length) {
    return r.hunks.map(fromApiHunk);
  }
  return hunksFromRanges(r.added_ranges, r.removed_ranges);
}

/**
 * Maps a 0-based old line through hunks to its new line. A line inside a
 * changed block maps to the block's first new line (for a deletion: the line
 * after it).
 */
export function mapLine(hunks: readonly Hunk[], line: number): number {
  let delta = 0;
  for (const h of hunks) {
    if (line < h.oldStart) {
      break;
    }
    if (line < h.oldStart + h.oldCount) {
      return h.newStart;
    }
    delta = h.newStart + h.newCount - (h.oldStart + h.oldCount);
  }
  return line + delta;
}

/** The lines of a text as the editor counts them (a final newline ends the last line). */
export function splitLines(text: string): string[] {
  if (text === '') {
    return [];
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

/**
 * A minimal line diff (Myers, O((N+M)·D)) as hunks; undefined when more than
 * maxEdits lines differ, so a caller can fall back instead of burning time.
 * Only for the document's live text (see the top of this file); a record's
 * hunks come from its ranges.
 */
export function diffLines(a: readonly string[], b: readonly string[], maxEdits = 2000): Hunk[] | undefined {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) {
    pre++;
  }
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) {
    suf++;
  }
  const A = a.slice(pre, a.length - suf);
  const B = b.slice(pre, b.length - suf);
  const N = A.length;
  const M = B.length;
  const keepA = new Uint8Array(N).fill(1);
  const keepB = new Uint8Array(M).fill(1);
  if (N === 0 || M === 0) {
    keepA.fill(0);
    keepB.fill(0);
  } else {
    const maxD = Math.min(N + M, maxEdits);
    const off = maxD + 1;
    const v = new Int32Array(2 * maxD + 3);
    const trace: Int32Array[] = [];
    let found = -1;
    for (let d = 0; d <= maxD && found < 0; d++) {
      for (let k = -d; k <= d; k += 2) {
        let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
        let y = x - k;
        while (x < N && y < M && A[x] === B[y]) {
          x++;
          y++;
        }
        v[off + k] = x;
        if (x >= N && y >= M) {
          found = d;
          break;
        }
      }
      trace.push(v.slice(off - d - 1, off + d + 2)); // v[-d-1 .. d+1]
    }
    if (found < 0) {
      return undefined;
    }
    let x = N;
    let y = M;
    for (let d = found; d > 0; d--) {
      const prev = trace[d - 1]; // index of k in prev: k + d
      const at = (k: number): number => prev[k + d];
      const k = x - y;
      const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
      const pk = down ? k + 1 : k - 1;
      const px = at(pk);
      const py = px - pk;
      if (down) {
        keepB[py] = 0; // inserted B[py]
      } else {
        keepA[px] = 0; // deleted A[px]
      }
      x = px;
      y = py;
    }
  }
  const out: Hunk[] = [];
  let i = 0;
  let j = 0;
  while (i < N || j < M) {
    if (i < N && j < M && keepA[i] && keepB[j]) {
      i++;
      j++;
      continue;
    }
    const oS = i;
    const nS = j;
    while (i < N && !keepA[i]) {
      i++;
    }
    while (j < M && !keepB[j]) {
      j++;
    }
    out.push({ oldStart: oS + pre, oldCount: i - oS, newStart: nS + pre, newCount: j - nS });
  }
  return out;
}

/** Where a removed block was: before `line` (0-based), or below the last line. */
export interface RemovedMarker {
  line: number;
  below: boolean;
  count: number;
  /** 0-based old line where the removed block started (to show its text). */
  oldStart: number;
}

/** One server hunk of a placed record; lines are 0-based. */
export interface HunkPlacement {
  /** The hunk's index in the record, as the hunk routes name it. */
  index: number;
  status: string;
  /** Where its lens goes: its first added line, else where its lines were removed. */
  line: number;
}

/** A record placed in the current document; lines are 0-based. */
export interface Placement {
  record: FileChangeRecord;
  lensLine: number;
  /**
   * Inclusive line spans of added lines of its pending hunks (empty when the
   * delta is not in the document): an accepted hunk loses the pending look,
   * and a rejected one's lines are no longer in the file.
   */
  added: Array<{ start: number; end: number }>;
  removed: RemovedMarker[];
  /** The record's server hunks (none for records without them), in file order. */
  hunks: HunkPlacement[];
  /** True when the record's delta is in the document (synced); false for conflicts and review mode. */
  inDocument: boolean;
}

export interface PlaceOptions {
  /** The document's current text; undefined when unknown. */
  text?: string;
  lineCount: number;
  /** Above this many lines, ranges collapse to one marker line each and no diff runs. */
  maxLines: number;
}

function clamp(line: number, lineCount: number): number {
  return Math.max(0, Math.min(line, Math.max(0, lineCount - 1)));
}

/**
 * Places every pending record of one file. records are the file's records
 * (any status, every session): rejected and rewound ones are skipped, later
 * accepted ones still move earlier pending ones.
 */
export function placeRecords(records: readonly FileChangeRecord[], opts: PlaceOptions): Placement[] {
  const bySession = new Map<string, FileChangeRecord[]>();
  for (const r of records) {
    // Neither a rejected nor a rewound change is in the file: it moves no line.
    if (r.status === 'rejected' || r.status === 'rewound') {
      continue;
    }
    const list = bySession.get(r.session_id) ?? [];
    list.push(r);
    bySession.set(r.session_id, list);
  }
  const huge = opts.lineCount > opts.maxLines;
  const docLines = opts.text !== undefined && !huge ? splitLines(opts.text) : undefined;
  const out: Placement[] = [];
  for (const chain of bySession.values()) {
    chain.sort((x, y) => x.timestamp.localeCompare(y.timestamp));
    const hunks = chain.map(recordHunks);
    // From the session's latest content to the document (other writers' edits).
    const last = chain[chain.length - 1];
    let final: Hunk[] = [];
    if (docLines && last.new_content !== null && last.new_content !== opts.text) {
      const lastLines = splitLines(last.new_content);
      if (lastLines.length <= opts.maxLines) {
        final = diffLines(lastLines, docLines) ?? [];
      }
    }
    const toDoc = (idx: number, line: number): number => {
      let l = line;
      for (let k = idx + 1; k < chain.length; k++) {
        l = mapLine(hunks[k], l);
      }
      return mapLine(final, l);
    };
    chain.forEach((r, idx) => {
      if (r.status !== 'pending') {
        return;
      }
      const inDocument = r.sync_state === 'synced' && r.change_type !== 'delete';
      const hs = hunks[idx];
      const api = r.hunks?.length === hs.length ? r.hunks : [];
      const statusOf = (k: number) => api[k]?.status ?? 'pending';
      const placed: HunkPlacement[] = [];
      if (!inDocument) {
        // Not in the document: show it where it would apply (its old lines).
        api.forEach((h, k) => placed.push({ index: h.index, status: h.status, line: clamp(hs[k].oldStart, opts.lineCount) }));
        const first = hs.find((_, k) => statusOf(k) === 'pending') ?? hs[0];
        out.push({ record: r, lensLine: clamp(first ? first.oldStart : 0, opts.lineCount), added: [], removed: [], hunks: placed, inDocument });
        return;
      }
      const added: Array<{ start: number; end: number }> = [];
      const removed: RemovedMarker[] = [];
      hs.forEach((h, k) => {
        const pending = statusOf(k) === 'pending';
        let line: number | undefined;
        if (h.newCount > 0) {
          const start = clamp(toDoc(idx, h.newStart), opts.lineCount);
          const end = huge ? start : clamp(Math.max(toDoc(idx, h.newStart + h.newCount - 1), start), opts.lineCount);
          line = start;
          if (pending) {
            added.push({ start, end });
          }
        }
        if (h.oldCount > 0) {
          const at = toDoc(idx, h.newStart);
          const below = at >= opts.lineCount;
          line ??= clamp(at, opts.lineCount);
          if (pending) {
            removed.push({ line: clamp(at, opts.lineCount), below, count: h.oldCount, oldStart: h.oldStart });
          }
        }
        if (api[k]) {
          placed.push({ index: api[k].index, status: api[k].status, line: line ?? clamp(toDoc(idx, h.newStart), opts.lineCount) });
        }
      });
      const lensLine = added.length ? added[0].start : removed.length ? removed[0].line : 0;
      out.push({ record: r, lensLine, added, removed, hunks: placed, inDocument });
    });
  }
  out.sort((x, y) => x.lensLine - y.lensLine || x.record.timestamp.localeCompare(y.record.timestamp));
  return out;
}
