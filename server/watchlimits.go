package server

import (
	"runtime"
	"sort"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/tracker"
)

// watchBackend names what fsnotify watches with here.
func watchBackend() string {
	switch runtime.GOOS {
	case "linux":
		return "inotify"
	case "windows":
		return "ReadDirectoryChangesW"
	case "darwin", "freebsd", "openbsd", "netbsd", "dragonfly":
		return "kqueue"
	}
	return "fsnotify"
}

// watchLimits groups the sessions' limits by reason and fix, in a
// stable order (the reason's).
func watchLimits(by map[string]tracker.Limit) []api.WatchLimit {
	idx := map[tracker.Limit]int{}
	var out []api.WatchLimit
	for id, l := range by {
		i, ok := idx[l]
		if !ok {
			i = len(out)
			idx[l] = i
			out = append(out, api.WatchLimit{Reason: l.Reason, Fix: l.Fix})
		}
		out[i].Sessions = append(out[i].Sessions, id)
	}
	for i := range out {
		sort.Strings(out[i].Sessions)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Reason < out[j].Reason })
	return out
}
