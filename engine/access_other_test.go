//go:build !linux

package engine_test

import "testing"

// accessWatch needs inotify; elsewhere the tests check bytes only.
type accessWatch struct{}

func watchAccess(t *testing.T, dir string) *accessWatch { return &accessWatch{} }

func (w *accessWatch) events(t *testing.T) []string { return nil }
