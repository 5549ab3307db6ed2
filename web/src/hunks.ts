// Per-hunk diffs: the server's diff of a record has context lines, so one of
// its @@ blocks can hold several of the record's hunks (the -U0 blocks of
// changed lines the hunk routes name). splitHunks cuts the diff into one
// small patch per hunk, each with its own context, so the page can draw each
// hunk with its own Accept hunk / Reject hunk buttons.

import type { Hunk } from '../../extension/src/api.gen';

/** How many unchanged lines each hunk's patch shows on either side, at most. */
const context = 3;

interface Line {
  /** ' ', '-' or '+'; a "\ No newline" line belongs to the line before it. */
  kind: string;
  text: string[];
  /** The next old and new line number at this line. */
  old: number;
  new: number;
}

/** One hunk's own patch: the file header and one @@ block. */
export interface HunkPatch {
  hunk: Hunk;
  text: string;
}

const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * splitHunks returns one patch per hunk of hunks, in their order, or null
 * when the diff's blocks of changed lines do not match the hunks one for one
 * (then the caller shows the whole diff and lists the hunks by their lines).
 */
export function splitHunks(diff: string, hunks: Hunk[]): HunkPatch[] | null {
  const all = diff.split('\n');
  const first = all.findIndex((l) => header.test(l));
  if (first < 0 || !hunks.length) return null;
  const head = all.slice(0, first);
  // The runs of changed lines of each @@ block, with the block's lines.
  const runs: { lines: Line[]; from: number; to: number }[] = [];
  let lines: Line[] = [];
  let oldNo = 0;
  let newNo = 0;
  const flush = () => {
    let i = 0;
    while (i < lines.length) {
      if (lines[i].kind === ' ') {
        i++;
        continue;
      }
      let j = i;
      while (j < lines.length && lines[j].kind !== ' ') j++;
      runs.push({ lines, from: i, to: j });
      i = j;
    }
    lines = [];
  };
  for (let k = first; k < all.length; k++) {
    const l = all[k];
    const m = header.exec(l);
    if (m) {
      flush();
      // A side of 0 lines names the line before it.
      oldNo = Number(m[1]) + (m[2] === '0' ? 1 : 0);
      newNo = Number(m[3]) + (m[4] === '0' ? 1 : 0);
      continue;
    }
    if (l.startsWith('\\')) {
      lines[lines.length - 1]?.text.push(l);
      continue;
    }
    const kind = l[0];
    if (kind !== ' ' && kind !== '-' && kind !== '+') {
      if (l.startsWith('diff --git')) break; // another file: not this record's
      continue;
    }
    lines.push({ kind, text: [l], old: oldNo, new: newNo });
    if (kind !== '+') oldNo++;
    if (kind !== '-') newNo++;
  }
  flush();
  if (runs.length !== hunks.length) return null;

  const out: HunkPatch[] = [];
  for (let h = 0; h < runs.length; h++) {
    const { lines: ls, from, to } = runs[h];
    const run = ls.slice(from, to);
    const dels = run.filter((x) => x.kind === '-').length;
    const adds = run.length - dels;
    const oldStart = dels ? run[0].old : run[0].old - 1;
    const newStart = adds ? run.find((x) => x.kind === '+')!.new : run[0].new - 1;
    const want = hunks[h];
    if (want.old_start !== oldStart || want.old_lines !== dels || want.new_start !== newStart || want.new_lines !== adds) {
      return null;
    }
    // Context: the unchanged lines between two runs of one block are shared,
    // the earlier run taking the first half.
    const sharedBefore = h > 0 && runs[h - 1].lines === ls;
    const sharedAfter = h + 1 < runs.length && runs[h + 1].lines === ls;
    const gapBefore = from - (sharedBefore ? runs[h - 1].to : 0);
    const gapAfter = (sharedAfter ? runs[h + 1].from : ls.length) - to;
    const before = Math.min(context, sharedBefore ? Math.floor(gapBefore / 2) : gapBefore);
    const after = Math.min(context, sharedAfter ? Math.ceil(gapAfter / 2) : gapAfter);
    const slice = ls.slice(from - before, to + after);
    const o = slice.filter((x) => x.kind !== '+').length;
    const n = slice.filter((x) => x.kind !== '-').length;
    const os = o ? slice[0].old : slice[0].old - 1;
    const ns = n ? slice[0].new : slice[0].new - 1;
    const body = slice.flatMap((x) => x.text);
    out.push({ hunk: want, text: [...head, `@@ -${os},${o} +${ns},${n} @@`, ...body, ''].join('\n') });
  }
  return out;
}

/** "lines 3–5", "line 3", or "after line 3" for a side of a hunk. */
export function hunkLines(start: number, count: number): string {
  if (count === 0) return `after line ${start}`;
  if (count === 1) return `line ${start}`;
  return `lines ${start}–${start + count - 1}`;
}
