// The vscode-facing logic: tree building and items, lenses, decorations,
// checkpoints, the status bar and command argument resolution, through the
// stand-in `vscode` module.

import { beforeEach, describe, expect, it } from 'vitest';

import {
  affectedCount,
  annotateCheckpoint,
  deleteCheckpoint,
  buildCheckpointTree,
  checkpointItem,
  checkpointLabel,
  createCheckpoint,
  planItems,
  relativeTime,
  rewindToCheckpoint,
} from '../src/checkpoints';
import { lensSpecs, placementsFor, PrsmCodeLensProvider } from '../src/codelens';
import {
  acceptChange,
  bulkEverything,
  bulkSession,
  keepMine,
  leftMessage,
  mergeInEditor,
  recordFromArgs,
  commentOnChange,
  lineRange,
  rejectChange,
  rejectHunk,
  resolveConflicts,
  takeAgents,
} from '../src/commands';
import type { AppContext } from '../src/context';
import { planDecorations } from '../src/decorations';
import { binaryMessage, contentUri, parseContentUri } from '../src/diff';
import { Model } from '../src/model';
import { PathMap } from '../src/paths';
import { placeRecords } from '../src/ranges';
import { serveArgs } from '../src/serverctl';
import { Commands } from '../src/settings';
import { hookSummary, StatusBar, statusText } from '../src/statusbar';
import { visibleText } from '../src/feedbacktext';
import { buildTree, changeTooltipWithNotes, contextValue, toTreeItem } from '../src/tree';
import { answers, FakeDocument, recorded, resetStub, setConfig, Uri, window } from './vscode-stub';
import { checkpoint, lines, rec, session, until } from './helpers';
import type { Feedback, Plan } from '../src/api.gen';
import type { PrsmClient } from '../src/client';

beforeEach(() => resetStub());

/** An AppContext over a model and a fake client whose calls are recorded. */
function appContext(model: Model, client: Partial<PrsmClient> = {}): AppContext & { calls: string[] } {
  const calls: string[] = [];
  const paths = new PathMap('/ws', ['/ws']);
  return {
    calls,
    model,
    connection: { state: 'connected', client, reportError: () => undefined } as unknown as AppContext['connection'],
    paths: () => paths,
    call: async (what, fn) => {
      calls.push(what);
      return fn(client as PrsmClient);
    },
  };
}

describe('buildTree', () => {
  it('lists sessions (active, newest first), files by path, changes oldest first, with counts', () => {
    const m = new Model();
    m.replace(
      [
        session({ id: 'old', name: 'old', status: 'ended', created_at: '2026-01-03T00:00:00Z' }),
        session({ id: 's1', created_at: '2026-01-01T00:00:00Z' }),
        session({ id: 's2', name: 'two', created_at: '2026-01-02T00:00:00Z' }),
      ],
      [
        rec({ id: 'b', file_path: '/ws/z.txt', rel_path: 'z.txt', status: 'accepted' }),
        rec({ id: 'c', file_path: '/ws/src/a.txt', rel_path: 'src/a.txt' }),
        rec({ id: 'd', file_path: '/ws/src/a.txt', rel_path: 'src/a.txt', sync_state: 'conflict' }),
        rec({ id: 'e', session_id: 's2', status: 'rejected' }),
      ],
      new Map(),
      true,
    );
    const t = buildTree(m);
    expect(t.map((s) => s.session.id)).toEqual(['s2', 's1', 'old']);
    const s1 = t[1];
    expect(s1.counts).toEqual({ pending: 2, accepted: 1, rejected: 0, partial: 0, rewound: 0, conflicts: 1 });
    expect(s1.files.map((f) => f.relPath)).toEqual(['src/a.txt', 'z.txt']);
    expect(s1.files[0].changes.map((c) => c.record.id)).toEqual(['c', 'd']);
    expect(contextValue(s1)).toBe('session.pending');
    expect(contextValue(t[0])).toBe('session.done');
    expect(contextValue(s1.files[1])).toBe('file.done');
    expect(contextValue(s1.files[0].changes[1])).toBe('change.pending.conflict');
    expect(contextValue(t[0].files[0].changes[0])).toBe('change.rejected');
  });

  it('counts a partial record (some hunks kept, some dropped) as partial, with its own icon', () => {
    const m = new Model();
    m.replace([session()], [rec({ id: 'p', status: 'partial' as never }), rec({ id: 'q' })], new Map(), true);
    const [s] = buildTree(m);
    expect(s.counts).toEqual({ pending: 1, accepted: 0, rejected: 0, partial: 1, rewound: 0, conflicts: 0 });
    expect(toTreeItem(s).description).toBe('1 pending, 1 partial · auto');
    const ci = toTreeItem(s.files[0].changes[0]);
    expect(ci.description).toMatch(/^partial · /);
    expect(ci.iconPath as unknown as { id: string; color: { id: string } }).toMatchObject({ id: 'pie-chart', color: { id: 'charts.blue' } });
  });

  it('renders items with status, commands and theme icons', () => {
    const m = new Model();
    const r = rec({ id: 'tc1', old: lines('a', 'b'), new: lines('a', 'B', 'c'), file_path: '/ws/src/a.txt', rel_path: 'src/a.txt' });
    m.replace([session()], [r], new Map(), true);
    const [s] = buildTree(m);
    const si = toTreeItem(s);
    expect(si.label).toBe('session-1');
    expect(si.description).toBe('1 pending · auto');
    const fi = toTreeItem(s.files[0]);
    expect(fi.label).toBe('a.txt');
    expect(fi.description).toBe('src · 1 pending');
    expect(fi.command?.command).toBe(Commands.openFile);
    const ci = toTreeItem(s.files[0].changes[0]);
    expect(ci.label).toBe('Edit a.txt');
    expect(ci.description).toBe('B · pending · +2 −1');
    expect(ci.command).toMatchObject({ command: Commands.showDiff });
    expect((ci.iconPath as unknown as { id: string; color: { id: string } }).color.id).toBe('charts.yellow');
  });

  it('shows records of a session it has not loaded yet', () => {
    const m = new Model();
    m.apply({ type: 'file_changed', data: rec({ session_id: 'new' }) });
    expect(buildTree(m).map((s) => s.session.id)).toEqual(['new']);
  });
});

describe('lenses', () => {
  it('gives Accept | Reject | Comment… | Diff for a change and Keep mine | Take agent\'s | Merge in editor for a conflict', () => {
    const a = rec({ id: 'a', old: lines('1', '2'), new: lines('1', 'two') });
    const c = rec({ id: 'c', session_id: 's2', old: lines('1', '2'), new: lines('one', '2'), sync_state: 'conflict' });
    const done = rec({ id: 'd', session_id: 's3', old: lines('1'), new: lines('x'), status: 'accepted' });
    const specs = lensSpecs(placeRecords([a, c, done], { text: lines('1', 'two'), lineCount: 3, maxLines: 100 }));
    expect(specs.map((s) => [s.line, s.title, s.command, s.args[1]])).toEqual([
      [0, 'Conflict: Keep mine', Commands.keepMine, 'c'],
      [0, "Take agent's", Commands.takeAgents, 'c'],
      [0, 'Merge in editor', Commands.mergeInEditor, 'c'],
      [1, 'Accept', Commands.acceptChange, 'a'],
      [1, 'Reject', Commands.rejectChange, 'a'],
      [1, 'Comment…', Commands.commentOnChange, 'a'],
      [1, 'Diff', Commands.showDiff, 'a'],
    ]);
  });

  it('provides lenses for an open document of the workspace only', () => {
    const m = new Model();
    const r = rec({ id: 'a', old: lines('x', 'y', 'z'), new: lines('x', 'y', 'NEW', 'z') });
    m.replace([session()], [r], new Map(), true);
    const ctx = appContext(m);
    const p = new PrsmCodeLensProvider(ctx);
    const doc = new FakeDocument('/ws/a.txt', lines('x', 'y', 'NEW', 'z'));
    const lenses = p.provideCodeLenses(doc as never);
    expect(lenses.map((l) => [l.range.start.line, l.command?.title])).toEqual([
      [2, 'Accept'],
      [2, 'Reject'],
      [2, 'Comment…'],
      [2, 'Diff'],
    ]);
    expect(lenses[0].command?.arguments).toEqual(['s1', 'a']);
    // The Comment… lens names the record and the change's one block: the added line 3.
    expect(lenses[2].command).toMatchObject({ command: Commands.commentOnChange, arguments: ['s1', 'a', '3'] });
    expect(p.provideCodeLenses(new FakeDocument('/elsewhere/a.txt', 'x\n') as never)).toEqual([]);
    setConfig('prsm.codeLens.enabled', false);
    expect(p.provideCodeLenses(doc as never)).toEqual([]);
    p.dispose();
  });

  it('asks for new lenses when the model changes', () => {
    const m = new Model();
    const p = new PrsmCodeLensProvider(appContext(m));
    let fired = 0;
    p.onDidChangeCodeLenses(() => fired++);
    m.apply({ type: 'file_changed', data: rec() });
    expect(fired).toBe(1);
    p.dispose();
  });
});

describe('decorations', () => {
  it('plans added lines, removed markers and conflicts from placements', () => {
    const base = lines('1', '2', '3', '4');
    const after = lines('1', 'new', '2', '4');
    const r = rec({ old: base, new: after });
    const conflict = rec({ session_id: 's2', old: base, new: lines('0', '1', '2', '3', '4'), sync_state: 'conflict' });
    const plan = planDecorations(placeRecords([r, conflict], { text: after, lineCount: 5, maxLines: 100 }));
    expect(plan.added).toEqual([{ start: 1, end: 1 }]);
    expect(plan.removedAbove.map((x) => [x.line, x.count])).toEqual([[3, 1]]);
    expect(plan.conflicts).toEqual([0]);
  });

  it('does not decorate a huge file line by line', () => {
    const m = new Model();
    const big = Array.from({ length: 100 }, (_, i) => `l${i}`);
    const after = [...big.slice(0, 10), ...Array.from({ length: 50 }, (_, i) => `n${i}`), ...big.slice(10)];
    m.replace([session()], [rec({ old: lines(...big), new: lines(...after) })], new Map(), true);
    const ctx = appContext(m);
    const doc = new FakeDocument('/ws/a.txt', lines(...after));
    setConfig('prsm.decorations.maxLines', 100);
    expect(planDecorations(placementsFor(ctx, doc as never)).added).toEqual([{ start: 10, end: 10 }]);
    setConfig('prsm.decorations.maxLines', 1000);
    expect(planDecorations(placementsFor(ctx, doc as never)).added).toEqual([{ start: 10, end: 59 }]);
  });
});

describe('diff', () => {
  it('round-trips content URIs and names binary changes', () => {
    const r = rec({ id: 'tc:1', rel_path: 'src/x y.ts' });
    const u = contentUri(r, 'after');
    expect(u.scheme).toBe('prsm-content');
    expect(u.path).toBe('/src/x y.ts');
    expect(parseContentUri(u)).toEqual({ session: 's1', id: 'tc:1', side: 'after' });
    expect(parseContentUri(Uri.from({ scheme: 'prsm-content', path: '/a', query: 'side=left' }) as never)).toBeUndefined();
    const bin = rec({ binary: true, rel_path: 'logo.png', size_before: 2048, size_after: 3 * 1024 * 1024 });
    expect(binaryMessage(bin)).toBe('prsm: binary file changed: logo.png (2.0 KiB → 3.0 MiB).');
    expect(binaryMessage({ ...bin, change_type: 'create', size_after: 10 })).toContain('was created (10 B)');
    const note = 'too large: 3.0 GiB, over prsm\'s size limit of 100 MiB (PRSM_MAX_FILE_SIZE); prsm compares it by its size and a hash and keeps no copy of its content';
    expect(binaryMessage({ ...bin, change_type: 'create', size_after: 3 * 1024 ** 3, note })).toBe(
      `prsm: binary file changed: logo.png was created (3.0 GiB). ${note}.`,
    );
  });
});

describe('commands', () => {
  it('resolves lens arguments and tree nodes to records', () => {
    const m = new Model();
    const r = rec({ id: 'x' });
    m.upsertRecords([r]);
    expect(recordFromArgs({ model: m }, ['s1', 'x'])?.id).toBe('x');
    expect(recordFromArgs({ model: m }, [{ kind: 'change', record: r }])?.id).toBe('x');
    expect(recordFromArgs({ model: m }, [])).toBeUndefined();
    expect(recordFromArgs({ model: m }, ['s1', 'missing'])).toBeUndefined();
  });

  it('accepts and rejects through the client and stores the answer', async () => {
    const m = new Model();
    const r = rec({ id: 'x' });
    m.upsertRecords([r]);
    const sent: string[] = [];
    const ctx = appContext(m, {
      accept: async (sid: string, id: string) => {
        sent.push(`accept ${sid} ${id}`);
        return { records: [{ ...r, status: 'accepted' as const }] };
      },
      reject: async (sid: string, id: string) => {
        sent.push(`reject ${sid} ${id}`);
        return { records: [{ ...r, status: 'rejected' as const }] };
      },
    });
    await acceptChange(ctx, 's1', 'x');
    expect(m.record('s1', 'x')?.status).toBe('accepted');
    answers.inputBox.push(''); // no reason
    await rejectChange(ctx, { kind: 'change', record: r });
    expect(sent).toEqual(['accept s1 x', 'reject s1 x']);
    expect(m.record('s1', 'x')?.status).toBe('rejected');
  });

  it('acts on the change under the cursor from the palette', async () => {
    const m = new Model();
    const near = rec({ id: 'near', added_ranges: [{ startLine: 10, endLine: 12 }], removed_ranges: [] });
    const far = rec({ id: 'far', added_ranges: [{ startLine: 1, endLine: 1 }], removed_ranges: [] });
    m.upsertRecords([near, far]);
    const doc = new FakeDocument('/ws/a.txt', '');
    window.activeTextEditor = { document: doc, selection: { active: { line: 10 } } };
    const sent: string[] = [];
    const ctx = appContext(m, { accept: async (_s: string, id: string) => (sent.push(id), { records: [] }) });
    answers.quickPick.push((items) => items[0]);
    await acceptChange(ctx);
    expect(recorded.quickPicks[0].items.map((i: { record: { id: string } }) => i.record.id)).toEqual(['near', 'far']);
    expect(sent).toEqual(['near']);
  });

  it('asks before rejecting over unsaved edits', async () => {
    const m = new Model();
    const r = rec({ id: 'x' });
    m.upsertRecords([r]);
    const doc = new FakeDocument('/ws/a.txt', 'edited');
    doc.isDirty = true;
    const { workspace } = await import('./vscode-stub');
    workspace.textDocuments = [doc];
    const sent: string[] = [];
    const ctx = appContext(m, { reject: async () => (sent.push('reject'), { records: [] }) });
    answers.inputBox.push(''); // no reason
    answers.message.push(undefined); // Escape
    await rejectChange(ctx, 's1', 'x');
    expect(sent).toEqual([]);
    answers.inputBox.push('');
    answers.message.push('Save and Continue');
    await rejectChange(ctx, 's1', 'x');
    expect(doc.isDirty).toBe(false);
    expect(sent).toEqual(['reject']);
  });

  /** A model with one conflict, and a client that records every resolve it is sent. */
  function conflictCase() {
    const m = new Model();
    const r = rec({ id: 'x', old: lines('a'), new: lines('agent'), sync_state: 'conflict' });
    m.upsertRecords([r]);
    const sent: string[] = [];
    const ctx = appContext(m, {
      resolve: async (s: string, id: string, how: string) => {
        sent.push(`resolve ${s} ${id} ${how}`);
        const after = how === 'markers' ? { ...r } : { ...r, status: how === 'mine' ? ('rejected' as const) : ('accepted' as const), sync_state: 'synced' as const };
        return { records: [after] };
      },
      accept: async () => (sent.push('accept'), { records: [] }),
      reject: async () => (sent.push('reject'), { records: [] }),
    });
    return { m, r, sent, ctx };
  }

  it('resolves a conflict through the resolve route: Keep mine, Take agent\'s, Merge in editor', async () => {
    const stub = await import('./vscode-stub');
    let c = conflictCase();
    await keepMine(c.ctx, 's1', 'x');
    expect(c.sent).toEqual(['resolve s1 x mine']);
    expect(c.m.record('s1', 'x')?.status).toBe('rejected');

    c = conflictCase();
    await takeAgents(c.ctx, { kind: 'change', record: c.r });
    expect(c.sent).toEqual(['resolve s1 x agent']);
    expect(c.m.record('s1', 'x')).toMatchObject({ status: 'accepted', sync_state: 'synced' });

    c = conflictCase();
    const shown: string[] = [];
    const show = stub.window.showTextDocument;
    stub.window.showTextDocument = async (u: unknown) => (shown.push((u as { fsPath: string }).fsPath), undefined);
    try {
      await mergeInEditor(c.ctx, 's1', 'x');
    } finally {
      stub.window.showTextDocument = show;
    }
    expect(c.sent).toEqual(['resolve s1 x markers']);
    expect(shown).toEqual(['/ws/a.txt']); // the file opens, markers and all
    expect(c.m.record('s1', 'x')?.status).toBe('pending'); // until the markers are gone
    expect(recorded.messages.map((x) => x.text).join('\n')).toContain('conflict markers');
  });

  it('resolves the conflict of the active file from the palette, not another pending change', async () => {
    const c = conflictCase();
    c.m.upsertRecords([rec({ id: 'plain', added_ranges: [{ startLine: 1, endLine: 1 }], removed_ranges: [] })]);
    window.activeTextEditor = { document: new FakeDocument('/ws/a.txt', ''), selection: { active: { line: 0 } } };
    await takeAgents(c.ctx);
    expect(recorded.quickPicks).toEqual([]); // one conflict: no question
    expect(c.sent).toEqual(['resolve s1 x agent']);
    window.activeTextEditor = undefined;
    await keepMine(c.ctx);
    expect(recorded.messages.map((x) => x.text)).toContain('prsm: no conflict here to resolve.');
  });

  it('does not write the markers twice: once they are in the file, Merge in editor only opens it', async () => {
    const c = conflictCase();
    const merging = { ...c.r, note: 'merge in your editor: both versions are in the workspace file between conflict markers' };
    c.m.upsertRecords([merging]);
    const [p] = placeRecords([merging], { text: lines('x'), lineCount: 2, maxLines: 100 });
    expect(lensSpecs([p]).map((s) => [s.title, s.command])).toEqual([
      ['Merging in editor: remove the conflict markers and save', Commands.mergeInEditor],
      ["Take agent's", Commands.takeAgents],
    ]);
    const stub = await import('./vscode-stub');
    const shown: string[] = [];
    const show = stub.window.showTextDocument;
    stub.window.showTextDocument = async (u: unknown) => (shown.push((u as { fsPath: string }).fsPath), undefined);
    try {
      await mergeInEditor(c.ctx, 's1', 'x');
    } finally {
      stub.window.showTextDocument = show;
    }
    expect(c.sent).toEqual([]);
    expect(shown).toEqual(['/ws/a.txt']);
  });

  it('asks which way to resolve when Accept meets a conflict, and never plainly accepts it', async () => {
    const c = conflictCase();
    answers.quickPick.push(() => undefined); // Escape
    await acceptChange(c.ctx, 's1', 'x');
    expect(c.sent).toEqual([]);
    expect(recorded.quickPicks[0].items.map((i: { label: string; how: string }) => [i.label, i.how])).toEqual([
      ['Keep mine', 'mine'],
      ["Take agent's", 'agent'],
      ['Merge in editor', 'markers'],
    ]);
    answers.quickPick.push((items) => items[1]);
    await acceptChange(c.ctx, 's1', 'x');
    expect(c.sent).toEqual(['resolve s1 x agent']);
    expect(c.m.record('s1', 'x')?.status).toBe('accepted');
  });

  it('a bulk accept that left a conflict warns, naming its file and the ways to resolve it, and leads there', async () => {
    const c = conflictCase();
    const clean = rec({ id: 'clean', file_path: '/ws/b.txt', rel_path: 'b.txt', old: '', new: lines('b') });
    c.m.upsertRecords([clean]);
    const job = { id: 'j1', kind: 'accept_all' as const, state: 'done', total: 1, done: 1, conflicts: 0, left: 1, started_at: '2026-01-01T00:00:00Z' };
    const call = c.ctx.call;
    const everything = { acceptEverything: async () => ({ records: [{ ...clean, status: 'accepted' as const }], job }) };
    c.ctx.call = (what, fn) => (what === 'accept every change' ? fn(everything as unknown as PrsmClient) : call(what, fn));
    answers.message.push('Resolve Conflicts');
    answers.quickPick.push((items) => items[0]); // Keep mine
    const stub = await import('./vscode-stub');
    const shown: string[] = [];
    const show = stub.window.showTextDocument;
    stub.window.showTextDocument = async (u: unknown) => (shown.push((u as { fsPath: string }).fsPath), undefined);
    try {
      await bulkEverything(c.ctx, true);
      await until(() => c.sent.length > 0, 2000, 'the resolve sent');
    } finally {
      stub.window.showTextDocument = show;
    }
    expect(c.m.record('s1', 'clean')?.status).toBe('accepted');
    const warning = recorded.messages.find((x) => x.kind === 'warning');
    expect(warning?.text).toBe(
      "prsm: 1 change left pending: a.txt is in conflict with your edits. A conflict is resolved, never accepted in bulk: Conflict: Keep My Version, Take Agent's Version, or Merge in Editor.",
    );
    expect(warning?.items).toEqual(['Resolve Conflicts']);
    // Its button opens the file of the one conflict and asks which way.
    expect(shown).toEqual(['/ws/a.txt']);
    expect(c.sent).toEqual(['resolve s1 x mine']);
  });

  it('a bulk decision that left nothing pending says nothing more', async () => {
    const c = conflictCase();
    const job = { id: 'j1', kind: 'reject_all' as const, state: 'done', total: 1, done: 1, conflicts: 0, left: 0, started_at: '2026-01-01T00:00:00Z' };
    c.ctx.call = async (_what, fn) => fn({ rejectAll: async () => ({ records: [], job }) } as unknown as PrsmClient);
    await bulkSession(c.ctx, false, { kind: 'session', session: session() });
    expect(recorded.messages.filter((x) => x.kind === 'warning')).toEqual([]);
  });

  it('says what a bulk decision left: the files in conflict, and the other changes of those files', () => {
    const a = rec({ rel_path: 'a.txt', sync_state: 'conflict' });
    const b = rec({ rel_path: 'b.txt', sync_state: 'conflict' });
    expect(leftMessage(3, [a])).toMatch(/^prsm: 3 changes left pending: a\.txt is in conflict with your edits, and the other changes of that file wait with it\. /);
    expect(leftMessage(2, [a, b])).toMatch(/^prsm: 2 changes left pending: a\.txt, b\.txt are in conflict with your edits\. /);
    // Conflicts the model does not hold (another session's): the count still says it.
    expect(leftMessage(1, [])).toMatch(/^prsm: 1 change left pending: in conflict with your edits, or of a file that is\. /);
  });

  it('Resolve Conflicts picks among several conflicts, opens the file and resolves the one picked', async () => {
    const c = conflictCase();
    const other = rec({ id: 'y', file_path: '/ws/c.txt', rel_path: 'c.txt', old: lines('c'), new: lines('agent c'), sync_state: 'conflict' });
    c.m.upsertRecords([other]);
    answers.quickPick.push((items) => items.find((i: { record: { id: string } }) => i.record.id === 'y'));
    answers.quickPick.push((items) => items[1]); // Take agent's
    await resolveConflicts(c.ctx);
    expect(recorded.quickPicks[0].items.map((i: { label: string }) => i.label)).toEqual(['Edit a.txt', 'Edit c.txt']);
    expect(recorded.quickPicks[0].options.placeHolder).toBe('2 changes in conflict with your edits: resolve which?');
    expect(c.sent).toEqual(['resolve s1 y agent']);

    c.m.upsertRecords([{ ...c.r, status: 'rejected' }, { ...other, status: 'accepted', sync_state: 'synced' }]);
    await resolveConflicts(c.ctx);
    expect(recorded.messages.map((x) => x.text)).toContain('prsm: no change is in conflict.');
  });

  it('saves unsaved edits before the agent\'s version or the markers are written', async () => {
    const c = conflictCase();
    const doc = new FakeDocument('/ws/a.txt', 'mine, unsaved');
    doc.isDirty = true;
    const stub = await import('./vscode-stub');
    stub.workspace.textDocuments = [doc];
    answers.message.push(undefined); // Escape
    await takeAgents(c.ctx, 's1', 'x');
    expect(c.sent).toEqual([]);
    answers.message.push('Save and Continue');
    await takeAgents(c.ctx, 's1', 'x');
    expect(doc.isDirty).toBe(false);
    expect(c.sent).toEqual(['resolve s1 x agent']);
  });

  it('starts the server with the exact serve arguments', () => {
    expect(serveArgs('/my ws')).toEqual(['serve', '--detach', '--workspace', '/my ws']);
  });
});

describe('checkpoints', () => {
  it('builds a flat timeline for one session and groups several', () => {
    const m = new Model();
    m.replace(
      [session()],
      [],
      new Map([['s1', [checkpoint({ id: 'a', created_at: '2026-01-01T00:00:00Z' }), checkpoint({ id: 'b', kind: 'manual', name: 'named', created_at: '2026-01-02T00:00:00Z' })]]]),
      true,
    );
    const flat = buildCheckpointTree(m);
    expect(flat.map((n) => n.kind === 'checkpoint' && n.checkpoint.id)).toEqual(['b', 'a']);
    m.apply({ type: 'session_updated', data: session({ id: 's2', name: 'two', status: 'ended' }) });
    const grouped = buildCheckpointTree(m);
    expect(grouped.map((n) => n.kind)).toEqual(['cpSession', 'cpSession']);
    const item = checkpointItem(flat[0]);
    expect(item.label).toBe('named');
    expect(item.contextValue).toBe('checkpoint.manual.active');
  });

  it('labels automatic checkpoints by what made them', () => {
    expect(checkpointLabel(checkpoint({ tool_call_id: 'tc4' }))).toBe('before tc4');
    expect(checkpointLabel(checkpoint({ message_index: 3 }))).toBe('turn 3');
    expect(checkpointLabel(checkpoint({ name: 'x', kind: 'manual' }))).toBe('x');
    expect(relativeTime('2026-01-01T00:00:00Z', Date.parse('2026-01-01T02:30:00Z'))).toBe('2h ago');
  });

  const plan: Plan = {
    checkpoint_id: 'cp1',
    operations: [
      { type: 'restore', path: 'a.txt', record_ids: ['tc2'] },
      { type: 'delete', path: 'new.txt', record_ids: ['tc3'] },
    ],
    affected_files: ['a.txt', 'new.txt'],
    conflicts: [{ path: 'b.txt', reason: 'your edits overlap' }],
    warnings: ['undoes accepted change tc2'],
    decisions: [],
    summary: [],
    dry_run: true,
  };

  it('lists a plan as files, conflicts and warnings', () => {
    expect(planItems(plan).map((i) => [i.label, i.description])).toEqual([
      ['$(discard) a.txt', 'restore'],
      ['$(trash) new.txt', 'delete'],
      ['$(warning) b.txt', 'conflict: left as it is'],
      ['$(info) undoes accepted change tc2', 'warning'],
    ]);
    expect(affectedCount(plan)).toBe(2);
  });

  it('rewinds after the preview pick and a modal confirmation', async () => {
    const m = new Model();
    m.replace([session()], [], new Map([['s1', [checkpoint()]]]), true);
    const sent: string[] = [];
    const ctx = appContext(m, {
      rewindPreview: async () => (sent.push('preview'), plan),
      rewind: async (_s: string, id: string) => (sent.push(`rollback ${id}`), { ...plan, safety_checkpoint_id: 'safe1' }),
      listCheckpoints: async () => [checkpoint(), checkpoint({ id: 'safe1' })],
      listChanges: async () => [],
    });
    const node = buildCheckpointTree(m)[0];
    // Escape at the modal: nothing happens.
    answers.quickPick.push((items) => items[0]);
    answers.message.push(undefined);
    expect(await rewindToCheckpoint(ctx, node)).toBeUndefined();
    expect(sent).toEqual(['preview']);
    // Confirmed.
    answers.quickPick.push((items) => items[0]);
    answers.message.push('Rewind');
    const done = await rewindToCheckpoint(ctx, node);
    expect(done?.safety_checkpoint_id).toBe('safe1');
    expect(sent).toEqual(['preview', 'preview', 'rollback cp1']);
    expect(recorded.messages.find((x) => x.kind === 'warning')?.items[0]).toMatchObject({ modal: true });
    expect(m.checkpoints('s1').map((c) => c.id)).toEqual(['cp1', 'safe1']);
  });

  it('rewinds a one-file plan without a modal', async () => {
    const m = new Model();
    m.replace([session()], [], new Map([['s1', [checkpoint()]]]), true);
    const one: Plan = { ...plan, operations: [plan.operations[0]], affected_files: ['a.txt'] };
    const sent: string[] = [];
    const ctx = appContext(m, {
      rewindPreview: async () => one,
      rewind: async () => (sent.push('rollback'), one),
      listCheckpoints: async () => [checkpoint()],
      listChanges: async () => [],
    });
    answers.quickPick.push((items) => items[0]);
    await rewindToCheckpoint(ctx, buildCheckpointTree(m)[0]);
    expect(sent).toEqual(['rollback']);
    expect(recorded.messages.filter((x) => x.kind === 'warning')).toEqual([]);
    // One file, said so: not "(1 files)".
    expect(recorded.quickPicks[0].options.title).toBe('Rewind to "turn 0" changes 1 file');
    expect(recorded.messages.map((x) => x.text)).toEqual(['prsm: rewound to "turn 0" (1 file).']);
  });

  it('creates a named checkpoint with an annotation', async () => {
    const m = new Model();
    m.replace([session()], [], new Map(), true);
    const sent: unknown[] = [];
    const ctx = appContext(m, {
      createCheckpoint: async (sid: string, req: { name: string; annotation?: string }) => (sent.push([sid, req]), checkpoint({ kind: 'manual', name: req.name })),
      listCheckpoints: async () => [checkpoint({ kind: 'manual', name: 'before-refactor' })],
    });
    answers.inputBox.push(' before-refactor ', 'tests green');
    await createCheckpoint(ctx);
    expect(sent).toEqual([['s1', { name: 'before-refactor', annotation: 'tests green' }]]);
    expect(m.checkpoints('s1')[0].name).toBe('before-refactor');
  });
});

describe('checkpoint annotations and deletion', () => {
  it('annotates with the old annotation prefilled, and deletes after a modal', async () => {
    const m = new Model();
    const cp = checkpoint({ kind: 'manual', name: 'n', annotation: 'old note' });
    m.replace([session()], [], new Map([['s1', [cp]]]), true);
    const sent: string[] = [];
    const ctx = appContext(m, {
      annotateCheckpoint: async (_s: string, id: string, a: string) => (sent.push(`annotate ${id} ${a}`), { ...cp, annotation: a }),
      deleteCheckpoint: async (_s: string, id: string) => void sent.push(`delete ${id}`),
      listCheckpoints: async () => [{ ...cp, annotation: 'new note' }],
    });
    const node = buildCheckpointTree(m)[0];
    answers.inputBox.push(' new note ');
    await annotateCheckpoint(ctx, node);
    expect(recorded.inputBoxes[0].value).toBe('old note');
    expect(m.checkpoints('s1')[0].annotation).toBe('new note');
    answers.message.push(undefined);
    await deleteCheckpoint(ctx, node);
    answers.message.push('Delete');
    await deleteCheckpoint(ctx, node);
    expect(sent).toEqual(['annotate cp1 new note', 'delete cp1']);
  });
});

describe('status bar', () => {
  it('shows the pending count, or that prsm is not running', () => {
    expect(statusText('connected', 3).text).toBe('$(git-compare) prsm: 3 pending');
    expect(statusText('disconnected', 0).text).toBe('$(circle-slash) prsm: not running');
    expect(statusText('connected', 3).command).toBe(Commands.showView);
  });

  it('names conflicts apart from the pending changes, and a click leads to resolving them', () => {
    const s = statusText('connected', 3, ['conf.ini']);
    expect(s.text).toBe('$(git-compare) prsm: 3 pending · 1 conflict');
    expect(s.tooltip).toBe(
      "3 agent changes to review, 1 in conflict with your edits: conf.ini. A conflict is resolved, never accepted in bulk. Click to resolve: Keep mine, Take agent's or Merge in editor.",
    );
    expect(s.command).toBe(Commands.resolveConflicts);
    const many = statusText('connected', 9, ['a', 'b', 'b', 'c', 'd', 'e']);
    expect(many.text).toBe('$(git-compare) prsm: 9 pending · 6 conflicts');
    expect(many.tooltip).toContain('6 in conflict with your edits: a, b, c and 2 more.');
    // Not connected: no counts at all.
    expect(statusText('disconnected', 0, ['a']).text).toBe('$(circle-slash) prsm: not running');
  });

  it('the item follows the model: a conflict shows apart, and goes once resolved', () => {
    const m = new Model();
    const ctx = appContext(m);
    (ctx.connection as unknown as { onState: () => { dispose(): void } }).onState = () => ({ dispose() {} });
    const bar = new StatusBar(ctx);
    const item = (bar as unknown as { item: { text: string; command: string } }).item;
    const conflict = rec({ id: 'x', rel_path: 'conf.ini', sync_state: 'conflict' });
    m.upsertRecords([rec({ id: 'clean' }), conflict]);
    expect(item.text).toBe('$(git-compare) prsm: 2 pending · 1 conflict');
    expect(item.command).toBe(Commands.resolveConflicts);
    m.upsertRecords([{ ...conflict, status: 'rejected', sync_state: 'synced' }]);
    expect(item.text).toBe('$(git-compare) prsm: 1 pending');
    expect(item.command).toBe(Commands.showView);
    bar.dispose();
  });

  it('says per session whose hooks reported and when, and warns when they do not fire', () => {
    const now = Date.parse('2026-11-27T12:00:00Z');
    const s = hookSummary(
      [
        { session_id: 'aaa', name: 'one', agent: 'claude', last_hook_at: '2026-11-27T11:59:30Z' },
        { session_id: 'bbb', name: 'two', agent: '' },
        { session_id: 'ccc', name: 'three', agent: 'codex', last_hook_at: '2026-11-27T11:55:00Z', warning: 'hooks are not firing in this worktree: x' },
      ],
      now,
    );
    expect(s.lines).toEqual([
      'one: claude hooks, last event 30s ago',
      'two: no hook reported yet',
      'three: codex hooks, last event 5m ago',
      '⚠ three: hooks are not firing in this worktree: x',
    ]);
    expect(s.warning).toBe(true);
    expect(hookSummary([{ session_id: 'aaa', name: '', agent: 'claude', last_hook_at: '2026-11-27T11:59:30Z' }], now)).toEqual({
      lines: ['aaa: claude hooks, last event 30s ago'],
      warning: false,
    });
    expect(hookSummary(undefined, now)).toEqual({ lines: [], warning: false });
  });

  it('warns when the watcher is limited, with the fix', () => {
    const now = Date.parse('2026-11-27T12:00:00Z');
    const s = hookSummary([{ session_id: 'aaa', name: 'one', agent: 'claude', last_hook_at: '2026-11-27T11:59:30Z' }], now, [
      { reason: 'out of inotify watches', fix: 'sudo sysctl fs.inotify.max_user_watches=524288', sessions: ['aaa'] },
    ]);
    expect(s.lines).toEqual([
      'one: claude hooks, last event 30s ago',
      '⚠ watcher limited: out of inotify watches; fix: sudo sysctl fs.inotify.max_user_watches=524288',
    ]);
    expect(s.warning).toBe(true);
  });
});

describe('Reject with a reason, comments and notes (issue 46)', () => {
  beforeEach(() => resetStub());

  /** A model with one pending change of two hunks, and a client recording what it is sent. */
  function noteCase() {
    const m = new Model();
    const r = rec({ id: 'x', old: lines('a', 'b', 'c'), new: lines('A', 'b', 'C') });
    m.upsertRecords([r]);
    const sent: unknown[] = [];
    const ctx = appContext(m, {
      reject: async (sid: string, id: string, req?: unknown) => (sent.push(['reject', sid, id, req]), { records: [] }),
      decideHunk: async (sid: string, id: string, n: number, accept: boolean, req?: unknown) => (
        sent.push(['hunk', sid, id, n, accept, req]), { records: [] }
      ),
      comment: async (sid: string, id: string, req: unknown) => (sent.push(['comment', sid, id, req]), {} as Feedback),
    });
    return { r, sent, ctx };
  }

  it('Reject asks why: the words go as the note; empty is no note; Escape does not reject', async () => {
    const { sent, ctx } = noteCase();
    answers.inputBox.push('keep the retry loop');
    await rejectChange(ctx, 's1', 'x');
    answers.inputBox.push('   ');
    await rejectChange(ctx, 's1', 'x');
    answers.inputBox.push(undefined);
    await rejectChange(ctx, 's1', 'x');
    expect(sent).toEqual([
      ['reject', 's1', 'x', { say: 'keep the retry loop', author: 'extension' }],
      ['reject', 's1', 'x', undefined],
    ]);
    expect(recorded.inputBoxes).toHaveLength(3);
    expect(recorded.inputBoxes[0].title).toBe('Reject the change to a.txt');
  });

  it('Reject of a hunk asks why too; the setting turns the question off', async () => {
    const { sent, ctx } = noteCase();
    answers.inputBox.push('not this line');
    await rejectHunk(ctx, 's1', 'x', 1);
    answers.inputBox.push(undefined);
    await rejectHunk(ctx, 's1', 'x', 0);
    setConfig('prsm.reject.askReason', false);
    await rejectHunk(ctx, 's1', 'x', 0);
    expect(sent).toEqual([
      ['hunk', 's1', 'x', 1, false, { say: 'not this line', author: 'extension' }],
      ['hunk', 's1', 'x', 0, false, undefined],
    ]);
    expect(recorded.inputBoxes.map((o: { title: string }) => o.title)).toEqual(['Reject hunk 2 of a.txt', 'Reject hunk 1 of a.txt']);
  });

  it('comments on the selected lines of the change, and sends nothing for an empty comment', async () => {
    const { sent, ctx } = noteCase();
    const doc = new FakeDocument('/ws/a.txt', 'A\nb\nC\n');
    window.activeTextEditor = { document: doc, selection: { start: { line: 2 }, end: { line: 0 }, active: { line: 0 } } };
    answers.inputBox.push('why upper case?');
    await commentOnChange(ctx, 's1', 'x');
    answers.inputBox.push('');
    await commentOnChange(ctx, 's1', 'x');
    expect(sent).toEqual([['comment', 's1', 'x', { lines: '1-3', text: 'why upper case?', author: 'extension' }]]);
    expect(recorded.inputBoxes[0].title).toBe('Comment on a.txt lines 1-3 for the agent');
    expect(lineRange(4, 4)).toBe('5');
  });

  it("the Comment… lens's lines win over the selection; Escape and blank post nothing; a posted one is queued and the views redraw", async () => {
    const { sent, ctx } = noteCase();
    const doc = new FakeDocument('/ws/a.txt', 'A\nb\nC\n');
    window.activeTextEditor = { document: doc, selection: { start: { line: 2 }, end: { line: 0 }, active: { line: 0 } } };
    let redraws = 0;
    ctx.model.onChange(() => redraws++);
    answers.inputBox.push(undefined);
    await commentOnChange(ctx, 's1', 'x', '3');
    answers.inputBox.push('  ');
    await commentOnChange(ctx, 's1', 'x', '3');
    expect(sent).toEqual([]);
    expect(redraws).toBe(0);
    answers.inputBox.push('why upper case here?');
    await commentOnChange(ctx, 's1', 'x', '3');
    answers.inputBox.push('and overall?');
    await commentOnChange(ctx, 's1', 'x', ''); // "" from a lens: the whole change, not the selection
    expect(sent).toEqual([
      ['comment', 's1', 'x', { lines: '3', text: 'why upper case here?', author: 'extension' }],
      ['comment', 's1', 'x', { lines: '', text: 'and overall?', author: 'extension' }],
    ]);
    expect(recorded.inputBoxes.map((o: { title: string }) => o.title)).toEqual([
      'Comment on a.txt lines 3 for the agent',
      'Comment on a.txt lines 3 for the agent',
      'Comment on a.txt lines 3 for the agent',
      'Comment on a.txt for the agent',
    ]);
    expect(recorded.messages.filter((m) => m.kind === 'info').map((m) => m.text)).toEqual([
      'prsm: comment on a.txt lines 3 queued for the agent.',
      'prsm: comment on a.txt queued for the agent.',
    ]);
    expect(redraws).toBe(2);
  });

  it("shows a change's notes in its tooltip: who, when, the delivery state, the words with control bytes escaped", () => {
    const r = rec({ id: 'x' });
    const f = (o: Partial<Feedback>): Feedback => ({ id: 1, session_id: 's1', record_id: 'x', kind: 'note', created_at: '2026-01-01T00:00:00Z', state: 'queued', attempts: 0, ...o });
    const tip = changeTooltipWithNotes(r, [
      f({ decision: 'reject', text: 'no \u001b[31mred\nplease', author: 'extension', why: "waiting for the agent's next hook" }),
      f({ id: 2, kind: 'comment', lines: '2-3', text: 'hm', author: 'page', state: 'delivered', via: 'claude PostToolUse tc9' }),
      f({ id: 3, kind: 'notice', text: 'ignored' }),
      f({ id: 4, state: 'undeliverable', why: 'the session has ended', text: 'late' }),
    ]);
    expect(tip.split('\n\nNotes and comments:\n')[1].split('\n')).toEqual([
      "Note on reject by extension, 2026-01-01T00:00:00Z: queued: waiting for the agent's next hook",
      '  no ^[[31mred',
      '  please',
      'Comment, lines 2-3 by page, 2026-01-01T00:00:00Z: delivered with claude PostToolUse tc9',
      '  hm',
      'Note by someone, 2026-01-01T00:00:00Z: not delivered: the session has ended',
      '  late',
    ]);
    expect(changeTooltipWithNotes(r, [])).not.toContain('Notes');
    // The commit prsm commit put the change in, once there is one (issue 47).
    expect(changeTooltipWithNotes(r, [])).not.toContain('commit:');
    expect(changeTooltipWithNotes(rec({ id: 'x', commit: '0123456789abcdef' }), [])).toContain('\ncommit: 0123456789abcdef');
    expect(visibleText('a\u007fb\u202ec\td\u0085')).toBe('a^?b<U+202E>c\td<U+0085>');
  });
});
