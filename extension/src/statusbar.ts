// The status bar item: the number of pending changes; a click opens the view.

import * as vscode from 'vscode';

import type { AppContext } from './context';
import { Disposable } from './lifecycle';
import { Commands, type ConnectionState } from './settings';

/** The text and tooltip of the item for a state and a pending count (tested). */
export function statusText(state: ConnectionState, pending: number): { text: string; tooltip: string } {
  switch (state) {
    case 'connected':
      return {
        text: `$(git-compare) prsm: ${pending} pending`,
        tooltip: pending ? `${pending} agent change${pending === 1 ? '' : 's'} to review. Click to open the prsm view.` : 'No agent changes to review.',
      };
    case 'connecting':
      return { text: '$(sync~spin) prsm', tooltip: 'Connecting to the prsm server…' };
    case 'disconnected':
      return { text: '$(circle-slash) prsm: not running', tooltip: 'prsm is not running in this workspace. Click to open the prsm view and start it.' };
    case 'noWorkspace':
      return { text: '$(circle-slash) prsm', tooltip: 'Open a folder inside a git repository to use prsm.' };
  }
}

export class StatusBar extends Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor(private readonly ctx: AppContext) {
    super();
    this.item = this._register(vscode.window.createStatusBarItem('prsm.pending', vscode.StatusBarAlignment.Left, 50));
    this.item.name = 'prsm';
    this.item.command = Commands.showView;
    this._register(ctx.model.onChange(() => this.update()));
    this._register(ctx.connection.onState(() => this.update()));
    this.update();
    this.item.show();
  }

  update(): void {
    const pending = this.ctx.model.pendingCount;
    const s = statusText(this.ctx.connection.state, pending);
    this.item.text = s.text;
    this.item.tooltip = s.tooltip;
    this.item.backgroundColor = pending && this.ctx.connection.state === 'connected' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }
}
