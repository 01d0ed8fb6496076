// Package work schedules an engine's background work: the indexer's
// secondary steps, the palace's checkpoints and merges, the embedding of
// turns and the layer jobs each run as tasks of one Scheduler, on fewer
// workers than the process has cores, so that a client's request always
// finds one (Go's scheduler looks for network events only when a core has
// nothing else to run, or at its next periodic poll).
//
// A task has a Class, its priority: a free worker goes to the first task
// waiting in the highest class. The classes below Embed run at once; from
// Embed down, a task waits for the client writes in flight (Write) to end,
// for at most the scheduler's MaxWait, so that a burst of writes meets
// idle cores and a steady stream of them still lets the work go on.
//
// A task asks for its worker and whatever excludes it in one wait, and holds
// nothing while it waits: no task can hold a worker while it waits for
// something that waits for a worker. That is why every rule of the form
// "take the step inside the guard, never the other way round" is gone.
//
// Exclusive runs what must see no write of what was read before it (a
// redaction rewriting turns' text): it waits for the guarded tasks running
// (DoSince) and holds off new ones; a guarded task whose read began before
// an exclusive section ended does not run, and its caller reads again.
//
// Serial runs one run of a job at a time (a vault sync, the scenes, the
// layers' vectors), whoever starts it, in place of a mutex per feature:
// the wait ends with its context, and Stats shows who waits.
package work

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// Class is a task's priority: lower runs first.
type Class uint8

// The classes, highest priority first.
const (
	// Index is the indexer's secondary steps (session units, substring
	// rows): what deep recall and an acknowledged turn's recall wait for.
	Index Class = iota
	// Upkeep is the palace's own: WAL checkpoints and full-text merges.
	Upkeep
	// Embed is the embedding and storing of archived turns' vectors.
	Embed
	// Derive is the layer jobs: extraction, scenes, persona, graph and
	// the layers' vectors.
	Derive
	numClasses
)

var classNames = [numClasses]string{"index", "upkeep", "embed", "derive"}

func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// yields reports whether a task of c gives way to the client writes in
// flight: the index and the palace's upkeep are what those writes and the
// recalls after them wait for.
func (c Class) yields() bool { return c >= Embed }

// Defaults of a Scheduler.
const (
	// DefaultQuiet is how long no client write must have been in flight
	// before a yielding task starts: longer than the pause between the
	// writes of a client sending one after another, so that a burst of
	// writes is one wait, not a wait per write.
	DefaultQuiet = 5 * time.Millisecond
	// DefaultMaxWait bounds how long a yielding task waits for the writes:
	// under a steady stream of them the work still goes on.
	DefaultMaxWait = 200 * time.Millisecond
)

// Scheduler runs tasks on a bounded number of workers. A nil *Scheduler
// runs every task at once, waits for nothing and excludes nothing. Set
// Quiet and MaxWait before first use; zero means their defaults.
type Scheduler struct {
	Quiet   time.Duration
	MaxWait time.Duration

	workers int

	mu       sync.Mutex
	running  int           // tasks holding a worker
	waiting  []*waiter     // in arrival order
	changed  chan struct{} // closed and replaced when a waiter may now start
	writes   int           // client writes in flight
	lastEnd  time.Time     // when the last one ended
	began    chan struct{} // closed when a write begins; nil until Writing needs it
	guarded  int           // guarded tasks running (DoSince)
	excl     bool          // an exclusive section holds
	exclDone chan struct{} // closed when it ends; nil when none
	epoch    uint64        // exclusive sections ended
	serial   map[string]*serialRun
}

// serialRun is the run of a Serial name in progress.
type serialRun struct {
	done    chan struct{} // closed when it ends
	waiting int           // callers waiting for it to end
}

// waiter is a task waiting for a worker.
type waiter struct {
	class   Class
	since   time.Time
	guarded bool
}

// New returns a scheduler with workers workers; 0 means one fewer than
// GOMAXPROCS, at least one.
func New(workers int) *Scheduler {
	if workers <= 0 {
		workers = max(runtime.GOMAXPROCS(0)-1, 1)
	}
	return &Scheduler{workers: workers, changed: make(chan struct{})}
}

// Workers returns how many tasks run at once.
func (s *Scheduler) Workers() int {
	if s == nil {
		return 0
	}
	return s.workers
}

// broadcast wakes every waiter to look again. Call with mu held.
func (s *Scheduler) broadcast() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Write marks a client write in flight until end is called (once; later
// calls do nothing).
func (s *Scheduler) Write() (end func()) {
	if s == nil {
		return func() {}
	}
	s.mu.Lock()
	s.writes++
	if s.began != nil {
		close(s.began)
		s.began = nil
	}
	s.mu.Unlock()
	return sync.OnceFunc(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.writes--
		s.lastEnd = time.Now()
		s.broadcast()
	})
}

// Writing reports whether a client write is in flight, and returns a
// channel closed when the next one begins: a recall waits for no other
// client's write (nil Scheduler: never busy, and a nil channel).
func (s *Scheduler) Writing() (busy bool, began <-chan struct{}) {
	if s == nil {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.began == nil {
		s.began = make(chan struct{})
	}
	return s.writes > 0, s.began
}

// Begin waits for a worker for a task of class c and returns the function
// that ends the task (once; later calls do nothing). A worker free at once
// is taken even when ctx has ended. Use Do where the task is a function.
func (s *Scheduler) Begin(ctx context.Context, c Class) (done func(), err error) {
	if s == nil {
		return func() {}, ctx.Err()
	}
	_, done, err = s.begin(ctx, &waiter{class: c}, 0)
	return done, err
}

// Do runs fn as a task of class c, or returns ctx's error if ctx ends
// before a worker is free.
func (s *Scheduler) Do(ctx context.Context, c Class, fn func() error) error {
	done, err := s.Begin(ctx, c)
	if err != nil {
		return err
	}
	defer done()
	return fn()
}

// Epoch returns the mark of a read that begins now, for DoSince: the
// number of exclusive sections ended.
func (s *Scheduler) Epoch() uint64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epoch
}

// DoSince runs fn, the write of what was read since mark (Epoch), as a
// guarded task of class c: it waits while an exclusive section holds, and
// does not run fn (ran false, no error) once one has ended since mark: the
// caller reads again.
func (s *Scheduler) DoSince(ctx context.Context, c Class, mark uint64, fn func() error) (ran bool, err error) {
	if s == nil {
		return true, fn()
	}
	ok, done, err := s.begin(ctx, &waiter{class: c, guarded: true}, mark)
	if err != nil || !ok {
		return false, err
	}
	defer done()
	return true, fn()
}

// Guarded runs fn as a guarded task of class c that reads what it writes
// itself: it never runs beside an exclusive section, and needs no mark.
func (s *Scheduler) Guarded(ctx context.Context, c Class, fn func() error) error {
	for {
		ran, err := s.DoSince(ctx, c, s.Epoch(), fn)
		if ran || err != nil {
			return err
		}
	}
}

// Exclusive runs fn with no guarded task running: it waits for one
// exclusive section before it, then for the guarded tasks running, and
// holds off new ones until fn returns. fn holds no worker, so it may wait
// for tasks of any class. After it, every guarded task of a read marked
// before is refused.
func (s *Scheduler) Exclusive(ctx context.Context, fn func() error) error {
	if s == nil {
		return fn()
	}
	s.mu.Lock()
	for s.excl {
		ch := s.exclDone
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.mu.Lock()
	}
	s.excl, s.exclDone = true, make(chan struct{})
	end := func() {
		s.epoch++
		s.excl = false
		close(s.exclDone)
		s.exclDone = nil
		s.broadcast()
	}
	for s.guarded > 0 {
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			s.mu.Lock()
			end()
			s.mu.Unlock()
			return ctx.Err()
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		end()
		s.mu.Unlock()
	}()
	return fn()
}

// Serial runs fn with no other Serial of the same name running: one run
// of a job at a time (a vault sync, the layers' vectors, the scenes), whoever
// starts it (the scheduled job, serve's follower, a hook, a command). It
// holds no worker while it waits or runs (fn's own steps are tasks), and
// the wait ends with ctx. Callers waiting for a name start in no set
// order.
func (s *Scheduler) Serial(ctx context.Context, name string, fn func() error) error {
	if s == nil {
		return fn()
	}
	s.mu.Lock()
	for {
		run := s.serial[name]
		if run == nil {
			break
		}
		run.waiting++
		s.mu.Unlock()
		var err error
		select {
		case <-run.done:
		case <-ctx.Done():
			err = ctx.Err()
		}
		s.mu.Lock()
		run.waiting--
		if err != nil {
			s.mu.Unlock()
			return err
		}
	}
	if s.serial == nil {
		s.serial = map[string]*serialRun{}
	}
	run := &serialRun{done: make(chan struct{})}
	s.serial[name] = run
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.serial, name)
		close(run.done)
		s.mu.Unlock()
	}()
	return fn()
}

// begin waits until w may start and starts it. A guarded waiter is
// refused (ok false) once an exclusive section ended since mark.
func (s *Scheduler) begin(ctx context.Context, w *waiter, mark uint64) (ok bool, done func(), err error) {
	s.mu.Lock()
	w.since = time.Now()
	s.waiting = append(s.waiting, w)
	defer s.mu.Unlock()
	for {
		if w.guarded && s.epoch != mark {
			s.remove(w)
			return false, nil, nil
		}
		now := time.Now()
		recheck, first := s.first(now)
		if first == w {
			s.remove(w)
			s.start(w)
			return true, sync.OnceFunc(func() { s.end(w) }), nil
		}
		if err := ctx.Err(); err != nil {
			s.remove(w)
			return false, nil, err
		}
		ch := s.changed
		var timer *time.Timer
		var tick <-chan time.Time
		if recheck > 0 {
			timer = time.NewTimer(recheck)
			tick = timer.C
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-tick:
		case <-ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
		s.mu.Lock()
	}
}

// first returns the waiter that starts next, nil if none may start now,
// and when to look again if a yielding waiter may start later by the
// clock alone (0: only when something changes). Call with mu held.
func (s *Scheduler) first(now time.Time) (recheck time.Duration, next *waiter) {
	if s.running >= s.workers {
		return 0, nil
	}
	quiet, maxWait := s.quiet(), s.maxWait()
	calm := quiet - now.Sub(s.lastEnd) // > 0: writes ended too recently
	for c := range numClasses {
		for _, w := range s.waiting {
			if w.class != c || w.guarded && s.excl {
				continue
			}
			if c.yields() && (s.writes > 0 || calm > 0) {
				left := maxWait - now.Sub(w.since)
				if left > 0 {
					if s.writes == 0 {
						left = min(left, calm)
					}
					if recheck == 0 || left < recheck {
						recheck = left
					}
					continue
				}
			}
			return 0, w
		}
	}
	return recheck, nil
}

// start gives w a worker. Call with mu held.
func (s *Scheduler) start(w *waiter) {
	s.running++
	if w.guarded {
		s.guarded++
	}
	s.broadcast() // the next in line may now be first among those left
}

// end frees w's worker.
func (s *Scheduler) end(w *waiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if w.guarded {
		s.guarded--
	}
	s.broadcast()
}

// remove takes w out of the waiting list. Call with mu held.
func (s *Scheduler) remove(w *waiter) {
	for i, x := range s.waiting {
		if x == w {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			s.broadcast()
			return
		}
	}
}

func (s *Scheduler) quiet() time.Duration {
	if s.Quiet <= 0 {
		return DefaultQuiet
	}
	return s.Quiet
}

func (s *Scheduler) maxWait() time.Duration {
	if s.MaxWait <= 0 {
		return DefaultMaxWait
	}
	return s.MaxWait
}

// Pace is the tasks of one class as a pacer of work done a piece at a
// time elsewhere (extract.Pacer): each Step is a task.
type Pace struct {
	S     *Scheduler
	Class Class
}

// Step begins a task of p's class (Scheduler.Begin).
func (p Pace) Step(ctx context.Context) (done func(), err error) { return p.S.Begin(ctx, p.Class) }

// Stats is what a Scheduler is doing: what a test waits for.
type Stats struct {
	Workers int            `json:"workers"`
	Running int            `json:"running"`
	Waiting map[string]int `json:"waiting,omitempty"`
	// Serial holds the names of the Serial runs in progress, each with
	// the callers waiting for it to end.
	Serial map[string]int `json:"serial,omitempty"`
}

// Stats returns the tasks running and waiting, by class.
func (s *Scheduler) Stats() Stats {
	if s == nil {
		return Stats{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Workers: s.workers, Running: s.running}
	for _, w := range s.waiting {
		if st.Waiting == nil {
			st.Waiting = map[string]int{}
		}
		st.Waiting[w.class.String()]++
	}
	for name, run := range s.serial {
		if st.Serial == nil {
			st.Serial = map[string]int{}
		}
		st.Serial[name] = run.waiting
	}
	return st
}
