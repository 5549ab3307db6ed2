// Rows lead with the tool, the file and what changed; the raw id comes
// second (tooltip, Copy id), and "Watch" reads as words a user knows.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';

import { copyId } from '../src/commands';
import type { AppContext } from '../src/context';
import { recordLabel } from '../src/context';
import { changeLabel, changeSummary, toolLabel } from '../src/labels';
import { Model } from '../src/model';
import { PathMap } from '../src/paths';
import { Commands } from '../src/settings';
import { buildTree, statusText, toTreeItem } from '../src/tree';
import { lines, rec, session } from './helpers';
import { env, recorded, resetStub } from './vscode-stub';

beforeEach(() => resetStub());

const LONG_ID = 'toolu_01E8XkQ7mZbV3nR5tY2wP9aL';

describe('change rows', () => {
  it('lead with the tool and the file and the first changed line; the whole id is in the tooltip', () => {
    const r = rec({
      id: `${LONG_ID}:0`,
      tool_call_id: LONG_ID,
      file_path: '/ws/src/app.py',
      rel_path: 'src/app.py',
      old: lines('def f():', '    return 1', ''),
      new: lines('def f():', '    return 2  # fixed', ''),
    });
    const m = new Model();
    m.replace([session()], [r], new Map(), true);
    const item = toTreeItem(buildTree(m)[0].files[0].changes[0]);
    expect(item.label).toBe('Edit app.py');
    expect(item.description).toBe('return 2 # fixed · pending · +1 −1');
    expect(String(item.label)).not.toContain('toolu_');
    expect(String(item.description)).not.toContain('toolu_');
    const tip = String(item.tooltip);
    expect(tip).toContain(`id: ${LONG_ID}:0 (tool call ${LONG_ID})`);
    expect(tip).toContain('Edit: src/app.py (modify, +1 −1)');
  });

  it('say so while a conflict waits between markers in the file', () => {
    const c = rec({ old: lines('a'), new: lines('b'), sync_state: 'conflict' });
    expect(statusText(c)).toBe('conflict');
    expect(statusText({ ...c, note: 'merge in your editor: both versions are in the workspace file' })).toBe('conflict, merging in editor');
  });

  it('name Watch records in words: seen by the watcher, or changed while prsm was not running', () => {
    const w = rec({ id: 'watch-1a2b:0', tool_call_id: 'watch-1a2b', tool_name: 'Watch', rel_path: 'src/x.txt' });
    expect(toolLabel(w)).toBe('seen by the watcher');
    expect(changeLabel(w)).toBe('x.txt, seen by the watcher');
    expect(recordLabel(w)).toBe('src/x.txt, seen by the watcher');
    const rc = rec({ id: 'reconcile-abcd1234-0', tool_call_id: 'reconcile-abcd1234-0', tool_name: 'Watch' });
    expect(changeLabel(rc)).toBe('a.txt, changed while prsm was not running');
    expect(changeLabel(rec({ tool_name: 'Bash' }))).toBe('Bash a.txt');
    expect(recordLabel(rec({ tool_name: 'Write', rel_path: 'd/e.md' }))).toBe('Write d/e.md');
  });
});

describe('changeSummary', () => {
  it("is an Edit's first non-blank changed line, shortened", () => {
    expect(changeSummary(rec({ old: lines('a', 'b'), new: lines('a', '', '   const x = 1;', 'b') }))).toBe('const x = 1;');
    const long = `x = "${'y'.repeat(100)}"`;
    const s = changeSummary(rec({ old: lines('a'), new: lines('a', long) }));
    expect(s.length).toBe(60);
    expect(s.endsWith('…')).toBe(true);
    expect(s.startsWith('x = "yyy')).toBe(true);
  });

  it('says what went when lines were only removed, and names deletions, binaries and modes', () => {
    expect(changeSummary(rec({ old: lines('a', 'gone line', 'b'), new: lines('a', 'b') }))).toBe('removed: gone line');
    expect(changeSummary(rec({ change_type: 'delete', old: lines('a'), new: '' }))).toBe('file deleted');
    const bin = rec({ binary: true, size_before: 2048, size_after: 3 * 1024 * 1024, old_content: null, new_content: null });
    expect(changeSummary(bin)).toBe('binary, 2.0 KiB → 3.0 MiB');
    expect(changeSummary({ ...bin, change_type: 'create', size_after: 10 })).toBe('binary, 10 B');
    expect(changeSummary(rec({ old: lines('a'), new: lines('a'), mode_after: 0o100755 }))).toBe('made executable');
    expect(changeSummary(rec({ old: lines('a'), new: lines('a'), old_content: null, new_content: null }))).toBe('');
  });
});

describe('Copy id', () => {
  function ctxOf(m: Model): AppContext {
    const paths = new PathMap('/ws', ['/ws']);
    return {
      model: m,
      connection: { state: 'connected', client: {}, reportError: () => undefined } as unknown as AppContext['connection'],
      paths: () => paths,
      call: async () => undefined,
    };
  }

  it('copies the whole id of a row, as the CLI takes it', async () => {
    const r = rec({ id: `${LONG_ID}:1`, tool_call_id: LONG_ID });
    const m = new Model();
    m.upsertRecords([r]);
    await copyId(ctxOf(m), { kind: 'change', record: r });
    expect(env.clipboard.text).toBe(`${LONG_ID}:1`);
    expect(recorded.messages[0].text).toContain(`${LONG_ID}:1`);
  });

  it('is on every change row\'s context menu', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
    const menu = pkg.contributes.menus['view/item/context'].find((x: { command: string }) => x.command === Commands.copyId);
    expect(menu?.when).toBe('view == prsm.changes && viewItem =~ /^change\\./');
  });
});
