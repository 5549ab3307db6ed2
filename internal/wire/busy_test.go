package wire

import (
	"testing"
	"time"
)

// TestBusyWait: the waits between the tries of a request a busy store
// answered, and when the client gives up.
func TestBusyWait(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		retryAfter time.Duration
		n          int
		start      time.Time
		deadline   time.Time
		wait       time.Duration // 0: give up
	}{
		{time.Second, 0, now, time.Time{}, time.Second},
		{0, 0, now, time.Time{}, firstBusyWait},
		{0, 3, now, time.Time{}, 8 * firstBusyWait},
		{time.Second, 2, now, time.Time{}, 4 * time.Second},
		{time.Second, 3, now, time.Time{}, maxBusyWait},
		{10 * time.Second, 0, now, time.Time{}, maxBusyWait},
		{time.Second, 0, now.Add(-busyBudget + time.Second), time.Time{}, time.Second},
		{time.Second, 0, now.Add(-busyBudget + time.Second/2), time.Time{}, 0},
		// The hook's deadline: no wait that would end at or past it.
		{time.Second, 0, now, now.Add(time.Second), 0},
		{time.Second, 0, now, now.Add(1100 * time.Millisecond), time.Second},
		{time.Second, 1, now, now.Add(1500 * time.Millisecond), 0},
	} {
		wait, ok := busyWait(c.retryAfter, c.n, c.start, now, c.deadline)
		if wait != c.wait || ok != (c.wait != 0) {
			t.Errorf("busyWait(%v, %d, start %v ago, deadline %v) = %v, %v; want %v",
				c.retryAfter, c.n, now.Sub(c.start), c.deadline.Sub(now), wait, ok, c.wait)
		}
	}
}
