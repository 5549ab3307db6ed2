// Setting keys and other fixed names, kept in one place so package.json and
// the code cannot drift apart silently (test/manifest.test.ts checks both).

/** The configuration section: every setting below is prsm.<key>. */
export const SECTION = 'prsm';

export const SettingKeys = {
  /** PRSM_HOME override; default: the PRSM_HOME environment variable, then ~/.prsm. */
  home: 'home',
  /** Path of a server.json to use instead of searching PRSM_HOME/projects. */
  serverInfoFile: 'serverInfoFile',
  /** The prsm binary used by "Start prsm"; default: prsm on PATH. */
  binaryPath: 'binaryPath',
  /** Show the Accept | Reject | Diff CodeLens. */
  codeLensEnabled: 'codeLens.enabled',
  /** Files with more lines than this are not decorated line by line. */
  decorationsMaxLines: 'decorations.maxLines',
  /** Reject (of a change or a hunk) asks for a reason to tell the agent. */
  rejectAsksReason: 'reject.askReason',
  /** Line blame: the hover and the cursor line's annotation of who wrote each line. */
  blameEnabled: 'blame.enabled',
} as const;

export type SettingKey = (typeof SettingKeys)[keyof typeof SettingKeys];

export const Defaults = {
  codeLensEnabled: true,
  decorationsMaxLines: 20000,
  rejectAsksReason: true,
  blameEnabled: true,
} as const;

/** Context keys used in package.json "when" clauses. */
export const ContextKeys = {
  state: 'prsm.state',
  pendingCount: 'prsm.pendingCount',
  checkpointsSupported: 'prsm.checkpointsSupported',
  activeFilePending: 'prsm.activeFilePending',
} as const;

/** Values of the prsm.state context key. */
export type ConnectionState = 'noWorkspace' | 'disconnected' | 'connecting' | 'connected';

export const ViewIds = {
  container: 'prsm',
  changes: 'prsm.changes',
  checkpoints: 'prsm.checkpoints',
} as const;

/** URI scheme of the diff content provider. */
export const CONTENT_SCHEME = 'prsm-content';

export const Commands = {
  acceptChange: 'prsm.acceptChange',
  rejectChange: 'prsm.rejectChange',
  acceptHunk: 'prsm.acceptHunk',
  rejectHunk: 'prsm.rejectHunk',
  showDiff: 'prsm.showDiff',
  keepMine: 'prsm.keepMine',
  takeAgents: 'prsm.takeAgents',
  mergeInEditor: 'prsm.mergeInEditor',
  resolveConflicts: 'prsm.resolveConflicts',
  copyId: 'prsm.copyId',
  acceptFile: 'prsm.acceptFile',
  rejectFile: 'prsm.rejectFile',
  acceptSession: 'prsm.acceptSession',
  rejectSession: 'prsm.rejectSession',
  acceptAll: 'prsm.acceptAll',
  rejectAll: 'prsm.rejectAll',
  openFile: 'prsm.openFile',
  refresh: 'prsm.refresh',
  startServer: 'prsm.startServer',
  showView: 'prsm.showView',
  showLog: 'prsm.showLog',
  createCheckpoint: 'prsm.createCheckpoint',
  annotateCheckpoint: 'prsm.annotateCheckpoint',
  rewindToCheckpoint: 'prsm.rewindToCheckpoint',
  deleteCheckpoint: 'prsm.deleteCheckpoint',
  refreshCheckpoints: 'prsm.refreshCheckpoints',
  commentOnChange: 'prsm.commentOnChange',
  toggleLineBlame: 'prsm.toggleLineBlame',
} as const;

export type CommandId = (typeof Commands)[keyof typeof Commands];
