package engine

import (
	"context"
	stdsync "sync"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/store"
)

// Event is one server-sent event.
type Event struct {
	ID   int64
	Type string
	Data any
}

// Hub fans events out to every subscriber. A subscriber that falls too far
// behind is dropped (its channel closed) rather than blocking the agent; SSE
// clients reconnect.
type Hub struct {
	mu     stdsync.Mutex
	seq    int64
	subs   map[chan Event]struct{}
	closed bool
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{subs: map[chan Event]struct{}{}} }

// subscriberBuffer is how many events a slow client may lag behind.
const subscriberBuffer = 4096

// Subscribe returns a channel of events and a function that ends the
// subscription. The channel is closed when the hub closes or drops it.
func (h *Hub) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, subscriberBuffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(ch)
		return ch, func() {}
	}
	h.subs[ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[ch]; ok {
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// Publish sends an event to every subscriber.
func (h *Hub) Publish(typ string, data any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.seq++
	ev := Event{ID: h.seq, Type: typ, Data: data}
	for ch := range h.subs {
		select {
		case ch <- ev:
		default:
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// Close ends every subscription; later publishes are dropped.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	for ch := range h.subs {
		close(ch)
	}
	h.subs = nil
}

func (e *Engine) publishSession(ctx context.Context, id string) {
	var s *prsm.Session
	err := e.DB.ReadWarm(ctx, func(q store.Querier) (err error) {
		s, err = store.GetSession(ctx, q, id)
		return err
	})
	if err == nil {
		e.Events.Publish(api.EventSessionUpdated, s)
	}
}
