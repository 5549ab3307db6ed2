// Added lines and removed-line markers of pending changes in visible
// editors, in theme colors (package.json contributes them with defaults
// taken from the diff and gutter colors).

import * as vscode from 'vscode';

import { placementsFor } from './codelens';
import type { AppContext } from './context';
import { Disposable } from './lifecycle';
import type { Placement } from './ranges';
import { splitLines } from './ranges';
import { toolLabel } from './labels';
import { plural } from './words';

export const Colors = {
  addedBackground: 'prsm.addedLineBackground',
  addedBorder: 'prsm.addedLineBorder',
  removedMarker: 'prsm.removedLineMarker',
  conflictBackground: 'prsm.conflictLineBackground',
  overviewAdded: 'prsm.overviewRulerAdded',
  overviewRemoved: 'prsm.overviewRulerRemoved',
} as const;

/** The decoration ranges of placements, as plain numbers (tested without vscode). */
export interface DecorationPlan {
  added: Array<{ start: number; end: number }>;
  removedAbove: Array<{ line: number; count: number; oldStart: number; record: Placement['record'] }>;
  removedBelow: Array<{ line: number; count: number; oldStart: number; record: Placement['record'] }>;
  conflicts: number[];
}

export function planDecorations(placements: readonly Placement[]): DecorationPlan {
  const plan: DecorationPlan = { added: [], removedAbove: [], removedBelow: [], conflicts: [] };
  for (const p of placements) {
    if (p.record.sync_state === 'conflict') {
      plan.conflicts.push(p.lensLine);
      continue;
    }
    plan.added.push(...p.added);
    for (const m of p.removed) {
      (m.below ? plan.removedBelow : plan.removedAbove).push({ line: m.line, count: m.count, oldStart: m.oldStart, record: p.record });
    }
  }
  return plan;
}

function removedHover(r: Placement['record'], oldStart: number, count: number): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**prsm**: ${plural(count, 'line')} removed by ${toolLabel(r)} \`${r.id}\``);
  const old = r.old_content;
  if (old !== null) {
    const lines = splitLines(old).slice(oldStart, oldStart + Math.min(count, 30));
    md.appendCodeblock(lines.join('\n') + (count > 30 ? '\n…' : ''));
  }
  return md;
}

export class Decorations extends Disposable {
  private readonly added: vscode.TextEditorDecorationType;
  private readonly removedAbove: vscode.TextEditorDecorationType;
  private readonly removedBelow: vscode.TextEditorDecorationType;
  private readonly conflict: vscode.TextEditorDecorationType;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ctx: AppContext) {
    super();
    const c = (id: string) => new vscode.ThemeColor(id);
    this.added = this._register(
      vscode.window.createTextEditorDecorationType({
        isWholeLine: true,
        backgroundColor: c(Colors.addedBackground),
        borderColor: c(Colors.addedBorder),
        borderStyle: 'solid',
        borderWidth: '0 0 0 3px',
        overviewRulerColor: c(Colors.overviewAdded),
        overviewRulerLane: vscode.OverviewRulerLane.Left,
      }),
    );
    const removed = (width: string) =>
      vscode.window.createTextEditorDecorationType({
        isWholeLine: true,
        borderColor: c(Colors.removedMarker),
        borderStyle: 'dashed',
        borderWidth: width,
        overviewRulerColor: c(Colors.overviewRemoved),
        overviewRulerLane: vscode.OverviewRulerLane.Left,
      });
    this.removedAbove = this._register(removed('2px 0 0 0'));
    this.removedBelow = this._register(removed('0 0 2px 0'));
    this.conflict = this._register(
      vscode.window.createTextEditorDecorationType({
        isWholeLine: true,
        backgroundColor: c(Colors.conflictBackground),
        overviewRulerColor: c(Colors.conflictBackground),
        overviewRulerLane: vscode.OverviewRulerLane.Full,
      }),
    );
    this._register(ctx.model.onChange(() => this.schedule()));
    this._register(vscode.window.onDidChangeVisibleTextEditors(() => this.schedule()));
    this._register(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (vscode.window.visibleTextEditors.some((ed) => ed.document === e.document)) {
          this.schedule();
        }
      }),
    );
    this._register({ dispose: () => this.timer && clearTimeout(this.timer) });
    this.schedule();
  }

  schedule(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.updateAll();
    }, 50);
  }

  updateAll(): void {
    for (const ed of vscode.window.visibleTextEditors) {
      this.update(ed);
    }
  }

  update(ed: vscode.TextEditor): void {
    const plan = planDecorations(placementsFor(this.ctx, ed.document));
    const line = (l: number) => new vscode.Range(l, 0, l, 0);
    ed.setDecorations(
      this.added,
      plan.added.map((a) => new vscode.Range(a.start, 0, a.end, 0)),
    );
    const markers = (list: DecorationPlan['removedAbove']): vscode.DecorationOptions[] =>
      list.map((m) => ({ range: line(m.line), hoverMessage: removedHover(m.record, m.oldStart, m.count) }));
    ed.setDecorations(this.removedAbove, markers(plan.removedAbove));
    ed.setDecorations(this.removedBelow, markers(plan.removedBelow));
    ed.setDecorations(this.conflict, plan.conflicts.map(line));
  }
}
