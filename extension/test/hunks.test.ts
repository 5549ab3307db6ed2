// Per-hunk review in the editor: the server's hunks placed in the document,
// a lens pair per pending hunk, decorations that follow each decision, and
// the hunk a cursor command means.

import { describe, expect, it } from 'vitest';

import type { Hunk as ApiHunk } from '../src/api.gen';
import { lensSpecs } from '../src/codelens';
import { hunkAtLine } from '../src/commands';
import { planDecorations } from '../src/decorations';
import { diffLines, fromApiHunk, hunksFromRanges, placeRecords, recordHunks, splitLines } from '../src/ranges';
import { Commands } from '../src/settings';
import { lines, rec } from './helpers';

/** The hunks the server would send for old → new, numbered as git diff -U0 numbers them. */
function apiHunks(oldText: string, newText: string, statuses: string[] = []): ApiHunk[] {
  const hs = diffLines(splitLines(oldText), splitLines(newText), 100_000) ?? [];
  return hs.map((h, index) => ({
    index,
    old_start: h.oldCount > 0 ? h.oldStart + 1 : h.oldStart,
    old_lines: h.oldCount,
    new_start: h.newCount > 0 ? h.newStart + 1 : h.newStart,
    new_lines: h.newCount,
    status: statuses[index] ?? 'pending',
  }));
}

const BASE = lines('l1', 'l2', 'l3', 'l4', 'l5', 'l6', 'l7', 'l8', 'l9', 'l10');
const EDITED = BASE.replace('l2\n', 'L2 agent\n').replace('l9\n', 'L9 agent\n');
/** The file once hunk 0 (line 2) was rejected: only line 9's change is left. */
const WITHOUT_FIRST = BASE.replace('l9\n', 'L9 agent\n');

function twoHunks(statuses: string[] = [], p: Parameters<typeof rec>[0] = {}) {
  return rec({ id: 'tc-h', old: BASE, new: EDITED, hunks: apiHunks(BASE, EDITED, statuses), ...p });
}

const place = (rs: ReturnType<typeof rec>[], text: string) =>
  placeRecords(rs, { text, lineCount: splitLines(text).length, maxLines: 1000 });

describe('server hunks', () => {
  it('read as the same 0-based blocks the ranges give: modification, insertion, deletion', () => {
    const cases: [string, string][] = [
      [BASE, EDITED],
      [lines('a', 'b'), lines('a', 'x', 'y', 'b')],
      [lines('a', 'b', 'c'), lines('a', 'c')],
      [lines('a'), lines('new', 'a')],
      [lines('a', 'b'), lines('a')],
      ['', lines('x', 'y')],
    ];
    for (const [o, n] of cases) {
      const r = rec({ old: o, new: n, hunks: apiHunks(o, n) });
      expect(recordHunks(r), `${JSON.stringify(o)} → ${JSON.stringify(n)}`).toEqual(hunksFromRanges(r.added_ranges, r.removed_ranges));
    }
    // git's numbering: a side of 0 lines names the line before it.
    expect(fromApiHunk({ index: 0, old_start: 1, old_lines: 0, new_start: 2, new_lines: 2, status: 'pending' })).toEqual({
      oldStart: 1,
      oldCount: 0,
      newStart: 1,
      newCount: 2,
    });
  });

  it('are placed one by one, each with its index and its line', () => {
    const [p] = place([twoHunks()], EDITED);
    expect(p.hunks).toEqual([
      { index: 0, status: 'pending', line: 1 },
      { index: 1, status: 'pending', line: 8 },
    ]);
    expect(p.added).toEqual([
      { start: 1, end: 1 },
      { start: 8, end: 8 },
    ]);
    expect(p.lensLine).toBe(1);
  });

  it('move with lines the user added above them', () => {
    const doc = 'mine 1\nmine 2\n' + EDITED;
    const [p] = place([twoHunks()], doc);
    expect(p.hunks.map((h) => h.line)).toEqual([3, 10]);
  });
});

describe('hunk lenses', () => {
  it('put Accept | Reject above each hunk; the first also decides the whole change and shows its diff', () => {
    const specs = lensSpecs(place([twoHunks()], EDITED));
    expect(specs.map((s) => [s.line, s.title, s.command, s.args])).toEqual([
      [1, 'Accept', Commands.acceptHunk, ['s1', 'tc-h', 0]],
      [1, 'Reject', Commands.rejectHunk, ['s1', 'tc-h', 0]],
      [1, 'Comment…', Commands.commentOnChange, ['s1', 'tc-h', '2']],
      [1, 'Accept Change', Commands.acceptChange, ['s1', 'tc-h']],
      [1, 'Reject Change', Commands.rejectChange, ['s1', 'tc-h']],
      [1, 'Diff', Commands.showDiff, ['s1', 'tc-h']],
      [8, 'Accept', Commands.acceptHunk, ['s1', 'tc-h', 1]],
      [8, 'Reject', Commands.rejectHunk, ['s1', 'tc-h', 1]],
      [8, 'Comment…', Commands.commentOnChange, ['s1', 'tc-h', '9']],
    ]);
  });

  it('after a hunk is rejected: its lines are gone, its lens and decoration too; the other keeps both', () => {
    const placed = place([twoHunks(['rejected', 'pending'])], WITHOUT_FIRST);
    expect(lensSpecs(placed).map((s) => [s.line, s.title, s.args])).toEqual([
      [8, 'Accept', ['s1', 'tc-h', 1]],
      [8, 'Reject', ['s1', 'tc-h', 1]],
      [8, 'Comment…', ['s1', 'tc-h', '9']],
      [8, 'Diff', ['s1', 'tc-h']],
    ]);
    expect(planDecorations(placed).added).toEqual([{ start: 8, end: 8 }]);
    expect(planDecorations(placed).removedAbove.map((m) => m.line)).toEqual([8]); // line 9 was replaced: its old line is marked
  });

  it('after a hunk is accepted: it loses the pending look and its lens', () => {
    const placed = place([twoHunks(['accepted', 'pending'])], EDITED);
    expect(planDecorations(placed).added).toEqual([{ start: 8, end: 8 }]);
    expect(lensSpecs(placed).map((s) => [s.line, s.title])).toEqual([
      [8, 'Accept'],
      [8, 'Reject'],
      [8, 'Comment…'],
      [8, 'Diff'],
    ]);
  });

  it('a decided record has none; a change of one hunk keeps Accept | Reject | Diff of the whole change', () => {
    expect(lensSpecs(place([twoHunks(['accepted', 'rejected'], { status: 'partial' as never })], WITHOUT_FIRST))).toEqual([]);
    const one = rec({ id: 'one', old: BASE, new: EDITED.replace('L9 agent', 'l9'), hunks: apiHunks(BASE, EDITED.replace('L9 agent', 'l9')) });
    expect(lensSpecs(place([one], EDITED.replace('L9 agent', 'l9'))).map((s) => [s.line, s.title, s.command, s.args])).toEqual([
      [1, 'Accept', Commands.acceptChange, ['s1', 'one']],
      [1, 'Reject', Commands.rejectChange, ['s1', 'one']],
      [1, 'Comment…', Commands.commentOnChange, ['s1', 'one', '2']],
      [1, 'Diff', Commands.showDiff, ['s1', 'one']],
    ]);
  });

  it('in review mode sit on the old lines, where each hunk would apply', () => {
    const placed = place([twoHunks([], { sync_state: 'pending_review' })], BASE);
    expect(lensSpecs(placed).filter((s) => s.command === Commands.rejectHunk).map((s) => [s.line, s.args[2]])).toEqual([
      [1, 0],
      [8, 1],
    ]);
    expect(planDecorations(placed).added).toEqual([]);
  });
});

describe('the Comment… lens', () => {
  const comments = (specs: ReturnType<typeof lensSpecs>) =>
    specs.filter((s) => s.command === Commands.commentOnChange).map((s) => [s.line, s.title, s.args, s.tooltip]);

  it("sits beside each pending hunk's Accept | Reject and names exactly that hunk's new-side lines", () => {
    // Three blocks: lines 2-3 replaced by three lines, line 6 removed, a line added after the last.
    const old = lines('a', 'b', 'c', 'd', 'e', 'f', 'g');
    const neu = lines('a', 'B1', 'B2', 'B3', 'd', 'e', 'g', 'h');
    const r = rec({ id: 'tc-3', old, new: neu, hunks: apiHunks(old, neu) });
    expect(r.hunks.map((h) => [h.new_start, h.new_lines])).toEqual([[2, 3], [6, 0], [8, 1]]);
    const specs = lensSpecs(place([r], neu));
    expect(specs.filter((s) => s.args[2] === 1).map((s) => s.title)).toEqual(['Accept', 'Reject']);
    expect(comments(specs)).toEqual([
      [1, 'Comment…', ['s1', 'tc-3', '2-4'], 'Comment on lines 2-4 of hunk 1 of 3 of Edit tc-3 (+4 −3) by agent, session s1 for the agent: it hears it at its next step; nothing is decided'],
      [6, 'Comment…', ['s1', 'tc-3', '6'], expect.stringContaining('lines 6 of hunk 2 of 3')], // a removal: the line git names for it
      [7, 'Comment…', ['s1', 'tc-3', '8'], expect.stringContaining('lines 8 of hunk 3 of 3')],
    ]);
    // Each Comment… follows its hunk's Reject, on the same line.
    const at = (line: number) => specs.filter((s) => s.line === line).map((s) => s.title);
    expect(at(6)).toEqual(['Accept', 'Reject', 'Comment…']);
  });

  it('a decided hunk has none; a removal at the top names line 1; a change without server hunks uses its one block, or the whole change', () => {
    const r = twoHunks(['accepted', 'pending']);
    expect(comments(lensSpecs(place([r], EDITED))).map((c) => c[2])).toEqual([['s1', 'tc-h', '9']]);

    const top = rec({ id: 'top', old: lines('x', 'a'), new: lines('a'), hunks: apiHunks(lines('x', 'a'), lines('a')) });
    expect(comments(lensSpecs(place([top], lines('a')))).map((c) => c[2])).toEqual([['s1', 'top', '1']]);

    const noHunks = rec({ id: 'nh', old: BASE, new: BASE.replace('l4\n', 'L4\nL4b\n') }); // hunks: [], rebuilt from ranges
    expect(comments(lensSpecs(place([noHunks], BASE.replace('l4\n', 'L4\nL4b\n')))).map((c) => c[2])).toEqual([['s1', 'nh', '4-5']]);
    const two = rec({ id: 'nh2', old: BASE, new: EDITED }); // two blocks, no server hunks: one lens set, on the whole change
    expect(comments(lensSpecs(place([two], EDITED))).map((c) => c[2])).toEqual([['s1', 'nh2', '']]);
  });

  it('is not offered on a conflict', () => {
    const r = twoHunks([], { sync_state: 'conflict' });
    expect(comments(lensSpecs(place([r], BASE)))).toEqual([]);
  });
});

describe('the hunk under the cursor', () => {
  const r = twoHunks();
  const hs = [
    { record: r, index: 1, line: 8 },
    { record: r, index: 0, line: 1 },
  ];
  it('is the nearest hunk at or above the cursor, else the first', () => {
    expect(hunkAtLine(hs, 1)?.index).toBe(0);
    expect(hunkAtLine(hs, 5)?.index).toBe(0);
    expect(hunkAtLine(hs, 8)?.index).toBe(1);
    expect(hunkAtLine(hs, 9)?.index).toBe(1);
    expect(hunkAtLine(hs, 0)?.index).toBe(0);
    expect(hunkAtLine([], 3)).toBeUndefined();
  });
});
