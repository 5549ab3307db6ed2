// The one typed client of prsm's HTTP API. Every request the extension (and
// its tests) sends goes through here. Its JSON types are not written here:
// api.gen.ts is generated from the Go types the server encodes (run
// `go generate ./api` after changing them). This module needs only Node's
// http, so it runs in the extension host, in vitest and in the e2e driver
// alike. It never runs git: everything is asked of the server.

import * as http from 'node:http';

import {
  EVENT_TYPES,
  pathSegment,
  paths,
  type AcceptRequest,
  type Blame,
  type Checkpoint,
  type CommentRequest,
  type CompleteRequest,
  type ErrorBody,
  type Feedback,
  type FileChangeRecord,
  type Plan,
  type PrsmEvent,
  type Records,
  type RecordStatus,
  type RejectRequest,
  type ResolveHow,
  type ResolveRequest,
  type RollbackRequest,
  type ServerInfo,
  type Session,
  type SessionStatus,
  type StartRequest,
  type StatusResponse,
  type ToolCallAnswer,
  type ToolCallRequest,
  type TurnRequest,
} from './api.gen';

// ranges.ts takes the record and range types from here.
export type { FileChangeRecord, Hunk as ApiHunk, LineRange } from './api.gen';

// ---- errors -----------------------------------------------------------------

/** An error answer of the server ({"error","code","hint"}), or a transport failure. */
export class PrsmApiError extends Error {
  constructor(
    message: string,
    /** HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    readonly code: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'PrsmApiError';
  }

  /** True when the server was not reached at all (refused, reset, timeout). */
  get unreachable(): boolean {
    return this.status === 0;
  }

  /**
   * True for a busy store's answer (503, code busy): its database stayed
   * locked past the server's own wait, nothing was done, and the same
   * request may be sent again (PrsmClient does).
   */
  get busy(): boolean {
    return this.status === 503 && this.code === 'busy';
  }

  /** The message with its hint, for the user. */
  describe(): string {
    return this.hint ? `${this.message} (${this.hint})` : this.message;
  }
}

// ---- the client ---------------------------------------------------------------

export interface ClientOptions {
  /**
   * Per-request timeout in ms (default 60 s). A request a busy store
   * answered is sent again while the waits stay within it, counted from
   * the first try.
   */
  timeoutMs?: number;
}

/**
 * The wait before a request a busy store answered is sent again, after its
 * n-th busy answer (from 0): what the answer's Retry-After said (250 ms
 * without one), twice as long each time, 4 s at most. The server answers
 * busy only after waiting for its lock itself (five seconds).
 */
export function busyWaitMs(retryAfter: string | undefined, n: number): number {
  const secs = Number(retryAfter);
  let wait = retryAfter && Number.isInteger(secs) && secs > 0 ? secs * 1000 : 250;
  for (let i = 0; i < n && wait < 4000; i++) {
    wait *= 2;
  }
  return Math.min(wait, 4000);
}

/** Escapes one path segment (the generated pathSegment, which the paths use). */
export const seg = pathSegment;

function query(params: Record<string, string | undefined>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== '') {
      parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
    }
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

interface RawAnswer {
  status: number;
  body: Buffer;
  /** The Retry-After header, when the answer had one. */
  retryAfter?: string;
}

/** A client of one prsm server. */
export class PrsmClient {
  private readonly host: string;
  private readonly port: number;
  private readonly agent: http.Agent;
  private readonly timeoutMs: number;

  constructor(
    readonly info: Pick<ServerInfo, 'addr' | 'token'>,
    opts: ClientOptions = {},
  ) {
    const { host, port } = splitAddr(info.addr);
    this.host = host;
    this.port = port;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    this.timeoutMs = opts.timeoutMs ?? 60_000;
  }

  get baseUrl(): string {
    return `http://${this.info.addr}`;
  }

  /** Frees pooled sockets. */
  dispose(): void {
    this.agent.destroy();
  }

  // -- transport --

  private raw(method: string, path: string, body?: unknown, auth = true): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const headers: http.OutgoingHttpHeaders = { Accept: 'application/json' };
      if (auth) {
        headers.Authorization = `Bearer ${this.info.token}`;
      }
      if (payload) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = payload.length;
      }
      const req = http.request(
        { host: this.host, port: this.port, method, path, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          const retryAfter = res.headers['retry-after'];
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), retryAfter }));
          res.on('error', (err) => reject(transportError(method, path, err)));
        },
      );
      req.setTimeout(this.timeoutMs, () => {
        req.destroy(new Error(`no answer within ${this.timeoutMs} ms`));
      });
      req.on('error', (err) => reject(transportError(method, path, err)));
      req.end(payload);
    });
  }

  /**
   * Sends a request and returns the raw body of a 2xx answer; throws
   * PrsmApiError otherwise. A busy store's answer is asked again after a
   * wait (busyWaitMs), as SPEC.md says clients do, until the next wait would
   * end past timeoutMs after the first try: then the busy answer is thrown.
   */
  async request(method: string, path: string, body?: unknown, auth = true): Promise<Buffer> {
    const start = Date.now();
    for (let n = 0; ; n++) {
      const ans = await this.raw(method, path, body, auth);
      if (ans.status < 400) {
        return ans.body;
      }
      const err = errorOf(method, path, ans);
      const wait = busyWaitMs(ans.retryAfter, n);
      if (!err.busy || Date.now() + wait - start > this.timeoutMs) {
        throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  private async json<T>(method: string, path: string, body?: unknown, auth = true): Promise<T> {
    const b = await this.request(method, path, body, auth);
    try {
      return JSON.parse(b.toString('utf8')) as T;
    } catch (err) {
      throw new PrsmApiError(`bad JSON answer of ${method} ${path}: ${String(err)}`, 200, 'bad_answer');
    }
  }

  // -- server --

  /** GET /healthz (no token needed). */
  healthz(): Promise<{ ok: boolean; version: string }> {
    return this.json('GET', paths.healthz(), undefined, false);
  }

  /** GET /status. */
  status(): Promise<StatusResponse> {
    return this.json('GET', paths.status());
  }

  // -- sessions --

  listSessions(status?: SessionStatus): Promise<Session[]> {
    return this.json('GET', `${paths.listSessions()}${query({ status })}`);
  }

  startSession(req: Partial<StartRequest> = {}): Promise<Session> {
    return this.json('POST', paths.startSession(), req);
  }

  getSession(id: string): Promise<Session> {
    return this.json('GET', paths.getSession(id));
  }

  endSession(id: string, discard = false): Promise<Session> {
    return this.json('DELETE', `${paths.endSession(id)}${discard ? '?discard=true' : ''}`);
  }

  /** POST /sessions/{id}/turns: answers with the turn's auto checkpoint. */
  startTurn(sessionId: string, req: Partial<TurnRequest>): Promise<Checkpoint> {
    return this.json('POST', paths.turn(sessionId), req);
  }

  // -- tool calls (the agent side; used by tests that play the agent) --

  startToolCall(
    sessionId: string,
    req: Pick<ToolCallRequest, 'tool_call_id' | 'tool_name'> & Partial<ToolCallRequest>,
  ): Promise<ToolCallAnswer> {
    return this.json('POST', paths.startToolCall(sessionId), req);
  }

  completeToolCall(sessionId: string, toolCallId: string, req: Partial<CompleteRequest> = {}): Promise<Records> {
    return this.json('POST', paths.completeToolCall(sessionId, toolCallId), req);
  }

  // -- history --

  /**
   * GET /blame: who wrote each line of a workspace file (its path absolute
   * or relative to the workspace), or of lines start to end (1-based).
   */
  blame(file: string, lines: { start?: number; end?: number } = {}): Promise<Blame> {
    return this.json(
      'GET',
      `${paths.blame()}${query({ path: file, start: lines.start?.toString(), end: lines.end?.toString() })}`,
    );
  }

  // -- records --

  listChanges(sessionId: string, filter: { status?: RecordStatus; file?: string } = {}): Promise<FileChangeRecord[]> {
    return this.json('GET', `${paths.listChanges(sessionId)}${query(filter)}`);
  }

  /** The record with this id, or every record of the tool call with this id. */
  getChange(sessionId: string, id: string): Promise<Records> {
    return this.json('GET', paths.getChange(sessionId, id));
  }

  /** The unified diff of a record (text). */
  async changeDiff(sessionId: string, id: string): Promise<string> {
    return (await this.request('GET', paths.changeDiff(sessionId, id))).toString('utf8');
  }

  /**
   * One side of a record as raw bytes; undefined when the file does not exist
   * on that side (a creation's before, a deletion's after).
   */
  async changeContent(sessionId: string, id: string, side: 'before' | 'after'): Promise<Buffer | undefined> {
    try {
      return await this.request('GET', `${paths.changeContent(sessionId, id)}${query({ side })}`);
    } catch (err) {
      if (err instanceof PrsmApiError && err.status === 404 && err.code === 'no_content') {
        return undefined;
      }
      throw err;
    }
  }

  /**
   * Accepts a change. In review mode one that would apply earlier pending
   * changes of its file first is refused (409 needs_earlier) unless req
   * says with_earlier; dry_run answers what it would take (earlier).
   */
  accept(sessionId: string, id: string, req?: AcceptRequest): Promise<Records> {
    return this.json('POST', paths.accept(sessionId, id), req);
  }

  /** Rejects a change; req.say is the user's note to the agent. */
  reject(sessionId: string, id: string, req?: RejectRequest): Promise<Records> {
    return this.json('POST', paths.reject(sessionId, id), req);
  }

  /** A comment on lines of a change, without a decision: the agent hears it. */
  comment(sessionId: string, id: string, req: CommentRequest): Promise<Feedback> {
    return this.json('POST', paths.comment(sessionId, id), req);
  }

  /** The notes and comments on a change, with what became of each. */
  async changeFeedback(sessionId: string, id: string): Promise<Feedback[]> {
    return (await this.json<Feedback[] | null>('GET', paths.changeFeedback(sessionId, id))) ?? [];
  }

  /**
   * Settles a change in conflict: 'mine' rejects it and keeps the workspace
   * file, 'agent' writes the agent's version, 'markers' writes both between
   * git conflict markers (the server accepts the change once they are gone).
   */
  resolve(sessionId: string, id: string, how: ResolveHow): Promise<Records> {
    const body: ResolveRequest = { how };
    return this.json('POST', paths.resolve(sessionId, id), body);
  }

  /**
   * Accepts or rejects hunk index (from 0) of one record. The answer's
   * cascaded names the hunks of later changes a reject took with it.
   */
  decideHunk(sessionId: string, id: string, index: number, accept: boolean, req?: AcceptRequest | RejectRequest): Promise<Records> {
    return this.json('POST', (accept ? paths.acceptHunk : paths.rejectHunk)(sessionId, id, String(index)), req);
  }

  /** Accepts every pending record of a session, or of one file of it. */
  acceptAll(sessionId: string, file?: string): Promise<Records> {
    return this.json('POST', `${paths.acceptAll(sessionId)}${query({ file })}`);
  }

  /** Rejects every pending record of a session, or of one file of it. */
  rejectAll(sessionId: string, file?: string): Promise<Records> {
    return this.json('POST', `${paths.rejectAll(sessionId)}${query({ file })}`);
  }

  /** Accepts every pending record of every session. */
  acceptEverything(): Promise<Records> {
    return this.json('POST', paths.acceptEverywhere());
  }

  /** Rejects every pending record of every session. */
  rejectEverything(): Promise<Records> {
    return this.json('POST', paths.rejectEverywhere());
  }

  // -- checkpoints --

  listCheckpoints(sessionId: string): Promise<Checkpoint[]> {
    return this.json('GET', paths.listCheckpoints(sessionId));
  }

  createCheckpoint(sessionId: string, req: { name: string; annotation?: string }): Promise<Checkpoint> {
    return this.json('POST', paths.createCheckpoint(sessionId), req);
  }

  getCheckpoint(sessionId: string, checkpointId: string): Promise<Checkpoint> {
    return this.json('GET', paths.getCheckpoint(sessionId, checkpointId));
  }

  annotateCheckpoint(sessionId: string, checkpointId: string, annotation: string): Promise<Checkpoint> {
    return this.json('PUT', paths.annotateCheckpoint(sessionId, checkpointId), { annotation });
  }

  async deleteCheckpoint(sessionId: string, checkpointId: string): Promise<void> {
    await this.request('DELETE', paths.deleteCheckpoint(sessionId, checkpointId));
  }

  /** The diff of a checkpoint against the current state, or against another checkpoint. */
  async checkpointDiff(sessionId: string, checkpointId: string, other?: string): Promise<string> {
    const p = other ? paths.checkpointDiffBetween(sessionId, checkpointId, other) : paths.checkpointDiff(sessionId, checkpointId);
    return (await this.request('GET', p)).toString('utf8');
  }

  rewindPreview(sessionId: string, checkpointId: string): Promise<Plan> {
    return this.json('GET', paths.rewindPreview(sessionId, checkpointId));
  }

  /** Rewinds the session to the checkpoint; the answer names the safety checkpoint. */
  rewind(sessionId: string, checkpointId: string): Promise<Plan> {
    return this.json('POST', paths.rewind(sessionId, checkpointId));
  }

  /** POST /sessions/{id}/rollback by agent, time, file or count. */
  rollbackBy(sessionId: string, req: Partial<RollbackRequest>): Promise<Plan> {
    return this.json('POST', paths.rollback(sessionId), req);
  }

  // -- events --

  /** Opens GET /events. The caller owns the stream and must close it. */
  events(handlers: EventStreamHandlers): EventStream {
    return new EventStream(this.host, this.port, this.info.token, handlers);
  }
}

function splitAddr(addr: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(addr.trim());
  if (!m) {
    throw new PrsmApiError(`bad server address ${JSON.stringify(addr)}`, 0, 'bad_addr');
  }
  return { host: m[1], port: Number(m[2]) };
}

function transportError(method: string, path: string, err: Error): PrsmApiError {
  const code = (err as NodeJS.ErrnoException).code ?? 'unreachable';
  return new PrsmApiError(`cannot reach prsm server (${method} ${path}): ${err.message}`, 0, code);
}

function errorOf(method: string, path: string, ans: RawAnswer): PrsmApiError {
  try {
    const e = JSON.parse(ans.body.toString('utf8')) as Partial<ErrorBody>;
    if (e && typeof e.error === 'string') {
      return new PrsmApiError(e.error, ans.status, e.code ?? 'error', e.hint || undefined);
    }
  } catch {
    // not JSON: fall through
  }
  return new PrsmApiError(`${method} ${path}: HTTP ${ans.status}`, ans.status, 'http_error');
}

// ---- server-sent events ---------------------------------------------------------

/** One parsed SSE message. */
export interface SseMessage {
  event: string;
  data: string;
  id?: string;
}

/**
 * An incremental parser of the text/event-stream format: feed it chunks, it
 * calls onMessage for every complete event. Comments (": ping") are skipped.
 */
export class SseParser {
  private buf = '';
  private event = '';
  private data: string[] = [];
  private id: string | undefined;

  constructor(private readonly onMessage: (m: SseMessage) => void) {}

  push(chunk: string): void {
    this.buf += chunk;
    for (;;) {
      const nl = this.buf.search(/\r\n|\r|\n/);
      if (nl < 0 || (this.buf[nl] === '\r' && nl === this.buf.length - 1)) {
        return; // a CR at the end may be the first half of a CRLF
      }
      const line = this.buf.slice(0, nl);
      const nlLen = this.buf.startsWith('\r\n', nl) ? 2 : 1;
      this.buf = this.buf.slice(nl + nlLen);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) {
        this.onMessage({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
      }
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) {
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) {
      value = value.slice(1);
    }
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        this.id = value;
        break;
      default:
        break;
    }
  }
}

/** Decodes one SSE message into a typed event; undefined for unknown types or bad JSON. */
export function decodeEvent(m: SseMessage): PrsmEvent | undefined {
  if (!(EVENT_TYPES as readonly string[]).includes(m.event)) {
    return undefined;
  }
  try {
    return { type: m.event, data: JSON.parse(m.data) } as PrsmEvent;
  } catch {
    return undefined;
  }
}

export interface EventStreamHandlers {
  /**
   * Ends the stream when nothing (not even the server's 15 s heartbeat)
   * arrives for this long, so a connection that died silently is noticed.
   * Default 45 s.
   */
  idleTimeoutMs?: number;
  onOpen?: () => void;
  onEvent: (e: PrsmEvent) => void;
  /** Called once when the stream ends for any reason; err is set when it failed. */
  onClose?: (err?: PrsmApiError) => void;
}

/** A live GET /events stream. */
export class EventStream {
  private req: http.ClientRequest | undefined;
  private closed = false;
  private idle: NodeJS.Timeout | undefined;

  constructor(host: string, port: number, token: string, private readonly h: EventStreamHandlers) {
    // The token goes in the Authorization header, as on every request: the
    // server refuses it in the address, where it would end up in logs.
    this.req = http.get(
      { host, port, path: paths.events(), headers: { Accept: 'text/event-stream', Authorization: `Bearer ${token}` } },
      (res) => {
        if ((res.statusCode ?? 0) >= 400) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => this.finish(errorOf('GET', paths.events(), { status: res.statusCode ?? 0, body: Buffer.concat(chunks) })));
          return;
        }
        res.setEncoding('utf8');
        const parser = new SseParser((m) => {
          const ev = decodeEvent(m);
          if (ev && !this.closed) {
            this.h.onEvent(ev);
          }
        });
        this.h.onOpen?.();
        this.touch();
        res.on('data', (c: string) => {
          this.touch();
          parser.push(c);
        });
        res.on('end', () => this.finish(new PrsmApiError('event stream ended', 0, 'stream_ended')));
        res.on('error', (err) => this.finish(transportError('GET', paths.events(), err)));
      },
    );
    this.req.on('error', (err) => this.finish(transportError('GET', paths.events(), err)));
  }

  private touch(): void {
    if (this.idle) {
      clearTimeout(this.idle);
    }
    const ms = this.h.idleTimeoutMs ?? 45_000;
    this.idle = setTimeout(() => this.finish(new PrsmApiError(`no data on the event stream for ${ms} ms`, 0, 'stream_stalled')), ms);
  }

  private finish(err?: PrsmApiError): void {
    if (this.closed) {
      return;
    }
    this.closed = true;
    if (this.idle) {
      clearTimeout(this.idle);
      this.idle = undefined;
    }
    this.req?.destroy();
    this.req = undefined;
    this.h.onClose?.(err);
  }

  /** Ends the stream; onClose is called without an error. */
  close(): void {
    this.finish();
  }
}
