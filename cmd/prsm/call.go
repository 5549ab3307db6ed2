package main

import (
	"context"
	"reflect"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/client"
)

// ask is the skeleton of a command that asks the workspace's server one
// thing: connect (starting a server when none runs), ask, and print the
// answer, as JSON with --json or for a person with human.
func ask[T any](a *app, ctx context.Context, q func(context.Context, *client.Client) (T, error), human func(T)) error {
	cl, _, err := a.connect(ctx)
	if err != nil {
		return err
	}
	v, err := q(ctx, cl)
	if err != nil {
		return err
	}
	return a.answer(v, func() { human(v) })
}

// askSession is ask for a command that acts on one session: the one
// --session names (a unique prefix will do), else the one active session
// (resolveSession).
func askSession[T any](a *app, ctx context.Context, sessionID string, q func(context.Context, *client.Client, *prsm.Session) (T, error), human func(*prsm.Session, T)) error {
	cl, s, err := a.connectSession(ctx, sessionID)
	if err != nil {
		return err
	}
	v, err := q(ctx, cl, s)
	if err != nil {
		return err
	}
	return a.answer(v, func() { human(s, v) })
}

// answer prints v as indented JSON with --json (an empty list as [], never
// null), else runs human.
func (a *app) answer(v any, human func()) error {
	if !a.jsonOut {
		human()
		return nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.IsNil() {
		v = []any{}
	}
	return printJSON(a.stdio.Out, v)
}
