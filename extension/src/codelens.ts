// "Accept | Reject | Comment… | Diff" above every pending change, and
// "Conflict: Keep mine | Take agent's | Merge in editor" above a conflicting one. A change of
// several hunks gets "Accept | Reject | Comment…" above each pending hunk (those decide
// the hunk, or comment on its lines), and its first pending hunk also "Accept Change | Reject Change"
// (while none is decided) and "Diff".

import * as vscode from 'vscode';

import type { FileChangeRecord } from './api.gen';
import { maxDecoratedLines, setting, type AppContext } from './context';
import { hunkCommentLines } from './feedbacktext';
import { mergingInEditor, toolLabel } from './labels';
import { Disposable } from './lifecycle';
import { placeRecords, recordHunks, type Placement } from './ranges';
import { Commands, Defaults, SettingKeys, type CommandId } from './settings';
import { plural } from './words';

export interface LensSpec {
  line: number;
  title: string;
  command: CommandId;
  tooltip: string;
  /**
   * [session_id, record id], and the hunk's index for a hunk's lens, or the
   * lines ("12-18", "" for the whole change) for a Comment lens: what the
   * command acts on.
   */
  args: [string, string] | [string, string, number] | [string, string, string];
}

/** A Comment… lens: an input box, then a comment on exactly these lines of r ("" for the whole change). */
function commentLens(line: number, r: FileChangeRecord, lines: string, what: string): LensSpec {
  return {
    line,
    title: 'Comment…',
    command: Commands.commentOnChange,
    tooltip: `Comment on ${lines ? `lines ${lines} of ` : ''}${what} for the agent: it hears it at its next step; nothing is decided`,
    args: [r.session_id, r.id, lines],
  };
}

/**
 * The lines a change of one hunk is commented on: its hunk's (the server's,
 * else the one rebuilt from its ranges); "" (the whole change) when it has
 * none or several.
 */
export function changeCommentLines(r: FileChangeRecord): string {
  if (r.hunks?.length) {
    return r.hunks.length === 1 ? hunkCommentLines(r.hunks[0]) : '';
  }
  const hs = recordHunks(r);
  if (hs.length !== 1) {
    return '';
  }
  const h = hs[0];
  return hunkCommentLines({ new_start: h.newCount > 0 ? h.newStart + 1 : h.newStart, new_lines: h.newCount });
}

function describe(r: FileChangeRecord): string {
  const add = r.added_ranges.reduce((n, x) => n + x.endLine - x.startLine + 1, 0);
  const del = r.removed_ranges.reduce((n, x) => n + x.endLine - x.startLine + 1, 0);
  return `${toolLabel(r)} ${r.id} (+${add} −${del}) by ${r.agent_id || 'agent'}, session ${r.session_id}`;
}

/**
 * The lenses of placed records, in line order: four per change, three per
 * conflict, three per pending hunk of a change of several hunks (plus the
 * whole change's on its first).
 */
export function lensSpecs(placements: readonly Placement[]): LensSpec[] {
  const out: LensSpec[] = [];
  for (const p of placements) {
    const r = p.record;
    if (r.status !== 'pending') {
      continue;
    }
    const args: [string, string] = [r.session_id, r.id];
    const what = describe(r);
    if (r.sync_state === 'conflict' && mergingInEditor(r)) {
      // The markers are in the file: VS Code's merge lens is on them. A
      // second "markers" would nest markers, so only the way out is offered.
      out.push(
        {
          line: p.lensLine,
          title: 'Merging in editor: remove the conflict markers and save',
          command: Commands.mergeInEditor,
          tooltip: `prsm accepts ${what} once the file has no conflict markers left`,
          args,
        },
        { line: p.lensLine, title: "Take agent's", command: Commands.takeAgents, tooltip: `Replace the file with the agent's version and accept ${what}`, args },
      );
    } else if (r.sync_state === 'conflict') {
      out.push(
        { line: p.lensLine, title: 'Conflict: Keep mine', command: Commands.keepMine, tooltip: `Keep your version and reject ${what}`, args },
        { line: p.lensLine, title: "Take agent's", command: Commands.takeAgents, tooltip: `Replace the file with the agent's version and accept ${what}`, args },
        {
          line: p.lensLine,
          title: 'Merge in editor',
          command: Commands.mergeInEditor,
          tooltip: `Put both versions into the file between conflict markers; ${what} is accepted once you remove them`,
          args,
        },
      );
    } else if (r.hunks?.length > 1 && p.hunks.some((h) => h.status === 'pending')) {
      out.push(...hunkLenses(p, what));
    } else {
      const review = r.sync_state === 'pending_review' ? ' (not applied yet: review mode)' : '';
      out.push(
        { line: p.lensLine, title: 'Accept', command: Commands.acceptChange, tooltip: `Accept ${what}${review}`, args },
        { line: p.lensLine, title: 'Reject', command: Commands.rejectChange, tooltip: `Reject ${what}: take its lines out of the file`, args },
        commentLens(p.lensLine, r, changeCommentLines(r), what),
        { line: p.lensLine, title: 'Diff', command: Commands.showDiff, tooltip: `Show the diff of ${what}`, args },
      );
    }
  }
  return out.sort((x, y) => x.line - y.line); // stable: a line's lenses keep their order
}

/** The lenses of a change of several hunks: Accept | Reject | Comment… above each pending hunk. */
function hunkLenses(p: Placement, what: string): LensSpec[] {
  const r = p.record;
  const out: LensSpec[] = [];
  const pending = p.hunks.filter((h) => h.status === 'pending').sort((x, y) => x.line - y.line || x.index - y.index);
  const undecided = r.hunks.every((h) => h.status === 'pending');
  const review = r.sync_state === 'pending_review' ? ' (review mode: applied once every hunk is decided)' : '';
  pending.forEach((h, i) => {
    const args: [string, string, number] = [r.session_id, r.id, h.index];
    const hunk = `hunk ${h.index + 1} of ${r.hunks.length} of ${what}`;
    out.push(
      { line: h.line, title: 'Accept', command: Commands.acceptHunk, tooltip: `Accept ${hunk}${review}`, args },
      { line: h.line, title: 'Reject', command: Commands.rejectHunk, tooltip: `Reject ${hunk}: take its lines out of the file`, args },
      commentLens(h.line, r, hunkCommentLines(r.hunks.find((x) => x.index === h.index) ?? r.hunks[h.index]), hunk),
    );
    if (i > 0) {
      return;
    }
    const whole: [string, string] = [r.session_id, r.id];
    if (undecided) {
      out.push(
        { line: h.line, title: 'Accept Change', command: Commands.acceptChange, tooltip: `Accept all ${plural(r.hunks.length, 'hunk')} of ${what}`, args: whole },
        { line: h.line, title: 'Reject Change', command: Commands.rejectChange, tooltip: `Reject all ${plural(r.hunks.length, 'hunk')} of ${what}`, args: whole },
      );
    }
    out.push({ line: h.line, title: 'Diff', command: Commands.showDiff, tooltip: `Show the diff of ${what}`, args: whole });
  });
  return out;
}

/** The placements of a document's pending records (shared with the decorations). */
export function placementsFor(ctx: AppContext, doc: vscode.TextDocument): Placement[] {
  if (doc.uri.scheme !== 'file') {
    return [];
  }
  const fp = ctx.paths()?.toServer(doc.uri.fsPath);
  if (!fp) {
    return [];
  }
  const records = ctx.model.recordsOfFile(fp);
  if (!records.some((r) => r.status === 'pending')) {
    return [];
  }
  return placeRecords(records, { text: doc.getText(), lineCount: doc.lineCount, maxLines: maxDecoratedLines() });
}

export class PrsmCodeLensProvider extends Disposable implements vscode.CodeLensProvider {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(private readonly ctx: AppContext) {
    super();
    this._register(ctx.model.onChange(() => this.changed.fire()));
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('prsm')) {
          this.changed.fire();
        }
      }),
    );
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    if (!setting<boolean>(SettingKeys.codeLensEnabled, Defaults.codeLensEnabled)) {
      return [];
    }
    return lensSpecs(placementsFor(this.ctx, doc)).map(
      (s) =>
        new vscode.CodeLens(new vscode.Range(s.line, 0, s.line, 0), {
          title: s.title,
          command: s.command,
          tooltip: s.tooltip,
          arguments: s.args,
        }),
    );
  }
}
