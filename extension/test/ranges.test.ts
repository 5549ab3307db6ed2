import { describe, expect, it } from 'vitest';

import { diffLines, hunksFromRanges, mapLine, placeRecords, splitLines, type Hunk } from '../src/ranges';
import { lines, rangesOf, rec } from './helpers';

/** Applies hunks to a (taking new lines from b): must give b back. */
function apply(a: string[], b: string[], hunks: Hunk[]): string[] {
  const out: string[] = [];
  let i = 0;
  for (const h of hunks) {
    out.push(...a.slice(i, h.oldStart));
    out.push(...b.slice(h.newStart, h.newStart + h.newCount));
    i = h.oldStart + h.oldCount;
  }
  out.push(...a.slice(i));
  return out;
}

function lcsLength(a: string[], b: string[]): number {
  const dp = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      dp[i][j] = a[i - 1] === b[j - 1] ? dp[i - 1][j - 1] + 1 : Math.max(dp[i - 1][j], dp[i][j - 1]);
    }
  }
  return dp[a.length][b.length];
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('splitLines', () => {
  it('counts lines as an editor does', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a')).toEqual(['a']);
    expect(splitLines('a\n')).toEqual(['a']);
    expect(splitLines('a\n\nb\n')).toEqual(['a', '', 'b']);
  });
});

describe('diffLines', () => {
  it('finds a modification, an insertion and a deletion', () => {
    const a = ['one', 'two', 'three', 'four', 'five'];
    const b = ['one', 'TWO', 'three', 'five', 'six'];
    expect(diffLines(a, b)).toEqual([
      { oldStart: 1, oldCount: 1, newStart: 1, newCount: 1 },
      { oldStart: 3, oldCount: 1, newStart: 3, newCount: 0 },
      { oldStart: 5, oldCount: 0, newStart: 4, newCount: 1 },
    ]);
  });

  it('handles empty sides and equal texts', () => {
    expect(diffLines([], ['a', 'b'])).toEqual([{ oldStart: 0, oldCount: 0, newStart: 0, newCount: 2 }]);
    expect(diffLines(['a'], [])).toEqual([{ oldStart: 0, oldCount: 1, newStart: 0, newCount: 0 }]);
    expect(diffLines(['a', 'b'], ['a', 'b'])).toEqual([]);
  });

  it('is minimal and reproduces the new text on random inputs', () => {
    const r = rng(42);
    const alphabet = ['a', 'b', 'c', 'd'];
    for (let n = 0; n < 300; n++) {
      const a = Array.from({ length: Math.floor(r() * 14) }, () => alphabet[Math.floor(r() * 4)]);
      const b = Array.from({ length: Math.floor(r() * 14) }, () => alphabet[Math.floor(r() * 4)]);
      const hunks = diffLines(a, b);
      expect(hunks).toBeDefined();
      expect(apply(a, b, hunks!)).toEqual(b);
      const kept = a.length - hunks!.reduce((s, h) => s + h.oldCount, 0);
      expect(kept).toBe(lcsLength(a, b));
    }
  });

  it('gives up past maxEdits', () => {
    const a = Array.from({ length: 100 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 100 }, (_, i) => `b${i}`);
    expect(diffLines(a, b, 10)).toBeUndefined();
    expect(diffLines(a, b, 1000)).toHaveLength(1);
  });
});

describe('hunksFromRanges', () => {
  it('pairs an added and a removed range of one block', () => {
    // one two three -> one TWO three four
    expect(hunksFromRanges([{ startLine: 2, endLine: 2 }, { startLine: 4, endLine: 4 }], [{ startLine: 2, endLine: 2 }])).toEqual([
      { oldStart: 1, oldCount: 1, newStart: 1, newCount: 1 },
      { oldStart: 3, oldCount: 0, newStart: 3, newCount: 1 },
    ]);
  });

  it('rebuilds exactly the hunks of the diff for random edits', () => {
    const r = rng(7);
    for (let n = 0; n < 300; n++) {
      const a = Array.from({ length: Math.floor(r() * 12) }, () => 'xyz'[Math.floor(r() * 3)]);
      const b = Array.from({ length: Math.floor(r() * 12) }, () => 'xyz'[Math.floor(r() * 3)]);
      const hunks = diffLines(a, b)!;
      const rr = rangesOf(lines(...a), lines(...b));
      expect(hunksFromRanges(rr.added_ranges, rr.removed_ranges)).toEqual(hunks);
    }
  });
});

describe('mapLine', () => {
  const hunks = diffLines(['a', 'b', 'c', 'd', 'e'], ['a', 'X', 'Y', 'c', 'e'])!; // b->X,Y ; d removed
  it('shifts lines after a block and sends changed lines to the block start', () => {
    expect(mapLine(hunks, 0)).toBe(0);
    expect(mapLine(hunks, 1)).toBe(1); // b changed -> X
    expect(mapLine(hunks, 2)).toBe(3); // c
    expect(mapLine(hunks, 3)).toBe(4); // d removed -> the line after it (e)
    expect(mapLine(hunks, 4)).toBe(4); // e
  });
});

describe('placeRecords', () => {
  const base = lines('one', 'two', 'three', 'four', 'five');

  it('puts the lens on the first added line and decorates added lines', () => {
    const after = lines('one', 'two', 'THREE', 'three and a half', 'four', 'five');
    const r = rec({ old: base, new: after });
    const [p] = placeRecords([r], { text: after, lineCount: 7, maxLines: 1000 });
    expect(p.lensLine).toBe(2);
    expect(p.added).toEqual([{ start: 2, end: 3 }]);
    expect(p.removed.map((m) => [m.line, m.count, m.below])).toEqual([[2, 1, false]]);
    expect(p.inDocument).toBe(true);
  });

  it('puts the lens of a pure deletion at the removed range', () => {
    const after = lines('one', 'four', 'five');
    const r = rec({ old: base, new: after });
    expect(r.added_ranges).toEqual([]);
    const [p] = placeRecords([r], { text: after, lineCount: 4, maxLines: 1000 });
    expect(p.lensLine).toBe(1); // above "four", where two and three were
    expect(p.added).toEqual([]);
    expect(p.removed).toEqual([{ line: 1, below: false, count: 2, oldStart: 1 }]);
  });

  it('marks a deletion at the end of the file below the last line', () => {
    const after = lines('one', 'two', 'three');
    const r = rec({ old: base, new: after });
    const [p] = placeRecords([r], { text: after, lineCount: 4, maxLines: 1000 });
    expect(p.removed[0]).toMatchObject({ below: false, line: 3 });
    const [q] = placeRecords([r], { text: after.trimEnd(), lineCount: 3, maxLines: 1000 });
    expect(q.removed[0]).toMatchObject({ below: true, line: 2 });
  });

  it('moves an earlier change by the later changes of the same session', () => {
    const v1 = lines('one', 'two', 'three', 'NEW', 'four', 'five');
    const v2 = lines('zero', 'zero.5', 'one', 'two', 'three', 'NEW', 'four', 'five');
    const r1 = rec({ old: base, new: v1 });
    const r2 = rec({ old: v1, new: v2 });
    const ps = placeRecords([r2, r1], { text: v2, lineCount: 9, maxLines: 1000 });
    expect(ps.map((p) => [p.record.id, p.lensLine])).toEqual([
      [r2.id, 0],
      [r1.id, 5],
    ]);
    // An accepted later change still moves the pending one.
    const ps2 = placeRecords([r1, { ...r2, status: 'accepted' }], { text: v2, lineCount: 9, maxLines: 1000 });
    expect(ps2.map((p) => [p.record.id, p.lensLine])).toEqual([[r1.id, 5]]);
  });

  it('follows edits made outside the session (user lines above the change)', () => {
    const after = lines('one', 'two', 'three', 'AGENT', 'four', 'five');
    const r = rec({ old: base, new: after });
    const doc = lines('user 1', 'user 2', 'one', 'two', 'three', 'AGENT', 'four', 'five');
    const [p] = placeRecords([r], { text: doc, lineCount: 9, maxLines: 1000 });
    expect(p.lensLine).toBe(5);
    expect(p.added).toEqual([{ start: 5, end: 5 }]);
  });

  it('ignores rejected records and shows non-synced ones where they would apply', () => {
    const after = lines('one', 'two', 'three', 'four', 'FIVE');
    const rejected = rec({ old: base, new: after, status: 'rejected' });
    expect(placeRecords([rejected], { text: base, lineCount: 6, maxLines: 1000 })).toEqual([]);
    const conflict = rec({ old: base, new: after, sync_state: 'conflict' });
    const [p] = placeRecords([conflict], { text: base, lineCount: 6, maxLines: 1000 });
    expect(p).toMatchObject({ lensLine: 4, added: [], removed: [], inDocument: false });
    const review = rec({ old: base, new: after, sync_state: 'pending_review' });
    expect(placeRecords([review], { text: base, lineCount: 6, maxLines: 1000 })[0]).toMatchObject({ lensLine: 4, inDocument: false });
  });

  it('collapses ranges to one line each in a huge file and does not diff it', () => {
    const big = Array.from({ length: 50 }, (_, i) => `line ${i}`);
    const after = [...big];
    after.splice(10, 0, 'a', 'b', 'c');
    const r = rec({ old: lines(...big), new: lines(...after) });
    const text = lines('user', ...after); // differs from new_content: would need a diff
    const [p] = placeRecords([r], { text, lineCount: 54, maxLines: 20 });
    expect(p.added).toEqual([{ start: 10, end: 10 }]);
    const [q] = placeRecords([r], { text, lineCount: 54, maxLines: 1000 });
    expect(q.added).toEqual([{ start: 11, end: 13 }]);
  });

  it('keeps every line inside the document', () => {
    const r = rec({ added_ranges: [{ startLine: 40, endLine: 45 }], removed_ranges: [], old_content: null, new_content: null });
    const [p] = placeRecords([r], { text: 'short\n', lineCount: 2, maxLines: 1000 });
    expect(p.lensLine).toBeLessThanOrEqual(1);
    expect(p.added[0].end).toBeLessThanOrEqual(1);
  });

  it('maps through a later change of the session that did not reach the document', () => {
    const v1 = lines('one', 'two', 'three', 'A', 'four', 'five');
    const v2 = lines('top', 'one', 'two', 'three', 'A', 'four', 'five');
    const r1 = rec({ old: base, new: v1 });
    const r2 = rec({ old: v1, new: v2, sync_state: 'conflict' });
    const ps = placeRecords([r1, r2], { text: v1, lineCount: 7, maxLines: 1000 });
    expect(ps.map((p) => [p.record.id, p.lensLine, p.inDocument])).toEqual([
      [r2.id, 0, false],
      [r1.id, 3, true],
    ]);
    expect(ps[1].added).toEqual([{ start: 3, end: 3 }]);
  });

  it('places the records of two sessions independently', () => {
    const a1 = lines('one', 'two', 'three', 'A', 'four', 'five');
    const merged = lines('B', 'one', 'two', 'three', 'A', 'four', 'five');
    const ra = rec({ old: base, new: a1, session_id: 'sa' });
    const rb = rec({ old: base, new: lines('B', 'one', 'two', 'three', 'four', 'five'), session_id: 'sb' });
    const ps = placeRecords([ra, rb], { text: merged, lineCount: 8, maxLines: 1000 });
    expect(ps.map((p) => [p.record.session_id, p.lensLine])).toEqual([
      ['sb', 0],
      ['sa', 4],
    ]);
  });
});
