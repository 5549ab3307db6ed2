// The page's state: one store, changed only through the functions below, and
// kept live by the server's events. The views read it and call the actions.

import { api, ApiError, setOnUnauthorized } from './api';
import { paths, type Blame, type Checkpoint, type Feedback, type FileChangeRecord, type HunkRef, type Job, type PrsmEvent, type Records, type ResolveHow, type Session, type StatusEvent, type StatusResponse } from '../../extension/src/api.gen';
import { inConflict, plural, shortId } from './util';

export type DiffMode = 'line-by-line' | 'side-by-side';
export type Tab = 'changes' | 'timeline';
export type Live = 'connecting' | 'live' | 'reconnecting';

export interface Toast {
  id: number;
  kind: 'info' | 'error';
  text: string;
  hint?: string;
  action?: { label: string; run: () => void };
}

export interface Confirm {
  title: string;
  /** Paragraphs before the list (a rollback's plain summary). */
  lead?: string[];
  /** A list between lead and body (a rollback's undone decisions). */
  list?: { label: string; items: string[] };
  body: string[];
  confirmLabel: string;
  danger: boolean;
  run: () => Promise<void>;
  /**
   * Choices, when the question has several answers (a conflict's Accept):
   * one button each instead of the confirm button, Cancel besides.
   */
  choices?: { label: string; title: string; run: () => Promise<void> }[];
}

export interface State {
  status: StatusResponse | null;
  sessions: Session[];
  sessionsLoaded: boolean;
  records: Record<string, FileChangeRecord[]>;
  checkpoints: Record<string, Checkpoint[]>;
  sid: string | null;
  tab: Tab;
  diffMode: DiffMode;
  cursor: string | null;
  /** Explicit open/closed choices per session/record id; the default is open while pending. */
  open: Record<string, boolean>;
  live: Live;
  loggedOut: boolean;
  busy: number;
  toasts: Toast[];
  confirm: Confirm | null;
  help: boolean;
  /** Whether a and r move the selection on to the next pending change (a setting, kept in localStorage). */
  autoAdvance: boolean;
  now: number;
  /**
   * The hunks of later changes a hunk's reject took with it, by the
   * session/record id of the change whose hunk was rejected: the page names
   * them there, since they changed without a click of their own.
   */
  cascaded: Record<string, HunkRef[]>;
  /**
   * The long operations running (a bulk accept or reject, a discard of
   * many changes), by job id, as their job_progress events tell: they
   * announce no status per change, so the page reads the session again
   * once one ends.
   */
  jobs: Record<string, Job>;
  /** The notes and comments of each loaded session (GET .../feedback), by session id. */
  feedback: Record<string, Feedback[]>;
  /** The blame view of a workspace file, while it is open (issue 47). */
  blame: BlameView | null;
}

/** A blame view: the file, and the server's answer or why there is none. */
export interface BlameView {
  path: string;
  data: Blame | null;
  error: string | null;
  loading: boolean;
}

function stored(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

const storedMode = (() => {
  try {
    return localStorage.getItem('prsm.diffMode');
  } catch {
    return null;
  }
})();

export const state: State = {
  status: null,
  sessions: [],
  sessionsLoaded: false,
  records: {},
  checkpoints: {},
  sid: null,
  tab: 'changes',
  diffMode: storedMode === 'side-by-side' ? 'side-by-side' : 'line-by-line',
  cursor: null,
  open: {},
  live: 'connecting',
  loggedOut: false,
  busy: 0,
  toasts: [],
  confirm: null,
  help: false,
  autoAdvance: stored('prsm.autoAdvance') !== 'off',
  jobs: {},
  now: Date.now(),
  cascaded: {},
  feedback: {},
  blame: null,
};

const listeners = new Set<() => void>();
let scheduled = false;

/** Changes the state and schedules one render for this task. */
export function update(patch: Partial<State>): void {
  Object.assign(state, patch);
  if (!scheduled) {
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      for (const l of listeners) l();
    });
  }
}

export function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

setOnUnauthorized(() => update({ loggedOut: true }));

// ---- toasts -------------------------------------------------------------

let toastSeq = 0;

export function toast(kind: Toast['kind'], text: string, hint?: string, action?: Toast['action']): void {
  const t: Toast = { id: ++toastSeq, kind, text, hint, action };
  update({ toasts: [...state.toasts.slice(-3), t] });
  // One with an action (a rollback's Undo) stays long enough to look at
  // the list the rollback left and still take it back.
  setTimeout(() => dismiss(t.id), action ? 30000 : kind === 'error' ? 12000 : 4000);
}

export function dismiss(id: number): void {
  update({ toasts: state.toasts.filter((t) => t.id !== id) });
}

function fail(e: unknown): void {
  if (e instanceof ApiError) {
    if (e.status === 401) return; // the logged-out screen says it
    toast('error', e.message, e.hint);
  } else {
    toast('error', e instanceof Error ? e.message : String(e));
  }
}

// ---- routing ------------------------------------------------------------

/** #/s/<session id>[/timeline] */
export function readRoute(): void {
  const m = /^#\/s\/([^/]+)(\/timeline)?$/.exec(location.hash);
  const sid = m ? decodeURIComponent(m[1]) : null;
  const tab: Tab = m?.[2] ? 'timeline' : 'changes';
  const changed = sid !== state.sid;
  // A session or a tab chosen: the blame view gives way to it.
  update({ sid, tab, cursor: changed ? null : state.cursor, blame: null });
  if (sid) void ensureLoaded(sid);
}

export function go(sid: string, tab: Tab = 'changes'): void {
  const hash = `#/s/${encodeURIComponent(sid)}${tab === 'timeline' ? '/timeline' : ''}`;
  if (location.hash !== hash) location.hash = hash;
  else readRoute();
}

/** The session a bare address shows: the newest with pending work, else the newest active one, else the newest. */
function defaultSession(list: Session[]): Session | undefined {
  const newest = [...list].reverse();
  return (
    newest.find((s) => s.pending_count > 0) ?? newest.find((s) => s.status === 'active') ?? newest[0]
  );
}

// ---- loading ------------------------------------------------------------

export async function loadAll(): Promise<void> {
  try {
    const [status, sessions] = await Promise.all([api.status(), api.sessions()]);
    update({ status, sessions, sessionsLoaded: true });
    if (!state.sid) {
      const d = defaultSession(sessions);
      if (d) {
        history.replaceState(null, '', `#/s/${encodeURIComponent(d.id)}`);
        readRoute();
        return;
      }
    }
    const loaded = new Set([...Object.keys(state.records), ...(state.sid ? [state.sid] : [])]);
    await Promise.all([...loaded].map((sid) => loadSession(sid)));
  } catch (e) {
    fail(e);
  }
}

async function refreshSessions(): Promise<void> {
  try {
    const [status, sessions] = await Promise.all([api.status(), api.sessions()]);
    update({ status, sessions, sessionsLoaded: true });
  } catch (e) {
    fail(e);
  }
}

const loading = new Map<string, Promise<void>>();

/**
 * What the events told about a session while its records were being read:
 * replayed over the list once it arrives, since the list may have been read
 * before them (a change recorded meanwhile would be lost).
 */
const duringLoad = new Map<string, (() => void)[]>();

async function ensureLoaded(sid: string): Promise<void> {
  if (state.records[sid]) return;
  await loadSession(sid);
}

export function loadSession(sid: string): Promise<void> {
  const running = loading.get(sid);
  if (running) return running;
  const p = (async () => {
    duringLoad.set(sid, []);
    let replay: (() => void)[] = [];
    try {
      const [recs, cps] = await Promise.all([api.records(sid), api.checkpoints(sid), loadFeedback(sid)]);
      update({
        records: { ...state.records, [sid]: recs ?? [] },
        checkpoints: { ...state.checkpoints, [sid]: cps ?? [] },
      });
      replay = duringLoad.get(sid) ?? [];
    } catch (e) {
      fail(e);
    } finally {
      duringLoad.delete(sid);
      loading.delete(sid);
    }
    // After the load is done, so that what they start (another read of a
    // record that became partial) is a load of its own.
    replay.forEach((f) => f());
  })();
  loading.set(sid, p);
  return p;
}

/**
 * Reads a session's notes and comments again. A server without them (or a
 * failed read) leaves the list as it was: the changes still show.
 */
export async function loadFeedback(sid: string): Promise<void> {
  try {
    const list = await api.feedback(sid);
    update({ feedback: { ...state.feedback, [sid]: list ?? [] } });
  } catch {
    // keep what was shown
  }
}

/** The body of a decision with the user's note: none without words. */
function noteBody(say?: string): { say: string; author: string } | undefined {
  return say?.trim() ? { say, author: 'page' } : undefined;
}

// ---- merging what the server tells ---------------------------------------

function mergeRecords(recs: FileChangeRecord[]): void {
  if (!recs.length) return;
  const records = { ...state.records };
  for (const r of recs) {
    duringLoad.get(r.session_id)?.push(() => mergeRecords([r]));
    const list = records[r.session_id];
    if (!list) continue; // not loaded; it will be read whole when shown
    const i = list.findIndex((x) => x.id === r.id);
    const next = list.slice();
    if (i < 0) next.push(r);
    else next[i] = { ...next[i], ...r, old_content: r.old_content ?? next[i].old_content, new_content: r.new_content ?? next[i].new_content, pre_tool_content: r.pre_tool_content ?? next[i].pre_tool_content };
    records[r.session_id] = next;
  }
  update({ records });
}

function patchStatus(ev: StatusEvent): void {
  duringLoad.get(ev.session_id)?.push(() => patchStatus(ev));
  const list = state.records[ev.session_id];
  if (!list) return;
  const i = list.findIndex((x) => x.id === ev.id);
  if (i < 0) {
    void loadSession(ev.session_id);
    return;
  }
  const was = list[i];
  const next = list.slice();
  next[i] = { ...next[i], status: ev.status, sync_state: ev.sync_state };
  update({ records: { ...state.records, [ev.session_id]: next } });
  // A conflict settled elsewhere (the markers gone from the file, say):
  // its note changed too, which the event does not carry.
  if (was.sync_state === 'conflict' && ev.sync_state !== 'conflict') {
    void loadSession(ev.session_id);
    return;
  }
  // A partial record's hunks were decided too (by the editor or the CLI,
  // say), and the event does not carry them.
  if ((ev.status as string) === 'partial') void loadSession(ev.session_id);
}

function upsertSession(s: Session): void {
  const i = state.sessions.findIndex((x) => x.id === s.id);
  const sessions = state.sessions.slice();
  if (i < 0) sessions.push(s);
  else sessions[i] = s;
  update({ sessions });
  if (!state.sid) go(s.id);
}

function addCheckpoint(c: Checkpoint): void {
  const list = state.checkpoints[c.session_id];
  if (!list || list.some((x) => x.id === c.id)) return;
  update({ checkpoints: { ...state.checkpoints, [c.session_id]: [...list, c] } });
}

// ---- live events ----------------------------------------------------------

let source: EventSource | null = null;

export function connectEvents(): void {
  source?.close();
  const es = new EventSource(paths.events());
  source = es;
  let dropped = false;
  es.addEventListener('open', () => {
    update({ live: 'live' });
    // Whatever happened while we were away: read it all again.
    if (dropped) void loadAll();
    dropped = false;
  });
  es.addEventListener('error', () => {
    dropped = true;
    if (state.loggedOut) {
      es.close();
      return;
    }
    update({ live: 'reconnecting' });
    if (es.readyState === EventSource.CLOSED) {
      // The server answered with an error status: find out whether our
      // login is gone (api marks it), else try again in a moment.
      api.status().then(
        () => setTimeout(connectEvents, 1000),
        () => {
          if (!state.loggedOut) setTimeout(connectEvents, 3000);
        },
      );
    }
  });
  // Each event's data has the type the server gives it (PrsmEvent).
  const on = <K extends PrsmEvent['type']>(type: K, f: (data: Extract<PrsmEvent, { type: K }>['data']) => void) =>
    es.addEventListener(type, (ev) => {
      try {
        f(JSON.parse((ev as MessageEvent<string>).data));
      } catch {
        // a malformed event is dropped; the next reconnect reads everything
      }
    });
  on('session_updated', (s) => {
    upsertSession(s);
    void refreshStatus();
  });
  on('file_changed', (r) => {
    if (!state.sessions.some((s) => s.id === r.session_id)) void refreshSessions();
    mergeRecords([r]);
    refreshStatus(); // the hook health in the session header
    reloadBlame();
  });
  on('file_change_status', (st) => {
    patchStatus(st);
    reloadBlame();
  });
  on('job_progress', (j) => {
    const jobs = { ...state.jobs };
    if (j.state === 'running') {
      jobs[j.id] = j;
    } else {
      delete jobs[j.id];
      if (j.state === 'failed' && j.error) toast('error', j.error.error, j.error.hint);
      void Promise.all([refreshSessions(), ...(j.session_id ? [loadSession(j.session_id)] : [])]);
      reloadBlame();
    }
    update({ jobs });
  });
  on('checkpoint_created', (c) => {
    addCheckpoint(c);
    refreshStatus();
  });
}

let statusTimer = 0;
function refreshStatus(): void {
  clearTimeout(statusTimer);
  statusTimer = window.setTimeout(() => {
    api.status().then((status) => update({ status }), () => {});
  }, 150);
}

// ---- blame ----------------------------------------------------------------

/** Opens the blame view of a workspace file (its path in the workspace). */
export function openBlame(path: string): void {
  update({ blame: { path, data: null, error: null, loading: true } });
  void loadBlame();
}

export function closeBlame(): void {
  update({ blame: null });
}

/** Reads the open blame view's file again. */
export async function loadBlame(): Promise<void> {
  const path = state.blame?.path;
  if (!path) return;
  update({ blame: { ...state.blame!, loading: true } });
  let next: Partial<BlameView>;
  try {
    next = { data: await api.blame(path), error: null };
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return;
    next = { error: e instanceof ApiError && e.hint ? `${e.message} (${e.hint})` : e instanceof Error ? e.message : String(e) };
  }
  // Closed, or another file opened, meanwhile: that one has its own answer.
  if (state.blame?.path === path) update({ blame: { ...state.blame, ...next, loading: false } });
}

let blameTimer = 0;
/** After an event about a change: the open blame view reads its file again, once for a burst. */
function reloadBlame(): void {
  if (!state.blame) return;
  clearTimeout(blameTimer);
  blameTimer = window.setTimeout(() => void loadBlame(), 200);
}

// ---- actions --------------------------------------------------------------

/** What a bulk decision covers: a session (and a file of it), or every session. */
interface Scope {
  sid?: string;
  file?: string;
}

/** The pending conflicts the page knows of in scope. */
function conflictsIn(scope: Scope): FileChangeRecord[] {
  const sids = scope.sid ? [scope.sid] : Object.keys(state.records);
  return sids.flatMap((sid) =>
    (state.records[sid] ?? []).filter(
      (r) => r.status === 'pending' && r.sync_state === 'conflict' && (!scope.file || r.rel_path === scope.file),
    ),
  );
}

/**
 * What a bulk decision left pending: "1 change left pending: a.txt is in
 * conflict with your edits", naming the files the page knows of.
 */
function leftText(left: number, conflicts: FileChangeRecord[]): string {
  const files = [...new Set(conflicts.map((r) => r.rel_path))];
  if (!files.length) return `${plural(left, 'change')} left pending: in conflict with your edits, or of a file that is`;
  const others = left > conflicts.length ? `; the other changes of ${files.length === 1 ? 'that file' : 'those files'} wait with them` : '';
  return `${plural(left, 'change')} left pending: ${files.join(', ')} ${files.length === 1 ? 'is' : 'are'} in conflict with your edits${others}`;
}

async function review(
  label: string,
  run: () => Promise<Records>,
  reload: string[] = [],
  handled: (e: unknown) => Promise<boolean> = async () => false,
  scope: Scope = {},
): Promise<void> {
  update({ busy: state.busy + 1 });
  try {
    const ans = await run();
    mergeRecords(ans.records);
    // A large decision lists part of its changes; its job counts them.
    const n = ans.job ? ans.job.done : ans.records.length;
    toast('info', n ? `${label}: ${plural(n, 'change')}` : `${label}: nothing was pending`);
    await Promise.all([refreshSessions(), ...reload.map((sid) => loadSession(sid))]);
    // A bulk decision leaves conflicts pending: each is resolved.
    const left = ans.job?.left ?? 0;
    if (left > 0) toast('error', leftText(left, conflictsIn(scope)), "Resolve each on its change: Keep mine, Take agent's, or Merge in editor");
  } catch (e) {
    if (!(await handled(e))) fail(e);
  } finally {
    update({ busy: state.busy - 1 });
  }
}

/** "hunks.txt tc-h2 hunk 1": a hunk as the page names it (numbered from 1). */
export function hunkName(sid: string, ref: HunkRef): string {
  const r = state.records[sid]?.find((x) => x.id === ref.id);
  return `${r ? r.rel_path + ' ' : ''}${shortId(ref.id)} hunk ${ref.index + 1}`;
}

/**
 * In review mode an accept applies the earlier pending changes of its file
 * first, and the server refuses it (needs_earlier) until told to: the page
 * asks, listing them, and runs it again with with_earlier. False when e is
 * another error.
 */
async function askEarlier(r: FileChangeRecord, e: unknown, again: () => Promise<unknown>): Promise<boolean> {
  if (!(e instanceof ApiError) || e.code !== 'needs_earlier') return false;
  let earlier: FileChangeRecord[] = [];
  try {
    earlier = (await api.accept(r.session_id, r.id, { dry_run: true })).earlier ?? [];
  } catch {
    // the refusal's message names them too
  }
  ask({
    title: `Accept the earlier changes of ${r.rel_path} too?`,
    body: [
      earlier.length ? '' : e.message,
      `In review mode a change reaches your workspace after the earlier pending changes of its file, so accepting this one accepts and applies them first.`,
    ].filter(Boolean),
    list: earlier.length
      ? { label: 'Accepted first', items: earlier.map((x) => `${shortId(x.id)} ${x.tool_name} ${x.rel_path}`) }
      : undefined,
    confirmLabel: `Accept ${plural(earlier.length + 1, 'change')}`,
    danger: false,
    run: async () => {
      await again();
    },
  });
  return true;
}

async function decideHunk(r: FileChangeRecord, index: number, accept: boolean, withEarlier = false, say?: string): Promise<boolean> {
  update({ busy: state.busy + 1 });
  try {
    const req = accept ? (withEarlier ? { with_earlier: true } : undefined) : noteBody(say);
    const ans = await api.hunk(r.session_id, r.id, index, accept ? 'accept' : 'reject', req);
    mergeRecords(ans.records);
    const cascaded = ans.cascaded ?? [];
    const key = `${r.session_id}/${r.id}`;
    if (cascaded.length) {
      update({ cascaded: { ...state.cascaded, [key]: [...(state.cascaded[key] ?? []), ...cascaded] } });
    }
    const what = `hunk ${index + 1} of ${r.rel_path}`;
    toast(
      'info',
      `${accept ? 'Accepted' : 'Rejected'} ${what}`,
      cascaded.length
        ? `Also rejected, built on its lines: ${cascaded.map((c) => hunkName(r.session_id, c)).join(', ')}.`
        : undefined,
    );
    // Cascaded hunks may belong to records the answer did not carry whole.
    await Promise.all([refreshSessions(), loadSession(r.session_id)]);
    return true;
  } catch (e) {
    if (!(accept && (await askEarlier(r, e, () => decideHunk(r, index, accept, true))))) fail(e);
    return false;
  } finally {
    update({ busy: state.busy - 1 });
  }
}

/** The record id of the session shown. */
export function recordOf(id: string): FileChangeRecord | undefined {
  return state.sid ? state.records[state.sid]?.find((x) => x.id === id) : undefined;
}

/** The three ways out of a conflict, as the page names them. */
export const resolveWays: { how: ResolveHow; label: string; title: string; done: string }[] = [
  {
    how: 'mine',
    label: 'Keep mine',
    title: "Keep your workspace file as it is; the agent's change is rejected",
    done: 'Kept your version',
  },
  {
    how: 'agent',
    label: "Take agent's",
    title: "Your workspace file becomes the agent's version; the change is accepted",
    done: "Took the agent's version",
  },
  {
    how: 'markers',
    label: 'Merge in editor',
    title: 'Both versions go into your workspace file between conflict markers; prsm accepts the change once you remove them',
    done: 'Wrote both versions between conflict markers',
  },
];

function resolve(r: FileChangeRecord, how: ResolveHow): Promise<void> {
  const way = resolveWays.find((w) => w.how === how)!;
  return review(`${way.done} of ${r.rel_path}`, () => api.resolve(r.session_id, r.id, how));
}

export const actions = {
  /** Accept; on a change in conflict, a question which of the three ways out is meant. */
  acceptChange: (r: FileChangeRecord): Promise<void> => {
    if (!inConflict(r)) {
      return review('Accepted', () => api.accept(r.session_id, r.id), [], (e) =>
        askEarlier(r, e, () => review('Accepted', () => api.accept(r.session_id, r.id, { with_earlier: true }))),
      );
    }
    ask({
      title: `${r.rel_path} is in conflict: which version do you want?`,
      body: [
        `You edited ${r.rel_path} in your workspace while the agent changed the same lines, so there is nothing to accept as it is.`,
      ],
      confirmLabel: '',
      danger: false,
      run: async () => {},
      choices: resolveWays.map((w) => ({ label: w.label, title: w.title, run: () => resolve(r, w.how) })),
    });
    return Promise.resolve();
  },
  resolve,
  /** Rejects a change; say, if any, is the note told to the agent. */
  rejectChange: async (r: FileChangeRecord, say?: string) => {
    await review(say?.trim() ? 'Rejected with your note' : 'Rejected', () => api.reject(r.session_id, r.id, noteBody(say)));
    await loadFeedback(r.session_id);
  },
  acceptHunk: (r: FileChangeRecord, index: number) => decideHunk(r, index, true),
  rejectHunk: (r: FileChangeRecord, index: number, say?: string) => decideHunk(r, index, false, false, say),
  /** A comment on lines ("12-18") of a change, without a decision; true once stored. */
  comment: async (r: FileChangeRecord, lines: string, text: string): Promise<boolean> => {
    update({ busy: state.busy + 1 });
    try {
      await api.comment(r.session_id, r.id, { lines, text, author: 'page' });
      toast('info', `Comment on ${r.rel_path}${lines ? ' lines ' + lines : ''} sent to the agent's queue`);
      await loadFeedback(r.session_id);
      return true;
    } catch (e) {
      fail(e);
      return false;
    } finally {
      update({ busy: state.busy - 1 });
    }
  },
  acceptFile: (sid: string, file: string) =>
    review(`Accepted ${file}`, () => api.acceptAll(sid, file), [], undefined, { sid, file }),
  rejectFile: (sid: string, file: string) =>
    review(`Rejected ${file}`, () => api.rejectAll(sid, file), [], undefined, { sid, file }),
  acceptSession: (s: Session) => review('Accepted the session', () => api.acceptAll(s.id), [s.id], undefined, { sid: s.id }),
  rejectSession: (s: Session) =>
    ask({
      title: `Reject every pending change of “${s.name || s.id}”?`,
      body: [
        `${plural(s.pending_count, 'pending change', 'leaves|leave')} your workspace and the session's worktree. Your own edits stay.`,
        'Accepted changes are not touched. A rejected change cannot be accepted again.',
      ],
      confirmLabel: `Reject ${plural(s.pending_count, 'change')}`,
      danger: true,
      run: () => review('Rejected the session', () => api.rejectAll(s.id), [s.id], undefined, { sid: s.id }),
    }),
  acceptEverything: () =>
    review('Accepted everything', () => api.acceptEverything(), Object.keys(state.records)),
  rejectEverything: () => {
    const n = state.sessions.reduce((k, s) => k + s.pending_count, 0);
    ask({
      title: 'Reject every pending change of every session?',
      body: [
        `${plural(n, 'pending change', 'leaves|leave')} your workspace and the sessions' worktrees. Your own edits stay.`,
        'Accepted changes are not touched. A rejected change cannot be accepted again.',
      ],
      confirmLabel: `Reject ${plural(n, 'change')}`,
      danger: true,
      run: () => review('Rejected everything', () => api.rejectEverything(), Object.keys(state.records)),
    });
  },
  rollback: async (sid: string, c: Checkpoint, title: string) => {
    update({ busy: state.busy + 1 });
    try {
      const plan = await api.rewind(sid, c.id);
      await Promise.all([loadSession(sid), refreshSessions()]);
      const safety = plan.safety_checkpoint_id;
      // What it does was said in the preview and the question before; the
      // list shows the result. The toast offers the way back.
      const rewound = plan.decisions?.filter((d) => d.to === 'rewound').length ?? 0;
      toast(
        'info',
        `Rolled back to “${title}”: ${plural(plan.operations.length, 'file operation')}${rewound ? `, ${plural(rewound, 'change')} rewound` : ''}.`,
        safety ? 'A safety checkpoint was taken first; Undo rolls back to it.' : undefined,
        safety
          ? {
              label: 'Undo',
              run: () => {
                const cp = state.checkpoints[sid]?.find((x) => x.id === safety);
                if (cp) void actions.rollback(sid, cp, 'before the rollback');
              },
            }
          : undefined,
      );
    } catch (e) {
      fail(e);
    } finally {
      update({ busy: state.busy - 1 });
    }
  },
  logout: async () => {
    try {
      await api.logout();
    } catch {
      // already gone
    }
    source?.close();
    update({ loggedOut: true });
  },
};

export function ask(c: Confirm): void {
  update({ confirm: c });
}

export function setDiffMode(m: DiffMode): void {
  try {
    localStorage.setItem('prsm.diffMode', m);
  } catch {
    // private mode: the choice lasts for this page only
  }
  update({ diffMode: m });
}

/** Turns the move to the next change after a and r on or off, for this browser. */
export function setAutoAdvance(on: boolean): void {
  try {
    localStorage.setItem('prsm.autoAdvance', on ? 'on' : 'off');
  } catch {
    // private mode: the choice lasts for this page only
  }
  update({ autoAdvance: on });
}

export function isOpen(r: FileChangeRecord): boolean {
  return state.open[`${r.session_id}/${r.id}`] ?? r.status === 'pending';
}

export function setOpen(r: FileChangeRecord, open: boolean): void {
  update({ open: { ...state.open, [`${r.session_id}/${r.id}`]: open } });
}
