package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// The agent never controls git. prsm's own git calls in a session
// worktree name its git directory themselves (worktree.Repo.RunIn), so
// what the agent writes at the worktree's .git changes nothing for prsm;
// it would for the user's git there, and for git's own bookkeeping
// (`git worktree remove` refuses a worktree whose .git names another
// place). So every look at a worktree's changes puts its .git back as git
// wrote it, keeping what stood there in the project's quarantine, and
// the git directories the agent builds in its worktree are never recorded
// nor synced. Both are logged and noted on the session, where
// `prsm session show`, `prsm status` and the session_updated event show
// them.

// guard keeps a session's git in its place and tells what prsm could not
// record: it checks and repairs a worktree's .git around the tracker's
// filter (gitguard.go), and reports paths too long to record (unseen.go),
// keeping the latest notices (notices) in memory.
type guard struct {
	*Engine
	// notices are what the agent did that prsm could not record.
	notices noticeLog
}

// QuarantineDir is where prsm keeps what an agent put at its worktree's
// .git: moved aside, never deleted.
func (e *Engine) QuarantineDir() string { return filepath.Join(e.ProjectDir, "quarantine") }

// maxNote bounds a session's note; older notices go first.
const maxNote = 2000

// filter is the tracker's Filter between the guards of the session's git:
// before it, the worktree's .git is checked and repaired (repairDotGit);
// after it, the git directories it left unrecorded are reported.
func (g *guard) filter(ctx context.Context, st *sessionState, paths []string) ([]string, error) {
	g.repairDotGit(ctx, st.tracker.ID, st.tracker.Worktree)
	res, err := st.tracker.Filter(ctx, paths)
	if refused := st.tracker.TakeRefused(); len(refused) > 0 {
		g.Log.Warn("git directories the agent made in its worktree are not recorded nor synced", "session", st.tracker.ID, "paths", refused)
		shown := refused
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(refused)-5))
		}
		g.notice(ctx, st.tracker.ID, "not recorded nor synced, being git directories: "+strings.Join(shown, ", "))
	}
	return res, err
}

// repairDotGit puts the .git of session sessionID's worktree back as git
// wrote it, and git's entry for it pointing back, where either changed
// (worktree.Repo.RepairDotGit), and reports what it did. A failure is
// logged: tracking goes on, since prsm's git calls never read the file.
func (g *guard) repairDotGit(ctx context.Context, sessionID, worktree string) {
	rep, err := g.Repo.RepairDotGit(worktree, g.QuarantineDir())
	if err != nil {
		g.Log.Error("check the worktree's .git", "session", sessionID, "worktree", worktree, "err", err)
		return
	}
	if rep == nil {
		return
	}
	g.Log.Warn("repaired the worktree's .git: "+rep.String(), "session", sessionID, "worktree", worktree, "kept", rep.Kept)
	if sessionID != "" {
		g.notice(ctx, sessionID, rep.String())
	}
}

// notice adds msg to the session's note, unless it says it already, and
// announces the session (session_updated).
func (g *guard) notice(ctx context.Context, sessionID, msg string) {
	s, err := store.GetSession(ctx, g.DB.Q(), sessionID)
	if err != nil {
		g.Log.Error("note on session", "session", sessionID, "err", err)
		return
	}
	note := addNotice(s.Note, msg)
	if note == s.Note {
		return
	}
	if err := store.SetSessionNote(ctx, g.DB.Q(), sessionID, note); err != nil {
		g.Log.Error("note on session", "session", sessionID, "err", err)
		return
	}
	s.Note = note
	if st := g.sessions.loaded(sessionID); st != nil && st.active != nil {
		st.active.Note = note // the caller holds the session's lock
	}
	g.Events.Publish(api.EventSessionUpdated, s)
}

// addNotice appends msg to note ("; " between notices) unless note holds
// it already, dropping the oldest notices beyond maxNote.
func addNotice(note, msg string) string {
	if strings.Contains(note, msg) {
		return note
	}
	if note != "" {
		msg = note + "; " + msg
	}
	for len(msg) > maxNote {
		_, rest, ok := strings.Cut(msg, "; ")
		if !ok {
			return strings.ToValidUTF8(msg[len(msg)-maxNote:], "")
		}
		msg = rest
	}
	return msg
}
