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
// that has the change or the checkpoint a request names: what a client
// that knows only the change's or the checkpoint's id sends
// (api.AnySession).
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
	sessionID := sessionArg
	if sessionArg == AnySession {
		owner, err := activeOwner(ctx, e.DB.Q(), func(s *prsm.Session) (bool, error) {
			_, found, err := changeID(ctx, e.DB.Q(), s.ID, arg)
			if isAmbiguous(err) {
				return false, nil
			}
			return found, err
		})
		if err != nil {
			return nil, "", err
		}
		sessionID = owner.ID
	}
	s, err := e.Session(ctx, sessionID)
	if err != nil {
		return nil, "", err
	}
	id, _, err := changeID(ctx, e.DB.Q(), s.ID, arg)
	return s, id, err
}

// ResolveCheckpoint is Checkpoint (an id, a unique prefix or a name) for
// a client that may not know the session: with AnySession, of the one
// active session that has such a checkpoint, as ResolveChange finds it.
func (e *Engine) ResolveCheckpoint(ctx context.Context, sessionArg, arg string) (*prsm.Session, *prsm.Checkpoint, error) {
	sessionID := sessionArg
	if sessionArg == AnySession {
		owner, err := activeOwner(ctx, e.DB.Q(), func(s *prsm.Session) (bool, error) {
			_, _, err := e.Checkpoint(ctx, s.ID, arg)
			return err == nil, nil
		})
		if err != nil {
			return nil, nil, err
		}
		sessionID = owner.ID
	}
	return e.Checkpoint(ctx, sessionID, arg)
}

// activeOwner is the one active session a request that names no session
// means: the only one, or, of several, the only one that has (has says)
// what the request names. No active session is no_active_session, and
// several that all have it, or none, several_sessions.
func activeOwner(ctx context.Context, q store.Querier, has func(*prsm.Session) (bool, error)) (*prsm.Session, error) {
	list, err := store.ListSessions(ctx, q, prsm.SessionActive)
	if err != nil {
		return nil, err
	}
	switch len(list) {
	case 0:
		return nil, prsm.Errorf(prsm.ErrNotFound, string(api.CodeNoActiveSession),
			"start one with `prsm session start`, or name an ended one with --session ID", "no active session")
	case 1:
		return list[0], nil
	}
	var owners []*prsm.Session
	for _, s := range list {
		ok, err := has(s)
		if err != nil {
			return nil, err
		}
		if ok {
			owners = append(owners, s)
		}
	}
	if len(owners) == 1 {
		return owners[0], nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d sessions are active; say which with --session ID:", len(list))
	for _, s := range list {
		fmt.Fprintf(&b, "\n  %s  %s", s.ID, s.Name)
	}
	return nil, prsm.Errorf(prsm.ErrInvalid, string(api.CodeSeveralSessions), "pass --session ID (a unique prefix will do)", "%s", b.String())
}

// isAmbiguous says whether err is an ambiguous prefix's.
func isAmbiguous(err error) bool {
	var pe *prsm.Error
	return errors.As(err, &pe) && pe.Code == api.CodeAmbiguousID
}

// changeID is the change of session sessionID that arg names (see ResolveChange),
// and whether s has it: exact ids are looked up first, with one query
// each; only a prefix reads the session's records.
func changeID(ctx context.Context, q store.Querier, sessionID, arg string) (string, bool, error) {
	if arg == "" {
		return arg, false, nil
	}
	if _, err := store.GetRecord(ctx, q, sessionID, arg); err == nil {
		return arg, true, nil
	} else if !errors.Is(err, prsm.ErrNotFound) {
		return "", false, err
	}
	recs, err := store.ListRecords(ctx, q, store.RecordFilter{SessionID: sessionID, ToolCallID: arg})
	if err != nil {
		return "", false, err
	}
	for _, r := range recs {
		if r.ToolCallID == arg {
			return arg, true, nil
		}
	}
	recs, err = store.ListRecords(ctx, q, store.RecordFilter{SessionID: sessionID})
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
