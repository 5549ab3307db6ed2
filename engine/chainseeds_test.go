package engine_test

// Chains minimised from TestChainFuzz seeds (the later Z scenarios), each
// a bug the fuzz found once, run by the chain harness
// (chainharness_test.go).

import (
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
)

// Z33 (fuzz seed 21): undo, undo to the same safety checkpoint again (no-op), undo that.
func TestChain2RepeatUndoThenUndo(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("e1", "f.txt", 8, "T1")
		z.reject("e1")
		cp1 := z.cp(1)
		z.edit("e2", "f.txt", 17, "T2")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		s3 := z.rewind(s1)
		z.wantWT("f.txt", z.L(17, "T2"), "after repeated undo")
		z.rewind(s3)
		z.wantWS("f.txt", z.base, "after undoing the repeated undo")
		z.wantWT("f.txt", z.L(17, "T2"), "after undoing the repeated undo")
	})
}

// Z33b: same without the earlier rejected record.
func TestChain2RepeatUndoThenUndoB(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp1 := z.cp(1)
		z.edit("e2", "f.txt", 17, "T2")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		s3 := z.rewind(s1)
		z.wantWT("f.txt", z.L(17, "T2"), "after repeated undo")
		z.rewind(s3)
		z.wantWS("f.txt", z.base, "after undoing the repeated undo")
		z.wantWT("f.txt", z.L(17, "T2"), "after undoing the repeated undo")
	})
}

// Z33c: with an accepted change too.
func TestChain2RepeatUndoThenUndoC(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp1 := z.acceptedAndPending()
		s1 := z.rewind(cp1)
		z.rewind(s1)
		s3 := z.rewind(s1)
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3"), "after undoing the repeated undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undoing the repeated undo")
	})
}

// Z36 (fuzz seed 102, f.txt only): a pending change never accepted
// reaches the workspace after a rewind to the start and its undo.
func TestChain2PendingLeaksAfterUndo(t *testing.T) {
	chainRun(t, func(z *chain) {
		c0 := z.cp(1)
		z.edit("e1", "f.txt", 17, "T1")
		z.accept("e1")
		cp1 := z.cp(2)
		z.edit("e2", "f.txt", 8, "T2")
		z.edit("e3", "f.txt", 14, "T3")
		z.rewind(cp1)
		z.edit("e4", "f.txt", 2, "T4")
		s3 := z.rewind(c0)
		z.edit("e6", "f.txt", 11, "T6")
		z.edit("e7", "f.txt", 5, "T7")
		z.accept("e6")
		z.sel(api.RollbackRequest{File: "f.txt"})
		z.edit("e8", "f.txt", 20, "T8")
		s7 := z.rewind(s3)
		z.wantWS("f.txt", z.L(17, "T1"), "after rewind s3")
		z.wantWT("f.txt", z.L(17, "T1", 2, "T4"), "after rewind s3")
		z.rewind(s7)
		z.wantWS("f.txt", z.base, "after undo")
		z.wantWT("f.txt", z.L(20, "T8"), "after undo")
	})
}

// Z36b: shorter.
func TestChain2PendingLeaksAfterUndoB(t *testing.T) {
	chainRun(t, func(z *chain) {
		c0 := z.cp(1)
		z.edit("e1", "f.txt", 17, "T1")
		z.accept("e1")
		z.edit("e4", "f.txt", 2, "T4")
		s3 := z.rewind(c0)
		z.edit("e6", "f.txt", 11, "T6")
		z.accept("e6")
		z.sel(api.RollbackRequest{File: "f.txt"})
		s7 := z.rewind(s3)
		z.wantWS("f.txt", z.L(17, "T1"), "after rewind s3")
		z.wantWT("f.txt", z.L(17, "T1", 2, "T4"), "after rewind s3")
		z.rewind(s7)
		z.wantWS("f.txt", z.base, "after undo")
		z.wantWT("f.txt", z.base, "after undo")
	})
}

// Z37 (fuzz seed 100): undoing a rewind to an older safety checkpoint
// after everything since was accepted.
func TestChain2UndoRewindToOlderSafety(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		s1 := z.rewind(cp0)
		s2 := z.rewind(s1)
		_ = s2
		z.edit("e1", "f.txt", 17, "T1")
		s3 := z.rewind(s2)
		z.cp(5)
		z.edit("e3", "f.txt", 20, "T3")
		s6 := z.sel(api.RollbackRequest{File: "f.txt"})
		z.rewind(s6)
		z.edit("e4", "f.txt", 5, "T4")
		z.edit("e5", "f.txt", 11, "T5")
		z.edit("e6", "f.txt", 2, "T6")
		z.accept("e5")
		z.accept("e6")
		s8 := z.rewind(s3)
		z.edit("e7", "f.txt", 8, "T7")
		z.rewind(s8)
		z.wantWS("f.txt", z.L(20, "T3", 5, "T4", 11, "T5", 2, "T6"), "after undo")
		z.wantWT("f.txt", z.L(20, "T3", 5, "T4", 11, "T5", 2, "T6"), "after undo")
	})
}

// Z38 (fuzz seed 119).
func TestChain2Seed119(t *testing.T) {
	chainRun(t, func(z *chain) {
		g := gLines
		s0 := z.sel(api.RollbackRequest{Last: 1})
		z.edit("e1", "f.txt", 17, "T1")
		z.put("e2", "g.txt", g(5, "T2"))
		cp1 := z.cp(2)
		z.accept("e2")
		s2 := z.rewind(cp1)
		z.edit("e3", "f.txt", 20, "T3")
		z.put("e4", "g.txt", g(5, "T2", 11, "T4"))
		z.accept("e1")
		cp3 := z.cp(4)
		z.put("e5", "g.txt", g(5, "T2", 11, "T4", 14, "T5"))
		z.accept("e3")
		z.edit("e6", "f.txt", 8, "T6")
		z.rewind(cp3)
		z.edit("e7", "f.txt", 2, "T7")
		cp5 := z.cp(6)
		z.rewind(s2)
		z.rewind(cp3)
		z.edit("e8", "f.txt", 14, "T8")
		z.edit("e9", "f.txt", 5, "T9")
		z.put("e10", "g.txt", g(5, "T2", 11, "T4", 20, "T10"))
		z.rewind(cp5)
		z.rewind(s0)
	})
}

// Z39 (fuzz seed 85).
func TestChain2Seed85(t *testing.T) {
	chainRun(t, func(z *chain) {
		g := gLines
		z.edit("e1", "f.txt", 20, "T1")
		cp0 := z.cp(1)
		s1 := z.sel(api.RollbackRequest{Last: 2})
		z.put("e2", "g.txt", g(8, "T2"))
		z.edit("e3", "f.txt", 17, "T3")
		z.put("e4", "g.txt", g(2, "T4", 8, "T2"))
		s2 := z.rewind(cp0)
		z.rewind(s2)
		z.rewind(s2)
		cp5 := z.cp(6)
		z.put("e5", "g.txt", g(2, "T4", 8, "T2", 14, "T5"))
		z.acceptRollback("f.txt")
		s6 := z.rewind(cp5)
		z.acceptRollback("g.txt")
		z.rewind(s6)
		cp8 := z.cp(9)
		z.rewind(cp8)
		z.bulk(false)
		z.edit("e6", "f.txt", 11, "T6")
		z.rewind(s1)
	})
}

// Z40 (fuzz seed 136): review mode only (in auto mode the selector
// refuses, as it should: e3 edits the file e1 created).
func TestChain2Seed136(t *testing.T) {
	chainRun(t, func(z *chain) {
		if !z.review {
			return
		}
		z.put("e1", "g.txt", gLines(2, "T1"))
		z.edit("e2", "f.txt", 20, "T2")
		z.sel(api.RollbackRequest{File: "f.txt"})
		z.accept("e1")
		z.bulk(true)
		z.put("e3", "g.txt", gLines(2, "T1", 20, "T3"))
		s1 := z.sel(api.RollbackRequest{File: "f.txt"})
		z.sel(api.RollbackRequest{File: "f.txt"})
		z.bulk(false)
		z.bulk(false)
		z.edit("e4", "f.txt", 2, "T4")
		z.edit("e5", "f.txt", 14, "T5")
		z.accept("e4")
		z.rewind(s1)
		s4 := z.sel(api.RollbackRequest{Last: 1})
		s5 := z.rewind(s4)
		z.rewind(s5)
	})
}

// Z41 (fuzz seed 175, with deletions).
func TestChain2Seed175(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("e1", "f.txt", 11, "T1")
		z.put("e2", "g.txt", gLines(17, "T2"))
		z.edit("e3", "f.txt", 20, "T3")
		s0 := z.sel(api.RollbackRequest{File: "f.txt"})
		z.put("e6", "g.txt", gLines(11, "T6", 17, "T2"))
		z.put("e7", "g.txt", gLines(8, "T7", 11, "T6", 17, "T2"))
		z.accept("e7")
		z.put("e8", "g.txt", gLines(8, "T7", 11, "T6", 17, "T2", 20, "T8"))
		z.accept("e8")
		z.rm("d11", "g.txt")
		s1 := z.rewind(s0)
		z.put("e13", "g.txt", gLines(14, "T13", 17, "T2"))
		z.rewind(s1)
	})
}

// Z42 (fuzz seed 136 with deletions): review mode only, as Z40. Undoing
// the undo of a selector must leave the workspace without g.txt, as the
// selector did. The rewind's workspace target must not take the deletion
// d4 out of the checkpoint's absent file: a rewind rejected d4 before that
// checkpoint, and its bookkeeping record (accepted, never applied) took
// the deletion out of the worktree; the two cancel.
func TestChain2Seed136Delete(t *testing.T) {
	chainRun(t, func(z *chain) {
		if !z.review {
			return
		}
		z.put("e1", "g.txt", gLines(2, "T1"))
		z.edit("e2", "f.txt", 20, "T2")
		z.sel(api.RollbackRequest{File: "f.txt"})
		z.accept("e1")
		z.bulk(true)
		z.put("e3", "g.txt", gLines(2, "T1", 20, "T3"))
		s1 := z.sel(api.RollbackRequest{File: "f.txt"})
		z.sel(api.RollbackRequest{File: "f.txt"})
		z.bulk(false)
		z.bulk(false)
		z.rm("d4", "g.txt")
		z.edit("e5", "f.txt", 2, "T5")
		z.edit("e6", "f.txt", 14, "T6")
		z.accept("e6")
		z.rewind(s1)
		s4 := z.sel(api.RollbackRequest{Last: 1})
		s5 := z.rewind(s4)
		z.wantWS("g.txt", gLines(2, "T1"), "after undoing the selector")
		z.rewind(s5) // the workspace as it was at s5 (chain.wantSnap checks it)
	})
}

// Z43 (from fuzz seed 71 with deletions): a file created, the creation
// rejected, then created again with other content and accepted, and
// edited (accepted); a checkpoint; the edit rejected. Rewinding to the
// checkpoint brings the edit back to the workspace. The first creation,
// rejected before the checkpoint was taken, is not in the checkpoint's
// file: the workspace's target does not take it out (it could not: the
// two creations conflict).
func TestChain2RejectedBeforeCheckpoint(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("e1", "g.txt", gLines(5, "T1"))
		z.reject("e1")
		z.put("e2", "g.txt", gLines(8, "T2"))
		z.accept("e2")
		z.put("e3", "g.txt", gLines(8, "T2", 14, "T3"))
		z.accept("e3")
		cp := z.cp(1)
		z.reject("e3")
		z.rewind(cp)
		z.wantWS("g.txt", gLines(8, "T2", 14, "T3"), "after the rewind")
		z.wantWT("g.txt", gLines(8, "T2", 14, "T3"), "after the rewind")
	})
}

// TestRejectedAtOnlyForRejects: a user's reject keeps its time on the
// record; a record a rewind sets aside is rewound, with none.
func TestRejectedAtOnlyForRejects(t *testing.T) {
	z := chainNew(t, prsm.ModeReview)
	z.edit("e1", "f.txt", 5, "T1")
	z.reject("e1")
	cp := z.cp(1)
	z.edit("e2", "f.txt", 8, "T2")
	z.rewind(cp)
	for id, want := range map[string]string{"e1": prsm.StatusRejected, "e2": prsm.StatusRewound} {
		recs, err := z.eng.RecordsOf(z.ctx, z.s.ID, id)
		if err != nil || len(recs) != 1 {
			t.Fatalf("%s: %v %d", id, err, len(recs))
		}
		if r := recs[0]; r.Status != want || r.RejectedAt.IsZero() == (want == prsm.StatusRejected) {
			t.Errorf("%s: %s, rejected_at %v, want %s", id, r.Status, r.RejectedAt, want)
		}
	}
}

// Z44 (fuzz seed 66).
func TestChain2Seed66(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("e1", "f.txt", 17, "T1")
		z.accept("e1")
		cp0 := z.cp(1)
		z.put("e2", "g.txt", gLines(17, "T2"))
		z.accept("e2")
		z.put("e3", "g.txt", gLines(11, "T3", 17, "T2"))
		z.edit("e4", "f.txt", 20, "T4")
		s1 := z.rewind(cp0)
		z.put("e5", "g.txt", gLines(14, "T5"))
		z.put("e6", "g.txt", gLines(8, "T6", 14, "T5"))
		z.cp(3)
		s3 := z.sel(api.RollbackRequest{File: "f.txt"})
		z.rewind(s1)
		z.edit("e7", "f.txt", 14, "T7")
		z.edit("e8", "f.txt", 11, "T8")
		z.accept("e8")
		z.cp(6)
		z.rewind(s3)
	})
}

// Z45 (fuzz seed 258).
func TestChain2Seed258(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("e1", "g.txt", gLines(2, "T1"))
		z.edit("e2", "f.txt", 5, "T2")
		z.sel(api.RollbackRequest{File: "g.txt"})
		z.edit("e3", "f.txt", 8, "T3")
		z.edit("e4", "f.txt", 14, "T4")
		z.reject("e2")
		cp1 := z.cp(2)
		z.edit("e5", "f.txt", 2, "T5")
		z.put("e6", "g.txt", gLines(5, "T6"))
		z.accept("e6")
		cp4 := z.cp(5)
		s5 := z.rewind(cp4)
		z.accept("e5")
		z.edit("e7", "f.txt", 17, "T7")
		z.reject("e7")
		z.rewind(s5)
		s9 := z.rewind(cp1)
		z.edit("e8", "f.txt", 20, "T8")
		z.bulk(true)
		z.rewind(s9)
		z.rewind(s9)
	})
}

// Z46 (fuzz seed 642 with deletions): rewinding to s2, taken before both
// an undo that brought g.txt back to the workspace (a rollback's create,
// rejected since) and the rewind that took it out again (whose synced
// delete stays), undid that second rollback's record alone, by record, so
// g.txt came back to the workspace (with its deletion pending) though the
// checkpoint has none. A record-by-record rewind may not undo a rollback
// that took out of the workspace a change the checkpoint does not hold
// (bringsBack): the net change is taken there.
func TestChain2Seed642(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("e1", "g.txt", gLines(2, "T1"))
		z.bulk(true)
		z.put("e2", "g.txt", gLines(2, "T1", 17, "T2"))
		z.reject("e2")
		z.put("e3", "g.txt", gLines(2, "T1", 11, "T3"))
		z.accept("e3")
		s1 := z.rewind(cp0)
		s2 := z.rewind(cp0)
		z.rewind(s1)
		z.rm("d4", "g.txt")
		z.rewind(cp0)
		z.edit("e5", "f.txt", 11, "T5")
		z.rewind(s2)
		z.wantWS("g.txt", chainAbsent, "after rewind s2")
		z.wantWT("g.txt", chainAbsent, "after rewind s2")
	})
}

// Z47 (fuzz seed 907 with deletions, minimised): the workspace holds e7
// (accepted); a rollback of the last two changes of g.txt (a deletion and
// a create, never accepted) gives one record that takes both out. The
// rewind to s5 took that record out of the worktree's side of the
// workspace alone, leaving e11's create behind, and saw a conflict with
// e7 where the user made no edit. A rollback's record now brings back the
// whole run of hidden changes it reverses (broughtBack).
func TestChain2Seed907(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("e1", "g.txt", gLines(8, "T1"))
		s5 := z.sel(api.RollbackRequest{File: "g.txt"})
		z.put("e7", "g.txt", gLines(5, "T7"))
		z.accept("e7")
		z.rm("d9", "g.txt")
		z.put("e11", "g.txt", gLines(11, "T11", 14, "T10"))
		z.sel(api.RollbackRequest{Last: 2})
		z.rewind(s5)
		z.wantWS("g.txt", chainAbsent, "after rewind s5")
		z.wantWT("g.txt", gLines(8, "T1"), "after rewind s5")
	})
}

// Z48 (fuzz seed 1874 with deletions, its g.txt part minimised): nothing
// ever reached the workspace; the last rewind undoes a rewind's record
// (never accepted) that took out another rewind's (rejected by it) and
// saw a conflict where the user made no edit. A workspace file that no
// change since the checkpoint reached is now left as it is. (The seed's
// f.txt part is TestChain2Seed1874Workspace.)
func TestChain2Seed1874(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("e7", "g.txt", gLines(11, "T3", 17, "T7"))
		c0 := z.cp(1)
		s1 := z.sel(api.RollbackRequest{File: "f.txt"})
		z.put("e10", "g.txt", gLines(11, "T3", 20, "T10"))
		s3 := z.rewind(c0)
		s4 := z.rewind(s3)
		z.rewind(s1)
		z.rewind(s4)
		z.wantWS("g.txt", chainAbsent, "after rewind s4")
		z.wantWT("g.txt", gLines(11, "T3", 17, "T7"), "after rewind s4")
	})
}

// Z49: a change accepted before the checkpoint and rejected after it
// comes back to the workspace with the rewind, though no record since
// the checkpoint reached the workspace: its reject did.
func TestChain2RewindUndoesLaterReject(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		c := z.cp(1)
		z.reject("a1")
		z.edit("p1", "f.txt", 10, "P10")
		z.rewind(c)
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind")
		z.wantWT("f.txt", z.L(3, "A3"), "after rewind")
	})
}

// Z50 (fuzz seed 1874 with deletions, its f.txt part minimised): the user
// accepts a rewind's offer (T9 reaches the workspace), and takes
// checkpoint s4 by rewinding to s3; that rewind takes T9 out of the
// workspace (a synced record, and an offer of T9 again), and the rewind
// to s1 after it rejects both without touching the workspace (it was at
// s1 as it is now), offering T9 once more. Rewinding to s4 must bring T9
// back to the workspace, as it was at s4, though the worktree holds T9
// throughout and no record left to undo ever reached the workspace: the
// rejected offer (hidden) shows that the workspace is not the worktree
// less the undone records, so the rewind takes the net change
// (hiddenAgree). It left T9 out before.
func TestChain2Seed1874Workspace(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("e9", "f.txt", 5, "T9")
		c0 := z.cp(1)
		s1 := z.sel(api.RollbackRequest{File: "f.txt"})
		z.rewind(s1)
		s3 := z.rewind(c0)
		z.acceptRollback("f.txt")
		z.wantWS("f.txt", z.L(5, "T9"), "after accepting the offer")
		s4 := z.rewind(s3)
		z.rewind(s1)
		z.rewind(s4)
		z.wantWS("f.txt", z.L(5, "T9"), "after rewind s4")
		z.wantWT("f.txt", z.L(5, "T9"), "after rewind s4")
	})
}

// Z51 (fuzz seed 820 with deletions, minimised; it failed with a first
// form of the fix of Z50): a rollback's offer rejected since the
// checkpoint (the rewind to s0 took out the offer of e5 again, and e7
// after it) counts among the changes the workspace never had, and is
// brought back only by a record that took out a run of changes ending
// in it: a record whose before side merely lacks lines the offer takes
// out (any file does) did not bring it back. Taken as brought back, it
// put e5's lines into the workspace's side of the file, and the last
// rewind saw a conflict with e10 where the user made no edit.
func TestChain2Seed820(t *testing.T) {
	chainRun(t, func(z *chain) {
		s0 := z.sel(api.RollbackRequest{File: "f.txt"})
		z.put("e1", "g.txt", gLines(2, "T1"))
		z.bulk(true)
		z.put("e5", "g.txt", gLines(2, "T1", 8, "T4", 11, "T5", 17, "T2"))
		s2 := z.sel(api.RollbackRequest{File: "g.txt"})
		s3 := z.rewind(s2)
		z.rewind(s0)
		z.put("e7", "g.txt", gLines(5, "T7"))
		z.put("e8", "g.txt", gLines(5, "T7", 14, "T8"))
		z.reject("e8")
		z.rewind(s0)
		z.put("e10", "g.txt", gLines(20, "T10"))
		z.accept("e10")
		z.rewind(s3)
		z.wantWS("g.txt", chainAbsent, "after rewind s3")
		z.wantWT("g.txt", chainAbsent, "after rewind s3")
	})
}

// Z52 (found minimising Z51): the rewind to s0 takes out of the worktree
// e7 and, under it, the offer of e4 that the rewind to s2 made, in one
// record (never applied); e8, between them, the user had rejected (it
// left the worktree with no record). The rewind to s3 undoes that record:
// it brings back the run e7, offer, which is no change of the workspace
// at all, and e8 is no part of that run. The run was cut at e8, so the
// workspace's side of g.txt kept e7's line, and the rewind saw a
// conflict with e10, though the user made no edit, and left e10 in the
// workspace, which had no g.txt at s3.
func TestChain2RunPastAUserReject(t *testing.T) {
	chainRun(t, func(z *chain) {
		s0 := z.cp(1)
		z.put("e1", "g.txt", gLines(2, "T1"))
		z.bulk(true)
		z.put("e4", "g.txt", gLines(2, "T1", 8, "T4"))
		s2 := z.sel(api.RollbackRequest{File: "g.txt"})
		s3 := z.rewind(s2)
		z.put("e7", "g.txt", gLines(5, "T7"))
		z.put("e8", "g.txt", gLines(5, "T7", 14, "T8"))
		z.reject("e8")
		z.rewind(s0)
		z.put("e10", "g.txt", gLines(20, "T10"))
		z.accept("e10")
		z.rewind(s3)
		z.wantWS("g.txt", chainAbsent, "after rewind s3")
		z.wantWT("g.txt", chainAbsent, "after rewind s3")
	})
}

// Z53 (fuzz seed 2917 with deletions, minimised): g.txt, created and
// changed by the agent and never accepted, leaves the worktree (a rewind,
// then a rollback of the file); the agent creates it again (e9, accepted)
// and makes two changes the user rejects. The rewind to c1 takes e9 out
// of the workspace, record by record: the workspace has no g.txt, as at
// c1. Its record of that move was worked out in the worktree's terms, in
// which the workspace's side holds the changes it never had (e2, e8) and
// e9's creation cannot be taken out of that; the move went to a "modify"
// that the workspace, which has no file, cannot take, and its offer of
// e2 and e8 did not apply: the workspace with the pending records did not
// give the worktree. The move is now e9 taken out of the worktree's file,
// and the offer creates the file again.
func TestChain2Seed2917(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("e2", "g.txt", gLines(20, "T2"))
		c0 := z.cp(1)
		z.put("e8", "g.txt", gLines(5, "T6", 17, "T8", 20, "T2"))
		c1 := z.rewind(c0)
		z.sel(api.RollbackRequest{File: "g.txt"})
		z.put("e9", "g.txt", gLines(11, "T9"))
		z.put("e10", "g.txt", gLines(2, "T10", 11, "T9"))
		z.reject("e10")
		z.put("e12", "g.txt", gLines(8, "T12", 11, "T9"))
		z.accept("e9")
		z.reject("e12")
		z.rewind(c1)
		z.wantWS("g.txt", chainAbsent, "after rewind c1")
		z.wantWT("g.txt", gLines(5, "T6", 17, "T8", 20, "T2"), "after rewind c1")
	})
}

// Z54 (fuzz seed 3491 with deletions, minimised): the rewind to c4 takes
// d8 (a deletion, pending at c5, which is taken then) out of the
// worktree in a record never applied to the workspace, and offers e5
// again; the user accepts the offer (and the older offer of g.txt's
// creation with it). The rewind to c5 undoes that record, which brings d8
// back: the workspace's side of g.txt took the record out alone (a
// creation taken out of a file with more lines than it made) and saw a
// conflict, leaving the workspace as it was. A record made before the
// checkpoint and rejected since without reaching the workspace is now
// among those an undone record brings back, so the two cancel.
func TestChain2Seed3491(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("e1", "g.txt", gLines(5, "T1"))
		c0 := z.sel(api.RollbackRequest{File: "g.txt"})
		z.rewind(c0)
		z.put("e5", "g.txt", gLines(5, "T1", 20, "T5"))
		c4 := z.sel(api.RollbackRequest{File: "g.txt"}) // e1 and e5: g.txt goes
		c5 := z.rewind(c4)
		z.acceptRollback("g.txt")
		z.rewind(c5)
		z.wantWT("g.txt", chainAbsent, "after rewind c5")
	})
}

// Z55 (fuzz seed 3715, without deletions, minimised; fixed with Z54):
// the rewind to c0 takes e2 out of the worktree in a record never
// applied; e1, pending at c1, the user rejects, and e9 creates g.txt
// again, accepted. The rewind to c1 undoes that record, which brings e2
// back: the workspace's side took it out alone and saw a conflict with
// e9, though the user made no edit.
func TestChain2Seed3715(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("e1", "g.txt", gLines(14, "T1"))
		c0 := z.cp(1)
		z.put("e2", "g.txt", gLines(2, "T2", 14, "T1"))
		c1 := z.rewind(c0)
		z.reject("e1")
		z.put("e9", "g.txt", gLines(11, "T9"))
		z.accept("e9")
		z.rewind(c1)
		z.wantWS("g.txt", chainAbsent, "after rewind c1")
		z.wantWT("g.txt", gLines(2, "T2", 14, "T1"), "after rewind c1")
	})
}
