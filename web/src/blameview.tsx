// The blame view of a workspace file (issue 47): its lines as they are in
// the workspace now, and beside each run of lines who wrote it: the agent
// and its tool, when, what became of the change (pending, accepted,
// committed), the turn's prompt in the title; or "you". The file's lines
// and every agent-given string are drawn as text, never as HTML, with
// control bytes escaped (the words come from extension/src/blametext.ts,
// which the extension's line blame shares).

import type { BlameOrigin } from '../../extension/src/api.gen';
import { blameRuns, originOf, originTitle, promptLine, statusText, whoLabel } from '../../extension/src/blametext';
import { visibleText } from '../../extension/src/feedbacktext';
import { closeBlame, loadBlame, type BlameView } from './store';
import { ago, fullTime, plural } from './util';

function Who({ o, now }: { o: BlameOrigin | undefined; now: number }) {
  if (!o) return <span class="blame-you">you</span>;
  return (
    <>
      <span class="blame-agent">{whoLabel(o)}</span>
      <span class="blame-when muted small">
        <time dateTime={o.time} title={fullTime(o.time)}>
          {ago(o.time, now)}
        </time>{' '}
        <span class={`pill ${o.status}`}>{statusText(o)}</span>
      </span>
      {o.prompt && <span class="blame-prompt muted small">{promptLine(o.prompt)}</span>}
    </>
  );
}

export function BlameFile({ b, now }: { b: BlameView; now: number }) {
  const data = b.data;
  const runs = data ? blameRuns(data) : [];
  const agentLines = data?.lines?.filter((l) => l.origin >= 0).length ?? 0;
  return (
    <section class="blame" aria-label={`Blame of ${b.path}`}>
      <div class="blame-head">
        <h1>
          Blame <code>{b.path}</code>
        </h1>
        {data && (
          <span class="muted small">
            {plural(data.lines?.length ?? 0, 'line')}: {agentLines === 1 ? '1 by an agent' : `${agentLines} by agents`},{' '}
            {(data.lines?.length ?? 0) - agentLines} by you
          </span>
        )}
        <span class="spacer" />
        <button type="button" class="btn small" onClick={() => void loadBlame()} disabled={b.loading}>
          Refresh
        </button>
        <button type="button" class="btn small" onClick={closeBlame}>
          Close
        </button>
      </div>
      {b.error && (
        <p class="warning" role="alert">
          {b.error}
        </p>
      )}
      {data?.warnings?.map((w) => (
        <p class="warning small" key={w}>
          {visibleText(w)}
        </p>
      ))}
      {!data && !b.error && <p class="muted pad">Loading…</p>}
      {data && (
        <table class="blame-table">
          <tbody>
            {runs.map((run) => {
              const o = originOf(data, run.origin);
              return run.lines.map((l, i) => (
                <tr
                  key={l.line}
                  class={`blame-line ${o ? 'by-agent' : 'by-you'} ${i === 0 ? 'run-start' : ''}`}
                  data-line={l.line}
                  data-who={o ? whoLabel(o) : 'you'}
                >
                  {i === 0 && (
                    <td class="blame-who" rowSpan={run.lines.length} title={originTitle(o)}>
                      <Who o={o} now={now} />
                    </td>
                  )}
                  <td class="blame-no">{l.line}</td>
                  <td class="blame-text">
                    <code>{visibleText(l.text)}</code>
                  </td>
                </tr>
              ));
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
