//go:build !linux

package sync

import "errors"

// CanSyncFS says whether SyncFS works here: not on this system, where
// each placed file is synced (Settle).
const CanSyncFS = false

// SyncFS is syncfs(2) where the system has it.
func SyncFS(root string) error { return errors.New("no syncfs on this system") }
