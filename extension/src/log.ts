import * as vscode from 'vscode';

/** The extension's one output channel ("prsm"), a log channel with levels. */
export interface Log {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
  debug(msg: string): void;
}

let channel: vscode.LogOutputChannel | undefined;

/** Creates the output channel once; the caller registers it for disposal. */
export function createLog(): vscode.LogOutputChannel {
  channel = vscode.window.createOutputChannel('prsm', { log: true });
  return channel;
}

/** The shared log; before activation (in unit tests) it writes nowhere. */
export const log: Log = {
  info: (m) => channel?.info(m),
  warn: (m) => channel?.warn(m),
  error: (m) => channel?.error(m),
  debug: (m) => channel?.debug(m),
};

export function showLog(): void {
  channel?.show(true);
}
