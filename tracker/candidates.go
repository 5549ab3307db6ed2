package tracker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/worktree"
)

// Which paths a look reads (a Session's candidates): the watcher's dirty
// set or git status, less what git ignores, prsm's own files, paths too
// long to hold, and what a submodule or a failing checkout filter hides.

// Candidates returns the paths that may have changed since the last look,
// and a function to call once they are recorded (so changes that arrive
// meanwhile are kept for the next look). With a watcher it flushes the
// watcher and takes its dirty set; without one, or when events were lost,
// it scans with git status.
func (s *Session) Candidates(ctx context.Context) ([]string, func(), error) {
	if s.Watcher == nil {
		paths, err := s.Dirty(ctx)
		return paths, func() {}, err
	}
	if err := s.Watcher.Flush(ctx, s.Worktree); err != nil {
		return nil, nil, err
	}
	d := s.Watcher.Peek(s.Worktree)
	ack := func() { s.Watcher.Ack(d) }
	if !d.Full && !changesIgnoreRules(d.Paths) {
		return d.Paths, ack, nil
	}
	// Events were lost, or a .gitignore changed: files it ignored before
	// (whose events were dropped) may count now, and git status finds them.
	paths, err := s.Dirty(ctx)
	if err != nil {
		return nil, nil, err
	}
	return append(paths, d.Paths...), ack, nil
}

// changesIgnoreRules reports whether paths hold a .gitignore.
func changesIgnoreRules(paths []string) bool {
	for _, p := range paths {
		if isIgnoreRules(p) {
			return true
		}
	}
	return false
}

// isIgnoreRules reports whether p is a .gitignore.
func isIgnoreRules(p string) bool {
	return p == ".gitignore" || strings.HasSuffix(p, "/.gitignore")
}

// Unclaimed keeps paths that a look found changed, and nobody recorded
// (a tool call claims only its own changes while others run), for the
// next look: the watcher takes them for changed again. Without a watcher
// every look scans, and finds them anyway.
func (s *Session) Unclaimed(paths []string) {
	if len(paths) > 0 && s.Watcher != nil {
		s.Watcher.Touch(s.Worktree, paths)
	}
}

// Dirty lists the paths that may differ from what the tracker knows: what
// git status reports against the base commit (tracked changes and untracked,
// not ignored files) and every Known path.
func (s *Session) Dirty(ctx context.Context) ([]string, error) {
	// The worktree's index is prsm's own: letting status refresh it and keep
	// an untracked cache there makes the next status cheaper.
	// Every git call here names the worktree's git directory (RunIn):
	// the worktree's .git file is the agent's to rewrite.
	var lenient []string
	var out []byte
	for {
		opts := append(append([]string(nil), lenient...), "-c", "core.untrackedCache=true", "status", "--porcelain", "-z",
			"--untracked-files=all", "--no-renames", "--ignore-submodules")
		var err error
		out, err = s.Repo.RunIn(ctx, s.Worktree, worktree.NewCmd(opts[0], opts[1:]...))
		if err == nil {
			break
		}
		// A required filter whose clean command fails (on a file the
		// base stores as its bytes for that reason) kills the status;
		// the tracker compares bytes itself, and only needs the names.
		name, ok := failingFilter(err)
		if !ok || len(lenient) >= 2*maxLenientFilters {
			return nil, fmt.Errorf("status of session %s: %w", s.ID, err)
		}
		if s.Log != nil {
			s.Log.Warn("a required clean filter fails in the session's worktree; its files are listed as not required", "session", s.ID, "filter", name)
		}
		lenient = append(lenient, "-c", "filter."+name+".required=false")
	}
	set := map[string]bool{}
	for _, ent := range bytes.Split(out, []byte{0}) {
		if len(ent) <= 3 {
			continue
		}
		rel := string(ent[3:])
		if strings.HasSuffix(rel, "/") {
			// A repository of its own (git init, a clone): status
			// does not look inside, the watcher does.
			s.filesUnder(strings.TrimSuffix(rel, "/"), set)
			continue
		}
		set[rel] = true
	}
	if head, ok := s.Repo.HeadOf(s.Worktree); s.Base != "" && (!ok || head != s.Base) {
		// What the agent committed in its worktree is clean against its
		// HEAD and differs from the base all the same. (A HEAD that is
		// still the base, as git's files say plainly, has nothing to
		// add: no git diff for it.)
		out, err := s.Repo.RunIn(ctx, s.Worktree, worktree.NewCmd("diff", "--name-only", "-z", "--no-renames").Rev(s.Base, "HEAD"))
		if err != nil {
			return nil, fmt.Errorf("commits of session %s: %w", s.ID, err)
		}
		for _, rel := range bytes.Split(out, []byte{0}) {
			if len(rel) > 0 {
				set[string(rel)] = true
			}
		}
	}
	for rel := range s.Known {
		set[rel] = true
	}
	return sortedKeys(set), nil
}

// maxLenientFilters bounds the status runs of one look that each find a
// required clean filter failing.
const maxLenientFilters = 4

// failingFilter reads the filter's name out of git's "x.dat: clean filter
// 'lfs' failed", for a name git config takes.
func failingFilter(err error) (string, bool) {
	msg := err.Error()
	const mark = ": clean filter '"
	i := strings.Index(msg, mark)
	if i < 0 {
		return "", false
	}
	rest := msg[i+len(mark):]
	j := strings.Index(rest, "' failed")
	if j <= 0 {
		return "", false
	}
	name := rest[:j]
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", false
		}
	}
	return name, true
}

// filesUnder adds the files and symlinks under the worktree's directory
// rel (slash separated) to set, not those in a .git directory.
func (s *Session) filesUnder(rel string, set map[string]bool) {
	root, err := safepath.Join(s.Worktree, rel)
	if err != nil {
		return
	}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				if r, err := filepath.Rel(s.Worktree, p); err == nil {
					s.refuse(filepath.ToSlash(r))
				}
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
			if r, err := filepath.Rel(s.Worktree, p); err == nil {
				set[filepath.ToSlash(r)] = true
			}
		}
		return nil
	})
}

func sortedKeys(set map[string]bool) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Filter drops paths that are never recorded (SPEC rule 8): scratch files,
// anything under .git, anything in a directory the agent made that git
// would take for a git directory (gitDirOf), and git-ignored files. The
// git directories and .git paths it drops are kept for the engine to
// report (TakeRefused). Git decides what is ignored:
// files of the base commit are tracked, and git counts tracked files as
// not ignored; every other path is asked of git check-ignore once, and the
// answer is kept until a .gitignore changes. So an edit of a tracked file,
// or of a file the session recorded before, costs no git process.
//
// A path too long for the system (safepath.ErrTooLong) cannot be read,
// recorded or synced; unless git ignores it, it is kept for TakeTooLong,
// so that the user hears of it instead of a silent gap.
func (s *Session) Filter(ctx context.Context, paths []string) ([]string, error) {
	var keep, gone, long []string
	var shaped map[string]bool // gitDirOf's answers, for this look
	for _, p := range paths {
		if s.Exclude != "" && under(p, s.Exclude) {
			continue
		}
		if IsScratch(p) {
			// The top .git is prsm's, repaired elsewhere; any other is
			// the agent's attempt at a repository.
			if g := GitSegment(p); g != "" && g != ".git" {
				s.refuse(g)
			}
			continue
		}
		if _, err := s.dirs.Join(s.Worktree, p); err != nil {
			if errors.Is(err, safepath.ErrTooLong) {
				if !s.toldTooLong[p] {
					long = append(long, p)
				}
				continue
			}
			// Through a symlinked directory (lib -> src, then lib/x), or
			// no path at all: never read. A file written that way is
			// seen at its real path; git would refuse the whole batch.
			// But a file the tracker knows there is gone: its directory
			// became a link (rm -r d && ln -s e d). That deletion is a
			// change (Current reads such a path as absent), and the file
			// was tracked or recorded, so not ignored.
			if errors.Is(err, safepath.ErrOutside) && s.knownPresent(p) {
				gone = append(gone, p)
			}
			continue
		}
		if shaped == nil {
			shaped = map[string]bool{}
		}
		if d := s.gitDirOf(p, shaped); d != "" {
			s.refuse(d)
			continue
		}
		if isIgnoreRules(p) {
			s.ignored = nil // the rules changed: decide everything anew
			s.closeIgnore() // and the running check-ignore read the old ones
		}
		keep = append(keep, p)
	}
	if len(keep) == 0 && len(long) == 0 {
		return gone, nil
	}
	if s.ignored == nil || len(s.ignored) > maxIgnoreCache {
		s.ignored = map[string]bool{}
	}
	var ask []string
	for _, p := range append(keep, long...) {
		if _, ok := s.ignored[p]; ok {
			continue
		}
		if s.inBase(p) {
			s.keepIgnored(p, false)
			continue
		}
		ask = append(ask, p)
	}
	var ign map[string]bool // git's answers beyond the cache's bound
	if len(ask) > 0 {
		var err error
		if ign, err = s.checkIgnore(ctx, ask); err != nil {
			return nil, err
		}
		for _, p := range ask {
			s.keepIgnored(p, ign[p])
		}
	}
	isIgnored := func(p string) bool {
		if v, ok := s.ignored[p]; ok {
			return v
		}
		return ign[p]
	}
	var res []string
	for _, p := range keep {
		if !isIgnored(p) {
			res = append(res, p)
		}
	}
	for _, p := range long {
		if !isIgnored(p) {
			s.noteTooLong(p)
		}
	}
	if len(gone) > 0 {
		res = append(res, gone...)
		sort.Strings(res)
	}
	return res, nil
}

// keepIgnored caches git's ignore decision of p, up to the cache's bound:
// a look of 200k new files (an npm install) would hold a decision each.
// Past it, the look decides from git's answer alone.
func (s *Session) keepIgnored(p string, ignored bool) {
	if len(s.ignored) < maxIgnoreCache {
		s.ignored[p] = ignored
	}
}

// maxTooLongKept bounds the too-long paths kept for TakeTooLong, and
// those remembered as told.
const maxTooLongKept = 100

func (s *Session) noteTooLong(p string) {
	if s.toldTooLong == nil || len(s.toldTooLong) > maxIgnoreCache {
		s.toldTooLong = map[string]bool{}
	}
	if s.toldTooLong[p] || s.toldAbove(p) || s.toldBelow(p) {
		return
	}
	s.toldTooLong[p] = true
	if len(s.tooLong) < maxTooLongKept {
		s.tooLong = append(s.tooLong, p)
	} else {
		s.tooLongMore++
	}
}

// toldAbove reports whether a directory above p was found too long
// already: what lies below it is too long as well, and told with it.
// Only the directories long enough to be too long are looked up.
func (s *Session) toldAbove(p string) bool {
	for a := pathDir(p); a != "" && len(s.Worktree)+1+len(a) > safepath.MaxPath; a = pathDir(a) {
		if s.toldTooLong[a] {
			return true
		}
	}
	return false
}

// toldBelow reports whether a path below p was found too long already:
// the user heard of this tree then. The watcher may report the first
// directory it cannot watch only after the scan told of a file below it;
// that is the same tree, not news.
func (s *Session) toldBelow(p string) bool {
	for t := range s.toldTooLong {
		if strings.HasPrefix(t, p+"/") {
			return true
		}
	}
	return false
}

// TakeTooLong hands out, once each, the paths (relative, slash
// separated, in the order found) that Filter found too long for the
// system to read by name, and how many more it left out to stay bounded.
// Nothing at or below such a path is recorded or synced; the caller
// tells the user. The watcher reports a directory it cannot watch for
// that reason as such a path.
func (s *Session) TakeTooLong() (paths []string, more int) {
	all, more := s.tooLong, s.tooLongMore
	s.tooLong, s.tooLongMore = nil, 0
	// A directory found after a file below it tells for both.
	batch := map[string]bool{}
	for _, p := range all {
		batch[p] = true
	}
	for _, p := range all {
		above := false
		for a := pathDir(p); a != "" && len(s.Worktree)+1+len(a) > safepath.MaxPath; a = pathDir(a) {
			if batch[a] {
				above = true
				break
			}
		}
		if !above {
			paths = append(paths, p)
		}
	}
	return paths, more
}

// knownPresent reports whether the tracker knows a file at rel: recorded
// there, or in the base commit and not recorded gone since.
func (s *Session) knownPresent(rel string) bool {
	if st, ok := s.Known[rel]; ok {
		return st.Present
	}
	return s.inBase(rel)
}

// inBase reports whether the base commit has a file at rel.
func (s *Session) inBase(rel string) bool {
	if s.Repo == nil || s.Base == "" {
		return false
	}
	objs, err := s.Repo.Objects()
	if err != nil {
		return false
	}
	ok, err := objs.HasFile(s.Base, rel)
	return err == nil && ok
}

// checkIgnore asks git which of paths it ignores. A path inside a
// submodule belongs to the submodule's repository, which the
// superproject does not track (git status leaves it out), and git
// check-ignore refuses the whole batch for it: such paths count as
// ignored, and the rest is asked again.
func (s *Session) checkIgnore(ctx context.Context, keep []string) (map[string]bool, error) {
	if ign, ok := s.checkIgnoreProc(keep); ok {
		return ign, nil
	}
	ignored := map[string]bool{}
	for tries := 0; ; tries++ {
		in := []byte(strings.Join(keep, "\x00") + "\x00")
		out, err := s.Repo.RunIn(ctx, s.Worktree, worktree.NewCmd("check-ignore", "-z", "--stdin").Stdin(in).
			// check-ignore refuses the literal pathspec magic the runner sets.
			Env("GIT_OPTIONAL_LOCKS=0", "GIT_LITERAL_PATHSPECS=0"))
		if err != nil && worktree.ExitCode(err) != 1 { // 1: nothing ignored
			sub, ok := submoduleOf(err)
			var rest []string
			for _, p := range keep {
				if ok && under(p, sub) {
					ignored[p] = true
				} else {
					rest = append(rest, p)
				}
			}
			if !ok || len(rest) == len(keep) || tries == maxSubmoduleRetries {
				return nil, fmt.Errorf("check-ignore: %w", err)
			}
			if s.Log != nil {
				s.Log.Warn("files inside a submodule are not tracked", "session", s.ID, "submodule", sub)
			}
			if keep = rest; len(keep) == 0 {
				return ignored, nil
			}
			continue
		}
		for _, p := range bytes.Split(out, []byte{0}) {
			if len(p) > 0 {
				ignored[string(p)] = true
			}
		}
		return ignored, nil
	}
}

// maxIgnoreProcBatch is the most paths checkIgnoreProc asks at once; a
// larger batch (a first look, a git checkout by the agent) is one git
// check-ignore of its own, which costs its start once for all of them.
const maxIgnoreProcBatch = 256

// ignoreProcWait bounds the wait for the running check-ignore's answer to
// one path.
const ignoreProcWait = 10 * time.Second

// checkIgnoreProc asks the running git check-ignore (started on first
// use, with --verbose --non-matching, so that every path gets an answer:
// source, line, pattern, path) which of paths it ignores. A path is
// ignored when a pattern matched that is not a negation ("!"). false: no
// answer; the caller asks a process of its own (checkIgnore), and after a
// failure every later batch does too.
func (s *Session) checkIgnoreProc(paths []string) (map[string]bool, bool) {
	if len(paths) == 0 || len(paths) > maxIgnoreProcBatch || s.Repo == nil {
		return nil, false
	}
	s.ignoreMu.Lock()
	defer s.ignoreMu.Unlock()
	if s.ignoreOff {
		return nil, false
	}
	if s.ignoreProc == nil {
		p, err := s.Repo.StartIn(s.Worktree, worktree.NewCmd("check-ignore", "-z", "--stdin", "--verbose", "--non-matching").
			Env("GIT_OPTIONAL_LOCKS=0", "GIT_LITERAL_PATHSPECS=0"))
		if err != nil {
			s.ignoreOff = true
			return nil, false
		}
		s.ignoreProc = p
	}
	p := s.ignoreProc
	var req bytes.Buffer
	for _, path := range paths {
		req.WriteString(path)
		req.WriteByte(0)
	}
	// Written apart from the reads: git answers as it reads, and a large
	// request would fill both pipes.
	sent := make(chan error, 1)
	go func() { sent <- p.Send(req.Bytes()) }()
	ignored := map[string]bool{}
	fail := func(err error) (map[string]bool, bool) {
		if s.Log != nil {
			s.Log.Warn("check-ignore stopped answering; each batch asks a check-ignore of its own from now on", "session", s.ID, "err", err)
		}
		s.ignoreProc, s.ignoreOff = nil, true
		p.Close()
		<-sent
		return nil, false
	}
	deadline := time.Now().Add(ignoreProcWait)
	for _, path := range paths {
		var fields [4][]byte
		for i := range fields {
			f, err := p.ReadField(0, deadline)
			if err != nil {
				return fail(err)
			}
			fields[i] = f
		}
		if string(fields[3]) != path {
			return fail(fmt.Errorf("check-ignore answered for %q, asked %q", fields[3], path))
		}
		if pat := fields[2]; len(pat) > 0 && pat[0] != '!' {
			ignored[path] = true
		}
	}
	if err := <-sent; err != nil {
		return fail(err)
	}
	return ignored, true
}

// closeIgnore ends the running check-ignore, if any: the next question
// starts one that reads the rules anew.
func (s *Session) closeIgnore() {
	s.ignoreMu.Lock()
	p := s.ignoreProc
	s.ignoreProc = nil
	s.ignoreMu.Unlock()
	if p != nil {
		p.Close()
	}
}

// Close ends what the session keeps running (its check-ignore).
func (s *Session) Close() { s.closeIgnore() }

// under reports whether the slash-separated path p is dir or lies below
// it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// maxSubmoduleRetries bounds the check-ignore runs of one batch that
// name a submodule each.
const maxSubmoduleRetries = 64

// submoduleOf reads the submodule out of git's refusal of a pathspec
// inside one: "Pathspec 'mod/x' is in submodule 'mod'".
func submoduleOf(err error) (string, bool) {
	msg := err.Error()
	const mark = "' is in submodule '"
	i := strings.Index(msg, mark)
	if i < 0 {
		return "", false
	}
	rest := msg[i+len(mark):]
	j := strings.IndexByte(rest, '\'')
	if j <= 0 {
		return "", false
	}
	return rest[:j], true
}
