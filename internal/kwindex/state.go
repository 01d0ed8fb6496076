package kwindex

import "sync/atomic"

// A cache's states, as State reports them.
const (
	Loading = "loading" // warm, its first load not done: searches go to FTS5
	Ready   = "ready"   // loaded
	Failed  = "failed"  // its load failed: searches stay with FTS5
)

// loadState is what a cache's State reports, kept apart from its mutex,
// which a load holds for long stretches: a health check must not wait on
// the load it reports.
type loadState struct{ v atomic.Int32 }

const (
	stateOff int32 = iota
	stateLoading
	stateReady
	stateFailed
)

// warm marks the cache warm: loading unless ready already.
func (s *loadState) warm(ready bool) {
	if ready {
		s.v.Store(stateReady)
	} else {
		s.v.CompareAndSwap(stateOff, stateLoading)
	}
}

// text is the state as State reports it, "" when not warm.
func (s *loadState) text() string {
	switch s.v.Load() {
	case stateLoading:
		return Loading
	case stateReady:
		return Ready
	case stateFailed:
		return Failed
	}
	return ""
}
