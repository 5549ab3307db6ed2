// How `prsm blame` (issue 47) reads, for the extension's line blame and the
// review page's blame view alike: no vscode here, so that both can import
// it. Every string that came from an agent or a file (a prompt, an agent's
// name) goes through visibleText, and the callers render it as text.

import type { Blame, BlameLine, BlameOrigin } from './api.gen';
import { visibleText } from './feedbacktext';

/** The origin index of a line the user wrote: no record or note explains it. */
export const YOU = -1;

/** A run of lines with one origin: first and last line, 1-based, inclusive. */
export interface BlameRun {
  start: number;
  end: number;
  origin: number;
  lines: BlameLine[];
}

/** The blame's lines cut into runs of consecutive lines with one origin. */
export function blameRuns(b: Pick<Blame, 'lines'>): BlameRun[] {
  const runs: BlameRun[] = [];
  for (const l of b.lines ?? []) {
    const last = runs[runs.length - 1];
    if (last && last.origin === l.origin && last.end + 1 === l.line) {
      last.end = l.line;
      last.lines.push(l);
    } else {
      runs.push({ start: l.line, end: l.line, origin: l.origin, lines: [l] });
    }
  }
  return runs;
}

/** The origin of an index; undefined for "you" (or an index the answer does not hold). */
export function originOf(b: Pick<Blame, 'origins'>, index: number): BlameOrigin | undefined {
  return index < 0 ? undefined : (b.origins ?? [])[index];
}

/** The origin of line n (1-based); undefined for "you" or a line the blame does not hold. */
export function originAtLine(b: Pick<Blame, 'lines' | 'origins'>, n: number): BlameOrigin | undefined {
  const l = (b.lines ?? []).find((x) => x.line === n);
  return l ? originOf(b, l.origin) : undefined;
}

/** The agent that wrote lines, as a person reads it: "claude", or "agent" when it gave no name. */
export function agentName(o: BlameOrigin): string {
  return visibleText(o.agent_id || 'agent');
}

/** Who wrote lines in a few words: "claude · Edit", or "you". */
export function whoLabel(o: BlameOrigin | undefined): string {
  if (!o) return 'you';
  return o.tool_name ? `${agentName(o)} · ${visibleText(o.tool_name)}` : agentName(o);
}

/** The review state of an origin's lines: "pending review", "accepted", "committed 1a2b3c4". */
export function statusText(o: BlameOrigin): string {
  switch (o.status) {
    case 'pending':
      return 'pending review';
    case 'partial':
      return 'partly accepted';
    case 'committed':
      return o.commit ? `committed ${o.commit.slice(0, 7)}` : 'committed';
    default:
      return o.commit ? `${visibleText(o.status)}, committed ${o.commit.slice(0, 7)}` : visibleText(o.status);
  }
}

/** The longest prompt summary shown on one line; longer ones end in "…". */
export const PROMPT_MAX = 60;

/** A prompt on one line: blanks folded, control bytes escaped, at most max characters. */
export function promptLine(prompt: string, max = PROMPT_MAX): string {
  const t = visibleText(prompt.trim().replace(/\s+/g, ' '));
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** How long ago t was, shortly: "just now", "5m ago", "3h ago", "2d ago". */
export function shortAgo(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/** An RFC 3339 time as a person reads it: "2026-11-29 11:55:00 UTC" (to the second). */
export function plainTime(iso: string): string {
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d)$/.exec(iso);
  return m ? `${m[1]} ${m[2]} ${m[3] === 'Z' ? 'UTC' : m[3]}` : iso;
}

/** The text after a line (the extension's annotation of the cursor's line). */
export function annotationText(o: BlameOrigin | undefined, now: number): string {
  if (!o) return 'You · not written by an agent';
  const parts = [whoLabel(o), shortAgo(o.time, now), statusText(o)].filter(Boolean);
  const p = o.prompt ? promptLine(o.prompt, 50) : '';
  return p ? `${parts.join(', ')} · "${p}"` : parts.join(', ');
}

/**
 * The details of an origin as label and value pairs, in the order a hover
 * or a tooltip lists them; values are escaped text. A prompt keeps its
 * lines.
 */
export function originDetails(o: BlameOrigin): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ['Agent', agentName(o)],
    ['Tool call', `${visibleText(o.tool_name || 'change')} ${visibleText(o.tool_call_id)}`.trim()],
  ];
  if (o.model_id) rows.push(['Model', visibleText(o.model_id)]);
  if (o.turn > 0) rows.push(['Turn', String(o.turn)]);
  rows.push(['Time', plainTime(o.time)]);
  rows.push(['Review', statusText(o)]);
  rows.push(['Session', visibleText(o.session_id)]);
  if (o.record_id) rows.push(['Change', visibleText(o.record_id)]);
  if (o.source === 'note') rows.push(['From', 'the commit\'s Agent Trace note']);
  if (o.prompt) rows.push(['Prompt', visibleText(o.prompt)]);
  return rows;
}

/** An origin as plain lines (a title attribute's): "Agent: claude", …; "you" for the user. */
export function originTitle(o: BlameOrigin | undefined): string {
  if (!o) return 'You: no agent change explains these lines';
  return originDetails(o)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');
}
