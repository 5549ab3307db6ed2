// Line blame (issue 47), like GitLens's: a hover on each line of a workspace
// file says which agent, tool call and prompt wrote it and what became of
// the change (or that you did), and the cursor's line has the same in short
// after its end. The server answers (GET /blame) for the file on disk, so a
// document with unsaved edits shows nothing until it is saved. Answers are
// cached per document version and dropped on the server's events about
// changes (file_changed, file_change_status, through the model) and on save.

import * as vscode from 'vscode';

import type { Blame, BlameOrigin } from './api.gen';
import { annotationText, originAtLine, originDetails, whoLabel } from './blametext';
import { setting, type AppContext } from './context';
import { Disposable } from './lifecycle';
import { log } from './log';
import { Defaults, SECTION, SettingKeys } from './settings';

/** The hover of a line: who wrote it, and the details of its tool call. */
export function blameHover(o: BlameOrigin | undefined): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  if (!o) {
    md.appendMarkdown('**prsm blame**: you wrote this line: no agent change explains it.');
    return md;
  }
  md.appendMarkdown('**prsm blame**: ');
  md.appendText(whoLabel(o));
  for (const [k, v] of originDetails(o)) {
    md.appendMarkdown(`  \n**${k}:** `);
    md.appendText(v);
  }
  return md;
}

export function blameEnabled(): boolean {
  return setting<boolean>(SettingKeys.blameEnabled, Defaults.blameEnabled);
}

/** Flips prsm.blame.enabled (in the user's settings). */
export async function toggleLineBlame(): Promise<void> {
  await vscode.workspace
    .getConfiguration(SECTION)
    .update(SettingKeys.blameEnabled, !blameEnabled(), vscode.ConfigurationTarget.Global);
}

interface Cached {
  version: number;
  answer: Promise<Blame | undefined>;
}

export class LineBlame extends Disposable implements vscode.HoverProvider {
  private readonly cache = new Map<string, Cached>();
  private readonly annotation: vscode.TextEditorDecorationType;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ctx: AppContext) {
    super();
    this.annotation = this._register(
      vscode.window.createTextEditorDecorationType({
        after: {
          margin: '0 0 0 3em',
          color: new vscode.ThemeColor('editorCodeLens.foreground'),
          fontStyle: 'italic',
        },
        rangeBehavior: vscode.DecorationRangeBehavior.ClosedOpen,
      }),
    );
    this._register(vscode.languages.registerHoverProvider({ scheme: 'file' }, this));
    // An event about a change may change any line's story: read again.
    this._register(ctx.model.onChange(() => this.invalidate()));
    this._register(ctx.connection.onConnected(() => this.invalidate()));
    this._register(
      vscode.workspace.onDidSaveTextDocument((d) => {
        this.cache.delete(d.uri.toString());
        this.schedule();
      }),
    );
    this._register(vscode.workspace.onDidCloseTextDocument((d) => this.cache.delete(d.uri.toString())));
    this._register(vscode.window.onDidChangeTextEditorSelection(() => this.schedule()));
    this._register(vscode.window.onDidChangeActiveTextEditor(() => this.schedule()));
    this._register(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document === vscode.window.activeTextEditor?.document) {
          this.schedule();
        }
      }),
    );
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`${SECTION}.${SettingKeys.blameEnabled}`)) {
          this.schedule();
        }
      }),
    );
    this._register({ dispose: () => this.timer && clearTimeout(this.timer) });
    this.schedule();
  }

  private invalidate(): void {
    this.cache.clear();
    this.schedule();
  }

  /**
   * The blame of a document as it is on disk; undefined when there is
   * none to show: blame off, no server, a file outside the workspace,
   * unsaved edits, or an error (logged).
   */
  blameOf(doc: vscode.TextDocument): Promise<Blame | undefined> {
    const client = this.ctx.connection.client;
    const file = doc.uri.scheme === 'file' ? this.ctx.paths()?.toServer(doc.uri.fsPath) : undefined;
    if (!blameEnabled() || !client || !file || doc.isDirty) {
      return Promise.resolve(undefined);
    }
    const key = doc.uri.toString();
    const hit = this.cache.get(key);
    if (hit && hit.version === doc.version) {
      return hit.answer;
    }
    const answer = client.blame(file).catch((err: unknown) => {
      log.debug(`blame ${file}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    });
    this.cache.set(key, { version: doc.version, answer });
    return answer;
  }

  async provideHover(doc: vscode.TextDocument, pos: vscode.Position): Promise<vscode.Hover | undefined> {
    const b = await this.blameOf(doc);
    if (!b || !b.lines?.some((l) => l.line === pos.line + 1)) {
      return undefined;
    }
    return new vscode.Hover(blameHover(originAtLine(b, pos.line + 1)));
  }

  private schedule(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.annotate();
    }, 100);
  }

  /** The annotation after the cursor's line of the active editor; none elsewhere. */
  private async annotate(): Promise<void> {
    for (const ed of vscode.window.visibleTextEditors) {
      if (ed !== vscode.window.activeTextEditor) {
        ed.setDecorations(this.annotation, []);
      }
    }
    const ed = vscode.window.activeTextEditor;
    if (!ed) {
      return;
    }
    const version = ed.document.version;
    const line = ed.selection.active.line;
    const b = await this.blameOf(ed.document);
    // The editor moved on while the server answered: its own turn comes.
    if (this.isDisposed || ed !== vscode.window.activeTextEditor || ed.document.version !== version || ed.selection.active.line !== line) {
      return;
    }
    if (!b || !b.lines?.some((l) => l.line === line + 1)) {
      ed.setDecorations(this.annotation, []);
      return;
    }
    const end = ed.document.lineAt(line).range.end;
    const o = originAtLine(b, line + 1);
    ed.setDecorations(this.annotation, [
      {
        range: new vscode.Range(end.line, end.character, end.line, end.character),
        renderOptions: { after: { contentText: annotationText(o, Date.now()) } },
      },
    ]);
  }
}
