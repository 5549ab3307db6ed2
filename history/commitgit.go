package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/worktree"
)

// commitAll makes the groups' commits on branch, in order, with the git
// runner gives (pinned: one lookup of filter drivers for all its calls,
// waited for only when a git call is due). Each group's tree is built in
// process, on the tree before it (HEAD's for the first), and its objects
// written; then, for each, the tree is put in a temporary index and git
// commit commits it. On a failure (a commit hook that refuses, say) the
// branch goes back to head, where it was, and the error says why:
// nothing is half-made.
func (h *History) commitAll(ctx context.Context, runner func() (*worktree.Runner, error), branch, head string, groups []*group, rep *api.CommitReport) ([]string, error) {
	run := func(c *worktree.Cmd) ([]byte, error) {
		git, err := runner()
		if err != nil {
			return nil, err
		}
		return git.Run(ctx, c.Dir(h.Repo.Root))
	}
	trees, release, err := h.writeTrees(head, groups)
	if err != nil {
		return nil, err
	}
	// Released once the commits are made (or not): until then a large
	// blob's pack is kept from a gc, which would find nothing that
	// reaches it. In the background: it waits for the object store's
	// lock, which the engine's own writes may hold.
	defer func() { go release() }()
	tmp, err := os.MkdirTemp("", "prsm-commit-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var made []string
	undo := func(cause error) error {
		if len(made) == 0 {
			return cause
		}
		tip := made[len(made)-1]
		cmd := worktree.NewCmd("update-ref", "-m", "prsm commit: undone").Rev(branch, head, tip)
		if head == "" {
			cmd = worktree.NewCmd("update-ref", "-d").Rev(branch, tip) // the branch was unborn
		}
		if _, err := run(cmd); err != nil {
			return fmt.Errorf("%w; and putting %s back at %.12s failed: %v", cause, branch, head, err)
		}
		return cause
	}
	// One temporary index for all the commits: the tree of each, with
	// the stat data of the entries that index (the user's, for the
	// first) has unchanged, so that git commit's refresh of the index
	// hashes only the files that differ, not the whole workspace. Built
	// in process (IndexOfTree) for a small index, or by git read-tree -m
	// -i (indexOf): -i, the workspace's files are not checked against the
	// entries the tree changes (the user's and the agent's uncommitted
	// bytes are there).
	index := filepath.Join(tmp, "index")
	env := "GIT_INDEX_FILE=" + index
	objs, err := h.Repo.Objects()
	if err != nil {
		return nil, err
	}
	from := filepath.Join(h.Repo.GitDir, "index")
	for i := range groups {
		if err := h.indexOf(run, objs, from, index, trees[i]); err != nil {
			return nil, undo(err)
		}
		from = index
		// maintenance.auto off: the user's next git command that runs it
		// (commit, merge, fetch) does the upkeep, a process less here
		// (prsm leaves as many loose objects as git add would).
		out, err := run(worktree.NewCmd("-c", "maintenance.auto=false", "commit", "-q", "--allow-empty", "-F", "-").
			AsUser().Env(env).Stdin([]byte(rep.Commits[i].Message)).Timeout(commitTimeout))
		if err != nil {
			return nil, undo(prsm.Errorf(prsm.ErrConflict, string(api.CodeCommitFailed),
				"fix what git says, then run prsm commit again: nothing was committed, and the index and HEAD are as they were",
				"git commit failed: %s", strings.TrimSpace(gitStderr(err, out))))
		}
		rev, err := objs.Ref(branch)
		if err == nil && rev == "" {
			err = fmt.Errorf("%s does not exist after git commit", branch)
		}
		if err != nil {
			return nil, undo(err)
		}
		made = append(made, rev)
	}
	return made, nil
}

// writeTrees builds each group's tree, on the one before it (HEAD's for
// the first), writes their new objects to the object store as loose
// objects, as git add would (a large blob in a kept pack of its own), and
// sets each group's lines of update-index --index-info (its files'
// modes, blobs and paths, or their removal). release takes the large
// blobs' keep files away.
func (h *History) writeTrees(head string, groups []*group) (trees []string, release func(), err error) {
	objs, err := h.Repo.Objects()
	if err != nil {
		return nil, nil, err
	}
	base := ""
	if head != "" {
		if base, err = objs.CommitTreeID(head); err != nil {
			return nil, nil, err
		}
	}
	b := objs.NewBatch()
	trees = make([]string, len(groups))
	for i, g := range groups {
		changes := make([]worktree.TreeChange, 0, len(g.files))
		g.info = map[string]string{}
		for _, f := range g.files {
			v := g.in[f]
			if !v.Present {
				changes = append(changes, worktree.TreeChange{Path: f})
				g.info[f] = fmt.Sprintf("0 %s\t%s\x00", strings.Repeat("0", 40), f)
				continue
			}
			changes = append(changes, worktree.TreeChange{Path: f, File: &worktree.File{Mode: v.Mode, Content: v.Content}})
			blob := plumbing.ComputeHash(plumbing.BlobObject, v.Content)
			g.info[f] = fmt.Sprintf("%o %s\t%s\x00", v.Mode, blob, f)
		}
		if trees[i], err = b.BuildTree(base, changes); err != nil {
			objs.ReleaseLarge(b.Objects())
			return nil, nil, err
		}
		base = trees[i]
	}
	release = func() { objs.ReleaseLarge(b.Objects()) }
	if err := objs.WriteLoose(b.Objects()); err != nil {
		release()
		return nil, nil, err
	}
	return trees, release, nil
}

// inProcessIndex is the size of index file up to which indexOf writes
// the index in process. Above, git read-tree's C is the faster: at 50k
// entries it took 250-340 ms where IndexOfTree took 366 ms with the trees
// cached (1.6 s without); at 20 it saves a 10 ms process.
const inProcessIndex = 256 << 10

// indexOf writes to the index file dst the tree, with the stat data of
// the entries of the index file src that it has unchanged.
func (h *History) indexOf(run func(*worktree.Cmd) ([]byte, error), objs *worktree.Objects, src, dst, tree string) error {
	tmp := dst + ".new"
	err := worktree.ErrIndexNotPlain
	if fi, serr := os.Stat(src); serr != nil || fi.Size() <= inProcessIndex {
		err = objs.IndexOfTree(src, tmp, tree)
	}
	if err == nil {
		return os.Rename(tmp, dst)
	}
	if !errors.Is(err, worktree.ErrIndexNotPlain) {
		return err
	}
	// An index go-git cannot read (a split index, say): git's.
	b, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(tmp, b, 0o600)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	env := "GIT_INDEX_FILE=" + tmp
	if _, err := run(worktree.NewCmd("read-tree", "-m", "-i").Rev(tree).Env(env)); err != nil {
		// One git cannot merge into (unmerged entries): the tree
		// alone, which git commit then hashes whole.
		os.Remove(tmp)
		if _, err := run(worktree.NewCmd("read-tree").Rev(tree).Env(env)); err != nil {
			return err
		}
	}
	return os.Rename(tmp, dst)
}

// gitStderr is what git said of a failed call.
func gitStderr(err error, out []byte) string {
	var ge *worktree.Error
	if errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) != "" {
		return ge.Stderr + string(out)
	}
	return err.Error()
}

// syncIndex gives the user's index the committed files as the new HEAD
// has them (each one's entry of the last commit that has it); its other
// entries stay as they were.
func (h *History) syncIndex(ctx context.Context, git *worktree.Runner, groups []*group) error {
	last := map[string]string{}
	var paths []string
	for _, g := range groups {
		for _, f := range g.files {
			if _, ok := last[f]; !ok {
				paths = append(paths, f)
			}
			last[f] = g.info[f]
		}
	}
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(last[p])
	}
	_, err := git.Run(ctx, worktree.NewCmd("update-index", "-z", "--index-info").Dir(h.Repo.Root).Stdin(b.Bytes()))
	return err
}

// traced is a group's trace record, all but its revision; or why it
// could not be made.
type traced struct {
	tb  *traceBuilder
	err error
}

// withRevision is the record, of commit rev.
func (t traced) withRevision(rev string) *Trace {
	t.tb.t.VCS = &TraceVCS{Type: "git", Revision: rev}
	return t.tb.done()
}

// traces are the groups' trace records: for each of a group's files, the
// lines its records wrote (and, with mine, the user's), as its commit
// has them.
func (h *History) traces(ctx context.Context, groups []*group, mine bool) []traced {
	out := make([]traced, len(groups))
	prompts := map[string]map[int]string{}
	promptsOf := func(id string) map[int]string {
		if p, ok := prompts[id]; ok {
			return p
		}
		prompts[id] = h.prompts(ctx, id)
		return prompts[id]
	}
	for i, g := range groups {
		out[i].tb, out[i].err = h.trace(ctx, g, mine, promptsOf)
	}
	return out
}

// trace is group g's trace record, but its revision.
func (h *History) trace(ctx context.Context, g *group, mine bool, prompts func(string) map[int]string) (*traceBuilder, error) {
	tb := newTraceBuilder("", h.Version, time.Now())
	in := map[string]bool{}
	for _, r := range g.recs {
		in[r.SessionID+"/"+r.ID] = true
	}
	keep := func(r *prsm.Record) bool { return in[r.SessionID+"/"+r.ID] }
	for _, f := range g.files {
		data := g.in[f].Content
		if !g.in[f].Present || binary(data) || g.in[f].IsLink() {
			continue // no lines
		}
		who, err := h.attribute(ctx, f, data, &api.Blame{})
		if err != nil {
			return nil, err
		}
		tb.addFile(f, data, who, keep, prompts)
		if mine {
			tb.addMine(f, data, who, keep)
		}
	}
	return tb, nil
}

// message is a group's commit message: the first line sums up the turn's
// prompt, the body holds the prompts and the tool calls, and trailers
// name the agent and the session.
func message(g *group, prompts map[int]string) string {
	agent := g.session.AgentID
	if agent == "" {
		agent = "agent"
	}
	first := ""
	for _, t := range g.turns {
		if p := strings.TrimSpace(prompts[t]); p != "" {
			first = summary(p)
			break
		}
	}
	if first == "" {
		first = fmt.Sprintf("%s: changes to %s", agent, plural(len(g.files), "file"))
	}
	var b strings.Builder
	b.WriteString(first + "\n\n")
	for _, t := range g.turns {
		if p := strings.TrimSpace(prompts[t]); p != "" {
			fmt.Fprintf(&b, "Prompt (turn %d):\n", t)
			for _, l := range strings.Split(p, "\n") {
				b.WriteString("    " + l + "\n")
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("Tool calls:\n")
	seen := map[string]bool{}
	for _, r := range g.recs {
		call := prsm.CallOf(r.ToolCallID)
		key := call + "\x00" + r.RelPath
		if seen[key] {
			continue
		}
		seen[key] = true
		tool := r.ToolName
		if tool == "" {
			tool = "change"
		}
		fmt.Fprintf(&b, "- %s %s (%s)\n", tool, r.RelPath, call)
	}
	fmt.Fprintf(&b, "\nAgent: %s\nPrsm-Session: %s\n", agent, g.session.ID)
	return b.String()
}

// summary is a prompt's first line, cut to 72 bytes at a word.
func summary(p string) string {
	line, _, _ := strings.Cut(p, "\n")
	line = strings.Join(strings.Fields(line), " ")
	if len(line) <= 72 {
		return line
	}
	cut := strings.LastIndexByte(line[:69], ' ')
	if cut < 40 {
		cut = 69
	}
	return line[:cut] + "..."
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
