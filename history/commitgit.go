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

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/worktree"
)

// commitAll makes the groups' commits on branch, in order, each from a
// temporary index: HEAD's tree with the group's files in place. On a
// failure (a commit hook that refuses, say) the branch goes back to head,
// where it was, and the error says why: nothing is half-made.
func (h *History) commitAll(ctx context.Context, branch, head string, groups []*group, rep *api.CommitReport) ([]string, error) {
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
		if _, err := h.git(ctx, cmd); err != nil {
			return fmt.Errorf("%w; and putting %s back at %.12s failed: %v", cause, branch, head, err)
		}
		return cause
	}
	// One temporary index for all the commits: HEAD's tree, with the
	// stat data of the user's index where its entries are HEAD's (read-tree
	// -m keeps them), so that git commit's refresh of the index hashes only
	// the files that differ, not the whole workspace; after each commit it
	// holds that commit's tree.
	index := filepath.Join(tmp, "index")
	env := "GIT_INDEX_FILE=" + index
	if head != "" {
		if err := copyFile(filepath.Join(h.Repo.GitDir, "index"), index); err != nil {
			return nil, err
		}
		if _, err := h.git(ctx, worktree.NewCmd("read-tree", "-m").Rev(head).Env(env)); err != nil {
			// An index git cannot read from elsewhere (a split index):
			// HEAD's tree alone, which git commit then hashes whole.
			os.Remove(index)
			if _, err := h.git(ctx, worktree.NewCmd("read-tree").Rev(head).Env(env)); err != nil {
				return nil, err
			}
		}
	}
	for i, g := range groups {
		info, err := h.indexInfo(ctx, tmp, g)
		if err != nil {
			return nil, undo(err)
		}
		if err := h.Repo.UpdateIndex(ctx, index, info); err != nil {
			return nil, undo(err)
		}
		out, err := h.Repo.Git().Run(ctx, worktree.NewCmd("commit", "-q", "--allow-empty", "-F", "-").
			Dir(h.Repo.Root).AsUser().Env(env).Stdin([]byte(rep.Commits[i].Message)).Timeout(commitTimeout))
		if err != nil {
			return nil, undo(prsm.Errorf(prsm.ErrConflict, string(api.CodeCommitFailed),
				"fix what git says, then run prsm commit again: nothing was committed, and the index and HEAD are as they were",
				"git commit failed: %s", strings.TrimSpace(gitStderr(err, out))))
		}
		rev, err := h.git(ctx, worktree.NewCmd("rev-parse", "-q", "--verify").Rev("HEAD^{commit}"))
		if err != nil {
			return nil, undo(err)
		}
		made = append(made, strings.TrimSpace(string(rev)))
	}
	return made, nil
}

// copyFile copies the file src to dst; a src that does not exist (a
// repository with no index yet) copies nothing.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o600)
}

// gitStderr is what git said of a failed call.
func gitStderr(err error, out []byte) string {
	var ge *worktree.Error
	if errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) != "" {
		return ge.Stderr + string(out)
	}
	return err.Error()
}

// indexInfo writes the group's contents to the object store
// (worktree.WriteBlobs) and returns update-index --index-info's input for
// them: each file's mode, blob and path, or its removal.
func (h *History) indexInfo(ctx context.Context, tmp string, g *group) ([]byte, error) {
	var srcs, rels []string
	for i, f := range g.files {
		if !g.in[f].Present {
			continue
		}
		p := filepath.Join(tmp, fmt.Sprintf("blob%d", i))
		if err := os.WriteFile(p, g.in[f].Content, 0o600); err != nil {
			return nil, err
		}
		srcs, rels = append(srcs, p), append(rels, f)
	}
	blobs := map[string]string{}
	if len(srcs) > 0 {
		ids, err := h.Repo.WriteBlobs(ctx, srcs)
		if err != nil {
			return nil, err
		}
		if len(ids) != len(rels) {
			return nil, fmt.Errorf("git hash-object gave %d objects for %d files", len(ids), len(rels))
		}
		for i, r := range rels {
			blobs[r] = ids[i]
		}
	}
	var b bytes.Buffer
	g.info = map[string]string{}
	for _, f := range g.files {
		if id, ok := blobs[f]; ok {
			g.info[f] = fmt.Sprintf("%o %s\t%s\x00", g.in[f].Mode, id, f)
		} else {
			g.info[f] = fmt.Sprintf("0 %s\t%s\x00", strings.Repeat("0", 40), f)
		}
		b.WriteString(g.info[f])
	}
	return b.Bytes(), nil
}

// syncIndex gives the user's index the committed files as the new HEAD
// has them (each one's entry of the last commit that has it); its other
// entries stay as they were.
func (h *History) syncIndex(ctx context.Context, groups []*group) error {
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
	return h.Repo.UpdateIndex(ctx, "", b.Bytes())
}

// noteCommit writes commit's trace record: for each of its files, the
// lines the group's records wrote (and, with mine, the user's), as the
// commit has them.
func (h *History) noteCommit(ctx context.Context, commit string, g *group, mine bool) error {
	tb := newTraceBuilder(commit, h.Version, time.Now())
	in := map[string]bool{}
	for _, r := range g.recs {
		in[r.SessionID+"/"+r.ID] = true
	}
	keep := func(r *prsm.Record) bool { return in[r.SessionID+"/"+r.ID] }
	prompts := map[string]map[int]string{}
	promptsOf := func(id string) map[int]string {
		if p, ok := prompts[id]; ok {
			return p
		}
		prompts[id] = h.prompts(ctx, id)
		return prompts[id]
	}
	for _, f := range g.files {
		data := g.in[f].Content
		if !g.in[f].Present {
			continue
		}
		who, err := h.attribute(ctx, f, data, &api.Blame{})
		if err != nil {
			return err
		}
		tb.addFile(f, data, who, keep, promptsOf)
		if mine {
			tb.addMine(f, data, who, keep)
		}
	}
	return h.writeNote(ctx, commit, tb.done())
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
