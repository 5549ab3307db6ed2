// The diff of one record: vscode.diff between its pre-tool content and its
// new content, both read through a content provider from the server.

import * as path from 'node:path';
import * as vscode from 'vscode';

import type { FileChangeRecord } from './api.gen';
import type { AppContext } from './context';
import { Disposable } from './lifecycle';
import { CONTENT_SCHEME } from './settings';
import { toolLabel } from './labels';
import { size } from './words';

export type Side = 'before' | 'after';

/** prsm-content:/<rel_path>?session=..&id=..&side=.. (the path gives the language). */
export function contentUri(r: Pick<FileChangeRecord, 'session_id' | 'id' | 'rel_path'>, side: Side): vscode.Uri {
  const q = new URLSearchParams({ session: r.session_id, id: r.id, side }).toString();
  return vscode.Uri.from({ scheme: CONTENT_SCHEME, path: `/${r.rel_path}`, query: q });
}

export function parseContentUri(uri: vscode.Uri): { session: string; id: string; side: Side } | undefined {
  const q = new URLSearchParams(uri.query);
  const session = q.get('session');
  const id = q.get('id');
  const side = q.get('side');
  if (!session || !id || (side !== 'before' && side !== 'after')) {
    return undefined;
  }
  return { session, id, side };
}

/** The message shown instead of a diff for a binary record. */
export function binaryMessage(r: FileChangeRecord): string {
  const note = r.note ? ` ${r.note}.` : '';
  switch (r.change_type) {
    case 'create':
      return `prsm: binary file changed: ${r.rel_path} was created (${size(r.size_after)}).${note}`;
    case 'delete':
      return `prsm: binary file changed: ${r.rel_path} was deleted (${size(r.size_before)}).${note}`;
    default:
      return `prsm: binary file changed: ${r.rel_path} (${size(r.size_before)} → ${size(r.size_after)}).${note}`;
  }
}

export class ContentProvider extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;

  constructor(private readonly ctx: AppContext) {
    super();
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const ref = parseContentUri(uri);
    if (!ref) {
      return '';
    }
    const client = this.ctx.connection.client;
    if (!client) {
      return '(prsm is not running in this workspace)';
    }
    try {
      if (ref.side === 'before') {
        // The file as the tool found it: pre_tool_content when the record
        // carries it inline, else the before side from the content endpoint.
        const rec = this.ctx.model.record(ref.session, ref.id);
        if (rec && rec.pre_tool_content !== null) {
          return rec.pre_tool_content;
        }
      }
      const b = await client.changeContent(ref.session, ref.id, ref.side);
      return b ? b.toString('utf8') : '';
    } catch (err) {
      this.ctx.connection.reportError(err);
      return `(prsm: cannot load the ${ref.side} side: ${err instanceof Error ? err.message : String(err)})`;
    }
  }
}

export async function showRecordDiff(r: FileChangeRecord): Promise<void> {
  if (r.binary) {
    void vscode.window.showInformationMessage(binaryMessage(r));
    return;
  }
  const name = path.basename(r.rel_path);
  const what = r.change_type === 'create' ? 'created' : r.change_type === 'delete' ? 'deleted' : r.status;
  const title = `${name} (${toolLabel(r)}, ${what})`;
  await vscode.commands.executeCommand('vscode.diff', contentUri(r, 'before'), contentUri(r, 'after'), title, { preview: true });
}
