package httpapi_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/httpapi"
)

// progressStub answers the reindex and re-embed status routes with states,
// one a call, the last one for ever after.
type progressStub struct {
	mu     sync.Mutex
	states []string
	calls  int
}

func (p *progressStub) next() (string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	return p.states[min(p.calls, len(p.states))-1], p.calls
}

func (p *progressStub) StartReindex(context.Context, engram.ReindexRequest) (engram.ReindexStatus, error) {
	return engram.ReindexStatus{State: engram.ReindexRunning}, nil
}

func (p *progressStub) ReindexStatus(context.Context) (engram.ReindexStatus, error) {
	state, n := p.next()
	return engram.ReindexStatus{Model: "m", State: state, Done: int64(n), Error: "disk on fire"}, nil
}

func (p *progressStub) Health(context.Context) engram.Health {
	state, n := p.next()
	if state == "" {
		return engram.Health{Status: "ok"} // no re-embed
	}
	return engram.Health{Status: "ok", Vectors: &engram.VectorHealth{Reembed: &engram.ReembedStatus{Model: "m", State: state, Done: int64(n)}}}
}

func (p *progressStub) Stats(context.Context) (engram.Stats, error) { return engram.Stats{}, nil }

// TestClientWait: the waits poll until the work is done or failed, telling
// progress each status; a server with no re-embed is an error; ctx ends a
// wait.
func TestClientWait(t *testing.T) {
	ctx := context.Background()
	serve := func(states ...string) (*httpapi.Client, *progressStub) {
		stub := &progressStub{states: states}
		return httpapi.NewClient(mustServe(t, httpapi.Config{}, func(s *httpapi.Server) { s.Reindex, s.Status = stub, stub }), ""), stub
	}
	for _, end := range []string{engram.ReindexDone, engram.ReindexFailed} {
		c, _ := serve(engram.ReindexRunning, engram.ReindexRunning, end)
		var seen []int64
		st, err := c.WaitReindex(ctx, time.Millisecond, func(st engram.ReindexStatus) { seen = append(seen, st.Done) })
		if err != nil || st.State != end || len(seen) != 3 || seen[2] != 3 {
			t.Errorf("reindex ending %s: %+v, %v, progress %v", end, st, err, seen)
		}
		c, _ = serve(engram.ReembedRunning, end)
		seen = nil
		rs, err := c.WaitReembed(ctx, time.Millisecond, func(st engram.ReembedStatus) { seen = append(seen, st.Done) })
		if err != nil || rs.State != end || len(seen) != 2 {
			t.Errorf("re-embed ending %s: %+v, %v, progress %v", end, rs, err, seen)
		}
	}
	c, _ := serve("")
	if _, err := c.WaitReembed(ctx, time.Millisecond, func(engram.ReembedStatus) {}); err == nil || !strings.Contains(err.Error(), "no re-embed") {
		t.Errorf("no re-embed: %v", err)
	}

	c, _ = serve(engram.ReindexRunning)
	cctx, cancel := context.WithCancel(ctx)
	polls := 0
	st, err := c.WaitReindex(cctx, time.Millisecond, func(engram.ReindexStatus) {
		if polls++; polls == 2 {
			cancel()
		}
	})
	if err != context.Canceled || st.State != "" {
		t.Errorf("canceled: %+v, %v", st, err)
	}
}
