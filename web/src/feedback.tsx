// What the user says about a change (issue 46): the note box of a Reject,
// the comment box of a hunk's lines, and, under each change, its notes and
// comments with who said them, when, and what became of them.
// Text is rendered as text (never as HTML), and control characters are
// shown as escapes, so a note cannot draw anything but its words.

import { useState } from 'preact/hooks';
import type { FileChangeRecord } from '../../extension/src/api.gen';
import { deliveryText, kindWord, visibleText } from '../../extension/src/feedbacktext';
import { state } from './store';
import { ago, fullTime } from './util';

/** The notes and comments on one change, oldest first. */
export function FeedbackList({ rec }: { rec: FileChangeRecord }) {
  const items = (state.feedback[rec.session_id] ?? []).filter((f) => f.record_id === rec.id && f.kind !== 'notice');
  if (!items.length) return null;
  return (
    <ul class="feedback-list" aria-label={`Notes on ${rec.rel_path}`}>
      {items.map((f) => (
        <li key={f.id} class={`feedback ${f.state}`} data-feedback={f.id}>
          <div class="feedback-head small">
            <strong>{kindWord[f.kind]}</strong>
            {f.decision && <span class="muted"> on {f.decision}</span>}
            {f.lines && <span class="muted"> · lines {f.lines}</span>}
            <span class="muted">
              {' '}
              · {visibleText(f.author || 'someone')} ·{' '}
              <time dateTime={f.created_at} title={fullTime(f.created_at)}>
                {ago(f.created_at, state.now)}
              </time>
            </span>
            <span class="spacer" />
            <span class={`pill delivery-${f.state}`}>{visibleText(deliveryText(f))}</span>
          </div>
          {f.text && <p class="feedback-text">{visibleText(f.text)}</p>}
        </li>
      ))}
    </ul>
  );
}

/**
 * A box for the user's words: a note on a Reject, or a comment on lines.
 * onSend gets the text (and the lines, when lines is given) and says
 * whether it went through; the box closes then.
 */
export function NoteBox({
  label,
  send,
  lines,
  onSend,
  onCancel,
}: {
  label: string;
  send: string;
  lines?: string;
  onSend: (text: string, lines: string) => Promise<unknown>;
  onCancel: () => void;
}) {
  const [text, setText] = useState('');
  const [range, setRange] = useState(lines ?? '');
  const busy = state.busy > 0;
  return (
    <form
      class="note-box"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        void onSend(text, range);
      }}
    >
      <textarea
        aria-label={label}
        rows={3}
        placeholder="What the agent should hear"
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => e.key === 'Escape' && onCancel()}
      />
      <div class="note-actions">
        {lines !== undefined && (
          <label class="small">
            Lines{' '}
            <input
              class="note-lines"
              size={8}
              value={range}
              onInput={(e) => setRange((e.target as HTMLInputElement).value)}
            />
          </label>
        )}
        <span class="spacer" />
        <button type="button" class="btn small" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class={`btn small ${lines === undefined ? 'reject' : ''}`} disabled={busy}>
          {send}
        </button>
      </div>
    </form>
  );
}
