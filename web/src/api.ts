// The page's typed client of prsm's HTTP API. Its JSON types are generated
// from the Go types the server encodes (api.gen.ts; `go generate ./api`).
// The page is logged in by an HttpOnly cookie; every state-changing request
// also carries the login's CSRF token, which the server put in a meta tag.

import type {
  AcceptRequest,
  Checkpoint,
  CheckpointDiff,
  ErrorBody,
  FileChangeRecord,
  OK,
  Plan,
  Records,
  ResolveHow,
  ResolveRequest,
  RewindRequest,
  Session,
  StatusResponse,
  WorkspaceFile,
} from './api.gen';

/** An error answer of the server: {"error","code","hint"}. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint = '',
  ) {
    super(message);
  }
}

const csrf = document.querySelector<HTMLMetaElement>('meta[name="prsm-csrf"]')?.content ?? '';

/** Called when the server no longer knows our login (expired, or restarted). */
export let onUnauthorized: () => void = () => {};
export function setOnUnauthorized(f: () => void): void {
  onUnauthorized = f;
}

async function request(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-PRSM-CSRF'] = csrf;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.ok) return res;
  let code = 'http_' + res.status;
  let msg = `${method} ${path}: ${res.status} ${res.statusText}`;
  let hint = '';
  try {
    const j = (await res.json()) as Partial<ErrorBody>;
    if (j.error) msg = j.error;
    if (j.code) code = j.code;
    if (j.hint) hint = j.hint;
  } catch {
    // not JSON: keep the status line
  }
  if (res.status === 401) onUnauthorized();
  throw new ApiError(res.status, code, msg, hint);
}

async function json<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await (await request(method, path, body)).json()) as T;
}

/**
 * One path segment, escaped as Go's url.PathEscape does: ':' and '@' stay
 * as they are, since the server routes on the raw path (record ids of
 * multi-file tool calls end in ":0", ":1", ...).
 */
const seg = (s: string) =>
  encodeURIComponent(s).replace(/%(24|26|2B|3A|3D|40)/gi, (m) => decodeURIComponent(m));
const sess = (id: string) => `/sessions/${seg(id)}`;
const change = (sid: string, id: string) => `${sess(sid)}/file-changes/${seg(id)}`;
const ckpt = (sid: string, id: string) => `${sess(sid)}/checkpoints/${seg(id)}`;
const withFile = (p: string, file?: string) => (file ? `${p}?file=${seg(file)}` : p);

export const api = {
  status: () => json<StatusResponse>('GET', '/status'),
  sessions: () => json<Session[]>('GET', '/sessions'),
  records: (sid: string) => json<FileChangeRecord[]>('GET', `${sess(sid)}/file-changes`),
  diff: async (sid: string, id: string) => (await request('GET', `${change(sid, id)}/diff`)).text(),
  content: async (sid: string, id: string, side: 'before' | 'after') =>
    (await request('GET', `${change(sid, id)}/content?side=${side}`)).blob(),
  workspaceFile: (sid: string, id: string) =>
    json<WorkspaceFile>('GET', `/ui/api/sessions/${seg(sid)}/file-changes/${seg(id)}/workspace`),
  /** Accepts a change; in review mode one that would apply earlier pending changes first needs with_earlier (else 409 needs_earlier). */
  accept: (sid: string, id: string, req?: AcceptRequest) => json<Records>('POST', `${change(sid, id)}/accept`, req),
  reject: (sid: string, id: string) => json<Records>('POST', `${change(sid, id)}/reject`),
  /** Settles a change in conflict: keep mine, take the agent's, or conflict markers for the editor. */
  resolve: (sid: string, id: string, how: ResolveHow) =>
    json<Records>('POST', `${change(sid, id)}/resolve`, { how } satisfies ResolveRequest),
  /** Accepts or rejects hunk n (from 0) of one record. */
  hunk: (sid: string, id: string, n: number, decision: 'accept' | 'reject', req?: AcceptRequest) =>
    json<Records>('POST', `${change(sid, id)}/hunks/${n}/${decision}`, req),
  acceptAll: (sid: string, file?: string) => json<Records>('POST', withFile(`${sess(sid)}/file-changes/accept-all`, file)),
  rejectAll: (sid: string, file?: string) => json<Records>('POST', withFile(`${sess(sid)}/file-changes/reject-all`, file)),
  acceptEverything: () => json<Records>('POST', '/file-changes/accept-all'),
  rejectEverything: () => json<Records>('POST', '/file-changes/reject-all'),
  checkpoints: (sid: string) => json<Checkpoint[]>('GET', `${sess(sid)}/checkpoints`),
  checkpointDiff: (sid: string, id: string) => json<CheckpointDiff>('GET', `${ckpt(sid, id)}/diff`),
  rollbackPreview: (sid: string, id: string) => json<Plan>('GET', `${ckpt(sid, id)}/rollback/preview`),
  rollback: (sid: string, id: string) => json<Plan>('POST', `${ckpt(sid, id)}/rollback`, { dry_run: false } satisfies RewindRequest),
  logout: () => json<OK>('POST', '/ui/logout'),
};
