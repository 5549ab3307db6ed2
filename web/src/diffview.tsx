// Diffs: diff2html draws unified or side-by-side diffs, highlight.js colours
// the code, both bundled at build time.

import { createTwoFilesPatch } from 'diff';
import { Diff2HtmlUI } from 'diff2html/lib-esm/ui/js/diff2html-ui-slim';
import { ColorSchemeType } from 'diff2html/lib-esm/types';
import { useEffect, useRef, useState } from 'preact/hooks';

import { api } from './api';
import type { FileChangeRecord, Hunk, WorkspaceFile } from '../../extension/src/api.gen';
import { NoteBox } from './feedback';
import { hunkLines, splitHunks } from './hunks';
import { actions, hunkName, state, type DiffMode } from './store';
import { imageType, sizeChange, underReview } from './util';

/** Diffs above this many lines wait for a click before they are drawn. */
const bigDiffLines = 4000;

/** Fetched diffs, by session and record id: a record's diff never changes. */
const diffCache = new Map<string, string>();

/** names: show each file's name above its diff (a diff of several files). */
function Patch({ text, mode, labels, names }: { text: string; mode: DiffMode; labels?: [string, string]; names?: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  const lines = text.split('\n').length;
  const [forced, setForced] = useState(false);
  const big = lines > bigDiffLines && !forced;
  useEffect(() => {
    const el = ref.current;
    if (!el || big) return;
    const ui = new Diff2HtmlUI(el, text, {
      outputFormat: mode,
      drawFileList: false,
      matching: 'lines',
      highlight: true,
      colorScheme: ColorSchemeType.AUTO,
      fileContentToggle: false,
      fileListToggle: false,
      stickyFileHeaders: false,
      synchronisedScroll: true,
      smartSelection: true,
      renderNothingWhenEmpty: false,
    });
    ui.draw();
    return () => {
      el.replaceChildren();
    };
  }, [text, mode, big]);
  return (
    <div class={`patch ${names ? 'with-names' : ''}`}>
      {labels && (
        <div class={`patch-labels ${mode === 'side-by-side' ? 'split' : ''}`}>
          <span class="del-label">{labels[0]}</span>
          <span class="ins-label">{labels[1]}</span>
        </div>
      )}
      {big ? (
        <p class="muted pad">
          A large diff ({lines.toLocaleString()} lines).{' '}
          <button type="button" class="btn small" onClick={() => setForced(true)}>
            Show it
          </button>
        </p>
      ) : (
        <div ref={ref} />
      )}
    </div>
  );
}

export { Patch };

/**
 * useNear says whether the element has come near the viewport (once true,
 * it stays true): a session with hundreds of changes fetches and draws only
 * the diffs the reader gets to.
 */
function useNear(ref: { current: Element | null }): boolean {
  const [near, setNear] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (near || !el) return;
    if (typeof IntersectionObserver === 'undefined') {
      setNear(true);
      return;
    }
    const io = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && setNear(true), {
      rootMargin: '1200px 0px',
    });
    io.observe(el);
    return () => io.disconnect();
  }, [near]);
  return near;
}

/** The diff of one record, fetched once, when it comes near the viewport. */
export function RecordDiff({ rec, mode }: { rec: FileChangeRecord; mode: DiffMode }) {
  const key = `${rec.session_id}/${rec.id}`;
  const [text, setText] = useState<string | null>(diffCache.get(key) ?? null);
  const [err, setErr] = useState('');
  const box = useRef<HTMLDivElement>(null);
  const near = useNear(box);
  useEffect(() => {
    if (text !== null || !near || rec.binary) return;
    let live = true;
    api.diff(rec.session_id, rec.id).then(
      (t) => {
        diffCache.set(key, t);
        if (live) setText(t);
      },
      (e: Error) => live && setErr(e.message),
    );
    return () => {
      live = false;
    };
  }, [key, near]);
  if (rec.binary) return <BinaryView rec={rec} />;
  if (err) return <p class="error pad">Could not load the diff: {err}</p>;
  if (text === null) {
    return (
      <div ref={box} class="muted pad diff-placeholder">
        Loading the diff…
      </div>
    );
  }
  if (!/^(@@|Binary files)/m.test(text)) {
    return <p class="muted pad">{emptyDiffText(rec)}</p>;
  }
  if (rec.hunks?.length && underReview(rec)) {
    return <HunkedDiff rec={rec} text={text} mode={mode} />;
  }
  return <Patch text={text} mode={mode} />;
}

/**
 * A record under review, drawn hunk by hunk: each hunk (a -U0 block of
 * changed lines, as the hunk routes number them) with its own head, its
 * state and, while it is pending, its Accept hunk / Reject hunk buttons.
 * Each hunk is focusable; y and n decide the hunk in focus (main.tsx).
 */
function HunkedDiff({ rec, text, mode }: { rec: FileChangeRecord; text: string; mode: DiffMode }) {
  const parts = splitHunks(text, rec.hunks);
  const cascaded = state.cascaded[`${rec.session_id}/${rec.id}`] ?? [];
  return (
    <div class="hunks">
      {cascaded.length > 0 && (
        <p class="cascade-note pad" role="note">
          Rejecting a hunk here also rejected{' '}
          {cascaded.map((c, i) => (
            <span key={`${c.id}/${c.index}`}>
              {i > 0 && ', '}
              <code title={`record ${c.id}, hunk index ${c.index}`}>{hunkName(rec.session_id, c)}</code>
            </span>
          ))}
          : later changes built on its lines.
        </p>
      )}
      {/* The diff's blocks did not match the hunks one for one: the whole diff, then the hunks by their lines. */}
      {!parts && <Patch text={text} mode={mode} />}
      {rec.hunks.map((h, i) => (
        <HunkView key={h.index} rec={rec} h={h} of={rec.hunks.length} text={parts?.[i].text} mode={mode} />
      ))}
    </div>
  );
}

function HunkView({ rec, h, of, text, mode }: { rec: FileChangeRecord; h: Hunk; of: number; text?: string; mode: DiffMode }) {
  const decide = h.status === 'pending' && underReview(rec);
  const busy = state.busy > 0;
  const where =
    h.new_lines > 0 ? hunkLines(h.new_start, h.new_lines) : `${hunkLines(h.old_start, h.old_lines)} removed`;
  const [box, setBox] = useState<'' | 'reject' | 'comment'>('');
  // The buttons that open the note box of a Reject, or the comment box.
  const opener = (which: 'reject' | 'comment', title: string, label: string) => (
    <button type="button" class="btn small" title={title} disabled={busy} onClick={() => setBox(which)}>
      {label}
    </button>
  );
  return (
    <section
      class={`hunk ${h.status}`}
      data-hunk={h.index}
      tabIndex={0}
      aria-label={`Hunk ${h.index + 1} of ${of}, ${where}, ${h.status}`}
    >
      <div class="hunk-head">
        <span class="hunk-title">
          Hunk {h.index + 1} of {of}
        </span>
        <span class="muted small">{where}</span>
        <span class="spacer" />
        {h.status !== 'pending' && <span class={`pill ${h.status}`}>{h.status}</span>}
        {decide && (
          <span class="review-buttons">
            <button
              type="button"
              class="btn accept small"
              title="Keep these lines (y on the hunk in focus)"
              disabled={busy}
              onClick={() => void actions.acceptHunk(rec, h.index)}
            >
              Accept hunk
            </button>
            <button
              type="button"
              class="btn reject small"
              title="Take these lines out (n on the hunk in focus)"
              disabled={busy}
              onClick={() => void actions.rejectHunk(rec, h.index)}
            >
              Reject hunk
            </button>
            {opener('reject', 'Take these lines out and tell the agent why', 'Reject hunk with note…')}
          </span>
        )}
        {opener('comment', 'Comment on these lines: the agent hears it, nothing is decided', 'Comment…')}
      </div>
      {(box === 'comment' || (box === 'reject' && decide)) && (
        <NoteBox
          key={box}
          label={`${box === 'reject' ? 'Note on rejecting' : 'Comment on'} hunk ${h.index + 1} of ${rec.rel_path}`}
          send={box === 'reject' ? 'Reject hunk with this note' : 'Comment'}
          lines={box === 'comment' ? commentLines(h) : undefined}
          onSend={async (note, lines) =>
            (await (box === 'reject' ? actions.rejectHunk(rec, h.index, note) : actions.comment(rec, lines, note))) &&
            setBox('')
          }
          onCancel={() => setBox('')}
        />
      )}
      {text && <Patch text={text} mode={mode} />}
    </section>
  );
}

/**
 * A hunk's lines on the new side as the comments route takes them: "12" or "12-18"; a removal has none:
 * the line before it (line 1 at the top), as the extension's hunkCommentLines names it.
 */
function commentLines(h: Hunk): string {
  if (h.new_lines <= 0) return String(Math.max(h.new_start, 1));
  return h.new_lines === 1 ? String(h.new_start) : `${h.new_start}-${h.new_start + h.new_lines - 1}`;
}

function emptyDiffText(r: FileChangeRecord): string {
  if (r.change_type === 'create') return 'A new, empty file.';
  if (r.change_type === 'delete') return 'An empty file was deleted.';
  if (r.mode_before !== r.mode_after)
    return `Only the file mode changed: ${r.mode_before.toString(8)} → ${r.mode_after.toString(8)}.`;
  return 'No change in content.';
}

/** A binary record: sizes, and a before/after preview for images. */
function BinaryView({ rec }: { rec: FileChangeRecord }) {
  // A side too large to keep has no content to preview.
  const type = rec.note ? undefined : imageType(rec.rel_path);
  const [urls, setUrls] = useState<{ before?: string; after?: string }>({});
  useEffect(() => {
    if (!type) return;
    const made: string[] = [];
    let live = true;
    const side = async (s: 'before' | 'after') => {
      const blob = await api.content(rec.session_id, rec.id, s);
      const url = URL.createObjectURL(new Blob([blob], { type }));
      made.push(url);
      return url;
    };
    Promise.all([
      rec.change_type === 'create' ? undefined : side('before'),
      rec.change_type === 'delete' ? undefined : side('after'),
    ]).then(
      ([before, after]) => live && setUrls({ before, after }),
      () => {},
    );
    return () => {
      live = false;
      made.forEach((u) => URL.revokeObjectURL(u));
    };
  }, [rec.id, type]);
  const sizes = sizeChange(rec.change_type, rec.size_before, rec.size_after);
  return (
    <div class="binary pad">
      <p>
        <strong>Binary file</strong> <span class="muted">({sizes})</span>
      </p>
      {rec.note && <p class="muted note">{rec.note}</p>}
      {type && (urls.before || urls.after) && (
        <div class="image-compare">
          {urls.before && (
            <figure>
              <img src={urls.before} alt={`${rec.rel_path} before`} />
              <figcaption>Before</figcaption>
            </figure>
          )}
          {urls.after && (
            <figure>
              <img src={urls.after} alt={`${rec.rel_path} after`} />
              <figcaption>After</figcaption>
            </figure>
          )}
        </div>
      )}
    </div>
  );
}

/**
 * A conflict: the user changed the file in the workspace after the agent
 * read it, and the two edits overlap. prsm left the workspace file as it
 * is; this shows both sides plainly, the user's on the left.
 */
export function ConflictView({ rec, mode }: { rec: FileChangeRecord; mode: DiffMode }) {
  const [ws, setWs] = useState<WorkspaceFile | null>(null);
  const [agent, setAgent] = useState<string | null>(rec.new_content);
  const [err, setErr] = useState('');
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    api.workspaceFile(rec.session_id, rec.id).then(
      (w) => live && setWs(w),
      (e: Error) => live && setErr(e.message),
    );
    if (agent === null && rec.change_type !== 'delete' && !rec.binary) {
      api.content(rec.session_id, rec.id, 'after').then(
        async (b) => live && setAgent(await b.text()),
        (e: Error) => live && setErr(e.message),
      );
    }
    return () => {
      live = false;
    };
  }, [rec.id, n]);
  let body;
  if (err) body = <p class="error pad">Could not load both sides: {err}</p>;
  else if (!ws) body = <p class="muted pad">Loading both sides…</p>;
  else if (rec.binary || ws.binary) body = <p class="pad">Both sides are binary; compare them in your editor.</p>;
  else {
    const mine = ws.present ? (ws.content ?? '') : '';
    const theirs = rec.change_type === 'delete' ? '' : (agent ?? '');
    if (mine === theirs) {
      body = <p class="pad">Your workspace file now equals the agent's version.</p>;
    } else {
      const patch = createTwoFilesPatch(
        ws.present ? `a/${rec.rel_path}` : '/dev/null',
        rec.change_type === 'delete' ? '/dev/null' : `b/${rec.rel_path}`,
        mine,
        theirs,
        '',
        '',
        { context: 3 },
      );
      body = (
        <Patch
          text={`diff --git a/${rec.rel_path} b/${rec.rel_path}\n${patch.replace(/^Index:.*\n=+\n/, '')}`}
          mode={mode}
          labels={[
            ws.present ? 'Your workspace (left as it is)' : 'Your workspace: the file is gone',
            rec.change_type === 'delete' ? "Agent's version: deleted" : "Agent's version (in its worktree)",
          ]}
        />
      );
    }
  }
  return (
    <div class="conflict">
      <div class="conflict-head" role="note">
        <strong>Conflict.</strong> You edited <code>{rec.rel_path}</code> in your workspace while the agent
        changed the same lines. prsm left your file exactly as it is. <strong>Keep mine</strong> drops the agent's
        change; <strong>Take agent's</strong> makes your file the agent's version; <strong>Merge in editor</strong>{' '}
        puts both into your file between conflict markers.{' '}
        <button type="button" class="btn small ghost" onClick={() => setN(n + 1)}>
          Reload both sides
        </button>
      </div>
      {body}
      <details class="agent-change">
        <summary>The agent's own change (before → after)</summary>
        <RecordDiff rec={rec} mode={mode} />
      </details>
    </div>
  );
}
