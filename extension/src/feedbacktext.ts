// How the user's notes and comments (issue 46) read, for the extension and
// the review page alike: no vscode here, so that both can import it.

import type { Feedback, Hunk } from './api.gen';

/**
 * A note's text as prsm shows it (the CLI's sync.Visible): control bytes
 * but newline and tab in caret notation ("^[" for ESC, "^?" for DEL), and
 * C1 controls, line separators and bidi overrides as "<U+202E>".
 */
export function visibleText(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g, (c) => {
    const n = c.charCodeAt(0);
    if (n < 0x20) return '^' + String.fromCharCode(n + 0x40);
    if (n === 0x7f) return '^?';
    return `<U+${n.toString(16).toUpperCase().padStart(4, '0')}>`;
  });
}

/** An item's delivery state as a person reads it, as the server explains it (feedback.Status). */
export function deliveryText(f: Feedback): string {
  switch (f.state) {
    case 'delivered':
      return f.via ? `delivered with ${f.via}` : 'delivered';
    case 'undeliverable':
      return `not delivered: ${f.why ?? ''}`;
    default:
      return f.why ? `queued: ${f.why}` : 'queued';
  }
}

export const kindWord: Record<Feedback['kind'], string> = { note: 'Note', comment: 'Comment', notice: 'Notice' };

/**
 * The notes and comments on a change as plain lines (a tooltip's): who,
 * when, on what, the delivery state, then the words, escaped.
 */
export function feedbackLines(items: readonly Feedback[]): string[] {
  return items
    .filter((f) => f.kind !== 'notice')
    .flatMap((f) => [
      `${kindWord[f.kind]}${f.decision ? ` on ${f.decision}` : ''}${f.lines ? `, lines ${f.lines}` : ''} by ${visibleText(f.author || 'someone')}, ${f.created_at}: ${visibleText(deliveryText(f))}`,
      ...(f.text ? visibleText(f.text).split('\n').map((l) => `  ${l}`) : []),
    ]);
}

/**
 * A hunk's lines on the new side as the comments route takes them: "12" or
 * "12-18" (from 1). A pure removal has no new lines: the line git -U0
 * names for it (the one before it, line 1 at the top of the file), as the
 * review page's comment on a hunk does.
 */
export function hunkCommentLines(h: Pick<Hunk, 'new_start' | 'new_lines'>): string {
  if (h.new_lines <= 0) return String(Math.max(h.new_start, 1));
  return h.new_lines === 1 ? String(h.new_start) : `${h.new_start}-${h.new_start + h.new_lines - 1}`;
}
