// How blame reads (blametext.ts, shared with the review page) and the
// extension's hover of a line.

import { describe, expect, it } from 'vitest';

import type { Blame, BlameOrigin } from '../src/api.gen';
import { blameHover } from '../src/blame';
import {
  annotationText,
  blameRuns,
  originAtLine,
  originTitle,
  plainTime,
  promptLine,
  shortAgo,
  statusText,
  whoLabel,
  YOU,
} from '../src/blametext';

const T0 = Date.parse('2026-11-29T12:00:00Z');

function origin(p: Partial<BlameOrigin> = {}): BlameOrigin {
  return {
    source: 'record',
    session_id: 'sess1',
    agent_id: 'claude',
    record_id: 'tc1',
    tool_name: 'Edit',
    tool_call_id: 'toolu_01',
    turn: 2,
    prompt: 'make two loud',
    time: '2026-11-29T11:55:00Z',
    status: 'pending',
    ...p,
  };
}

const blame: Blame = {
  path: 'f.txt',
  lines: [
    { line: 1, text: 'one', origin: YOU },
    { line: 2, text: 'TWO', origin: 0 },
    { line: 3, text: 'THREE', origin: 0 },
    { line: 4, text: 'four', origin: YOU },
    { line: 5, text: 'five', origin: 1 },
  ],
  origins: [origin(), origin({ agent_id: 'codex', tool_name: 'Bash', status: 'accepted' })],
};

describe('blame runs', () => {
  it('groups consecutive lines of one origin', () => {
    expect(blameRuns(blame).map((r) => [r.start, r.end, r.origin, r.lines.length])).toEqual([
      [1, 1, YOU, 1],
      [2, 3, 0, 2],
      [4, 4, YOU, 1],
      [5, 5, 1, 1],
    ]);
  });

  it('starts a new run where the lines are not consecutive (a -L range) and copes with no lines', () => {
    const gap: Blame = { path: 'f', lines: [{ line: 1, text: 'a', origin: 0 }, { line: 3, text: 'b', origin: 0 }], origins: [origin()] };
    expect(blameRuns(gap).map((r) => [r.start, r.end])).toEqual([[1, 1], [3, 3]]);
    expect(blameRuns({ lines: null })).toEqual([]);
  });

  it('finds the origin of a line: an agent, or undefined for you and for lines it does not hold', () => {
    expect(originAtLine(blame, 2)?.agent_id).toBe('claude');
    expect(originAtLine(blame, 5)?.agent_id).toBe('codex');
    expect(originAtLine(blame, 1)).toBeUndefined();
    expect(originAtLine(blame, 99)).toBeUndefined();
  });
});

describe('blame words', () => {
  it('names the agent and its tool, or you', () => {
    expect(whoLabel(origin())).toBe('claude · Edit');
    expect(whoLabel(origin({ agent_id: '', tool_name: '' }))).toBe('agent');
    expect(whoLabel(undefined)).toBe('you');
  });

  it('says the review state, with the commit once there is one', () => {
    expect(statusText(origin())).toBe('pending review');
    expect(statusText(origin({ status: 'accepted' }))).toBe('accepted');
    expect(statusText(origin({ status: 'partial' }))).toBe('partly accepted');
    expect(statusText(origin({ status: 'committed', commit: '0123456789abcdef' }))).toBe('committed 0123456');
    expect(statusText(origin({ status: 'accepted', commit: '0123456789abcdef' }))).toBe('accepted, committed 0123456');
  });

  it('puts a prompt on one line, escaped and shortened', () => {
    expect(promptLine('  fix\n\tthe   bug ')).toBe('fix the bug');
    expect(promptLine('red\u001b[31m')).toBe('red^[[31m');
    const long = promptLine('x'.repeat(100), 10);
    expect(long).toBe('xxxxxxxxx…');
    expect(long.length).toBe(10);
  });

  it('writes a time to the second, with its zone', () => {
    expect(plainTime('2026-11-29T21:53:19.583864098Z')).toBe('2026-11-29 21:53:19 UTC');
    expect(plainTime('2026-11-29T21:53:19+02:00')).toBe('2026-11-29 21:53:19 +02:00');
    expect(plainTime('yesterday')).toBe('yesterday');
  });

  it('says how long ago, never in the future', () => {
    expect(shortAgo('2026-11-29T11:59:30Z', T0)).toBe('just now');
    expect(shortAgo('2026-11-29T12:00:30Z', T0)).toBe('just now');
    expect(shortAgo('2026-11-29T11:55:00Z', T0)).toBe('5m ago');
    expect(shortAgo('2026-11-29T09:00:00Z', T0)).toBe('3h ago');
    expect(shortAgo('2026-11-27T12:00:00Z', T0)).toBe('2d ago');
    expect(shortAgo('not a time', T0)).toBe('');
  });

  it('annotates a line in short: who, when, the state and the prompt; or you', () => {
    expect(annotationText(origin(), T0)).toBe('claude · Edit, 5m ago, pending review · "make two loud"');
    expect(annotationText(origin({ prompt: '' }), T0)).toBe('claude · Edit, 5m ago, pending review');
    expect(annotationText(undefined, T0)).toBe('You · not written by an agent');
  });

  it('titles a run with every detail, the prompt whole and escaped', () => {
    const t = originTitle(origin({ prompt: 'line one\nline two \u202e', model_id: 'claude-opus', commit: 'abc' }));
    expect(t.split('\n')).toEqual([
      'Agent: claude',
      'Tool call: Edit toolu_01',
      'Model: claude-opus',
      'Turn: 2',
      'Time: 2026-11-29 11:55:00 UTC',
      'Review: pending review',
      'Session: sess1',
      'Change: tc1',
      'Prompt: line one',
      'line two <U+202E>',
    ]);
    expect(originTitle(undefined)).toBe('You: no agent change explains these lines');
    expect(originTitle(origin({ source: 'note', status: 'committed', turn: 0, record_id: '' }))).toContain("From: the commit's Agent Trace note");
  });
});

describe('the hover of a line', () => {
  it('names the agent, the tool call, the prompt and the review state, as text', () => {
    const md = blameHover(origin({ prompt: 'use **bold** <b>x</b>' })).value;
    expect(md).toContain('**prsm blame**: claude · Edit');
    expect(md).toContain('**Tool call:** Edit toolu_01');
    expect(md).toContain('**Review:** pending review');
    // The stub's appendText keeps the text as it is: the prompt went in as text, not markdown.
    expect(md).toContain('**Prompt:** use **bold** <b>x</b>');
  });

  it('says you wrote a line no change explains', () => {
    expect(blameHover(undefined).value).toBe('**prsm blame**: you wrote this line: no agent change explains it.');
  });
});
