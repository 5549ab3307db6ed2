// package.json and the code must agree: commands, settings, views, colors,
// and the activation rules of STYLE.md.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

import { Colors } from '../src/decorations';
import { Commands, ContextKeys, SECTION, SettingKeys, ViewIds } from '../src/settings';

const root = path.resolve(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const src = fs
  .readdirSync(path.join(root, 'src'))
  .map((f) => fs.readFileSync(path.join(root, 'src', f), 'utf8'))
  .join('\n');

describe('package.json', () => {
  it('never activates on *', () => {
    expect(pkg.activationEvents).not.toContain('*');
    expect(pkg.activationEvents).toEqual(expect.arrayContaining(['workspaceContains:.git', `onView:${ViewIds.changes}`]));
  });

  it('contributes exactly the commands the code registers, all under "prsm:"', () => {
    const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
    expect(contributed).toEqual(Object.values(Commands).sort());
    for (const c of pkg.contributes.commands) {
      expect(c.category).toBe('prsm');
    }
    for (const id of Object.keys(Commands)) {
      expect(src).toContain(`Commands.${id}`);
    }
  });

  it('menus name only contributed commands and views', () => {
    const ids = new Set(Object.values(Commands) as string[]);
    for (const list of Object.values(pkg.contributes.menus) as Array<Array<{ command: string }>>) {
      for (const m of list) {
        expect(ids.has(m.command), m.command).toBe(true);
      }
    }
    const views = pkg.contributes.views[ViewIds.container].map((v: { id: string }) => v.id);
    expect(views).toEqual([ViewIds.changes, ViewIds.checkpoints]);
    expect(pkg.contributes.viewsContainers.activitybar[0].id).toBe(ViewIds.container);
  });

  it('binds the hunk under the cursor to default keys, in an editor with pending changes only', () => {
    const binds = pkg.contributes.keybindings.map((k: { command: string; key: string; mac: string; when: string }) => [k.command, k.key, k.mac, k.when]);
    expect(binds).toEqual([
      [Commands.acceptHunk, 'ctrl+alt+y', 'cmd+alt+y', `editorTextFocus && ${ContextKeys.activeFilePending}`],
      [Commands.rejectHunk, 'ctrl+alt+n', 'cmd+alt+n', `editorTextFocus && ${ContextKeys.activeFilePending}`],
    ]);
  });

  it('declares every setting key the code reads', () => {
    const props = Object.keys(pkg.contributes.configuration.properties).sort();
    expect(props).toEqual(Object.values(SettingKeys).map((k) => `${SECTION}.${k}`).sort());
  });

  it('contributes every decoration color, with theme defaults', () => {
    const colors = pkg.contributes.colors.map((c: { id: string }) => c.id).sort();
    expect(colors).toEqual(Object.values(Colors).sort());
    for (const c of pkg.contributes.colors) {
      expect(c.defaults.dark).not.toMatch(/^#/); // theme colors, not fixed ones
    }
  });

  it('shows the start button when prsm is not running', () => {
    const w = pkg.contributes.viewsWelcome.find((x: { view: string; when: string }) => x.view === ViewIds.changes && x.when === `${ContextKeys.state} == disconnected`);
    expect(w.contents).toContain('prsm is not running in this workspace');
    expect(w.contents).toContain(`command:${Commands.startServer}`);
  });

  it('pins the engine and the vsce and vitest majors that run on Node 20', () => {
    expect(pkg.engines.vscode).toBe('^1.90.0');
    expect(pkg.devDependencies['@vscode/vsce']).toMatch(/^\^3\./);
    expect(pkg.devDependencies.vitest).toMatch(/^\^4\./);
  });
});

describe('source conventions', () => {
  it('never runs git and starts no process but prsm', () => {
    expect(src).not.toMatch(/['"`]git['"`]/);
    const imports = src.match(/import .* from 'node:child_process';/g) ?? [];
    expect(imports).toEqual(["import { execFile } from 'node:child_process';"]);
    expect(src).toContain('execFile(\n      opts.binary,\n      serveArgs(opts.folder),');
  });

  it('creates one output channel', () => {
    expect(src.match(/createOutputChannel\(/g)).toHaveLength(1);
  });
});
