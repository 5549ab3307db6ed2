package engine

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	stdsync "sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/engine/workspace"
	"github.com/prsm-dev/prsm/internal/safepath"
	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/tracker"
	"github.com/prsm-dev/prsm/worktree"
)

// Engine serves one workspace.
type Engine struct {
	Repo       *worktree.Repo
	DB         *store.DB
	ProjectDir string
	Events     *Hub
	Log        *slog.Logger
	// Watcher reports changed paths of session worktrees; nil means scan
	// with git status (StartWatching sets it).
	Watcher *tracker.Watcher

	// WatchBudget caps the directories the watcher watches (0: the
	// kernel's limit); worktrees beyond it are scanned periodically.
	WatchBudget int

	// flushMu guards the background flusher of checkpoint objects
	// (kickFlush) and the saving of the stat caches (statsChanged).
	flushMu    stdsync.Mutex
	flushing   bool
	flushAgain bool
	closed     bool
	flushTimer *time.Timer
	statsTimer *time.Timer // non-nil while a save is due
	flushWG    stdsync.WaitGroup

	// NoAutoCheckpoints switches automatic checkpoints off for every
	// session (configuration); sessions can switch their own off too.
	NoAutoCheckpoints bool

	// mu serializes session start and end: git's worktree bookkeeping is
	// not safe against concurrent `worktree add`/`remove`.
	mu stdsync.Mutex

	// ws is the one writer of the user's workspace (package workspace),
	// with its per-file locks.
	ws *workspace.Writer
	// settleWG counts background work Close waits for (background):
	// directory syncs of placed workspace writes, tree cache warming.
	settleWG stdsync.WaitGroup

	// The parts the engine's methods delegate to; each owns its state.
	sessions *sessionStates // start, end, in-memory state and locks
	review   *reviewer      // accept, reject, hunks, conflicts
	bulk     *bulker        // decisions on many records at once
	jobs     *jobRunner     // the long operations running or just ended
	rewind   *rewinder      // to a checkpoint, or by a selector
	ckpt     *checkpointer  // made, built, flushed, diffed
	// A tool call goes capture -> rec -> ws.
	capture *capturer    // tool calls and turns as the agent's hooks tell them
	rec     *recorder    // records: made, stored, read
	watch   *watcher     // changes no hook told of, and Reconcile
	warm    *warmer      // the warm worktree a session start takes
	health  *hookMonitor // which hooks reported, and when
	intents *intentLog   // write-ahead intents, and their recovery
	guard   *guard       // a worktree's .git, and what could not be recorded
	trash   *trashCan    // the bins bulk removals rename files into
}

// stateInWorkspace is where prsm's own state (PRSM_HOME, which holds
// projectDir two levels down, or else projectDir) lies inside the
// workspace, relative and slash separated; "" when it does not. It is
// never part of a session: not in its base, not recorded.
func (e *Engine) stateInWorkspace() string {
	root := safepath.Real(e.Repo.Root)
	project := safepath.Real(e.ProjectDir)
	for _, d := range []string{filepath.Dir(filepath.Dir(project)), project} {
		if rel, err := filepath.Rel(root, d); err == nil && rel != "." && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return ""
}

// New builds an engine for repo whose state lives in projectDir. repo's git
// calls are confined from then on: none runs in a session worktree
// without naming its git directory (worktree.Repo.ConfineWorktrees).
func New(repo *worktree.Repo, db *store.DB, projectDir string, log *slog.Logger) *Engine {
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	repo.ConfineWorktrees(filepath.Join(projectDir, "worktrees"))
	e := &Engine{Repo: repo, DB: db, ProjectDir: projectDir, Events: NewHub(), Log: log}
	e.ws = workspace.New(repo.Root, log, e.background)
	e.sessions = &sessionStates{Engine: e, states: map[string]*sessionState{}, finishing: map[string]*afterWork{}}
	e.review = &reviewer{Engine: e}
	e.bulk = &bulker{Engine: e}
	e.jobs = &jobRunner{Engine: e}
	e.rewind = &rewinder{Engine: e}
	e.ckpt = &checkpointer{Engine: e}
	e.rec = &recorder{Engine: e, ws: e.ws}
	e.capture = &capturer{Engine: e, rec: e.rec, ws: e.ws}
	e.watch = &watcher{Engine: e}
	e.warm = &warmer{Engine: e}
	e.health = &hookMonitor{Engine: e}
	e.intents = &intentLog{Engine: e}
	e.guard = &guard{Engine: e}
	e.trash = &trashCan{Engine: e}
	return e
}

// maxNameLen bounds session names and agent ids.
const maxNameLen = 100

// checkLabel validates a user-given name: printable UTF-8, no control
// characters (a newline in a name would forge lines in tables and logs).
func checkLabel(field, s string) error {
	if len(s) > maxNameLen {
		return prsm.Errorf(prsm.ErrInvalid, "invalid_"+field, "", "%s is longer than %d bytes", field, maxNameLen)
	}
	if !utf8.ValidString(s) {
		return prsm.Errorf(prsm.ErrInvalid, "invalid_"+field, "", "%s is not valid UTF-8", field)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return prsm.Errorf(prsm.ErrInvalid, "invalid_"+field, "use printable characters only", "%s %q contains a control character", field, s)
		}
	}
	return nil
}

func newID() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// WorktreeDir is where session worktrees live: under PRSM_HOME, not /tmp, so
// a reboot loses nothing.
func (e *Engine) WorktreeDir() string { return filepath.Join(e.ProjectDir, "worktrees") }
