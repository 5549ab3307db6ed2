// The status bar item: the number of pending changes, and of those in
// conflict apart; a click opens the view, or with conflicts resolves them.
// Its tooltip also says, per active session, whose hooks reported and when,
// and warns when they do not fire in a session's worktree, or when the
// watcher is limited (GET /status: watch_limits), with the fix.

import * as vscode from 'vscode';

import type { HookHealth, WatchLimit } from './api.gen';
import type { AppContext } from './context';
import { Disposable } from './lifecycle';
import { Commands, type ConnectionState } from './settings';
import { plural } from './words';

/**
 * The text, tooltip and click of the item for a state, a pending count and
 * the files of the pending changes in conflict (among the pending, one entry
 * per conflicting change). Conflicts are named apart: a bulk accept leaves
 * them, and the click leads to resolving them (tested).
 */
export function statusText(
  state: ConnectionState,
  pending: number,
  conflicts: readonly string[] = [],
): { text: string; tooltip: string; command: string } {
  switch (state) {
    case 'connected': {
      if (!conflicts.length) {
        return {
          text: `$(git-compare) prsm: ${pending} pending`,
          tooltip: pending ? `${plural(pending, 'agent change')} to review. Click to open the prsm view.` : 'No agent changes to review.',
          command: Commands.showView,
        };
      }
      const files = [...new Set(conflicts)];
      const shown = files.length > 3 ? `${files.slice(0, 3).join(', ')} and ${files.length - 3} more` : files.join(', ');
      return {
        text: `$(git-compare) prsm: ${pending} pending · ${plural(conflicts.length, 'conflict')}`,
        tooltip:
          `${plural(pending, 'agent change')} to review, ${conflicts.length} in conflict with your edits: ${shown}. ` +
          "A conflict is resolved, never accepted in bulk. Click to resolve: Keep mine, Take agent's or Merge in editor.",
        command: Commands.resolveConflicts,
      };
    }
    case 'connecting':
      return { text: '$(sync~spin) prsm', tooltip: 'Connecting to the prsm server…', command: Commands.showView };
    case 'disconnected':
      return {
        text: '$(circle-slash) prsm: not running',
        tooltip: 'prsm is not running in this workspace. Click to open the prsm view and start it.',
        command: Commands.showView,
      };
    case 'noWorkspace':
      return { text: '$(circle-slash) prsm', tooltip: 'Open a folder inside a git repository to use prsm.', command: Commands.showView };
  }
}

function ago(iso: string, now: number): string {
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (s < 60) {
    return `${s}s ago`;
  }
  if (s < 3600) {
    return `${Math.floor(s / 60)}m ago`;
  }
  return `${Math.floor(s / 3600)}h ago`;
}

/**
 * The tooltip lines of the sessions' hook health and of the watcher's
 * limits, and whether any warns (tested).
 */
export function hookSummary(
  hooks: HookHealth[] | undefined,
  now: number,
  limits: readonly WatchLimit[] = [],
): { lines: string[]; warning: boolean } {
  const lines: string[] = [];
  const warnings: string[] = [];
  for (const h of hooks ?? []) {
    const name = h.name || h.session_id;
    lines.push(h.last_hook_at ? `${name}: ${h.agent || 'agent'} hooks, last event ${ago(h.last_hook_at, now)}` : `${name}: no hook reported yet`);
    if (h.warning) {
      warnings.push(`⚠ ${name}: ${h.warning}`);
    }
  }
  for (const l of limits) {
    warnings.push(`⚠ watcher limited: ${l.reason}${l.fix ? `; fix: ${l.fix}` : ''}`);
  }
  return { lines: [...lines, ...warnings], warning: warnings.length > 0 };
}

export class StatusBar extends Disposable {
  private hooks: HookHealth[] | undefined;
  private limits: WatchLimit[] | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  private readonly item: vscode.StatusBarItem;

  constructor(private readonly ctx: AppContext) {
    super();
    this.item = this._register(vscode.window.createStatusBarItem('prsm.pending', vscode.StatusBarAlignment.Left, 50));
    this.item.name = 'prsm';
    this._register(ctx.model.onChange(() => this.update(true)));
    this._register(ctx.connection.onState(() => this.update(true)));
    this._register({ dispose: () => clearTimeout(this.timer) });
    this.update(true);
    this.item.show();
  }

  /** Reads the hook health again, once the burst of changes settles. */
  private fetchHooks(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const client = this.ctx.connection.state === 'connected' ? this.ctx.connection.client : undefined;
      if (!client) {
        this.hooks = undefined;
        this.update();
        return;
      }
      client.status().then(
        (st) => {
          this.hooks = st.hooks;
          this.limits = st.watch_limits;
          this.update();
        },
        () => {}, // the connection reports a server gone
      );
    }, 300);
  }

  update(refetch = false): void {
    if (refetch) {
      this.fetchHooks();
    }
    const pending = this.ctx.model.pendingCount;
    const connected = this.ctx.connection.state === 'connected';
    const conflicts = this.ctx.model.conflicts.map((r) => r.rel_path);
    const s = statusText(this.ctx.connection.state, pending, conflicts);
    const hooks = connected ? hookSummary(this.hooks, Date.now(), this.limits) : { lines: [], warning: false };
    this.item.text = hooks.warning ? `${s.text} $(warning)` : s.text;
    this.item.tooltip = [s.tooltip, ...hooks.lines].join('\n');
    this.item.command = s.command;
    this.item.backgroundColor = (pending || hooks.warning) && connected ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }
}
