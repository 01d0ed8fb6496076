package work

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-dev/engram/internal/testutil"
)

// waiting reports how many tasks of class c wait for a worker.
func waiting(s *Scheduler, c Class) int { return s.Stats().Waiting[c.String()] }

// TestNil: a nil Scheduler runs every task at once and excludes nothing.
func TestNil(t *testing.T) {
	var s *Scheduler
	ctx := t.Context()
	s.Write()()
	if busy, began := s.Writing(); busy || began != nil {
		t.Fatalf("nil: busy %v, channel %v", busy, began)
	}
	ran := 0
	for range 3 {
		if err := s.Do(ctx, Derive, func() error { ran++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	err := s.Exclusive(ctx, func() error {
		ok, err := s.DoSince(ctx, Embed, s.Epoch(), func() error { ran++; return nil })
		if !ok {
			return errors.New("a nil scheduler refused a guarded task")
		}
		return err
	})
	if err != nil || ran != 4 {
		t.Fatalf("nil scheduler: %v, %d ran", err, ran)
	}
}

// TestWorkers: no more than the workers run at once; with every one busy a
// task whose context ended fails rather than start, and one that waits
// starts once a worker is free; a free worker is taken even with an ended
// context.
func TestWorkers(t *testing.T) {
	ctx := t.Context()
	ended, cancel := context.WithCancel(ctx)
	cancel()
	s := New(2)
	first, err := s.Begin(ended, Index)
	if err != nil {
		t.Fatalf("a free worker with an ended context: %v", err)
	}
	err = s.Do(ctx, Index, func() error {
		if err := s.Do(ended, Index, func() error { return errors.New("a third task ran beside two") }); !errors.Is(err, context.Canceled) {
			t.Errorf("a third task with an ended context = %v, want context.Canceled", err)
		}
		started := make(chan func(), 1)
		go func() {
			done, err := s.Begin(ctx, Index)
			if err != nil {
				t.Error(err)
			}
			started <- done
		}()
		testutil.WaitUntil(t, "the third task to wait", func() bool { return waiting(s, Index) == 1 })
		first()
		first() // a second call does nothing
		(<-started)()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Running != 0 || len(st.Waiting) != 0 {
		t.Fatalf("after every task ended: %+v", st)
	}
}

// TestDefaultWorkers: New(0) leaves one of GOMAXPROCS free, and allows one
// task on a single core.
func TestDefaultWorkers(t *testing.T) {
	if got, want := New(0).Workers(), max(runtime.GOMAXPROCS(0)-1, 1); got != want {
		t.Fatalf("%d workers, want %d", got, want)
	}
}

// TestPriority: a free worker goes to the highest class waiting, whatever
// the order they came in; within a class, to the first come.
func TestPriority(t *testing.T) {
	ctx := t.Context()
	s := New(1)
	hold, err := s.Begin(ctx, Derive)
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 4)
	run := func(c Class, name string) {
		go func() {
			if err := s.Do(ctx, c, func() error { order <- name; return nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	run(Derive, "derive 1")
	testutil.WaitUntil(t, "derive 1 to wait", func() bool { return waiting(s, Derive) == 1 })
	run(Derive, "derive 2")
	testutil.WaitUntil(t, "derive 2 to wait", func() bool { return waiting(s, Derive) == 2 })
	run(Embed, "embed")
	run(Index, "index")
	testutil.WaitUntil(t, "embed and index to wait", func() bool { return waiting(s, Embed) == 1 && waiting(s, Index) == 1 })
	hold()
	for _, want := range []string{"index", "embed", "derive 1", "derive 2"} {
		if got := <-order; got != want {
			t.Fatalf("ran %q, want %q", got, want)
		}
	}
}

// TestYieldsToWrites: while a client write is in flight a task from Embed
// down waits (for MaxWait at most) and the index's does not; the waiting
// one starts once the write ended and Quiet passed.
func TestYieldsToWrites(t *testing.T) {
	ctx := t.Context()
	s := New(1)
	s.Quiet, s.MaxWait = time.Nanosecond, time.Hour
	end := s.Write()
	if busy, _ := s.Writing(); !busy {
		t.Fatal("not busy during a write")
	}
	var derived atomic.Bool
	done := make(chan error, 1)
	go func() { done <- s.Do(ctx, Derive, func() error { derived.Store(true); return nil }) }()
	testutil.WaitUntil(t, "the derive task to wait", func() bool { return waiting(s, Derive) == 1 })
	if err := s.Do(ctx, Index, func() error { return nil }); err != nil {
		t.Fatalf("an index task during a write: %v", err)
	}
	if derived.Load() {
		t.Fatal("a derive task ran during a write")
	}
	end()
	end() // a second call does nothing
	if err := <-done; err != nil || !derived.Load() {
		t.Fatalf("the derive task after the write: %v, ran %v", err, derived.Load())
	}
	if busy, _ := s.Writing(); busy {
		t.Fatal("busy after the write ended")
	}
}

// TestYieldBounded: a write that stays in flight holds a yielding task for
// MaxWait at most, so background work goes on under a steady stream of
// writes; a cancelled context ends the wait with its error.
func TestYieldBounded(t *testing.T) {
	s := New(1)
	s.MaxWait = time.Millisecond
	end := s.Write()
	defer end()
	if err := s.Do(t.Context(), Embed, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	s.MaxWait = time.Hour
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Do(ctx, Embed, func() error { return errors.New("ran during the write") }) }()
	testutil.WaitUntil(t, "the task to wait", func() bool { return waiting(s, Embed) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Do after cancel = %v, want context.Canceled", err)
	}
}

// TestWritingChannel: Writing's channel is closed when the next write
// begins, which is what ends a recall's wait.
func TestWritingChannel(t *testing.T) {
	s := New(1)
	busy, began := s.Writing()
	if busy {
		t.Fatal("busy with no write")
	}
	select {
	case <-began:
		t.Fatal("began closed with no write")
	default:
	}
	end := s.Write()
	<-began // closed by Write
	end()
}

// TestExclusive: a guarded task of a read marked before an exclusive
// section ended is refused, one marked after runs; one that waits on a
// running section gives up when its context ends, as does a second
// section.
func TestExclusive(t *testing.T) {
	ctx := t.Context()
	s := New(1)
	writes := 0
	put := func() error { writes++; return nil }
	before := s.Epoch()
	if ok, err := s.DoSince(ctx, Embed, before, put); !ok || err != nil || writes != 1 {
		t.Fatalf("no exclusive section: %v %v, %d writes", ok, err, writes)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	var during uint64
	err := s.Exclusive(ctx, func() error {
		during = s.Epoch()
		if ok, err := s.DoSince(cancelled, Embed, during, put); ok || !errors.Is(err, context.Canceled) || writes != 1 {
			t.Errorf("during a section, context ended: %v %v, %d writes", ok, err, writes)
		}
		if err := s.Exclusive(cancelled, func() error { return errors.New("two sections at once") }); !errors.Is(err, context.Canceled) {
			t.Errorf("a second section, context ended: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, mark := range []uint64{before, during} {
		if ok, err := s.DoSince(ctx, Embed, mark, put); ok || err != nil || writes != 1 {
			t.Fatalf("read before the section ended: %v %v, %d writes", ok, err, writes)
		}
	}
	if ok, err := s.DoSince(ctx, Embed, s.Epoch(), put); !ok || err != nil || writes != 2 {
		t.Fatalf("read after the section: %v %v, %d writes", ok, err, writes)
	}
}

// TestExclusiveWaitsForGuarded: a section begins only once the guarded
// task running ended; unguarded tasks run beside it.
func TestExclusiveWaitsForGuarded(t *testing.T) {
	ctx := t.Context()
	s := New(2)
	release := make(chan struct{})
	var wrote atomic.Bool
	guarded := make(chan error, 1)
	go func() {
		_, err := s.DoSince(ctx, Embed, s.Epoch(), func() error { <-release; wrote.Store(true); return nil })
		guarded <- err
	}()
	testutil.WaitUntil(t, "the guarded task to run", func() bool { return s.Stats().Running == 1 })
	sawWrite := make(chan bool, 1)
	go func() {
		err := s.Exclusive(ctx, func() error { sawWrite <- wrote.Load(); return nil })
		if err != nil {
			t.Error(err)
		}
	}()
	if err := s.Do(ctx, Index, func() error { return nil }); err != nil {
		t.Fatalf("an unguarded task beside a waiting section: %v", err)
	}
	close(release)
	if !<-sawWrite {
		t.Fatal("the section ran while a guarded task was running")
	}
	if err := <-guarded; err != nil {
		t.Fatal(err)
	}
}

// TestGuardedWaitHoldsNoWorker: a guarded task waiting for a section holds
// no worker, so the section can wait for tasks that need one (a redaction
// waits for the indexer's steps). With one worker, holding it while
// waiting would wait for ever; once the section ends the task is refused.
func TestGuardedWaitHoldsNoWorker(t *testing.T) {
	ctx := t.Context()
	s := New(1)
	mark := s.Epoch()
	refused := make(chan bool, 1)
	err := s.Exclusive(ctx, func() error {
		go func() {
			ok, err := s.DoSince(ctx, Embed, mark, func() error { return errors.New("a guarded write ran during the section") })
			if err != nil {
				t.Error(err)
			}
			refused <- !ok
		}()
		testutil.WaitUntil(t, "the guarded task to wait", func() bool { return waiting(s, Embed) == 1 })
		return s.Do(ctx, Index, func() error { return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	if !<-refused {
		t.Fatal("a guarded task of a read before the section ran after it")
	}
}

// TestSerial: a second run of a name waits for the first to end and then
// runs, a run of another name runs beside them, a waiting run whose
// context ends gives up with its error, and a Serial holds no worker.
func TestSerial(t *testing.T) {
	ctx := t.Context()
	s := New(1)
	release := make(chan struct{})
	inFirst := make(chan struct{})
	var running atomic.Int32
	first := make(chan error, 1)
	go func() {
		first <- s.Serial(ctx, "vaults", func() error {
			running.Add(1)
			close(inFirst)
			<-release
			running.Add(-1)
			return nil
		})
	}()
	<-inFirst
	second := make(chan error, 1)
	go func() {
		second <- s.Serial(ctx, "vaults", func() error {
			if running.Load() != 0 {
				return errors.New("two runs of one name at once")
			}
			return nil
		})
	}()
	testutil.WaitUntil(t, "the second run to wait", func() bool { return s.Stats().Serial["vaults"] == 1 })
	// Another name, and a task, run meanwhile: the first run holds no worker.
	if err := s.Serial(ctx, "scenes", func() error { return s.Do(ctx, Derive, func() error { return nil }) }); err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		gaveUp <- s.Serial(ended, "vaults", func() error { return errors.New("ran after its context ended") })
	}()
	testutil.WaitUntil(t, "the third run to wait", func() bool { return s.Stats().Serial["vaults"] == 2 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiting run whose context ended: %v, want context.Canceled", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); len(st.Serial) != 0 || st.Running != 0 {
		t.Fatalf("after every run ended: %+v", st)
	}
	var nilS *Scheduler
	if err := nilS.Serial(ctx, "x", func() error { return nil }); err != nil {
		t.Fatal(err)
	}
}
