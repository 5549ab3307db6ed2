//go:build !unix

package worktree

import "errors"

// driverCacheable: on Windows git also reads ProgramData's config, which
// cachedDrivers does not name; filterDrivers asks git each time.
const driverCacheable = false

var errNotDir = errors.New("not a directory")

func canEnter(string) bool { return false }

const openNoWait = 0
