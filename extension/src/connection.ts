// The connection to the workspace's prsm server: discovery through
// server.json, a health check, the live event stream, and reconnection with
// backoff when the server restarts or its token changes. No vscode here, so
// it is tested against real HTTP servers.

import type { PrsmEvent, ServerInfo } from './api.gen';
import { EventStream, PrsmApiError, PrsmClient } from './client';
import type { Discovered } from './discovery';
import type { ConnectionState } from './settings';

export interface ConnectionOptions {
  /** Finds server.json (re-read on every attempt, so a new token or port is picked up). */
  discover: () => Promise<Discovered | undefined>;
  makeClient?: (info: ServerInfo) => PrsmClient;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  log?: (msg: string) => void;
}

type Listener<T> = (v: T) => void;

/** Delay of the n-th retry (n from 0): doubling from min up to max. */
export function backoff(n: number, minMs: number, maxMs: number): number {
  return Math.min(maxMs, minMs * 2 ** Math.min(n, 20));
}

export class Connection {
  private _state: ConnectionState = 'connecting';
  private _client: PrsmClient | undefined;
  private _info: ServerInfo | undefined;
  private stream: EventStream | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private running = false;
  private attempting = false;
  private again = false;
  private readonly stateListeners = new Set<Listener<ConnectionState>>();
  private readonly eventListeners = new Set<Listener<PrsmEvent>>();
  private readonly connectedListeners = new Set<Listener<PrsmClient>>();
  private readonly minMs: number;
  private readonly maxMs: number;
  private readonly log: (msg: string) => void;

  constructor(private readonly opts: ConnectionOptions) {
    this.minMs = opts.minBackoffMs ?? 250;
    this.maxMs = opts.maxBackoffMs ?? 5000;
    this.log = opts.log ?? (() => undefined);
  }

  get state(): ConnectionState {
    return this._state;
  }

  /** The client of the current server; undefined while none is connected. */
  get client(): PrsmClient | undefined {
    return this._state === 'connected' ? this._client : undefined;
  }

  get info(): ServerInfo | undefined {
    return this._info;
  }

  onState(l: Listener<ConnectionState>): { dispose(): void } {
    this.stateListeners.add(l);
    return { dispose: () => this.stateListeners.delete(l) };
  }

  onEvent(l: Listener<PrsmEvent>): { dispose(): void } {
    this.eventListeners.add(l);
    return { dispose: () => this.eventListeners.delete(l) };
  }

  /** Called each time the event stream (re)opens: the moment to reload state. */
  onConnected(l: Listener<PrsmClient>): { dispose(): void } {
    this.connectedListeners.add(l);
    return { dispose: () => this.connectedListeners.delete(l) };
  }

  start(): void {
    if (this.running) {
      return;
    }
    this.running = true;
    void this.attempt();
  }

  /** Tries again at once (after "Start prsm", or when a request failed). */
  kick(): void {
    if (!this.running) {
      return;
    }
    this.failures = 0;
    this.clearTimer();
    void this.attempt();
  }

  /**
   * Lets a failed request steer the connection: a 401 means the token is
   * stale (the server restarted), no answer means it may be gone; both
   * re-read server.json.
   */
  reportError(err: unknown): void {
    if (err instanceof PrsmApiError && (err.status === 401 || err.unreachable)) {
      this.log(`request failed (${err.message}); reconnecting`);
      this.reconnect();
    }
  }

  /** Drops the stream and finds the server again (folders or settings changed, token refused). */
  reconnect(): void {
    this.dropStream();
    if (this._state === 'connected') {
      this.setState('connecting');
    }
    this.kick();
  }

  dispose(): void {
    this.running = false;
    this.clearTimer();
    this.dropStream();
    this._client?.dispose();
    this._client = undefined;
    this.stateListeners.clear();
    this.eventListeners.clear();
    this.connectedListeners.clear();
  }

  private setState(s: ConnectionState): void {
    if (this._state !== s) {
      this._state = s;
      this.log(`connection: ${s}`);
      for (const l of [...this.stateListeners]) {
        l(s);
      }
    }
  }

  private clearTimer(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private dropStream(): void {
    const s = this.stream;
    this.stream = undefined;
    s?.close();
  }

  private schedule(): void {
    if (!this.running) {
      return;
    }
    this.clearTimer();
    const delay = backoff(this.failures++, this.minMs, this.maxMs);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.attempt();
    }, delay);
  }

  private async attempt(): Promise<void> {
    if (this.attempting) {
      this.again = true;
      return;
    }
    this.attempting = true;
    try {
      do {
        this.again = false;
        await this.attemptOnce();
      } while (this.again && this.running && !this.stream);
    } finally {
      this.attempting = false;
    }
  }

  private async attemptOnce(): Promise<void> {
    if (!this.running || this.stream) {
      return;
    }
    let found: Discovered | undefined;
    try {
      found = await this.opts.discover();
    } catch (err) {
      this.log(`discovery failed: ${String(err)}`);
    }
    if (!this.running) {
      return;
    }
    if (!found) {
      this._info = undefined;
      this.setState('disconnected');
      this.schedule();
      return;
    }
    const info = found.info;
    if (!this._client || this._info?.addr !== info.addr || this._info?.token !== info.token) {
      this._client?.dispose();
      this._client = (this.opts.makeClient ?? ((i) => new PrsmClient(i)))(info);
      this._info = info;
      this.log(`server for ${info.workspace} at ${info.addr} (from ${found.file})`);
    }
    const client = this._client;
    try {
      await client.healthz();
    } catch (err) {
      // server.json left behind by a server that died: not running.
      this.log(`server at ${info.addr} does not answer: ${err instanceof Error ? err.message : String(err)}`);
      this.setState('disconnected');
      this.schedule();
      return;
    }
    if (!this.running || this.stream) {
      return;
    }
    if (this._state !== 'connected') {
      this.setState('connecting');
    }
    const stream = client.events({
      onOpen: () => {
        if (this.stream !== stream) {
          return;
        }
        this.failures = 0;
        this.setState('connected');
        for (const l of [...this.connectedListeners]) {
          l(client);
        }
      },
      onEvent: (ev) => {
        if (this.stream !== stream) {
          return;
        }
        for (const l of [...this.eventListeners]) {
          l(ev);
        }
      },
      onClose: (err) => {
        if (this.stream !== stream) {
          return; // closed on purpose
        }
        this.stream = undefined;
        if (!this.running) {
          return;
        }
        if (err?.status === 401) {
          this.log('event stream refused the token; re-reading server.json');
        } else {
          this.log(`event stream closed: ${err?.message ?? 'closed'}`);
        }
        this.setState('connecting');
        this.schedule();
      },
    });
    this.stream = stream;
  }
}
