package engine

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// memReleaser gives the memory a catch-up of the layer jobs leaves behind
// back to the system. The garbage collector lets the heap grow to its goal
// (GOGC) and the runtime keeps what it freed for later, returning it only
// slowly: after the jobs caught up on 100,000 turns the process held 2.4
// times its live heap (docs/benchmarks.md). When the last running layer job
// ends and at least releaseMin bytes of heap are garbage or free, the heap
// is collected and its free pages returned (debug.FreeOSMemory): an idle
// server holds about its live heap. A job that allocates little (the scene
// follower's runs under serve, a second apart) leaves too little to
// release, so a release costs at most one collection per releaseMin bytes
// the jobs allocate, which the collector would have run anyway.
type memReleaser struct {
	running atomic.Int32
	mu      sync.Mutex
	// Tests set these; nil: reclaimableHeap and debug.FreeOSMemory.
	reclaimable func() uint64
	release     func()
}

// releaseMin is the least heap worth a collection to give back.
const releaseMin = 64 << 20

// begin marks a layer job running; the function it returns marks it done
// and releases memory when it was the last one and enough can go.
func (r *memReleaser) begin() func() {
	r.running.Add(1)
	return func() {
		if r.running.Add(-1) != 0 {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		reclaimable, release := r.reclaimable, r.release
		if reclaimable == nil {
			reclaimable, release = reclaimableHeap, debug.FreeOSMemory
		}
		if reclaimable() >= releaseMin {
			release()
		}
	}
}

// reclaimableHeap estimates the bytes a collection and a scavenge would
// return: the heap's objects beyond those live at the last collection, and
// its free pages the runtime has not returned yet.
func reclaimableHeap() uint64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
	metrics.Read(s)
	var v [4]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = s[i].Value.Uint64()
		}
	}
	garbage := uint64(0)
	if v[0] > v[1] {
		garbage = v[0] - v[1]
	}
	return garbage + v[2] + v[3]
}
