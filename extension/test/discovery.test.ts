import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { findServer, isInside, parseServerInfo, prsmHome } from '../src/discovery';
import { PathMap } from '../src/paths';

let tmp: string;

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'prsm-disc-')));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

function writeInfo(home: string, identity: string, workspace: string, extra: Record<string, unknown> = {}): string {
  const dir = path.join(home, 'projects', identity);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'server.json');
  fs.writeFileSync(file, JSON.stringify({ pid: 1, addr: '127.0.0.1:1', token: `tok-${identity}`, workspace, version: 'v', ...extra }));
  return file;
}

describe('prsmHome', () => {
  it('takes the setting, then PRSM_HOME, then ~/.prsm', () => {
    expect(prsmHome('/x/h', { PRSM_HOME: '/env' })).toBe('/x/h');
    expect(prsmHome('', { PRSM_HOME: '/env' })).toBe('/env');
    expect(prsmHome(undefined, {})).toBe(path.join(os.homedir(), '.prsm'));
    expect(prsmHome('~/p', {})).toBe(path.join(os.homedir(), 'p'));
  });
});

describe('parseServerInfo', () => {
  it('accepts server.json and refuses other JSON', () => {
    expect(parseServerInfo('{"pid":3,"addr":"a:1","token":"t","workspace":"/w","version":"1"}')).toEqual({
      pid: 3, addr: 'a:1', token: 't', workspace: '/w', version: '1',
    });
    expect(parseServerInfo('{"addr":"a:1"}')).toBeUndefined();
    expect(parseServerInfo('not json')).toBeUndefined();
  });
});

describe('isInside', () => {
  it('compares paths, not string prefixes', () => {
    expect(isInside('/repos', '/repos')).toBe(true);
    expect(isInside('/repos', '/repos/a/b')).toBe(true);
    expect(isInside('/repos', '/repos-evil')).toBe(false);
    expect(isInside('/repos', '/')).toBe(false);
  });
  it('takes names that start with two dots for names, not a way out', () => {
    expect(isInside('/repos', '/repos/..foo')).toBe(true);
    expect(isInside('/repos', '/repos/..foo/bar')).toBe(true);
    expect(isInside('/repos', '/repos/...')).toBe(true);
    expect(isInside('/repos/a', '/repos/..a')).toBe(false);
    expect(isInside('/repos/a', '/repos')).toBe(false);
  });
});

describe('findServer', () => {
  it('matches the folder to the workspace field', async () => {
    const home = path.join(tmp, 'home');
    const wsA = path.join(tmp, 'a');
    const wsB = path.join(tmp, 'b');
    fs.mkdirSync(wsA);
    fs.mkdirSync(wsB);
    writeInfo(home, 'a-1', wsA);
    const fileB = writeInfo(home, 'b-2', wsB);
    const d = await findServer({ home, folders: [wsB] });
    expect(d?.file).toBe(fileB);
    expect(d?.info.token).toBe('tok-b-2');
    expect(await findServer({ home, folders: [path.join(tmp, 'c')] })).toBeUndefined();
  });

  it('finds the server of a repository that holds the folder, the deepest first', async () => {
    const home = path.join(tmp, 'home');
    const outer = path.join(tmp, 'outer');
    const inner = path.join(outer, 'nested');
    fs.mkdirSync(path.join(inner, 'src'), { recursive: true });
    writeInfo(home, 'outer', outer);
    writeInfo(home, 'inner', inner);
    expect((await findServer({ home, folders: [path.join(outer, 'x')] }))?.info.token).toBe('tok-outer');
    expect((await findServer({ home, folders: [path.join(inner, 'src')] }))?.info.token).toBe('tok-inner');
  });

  it('follows a symlinked folder, and skips broken files', async () => {
    const home = path.join(tmp, 'home');
    const ws = path.join(tmp, 'real');
    fs.mkdirSync(ws);
    const link = path.join(tmp, 'link');
    fs.symlinkSync(ws, link);
    writeInfo(home, 'r', ws);
    fs.mkdirSync(path.join(home, 'projects', 'broken'));
    fs.writeFileSync(path.join(home, 'projects', 'broken', 'server.json'), '{oops');
    expect((await findServer({ home, folders: [link] }))?.info.token).toBe('tok-r');
  });

  it('uses an explicit server.json when set, and copes with no PRSM_HOME', async () => {
    const file = writeInfo(path.join(tmp, 'elsewhere'), 'z', '/some/where');
    expect((await findServer({ home: path.join(tmp, 'none'), infoFile: file, folders: [] }))?.info.token).toBe('tok-z');
    expect(await findServer({ home: path.join(tmp, 'none'), folders: [tmp] })).toBeUndefined();
  });
});

describe('PathMap', () => {
  it('maps a symlinked folder to the server workspace and back', () => {
    const ws = path.join(tmp, 'ws');
    fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
    const link = path.join(tmp, 'link');
    fs.symlinkSync(ws, link);
    const m = new PathMap(ws, [link]);
    expect(m.toServer(path.join(link, 'src', 'a.ts'))).toBe(path.join(ws, 'src', 'a.ts'));
    expect(m.toServer(path.join(ws, 'b.ts'))).toBe(path.join(ws, 'b.ts'));
    expect(m.toServer(path.join(tmp, 'other', 'c.ts'))).toBeUndefined();
    expect(m.toLocal(path.join(ws, 'src', 'a.ts'))).toBe(path.join(link, 'src', 'a.ts'));
  });
  it('maps files whose names start with two dots, and nothing above the workspace', () => {
    const ws = path.join(tmp, 'ws');
    fs.mkdirSync(ws, { recursive: true });
    const m = new PathMap(ws, [ws]);
    expect(m.toServer(path.join(ws, '..txt'))).toBe(path.join(ws, '..txt'));
    expect(m.toServer(path.join(ws, '..foo', 'bar'))).toBe(path.join(ws, '..foo', 'bar'));
    expect(m.toServer(path.join(ws, '..', 'x'))).toBeUndefined();
  });
});
