// The "Changes" view: sessions, then files, then changes, each with its
// status; inline Accept and Reject at every level. The changes a rewind set
// aside (status rewound) are not under review: they sit in a collapsed
// "Rewound (N)" node after a session's files, with nothing to decide.

import * as path from 'node:path';
import * as vscode from 'vscode';

import type { Feedback, FileChangeRecord, Session } from './api.gen';
import type { AppContext } from './context';
import { feedbackLines } from './feedbacktext';
import { changeLabel, changeSummary, mergingInEditor, toolLabel } from './labels';
import { Disposable } from './lifecycle';
import { statusOf, type Model } from './model';
import { Commands } from './settings';
import { plural } from './words';

export interface Counts {
  pending: number;
  accepted: number;
  rejected: number;
  /** Records whose hunks were decided differently: some accepted, some rejected. */
  partial: number;
  /** Records made after the checkpoint a rewind went back to: not pending. */
  rewound: number;
  conflicts: number;
}

export interface SessionNode {
  kind: 'session';
  session: Session;
  /** The files of the changes under review (rewound ones are in rewound). */
  files: FileNode[];
  /** The session's rewound changes, oldest first; undefined when it has none. */
  rewound: RewoundNode | undefined;
  counts: Counts;
}

/**
 * A session's rewound changes: made after the checkpoint a rewind went back
 * to, out of the worktree and the workspace. A rewind to a later checkpoint
 * (the Undo) brings them back.
 */
export interface RewoundNode {
  kind: 'rewound';
  sessionId: string;
  changes: ChangeNode[];
}

export interface FileNode {
  kind: 'file';
  sessionId: string;
  relPath: string;
  filePath: string;
  changes: ChangeNode[];
  counts: Counts;
}

export interface ChangeNode {
  kind: 'change';
  record: FileChangeRecord;
}

export type ChangeTreeNode = SessionNode | FileNode | RewoundNode | ChangeNode;

function count(records: readonly FileChangeRecord[]): Counts {
  const c: Counts = { pending: 0, accepted: 0, rejected: 0, partial: 0, rewound: 0, conflicts: 0 };
  for (const r of records) {
    c[statusOf(r)]++;
    if (r.status === 'pending' && r.sync_state === 'conflict') {
      c.conflicts++;
    }
  }
  return c;
}

/**
 * Builds the tree: active sessions first, newest first; files by path;
 * changes oldest first. Sessions with no records are listed too.
 */
export function buildTree(model: Pick<Model, 'sessions' | 'records'>): SessionNode[] {
  const bySession = new Map<string, FileChangeRecord[]>();
  for (const r of model.records) {
    const list = bySession.get(r.session_id) ?? [];
    list.push(r);
    bySession.set(r.session_id, list);
  }
  const sessions = [...model.sessions];
  // Records of a session the model has not heard of yet still show.
  for (const id of bySession.keys()) {
    if (!sessions.some((s) => s.id === id)) {
      sessions.push({
        id, name: id, agent_id: '', mode: 'auto', status: 'active', worktree_path: '', branch: '', base_commit: '',
        created_at: '', ended_at: null, pending_count: 0,
      });
    }
  }
  sessions.sort((a, b) => (a.status === b.status ? b.created_at.localeCompare(a.created_at) : a.status === 'active' ? -1 : 1));
  return sessions.map((s) => {
    const recs = bySession.get(s.id) ?? [];
    const rewound = recs.filter((r) => r.status === 'rewound').sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    const byFile = new Map<string, FileChangeRecord[]>();
    for (const r of recs) {
      if (r.status === 'rewound') {
        continue;
      }
      const list = byFile.get(r.rel_path) ?? [];
      list.push(r);
      byFile.set(r.rel_path, list);
    }
    const files: FileNode[] = [...byFile.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([rel, list]) => {
        list.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
        return {
          kind: 'file',
          sessionId: s.id,
          relPath: rel,
          filePath: list[0].file_path,
          changes: list.map((record) => ({ kind: 'change', record })),
          counts: count(list),
        };
      });
    return {
      kind: 'session',
      session: s,
      files,
      rewound: rewound.length ? { kind: 'rewound', sessionId: s.id, changes: rewound.map((record) => ({ kind: 'change', record })) } : undefined,
      counts: count(recs),
    };
  });
}

function countsText(c: Counts): string {
  const parts: string[] = [];
  if (c.pending) {
    parts.push(`${c.pending} pending`);
  }
  if (c.conflicts) {
    parts.push(plural(c.conflicts, 'conflict'));
  }
  if (c.accepted) {
    parts.push(`${c.accepted} accepted`);
  }
  if (c.partial) {
    parts.push(`${c.partial} partial`);
  }
  if (c.rejected) {
    parts.push(`${c.rejected} rejected`);
  }
  if (c.rewound) {
    parts.push(`${c.rewound} rewound`);
  }
  return parts.join(', ') || 'no changes';
}

/** The status word of a record shown in the tree. */
export function statusText(r: FileChangeRecord): string {
  if (r.status === 'rewound') {
    return 'rewound'; // out of the workspace: whatever its sync state was does not hold
  }
  if (mergingInEditor(r)) {
    return 'conflict, merging in editor';
  }
  if (r.status === 'pending' && r.sync_state === 'conflict') {
    return 'conflict';
  }
  if (r.status === 'pending' && r.sync_state === 'pending_review') {
    return 'pending review';
  }
  return r.status;
}

/** contextValue of a node: what its inline actions and menus match on. */
export function contextValue(n: ChangeTreeNode): string {
  switch (n.kind) {
    case 'session':
      return `session.${n.counts.pending ? 'pending' : 'done'}`;
    case 'file':
      return `file.${n.counts.pending ? 'pending' : 'done'}`;
    case 'rewound':
      return 'rewound'; // no menu matches it: nothing to decide
    case 'change':
      if (n.record.status === 'pending') {
        return n.record.sync_state === 'conflict' ? 'change.pending.conflict' : 'change.pending';
      }
      return `change.${n.record.status}`;
  }
}

function statusIcon(r: FileChangeRecord): vscode.ThemeIcon {
  const c = (id: string) => new vscode.ThemeColor(id);
  if (r.status === 'pending') {
    return r.sync_state === 'conflict'
      ? new vscode.ThemeIcon('warning', c('list.warningForeground'))
      : new vscode.ThemeIcon('circle-filled', c('charts.yellow'));
  }
  if (statusOf(r) === 'partial') {
    return new vscode.ThemeIcon('pie-chart', c('charts.blue'));
  }
  if (r.status === 'rewound') {
    return new vscode.ThemeIcon('history', c('disabledForeground'));
  }
  return r.status === 'accepted' ? new vscode.ThemeIcon('pass', c('charts.green')) : new vscode.ThemeIcon('circle-slash', c('charts.red'));
}

function lines(r: FileChangeRecord): string {
  if (r.binary) {
    return 'binary';
  }
  const add = r.added_ranges.reduce((n, x) => n + x.endLine - x.startLine + 1, 0);
  const del = r.removed_ranges.reduce((n, x) => n + x.endLine - x.startLine + 1, 0);
  return `+${add} −${del}`;
}

/** A change row's description: the summary of what changed, its status and its size in lines. */
export function changeDescription(r: FileChangeRecord): string {
  const s = changeSummary(r);
  const l = r.binary ? '' : lines(r); // the summary gives a binary file's size
  return [s, statusText(r), r.change_type === 'create' ? 'new file' : '', l].filter(Boolean).join(' · ');
}

/** A change row's tooltip: everything, the whole id included (the CLI takes it as it is). */
export function changeTooltip(r: FileChangeRecord): string {
  const s = changeSummary(r);
  return [
    `${toolLabel(r)}: ${r.rel_path} (${r.change_type}, ${lines(r)})`,
    s ? `${s}` : '',
    `status: ${statusText(r)}${r.note ? ` (${r.note})` : ''}`,
    `id: ${r.id}${r.tool_call_id !== r.id ? ` (tool call ${r.tool_call_id})` : ''}`,
    `agent: ${r.agent_id || 'unknown'}, ${r.timestamp}`,
    r.commit ? `commit: ${r.commit}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

export function toTreeItem(n: ChangeTreeNode, toLocal: (p: string) => string = (p) => p): vscode.TreeItem {
  switch (n.kind) {
    case 'session': {
      const s = n.session;
      const item = new vscode.TreeItem(s.name || s.id, s.status === 'active' ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `session:${s.id}`;
      item.description = `${countsText(n.counts)} · ${s.mode}${s.status === 'ended' ? ' · ended' : ''}`;
      item.tooltip = `Session ${s.id} (${s.agent_id || 'agent'}, ${s.mode} mode, ${s.status})\n${s.branch}\n${countsText(n.counts)}`;
      item.iconPath = new vscode.ThemeIcon(s.status === 'active' ? 'hubot' : 'archive');
      item.contextValue = contextValue(n);
      return item;
    }
    case 'file': {
      const item = new vscode.TreeItem(path.basename(n.relPath), n.counts.pending ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `file:${n.sessionId}:${n.relPath}`;
      const dir = path.dirname(n.relPath);
      item.description = `${dir === '.' ? '' : `${dir} · `}${countsText(n.counts)}`;
      item.tooltip = `${n.relPath}\n${countsText(n.counts)}`;
      item.resourceUri = vscode.Uri.file(toLocal(n.filePath));
      item.contextValue = contextValue(n);
      item.command = { title: 'Open File', command: Commands.openFile, arguments: [n] };
      return item;
    }
    case 'rewound': {
      const item = new vscode.TreeItem(`Rewound (${n.changes.length})`, vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `rewound:${n.sessionId}`;
      item.tooltip = `${plural(n.changes.length, 'change')} made after the checkpoint a rewind went back to: out of the worktree and your workspace, nothing to review. A rewind to a later checkpoint (the Undo) brings them back.`;
      item.iconPath = new vscode.ThemeIcon('history');
      item.contextValue = contextValue(n);
      return item;
    }
    case 'change': {
      const r = n.record;
      const item = new vscode.TreeItem(changeLabel(r), vscode.TreeItemCollapsibleState.None);
      item.id = `change:${r.session_id}:${r.id}`;
      item.description = changeDescription(r);
      item.tooltip = changeTooltip(r);
      item.iconPath = statusIcon(r);
      item.contextValue = contextValue(n);
      item.command = { title: 'Show Diff', command: Commands.showDiff, arguments: [n] };
      return item;
    }
  }
}

export class ChangesTree extends Disposable implements vscode.TreeDataProvider<ChangeTreeNode> {
  private readonly changed = this._register(new vscode.EventEmitter<ChangeTreeNode | undefined | void>());
  readonly onDidChangeTreeData = this.changed.event;
  private roots: SessionNode[] = [];
  private timer: NodeJS.Timeout | undefined;
  readonly view: vscode.TreeView<ChangeTreeNode>;

  constructor(private readonly ctx: AppContext, viewId: string) {
    super();
    this.view = this._register(vscode.window.createTreeView(viewId, { treeDataProvider: this, showCollapseAll: true }));
    this._register(ctx.model.onChange(() => this.schedule()));
    this._register(ctx.connection.onState(() => this.schedule()));
    this._register({ dispose: () => this.timer && clearTimeout(this.timer) });
    this.rebuild();
  }

  private schedule(): void {
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.rebuild();
      }, 30);
    }
  }

  private rebuild(): void {
    this.roots = this.ctx.connection.state === 'connected' ? buildTree(this.ctx.model) : [];
    const pending = this.ctx.model.pendingCount;
    this.view.badge = pending ? { value: pending, tooltip: plural(pending, 'pending change') } : undefined;
    this.changed.fire();
  }

  getTreeItem(n: ChangeTreeNode): vscode.TreeItem {
    const paths = this.ctx.paths();
    return toTreeItem(n, paths ? (p) => paths.toLocal(p) : undefined);
  }

  getChildren(n?: ChangeTreeNode): ChangeTreeNode[] {
    return n ? childrenOf(n) : this.roots;
  }

  /** A change's tooltip, when hovered: its notes and comments too, read from the server then. */
  async resolveTreeItem(item: vscode.TreeItem, n: ChangeTreeNode): Promise<vscode.TreeItem> {
    if (n.kind === 'change') {
      const r = n.record;
      const items = await this.ctx.connection.client?.changeFeedback(r.session_id, r.id).catch(() => undefined);
      item.tooltip = changeTooltipWithNotes(r, items ?? []);
    }
    return item;
  }
}

/** A change row's tooltip with its notes and comments (who, when, the delivery state, the words escaped). */
export function changeTooltipWithNotes(r: FileChangeRecord, items: readonly Feedback[]): string {
  const notes = feedbackLines(items);
  return notes.length ? `${changeTooltip(r)}\n\nNotes and comments:\n${notes.join('\n')}` : changeTooltip(r);
}

/** The children of a node: a session's files and then its rewound group, a file's or the group's changes. */
export function childrenOf(n: ChangeTreeNode): ChangeTreeNode[] {
  switch (n.kind) {
    case 'session':
      return n.rewound ? [...n.files, n.rewound] : n.files;
    case 'file':
    case 'rewound':
      return n.changes;
    case 'change':
      return [];
  }
}
