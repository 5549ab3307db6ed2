// The pluralisation and size helpers, and that every surface of the
// extension says "1 file", never "(1 files)" or "file(s)".

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

import { plural, size } from '../src/words';

describe('plural', () => {
  it('makes a word plural unless the count is 1, as prsm.Plural does', () => {
    expect(plural(1, 'file')).toBe('1 file');
    expect(plural(0, 'file')).toBe('0 files');
    expect(plural(2, 'change')).toBe('2 changes');
    expect(plural(3, 'batch')).toBe('3 batches');
    expect(plural(2, 'conflict')).toBe('2 conflicts');
  });
});

describe('size', () => {
  it('reads bytes as prsm.Size does', () => {
    expect(size(0)).toBe('0 B');
    expect(size(1023)).toBe('1023 B');
    expect(size(1024)).toBe('1.0 KiB');
    expect(size(1536)).toBe('1.5 KiB');
    expect(size(10 * 1024)).toBe('10 KiB');
    expect(size(3 * 1024 * 1024)).toBe('3.0 MiB');
    expect(size(251352)).toBe('245.5 KiB');
    expect(size(3 * 1024 ** 3)).toBe('3.0 GiB');
  });
});

describe('the words of the extension', () => {
  const root = path.resolve(__dirname, '..');
  const src = fs
    .readdirSync(path.join(root, 'src'))
    .filter((f) => f !== 'api.gen.ts')
    .map((f) => [f, fs.readFileSync(path.join(root, 'src', f), 'utf8')] as const);

  it('pluralises through plural() only: no hand-made "s" after a count, no "(s)"', () => {
    for (const [f, text] of src) {
      expect(text, f).not.toMatch(/=== 1 \? '' : 's'/);
      expect(text, f).not.toMatch(/[a-z]\(s\)[ ,]/); // "file(s) with"
      // A count straight before a plural noun, as in `${n} files`.
      expect(text, f).not.toMatch(/\$\{[^}]+\} (files|changes|hunks|lines|checkpoints|conflicts)\b/);
    }
  });

  it('shows no literal backticks in the welcome views (they are not Markdown there)', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    for (const w of pkg.contributes.viewsWelcome as Array<{ contents: string }>) {
      expect(w.contents).not.toContain('`');
    }
  });
});
