// A rewind sets the records made after its checkpoint aside as 'rewound'
// (issue 37): the tree keeps them in a collapsed "Rewound (N)" node of their
// own, nothing counts them as pending or offers to decide them, and the
// rewind's confirmation says in words what comes back, what goes away and
// which decisions it undoes before the file operations.

import { beforeEach, describe, expect, it } from 'vitest';

import type { Plan } from '../src/api.gen';
import { buildCheckpointTree, planItems, rewindToCheckpoint } from '../src/checkpoints';
import type { PrsmClient } from '../src/client';
import { lensSpecs, PrsmCodeLensProvider } from '../src/codelens';
import type { AppContext } from '../src/context';
import { planDecorations } from '../src/decorations';
import { changeSummary } from '../src/labels';
import { Model } from '../src/model';
import { PathMap } from '../src/paths';
import { placeRecords } from '../src/ranges';
import { buildTree, childrenOf, contextValue, statusText, toTreeItem, type RewoundNode } from '../src/tree';
import { checkpoint, lines, rec, session } from './helpers';
import { answers, FakeDocument, recorded, resetStub, TreeItemCollapsibleState } from './vscode-stub';

beforeEach(() => resetStub());

function appContext(model: Model, client: Partial<PrsmClient> = {}): AppContext {
  const paths = new PathMap('/ws', ['/ws']);
  return {
    model,
    connection: { state: 'connected', client, reportError: () => undefined } as unknown as AppContext['connection'],
    paths: () => paths,
    call: async (_what, fn) => fn(client as PrsmClient),
  };
}

describe('rewound records in the tree', () => {
  const model = () => {
    const m = new Model();
    m.replace(
      [session({ id: 's1' }), session({ id: 's2', name: 'only-rewound', created_at: '2026-01-02T00:00:00Z' })],
      [
        rec({ id: 'p', file_path: '/ws/a.txt', rel_path: 'a.txt', old: lines('a'), new: lines('A') }),
        rec({ id: 'r1', file_path: '/ws/a.txt', rel_path: 'a.txt', old: lines('A'), new: lines('A', 'later'), status: 'rewound' }),
        rec({ id: 'r2', file_path: '/ws/src/b.txt', rel_path: 'src/b.txt', status: 'rewound', sync_state: 'conflict', tool_name: 'Bash', summary: 'make build' }),
        rec({ id: 'r3', session_id: 's2', status: 'rewound' }),
      ],
      new Map(),
      true,
    );
    return m;
  };

  it('go in a collapsed "Rewound (N)" node after the files, never counted as pending', () => {
    const [s2, s1] = buildTree(model());
    expect(s1.session.id).toBe('s1');
    expect(s1.counts).toEqual({ pending: 1, accepted: 0, rejected: 0, partial: 0, rewound: 2, conflicts: 0 });
    // The files hold what is under review; a file only rewound changes touched has none.
    expect(s1.files.map((f) => [f.relPath, f.changes.map((c) => c.record.id)])).toEqual([['a.txt', ['p']]]);
    expect(s1.files[0].counts).toMatchObject({ pending: 1, rewound: 0 });
    const kids = childrenOf(s1);
    expect(kids.map((k) => k.kind)).toEqual(['file', 'rewound']);
    const group = kids[1] as RewoundNode;
    expect(childrenOf(group).map((c) => c.kind === 'change' && c.record.id)).toEqual(['r1', 'r2']);
    const gi = toTreeItem(group);
    expect(gi.label).toBe('Rewound (2)');
    expect(gi.collapsibleState).toBe(TreeItemCollapsibleState.Collapsed);
    expect(gi.contextValue).toBe('rewound');
    expect(String(gi.tooltip)).toContain('made after the checkpoint a rewind went back to');
    expect(toTreeItem(s1).description).toBe('1 pending, 2 rewound · auto');
    expect(contextValue(s1)).toBe('session.pending');
    // A session whose changes were all rewound has nothing to review.
    expect(s2.counts.pending).toBe(0);
    expect(contextValue(s2)).toBe('session.done');
    expect(s2.files).toEqual([]);
    expect(childrenOf(s2).map((k) => k.kind)).toEqual(['rewound']);
  });

  it('are labelled rewound, with no Accept or Reject and no conflict of their own', () => {
    const [, s1] = buildTree(model());
    const group = childrenOf(s1)[1] as RewoundNode;
    const [r1, r2] = group.changes;
    const i1 = toTreeItem(r1);
    expect(i1.label).toBe('Edit a.txt');
    expect(i1.description).toBe('later · rewound · +1 −0');
    expect(i1.contextValue).toBe('change.rewound'); // only Show Diff and Copy Id match it
    expect(i1.iconPath as unknown as { id: string }).toMatchObject({ id: 'history' });
    // A rewound change that was a conflict is not one any more: it left the workspace.
    expect(statusText(r2.record)).toBe('rewound');
    expect(toTreeItem(r2).contextValue).toBe('change.rewound');
    expect(toTreeItem(r2).description).toBe('make build · rewound · +0 −0');
  });

  it('get no lenses or decorations, and do not move the lines of a pending change', () => {
    const base = lines('1', '2', '3');
    const mine = lines('1', 'two', '3');
    const pending = rec({ id: 'p', old: base, new: mine });
    // Made later and rewound: it took the pending change's line out again,
    // but it is not in the file, so the line is where the pending change put it.
    const later = rec({ id: 'r', old: mine, new: lines('1', '3'), status: 'rewound' });
    const placed = placeRecords([pending, later], { text: mine, lineCount: 4, maxLines: 100 });
    expect(placed.map((p) => p.record.id)).toEqual(['p']);
    expect(placed[0].added).toEqual([{ start: 1, end: 1 }]);
    expect(lensSpecs(placed).map((s) => [s.line, s.title, s.args[1]])).toEqual([
      [1, 'Accept', 'p'],
      [1, 'Reject', 'p'],
      [1, 'Comment…', 'p'],
      [1, 'Diff', 'p'],
    ]);
    expect(planDecorations(placeRecords([later], { text: mine, lineCount: 4, maxLines: 100 })).added).toEqual([]);
    // A file with only rewound records has no lenses at all.
    const m = new Model();
    m.replace([session()], [later], new Map(), true);
    const p = new PrsmCodeLensProvider(appContext(m));
    expect(p.provideCodeLenses(new FakeDocument('/ws/a.txt', mine) as never)).toEqual([]);
    expect(m.pendingCount).toBe(0);
    p.dispose();
  });
});

describe('a record summary from the server', () => {
  it('leads the row: the shell command of a Bash change, else the first changed line', () => {
    expect(changeSummary(rec({ tool_name: 'Bash', old: lines('a'), new: lines('a', 'b'), summary: 'make build' }))).toBe('make build');
    expect(changeSummary(rec({ old: lines('a'), new: lines('a', 'b') }))).toBe('b');
    const long = 'x'.repeat(100);
    expect(changeSummary(rec({ summary: long }))).toBe(`${'x'.repeat(59)}…`);
  });
});

describe('the rewind confirmation', () => {
  const plan: Plan = {
    checkpoint_id: 'cp1',
    operations: [{ type: 'delete', path: 'late.txt', record_ids: ['tc3'] }],
    affected_files: ['late.txt'],
    conflicts: [],
    warnings: ['a warning'],
    decisions: [
      { record_id: 'tc1', rel_path: 'early.txt', tool_name: 'Edit', from: 'rejected', to: 'pending' },
      { record_id: 'tc3', rel_path: 'late.txt', tool_name: 'Write', from: 'accepted', to: 'rewound' },
      { record_id: 'tc4', rel_path: 'x.txt', tool_name: 'Watch', from: 'rewound', to: 'accepted' },
    ],
    summary: ['early.txt comes back as it was at the checkpoint.', 'late.txt goes away.'],
    dry_run: true,
  };

  it('lists the plain summary, then the decisions in words, then the file operations and warnings', () => {
    expect(planItems(plan).map((i) => [i.label, i.description ?? ''])).toEqual([
      ['$(comment) early.txt comes back as it was at the checkpoint.', ''],
      ['$(comment) late.txt goes away.', ''],
      ['$(history) early.txt', 'Edit: rejected → pending again'],
      ['$(history) late.txt', 'Write: accepted → rewound (made after the checkpoint)'],
      ['$(history) x.txt', 'seen by the watcher: rewound → accepted (comes back)'],
      ['$(trash) late.txt', 'delete'],
      ['$(info) a warning', 'warning'],
    ]);
  });

  it('asks no modal for one file whose later changes are only set aside', async () => {
    const m = new Model();
    m.replace([session()], [], new Map([['s1', [checkpoint()]]]), true);
    const only: Plan = { ...plan, warnings: [], decisions: [{ ...plan.decisions[1], from: 'pending' }] };
    const sent: string[] = [];
    const ctx = appContext(m, {
      rewindPreview: async () => only,
      rewind: async () => (sent.push('rollback'), only),
      listCheckpoints: async () => [checkpoint()],
      listChanges: async () => [],
    });
    answers.quickPick.push((items) => items[0]);
    await rewindToCheckpoint(ctx, buildCheckpointTree(m)[0]);
    expect(recorded.messages.filter((x) => x.kind === 'warning')).toEqual([]);
    expect(recorded.quickPicks[0].options.title).toBe('Rewind to "turn 0" changes 1 file and 1 decision');
    expect(sent).toEqual(['rollback']);
  });

  it('asks in a modal when a decision of the user is undone, even for one file, and says it there first; then reads the records again', async () => {
    const m = new Model();
    m.replace([session()], [rec({ id: 'tc1', status: 'rejected' }), rec({ id: 'tc3', status: 'accepted' })], new Map([['s1', [checkpoint()]]]), true);
    const sent: string[] = [];
    const ctx = appContext(m, {
      rewindPreview: async () => plan,
      rewind: async () => (sent.push('rollback'), { ...plan, dry_run: false, safety_checkpoint_id: 'safe1' }),
      listCheckpoints: async () => [checkpoint(), checkpoint({ id: 'safe1' })],
      listChanges: async () => (sent.push('list changes'), [rec({ id: 'tc1', status: 'pending' }), rec({ id: 'tc3', status: 'rewound' })]),
    });
    answers.quickPick.push((items) => items[0]);
    answers.message.push('Rewind');
    await rewindToCheckpoint(ctx, buildCheckpointTree(m)[0]);
    const modal = recorded.messages.find((x) => x.kind === 'warning');
    expect(modal?.items[0]).toMatchObject({ modal: true });
    const detail = (modal?.items[0] as { detail: string }).detail.split('\n');
    expect(detail.slice(0, 5)).toEqual([
      'early.txt comes back as it was at the checkpoint.',
      'late.txt goes away.',
      'early.txt (Edit): rejected → pending again',
      'late.txt (Write): accepted → rewound (made after the checkpoint)',
      'x.txt (seen by the watcher): rewound → accepted (comes back)',
    ]);
    expect(detail.join('\n')).not.toContain('rejected.'); // no "later changes are rejected" any more
    expect(sent).toEqual(['rollback', 'list changes']);
    expect([m.record('s1', 'tc1')?.status, m.record('s1', 'tc3')?.status]).toEqual(['pending', 'rewound']);
    expect(m.pendingCount).toBe(1);
  });
});
