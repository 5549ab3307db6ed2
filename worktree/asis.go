package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	stdsync "sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/prsm-dev/prsm/internal/bigfile"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/sync"
)

// Files stored as they are. A `.gitattributes` conversion can fail on a
// file of the workspace: `working-tree-encoding=UTF-16` on a file that is
// not UTF-16 ("BOM is required"), a required filter whose clean command
// fails. `git add` then refuses the whole snapshot, and with it every
// session start, although the user's own files are fine as they are. A
// snapshot takes such a file as its bytes instead (git hash-object
// --no-filters), the others as git converts them, and names the files in
// its commit message (asIsKey lines), so that what reads the base later
// knows: the session's checkout would convert those bytes once more
// (UTF-8 to UTF-16), so PlaceAsIs writes them back into the worktree as
// they are, and StoredAsIs tells the tracker to take the blob itself for
// the base, as it does when a checkout filter fails.

// asIsKey starts a line of a snapshot's commit message that names a file
// stored as its bytes (the path quoted as strconv.Quote does).
const asIsKey = "prsm-stored-as-is: "

// addAsIs stages the workspace into the index file idx (a copy of the
// user's) after `git add -A` failed with addErr: the files whose
// conversion fails go in as their bytes, the rest as `git add -A` takes
// them. It returns the files stored as their bytes; none means the
// failure was not a conversion's, and addErr stands.
//
// Every file is tried (convertFailures), the tracked ones too: a tracked
// file git cannot convert (a .txt file checked out before the agent's
// .gitattributes asked for UTF-16) is spared by git's stat cache only by
// chance, and the session's checkout would convert it.
// big are the files over the size limit, staged already (addBig) and
// never read here.
func (r *Repo) addAsIs(ctx context.Context, idx string, exclude, big []string, addErr error) ([]string, error) {
	files, err := r.regularFiles(ctx, idx, exclude, "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	staged := make(map[string]bool, len(big))
	for _, p := range big {
		staged[p] = true
	}
	files = slices.DeleteFunc(files, func(p string) bool { return staged[p] })
	failing, err := r.convertFailures(ctx, files)
	if err != nil {
		return nil, err
	}
	if len(failing) == 0 {
		return nil, addErr
	}
	// The rest as git takes it, then the failing files as their bytes.
	skip := append(append(append([]string(nil), exclude...), big...), failing...)
	if _, err := r.git.Run(ctx, r.addAllBut(idx, skip)); err != nil {
		return nil, err
	}
	exec := make([]bool, len(failing))
	for i, p := range failing {
		fi, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(p)))
		exec[i] = err == nil && fi.Mode()&0o111 != 0
	}
	if err := r.stageBytes(ctx, idx, failing, failing, exec); err != nil {
		return nil, fmt.Errorf("store files as they are: %w", err)
	}
	return failing, nil
}

// stageBytes stores the bytes of the files srcs (relative to the
// workspace, or absolute), with no conversion, and stages them in the
// index file idx at the paths rels, executable where exec says.
func (r *Repo) stageBytes(ctx context.Context, idx string, srcs, rels []string, exec []bool) error {
	var in strings.Builder
	for _, p := range srcs {
		in.WriteString(cQuote(p) + "\n")
	}
	out, err := r.git.Run(ctx, NewCmd("hash-object", "-w", "--no-filters", "--stdin-paths").Dir(r.Root).Stdin([]byte(in.String())))
	if err != nil {
		return err
	}
	ids := strings.Fields(string(out))
	if len(ids) != len(rels) {
		return fmt.Errorf("%d ids for %d files", len(ids), len(rels))
	}
	var info bytes.Buffer
	for i, p := range rels {
		mode := "100644"
		if exec[i] {
			mode = "100755"
		}
		fmt.Fprintf(&info, "%s %s\t%s\x00", mode, ids[i], p)
	}
	if _, err := r.git.Run(ctx, NewCmd("update-index", "-z", "--index-info").Dir(r.Root).Env("GIT_INDEX_FILE="+idx).Stdin(info.Bytes())); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	return nil
}

// addAllBut is `git add -A` into the index file idx of the whole
// workspace but the paths skip, each taken literally; many paths, so the
// pathspecs go through stdin.
func (r *Repo) addAllBut(idx string, skip []string) *Cmd {
	specs := []string{":(literal)."}
	for _, x := range skip {
		specs = append(specs, ":(exclude,literal)"+x)
	}
	return NewCmd("add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul").Dir(r.Root).
		Env("GIT_INDEX_FILE="+idx, "GIT_LITERAL_PATHSPECS=0").Stdin([]byte(strings.Join(specs, "\x00") + "\x00"))
}

// pathspecs adds to c the whole tree but the given paths, each taken
// literally.
func pathspecs(c *Cmd, exclude []string) {
	if len(exclude) == 0 {
		c.Paths(".")
		return
	}
	c.Env("GIT_LITERAL_PATHSPECS=0").Paths(":(literal).")
	for _, x := range exclude {
		c.Paths(":(exclude,literal)" + x)
	}
}

// regularFiles lists the regular files of the workspace (relative, slash
// separated) that `git ls-files` lists with opts against the index file
// idx: not links, submodules or files the workspace no longer has, which
// no conversion applies to.
func (r *Repo) regularFiles(ctx context.Context, idx string, exclude []string, opts ...string) ([]string, error) {
	paths, err := r.listFiles(ctx, idx, exclude, opts...)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, rel := range paths {
		if fi, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(rel))); err == nil && fi.Mode().IsRegular() {
			files = append(files, rel)
		}
	}
	return files, nil
}

// listFiles is what `git ls-files` lists with opts against the index file
// idx, in the workspace but exclude, each path once.
func (r *Repo) listFiles(ctx context.Context, idx string, exclude []string, opts ...string) ([]string, error) {
	ls := NewCmd("ls-files", append([]string{"-z"}, opts...)...).Dir(r.Root).Env("GIT_INDEX_FILE=" + idx)
	pathspecs(ls, exclude)
	out, err := r.git.Run(ctx, ls)
	if err != nil {
		return nil, fmt.Errorf("list workspace files: %w", err)
	}
	var paths []string
	seen := map[string]bool{}
	for _, p := range bytes.Split(out, []byte{0}) {
		rel := string(p)
		if rel == "" || seen[rel] {
			continue
		}
		seen[rel] = true
		paths = append(paths, rel)
	}
	return paths, nil
}

// convertFailures returns the files (relative, slash separated) whose
// conversion into git fails. git hash-object converts them as git add
// does and writes nothing; it only warns of an encoding that fails, and
// goes on, so one run names them all (a path that cannot exist, last,
// makes it fail, so that its warnings come back). A conversion that git
// dies of (a required filter's clean that fails) names its file; the run
// goes on after it. n files with k such deaths cost k+1 runs.
func (r *Repo) convertFailures(ctx context.Context, files []string) ([]string, error) {
	dir, err := os.MkdirTemp("", "prsm-probe-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	end := filepath.Join(dir, "no-such-file")
	failing := map[string]bool{}
	index := make(map[string]int, len(files))
	for i, p := range files {
		index[p] = i
	}
	for rest := files; ; {
		in := make([]string, 0, len(rest)+1)
		for _, p := range rest {
			in = append(in, cQuote(p))
		}
		in = append(in, cQuote(end))
		_, err := r.git.Run(ctx, NewCmd("hash-object", "--stdin-paths").Dir(r.Root).Stdin([]byte(strings.Join(in, "\n")+"\n")))
		var ge *Error
		if err == nil || !errors.As(err, &ge) || ctx.Err() != nil || errors.Is(err, ErrTimeout) {
			if err == nil {
				err = errors.New("git hash-object took a file that does not exist")
			}
			return nil, fmt.Errorf("find files git cannot convert: %w", err)
		}
		died := -1
		for _, line := range strings.Split(ge.Stderr, "\n") {
			fatal := strings.HasPrefix(line, "fatal: ")
			if !fatal && !(strings.HasPrefix(line, "error: ") && conversionError(line)) {
				continue
			}
			if p := namedFile(line[len("fatal: "):], index); p != "" { // "error: " is as long
				failing[p] = true
				if fatal {
					died = index[p]
				}
			}
		}
		// Died at a file (not at the end): those after it were not
		// looked at.
		next := died - (len(files) - len(rest)) + 1
		if died < 0 || next <= 0 || next >= len(rest) {
			break
		}
		rest = rest[next:]
	}
	var out []string
	for p := range failing {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// conversionError reports whether git's error line is one of a
// conversion that failed on a file (and not, say, of the filter command
// that failed, which names the command).
func conversionError(line string) bool {
	for _, m := range []string{"BOM is required in ", "BOM is prohibited in ", "failed to encode ", ": clean filter ", " would be replaced by "} {
		if strings.Contains(line, m) {
			return true
		}
	}
	return false
}

// namedFile returns the file of index (the files tried) that git's
// message names: "BOM is required in 'a.txt' if encoded as UTF-16",
// "failed to encode 'a.txt' from UTF-8 to UTF-16", "a.dat: clean filter
// 'x' failed", "CRLF would be replaced by LF in a.txt."; the longest
// quoted name that is a file tried, else the name before ": ".
func namedFile(msg string, index map[string]int) string {
	best := ""
	for i := strings.IndexByte(msg, '\''); i >= 0 && i < len(msg); {
		j := strings.IndexByte(msg[i+1:], '\'')
		if j < 0 {
			break
		}
		// Names may hold quotes: try every closing quote after i.
		for k := i + 1 + j; k < len(msg); {
			if cand := msg[i+1 : k]; len(cand) > len(best) {
				if _, ok := index[cand]; ok {
					best = cand
				}
			}
			n := strings.IndexByte(msg[k+1:], '\'')
			if n < 0 {
				break
			}
			k += 1 + n
		}
		n := strings.IndexByte(msg[i+1:], '\'')
		if n < 0 {
			break
		}
		i += 1 + n
	}
	if best != "" {
		return best
	}
	if name, _, ok := strings.Cut(msg, ": "); ok {
		if _, ok := index[name]; ok {
			return name
		}
	}
	for _, sep := range []string{" in ", " of "} {
		if i := strings.LastIndex(msg, sep); i >= 0 {
			name := strings.TrimSuffix(msg[i+len(sep):], ".")
			if _, ok := index[name]; ok {
				return name
			}
		}
	}
	return ""
}

// cQuote quotes p as git reads a path line (C style) when it needs it.
func cQuote(p string) string {
	need := strings.HasPrefix(p, `"`)
	for i := 0; i < len(p) && !need; i++ {
		need = p[i] < 0x20 || p[i] == 0x7f
	}
	if !need {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// namesMessage is message with a line per file stored as its bytes and
// one per file over the size limit stored as a stub.
func namesMessage(message string, asIs, big []string) string {
	if len(asIs)+len(big) == 0 {
		return message
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(message, "\n"))
	b.WriteString("\n\n")
	for _, p := range asIs {
		b.WriteString(asIsKey + strconv.Quote(p) + "\n")
	}
	for _, p := range big {
		b.WriteString(bigKey + strconv.Quote(p) + "\n")
	}
	return b.String()
}

// namedCache maps a commit id and a key (asIsKey, bigKey) to the files
// its message names with that key (nil: none). Commits never change, so
// neither does the answer.
var namedCache = struct {
	stdsync.Mutex
	m map[[2]string]map[string]bool
}{}

// maxNamedCache bounds namedCache.
const maxNamedCache = 1024

// named returns the files that the message of commit names on lines
// that start with key, as a set of relative, slash-separated paths.
func (r *Repo) named(commit, key string) (map[string]bool, error) {
	ck := [2]string{commit, key}
	namedCache.Lock()
	set, ok := namedCache.m[ck]
	namedCache.Unlock()
	if ok {
		return set, nil
	}
	objs, err := r.Objects()
	if err != nil {
		return nil, err
	}
	msg, err := objs.commitMessage(commit)
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(msg, "\n") {
		q, ok := strings.CutPrefix(line, key)
		if !ok {
			continue
		}
		if p, err := strconv.Unquote(q); err == nil {
			if set == nil {
				set = map[string]bool{}
			}
			set[p] = true
		}
	}
	namedCache.Lock()
	if namedCache.m == nil || len(namedCache.m) >= maxNamedCache {
		namedCache.m = map[[2]string]map[string]bool{}
	}
	namedCache.m[ck] = set
	namedCache.Unlock()
	return set, nil
}

// AsIs returns the files that the snapshot commit stores as their bytes
// (none for any other commit), as a set of relative, slash-separated
// paths.
func (r *Repo) AsIs(commit string) (map[string]bool, error) { return r.named(commit, asIsKey) }

// StoredAsIs reports whether commit, a session's base, stores rel as the
// workspace file's bytes, which git could not convert: its checkout is
// the blob itself, with no conversion. An unreadable commit says no.
func (r *Repo) StoredAsIs(commit, rel string) bool {
	set, err := r.AsIs(commit)
	return err == nil && set[rel]
}

// PlaceAsIs writes into dir, a worktree just checked out at commit, the
// files commit stores as their bytes, as they are: git's checkout
// converted them (UTF-8 to UTF-16, a filter's smudge), and the worktree
// must start equal to the workspace. It returns the files it wrote.
func (r *Repo) PlaceAsIs(dir, commit string) ([]string, error) {
	return r.placeNamed(dir, commit, asIsKey, func(p string, f File, perm fs.FileMode) (bool, error) {
		if bigfile.IsStub(f.Content) {
			// Over the size limit: read as a stub, never whole. The
			// checkout's bytes stay, and the tracker reads the file as
			// it is.
			return false, nil
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return false, err
		}
		if cur, err := os.Lstat(p); err == nil && cur.Mode().IsRegular() && cur.Mode().Perm()&0o111 == perm&0o111 {
			if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, f.Content) {
				return false, nil // the checkout wrote these bytes (a filter's smudge gave them back)
			}
		}
		return true, replaceFile(p, f.Content, perm)
	})
}

// placeNamed runs place for each regular file that the message of
// commit names with key, with its path in dir (a worktree checked out
// at commit), its blob and its permission bits as git checks them out.
// It returns the files place wrote (it says true), sorted.
func (r *Repo) placeNamed(dir, commit, key string, place func(p string, f File, perm fs.FileMode) (bool, error)) ([]string, error) {
	set, err := r.named(commit, key)
	if err != nil || len(set) == 0 {
		return nil, err
	}
	objs, err := r.Objects()
	if err != nil {
		return nil, err
	}
	var placed []string
	for rel := range set {
		f, err := objs.ReadFile(commit, rel)
		if errors.Is(err, ErrNoFile) {
			continue
		}
		if err != nil {
			return placed, err
		}
		if f.Mode&0o170000 != 0o100000 {
			continue // only regular files are named
		}
		p, err := safepath.Join(dir, rel)
		if err != nil {
			return placed, fmt.Errorf("place %s: %w", rel, err)
		}
		perm := fs.FileMode(0o644)
		if f.Mode&0o111 != 0 {
			perm = 0o755
		}
		wrote, err := place(p, f, perm)
		if err != nil {
			return placed, fmt.Errorf("place %s: %w", rel, err)
		}
		if wrote {
			placed = append(placed, rel)
		}
	}
	sort.Strings(placed)
	return placed, nil
}

// replaceFile puts a new file with content and perm at p, by a rename.
func replaceFile(p string, content []byte, perm fs.FileMode) error {
	return sync.WriteFileFrom(p, perm, func(f *os.File) error {
		_, err := f.Write(content)
		return err
	})
}

// commitMessage returns the message of commit.
func (o *Objects) commitMessage(commit string) (msg string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	err = o.retry(func() error {
		c, err := object.GetCommit(o.reader(), plumbing.NewHash(commit))
		if err != nil {
			return fmt.Errorf("read commit %s: %w", commit, err)
		}
		msg = c.Message
		return nil
	})
	return msg, err
}
