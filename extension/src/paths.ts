// Mapping between the paths VS Code shows (the folder as it was opened,
// maybe through a symlink) and the server's file_path (rooted at the
// workspace from server.json).

import * as fs from 'node:fs';
import * as path from 'node:path';

import { isInside } from './discovery';

function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

export class PathMap {
  private readonly wsReal: string;
  private readonly folders: Array<{ local: string; real: string }>;

  constructor(
    readonly workspace: string,
    folders: readonly string[],
  ) {
    this.wsReal = real(workspace);
    this.folders = folders.map((f) => ({ local: path.resolve(f), real: real(f) }));
  }

  /** The server's file_path of a local file; undefined when it is outside the workspace. */
  toServer(local: string): string | undefined {
    const p = path.resolve(local);
    if (isInside(this.workspace, p)) {
      return p;
    }
    for (const f of this.folders) {
      if (isInside(f.local, p)) {
        const r = path.join(f.real, path.relative(f.local, p));
        if (isInside(this.wsReal, r)) {
          return path.join(this.workspace, path.relative(this.wsReal, r));
        }
      }
    }
    if (isInside(this.wsReal, p)) {
      return path.join(this.workspace, path.relative(this.wsReal, p));
    }
    return undefined;
  }

  /** The local path to open for a server file_path (inside an open folder when one holds it). */
  toLocal(serverPath: string): string {
    const rel = path.relative(this.workspace, serverPath);
    const r = path.join(this.wsReal, rel);
    for (const f of this.folders) {
      if (isInside(f.real, r)) {
        return path.join(f.local, path.relative(f.real, r));
      }
    }
    return serverPath;
  }
}
