// What every part of the extension shares: the connection, the model, the
// path mapping and one way to run a server call with errors shown once.

import * as vscode from 'vscode';

import type { FileChangeRecord } from './api.gen';
import { PrsmApiError, type PrsmClient } from './client';
import type { Connection } from './connection';
import { log } from './log';
import type { Model } from './model';
import { toolLabel } from './labels';
import type { PathMap } from './paths';
import { Defaults, SECTION, SettingKeys } from './settings';

export interface AppContext {
  readonly connection: Connection;
  readonly model: Model;
  /** The path mapping of the connected server; undefined while none is known. */
  paths(): PathMap | undefined;
  /**
   * Runs fn against the connected server. Failures are logged, shown as one
   * warning (not an error popup for a missing server), and steer the
   * connection. Returns undefined when it failed.
   */
  call<T>(what: string, fn: (c: PrsmClient) => Promise<T>): Promise<T | undefined>;
}

export function setting<T>(key: string, def: T): T {
  return vscode.workspace.getConfiguration(SECTION).get<T>(key, def);
}

export function maxDecoratedLines(): number {
  const n = setting<number>(SettingKeys.decorationsMaxLines, Defaults.decorationsMaxLines);
  return Number.isFinite(n) && n > 0 ? n : Defaults.decorationsMaxLines;
}

export function makeCall(connection: Connection) {
  return async function call<T>(what: string, fn: (c: PrsmClient) => Promise<T>): Promise<T | undefined> {
    const client = connection.client;
    if (!client) {
      void vscode.window.showWarningMessage(`prsm: cannot ${what}: prsm is not running in this workspace.`);
      return undefined;
    }
    try {
      return await fn(client);
    } catch (err) {
      const msg = err instanceof PrsmApiError ? err.describe() : err instanceof Error ? err.message : String(err);
      log.error(`${what}: ${msg}`);
      connection.reportError(err);
      void vscode.window.showWarningMessage(`prsm: cannot ${what}: ${msg}`);
      return undefined;
    }
  };
}

/** A short label of a record for titles and pickers: the tool and the file's path. */
export function recordLabel(r: FileChangeRecord): string {
  return r.tool_name === 'Watch' ? `${r.rel_path}, ${toolLabel(r)}` : `${toolLabel(r)} ${r.rel_path}`;
}
