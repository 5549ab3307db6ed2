// The page's typed client of prsm's HTTP API. Its JSON types and its paths
// are generated from the Go the server runs (the extension's api.gen.ts,
// which both clients import; `go generate ./api`).
// The page is logged in by an HttpOnly cookie; every state-changing request
// also carries the login's CSRF token, which the server put in a meta tag.

import {
  pathSegment as seg,
  paths,
  type AcceptRequest,
  type Blame,
  type Checkpoint,
  type CheckpointDiff,
  type CommentRequest,
  type ErrorBody,
  type Feedback,
  type FileChangeRecord,
  type OK,
  type Plan,
  type Records,
  type RejectRequest,
  type ResolveHow,
  type ResolveRequest,
  type RewindRequest,
  type Session,
  type StatusResponse,
  type WorkspaceFile,
} from '../../extension/src/api.gen';

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

const withFile = (p: string, file?: string) => (file ? `${p}?file=${seg(file)}` : p);

export const api = {
  status: () => json<StatusResponse>('GET', paths.status()),
  sessions: () => json<Session[]>('GET', paths.listSessions()),
  records: (sid: string) => json<FileChangeRecord[]>('GET', paths.listChanges(sid)),
  diff: async (sid: string, id: string) => (await request('GET', paths.changeDiff(sid, id))).text(),
  content: async (sid: string, id: string, side: 'before' | 'after') =>
    (await request('GET', `${paths.changeContent(sid, id)}?side=${side}`)).blob(),
  workspaceFile: (sid: string, id: string) =>
    json<WorkspaceFile>('GET', paths.uiWorkspaceFile(sid, id)),
  /** Accepts a change; in review mode one that would apply earlier pending changes first needs with_earlier (else 409 needs_earlier). */
  accept: (sid: string, id: string, req?: AcceptRequest) => json<Records>('POST', paths.accept(sid, id), req),
  /** Rejects a change; req.say is the user's note to the agent. */
  reject: (sid: string, id: string, req?: RejectRequest) => json<Records>('POST', paths.reject(sid, id), req),
  /** Settles a change in conflict: keep mine, take the agent's, or conflict markers for the editor. */
  resolve: (sid: string, id: string, how: ResolveHow) =>
    json<Records>('POST', paths.resolve(sid, id), { how } satisfies ResolveRequest),
  /** Accepts or rejects hunk n (from 0) of one record. */
  hunk: (sid: string, id: string, n: number, decision: 'accept' | 'reject', req?: AcceptRequest | RejectRequest) =>
    json<Records>('POST', (decision === 'accept' ? paths.acceptHunk : paths.rejectHunk)(sid, id, String(n)), req),
  acceptAll: (sid: string, file?: string) => json<Records>('POST', withFile(paths.acceptAll(sid), file)),
  rejectAll: (sid: string, file?: string) => json<Records>('POST', withFile(paths.rejectAll(sid), file)),
  acceptEverything: () => json<Records>('POST', paths.acceptEverywhere()),
  rejectEverything: () => json<Records>('POST', paths.rejectEverywhere()),
  checkpoints: (sid: string) => json<Checkpoint[]>('GET', paths.listCheckpoints(sid)),
  checkpointDiff: (sid: string, id: string) => json<CheckpointDiff>('GET', paths.checkpointDiff(sid, id)),
  rewindPreview: (sid: string, id: string) => json<Plan>('GET', paths.rewindPreview(sid, id)),
  rewind: (sid: string, id: string) => json<Plan>('POST', paths.rewind(sid, id), { dry_run: false } satisfies RewindRequest),
  /** Every note and comment of a session, with what became of each. */
  feedback: (sid: string) => json<Feedback[] | null>('GET', paths.listFeedback(sid)),
  /** A comment on lines of a change, without a decision. */
  comment: (sid: string, id: string, req: CommentRequest) => json<Feedback>('POST', paths.comment(sid, id), req),
  /** Who wrote each line of a workspace file (its path in the workspace). */
  blame: (path: string) => json<Blame>('GET', `${paths.blame()}?path=${encodeURIComponent(path)}`),
  logout: () => json<OK>('POST', paths.uiLogout()),
};
