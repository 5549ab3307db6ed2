// A small stand-in for the `vscode` module (vitest aliases `vscode` to this
// file). It implements only what the extension's logic touches, records
// what was called, and lets a test script the user's answers.

/* eslint-disable @typescript-eslint/no-explicit-any */

type Listener<T> = (e: T) => unknown;

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  event = (l: Listener<T>) => {
    this.listeners.add(l);
    return { dispose: () => this.listeners.delete(l) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) {
      l(e);
    }
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class Disposable {
  constructor(private readonly fn: () => void) {}
  dispose(): void {
    this.fn();
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(sl: number, sc: number, el: number, ec: number) {
    this.start = new Position(sl, sc);
    this.end = new Position(el, ec);
  }
}

export class Selection extends Range {
  get active(): Position {
    return this.end;
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class ThemeIcon {
  constructor(
    readonly id: string,
    readonly color?: ThemeColor,
  ) {}
}

export class MarkdownString {
  value = '';
  constructor(v = '') {
    this.value = v;
  }
  appendMarkdown(s: string): this {
    this.value += s;
    return this;
  }
  appendCodeblock(s: string, lang = ''): this {
    this.value += `\n\`\`\`${lang}\n${s}\n\`\`\`\n`;
    return this;
  }
  appendText(s: string): this {
    this.value += s;
    return this;
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
    readonly query: string,
  ) {}
  static file(p: string): Uri {
    return new Uri('file', p, '');
  }
  static from(c: { scheme: string; path?: string; query?: string }): Uri {
    return new Uri(c.scheme, c.path ?? '', c.query ?? '');
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}://${this.path}${this.query ? `?${this.query}` : ''}`;
  }
}

export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}

export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: string | MarkdownString;
  iconPath?: ThemeIcon;
  contextValue?: string;
  resourceUri?: Uri;
  command?: { title: string; command: string; arguments?: unknown[] };
  constructor(
    readonly label: string,
    readonly collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None,
  ) {}
}

export class CodeLens {
  constructor(
    readonly range: Range,
    readonly command?: { title: string; command: string; tooltip?: string; arguments?: unknown[] },
  ) {}
}

export class WorkspaceEdit {
  readonly ops: Array<{ op: string; uri: Uri; text?: string }> = [];
  replace(uri: Uri, _r: Range, text: string): void {
    this.ops.push({ op: 'replace', uri, text });
  }
  deleteFile(uri: Uri): void {
    this.ops.push({ op: 'delete', uri });
  }
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum OverviewRulerLane {
  Left = 1,
  Center = 2,
  Right = 4,
  Full = 7,
}
export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

/** A text document over a string. */
export class FakeDocument {
  isDirty = false;
  readonly uri: Uri;
  constructor(
    fsPath: string,
    private text: string,
  ) {
    this.uri = Uri.file(fsPath);
  }
  getText(): string {
    return this.text;
  }
  setText(t: string): void {
    this.text = t;
  }
  get lineCount(): number {
    // As VS Code counts: a final newline opens one more (empty) line.
    return this.text.split('\n').length;
  }
  async save(): Promise<boolean> {
    this.isDirty = false;
    return true;
  }
}

// ---- recorded calls and scripted answers ----

export const recorded = {
  messages: [] as Array<{ kind: string; text: string; items: unknown[] }>,
  commands: [] as Array<{ id: string; args: unknown[] }>,
  context: new Map<string, unknown>(),
  quickPicks: [] as Array<{ items: any[]; options: any }>,
  inputBoxes: [] as any[],
};

/** Answers the next prompts: a function gets the items or options and returns the choice. */
export const answers = {
  message: [] as Array<string | undefined>,
  quickPick: [] as Array<(items: any[]) => any>,
  inputBox: [] as Array<string | undefined>,
};

export function resetStub(): void {
  recorded.messages.length = 0;
  recorded.commands.length = 0;
  recorded.context.clear();
  recorded.quickPicks.length = 0;
  recorded.inputBoxes.length = 0;
  answers.message.length = 0;
  answers.quickPick.length = 0;
  answers.inputBox.length = 0;
  config.clear();
  window.visibleTextEditors = [];
  window.activeTextEditor = undefined;
  workspace.textDocuments = [];
  env.clipboard.text = '';
  workspace.workspaceFolders = undefined;
}

const config = new Map<string, unknown>();
export function setConfig(key: string, value: unknown): void {
  config.set(key, value);
}

function message(kind: string) {
  return async (text: string, ...rest: unknown[]) => {
    const items = rest.filter((x) => typeof x === 'string');
    recorded.messages.push({ kind, text, items: rest });
    return items.length ? answers.message.shift() : undefined;
  };
}

const noopEvent = () => ({ dispose() {} });

export const window = {
  visibleTextEditors: [] as any[],
  activeTextEditor: undefined as any,
  showInformationMessage: message('info'),
  showWarningMessage: message('warning'),
  showErrorMessage: message('error'),
  async showQuickPick(items: any[], options?: any) {
    recorded.quickPicks.push({ items, options });
    const f = answers.quickPick.shift();
    return f ? f(items) : undefined;
  },
  async showInputBox(options?: any) {
    recorded.inputBoxes.push(options);
    return answers.inputBox.shift();
  },
  createOutputChannel(name: string) {
    const lines: string[] = [];
    const log = (l: string) => (m: string) => lines.push(`[${l}] ${m}`);
    return { name, lines, info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug'), trace: log('trace'), appendLine: (m: string) => lines.push(m), show() {}, dispose() {} };
  },
  createTreeView(_id: string, opts: any) {
    return { badge: undefined as any, provider: opts.treeDataProvider, dispose() {} };
  },
  createStatusBarItem() {
    return { text: '', tooltip: '', name: '', command: '', backgroundColor: undefined, show() {}, hide() {}, dispose() {} };
  },
  createTextEditorDecorationType(opts: any) {
    return { opts, dispose() {} };
  },
  async withProgress<T>(_o: unknown, fn: () => Promise<T>) {
    return fn();
  },
  async showTextDocument(_doc?: unknown, _opts?: unknown): Promise<unknown> {
    return undefined;
  },
  onDidChangeVisibleTextEditors: noopEvent,
  onDidChangeActiveTextEditor: noopEvent,
};

export const workspace = {
  workspaceFolders: undefined as any,
  textDocuments: [] as any[],
  getConfiguration(section: string) {
    return {
      get<T>(key: string, def: T): T {
        const k = `${section}.${key}`;
        return config.has(k) ? (config.get(k) as T) : def;
      },
    };
  },
  onDidChangeConfiguration: noopEvent,
  onDidChangeTextDocument: noopEvent,
  onDidChangeWorkspaceFolders: noopEvent,
  async openTextDocument(uri: Uri) {
    return workspace.textDocuments.find((d) => d.uri.fsPath === uri.fsPath);
  },
  async applyEdit(_e: WorkspaceEdit) {
    return true;
  },
  registerTextDocumentContentProvider: () => ({ dispose() {} }),
};

export const env = {
  clipboard: {
    text: '',
    async writeText(t: string) {
      env.clipboard.text = t;
    },
    async readText() {
      return env.clipboard.text;
    },
  },
};

export const commands = {
  async executeCommand(id: string, ...args: unknown[]) {
    recorded.commands.push({ id, args });
    if (id === 'setContext') {
      recorded.context.set(args[0] as string, args[1]);
    }
    return undefined;
  },
  registerCommand: () => ({ dispose() {} }),
};

export const languages = {
  registerCodeLensProvider: () => ({ dispose() {} }),
};
