package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime/trace"
	"sync/atomic"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/work"
)

// DefaultIngestWait bounds how long Ingest waits for the index after the
// archive has acknowledged a write.
const DefaultIngestWait = 2 * time.Second

// Ingester archives turns and waits briefly for the index. It implements
// engram.IngestService for the HTTP API and the CLI.
type Ingester struct {
	Archive engram.Archive
	Indexer *Indexer // nil: do not wait for the index
	// Wait bounds how long Ingest waits for the index after the archive
	// acknowledged the write.
	Wait time.Duration
	// Known, if set, returns the seq of each of ids the index already
	// holds. A turn sent with such an id is a duplicate even when the
	// archive does not know its id (its line there was damaged, so the
	// archive skipped it): it is answered as one and not archived again.
	Known func(ctx context.Context, ids []string) (map[string]int64, error)
	// Filter, if set, returns the turns as they are archived (the ingest
	// filter of redact_secrets); it must keep their number and order.
	Filter func([]engram.Turn) []engram.Turn
	// Work, if set, marks each Ingest a client write in flight, so that
	// the background work it schedules gives way (work.Scheduler.Write).
	Work *work.Scheduler

	acked atomic.Int64 // the newest seq acknowledged
}

var _ engram.IngestService = (*Ingester)(nil)

// Ingest archives turns durably and then waits up to Wait for the indexer,
// so that the turns are searchable when Ingest returns (unless ctx asks it
// not to: engram.IngestNoIndexWait). An error means
// nothing was acknowledged; a slow or failing index only adds a warning,
// because the turns are already safe in the archive. Under an execution
// trace the two waits are the regions "ingest.archive" and "ingest.index".
func (g *Ingester) Ingest(ctx context.Context, turns []engram.Turn) (engram.IngestResult, error) {
	defer g.Work.Write()()
	a, ix, wait := g.Archive, g.Indexer, g.Wait
	if g.Filter != nil {
		turns = g.Filter(turns)
	}
	if wait <= 0 {
		wait = DefaultIngestWait
	}
	known := g.known(ctx, turns)
	send := turns
	if len(known) > 0 {
		send = make([]engram.Turn, 0, len(turns))
		for _, t := range turns {
			if _, ok := known[t.ID]; !ok || t.ID == "" {
				send = append(send, t)
			}
		}
	}
	var appended []engram.Appended
	if len(send) > 0 {
		var err error
		r := trace.StartRegion(ctx, "ingest.archive")
		appended, err = a.Append(ctx, send)
		r.End()
		if err != nil {
			return engram.IngestResult{}, err
		}
	}
	if len(known) > 0 {
		all := make([]engram.Appended, 0, len(turns))
		for _, t := range turns {
			if seq, ok := known[t.ID]; ok && t.ID != "" {
				all = append(all, engram.Appended{ID: t.ID, Seq: seq, Duplicate: true})
				continue
			}
			all, appended = append(all, appended[0]), appended[1:]
		}
		appended = all
	}
	res := engram.IngestResult{Turns: appended}
	var maxSeq int64
	for _, t := range appended {
		maxSeq = max(maxSeq, t.Seq)
	}
	defer g.Acknowledge(maxSeq)
	if ix == nil || !engram.IngestWaitsForIndex(ctx) {
		return res, nil
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	r := trace.StartRegion(ctx, "ingest.index")
	err := ix.WaitSearchable(wctx, maxSeq)
	r.End()
	if err != nil {
		msg := "the turns are archived but not yet searchable: the index is behind"
		if ierr := ix.Err(); ierr != nil {
			msg = fmt.Sprintf("the turns are archived but not yet searchable: indexing failed (%v); it will be retried", ierr)
		} else if !errors.Is(err, context.DeadlineExceeded) {
			msg = "the turns are archived; the request ended before they were indexed"
		}
		res.Warnings = append(res.Warnings, msg)
	}
	return res, nil
}

// Acknowledged returns the newest seq this Ingester has acknowledged: the
// turns a client may expect recall to find (read-your-writes), as opposed
// to the turns archived by writes still in flight.
func (g *Ingester) Acknowledged() int64 { return g.acked.Load() }

// Acknowledge records that every turn up to seq is acknowledged: Ingest
// calls it as it returns, and whoever makes an Ingester over an archive
// that holds turns already calls it with the archive's last seq, since
// those were acknowledged before.
func (g *Ingester) Acknowledge(seq int64) {
	for {
		cur := g.acked.Load()
		if seq <= cur || g.acked.CompareAndSwap(cur, seq) {
			return
		}
	}
}

// known returns the turns' client-sent ids the index holds, with their
// seqs. A failing lookup returns none: the archive's own idempotency and
// the indexer's skip of a duplicate id still hold.
func (g *Ingester) known(ctx context.Context, turns []engram.Turn) map[string]int64 {
	if g.Known == nil {
		return nil
	}
	var ids []string
	for _, t := range turns {
		if t.ID != "" {
			ids = append(ids, t.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	known, err := g.Known(ctx, ids)
	if err != nil {
		return nil
	}
	return known
}
