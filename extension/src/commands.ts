// Accept and reject at every level (change, file, session, everything),
// conflict resolution, diff and open. Commands take what invoked them: the
// CodeLens passes [session_id, record id], the tree passes its node, and the
// palette passes nothing (then the change at the cursor, the active file or
// a quick pick is meant).

import * as vscode from 'vscode';

import type { AcceptRequest, FileChangeRecord, Records, RejectRequest, ResolveHow } from './api.gen';
import { PrsmApiError, type PrsmClient } from './client';
import { placementsFor } from './codelens';
import { recordLabel, setting, type AppContext } from './context';
import { showRecordDiff } from './diff';
import { changeSummary, mergingInEditor } from './labels';
import { log } from './log';
import type { ChangeTreeNode, FileNode, SessionNode } from './tree';
import { Defaults, SettingKeys } from './settings';
import { plural } from './words';

/** Resolves a command's arguments to the record they name (lens args or a tree node). */
export function recordFromArgs(ctx: Pick<AppContext, 'model'>, args: readonly unknown[]): FileChangeRecord | undefined {
  const [a, b] = args;
  if (typeof a === 'string' && typeof b === 'string') {
    return ctx.model.record(a, b);
  }
  if (isTreeNode(a) && a.kind === 'change') {
    return ctx.model.record(a.record.session_id, a.record.id) ?? a.record;
  }
  return undefined;
}

function isTreeNode(x: unknown): x is ChangeTreeNode {
  return typeof x === 'object' && x !== null && 'kind' in x && ['session', 'file', 'change'].includes((x as ChangeTreeNode).kind);
}

/** The pending records of the active editor's file, the one under the cursor first. */
function pendingAtCursor(ctx: AppContext): FileChangeRecord[] {
  const ed = vscode.window.activeTextEditor;
  const fp = ed && ctx.paths()?.toServer(ed.document.uri.fsPath);
  if (!ed || !fp) {
    return [];
  }
  const pending = ctx.model.recordsOfFile(fp).filter((r) => r.status === 'pending');
  const line = ed.selection.active.line + 1;
  const dist = (r: FileChangeRecord) => {
    const rs = [...r.added_ranges, ...r.removed_ranges];
    if (!rs.length) {
      return Number.MAX_SAFE_INTEGER;
    }
    return Math.min(...rs.map((x) => (line < x.startLine ? x.startLine - line : line > x.endLine ? line - x.endLine : 0)));
  };
  return pending.sort((x, y) => dist(x) - dist(y));
}

async function resolveRecord(
  ctx: AppContext,
  args: readonly unknown[],
  verb: string,
  only: (r: FileChangeRecord) => boolean = () => true,
  what = 'pending change',
): Promise<FileChangeRecord | undefined> {
  const r = recordFromArgs(ctx, args);
  if (r) {
    return r;
  }
  const candidates = pendingAtCursor(ctx).filter(only);
  if (candidates.length <= 1) {
    if (!candidates.length) {
      void vscode.window.showInformationMessage(`prsm: no ${what} here to ${verb}.`);
    }
    return candidates[0];
  }
  const pick = await vscode.window.showQuickPick(
    candidates.map((c) => ({ label: recordLabel(c), description: [changeSummary(c), c.status].filter(Boolean).join(' · '), detail: `id ${c.id}`, record: c })),
    { placeHolder: `${verb[0].toUpperCase()}${verb.slice(1)} which change?` },
  );
  return pick?.record;
}

/** Saves a dirty editor of the file first, so the server merges with what the user sees. */
async function settleDocument(ctx: AppContext, r: FileChangeRecord): Promise<boolean> {
  const local = ctx.paths()?.toLocal(r.file_path) ?? r.file_path;
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === local);
  if (!doc?.isDirty) {
    return true;
  }
  const choice = await vscode.window.showWarningMessage(
    `${r.rel_path} has unsaved edits. prsm works on the file on disk: save them first?`,
    { modal: true },
    'Save and Continue',
  );
  if (choice !== 'Save and Continue') {
    return false;
  }
  return doc.save();
}

/** What a bulk decision covered: a session, a file of it, or (neither) every session. */
export interface BulkScope {
  sessionId?: string;
  relPath?: string;
}

/**
 * The warning after a bulk decision that left changes pending (job.left):
 * how many, the files in conflict among them, and how to resolve each
 * (tested).
 */
export function leftMessage(left: number, conflicts: readonly FileChangeRecord[]): string {
  const files = [...new Set(conflicts.map((r) => r.rel_path))];
  const what = files.length
    ? `${files.join(', ')} ${files.length === 1 ? 'is' : 'are'} in conflict with your edits${left > conflicts.length ? `, and the other changes of ${files.length === 1 ? 'that file' : 'those files'} wait with ${files.length === 1 ? 'it' : 'them'}` : ''}`
    : 'in conflict with your edits, or of a file that is';
  return (
    `prsm: ${plural(left, 'change')} left pending: ${what}. A conflict is resolved, never accepted in bulk: ` +
    "Conflict: Keep My Version, Take Agent's Version, or Merge in Editor."
  );
}

/** The label of the warning's button that leads to resolving the conflicts. */
export const RESOLVE_CONFLICTS = 'Resolve Conflicts';

function done(ctx: AppContext, ans: Records | undefined, scope?: BulkScope): void {
  if (ans) {
    ctx.model.upsertRecords(ans.records);
    // A bulk decision leaves conflicts pending: each is resolved.
    const left = ans.job?.left ?? 0;
    if (left > 0) {
      const conflicts = ctx.model.conflicts.filter(
        (r) => (!scope?.sessionId || r.session_id === scope.sessionId) && (!scope?.relPath || r.rel_path === scope.relPath),
      );
      void vscode.window.showWarningMessage(leftMessage(left, conflicts), RESOLVE_CONFLICTS).then((choice) => {
        if (choice === RESOLVE_CONFLICTS) {
          void resolveConflicts(ctx);
        }
      });
    }
  }
}

/**
 * Leads to resolving the pending conflicts (the status bar's click, the
 * warning after a bulk decision): picks one when there are several, opens
 * its file, where its lenses are, and asks which way to resolve it.
 */
export async function resolveConflicts(ctx: AppContext): Promise<void> {
  const conflicts = ctx.model.conflicts;
  if (!conflicts.length) {
    void vscode.window.showInformationMessage('prsm: no change is in conflict.');
    return;
  }
  const r =
    conflicts.length === 1
      ? conflicts[0]
      : (
          await vscode.window.showQuickPick(
            conflicts.map((c) => ({
              label: recordLabel(c),
              description: [ctx.model.session(c.session_id)?.name, changeSummary(c)].filter(Boolean).join(' · '),
              detail: `id ${c.id}`,
              record: c,
            })),
            { placeHolder: `${plural(conflicts.length, 'change')} in conflict with your edits: resolve which?` },
          )
        )?.record;
  if (!r) {
    return;
  }
  const local = vscode.Uri.file(ctx.paths()?.toLocal(r.file_path) ?? r.file_path);
  try {
    await vscode.window.showTextDocument(local, { preview: false });
  } catch {
    // a file the user deleted: the question below still settles it
  }
  const how = await pickResolution(r);
  if (how) {
    await resolveConflict(ctx, r, how);
  }
}

export async function acceptChange(ctx: AppContext, ...args: unknown[]): Promise<void> {
  const r = await resolveRecord(ctx, args, 'accept');
  if (!r) {
    return;
  }
  if (isConflict(r)) {
    // A conflict is resolved, never merely accepted: ask which way.
    const how = await pickResolution(r);
    if (how) {
      await resolveConflict(ctx, r, how);
    }
    return;
  }
  log.info(`accept ${r.session_id}/${r.id}`);
  done(ctx, await acceptAsking(ctx, r, 'accept the change', (c, req) => c.accept(r.session_id, r.id, req)));
}

/**
 * Runs an accept of r. In review mode the server refuses one that would
 * apply earlier pending changes of the file first (needs_earlier) until
 * told to: then this asks, naming them, and runs it again with
 * with_earlier. Undefined when it failed or the user said no.
 */
async function acceptAsking(
  ctx: AppContext,
  r: FileChangeRecord,
  what: string,
  fn: (c: PrsmClient, req?: AcceptRequest) => Promise<Records>,
): Promise<Records | undefined> {
  let refused = false;
  const ans = await ctx.call(what, async (c) => {
    try {
      return await fn(c);
    } catch (err) {
      if (err instanceof PrsmApiError && err.code === 'needs_earlier') {
        refused = true;
        return undefined;
      }
      throw err;
    }
  });
  if (!refused) {
    return ans;
  }
  const preview = await ctx.call('list the earlier changes', (c) => c.accept(r.session_id, r.id, { dry_run: true }));
  const earlier = preview?.earlier ?? [];
  const names = earlier.map(recordLabel).join(', ');
  const ok = await vscode.window.showWarningMessage(
    `In review mode, accepting ${recordLabel(r)} first accepts and applies ${plural(earlier.length, 'earlier pending change')} of ${r.rel_path}${names ? `: ${names}` : ''}. Accept them too?`,
    { modal: true },
    'Accept All',
  );
  if (ok !== 'Accept All') {
    return undefined;
  }
  return ctx.call(what, (c) => fn(c, { with_earlier: true }));
}

/**
 * Asks why, after a Reject: the words go to the agent as the decision's
 * note. Empty (Enter) is a reject without a note; undefined (Escape)
 * cancels the reject. With prsm.reject.askReason off, no question.
 */
export async function askReason(what: string): Promise<RejectRequest | undefined> {
  if (!setting<boolean>(SettingKeys.rejectAsksReason, Defaults.rejectAsksReason)) {
    return {};
  }
  const say = await vscode.window.showInputBox({
    title: `Reject ${what}`,
    prompt: 'Why? The agent hears it at its next step. Enter with nothing: reject without a note; Escape: do not reject.',
    placeHolder: 'Reason for the agent (optional)',
    ignoreFocusOut: true,
  });
  if (say === undefined) {
    return undefined;
  }
  return say.trim() ? { say, author: 'extension' } : {};
}

export async function rejectChange(ctx: AppContext, ...args: unknown[]): Promise<void> {
  const r = await resolveRecord(ctx, args, 'reject');
  if (!r) {
    return;
  }
  const req = await askReason(`the change to ${r.rel_path}`);
  if (!req || !(await settleDocument(ctx, r))) {
    return;
  }
  log.info(`reject ${r.session_id}/${r.id}${req.say ? ' with a note' : ''}`);
  done(ctx, await ctx.call('reject the change', (c) => c.reject(r.session_id, r.id, req.say ? req : undefined)));
}

/**
 * Comments on lines of a change, without a decision: the lines the caller
 * names (a Comment… lens passes [session_id, record id, lines], its hunk's
 * lines or "" for the whole change), else the selected lines when the
 * change's file is the active editor, else the whole change.
 */
export async function commentOnChange(ctx: AppContext, ...args: unknown[]): Promise<void> {
  const r = await resolveRecord(ctx, args, 'comment on', () => true, 'change');
  if (!r) {
    return;
  }
  const lines = typeof args[2] === 'string' ? args[2] : selectedLines(ctx, r);
  const where = `${r.rel_path}${lines ? ` lines ${lines}` : ''}`;
  const text = await vscode.window.showInputBox({
    title: `Comment on ${where} for the agent`,
    prompt: 'The agent hears it at its next step; nothing is decided. Escape: no comment.',
    placeHolder: 'Comment for the agent',
    ignoreFocusOut: true,
  });
  if (!text?.trim()) {
    return;
  }
  log.info(`comment on ${r.session_id}/${r.id} ${lines}`);
  const ok = await ctx.call('comment on the change', (c) => c.comment(r.session_id, r.id, { lines, text, author: 'extension' }));
  if (ok) {
    // The views redraw, so that the change's tooltip reads its notes again and lists this one.
    ctx.model.upsertRecords([ctx.model.record(r.session_id, r.id) ?? r]);
    void vscode.window.showInformationMessage(`prsm: comment on ${where} queued for the agent.`);
  }
}

/** The active editor's selected lines ("12" or "12-18", from 1) when it shows r's file; "" otherwise. */
function selectedLines(ctx: AppContext, r: FileChangeRecord): string {
  const ed = vscode.window.activeTextEditor;
  const local = ctx.paths()?.toLocal(r.file_path) ?? r.file_path;
  if (!ed || ed.document.uri.fsPath !== local) {
    return '';
  }
  return lineRange(ed.selection.start.line, ed.selection.end.line);
}

/** A 0-based line span as the comments route takes it: "12" or "12-18", from 1. */
export function lineRange(start: number, end: number): string {
  const [a, b] = start <= end ? [start, end] : [end, start];
  return a === b ? String(a + 1) : `${a + 1}-${b + 1}`;
}

/** A hunk: the record and the hunk's index in it. */
export interface HunkTarget {
  record: FileChangeRecord;
  index: number;
}

/**
 * The pending hunk a hunk command means: the lens's [session_id, record id,
 * index], else the hunk under the cursor (the one whose lens line is nearest
 * above or at the cursor, among the active file's pending hunks).
 */
export function hunkFromArgs(ctx: Pick<AppContext, 'model'>, args: readonly unknown[]): HunkTarget | undefined {
  const [a, b, n] = args;
  if (typeof a === 'string' && typeof b === 'string' && typeof n === 'number') {
    const record = ctx.model.record(a, b);
    return record && { record, index: n };
  }
  return undefined;
}

/**
 * Picks the hunk at line (0-based) among placed pending hunks: the last one
 * whose lens line is at or above it, else the first below. Pure, for tests.
 */
export function hunkAtLine(hunks: ReadonlyArray<HunkTarget & { line: number }>, line: number): HunkTarget | undefined {
  const sorted = [...hunks].sort((x, y) => x.line - y.line);
  const above = sorted.filter((h) => h.line <= line);
  return above[above.length - 1] ?? sorted[0];
}

function hunkAtCursor(ctx: AppContext): HunkTarget | undefined {
  const ed = vscode.window.activeTextEditor;
  if (!ed) {
    return undefined;
  }
  const hunks = placementsFor(ctx, ed.document).flatMap((p) =>
    p.record.sync_state === 'conflict'
      ? []
      : p.hunks.filter((h) => h.status === 'pending').map((h) => ({ record: p.record, index: h.index, line: h.line })),
  );
  return hunkAtLine(hunks, ed.selection.active.line);
}

async function decideHunk(ctx: AppContext, args: readonly unknown[], accept: boolean): Promise<void> {
  const t = hunkFromArgs(ctx, args) ?? hunkAtCursor(ctx);
  const verb = accept ? 'accept' : 'reject';
  if (!t) {
    void vscode.window.showInformationMessage(`prsm: no pending hunk here to ${verb}.`);
    return;
  }
  const r = t.record;
  const note = accept ? {} : await askReason(`hunk ${t.index + 1} of ${r.rel_path}`);
  if (!note || (!accept && !(await settleDocument(ctx, r)))) {
    return;
  }
  log.info(`${verb} hunk ${t.index} of ${r.session_id}/${r.id}${note.say ? ' with a note' : ''}`);
  const ans = accept
    ? await acceptAsking(ctx, r, `${verb} the hunk`, (c, req) => c.decideHunk(r.session_id, r.id, t.index, accept, req))
    : await ctx.call(`${verb} the hunk`, (c) => c.decideHunk(r.session_id, r.id, t.index, accept, note.say ? note : undefined));
  done(ctx, ans);
  const cascaded = ans?.cascaded ?? [];
  if (cascaded.length) {
    const names = cascaded.map((c) => `${c.id} hunk ${c.index + 1}`).join(', ');
    void vscode.window.showInformationMessage(
      `prsm: rejecting hunk ${t.index + 1} of ${r.rel_path} also rejected ${names}: later changes built on its lines.`,
    );
  }
}

/** Accepts the hunk of the lens, or the pending hunk under the cursor. */
export function acceptHunk(ctx: AppContext, ...args: unknown[]): Promise<void> {
  return decideHunk(ctx, args, true);
}

/** Rejects the hunk of the lens, or the pending hunk under the cursor: its lines leave the file. */
export function rejectHunk(ctx: AppContext, ...args: unknown[]): Promise<void> {
  return decideHunk(ctx, args, false);
}

export async function showDiff(ctx: AppContext, ...args: unknown[]): Promise<void> {
  const r = recordFromArgs(ctx, args) ?? (await resolveRecord(ctx, args, 'show'));
  if (r) {
    await showRecordDiff(r);
  }
}

/** The three ways out of a conflict, in the order they are offered. */
export const RESOLUTIONS: ReadonlyArray<{ how: ResolveHow; label: string; detail: string }> = [
  { how: 'mine', label: 'Keep mine', detail: "Keep your file as it is and reject the agent's change." },
  { how: 'agent', label: "Take agent's", detail: "Replace your file with the agent's version." },
  { how: 'markers', label: 'Merge in editor', detail: 'Put both versions into the file between conflict markers; prsm accepts the change once you remove them.' },
];

/** What mine and markers do once the markers are in the file. */
const MERGING_DETAIL: Record<ResolveHow, string> = {
  mine: "Reject the agent's change; the conflict markers stay in your file for you to remove.",
  agent: '',
  markers: 'The markers are in the file already: remove them and save; prsm then accepts the change.',
};

/** Whether a record is a conflict: settled by resolve, never merely accepted. */
export function isConflict(r: FileChangeRecord): boolean {
  return r.status === 'pending' && r.sync_state === 'conflict';
}

/**
 * Resolves a conflict one of the three ways through the server's resolve
 * route. For 'markers' it then opens the file, where VS Code shows its own
 * merge CodeLens on the markers; the record turns accepted (a
 * file_change_status event) once the server sees the markers gone.
 */
export async function resolveConflict(ctx: AppContext, r: FileChangeRecord, how: ResolveHow): Promise<void> {
  // The server works on the file on disk: what the user sees must be there.
  if (how !== 'mine' && !(await settleDocument(ctx, r))) {
    return;
  }
  const what = RESOLUTIONS.find((x) => x.how === how)?.label.toLowerCase() ?? how;
  // Markers are in the file already: writing them again would nest them.
  const again = how === 'markers' && mergingInEditor(r);
  let ans: Records | undefined;
  if (!again) {
    log.info(`resolve ${r.session_id}/${r.id}: ${how}`);
    ans = await ctx.call(`resolve the conflict (${what})`, (c) => c.resolve(r.session_id, r.id, how));
    done(ctx, ans);
  }
  if ((!ans && !again) || how !== 'markers') {
    return;
  }
  const local = vscode.Uri.file(ctx.paths()?.toLocal(r.file_path) ?? r.file_path);
  await vscode.window.showTextDocument(local, { preview: false });
  void vscode.window.showInformationMessage(
    `prsm: ${r.rel_path} now holds both versions between conflict markers. Merge them and save; prsm accepts the change once the markers are gone.`,
  );
}

/** Asks which of the three ways out of a conflict is meant (Accept on a conflict). */
export async function pickResolution(r: FileChangeRecord): Promise<ResolveHow | undefined> {
  const merging = mergingInEditor(r);
  const pick = await vscode.window.showQuickPick(
    RESOLUTIONS.map((x) =>
      merging && x.how !== 'agent'
        ? { label: x.label, detail: MERGING_DETAIL[x.how], how: x.how }
        : { label: x.label, detail: x.detail, how: x.how },
    ),
    { placeHolder: `Your edits to ${r.rel_path} and the agent's change overlap: how do you want to resolve it?` },
  );
  return pick?.how;
}

async function resolveWith(ctx: AppContext, args: readonly unknown[], how: ResolveHow): Promise<void> {
  // From the palette: the conflicts of the active file only.
  const r = await resolveRecord(ctx, args, 'resolve', isConflict, 'conflict');
  if (r) {
    await resolveConflict(ctx, r, how);
  }
}

/** Conflict: keep the workspace file as it is, and reject the agent's change. */
export function keepMine(ctx: AppContext, ...args: unknown[]): Promise<void> {
  return resolveWith(ctx, args, 'mine');
}

/** Conflict: the workspace file becomes the agent's version, and the change is accepted. */
export function takeAgents(ctx: AppContext, ...args: unknown[]): Promise<void> {
  return resolveWith(ctx, args, 'agent');
}

/** Conflict: both versions go into the file between conflict markers, to merge in the editor. */
export function mergeInEditor(ctx: AppContext, ...args: unknown[]): Promise<void> {
  return resolveWith(ctx, args, 'markers');
}

/**
 * Copies a change's whole id, the one `prsm changes diff|accept|reject`
 * takes as it is (rows lead with the tool and the file, not the id).
 */
export async function copyId(ctx: AppContext, ...args: unknown[]): Promise<void> {
  const r = recordFromArgs(ctx, args) ?? (await resolveRecord(ctx, args, 'copy the id of'));
  if (!r) {
    return;
  }
  await vscode.env.clipboard.writeText(r.id);
  void vscode.window.showInformationMessage(`prsm: copied the id ${r.id} (${recordLabel(r)}).`);
}

/** The (session, rel_path) pairs a file command acts on. */
function fileTargets(ctx: AppContext, arg: unknown): Array<{ sessionId: string; relPath: string }> {
  if (isTreeNode(arg) && arg.kind === 'file') {
    const f = arg as FileNode;
    return [{ sessionId: f.sessionId, relPath: f.relPath }];
  }
  const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  const fp = uri && ctx.paths()?.toServer(uri.fsPath);
  if (!fp) {
    return [];
  }
  const pending = ctx.model.recordsOfFile(fp).filter((r) => r.status === 'pending');
  const seen = new Map<string, string>();
  for (const r of pending) {
    seen.set(r.session_id, r.rel_path);
  }
  return [...seen.entries()].map(([sessionId, relPath]) => ({ sessionId, relPath }));
}

export async function bulkFile(ctx: AppContext, accept: boolean, arg?: unknown): Promise<void> {
  const targets = fileTargets(ctx, arg);
  if (!targets.length) {
    void vscode.window.showInformationMessage('prsm: this file has no pending changes.');
    return;
  }
  for (const t of targets) {
    log.info(`${accept ? 'accept' : 'reject'} file ${t.relPath} of ${t.sessionId}`);
    done(
      ctx,
      await ctx.call(`${accept ? 'accept' : 'reject'} ${t.relPath}`, (c) => (accept ? c.acceptAll(t.sessionId, t.relPath) : c.rejectAll(t.sessionId, t.relPath))),
      t,
    );
  }
}

export async function bulkSession(ctx: AppContext, accept: boolean, arg?: unknown): Promise<void> {
  let sessionId: string | undefined;
  if (isTreeNode(arg) && arg.kind === 'session') {
    sessionId = (arg as SessionNode).session.id;
  } else {
    const withPending = ctx.model.sessions.filter((s) => ctx.model.recordsOfSession(s.id).some((r) => r.status === 'pending'));
    if (withPending.length === 1) {
      sessionId = withPending[0].id;
    } else if (withPending.length > 1) {
      sessionId = (
        await vscode.window.showQuickPick(
          withPending.map((s) => ({ label: s.name || s.id, description: s.id, id: s.id })),
          { placeHolder: `${accept ? 'Accept' : 'Reject'} every pending change of which session?` },
        )
      )?.id;
    } else {
      void vscode.window.showInformationMessage('prsm: no session has pending changes.');
    }
  }
  if (!sessionId) {
    return;
  }
  const n = ctx.model.recordsOfSession(sessionId).filter((r) => r.status === 'pending').length;
  if (!accept && n > 1) {
    const name = ctx.model.session(sessionId)?.name ?? sessionId;
    const ok = await vscode.window.showWarningMessage(`Reject all ${plural(n, 'pending change')} of ${name}?`, { modal: true }, 'Reject All');
    if (ok !== 'Reject All') {
      return;
    }
  }
  const id = sessionId;
  log.info(`${accept ? 'accept' : 'reject'} session ${id}`);
  done(ctx, await ctx.call(`${accept ? 'accept' : 'reject'} the session's changes`, (c) => (accept ? c.acceptAll(id) : c.rejectAll(id))), { sessionId: id });
}

export async function bulkEverything(ctx: AppContext, accept: boolean): Promise<void> {
  const n = ctx.model.pendingCount;
  if (!n) {
    void vscode.window.showInformationMessage('prsm: nothing is pending.');
    return;
  }
  if (!accept && n > 1) {
    const ok = await vscode.window.showWarningMessage(`Reject all ${plural(n, 'pending change')} of every session?`, { modal: true }, 'Reject All');
    if (ok !== 'Reject All') {
      return;
    }
  }
  log.info(`${accept ? 'accept' : 'reject'} everything`);
  done(ctx, await ctx.call(`${accept ? 'accept' : 'reject'} every change`, (c) => (accept ? c.acceptEverything() : c.rejectEverything())), {});
}

export async function openFile(ctx: AppContext, arg?: unknown): Promise<void> {
  if (!isTreeNode(arg) || arg.kind !== 'file') {
    return;
  }
  const f = arg as FileNode;
  const local = ctx.paths()?.toLocal(f.filePath) ?? f.filePath;
  try {
    await vscode.window.showTextDocument(vscode.Uri.file(local), { preview: true });
  } catch {
    // A deleted file: show its last change instead.
    const last = f.changes[f.changes.length - 1]?.record;
    if (last) {
      await showRecordDiff(last);
    }
  }
}
