// "Start prsm": runs `prsm serve --detach --workspace <folder>`. This is the
// only process the extension starts, and it is prsm itself, never git.

import { execFile } from 'node:child_process';

export interface StartOptions {
  binary: string;
  folder: string;
  /** PRSM_HOME to pass on (from the setting); undefined keeps the environment's. */
  home?: string;
  timeoutMs?: number;
}

export interface StartResult {
  ok: boolean;
  output: string;
  /** Set when the binary was not found. */
  notFound?: boolean;
}

/** The argv of the start command (tested). */
export function serveArgs(folder: string): string[] {
  return ['serve', '--detach', '--workspace', folder];
}

export function startServer(opts: StartOptions): Promise<StartResult> {
  const env = { ...process.env };
  if (opts.home) {
    env.PRSM_HOME = opts.home;
  }
  return new Promise((resolve) => {
    execFile(
      opts.binary,
      serveArgs(opts.folder),
      { cwd: opts.folder, env, timeout: opts.timeoutMs ?? 30_000, windowsHide: true },
      (err, stdout, stderr) => {
        const output = `${stdout}${stderr}`.trim();
        if (err) {
          const code = (err as NodeJS.ErrnoException).code;
          resolve({ ok: false, output: output || err.message, notFound: code === 'ENOENT' });
          return;
        }
        resolve({ ok: true, output });
      },
    );
  });
}
