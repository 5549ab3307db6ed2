// Entry point: wires the connection, the model and the views together.
// Every registration goes into context.subscriptions (through App).

import * as vscode from 'vscode';

import { LineBlame, toggleLineBlame } from './blame';
import * as checkpoints from './checkpoints';
import { CheckpointsTree } from './checkpoints';
import { PrsmCodeLensProvider } from './codelens';
import * as commands from './commands';
import { Connection } from './connection';
import { makeCall, setting, type AppContext } from './context';
import { Decorations } from './decorations';
import { ContentProvider } from './diff';
import { findServer, prsmHome } from './discovery';
import { Disposable } from './lifecycle';
import { createLog, log, showLog } from './log';
import { Model } from './model';
import { PathMap } from './paths';
import { startServer } from './serverctl';
import { Commands, CONTENT_SCHEME, ContextKeys, SettingKeys, ViewIds, type ConnectionState } from './settings';
import { StatusBar } from './statusbar';
import { ChangesTree } from './tree';

function folders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

class App extends Disposable implements AppContext {
  readonly model: Model;
  readonly connection: Connection;
  readonly call: AppContext['call'];
  private pathMap: PathMap | undefined;

  constructor() {
    super();
    this.model = new Model((m) => log.warn(m));
    this.connection = new Connection({
      discover: () =>
        findServer({
          home: prsmHome(setting<string>(SettingKeys.home, '')),
          infoFile: setting<string>(SettingKeys.serverInfoFile, '') || undefined,
          folders: folders(),
        }),
      log: (m) => log.info(m),
    });
    this._register(this.connection);
    this.call = makeCall(this.connection);

    this._register(this.connection.onState((s) => this.onState(s)));
    this._register(
      this.connection.onConnected((client) => {
        const ws = this.connection.info?.workspace;
        this.pathMap = ws ? new PathMap(ws, folders()) : undefined;
        this.model.refresh(client).catch((err) => {
          log.error(`load state: ${String(err)}`);
          this.connection.reportError(err);
        });
      }),
    );
    this._register(
      this.connection.onEvent((ev) => {
        log.debug(`event ${ev.type}`);
        this.model.apply(ev, this.connection.client);
      }),
    );
    this._register(
      this.model.onChange(() => {
        void vscode.commands.executeCommand('setContext', ContextKeys.pendingCount, this.model.pendingCount);
        this.updateActiveFile();
      }),
    );
    this._register(vscode.window.onDidChangeActiveTextEditor(() => this.updateActiveFile()));
    this._register(
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        this.pathMap = undefined;
        this.connection.reconnect();
      }),
    );
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if ([SettingKeys.home, SettingKeys.serverInfoFile].some((k) => e.affectsConfiguration(`prsm.${k}`))) {
          this.connection.reconnect();
        }
      }),
    );
  }

  paths(): PathMap | undefined {
    return this.pathMap;
  }

  private activePending = false;

  /** Sets prsm.activeFilePending, which shows the file actions in the editor title. */
  private updateActiveFile(): void {
    const ed = vscode.window.activeTextEditor;
    const fp = ed && ed.document.uri.scheme === 'file' ? this.pathMap?.toServer(ed.document.uri.fsPath) : undefined;
    const pending = !!fp && this.model.recordsOfFile(fp).some((r) => r.status === 'pending');
    if (pending !== this.activePending) {
      this.activePending = pending;
      void vscode.commands.executeCommand('setContext', ContextKeys.activeFilePending, pending);
    }
  }

  private onState(s: ConnectionState): void {
    // With no folder open there is nothing to start prsm for.
    const shown: ConnectionState = s === 'disconnected' && !folders().length ? 'noWorkspace' : s;
    void vscode.commands.executeCommand('setContext', ContextKeys.state, shown);
    if (s === 'disconnected' || s === 'noWorkspace') {
      this.model.clear();
    }
  }

  start(): void {
    const state: ConnectionState = folders().length ? 'connecting' : 'noWorkspace';
    void vscode.commands.executeCommand('setContext', ContextKeys.state, state);
    if (state === 'noWorkspace') {
      log.info('no folder is open: prsm waits for one');
    }
    this.connection.start();
  }

  async startServerCommand(): Promise<void> {
    const fs = folders();
    if (!fs.length) {
      void vscode.window.showInformationMessage('prsm: open a folder inside a git repository first.');
      return;
    }
    const binary = setting<string>(SettingKeys.binaryPath, '') || 'prsm';
    const home = setting<string>(SettingKeys.home, '') || undefined;
    const folder = fs[0];
    log.info(`starting: ${binary} serve --detach --workspace ${folder}`);
    const res = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'prsm: starting the server…' },
      () => startServer({ binary, folder, home: home ? prsmHome(home) : undefined }),
    );
    log.info(res.output);
    if (!res.ok) {
      const msg = res.notFound
        ? `prsm: "${binary}" was not found. Install prsm or set prsm.binaryPath.`
        : `prsm: the server did not start: ${res.output.split('\n').slice(-1)[0]}`;
      const choice = await vscode.window.showWarningMessage(msg, 'Open Log', 'Settings');
      if (choice === 'Open Log') {
        showLog();
      } else if (choice === 'Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', `prsm.${SettingKeys.binaryPath}`);
      }
      return;
    }
    this.connection.kick();
  }
}

export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(createLog());
  const app = new App();
  context.subscriptions.push(app);
  log.info(`prsm extension ${String(context.extension?.packageJSON?.version ?? '')} activated`);

  const sub = (d: vscode.Disposable) => context.subscriptions.push(d);
  const changes = new ChangesTree(app, ViewIds.changes);
  sub(changes);
  sub(new CheckpointsTree(app, ViewIds.checkpoints));
  sub(new StatusBar(app));
  sub(new Decorations(app));
  sub(new LineBlame(app));
  const lenses = new PrsmCodeLensProvider(app);
  sub(lenses);
  sub(vscode.languages.registerCodeLensProvider({ scheme: 'file' }, lenses));
  const content = new ContentProvider(app);
  sub(content);
  sub(vscode.workspace.registerTextDocumentContentProvider(CONTENT_SCHEME, content));

  const reg = (id: string, fn: (...args: unknown[]) => unknown) => sub(vscode.commands.registerCommand(id, fn));
  reg(Commands.acceptChange, (...a) => commands.acceptChange(app, ...a));
  reg(Commands.rejectChange, (...a) => commands.rejectChange(app, ...a));
  reg(Commands.commentOnChange, (...a) => commands.commentOnChange(app, ...a));
  reg(Commands.acceptHunk, (...a) => commands.acceptHunk(app, ...a));
  reg(Commands.rejectHunk, (...a) => commands.rejectHunk(app, ...a));
  reg(Commands.showDiff, (...a) => commands.showDiff(app, ...a));
  reg(Commands.keepMine, (...a) => commands.keepMine(app, ...a));
  reg(Commands.takeAgents, (...a) => commands.takeAgents(app, ...a));
  reg(Commands.mergeInEditor, (...a) => commands.mergeInEditor(app, ...a));
  reg(Commands.resolveConflicts, () => commands.resolveConflicts(app));
  reg(Commands.copyId, (...a) => commands.copyId(app, ...a));
  reg(Commands.acceptFile, (a) => commands.bulkFile(app, true, a));
  reg(Commands.rejectFile, (a) => commands.bulkFile(app, false, a));
  reg(Commands.acceptSession, (a) => commands.bulkSession(app, true, a));
  reg(Commands.rejectSession, (a) => commands.bulkSession(app, false, a));
  reg(Commands.acceptAll, () => commands.bulkEverything(app, true));
  reg(Commands.rejectAll, () => commands.bulkEverything(app, false));
  reg(Commands.openFile, (a) => commands.openFile(app, a));
  reg(Commands.refresh, () => {
    const c = app.connection.client;
    return c ? app.model.refresh(c) : app.connection.kick();
  });
  reg(Commands.refreshCheckpoints, () => {
    const c = app.connection.client;
    return c ? app.model.refresh(c) : app.connection.kick();
  });
  reg(Commands.startServer, () => app.startServerCommand());
  reg(Commands.showView, () => vscode.commands.executeCommand(`workbench.view.extension.${ViewIds.container}`));
  reg(Commands.showLog, () => showLog());
  reg(Commands.createCheckpoint, (a) => checkpoints.createCheckpoint(app, a));
  reg(Commands.annotateCheckpoint, (a) => checkpoints.annotateCheckpoint(app, a));
  reg(Commands.rewindToCheckpoint, (a) => checkpoints.rewindToCheckpoint(app, a));
  reg(Commands.deleteCheckpoint, (a) => checkpoints.deleteCheckpoint(app, a));
  reg(Commands.toggleLineBlame, () => toggleLineBlame());

  app.start();
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
