package engine_test

import (
	"strings"
	"testing"

	"github.com/prsm-dev/prsm"
)

// Every text record carries its hunks, the blocks of the one diff that
// gives its ranges, numbered as `git diff -U0` numbers them, each with
// the record's status; binary records have none. A record stored before
// prsm kept hunks gets them worked out when it is read.
func TestRecordHunks(t *testing.T) {
	f := newFixture(t)
	s := f.start(prsm.ModeAuto)
	lines := make([]string, 12)
	for i := range lines {
		lines[i] = "line " + string(rune('a'+i))
	}
	orig := strings.Join(lines, "\n") + "\n"
	recs := f.tool(s, "w0", "Write", "h.txt", func(wt string) { write(t, wt, "h.txt", orig) })
	if len(recs) != 1 || len(recs[0].Hunks) != 1 || recs[0].Hunks[0] != (prsm.Hunk{Index: 0, OldStart: 0, OldLines: 0, NewStart: 1, NewLines: 12, Status: prsm.StatusPending}) {
		t.Fatalf("create: %+v", recs[0].Hunks)
	}
	// Line 2 changed, a line inserted after line 6, lines 10-11 deleted.
	edited := strings.Join(append(append(append([]string{lines[0], "LINE B"}, lines[2:6]...), "inserted"), append(lines[6:9], lines[11])...), "\n") + "\n"
	recs = f.tool(s, "e1", "Edit", "h.txt", func(wt string) { write(t, wt, "h.txt", edited) })
	want := []prsm.Hunk{
		{Index: 0, OldStart: 2, OldLines: 1, NewStart: 2, NewLines: 1, Status: prsm.StatusPending},
		{Index: 1, OldStart: 6, OldLines: 0, NewStart: 7, NewLines: 1, Status: prsm.StatusPending},
		{Index: 2, OldStart: 10, OldLines: 2, NewStart: 10, NewLines: 0, Status: prsm.StatusPending},
	}
	if len(recs) != 1 || !equalHunks(recs[0].Hunks, want) {
		t.Fatalf("edit hunks: %+v\nwant %+v", recs[0].Hunks, want)
	}
	if _, err := f.eng.Accept(f.ctx, s.ID, "e1"); err != nil {
		t.Fatal(err)
	}
	r := f.record(s, "e1")
	for _, h := range r.Hunks {
		if h.Status != prsm.StatusAccepted {
			t.Fatalf("after accept: %+v", r.Hunks)
		}
	}

	// Binary: no hunks.
	recs = f.tool(s, "b1", "Write", "bin.dat", func(wt string) { write(t, wt, "bin.dat", "a\x00b\n") })
	if len(recs) != 1 || recs[0].Hunks == nil || len(recs[0].Hunks) != 0 {
		t.Fatalf("binary record hunks: %#v", recs[0].Hunks)
	}

	// A record from before hunks were kept.
	if _, err := f.eng.DB.Q().ExecContext(f.ctx, "UPDATE records SET hunks = '' WHERE id = 'e1'"); err != nil {
		t.Fatal(err)
	}
	legacy, err := f.eng.Records(f.ctx, s.ID, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.eng.FillContent(f.ctx, legacy); err != nil { // as the server answers
		t.Fatal(err)
	}
	seen := false
	for _, r := range legacy {
		if r.ID != "e1" {
			continue
		}
		seen = true
		want[0].Status, want[1].Status, want[2].Status = prsm.StatusAccepted, prsm.StatusAccepted, prsm.StatusAccepted
		if !equalHunks(r.Hunks, want) {
			t.Fatalf("legacy record's hunks: %+v", r.Hunks)
		}
	}
	if !seen {
		t.Fatal("no record e1 listed")
	}
}

func equalHunks(a, b []prsm.Hunk) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
