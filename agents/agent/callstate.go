package agent

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prsm-dev/prsm/internal/osproc"
)

// Gemini CLI's hook events carry no tool call id. Its calls run one after
// another (BeforeTool, the tool, AfterTool), but each event is a new hook
// process, so the two events of one call must agree on an id without
// shared memory. A hash of session, tool and input alone (what the Claude
// adapter falls back to) gives two identical calls (the same `go test`
// twice) one id, and the second would be taken for a repeat of the first;
// asking the server for "the open call" needs a round trip and breaks
// when a BeforeTool was blocked by another hook. So each Gemini session
// gets a small state file: BeforeTool takes the next number and notes the
// call as open with its tool and input; AfterTool takes the newest open
// call with the same tool and input (else the newest open call, if of the
// same tool, as another hook may have rewritten the input), and closes it;
// the turn's end forgets calls left open (blocked), and the session's end
// removes the file. A random token in the file keeps the ids of a lost,
// removed or recreated file apart from the old ones.

// CallState is the state file of one agent session whose calls carry no
// id of their own (Gemini CLI, Copilot CLI, Cursor): a random token that
// keeps two sessions' numbers apart, the last number given, and the calls
// open.
type CallState struct {
	Token string     `json:"token"`
	Seq   int        `json:"seq"`
	Open  []OpenCall `json:"open,omitempty"`
}

// OpenCall is a call whose before-event came and whose after-event did not.
type OpenCall struct {
	Seq  int    `json:"seq"`
	Tool string `json:"tool"`
	Key  string `json:"key"` // hash of tool and input
}

// maxOpenCalls bounds the open calls kept: a call blocked after its
// before-event never closes.
const maxOpenCalls = 64

// CallStatePath is the state file, in dir, of agent's session key.
func CallStatePath(dir, agent, key string) string {
	sid := sha256.Sum256([]byte(key))
	return filepath.Join(dir, agent+"-"+hex.EncodeToString(sid[:])[:16]+".json")
}

// ForgetOpen drops the open calls of an agent session whose turn ended:
// the server closes them, and a later after-event must not pair with one.
// A session with no state file gets none.
func ForgetOpen(path string) {
	if _, err := os.Stat(path); err != nil {
		return
	}
	withCallState(path, func(s *CallState) { s.Open = nil })
}

// The phases of a numbered call: its before-event opens it, its
// after-event closes it; an event alone (Cursor's afterFileEdit) is a
// call of its own.
const (
	PhaseBefore = iota
	PhaseAfter
	PhaseAlone
)

// NumberedCallID is the id of a call of an agent that gives none, numbered
// in dir's state file of the agent's session key: a before-event opens a
// call under the next number, its after-event closes the newest open call
// of the same tool and input and takes its number, so that two identical
// calls in a row get two ids and each before and after share one. The id
// is "<agent>-<12 hex of the session and its token>-<n>". When the state
// file cannot be used (or dir is ""), it falls back to a hash of session,
// tool and input, which still pairs the two events of one call but no
// longer tells identical calls apart.
func NumberedCallID(dir, agent, key, tool string, input json.RawMessage, phase int) string {
	tool = strings.TrimSpace(tool)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", tool)
	h.Write(CanonicalJSON(input))
	callKey := hex.EncodeToString(h.Sum(nil))[:32]
	fallback := func() string {
		f := sha256.Sum256([]byte(key + "\x00" + callKey))
		return agent + "-" + hex.EncodeToString(f[:])[:32]
	}
	if dir == "" {
		return fallback()
	}
	var id string
	err := withCallState(CallStatePath(dir, agent, key), func(s *CallState) {
		seq := 0
		if phase == PhaseAfter {
			seq = s.close(tool, callKey)
		}
		if seq == 0 {
			s.Seq++
			seq = s.Seq
			if phase == PhaseBefore {
				s.Open = append(s.Open, OpenCall{Seq: seq, Tool: tool, Key: callKey})
				if len(s.Open) > maxOpenCalls {
					s.Open = s.Open[len(s.Open)-maxOpenCalls:]
				}
			}
		}
		t := sha256.Sum256([]byte(key + "\x00" + s.Token))
		id = agent + "-" + hex.EncodeToString(t[:])[:12] + "-" + strconv.Itoa(seq)
	})
	if err != nil {
		return fallback()
	}
	return id
}

// close takes the newest open call of tool with key, else the newest open
// call if it is one of tool, out of the open list and returns its number;
// 0 when none is open.
func (s *CallState) close(tool, key string) int {
	pick := -1
	for i := len(s.Open) - 1; i >= 0; i-- {
		if s.Open[i].Tool == tool && s.Open[i].Key == key {
			pick = i
			break
		}
	}
	if pick < 0 && len(s.Open) > 0 && s.Open[len(s.Open)-1].Tool == tool {
		// Calls run one after another: the newest open one.
		pick = len(s.Open) - 1
	}
	if pick < 0 {
		return 0
	}
	seq := s.Open[pick].Seq
	s.Open = append(s.Open[:pick], s.Open[pick+1:]...)
	return seq
}

// withCallState runs edit on the state file at path, holding an
// exclusive lock on it, and writes the result back. A missing or
// unreadable file starts afresh with a new token.
func withCallState(path string, edit func(*CallState)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	// Bounded: the hook must not hang the agent on a stuck lock.
	deadline := time.Now().Add(2 * time.Second)
	for {
		ok, err := osproc.TryLock(f)
		if ok {
			break
		}
		if err != nil {
			return fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("lock %s: held by another hook for 2s", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer osproc.Unlock(f)
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return err
	}
	var s CallState
	if json.Unmarshal(data, &s) != nil || s.Token == "" || s.Seq < 0 {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		s = CallState{Token: hex.EncodeToString(b[:])}
	}
	edit(&s)
	out, err := json.Marshal(&s)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(out, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(out)))
}
