// Finding the server of the open workspace folder through
// PRSM_HOME/projects/*/server.json. Plain Node: no vscode, no git.

import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';

import type { ServerInfo } from './api.gen';

/** PRSM_HOME: the setting, else the environment variable, else ~/.prsm. */
export function prsmHome(setting: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const h = (setting && setting.trim()) || env.PRSM_HOME || path.join(os.homedir(), '.prsm');
  return path.resolve(expandHome(h));
}

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p;
}

export interface Discovered {
  info: ServerInfo;
  /** The server.json it came from. */
  file: string;
}

/** Parses server.json text; undefined when it is not a server.json. */
export function parseServerInfo(text: string): ServerInfo | undefined {
  try {
    const v = JSON.parse(text) as Partial<ServerInfo>;
    if (v && typeof v.addr === 'string' && typeof v.token === 'string' && typeof v.workspace === 'string') {
      return {
        pid: typeof v.pid === 'number' ? v.pid : 0,
        addr: v.addr,
        token: v.token,
        workspace: v.workspace,
        version: typeof v.version === 'string' ? v.version : '',
      };
    }
  } catch {
    // not JSON
  }
  return undefined;
}

async function real(p: string): Promise<string> {
  try {
    return await fs.realpath(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * Whether child is root or inside it (path-wise, not by string prefix). Only
 * a whole ".." segment leads out: "..foo" is a name inside root.
 */
export function isInside(root: string, child: string): boolean {
  const rel = path.relative(root, child);
  const out = rel === '..' || rel.startsWith('..' + path.sep);
  return rel === '' || (!out && !path.isAbsolute(rel));
}

export interface FindOptions {
  home: string;
  /** An explicit server.json (the prsm.serverInfoFile setting). */
  infoFile?: string;
  /** The open workspace folders (absolute paths). */
  folders: string[];
}

/**
 * The server whose workspace is one of the folders or contains one. With
 * several candidates the deepest workspace wins (a nested repository is more
 * specific than the one around it).
 */
export async function findServer(opts: FindOptions): Promise<Discovered | undefined> {
  if (opts.infoFile) {
    const file = path.resolve(expandHome(opts.infoFile));
    const info = await readInfo(file);
    return info ? { info, file } : undefined;
  }
  const projects = path.join(opts.home, 'projects');
  let entries: string[];
  try {
    entries = await fs.readdir(projects);
  } catch {
    return undefined;
  }
  const folders = await Promise.all(opts.folders.map(real));
  let best: { d: Discovered; depth: number } | undefined;
  for (const name of entries.sort()) {
    const file = path.join(projects, name, 'server.json');
    const info = await readInfo(file);
    if (!info) {
      continue;
    }
    const ws = await real(info.workspace);
    if (!folders.some((f) => isInside(ws, f))) {
      continue;
    }
    const depth = ws.split(path.sep).length;
    if (!best || depth > best.depth) {
      best = { d: { info, file }, depth };
    }
  }
  return best?.d;
}

async function readInfo(file: string): Promise<ServerInfo | undefined> {
  try {
    return parseServerInfo(await fs.readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
}
