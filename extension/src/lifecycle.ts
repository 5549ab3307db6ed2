import * as vscode from 'vscode';

/** A base for objects that own disposables: _register adds one, dispose frees all. */
export abstract class Disposable implements vscode.Disposable {
  private readonly toDispose: vscode.Disposable[] = [];
  private disposed = false;

  protected _register<T extends vscode.Disposable>(d: T): T {
    if (this.disposed) {
      d.dispose();
    } else {
      this.toDispose.push(d);
    }
    return d;
  }

  protected get isDisposed(): boolean {
    return this.disposed;
  }

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    while (this.toDispose.length) {
      try {
        this.toDispose.pop()?.dispose();
      } catch {
        // keep disposing the rest
      }
    }
  }
}
