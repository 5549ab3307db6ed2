package tracker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	stdsync "sync"
	"sync/atomic"
	"time"

	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
	"github.com/prsm-dev/prsm/worktree"
)

// Session tracks one session's worktree. It knows what every file should
// hold: the base commit's version, overridden by Known for every file that
// changed since (the state after its latest record, or after prsm's own
// revert). A file whose bytes, presence or kind differ from that changed.
// Callers serialize access (one lock per session).
type Session struct {
	ID       string
	Worktree string
	Base     string // base commit
	Repo     *worktree.Repo
	// Known holds the files that differ from Base, by relative path.
	Known map[string]store.FileState
	// Touched holds the paths learned since the last checkpoint: the only
	// ones the next checkpoint's tree must rewrite.
	Touched map[string]bool
	// Watcher, when set, reports which paths changed, so a look costs
	// what changed instead of a git status of the whole worktree.
	Watcher *Watcher
	// Stats is the stat cache: files whose lstat facts are unchanged are
	// not read again. Nil works (every look reads).
	Stats *StatCache
	// Log, when set, gets what the session works around (a checkout
	// filter that fails).
	Log *slog.Logger
	// Exclude, when set, is a directory (relative, slash separated)
	// whose files are never recorded: prsm's own state, when it lies
	// inside the workspace, so that nothing an agent writes there is
	// synced into it.
	Exclude string

	// ignored caches git's ignore decision per path, so only paths never
	// seen before cost a git check-ignore; any .gitignore change clears it.
	ignored map[string]bool
	// ignoreMu guards ignoreProc, a git check-ignore that keeps running
	// to answer the few new paths of a tool call without a process start
	// each (checkIgnoreProc), and ignoreOff: it failed once (a submodule
	// path makes git exit), so every batch asks a process of its own.
	ignoreMu   stdsync.Mutex
	ignoreProc *worktree.Proc
	ignoreOff  bool
	// baseHashes caches the blob-store hash of base commit files.
	baseHashes map[string]baseFile
	// knownRead keeps the versions KnownVersion read lately, by path:
	// a tool call's capture reads the known version of the file the tool
	// names, and its complete reads it again.
	knownRead  map[string]knownVersion
	knownBytes int64 // the bytes of content knownRead holds
	// read is how many bytes of content the current look (NewLook) read
	// whole: past LookBudget, files are read as stubs (bigfile).
	read int64
	// held is how much of the shared content budget the current look
	// holds (budget.go).
	held int64
	// dirs holds the directories the current look found to be no
	// symlinks (Filter's and current's checks), until EndLook.
	dirs safepath.Dirs
	// open, during Detect, holds the directories its reads opened
	// (sync.OpenDirs): the files of one directory cost one open of it.
	open *sync.OpenDirs
	// tooLong holds the paths Filter found too long to record and
	// TakeTooLong has not handed out yet (tooLongMore counts those past
	// its bound); toldTooLong those handed out, so each is told once.
	tooLong     []string
	tooLongMore int
	toldTooLong map[string]bool
	// refused holds the git directories (and .git paths) whose files
	// were not recorded, and refusedNew those not yet reported
	// (TakeRefused).
	refused    map[string]bool
	refusedNew []string
}

// LookBudget bounds the bytes of content one look at a worktree reads
// into memory (a tool call's changes are all held until they are
// recorded): past it, a changed file is kept as a big file's stub (its
// size and hash, no copy), as a file over the size limit always is. It
// is at least the size limit, so that one file of any size the limit
// lets in is read whole.
func LookBudget() int64 { return max(lookBudget.Load(), bigfile.Limit()) }

// lookBudget is LookBudget's floor: an agent that writes many large files
// in one call (a download, a build) costs the server that much memory at
// most, plus one file at the size limit.
var lookBudget atomic.Int64

// DefaultLookBudget is lookBudget unless SetLookBudget changed it.
const DefaultLookBudget = 256 << 20

func init() { lookBudget.Store(DefaultLookBudget) }

// SetLookBudget sets LookBudget's floor and returns a function that puts
// the previous one back (PRSM_LOOK_BUDGET of prsm serve, and tests).
func SetLookBudget(n int64) (restore func()) {
	old := lookBudget.Swap(n)
	return func() { lookBudget.Store(old) }
}

// NewLook starts a look at the worktree: its reads count against
// LookBudget anew. Detect starts one; a caller that calls Differs itself
// starts its own.
func (s *Session) NewLook() {
	s.giveBack()
	s.read = 0
}

// knownVersion is a version KnownVersion read: valid while Known holds
// the same state for its path (or, for a base version, none).
type knownVersion struct {
	known bool
	st    store.FileState
	v     sync.Version
}

// maxKnownBytes bounds the content knownRead keeps (beyond one version
// larger than it, until a record makes it stale: Learn): versions of
// large files, kept for the next look, held that much memory each.
const maxKnownBytes = 64 << 20

// maxKnownRead bounds the versions kept in knownRead.
const maxKnownRead = 64

// maxLearnedContent bounds the content Learn keeps in knownRead: a larger
// file is read back when needed.
const maxLearnedContent = 1 << 20

// maxIgnoreCache bounds the ignore decisions kept per session (a var:
// tests lower it).
var maxIgnoreCache = 100_000

// Change is one file that differs from what the tracker knew.
type Change struct {
	Rel    string
	Before sync.Version
	After  sync.Version
}

// Hash is the blob-store hash of content (lowercase hex sha256).
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// StateOf is the FileState that describes v.
func StateOf(v sync.Version) store.FileState {
	if !v.Present {
		return store.FileState{}
	}
	return store.FileState{Present: true, Mode: v.Mode, Hash: Hash(v.Content), Size: v.Size()}
}

// BlobReader reads contents by blob hash (the store).
type BlobReader func(hash string) ([]byte, error)

// KnownVersion returns what rel should hold: the Known state, else the base
// commit's file, else absent. Its content is shared: callers must not
// change it.
func (s *Session) KnownVersion(rel string, blobs BlobReader) (sync.Version, error) {
	st, known := s.Known[rel]
	if r, ok := s.knownRead[rel]; ok && r.known == known && r.st == st {
		return r.v, nil
	}
	v, err := s.readKnown(rel, st, known, blobs)
	if err != nil {
		return v, err
	}
	s.keepRead(rel, knownVersion{known: known, st: st, v: v})
	return v, nil
}

func (s *Session) keepRead(rel string, kv knownVersion) {
	n := int64(len(kv.v.Content))
	if s.knownRead == nil || len(s.knownRead) >= maxKnownRead || s.knownBytes+n > maxKnownBytes {
		s.knownRead, s.knownBytes = map[string]knownVersion{}, 0
	}
	if old, ok := s.knownRead[rel]; ok {
		s.knownBytes -= int64(len(old.v.Content))
	}
	s.knownRead[rel] = kv
	s.knownBytes += n
}

// forgetRead drops the version knownRead keeps for rel.
func (s *Session) forgetRead(rel string) {
	if old, ok := s.knownRead[rel]; ok {
		s.knownBytes -= int64(len(old.v.Content))
		delete(s.knownRead, rel)
	}
}

func (s *Session) readKnown(rel string, st store.FileState, known bool, blobs BlobReader) (sync.Version, error) {
	if !known {
		return s.BaseVersion(rel)
	}
	if !st.Present {
		return sync.Absent, nil
	}
	b, err := blobs(st.Hash)
	if err != nil {
		return sync.Version{}, fmt.Errorf("known content of %s: %w", rel, err)
	}
	return sync.Version{Present: true, Mode: st.Mode, Content: b}, nil
}

// BaseVersion returns rel as the session's base commit has it, as git
// checks it out.
func (s *Session) BaseVersion(rel string) (sync.Version, error) {
	objs, err := s.Repo.Objects()
	if err != nil {
		return sync.Version{}, err
	}
	f, err := objs.ReadFile(s.Base, rel)
	if errors.Is(err, worktree.ErrNoFile) {
		return sync.Absent, nil
	}
	if err != nil {
		return sync.Version{}, err
	}
	// A file the base stores as its bytes, since git could not convert
	// it, is in the worktree as those bytes (worktree.PlaceAsIs).
	if f.Mode&0o170000 != 0o120000 && !s.Repo.StoredAsIs(s.Base, rel) {
		// As git checked it out into the worktree (.gitattributes line
		// ends, filters), so that an edit is compared with what the agent
		// saw. A filter that fails now (git-lfs with its object gone, a
		// filter command uninstalled since the checkout) leaves the blob
		// as git stores it, as git reads a file whose filter is not
		// required: the change is still recorded, against those bytes.
		c, err := s.Repo.CheckoutContent(context.Background(), s.Worktree, s.Base, rel, f.Content)
		if err != nil {
			if s.Log != nil {
				s.Log.Warn("checkout filter failed: the file's base is the blob git stores", "session", s.ID, "path", rel, "err", err)
			}
		} else {
			f.Content = c
		}
	}
	return sync.Version{Present: true, Mode: f.Mode, Content: f.Content}, nil
}

// Current reads rel from the worktree. Something that is not a file (a
// directory now stands where a file was) counts as absent: its files are
// tracked one by one. What it reads goes into the stat cache. A file that
// changed while it was read is ErrUnsettled: what was read may be part of
// one write and part of the next.
func (s *Session) Current(rel string) (sync.Version, error) {
	v, _, err := s.current(rel)
	return v, err
}

// current is Current that also says how long before the read the file
// last changed (lastChange; 0 when nothing is there).
func (s *Session) current(rel string) (sync.Version, time.Duration, error) {
	var before fs.FileInfo
	p, perr := s.dirs.Join(s.Worktree, rel)
	if perr == nil {
		before, _ = os.Lstat(p)
	}
	room := max(LookBudget()-s.read, 0)
	var took int64
	if isFile(before) {
		room, took = s.reserve(before.Size(), room)
	}
	seen := time.Now()
	v, after, err := s.readThen(rel, p, perr, room)
	if _, big := v.Big(); took > 0 && (err != nil || big || !v.Present) {
		s.unreserve(took)
	}
	// The facts after the read say whether what was read is what the
	// file held: the same facts before and after, or it was written
	// meanwhile. A big file's hash checks its own (bigfile.ErrChanged).
	if errors.Is(err, bigfile.ErrChanged) || (isFile(before) || isFile(after)) && !settled(before, after) {
		return sync.Version{}, 0, fmt.Errorf("read %s: %w", rel, ErrUnsettled)
	}
	if errors.Is(err, sync.ErrNotFile) || errors.Is(err, safepath.ErrOutside) || errors.Is(err, safepath.ErrBadPath) {
		s.Stats.Forget(rel)
		return sync.Absent, 0, nil
	}
	if err != nil {
		return v, 0, err
	}
	if !v.Present || after == nil {
		s.Stats.Forget(rel)
		return v, 0, nil
	}
	if _, big := v.Big(); !big {
		s.read += int64(len(v.Content))
	}
	// Settled: the facts belong to the content.
	s.Stats.Remember(rel, after, Hash(v.Content), seen)
	return v, seen.Sub(lastChange(after)), nil
}

// readThen reads rel (at p, unless perr) for current, then lstats p.
// During Detect it reads through the look's open directories, and reads
// anew where what it read is not what lies at p now: a directory
// replaced since the look opened it.
func (s *Session) readThen(rel, p string, perr error, room int64) (sync.Version, fs.FileInfo, error) {
	lstat := func() fs.FileInfo {
		if perr != nil {
			return nil
		}
		fi, _ := os.Lstat(p)
		return fi
	}
	if s.open != nil {
		v, read, err := s.open.ReadVersionMax(rel, room)
		after := lstat()
		if err == nil && (read == nil) == (after == nil) && (read == nil || os.SameFile(read, after)) {
			return v, after, nil
		}
		s.open.Forget(rel)
	}
	v, err := sync.ReadVersionMax(s.Worktree, rel, room)
	return v, lstat(), err
}

// unchanged reports, from the stat cache alone, that rel still holds what
// the tracker knows it holds. False means "read it to find out".
func (s *Session) unchanged(rel string) bool {
	hash, mode, ok := s.Stats.Lookup(s.Worktree, rel)
	if !ok {
		return false
	}
	if known, ok := s.Known[rel]; ok {
		return known.Present && known.Hash == hash && sameKind(known.Mode, mode)
	}
	base, baseMode, err := s.baseHash(rel)
	return err == nil && base != "" && base == hash && sameKind(baseMode, mode)
}

func sameKind(a, b uint32) bool {
	return sync.Same(sync.Version{Present: true, Mode: a}, sync.Version{Present: true, Mode: b})
}

// baseHash is the blob-store hash and mode of rel in the base commit; ""
// when the base has no such file.
func (s *Session) baseHash(rel string) (string, uint32, error) {
	if b, ok := s.baseHashes[rel]; ok {
		return b.hash, b.mode, nil
	}
	v, err := s.BaseVersion(rel)
	if err != nil {
		return "", 0, err
	}
	if s.baseHashes == nil || len(s.baseHashes) > maxIgnoreCache {
		s.baseHashes = map[string]baseFile{}
	}
	var b baseFile
	if v.Present {
		b = baseFile{hash: Hash(v.Content), mode: v.Mode}
	}
	s.baseHashes[rel] = b
	return b.hash, b.mode, nil
}

// baseFile is a base commit file as the stat cache compares it.
type baseFile struct {
	hash string // "" when the base has no such file
	mode uint32
}

// KnownPaths lists the paths that differ from the base commit as far as the
// tracker knows, without asking git.
func (s *Session) KnownPaths() []string {
	set := map[string]bool{}
	for rel := range s.Known {
		set[rel] = true
	}
	return sortedKeys(set)
}

// Detect compares the given paths (already filtered) with what the tracker
// knows and returns the changes, in path order. A file that has not
// settled (ErrUnsettled: written while it was read, or less than quiet
// before) is no change yet: it is left out and listed in unsettled, for
// the caller to look at again later. A file over the size limit must be
// BigQuiet old whatever quiet asks: a look that found such files too
// young waits for them once, and reads them again.
func (s *Session) Detect(paths []string, blobs BlobReader, quiet time.Duration) (changes []Change, unsettled []string, err error) {
	s.NewLook()
	s.open = sync.NewOpenDirs(s.Worktree)
	defer func() {
		s.open.Close()
		s.open = nil
	}()
	var young []string
	var wait time.Duration
	look := func(rel string, again bool) error {
		ch, differs, err := s.differs(rel, blobs, quiet)
		var y *tooYoung
		switch {
		case !again && errors.As(err, &y) && y.big && quiet < BigQuiet:
			young, wait = append(young, rel), max(wait, y.wait)
		case errors.Is(err, ErrUnsettled):
			unsettled = append(unsettled, rel)
		case err != nil:
			return err
		case differs:
			changes = append(changes, ch)
		}
		return nil
	}
	for _, rel := range paths {
		if err := look(rel, false); err != nil {
			return nil, nil, err
		}
	}
	if len(young) == 0 {
		return changes, unsettled, nil
	}
	time.Sleep(wait)
	for _, rel := range young {
		if err := look(rel, true); err != nil {
			return nil, nil, err
		}
	}
	order := make(map[string]int, len(paths))
	for i, rel := range paths {
		order[rel] = i
	}
	slices.SortFunc(changes, func(a, b Change) int { return order[a.Rel] - order[b.Rel] })
	return changes, unsettled, nil
}

// BigQuiet is how long a file over the size limit must have been left
// alone before a look records it, even a look that asks for no quiet (a
// tool call's complete): prsm keeps no copy of a big file's content, so
// a record of a state that its writer then goes on changing could never
// reach the workspace.
const BigQuiet = 300 * time.Millisecond

// tooYoung is ErrUnsettled for a file that held still while it was read
// but changed too lately for the look: it settles in wait if nobody
// writes it meanwhile. big: it is over the size limit (BigQuiet).
type tooYoung struct {
	rel  string
	age  time.Duration
	wait time.Duration
	big  bool
}

func (e *tooYoung) Error() string {
	return fmt.Sprintf("read %s: changed %s ago", e.rel, e.age.Round(time.Millisecond))
}

func (e *tooYoung) Unwrap() error { return ErrUnsettled }

// Differs tells whether rel holds something else than the tracker knows,
// and if so what changed. A file the stat cache vouches for is not read;
// one written while it was read is ErrUnsettled, and so is a file over
// the size limit changed less than BigQuiet before.
func (s *Session) Differs(rel string, blobs BlobReader) (Change, bool, error) {
	return s.differs(rel, blobs, 0)
}

func (s *Session) differs(rel string, blobs BlobReader, quiet time.Duration) (Change, bool, error) {
	if s.unchanged(rel) {
		return Change{}, false, nil
	}
	after, age, err := s.current(rel)
	if err != nil {
		return Change{}, false, err
	}
	before, err := s.KnownVersion(rel, blobs)
	if err != nil {
		return Change{}, false, err
	}
	if sync.Same(before, after) {
		return Change{}, false, nil
	}
	_, big := after.Big()
	if big {
		quiet = max(quiet, BigQuiet)
	}
	// A change time ahead of the read (a clock set back, or an mtime set
	// ahead where there is no ctime) tells nothing of a writer.
	if after.Present && age >= 0 && age < quiet {
		return Change{}, false, &tooYoung{rel: rel, age: age, wait: quiet - age, big: big}
	}
	return Change{Rel: rel, Before: before, After: after}, true, nil
}

// Pending lists the paths that may differ from what the tracker knows,
// without git: the watcher's dirty set, once the watcher has caught up
// with every event so far (a flush). exact reports that the watcher
// vouches for every other path: it lost no events, so a path it did not
// report holds what the tracker knows. With no watcher, or after it lost
// events, paths is every path the session changed and exact is false.
func (s *Session) Pending(ctx context.Context) (paths []string, exact bool) {
	if s.Watcher != nil && s.Watcher.Flush(ctx, s.Worktree) == nil {
		if d := s.Watcher.Peek(s.Worktree); !d.Full {
			return d.Paths, true
		}
	}
	return s.KnownPaths(), false
}

// Learn records that rel now holds v (after a record, or after prsm itself
// wrote the worktree), so it is not seen as a change again.
func (s *Session) Learn(rel string, v sync.Version) {
	if s.Known == nil {
		s.Known = map[string]store.FileState{}
	}
	if s.Touched == nil {
		s.Touched = map[string]bool{}
	}
	st := StateOf(v)
	st.Hash = s.Stats.shared(rel, st.Hash)
	s.Known[rel] = st
	s.Touched[rel] = true
	// The content is at hand: the next checkpoint's tree, and the next
	// tool call on rel, would otherwise read it back from the store.
	if len(v.Content) <= maxLearnedContent {
		s.keepRead(rel, knownVersion{known: true, st: st, v: v})
	} else {
		s.forgetRead(rel) // the version kept before: stale now
	}
}
