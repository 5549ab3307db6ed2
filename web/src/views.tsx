// The page's views. Every Accept and Reject is a real <button> whose
// accessible name is exactly "Accept" or "Reject"; the region around it (a
// change, a file, a session, everything) says what it acts on.

import { useEffect, useRef, useState } from 'preact/hooks';

import { api } from './api';
import type { Checkpoint, CheckpointDiff, FileChangeRecord, JobKind, OperationType, Plan, PlanDecision, Session } from '../../extension/src/api.gen';
import { BlameFile } from './blameview';
import { ConflictView, Patch, RecordDiff } from './diffview';
import { FeedbackList, NoteBox } from './feedback';
import {
  actions,
  ask,
  dismiss,
  go,
  isOpen,
  openBlame,
  resolveWays,
  setAutoAdvance,
  setDiffMode,
  setOpen,
  state,
  toast,
  update,
  type State,
} from './store';
import {
  agree,
  ago,
  changeVerb,
  decisionWords,
  execBit,
  fullTime,
  inConflict,
  isRewound,
  lineCounts,
  mergingInEditor,
  plural,
  sizeChange,
  splitRewound,
  statusWord,
  summaryOf,
  toolLabel,
  shortId,
  splitPath,
  syncLabel,
} from './util';

// ---- small pieces -------------------------------------------------------

function Time({ iso, now }: { iso: string; now: number }) {
  return (
    <time dateTime={iso} title={fullTime(iso)}>
      {ago(iso, now)}
    </time>
  );
}

function ReviewButtons({
  what,
  onAccept,
  onReject,
  disabled,
  small,
}: {
  what: string;
  onAccept: () => void;
  onReject: () => void;
  disabled?: boolean;
  small?: boolean;
}) {
  const busy = state.busy > 0;
  return (
    <span class="review-buttons">
      <button
        type="button"
        class={`btn accept ${small ? 'small' : ''}`}
        title={`Accept ${what}`}
        disabled={disabled || busy}
        onClick={onAccept}
      >
        Accept
      </button>
      <button
        type="button"
        class={`btn reject ${small ? 'small' : ''}`}
        title={`Reject ${what}`}
        disabled={disabled || busy}
        onClick={onReject}
      >
        Reject
      </button>
    </span>
  );
}

/** A button that copies text (an id) to the clipboard. */
function CopyButton({ text, what }: { text: string; what: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="btn ghost small copy"
      aria-label={`Copy ${what}`}
      title={`Copy ${text}`}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        } catch {
          toast('info', `Copy it by hand: ${text}`);
        }
      }}
    >
      {done ? 'Copied' : 'Copy'}
    </button>
  );
}

function Pill({ kind, children }: { kind: string; children: preact.ComponentChildren }) {
  return <span class={`pill ${kind}`}>{children}</span>;
}

function Logo() {
  return (
    <svg class="logo" viewBox="0 0 32 32" aria-hidden="true">
      <path d="M16 3 29 27H3Z" fill="none" stroke="currentColor" stroke-width="2.4" stroke-linejoin="round" />
      <path d="M16 10v17" stroke="currentColor" stroke-width="2" opacity=".55" />
    </svg>
  );
}

// ---- header ---------------------------------------------------------------

const jobLabel: Record<JobKind, string> = {
  reject_all: 'Rejecting',
  accept_all: 'Accepting',
  reject: 'Rejecting',
  discard: 'Discarding',
  record: 'Recording',
};

function Header({ s }: { s: State }) {
  const pending = s.sessions.reduce((n, x) => n + x.pending_count, 0);
  const liveText = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…' }[s.live];
  return (
    <header class="topbar">
      <a class="brand" href="#" onClick={(e) => (e.preventDefault(), update({ help: false }))} title="prsm">
        <Logo />
        <span>prsm</span>
      </a>
      <span class="workspace" title={s.status?.workspace}>
        {s.status?.workspace ?? ''}
      </span>
      <span class={`live ${s.live}`} role="status" title="Updates arrive as the agent works">
        <span class="dot" aria-hidden="true" />
        {liveText}
      </span>
      {Object.values(s.jobs).map((j) => (
        <span class="job" role="status" key={j.id}>
          {jobLabel[j.kind]} {j.done.toLocaleString()} of {plural(j.total, 'change')}
          <progress max={j.total} value={j.done} />
        </span>
      ))}
      <span class="spacer" />
      <div class="segmented" role="group" aria-label="Diff layout">
        <button
          type="button"
          aria-pressed={s.diffMode === 'line-by-line'}
          onClick={() => setDiffMode('line-by-line')}
        >
          Unified
        </button>
        <button
          type="button"
          aria-pressed={s.diffMode === 'side-by-side'}
          onClick={() => setDiffMode('side-by-side')}
        >
          Side by side
        </button>
      </div>
      <div class="everything" role="group" aria-label="Everything">
        <span class="count">
          <strong>{pending}</strong> pending in all sessions
        </span>
        <ReviewButtons
          what="every pending change of every session"
          disabled={pending === 0}
          onAccept={actions.acceptEverything}
          onReject={actions.rejectEverything}
        />
      </div>
      <button type="button" class="btn ghost icon" aria-label="Keyboard shortcuts" onClick={() => update({ help: !s.help })}>
        ?
      </button>
    </header>
  );
}

// ---- sessions sidebar -------------------------------------------------------

function Sidebar({ s }: { s: State }) {
  const list = [...s.sessions].reverse();
  return (
    <nav class="sidebar" aria-label="Sessions">
      <h2 class="side-title">Sessions</h2>
      {s.sessionsLoaded && list.length === 0 && (
        <p class="muted small pad-x">
          No agent sessions yet. Start one with <code>prsm session start</code> or <code>prsm run -- AGENT</code>, or
          try <code>prsm demo</code>.
        </p>
      )}
      <ul>
        {list.map((x) => (
          <li key={x.id}>
            <a
              href={`#/s/${encodeURIComponent(x.id)}`}
              class={`session-link ${x.id === s.sid ? 'current' : ''}`}
              aria-current={x.id === s.sid ? 'page' : undefined}
            >
              <span class={`state-dot ${x.status}`} aria-hidden="true" />
              <span class="session-name">{x.name || shortId(x.id)}</span>
              {x.pending_count > 0 && (
                <span class="badge" title={plural(x.pending_count, 'pending change')}>
                  {x.pending_count}
                </span>
              )}
              <span class="session-sub">
                {x.agent_id || 'agent'} · {x.mode} · {x.status === 'active' ? <Time iso={x.created_at} now={s.now} /> : 'ended'}
              </span>
            </a>
          </li>
        ))}
      </ul>
      <footer class="keys muted small" aria-hidden="true">
        <kbd>j</kbd> <kbd>k</kbd> move · <kbd>a</kbd> accept · <kbd>r</kbd> reject · <kbd>o</kbd> diff ·{' '}
        <kbd>u</kbd> layout · <kbd>t</kbd> timeline · <kbd>?</kbd> all keys
      </footer>
    </nav>
  );
}

// ---- one session ------------------------------------------------------------

function SessionView({ s, sess }: { s: State; sess: Session }) {
  const recs = s.records[sess.id];
  const cps = s.checkpoints[sess.id];
  // Rewound records are set aside: counted apart, never as changes to review.
  const { live, rewound } = splitRewound(recs ?? []);
  const conflicts = live.filter((r) => r.sync_state === 'conflict' && r.status !== 'rejected').length;
  const files = new Set(live.map((r) => r.rel_path));
  const hook = s.status?.hooks?.find((h) => h.session_id === sess.id);
  const limit = s.status?.watch_limits?.find((l) => l.sessions?.includes(sess.id));
  return (
    <div class="session">
      <div class="session-head">
        <div class="session-title">
          <h1>{sess.name || shortId(sess.id)}</h1>
          <div class="meta">
            <Pill kind={sess.status}>{sess.status}</Pill>
            <Pill kind="mode">{sess.mode === 'review' ? 'review mode' : 'auto mode'}</Pill>
            <span>{sess.agent_id || 'agent'}</span>
            <span>
              started <Time iso={sess.created_at} now={s.now} />
            </span>
            <code title={sess.worktree_path}>{sess.branch}</code>
            <code class="muted" title="session id">
              {shortId(sess.id)}
            </code>
            {hook && sess.status === 'active' && (
              <span class="hooks" title="Which agent's hooks reported to prsm, and when the last hook event came">
                {hook.last_hook_at ? (
                  <>
                    {hook.agent || 'agent'} hooks · last event <Time iso={hook.last_hook_at} now={s.now} />
                  </>
                ) : (
                  'no hook reported yet'
                )}
              </span>
            )}
          </div>
          {hook?.warning && sess.status === 'active' && (
            <p class="warning hook-warning" role="alert">
              {hook.warning}
            </p>
          )}
          {limit && sess.status === 'active' && (
            <p class="warning watch-limit" title="Every change is still recorded: each tool call's and turn's end scans the worktree">
              watcher limited: {limit.reason}
              {limit.fix && <> · fix: {limit.fix}</>}
            </p>
          )}
          {recs && (
            <p class="summary">
              {plural(files.size, 'file')} · {plural(live.length, 'change')} ·{' '}
              <strong>{sess.pending_count} pending</strong>
              {rewound.length > 0 && <> · {rewound.length} rewound</>}
              {conflicts > 0 && (
                <>
                  {' '}
                  · <span class="conflict-text">{plural(conflicts, 'conflict')}</span>
                </>
              )}
            </p>
          )}
        </div>
        <div class="session-actions" role="group" aria-label={`Session ${sess.name || sess.id}`}>
          <ReviewButtons
            what={`every pending change of this session`}
            disabled={sess.pending_count === 0}
            onAccept={() => actions.acceptSession(sess)}
            onReject={() => actions.rejectSession(sess)}
          />
        </div>
      </div>
      <div class="tabs" role="tablist" aria-label="Session views">
        <a
          role="tab"
          href={`#/s/${encodeURIComponent(sess.id)}`}
          aria-selected={s.tab === 'changes'}
          class={s.tab === 'changes' ? 'current' : ''}
        >
          Changes <span class="count">{recs ? live.length : ''}</span>
        </a>
        <a
          role="tab"
          href={`#/s/${encodeURIComponent(sess.id)}/timeline`}
          aria-selected={s.tab === 'timeline'}
          class={s.tab === 'timeline' ? 'current' : ''}
        >
          Timeline <span class="count">{cps?.length ?? ''}</span>
        </a>
      </div>
      {!recs ? (
        <p class="muted pad">Loading…</p>
      ) : s.tab === 'changes' ? (
        <ChangesView s={s} sess={sess} recs={recs} />
      ) : (
        <Timeline s={s} sess={sess} cps={cps ?? []} recs={recs} />
      )}
    </div>
  );
}

/** The records of a session grouped by file, files in path order. */
export function byFile(recs: FileChangeRecord[]): [string, FileChangeRecord[]][] {
  const m = new Map<string, FileChangeRecord[]>();
  for (const r of recs) {
    const list = m.get(r.rel_path);
    if (list) list.push(r);
    else m.set(r.rel_path, [r]);
  }
  return [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The key of a session's rewound group in state.open. */
export const rewoundKey = (sid: string) => `${sid}/#rewound`;

function ChangesView({ s, sess, recs }: { s: State; sess: Session; recs: FileChangeRecord[] }) {
  if (recs.length === 0) {
    return (
      <p class="empty">
        No changes yet. They appear here, live, as the agent works in <code>{sess.worktree_path}</code>.
      </p>
    );
  }
  const { live, rewound } = splitRewound(recs);
  return (
    <div class="files">
      {live.length === 0 && <p class="empty">Every change of this session was rewound.</p>}
      {byFile(live).map(([file, list]) => (
        <FileSection key={file} s={s} sess={sess} file={file} recs={list} />
      ))}
      {rewound.length > 0 && <RewoundGroup s={s} sess={sess} recs={rewound} />}
    </div>
  );
}

/**
 * The changes a rewind set aside, collapsed after the others: made after the
 * checkpoint it went back to, out of the worktree and the workspace, and not
 * for review. A rewind to a later checkpoint (Undo) brings them back.
 */
function RewoundGroup({ s, sess, recs }: { s: State; sess: Session; recs: FileChangeRecord[] }) {
  const key = rewoundKey(sess.id);
  const open = s.open[key] ?? false;
  return (
    <details
      class="file rewound-group"
      open={open}
      aria-label="Rewound changes"
      onToggle={(e) => {
        const now = e.currentTarget.open;
        if (now !== (state.open[key] ?? false)) update({ open: { ...state.open, [key]: now } });
      }}
    >
      <summary class="file-head">
        <h2 class="file-name">Rewound</h2>
        <span class="count">{recs.length}</span>
        <span class="muted small">
          Made after the checkpoint a rollback went back to: out of the worktree and your workspace, nothing to
          review. A rollback to a later checkpoint (the Undo of that rollback) brings {agree(recs.length, 'it|them')}{' '}
          back.
        </span>
      </summary>
      <div class="records">
        {recs.map((r) => (
          <RecordView key={r.id} s={s} r={r} />
        ))}
      </div>
    </details>
  );
}

function FileSection({ s, sess, file, recs }: { s: State; sess: Session; file: string; recs: FileChangeRecord[] }) {
  const pending = recs.filter((r) => r.status === 'pending').length;
  const conflict = recs.some((r) => r.sync_state === 'conflict' && r.status !== 'rejected');
  const { dir, base } = splitPath(file);
  let added = 0;
  let removed = 0;
  // A binary file has no lines to count: its size before the first change
  // still in it and after the last.
  const kept = recs.filter((r) => r.status !== 'rejected');
  const binary =
    kept.length > 0 && kept.every((r) => r.binary)
      ? {
          change:
            kept[0].change_type === 'create'
              ? ('create' as const)
              : kept[kept.length - 1].change_type === 'delete'
                ? ('delete' as const)
                : ('modify' as const),
          before: kept[0].size_before,
          after: kept[kept.length - 1].size_after,
        }
      : null;
  for (const r of recs) {
    if (r.status === 'rejected') continue;
    const c = lineCounts(r);
    added += c.added;
    removed += c.removed;
  }
  return (
    <section class={`file ${pending ? 'has-pending' : 'reviewed'}`} aria-label={`File ${file}`} data-file={file}>
      <div class="file-head">
        <h2 class="file-name" title={file}>
          <span class="dir">{dir}</span>
          <span class="base">{base}</span>
        </h2>
        {conflict && <Pill kind="conflict">conflict</Pill>}
        {binary ? (
          <span class="file-stats size-change" title="size before → size after the changes shown">
            {sizeChange(binary.change, binary.before, binary.after)}
          </span>
        ) : (
          recs.some((r) => r.status !== 'rejected') && (
            <span class="file-stats">
              <span class="ins">+{added}</span> <span class="del">−{removed}</span>
            </span>
          )
        )}
        <span class="muted small">
          {plural(recs.length, 'change')}
          {pending ? `, ${pending} pending` : ''}
        </span>
        <span class="spacer" />
        <span class="file-actions" role="group" aria-label={`All changes of ${file}`}>
          <ReviewButtons
            small
            what={`every pending change of ${file}`}
            disabled={pending === 0}
            onAccept={() => actions.acceptFile(sess.id, file)}
            onReject={() => actions.rejectFile(sess.id, file)}
          />
        </span>
      </div>
      <div class="records">
        {recs.map((r) => (
          <RecordView key={r.id} s={s} r={r} />
        ))}
      </div>
    </section>
  );
}

function RecordView({ s, r }: { s: State; r: FileChangeRecord }) {
  const open = isOpen(r);
  const { added, removed } = lineCounts(r);
  const selected = s.cursor === r.id;
  const conflict = inConflict(r);
  const merging = mergingInEditor(r);
  const x = execBit(r);
  const tool = toolLabel(r);
  const summary = summaryOf(r);
  const rewound = isRewound(r);
  const [noting, setNoting] = useState(false);
  return (
    <article
      class={`record ${r.status} ${selected ? 'selected' : ''} ${conflict ? 'is-conflict' : ''}`}
      aria-label={`Change ${r.id}: ${r.tool_name} ${changeVerb[r.change_type]} ${r.rel_path}`}
      data-record-id={r.id}
      data-status={r.status}
      onMouseDown={() => s.cursor !== r.id && update({ cursor: r.id })}
    >
      <div class="record-head">
        <button
          type="button"
          class="disclose"
          aria-expanded={open}
          aria-label={open ? 'Hide diff' : 'Show diff'}
          onClick={() => setOpen(r, !open)}
        >
          <span aria-hidden="true">{open ? '▾' : '▸'}</span>
        </button>
        <span class="tool" title={tool.title}>
          {tool.label}
        </span>
        <span class="rec-path" title={r.rel_path}>
          {r.rel_path}
        </span>
        {summary && (
          <code class="summary-line small" title={summary}>
            {summary}
          </code>
        )}
        <span class={`ctype ${r.change_type}`}>{changeVerb[r.change_type]}</span>
        {r.binary ? (
          <span class="file-stats small size-change">binary, {sizeChange(r.change_type, r.size_before, r.size_after)}</span>
        ) : (
          <span class="file-stats small">
            <span class="ins">+{added}</span> <span class="del">−{removed}</span>
          </span>
        )}
        {x && <span class="muted small">{x}</span>}
        <span class="spacer" />
        <span
          class={`pill ${r.status}`}
          title={rewound ? 'Made after the checkpoint a rollback went back to: out of the worktree and your workspace' : undefined}
        >
          {r.status}
        </span>
        {r.status !== 'rejected' && !rewound && <Pill kind={`sync-${r.sync_state}`}>{syncLabel[r.sync_state]}</Pill>}
        {r.status === 'pending' && !merging && (
          <ReviewButtons
            small
            what={`this change to ${r.rel_path}`}
            onAccept={() => actions.acceptChange(r)}
            onReject={() => actions.rejectChange(r)}
          />
        )}
        {r.status === 'pending' && !merging && !noting && (
          <button
            type="button"
            class="btn small"
            title={`Reject this change to ${r.rel_path} and tell the agent why`}
            disabled={s.busy > 0}
            onClick={() => setNoting(true)}
          >
            Reject with note…
          </button>
        )}
      </div>
      <div class="record-meta small">
        <span class="who">
          {r.agent_id || 'agent'} · <Time iso={r.timestamp} now={s.now} />
          {r.message_index > 0 && <> · turn {r.message_index}</>}
        </span>
        <span class="muted">·</span>
        <span class="muted">id</span>
        <code class="tcid" title={`record ${r.id} (tool call ${r.tool_call_id}): paste it into prsm changes`}>
          {r.id}
        </code>
        <CopyButton text={r.id} what="id" />
        {r.commit && (
          <>
            <span class="muted">·</span>
            <span class="muted">commit</span>
            <code class="commit" title={`prsm commit put this change's accepted lines in commit ${r.commit}`}>
              {r.commit.slice(0, 7)}
            </code>
          </>
        )}
        {!r.binary && (
          <button
            type="button"
            class="btn small ghost"
            title={`Who wrote each line of ${r.rel_path} as it is in your workspace: which agent, tool call and prompt, or you`}
            onClick={() => openBlame(r.rel_path)}
          >
            Blame
          </button>
        )}
      </div>
      {conflict && !merging && (
        <div class="resolve-bar" role="group" aria-label={`Resolve the conflict of ${r.rel_path}`}>
          <span class="small">Resolve the conflict:</span>
          {resolveWays.map((w) => (
            <button
              key={w.how}
              type="button"
              class={`btn small ${w.how === 'agent' ? 'accept' : ''}`}
              title={w.title}
              disabled={state.busy > 0}
              onClick={() => void actions.resolve(r, w.how)}
            >
              {w.label}
            </button>
          ))}
        </div>
      )}
      {merging && (
        <p class="merge-note" role="note">
          <strong>Merge in your editor.</strong> Both versions are in <code>{r.rel_path}</code> in your workspace,
          between <code>&lt;&lt;&lt;&lt;&lt;&lt;&lt; yours</code> and <code>&gt;&gt;&gt;&gt;&gt;&gt;&gt; agent</code>{' '}
          markers. Keep what you want and delete the markers; prsm accepts this change as soon as no marker is left.
        </p>
      )}
      {r.note === 'resolved in your editor' && <p class="resolved-note muted small">Conflict resolved in your editor.</p>}
      {noting && r.status === 'pending' && (
        <NoteBox
          label={`Note on rejecting ${r.rel_path}`}
          send="Reject with this note"
          onSend={async (text) => {
            await actions.rejectChange(r, text);
            setNoting(false);
          }}
          onCancel={() => setNoting(false)}
        />
      )}
      <FeedbackList rec={r} />
      {open &&
        (conflict && !merging ? <ConflictView rec={r} mode={s.diffMode} /> : <RecordDiff rec={r} mode={s.diffMode} />)}
    </article>
  );
}

// ---- checkpoints ------------------------------------------------------------

function checkpointTitle(c: Checkpoint): string {
  return c.name || (c.tool_call_id ? `before tool call ${shortId(c.tool_call_id)}` : `turn ${c.message_index}`);
}

function Timeline({ s, sess, cps, recs }: { s: State; sess: Session; cps: Checkpoint[]; recs: FileChangeRecord[] }) {
  const list = [...cps].reverse();
  const active = sess.status === 'active';
  if (list.length === 0) {
    return <p class="empty">No checkpoints yet. prsm takes one at every turn and before every file change.</p>;
  }
  const tools = new Map(recs.map((r) => [r.tool_call_id.replace(/:\d+$/, ''), r.tool_name]));
  // A checkpoint's files_changed counts the files that differ from the
  // checkpoint before it: what happened after that earlier one (its tool
  // call's changes). So an entry shows the count of the next checkpoint;
  // the newest counts the files of the changes made since it.
  const after = new Map<string, number>();
  cps.forEach((c, i) => {
    const next = cps[i + 1];
    if (next) after.set(c.id, next.files_changed);
    else {
      const since = recs.filter(
        (r) => r.status !== 'rejected' && !isRewound(r) && Date.parse(r.timestamp) >= Date.parse(c.created_at),
      );
      after.set(c.id, new Set(since.map((r) => r.rel_path)).size);
    }
  });
  return (
    <div class="timeline-wrap">
      <p class="muted small">
        Newest first. Rolling back to a checkpoint makes the worktree equal it again and takes the later changes out
        of your workspace (your own edits stay); a safety checkpoint is taken first, so a rollback can be undone.
        {!active && ' This session has ended: it can no longer be rolled back.'}
      </p>
      <ol class="timeline" aria-label="Checkpoints">
        <li class="cp now">
          <span class="node" aria-hidden="true" />
          <div class="cp-body">
            <div class="cp-title">Now</div>
            <div class="muted small">the worktree as it is</div>
          </div>
        </li>
        {list.map((c) => (
          <CheckpointItem
            key={c.id}
            s={s}
            sess={sess}
            c={c}
            tool={tools.get(c.tool_call_id)}
            changedAfter={after.get(c.id) ?? 0}
            active={active}
          />
        ))}
      </ol>
    </div>
  );
}

function CheckpointItem({
  s,
  sess,
  c,
  tool,
  changedAfter,
  active,
}: {
  s: State;
  sess: Session;
  c: Checkpoint;
  tool?: string;
  /** How many files changed after this checkpoint, up to the next one (or now). */
  changedAfter: number;
  active: boolean;
}) {
  const panel = useRef<HTMLDivElement>(null);
  const [plan, setPlan] = useState<Plan | null>(null);
  const [diff, setDiff] = useState<CheckpointDiff | null>(null);
  const [open, setOpenPanel] = useState<'' | 'preview' | 'diff'>('');
  const [err, setErr] = useState('');
  const title = checkpointTitle(c);
  const turn = c.kind === 'auto' && !c.tool_call_id;
  const preview = async () => {
    if (open === 'preview') return setOpenPanel('');
    setErr('');
    setOpenPanel('preview');
    try {
      setPlan(await api.rewindPreview(sess.id, c.id));
    } catch (e) {
      setErr((e as Error).message);
    }
  };
  const showDiff = async () => {
    if (open === 'diff') return setOpenPanel('');
    setErr('');
    setOpenPanel('diff');
    try {
      setDiff(await api.checkpointDiff(sess.id, c.id));
    } catch (e) {
      setErr((e as Error).message);
    }
  };
  // An opened diff comes into view: it opens below its entry, often below
  // the fold.
  useEffect(() => {
    if (open !== 'diff' || !diff) return;
    requestAnimationFrame(() => {
      const calm = matchMedia('(prefers-reduced-motion: reduce)').matches;
      panel.current?.scrollIntoView({ block: 'start', behavior: calm ? 'auto' : 'smooth' });
    });
  }, [open, diff]);
  const confirm = () => {
    const p = plan;
    const ops = p?.operations ?? [];
    const decisions = p?.decisions ?? [];
    ask({
      title: `Roll back to “${title}”?`,
      lead: p?.summary ?? [],
      list: decisions.length
        ? { label: 'Decisions the rollback changes', items: decisions.map(decisionLine) }
        : undefined,
      body: [
        `${plural(ops.length, 'file')} in the worktree ${agree(ops.length, 'changes|change')} back to this checkpoint; later changes are set aside as rewound and leave your workspace. Your own edits stay.`,
        ...(p?.warnings ?? []),
        ...(p?.conflicts ?? []).map((x) => `Conflict, left as it is: ${x.path} (${x.reason})`),
        'A safety checkpoint is taken first, so this can be undone.',
      ],
      confirmLabel: 'Roll back',
      danger: true,
      run: async () => {
        await actions.rollback(sess.id, c, title);
        setPlan(null);
        setOpenPanel('');
      },
    });
  };
  return (
    <li class={`cp ${c.kind} ${turn ? 'turn' : ''}`} aria-label={`Checkpoint ${title}`}>
      <span class="node" aria-hidden="true" />
      <div class="cp-body">
        <div class="cp-line">
          <div class="cp-main">
            <span class="cp-title">{title}</span>
            {c.kind === 'manual' && <Pill kind="manual">named</Pill>}
            {tool && !c.name.startsWith('before') && <span class="tool">{tool}</span>}
            <div class="muted small">
              <Time iso={c.created_at} now={s.now} /> ·{' '}
              <span class="changed-after">
                {changedAfter === 0
                  ? 'no file changed after it'
                  : `${plural(changedAfter, 'file')} changed after it`}
              </span>{' '}
              · <code>{shortId(c.id)}</code>
            </div>
          </div>
          <div class="cp-actions">
            <button type="button" class="btn small ghost" aria-expanded={open === 'diff'} onClick={showDiff}>
              Diff to now
            </button>
            <button
              type="button"
              class="btn small"
              aria-expanded={open === 'preview'}
              disabled={!active}
              onClick={preview}
            >
              Preview rollback
            </button>
          </div>
        </div>
        {c.annotation && <p class="annotation">{c.annotation}</p>}
        {err && <p class="error">{err}</p>}
        {open === 'diff' && !err && (
          <div class="cp-panel" ref={panel} aria-label={`Diff from ${title} to now`} role="region">
            {!diff ? (
              <p class="muted">Loading…</p>
            ) : !diff.patch ? (
              <p class="muted">The worktree equals this checkpoint.</p>
            ) : (
              <>
                <p class="small">
                  <strong>{plural(diff.files.length, 'file')}</strong> differ between this checkpoint and now:
                </p>
                <ul class="diff-files">
                  {diff.files.map((f) => (
                    <li key={f.path}>
                      <code>{f.path}</code> <span class="muted small">{f.status}</span>{' '}
                      {f.binary ? (
                        <span class="muted small">binary</span>
                      ) : (
                        <span class="file-stats small">
                          <span class="ins">+{f.added}</span> <span class="del">−{f.removed}</span>
                        </span>
                      )}
                    </li>
                  ))}
                </ul>
                <Patch text={diff.patch} mode={s.diffMode} names />
              </>
            )}
          </div>
        )}
        {open === 'preview' && !err && (
          <div class="cp-panel preview" aria-label="Rollback preview">
            {!plan ? (
              <p class="muted">Planning…</p>
            ) : (
              <PlanView plan={plan} onConfirm={confirm} />
            )}
          </div>
        )}
      </div>
    </li>
  );
}

/** One decision of a rollback plan as a line: "a.txt (Edit): accepted → pending again". */
function decisionLine(d: PlanDecision): string {
  const tool = toolLabel({ tool_name: d.tool_name, tool_call_id: d.record_id }).label;
  return `${d.rel_path} (${tool}): ${decisionWords(d.from, d.to)}`;
}

/** Why a decision changes, in a few words. */
function decisionNote(d: PlanDecision): string {
  if (d.to === 'rewound') return 'made after this checkpoint';
  if (d.from === 'rewound') return 'comes back';
  return 'back to its status at this checkpoint';
}

function PlanView({ plan, onConfirm }: { plan: Plan; onConfirm: () => void }) {
  const ops = plan.operations;
  const verbs: Record<OperationType, string> = { restore: 'restore', delete: 'delete', create: 'recreate' };
  const summary = plan.summary ?? [];
  const decisions = plan.decisions ?? [];
  // The plain summary first, then the decisions undone, then the file
  // operations: what a user decides on, before how it is done.
  return (
    <div>
      {summary.length > 0 && (
        <div class="plan-summary">
          {summary.map((x) => (
            <p key={x}>{x}</p>
          ))}
        </div>
      )}
      {decisions.length > 0 && (
        <>
          <p class="small">
            <strong>{plural(decisions.length, 'decision')}</strong> {agree(decisions.length, 'changes|change')}:
          </p>
          <ul class="decisions" aria-label="Decisions the rollback changes">
            {decisions.map((d) => (
              <li key={d.record_id} data-record-id={d.record_id}>
                <code>{d.rel_path}</code>{' '}
                <span class="tool" title={`Tool ${d.tool_name}`}>
                  {toolLabel({ tool_name: d.tool_name, tool_call_id: d.record_id }).label}
                </span>{' '}
                <span class={`pill ${d.from}`}>{statusWord[d.from] ?? d.from}</span> →{' '}
                <span class={`pill ${d.to}`}>{statusWord[d.to] ?? d.to}</span>{' '}
                <span class="muted small">{decisionNote(d)}</span>
              </li>
            ))}
          </ul>
        </>
      )}
      {ops.length === 0 ? (
        <p>Nothing to do: the worktree already equals this checkpoint.</p>
      ) : (
        <>
          <p>
            <strong>{plural(ops.length, 'file operation')}</strong> in the worktree, and the same deltas leave your
            workspace:
          </p>
          <ul class="ops">
            {ops.map((o) => (
              <li key={o.type + o.path}>
                <span class={`op ${o.type}`}>{verbs[o.type] ?? o.type}</span> <code>{o.path}</code>
                {o.record_ids.length > 0 && (
                  <span class="muted small"> · undoes {plural(o.record_ids.length, 'change')}</span>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
      {plan.warnings.map((w) => (
        <p class="warning" key={w}>
          {w}
        </p>
      ))}
      {plan.conflicts.map((x) => (
        <p class="error" key={x.path}>
          Conflict: <code>{x.path}</code>: {x.reason}. It is left as it is.
        </p>
      ))}
      {ops.length > 0 && (
        <button type="button" class="btn danger" onClick={onConfirm}>
          Roll back to here…
        </button>
      )}
    </div>
  );
}

// ---- overlays ---------------------------------------------------------------

function ConfirmDialog({ s }: { s: State }) {
  const ref = useRef<HTMLDialogElement>(null);
  const c = s.confirm;
  const [running, setRunning] = useState(false);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (c && !d.open) d.showModal();
    if (!c && d.open) d.close();
  }, [c]);
  return (
    <dialog ref={ref} class="confirm" aria-label={c?.title} onClose={() => state.confirm && update({ confirm: null })}>
      {c && (
        <form
          method="dialog"
          onSubmit={async (e) => {
            e.preventDefault();
            setRunning(true);
            try {
              await c.run();
            } finally {
              setRunning(false);
              update({ confirm: null });
            }
          }}
        >
          <h2>{c.title}</h2>
          {c.lead?.map((p) => (
            <p key={p} class="lead">
              {p}
            </p>
          ))}
          {c.list && (
            <ul class="dialog-list" aria-label={c.list.label}>
              {c.list.items.map((x) => (
                <li key={x}>{x}</li>
              ))}
            </ul>
          )}
          {c.body.map((p) => (
            <p key={p}>{p}</p>
          ))}
          <div class="dialog-buttons">
            <button type="button" class="btn" onClick={() => update({ confirm: null })} disabled={running}>
              Cancel
            </button>
            {c.choices ? (
              c.choices.map((ch) => (
                <button
                  key={ch.label}
                  type="button"
                  class="btn"
                  title={ch.title}
                  disabled={running}
                  onClick={async () => {
                    setRunning(true);
                    try {
                      await ch.run();
                    } finally {
                      setRunning(false);
                      update({ confirm: null });
                    }
                  }}
                >
                  {ch.label}
                </button>
              ))
            ) : (
              <button type="submit" class={`btn ${c.danger ? 'danger' : 'primary'}`} disabled={running} autofocus>
                {c.confirmLabel}
              </button>
            )}
          </div>
        </form>
      )}
    </dialog>
  );
}

const shortcuts = (advance: boolean): [string, string][] => [
  ['j / k', 'next / previous change'],
  ['a', `accept the selected change${advance ? ', then move to the next pending one' : ''}`],
  ['r', `reject the selected change${advance ? ', then move to the next pending one' : ''}`],
  ['o', 'show or hide its diff'],
  ['J / K', 'next / previous hunk (focus a hunk by a click, too)'],
  ['y', 'accept the hunk in focus'],
  ['n', 'reject the hunk in focus'],
  ['u', 'unified or side-by-side diffs'],
  ['t', 'changes or timeline'],
  ['[ / ]', 'previous / next session'],
  ['?', 'this help'],
];

function Help({ s }: { s: State }) {
  if (!s.help) return null;
  return (
    <div class="help" role="dialog" aria-label="Keyboard shortcuts">
      <h2>Keyboard shortcuts</h2>
      <dl>
        {shortcuts(s.autoAdvance).map(([k, v]) => (
          <div key={k}>
            <dt>
              {k.split(' / ').map((x, i) => (
                <span key={x}>
                  {i > 0 && ' / '}
                  <kbd>{x}</kbd>
                </span>
              ))}
            </dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <label class="setting">
        <input type="checkbox" checked={s.autoAdvance} onChange={(e) => setAutoAdvance(e.currentTarget.checked)} />{' '}
        After <kbd>a</kbd> or <kbd>r</kbd>, move to the next pending change
      </label>
      <button type="button" class="btn small" onClick={() => update({ help: false })}>
        Close
      </button>
    </div>
  );
}

function Toasts({ s }: { s: State }) {
  return (
    <div class="toasts" aria-live="polite">
      {s.toasts.map((t) => (
        <div key={t.id} class={`toast ${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
          <div>
            {t.text}
            {t.hint && <div class="hint">{t.hint}</div>}
          </div>
          {t.action && (
            <button
              type="button"
              class="btn small"
              onClick={() => {
                dismiss(t.id);
                t.action?.run();
              }}
            >
              {t.action.label}
            </button>
          )}
          <button type="button" class="close" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

/** A path as one shell word. */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function LoggedOut({ workspace }: { workspace?: string }) {
  return (
    <div class="logged-out" role="alert">
      <div class="card">
        <Logo />
        <h1>You are logged out</h1>
        <p>This page's login has expired, or the prsm server restarted. To log in again, run:</p>
        <pre>
          <code>prsm ui{workspace ? ` --workspace ${shellWord(workspace)}` : ''}</code>
        </pre>
      </div>
    </div>
  );
}

// ---- the page -----------------------------------------------------------------

export function App({ s }: { s: State }) {
  const sess = s.sessions.find((x) => x.id === s.sid);
  return (
    <>
      <Header s={s} />
      <div class="layout">
        <Sidebar s={s} />
        <main class="main" aria-busy={s.busy > 0}>
          {s.blame ? (
            <BlameFile b={s.blame} now={s.now} />
          ) : sess ? (
            <SessionView s={s} sess={sess} />
          ) : s.sessionsLoaded && s.sid ? (
            <p class="empty">
              No session {s.sid}. <a href="#" onClick={(e) => (e.preventDefault(), history.replaceState(null, '', '/'), location.reload())}>Show the newest</a>
            </p>
          ) : s.sessionsLoaded && s.sessions.length === 0 ? (
            <div class="empty welcome">
              <h1>Nothing to review yet</h1>
              <p>
                Start an agent with <code>prsm run -- AGENT</code> (or <code>prsm session start</code> and the hooks);
                every change it makes appears here, live.
              </p>
            </div>
          ) : (
            <p class="muted pad">Loading…</p>
          )}
        </main>
      </div>
      <ConfirmDialog s={s} />
      <Help s={s} />
      <Toasts s={s} />
      {s.loggedOut && <LoggedOut workspace={s.status?.workspace} />}
    </>
  );
}

export { go };
