package engine_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/engine"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/worktree"
)

// gitHas reports whether the repository's object store has id (git's own
// view, not prsm's staged one).
func gitHas(dir, id string) bool {
	cmd := exec.Command("git", "cat-file", "-e", id)
	cmd.Dir = dir
	return cmd.Run() == nil
}

// TestCheckpointObjectsFlushedAfterCrash: a checkpoint answers before its
// objects are in the repository; a crash right then loses nothing: the
// next start writes them and points the refs at the commit, and the
// checkpoint can be rewound to after git gc --prune=now.
func TestCheckpointObjectsFlushedAfterCrash(t *testing.T) {
	noTimedFlush(t)
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "one")) })
	if err := f.eng.FlushObjects(f.ctx); err != nil {
		t.Fatal(err)
	}
	var cp *prsm.Checkpoint
	if !crashing(t, "checkpoint:stored", 1, func() {
		var err error
		cp, err = f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: "kept"})
		if err != nil {
			t.Error(err)
		}
	}) {
		t.Fatal("crash point checkpoint:stored not reached")
	}
	list, err := f.eng.Checkpoints(f.ctx, s.ID, "kept")
	if err != nil || len(list) != 1 {
		t.Fatalf("checkpoint not stored: %v %d", err, len(list))
	}
	cp = list[0]
	if gitHas(f.ws, cp.Commit) {
		t.Fatalf("the crash came too late: the commit is in the repository already")
	}
	if rows, _ := store.ListPending(f.ctx, f.q()); len(rows) != 1 || rows[0].Commit != cp.Commit {
		t.Fatalf("pending rows: %d", len(rows))
	}
	f.restart()
	if !gitHas(f.ws, cp.Commit) || !gitHas(f.ws, cp.Tree) {
		t.Fatalf("the restart did not write the checkpoint's objects")
	}
	for _, ref := range []string{"refs/prsm/" + s.ID + "/head", "refs/prsm/" + s.ID + "/" + cp.ID} {
		if got := testgit.Git(t, f.ws, "rev-parse", ref); got != cp.Commit {
			t.Errorf("%s = %s, want %s", ref, got, cp.Commit)
		}
	}
	if rows, _ := store.ListPending(f.ctx, f.q()); len(rows) != 0 {
		t.Errorf("%d pending rows after the flush", len(rows))
	}
	testgit.Git(t, f.ws, "fsck", "--strict", "--no-dangling")
	testgit.Git(t, f.ws, "gc", "-q", "--prune=now")
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 9, "two")) })
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, f.ws, "f.txt"), replaceLine(base, 3, "one"); got != want {
		t.Errorf("workspace after rewind:\n%s", got)
	}
}

// TestCheckpointReadableBeforeWritten: a checkpoint's objects are staged
// for prsm's reads from the moment it answers; rewinding and diffing work
// before they reach the repository, and an unchanged tree shares its
// commit with the checkpoint before.
func TestCheckpointReadableBeforeWritten(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	release := engine.HoldFlush(f.eng)
	cp1, err := f.eng.Turn(f.ctx, s.ID, api.TurnRequest{MessageIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	cp1b, err := f.eng.Turn(f.ctx, s.ID, api.TurnRequest{MessageIndex: 2})
	if err != nil {
		t.Fatal(err)
	}
	if cp1b.Commit != cp1.Commit || cp1b.Tree != cp1.Tree {
		t.Errorf("an unchanged tree got a new commit: %s %s", cp1.Commit, cp1b.Commit)
	}
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "one")) })
	d, err := f.eng.DiffCheckpoints(f.ctx, s.ID, cp1.ID, "")
	if err != nil || len(d.Files) != 1 || d.Files[0].Path != "f.txt" {
		t.Fatalf("diff against now: %v %+v", err, d)
	}
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp1.ID, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "f.txt"); got != base {
		t.Errorf("workspace after rewind:\n%s", got)
	}
	if gitHas(f.ws, cp1.Commit) {
		t.Fatalf("the objects reached the repository while the flush was held: the reads above proved nothing")
	}
	release()
	if err := f.eng.FlushObjects(f.ctx); err != nil {
		t.Fatal(err)
	}
	all, _ := f.eng.Checkpoints(f.ctx, s.ID, "")
	for _, c := range all {
		if !gitHas(f.ws, c.Commit) || !gitHas(f.ws, c.Tree) {
			t.Errorf("checkpoint %s (%s): objects missing after the flush", c.ID, c.Name)
		}
	}
	if got := testgit.Git(t, f.ws, "rev-parse", "refs/prsm/"+s.ID+"/head"); got != all[len(all)-1].Commit {
		t.Errorf("head ref %s, want the newest checkpoint %s", got, all[len(all)-1].Commit)
	}
	if !strings.Contains(testgit.Git(t, f.ws, "log", "--format=%s", "refs/prsm/"+s.ID+"/head"), "prsm checkpoint") {
		t.Errorf("head ref does not name a checkpoint chain")
	}
}

// noTimedFlush keeps the flusher a tool call kicks from running during
// the test: the flush it schedules would otherwise, on a loaded machine,
// fire after a crash point and write what the crash kept out.
func noTimedFlush(t *testing.T) {
	was := engine.FlushDelay
	engine.FlushDelay = time.Hour
	t.Cleanup(func() { engine.FlushDelay = was })
}

// crashWithPendingCheckpoint makes a named checkpoint whose objects a
// crash kept out of the repository, and returns it with its pending row.
func crashWithPendingCheckpoint(t *testing.T, f *fixture) (*prsm.Checkpoint, *store.Pending) {
	t.Helper()
	noTimedFlush(t)
	s := f.start("")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 3, "one")) })
	if err := f.eng.FlushObjects(f.ctx); err != nil {
		t.Fatal(err)
	}
	if !crashing(t, "checkpoint:stored", 1, func() {
		if _, err := f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: "kept"}); err != nil {
			t.Error(err)
		}
	}) {
		t.Fatal("crash point checkpoint:stored not reached")
	}
	list, err := f.eng.Checkpoints(f.ctx, s.ID, "kept")
	if err != nil || len(list) != 1 {
		t.Fatalf("checkpoint not stored: %v %d", err, len(list))
	}
	rows, err := store.ListPending(f.ctx, f.q())
	if err != nil || len(rows) != 1 || len(rows[0].Objects) == 0 {
		t.Fatalf("pending rows: %v %d", err, len(rows))
	}
	return list[0], rows[0]
}

// setPendingObjects rewrites a pending row's objects.
func setPendingObjects(t *testing.T, f *fixture, p *store.Pending) {
	t.Helper()
	var buf []byte
	for _, o := range p.Objects {
		buf = append(buf, o.ID[:]...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(o.Data)))
		buf = append(buf, o.Data...)
	}
	if _, err := f.eng.DB.ExecContext(f.ctx, "UPDATE pending_objects SET objects = ? WHERE seq = ?", buf, p.Seq); err != nil {
		t.Fatal(err)
	}
}

// TestPendingObjectsOfOlderVersionFlushed: pending rows written before
// objects were deflated lazily hold them zlib-deflated; a start after an
// upgrade still writes them.
func TestPendingObjectsOfOlderVersionFlushed(t *testing.T) {
	f := newFixture(t)
	cp, p := crashWithPendingCheckpoint(t, f)
	for i, o := range p.Objects {
		if o.Data[0] == 0x78 {
			t.Fatalf("object %x is stored deflated already", o.ID)
		}
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(o.Data)
		zw.Close()
		p.Objects[i].Data = z.Bytes()
	}
	setPendingObjects(t, f, p)
	f.restart()
	if !gitHas(f.ws, cp.Commit) || !gitHas(f.ws, cp.Tree) {
		t.Fatalf("the restart did not write the checkpoint's objects")
	}
	testgit.Git(t, f.ws, "fsck", "--strict", "--no-dangling")
	if rows, _ := store.ListPending(f.ctx, f.q()); len(rows) != 0 {
		t.Errorf("%d pending rows after the flush", len(rows))
	}
}

// TestCorruptPendingObjectNotWritten: a pending object whose bytes do not
// hash to its id is never written under that id; its row is set aside,
// with why, and the flush goes on.
func TestCorruptPendingObjectNotWritten(t *testing.T) {
	f := newFixture(t)
	_, p := crashWithPendingCheckpoint(t, f)
	o := &p.Objects[len(p.Objects)-1]
	o.Data = append([]byte(nil), o.Data...)
	o.Data[len(o.Data)-1] ^= 1
	setPendingObjects(t, f, p)
	if err := f.eng.FlushObjects(f.ctx); err != nil {
		t.Fatalf("one corrupt row failed the flush: %v", err)
	}
	if gitHas(f.ws, hex.EncodeToString(o.ID[:])) {
		t.Errorf("the corrupt object was written")
	}
	if rows, _ := store.ListPending(f.ctx, f.q()); len(rows) != 0 {
		t.Errorf("%d pending rows, want the corrupt one set aside", len(rows))
	}
	var reason string
	if err := f.q().QueryRowContext(f.ctx, "SELECT reason FROM pending_objects_aside").Scan(&reason); err != nil ||
		!strings.Contains(reason, worktree.ErrBadObject.Error()) {
		t.Errorf("set aside: %q %v", reason, err)
	}
}

// TestLazyCheckpointsBuiltAfterCrash: the checkpoint before a tool call
// is stored as its changes, and its tree and commit are built later; a
// crash before that loses nothing: the next start builds them, in order,
// and they can be rewound to.
func TestLazyCheckpointsBuiltAfterCrash(t *testing.T) {
	defer func(d time.Duration) { engine.FlushDelay = d }(engine.FlushDelay)
	engine.FlushDelay = time.Hour // the crashed engine's flusher never runs
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	one, two := replaceLine(base, 3, "one"), replaceLine(base, 9, "two")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", one) })
	f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", two) })
	engine.AwaitAnswered(f.eng)
	lazy, err := store.ListLazyCheckpoints(f.ctx, f.eng.DB.Q(), s.ID)
	if err != nil || len(lazy) != 2 || lazy[0].ToolCallID != "e1" || lazy[1].ToolCallID != "e2" || lazy[1].Tree != "" {
		t.Fatalf("lazy checkpoints before the crash: %v %+v", err, lazy)
	}
	if !strings.Contains(lazy[1].Changes, `"path":"f.txt"`) || lazy[1].FilesChanged != 1 {
		t.Errorf("changes of the checkpoint before e2: %s (%d files)", lazy[1].Changes, lazy[1].FilesChanged)
	}
	f.restart() // the first engine is gone as kill -9 leaves it
	if left, err := store.ListLazyCheckpoints(f.ctx, f.eng.DB.Q(), ""); err != nil || len(left) != 0 {
		t.Fatalf("lazy checkpoints after the restart: %v %d", err, len(left))
	}
	list, err := f.eng.Checkpoints(f.ctx, s.ID, "")
	if err != nil || len(list) != 2 {
		t.Fatalf("checkpoints: %v %d", err, len(list))
	}
	for i, want := range []string{base, one} {
		c := list[i]
		if !gitHas(f.ws, c.Commit) {
			t.Fatalf("checkpoint %d: commit %q not written", i, c.Commit)
		}
		if got := testgit.Git(t, f.ws, "show", c.Tree+":f.txt") + "\n"; got != want {
			t.Errorf("checkpoint %d holds f.txt =\n%s\nwant\n%s", i, got, want)
		}
	}
	if got := testgit.Git(t, f.ws, "rev-parse", list[1].Commit+"^"); got != list[0].Commit {
		t.Errorf("the second checkpoint's parent is %s, want the first, %s", got, list[0].Commit)
	}
	if got := testgit.Git(t, f.ws, "rev-parse", "refs/prsm/"+s.ID+"/head"); got != list[1].Commit {
		t.Errorf("head ref %s, want %s", got, list[1].Commit)
	}
	// The next checkpoint holds what the crashed process learned after
	// the last one it stored.
	f.tool(s, "e3", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", base) })
	if list, err = f.eng.Checkpoints(f.ctx, s.ID, ""); err != nil || len(list) != 3 {
		t.Fatalf("checkpoints after e3: %v %d", err, len(list))
	}
	if err := f.eng.FlushObjects(f.ctx); err != nil { // the flusher's work
		t.Fatal(err)
	}
	if got := testgit.Git(t, f.ws, "show", list[2].Tree+":f.txt") + "\n"; got != two {
		t.Errorf("the checkpoint before e3 holds f.txt =\n%s", got)
	}
	if _, err := f.eng.Rewind(f.ctx, s.ID, list[1].ID, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.ws, "f.txt"); got != one {
		t.Errorf("workspace after rewinding to the checkpoint before e2:\n%s", got)
	}
}

// TestLargeCheckpointBuiltAtOnce: the checkpoint after a large change
// (more than a few files) is built by its capture, so a rewind right
// after the call does not build it; a one-file edit's waits.
func TestLargeCheckpointBuiltAtOnce(t *testing.T) {
	defer func(d time.Duration) { engine.FlushDelay = d }(engine.FlushDelay)
	engine.FlushDelay = time.Hour
	f := newFixture(t)
	s := f.start("")
	f.tool(s, "b1", "Bash", "", func(wt string) {
		for i := 0; i < 10; i++ {
			write(t, wt, fmt.Sprintf("gen/%d.txt", i), fmt.Sprintln("generated", i))
		}
	})
	lazy := func() []string {
		t.Helper()
		engine.AwaitAnswered(f.eng)
		rows, err := store.ListLazyCheckpoints(f.ctx, f.eng.DB.Q(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.ToolCallID)
		}
		return ids
	}
	f.capture(s, "e2", "Edit", "f.txt") // its checkpoint holds the 10 files
	if got := lazy(); len(got) != 0 {
		t.Fatalf("checkpoints not built after a 10-file change: %v", got)
	}
	write(t, s.WorktreePath, "f.txt", "two\n")
	f.complete(s, "e2")
	f.capture(s, "e3", "Edit", "f.txt") // one file since
	if got := fmt.Sprint(lazy()); got != "[e3]" {
		t.Fatalf("lazy checkpoints after a one-file edit: %s", got)
	}
	list, err := store.ListCheckpoints(f.ctx, f.eng.DB.Q(), s.ID)
	if err != nil || len(list) != 3 || list[1].ToolCallID != "e2" || list[1].FilesChanged != 10 || list[1].Tree == "" {
		t.Fatalf("checkpoints: %v %+v", err, list)
	}
}

// TestLargeFlushGoesIntoOnePack: the flush of a checkpoint after a Bash
// call that made 200 files writes one pack, not hundreds of loose
// objects; git verifies it, and a rewind to that checkpoint, after a
// restart, reads the files back from it. (Every flush writes a pack,
// kept until its refs are set: see TestGCBetweenObjectsAndRefs.)
func TestLargeFlushGoesIntoOnePack(t *testing.T) {
	f := newFixture(t)
	s := f.start("")
	release := engine.HoldFlush(f.eng)
	f.tool(s, "b1", "Bash", "", func(wt string) {
		for i := 0; i < 200; i++ {
			write(t, wt, fmt.Sprintf("gen/%d/%d.txt", i%5, i), fmt.Sprintln("generated", i))
		}
	})
	cp, err := f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: "many"})
	if err != nil {
		t.Fatal(err)
	}
	packs := func() []string {
		m, _ := filepath.Glob(filepath.Join(f.ws, ".git", "objects", "pack", "pack-*.idx"))
		return m
	}
	before := packs()
	release()
	if err := f.eng.FlushObjects(f.ctx); err != nil {
		t.Fatal(err)
	}
	after := packs()
	if len(after) != len(before)+1 {
		t.Fatalf("packs before %v, after %v", before, after)
	}
	// The commit of the fixture's files is loose (git's); the 200 blobs
	// and their trees are not.
	var loose int
	fmt.Sscanf(testgit.Git(t, f.ws, "count-objects"), "%d objects", &loose)
	if loose >= 10 {
		t.Fatalf("%d loose objects", loose)
	}
	testgit.Git(t, f.ws, "fsck", "--strict", "--no-dangling")
	if got := testgit.Git(t, f.ws, "cat-file", "-p", cp.Commit+":gen/3/123.txt"); got != "generated 123" {
		t.Fatalf("file through git = %q", got)
	}
	f.tool(s, "b2", "Bash", "", func(wt string) {
		if err := os.RemoveAll(filepath.Join(wt, "gen")); err != nil {
			t.Fatal(err)
		}
	})
	f.restart()
	if _, err := f.eng.Rewind(f.ctx, s.ID, cp.ID, false); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{s.WorktreePath, f.ws} {
		if got := read(t, root, "gen/4/199.txt"); got != "generated 199\n" {
			t.Fatalf("%s after rewind: %q", root, got)
		}
	}
}

// TestReconcileSetsBadPendingRowAside: a pending row that cannot be read
// (40 bytes of TEXT, as a big file's object that overflowed sqlite's bind
// length was once stored) does not keep the server from starting: the
// next start sets it aside, with why, writes the other checkpoints, and
// serves.
func TestReconcileSetsBadPendingRowAside(t *testing.T) {
	noTimedFlush(t)
	f := newFixture(t)
	s := f.start("")
	base := read(t, f.ws, "f.txt")
	f.tool(s, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(base, 3, "one")) })
	if err := f.eng.FlushObjects(f.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.q().ExecContext(f.ctx, `INSERT INTO pending_objects (session_id, commit_id, refs, objects) VALUES ('other', ?, '["refs/prsm/other/head"]', CAST(? AS TEXT))`,
		strings.Repeat("ab", 20), strings.Repeat("x", 40)); err != nil {
		t.Fatal(err)
	}
	var cp *prsm.Checkpoint
	if !crashing(t, "checkpoint:stored", 1, func() {
		var err error
		cp, err = f.eng.CreateCheckpoint(f.ctx, s.ID, api.CheckpointRequest{Name: "kept"})
		if err != nil {
			t.Error(err)
		}
	}) {
		t.Fatal("crash point checkpoint:stored not reached")
	}
	list, err := f.eng.Checkpoints(f.ctx, s.ID, "kept")
	if err != nil || len(list) != 1 {
		t.Fatalf("checkpoint not stored: %v %d", err, len(list))
	}
	cp = list[0]
	f.restart()
	if !gitHas(f.ws, cp.Commit) {
		t.Error("the good checkpoint's objects were not written")
	}
	if rows, _ := store.ListPending(f.ctx, f.q()); len(rows) != 0 {
		t.Errorf("%d pending rows left", len(rows))
	}
	var commit, reason string
	if err := f.q().QueryRowContext(f.ctx, `SELECT commit_id, reason FROM pending_objects_aside`).Scan(&commit, &reason); err != nil {
		t.Fatalf("nothing set aside: %v", err)
	}
	if commit != strings.Repeat("ab", 20) || !strings.Contains(reason, "corrupt") {
		t.Errorf("set aside %s: %q", commit, reason)
	}
	// And it serves: a tool call is recorded and synced.
	recs := f.tool(s, "e2", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 9, "two")) })
	if got := summary(recs); got != "e2 modify f.txt pending/synced" {
		t.Errorf("after the start: %s", got)
	}
}

// TestReconcileWithBadLazyCheckpoint: a checkpoint waiting to be built
// whose stored changes cannot be read keeps neither the server from
// starting nor another session from working.
func TestReconcileWithBadLazyCheckpoint(t *testing.T) {
	defer func(d time.Duration) { engine.FlushDelay = d }(engine.FlushDelay)
	engine.FlushDelay = time.Hour // the crashed engine's flusher never runs
	f := newFixture(t)
	bad, good := f.start(""), f.start("")
	f.tool(bad, "e1", "Edit", "f.txt", func(wt string) { write(t, wt, "f.txt", replaceLine(read(t, wt, "f.txt"), 3, "one")) })
	engine.AwaitAnswered(f.eng)
	res, err := f.eng.DB.Q().ExecContext(f.ctx, `UPDATE checkpoints SET changes = '{not json' WHERE session_id = ? AND changes != ''`, bad.ID)
	if n, _ := res.RowsAffected(); err != nil || n == 0 {
		t.Fatalf("no lazy checkpoint to spoil: %v %d", err, n)
	}
	// A restart (f.restart settles, and the spoilt checkpoint's build
	// fails every time).
	f.eng = engine.New(f.eng.Repo, f.eng.DB, f.eng.ProjectDir, slog.New(slog.DiscardHandler))
	t.Cleanup(f.eng.Close)
	if _, err := f.eng.Reconcile(f.ctx); err != nil {
		t.Fatalf("one bad checkpoint row refused the start: %v", err)
	}
	recs := f.tool(good, "g1", "Write", "new.txt", func(wt string) { write(t, wt, "new.txt", "hi\n") })
	if got := summary(recs); got != "g1 create new.txt pending/synced" {
		t.Errorf("the other session after the start: %s", got)
	}
	if got := read(t, f.ws, "new.txt"); got != "hi\n" {
		t.Errorf("workspace new.txt = %q", got)
	}
}
