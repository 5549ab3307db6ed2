package history

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/sync"
)

// TestMoveLinesAgreesWithDiff: blame's fast path (a record's stored
// hunks) and its content path (a diff) give every line the same origin,
// over random edits, so a session's blame does not depend on which path
// each record took.
func TestMoveLinesAgreesWithDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 1))
	file := func(n int) []string {
		var ls []string
		for i := 0; i < n; i++ {
			ls = append(ls, fmt.Sprintf("l%d", rng.IntN(8)))
		}
		return ls
	}
	join := func(ls []string) []byte {
		if len(ls) == 0 {
			return nil
		}
		return []byte(strings.Join(ls, "\n") + "\n")
	}
	cur := file(30)
	who := make([]*prsm.Record, len(cur))
	for step := 0; step < 500; step++ {
		r := &prsm.Record{ID: fmt.Sprint(step)}
		next := append([]string(nil), cur...)
		for k := rng.IntN(4); k >= 0; k-- {
			switch i := rng.IntN(len(next) + 1); {
			case rng.IntN(3) == 0 && i < len(next):
				next = append(next[:i], next[i+1:]...)
			case rng.IntN(2) == 0 && i < len(next):
				next[i] = fmt.Sprintf("l%d", rng.IntN(8))
			default:
				next = append(next[:i], append([]string{fmt.Sprintf("l%d", rng.IntN(8))}, next[i:]...)...)
			}
		}
		old, new := join(cur), join(next)
		_, _, hunks, _ := sync.RangesAndHunks(old, new)
		fast := moveLines(who, hunks, r)
		slow := follow(old, new, who, r)
		if len(fast) != len(slow) {
			t.Fatalf("step %d: %d lines by the hunks, %d by the diff", step, len(fast), len(slow))
		}
		for i := range fast {
			if fast[i] != slow[i] {
				t.Fatalf("step %d, line %d: %v by the hunks, %v by the diff", step, i, fast[i], slow[i])
			}
		}
		cur, who = next, slow
		if len(cur) == 0 {
			cur = file(5)
			who = make([]*prsm.Record, len(cur))
		}
	}
}
