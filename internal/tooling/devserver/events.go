package devserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
)

// SubscriberBuffer is how many updates wait for a slow subscriber; past
// it the subscriber is dropped (its stream ends, the page reconnects and
// reads the campaign again).
const SubscriberBuffer = 256

// Hub delivers progress to the server-sent-event streams subscribed to a
// channel (campaignapi.ProgressChannel): the local stand-in of AWS
// AppSync Events.
type Hub struct {
	mu     sync.Mutex
	subs   map[string]map[chan campaignapi.Progress]bool
	closed bool
}

var _ campaignapi.ProgressPublisher = (*Hub)(nil)

// NewHub returns a hub without subscribers.
func NewHub() *Hub { return &Hub{subs: map[string]map[chan campaignapi.Progress]bool{}} }

// Publish implements campaignapi.ProgressPublisher. It never blocks: a
// subscriber whose buffer is full is dropped.
func (h *Hub) Publish(_ context.Context, channel string, p campaignapi.Progress) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[channel] {
		select {
		case ch <- p:
		default:
			h.drop(channel, ch)
		}
	}
	return nil
}

// Close ends every stream and every later one at once (the server is
// shutting down: it waits for open requests).
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for channel, subs := range h.subs {
		for ch := range subs {
			h.drop(channel, ch)
		}
	}
}

// subscribe returns a new subscriber's channel (closed at once when the
// hub is).
func (h *Hub) subscribe(channel string) chan campaignapi.Progress {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := make(chan campaignapi.Progress, SubscriberBuffer)
	if h.closed {
		close(ch)
		return ch
	}
	if h.subs[channel] == nil {
		h.subs[channel] = map[chan campaignapi.Progress]bool{}
	}
	h.subs[channel][ch] = true
	return ch
}

func (h *Hub) unsubscribe(channel string, ch chan campaignapi.Progress) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drop(channel, ch)
}

// drop removes ch and closes it, if it is still subscribed; the caller
// holds mu.
func (h *Hub) drop(channel string, ch chan campaignapi.Progress) {
	if !h.subs[channel][ch] {
		return
	}
	delete(h.subs[channel], ch)
	if len(h.subs[channel]) == 0 {
		delete(h.subs, channel)
	}
	close(ch)
}

// DefaultEventsKeepAlive is how often an idle stream gets a comment line,
// so proxies and the browser keep it open.
const DefaultEventsKeepAlive = 15 * time.Second

// ServeEvents streams the progress of the caller's campaign id as
// text/event-stream: one `data: <Progress JSON>` event per update, a
// comment every keepAlive, until the client goes away or the hub closes.
// Another user's or a missing campaign is a 404, as on GET /campaigns/{id}.
func ServeEvents(w http.ResponseWriter, r *http.Request, hub *Hub, campaigns campaign.Campaigns, owner, id string, keepAlive time.Duration) {
	c, err := campaigns.Campaign(r.Context(), id)
	if errors.Is(err, campaign.ErrNotFound) || (err == nil && c.OwnerID != owner) {
		writeError(w, http.StatusNotFound, "not_found", "campaign not found")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal_error", "something went wrong on our side, try again")
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "internal_error", "streaming is not supported here")
		return
	}
	channel := campaignapi.ProgressChannel(owner, id)
	sub := hub.subscribe(channel)
	defer hub.unsubscribe(channel, sub)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The first comment tells the client the subscription is live: what
	// it reads from now on has not been missed.
	if _, err := fmt.Fprint(w, ": subscribed\n\n"); err != nil {
		return
	}
	flusher.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case p, open := <-sub:
			if !open {
				return // dropped as too slow: the client reconnects
			}
			b, _ := json.Marshal(p) // strings, ints and a map always encode
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
		flusher.Flush()
	}
}
