// The extension's picture of the server: sessions, records and checkpoints,
// loaded in full when the event stream (re)opens and kept current by events.
// No vscode here; views listen to onChange.

import type { Checkpoint, FileChangeRecord, PrsmEvent, RecordStatus, Session } from './api.gen';
import { PrsmApiError, type PrsmClient } from './client';

/** The part of the client the model uses (a fake in tests). */
export type ModelClient = Pick<PrsmClient, 'listSessions' | 'listChanges' | 'getChange' | 'listCheckpoints'>;

/** What one update touched. */
export interface ModelChange {
  /** file_path of every file whose records changed. */
  files: Set<string>;
  sessions: boolean;
  records: boolean;
  checkpoints: boolean;
}

export function recordKey(sessionId: string, id: string): string {
  return `${sessionId}\u0000${id}`;
}

/**
 * A record's status as the server sends it. The server also sends 'partial'
 * (some hunks accepted, some rejected), which the generated RecordStatus
 * does not list yet (internal/tsgen names pending, accepted and rejected).
 */
export function statusOf(r: FileChangeRecord): RecordStatus | 'partial' {
  return r.status;
}

const CONTENT_FIELDS = ['old_content', 'new_content', 'pre_tool_content'] as const;

/**
 * Keeps known contents and the summary line when a newer copy of the same
 * record comes without them (events carry no contents; status events no summary).
 */
export function mergeRecord(old: FileChangeRecord | undefined, r: FileChangeRecord): FileChangeRecord {
  if (!old) {
    return r;
  }
  const out = { ...r };
  for (const f of CONTENT_FIELDS) {
    if (out[f] === null || out[f] === undefined) {
      out[f] = old[f];
    }
  }
  if (out.summary === undefined && old.summary !== undefined) {
    out.summary = old.summary;
  }
  return out;
}

function byTime(a: { created_at?: string; timestamp?: string }, b: { created_at?: string; timestamp?: string }): number {
  return (a.timestamp ?? a.created_at ?? '').localeCompare(b.timestamp ?? b.created_at ?? '');
}

export class Model {
  private sessionsById = new Map<string, Session>();
  private recordsByKey = new Map<string, FileChangeRecord>();
  private checkpointsBySession = new Map<string, Checkpoint[]>();
  private _checkpointsSupported = true;
  private readonly listeners = new Set<(c: ModelChange) => void>();
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private buffered: PrsmEvent[] | undefined;
  private readonly fetching = new Set<string>();
  private log: (m: string) => void;

  constructor(log?: (m: string) => void) {
    this.log = log ?? (() => undefined);
  }

  onChange(l: (c: ModelChange) => void): { dispose(): void } {
    this.listeners.add(l);
    return { dispose: () => this.listeners.delete(l) };
  }

  private emit(c: ModelChange): void {
    if (c.files.size || c.sessions || c.records || c.checkpoints) {
      for (const l of [...this.listeners]) {
        l(c);
      }
    }
  }

  // ---- reads ----

  get sessions(): Session[] {
    return [...this.sessionsById.values()];
  }

  session(id: string): Session | undefined {
    return this.sessionsById.get(id);
  }

  get records(): FileChangeRecord[] {
    return [...this.recordsByKey.values()];
  }

  record(sessionId: string, id: string): FileChangeRecord | undefined {
    return this.recordsByKey.get(recordKey(sessionId, id));
  }

  recordsOfSession(sessionId: string): FileChangeRecord[] {
    return this.records.filter((r) => r.session_id === sessionId).sort(byTime);
  }

  /** Every record of a file (by file_path), oldest first. */
  recordsOfFile(filePath: string): FileChangeRecord[] {
    return this.records.filter((r) => r.file_path === filePath).sort(byTime);
  }

  /** The file paths that have records. */
  files(): Set<string> {
    return new Set(this.records.map((r) => r.file_path));
  }

  get pendingCount(): number {
    let n = 0;
    for (const r of this.recordsByKey.values()) {
      if (r.status === 'pending') {
        n++;
      }
    }
    return n;
  }

  /**
   * The pending changes in conflict with the user's edits, oldest first:
   * each is resolved (keep mine, take the agent's, merge), never decided in
   * bulk. Among the pending ones, not apart from them.
   */
  get conflicts(): FileChangeRecord[] {
    return this.records.filter((r) => r.status === 'pending' && r.sync_state === 'conflict').sort(byTime);
  }

  checkpoints(sessionId: string): Checkpoint[] {
    return this.checkpointsBySession.get(sessionId) ?? [];
  }

  /** False when the server answered that it has no checkpoint routes. */
  get checkpointsSupported(): boolean {
    return this._checkpointsSupported;
  }

  // ---- writes ----

  /** Forgets everything (the server went away). */
  clear(): void {
    const files = this.files();
    this.sessionsById.clear();
    this.recordsByKey.clear();
    this.checkpointsBySession.clear();
    this.emit({ files, sessions: true, records: true, checkpoints: true });
  }

  /** Replaces the whole state with a fresh load. */
  replace(sessions: Session[], records: FileChangeRecord[], checkpoints: Map<string, Checkpoint[]>, checkpointsSupported: boolean): void {
    const files = this.files();
    const old = this.recordsByKey;
    this.sessionsById = new Map(sessions.map((s) => [s.id, s]));
    this.recordsByKey = new Map();
    for (const r of records) {
      const k = recordKey(r.session_id, r.id);
      this.recordsByKey.set(k, mergeRecord(old.get(k), r));
      files.add(r.file_path);
    }
    this.checkpointsBySession = checkpoints;
    this._checkpointsSupported = checkpointsSupported;
    this.emit({ files, sessions: true, records: true, checkpoints: true });
  }

  /**
   * Applies one event to the state and reports what changed. Records it
   * does not know of (or knows without contents) are fetched through the
   * client when one is given.
   */
  apply(ev: PrsmEvent, client?: ModelClient): ModelChange {
    const change: ModelChange = { files: new Set(), sessions: false, records: false, checkpoints: false };
    if (this.buffered) {
      this.buffered.push(ev); // re-applied after the load in flight
    }
    switch (ev.type) {
      case 'session_updated': {
        this.sessionsById.set(ev.data.id, ev.data);
        change.sessions = true;
        break;
      }
      case 'file_changed': {
        const r = ev.data;
        const k = recordKey(r.session_id, r.id);
        const merged = mergeRecord(this.recordsByKey.get(k), r);
        this.recordsByKey.set(k, merged);
        change.files.add(r.file_path);
        change.records = true;
        if (client && !merged.binary && merged.new_content === null && merged.old_content === null) {
          this.fetchRecord(client, r.session_id, r.id);
        }
        break;
      }
      case 'file_change_status': {
        const s = ev.data;
        const k = recordKey(s.session_id, s.id);
        const r = this.recordsByKey.get(k);
        if (r) {
          this.recordsByKey.set(k, { ...r, status: s.status, sync_state: s.sync_state });
          // Its hunks were decided too (by another window, the page or the
          // CLI), and the event does not carry them. A note (a conflict
          // merged in the editor) may have changed with the status too.
          if (client && ((s.status as string) === 'partial' || (r.note && r.status !== s.status))) {
            this.fetchRecord(client, s.session_id, s.id);
          }
        } else if (client) {
          this.fetchRecord(client, s.session_id, s.id);
        }
        change.files.add(s.file_path);
        change.records = true;
        break;
      }
      case 'job_progress': {
        // A large bulk decision announces no status per change: once it
        // ends, everything is read again.
        if (ev.data.state !== 'running' && client) {
          void this.refresh(client);
        }
        break;
      }
      case 'checkpoint_created': {
        const c = ev.data;
        const list = (this.checkpointsBySession.get(c.session_id) ?? []).filter((x) => x.id !== c.id);
        list.push(c);
        list.sort(byTime);
        this.checkpointsBySession.set(c.session_id, list);
        change.checkpoints = true;
        break;
      }
    }
    this.emit(change);
    return change;
  }

  /** Sets one session's checkpoints (after a create, annotate or delete). */
  setCheckpoints(sessionId: string, list: Checkpoint[]): void {
    this.checkpointsBySession.set(sessionId, [...list].sort(byTime));
    this.emit({ files: new Set(), sessions: false, records: false, checkpoints: true });
  }

  /** Stores records that an action answered with (accept, reject, bulk). */
  upsertRecords(records: FileChangeRecord[]): void {
    const change: ModelChange = { files: new Set(), sessions: false, records: true, checkpoints: false };
    for (const r of records) {
      const k = recordKey(r.session_id, r.id);
      this.recordsByKey.set(k, mergeRecord(this.recordsByKey.get(k), r));
      change.files.add(r.file_path);
    }
    this.emit(change);
  }

  private fetchRecord(client: ModelClient, sessionId: string, id: string): void {
    const k = recordKey(sessionId, id);
    if (this.fetching.has(k)) {
      return;
    }
    this.fetching.add(k);
    client
      .getChange(sessionId, id)
      .then((ans) => this.upsertRecords(ans.records))
      .catch((err) => this.log(`fetch record ${id}: ${String(err)}`))
      .finally(() => this.fetching.delete(k));
  }

  /** Loads everything again; concurrent calls share one load, and a call during a load runs one more. */
  refresh(client: ModelClient): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.refreshAgain = false;
          await this.load(client);
        } while (this.refreshAgain);
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  private async load(client: ModelClient): Promise<void> {
    this.buffered = [];
    try {
      const sessions = await client.listSessions();
      const records: FileChangeRecord[] = [];
      const checkpoints = new Map<string, Checkpoint[]>();
      let supported = true;
      await Promise.all(
        sessions.map(async (s) => {
          records.push(...(await client.listChanges(s.id)));
          if (!supported) {
            return;
          }
          try {
            checkpoints.set(s.id, await client.listCheckpoints(s.id));
          } catch (err) {
            if (err instanceof PrsmApiError && err.status === 404 && err.code === 'not_found') {
              supported = false; // the server has no checkpoint routes
            } else if (err instanceof PrsmApiError && (err.status === 404 || err.status === 409)) {
              checkpoints.set(s.id, []);
            } else {
              throw err;
            }
          }
        }),
      );
      const events = this.buffered;
      this.buffered = undefined;
      this.replace(sessions, records, supported ? checkpoints : new Map(), supported);
      for (const ev of events) {
        this.apply(ev, client);
      }
    } finally {
      this.buffered = undefined;
    }
  }
}
