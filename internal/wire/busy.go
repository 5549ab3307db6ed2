package wire

import (
	"context"
	"errors"
	"time"
)

// How a client sends a request again after a busy store's answer: it
// waits what the answer's Retry-After says (firstBusyWait without one),
// twice as long after each further busy answer, maxBusyWait at most, and
// gives up, returning the busy answer, when another wait would end past
// busyBudget after the first request or past the context's deadline (the
// hook's is a few seconds). The server answers busy only after its own
// wait for the lock, five seconds of sqlite's busy_timeout.
const (
	firstBusyWait = 250 * time.Millisecond
	maxBusyWait   = 4 * time.Second
	busyBudget    = 30 * time.Second
)

// RetryBusy runs send, and again while it returns a busy store's answer
// (an *Error whose Busy is true) and the time allows (busyWait).
func RetryBusy(ctx context.Context, send func() error) error {
	start := time.Now()
	for n := 0; ; n++ {
		err := send()
		var e *Error
		if !errors.As(err, &e) || !e.Busy() {
			return err
		}
		deadline, _ := ctx.Deadline()
		wait, ok := busyWait(e.RetryAfter, n, start, time.Now(), deadline)
		if !ok {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// busyWait is the wait before the request is sent again after its n-th
// busy answer (from 0), which said retryAfter, when the first was sent at
// start and it is now now; false when the client gives up instead: the
// wait would end past busyBudget after start or at or past deadline (zero
// for none).
func busyWait(retryAfter time.Duration, n int, start, now, deadline time.Time) (time.Duration, bool) {
	wait := retryAfter
	if wait <= 0 {
		wait = firstBusyWait
	}
	for i := 0; i < n && wait < maxBusyWait; i++ {
		wait *= 2
	}
	wait = min(wait, maxBusyWait)
	end := now.Add(wait)
	if end.Sub(start) > busyBudget || (!deadline.IsZero() && !end.Before(deadline)) {
		return 0, false
	}
	return wait, true
}
