package server

import (
	stdsync "sync"
	"time"

	"github.com/labstack/echo/v4"
)

// Activity is what a server tells about its clients, for a server that
// stops when nobody uses it (prsm serve's idle exit): how many requests
// are in flight (an event stream counts for as long as it is open, so a
// VS Code window keeps its server) and when the last one ended.
type Activity struct {
	mu       stdsync.Mutex
	inFlight int
	last     time.Time
}

// NewActivity starts an Activity, idle from now.
func NewActivity() *Activity { return &Activity{last: time.Now()} }

// middleware counts each request from its start to its end.
func (a *Activity) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		a.mu.Lock()
		a.inFlight++
		a.mu.Unlock()
		defer func() {
			a.mu.Lock()
			a.inFlight--
			a.last = time.Now()
			a.mu.Unlock()
		}()
		return next(c)
	}
}

// Idle is how long no request has been in flight: zero while one is.
func (a *Activity) Idle() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inFlight > 0 {
		return 0
	}
	return time.Since(a.last)
}
