package engine_test

// Chains around rewinds to a checkpoint and their undo (the S scenarios
// of the first audit, and what minimising them found), run by the chain
// harness (chainharness_test.go).

import (
	"testing"
)

// S1: accepted + pending; rewind, undo, rewind again to the same older checkpoint.
func TestChain01RewindUndoRewindAgain(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		s1 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind")
		z.wantWT("f.txt", z.base, "after rewind")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo")
		z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after second rewind")
		z.wantWT("f.txt", z.base, "after second rewind")
	})
}

// S2: undo of the undo, then undo again (third rewind to a safety cp).
func TestChain02UndoTheUndo(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		s1 := z.rewind(cp0)
		s2 := z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		s3 := z.rewind(s2)
		z.wantWS("f.txt", z.base, "after undo of undo")
		z.wantWT("f.txt", z.base, "after undo of undo")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo of undo of undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo of undo of undo")
	})
}

// S3: reject the offered pending part after an undo, then rewind again and undo again.
func TestChain03RejectAfterUndoThenRewindUndo(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		s1 := z.rewind(cp0)
		z.rewind(s1)
		if z.review {
			pend := z.pendingOf("f.txt")
			if len(pend) != 1 {
				z.t.Fatalf("pending of f.txt after undo:\n%s", summary(pend))
			}
			z.reject(pend[0].ID)
		} else {
			return // auto mode: nothing to compare
		}
		z.wantWS("f.txt", z.L(3, "A3"), "after reject of offer")
		z.wantWT("f.txt", z.L(3, "A3"), "after reject of offer")
		s4 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind 2")
		z.wantWT("f.txt", z.base, "after rewind 2")
		z.rewind(s4)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3"), "after undo 2")
	})
}

// S4: a rewind brings back a rejected change; accept the offer; then undo the rewind; then rewind to cp.
func TestChain04AcceptOfferThenRewind(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("n1", "n.txt", "agent\n")
		cp := z.cp(1)
		z.reject("n1")
		s1 := z.rewind(cp)
		z.wantWS("n.txt", chainAbsent, "after rewind")
		z.wantWT("n.txt", "agent\n", "after rewind")
		if z.review {
			pend := z.pendingOf("n.txt")
			if len(pend) != 1 {
				z.t.Fatalf("pending of n.txt:\n%s", summary(pend))
			}
			z.accept(pend[0].ID)
		}
		z.wantWS("n.txt", "agent\n", "after accepting offer")
		cp2 := z.cp(2)
		z.edit("a2", "n.txt", 1, "x") // n.txt has 1 line
		_ = cp2
		z.rewind(s1)
		z.wantWS("n.txt", chainAbsent, "after undoing the rewind")
		z.wantWT("n.txt", chainAbsent, "after undoing the rewind")
	})
}

// S5: create accepted, then delete pending; rewind to before creation; undo.
func TestChain05CreateThenDelete(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("n1", "n.txt", "agent\n")
		z.accept("n1")
		cp1 := z.cp(2)
		z.rm("d1", "n.txt")
		z.wantWS("n.txt", "agent\n", "after delete pending")
		s1 := z.rewind(cp0)
		z.wantWS("n.txt", chainAbsent, "after rewind cp0")
		z.wantWT("n.txt", chainAbsent, "after rewind cp0")
		z.rewind(s1)
		z.wantWS("n.txt", "agent\n", "after undo")
		z.wantWT("n.txt", chainAbsent, "after undo")
		z.rewind(cp1)
		z.wantWS("n.txt", "agent\n", "after rewind cp1")
		z.wantWT("n.txt", "agent\n", "after rewind cp1")
	})
}

// S5c: create accepted, delete accepted, rewind between, undo.
func TestChain05cCreateDeleteBothAccepted(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.cp(1)
		z.put("n1", "n.txt", "agent\n")
		z.accept("n1")
		cp1 := z.cp(2)
		z.rm("d1", "n.txt")
		z.accept("d1")
		s1 := z.rewind(cp1)
		z.wantWS("n.txt", "agent\n", "after rewind cp1")
		z.wantWT("n.txt", "agent\n", "after rewind cp1")
		z.rewind(s1)
		z.wantWS("n.txt", chainAbsent, "after undo")
		z.wantWT("n.txt", chainAbsent, "after undo")
	})
}

// S6: two files.
func TestChain06TwoFiles(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.put("g1", "g.txt", "g one\ng two\ng three\n")
		z.edit("p1", "f.txt", 10, "P10")
		z.put("g2", "g.txt", "g one\ng two\ng THREE\n")
		z.accept("g1")
		s1 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind")
		z.wantWS("g.txt", chainAbsent, "after rewind")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWS("g.txt", "g one\ng two\ng three\n", "after undo")
		z.wantWT("g.txt", "g one\ng two\ng THREE\n", "after undo")
		z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind 2")
		z.wantWS("g.txt", chainAbsent, "after rewind 2")
	})
}

// S7: rewind to a checkpoint between two accepted changes; undo; rewind older; undo.
func TestChain07BetweenAccepted(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		cp1 := z.cp(2)
		z.edit("a2", "f.txt", 5, "A5")
		z.accept("a2")
		s1 := z.rewind(cp1)
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind cp1")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3", 5, "A5"), "after undo 1")
		s3 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3", 5, "A5"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3", 5, "A5"), "after undo 2")
	})
}

// S8: a rewind in between rejects.
func TestChain08RewindBetweenRejects(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		cp1 := z.cp(2)
		z.reject("p1")
		z.edit("p2", "f.txt", 12, "P12")
		z.reject("p2")
		z.edit("p3", "f.txt", 14, "P14")
		s1 := z.rewind(cp1)
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind cp1")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after rewind cp1")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 14, "P14"), "after undo")
		s3 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.wantWT("f.txt", z.base, "after rewind cp0")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3", 14, "P14"), "after undo 2")
	})
}

// F1 candidates: minimise ZZ08.
func TestChain08a(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		cp1 := z.cp(2)
		z.reject("p1")
		z.edit("p3", "f.txt", 14, "P14")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		s3 := z.rewind(cp0)
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3", 14, "P14"), "after undo 2")
	})
}

func TestChain08b(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		cp1 := z.cp(2)
		z.reject("p1")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		s3 := z.rewind(cp0)
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3"), "after undo 2")
	})
}

func TestChain08c(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		cp1 := z.cp(2)
		z.reject("p1")
		z.edit("p3", "f.txt", 14, "P14")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		z.bulk(true)
		z.wantWS("f.txt", z.L(3, "A3", 14, "P14"), "after accept all")
		_ = cp0
	})
}

// no accepted change at all
func TestChain08d(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.reject("p1")
		z.edit("p3", "f.txt", 14, "P14")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		s3 := z.rewind(cp0)
		z.rewind(s3)
		z.wantWS("f.txt", z.base, "after undo 2")
		z.wantWT("f.txt", z.L(14, "P14"), "after undo 2")
	})
}

func TestChain08e(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.reject("p1")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		s3 := z.rewind(cp0)
		z.rewind(s3)
		z.wantWS("f.txt", z.base, "after undo 2")
		z.wantWT("f.txt", z.base, "after undo 2")
	})
}

func TestChain08f(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.reject("p1")
		z.rewind(cp1)
		s3 := z.rewind(cp0)
		z.rewind(s3)
		z.wantWS("f.txt", z.base, "after undo 2")
		z.wantWT("f.txt", z.L(10, "P10"), "after undo 2")
	})
}

func TestChain06b(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("g1", "g.txt", "g one\ng two\ng three\n")
		z.accept("g1")
		z.put("g2", "g.txt", "g one\ng two\ng THREE\n")
		s1 := z.rewind(cp0)
		z.wantWS("g.txt", chainAbsent, "after rewind")
		z.rewind(s1)
		z.wantWS("g.txt", "g one\ng two\ng three\n", "after undo")
		z.wantWT("g.txt", "g one\ng two\ng THREE\n", "after undo")
		z.rewind(cp0)
		z.wantWS("g.txt", chainAbsent, "after rewind 2")
		z.wantWT("g.txt", chainAbsent, "after rewind 2")
	})
}

// reject an accepted change, then rewind to a checkpoint between, then undo.
func TestChain12RejectAccepted(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		cp1 := z.cp(2)
		z.edit("a2", "f.txt", 5, "A5")
		z.accept("a2")
		z.reject("a1")
		z.wantWS("f.txt", z.L(5, "A5"), "after reject a1")
		s1 := z.rewind(cp1)
		s2 := z.rewind(s1)
		z.wantWS("f.txt", z.L(5, "A5"), "after undo")
		z.wantWT("f.txt", z.L(5, "A5"), "after undo")
		z.rewind(s2)
		s4 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.rewind(s4)
	})
}

// two rewinds stacked, undone in reverse order.
func TestChain15StackedRewinds(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		cp1 := z.cp(2)
		z.edit("p1", "f.txt", 10, "P10")
		z.edit("a2", "f.txt", 5, "A5")
		z.accept("a2") // accepts p1 too (earlier pending of the file)
		z.edit("p2", "f.txt", 12, "P12")
		s1 := z.rewind(cp1)
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind cp1")
		s2 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.rewind(s2)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3"), "after undo 2")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3", 5, "A5", 10, "P10"), "after undo 1")
		z.wantWT("f.txt", z.L(3, "A3", 5, "A5", 10, "P10", 12, "P12"), "after undo 1")
	})
}

// accept the offer after an undo, then rewind, then undo.
func TestChain16AcceptOfferAfterUndo(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		s1 := z.rewind(cp0)
		z.rewind(s1)
		z.bulk(true)
		z.wantWS("f.txt", z.L(3, "A3", 10, "P10"), "after accepting the offer")
		s3 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind 2")
		z.rewind(s3)
		z.wantWS("f.txt", z.L(3, "A3", 10, "P10"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo 2")
	})
}

// a pending change of another file before the checkpoint, accepted after it.
func TestChain17PendingBeforeAcceptedAfter(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("g1", "g.txt", "g\n")
		cp1 := z.cp(1)
		z.accept("g1")
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		s1 := z.rewind(cp1)
		z.wantWS("f.txt", z.base, "after rewind")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWS("g.txt", "g\n", "after undo")
	})
}

// a pending change rejected, checkpoint, rewind to before the change, undo.
func TestChain18RejectThenRewindOlder(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.acceptedAndPending()
		z.reject("p1")
		z.edit("p2", "f.txt", 12, "P12")
		s1 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 12, "P12"), "after undo")
	})
}

func TestChain19MinStacked(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.edit("p2", "f.txt", 12, "P12")
		z.rewind(cp1)
		s := z.rewind(cp0)
		z.rewind(s)
		z.wantWS("f.txt", z.base, "after undo")
		z.wantWT("f.txt", z.L(10, "P10"), "after undo")
	})
}

func TestChain19bMinStackedAccepted(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		cp1 := z.cp(2)
		z.edit("p2", "f.txt", 12, "P12")
		z.rewind(cp1)
		s := z.rewind(cp0)
		z.rewind(s)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3"), "after undo")
	})
}

// Finding 1: nothing ever accepted; two stacked rewinds, the second
// undone: the workspace never gets a change.
func TestChainFinding1(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.edit("p2", "f.txt", 12, "P12")
		z.rewind(cp1)
		z.rewind(z.rewind(cp0))
		if z.review {
			z.wantWS("f.txt", z.base, "after undoing the second rewind")
		}
		z.wantWT("f.txt", z.L(10, "P10"), "after undoing the second rewind")
	})
}

// Finding 1b: the same through a reject, nothing ever accepted.
func TestChainFinding1b(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("p1", "f.txt", 10, "P10")
		cp1 := z.cp(2)
		z.reject("p1")
		z.rewind(z.rewind(cp1))
		undo := z.rewind(cp0)
		if z.review && len(z.pendingOf("f.txt")) != 0 {
			z.t.Errorf("worktree and workspace hold the same, yet pending offers:\n%s", z.records(z.s))
		}
		z.rewind(undo)
		z.wantWS("f.txt", z.base, "after the last undo")
	})
}

// Finding 2: an accepted new file with a pending edit; rewind before it,
// undo, rewind again: the file leaves the workspace again.
func TestChainFinding2(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("g1", "g.txt", "a\nb\nc\n")
		z.accept("g1")
		z.put("g2", "g.txt", "a\nb\nC\n")
		z.rewind(z.rewind(cp0))
		if z.review {
			z.wantWS("g.txt", "a\nb\nc\n", "after the undo")
		}
		z.wantWT("g.txt", "a\nb\nC\n", "after the undo")
		z.rewind(cp0)
		z.wantWS("g.txt", chainAbsent, "after rewinding again")
		z.wantWT("g.txt", chainAbsent, "after rewinding again")
	})
}

// S5b: create pending, delete pending: net nothing; rewind to before.
func TestChain05bCreateDeleteBothPending(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.put("n1", "n.txt", "agent\n")
		cp1 := z.cp(2)
		z.rm("d1", "n.txt")
		s1 := z.rewind(cp1)
		z.wantWS("n.txt", chainAbsent, "after rewind cp1")
		z.wantWT("n.txt", "agent\n", "after rewind cp1")
		z.rewind(s1)
		z.wantWS("n.txt", chainAbsent, "after undo")
		z.wantWT("n.txt", chainAbsent, "after undo")
		z.rewind(cp0)
		z.wantWS("n.txt", chainAbsent, "after rewind cp0")
		z.wantWT("n.txt", chainAbsent, "after rewind cp0")
	})
}

func TestChain05d(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("n1", "n.txt", "agent\n")
		cp1 := z.cp(2)
		z.rm("d1", "n.txt")
		s1 := z.rewind(cp1)
		z.rewind(s1)
		z.bulk(true)
		z.wantWS("n.txt", chainAbsent, "after undo + accept all")
		z.wantWT("n.txt", chainAbsent, "after undo + accept all")
	})
}

// rewind, new agent work accepted and pending, then undo the rewind.
func TestChain13NewWorkThenUndo(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("p1", "f.txt", 10, "P10")
		s1 := z.rewind(cp0)
		z.edit("b1", "f.txt", 6, "B6")
		z.accept("b1")
		z.edit("b2", "f.txt", 8, "B8")
		z.wantWS("f.txt", z.L(6, "B6"), "after new work")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo")
	})
}
