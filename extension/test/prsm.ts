// A real prsm server on a scratch repository, for the contract test and the
// end-to-end test. PRSM_BIN names the binary (ci.sh and scripts/e2e.sh
// build it). The tests play the agent through the API; they run git only to
// make the scratch repository, never through the extension.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import type { FileChangeRecord, ServerInfo, Session } from '../src/api.gen';
import { PrsmClient } from '../src/client';
import { findServer } from '../src/discovery';

export const PRSM_BIN = process.env.PRSM_BIN ?? '';

export interface Scratch {
  root: string;
  home: string;
  repo: string;
  env: NodeJS.ProcessEnv;
}

/** A temp dir with a git repository (files committed) and an empty PRSM_HOME. */
export function scratchRepo(files: Record<string, string>, prefix = 'prsm-ext-'): Scratch {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  const home = path.join(root, 'prsm-home');
  const repo = path.join(root, 'repo');
  const gitHome = path.join(root, 'git-home');
  fs.mkdirSync(home);
  fs.mkdirSync(repo);
  fs.mkdirSync(gitHome);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PRSM_HOME: home,
    HOME: gitHome,
    GIT_CONFIG_GLOBAL: path.join(gitHome, '.gitconfig'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
    fs.writeFileSync(path.join(repo, rel), text);
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  return { root, home, repo, env };
}

/** Runs the prsm CLI in the repository. */
export function prsm(s: Scratch, ...args: string[]): string {
  return execFileSync(PRSM_BIN, args, { cwd: s.repo, env: s.env, encoding: 'utf8', timeout: 60_000 });
}

export async function serverInfo(s: Scratch): Promise<ServerInfo> {
  const d = await findServer({ home: s.home, folders: [s.repo] });
  if (!d) {
    throw new Error(`no server.json for ${s.repo} under ${s.home}`);
  }
  return d.info;
}

/** Starts `prsm serve --detach` and returns a client of it. */
export async function startPrsm(s: Scratch): Promise<PrsmClient> {
  prsm(s, 'serve', '--detach');
  return new PrsmClient(await serverInfo(s));
}

/** Stops the scratch's server (if any) and waits until its process is gone. */
export async function stopPrsm(s: Scratch): Promise<void> {
  let pid = 0;
  try {
    pid = (await serverInfo(s)).pid;
  } catch {
    // none
  }
  try {
    prsm(s, 'stop');
  } catch {
    // fall through to the kill
  }
  if (pid) {
    for (let i = 0; i < 100 && alive(pid); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    if (alive(pid)) {
      process.kill(pid, 'SIGKILL');
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Plays one agent tool call: capture, write (or delete) the file in the worktree, complete. */
export async function agentWrite(
  client: PrsmClient,
  session: Session,
  toolCallId: string,
  rel: string,
  content: string | null,
  toolName = 'Edit',
): Promise<FileChangeRecord[]> {
  const file = path.join(session.worktree_path, rel);
  await client.startToolCall(session.id, { tool_call_id: toolCallId, tool_name: toolName, args: { file_path: file } });
  if (content === null) {
    fs.rmSync(file);
  } else {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
  return (await client.completeToolCall(session.id, toolCallId, { result: { ok: true } })).records;
}
