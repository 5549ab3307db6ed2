package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// AnySession, in place of a session's id, names the one active session
// that has the change a request names: what a client that knows only the
// change's id sends (api.AnySession).
const AnySession = api.AnySession

// ResolveChange finds the session and the change that sessionArg and arg
// name, so that a client sends what the user typed and needs no lookup of
// its own. sessionArg is a session's id or unique prefix, or AnySession.
// arg is a record's or a tool call's id, exact or by unique prefix: tool
// call ids are matched first, then the ids of records whose call did not
// match. The id returned is arg itself when it is exact, or when nothing
// matches (the engine's lookup then says record_not_found); a prefix of
// several changes is ambiguous_id. With AnySession: no active session is
// no_active_session, and several that could own the change (or none) is
// several_sessions.
func (e *Engine) ResolveChange(ctx context.Context, sessionArg, arg string) (*prsm.Session, string, error) {
	if sessionArg != AnySession {
		s, err := e.Session(ctx, sessionArg)
		if err != nil {
			return nil, "", err
		}
		id, _, err := e.changeID(ctx, s, arg)
		return s, id, err
	}
	list, err := store.ListSessions(ctx, e.DB.Q(), prsm.SessionActive)
	if err != nil {
		return nil, "", err
	}
	if len(list) == 0 {
		return nil, "", prsm.Errorf(prsm.ErrNotFound, string(api.CodeNoActiveSession),
			"start one with `prsm session start`, or name an ended one with --session ID", "no active session")
	}
	if len(list) == 1 {
		s, err := e.Session(ctx, list[0].ID)
		if err != nil {
			return nil, "", err
		}
		id, _, err := e.changeID(ctx, s, arg)
		return s, id, err
	}
	var owner *prsm.Session
	var ownerID string
	owners := 0
	for _, s := range list {
		id, found, err := e.changeID(ctx, s, arg)
		if err != nil && !isAmbiguous(err) {
			return nil, "", err
		}
		if err == nil && found {
			owners++
			owner, ownerID = s, id
		}
	}
	if owners == 1 {
		s, err := e.Session(ctx, owner.ID)
		return s, ownerID, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d sessions are active; say which with --session ID:", len(list))
	for _, s := range list {
		fmt.Fprintf(&b, "\n  %s  %s", s.ID, s.Name)
	}
	return nil, "", prsm.Errorf(prsm.ErrInvalid, string(api.CodeSeveralSessions), "pass --session ID (a unique prefix will do)", "%s", b.String())
}

// isAmbiguous says whether err is an ambiguous prefix's.
func isAmbiguous(err error) bool {
	var pe *prsm.Error
	return errors.As(err, &pe) && pe.Code == api.CodeAmbiguousID
}

// changeID is the change of session s that arg names (see ResolveChange),
// and whether s has it: exact ids are looked up first, with one query
// each; only a prefix reads the session's records.
func (e *Engine) changeID(ctx context.Context, s *prsm.Session, arg string) (string, bool, error) {
	if arg == "" {
		return arg, false, nil
	}
	if _, err := store.GetRecord(ctx, e.DB.Q(), s.ID, arg); err == nil {
		return arg, true, nil
	} else if !errors.Is(err, prsm.ErrNotFound) {
		return "", false, err
	}
	recs, err := store.ListRecords(ctx, e.DB.Q(), store.RecordFilter{SessionID: s.ID, ToolCallID: arg})
	if err != nil {
		return "", false, err
	}
	for _, r := range recs {
		if r.ToolCallID == arg {
			return arg, true, nil
		}
	}
	recs, err = store.ListRecords(ctx, e.DB.Q(), store.RecordFilter{SessionID: s.ID})
	if err != nil {
		return "", false, err
	}
	matches := prsm.ChangesPrefixed(recs, arg)
	switch len(matches) {
	case 0:
		return arg, false, nil
	case 1:
		return matches[0], true, nil
	}
	return "", false, prsm.Errorf(prsm.ErrAmbiguous, string(api.CodeAmbiguousID), "give more characters of the id",
		"change id prefix %q matches %d changes: %s", arg, len(matches), strings.Join(matches, ", "))
}
