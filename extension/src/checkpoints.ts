// The "Checkpoints" view: each session's timeline of auto and named
// checkpoints; create, annotate, delete and "Rewind to here" with a preview.

import * as vscode from 'vscode';

import type { Checkpoint, OperationType, Plan, PlanDecision, RecordStatus, Session } from './api.gen';
import type { AppContext } from './context';
import { toolLabel } from './labels';
import { Disposable } from './lifecycle';
import type { Model } from './model';
import { ContextKeys } from './settings';
import { plural } from './words';

export interface CheckpointSessionNode {
  kind: 'cpSession';
  session: Session;
  checkpoints: CheckpointNode[];
}

export interface CheckpointNode {
  kind: 'checkpoint';
  checkpoint: Checkpoint;
  session: Session | undefined;
}

export type CheckpointTreeNode = CheckpointSessionNode | CheckpointNode;

/**
 * The timeline, newest first. One session gives a flat list; several give
 * one node per session (active ones first).
 */
export function buildCheckpointTree(model: Pick<Model, 'sessions' | 'checkpoints'>): CheckpointTreeNode[] {
  const sessions = [...model.sessions].sort((a, b) =>
    a.status === b.status ? b.created_at.localeCompare(a.created_at) : a.status === 'active' ? -1 : 1,
  );
  const nodes = sessions.map<CheckpointSessionNode>((s) => ({
    kind: 'cpSession',
    session: s,
    checkpoints: [...model.checkpoints(s.id)]
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
      .map((c) => ({ kind: 'checkpoint', checkpoint: c, session: s })),
  }));
  if (nodes.length === 1) {
    return nodes[0].checkpoints;
  }
  return nodes;
}

/** The label of a checkpoint: its name, or what made an automatic one. */
export function checkpointLabel(c: Checkpoint): string {
  if (c.name) {
    return c.name;
  }
  if (c.kind === 'auto') {
    return c.tool_call_id ? `before ${c.tool_call_id}` : `turn ${c.message_index}`;
  }
  return c.id;
}

export function relativeTime(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) {
    return '';
  }
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) {
    return `${s}s ago`;
  }
  if (s < 3600) {
    return `${Math.floor(s / 60)}m ago`;
  }
  if (s < 86400) {
    return `${Math.floor(s / 3600)}h ago`;
  }
  return `${Math.floor(s / 86400)}d ago`;
}

export function checkpointItem(n: CheckpointTreeNode): vscode.TreeItem {
  if (n.kind === 'cpSession') {
    const s = n.session;
    const item = new vscode.TreeItem(s.name || s.id, s.status === 'active' ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `cpsession:${s.id}`;
    item.description = `${plural(n.checkpoints.length, 'checkpoint')}${s.status === 'ended' ? ' · ended' : ''}`;
    item.iconPath = new vscode.ThemeIcon(s.status === 'active' ? 'hubot' : 'archive');
    item.contextValue = `cpSession.${s.status}`;
    return item;
  }
  const c = n.checkpoint;
  const item = new vscode.TreeItem(checkpointLabel(c), vscode.TreeItemCollapsibleState.None);
  item.id = `checkpoint:${c.session_id}:${c.id}`;
  item.description = [c.kind === 'manual' ? 'named' : 'auto', relativeTime(c.created_at), c.annotation].filter(Boolean).join(' · ');
  item.tooltip = new vscode.MarkdownString(
    `**${checkpointLabel(c)}** (${c.kind})\n\n${c.annotation ? `${c.annotation}\n\n` : ''}id \`${c.id}\` · message ${c.message_index}${c.tool_call_id ? ` · before tool call \`${c.tool_call_id}\`` : ''}\n\n${c.created_at}`,
  );
  item.iconPath = new vscode.ThemeIcon(c.kind === 'manual' ? 'bookmark' : 'history');
  const active = n.session?.status !== 'ended';
  item.contextValue = `checkpoint.${c.kind}${active ? '.active' : ''}`;
  return item;
}

export class CheckpointsTree extends Disposable implements vscode.TreeDataProvider<CheckpointTreeNode> {
  private readonly changed = this._register(new vscode.EventEmitter<CheckpointTreeNode | undefined | void>());
  readonly onDidChangeTreeData = this.changed.event;
  private roots: CheckpointTreeNode[] = [];
  readonly view: vscode.TreeView<CheckpointTreeNode>;

  constructor(private readonly ctx: AppContext, viewId: string) {
    super();
    this.view = this._register(vscode.window.createTreeView(viewId, { treeDataProvider: this }));
    this._register(
      ctx.model.onChange((c) => {
        if (c.checkpoints || c.sessions) {
          this.rebuild();
        }
      }),
    );
    this._register(ctx.connection.onState(() => this.rebuild()));
    this.rebuild();
  }

  rebuild(): void {
    const ok = this.ctx.connection.state === 'connected' && this.ctx.model.checkpointsSupported;
    void vscode.commands.executeCommand('setContext', ContextKeys.checkpointsSupported, this.ctx.model.checkpointsSupported);
    this.roots = ok ? buildCheckpointTree(this.ctx.model) : [];
    this.changed.fire();
  }

  getTreeItem(n: CheckpointTreeNode): vscode.TreeItem {
    return checkpointItem(n);
  }

  getChildren(n?: CheckpointTreeNode): CheckpointTreeNode[] {
    if (!n) {
      return this.roots;
    }
    return n.kind === 'cpSession' ? n.checkpoints : [];
  }
}

// ---- actions ----

async function pickSession(ctx: AppContext, arg: unknown): Promise<Session | undefined> {
  if (isNode(arg) && arg.kind === 'cpSession') {
    return arg.session;
  }
  const active = ctx.model.sessions.filter((s) => s.status === 'active');
  if (active.length === 1) {
    return active[0];
  }
  if (active.length === 0) {
    void vscode.window.showInformationMessage('prsm: no active session to checkpoint.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    active.map((s) => ({ label: s.name || s.id, description: s.id, session: s })),
    { placeHolder: 'Which session?' },
  );
  return pick?.session;
}

async function pickCheckpoint(ctx: AppContext, arg: unknown, placeHolder: string): Promise<CheckpointNode | undefined> {
  if (isNode(arg) && arg.kind === 'checkpoint') {
    return arg;
  }
  const items = ctx.model.sessions.flatMap((s) =>
    [...ctx.model.checkpoints(s.id)]
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
      .map((c) => ({
        label: checkpointLabel(c),
        description: `${s.name || s.id} · ${c.kind} · ${relativeTime(c.created_at)}`,
        detail: c.annotation || undefined,
        node: { kind: 'checkpoint', checkpoint: c, session: s } as CheckpointNode,
      })),
  );
  if (!items.length) {
    void vscode.window.showInformationMessage('prsm: no checkpoints yet.');
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true, matchOnDetail: true }))?.node;
}

function isNode(x: unknown): x is CheckpointTreeNode {
  return typeof x === 'object' && x !== null && 'kind' in x && ((x as CheckpointTreeNode).kind === 'checkpoint' || (x as CheckpointTreeNode).kind === 'cpSession');
}

async function reload(ctx: AppContext, sessionId: string): Promise<void> {
  const list = await ctx.call('list checkpoints', (c) => c.listCheckpoints(sessionId));
  if (list) {
    ctx.model.setCheckpoints(sessionId, list);
  }
}

/**
 * Reads a session's records again after a rewind: it changes the status of
 * many at once (rewound, or back to what they were), and the view must not
 * wait for one event per record.
 */
async function reloadRecords(ctx: AppContext, sessionId: string): Promise<void> {
  const list = await ctx.call('list changes', (c) => c.listChanges(sessionId));
  if (list) {
    ctx.model.upsertRecords(list);
  }
}

export async function createCheckpoint(ctx: AppContext, arg?: unknown): Promise<void> {
  const s = await pickSession(ctx, arg);
  if (!s) {
    return;
  }
  const name = await vscode.window.showInputBox({
    title: `New checkpoint of ${s.name || s.id}`,
    prompt: 'Name of the checkpoint',
    placeHolder: 'before-refactor',
    validateInput: (v) => (v.trim() ? undefined : 'Give the checkpoint a name'),
  });
  if (name === undefined) {
    return;
  }
  const annotation = await vscode.window.showInputBox({
    title: `Checkpoint "${name.trim()}"`,
    prompt: 'Annotation (optional): what state is this?',
  });
  if (annotation === undefined) {
    return;
  }
  const cp = await ctx.call('create checkpoint', (c) => c.createCheckpoint(s.id, { name: name.trim(), annotation: annotation.trim() }));
  if (cp) {
    await reload(ctx, s.id);
    void vscode.window.showInformationMessage(`prsm: checkpoint "${checkpointLabel(cp)}" created.`);
  }
}

export async function annotateCheckpoint(ctx: AppContext, arg?: unknown): Promise<void> {
  const n = await pickCheckpoint(ctx, arg, 'Annotate which checkpoint?');
  if (!n) {
    return;
  }
  const c = n.checkpoint;
  const annotation = await vscode.window.showInputBox({
    title: `Annotate "${checkpointLabel(c)}"`,
    value: c.annotation,
    prompt: 'Annotation of the checkpoint',
  });
  if (annotation === undefined) {
    return;
  }
  if (await ctx.call('annotate checkpoint', (cl) => cl.annotateCheckpoint(c.session_id, c.id, annotation.trim()))) {
    await reload(ctx, c.session_id);
  }
}

export async function deleteCheckpoint(ctx: AppContext, arg?: unknown): Promise<void> {
  const n = await pickCheckpoint(ctx, arg, 'Delete which checkpoint?');
  if (!n) {
    return;
  }
  const c = n.checkpoint;
  const ok = await vscode.window.showWarningMessage(`Delete checkpoint "${checkpointLabel(c)}"?`, { modal: true }, 'Delete');
  if (ok !== 'Delete') {
    return;
  }
  if ((await ctx.call('delete checkpoint', (cl) => cl.deleteCheckpoint(c.session_id, c.id).then(() => true))) !== undefined) {
    await reload(ctx, c.session_id);
  }
}

const OP_ICON: Record<OperationType, string> = { restore: '$(discard)', delete: '$(trash)', create: '$(new-file)' };

const STATUS_WORD: Record<RecordStatus, string> = {
  pending: 'pending',
  accepted: 'accepted',
  rejected: 'rejected',
  partial: 'partly accepted',
  rewound: 'rewound',
};

/**
 * A decision a rewind changes, in words: "rejected → pending again",
 * "accepted → rewound (made after the checkpoint)", "rewound → accepted
 * (comes back)".
 */
export function decisionWords(d: Pick<PlanDecision, 'from' | 'to'>): string {
  const from = STATUS_WORD[d.from] ?? d.from;
  const to = STATUS_WORD[d.to] ?? d.to;
  if (d.to === 'rewound') {
    return `${from} → rewound (made after the checkpoint)`;
  }
  if (d.from === 'rewound') {
    return `rewound → ${to} (comes back)`;
  }
  return `${from} → ${to} again`;
}

function decisionTool(d: PlanDecision): string {
  return toolLabel({ tool_name: d.tool_name, tool_call_id: d.record_id });
}

/** One decision as a line of the confirmation: "a.txt (Edit): accepted → pending again". */
export function decisionLine(d: PlanDecision): string {
  return `${d.rel_path} (${decisionTool(d)}): ${decisionWords(d)}`;
}

/**
 * The quick-pick items of a plan: what it does in plain sentences first,
 * then the decisions it changes, then one item per file operation, the
 * conflicts and the warnings.
 */
export function planItems(plan: Plan): vscode.QuickPickItem[] {
  const items: vscode.QuickPickItem[] = [
    ...(plan.summary ?? []).map((s) => ({ label: `$(comment) ${s}` })),
    ...(plan.decisions ?? []).map((d) => ({ label: `$(history) ${d.rel_path}`, description: `${decisionTool(d)}: ${decisionWords(d)}` })),
  ];
  for (const op of plan.operations) {
    items.push({
      label: `${OP_ICON[op.type] ?? ''} ${op.path}`.trim(), // a newer server's type has no icon
      description: op.type,
      detail: op.record_ids.length ? `undoes ${op.record_ids.join(', ')}` : undefined,
    });
  }
  for (const c of plan.conflicts) {
    items.push({ label: `$(warning) ${c.path}`, description: 'conflict: left as it is', detail: c.reason });
  }
  for (const w of plan.warnings) {
    items.push({ label: `$(info) ${w}`, description: 'warning' });
  }
  return items;
}

/** How many files a plan changes. */
export function affectedCount(plan: Plan): number {
  return plan.affected_files.length;
}

export async function rewindToCheckpoint(ctx: AppContext, arg?: unknown): Promise<Plan | undefined> {
  const n = await pickCheckpoint(ctx, arg, 'Rewind to which checkpoint?');
  if (!n) {
    return undefined;
  }
  const c = n.checkpoint;
  const label = checkpointLabel(c);
  const plan = await ctx.call('preview the rewind', (cl) => cl.rewindPreview(c.session_id, c.id));
  if (!plan) {
    return undefined;
  }
  const files = affectedCount(plan);
  if (files === 0 && plan.operations.length === 0) {
    void vscode.window.showInformationMessage(`prsm: nothing to rewind: the session is at "${label}" already.`);
    return undefined;
  }
  const decisions = plan.decisions ?? [];
  const picked = await vscode.window.showQuickPick(planItems(plan), {
    title: `Rewind to "${label}" changes ${plural(files, 'file')}${decisions.length ? ` and ${plural(decisions.length, 'decision')}` : ''}`,
    placeHolder: 'This is what the rewind does. Pick any to continue, Escape to cancel.',
    matchOnDescription: true,
  });
  if (!picked) {
    return undefined;
  }
  // Several files, or a decision of the user's undone (an accept or a
  // reject, not just later changes set aside): worth a second, modal question.
  const undoes = decisions.some((d) => d.from !== 'pending' && d.from !== 'rewound');
  if (files > 1 || undoes) {
    const detail = [
      ...(plan.summary ?? []),
      ...decisions.map(decisionLine),
      `${plural(files, 'file')} ${files === 1 ? 'goes' : 'go'} back to "${label}"; later changes of the session are set aside as rewound.`,
      plan.conflicts.length
        ? `${plural(plan.conflicts.length, 'file')} with your edits in the way ${plan.conflicts.length === 1 ? 'stays as it is' : 'stay as they are'}.`
        : '',
      ...plan.warnings,
      'A safety checkpoint is taken first, so the rewind can be undone.',
    ]
      .filter(Boolean)
      .join('\n');
    const ok = await vscode.window.showWarningMessage(`Rewind ${n.session?.name ?? c.session_id} to "${label}"?`, { modal: true, detail }, 'Rewind');
    if (ok !== 'Rewind') {
      return undefined;
    }
  }
  const done = await ctx.call('rewind', (cl) => cl.rewind(c.session_id, c.id));
  if (!done) {
    return undefined;
  }
  await reload(ctx, c.session_id);
  await reloadRecords(ctx, c.session_id);
  const safety = done.safety_checkpoint_id;
  void vscode.window
    .showInformationMessage(`prsm: rewound to "${label}" (${plural(affectedCount(done), 'file')}).`, ...(safety ? ['Undo'] : []))
    .then(async (choice) => {
      if (choice === 'Undo' && safety) {
        await ctx.call('undo the rewind', (cl) => cl.rewind(c.session_id, safety));
        await reload(ctx, c.session_id);
        await reloadRecords(ctx, c.session_id);
      }
    });
  return done;
}
