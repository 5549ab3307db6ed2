// The e2e harness: a private code-server with the packaged extension
// installed, and Debian's Chromium driven by playwright-core. Everything it
// starts runs in its own process group and is ended by that group.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

export const CODE_SERVER_BIN = process.env.CODE_SERVER_BIN ?? '';
export const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
export const VSIX = process.env.PRSM_VSIX ?? path.resolve(__dirname, '../../prsm.vsix');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Ends a process group: SIGTERM, then SIGKILL after 5 s. */
export async function killGroup(p: ChildProcess | undefined): Promise<void> {
  if (!p?.pid || p.exitCode !== null || p.signalCode !== null) {
    return;
  }
  const gone = new Promise<void>((r) => p.once('exit', () => r()));
  try {
    process.kill(-p.pid, 'SIGTERM');
  } catch {
    return;
  }
  const t = setTimeout(() => {
    try {
      process.kill(-p.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }, 5000);
  await gone;
  clearTimeout(t);
}

export interface WorkbenchOptions {
  /** Scratch root: code-server's and Chromium's private HOME, XDG dirs and TMPDIR live here. */
  root: string;
  /** Environment extras for code-server (and so the extension host), e.g. PRSM_HOME. */
  env: NodeJS.ProcessEnv;
  settings: Record<string, unknown>;
  artifacts: string;
}

export class Workbench {
  codeServer: ChildProcess | undefined;
  browser: Browser | undefined;
  page!: Page;
  port = 0;
  private readonly ud: string;
  private readonly ext: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly log: fs.WriteStream;

  constructor(private readonly o: WorkbenchOptions) {
    this.ud = path.join(o.root, 'cs-user-data');
    this.ext = path.join(o.root, 'cs-extensions');
    const home = path.join(o.root, 'cs-home');
    const dirs = {
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
      XDG_DATA_HOME: path.join(home, '.local', 'share'),
      XDG_CACHE_HOME: path.join(home, '.cache'),
      XDG_RUNTIME_DIR: path.join(o.root, 'runtime'),
      TMPDIR: path.join(o.root, 'tmp'),
    };
    for (const d of [this.ud, this.ext, ...Object.values(dirs)]) {
      fs.mkdirSync(d, { recursive: true });
    }
    fs.chmodSync(dirs.XDG_RUNTIME_DIR, 0o700);
    this.env = { ...process.env, ...o.env, ...dirs };
    delete this.env.VSCODE_IPC_HOOK_CLI;
    fs.mkdirSync(path.join(this.ud, 'User'), { recursive: true });
    fs.writeFileSync(
      path.join(this.ud, 'User', 'settings.json'),
      JSON.stringify(
        {
          'workbench.startupEditor': 'none',
          'security.workspace.trust.enabled': false,
          'extensions.autoUpdate': false,
          'extensions.autoCheckUpdates': false,
          'telemetry.telemetryLevel': 'off',
          'workbench.tips.enabled': false,
          'git.enabled': false,
          'editor.minimap.enabled': false,
          'files.autoSave': 'off',
          'chat.commandCenter.enabled': false,
          ...o.settings,
        },
        null,
        2,
      ),
    );
    fs.mkdirSync(o.artifacts, { recursive: true });
    this.log = fs.createWriteStream(path.join(o.artifacts, 'code-server.log'));
  }

  installExtension(vsix: string): void {
    const out = execFileSync(CODE_SERVER_BIN, ['--user-data-dir', this.ud, '--extensions-dir', this.ext, '--install-extension', vsix], {
      env: this.env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    this.log.write(out);
    if (!/successfully installed/i.test(out)) {
      throw new Error(`installing ${vsix} failed:\n${out}`);
    }
  }

  async start(): Promise<void> {
    this.port = await freePort();
    this.codeServer = spawn(
      CODE_SERVER_BIN,
      [
        '--bind-addr', `127.0.0.1:${this.port}`, '--auth', 'none',
        '--user-data-dir', this.ud, '--extensions-dir', this.ext,
        '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override',
      ],
      { env: this.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.codeServer.stdout?.pipe(this.log, { end: false });
    this.codeServer.stderr?.pipe(this.log, { end: false });
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/healthz`);
        if (res.ok) {
          break;
        }
      } catch {
        // not yet
      }
      if (Date.now() > deadline || this.codeServer.exitCode !== null) {
        throw new Error('code-server did not start; see code-server.log');
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    this.browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      env: this.env,
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ], // a fresh profile: playwright makes one per launch
    });
    const context = await this.browser.newContext({ viewport: { width: 1500, height: 950 } });
    this.page = await context.newPage();
    const console = fs.createWriteStream(path.join(this.o.artifacts, 'browser-console.log'));
    this.page.on('console', (m) => console.write(`[${m.type()}] ${m.text()}\n`));
    this.page.on('pageerror', (e) => console.write(`[pageerror] ${e.message}\n`));
  }

  async open(folder: string): Promise<void> {
    await this.page.goto(`http://127.0.0.1:${this.port}/?folder=${encodeURIComponent(folder)}`);
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  }

  async screenshot(name: string): Promise<string> {
    const file = path.join(this.o.artifacts, `${name.replace(/[^a-z0-9-]+/gi, '_')}.png`);
    await this.page?.screenshot({ path: file }).catch(() => undefined);
    return file;
  }

  /** Copies the extension host's logs (the prsm output channel among them) to the artifacts. */
  saveLogs(): void {
    const logs = path.join(this.ud, 'logs');
    if (fs.existsSync(logs)) {
      fs.cpSync(logs, path.join(this.o.artifacts, 'vscode-logs'), { recursive: true });
    }
  }

  async close(): Promise<void> {
    await this.browser?.close().catch(() => undefined);
    await killGroup(this.codeServer);
    this.log.end();
  }

  // ---- workbench actions ----

  /** Runs a command from the palette by its title. */
  async command(title: string): Promise<void> {
    const p = this.page;
    await p.keyboard.press('F1');
    const input = p.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`>${title}`);
    await p.locator('.quick-input-list .monaco-list-row.focused', { hasText: title }).first().waitFor();
    await p.keyboard.press('Enter');
  }

  /** Opens a file by Quick Open and waits for its editor to show text. */
  async openFile(rel: string, expectText: string): Promise<void> {
    const p = this.page;
    await p.keyboard.press('Control+P');
    const input = p.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(rel);
    // Enter only once the filtered list has the file focused (not a recent editor).
    await p.locator('.quick-input-list .monaco-list-row.focused', { hasText: path.basename(rel) }).first().waitFor();
    await p.keyboard.press('Enter');
    await p.locator('.tabs-container .tab.active', { hasText: path.basename(rel) }).waitFor();
    await this.line(expectText).waitFor();
  }

  /** The editor line with this text (in the active editor). */
  line(text: string) {
    return this.page.locator('.editor-group-container.active .monaco-editor .view-lines .view-line', { hasText: text }).first();
  }

  /**
   * The text an extension's decoration draws after the line with this text
   * (renderOptions.after): VS Code puts it in a ::after pseudo-element's
   * content, not in the DOM's text.
   */
  async afterText(lineText: string): Promise<string> {
    return this.line(lineText).evaluate((el) =>
      [...el.querySelectorAll('span')]
        .map((s) => (globalThis as unknown as { getComputedStyle(e: unknown, p: string): { content: string } }).getComputedStyle(s, '::after').content)
        .filter((c) => c && c !== 'none' && c !== 'normal')
        // a CSS string: "…", with \" and \\ escaped
        .map((c) => c.replace(/^"|"$/g, '').replace(/\\(.)/g, '$1'))
        .join(''),
    );
  }

  /** The hover widget showing this text. */
  hover(text: string) {
    return this.page.locator('.monaco-hover:not(.hidden)', { hasText: text }).first();
  }

  /** The CodeLens link with this title in the active editor. */
  lens(title: string) {
    return this.page.locator('.editor-group-container.active .monaco-editor .codelens-decoration a', { hasText: title });
  }

  /**
   * Whether a whole-line decoration of an extension (VS Code names their
   * classes ced-*) covers the line with this text.
   */
  async decorated(lineText: string): Promise<boolean> {
    const line = await this.line(lineText).boundingBox();
    if (!line) {
      return false;
    }
    const boxes = await this.page
      .locator('.editor-group-container.active .monaco-editor .view-overlays [class*="ced-"]')
      .evaluateAll((els) => els.map((e) => e.getBoundingClientRect()).map((r) => ({ y: r.y, h: r.height })));
    return boxes.some((b) => Math.abs(b.y - line.y) < 2 && b.h > 0);
  }

  /**
   * Clicks an inline action of a tree row. The row is hovered first (inline
   * actions show on hover); a live update may re-render the row in between,
   * so it tries again.
   */
  async clickInline(row: Locator, label: string): Promise<void> {
    let last: unknown;
    for (let i = 0; i < 6; i++) {
      try {
        await row.hover({ timeout: 5000 });
        await row.locator(`.actions .action-label[aria-label="${label}"]`).click({ timeout: 2000 });
        return;
      } catch (err) {
        last = err;
      }
    }
    throw last;
  }

  /** The vertical gap between a lens and a line: the lens must sit right above it. */
  async lensAboveLine(lensTitle: string, lineText: string): Promise<{ gap: number; lineHeight: number }> {
    const lens = await this.lens(lensTitle).first().locator('xpath=..').boundingBox();
    const line = await this.line(lineText).boundingBox();
    if (!lens || !line) {
      throw new Error('lens or line not on screen');
    }
    return { gap: line.y - (lens.y + lens.height), lineHeight: line.height };
  }
}
