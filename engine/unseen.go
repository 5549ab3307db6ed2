package engine

import (
	"fmt"
	stdsync "sync"
	"time"
	"unicode/utf8"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/safepath"
)

// reportUnseen tells of what the tracker found in s's worktree and could
// not record: paths too long for the system to name (a tree thousands of
// directories deep, built one directory at a time). Nothing at or below
// such a path can be read, recorded or synced, so the worktree and the
// workspace differ there; the user hears of it three ways: a warning in
// the log, a notice `prsm status` shows, and the returned warnings, which
// a tool call's complete answers with. Each path is told once per server
// run. Called under the session's lock, after a look (detect).
func (g *guard) reportUnseen(s *prsm.Session, st *sessionState) []string {
	paths, more := st.tracker.TakeTooLong()
	if len(paths) == 0 && more == 0 {
		return nil
	}
	var warns []string
	for _, p := range paths {
		size := len(s.WorktreePath) + 1 + len(p)
		g.Log.Warn("path too long to record; the agent's files there stay in the worktree only",
			"session", s.ID, "path", shortPath(p), "bytes", size, "max", safepath.MaxPath)
		warns = append(warns, fmt.Sprintf("%s: path too long to record (%d bytes in the session's worktree, over the system's %d); "+
			"it and anything below it are neither recorded nor synced to the workspace, and stay in the worktree only", shortPath(p), size, safepath.MaxPath))
	}
	if more > 0 {
		g.Log.Warn("more paths too long to record", "session", s.ID, "count", more)
		warns = append(warns, fmt.Sprintf("and %d more paths too long to record", more))
	}
	g.notices.add(s.ID, warns)
	return warns
}

// shortPath is p cut in the middle to a length a line can show, at rune
// boundaries.
func shortPath(p string) string {
	const keep = 60
	if len(p) <= 2*keep+10 {
		return p
	}
	head, tail := keep, len(p)-keep
	for head > 0 && !utf8.RuneStart(p[head]) {
		head--
	}
	for tail < len(p) && !utf8.RuneStart(p[tail]) {
		tail++
	}
	return fmt.Sprintf("%s...(%d bytes)...%s", p[:head], tail-head, p[tail:])
}

// noticeLog keeps the latest notices, in memory: a restart finds what is
// still there again (the watcher walks every worktree at its start).
type noticeLog struct {
	mu   stdsync.Mutex
	list []notice
}

type notice struct {
	at      time.Time
	session string
	msg     string
}

// maxNotices bounds the notices kept; noticeAge is how long one is shown.
const (
	maxNotices = 50
	noticeAge  = 24 * time.Hour
)

func (l *noticeLog) add(session string, msgs []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	for _, m := range msgs {
		l.list = append(l.list, notice{at: now, session: session, msg: m})
	}
	if n := len(l.list); n > maxNotices {
		l.list = append(l.list[:0:0], l.list[n-maxNotices:]...)
	}
}

// Notices is Engine.Notices's work.
func (g *guard) Notices() []string {
	g.notices.mu.Lock()
	defer g.notices.mu.Unlock()
	var out []string
	for _, n := range g.notices.list {
		if time.Since(n.at) < noticeAge {
			out = append(out, api.SessionNotice(n.session, n.msg))
		}
	}
	return out
}
