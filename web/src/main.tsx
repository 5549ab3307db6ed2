// The review page: entry point. State lives in store.ts, views in views.tsx.

import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { actions, closeBlame, connectEvents, go, isOpen, loadAll, readRoute, recordOf, setDiffMode, setOpen, state, subscribe, toast, update } from './store';
import { inConflict, mergingInEditor, splitRewound } from './util';
import { App, byFile, rewoundKey } from './views';
import './style.css';

function Root() {
  const [, tick] = useState(0);
  useEffect(() => subscribe(() => tick((n) => n + 1)), []);
  return <App s={state} />;
}

/**
 * The records of the current session in the order the page shows them; the
 * rewound ones, last, only while their group is open.
 */
function visibleRecords() {
  const sid = state.sid;
  const recs = sid ? state.records[sid] : undefined;
  if (!sid || !recs || state.tab !== 'changes') return [];
  const { live, rewound } = splitRewound(recs);
  return [...byFile(live).flatMap(([, list]) => list), ...(state.open[rewoundKey(sid)] ? rewound : [])];
}

function moveCursor(step: number) {
  const list = visibleRecords();
  if (!list.length) return;
  let i = list.findIndex((r) => r.id === state.cursor);
  if (i < 0) {
    const firstPending = list.findIndex((r) => r.status === 'pending');
    i = step > 0 ? Math.max(firstPending, 0) : list.length - 1;
  } else {
    i = Math.min(list.length - 1, Math.max(0, i + step));
  }
  selectRecord(list[i].id);
}

function selectRecord(id: string) {
  update({ cursor: id });
  requestAnimationFrame(() => {
    const calm = matchMedia('(prefers-reduced-motion: reduce)').matches;
    document
      .querySelector(`[data-record-id="${CSS.escape(id)}"]`)
      ?.scrollIntoView({ block: 'nearest', behavior: calm ? 'auto' : 'smooth' });
  });
}

/** After a/r: on to the next pending change, so a review is a run of keys. */
function advance(fromId: string) {
  const list = visibleRecords();
  const i = list.findIndex((r) => r.id === fromId);
  const next = list.slice(i + 1).find((r) => r.status === 'pending' && r.rel_path !== list[i]?.rel_path) ??
    list.slice(i + 1).find((r) => r.status === 'pending');
  if (next) selectRecord(next.id);
}

// ---- hunks: the one in focus is the one y and n decide -----------------

const hunkSel = 'article[data-record-id] [data-hunk]';

function hunkKey(el: Element): { id: string; index: number } | undefined {
  const id = el.closest<HTMLElement>('article[data-record-id]')?.dataset.recordId;
  const index = Number((el as HTMLElement).dataset.hunk);
  return id === undefined || Number.isNaN(index) ? undefined : { id, index };
}

function focusHunk(el: HTMLElement) {
  el.focus({ preventScroll: true });
  el.scrollIntoView({ block: 'nearest', behavior: 'auto' });
  const k = hunkKey(el);
  if (k && state.cursor !== k.id) update({ cursor: k.id });
}

/** J / K: the next or previous hunk of the page; the first or last when none has focus. */
function moveHunk(step: number) {
  const all = [...document.querySelectorAll<HTMLElement>(hunkSel)];
  if (!all.length) return;
  const at = focusedHunk();
  const i = at ? all.indexOf(at) : -1;
  const next = i < 0 ? (step > 0 ? all[0] : all[all.length - 1]) : all[Math.min(all.length - 1, Math.max(0, i + step))];
  focusHunk(next);
}

function focusedHunk(): HTMLElement | null {
  return document.activeElement?.closest<HTMLElement>(hunkSel) ?? null;
}

/** y / n: accept or reject the hunk in focus, then on to the next hunk still pending. */
function decideFocusedHunk(accept: boolean) {
  const el = focusedHunk();
  const k = el && hunkKey(el);
  const r = k && recordOf(k.id);
  if (!el || !k || !r) {
    toast('info', 'Focus a hunk first: J and K move between the hunks of pending changes, or click one.');
    return;
  }
  const h = r.hunks[k.index];
  if (!h || h.status !== 'pending') {
    toast('info', `That hunk is already ${h?.status ?? 'gone'}.`);
    return;
  }
  const all = [...document.querySelectorAll<HTMLElement>(hunkSel)];
  const later = all.slice(all.indexOf(el) + 1).find((x) => x.querySelector('button.reject'));
  const next = later && hunkKey(later);
  void (accept ? actions.acceptHunk(r, k.index) : actions.rejectHunk(r, k.index)).then((ok) => {
    if (!ok || !next) return;
    requestAnimationFrame(() => {
      const n = document.querySelector<HTMLElement>(
        `article[data-record-id="${CSS.escape(next.id)}"] [data-hunk="${next.index}"]`,
      );
      if (n) focusHunk(n);
    });
  });
}

function switchSession(step: number) {
  const list = [...state.sessions].reverse();
  if (!list.length) return;
  const i = list.findIndex((s) => s.id === state.sid);
  const next = list[Math.min(list.length - 1, Math.max(0, i + step))];
  go(next.id, state.tab);
}

document.addEventListener('keydown', (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
  const t = e.target as HTMLElement | null;
  // Keys are text in a text field; a checkbox (the help's setting) keeps them.
  const typing = t && (t.isContentEditable || /^(TEXTAREA|SELECT)$/.test(t.tagName) ||
    (t.tagName === 'INPUT' && (t as HTMLInputElement).type !== 'checkbox'));
  if (typing) return;
  if (state.confirm || state.loggedOut) return;
  const cur = state.cursor ? recordOf(state.cursor) : undefined;
  switch (e.key) {
    case 'j':
      moveCursor(1);
      break;
    case 'k':
      moveCursor(-1);
      break;
    case 'a':
    case 'r':
      if (!cur) {
        toast('info', 'Select a change first: j and k move between changes.');
        break;
      }
      if (cur.status === 'rewound') {
        toast('info', 'That change was rewound: there is nothing to review. Undo of the rollback brings it back.');
        break;
      }
      if (cur.status !== 'pending') {
        toast('info', `That change is already ${cur.status}.`);
        break;
      }
      // A conflict left to the editor is accepted when its markers are gone.
      if (e.key === 'a' && mergingInEditor(cur)) {
        toast('info', `Merge ${cur.rel_path} in your editor: prsm accepts the change once no conflict marker is left.`);
        break;
      }
      // Accept on a conflict asks how to resolve it: the selection stays.
      if (e.key === 'a' && inConflict(cur)) void actions.acceptChange(cur);
      else
        void (e.key === 'a' ? actions.acceptChange(cur) : actions.rejectChange(cur)).then(
          () => state.autoAdvance && advance(cur.id),
        );
      break;
    case 'J':
      moveHunk(1);
      break;
    case 'K':
      moveHunk(-1);
      break;
    case 'y':
    case 'n':
      decideFocusedHunk(e.key === 'y');
      break;
    case 'o':
    case 'Enter':
      if (!cur || (e.key === 'Enter' && t && t.closest('button, a'))) return;
      setOpen(cur, !isOpen(cur));
      break;
    case 'u':
      setDiffMode(state.diffMode === 'line-by-line' ? 'side-by-side' : 'line-by-line');
      break;
    case 't':
      if (state.sid) go(state.sid, state.tab === 'changes' ? 'timeline' : 'changes');
      break;
    case '[':
      switchSession(-1);
      break;
    case ']':
      switchSession(1);
      break;
    case '?':
      update({ help: !state.help });
      break;
    case 'Escape':
      if (state.help) update({ help: false });
      else if (state.blame) closeBlame();
      else return;
      break;
    default:
      return;
  }
  e.preventDefault();
});

window.addEventListener('hashchange', readRoute);
setInterval(() => update({ now: Date.now() }), 30_000);

readRoute();
render(<Root />, document.getElementById('app')!);
connectEvents();
void loadAll();
