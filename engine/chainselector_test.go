package engine_test

// Chains with selector rewinds (Last, File, Agent) among rewinds and
// decisions, run by the chain harness (chainharness_test.go).

import (
	"fmt"
	"testing"

	"github.com/prsm-dev/prsm/api"
)

// S9: selector rollbacks (last, file, agent) and their undo.
func TestChain09SelectorLast(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("a2", "f.txt", 5, "A5")
		z.accept("a2")
		z.edit("p1", "f.txt", 10, "P10")
		s1 := z.sel(api.RollbackRequest{Last: 2})
		z.wantWS("f.txt", z.L(3, "A3"), "after last 2")
		z.wantWT("f.txt", z.L(3, "A3"), "after last 2")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3", 5, "A5"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 5, "A5", 10, "P10"), "after undo")
		s2 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.rewind(s2)
		z.wantWS("f.txt", z.L(3, "A3", 5, "A5"), "after undo 2")
		z.wantWT("f.txt", z.L(3, "A3", 5, "A5", 10, "P10"), "after undo 2")
	})
}

func TestChain10SelectorFileAndAgent(t *testing.T) {
	for _, req := range []api.RollbackRequest{{File: "f.txt"}, {AgentID: "claude"}} {
		t.Run(fmt.Sprint(req.File, req.AgentID), func(t *testing.T) {
			chainRun(t, func(z *chain) {
				z.edit("a1", "f.txt", 3, "A3")
				z.accept("a1")
				z.put("g1", "g.txt", "g\n")
				z.accept("g1")
				z.edit("p1", "f.txt", 10, "P10")
				s1 := z.sel(req)
				z.wantWS("f.txt", z.base, "after rollback")
				z.wantWT("f.txt", z.base, "after rollback")
				z.rewind(s1)
				z.wantWS("f.txt", z.L(3, "A3"), "after undo")
				z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo")
				z.wantWS("g.txt", "g\n", "after undo")
			})
		})
	}
}

// selector Last:1 on a pending record, undo, then Last:1 on accepted, undo.
func TestChain14SelectorPending(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("p1", "f.txt", 10, "P10")
		s1 := z.sel(api.RollbackRequest{Last: 1})
		z.wantWS("f.txt", z.L(3, "A3"), "after last 1")
		z.wantWT("f.txt", z.L(3, "A3"), "after last 1")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo")
		z.reject("p1") // p1 was rejected by the rollback: no-op
		s2 := z.sel(api.RollbackRequest{Last: 1})
		z.rewind(s2)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 2")
	})
}

// Z09: selector File between rewinds.
func TestChain2SelFileBetweenRewinds(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		cp1 := z.cp(2)
		z.edit("p1", "f.txt", 10, "P10")
		z.put("g1", "g.txt", "g\n")
		z.accept("g1")
		s1 := z.rewind(cp1)
		z.wantWS("f.txt", z.L(3, "A3"), "after rewind")
		z.wantWS("g.txt", chainAbsent, "after rewind")
		z.edit("b1", "f.txt", 6, "B6")
		z.accept("b1")
		s2 := z.sel(api.RollbackRequest{File: "f.txt"})
		z.wantWS("f.txt", z.base, "after sel file")
		z.wantWT("f.txt", z.base, "after sel file")
		z.rewind(s2)
		z.wantWS("f.txt", z.L(3, "A3", 6, "B6"), "after undo sel")
		z.wantWT("f.txt", z.L(3, "A3", 6, "B6"), "after undo sel")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo rewind")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo rewind")
		z.wantWS("g.txt", "g\n", "after undo rewind")
	})
}

// Z10: selector Last:1 after a rewind, where the last record is a Rollback-era record; undo both.
func TestChain2SelLastAfterRewind(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("p1", "f.txt", 10, "P10")
		s1 := z.rewind(cp0)
		z.edit("b1", "f.txt", 6, "B6")
		z.accept("b1")
		z.edit("b2", "f.txt", 14, "B14")
		s2 := z.sel(api.RollbackRequest{Last: 2})
		z.wantWS("f.txt", z.base, "after last 2")
		z.wantWT("f.txt", z.base, "after last 2")
		z.rewind(s2)
		z.wantWS("f.txt", z.L(6, "B6"), "after undo sel")
		z.wantWT("f.txt", z.L(6, "B6", 14, "B14"), "after undo sel")
		z.rewind(s1)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo rewind")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after undo rewind")
	})
}

// Z25: selector rollback of a pending delete, then undo.
func TestChain2SelPendingDelete(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("n1", "n.txt", "agent\n")
		z.accept("n1")
		z.rm("d1", "n.txt")
		s1 := z.sel(api.RollbackRequest{Last: 1})
		z.wantWS("n.txt", "agent\n", "after sel")
		z.wantWT("n.txt", "agent\n", "after sel")
		z.rewind(s1)
		z.wantWS("n.txt", "agent\n", "after undo")
		z.wantWT("n.txt", chainAbsent, "after undo")
	})
}

// Z32: selector File on g.txt (new work after an undo) while f.txt has an offer; undo; rewind.
func TestChain2SelOtherFileWithOffer(t *testing.T) {
	chainRun(t, func(z *chain) {
		cp0 := z.cp(1)
		z.edit("a1", "f.txt", 3, "A3")
		z.accept("a1")
		z.edit("p1", "f.txt", 10, "P10")
		z.put("g1", "g.txt", "g\nh\ni\n")
		z.accept("g1")
		s1 := z.rewind(cp0)
		z.rewind(s1)
		z.wantWS("g.txt", "g\nh\ni\n", "after undo")
		z.put("g2", "g.txt", "G\nh\ni\n")
		z.accept("g2")
		z.put("g3", "g.txt", "G\nh\nI\n")
		s3 := z.sel(api.RollbackRequest{File: "g.txt"}) // g1, g2 and g3: g.txt goes
		z.wantWS("g.txt", chainAbsent, "after sel g")
		z.wantWT("g.txt", chainAbsent, "after sel g")
		z.wantWS("f.txt", z.L(3, "A3"), "after sel g")
		z.wantWT("f.txt", z.L(3, "A3", 10, "P10"), "after sel g")
		z.rewind(s3)
		z.wantWS("g.txt", "G\nh\ni\n", "after undo sel")
		z.wantWT("g.txt", "G\nh\nI\n", "after undo sel")
		s5 := z.rewind(cp0)
		z.wantWS("f.txt", z.base, "after rewind cp0")
		z.wantWS("g.txt", chainAbsent, "after rewind cp0")
		z.rewind(s5)
		z.wantWS("f.txt", z.L(3, "A3"), "after undo 3")
		z.wantWS("g.txt", "G\nh\ni\n", "after undo 3")
		z.wantWT("g.txt", "G\nh\nI\n", "after undo 3")
	})
}

// Z34 (fuzz seed 25, minimised): a pending change taken out by a File
// selector rollback; after a chain of rewinds and undos it reaches the
// workspace though nobody accepted it.
func TestChain2SelectorPendingLeaks(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("e1", "f.txt", 20, "T1")
		s0 := z.sel(api.RollbackRequest{File: "f.txt"})
		z.edit("e2", "f.txt", 2, "T2")
		z.accept("e2")
		s4 := z.rewind(s0)
		z.wantWS("f.txt", z.base, "after rewind s0")
		z.wantWT("f.txt", z.L(20, "T1"), "after rewind s0")
		z.rewind(s4)
		z.wantWS("f.txt", z.L(2, "T2"), "after undo")
		z.wantWT("f.txt", z.L(2, "T2"), "after undo")
		cp6 := z.cp(7)
		z.edit("e8", "f.txt", 11, "T8")
		z.accept("e8")
		z.rewind(cp6)
		z.wantWS("f.txt", z.L(2, "T2"), "after rewind cp6")
		z.rewind(s0)
		z.wantWS("f.txt", z.base, "after rewind s0 again")
		z.wantWT("f.txt", z.L(20, "T1"), "after rewind s0 again")
		z.rewind(s4)
		z.wantWS("f.txt", z.L(2, "T2"), "after undo again")
		z.wantWT("f.txt", z.L(2, "T2"), "after undo again")
	})
}

// Z34b: same, e8 left pending.
func TestChain2SelectorPendingLeaksB(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("e1", "f.txt", 20, "T1")
		s0 := z.sel(api.RollbackRequest{File: "f.txt"})
		z.edit("e2", "f.txt", 2, "T2")
		z.accept("e2")
		s4 := z.rewind(s0)
		z.rewind(s4)
		cp6 := z.cp(7)
		z.edit("e8", "f.txt", 11, "T8")
		z.rewind(cp6)
		z.rewind(s0)
		z.rewind(s4)
		z.wantWS("f.txt", z.L(2, "T2"), "after undo again")
		z.wantWT("f.txt", z.L(2, "T2"), "after undo again")
	})
}

// Z34c: same with a turn checkpoint instead of the selector.
func TestChain2SelectorPendingLeaksC(t *testing.T) {
	chainRun(t, func(z *chain) {
		cpA := z.cp(1)
		z.edit("e1", "f.txt", 20, "T1")
		s0 := z.cp(2)
		z.rewind(cpA)
		z.edit("e2", "f.txt", 2, "T2")
		z.accept("e2")
		s4 := z.rewind(s0)
		z.rewind(s4)
		cp6 := z.cp(7)
		z.edit("e8", "f.txt", 11, "T8")
		z.accept("e8")
		z.rewind(cp6)
		z.rewind(s0)
		z.rewind(s4)
		z.wantWS("f.txt", z.L(2, "T2"), "after undo again")
		z.wantWT("f.txt", z.L(2, "T2"), "after undo again")
	})
}

// Z35 (fuzz seed 126): a pending create taken out by Last:1, the file
// created again and accepted; rewind to the selector's safety checkpoint, undo.
func TestChain2RecreateAfterSelector(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.edit("e1", "f.txt", 17, "T1")
		z.accept("e1")
		z.put("e2", "g.txt", "g1\ng2\nT2\ng4\ng5\ng6\n")
		s0 := z.sel(api.RollbackRequest{Last: 1})
		z.wantWT("g.txt", chainAbsent, "after sel")
		z.edit("e3", "f.txt", 5, "T3")
		z.put("e4", "g.txt", "g1\ng2\ng3\ng4\nT4\ng6\n")
		z.accept("e4")
		z.reject("e3")
		s1 := z.rewind(s0)
		z.wantWS("g.txt", chainAbsent, "after rewind s0")
		z.wantWT("g.txt", "g1\ng2\nT2\ng4\ng5\ng6\n", "after rewind s0")
		z.rewind(s1)
		z.wantWS("g.txt", "g1\ng2\ng3\ng4\nT4\ng6\n", "after undo")
		z.wantWT("g.txt", "g1\ng2\ng3\ng4\nT4\ng6\n", "after undo")
		z.wantWS("f.txt", z.L(17, "T1"), "after undo")
	})
}

// Z35b: without the f.txt records.
func TestChain2RecreateAfterSelectorB(t *testing.T) {
	chainRun(t, func(z *chain) {
		z.put("e2", "g.txt", "g1\ng2\nT2\ng4\ng5\ng6\n")
		s0 := z.sel(api.RollbackRequest{Last: 1})
		z.put("e4", "g.txt", "g1\ng2\ng3\ng4\nT4\ng6\n")
		z.accept("e4")
		s1 := z.rewind(s0)
		z.wantWS("g.txt", chainAbsent, "after rewind s0")
		z.wantWT("g.txt", "g1\ng2\nT2\ng4\ng5\ng6\n", "after rewind s0")
		z.rewind(s1)
		z.wantWS("g.txt", "g1\ng2\ng3\ng4\nT4\ng6\n", "after undo")
		z.wantWT("g.txt", "g1\ng2\ng3\ng4\nT4\ng6\n", "after undo")
	})
}
