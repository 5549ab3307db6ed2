//go:build windows

package testenv

import (
	"time"

	"golang.org/x/sys/windows"
)

// cpuTime is the process's CPU time, user and kernel.
func cpuTime() (time.Duration, error) {
	var c, e, k, u windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &c, &e, &k, &u); err != nil {
		return 0, err
	}
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(k) + ticks(u)) * 100), nil
}
